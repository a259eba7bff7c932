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
The hardware bridge's logic, ROS-free: what keeps the robot safe above the device drivers.

``bridge.py`` checks setpoints, ramps them, runs the watchdog and the stop latch, latches
device faults, tracks command delivery and says what the diagnostics report;
``plausibility.py`` holds the physical bounds of device readings. The hardware bridge node
(``nodes/hardware_bridge_node.py``) only turns ROS messages, services and timers into calls
of :class:`~tendon_robot_sim.hardware.bridge.BridgeCore`.
"""
