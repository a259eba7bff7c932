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
Tension controller node with the quasi-static simulator, over real DDS (loopback).

The simulator (mode quasi_static, discrete model) solves the equilibrium of every
setpoint; the controller, a probe and the simulator spin in one executor. The robot is
the default robot with 5 vertebrae and 5 N tendons. Tip targets come from independent
StaticsSolver equilibria (reachable: made by tensions within the limits).
"""

import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Point, PointStamped, Pose, PoseStamped
import numpy as np
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.parameter import Parameter
from rclpy.time import Time
from ros_helpers import (construct_alone, feeding, MAX_TENSION, position, Probe, spinning,
                         wait_for, warning_containing)
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError

MIN_TENSION = 0.2       # N, pretension
RATE = 50.0             # Hz, setpoint stream
TIP_TOLERANCE = 2e-3    # m


@pytest.fixture(scope='module')
def stack(robot_file):
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('mode', value='quasi_static'),
        Parameter('warning_throttle_period', value=0.0)])
    controller = TensionControllerNode(parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('rate', value=RATE),
        Parameter('min_tension', value=MIN_TENSION),
        # The quasi-static simulator's tips come on wall time: a loaded machine (load 28)
        # spaced them by more than the default 0.5 s, and the tip loop paused. Staleness is
        # test_stale_tip_feedback_pauses_the_loop_until_fresh_samples_return's.
        Parameter('feedback_timeout', value=5.0),
        Parameter('warning_throttle_period', value=0.0)])
    # A second controller listening to a hardware tip sensor that nobody publishes.
    sensorless = TensionControllerNode(namespace='sensorless', parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('tip_feedback', value='point'),
        Parameter('min_tension', value=MIN_TENSION),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    target_pub = probe.create_publisher(PointStamped, topics.TIP_TARGET.name,
                                        topics.TIP_TARGET.qos)
    nodes = (simulator, controller, sensorless, probe)
    with spinning(*nodes):
        ns = type('Stack', (), {})()
        ns.controller, ns.probe, ns.target_pub = controller, probe, target_pub
        ns.sensorless = sensorless
        ns.robot = load_robot(robot_file)
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('tendon/setpoint')
                 and probe.command_pub.get_subscription_count() >= 1
                 and target_pub.get_subscription_count() >= 1, 'the stack to come up')
        yield ns


def command(stack, **tensions) -> None:
    names = stack.robot.tendon_names
    values = {name: tensions.get(name, MIN_TENSION) for name in names}
    stack.probe.command_pub.publish(JointState(name=list(values), effort=list(values.values())))


def target(stack, point, frame='base_link') -> None:
    stack.target_pub.publish(PointStamped(header=Header(frame_id=frame),
                                          point=Point(x=point[0], y=point[1], z=point[2])))


def applied(stack) -> list:
    state = stack.probe.latest('tendon/state')
    return state.effort.tolist() if state is not None else []


def test_tension_step_is_reached_within_the_rate_limit(stack):
    stack.controller.set_parameters([Parameter('rate_limit', value=10.0)])
    command(stack)
    wait_for(lambda: applied(stack) == [MIN_TENSION] * 4, 'the pretension')
    after = time.monotonic()
    command(stack, t0=4.2, t3=1.2)
    wait_for(lambda: applied(stack) == [4.2, MIN_TENSION, MIN_TENSION, 1.2],
             'the commanded tensions on the simulated tendons')
    received = stack.probe.since('tendon/setpoint', after)
    stream = np.array([[MIN_TENSION] * 4] + [m.effort.tolist() for m in received])
    steps = np.abs(np.diff(stream, axis=0)).max(axis=1)
    assert steps.max() <= 10.0 / RATE + 1e-9
    assert (steps > 0.0).sum() >= 4.0 / (10.0 / RATE) - 1      # the ramp took ~20 periods
    stack.controller.set_parameters([Parameter('rate_limit', value=50.0)])


def test_commands_are_limited_and_bad_ones_rejected(stack):
    probe = stack.probe
    command(stack, t1=-3.0, t2=MAX_TENSION + 1.0)
    warning_containing(probe, 'tension_controller', 't1 -3 -> 0.2 N')
    wait_for(lambda: applied(stack) == [MIN_TENSION, MIN_TENSION, MAX_TENSION, MIN_TENSION],
             'tensions clamped to the limits')
    target(stack, [float('nan'), 0.0, 0.0])
    warning_containing(probe, 'tension_controller', 'rejected tip target: point: non-finite')
    target(stack, [0.2, 0.0, 0.0], frame='tip_link')
    warning_containing(probe, 'tension_controller', "'tip_link' is not the base frame")
    assert stack.controller.target is None


def test_reachable_tip_target_is_reached(stack):
    goal = StaticsSolver(stack.robot, 'discrete').solve_tensions(
        [1.5, MIN_TENSION, MIN_TENSION, 2.5]).tip_position
    command(stack)
    target(stack, goal)
    wait_for(lambda: np.linalg.norm(position(stack.probe.latest('tip/pose')) - goal)
             < TIP_TOLERANCE, 'the tip at the target')
    # A tension command leaves tip-position mode.
    command(stack, t1=1.0)
    wait_for(lambda: applied(stack) == [MIN_TENSION, 1.0, MIN_TENSION, MIN_TENSION],
             'the tension command after the tip target')
    assert stack.controller.target is None


def test_unreachable_tip_target_stops_at_the_boundary_within_limits(stack):
    goal = stack.robot.base.position + np.array([0.2, -0.2, 0.2])
    command(stack)
    after = time.monotonic()
    target(stack, goal)
    warning_containing(stack.probe, 'tension_controller', 'out of reach')

    def resting_tips():
        # The tips over the controller's last 25 periods (half a second at 50 Hz), once they
        # stay within 1 mm. Counted in periods, not in wall time: a loaded machine runs fewer
        # periods a second, and a tip still pulled along could look at rest for half a second.
        setpoints = stack.probe.received['tendon/setpoint']
        if len(stack.probe.since('tendon/setpoint', after)) < 25:
            return None
        since = setpoints[-25][0]
        tips = [position(m) for m in stack.probe.since('tip/pose', since)]
        return tips if len(tips) > 2 and np.ptp(np.array(tips), axis=0).max() < 1e-3 else None

    tips = wait_for(resting_tips, 'the tip to stop at the boundary')
    setpoints = np.array([m.effort.tolist() for m in stack.probe.since('tendon/setpoint', after)])
    assert setpoints.min() >= MIN_TENSION and setpoints.max() <= MAX_TENSION
    assert setpoints[-1].max() == MAX_TENSION       # pulled to the limit: the boundary
    start = StaticsSolver(stack.robot, 'discrete').solve_tensions([MIN_TENSION] * 4)
    assert np.linalg.norm(tips[-1] - goal) < np.linalg.norm(start.tip_position - goal) - 0.1
    command(stack)


def test_huge_finite_targets_and_tips_are_rejected_and_the_node_keeps_publishing(stack):
    # The sensorless controller's tip comes from whoever publishes /sensorless/tip/measured.
    tip_pub = stack.probe.create_publisher(PointStamped, '/sensorless/tip/measured',
                                           topics.TIP_MEASURED.qos)
    target_pub = stack.probe.create_publisher(PointStamped, '/sensorless/tip/target',
                                              topics.TIP_TARGET.qos)
    wait_for(lambda: tip_pub.get_subscription_count() >= 1
             and target_pub.get_subscription_count() >= 1, 'the sensorless controller')
    tip_pub.publish(PointStamped(point=Point(x=-1e308, y=-1e308, z=-1e308)))
    warning_containing(stack.probe, 'sensorless.tension_controller',
                       'ignored measured tip [-1e+308')
    for far in (1e308, 1e155):
        target_pub.publish(PointStamped(point=Point(x=far, y=far, z=0.0)))
        warning_containing(stack.probe, 'sensorless.tension_controller',
                           f'rejected tip target: point: [{far:g}')
    assert stack.sensorless.measured is None
    assert stack.sensorless.target is None or np.all(np.abs(stack.sensorless.target) < 1.0)
    # Still alive: the shared executor spins, the stack's setpoint stream goes on.
    after = time.monotonic()
    wait_for(lambda: len(stack.probe.since('tendon/setpoint', after)) >= 5,
             'the setpoint stream to go on')


def test_a_joint_state_with_10000_names_does_not_stall_the_setpoint_stream(stack):
    # (30000 names, 0.5 MB, stalled the old quadratic check for 12 s; 10000 for 1.3 s.)
    names = [f'n{i}' for i in range(10000)]
    huge = JointState(name=names, effort=[1.0] * len(names))
    stack.probe.command_pub.publish(huge)
    warning_containing(stack.probe, 'tension_controller', 'name: has 10000 entries; the robot '
                       'has 4 tendons')
    after = time.monotonic()
    wait_for(lambda: len(stack.probe.since('tendon/setpoint', after)) >= 5,
             'the setpoint stream to go on')
    # What the callback costs, in CPU time of this thread (gaps between arrivals measured the
    # machine's load as much as the callback): the stream of 50 Hz stalls once a callback
    # takes more than a period or so.
    start = time.thread_time()
    stack.controller._on_command(huge)
    assert time.thread_time() - start < 0.25


def feedback_state(diagnostics: list, controller: str) -> tuple[int, str] | None:
    """(level, message) of the newest 'tip feedback' status of ``controller`` on /diagnostics."""
    for array in reversed(diagnostics):
        for status in array.status:
            # named after the node with its namespace: two robots' controllers never share it
            if status.hardware_id == controller and status.name == f'{controller}: tip feedback':
                return ord(status.level), status.message
    return None


class SensedController:
    """
    A tension controller on a tip sensor (``tip/measured``) in ``namespace``, alone in a context.

    With a probe that publishes its measured tip and its target, and keeps its setpoints (one
    a control period). Its ``rest`` is the tip at the pretension, its ``goal`` a reachable
    target (independent statics equilibria).
    """

    def __init__(self, robot_file, namespace: str, *overrides: Parameter):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.controller = TensionControllerNode(
            context=self.context, namespace=namespace, parameter_overrides=[
                Parameter('robot_file', value=str(robot_file)),
                Parameter('tip_feedback', value='point'),
                Parameter('min_tension', value=MIN_TENSION),
                Parameter('warning_throttle_period', value=0.0), *overrides])
        self.probe = Probe(context=self.context)
        self.tip_pub = self.probe.create_publisher(
            PointStamped, f'/{namespace}/tip/measured', topics.TIP_MEASURED.qos)
        self.target_pub = self.probe.create_publisher(
            PointStamped, f'/{namespace}/tip/target', topics.TIP_TARGET.qos)
        self.setpoints = []
        self.probe.create_subscription(JointState, f'/{namespace}/tendon/setpoint',
                                       self.setpoints.append, topics.TENDON_SETPOINT.qos)
        self.robot = load_robot(robot_file)
        solver = StaticsSolver(self.robot, 'discrete')
        self.rest = solver.solve_tensions([MIN_TENSION] * 4).tip_position
        self.goal = solver.solve_tensions([1.5, MIN_TENSION, MIN_TENSION, 2.5]).tip_position

    def measure(self, point) -> None:
        self.tip_pub.publish(base_point(point))

    def aim(self, point) -> None:
        self.target_pub.publish(base_point(point))


def base_point(point) -> PointStamped:
    return PointStamped(header=Header(frame_id='base_link'),
                        point=Point(x=point[0], y=point[1], z=point[2]))


def test_stale_tip_feedback_pauses_the_loop_until_fresh_samples_return(robot_file):
    """
    A tip sensor that goes silent stops the tip-position loop; the tensions are held.

    The measured tip is kept at rest while the target is elsewhere, so a live loop pulls
    harder every period (what happened with the last good tip kept forever).
    """
    stale = SensedController(
        robot_file, 'stale',
        # long beside the feeder's 20 ms (a loaded machine spaced its samples by over 0.3 s),
        # short beside the test's waits: silence is waited for, not timed
        Parameter('feedback_timeout', value=2.0))
    controller, probe, setpoints = stale.controller, stale.probe, stale.setpoints
    diagnostics = []
    probe.create_subscription(DiagnosticArray, topics.DIAGNOSTICS.name, diagnostics.append,
                              topics.DIAGNOSTICS.qos)
    name = '/stale/tension_controller'

    def sense():   # 50 Hz while the sensor speaks
        stale.measure(stale.rest)

    with spinning(controller, probe, context=stale.context), feeding(sense) as sensing:
        wait_for(lambda: stale.tip_pub.get_subscription_count() >= 1
                 and stale.target_pub.get_subscription_count() >= 1, 'the controller')
        sensing.set()
        wait_for(lambda: controller.measured is not None, 'the first measured tip')
        stale.aim(stale.goal)
        wait_for(lambda: feedback_state(diagnostics, name) == (0, 'tip-position mode: '
                                                               'closed loop'),
                 'the closed loop on /diagnostics')
        wait_for(lambda: controller.command.max() > MIN_TENSION + 0.2, 'the loop to pull')
        # The sensor goes silent.
        sensing.clear()
        warning_containing(probe, 'stale.tension_controller', 'tip-position loop paused')
        wait_for(lambda: feedback_state(diagnostics, name)[0] == 1,
                 'WARN on /diagnostics')
        assert 'loop paused' in feedback_state(diagnostics, name)[1]
        held = controller.command.copy()
        # 50 control periods without feedback (counted: a loaded machine runs fewer a second)
        periods = len(setpoints)
        wait_for(lambda: len(setpoints) >= periods + 50, '50 control periods')
        assert controller.command.tolist() == held.tolist()
        # Fresh samples: the loop resumes and pulls on.
        sensing.set()
        warning_containing(probe, 'stale.tension_controller', 'tip-position loop resumed',
                           level=Log.INFO)
        wait_for(lambda: np.abs(controller.command - held).max() > 0.05,
                 'the loop to act again')
        # The controller's own state flips before the probe has taken the
        # /diagnostics message that says so off DDS; wait for it, as for WARN.
        wait_for(lambda: feedback_state(diagnostics, name)[0] == 0, 'OK on /diagnostics')


def test_a_robot_that_does_not_follow_does_not_wind_the_tip_loop_up(robot_file):
    """
    The tensions asked for stay within max_tension_lead of what tendon/state reports.

    A hardware bridge stopped by ~/stop holds the pretension and goes on reporting it, and
    the tip stays where that puts it: the loop, adding a step to its last tensions every
    period, pulled on until the tensions hit their limits (7 N of 20 after 5 s in the
    hardware stack on the emulator), and the robot swung 125 mm past the target on
    ~/resume.
    """
    lead = 0.5    # N
    stopped = SensedController(robot_file, 'stopped', Parameter('max_tension_lead', value=lead),
                               Parameter('feedback_timeout', value=2.0))   # beside 20 ms
    controller, probe, setpoints = stopped.controller, stopped.probe, stopped.setpoints
    state_pub = probe.create_publisher(JointState, '/stopped/tendon/state',
                                       topics.TENDON_STATE.qos)

    def stopped_robot():   # 50 Hz: at rest, at the pretension, whatever it is told
        stopped.measure(stopped.rest)
        state_pub.publish(JointState(name=stopped.robot.tendon_names, position=[0.0] * 4,
                                     effort=[MIN_TENSION] * 4))

    with spinning(controller, probe, context=stopped.context), \
            feeding(stopped_robot) as reporting:
        wait_for(lambda: stopped.tip_pub.get_subscription_count() >= 1
                 and state_pub.get_subscription_count() >= 1
                 and stopped.target_pub.get_subscription_count() >= 1, 'the controller')
        reporting.set()
        wait_for(lambda: controller.measured is not None and controller.applied is not None,
                 'the first tip and tendon state')
        stopped.aim(stopped.goal)
        warning_containing(probe, 'stopped.tension_controller', 'the robot does not follow')
        # 50 control periods more (counted: a loaded machine runs fewer a second)
        periods = len(setpoints)
        wait_for(lambda: len(setpoints) >= periods + 50, '50 control periods')
        efforts = np.array([m.effort for m in setpoints])
        assert efforts.max() <= MIN_TENSION + lead + 1e-9, efforts.max()
        assert controller.command.max() == pytest.approx(MIN_TENSION + lead)   # it pulls


def test_with_use_sim_time_the_tip_feedback_ages_in_simulated_time(robot_file):
    """
    A simulation slower than real time is not a silent sensor.

    make demo runs on simulated time: on a loaded machine a few per cent of real time, so
    that more than feedback_timeout (0.5 s) of wall time passed between two tips and the
    tip-position loop paused; the control period is simulated time too.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    controller = TensionControllerNode(context=context, parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)), Parameter('use_sim_time', value=True)])
    try:
        clock = controller.get_clock()
        clock.set_ros_time_override(Time(seconds=10.0))     # as the /clock subscription does
        tip = StaticsSolver(load_robot(robot_file), 'discrete').solve_tensions(
            [MIN_TENSION] * 4).tip_position
        controller._on_tip(PoseStamped(header=Header(frame_id='base_link'), pose=Pose(
            position=Point(x=tip[0], y=tip[1], z=tip[2]))))
        time.sleep(0.6)    # wall time past feedback_timeout; simulated time stood still
        assert controller._feedback_age() == pytest.approx(0.0)
        clock.set_ros_time_override(Time(seconds=10.7))
        assert controller._feedback_age() == pytest.approx(0.7)   # simulated seconds
    finally:
        controller.destroy_node()
        context.try_shutdown()


