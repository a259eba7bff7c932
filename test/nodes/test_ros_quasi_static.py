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
The simulator node in mode quasi_static, over real DDS (loopback, see conftest.py).

The node solves the static equilibrium of each setpoint and publishes it on the
topics of the dynamic mode. The tests check the plumbing against independent
:class:`StaticsSolver` instances of the same robot (the physics of the solver is
tested in test_statics*.py): right tendon, right input mode, right model, the last
good state kept after a bad setpoint. The robot is the default robot.
"""

import math
import time

from geometry_msgs.msg import Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from ros_helpers import (call, construct_alone, hole_direction, position, Probe, spin_until,
                         spinning, stamp_seconds, wait_for, warning_containing)
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from std_srvs.srv import SetBool, Trigger
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError

# The node's solver warm-starts from its previous solution, the reference solvers
# here start elsewhere; each stops within the solver tolerance, which leaves the tip
# about 1e-8 m from the exact equilibrium (statics module docs; a few 1e-9 m measured).
# Plumbing errors (wrong tendon, model or input mode, a stale state) are >= 1e-6 m.
TIP_TOLERANCE = 5e-8       # m
TENSION_TOLERANCE = 1e-6   # N, solved tensions of a displacement setpoint (~1e-8 N apart)
# the default robot's tendons: the setpoints below name them all, unless a test says not
TENDONS = load_robot(default_robot_file()).tendon_names


@pytest.fixture(scope='module')
def qs():
    """Spin a quasi-static simulator (discrete model, default robot) and a probe."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('mode', value='quasi_static'),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, probe) as executor:
        ns = type('QuasiStatic', (), {})()
        ns.simulator, ns.probe, ns.executor = simulator, probe, executor
        ns.robot = load_robot(default_robot_file())
        ns.reference = StaticsSolver(ns.robot, 'discrete')
        wait_for(lambda: probe.latest('tip/pose')
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator to come up')
        yield ns


def settle(qs, msg: JointState, accepted) -> tuple:
    """
    Publish ``msg`` and wait for a ``tendon/state`` that satisfies ``accepted``.

    Return that state and a tip pose published after it.
    """
    qs.probe.setpoint_pub.publish(msg)
    wait_for(lambda: (lambda s: s is not None and accepted(s))(qs.probe.latest('tendon/state')),
             f'a tendon state accepting {msg.name} effort={list(msg.effort)} '
             f'position={list(msg.position)}')
    after = time.monotonic()
    wait_for(lambda: len(qs.probe.since('tip/pose', after)) >= 2, 'tip poses afterwards')
    return qs.probe.latest('tendon/state'), qs.probe.latest('tip/pose')


def tensions(**values) -> JointState:
    """Return a setpoint naming every tendon (0 N where not given): whatever the last set."""
    full = {name: values.get(name, 0.0) for name in TENDONS} | values
    return JointState(name=list(full), effort=list(full.values()))


def displacements(**values) -> JointState:
    """Return a setpoint naming every tendon (0 m where not given)."""
    full = {name: values.get(name, 0.0) for name in TENDONS} | values
    return JointState(name=list(full), position=list(full.values()))


def efforts_are(expected):
    return lambda state: state.effort.tolist() == expected


def test_tension_setpoint_publishes_the_equilibrium_of_the_statics_solver(qs):
    robot = qs.robot
    rest = qs.reference.solve_tensions(np.zeros(4))
    commanded = time.time()
    state, tip = settle(qs, tensions(t0=3.0), efforts_are([3.0, 0.0, 0.0, 0.0]))
    expected = qs.reference.solve_tensions({'t0': 3.0})
    assert np.allclose(position(tip), expected.tip_position, rtol=0.0, atol=TIP_TOLERANCE)
    q = tip.pose.orientation
    assert np.allclose([q.x, q.y, q.z, q.w], expected.tip_orientation, rtol=0.0, atol=1e-6)
    moved = position(tip) - rest.tip_position
    assert moved @ hole_direction(robot, 't0') > 0.05, f'tip moved {moved} m, not towards t0'
    assert list(state.name) == robot.tendon_names
    assert np.allclose(state.position, expected.tendon_displacements, rtol=0.0, atol=1e-9)
    assert state.velocity.tolist() == [0.0] * 4, 'an equilibrium is at rest'
    # no simulated time in this mode: wall-clock stamps (of this tip, published after the
    # command: between then and now, however long a loaded machine took), no /clock
    assert commanded < stamp_seconds(tip.header.stamp) <= time.time()
    assert qs.probe.count_publishers('/clock') == 0
    tf = wait_for(lambda: [m for m in qs.probe.since('/tf', 0)
                           if m.transforms[0].header.stamp == tip.header.stamp],
                  'the /tf message published with that tip pose')[0]
    t = next(t for t in tf.transforms if t.child_frame_id == 'tip_link').transform
    assert [t.translation.x, t.translation.y, t.translation.z] == position(tip).tolist()
    # a setpoint naming one tendon changes that one; the others hold (as in mode dynamic)
    settle(qs, JointState(name=['t2'], effort=[1.0]), efforts_are([3.0, 0.0, 1.0, 0.0]))


def test_without_friction_there_is_no_tip_state_publisher(qs):
    """
    Only a model with tendon friction sends ``tendon/tip_state``; none has no publisher on it.

    It had one, which showed the topic in the ROS graph with a publisher and no messages. The
    probe shares the simulator's context (one DDS participant), so the graph it reads holds
    the simulator's publishers from their creation on: no wait (test_ros_friction.py: one).
    """
    assert qs.probe.count_publishers(topics.TIP_POSE.name) == 1
    assert qs.probe.count_publishers(topics.TENDON_TIP_STATE.name) == 0


def test_displacement_setpoint_is_held_by_the_solved_tensions(qs):
    pulled = {'t0': 0.004, 't1': -0.01, 't2': -0.01, 't3': -0.01}   # m; others slack
    msg = JointState(name=list(pulled), position=list(pulled.values()))
    state, tip = settle(qs, msg, lambda s: np.allclose(s.position, list(pulled.values()),
                                                       rtol=0.0, atol=1e-9))
    expected = qs.reference.solve_displacements(pulled)
    assert np.allclose(state.effort, expected.tensions, rtol=0.0, atol=TENSION_TOLERANCE)
    assert state.effort[0] > 0.5 and state.effort[1:].tolist() == [0.0, 0.0, 0.0]
    assert np.allclose(position(tip), expected.tip_position, rtol=0.0, atol=TIP_TOLERANCE)


def test_bad_setpoints_are_rejected_and_the_last_equilibrium_stays_published(qs):
    probe = qs.probe
    settle(qs, tensions(t1=2.0), efforts_are([0.0, 2.0, 0.0, 0.0]))
    good_tip = position(probe.latest('tip/pose'))
    out_of_reach = {'t0': 0.2}   # m, more than two turns of curl
    with pytest.raises(ConvergenceError):   # the premise of the last case below
        StaticsSolver(qs.robot, 'discrete').solve_displacements(out_of_reach)
    max_tension = qs.robot.max_tensions[0]
    bad = [
        (JointState(name=['bogus'], effort=[1.0]), "name: bogus not among the robot's tendons"),
        (tensions(t0=math.nan), 'must be finite'),
        (tensions(t0=-1.0), 'must be >= 0'),
        (tensions(t0=max_tension + 1.0), 'must be <= max_tension'),
        (JointState(effort=[1.0] * 3), 'effort: has 3 values without names; the robot has 4'),
        (JointState(effort=[1.0] * 5), 'effort: has 5 values without names; the robot has 4'),
        (JointState(name=['t0', 't0'], effort=[1.0, 1.0]), 'more than once'),
        (JointState(name=['t0'], position=[math.nan]), 'must be finite'),
        (JointState(name=['t0', 't1'], position=[0.01]), 'has 1 value for 2 names'),
        (displacements(t0=0.05), 'above max_tension'),
        (displacements(**out_of_reach), 'scaled residual'),
    ]
    for msg, problem in bad:
        probe.setpoint_pub.publish(msg)
        warning_containing(probe, 'simulator', problem)
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after)) >= 3, 'tip poses after the bad input')
    assert probe.latest('tendon/state').effort.tolist() == [0.0, 2.0, 0.0, 0.0]
    assert all(position(tip).tolist() == good_tip.tolist()
               for tip in probe.since('tip/pose', after))


