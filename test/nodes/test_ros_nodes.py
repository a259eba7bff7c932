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
Simulator and tension controller nodes over real DDS (loopback, see conftest.py).

Both nodes and a probe node run in one executor on a background thread; the
tests publish commands and read what the probe received. The robot is the
default robot with 10 elements and 5 vertebrae (and 5 N tendons), so the
physics runs near real time; the default robot itself runs in
test_ros_launcher.py.
"""

import math
import time

from geometry_msgs.msg import Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from ros_helpers import (call, construct_alone, hole_direction, logs_containing, MAX_TENSION,
                         position, Probe, spin_for, spin_until, spinning, stamp_seconds, wait_for,
                         warning_containing)
from rosbags.typesys import get_typestore
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from std_srvs.srv import SetBool, Trigger
from tendon_robot_sim.experiment.bag import DEFAULT_STORE
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError


@pytest.fixture(scope='module')
def stack(robot_file):
    """Spin a simulator (publishing /clock, as fast as it can), a controller and a probe."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('publish_clock', value=True),
        Parameter('real_time_factor', value=100.0),
        Parameter('warning_throttle_period', value=0.0)])
    controller = TensionControllerNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, controller, probe) as executor:
        ns = type('Stack', (), {})()
        ns.simulator, ns.controller, ns.probe, ns.executor = simulator, controller, probe, executor
        ns.robot = load_robot(robot_file)
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('/clock')
                 and probe.command_pub.get_subscription_count() >= 1, 'the stack to come up')
        yield ns


def command(stack, **tensions) -> None:
    """Command ``tensions`` (N by tendon name, 0 N for the others); wait for the controller."""
    names = stack.robot.tendon_names
    values = [tensions.get(name, 0.0) for name in names]
    stack.probe.command_pub.publish(JointState(name=names, effort=values))
    wait_for(lambda: stack.controller.command.tolist() == values,
             f'the controller to take {values}')


def hold(stack, seconds: float) -> None:
    """Wait until ``seconds`` more simulated time has passed."""
    end = stack.probe.sim_time() + seconds
    wait_for(lambda: stack.probe.sim_time() >= end, f'{seconds} s of simulated time')


def settle(stack, seconds: float = 3.0) -> None:
    """
    Wait for the controller's ramp to reach the command, then hold ``seconds`` of simulated time.

    The ramp runs on the wall clock and the simulation 10 to 20 times faster, so a hold alone
    could end before the tensions are there. The rod swings at about 2 Hz; 3 s let the swing
    die down (after 1 s the tip could still be anywhere between half and one and a half times
    its final deflection).
    """
    controller = stack.controller
    wait_for(lambda: np.array_equal(controller.setpoint, controller.command), 'the ramp')
    hold(stack, seconds)


def effort(probe: Probe, index: int) -> float | None:
    state = probe.latest('tendon/state')
    return state.effort[index] if state is not None else None


def test_tension_bends_the_tip_towards_the_tendon_and_is_reported(stack):
    command(stack)
    settle(stack)
    rest = position(stack.probe.latest('tip/pose'))
    command(stack, t1=2.0)
    settle(stack)
    moved = position(stack.probe.latest('tip/pose')) - rest
    towards_t1 = moved @ hole_direction(stack.robot, 't1')
    across = moved @ hole_direction(stack.robot, 't0')
    assert towards_t1 > 0.03, f'tip moved {moved} m, not towards t1'
    assert towards_t1 > 5.0 * abs(across)

    state = stack.probe.latest('tendon/state')
    assert list(state.name) == stack.robot.tendon_names
    assert state.effort.tolist() == [0.0, 2.0, 0.0, 0.0]
    # pulling t1 pulls its tendon in; the opposite tendon t3 is paid out
    displacement = dict(zip(state.name, state.position))
    assert displacement['t1'] > 0.001 > -0.001 > displacement['t3']
    command(stack)


def wrench_msg(force, frame_id='base_link') -> WrenchStamped:
    return WrenchStamped(header=Header(frame_id=frame_id),
                         wrench=Wrench(force=Vector3(x=force[0], y=force[1], z=force[2])))


