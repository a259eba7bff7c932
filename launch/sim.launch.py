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
Simulation stack: simulator, tension controller, robot_state_publisher, RViz, browser view.

    ros2 launch tendon_robot_sim sim.launch.py [robot:=FILE] [world:=FILE]
        [mode:=dynamic|quasi_static|cc_dynamic] [controller:=tension|displacement]
        [rviz:=true|false] [use_sim_time:=true|false] [namespace:=NS]
        [frame_prefix:=PREFIX] [view:=true|false]

``view:=true`` serves the browser view on http://127.0.0.1:8080 (docs/viewer.md).

Nodes, parameter files and launch arguments are defined once, in
``tendon_robot_sim/stack.py`` (``STACKS['sim']``); ``tendon-robot-sim launch sim``
starts the same nodes where ``ros2 launch`` is not installed.
"""

from tendon_robot_sim.stack import launch_description


def generate_launch_description():
    return launch_description('sim')
