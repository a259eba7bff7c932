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
Hardware bridge: ROS topics <-> tendon motor driver and laser tip sensor (serial).

A managed (lifecycle) node. It starts unconfigured, with no port open.
``configure`` opens the motor driver port and the tip sensor port (a port that
cannot be opened fails the transition with an error naming it; the node stays
unconfigured and ``configure`` can be retried). ``activate`` starts sending
setpoints to the motors and publishing ``tendon/state`` and ``tip/measured``.
``deactivate`` commands the safe state and holds it (setpoints are ignored).
``cleanup`` closes the ports, ``shutdown`` (from any state) and ``on_error``
leave the hardware in the safe state and close the ports; so does the end of
the process (Ctrl-C). ``diagnostics`` are published while configured.

Subscribes ``tendon/setpoint`` (JointState naming every tendon once: ``effort``
= tensions [N] for tension mode, or ``position`` = displacements [m] for
displacement mode, not both). Each setpoint is checked (finite, known names,
right lengths; otherwise rejected with a throttled warning and never sent),
clamped to the limits (tension to [``min_tension``, the robot's
``max_tension``], displacement to [``min_displacement``, ``max_displacement``];
a warning unless a tension in [0, ``min_tension``) is raised to the
pretension, which is what "relaxed" means on the rig) and handed to the motor
driver at ``command_rate``, ramped at ``max_tension_rate`` [N/s] or
``max_displacement_rate`` [m/s] from what the device last reported (after a
start, ``~/resume``, a watchdog recovery, a reconnect or a change of mode) or
from the previous command, so no setpoint is ever applied in one jump. A
robot whose ``max_tension`` the wire format cannot carry is refused at start.

Publishes ``tendon/state`` (per tendon: position = displacement [m], velocity
[m/s], effort = tension [N]) from the driver's status reports, ``tip/measured``
(PointStamped in the base frame, transformed with the ``tip_sensor_link`` pose
of the URDF) from valid sensor samples, and ``diagnostics`` with the health of
both links.