def test_tip_wrench_loads_the_equilibrium_until_reset(qs):
    probe = qs.probe
    publisher = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                       topics.TIP_WRENCH.qos)
    wait_for(lambda: publisher.get_subscription_count() >= 1, 'the simulator on tip/wrench')
    settle(qs, tensions(t1=1.0), efforts_are([0.0, 1.0, 0.0, 0.0]))
    force, moment = (0.02, -0.05, 0.1), (0.0, 0.003, 0.0)
    expected = qs.reference.solve_tensions({'t1': 1.0}, tip_force=force, tip_moment=moment)

    def msg(force, moment, frame_id=''):          # empty frame_id: the base frame
        return WrenchStamped(header=Header(frame_id=frame_id), wrench=Wrench(
            force=Vector3(x=force[0], y=force[1], z=force[2]),
            torque=Vector3(x=moment[0], y=moment[1], z=moment[2])))
    try:
        publisher.publish(msg(force, moment))
        wait_for(lambda: np.allclose(position(probe.latest('tip/pose')), expected.tip_position,
                                     rtol=0.0, atol=TIP_TOLERANCE), 'the loaded equilibrium')
        # a new setpoint is solved under the same load
        settle(qs, tensions(t0=1.0), efforts_are([1.0, 0.0, 0.0, 0.0]))
        loaded = qs.reference.solve_tensions({'t0': 1.0}, tip_force=force, tip_moment=moment)
        assert np.allclose(position(probe.latest('tip/pose')), loaded.tip_position, rtol=0.0,
                           atol=TIP_TOLERANCE)
        for bad, problem in ((msg(force, (math.inf, 0.0, 0.0)), 'wrench.torque: non-finite'),
                             (msg(force, moment, 'tip_link'),
                              "header.frame_id: 'tip_link' is not the base"),
                             (msg(force, (0.0, 0.3, 0.4)),
                              'wrench.torque: 0.5 N m is more than max_tip_torque (0.1 N m)')):
            publisher.publish(bad)
            warning_containing(probe, 'simulator', f'rejected tip wrench: {problem}')
        assert np.allclose(position(probe.latest('tip/pose')), loaded.tip_position, rtol=0.0,
                           atol=TIP_TOLERANCE)
    finally:
        # back to the description's tip load (none) for the other tests
        assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after)) >= 2, 'tip poses after the reset')
    assert np.allclose(position(probe.latest('tip/pose')),
                       qs.reference.solve_tensions(np.zeros(4)).tip_position, rtol=0.0,
                       atol=TIP_TOLERANCE)


