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
Displacement controller node over real DDS, driving the dynamic simulator.

One executor spins the simulator (dynamic, the small robot of test_ros_nodes), a
displacement controller with output tension feeding it, a second displacement
controller with output position in namespace ``hw`` (what a position-controlled
hardware stack runs), and probes. The last test checks the stack wiring: the launch
argument ``controller`` chooses which controller publishes ``tendon/setpoint``.
"""

from pathlib import Path
import time

from geometry_msgs.msg import Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import (construct_alone, feeding, MAX_TENSION, Probe, ROOT,
                         small_robot_dict, spinning, wait_for, warning_containing)
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tendon_robot_sim.launcher import StackLauncher
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import robot_from_dict
from tendon_robot_sim.nodes.displacement_controller_node import DisplacementControllerNode
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError
import yaml

RATE = 50.0          # Hz, of the position-mode controller
RATE_LIMIT = 0.01    # m/s, of the position-mode controller
MAX_DISPLACEMENT = 0.02   # m, the default


@pytest.fixture(scope='module')
def stack(robot_file):
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('real_time_factor', value=100.0),
        Parameter('warning_throttle_period', value=0.0)])
    controller = DisplacementControllerNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('output', value='tension'),
        Parameter('warning_throttle_period', value=0.0)])
    position_controller = DisplacementControllerNode(namespace='hw', parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('output', value='position'),
        Parameter('rate', value=RATE),
        Parameter('rate_limit', value=RATE_LIMIT),
        Parameter('warning_throttle_period', value=0.0)])
    probe, hw_probe = Probe(), Probe(namespace='hw')
    nodes = (simulator, controller, position_controller, probe, hw_probe)
    with spinning(*nodes):
        ns = type('Stack', (), {})()
        ns.controller, ns.position_controller, ns.probe, ns.hw_probe = (
            controller, position_controller, probe, hw_probe)
        ns.robot = robot_from_dict(small_robot_dict())
        ns.command_pub = probe.create_publisher(
            JointState, topics.TENDON_DISPLACEMENT_COMMAND.name, topics.COMMAND_QOS)
        ns.hw_command_pub = hw_probe.create_publisher(
            JointState, topics.TENDON_DISPLACEMENT_COMMAND.name, topics.COMMAND_QOS)
        wait_for(lambda: probe.latest('tendon/state') and hw_probe.latest('tendon/setpoint')
                 and ns.command_pub.get_subscription_count() >= 1
                 and ns.hw_command_pub.get_subscription_count() >= 1, 'the stack to come up')
        yield ns


def send(publisher, names, values) -> None:
    publisher.publish(JointState(name=list(names), position=[float(v) for v in values]))


def measured(stack) -> np.ndarray:
    state = stack.probe.latest('tendon/state')
    values = dict(zip(state.name, state.position))
    return np.array([values[n] for n in stack.robot.tendon_names])


def test_simulated_tendons_reach_the_commanded_displacements(stack):
    """
    A reachable goal: the tendon displacements of the Cosserat statics.

    They come from another model than the controller's discrete feed-forward, for t0 holding the
    rod up against gravity and t1 bending it sideways; t2 and t3 slack, at their geometric value.
    """
    goal = StaticsSolver(stack.robot, 'cosserat').solve_tensions(
        [1.0, 1.2, 0.0, 0.0]).tendon_displacements
    assert goal[1] > 0.002 and goal[3] < -0.002   # a real bend
    send(stack.command_pub, stack.robot.tendon_names, goal)

    def settled() -> bool:
        # ten states in a row within 0.5 mm: the first one in may be the loop's overshoot on
        # its way (0.68 mm after it once, with tendon states held up at load 19 to 29)
        states = [dict(zip(m.name, m.position)) for _, m in
                  stack.probe.received['tendon/state'][-10:]]
        return len(states) == 10 and all(
            np.max(np.abs([s[n] for n in stack.robot.tendon_names] - goal)) < 0.0005
            for s in states)
    wait_for(settled, 'the tendons within 0.5 mm of the command for ten states')
    # and they stay there, with every tension within the limits: over 50 more states (1 s
    # at 50 Hz; counted, as a loaded machine publishes fewer a second)
    after = time.monotonic()
    wait_for(lambda: len(stack.probe.since('tendon/state', after)) >= 50, '50 more states')
    assert np.max(np.abs(measured(stack) - goal)) < 0.0005, measured(stack) - goal
    setpoint = np.array(stack.probe.latest('tendon/setpoint').effort)
    assert np.all(setpoint >= 0.0) and np.all(setpoint <= stack.robot.max_tensions)
    assert setpoint[1] > 0.5   # t1 does the bending


def test_unreachable_displacements_hold_max_tension_with_a_warning(stack):
    # pulling both tendons of a pair in would need the backbone to shorten by 1 cm
    send(stack.command_pub, ['t0', 't2'], [0.01, 0.01])
    warning_containing(stack.probe, 'displacement_controller', 'held at max_tension')
    start = time.monotonic()
    # a count, not a fixed sleep: on a loaded machine 0.5 s may bring only a few messages
    wait_for(lambda: len(stack.probe.since('tendon/setpoint', start)) > 5,
             'setpoints after the warning')
    efforts = np.array([m.effort for m in stack.probe.since('tendon/setpoint', start)])
    assert np.all(efforts >= 0.0)
    assert np.all(efforts <= stack.robot.max_tensions)
    assert np.any(efforts == stack.robot.max_tensions)
    send(stack.command_pub, stack.robot.tendon_names, [0.0] * 4)


def test_tip_wrench_reaches_the_feed_forward_model(stack):
    """
    The tension-output controller re-solves its feed-forward under a tip/wrench.

    The position-output one (the hardware stack's) does not listen.
    """
    publisher = stack.probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                             topics.TIP_WRENCH.qos)
    wait_for(lambda: publisher.get_subscription_count() == 2,
             'the simulator and the tension-output controller on tip/wrench')
    names = stack.robot.tendon_names
    goal = np.array([0.003, 0.0, -0.005, 0.0])
    force = (0.0, 0.0, -0.05)      # N, a payload hanging from the tip
    expected = np.clip(StaticsSolver(stack.robot, 'discrete').solve_displacements(
        goal, tip_force=force).tensions, 0.0, stack.robot.max_tensions)
    unloaded = StaticsSolver(stack.robot, 'discrete').solve_displacements(goal).tensions
    assert np.abs(expected - unloaded).max() > 0.05         # the load matters
    try:
        send(stack.command_pub, names, goal)
        wait_for(lambda: np.array_equal(stack.controller.wanted, goal), 'the ramp to the goal')
        publisher.publish(WrenchStamped(header=Header(frame_id='base_link'),
                                        wrench=Wrench(force=Vector3(x=0.0, y=0.0, z=-0.05))))
        wait_for(lambda: np.allclose(stack.controller.feed_forward, expected, rtol=0.0,
                                     atol=1e-6), 'the feed-forward under the tip load')
        publisher.publish(WrenchStamped(header=Header(frame_id='base_link'),
                                        wrench=Wrench(force=Vector3(x=-1e6))))
        warning_containing(stack.probe, 'displacement_controller', 'rejected tip wrench: '
                           'wrench.force: 1e+06 N is more than max_tip_force (10 N)')
        assert np.allclose(stack.controller.solver.solve_displacements(goal).tensions,
                           StaticsSolver(stack.robot, 'discrete').solve_displacements(
                               goal, tip_force=force).tensions, rtol=0.0, atol=1e-6), (
            'the feed-forward model lost the last accepted load')
    finally:
        publisher.publish(WrenchStamped(header=Header(frame_id='base_link')))
        send(stack.command_pub, names, [0.0] * 4)


def test_position_setpoints_are_limited_and_rate_limited(stack):
    names = stack.robot.tendon_names
    start = time.monotonic()
    send(stack.hw_command_pub, ['t0', 't2'], [0.5, -0.004])   # t0 beyond max_displacement
    warning_containing(stack.probe, 'hw.displacement_controller',
                       't0 0.5 -> 0.02 m')
    wait_for(lambda: stack.hw_probe.latest('tendon/setpoint').position[0] == MAX_DISPLACEMENT,
             't0 to reach max_displacement')
    stream = [np.array(msg.position) for msg in stack.hw_probe.since('tendon/setpoint', start)]
    assert len(stream) > 0.8 * RATE * MAX_DISPLACEMENT / RATE_LIMIT   # a ramp, not a jump
    steps = np.abs(np.diff(stream, axis=0))
    assert np.max(steps) <= RATE_LIMIT / RATE + 1e-12
    assert np.max(np.array(stream)) <= MAX_DISPLACEMENT
    last = stack.hw_probe.latest('tendon/setpoint')
    assert list(last.name) == names and not last.effort
    np.testing.assert_allclose(last.position, [MAX_DISPLACEMENT, 0.0, -0.004, 0.0])


def test_rate_limit_changes_live(stack):
    node = stack.position_controller
    assert node.set_parameters([Parameter('rate_limit', value=4 * RATE_LIMIT)])[0].successful
    try:
        start = time.monotonic()
        send(stack.hw_command_pub, ['t1'], [-0.01])
        wait_for(lambda: stack.hw_probe.latest('tendon/setpoint').position[1] == -0.01,
                 't1 to reach -0.01 m')
        stream = [msg.position[1] for msg in stack.hw_probe.since('tendon/setpoint', start)]
        steps = np.abs(np.diff(stream))
        assert RATE_LIMIT / RATE < np.max(steps) <= 4 * RATE_LIMIT / RATE + 1e-12
    finally:
        node.set_parameters([Parameter('rate_limit', value=RATE_LIMIT)])
    # out of range: refused by the descriptor, the old value stays
    assert not node.set_parameters([Parameter('rate_limit', value=-1.0)])[0].successful
    assert node.config.rate_limit == RATE_LIMIT


@pytest.mark.parametrize('message, reason', [
    (JointState(name=['t0', 'x'], position=[0.001, 0.002]), "unknown tendon 'x'"),
    (JointState(name=['t1'], position=[float('nan')]), "non-finite displacement for ['t1']"),
    (JointState(position=[0.001, 0.002]), 'has 2 values without names'),
    (JointState(name=['t1'], position=[0.001], effort=[2.0]), 'effort/position: both filled'),
])
def test_bad_commands_are_rejected_and_the_node_keeps_running(stack, message, reason):
    before = stack.position_controller.command.copy()
    stack.hw_command_pub.publish(message)
    warning_containing(stack.probe, 'hw.displacement_controller', reason)
    np.testing.assert_array_equal(stack.position_controller.command, before)
    count = len(stack.hw_probe.received['tendon/setpoint'])
    wait_for(lambda: len(stack.hw_probe.received['tendon/setpoint']) > count + 2,
             'setpoints to keep flowing')


def test_stale_tendon_state_pauses_the_feedback_and_holds_its_correction(robot_file):
    """
    A tendon/state that stops coming no longer winds the integral up to max_tension.

    The measured displacements are kept at 0 while t1 is commanded to 1 mm, so a live loop
    pulls harder every period (what happened with the last state kept forever: 0.5 N/s
    more with this ki, up to max_tension).
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    controller = DisplacementControllerNode(
        context=context, namespace='stale', parameter_overrides=[
            Parameter('robot_file', value=str(robot_file)),
            Parameter('output', value='tension'),
            Parameter('ki', value=200.0),
            # long beside the feeder's 20 ms, short beside the test's waits: silence is
            # waited for, not timed
            Parameter('feedback_timeout', value=1.0),
            Parameter('warning_throttle_period', value=0.0)])
    probe = Probe(context=context)
    state_pub = probe.create_publisher(JointState, '/stale/tendon/state',
                                       topics.TENDON_STATE.qos)
    command_pub = probe.create_publisher(JointState, '/stale/tendon/command/displacement',
                                         topics.COMMAND_QOS)
    setpoints = []     # one a control period
    probe.create_subscription(JointState, '/stale/tendon/setpoint', setpoints.append,
                              topics.TENDON_SETPOINT.qos)
    names = ['t0', 't1', 't2', 't3']

    def sense():   # 50 Hz while the sensor speaks
        state_pub.publish(JointState(name=names, position=[0.0] * 4))

    def t1() -> float:
        return setpoints[-1].effort[1]

    with spinning(controller, probe, context=context), feeding(sense) as sensing:
        wait_for(lambda: state_pub.get_subscription_count() >= 1
                 and command_pub.get_subscription_count() >= 1, 'the controller')
        sensing.set()
        wait_for(lambda: controller.measured is not None, 'the first tendon state')
        send(command_pub, ['t1'], [0.001])
        wait_for(lambda: setpoints and t1() > controller.feed_forward[1] + 0.1,
                 'the integral to pull')
        # The state goes silent.
        sensing.clear()
        warning_containing(probe, 'stale.displacement_controller', 'feedback paused')
        # what it holds from the warning on; on a loaded machine setpoints it published
        # before may still be on their way to the probe (seen: 28 of them)
        held = float(controller.feed_forward[1] + controller.correction[1])
        # 50 control periods without a state (counted: a loaded machine runs fewer a
        # second)
        periods = len(setpoints)
        wait_for(lambda: len(setpoints) >= periods + 50, '50 control periods')
        after = [m.effort[1] for m in setpoints[periods:]]
        # none pulls harder than the held correction, and the last ones are it
        assert max(after) <= held and after[-10:] == [held] * 10, after
        assert held < MAX_TENSION
        # Fresh states: the loop resumes and pulls on.
        sensing.set()
        wait_for(lambda: t1() > held + 0.05, 'the loop to act again')


def test_a_statics_solve_that_failed_is_not_tried_again_every_period():
    """
    Displacements the feed-forward cannot solve cost one attempt, not one a period.

    On the three-segment opencr_ftdcr_v6 a failure of the discrete model took 2 to 10 s
    (8 mm on s3_t0, which it solves since): retried every period, it left the setpoint stream
    at 0.3 setpoints a second for as long as the command stood. 60 mm on s3_t0 is beyond the
    robot (its tensions past 50 N): the Kirchhoff model fails on it in a fraction of a second.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    controller = DisplacementControllerNode(
        context=context, namespace='v6', parameter_overrides=[
            Parameter('robot_file', value=str(ROOT / 'config' / 'opencr_ftdcr_v6.yaml')),
            Parameter('statics_model', value='kirchhoff'),
            Parameter('max_displacement', value=0.1),
            Parameter('output', value='tension'),
            Parameter('rate_limit', value=10.0),     # the command in one period: one solve
            Parameter('warning_throttle_period', value=0.0)])
    solves = []
    solve = controller.solver.solve_displacements

    def counted(displacements, *args, **kwargs):
        solves.append(np.array(displacements))
        return solve(displacements, *args, **kwargs)
    controller.solver.solve_displacements = counted
    probe = Probe(context=context)
    command_pub = probe.create_publisher(JointState, '/v6/tendon/command/displacement',
                                         topics.COMMAND_QOS)
    setpoints = []
    probe.create_subscription(JointState, '/v6/tendon/setpoint', setpoints.append,
                              topics.TENDON_SETPOINT.qos)
    with spinning(controller, probe, context=context):
        wait_for(lambda: command_pub.get_subscription_count() >= 1, 'the controller')
        send(command_pub, ['s3_t0'], [0.06])
        warning_containing(probe, 'v6.displacement_controller', 'statics did not converge')
        tried = len(solves)
        count = len(setpoints)
        wait_for(lambda: len(setpoints) >= count + 10, '10 more setpoints')
        assert len(solves) == tried, f'{len(solves) - tried} more solves of the same command'
        assert all(np.all(np.isfinite(m.effort)) for m in setpoints)


def test_bad_parameters_stop_the_node_with_a_clear_message(robot_file):
    for overrides, message in (
            ([Parameter('min_displacement', value=0.01),
              Parameter('max_displacement', value=0.0)], 'must be below max_displacement'),
            ([Parameter('output', value='velocity')], 'parameter output: must be one of'),
            ([Parameter('min_tension', value=50.0)], 'exceeds the smallest max_tension')):
        with pytest.raises(ConfigurationError, match=message):
            construct_alone(lambda context: DisplacementControllerNode(
                context=context, parameter_overrides=[
                    Parameter('robot_file', value=str(robot_file)), *overrides]))


@pytest.mark.parametrize('stack_name', ['sim', 'hardware'])
@pytest.mark.parametrize('controller', ['tension', 'displacement'])
def test_the_controller_argument_starts_exactly_one_controller(stack_name, controller):
    launcher = StackLauncher(stack_name, {'controller': controller, 'rviz': 'false'})
    try:
        planned = {p.entry.name: p for p in launcher.processes}
        other = {'tension': 'displacement', 'displacement': 'tension'}[controller]
        assert f'{controller}_controller' in planned
        assert f'{other}_controller' not in planned
        assert f'# {other}_controller: skipped (controller:={controller})' in launcher.describe()
        # what each controller must be told in each stack (the value set last wins)
        expected = {
            ('displacement', 'sim'): ('output', 'tension'),
            ('displacement', 'hardware'): ('output', 'position'),
            ('tension', 'sim'): ('tip_feedback', 'pose'),
            ('tension', 'hardware'): ('tip_feedback', 'point'),
        }
        name, value = expected[controller, stack_name]
        command = planned[f'{controller}_controller'].command
        files = [command[i + 1] for i, a in enumerate(command) if a == '--params-file']
        values = [section['ros__parameters'].get(name)
                  for path in files
                  for section in yaml.safe_load(Path(path).read_text()).values()]
        assert [v for v in values if v is not None][-1] == value
    finally:
        launcher.stop()
