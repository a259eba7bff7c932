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
Tendon servos on one Dynamixel bus, driven through ROBOTIS's ``dynamixel_sdk``.

A peer of :class:`~tendon_robot_sim.protocol.drivers.MotorDriver` (the same
methods, see :class:`~tendon_robot_sim.protocol.devices.MotorBus`), for a
register-polled bus instead of a streaming device. One I/O thread owns the
port and runs one bus transaction per cycle (``cycle_rate``): a GroupSyncWrite
of the newest goals (Goal Current in tension mode, Goal Position in
displacement mode), then a GroupSyncRead of the state block every servo maps
into Indirect Data 1..11 (Hardware Error Status, Present Current, Present
Velocity, Present Position), so an alarm is seen in the same cycle.

Connecting (and reconnecting) pings every ID, checks the model number, and with
torque off sets Operating Mode, Current Limit and the indirect map; a missing or
wrong servo fails it with a message naming the ID. After :meth:`enable` (the
bridge's activate) a reconnect puts the servos back at the last safe command
before the torque goes on. :meth:`fault` reports a Hardware Error Status bit or
a servo that stopped answering, naming it: the bridge latches its stop on it.

Delivery: a sync write is not acknowledged on Protocol 2.0; a goal counts as
delivered when the sync read that follows it succeeds for every servo.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import logging
import threading
import time
from typing import Sequence

import dynamixel_sdk as sdk
import numpy as np

from tendon_robot_sim.protocol import dynamixel as dxl
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.drivers import (CommandStatistics, DELIVERED, GIVEN_UP,
                                               MotorStatus, PENDING, SUPERSEDED)
from tendon_robot_sim.protocol.fields import FieldError
from tendon_robot_sim.protocol.link import CONNECTED, DISCONNECTED, LinkStatistics, LinkView

logger = logging.getLogger(__name__)

# _SDK_FAILURES: a port that vanishes surfaces from the SDK as serial.SerialException,
# termios.error (not an OSError) or an IndexError on a truncated packet; whatever it is,
# the I/O thread must survive it, report it and reconnect, so it catches any Exception.

#: Consecutive failed cycles after which a servo counts as lost (if ``lost_after`` passed too).
MAX_FAILED_CYCLES = 5
#: Tries of one configuration write or read (a status packet lost to noise is not a fault).
WRITE_ATTEMPTS = 3
# Cycles a late bus may run back to back to get back onto its grid (see DynamixelBus._run).
CATCH_UP_CYCLES = 5


class BusError(RuntimeError):
    """The bus cannot be used as configured; the message names the servo."""


@dataclass
class _Goal:
    seq: int
    mode: str
    values: np.ndarray
    written: bool = False
    delivered: bool = False
    failed: bool = False


class DynamixelBus:
    """
    One servo per tendon on a Dynamixel bus (Protocol 2.0).

    Parameters
    ----------
    url : str
        Port of the U2D2 (``/dev/ttyUSB0``) or a pseudo-terminal.
    channels : list of ServoChannel
        One per tendon, in tendon order.
    max_tensions : array (n,)
        Highest tension per tendon [N]; goals are clamped to it and the Current Limit.
    baudrate : int
        One of :data:`~tendon_robot_sim.protocol.dynamixel.SDK_BAUD_RATES`.
    cycle_rate : float
        Bus transactions per second [Hz].
    torque_off_when_safe : bool
        :meth:`disable` switches the torque off instead of holding the safe command.
    backoff : (float, float)
        First and longest wait between attempts to (re)connect [s].
    lost_after : float
        A servo whose state is missing for this long (and ``MAX_FAILED_CYCLES`` cycles) is
        lost [s].
    settings : BusSettings
        The tension mode: current control, or current-based position control towards
        ``travel_limit`` [m] beyond the zero taken at activation.

    """

    def __init__(self, url: str, channels: Sequence[dxl.ServoChannel],
                 max_tensions: Sequence[float], baudrate: int = 1000000,
                 cycle_rate: float = 100.0, torque_off_when_safe: bool = False,
                 backoff: tuple[float, float] = (0.05, 2.0), lost_after: float = 0.1,
                 name: str = 'motors', settings: dxl.BusSettings = dxl.BusSettings()):
        if baudrate not in dxl.SDK_BAUD_RATES:
            raise ValueError(f'motor_baudrate: {baudrate} is not a rate the Dynamixel SDK '
                             f'opens; use one of {dxl.SDK_BAUD_RATES}')
        if len(max_tensions) != len(channels):
            raise ValueError(f'dynamixel channels: {len(channels)} for {len(max_tensions)} '
                             'tendons')
        self.url, self.baudrate, self.name = url, baudrate, name
        self.channels = list(channels)
        self.ids = [c.servo_id for c in self.channels]
        self.firmware: dict[int, int] = {}    # ID -> Firmware Version, read at configure
        self.max_tensions = np.asarray(max_tensions, dtype=float)
        self.period = 1.0 / cycle_rate
        self.torque_off_when_safe = torque_off_when_safe
        self.backoff, self.lost_after = backoff, lost_after
        self.settings = settings
        self._last_good = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f'dynamixel-{name}', daemon=True)
        self._link = LinkStatistics()
        self._commands = CommandStatistics()
        self._seq = 0
        self._goal: _Goal | None = None
        self._safe: tuple[str, np.ndarray] | None = None
        self._enabled = False
        self._torque = False
        self._mode: str | None = None
        self._zero = np.zeros(len(self.ids), dtype=int)
        self._zero_pending = False
        self._positions = np.zeros(len(self.ids), dtype=int)
        self._status: MotorStatus | None = None
        self._fault = ''
        self._cycle_time = 0.0    # s of Python per cycle, last cycle
        self._port = self._handler = None

    # ------------------------------------------------------------------ owner side

    def start(self) -> 'DynamixelBus':
        self._thread.start()
        return self

    def stop(self, final_tensions: Sequence[float] | None = None, timeout: float = 0.3) -> None:
        """Stop the I/O thread: torque off on every servo (cleanup), close the port."""
        self._stop.set()
        if self._thread.is_alive():   # also called on a bus never started
            self._thread.join(max(timeout, 4 * self.period) + 1.0)

    @property
    def connected(self) -> bool:
        return self._link.state == CONNECTED

    @property
    def link(self) -> LinkView:
        """Return the link counters alone, as :class:`SerialLink` gives them."""
        return LinkView(self)

    def enable(self, safe_tensions: Sequence[float]) -> None:
        """Activate: take the displacement zero, command ``safe_tensions`` [N], torque on."""
        with self._lock:
            self._safe = (motor.TENSION, np.asarray(safe_tensions, dtype=float))
            self._enabled = True
            self._zero_pending = True

    def disable(self) -> None:
        """Deactivate: torque off if so configured (else the owner commands the safe state)."""
        with self._lock:
            self._enabled = not self.torque_off_when_safe

    def command_tensions(self, tensions: Sequence[float]) -> int:
        """Queue tension mode for every servo [N]; returns the sequence number."""
        return self._queue(motor.TENSION, tensions)

    def command_displacements(self, displacements: Sequence[float]) -> int:
        """Queue displacement mode (extended position control) for every servo [m]."""
        return self._queue(motor.DISPLACEMENT, displacements)

    def check_command(self, mode: str, values: Sequence[float]) -> None:
        """Raise FieldError unless ``values`` [N or m] can go to the servos."""
        values = np.asarray(values, dtype=float)
        if values.shape != (len(self.ids),) or not np.all(np.isfinite(values)):
            raise FieldError(f'{mode}: needs {len(self.ids)} finite values, got {values}')
        if mode == motor.TENSION and np.any((values < 0.0) | (values > self.max_tensions)):
            raise FieldError(f'tension: outside [0, max_tension], got {values}')

    def _queue(self, mode: str, values: Sequence[float]) -> int:
        self.check_command(mode, values)
        with self._lock:
            self._seq += 1
            self._commands.commands += 1
            pending = self._goal is not None and not self._goal.written
            self._commands.superseded += pending
            self._goal = _Goal(self._seq, mode, np.asarray(values, dtype=float).copy())
            return self._seq

    def delivery(self, seq: int) -> str:
        """PENDING, DELIVERED, GIVEN_UP (the cycle failed) or SUPERSEDED."""
        with self._lock:
            goal = self._goal
            if goal is None or goal.seq != seq:
                return SUPERSEDED
            if goal.delivered:
                return DELIVERED
            return GIVEN_UP if goal.failed else PENDING

    def status(self) -> MotorStatus | None:
        with self._lock:
            return self._status

    def statistics(self) -> tuple[LinkStatistics, CommandStatistics]:
        with self._lock:
            return replace(self._link), replace(self._commands)

    def fault(self) -> str:
        """Why the servos must not be trusted ('' if nothing): a hardware error or a lost servo."""
        with self._lock:
            return self._fault

    def clear_fault(self) -> None:
        with self._lock:
            self._fault = ''

    def fault_names(self, bits: int) -> list[str]:
        return dxl.hardware_error_names(bits)

    @property
    def cycle_time(self) -> float:
        """Wall time of the last bus cycle (sync write, sync read, decoding) [s]."""
        return self._cycle_time

    # ------------------------------------------------------------------ I/O thread

    def _run(self) -> None:
        wait = self.backoff[0]
        next_cycle = time.monotonic()
        while not self._stop.is_set():
            if not self.connected:
                try:
                    self._connect()
                    wait = self.backoff[0]
                except Exception as error:   # see _SDK_FAILURES
                    self._close(str(error))
                    with self._lock:
                        self._link.connect_failures += 1
                    self._stop.wait(wait)
                    wait = min(2 * wait, self.backoff[1])
                    continue
            try:
                self._cycle()
            except BusError as error:   # a servo lost, or refusing a write (after an alarm)
                self._lost(str(error))
                continue
            except Exception as error:   # the port vanished: see _SDK_FAILURES
                self._lost(f'port {self.url}: {type(error).__name__}: {error}')
                continue
            # On a fixed grid: a late cycle is followed by a short wait, so the rate holds
            # on average. After a stall of up to CATCH_UP_CYCLES periods the cycles run back
            # to back until the grid is reached again (goals are absolute, so a quick run of
            # them moves nothing twice); after a longer one the grid restarts there.
            now = time.monotonic()
            next_cycle = max(next_cycle + self.period, now - CATCH_UP_CYCLES * self.period)
            self._stop.wait(next_cycle - now)
        self._shutdown()

    def _connect(self) -> None:
        self._port = open_port(self.url, self.baudrate)
        self._handler = sdk.PacketHandler(2.0)
        for channel in self.channels:
            for _ in range(WRITE_ATTEMPTS):
                model, result, error = self._handler.ping(self._port, channel.servo_id)
                if result == sdk.COMM_SUCCESS:
                    break
            if result != sdk.COMM_SUCCESS:
                raise BusError(f'servo ID {channel.servo_id} does not answer on {self.url} '
                               f'({self._handler.getTxRxResult(result)})')
            if model not in dxl.MODELS:
                raise BusError(f'servo ID {channel.servo_id} is model {model}, not an '
                               f'X-series tendon servo ({sorted(dxl.MODELS)})')
            firmware = self._read_item(channel.servo_id, dxl.FIRMWARE_VERSION)
            if firmware < self.settings.min_firmware:
                raise BusError(f'servo ID {channel.servo_id} has firmware v{firmware}, older '
                               f'than the min_firmware v{self.settings.min_firmware} of the bus '
                               'file')
            self.firmware[channel.servo_id] = firmware
            self._write(channel.servo_id, dxl.TORQUE_ENABLE, 0)
            self._write(channel.servo_id, dxl.OPERATING_MODE, self.settings.operating_mode)
            self._write(channel.servo_id, dxl.CURRENT_LIMIT, channel.current_limit_units)
            address = dxl.INDIRECT_ADDRESS_1[0]
            for item_address, size in dxl.STATE_ITEMS:
                for k in range(size):
                    self._write(channel.servo_id, (address, 2), item_address + k)
                    address += 2
        self._torque, self._mode = False, motor.TENSION
        self._write_goals = sdk.GroupSyncWrite(self._port, self._handler, *dxl.GOAL_CURRENT)
        self._read = sdk.GroupSyncRead(self._port, self._handler, dxl.INDIRECT_DATA_1[0],
                                       dxl.STATE_LENGTH)
        for servo_id in self.ids:
            self._read.addParam(servo_id)
        self._failures, self._last_good = 0, time.monotonic()
        self._read_state()
        with self._lock:
            reconnect = self._link.connects > 0
            self._link.connects += 1
            self._link.reconnects += reconnect
            self._link.state = CONNECTED
            self._link.last_error = ''
            enabled, safe = self._enabled, self._safe
        if enabled and safe is not None:
            # Back after a loss: the servos start from the safe command, the owner ramps on.
            self._write_goal(*safe)
            self._set_torque(True)
        logger.info('%s: %d servos ready on %s (%s)', self.name, len(self.ids), self.url,
                    ', '.join(f'ID {i} firmware v{f}' for i, f in self.firmware.items()))

    def _read_item(self, servo_id: int, item: tuple[int, int]) -> int:
        """Read a control table item (unsigned), retried like a write; BusError names it."""
        address, size = item
        read = {1: self._handler.read1ByteTxRx, 2: self._handler.read2ByteTxRx,
                4: self._handler.read4ByteTxRx}[size]
        for _ in range(WRITE_ATTEMPTS):   # a status lost to noise is read again
            value, result, error = read(self._port, servo_id, address)
            if result == sdk.COMM_SUCCESS and not error & 0x7F:
                return value
        raise BusError(f'servo ID {servo_id}: reading address {address} failed '
                       f'({self._handler.getTxRxResult(result) if result else error})')

    def _write(self, servo_id: int, item: tuple[int, int], value: int) -> None:
        address, size = item
        write = {1: self._handler.write1ByteTxRx, 2: self._handler.write2ByteTxRx,
                 4: self._handler.write4ByteTxRx}[size]
        for _ in range(WRITE_ATTEMPTS):
            result, error = write(self._port, servo_id, address, dxl.unsigned(value, size))
            if result == sdk.COMM_SUCCESS:
                break
        if result != sdk.COMM_SUCCESS or error & 0x7F:
            raise BusError(f'servo ID {servo_id}: writing {value} at address {address} failed '
                           f'({self._handler.getTxRxResult(result) if result else error})')

    def _write_travel_limits(self) -> None:
        """Current-based position: Goal Position travel_limit beyond each zero (else nothing)."""
        if self.settings.operating_mode != dxl.CURRENT_BASED_POSITION_MODE:
            return
        for channel, zero in zip(self.channels, self._zero):
            self._write(channel.servo_id, dxl.GOAL_POSITION,
                        channel.goal_position(self.settings.travel_limit, int(zero)))

    def _set_torque(self, on: bool) -> None:
        for servo_id in self.ids:
            self._write(servo_id, dxl.TORQUE_ENABLE, int(on))
        self._torque = on

    def _cycle(self) -> None:
        with self._lock:
            goal, enabled = self._goal, self._enabled
            take_zero, self._zero_pending = enabled and self._zero_pending, False
        start = time.perf_counter()
        if take_zero:
            self._zero = self._positions.copy()
            if self._mode == motor.TENSION:
                self._write_travel_limits()
        if enabled and not self._torque:
            # The goal first: the torque comes on holding it, never the last session's goal.
            if goal is not None:
                self._write_goal(goal.mode, goal.values)
                goal.written = True
            elif self._safe is not None:
                self._write_goal(*self._safe)
            self._set_torque(True)
        elif not enabled and self._torque:
            self._set_torque(False)
        if enabled and goal is not None and not goal.written:
            self._write_goal(goal.mode, goal.values)
            goal.written = True
        ok = self._read_state()
        with self._lock:
            if goal is not None and goal.written and not goal.delivered:
                goal.delivered, goal.failed = ok, not ok
                self._commands.acks += ok
                if ok:
                    self._commands.last_acked_seq = goal.seq
                    self._commands.last_ack_time = time.monotonic()
        self._cycle_time = time.perf_counter() - start

    def _write_goal(self, mode: str, values: np.ndarray) -> None:
        if mode != self._mode:
            # Operating Mode is in the EEPROM area: torque off, switch, torque back on.
            torque = self._torque
            self._set_torque(False)
            operating = (self.settings.operating_mode if mode == motor.TENSION
                         else dxl.EXTENDED_POSITION_MODE)
            for servo_id in self.ids:
                self._write(servo_id, dxl.OPERATING_MODE, operating)
            item = dxl.GOAL_CURRENT if mode == motor.TENSION else dxl.GOAL_POSITION
            self._write_goals = sdk.GroupSyncWrite(self._port, self._handler, *item)
            self._mode = mode
            if mode == motor.TENSION:
                self._write_travel_limits()
            self._set_torque(torque)
        size = self._write_goals.data_length
        self._write_goals.clearParam()
        for k, channel in enumerate(self.channels):
            if mode == motor.TENSION:
                value = channel.goal_current(float(values[k]), float(self.max_tensions[k]))
                if self.settings.operating_mode == dxl.CURRENT_BASED_POSITION_MODE:
                    value = abs(value)    # a bound on the current; the Goal Position pulls
            else:
                value = channel.goal_position(float(values[k]), int(self._zero[k]))
            self._write_goals.addParam(channel.servo_id,
                                       list(dxl.unsigned(value, size).to_bytes(size, 'little')))
        result = self._write_goals.txPacket()
        with self._lock:
            self._link.frames_sent += 1
        if result != sdk.COMM_SUCCESS:
            raise OSError(f'sync write failed ({self._handler.getTxRxResult(result)})')

    def _read_state(self) -> bool:
        """Sync-read every servo's state block; False (and counted) if a servo did not answer."""
        result = self._read.txRxPacket()
        now = time.monotonic()
        if result != sdk.COMM_SUCCESS:
            missing = next((i for i in self.ids if not self._read.data_dict[i]), self.ids[0])
            with self._lock:
                self._link.bad_checksum += result == sdk.COMM_RX_CORRUPT
                self._link.parse_errors += result != sdk.COMM_RX_CORRUPT
            self._failures += 1
            if (self._failures >= MAX_FAILED_CYCLES
                    and now - self._last_good > self.lost_after):
                raise BusError(f'servo ID {missing} lost: {self._failures} bus cycles without '
                               f'its state ({self._handler.getTxRxResult(result)})')
            return False
        self._failures, self._last_good = 0, now
        get = self._read.getData
        base = dxl.INDIRECT_DATA_1[0]
        errors = np.array([get(i, base, 1) for i in self.ids], dtype=int)
        current = np.array([dxl.signed(get(i, base + 1, 2), 2) for i in self.ids])
        velocity = np.array([dxl.signed(get(i, base + 3, 4), 4) for i in self.ids])
        self._positions = np.array([dxl.signed(get(i, base + 7, 4), 4) for i in self.ids])
        status = MotorStatus(
            modes=(self._mode,) * len(self.ids),
            displacements=np.array([c.displacement(p, z) for c, p, z
                                    in zip(self.channels, self._positions, self._zero)]),
            velocities=np.array([c.velocity(v) for c, v in zip(self.channels, velocity)]),
            tensions=np.array([c.tension(i) for c, i in zip(self.channels, current)]),
            faults=errors, stamp=now, oldest=now)
        with self._lock:
            self._status = status
            self._link.frames_ok += len(self.ids)
            self._link.last_rx_time = now
            if errors.any() and not self._fault:
                self._fault = '; '.join(
                    f'servo ID {i}: {", ".join(dxl.hardware_error_names(int(e)))}'
                    for i, e in zip(self.ids, errors) if e)
                logger.error('%s: hardware error: %s', self.name, self._fault)
        return True

    def _lost(self, why: str) -> None:
        with self._lock:
            if 'servo ID' in why and not self._fault:
                self._fault = why
        logger.error('%s: %s; reconnecting', self.name, why)
        self._close(why)

    def _close(self, why: str) -> None:
        with self._lock:
            self._link.state = DISCONNECTED
            self._link.last_error = why
            self._status = None
        if self._port is not None and self._port.is_open:
            try:
                self._port.closePort()
            except OSError:
                pass
        self._torque = False

    def _shutdown(self) -> None:
        """Cleanup: torque off on every servo that answers, close the port."""
        if self.connected:
            for servo_id in self.ids:
                try:
                    self._handler.write1ByteTxRx(self._port, servo_id, dxl.TORQUE_ENABLE[0], 0)
                except OSError:
                    break
        self._close('stopped')


