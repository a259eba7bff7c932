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
Displacement controller: ``tendon/command/displacement`` -> ``tendon/setpoint``.

Subscribes ``tendon/command/displacement`` (JointState ``position``, m pulled in past
the base, positive when pulling). A command naming some tendons changes only those
(all start at 0 m). Each value is clamped to [``min_displacement``,
``max_displacement``] with a throttled warning. The wanted displacements move
towards the command by at most ``rate_limit`` / ``rate`` per period (on simulated time,
``rate_limit`` times the simulated time since the last period, which the integral of the PI
feedback counts too: :class:`~tendon_robot_sim.ros.sim_time.ControlPeriod`) and the full
vector is published on ``tendon/setpoint`` at ``rate``, as chosen by ``output``:

position (hardware with position-controlled motors)
    the limited, rate-limited displacements as ``position`` setpoints (m).
tension (simulation, or force-controlled motors)
    tensions (``effort``, N) that make the tendons reach the displacements:
    feed-forward from the static equilibrium of the statics model
    (``statics_model``, :meth:`StaticsSolver.solve_displacements`, which includes the
    tendon compliance and lets a pushed-out tendon go slack), solved whenever the
    wanted displacements change and warm-started from the previous solution, plus PI
    feedback (``kp``, ``ki``) on the error between the wanted and the measured
    displacement (``tendon/state`` ``position``). Each tension is clamped to
    [``min_tension``, ``max_tension``] (``max_tension`` from the robot description);
    the integral stops growing while its tendon is clamped (anti-windup), and a
    tendon held at ``max_tension`` gets a throttled warning. A statics
    solve that does not converge keeps the previous feed-forward, with a throttled
    warning, until the wanted displacements (or the tip wrench) change: it is not tried
    again every period. A ``tendon/state`` older than ``feedback_timeout`` on the node's clock
    (the simulator or the sensor silent, or sending only rejected states) pauses the
    feedback, with a throttled warning: the correction it last applied is held and the
    integral stops, so that a silence no longer winds the integral up to ``max_tension``
    (the error of the last state would be integrated for as long as it lasted); the
    feed-forward still follows the command. Fresh states resume the loop.

The constant-curvature model (:mod:`tendon_robot_sim.models.rod.constant_curvature`) is
not the solver's initial guess: :class:`StaticsSolver` takes none and warm-starts
from its previous solution, which is closer than a CC arc under gravity.