def test_tip_wrench_lifts_the_tip_and_reaches_the_controller_model(stack):
    probe = stack.probe
    publisher = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                       topics.TIP_WRENCH.qos)
    wait_for(lambda: publisher.get_subscription_count() >= 2,
             'the simulator and the controller on tip/wrench')
    command(stack)
    settle(stack)
    rest = position(probe.latest('tip/pose'))
    force = (0.0, 0.0, 0.1)             # N, up: about the weight of the robot
    try:
        publisher.publish(wrench_msg(force))
        # The wrench may wait in the executor's queue behind many simulation steps, so a
        # hold of simulated time would not say when it arrived: wait for its effect.
        wait_for(lambda: position(probe.latest('tip/pose'))[2] > rest[2] + 0.02,
                 'the tip to lift by 2 cm under an upward tip force')
        # the tension controller's statics model carries the same load
        expected = StaticsSolver(stack.robot, stack.controller.config.statics_model)
        loaded = expected.solve_tensions(np.zeros(4), tip_force=force).tip_position
        model = stack.controller.tip_controller.solver
        wait_for(lambda: np.allclose(model.solve_tensions(np.zeros(4)).tip_position, loaded,
                                     rtol=0.0, atol=1e-7),
                 "the controller's model to carry the tip force")
        for bad, problem in ((wrench_msg((0.0, math.nan, 0.0)), 'wrench.force: non-finite'),
                             (wrench_msg(force, 'world'),
                              "header.frame_id: 'world' is not the base frame"),
                             # past max_tip_force: the dynamic model diverged and reset
                             (wrench_msg((0.0, 0.0, 1e6)),
                              'wrench.force: 1e+06 N is more than max_tip_force (10 N)')):
            publisher.publish(bad)
            warning_containing(probe, 'simulator', f'rejected tip wrench: {problem}')
            warning_containing(probe, 'tension_controller', f'rejected tip wrench: {problem}')
        hold(stack, 0.3)
        assert position(probe.latest('tip/pose'))[2] > rest[2] + 0.02      # still lifted
        assert np.allclose(model.solve_tensions(np.zeros(4)).tip_position, loaded, rtol=0.0,
                           atol=1e-7), "the controller's model lost the last accepted load"
    finally:
        publisher.publish(wrench_msg((0.0, 0.0, 0.0)))
        hold(stack, 0.1)


def test_tendon_velocity_is_the_difference_of_displacements(stack):
    command(stack, t0=3.0)
    start = time.monotonic()
    # states at the publish rate (wall clock), however fast the simulation runs
    wait_for(lambda: len(stack.probe.since('tendon/state', start)) >= 8, 'tendon states')
    states = stack.probe.since('tendon/state', start)
    pairs = [(a, b) for a, b in zip(states[:-1], states[1:])
             if stamp_seconds(b.header.stamp) > stamp_seconds(a.header.stamp)]
    assert len(pairs) >= 5
    matching = [np.allclose(b.velocity, (np.array(b.position) - a.position)
                            / (stamp_seconds(b.header.stamp) - stamp_seconds(a.header.stamp)),
                            rtol=1e-4, atol=1e-9)
                for a, b in pairs]
    # best-effort delivery may drop a sample; the rest must match exactly
    assert sum(matching) >= 0.9 * len(matching)
    assert any(abs(v) > 1e-4 for a, b in pairs for v in b.velocity)
    command(stack)


def test_tf_matches_tip_pose_and_names_every_vertebra(stack):
    tip = wait_for(lambda: stack.probe.latest('tip/pose'), 'a tip pose')
    stamp = stamp_seconds(tip.header.stamp)
    tf = wait_for(lambda: [m for m in stack.probe.since('/tf', 0)
                           if stamp_seconds(m.transforms[0].header.stamp) == stamp],
                  'the /tf message published with that tip pose')[0]
    by_child = {t.child_frame_id: t for t in tf.transforms}
    k = len(stack.robot.vertebra_positions)
    assert set(by_child) == {'tip_link'} | {f'vertebra_{i}' for i in range(k)}
    assert {t.header.frame_id for t in tf.transforms} == {stack.robot.base.frame_id}
    assert tip.header.frame_id == stack.robot.base.frame_id
    t = by_child['tip_link'].transform
    assert [t.translation.x, t.translation.y, t.translation.z] == position(tip).tolist()
    q = tip.pose.orientation
    assert [t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w] == [q.x, q.y, q.z, q.w]
    # the last vertebra sits at the tip (s = L)
    last = by_child[f'vertebra_{k - 1}'].transform.translation
    assert np.allclose([last.x, last.y, last.z], position(tip), atol=1e-12)