def open_port(url: str, baudrate: int):
    """Open the SDK's port on ``url`` at ``baudrate``; BusError names a port that does not open."""
    port = sdk.PortHandler(url)
    try:
        if port.openPort() and port.setBaudRate(baudrate):
            return port
    except (OSError, ValueError) as error:   # SerialException: an OSError
        raise BusError(f'cannot open {url}: {error}') from None
    raise BusError(f'cannot open {url} at {baudrate} baud')


# ------------------------------------------------------------------ tools (hardware command)


def scan(url: str, baudrates: Sequence[int]) -> dict[int, dict[int, tuple[int, int]]]:
    """
    Broadcast-ping ``url`` at each rate: {baud: {ID: (model number, firmware)}}.

    Raises BusError when the port cannot be opened (naming it).
    """
    found = {}
    handler = sdk.PacketHandler(2.0)
    for baud in baudrates:
        port = open_port(url, baud)
        try:
            answers, result = handler.broadcastPing(port)
        finally:
            port.closePort()
        if result == sdk.COMM_SUCCESS and answers:
            found[baud] = {i: (model, firmware) for i, (model, firmware) in answers.items()}
    return found


def hold_and_measure(url: str, baudrate: int, channel: dxl.ServoChannel, goal_current: int,
                     samples: int = 20, settle: float = 0.3) -> float:
    """
    Drive ``channel`` at ``goal_current`` [units]; return the mean Present Current [A].

    The mean is over ``samples`` reads after ``settle`` [s], with the channel's direction
    applied (current control, as configured by the bridge). The torque is switched off
    again before returning. BusError names what failed.
    """
    bus = DynamixelBus(url, [channel], [np.inf], baudrate=baudrate)
    try:
        bus._connect()
        bus._write(channel.servo_id, dxl.GOAL_CURRENT, goal_current)
        bus._set_torque(True)
        time.sleep(settle)
        currents = []
        for _ in range(samples):
            value = bus._read_item(channel.servo_id, dxl.PRESENT_CURRENT)
            currents.append(channel.direction * dxl.signed(value, 2) * dxl.CURRENT_UNIT)
        return float(np.mean(currents))
    finally:
        bus._shutdown()