def test_markers_have_one_disc_per_vertebra_at_the_vertebrae(qs):
    settle(qs, tensions(t2=2.5), efforts_are([0.0, 0.0, 2.5, 0.0]))
    expected = qs.reference.solve_tensions({'t2': 2.5})
    after = time.monotonic()
    markers = wait_for(lambda: qs.probe.since('backbone/markers', after), 'markers')[-1].markers
    discs = sorted((m for m in markers if m.ns == 'vertebrae'), key=lambda m: m.id)
    assert len(discs) == len(qs.robot.vertebra_positions) == expected.vertebra_positions.shape[1]
    centres = np.array([[d.pose.position.x, d.pose.position.y, d.pose.position.z]
                        for d in discs])
    assert np.allclose(centres, expected.vertebra_positions.T, rtol=0.0, atol=TIP_TOLERANCE)
    (backbone,) = [m for m in markers if m.ns == 'backbone']
    assert len(backbone.points) == expected.centerline.shape[1]


def test_reset_returns_to_the_zero_tension_equilibrium(qs):
    robot, probe = qs.robot, qs.probe
    settle(qs, tensions(t3=4.0), efforts_are([0.0, 0.0, 0.0, 4.0]))
    assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after)) >= 2, 'tip poses after the reset')
    assert probe.latest('tendon/state').effort.tolist() == [0.0] * 4
    tip = probe.latest('tip/pose')
    rest = StaticsSolver(robot, 'discrete').solve_tensions(np.zeros(4))
    assert np.allclose(position(tip), rest.tip_position, rtol=0.0, atol=TIP_TOLERANCE)
    # under gravity the zero-tension equilibrium sags, it is not the straight rod
    straight_tip = robot.base.position + robot.rod.length * robot.base.direction
    assert (position(tip) - straight_tip) @ robot.gravity > 0.01 * np.linalg.norm(robot.gravity)