def test_markers_have_one_point_per_node_and_one_disc_per_vertebra(stack):
    markers = wait_for(lambda: stack.probe.latest('backbone/markers'), 'markers').markers
    by_ns = {}
    for marker in markers:
        by_ns.setdefault(marker.ns, []).append(marker)
    robot = stack.robot
    (backbone,) = by_ns['backbone']
    assert backbone.type == backbone.LINE_STRIP
    assert len(backbone.points) == robot.rod.elements + 1
    discs = by_ns['vertebrae']
    assert len(discs) == len(robot.vertebra_positions)
    assert {d.type for d in discs} == {discs[0].CYLINDER}
    assert sorted(d.id for d in discs) == list(range(len(discs)))
    diameter = 2.0 * robot.disc_radius        # from the robot description
    assert all(math.isclose(d.scale.x, diameter) and math.isclose(d.scale.y, diameter)
               and d.scale.z < d.scale.x for d in discs)
    (tendons,) = by_ns['tendons']
    assert tendons.type == tendons.LINE_LIST
    # each tendon runs from its base hole through every vertebra up to its anchor
    segments = sum(int(np.sum(robot.vertebra_positions <= t.end + 1e-9)) for t in robot.tendons)
    assert len(tendons.points) == 2 * segments == len(tendons.colors)
    assert {m.header.frame_id for m in markers} == {robot.base.frame_id}


def test_bad_setpoints_are_rejected_with_a_warning_and_the_node_keeps_publishing(stack):
    probe = stack.probe
    command(stack, t0=1.0)
    # The ramp down from an earlier command can pass through 1 N: wait for the ramp's end.
    wait_for(lambda: np.array_equal(stack.controller.setpoint, [1.0, 0.0, 0.0, 0.0]), 'the ramp')
    wait_for(lambda: probe.latest('tendon/state').effort.tolist() == [1.0, 0.0, 0.0, 0.0],
             'tension 1 N on t0')
    bad = [
        (JointState(name=['bogus'], effort=[1.0]), "name: bogus not among the robot's tendons"),
        (JointState(name=['t0'], effort=[math.nan]), 'must be finite'),
        (JointState(name=['t0'], effort=[-1.0]), 'must be >= 0'),
        (JointState(name=['t0'], effort=[MAX_TENSION + 1.0]), 'must be <= max_tension'),
        (JointState(effort=[1.0] * 3), 'effort: has 3 values without names; the robot has 4'),
        (JointState(effort=[1.0] * 5), 'effort: has 5 values without names; the robot has 4'),
        (JointState(name=[f'x{i}' for i in range(10000)], effort=[1.0] * 10000),
         'name: has 10000 entries'),
        (JointState(name=['t0', 't1'], effort=[1.0, 1.0, 1.0]), 'has 3 values for 2 names'),
        (JointState(name=['t0', 't0'], effort=[1.0, 1.0]), 'more than once'),
        (JointState(name=['t0'], position=[0.01]), 'displacement'),
    ]
    # The controller falls silent, so that a bad setpoint the simulator took would stay.
    stack.controller.timer.cancel()
    try:
        for msg, problem in bad:
            probe.setpoint_pub.publish(msg)
            warning_containing(probe, 'simulator', problem)
        after = time.monotonic()
        wait_for(lambda: len(probe.since('tip/pose', after)) >= 3,
                 'tip poses after the bad input')
        assert probe.latest('tendon/state').effort.tolist() == [1.0, 0.0, 0.0, 0.0]
    finally:
        stack.controller.timer.reset()
    command(stack)


def test_controller_clamps_and_rejects_commands(stack):
    probe = stack.probe
    probe.command_pub.publish(JointState(name=stack.robot.tendon_names,
                                         effort=[0.0, 0.0, 0.0, MAX_TENSION + 25.0]))
    warning_containing(probe, 'tension_controller', 'clamped')
    wait_for(lambda: effort(probe, 3) == MAX_TENSION,
             'the clamped tension on t3')
    for msg, problem in [(JointState(name=['bogus'], effort=[1.0]), "unknown tendon 'bogus'"),
                         (JointState(name=['t1'], effort=[math.nan]), 'non-finite'),
                         (JointState(effort=[1.0, 2.0]), 'has 2 values without names'),
                         (JointState(name=['t1'], effort=[3.0], position=[0.005]),
                          'effort/position: both filled')]:
        probe.command_pub.publish(msg)
        warning_containing(probe, 'tension_controller', problem)
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tendon/setpoint', after)) >= 3, 'setpoints afterwards')
    assert probe.latest('tendon/setpoint').effort.tolist() == [0.0, 0.0, 0.0, MAX_TENSION]
    command(stack)


