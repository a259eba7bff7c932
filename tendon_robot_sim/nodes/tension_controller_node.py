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
Tension controller: tension commands or a tip target -> ``tendon/setpoint`` (effort, N).

Two modes; the last command wins:

tension mode (the start)
    Subscribes ``tendon/command/tension`` (JointState ``effort``, N). A command naming
    some tendons changes only those (all start at the floor). Each value is
    clamped to [floor, ``max_tension``] with a throttled warning: ``max_tension`` from the
    robot description, the floor ``min_tension`` or the description's own lower bound
    when higher (``Actuation.min_tension``: the rolling-joint snake's ``pretension``, so
    that no cable goes slack). The robot may be any kind pulled by tensions
    (:data:`~tendon_robot_sim.models.registry.ACTUATIONS`: tendon robots, the
    rolling-joint snake's cables).
tip-position mode (robots with a statics model: tendon robots)
    A ``tip/target`` (PointStamped, base frame, m) switches to it; the next tension
    command switches back. Every period, the step of
    :class:`~tendon_robot_sim.control.tip_control.TipController` on the statics model
    (``statics_model``) moves the measured tip (``tip_feedback``: ``pose`` =
    ``tip/pose`` of the simulator, ``point`` = ``tip/measured`` of the hardware tip
    sensor) by ``tip_gain`` of the error, at most ``tip_max_step``, in the two
    directions perpendicular to the base axis (the third follows from the nearly
    inextensible backbone; a planar robot controls the one direction of its plane), with
    the least tension sum within the tension limits.
    An unreachable target ends at the closest reachable tip with a throttled warning.
    A measured tip older than ``feedback_timeout`` on the node's clock (the sensor silent,
    or sending only rejected samples; simulated time with ``use_sim_time``, as the control
    period, so a simulation slower than real time is not taken for a silent sensor) pauses
    the loop: the tensions are held where the last fresh
    feedback put them, with a throttled warning, until fresh samples return. Holding,
    rather than switching to the statics model's open-loop tensions for the target,
    keeps the robot still when it cannot be observed; the model's tensions differ from
    the closed-loop ones by the model error (unknown loads, friction) and would move it.
    The tensions the loop asks for stay within ``max_tension_lead`` of the tensions
    ``tendon/state`` last reported (``effort``; a state that stopped coming bounds them
    still: the robot is then not seen to follow either): each
    step adds to the last, so a robot that does not follow (the hardware bridge stopped by
    ``~/stop`` or ramping slower) would otherwise have the loop go on pulling until its
    tensions hit their limits, and the robot swing far past the target once it follows
    again (the hardware stack on the emulator: 125 mm past it after 5 s stopped).

The controller's state goes out on ``/diagnostics`` once a second and at every change
(status ``tension_controller: tip feedback``): OK in tension mode and with fresh
feedback, WARN while a target waits for feedback; values ``mode``, ``feedback_age``
(s, ``none`` before the first sample) and ``feedback_timeout``.

Either way, the setpoint moves towards the wanted tensions by at most ``rate_limit``
/ ``rate`` per period (on simulated time, ``rate_limit`` times the simulated time since the
last period: :class:`~tendon_robot_sim.ros.sim_time.ControlPeriod`) and is published as the
full vector at ``rate``: a steady stream for the actuators to hold, never outside [floor,
``max_tension``].

