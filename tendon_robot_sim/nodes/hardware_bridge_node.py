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
the process (Ctrl-C). ``diagnostics`` are published while configured, and after a
failed ``configure`` (why it failed) until one succeeds.

Subscribes ``tendon/setpoint`` (JointState naming every tendon once: ``effort``
= tensions [N] for tension mode, or ``position`` = displacements [m] for
displacement mode, not both). A setpoint that is malformed or outside the limits
(tension in [``min_tension``, the robot's ``max_tension``], a tension in [0,
``min_tension``) meaning "relaxed", the pretension; displacement in
[``min_displacement``, ``max_displacement``]) is rejected whole with a throttled
warning, and the last valid one is kept: the hardware never receives an
out-of-range command. Valid ones go to the motor driver at ``command_rate``,
ramped, behind a watchdog and a stop latch (``~/stop``, ``~/resume``): the logic
is ROS-free, in :mod:`tendon_robot_sim.hardware.bridge`. ``~/reboot`` reboots the
servos that report a hardware error (Dynamixel), checks them as configure does
and leaves them off until ``~/resume``; ``~/resume`` refuses (success false, naming
the servo) while a servo reports a hardware error.

Publishes ``tendon/state`` (per tendon: position = displacement [m], velocity
[m/s], effort = tension [N]) from the driver's status reports, ``tip/measured``
(PointStamped in the base frame, transformed with the ``tip_sensor_link`` pose
of the URDF) from valid sensor samples, ``/diagnostics`` with the health of both
links and the safety state, and ``tendon/servos`` with each servo's torque and
hardware error (Dynamixel; at the diagnostics rate and whenever one changes; its publisher
exists only while a Dynamixel chain is configured).
Every timer runs on the steady clock, so ``use_sim_time`` or a stopped
``/clock`` cannot freeze the watchdog. The measurements are stamped on the node's
clock, simulated time with ``use_sim_time``; a throttled warning says so while no
``/clock`` has come and the stamps are 0.

