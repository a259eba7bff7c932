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
Two simulators on simulated time in one ROS domain, over real DDS (loopback).

/clock is absolute: two stacks in two namespaces, both launched with use_sim_time:=true, each
published their own simulated time on it, and every use_sim_time node followed both (the
launcher's two stacks: /clock went 1.91, 6.21, 1.91, 6.23 ... s, back and forth at each
message), without a word. Each simulator now says so with an error naming the other.
"""

from rcl_interfaces.msg import Log
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import Probe, spinning, wait_for, warning_containing
from tendon_robot_sim.nodes.simulator_node import SimulatorNode


def test_a_second_clock_source_is_reported_by_both_simulators(robot_file):
    rclpy.init()
    simulators = [SimulatorNode(namespace=ns, parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('mode', value='cc_dynamic'),     # the cheapest timed model
        Parameter('publish_clock', value=True)]) for ns in ('left_arm', 'right_arm')]
    probe = Probe()
    with spinning(*simulators, probe):
        for own, other in (('left_arm', 'right_arm'), ('right_arm', 'left_arm')):
            log = warning_containing(probe, f'{own}.simulator',
                                     f'/{other}/simulator publishes /clock too', Log.ERROR)
            assert 'ROS_DOMAIN_ID' in log[0].msg     # and says what to do about it


def test_the_only_clock_source_finds_no_other(robot_file):
    # neither its own /clock publisher nor a /clock subscriber is another clock source
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('mode', value='cc_dynamic'),
        Parameter('publish_clock', value=True)])
    probe = Probe()    # subscribes /clock
    with spinning(simulator, probe):
        wait_for(lambda: simulator.count_subscribers('/clock') >= 1, 'the probe on /clock')
        assert simulator.other_clock_sources() == []