def test_pause_stops_time_and_reset_returns_the_tip_to_the_start(stack):
    probe, robot = stack.probe, stack.robot
    command(stack, t2=2.0)
    hold(stack, 0.5)
    straight_tip = robot.base.position + robot.rod.length * robot.base.direction
    assert np.linalg.norm(position(probe.latest('tip/pose')) - straight_tip) > 0.03

    assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=True)).success
    # /clock messages sent before the pause may still arrive (a loaded machine delays them
    # by any amount): simulated time has stopped once ten in a row tell the same time, and
    # it stays there for the next 25 (half a second of ticks at 50 Hz), whatever their pace.
    after = time.monotonic()

    def stopped():
        clocks = [stamp_seconds(c.clock) for c in probe.since('/clock', after)]
        return len(clocks) >= 10 and len(set(clocks[-10:])) == 1 and clocks[-1]
    paused_at = wait_for(stopped, 'simulated time to stop')
    after = time.monotonic()
    wait_for(lambda: len(probe.since('/clock', after)) >= 25, '/clock while paused')
    clocks = [stamp_seconds(c.clock) for c in probe.since('/clock', after)]
    assert set(clocks) == {paused_at}, 'simulated time ran while paused'

    response = call(probe, Trigger, '/simulator/reset', Trigger.Request())
    assert response.success
    after = time.monotonic()
    wait_for(lambda: len(probe.since('tip/pose', after + 0.1)) >= 3, 'tip poses after reset')
    for tip in probe.since('tip/pose', after + 0.1):
        assert np.allclose(position(tip), straight_tip, atol=1e-12)

    assert call(probe, SetBool, '/simulator/pause', SetBool.Request(data=False)).success
    hold(stack, 0.05)
    assert probe.sim_time() > paused_at
    command(stack)


def test_divergence_resets_logs_an_error_and_keeps_serving(stack, robot_file):
    robot = load_robot(robot_file)
    unstable_dt = 10.0 * TendonSimulator(robot).stable_dt
    node = SimulatorNode(namespace='unstable', parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('dt', value=unstable_dt),
        Parameter('warning_throttle_period', value=1.0)])
    probe = Probe(namespace='unstable')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(probe)
    try:
        error = spin_until(executor, lambda: logs_containing(
            stack.probe, 'unstable.simulator', 'diverged', level=Log.ERROR),
            'the divergence error')[0]
        assert 'reset' in error.msg and 'keeps running' in error.msg
        after = time.monotonic()
        spin_until(executor, lambda: len(probe.since('tip/pose', after)) >= 5,
                   'tip poses after the divergence')
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()


def test_type_hashes_of_the_published_types_match_the_bag_type_store(stack):
    typestore = get_typestore(DEFAULT_STORE)
    for topic in topics.TOPICS:
        endpoints = wait_for(lambda: stack.probe.get_publishers_info_by_topic(topic.name),
                             f'a publisher on {topic.name}')
        assert {str(e.topic_type_hash) for e in endpoints} == {
            typestore.hash_rihs01(topics.type_name(topic.msg_type))}, topic.name


def test_parameters_have_ranges_and_read_only_flags(stack):
    simulator = stack.simulator
    assert not simulator.set_parameters([Parameter('publish_rate', value=10.0)])[0].successful
    assert not simulator.set_parameters([Parameter('real_time_factor', value=500.0)])[0].successful
    assert simulator.set_parameters([Parameter('real_time_factor', value=50.0)])[0].successful
    assert simulator.real_time_factor == 50.0
    (descriptor,) = simulator.describe_parameters(['dt'])
    assert descriptor.read_only and '[s]' in descriptor.description
    assert descriptor.floating_point_range[0].to_value == 0.1      # implicit steps too


def test_unknown_mode_is_refused_with_the_allowed_ones(stack):
    with pytest.raises(ConfigurationError,
                       match=r"mode: must be one of \['dynamic', 'quasi_static'\]"):
        construct_alone(lambda context: SimulatorNode(
            context=context, parameter_overrides=[Parameter('mode', value='kinematic')]))


def test_rejection_warnings_are_throttled(stack, robot_file):
    node = TensionControllerNode(namespace='throttled', parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('warning_throttle_period', value=30.0)])
    probe = Probe(namespace='throttled')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(probe)
    try:
        spin_until(executor, lambda: probe.command_pub.get_subscription_count() >= 1,
                   'the controller')
        for _ in range(3):
            probe.command_pub.publish(JointState(name=['bogus'], effort=[1.0]))
        spin_until(executor, lambda: logs_containing(
            stack.probe, 'throttled.tension_controller', 'bogus'), 'the first warning')
        spin_for(executor, 1.0)
        assert len(logs_containing(stack.probe, 'throttled.tension_controller', 'bogus')) == 1
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