Safety: if no valid setpoint arrives for ``watchdog_timeout`` the bridge
commands the safe state (every tendon at ``min_tension``, tension mode, in one
step: relaxing is the safe direction). ``~/stop`` (std_srvs/Trigger) commands
the safe state at once, in one frame for all tendons, and ignores setpoints
until ``~/resume``: a latch on top of the lifecycle, which neither
``activate`` nor a reconfiguration releases. The same safe command goes out
on ``deactivate``, ``cleanup`` and when the node shuts down.
The commanded state, safe state included, is re-sent (with a new sequence
number, after the driver's backed-off retries) until the device acknowledges
it; a command not acknowledged within ``delivery_timeout`` turns the motor
diagnostics to ERROR. Every timer of the bridge runs on the steady clock, so
``use_sim_time`` or a stopped ``/clock`` cannot freeze the watchdog.

Serial I/O runs in the drivers' own threads; the callbacks here only take
their locks, so nothing blocks the executor.
"""

from __future__ import annotations

import logging
import time

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped
import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.time import Time
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.devices import (DYNAMIXEL, motor_bus, MOTOR_DEVICES, MotorBus,
                                               SENSOR_DEVICES, tip_sensor, TipSensor)
from tendon_robot_sim.protocol.drivers import DELIVERED, PENDING, REJECTED
from tendon_robot_sim.protocol.framing import ProtocolError
from tendon_robot_sim.protocol.keyence import Heads
from tendon_robot_sim.protocol.laser import TdcrLaserV1
from tendon_robot_sim.protocol.link import CONNECTED
from tendon_robot_sim.protocol.mounting import MountingError, sensor_mount
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.lifecycle import reported
from tendon_robot_sim.ros.messages import joint_state_msg, point_msg
from tendon_robot_sim.ros.parameters import (check_displacement_range, check_frame_prefix,
                                             check_pretension, ConfigurationError, declare,
                                             FRAME_PREFIX, Param)
from tendon_robot_sim.ros.plausibility import Plausibility, tension_problem, tip_problem
from tendon_robot_sim.ros.runner import run_node
from tendon_robot_sim.ros.throttle import FaultWarnings

NODE_NAME = 'hardware_bridge'
DRIVER_LOGGER = logging.getLogger('tendon_robot_sim.protocol')

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (tendon names, max_tension); '
          'empty: the package default config/robot.yaml'),
    Param('urdf_file', '', '', 'URDF giving the pose of sensor_frame in the base frame; '
          'empty: the package urdf/tendon_robot.urdf'),
    Param('sensor_frame', 'tip_sensor_link', '', 'URDF link of the tip sensor'),
    FRAME_PREFIX,
    Param('motor_port', '/dev/ttyUSB0', '', 'motor driver port: device path, '
          'socket://host:port or loop://'),
    Param('motor_baudrate', 115200, 'baud', 'motor driver line speed (dynamixel: 57600 .. '
          '4000000, a rate the Dynamixel SDK opens)', range=(1200, 4500000)),
    Param('motor_device', motor.TdcrMotorV1.name, '', 'motor protocol: tdcr-motor-v1 (the '
          "package's own, docs/hardware.md) or dynamixel (X-series servos, Protocol 2.0)",
          choices=MOTOR_DEVICES),
    Param('dynamixel_file', '', '', 'servo ID, pulley, direction, current limit and '
          'current -> tension calibration per tendon (motor_device dynamixel); empty: the '
          'package config/dynamixel.yaml'),
    Param('safe_torque_off', False, '', 'dynamixel: deactivate switches the servo torque off '
          'instead of holding the pretension'),
    Param('sensor_port', '/dev/ttyUSB1', '', 'tip sensor port; empty: no tip sensor'),
    Param('sensor_baudrate', 115200, 'baud', 'tip sensor line speed', range=(1200, 4000000)),
    Param('sensor_device', TdcrLaserV1.name, '', 'tip sensor protocol: tdcr-laser-v1 '
          '(streaming) or keyence-lkg (LK-G style, polled at state_rate)',
          choices=SENSOR_DEVICES),
    Param('sensor_timeout', 0.05, 's', 'keyence-lkg: wait for the answer to one request',
          range=(0.001, 1.0)),
    Param('keyence_axes', [1, 2], '', 'keyence-lkg: sensor-frame axis (0 x, 1 y, 2 z) that '
          'head 1 and head 2 measure'),
    Param('keyence_signs', [1, 1], '', 'keyence-lkg: +1 if a head reads positive towards +axis'),
    Param('keyence_offsets', [0.0, 0.0], 'm', 'keyence-lkg: coordinate where each head reads 0'),
    Param('keyence_third', 0.11, 'm', 'keyence-lkg: the unmeasured coordinate of the tip '
          '(along the robot; 0.11 m: the default URDF and robot)'),
    Param('min_tension', 0.5, 'N', 'pretension: lowest tension ever commanded, and the '
          'safe state of every tendon', range=(0.0, 1000.0)),
    Param('min_displacement', -0.01, 'm', 'lowest displacement ever commanded',
          range=(-1.0, 1.0)),
    Param('max_displacement', 0.02, 'm', 'highest displacement ever commanded',
          range=(-1.0, 1.0)),
    Param('watchdog_timeout', 0.5, 's', 'the safe state is commanded when no valid setpoint '
          'arrived for this long', range=(0.01, 60.0)),
    Param('command_rate', 100.0, 'Hz', 'rate at which new setpoints go to the motor driver',
          range=(1.0, 1000.0)),
    Param('state_rate', 50.0, 'Hz', 'rate at which tendon/state and tip/measured are '
          'published from what the devices reported', range=(1.0, 1000.0)),
    Param('diagnostics_rate', 1.0, 'Hz', 'diagnostics publish rate', range=(0.1, 10.0)),
    Param('stale_timeout', 0.5, 's', 'a connected link that sent nothing valid for this long '
          'is reported stale (WARN); dynamixel: a servo silent this long is lost (ERROR, stop)',
          range=(0.01, 60.0)),
    Param('ack_timeout', 0.1, 's', 'wait for the motor driver to acknowledge a command before '
          're-sending it', range=(0.001, 10.0)),
    Param('max_retries', 3, '', 're-sends of one unacknowledged command (after 1, 2, 4 ... '
          'times ack_timeout); then the bridge sends it again with a new sequence number',
          range=(0, 100)),
    Param('delivery_timeout', 0.5, 's', 'a command the device has not acknowledged for this '
          'long turns the motor diagnostics to ERROR', range=(0.01, 60.0)),
    Param('max_tension_rate', 10.0, 'N/s', 'fastest change of a commanded tension (setpoints '
          'are ramped; the safe state is not)', range=(0.01, 10000.0)),
    Param('max_displacement_rate', 0.01, 'm/s', 'fastest change of a commanded displacement',
          range=(1e-5, 10.0)),
    Param('open_timeout', 2.0, 's', 'configure fails when a port is not open after this long',
          range=(0.01, 60.0)),
    Param('reconnect_backoff', 2.0, 's', 'longest wait between attempts to reopen a lost port '
          '(starts at 0.05 s, doubles)', range=(0.05, 60.0)),
    Param('tension_margin', 0.2, '', 'a reported tension outside [-margin, 1 + margin] x '
          'max_tension is implausible (an invalid sample)', range=(0.0, 10.0)),
    Param('workspace_margin', 0.2, '', 'a tip farther than (1 + margin) x the rod length from '
          'the base is implausible (an invalid sample)', range=(0.0, 10.0)),
    Param('implausible_timeout', 0.5, 's', 'implausible readings for this long: ERROR and the '
          'safe state (latched until ~/resume)', range=(0.01, 60.0)),
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'setpoints in'),
    Param('state_topic', topics.TENDON_STATE.name, '', 'tendon state out'),
    Param('tip_topic', topics.TIP_MEASURED.name, '', 'measured tip position out'),
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings of the '
          'same kind', range=(0.0, 60.0)),
)


class SetpointError(ValueError):
    """A setpoint that cannot be used; the message says why."""


class _RosLogHandler(logging.Handler):
    """Forward the drivers' Python log records (I/O threads) to the node's logger."""

    def __init__(self, node_logger):
        super().__init__(logging.INFO)
        self.node_logger = node_logger

    def emit(self, record: logging.LogRecord) -> None:
        # One call site per severity: rclpy refuses a call site whose severity changes.
        try:
            if record.levelno >= logging.ERROR:
                self.node_logger.error(record.getMessage())
            elif record.levelno >= logging.WARNING:
                self.node_logger.warning(record.getMessage())
            else:
                self.node_logger.info(record.getMessage())
        except Exception:  # logging must never take down the I/O thread
            self.handleError(record)


class HardwareBridgeNode(LifecycleNode):
    """Bridge between the ROS topics and the serial devices of the real robot."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self.config = config = declare(self, PARAMS)
            check_frame_prefix(config.frame_prefix)
            self.robot = load_robot(config.robot_file or default_robot_file())
            self.mount = sensor_mount(config.urdf_file or share_dir() / 'urdf/tendon_robot.urdf',
                                      self.robot.base.frame_id, config.sensor_frame)
            self._check_limits()
        except (RobotDescriptionError, MountingError, ValueError) as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        self.names = self.robot.tendon_names
        self.max_tensions = self.robot.max_tensions
        self.safe_command = (motor.TENSION, np.full(len(self.names), config.min_tension))
        self.motors: MotorBus | None = None     # open from configure to cleanup
        self.sensor: TipSensor | None = None

        self._active = False
        self._setpoint: tuple[str, np.ndarray] | None = None   # newest valid, clamped
        self._setpoint_time = time.monotonic()   # watchdog: counts from activation
        self._output: tuple[str, np.ndarray] | None = None   # the ramp; None: restart it
        self._ramp_after = -np.inf   # a restarted ramp starts from a status newer than this
        self._tick = time.monotonic()
        self._reconnects = 0
        self._sent: tuple[str, np.ndarray] | None = None
        self._sent_seq: int | None = None
        self._waiting_since: float | None = None   # commands unacknowledged since [s]
        self._resends = 0
        self._watchdog_tripped = False
        self._stopped = False
        self._fault = ''   # the device fault that latched the stop
        self._plausible = {'motors': Plausibility(config.implausible_timeout),
                           'sensor': Plausibility(config.implausible_timeout)}
        self._rejected = 0
        self._clamped = 0
        self._last_status_stamp = -np.inf
        self._warned = FaultWarnings(self.get_logger().warning,
                                     lambda: self.config.warning_throttle_period)

        # The drivers log link events from their threads through Python logging.
        self._log_handler = _RosLogHandler(self.get_logger())
        DRIVER_LOGGER.addHandler(self._log_handler)
        DRIVER_LOGGER.setLevel(logging.INFO)
        # Lifecycle publishers: silent unless active.
        self.state_pub = self.create_lifecycle_publisher(
            topics.TENDON_STATE.msg_type, config.state_topic, topics.TENDON_STATE.qos)
        self.tip_pub = self.create_lifecycle_publisher(
            topics.TIP_MEASURED.msg_type, config.tip_topic, topics.TIP_MEASURED.qos)
        self.diagnostics_pub = self.create_publisher(
            topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name, topics.DIAGNOSTICS.qos)
        self.setpoint_sub = self.create_subscription(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic, self._on_setpoint,
            topics.TENDON_SETPOINT.qos)
        self.stop_srv = self.create_service(Trigger, '~/stop', self._on_stop)
        self.resume_srv = self.create_service(Trigger, '~/resume', self._on_resume)
        # The steady clock: use_sim_time or a /clock that stops must not freeze the watchdog.
        # The timers run while the ports are open (configure to cleanup).
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.timers_while_configured = [
            self.create_timer(1.0 / config.command_rate, self._on_command_timer, clock=steady),
            self.create_timer(1.0 / config.state_rate, self._on_state_timer, clock=steady),
            self.create_timer(1.0 / config.diagnostics_rate, self._publish_diagnostics,
                              clock=steady)]
        for timer in self.timers_while_configured:
            timer.cancel()   # not the autostart argument: Humble's create_timer lacks it

    # ------------------------------------------------------------------ lifecycle

    @reported
    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """
        Open the motor driver port and the tip sensor port.

        A port that cannot be opened fails the transition with an error naming it; the
        other port is closed again and the node stays unconfigured.
        """
        c = self.config
        link = {'read_timeout': 0.01, 'backoff': (0.05, c.reconnect_backoff)}
        try:
            self.motors = motor_bus(
                c.motor_device, c.motor_port, self.max_tensions, c.motor_baudrate,
                c.ack_timeout, c.max_retries, c.command_rate,
                c.dynamixel_file or share_dir() / 'config' / 'dynamixel.yaml',
                c.safe_torque_off, c.stale_timeout, **link)
            heads = Heads(tuple(c.keyence_axes), tuple(c.keyence_signs),
                          tuple(c.keyence_offsets), c.keyence_third)
            self.sensor = tip_sensor(c.sensor_device, c.sensor_port, c.sensor_baudrate,
                                     c.state_rate, c.sensor_timeout, heads, **link) \
                if c.sensor_port else None
        except ValueError as error:
            self._close_ports()
            self.get_logger().error(f'configure failed: {error}')
            return TransitionCallbackReturn.FAILURE
        for what, driver, port in (('motor driver', self.motors, c.motor_port),
                                   ('tip sensor', self.sensor, c.sensor_port)):
            if driver is None:
                continue
            problem = _open(driver, c.open_timeout)
            if problem:
                self._close_ports()
                self.get_logger().error(f'configure failed: cannot open the {what} port '
                                        f'{port!r} ({problem}); still unconfigured, '
                                        'configure again to retry')
                return TransitionCallbackReturn.FAILURE
        self._reconnects = 0
        self._sent = self._sent_seq = self._waiting_since = None
        self._last_status_stamp = -np.inf
        for timer in self.timers_while_configured:
            timer.reset()
        self.get_logger().info(f'configured: motor driver on {c.motor_port}'
                               + (f', tip sensor on {c.sensor_port}' if c.sensor_port else ''))
        return super().on_configure(state)

    @reported
    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Start following setpoints (ramped from the device's state) and publishing."""
        self._setpoint = None
        self._setpoint_time = time.monotonic()   # the watchdog counts from here
        self._output = None
        self._ramp_after = time.monotonic()
        self._watchdog_tripped = False
        self._active = True
        self.motors.enable(self.safe_command[1])
        self.get_logger().info('active: following setpoints'
                               + (' once ~/resume releases ~/stop' if self._stopped else ''))
        return super().on_activate(state)

    @reported
    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Command the safe state and hold it; setpoints are ignored until activated."""
        self._active = False
        self._setpoint = None
        self._command(self.safe_command, time.monotonic())
        self.motors.disable()
        self.get_logger().info('inactive: safe state commanded '
                               f'({self.config.min_tension:g} N on every tendon)')
        return super().on_deactivate(state)

    @reported
    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Close the ports (the safe state goes out first)."""
        self._close_ports()
        return super().on_cleanup(state)

    @reported
    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Leave the hardware in the safe state and close the ports, from any state."""
        self._active = False
        self._close_ports()
        return super().on_shutdown(state)

    @reported
    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Leave the hardware safe after a failed transition; back to unconfigured."""
        self._active = False
        self._close_ports()
        return super().on_error(state)

    def _close_ports(self) -> None:
        """Stop the timers, send the safe state if a port is open, close both ports."""
        for timer in self.timers_while_configured:
            timer.cancel()
        self._release_hardware()

    def _release_hardware(self) -> None:
        """Send the safe state if the motor port is open, then close both ports; idempotent."""
        motors, self.motors = self.motors, None
        sensor, self.sensor = self.sensor, None
        if motors is not None:
            motors.stop(final_tensions=self.safe_command[1])
        if sensor is not None:
            sensor.stop()

    def _check_limits(self) -> None:
        c = self.config
        check_displacement_range(c.min_displacement, c.max_displacement)
        check_pretension(c.min_tension, self.robot)
        too_high = {t.name: t.max_tension for t in self.robot.tendons
                    if t.max_tension > motor.MAX_WIRE_TENSION}
        if too_high and c.motor_device != DYNAMIXEL:
            raise ConfigurationError(
                f'robot_file: max_tension {too_high} N exceeds what {c.motor_device} can '
                f'command ({motor.MAX_WIRE_TENSION:g} N)')

    # ------------------------------------------------------------------ setpoints

    def _on_setpoint(self, msg) -> None:
        if self._stopped or not self._active:
            return   # ~/stop holds the safe state until ~/resume; inactive, deactivate holds it
        try:
            mode, values = self._parse_setpoint(msg)
        except SetpointError as error:
            self._rejected += 1
            self._warn('rejected', f'rejected setpoint (nothing sent): {error}')
            return
        if mode == motor.TENSION:
            # 0 .. min_tension means "relaxed": raised to the pretension without a warning.
            values = np.where((values >= 0.0) & (values < self.config.min_tension),
                              self.config.min_tension, values)
            low, high = np.full(len(values), self.config.min_tension), self.max_tensions
            unit = 'N'
        else:
            low = np.full(len(values), self.config.min_displacement)
            high = np.full(len(values), self.config.max_displacement)
            unit = 'm'
        clamped = np.clip(values, low, high)
        if np.any(clamped != values):
            self._clamped += 1
            changed = ', '.join(f'{n} {v:g} -> {c:g} {unit}' for n, v, c
                                in zip(self.names, values, clamped) if v != c)
            self._warn('clamped', f'{mode} setpoint clamped to the limits: {changed}')
        try:   # only a setpoint that can go on the wire feeds the watchdog
            self.motors.check_command(mode, clamped)
        except ProtocolError as error:
            self._rejected += 1
            self._warn('unsendable', f'{mode} setpoint beyond the wire format (nothing sent): '
                       f'{error}')
            return
        self._setpoint = (mode, clamped)
        self._setpoint_time = time.monotonic()

    def _parse_setpoint(self, msg) -> tuple[str, np.ndarray]:
        """(mode, values in tendon order) of a setpoint message, or SetpointError."""
        if len(msg.name) != len(self.names):   # first: a huge message costs nothing
            raise SetpointError(f'name: must list every tendon {self.names} once, got '
                                f'{len(msg.name)} names')
        names = list(msg.name)
        if sorted(names) != sorted(self.names):
            raise SetpointError(f'name: must list every tendon {self.names} once, got {names}')
        n = len(names)
        has_effort, has_position = len(msg.effort) > 0, len(msg.position) > 0
        if has_effort == has_position:
            raise SetpointError('exactly one of effort (tension, N) and position '
                                '(displacement, m) must be filled')
        field, mode = ('effort', motor.TENSION) if has_effort else ('position', motor.DISPLACEMENT)
        values = np.asarray(getattr(msg, field), dtype=float)
        if len(values) != n:
            raise SetpointError(f'{field}: has {len(values)} values for {n} names')
        if not np.all(np.isfinite(values)):
            bad = [name for name, v in zip(names, values) if not np.isfinite(v)]
            raise SetpointError(f'{field}: not finite for {bad}')
        order = [names.index(name) for name in self.names]
        return mode, values[order]

    def _on_command_timer(self) -> None:
        now = time.monotonic()
        dt, self._tick = min(now - self._tick, 2.0 / self.config.command_rate), now
        self._track_link()
        self._check_fault()
        if not self._active:
            if self._sent is not None:
                self._command(self.safe_command, now)   # held until delivered (deactivate)
            return
        if self._stopped or now - self._setpoint_time > self.config.watchdog_timeout:
            if not self._stopped and not self._watchdog_tripped:
                self._watchdog_tripped = True
                self._setpoint = None
                self.get_logger().warning(
                    f'no valid setpoint for {self.config.watchdog_timeout:g} s: commanding the '
                    f'safe state ({self.config.min_tension:g} N on every tendon)')
            self._command(self.safe_command, now)
            return
        self._watchdog_tripped = False
        if self._setpoint is not None and self.motors.connected:
            command = self._ramp(self._setpoint, dt)
            if command is not None:
                self._command(command, now)

    def _check_fault(self) -> None:
        """Latch the stop on a device fault (a servo's hardware error, a lost servo)."""
        fault = self.motors.fault()
        now = time.monotonic()
        for device, check in self._plausible.items():
            if not fault and check.sustained(now):
                fault = f'{device}: {check.last} for more than {check.hold:g} s'
        if fault and fault != self._fault:
            self._fault = fault
            self._stopped = True
            self._setpoint = None
            self.get_logger().error(f'motor fault: {fault}; safe state commanded, setpoints '
                                    'ignored until ~/resume')

    def _track_link(self) -> None:
        """Restart the ramp from the device's report after a reconnect."""
        reconnects = self.motors.link.statistics().reconnects
        if reconnects != self._reconnects or not self.motors.connected:
            self._reconnects = reconnects
            self._output = None
            self._ramp_after = time.monotonic()

    def _ramp(self, target: tuple[str, np.ndarray], dt: float) -> tuple[str, np.ndarray] | None:
        """Return the next command on the way to ``target``, or None until the ramp has a start."""
        mode, values = target
        if self._output is None or self._output[0] != mode:
            start = self._ramp_start(mode)
            if start is None:
                return None
            self._output = (mode, start)
        rate = (self.config.max_tension_rate if mode == motor.TENSION
                else self.config.max_displacement_rate)
        current = self._output[1]
        step = rate * dt
        self._output = (mode, np.where(np.abs(values - current) <= step, values,
                                       current + np.sign(values - current) * step))
        return self._output

    def _ramp_start(self, mode: str) -> np.ndarray | None:
        """Where the device is in ``mode`` (its status, within the limits), if it said lately."""
        status = self.motors.status()
        if status is None or status.oldest <= self._ramp_after or self._implausible(status):
            return None   # never from a reading that cannot be physical
        if mode == motor.TENSION:
            return np.clip(status.tensions, self.config.min_tension, self.max_tensions)
        return np.clip(status.displacements, self.config.min_displacement,
                       self.config.max_displacement)

    def _command(self, command: tuple[str, np.ndarray], now: float) -> None:
        """Send ``command`` if it is new, or again if the driver gave the last one up."""
        if _same(command, self._sent):
            delivery = self.motors.delivery(self._sent_seq)
            if delivery in (DELIVERED, PENDING, REJECTED):
                return   # a rejected command is not repeated; diagnostics say why
            self._resends += 1
            self._warn('resend', f'motors: command not acknowledged ({delivery}); sending it '
                       'again')
        if command is self.safe_command:
            self._output = (command[0], command[1].copy())   # leaving it ramps from there
        self._send(command)

    def _send(self, command: tuple[str, np.ndarray]) -> None:
        mode, values = command
        if self._sent_seq is None or self.motors.delivery(self._sent_seq) == DELIVERED:
            self._waiting_since = time.monotonic()
        try:
            if mode == motor.TENSION:
                self._sent_seq = self.motors.command_tensions(values)
            else:
                self._sent_seq = self.motors.command_displacements(values)
        except ProtocolError as error:   # cannot happen after check_command; kept to be safe
            self._rejected += 1
            self._warn('unsendable', f'{mode} command not sent: {error}')
            return
        self._sent = (mode, values.copy())

    def _on_stop(self, request, response):
        self._stopped = True
        self._setpoint = None
        response.success = True
        if self.motors is None:
            response.message = 'no port open (unconfigured): stopped until ~/resume'
            return response
        self._command(self.safe_command, time.monotonic())
        self.get_logger().warning('stop: every tendon relaxed to the safe state; setpoints are '
                                  'ignored until ~/resume')
        response.message = f'safe state commanded: {self.config.min_tension:g} N on every tendon'
        return response

    def _on_resume(self, request, response):
        was_stopped, self._stopped = self._stopped, False
        self._fault = ''
        if self.motors is not None:
            self.motors.clear_fault()   # one that persists is reported and latched again
        self._setpoint = None
        self._setpoint_time = time.monotonic()
        response.success = True
        response.message = ('resumed: the next setpoint is ramped to' if was_stopped
                            else 'was not stopped')
        return response

    # ------------------------------------------------------------------ measurements

    def _on_state_timer(self) -> None:
        now_ros = self.get_clock().now()
        now = time.monotonic()
        status = self.motors.status()
        if status is not None and status.stamp > self._last_status_stamp:
            self._last_status_stamp = status.stamp
            if self._plausible['motors'].update(self._implausible(status), now):
                self.state_pub.publish(joint_state_msg(
                    self.names, status.displacements, status.velocities, status.tensions,
                    _stamp(now_ros, now - status.stamp)))
            else:
                self._warn('implausible motors', f'motors: {self._plausible["motors"].last}; '
                           'not published')
        if self.sensor is None:
            return
        frame = self.config.frame_prefix + self.robot.base.frame_id
        reach = (1.0 + self.config.workspace_margin) * self.robot.rod.length
        for sample, rx_time in self.sensor.measurements():
            if not sample.valid:
                continue
            tip = self.mount.to_base(sample.position)
            if not self._plausible['sensor'].update(tip_problem(tip, reach), now):
                self._warn('implausible sensor', f'tip sensor: {self._plausible["sensor"].last}'
                           '; not published')
                continue
            stamp = _stamp(now_ros, now - rx_time)
            self.tip_pub.publish(PointStamped(header=Header(stamp=stamp, frame_id=frame),
                                              point=point_msg(tip)))

    def _implausible(self, status) -> str:
        return tension_problem(status.tensions, self.max_tensions, self.config.tension_margin,
                               self.names)

    # ------------------------------------------------------------------ diagnostics

    def _publish_diagnostics(self) -> None:
        statuses = [self._motor_diagnostics(), self._safety_diagnostics()]
        if self.sensor is not None:
            statuses.insert(1, self._sensor_diagnostics())
        self.diagnostics_pub.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()), status=statuses))

    def _link_level(self, link) -> tuple[bytes, str]:
        age = _rx_age(link)
        if link.state != CONNECTED:
            return DiagnosticStatus.ERROR, f'disconnected ({link.last_error or "not opened yet"})'
        if age > self.config.stale_timeout:
            return DiagnosticStatus.WARN, f'connected, but nothing valid received for {age:.1f} s'
        return DiagnosticStatus.OK, 'connected'

    def _motor_diagnostics(self) -> DiagnosticStatus:
        link, commands = self.motors.statistics()
        level, message = self._link_level(link)
        delivery = DELIVERED if self._sent_seq is None else self.motors.delivery(self._sent_seq)
        if delivery == REJECTED:
            level = DiagnosticStatus.ERROR
            message = f'the device rejects the command ({commands.last_nak})'
        elif delivery != DELIVERED:
            waiting = time.monotonic() - max(self._waiting_since, commands.last_ack_time or 0.0)
            if waiting > self.config.delivery_timeout:
                level, message = (DiagnosticStatus.ERROR,
                                  f'commands not acknowledged for {waiting:.1f} s')
        status = self.motors.status()
        values = _link_values(link) + [
            ('acks', commands.acks), ('naks', commands.naks), ('last_nak', commands.last_nak),
            ('retransmits', commands.retransmits), ('ack_timeouts', commands.ack_timeouts),
            ('last_acked_seq', commands.last_acked_seq), ('resends', self._resends)]
        if status is not None:
            faults = {name: self.motors.fault_names(int(f))
                      for name, f in zip(self.names, status.faults) if f}
            values += [(f'faults {name}', ', '.join(f)) for name, f in faults.items()]
            values += [(f'mode {name}', m) for name, m in zip(self.names, status.modes)]
            if faults and level != DiagnosticStatus.ERROR:
                level, message = DiagnosticStatus.ERROR, f'motor faults: {faults}'
        level, message = self._plausibility_level('motors', level, message, values)
        if self._fault:
            level, message = DiagnosticStatus.ERROR, f'fault, stopped: {self._fault}'
        return self._status('motor driver', self._motor_id(), level, message, values)

    def _sensor_diagnostics(self) -> DiagnosticStatus:
        link, samples = self.sensor.statistics()
        level, message = self._link_level(link)
        values = _link_values(link) + [
            ('samples', samples.samples), ('invalid', samples.invalid), ('lost', samples.lost),
            ('overflow', samples.overflow)]
        level, message = self._plausibility_level('sensor', level, message, values)
        return self._status('tip sensor', f'{self.config.sensor_device} on '
                            f'{self.config.sensor_port}', level, message, values)

    def _safety_diagnostics(self) -> DiagnosticStatus:
        age = time.monotonic() - self._setpoint_time
        if self._stopped:
            level, message = DiagnosticStatus.WARN, 'stopped by ~/stop: safe state'
        elif not self._active:
            level, message = DiagnosticStatus.WARN, 'inactive (lifecycle): safe state'
        elif self._watchdog_tripped:
            level, message = DiagnosticStatus.WARN, 'watchdog: no setpoint, safe state'
        else:
            level, message = DiagnosticStatus.OK, 'following setpoints'
        values = [('active', self._active), ('stopped', self._stopped),
                  ('watchdog_tripped', self._watchdog_tripped),
                  ('setpoint_age', f'{age:.3f}'), ('rejected_setpoints', self._rejected),
                  ('clamped_setpoints', self._clamped),
                  ('last_sent', '' if self._sent is None else
                   f'{self._sent[0]} {np.round(self._sent[1], 6).tolist()}')]
        # The safety status guards the motors: it names them, so two robots are told apart.
        return self._status('safety', self._motor_id(), level, message, values)

    def _plausibility_level(self, device: str, level: bytes, message: str,
                            values: list) -> tuple[bytes, str]:
        """WARN while ``device`` reports implausible readings (ERROR comes with the stop)."""
        check = self._plausible[device]
        values.append(('implausible', check.count))
        if check.since is not None and level == DiagnosticStatus.OK:
            return DiagnosticStatus.WARN, check.last
        return level, message

    def _motor_id(self) -> str:
        return f'{self.config.motor_device} on {self.config.motor_port}'

    def _status(self, name: str, hardware_id: str, level: bytes, message: str,
                values: list[tuple[str, object]]) -> DiagnosticStatus:
        # '<node>: <status>' as diagnostic_updater names them, with the namespace: two
        # bridges in two namespaces never publish the same name.
        return DiagnosticStatus(level=level, name=f'{self.get_fully_qualified_name()}: {name}',
                                message=message, hardware_id=hardware_id,
                                values=[KeyValue(key=k, value=str(v)) for k, v in values])

    # ------------------------------------------------------------------ helpers

    def _warn(self, kind: str, text: str) -> None:
        # One throttle per kind, so a flood of one problem does not hide another.
        self._warned(kind, text)

    def destroy_node(self) -> None:
        if hasattr(self, 'safe_command'):   # the constructor got that far
            # Leave the robot relaxed from any state; not through a transition: after
            # Ctrl-C the context (and with it the timers) is already shut down.
            self._release_hardware()
        handler = getattr(self, '_log_handler', None)
        if handler is not None:
            DRIVER_LOGGER.removeHandler(handler)
        super().destroy_node()


