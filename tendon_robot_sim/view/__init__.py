# Copyright 2026 tendon_robot_sim maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The browser view of a stack or a bag (``tendon-robot-sim view``), without ROS.

What a page shows and how it is steered lives here, free of rclpy, so that it is tested
without a ROS graph and serves both the live view (:mod:`tendon_robot_sim.nodes.view_node`,
a thin node around :class:`~tendon_robot_sim.view.page.ViewPage`) and the playback of a
bag (:mod:`tendon_robot_sim.view.playback`). Messages are read by their fields only, so
rclpy messages and the ones ``rosbags`` deserializes are drawn alike.

* :mod:`~tendon_robot_sim.view.markers`: ``visualization_msgs/Marker`` -> primitives (numpy);
* :mod:`~tendon_robot_sim.view.scene`: primitives -> viser scene nodes;
* :mod:`~tendon_robot_sim.view.inputs`: what the sliders command, and the check before sending;
* :mod:`~tendon_robot_sim.view.page`: the page: scene, frames, panels, plot;
* :mod:`~tendon_robot_sim.view.playback`: a bag's timeline and its clock;
* :mod:`~tendon_robot_sim.view.headless`: the headless chromium of the tests and the benchmark.
"""
