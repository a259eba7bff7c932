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
The controllers on simulated time, over real DDS (loopback).

With nobody publishing /clock:
Their setpoint timers run on the node's clock, simulated time with use_sim_time, which stays
at 0 until a /clock arrives: the controllers published no setpoint, and said nothing (a
controller started with use_sim_time:=true and no simulator, or one without publish_clock).
They now warn, throttled, as the hardware bridge does.

With a simulator at 10 x real time, whose /clock steps ten of their periods at once: their
ramps count simulated seconds.
"""

import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import Probe, spinning, stamp_seconds, wait_for, warning_containing
from sensor_msgs.msg import JointState
from tendon_robot_sim.nodes.displacement_controller_node import DisplacementControllerNode
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics


def test_both_controllers_say_that_they_wait_for_a_clock(robot_file):
    rclpy.init()
    overrides = [Parameter('robot_file', value=str(robot_file)),
                 Parameter('use_sim_time', value=True)]
    controllers = (TensionControllerNode(parameter_overrides=overrides),
                   DisplacementControllerNode(parameter_overrides=[
                       *overrides, Parameter('output', value='position')]))
    probe = Probe()
    with spinning(*controllers, probe):
        for controller in controllers:
            log = warning_containing(probe, controller.get_name(), 'no /clock has arrived')
            assert 'tendon/setpoint' in log[0].msg    # says what it holds back


# The controllers' ramps: rate_limit, the command (a ramp of 2 s), the command topic, the
# setpoint field and the controller's own parameters.
RAMPS = {
    'tension': (1.0, 2.0, topics.TENDON_COMMAND, 'effort', TensionControllerNode, []),
    'displacement': (0.01, 0.02, topics.TENDON_DISPLACEMENT_COMMAND, 'position',
                     DisplacementControllerNode, [Parameter('output', value='position')]),
}


@pytest.mark.parametrize('kind', RAMPS)
def test_the_ramp_counts_simulated_seconds_at_10_x_real_time(robot_file, kind):
    """
    A ramp of ``rate_limit`` per second of simulated time, however coarse the clock's steps.

    The simulator at 10 x real time publishes /clock once a physics tick, 0.2 s of simulated
    time apart, and a controller timer of 50 Hz on that clock fires once a step (rcl skips the
    periods a jump passes): each call moved the setpoint by ``rate_limit / rate``, and a ramp
    of 2 s took 20 s of simulated time.
    """
    rate_limit, ramp, command_topic, field, node_class, own = RAMPS[kind]
    context = rclpy.Context()
    rclpy.init(context=context)
    simulator = SimulatorNode(context=context, parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('mode', value='cc_dynamic'),      # the cheapest timed model
        Parameter('publish_clock', value=True),
        Parameter('real_time_factor', value=10.0)])
    controller = node_class(context=context, parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('use_sim_time', value=True),
        Parameter('rate_limit', value=rate_limit), *own])
    probe = Probe(context=context)
    command_pub = probe.create_publisher(command_topic.msg_type, command_topic.name,
                                         command_topic.qos)

    def first(msg) -> float:
        return getattr(msg, field)[0]
    with spinning(simulator, controller, probe, context=context):
        wait_for(lambda: probe.latest('tendon/setpoint') is not None
                 and command_pub.get_subscription_count() >= 1, 'the controller')
        command_pub.publish(JointState(name=list(controller.names)[:1], **{field: [ramp]}))
        wait_for(lambda: first(probe.latest('tendon/setpoint')) == ramp, 'the ramp')
    setpoints = [(stamp_seconds(m.header.stamp), first(m))
                 for _, m in probe.received['tendon/setpoint']]
    start = max(t for t, v in setpoints if v == 0.0)     # the last setpoint before the ramp
    ramping = [(t, v) for t, v in setpoints if t > start]
    # Each call moves the setpoint by rate_limit times the simulated time since the call
    # before, so a setpoint stamped t is the ramp at t, however many clock steps a call
    # spans on a loaded host (to the rounding of summed nanoseconds).
    for t, v in ramping:
        expected = min(ramp, rate_limit * (t - start))
        assert v == pytest.approx(expected, rel=1e-9, abs=1e-12), \
            f'setpoint {v:g} at {t - start:.3f} s of simulated time into the ramp, ' \
            f'not {expected:g}'
    # and it took ramp / rate_limit seconds, not a tenth as fast: the ramp ended at the first
    # call at or after that time. Ended: at the ramp to the rounding above (a call exactly at
    # 2 s sums its steps to 2 - 2e-16 N); at or after: to the stamps' nanosecond
    end = min(t for t, v in ramping if v == pytest.approx(ramp, rel=1e-9, abs=1e-12))
    before_end = max((t for t, v in ramping if t < end), default=start)
    assert before_end < start + ramp / rate_limit <= end + 1e-9, \
        f'the ramp ended at {end - start:.2f} s of simulated time, not at the first call ' \
        f'after {ramp / rate_limit:g} s'