A command with unknown names, non-finite values, or a wrong number of values, and a
non-finite target, one in another frame than the robot's base frame (the description's
base frame under ``frame_prefix``; an empty ``frame_id`` means the base frame) or one
farther from the base than :data:`WORKSPACE_RADIUS` backbone lengths, are rejected as a
whole with a throttled warning; a measured tip that far away, or in another frame than the
base frame (empty: the base frame), is ignored with a throttled warning. While the
target is out of reach, a throttled warning says how far the tip is from it. Any failure
of the model in a control step is caught: the step is skipped with a throttled warning
and the tensions are held, so the node keeps publishing.
"""

import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
from rclpy.node import Node
from std_msgs.msg import Header

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.control.tip_control import TipController
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import ROBOT_KINDS, RobotDescriptionError
from tendon_robot_sim.models.registry import load_actuation
from tendon_robot_sim.models.rod.statics.solver import NODE_MODELS
from tendon_robot_sim.models.sim_model import InputError, named_values
from tendon_robot_sim.models.tension_distribution import DistributionError
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import (check_one_field, state_values,
                                           tensions_from_joint_state, wrench_from_msg)
from tendon_robot_sim.ros.parameters import (check_frame_prefix, check_pretension,
                                             ConfigurationError, declare, FRAME_PREFIX,
                                             on_parameters_set, Param, TIP_WRENCH_BOUND)
from tendon_robot_sim.ros.runner import run_node
from tendon_robot_sim.ros.sim_time import ControlPeriod, watch_for_clock
from tendon_robot_sim.ros.throttle import fault_kind, FaultWarnings

NODE_NAME = 'tension_controller'
TIP_FEEDBACK = {'pose': topics.TIP_POSE, 'point': topics.TIP_MEASURED}
# Targets and measured tips farther from the base than this many backbone lengths are not
# positions of this robot: the arithmetic of the step would overflow long before.
WORKSPACE_RADIUS = 2.0
DIAGNOSTICS_PERIOD = 1.0   # s between two diagnostics messages when nothing changes
# (level, message) of the controller's state on /diagnostics
TENSION_MODE = (DiagnosticStatus.OK, 'tension mode')
CLOSED_LOOP = (DiagnosticStatus.OK, 'tip-position mode: closed loop')
PAUSED = (DiagnosticStatus.WARN, 'tip-position mode: no fresh tip feedback, loop paused, '
          'tensions held')
# What a control step can raise from the model on odd (yet finite) inputs.
MODEL_ERRORS = (StaticsError, DistributionError, ArithmeticError, ValueError,
                np.linalg.LinAlgError)

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (tendon names, geometry and '
          'max_tension); empty: the package default config/robot.yaml'),
    Param('rate', 50.0, 'Hz', 'rate at which the setpoint is published (and of the '
          'tip-position control step)', range=(1.0, 1000.0)),
    Param('min_tension', 0.0, 'N', 'pretension: lower limit of every tendon tension, at '
          "most the smallest max_tension; the robot description's own bound wins when higher "
          "(a rolling-joint snake's pretension)", range=(0.0, 1000.0)),
    Param('rate_limit', 50.0, 'N/s', 'largest change of a setpoint tension per second',
          range=(0.01, 10000.0), read_only=False),
    Param('command_topic', topics.TENDON_COMMAND.name, '', 'desired tensions (effort, N)'),
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'tensions the actuators must '
          'apply (effort, N)'),
    Param('target_topic', topics.TIP_TARGET.name, '', 'desired tip position '
          '(PointStamped, base frame, m); switches to tip-position mode'),
    Param('state_topic', topics.TENDON_STATE.name, '', 'tensions the actuators report '
          '(effort, N), which bound the tip-position loop (max_tension_lead)'),
    Param('wrench_topic', topics.TIP_WRENCH.name, '', 'external tip force and torque (base '
          'frame) that the statics model of the tip Jacobian carries'),
    *TIP_WRENCH_BOUND,
    Param('tip_feedback', 'pose', '', 'measured tip: pose = PoseStamped on tip/pose '
          '(simulator), point = PointStamped on tip/measured (hardware tip sensor)',
          choices=tuple(TIP_FEEDBACK)),
    Param('statics_model', 'auto', '', 'statics model of the tip Jacobian (auto: discrete '
          'with vertebra discs, cosserat without)', choices=NODE_MODELS),
    Param('tip_gain', 0.03, '', 'fraction of the tip error corrected per control period',
          range=(0.01, 1.0), read_only=False),
    Param('tip_max_step', 0.005, 'm', 'largest tip displacement asked for per control '
          'period', range=(0.0001, 0.1), read_only=False),
    Param('feedback_timeout', 0.5, 's', 'a measured tip older than this pauses the '
          'tip-position loop (the tensions are held) until fresh samples return',
          range=(0.01, 60.0), read_only=False),
    Param('max_tension_lead', 2.0, 'N', 'tip-position mode: the tensions asked for stay '
          'within this of those tendon/state last reported (also when it stops coming), '
          'so that a robot that does not follow (a stopped hardware bridge) does not wind '
          'the loop up', range=(0.01, 1000.0), read_only=False),
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings about '
          'rejected or clamped commands or an unreachable target, per kind of fault (one '
          'kind never hides another)', range=(0.0, 60.0)),
    FRAME_PREFIX,
)


def check_parameters(values) -> tuple:
    """
    Return the robot's (kind, actuation), or raise ConfigurationError for ``values`` (by name).

    What the controller refuses together, at its start and in the local launcher before a
    stack starts: a robot file it cannot drive, ``min_tension`` above the smallest
    ``max_tension`` of the robot. The launcher passed them, and the stack started without
    the controller, which stopped it.
    """
    try:
        kind, actuation = load_actuation(values['robot_file'] or default_robot_file(),
                                         'the tension controller')
    except (RobotDescriptionError, StaticsError) as error:
        raise ConfigurationError(str(error)) from None
    check_pretension(values['min_tension'], actuation)
    return kind, actuation


class TensionControllerNode(Node):
    """Limited, rate-limited tensions from tension commands or a tip target."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self.config = declare(self, PARAMS)
            self._warnings = FaultWarnings(self.get_logger(),
                                           lambda: self.config.warning_throttle_period)
            check_frame_prefix(self.config.frame_prefix)
            kind, self.actuation = check_parameters(vars(self.config))
            self.max_tensions = self.actuation.max_tensions
            # the robot's own bound wins over a lower parameter (the snake's pretension)
            self.min_tension = max(self.config.min_tension, self.actuation.min_tension)
            statics = self.actuation.statics_robot
            self.tip_controller = (None if statics is None else TipController(
                statics, self.config.statics_model, self.min_tension))
        except (RobotDescriptionError, StaticsError) as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        except ConfigurationError:
            self.destroy_node()
            raise
        self.names = list(self.actuation.names)
        # the frame tip/target and tip/wrench must be in: the robot's base, prefixed
        self.base_frame = self.config.frame_prefix + self.actuation.base_frame
        self.no_statics = f'{ROBOT_KINDS[kind]} has no statics model: tension mode only'
        self.workspace_radius = WORKSPACE_RADIUS * self.actuation.reach   # m
        self.command = np.full(len(self.names), self.min_tension)   # N, wanted, limited
        self.setpoint = self.command.copy()                          # N, published
        self.target = None          # (3,) m, base frame; not None in tip-position mode
        self.measured = None        # (3,) m, latest measured tip
        self.measured_at = None     # s, the node's clock at its arrival
        self.applied = None         # (n,) N, latest tensions tendon/state reported
        self.reported = None        # (level, message) of the last diagnostics published
        on_parameters_set(self, self._on_parameters_set)
        self.setpoint_pub = self.create_publisher(
            topics.TENDON_SETPOINT.msg_type, self.config.setpoint_topic,
            topics.TENDON_SETPOINT.qos)
        self.command_sub = self.create_subscription(
            topics.TENDON_COMMAND.msg_type, self.config.command_topic, self._on_command,
            topics.TENDON_COMMAND.qos)
        self.target_sub = self.create_subscription(
            topics.TIP_TARGET.msg_type, self.config.target_topic, self._on_target,
            topics.TIP_TARGET.qos)
        self.wrench_sub = self.create_subscription(
            topics.TIP_WRENCH.msg_type, self.config.wrench_topic, self._on_wrench,
            topics.TIP_WRENCH.subscription_qos)
        feedback = TIP_FEEDBACK[self.config.tip_feedback]
        self.tip_sub = self.create_subscription(
            feedback.msg_type, feedback.name, self._on_tip, feedback.subscription_qos)
        self.state_sub = self.create_subscription(
            topics.TENDON_STATE.msg_type, self.config.state_topic, self._on_state,
            topics.TENDON_STATE.subscription_qos)
        self.diagnostics_pub = self.create_publisher(
            topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name, topics.DIAGNOSTICS.qos)
        self.timer = self.create_timer(1.0 / self.config.rate, self._on_timer)
        self.control_period = ControlPeriod(self, 1.0 / self.config.rate)
        self.diagnostics_timer = self.create_timer(DIAGNOSTICS_PERIOD,
                                                   self._publish_diagnostics)
        # the timer above runs on simulated time with use_sim_time: still at 0 without a /clock
        self.clock_watch = watch_for_clock(
            self, self._warn, f'no setpoint on {self.setpoint_pub.topic_name}')

    # ------------------------------------------------------------------ inputs

    def _on_parameters_set(self, parameters) -> None:
        # rate_limit, tip_gain, tip_max_step, feedback_timeout and max_tension_lead are
        # writable; rclpy checked their ranges.
        for parameter in parameters:
            if hasattr(self.config, parameter.name):
                setattr(self.config, parameter.name, parameter.value)

    def _on_command(self, msg) -> None:
        try:
            check_one_field(msg)
            values = tensions_from_joint_state(msg, len(self.names))
            command = named_values(values, self.command, self.names, 'effort', 'tension',
                                   'tendon')
        except InputError as error:
            self._warn(fault_kind('tension command', str(error)),
                       f'rejected tension command: {error}')
            return
        clamped = np.clip(command, self.min_tension, self.max_tensions)
        changed = [f'{n} {c:g} -> {k:g} N'
                   for n, c, k in zip(self.names, command, clamped) if c != k]
        if changed:
            self._warn('clamped', f'tension command clamped to [min_tension, max_tension]: '
                       f'{", ".join(changed)}')
        if self.target is not None:
            self.get_logger().info('tension command: leaving tip-position mode')
            self.target = None
        self.command = clamped

    def _on_target(self, msg) -> None:
        if self.tip_controller is None:
            self._warn('target: no statics', f'rejected tip target: {self.no_statics}')
            return
        point = np.array([msg.point.x, msg.point.y, msg.point.z])
        frame = msg.header.frame_id
        if not np.all(np.isfinite(point)):
            self._warn('target: point', f'rejected tip target: point: non-finite {point.tolist()}')
            return
        if frame not in ('', self.base_frame):
            self._warn('target: frame',
                       f'rejected tip target: header.frame_id: {frame!r} is not the base '
                       f'frame {self.base_frame!r}')
            return
        if not self._in_workspace(point):
            self._warn('target: workspace',
                       f'rejected tip target: point: {point.tolist()} m is farther than '
                       f'{self.workspace_radius:g} m from the base')
            return
        if self.target is None:
            self.get_logger().info(f'tip target {point.tolist()} m: tip-position mode')
        self.target = point

    def _on_wrench(self, msg) -> None:
        if self.tip_controller is None:
            return     # the load only matters to a statics model, and there is none
        try:
            force, moment = wrench_from_msg(msg, self.base_frame, self.config.max_tip_force,
                                            self.config.max_tip_torque)
            self.tip_controller.solver.set_tip_load(force, moment)
        except InputError as error:
            self._warn(fault_kind('tip wrench', str(error)), f'rejected tip wrench: {error}')

    def _on_tip(self, msg) -> None:
        frame = msg.header.frame_id
        if frame not in ('', self.base_frame):
            # a sensor in its own frame (a tracker's camera): its numbers are not base-frame
            # positions, and the loop would steer the robot by them
            self._warn('measured tip: frame',
                       f'ignored measured tip: header.frame_id: {frame!r} is not the base '
                       f'frame {self.base_frame!r}')
            return
        p = msg.pose.position if self.config.tip_feedback == 'pose' else msg.point
        point = np.array([p.x, p.y, p.z])
        if np.all(np.isfinite(point)) and self._in_workspace(point):
            self.measured, self.measured_at = point, self._now()
        else:
            self._warn('measured tip',
                       f'ignored measured tip {point.tolist()} m: not finite or farther '
                       f'than {self.workspace_radius:g} m from the base')

    def _on_state(self, msg) -> None:
        try:
            applied = state_values(msg, self.names, 'effort', 'tension')
        except InputError as error:
            self._warn(fault_kind('tendon state', str(error)), f'ignored tendon state: {error}')
            return
        self.applied = applied

    def _in_workspace(self, point: np.ndarray) -> bool:
        # Component-wise first: the norm of 1e308-sized values overflows.
        offset = point - self.actuation.base_position
        return bool(np.all(np.abs(offset) <= self.workspace_radius)
                    and np.linalg.norm(offset) <= self.workspace_radius)

    # ------------------------------------------------------------------ output

    def _on_timer(self) -> None:
        if self.target is not None:
            age = self._feedback_age()
            if self.measured is None:
                self._warn('feedback',
                           f'tip target: no measured tip on {self.tip_sub.topic_name} yet; '
                           f'holding the tensions')
            elif age > self.config.feedback_timeout:
                self._warn('feedback',
                           f'tip feedback on {self.tip_sub.topic_name} is {age:.2f} s old '
                           f'(feedback_timeout {self.config.feedback_timeout:g} s): '
                           f'tip-position loop paused, holding the tensions')
            else:
                self._tip_step()
        if self._state() != self.reported:
            if self.reported == PAUSED and self._state() == CLOSED_LOOP:
                self.get_logger().info('fresh tip feedback: tip-position loop resumed')
            self._publish_diagnostics()
        largest = self.config.rate_limit * self.control_period()
        self.setpoint = np.clip(
            self.setpoint + np.clip(self.command - self.setpoint, -largest, largest),
            self.min_tension, self.max_tensions)
        self.setpoint_pub.publish(topics.TENDON_SETPOINT.msg_type(
            header=Header(stamp=self.get_clock().now().to_msg()),
            name=self.names, effort=self.setpoint.tolist()))

    def _tip_step(self) -> None:
        try:
            step = self.tip_controller.step(self.setpoint, self.measured, self.target,
                                            self.config.tip_gain, self.config.tip_max_step)
        except MODEL_ERRORS as error:
            self._warn('tip step', f'tip-position step skipped, holding the tensions: '
                       f'{type(error).__name__}: {error}')
            return
        if not step.feasible:
            distance = math.dist(self.target, self.measured)
            self._warn('unreachable',
                       f'tip target {self.target.tolist()} m is out of reach within the '
                       f'tension limits: holding the closest reachable tip, {distance:.3g} m '
                       f'away')
        self.command = self._within_lead(step.tensions)

    def _within_lead(self, tensions: np.ndarray) -> np.ndarray:
        """``tensions`` within max_tension_lead of the last tendon/state, N."""
        # A stale state bounds them too: a loop resumed by fresh tips while the state was
        # still stale (a stalled machine, a dead bridge) stepped past the bound and wound up.
        if self.applied is None:
            return tensions
        lead = self.config.max_tension_lead
        bounded = np.clip(tensions, self.applied - lead, self.applied + lead)
        if not np.array_equal(bounded, tensions):
            self._warn('lead', f'tip-position loop: tensions held within max_tension_lead '
                       f'({lead:g} N) of those {self.state_sub.topic_name} reports, '
                       f'{np.round(self.applied, 3).tolist()} N: the robot does not follow')
        return np.clip(bounded, self.min_tension, self.max_tensions)

    def _feedback_age(self) -> float:
        """Seconds since the last accepted measured tip (inf: none yet)."""
        return math.inf if self.measured_at is None else self._now() - self.measured_at

    def _now(self) -> float:
        """Return the node's clock [s]: simulated time with use_sim_time, as the timer."""
        return self.get_clock().now().nanoseconds * 1e-9

    def _state(self) -> tuple[bytes, str]:
        """(diagnostic level, message) of the control loop."""
        if self.target is None:
            return TENSION_MODE
        return PAUSED if self._feedback_age() > self.config.feedback_timeout else CLOSED_LOOP

    def _publish_diagnostics(self) -> None:
        level, message = self.reported = self._state()
        age = self._feedback_age()
        values = [('mode', 'tension' if self.target is None else 'tip-position'),
                  ('feedback_age', 'none' if math.isinf(age) else f'{age:.3f}'),
                  ('feedback_timeout', f'{self.config.feedback_timeout:g}')]
        self.diagnostics_pub.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()),
            # named with the namespace, as the bridge's and the simulator's: two robots'
            # controllers must not share one status in an aggregator
            status=[DiagnosticStatus(level=level,
                                     name=f'{self.get_fully_qualified_name()}: tip feedback',
                                     message=message,
                                     hardware_id=self.get_fully_qualified_name(),
                                     values=[KeyValue(key=k, value=v) for k, v in values])]))

    def _warn(self, kind: str, message: str) -> None:
        self._warnings(kind, message)     # a throttle per kind: one fault hides no other


def main(args=None) -> int:
    return run_node(TensionControllerNode, NODE_NAME, args, exit_on_stop=True)


if __name__ == '__main__':
    raise SystemExit(main())