# (Tests that read the controller's warnings come before this one: a node of the same name
# destroyed in another context takes the /rosout publisher of that name with it.)
def test_min_tension_above_max_tension_is_a_configuration_error(robot_file):
    def make(context):
        return TensionControllerNode(context=context, parameter_overrides=[
            Parameter('robot_file', value=str(robot_file)),
            Parameter('min_tension', value=MAX_TENSION + 1.0)])
    with pytest.raises(ConfigurationError, match='min_tension: 6 N exceeds'):
        construct_alone(make)


def test_tip_target_without_a_measured_tip_holds_and_warns(stack):
    publisher = stack.probe.create_publisher(PointStamped, '/sensorless/tip/target',
                                             topics.TIP_TARGET.qos)
    wait_for(lambda: publisher.get_subscription_count() >= 1, 'the sensorless controller')
    publisher.publish(PointStamped(point=Point(x=0.2, y=0.05, z=0.0)))
    warning_containing(stack.probe, 'sensorless.tension_controller',
                       'no measured tip on /sensorless/tip/measured')
    assert stack.sensorless.setpoint.tolist() == [MIN_TENSION] * 4


def test_a_measured_tip_in_another_frame_is_ignored(stack):
    """
    A tip sensor publishing in its own frame (a tracker's camera) must not steer the loop.

    The target and the wrench in another frame were refused, the measured tip taken as if it
    were in the base frame: the loop drove the robot towards a point of the wrong frame.
    """
    tip_pub = stack.probe.create_publisher(PointStamped, '/sensorless/tip/measured',
                                           topics.TIP_MEASURED.qos)
    wait_for(lambda: tip_pub.get_subscription_count() >= 1, 'the sensorless controller')
    tip_pub.publish(PointStamped(header=Header(frame_id='camera_link'),
                                 point=Point(x=0.2, y=0.05, z=0.0)))
    warning_containing(stack.probe, 'sensorless.tension_controller',
                       "ignored measured tip: header.frame_id: 'camera_link' is not the base "
                       "frame 'base_link'")
    assert stack.sensorless.measured is None


def test_on_a_robot_without_discs_the_default_statics_is_cosserat():
    """The discrete statics needs discs: the default (auto) must not stop a steel-rod stack."""
    steel = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml')
    assert steel.vertebra_positions.size == 0
    controller = construct_alone(lambda context: TensionControllerNode(
        context=context, parameter_overrides=[
            Parameter('robot_file', value=str(share_dir() / 'config' / 'steel_rod_robot.yaml'))]))
    assert controller.tip_controller.solver.model == 'cosserat'
    with_discs = construct_alone(lambda context: TensionControllerNode(context=context))
    assert with_discs.tip_controller.solver.model == 'discrete'


def test_the_discrete_statics_asked_for_on_a_robot_without_discs_is_a_configuration_error():
    steel = str(share_dir() / 'config' / 'steel_rod_robot.yaml')
    with pytest.raises(ConfigurationError, match='vertebrae: the discrete statics needs'):
        construct_alone(lambda context: TensionControllerNode(
            context=context, parameter_overrides=[Parameter('robot_file', value=steel),
                                                  Parameter('statics_model', value='discrete')]))