A command with unknown names, non-finite values, or a wrong number of values is
rejected as a whole with a throttled warning; so is a ``tendon/state`` that lacks a
tendon.
"""

import numpy as np
from rclpy.node import Node
from std_msgs.msg import Header

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.solver import NODE_MODELS, StaticsSolver
from tendon_robot_sim.models.sim_model import InputError, named_values
from tendon_robot_sim.models.tendon_robot import load_robot, without_friction
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import (check_one_field, displacements_from_joint_state,
                                           state_values, wrench_from_msg)
from tendon_robot_sim.ros.parameters import (check_displacement_range, check_frame_prefix,
                                             check_pretension, ConfigurationError, declare,
                                             FRAME_PREFIX, on_parameters_set, Param,
                                             TIP_WRENCH_BOUND)
from tendon_robot_sim.ros.runner import run_node
from tendon_robot_sim.ros.sim_time import ControlPeriod, watch_for_clock
from tendon_robot_sim.ros.throttle import fault_kind, FaultWarnings

NODE_NAME = 'displacement_controller'
OUTPUTS = ('tension', 'position')

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (tendon names, geometry and '
          'max_tension); empty: the package default config/robot.yaml'),
    Param('output', 'tension', '', 'setpoint kind: tension = effort from statics '
          'feed-forward plus PI feedback on tendon/state (simulation); position = the '
          'displacements themselves (position-controlled motors)', choices=OUTPUTS),
    Param('rate', 50.0, 'Hz', 'rate at which the setpoint is published (and of the '
          'feedback loop)', range=(1.0, 1000.0)),
    Param('min_displacement', -0.01, 'm', 'lower limit of every commanded displacement '
          '(negative lets the tendon out)', range=(-1.0, 1.0)),
    Param('max_displacement', 0.02, 'm', 'upper limit of every commanded displacement',
          range=(-1.0, 1.0)),
    Param('rate_limit', 0.02, 'm/s', 'largest change of a wanted displacement per second',
          range=(0.0001, 10.0), read_only=False),
    Param('statics_model', 'auto', '', 'statics model of the tension feed-forward '
          '(output tension; auto: discrete with vertebra discs, cosserat without)',
          choices=NODE_MODELS),
    Param('kp', 20.0, 'N/m', 'proportional gain on the displacement error (output '
          'tension)', range=(0.0, 100000.0), read_only=False),
    Param('ki', 50.0, 'N/(m s)', 'integral gain on the displacement error (output '
          'tension)', range=(0.0, 1000000.0), read_only=False),
    Param('min_tension', 0.0, 'N', 'lower limit of every tension setpoint (output '
          'tension), at most the smallest max_tension', range=(0.0, 1000.0)),
    Param('feedback_timeout', 0.5, 's', 'a tendon/state older than this pauses the PI '
          'feedback (output tension): its last correction is held and the integral stops '
          'until fresh states return', range=(0.01, 60.0), read_only=False),
    Param('command_topic', topics.TENDON_DISPLACEMENT_COMMAND.name, '',
          'desired displacements (position, m)'),
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'setpoints of the actuators '
          '(effort, N, or position, m, as chosen by output)'),
    Param('state_topic', topics.TENDON_STATE.name, '', 'measured displacements (position, '
          'm) for the feedback (output tension)'),
    Param('wrench_topic', topics.TIP_WRENCH.name, '', 'external tip force and torque (base '
          'frame) that the feed-forward statics model carries (output tension)'),
    *TIP_WRENCH_BOUND,
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings about '
          'rejected or clamped commands or a failed statics solve, per kind of fault (one '
          'kind never hides another)', range=(0.0, 60.0)),
    FRAME_PREFIX,
)


def check_parameters(values):
    """
    Return the robot, or raise ConfigurationError for ``values`` (by name) refused together.

    At the controller's start and in the local launcher before a stack starts:
    ``min_displacement`` not below ``max_displacement``, a robot file it cannot drive,
    ``min_tension`` above the smallest ``max_tension`` of the robot. The launcher passed
    them, and the stack started without the controller, which stopped it.
    """
    check_displacement_range(values['min_displacement'], values['max_displacement'])
    try:
        robot = load_robot(values['robot_file'] or default_robot_file())
    except RobotDescriptionError as error:
        raise ConfigurationError(str(error)) from None
    check_pretension(values['min_tension'], robot)
    return robot


class DisplacementControllerNode(Node):
    """Limited, rate-limited displacements as position setpoints or as tensions."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self.config = declare(self, PARAMS)
            self._warnings = FaultWarnings(self.get_logger(),
                                           lambda: self.config.warning_throttle_period)
            config = self.config
            check_frame_prefix(config.frame_prefix)
            self.robot = check_parameters(vars(config))
            # the frame tip/wrench must be in
            self.base_frame = config.frame_prefix + self.robot.base.frame_id
            self.max_tensions = self.robot.max_tensions
            self.names = self.robot.tendon_names
            n = len(self.names)
            self.command = np.zeros(n)    # m, latest command, limited
            self.wanted = np.zeros(n)     # m, rate-limited towards the command
            self.tension_output = config.output == 'tension'
            if self.tension_output:
                # frictionless feed-forward: the PI corrects friction as it does any load
                self.solver = StaticsSolver(without_friction(self.robot), config.statics_model)
                self.feed_forward = np.clip(self.solver.solve_displacements(
                    self.wanted).tensions, config.min_tension, self.max_tensions)   # N
        except (RobotDescriptionError, StaticsError) as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        except ConfigurationError:
            self.destroy_node()
            raise
        self.solved_for = self.wanted.copy()   # m, displacements last solved (or tried)
        self.integral = np.zeros(n)            # m s, of the displacement error
        self.measured = None                   # m, latest tendon/state position
        self.measured_at = None                # s, the node's clock at its arrival
        self.correction = np.zeros(n)          # N, the PI's part of the last fresh output
        on_parameters_set(self, self._on_parameters_set)
        self.setpoint_pub = self.create_publisher(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic,
            topics.TENDON_SETPOINT.qos)
        self.command_sub = self.create_subscription(
            topics.TENDON_DISPLACEMENT_COMMAND.msg_type, config.command_topic,
            self._on_command, topics.TENDON_DISPLACEMENT_COMMAND.qos)
        if self.tension_output:
            self.state_sub = self.create_subscription(
                topics.TENDON_STATE.msg_type, config.state_topic, self._on_state,
                topics.TENDON_STATE.subscription_qos)
            self.wrench_sub = self.create_subscription(
                topics.TIP_WRENCH.msg_type, config.wrench_topic, self._on_wrench,
                topics.TIP_WRENCH.subscription_qos)
        self.timer = self.create_timer(1.0 / config.rate, self._on_timer)
        self.control_period = ControlPeriod(self, 1.0 / config.rate)
        # the timer above runs on simulated time with use_sim_time: still at 0 without a /clock
        self.clock_watch = watch_for_clock(
            self, self._warn, f'no setpoint on {self.setpoint_pub.topic_name}')

    # ------------------------------------------------------------------ inputs

    def _on_parameters_set(self, parameters) -> None:
        # rate_limit, kp, ki and feedback_timeout are writable; rclpy checked their ranges.
        for parameter in parameters:
            if hasattr(self.config, parameter.name):
                setattr(self.config, parameter.name, parameter.value)

    def _on_command(self, msg) -> None:
        try:
            check_one_field(msg)
            values = displacements_from_joint_state(msg, len(self.names))
            command = named_values(values, self.command, self.names, 'position',
                                   'displacement', 'tendon')
        except InputError as error:
            self._warn(fault_kind('displacement command', str(error)),
                       f'rejected displacement command: {error}')
            return
        low, high = self.config.min_displacement, self.config.max_displacement
        clamped = np.clip(command, low, high)
        changed = [f'{n} {c:g} -> {k:g} m'
                   for n, c, k in zip(self.names, command, clamped) if c != k]
        if changed:
            self._warn('clamped', f'displacement command clamped to [min_displacement, '
                       f'max_displacement] = [{low:g}, {high:g}] m: {", ".join(changed)}')
        self.command = clamped

    def _on_state(self, msg) -> None:
        try:
            measured = state_values(msg, self.names, 'position', 'displacement')
        except InputError as error:
            self._warn(fault_kind('tendon state', str(error)), f'ignored tendon state: {error}')
            return
        self.measured, self.measured_at = measured, self._now()

    def _on_wrench(self, msg) -> None:
        try:
            self.solver.set_tip_load(*wrench_from_msg(
                msg, self.base_frame, self.config.max_tip_force, self.config.max_tip_torque))
        except InputError as error:
            self._warn(fault_kind('tip wrench', str(error)), f'rejected tip wrench: {error}')
            return
        self.solved_for = np.full(len(self.names), np.nan)   # re-solve the feed-forward

    def _warn(self, kind: str, message: str) -> None:
        self._warnings(kind, message)     # a throttle per kind: one fault hides no other

    # ------------------------------------------------------------------ output

    def _on_timer(self) -> None:
        period = self.control_period()
        step = self.config.rate_limit * period
        self.wanted = self.wanted + np.clip(self.command - self.wanted, -step, step)
        header = Header(stamp=self.get_clock().now().to_msg())
        if not self.tension_output:
            self.setpoint_pub.publish(topics.TENDON_SETPOINT.msg_type(
                header=header, name=self.names, position=self.wanted.tolist()))
            return
        self.setpoint_pub.publish(topics.TENDON_SETPOINT.msg_type(
            header=header, name=self.names, effort=self._tensions(period).tolist()))

    def _tensions(self, period: float) -> np.ndarray:
        """Feed-forward plus PI feedback, clamped to [min_tension, max_tension], N."""
        low, high = self.config.min_tension, self.max_tensions
        if not np.array_equal(self.wanted, self.solved_for):
            try:
                result = self.solver.solve_displacements(self.wanted)
            except ConvergenceError as error:
                self._warn('statics', f'statics did not converge for displacements '
                           f'{np.round(self.wanted, 6).tolist()} m ({error}); keeping the '
                           f'previous feed-forward until they change')
            else:
                self.feed_forward = np.clip(result.tensions, low, high)
            # Tried once either way: a solve that failed fails again on the same
            # displacements, and a failure takes seconds (2 to 10 s on opencr_ftdcr_v6), which
            # every period of the single-threaded node spent on it, the setpoints starved.
            self.solved_for = self.wanted.copy()
        if self.measured is None:
            return self.feed_forward.copy()
        age = self._now() - self.measured_at
        if age > self.config.feedback_timeout:
            self._warn('stale state',
                       f'tendon/state on {self.state_sub.topic_name} is {age:.2f} s old '
                       f'(feedback_timeout {self.config.feedback_timeout:g} s): feedback '
                       f'paused, its last correction held')
            return np.clip(self.feed_forward + self.correction, low, high)
        error = self.wanted - self.measured
        integral = self.integral + error * period
        raw = self.feed_forward + self.config.kp * error + self.config.ki * integral
        tensions = np.clip(raw, low, high)
        held = [f'{n} {e * 1e3:.2g} mm' for n, e, r, h in zip(self.names, error, raw, high)
                if r > h]
        if held:
            self._warn('max tension', f'tensions held at max_tension; displacement error left: '
                       f'{", ".join(held)} (the command may need more tension than allowed)')
        # anti-windup: integrate only where the output is not held at a limit
        free = raw == tensions
        self.integral = np.where(free, integral, self.integral)
        self.correction = tensions - self.feed_forward
        return tensions

    def _now(self) -> float:
        """Return the node's clock [s]: simulated time with use_sim_time, as the timer."""
        return self.get_clock().now().nanoseconds * 1e-9


def main(args=None) -> int:
    return run_node(DisplacementControllerNode, NODE_NAME, args, exit_on_stop=True)


if __name__ == '__main__':
    raise SystemExit(main())
