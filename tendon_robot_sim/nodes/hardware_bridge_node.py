"""Hardware bridge: ROS topics <-> tendon motor driver and laser tip sensor (serial).

Subscribes ``tendon/setpoint`` (JointState naming every tendon once: ``effort``
= tensions [N] for tension mode, or ``position`` = displacements [m] for
displacement mode, not both). Each setpoint is checked (finite, known names,
right lengths; otherwise rejected with a throttled warning and never sent),
clamped to the limits (tension to [``min_tension``, the robot's
``max_tension``], displacement to [``min_displacement``, ``max_displacement``];
a warning unless a tension in [0, ``min_tension``) is raised to the
pretension, which is what "relaxed" means on the rig) and handed to the motor
driver at ``command_rate`` when it differs from what was last sent.

Publishes ``tendon/state`` (per tendon: position = displacement [m], velocity
[m/s], effort = tension [N]) from the driver's status reports, ``tip/measured``
(PointStamped in the base frame, transformed with the ``tip_sensor_link`` pose
of the URDF) from valid sensor samples, and ``diagnostics`` with the health of
both links.

Safety: if no valid setpoint arrives for ``watchdog_timeout`` the bridge
commands the safe state (every tendon at ``min_tension``, tension mode) once,
and again after any later gap. ``~/stop`` (std_srvs/Trigger) commands the safe
state at once, in one frame for all tendons, and ignores setpoints until
``~/resume``. The same safe command goes out when the node shuts down.

Serial I/O runs in the drivers' own threads; the callbacks here only take
their locks, so nothing blocks the executor.
"""

from __future__ import annotations

import logging
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped
import numpy as np
from rclpy.duration import Duration
from rclpy.node import Node
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.core.robot import load_robot, RobotDescriptionError
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.drivers import MotorDriver, TipSensorDriver
from tendon_robot_sim.protocol.framing import ProtocolError
from tendon_robot_sim.protocol.laser import SENSOR_DEVICES, TdcrLaserV1
from tendon_robot_sim.protocol.link import CONNECTED
from tendon_robot_sim.protocol.mounting import MountingError, sensor_mount
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import point_msg, tendon_state_msg
from tendon_robot_sim.ros.parameters import (check_displacement_range, check_pretension,
                                             ConfigurationError, declare, Param)
from tendon_robot_sim.ros.runner import run_node

NODE_NAME = 'hardware_bridge'
DRIVER_LOGGER = logging.getLogger('tendon_robot_sim.protocol')

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (tendon names, max_tension); '
          'empty: the package default config/robot.yaml'),
    Param('urdf_file', '', '', 'URDF giving the pose of sensor_frame in the base frame; '
          'empty: the package urdf/tendon_robot.urdf'),
    Param('sensor_frame', 'tip_sensor_link', '', 'URDF link of the tip sensor'),
    Param('motor_port', '/dev/ttyUSB0', '', 'motor driver port: device path, '
          'socket://host:port or loop://'),
    Param('motor_baudrate', 115200, 'baud', 'motor driver line speed', range=(1200, 4000000)),
    Param('motor_device', motor.TdcrMotorV1.name, '', 'motor driver protocol',
          choices=tuple(motor.MOTOR_DEVICES)),
    Param('sensor_port', '/dev/ttyUSB1', '', 'tip sensor port; empty: no tip sensor'),
    Param('sensor_baudrate', 115200, 'baud', 'tip sensor line speed', range=(1200, 4000000)),
    Param('sensor_device', TdcrLaserV1.name, '', 'tip sensor protocol',
          choices=tuple(SENSOR_DEVICES)),
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
          'is reported stale (WARN)', range=(0.01, 60.0)),
    Param('ack_timeout', 0.1, 's', 'wait for the motor driver to acknowledge a command before '
          're-sending it', range=(0.001, 10.0)),
    Param('max_retries', 3, '', 're-sends of one unacknowledged command', range=(0, 100)),
    Param('reconnect_backoff', 2.0, 's', 'longest wait between attempts to reopen a lost port '
          '(starts at 0.05 s, doubles)', range=(0.05, 60.0)),
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


