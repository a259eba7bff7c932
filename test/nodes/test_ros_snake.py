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
The simulator node with the rolling-joint snake, over real DDS (loopback, see conftest.py).

The node runs the snake's forward dynamics under the cable tensions of the latest
setpoint. The dynamics are tested in test_snake_dynamics.py and test_sim_model.py; here
the published frames, tip and cable displacements are checked against an independent
kinematics of the joint angles read back from ``/tf``, and a pull on the upper cable
against its direction.
"""

import math
import time

from geometry_msgs.msg import Point, PointStamped, Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from ros_helpers import (call, logs_containing, position, Probe, spin_until, spinning,
                         stamp_seconds, wait_for, warning_containing)
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from std_srvs.srv import SetBool, Trigger
from tendon_robot_sim import share_dir
from tendon_robot_sim.launcher import file_parameters
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.stack import TENSION_CONTROLLER

SNAKE_FILE = share_dir() / 'config' / 'rolling_joint_snake.yaml'


@pytest.fixture(scope='module')
def snake():
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(SNAKE_FILE)),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, probe):
        ns = type('Snake', (), {})()
        ns.probe, ns.snake = probe, load_snake(SNAKE_FILE)
        wait_for(lambda: probe.latest('tip/pose')
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator')
        yield ns


def rotation(q) -> np.ndarray:
    """Rotation matrix of a geometry_msgs Quaternion."""
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def joint_angle(relative: np.ndarray, axis: np.ndarray) -> float:
    """Angle [rad] of a rotation about the z or the y axis."""
    sin = relative[1, 0] if axis[2] else relative[0, 2]
    return math.atan2(sin, relative[0, 0])


def paused_snapshot(probe):
    """
    Pause; the newest /tf message, tip pose and state of one tick (one stamp); resume.

    Matched by their stamp, not by when they arrived: a loaded machine can deliver a tick
    from before the pause after any wait, and three messages picked by arrival would then be
    of different states.
    """
    assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=True)).success
    try:
        after = time.monotonic()

        def one_tick():
            kept = [{stamp_seconds(m.header.stamp): m for m in probe.since('tip/pose', after)},
                    {stamp_seconds(m.header.stamp): m for m in probe.since('tendon/state', after)},
                    {stamp_seconds(m.transforms[0].header.stamp): m
                     for m in probe.since('/tf', after)}]
            stamps = set(kept[0]).intersection(*kept[1:])
            if not stamps:
                return None
            tip, state, tf = (k[max(stamps)] for k in kept)
            return tf, tip, state
        return wait_for(one_tick, 'a tip pose, a state and /tf of one tick')
    finally:
        assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=False)).success


def test_frames_tip_and_cable_displacements_follow_the_snake_kinematics(snake):
    probe, robot = snake.probe, snake.snake
    probe.setpoint_pub.publish(JointState(name=['cable2', 'cable1'], effort=[9.0, 3.0]))
    wait_for(lambda: probe.latest('tendon/state').effort.tolist() == [3.0, 9.0, 1.0, 1.0],
             'the tensions applied (others at the pretension)')
    time.sleep(0.3)
    tf, tip, state = paused_snapshot(probe)
    frames = {t.child_frame_id: t for t in tf.transforms}
    assert set(frames) == {'tip_link'} | {f'vertebra_{i}' for i in range(robot.n_joints)}
    R = [np.eye(3)] + [rotation(frames[f'vertebra_{i}'].transform.rotation)
                       for i in range(robot.n_joints)]
    # joint n turns link n about its axis (in link n-1's frame): read the angle back
    q = np.array([joint_angle(R[n].T @ R[n + 1], robot.joint_axes[n])
                  for n in range(robot.n_joints)])
    chain = SnakeKinematics(robot).state(q)
    origins = np.array([[t.transform.translation.x, t.transform.translation.y,
                         t.transform.translation.z] for t in
                        (frames[f'vertebra_{i}'] for i in range(robot.n_joints))])
    assert np.allclose(origins, chain.origins[0, 1:], rtol=0.0, atol=1e-9)
    assert np.allclose(position(tip), chain.tip_position[0], rtol=0.0, atol=1e-9)
    lengths = chain.cable_segments()[0][0].sum(axis=0)
    rest = SnakeKinematics(robot).state(np.zeros(robot.n_joints)).cable_segments()[0][0]
    assert np.allclose(state.position, rest.sum(axis=0) - lengths, rtol=0.0, atol=1e-9)
    assert list(state.name) == robot.cable_names


def test_pulling_the_upper_cable_lifts_the_tip_and_limits_apply(snake):
    probe, robot = snake.probe, snake.snake
    assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
    probe.setpoint_pub.publish(JointState(name=['cable2'], effort=[1.0]))
    time.sleep(0.5)
    sagged = position(paused_snapshot(probe)[1])
    probe.setpoint_pub.publish(JointState(name=['cable2'], effort=[25.0]))
    wait_for(lambda: position(probe.latest('tip/pose'))[2] > sagged[2] + 0.02,
             'the tip lifted by the upper cable (2)')
    for msg, problem in (
            (JointState(name=['cable2'], effort=[robot.max_tension + 1.0]),
             'effort[cable2]: must be within [0, max_tension = 150] N'),
            (JointState(name=['cable1'], position=[0.01]), 'position: the robot takes effort'),
            (JointState(effort=[1.0] * 5),
             'effort: has 5 values without names; the robot has 4 cables')):
        probe.setpoint_pub.publish(msg)
        warning_containing(probe, 'simulator', problem)
    assert probe.latest('tendon/state').effort.tolist() == [1.0, 25.0, 1.0, 1.0]


def test_a_tip_wrench_reaches_the_snake_in_the_base_frame_and_a_bad_one_is_rejected(snake):
    """
    An upward force at the tip lifts it above the base: with every cable at its pretension.

    Starting straight and at rest, the snake alone can only sink (its energy only drops at the
    end stops), so a tip above +5 cm is the wrench's work, in the base frame's +z.
    """
    probe = snake.probe
    wrench = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name, topics.TIP_WRENCH.qos)
    assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
    since = time.monotonic()
    wrench.publish(WrenchStamped(header=Header(frame_id='base_link'),
                                 wrench=Wrench(force=Vector3(z=2.0))))
    wait_for(lambda: any(position(m)[2] > 0.05 for m in probe.since('tip/pose', since)),
             'the tip lifted above the base by the upward tip force')
    for msg, problem in (
            (WrenchStamped(header=Header(frame_id='tip_link')), "header.frame_id: 'tip_link'"),
            # the node's bound first; the cables' own (600 N): test_sim_model.py
            (WrenchStamped(wrench=Wrench(force=Vector3(z=-1e4))),
             'wrench.force: 1e+04 N is more than max_tip_force (10 N)')):
        wrench.publish(msg)
        warning_containing(probe, 'simulator', problem)
    assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success


def test_tension_controller_drives_the_snake_within_its_limits_in_tension_mode_only(snake):
    robot = snake.snake
    parameters = [Parameter('robot_file', value=str(SNAKE_FILE)),
                  Parameter('warning_throttle_period', value=0.0)]
    nodes = (SimulatorNode(namespace='ctl', parameter_overrides=parameters),
             TensionControllerNode(namespace='ctl', parameter_overrides=parameters + [
                 Parameter('rate_limit', value=1000.0)]),
             Probe(namespace='ctl'))
    probe = nodes[-1]
    executor = SingleThreadedExecutor()
    for node in nodes:
        executor.add_node(node)
    target = probe.create_publisher(PointStamped, topics.TIP_TARGET.name, topics.COMMAND_QOS)
    try:
        spin_until(executor, lambda: probe.latest('tendon/state')
                   and probe.command_pub.get_subscription_count() >= 1, 'the controlled snake')
        probe.command_pub.publish(JointState(name=['cable2', 'cable4'],
                                             effort=[robot.max_tension + 50.0, 2.0]))
        # the others at the floor: the description's pretension, above min_tension 0
        limited = [robot.pretension, robot.max_tension, robot.pretension, 2.0]
        spin_until(executor, lambda: probe.latest('tendon/state').effort.tolist() == limited,
                   'the simulator applying the clamped tensions')
        spin_until(executor, lambda: logs_containing(probe, 'ctl.tension_controller',
                                                     'clamped to [min_tension, max_tension]'),
                   'the clamp warning')
        target.publish(PointStamped(point=Point(x=0.1, y=0.05, z=0.0)))
        spin_until(executor, lambda: logs_containing(
            probe, 'ctl.tension_controller', 'rejected tip target: a rolling-joint snake robot '
            'has no statics model: tension mode only'), 'the refused tip target')
        assert probe.latest('tendon/setpoint').effort.tolist() == limited
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()


def test_the_stacks_controller_never_lets_a_cable_below_the_pretension(snake):
    """
    Tension controller of `launch sim` on the snake: every cable at the pretension or above.

    The stack's min_tension (0 N) is below the description's pretension (1 N, no cable goes
    slack): the cables read 1 N until the controller started, then 0 N.
    """
    robot = snake.snake
    stack_parameters = file_parameters(TENSION_CONTROLLER)
    assert stack_parameters['min_tension'] < robot.pretension
    robot_file = [Parameter('robot_file', value=str(SNAKE_FILE))]
    simulator = SimulatorNode(namespace='floor', parameter_overrides=robot_file)
    probe = Probe(namespace='floor')
    executor = SingleThreadedExecutor()
    nodes = [simulator, probe]
    for node in nodes:
        executor.add_node(node)
    try:
        spin_until(executor, lambda: probe.latest('tendon/state'), 'the snake at rest')
        nodes.append(TensionControllerNode(namespace='floor', parameter_overrides=robot_file + [
            Parameter(name, value=value) for name, value in stack_parameters.items()]))
        executor.add_node(nodes[-1])

        def holding_the_setpoint():
            setpoints = probe.received['tendon/setpoint']
            return setpoints and any(
                state.effort.tolist() == setpoints[-1][1].effort.tolist()
                for state in probe.since('tendon/state', setpoints[0][0]))
        spin_until(executor, holding_the_setpoint, "the snake holding the controller's setpoint")
        for topic in ('tendon/state', 'tendon/setpoint'):
            lowest = min(min(msg.effort) for _, msg in probe.received[topic])
            assert lowest >= robot.pretension, f'{topic}: {lowest} N'
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