def _open(driver: MotorBus | TipSensor, timeout: float) -> str:
    """Start ``driver`` and wait for its first attempt to open the port: '' or why it failed."""
    driver.start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        link = driver.link.statistics()
        if link.state == CONNECTED:
            return ''
        if link.connect_failures:
            return link.last_error
        time.sleep(0.005)
    return f'not open after {timeout:g} s'


def _same(a: tuple[str, np.ndarray] | None, b: tuple[str, np.ndarray] | None) -> bool:
    return a is not None and b is not None and a[0] == b[0] and np.array_equal(a[1], b[1])


def _stamp(now_ros: Time, age: float) -> TimeMsg:
    """
    Return the ROS time ``age`` [s] before ``now_ros``.

    Simulated time may be near 0, so not below.
    """
    return Time(nanoseconds=max(0, now_ros.nanoseconds - round(age * 1e9)),
                clock_type=now_ros.clock_type).to_msg()


def _rx_age(link) -> float:
    """Seconds since the link last received a valid frame (infinite if never)."""
    return float('inf') if link.last_rx_time is None else time.monotonic() - link.last_rx_time


def _link_values(link) -> list[tuple[str, object]]:
    age = _rx_age(link)
    return [('state', link.state), ('frames_ok', link.frames_ok),
            ('bad_checksum', link.bad_checksum), ('parse_errors', link.parse_errors),
            ('bytes_dropped', link.bytes_dropped), ('bytes_received', link.bytes_received),
            ('frames_sent', link.frames_sent), ('reconnects', link.reconnects),
            ('connect_failures', link.connect_failures), ('last_rx_age', f'{age:.3f}'),
            ('last_error', link.last_error)]


def main(args=None) -> int:
    return run_node(HardwareBridgeNode, NODE_NAME, args)


if __name__ == '__main__':
    raise SystemExit(main())
