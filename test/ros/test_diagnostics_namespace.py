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

"""A namespaced hardware bridge reports on /diagnostics, where the aggregator listens."""

from diagnostic_msgs.msg import DiagnosticArray
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter

from ros_helpers import spin_until
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.hardware_bridge_node import HardwareBridgeNode
from tendon_robot_sim.protocol.mounting import sensor_mount


def test_namespaced_bridge_publishes_absolute_diagnostics(tmp_path):
    robot = load_robot(default_robot_file())
    with EmulatedRig(robot, sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                     PtyEndpoint(str(tmp_path / 'motors')),
                     PtyEndpoint(str(tmp_path / 'sensor'))) as rig:
        context = rclpy.Context()
        rclpy.init(context=context)
        executor = SingleThreadedExecutor(context=context)
        bridge = HardwareBridgeNode(context=context, namespace='left_arm', parameter_overrides=[
            Parameter('motor_port', value=rig.path('motors')),
            Parameter('sensor_port', value=rig.path('sensor')),
            Parameter('diagnostics_rate', value=10.0)])
        # configured (ports open): diagnostics are published, inactive or active
        assert bridge.trigger_configure() == TransitionCallbackReturn.SUCCESS
        # the aggregator's way: /diagnostics, default QoS, outside the robot's namespace
        aggregator = rclpy.create_node('aggregator', context=context)
        arrays: list[DiagnosticArray] = []
        aggregator.create_subscription(DiagnosticArray, '/diagnostics', arrays.append, 10)
        for node in (bridge, aggregator):
            executor.add_node(node)
        try:
            spin_until(executor, lambda: arrays and arrays[-1].status, 'a diagnostic array')
            statuses = arrays[-1].status
            # '<fully qualified node name>: <status>', as diagnostic_updater names them, so a
            # second robot's bridge in another namespace cannot publish the same names.
            assert sorted(s.name for s in statuses) == [
                '/left_arm/hardware_bridge: motor driver', '/left_arm/hardware_bridge: safety',
                '/left_arm/hardware_bridge: tip sensor']
            # ... and every status says which device it is about (issue 22, item 7).
            ids = {s.name.rpartition(': ')[2]: s.hardware_id for s in statuses}
            assert ids == {'motor driver': f'tdcr-motor-v1 on {rig.path("motors")}',
                           'safety': f'tdcr-motor-v1 on {rig.path("motors")}',
                           'tip sensor': f'tdcr-laser-v1 on {rig.path("sensor")}'}
        finally:
            executor.shutdown()
            for node in (bridge, aggregator):
                node.destroy_node()
            rclpy.try_shutdown(context=context)
