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
The simulator node with the 6-RUS parallel robot, over real DDS (loopback, see conftest.py).

The node solves the forward kinetostatics of each motor-angle setpoint and publishes the
platform on the topics of the tendon robot. The tests check the plumbing against an
independent :class:`PcrSolver` (the physics is tested in test_pcr*.py): the angles reach
the right motors, the platform pose and the rods come out where the solver puts them,
bad setpoints keep the last equilibrium, and the tendon controllers refuse the file.
"""

import math
import time

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import (call, construct_alone, position, Probe, spinning, wait_for,
                         warning_containing)
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver, platform_rotation
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.nodes.displacement_controller_node import DisplacementControllerNode
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros.parameters import ConfigurationError

# Node and reference solver each stop within the Newton tolerance (1e-10 scaled, about
# 1e-11 m); a motor angle on the wrong motor moves the platform by millimetres.
TIP_TOLERANCE = 1e-8   # m


@pytest.fixture(scope='module')
def pcr():
    """Spin a simulator on the parallel robot (its default mode) and a probe."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(default_pcr_file())),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, probe):
        ns = type('Pcr', (), {})()
        ns.simulator, ns.probe = simulator, probe
        ns.robot = load_pcr_robot(default_pcr_file())
        wait_for(lambda: probe.latest('tip/pose')
                 and probe.setpoint_pub.get_subscription_count() >= 1,
                 'the simulator to come up')
        yield ns


def angles(**degrees) -> JointState:
    return JointState(name=list(degrees), position=[math.radians(d) for d in degrees.values()])


def settle(pcr, msg: JointState, expected_q1: np.ndarray) -> tuple:
    """Publish ``msg``; the first state with ``expected_q1``, and a tip pose after it."""
    pcr.probe.setpoint_pub.publish(msg)
    wait_for(lambda: (lambda s: s is not None and np.allclose(s.position, expected_q1,
                                                              rtol=0.0, atol=1e-12))(
        pcr.probe.latest('tendon/state')), f'motor angles {np.degrees(expected_q1)} deg')
    after = time.monotonic()
    wait_for(lambda: len(pcr.probe.since('tip/pose', after)) >= 2, 'tip poses afterwards')
    return pcr.probe.latest('tendon/state'), pcr.probe.latest('tip/pose')


def test_motor_angles_move_the_platform_where_the_solver_puts_it(pcr):
    q1 = np.radians([20.0, 20.0, 0.0, 0.0, 10.0, 0.0])
    state, tip = settle(pcr, angles(motor_1=20.0, motor_2=20.0, motor_5=10.0), q1)
    expected = PcrSolver(pcr.robot).forward(q1)
    assert list(state.name) == [f'motor_{i}' for i in range(1, 7)]
    assert len(state.effort) == 0 and state.velocity.tolist() == [0.0] * 6
    assert np.allclose(position(tip), expected.position, rtol=0.0, atol=TIP_TOLERANCE)
    rest = PcrSolver(pcr.robot).forward(np.zeros(6)).position
    assert np.linalg.norm(position(tip) - rest) > 1e-3, 'the platform did not move'
    assert tip.header.frame_id == 'base_link'
    tf = wait_for(lambda: [m for m in pcr.probe.since('/tf', 0)
                           if m.transforms[0].header.stamp == tip.header.stamp],
                  'the /tf message published with that tip pose')[0]
    (platform,) = tf.transforms
    assert (platform.header.frame_id, platform.child_frame_id) == ('base_link', 'tip_link')
    t = platform.transform.translation
    assert [t.x, t.y, t.z] == position(tip).tolist()
    markers = wait_for(lambda: pcr.probe.since('backbone/markers', time.monotonic() - 0.5),
                       'markers')[-1].markers
    rods = sorted((m for m in markers if m.ns == 'rods'), key=lambda m: m.id)
    assert [m.id for m in rods] == list(range(6))
    # each rod ends at its platform joint C_i (rod i joins motor i to joint i)
    joints = expected.position + pcr.robot.joint_positions @ platform_rotation(
        expected.orientation).T
    ends = np.array([[m.points[-1].x, m.points[-1].y, m.points[-1].z] for m in rods])
    assert np.allclose(ends, joints, rtol=0.0, atol=TIP_TOLERANCE)
    assert {m.ns for m in markers} == {'rods', 'cranks', 'platform'}