def test_setpoints_are_ignored_while_paused(qs):
    probe = qs.probe
    settle(qs, tensions(t0=1.0), efforts_are([1.0, 0.0, 0.0, 0.0]))
    assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=True)).success
    try:
        probe.setpoint_pub.publish(tensions(t1=1.0))
        after = time.monotonic()
        wait_for(lambda: len(probe.since('tendon/state', after + 0.2)) >= 3, 'states')
        assert probe.latest('tendon/state').effort.tolist() == [1.0, 0.0, 0.0, 0.0]
    finally:
        assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=False)).success
    settle(qs, tensions(t1=1.0), efforts_are([0.0, 1.0, 0.0, 0.0]))


def test_statics_model_parameter_selects_the_model(qs):
    node = SimulatorNode(namespace='cosserat', parameter_overrides=[
        Parameter('mode', value='quasi_static'), Parameter('statics_model', value='cosserat')])
    probe = Probe(namespace='cosserat')
    # Spun here, not by the fixture's thread, so that destroying the nodes afterwards
    # cannot race with one of their callbacks.
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(probe)
    try:
        tip = position(spin_until(executor, lambda: probe.latest('tip/pose'),
                                  'a tip pose from the cosserat node'))
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
    zero = np.zeros(4)
    cosserat = StaticsSolver(qs.robot, 'cosserat').solve_tensions(zero).tip_position
    discrete = qs.reference.solve_tensions(zero).tip_position
    # the models' tips differ by far more than the tolerance (6e-6 m)
    assert np.linalg.norm(cosserat - discrete) > 20 * TIP_TOLERANCE
    assert np.allclose(tip, cosserat, rtol=0.0, atol=TIP_TOLERANCE)


@pytest.mark.parametrize('overrides, problem', [
    ([Parameter('publish_clock', value=True)], 'publish_clock: mode quasi_static has no '
                                               'simulated time'),
    ([Parameter('statics_model', value='euler')], r'statics_model: must be one of'),
    # the clock source on simulated time without a clock: every stamp would stay at 0
    ([Parameter('use_sim_time', value=True)], 'use_sim_time: true needs publish_clock true'),
])
def test_invalid_quasi_static_configurations_are_refused(qs, overrides, problem):
    with pytest.raises(ConfigurationError, match=problem):
        construct_alone(lambda context: SimulatorNode(context=context, parameter_overrides=[
            Parameter('mode', value='quasi_static')] + overrides))