Serial I/O runs in the drivers' own threads; the callbacks here only take
their locks, so nothing blocks the executor.
"""

from __future__ import annotations

import logging
import time

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PointStamped
from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.time import Time
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.hardware.bridge import (BridgeCore, BridgeSettings, ERROR, SetpointError,
                                              start_device, Status)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.devices import (check_channel_count, DYNAMIXEL,
                                               load_dynamixel_bus, motor_bus, MOTOR_DEVICES,
                                               MotorBus, SENSOR_DEVICES, tip_sensor, TipSensor)
from tendon_robot_sim.protocol.keyence import baudrate_problem, Heads, NAME as KEYENCE
from tendon_robot_sim.protocol.laser import TdcrLaserV1
from tendon_robot_sim.protocol.mounting import MountingError, sensor_mount
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.lifecycle import reported
from tendon_robot_sim.ros.messages import joint_state_msg, point_msg
from tendon_robot_sim.ros.parameters import (check_displacement_range, check_frame_prefix,
                                             check_pretension, ConfigurationError, declare,
                                             FRAME_PREFIX, Param)
from tendon_robot_sim.ros.runner import run_node
from tendon_robot_sim.ros.sim_time import waiting_for_clock
from tendon_robot_sim.ros.throttle import fault_kind, FaultWarnings

NODE_NAME = 'hardware_bridge'
# The measurements are stamped on the node's clock, as a ROS driver's are: with use_sim_time
# that follows /clock (a stack on simulated time, a bag replay); before any /clock it reads 0.
SIM_TIME_WITHOUT_CLOCK = ('use_sim_time is true and no /clock has arrived: tendon/state, '
                          'tip/measured and /diagnostics are stamped 0 until one does (the '
                          'hardware measures in wall time: set use_sim_time false unless a '
                          'node publishes /clock)')
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
    Param('sensor_baudrate', 115200, 'baud', 'tip sensor line speed (keyence-lkg: 9600, '
          '19200, 38400, 57600 or 115200, as the controller is set)', range=(1200, 4000000)),
    Param('sensor_device', TdcrLaserV1.name, '', 'tip sensor protocol: tdcr-laser-v1 '
          '(streaming) or keyence-lkg (LK-G style, polled at state_rate)',
          choices=SENSOR_DEVICES),
    Param('sensor_timeout', 0.05, 's', 'keyence-lkg: wait for the answer to one request',
          range=(0.001, 1.0)),
    Param('sensor_blind_timeout', 1.0, 's', 'the tip sensor is an ERROR when no valid sample '
          '(no target, alarm, out of range, silence) came for this long; a WARN before',
          range=(0.01, 60.0)),
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
          'is reported stale (WARN); active, motors silent this long (a servo, or the '
          'tdcr-motor-v1 driver) are lost (ERROR, stop)',
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
    Param('open_timeout', 2.0, 's', 'configure fails when a device is not connected after this '
          'long (retried meanwhile)', range=(0.01, 60.0)),
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


def keyence_heads(values) -> Heads:
    """
    Return the Keyence heads the ``keyence_*`` parameters describe (``values``: by name).

    Raises ConfigurationError naming the parameter that :class:`Heads` refuses.
    """
    try:
        return Heads(tuple(values['keyence_axes']), tuple(values['keyence_signs']),
                     tuple(values['keyence_offsets']), values['keyence_third'])
    except ValueError as error:
        raise ConfigurationError(f'parameter {error}') from None


def dynamixel_file(values):
    """Return the bus file the ``dynamixel_file`` parameter names (empty: the package's)."""
    return values['dynamixel_file'] or share_dir() / 'config' / 'dynamixel.yaml'


def check_parameters(values) -> Heads:
    """
    Return the LK-G heads, or raise ConfigurationError for parameters the bridge refuses together.

    ``values``: by name.

    The bridge at its start and the local launcher before a stack starts check the head
    geometry, whatever ``sensor_device`` is: a bad value is a bad value; with
    ``sensor_device`` keyence-lkg, ``sensor_baudrate`` (a rate the LK-G can be set to); with
    ``motor_device`` dynamixel, the bus file (configure reads it again: an edited file is
    taken then), and that it has one channel per tendon of the robot file. A bad bus file
    failed configure only, with the rest of the stack running.
    """
    heads = keyence_heads(values)
    if values['sensor_device'] == KEYENCE and baudrate_problem(values['sensor_baudrate']):
        # the port opened at any rate, and the controller never answered
        raise ConfigurationError('parameter sensor_baudrate: '
                                 + baudrate_problem(values['sensor_baudrate']))
    if values['motor_device'] == DYNAMIXEL:
        robot = values['robot_file'] or default_robot_file()
        tendons = len(load_robot(robot).tendons)     # loaded (the node, the launcher) before
        try:
            channels = load_dynamixel_bus(dynamixel_file(values), calibrated=True)[0]
            check_channel_count(channels, tendons, dynamixel_file(values), f'the robot {robot}')
        except ValueError as error:
            why = str(error).removeprefix('dynamixel_file: ')
            raise ConfigurationError(f'parameter dynamixel_file: {why}') from None
    return heads


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
            self.heads = check_parameters(vars(config))
        except (RobotDescriptionError, MountingError, ValueError) as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        self.names = self.robot.tendon_names
        self.core = BridgeCore(BridgeSettings(
            names=tuple(self.names), max_tensions=self.robot.max_tensions,
            reach=(1.0 + config.workspace_margin) * self.robot.rod.length,
            blind_timeout=config.sensor_blind_timeout,
            **{name: getattr(config, name) for name in (
                'min_tension', 'min_displacement', 'max_displacement', 'watchdog_timeout',
                'command_rate', 'max_tension_rate', 'max_displacement_rate',
                'delivery_timeout', 'stale_timeout', 'tension_margin', 'implausible_timeout')}),
            self.mount)
        self._servo_states: tuple = ()
        self._warned = FaultWarnings(self.get_logger(),
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
        # tendon/servos exists from configure to cleanup, and only on servos that report their
        # own state (Dynamixel): never a publisher in the graph that sends nothing
        self.servos_pub = None
        self.setpoint_sub = self.create_subscription(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic, self._on_setpoint,
            topics.TENDON_SETPOINT.qos)
        self.stop_srv = self.create_service(Trigger, '~/stop', self._on_stop)
        self.resume_srv = self.create_service(Trigger, '~/resume', self._on_resume)
        self.reboot_srv = self.create_service(Trigger, '~/reboot', self._on_reboot)
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
        # A failed configure is on /diagnostics until a configure succeeds: a monitor (or
        # rqt_robot_monitor) that only watches diagnostics sees why the bridge is down.
        self._configure_failure: DiagnosticStatus | None = None
        self.failure_timer = self.create_timer(1.0 / config.diagnostics_rate,
                                               self._publish_configure_failure, clock=steady)
        self.failure_timer.cancel()

    @property
    def motors(self) -> MotorBus | None:
        """Return the motor bus, open from configure to cleanup."""
        return self.core.motors

    @property
    def sensor(self) -> TipSensor | None:
        """Return the tip sensor, open from configure to cleanup (None without one)."""
        return self.core.sensor

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
            motors = motor_bus(
                c.motor_device, c.motor_port, self.robot.max_tensions, c.motor_baudrate,
                c.ack_timeout, c.max_retries, c.command_rate,
                dynamixel_file(vars(c)),
                c.safe_torque_off, c.stale_timeout, **link)
            sensor = tip_sensor(c.sensor_device, c.sensor_port, c.sensor_baudrate,
                                c.state_rate, c.sensor_timeout, self.heads, **link) \
                if c.sensor_port else None
        except ValueError as error:
            return self._configure_failed('configure', '', str(error))
        self.core.attach(motors, sensor)
        for what, driver, port in (('motor driver', motors, c.motor_port),
                                   ('tip sensor', sensor, c.sensor_port)):
            if driver is None:
                continue
            problem = start_device(driver, c.open_timeout)
            if problem:
                self._close_ports()
                device, parameter = ((c.motor_device, 'motor_port') if driver is motors
                                     else (c.sensor_device, 'sensor_port'))
                return self._configure_failed(
                    what, f'{device} on {port}', f'cannot open the {what} port {port!r} '
                    f'({problem}); still unconfigured: check the device and {parameter}, '
                    'then configure again')
        if c.motor_device == DYNAMIXEL:
            self.servos_pub = self.create_publisher(
                topics.TENDON_SERVOS.msg_type, topics.TENDON_SERVOS.name,
                topics.TENDON_SERVOS.qos)
        self._configure_failure = None
        self.failure_timer.cancel()
        for timer in self.timers_while_configured:
            timer.reset()
        self.get_logger().info(f'configured: motor driver on {c.motor_port}'
                               + (f', tip sensor on {c.sensor_port}' if c.sensor_port else ''))
        return super().on_configure(state)

    def _configure_failed(self, what: str, hardware_id: str,
                          why: str) -> TransitionCallbackReturn:
        """Log why configure failed, say it on /diagnostics (``what``) until one succeeds."""
        self.get_logger().error(f'configure failed: {why}')
        self._configure_failure = self._diagnostic(what, hardware_id,
                                                   Status(ERROR, f'configure failed: {why}'))
        self._publish_configure_failure()
        self.failure_timer.reset()
        return TransitionCallbackReturn.FAILURE

    def _publish_configure_failure(self) -> None:
        if self._configure_failure is not None:
            self.diagnostics_pub.publish(DiagnosticArray(
                header=Header(stamp=self.get_clock().now().to_msg()),
                status=[self._configure_failure]))

    @reported
    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Start following setpoints (ramped from the device's state) and publishing."""
        self.core.activate(time.monotonic())
        self.get_logger().info('active: following setpoints'
                               + (' once ~/resume releases ~/stop' if self.core.stopped else ''))
        return super().on_activate(state)

    @reported
    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Command the safe state and hold it; setpoints are ignored until activated."""
        self.core.deactivate(time.monotonic())
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
        self._close_ports()
        return super().on_shutdown(state)

    @reported
    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Leave the hardware safe after a failed transition; back to unconfigured."""
        self._close_ports()
        return super().on_error(state)

    def _close_ports(self) -> None:
        """Stop the timers, send the safe state if a port is open, close both ports."""
        for timer in self.timers_while_configured:
            timer.cancel()
        if self.servos_pub is not None:
            self.destroy_publisher(self.servos_pub)
            self.servos_pub = None
        self.core.release()

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

    # ------------------------------------------------------------------ setpoints, services

    def _on_setpoint(self, msg) -> None:
        try:
            self.core.accept(msg.name, msg.effort, msg.position, time.monotonic())
        except SetpointError as error:
            # per check and field: a flood of wrong names hides no NaN (fault_kind)
            self._warn(fault_kind(f'setpoint {error.kind}', str(error)),
                       f'rejected setpoint (the last valid one is kept, nothing sent): {error}')

    def _on_command_timer(self) -> None:
        self._log(self.core.tick(time.monotonic()))

    def _on_stop(self, request, response):
        response.message = self.core.stop(time.monotonic())
        response.success = True
        if self.motors is not None:
            self.get_logger().warning('stop: every tendon relaxed to the safe state; setpoints '
                                      'are ignored until ~/resume')
        return response

    def _on_resume(self, request, response):
        response.success, response.message = self.core.resume(time.monotonic())
        if not response.success:
            self.get_logger().warning(f'resume: {response.message}')
        return response

    def _on_reboot(self, request, response):
        response.success, response.message = self.core.reboot(self.config.open_timeout)
        # One call site per severity: rclpy refuses a call site whose severity changes.
        if response.success:
            self.get_logger().info(f'reboot: {response.message}')
        else:
            self.get_logger().warning(f'reboot: {response.message}')
        return response

    # ------------------------------------------------------------------ measurements

    def _on_state_timer(self) -> None:
        now_ros = self.get_clock().now()
        if waiting_for_clock(self):
            self._warn('sim time without clock', SIM_TIME_WITHOUT_CLOCK)
        now = time.monotonic()
        status, events = self.core.motor_status(now)
        if status is not None:
            self.state_pub.publish(joint_state_msg(
                self.names, status.displacements, status.velocities, status.tensions,
                _stamp(now_ros, now - status.stamp)))
        tips, more = self.core.tips(now)
        self._log(events + more)
        frame = self.config.frame_prefix + self.robot.base.frame_id
        for tip, rx_time in tips:
            self.tip_pub.publish(PointStamped(
                header=Header(stamp=_stamp(now_ros, now - rx_time), frame_id=frame),
                point=point_msg(tip)))
        servos = tuple((s.torque, s.hardware_error, s.fault) for s in self.motors.servo_states())
        if servos != self._servo_states:   # a servo's torque or error changed: say so now
            self._servo_states = servos
            self._publish_servos()

    # ------------------------------------------------------------------ diagnostics

    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        motor_id = f'{self.config.motor_device} on {self.config.motor_port}'
        statuses = [self._diagnostic('motor driver', motor_id,
                                     self.core.motor_diagnostics(now))]
        if self.sensor is not None:
            statuses.append(self._diagnostic(
                'tip sensor', f'{self.config.sensor_device} on {self.config.sensor_port}',
                self.core.sensor_diagnostics(now)))
        # The safety status guards the motors: it names them, so two robots are told apart.
        statuses.append(self._diagnostic('safety', motor_id, self.core.safety_diagnostics(now)))
        servos = self._publish_servos()
        self.diagnostics_pub.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()), status=statuses + servos))

    def _publish_servos(self) -> list[DiagnosticStatus]:
        """Publish each servo's torque and hardware error on tendon/servos; return them."""
        servos = [self._diagnostic(name, hardware_id, status)
                  for name, hardware_id, status in self.core.servo_diagnostics()]
        if servos:
            self.servos_pub.publish(DiagnosticArray(
                header=Header(stamp=self.get_clock().now().to_msg()), status=servos))
        return servos

    def _diagnostic(self, name: str, hardware_id: str, status: Status) -> DiagnosticStatus:
        # '<node>: <status>' as diagnostic_updater names them, with the namespace: two
        # bridges in two namespaces never publish the same name.
        return DiagnosticStatus(level=bytes([status.level]),
                                name=f'{self.get_fully_qualified_name()}: {name}',
                                message=status.message, hardware_id=hardware_id,
                                values=[KeyValue(key=k, value=str(v)) for k, v in status.values])

    # ------------------------------------------------------------------ helpers

    def _log(self, events) -> None:
        for event in events:
            if event.level == 'error':
                self.get_logger().error(event.text)
            elif event.level == 'warning':
                self._warn(event.kind, event.text)
            else:
                self.get_logger().info(event.text)

    def _warn(self, kind: str, text: str) -> None:
        # One throttle per kind, so a flood of one problem does not hide another.
        self._warned(kind, text)

    def destroy_node(self) -> None:
        if hasattr(self, 'core'):   # the constructor got that far
            # Leave the robot relaxed from any state; not through a transition: after
            # Ctrl-C the context (and with it the timers) is already shut down.
            self.core.release()
        handler = getattr(self, '_log_handler', None)
        if handler is not None:
            DRIVER_LOGGER.removeHandler(handler)
        super().destroy_node()
        # rclpy's LifecycleNode leaves its state machine (and with it the node's handle and
        # the lifecycle services) to the garbage collector, which may finalize it after the
        # context has shut down: Fast DDS then waits forever. Destroyed here, after the
        # services that share its handles.
        self._state_machine.destroy_when_not_in_use()


def _stamp(now_ros: Time, age: float) -> TimeMsg:
    """
    Return the ROS time ``age`` [s] before ``now_ros``.

    Simulated time may be near 0, so not below.
    """
    return Time(nanoseconds=max(0, now_ros.nanoseconds - round(age * 1e9)),
                clock_type=now_ros.clock_type).to_msg()


def main(args=None) -> int:
    return run_node(HardwareBridgeNode, NODE_NAME, args, exit_on_stop=True)


if __name__ == '__main__':
    raise SystemExit(main())