class HardwareBridgeNode(Node):
    """Bridge between the ROS topics and the serial devices of the real robot."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self.config = config = declare(self, PARAMS)
            self.robot = load_robot(config.robot_file or default_robot_file())
            self.mount = sensor_mount(config.urdf_file or share_dir() / 'urdf/tendon_robot.urdf',
                                      self.robot.base.frame_id, config.sensor_frame)
            self._check_limits()
            link = dict(read_timeout=0.01, backoff=(0.05, config.reconnect_backoff))
            self.motors = MotorDriver(config.motor_port, len(self.robot.tendons),
                                      config.motor_device, ack_timeout=config.ack_timeout,
                                      max_retries=config.max_retries,
                                      baudrate=config.motor_baudrate, **link)
            self.sensor = TipSensorDriver(config.sensor_port, config.sensor_device,
                                          baudrate=config.sensor_baudrate, **link) \
                if config.sensor_port else None
        except (RobotDescriptionError, MountingError, ValueError) as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        self.names = self.robot.tendon_names
        self.max_tensions = self.robot.max_tensions
        self.safe_command = (motor.TENSION, np.full(len(self.names), config.min_tension))

        self._setpoint: tuple[str, np.ndarray] | None = None   # newest valid, clamped
        self._setpoint_time = time.monotonic()   # watchdog: start counting at once
        self._sent: tuple[str, np.ndarray] | None = None
        self._watchdog_tripped = False
        self._stopped = False
        self._rejected = 0
        self._clamped = 0
        self._last_status_stamp = -np.inf
        self._warned: dict[str, float] = {}

        # The drivers log link events from their threads through Python logging.
        self._log_handler = _RosLogHandler(self.get_logger())
        DRIVER_LOGGER.addHandler(self._log_handler)
        DRIVER_LOGGER.setLevel(logging.INFO)
        self.motors.start()
        if self.sensor is not None:
            self.sensor.start()
        self.state_pub = self.create_publisher(
            topics.TENDON_STATE.msg_type, config.state_topic, topics.TENDON_STATE.qos)
        self.tip_pub = self.create_publisher(
            topics.TIP_MEASURED.msg_type, config.tip_topic, topics.TIP_MEASURED.qos)
        self.diagnostics_pub = self.create_publisher(
            topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name, topics.DIAGNOSTICS.qos)
        self.setpoint_sub = self.create_subscription(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic, self._on_setpoint,
            topics.TENDON_SETPOINT.qos)
        self.stop_srv = self.create_service(Trigger, '~/stop', self._on_stop)
        self.resume_srv = self.create_service(Trigger, '~/resume', self._on_resume)
        self.command_timer = self.create_timer(1.0 / config.command_rate, self._on_command_timer)
        self.state_timer = self.create_timer(1.0 / config.state_rate, self._on_state_timer)
        self.diagnostics_timer = self.create_timer(1.0 / config.diagnostics_rate,
                                                   self._publish_diagnostics)

    def _check_limits(self) -> None:
        c = self.config
        check_displacement_range(c.min_displacement, c.max_displacement)
        check_pretension(c.min_tension, self.robot)

    # ------------------------------------------------------------------ setpoints

    def _on_setpoint(self, msg) -> None:
        if self._stopped:
            return   # ~/stop holds the safe state until ~/resume
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
        self._setpoint = (mode, clamped)
        self._setpoint_time = time.monotonic()

    def _parse_setpoint(self, msg) -> tuple[str, np.ndarray]:
        """(mode, values in tendon order) of a setpoint message, or SetpointError."""
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
        if self._stopped:
            return
        now = time.monotonic()
        if now - self._setpoint_time > self.config.watchdog_timeout:
            if not self._watchdog_tripped:
                self._watchdog_tripped = True
                self._setpoint = None
                self.get_logger().warning(
                    f'no valid setpoint for {self.config.watchdog_timeout:g} s: commanding the '
                    f'safe state ({self.config.min_tension:g} N on every tendon)')
                self._send(self.safe_command)
            return
        self._watchdog_tripped = False
        if self._setpoint is not None and not _same(self._setpoint, self._sent):
            self._send(self._setpoint)

    def _send(self, command: tuple[str, np.ndarray]) -> None:
        mode, values = command
        try:
            if mode == motor.TENSION:
                self.motors.command_tensions(values)
            else:
                self.motors.command_displacements(values)
        except ProtocolError as error:   # within the limits, yet beyond the wire format
            self._rejected += 1
            self._warn('unsendable', f'{mode} command not sent: {error}')
            return
        self._sent = (mode, values.copy())

    def _on_stop(self, request, response):
        self._stopped = True
        self._setpoint = None
        self._send(self.safe_command)
        self.get_logger().warning('stop: every tendon relaxed to the safe state; setpoints are '
                                  'ignored until ~/resume')
        response.success = True
        response.message = f'safe state commanded: {self.config.min_tension:g} N on every tendon'
        return response

    def _on_resume(self, request, response):
        was_stopped, self._stopped = self._stopped, False
        self._setpoint = None
        self._setpoint_time = time.monotonic()
        response.success = True
        response.message = ('resumed: the next setpoint is sent' if was_stopped
                            else 'was not stopped')
        return response

    # ------------------------------------------------------------------ measurements

    def _on_state_timer(self) -> None:
        now_ros = self.get_clock().now()
        now = time.monotonic()
        status = self.motors.status()
        if status is not None and status.stamp > self._last_status_stamp:
            self._last_status_stamp = status.stamp
            stamp = (now_ros - Duration(seconds=now - status.stamp)).to_msg()
            self.state_pub.publish(tendon_state_msg(
                self.names, status.displacements, status.velocities, status.tensions, stamp))
        if self.sensor is None:
            return
        frame = self.robot.base.frame_id
        for sample, rx_time in self.sensor.measurements():
            if not sample.valid:
                continue
            stamp = (now_ros - Duration(seconds=now - rx_time)).to_msg()
            self.tip_pub.publish(PointStamped(
                header=Header(stamp=stamp, frame_id=frame),
                point=point_msg(self.mount.to_base(sample.position))))

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
        status = self.motors.status()
        values = _link_values(link) + [
            ('acks', commands.acks), ('naks', commands.naks), ('last_nak', commands.last_nak),
            ('retransmits', commands.retransmits), ('ack_timeouts', commands.ack_timeouts),
            ('last_acked_seq', commands.last_acked_seq)]
        if status is not None:
            faults = {name: motor.fault_names(int(f))
                      for name, f in zip(self.names, status.faults) if f}
            values += [(f'faults {name}', ', '.join(f)) for name, f in faults.items()]
            values += [(f'mode {name}', m) for name, m in zip(self.names, status.modes)]
            if faults and level != DiagnosticStatus.ERROR:
                level, message = DiagnosticStatus.ERROR, f'motor faults: {faults}'
        return _status(f'{NODE_NAME}: motor driver', self.config.motor_port, level, message,
                       values)

    def _sensor_diagnostics(self) -> DiagnosticStatus:
        link, samples = self.sensor.statistics()
        level, message = self._link_level(link)
        values = _link_values(link) + [
            ('samples', samples.samples), ('invalid', samples.invalid), ('lost', samples.lost),
            ('overflow', samples.overflow)]
        return _status(f'{NODE_NAME}: tip sensor', self.config.sensor_port, level, message,
                       values)

    def _safety_diagnostics(self) -> DiagnosticStatus:
        age = time.monotonic() - self._setpoint_time
        if self._stopped:
            level, message = DiagnosticStatus.WARN, 'stopped by ~/stop: safe state'
        elif self._watchdog_tripped:
            level, message = DiagnosticStatus.WARN, 'watchdog: no setpoint, safe state'
        else:
            level, message = DiagnosticStatus.OK, 'following setpoints'
        values = [('stopped', self._stopped), ('watchdog_tripped', self._watchdog_tripped),
                  ('setpoint_age', f'{age:.3f}'), ('rejected_setpoints', self._rejected),
                  ('clamped_setpoints', self._clamped),
                  ('last_sent', '' if self._sent is None else
                   f'{self._sent[0]} {np.round(self._sent[1], 6).tolist()}')]
        return _status(f'{NODE_NAME}: safety', '', level, message, values)

    # ------------------------------------------------------------------ helpers

    def _warn(self, kind: str, text: str) -> None:
        # One throttle per kind, so a flood of one problem does not hide another.
        now = time.monotonic()
        if now - self._warned.get(kind, -np.inf) >= self.config.warning_throttle_period:
            self._warned[kind] = now
            self.get_logger().warning(text)

    def destroy_node(self) -> None:
        motors = getattr(self, 'motors', None)
        if motors is not None:
            # Leave the robot relaxed (if the constructor got that far).
            safe = getattr(self, 'safe_command', None)
            motors.stop(final_tensions=None if safe is None else safe[1])
        sensor = getattr(self, 'sensor', None)
        if sensor is not None:
            sensor.stop()
        handler = getattr(self, '_log_handler', None)
        if handler is not None:
            DRIVER_LOGGER.removeHandler(handler)
        super().destroy_node()


def _same(a: tuple[str, np.ndarray] | None, b: tuple[str, np.ndarray] | None) -> bool:
    return a is not None and b is not None and a[0] == b[0] and np.array_equal(a[1], b[1])


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


def _status(name: str, hardware_id: str, level: bytes, message: str,
            values: list[tuple[str, object]]) -> DiagnosticStatus:
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=k, value=str(v)) for k, v in values])


def main(args=None) -> int:
    return run_node(HardwareBridgeNode, NODE_NAME, args)


if __name__ == '__main__':
    raise SystemExit(main())
