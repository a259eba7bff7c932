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
Hardware stack: hardware bridge, tension controller, robot_state_publisher, RViz.

    ros2 launch tendon_robot_sim hardware.launch.py [motor_port:=PORT] [sensor_port:=PORT]
        [motor_device:=tdcr-motor-v1|dynamixel] [sensor_device:=tdcr-laser-v1|keyence-lkg]
        [robot:=FILE] [controller:=tension|displacement] [rviz:=true|false] [namespace:=NS]
        [frame_prefix:=PREFIX] [autostart:=true|false] [view:=true|false]

``view:=true`` serves the browser view on http://127.0.0.1:8080 (docs/viewer.md), with a
quasi-static ``model`` node that draws the shape of the measured tensions.

The hardware bridge is a LifecycleNode: configured and activated at start (ChangeState events),
or left unconfigured with ``autostart:=false`` (then ``ros2 lifecycle set /hardware_bridge
configure`` and ``activate``).

Against the emulator: ``tendon-robot-sim emulate --motors pty:/tmp/tdcr_motors --sensor
pty:/tmp/tdcr_sensor``, then ``motor_port:=/tmp/tdcr_motors sensor_port:=/tmp/tdcr_sensor``.
Nodes, parameter files and launch arguments are defined once, in
``tendon_robot_sim/stack.py`` (``STACKS['hardware']``); ``tendon-robot-sim launch
hardware`` starts the same nodes where ``ros2 launch`` is not installed.
"""

from tendon_robot_sim.stack import launch_description


def generate_launch_description():
    return launch_description('hardware')
