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
One throttle per kind of fault, in every node: a flood of one fault hides no other.

Enforced in one helper, :class:`tendon_robot_sim.ros.throttle.FaultWarnings`; no node throttles
through rclpy's per-call-site ``throttle_duration_sec`` (one helper method was one throttle for
all its faults), which the source check below keeps so for every node, present and future.
"""

import ast
from pathlib import Path

from geometry_msgs.msg import Point, PointStamped
import numpy as np
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import Probe, spinning, wait_for
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.throttle import fault_kind, FaultWarnings

NODES = Path(__file__).resolve().parents[2] / 'tendon_robot_sim' / 'nodes'


class Said(list):
    """A logger that keeps the warnings it is given: what a node logs, without /rosout."""

    def warning(self, text: str) -> None:
        self.append(text)


def test_each_kind_is_throttled_on_its_own():
    said = Said()
    warn = FaultWarnings(said, 60.0)
    assert warn('setpoint: effort', 'one') and warn('tip wrench', 'two')
    assert not warn('setpoint: effort', 'one again')       # the same fault, within 60 s
    assert warn('setpoint: name', 'three')                 # another field: another fault
    assert said == ['one', 'two', 'three']
    assert fault_kind('setpoint', 'effort: non-finite tension for [t0]') == 'setpoint: effort'
    assert fault_kind('setpoint', 'it has positions but no efforts') == 'setpoint'


def test_no_node_throttles_by_call_site():
    for path in sorted(NODES.glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword):
                assert node.arg != 'throttle_duration_sec', (
                    f'{path.name}: throttle through ros.throttle.FaultWarnings, per kind of fault')


def test_a_second_fault_is_said_at_once_while_the_first_is_throttled():
    context = rclpy.Context()
    rclpy.init(context=context)
    controller = TensionControllerNode(
        context=context, namespace='throttled', parameter_overrides=[
            Parameter('robot_file', value=str(default_robot_file())),
            Parameter('warning_throttle_period', value=60.0)])
    said = Said()
    controller._warnings.logger = said     # what the node logs, without /rosout's delays
    probe = Probe(namespace='throttled', context=context)
    target_pub = probe.create_publisher(PointStamped, topics.TIP_TARGET.name,
                                        topics.TIP_TARGET.qos)
    with spinning(controller, probe, context=context):
        wait_for(lambda: probe.command_pub.get_subscription_count() >= 1
                 and target_pub.get_subscription_count() >= 1, 'the controller to listen')
        probe.command_pub.publish(JointState(name=['t0'], effort=[np.nan]))
        wait_for(lambda: any('rejected tension command' in s for s in said), 'the first fault')
        # within the 60 s of the first: a different fault must still be said
        target_pub.publish(PointStamped(point=Point(x=0.2, z=0.05),
                                        header=Header(frame_id='elsewhere')))
        wait_for(lambda: any('rejected tip target: header.frame_id' in s for s in said),
                 'the second fault, at once')
        probe.command_pub.publish(JointState(name=['t0'], effort=[np.nan]))
        wait_for(lambda: probe.latest('tendon/setpoint'), 'the controller to go on')
    assert sum('rejected tension command' in s for s in said) == 1