def test_use_sim_time_set_live_is_refused_and_the_stamps_stay_on_the_wall_clock(qs):
    """``ros2 param set /simulator use_sim_time true``: refused with the reason; stamps go on."""
    request = SetParameters.Request(parameters=[
        Parameter('use_sim_time', value=True).to_parameter_msg()])
    (result,) = call(qs.probe, SetParameters, '/simulator/set_parameters', request).results
    assert not result.successful
    assert result.reason.startswith('use_sim_time: true needs publish_clock true')
    assert qs.simulator.get_parameter('use_sim_time').value is False
    asked = time.time()
    _, tip = settle(qs, tensions(t1=1.5), efforts_are([0.0, 1.5, 0.0, 0.0]))
    assert stamp_seconds(tip.header.stamp) >= asked


def test_robot_without_discs_runs_on_the_cosserat_model_and_is_refused_where_discs_are_needed(
        qs):
    steel_file = str(share_dir() / 'config' / 'steel_rod_robot.yaml')
    node = SimulatorNode(namespace='steel', parameter_overrides=[
        Parameter('robot_file', value=steel_file), Parameter('mode', value='quasi_static'),
        Parameter('statics_model', value='cosserat')])
    probe = Probe(namespace='steel')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(probe)
    try:
        probe.setpoint_pub.publish(tensions(t1=5.0))
        spin_until(executor, lambda: (lambda s: s is not None and s.effort.tolist() == [
            0.0, 5.0, 0.0, 0.0])(probe.latest('tendon/state')), 'the 5 N equilibrium')
        after = time.monotonic()
        spin_until(executor, lambda: len(probe.since('tip/pose', after)) >= 2
                   and probe.since('backbone/markers', after), 'tip poses and markers')
        tip = position(probe.latest('tip/pose'))
        markers = probe.since('backbone/markers', after)[-1].markers
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
    steel = load_robot(steel_file)
    expected = StaticsSolver(steel, 'cosserat').solve_tensions({'t1': 5.0}).tip_position
    assert np.allclose(tip, expected, rtol=0.0, atol=TIP_TOLERANCE)
    assert not [m for m in markers if m.ns == 'vertebrae']
    # the discrete model, asked for, is refused (the default, auto, takes cosserat here)
    with pytest.raises(ConfigurationError, match='needs vertebra discs .* without discs '
                                                 'use the cosserat or kirchhoff statics'):
        construct_alone(lambda context: SimulatorNode(context=context, parameter_overrides=[
            Parameter('robot_file', value=steel_file), Parameter('mode', value='quasi_static'),
            Parameter('statics_model', value='discrete')]))
    default = construct_alone(lambda context: SimulatorNode(context=context, parameter_overrides=[
        Parameter('robot_file', value=steel_file), Parameter('mode', value='quasi_static')]))
    assert default.model.summary.startswith('cosserat statics')


def test_a_tip_wrench_sent_while_paused_takes_effect_on_resume(qs):
    probe = qs.probe
    publisher = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                       topics.TIP_WRENCH.qos)
    wait_for(lambda: publisher.get_subscription_count() >= 1, 'the simulator on tip/wrench')
    settle(qs, tensions(t2=1.0), efforts_are([0.0, 0.0, 1.0, 0.0]))
    before = position(probe.latest('tip/pose'))
    force = (0.0, 0.05, 0.0)
    assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=True)).success
    try:
        publisher.publish(WrenchStamped(wrench=Wrench(force=Vector3(x=force[0], y=force[1],
                                                                    z=force[2]))))
        after = time.monotonic() + 0.3
        wait_for(lambda: len(probe.since('tip/pose', after)) >= 3, 'tip poses while paused')
        assert all(position(tip).tolist() == before.tolist()
                   for tip in probe.since('tip/pose', after - 0.3))
    finally:
        assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=False)).success
    expected = qs.reference.solve_tensions({'t2': 1.0}, tip_force=force)
    try:
        wait_for(lambda: np.allclose(position(probe.latest('tip/pose')), expected.tip_position,
                                     rtol=0.0, atol=TIP_TOLERANCE), 'the loaded equilibrium')
    finally:
        assert call(probe, Trigger, '/simulator/reset', Trigger.Request()).success