def test_bad_setpoints_are_rejected_and_the_last_equilibrium_stays(pcr):
    probe = pcr.probe
    q1 = np.radians([0.0, 0.0, 15.0, 15.0, 0.0, 0.0])
    settle(pcr, angles(motor_1=0.0, motor_2=0.0, motor_3=15.0, motor_4=15.0, motor_5=0.0), q1)
    good = position(probe.latest('tip/pose'))
    bad = [
        (JointState(name=['motor_1'], effort=[1.0]), 'effort: the robot takes position'),
        (angles(motor_7=1.0), "name: motor_7 not among the robot's motors"),
        (angles(motor_2=95.0), 'motor_angles[1]: must be within the motor limits'),
        (JointState(position=[0.0] * 5), 'position: has 5 values without names; the robot has 6'),
        (JointState(position=[0.0] * 7), 'position: has 7 values without names; the robot has 6'),
        (JointState(name=['motor_1'], position=[math.nan]), 'non-finite motor angle'),
        # within the limits, converges, but two rods cross (test_pcr_clearance.py's pose)
        (angles(motor_1=47.471425, motor_2=10.564601, motor_3=34.141147, motor_4=-19.226882,
                motor_5=34.303819, motor_6=3.196422),
         'position: rods 3 and 4 pass through each other by'),
    ]
    for msg, problem in bad:
        probe.setpoint_pub.publish(msg)
        warning_containing(probe, 'simulator', problem)
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after)) >= 3, 'tip poses after the bad input')
    assert np.allclose(probe.latest('tendon/state').position, q1, rtol=0.0, atol=1e-12)
    assert all(position(tip).tolist() == good.tolist() for tip in probe.since('tip/pose', after))


def test_reset_returns_to_motor_angles_zero(pcr):
    probe = pcr.probe
    settle(pcr, angles(motor_6=30.0), np.radians([0.0, 0.0, 15.0, 15.0, 0.0, 30.0]))
    assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
    wait_for(lambda: probe.latest('tendon/state').position.tolist() == [0.0] * 6, 'q1 = 0')
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after)) >= 2, 'tip poses after the reset')
    rest = PcrSolver(pcr.robot).forward(np.zeros(6))
    assert np.allclose(position(probe.latest('tip/pose')), rest.position, rtol=0.0,
                       atol=TIP_TOLERANCE)


@pytest.mark.parametrize('node, refusal', [
    (TensionControllerNode, 'the tension controller drives tendons or cables only'),
    (DisplacementControllerNode, 'this takes a tendon-driven continuum robot')])
def test_tendon_controllers_refuse_the_parallel_robot(pcr, node, refusal):
    with pytest.raises(ConfigurationError, match='pcr_6rus.yaml: kind: pcr_6rus is a 6-RUS '
                                                 f'parallel continuum robot; {refusal}') as error:
        construct_alone(lambda context: node(context=context, parameter_overrides=[
            Parameter('robot_file', value=str(default_pcr_file()))]))
    assert '\n' not in str(error.value)


def test_the_parallel_robot_has_no_dynamic_mode(pcr):
    with pytest.raises(ConfigurationError,
                       match=r"mode: must be one of \['quasi_static'\] for a 6-RUS parallel"):
        construct_alone(lambda context: SimulatorNode(context=context, parameter_overrides=[
            Parameter('robot_file', value=str(default_pcr_file())),
            Parameter('mode', value='dynamic')]))
