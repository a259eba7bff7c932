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
register-polled bus instead of a streaming device. One I/O thread owns the port
and runs one bus transaction per cycle (``cycle_rate``): a GroupSyncWrite of the
newest goals (Goal Current in tension mode, Goal Position in displacement mode),
then a GroupSyncRead of the state block every servo maps into Indirect Data 1..15
(:data:`~tendon_robot_sim.protocol.dynamixel.STATE_ITEMS`), so an alarm, a reset and
an expired Bus Watchdog are seen in the same cycle as the state.

The tension never exceeds max_tension in any mode the bus uses, by the servo's own
current bound: Current Limit is at most the current of max_tension (through the
channel's calibration); tension mode is current control (Goal Current within it) or
current-based position control (Goal Current the bound); displacement mode is
current-based position control with Goal Current at Current Limit. Extended position
control, whose current Current Limit does not bound, is never used.

Configure (connecting, and again after a loss or a reboot) is
:meth:`~tendon_robot_sim.protocol.dynamixel.setup.ServoAccess.configure` on every servo,
after every torque off and every Secondary ID off (a grouped servo would do the unicast
writes meant for another): checks, Startup Configuration 0, the settings and the mark
(Goal PWM one below PWM Limit), each read back; a servo that fails names itself.

The torque comes on in one place only, :meth:`DynamixelBus._torque_on`, after
:meth:`DynamixelBus._hold`: Operating Mode first (a switch resets Goal PWM, Goal
Current and the profiles), then the control-table items and the mark the switch reset,
then the goals, each read back from every servo, and Torque Enable last. A switch
between tension and displacement that keeps the Operating Mode (tension mode
current-based position) changes goals only and never switches the torque off; one that
changes it does, and :meth:`DynamixelBus.diagnostic_values` reports how long.

Faults (:meth:`DynamixelBus.fault`): a Hardware Error Status bit (the others keep
holding), and a servo that went down: silent (every servo is then asked what it
reports, so a silent bus is told from one silent servo), reset (a power cycle: Goal PWM
no longer the mark, which neither a power-on nor RAM Restore sets, a lost indirect map
reading 0), its Bus Watchdog expired, its torque switched off by something else, or its
multi-turn count possibly cleared by a Clear
(:func:`~tendon_robot_sim.protocol.dynamixel.control_table.frame_lost`). A
servo that went down is configured again, and the torque stays off on every servo and
the displacement zero is forgotten (no status) until the owner calls
:meth:`DynamixelBus.recover`: the zero and the travel limits are then taken again.
Nothing re-enables the torque by itself, and :meth:`DynamixelBus.resume_refusal` says
when the owner must not try (a servo in hardware error needs a reboot).

Delivery: a sync write is not acknowledged on Protocol 2.0; a goal counts as
delivered when the sync read that follows it succeeds for every servo.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import logging
import threading
import time
from typing import Sequence

import dynamixel_sdk as sdk
import numpy as np

from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.drivers import (CommandStatistics, DELIVERED, GIVEN_UP,
                                               MotorStatus, PENDING, ServoState, SUPERSEDED)
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.port import open_port, packet_handler
from tendon_robot_sim.protocol.dynamixel.setup import (BusError, reboot_needed, ServoAccess,
                                                       sync_read, WRITE_ATTEMPTS)
from tendon_robot_sim.protocol.fields import FieldError
from tendon_robot_sim.protocol.link import CONNECTED, DISCONNECTED, LinkStatistics, LinkView

logger = logging.getLogger(__name__)

# _SDK_FAILURES: a port that vanishes surfaces from the SDK as serial.SerialException,
# termios.error (not an OSError) or an IndexError on a truncated packet; whatever it is,
# the I/O thread must survive it, report it and reconnect, so it catches any Exception.

#: Consecutive failed cycles after which a servo counts as lost (if ``lost_after`` passed too).
MAX_FAILED_CYCLES = 5
# Cycles a late bus may run back to back to get back onto its grid (see DynamixelBus._run).
CATCH_UP_CYCLES = 5
#: Longest wait for a rebooted servo to answer again [s].
REBOOT_TIME = 2.0
#: Where each item of the state block starts in it [bytes].
_OFFSET = {item: sum(size for _, size in dxl.STATE_ITEMS[:k])
           for k, item in enumerate(dxl.STATE_ITEMS)}


@dataclass
class _Goal:
    seq: int
    mode: str
    values: np.ndarray
    written: bool = False
    delivered: bool = False
    failed: bool = False


@dataclass
class _Reboot:
    """An owner's request to reboot servos, answered by the I/O thread."""

    ids: list[int]
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    message: str = ''


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
        The tension mode (current control, or current-based position control towards
        ``travel_limit`` [m] beyond the zero taken at activation), the oldest firmware
        accepted and the Bus Watchdog [s].
    others : list of int
        IDs of servos on the bus that this bus does not drive (a bench tool's other
        channels): configure switches their Secondary ID off too, and nothing else.

    """

    def __init__(self, url: str, channels: Sequence[dxl.ServoChannel],
                 max_tensions: Sequence[float], baudrate: int = 1000000,
                 cycle_rate: float = 100.0, torque_off_when_safe: bool = False,
                 backoff: tuple[float, float] = (0.05, 2.0), lost_after: float = 0.1,
                 name: str = 'motors', settings: dxl.BusSettings = dxl.BusSettings(),
                 others: Sequence[int] = ()):
        if baudrate not in dxl.SDK_BAUD_RATES:
            raise ValueError(f'motor_baudrate: {baudrate} is not a rate the Dynamixel SDK '
                             f'opens; use one of {dxl.SDK_BAUD_RATES}')
        if len(max_tensions) != len(channels):
            raise ValueError(f'dynamixel channels: {len(channels)} for {len(max_tensions)} '
                             'tendons')
        self.url, self.baudrate, self.name = url, baudrate, name
        self.channels = list(channels)
        self.ids = [c.servo_id for c in self.channels]
        self.others = [i for i in others if i not in self.ids]
        self.firmware: dict[int, int] = {}    # ID -> Firmware Version, read at configure
        self.models: dict[int, dxl.Model] = {}   # ID -> model, read at configure
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
        self._down = False      # a fault took the servos down: torque off until recover()
        self._servo_faults: dict[int, str] = {}   # ID -> why it went down
        self._reboot: _Reboot | None = None
        self._torque = False
        self._mode: str | None = None
        self._operating: int | None = None   # Operating Mode of every servo
        self._ram_pending = False   # RAM items of the bus file to write before torque on
        n = len(self.ids)
        self._limits = [0] * n   # Current Limit [units] per channel: at most max_tension's
        self._marks = [0] * n    # Goal PWM written as the mark of the bridge's RAM [units]
        self._shutdown_masks = [dxl.SHUTDOWN_DEFAULT] * n   # Shutdown (63) per servo
        self._off_at = self._on_at = 0.0   # perf_counter() of the last torque off, on [s]
        self._unpowered = (0.0, 0.0, 0)   # mode switches: last, longest gap [s], count
        self._last_cycle = None   # time.monotonic() of the last cycle's start [s]
        self._longest_cycle_gap = 0.0   # s between two cycles since connect
        self._zero: np.ndarray | None = None   # Present Position at activation; None: unknown
        self._zero_pending = False
        self._positions = np.zeros(len(self.ids), dtype=int)
        self._positions_at: float | None = None   # time.monotonic() they were read [s]
        self._servo_read: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._status: MotorStatus | None = None
        self._fault = ''
        self._cycle_time = 0.0    # s of Python per cycle, last cycle
        self._port = self._handler = self._servos = None

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

    def recover(self) -> None:
        """After servos went down: torque on again (once enabled), re-taking zero and limits."""
        with self._lock:
            if self._down:
                self._down = False
                self._zero_pending = True
                self._servo_faults.clear()

    def reboot(self, timeout: float) -> tuple[bool, str]:
        """
        Reboot the servos that report a hardware error, then configure them again.

        The torque goes off on every servo first and stays off until :meth:`recover`.
        Returns (done, what happened) within ``timeout`` [s].
        """
        with self._lock:
            read = self._servo_read
            if not self.connected or read is None:
                return False, f'the bus on {self.url} is not connected'
            ids = [i for i, error in zip(self.ids, read[1]) if error]
            if not ids:
                return False, 'no servo reports a hardware error: nothing rebooted'
            request = self._reboot = _Reboot(ids)
        if not request.done.wait(timeout):
            with self._lock:
                if self._reboot is request:   # never taken: withdrawn, it must not run later
                    self._reboot = None
                    return False, f'the bus did not take the reboot within {timeout:g} s'
            return False, (f'reboot of servo ID {", ".join(map(str, ids))} not finished after '
                           f'{timeout:g} s; the motor diagnostics say how it ends')
        return request.ok, request.message

    def command_tensions(self, tensions: Sequence[float]) -> int:
        """Queue tension mode for every servo [N]; returns the sequence number."""
        return self._queue(motor.TENSION, tensions)

    def command_displacements(self, displacements: Sequence[float]) -> int:
        """Queue displacement mode (current-based position control) for every servo [m]."""
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
        """Return the newest state of every channel; None while the zero is not known."""
        with self._lock:
            return self._status

    def servo_states(self) -> list[ServoState]:
        """Return each servo's torque, hardware error and Bus Watchdog as last read."""
        with self._lock:
            read, faults, mode = self._servo_read, dict(self._servo_faults), self._mode
        if read is None:
            return []
        return [ServoState(k, i, self.models[i].name, self.firmware[i], bool(read[0][k]),
                           int(read[1][k]), int(read[2][k]), mode or motor.TENSION,
                           faults.get(i, '')) for k, i in enumerate(self.ids)]

    def statistics(self) -> tuple[LinkStatistics, CommandStatistics]:
        with self._lock:
            return replace(self._link), replace(self._commands)

    def fault(self) -> str:
        """Why the servos must not be trusted ('' if nothing): a hardware error, a servo down."""
        with self._lock:
            return self._fault

    def clear_fault(self) -> None:
        with self._lock:
            self._fault = ''

    def fault_names(self, bits: int) -> list[str]:
        return dxl.hardware_error_names(bits)

    def resume_refusal(self) -> str:
        """Say why the torque must not come on again ('' if it may): a servo's hardware error."""
        with self._lock:
            read, masks = self._servo_read, list(self._shutdown_masks)
        return '' if read is None else reboot_needed(self.ids, read[1], masks)

    def diagnostic_values(self) -> list[tuple[str, object]]:
        """Return the bus's timing: the unpowered gaps of mode switches, its longest stall."""
        with self._lock:
            (last, longest, count), stall = self._unpowered, self._longest_cycle_gap
        return [('mode_switches_unpowered', count),
                ('unpowered_last_ms', f'{1e3 * last:.1f}'),
                ('unpowered_longest_ms', f'{1e3 * longest:.1f}'),
                ('longest_cycle_gap_s', f'{stall:.3f}'),
                ('bus_watchdog_s', f'{self.settings.bus_watchdog:g}')]

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
            except BusError as error:   # a servo lost, down, or refusing a write
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
        self._port = open_port(self.url, self.baudrate, self.settings.latency_timer)
        self._handler = packet_handler()
        self._servos = ServoAccess(self._port, self._handler)
        self._configure()
        with self._lock:
            reconnect = self._link.connects > 0
            self._link.connects += 1
            self._link.reconnects += reconnect
            self._link.state = CONNECTED
            self._link.last_error = ''
        logger.info('%s: %d servos ready on %s (%s)', self.name, len(self.ids), self.url,
                    ', '.join(f'ID {i} {self.models[i].name} firmware v{f}'
                              for i, f in self.firmware.items()))
        if not self.settings.bus_watchdog_units:
            logger.warning('%s: bus_watchdog is 0: if this host dies or the USB link drops, '
                           'every servo keeps its last goal', self.name)

    def _configure(self) -> None:
        """Check and set up every servo (torque off); the zero is unknown until enabled."""
        for servo_id in self.ids:   # none left pulling by a configure that fails halfway
            self._servos.let_go(servo_id)
        for servo_id in self.ids + self.others:   # before any write that a group would take
            self._servos.ungroup(servo_id)
        for k, channel in enumerate(self.channels):
            done = self._servos.configure(channel, self.settings, self.url,
                                          float(self.max_tensions[k]))
            self.models[channel.servo_id] = done.model
            self.firmware[channel.servo_id] = done.firmware
            self._limits[k], self._marks[k] = done.current_limit, done.mark
            self._shutdown_masks[k] = done.shutdown
            if done.found:   # kept at once: configure cleared it, and may fail on a later servo
                with self._lock:   # added to the fault that took the servos down
                    self._servo_faults[channel.servo_id] = '; '.join(
                        w for w in (self._servo_faults.get(channel.servo_id, ''), done.found)
                        if w)
                    if self._fault:
                        self._fault += f'; at reconnect servo ID {channel.servo_id}: {done.found}'
        self._torque, self._mode, self._ram_pending = False, motor.TENSION, False
        self._operating = self.settings.operating_mode
        self._zero = None
        self._write_goals = sdk.GroupSyncWrite(self._port, self._handler, *dxl.GOAL_CURRENT)
        self._read = sdk.GroupSyncRead(self._port, self._handler, dxl.INDIRECT_DATA_1[0],
                                       dxl.STATE_LENGTH)
        for servo_id in self.ids:
            self._read.addParam(servo_id)
        self._failures, self._last_good = 0, time.monotonic()
        self._last_cycle, self._longest_cycle_gap = None, 0.0
        self._positions_at = None   # a new connection: nothing to compare the first read with
        self._read_state()

    def _operating_mode(self, mode: str) -> int:
        """
        Return the Operating Mode of ``mode``.

        Displacement is current-based position control with Goal Current at Current Limit (the
        e-Manual's Current Limit page: Current Limit bounds only current control and
        current-based position control; extended position control pulls a blocked tendon
        up to the motor's stall torque).
        """
        return (self.settings.operating_mode if mode == motor.TENSION
                else dxl.CURRENT_BASED_POSITION_MODE)

    def _travel_limits(self) -> list[int]:
        """Goal Position of current-based position tension mode: travel_limit beyond zero."""
        return [channel.goal_position(self.settings.travel_limit, int(zero))
                for channel, zero in zip(self.channels, self._zero)]

    def _set_torque(self, on: bool) -> None:
        # when the torque goes off, and on again: the write is sent first thing
        if on:
            self._on_at = time.perf_counter()
        else:
            self._off_at = time.perf_counter()
        try:
            self._write_all(dxl.TORQUE_ENABLE, [int(on)] * len(self.ids), 'Torque Enable')
        except BusError:
            if not on or not self._servos.refused_by_shutdown(self.ids, self._shutdown_masks):
                raise
        self._torque = on

    def _cycle(self) -> None:
        with self._lock:
            goal, enabled, reboot = self._goal, self._enabled, self._reboot
            torque = enabled and not self._down
            take_zero = torque and (self._zero_pending or self._zero is None)
            self._zero_pending &= not take_zero
            self._reboot = None
        start = time.perf_counter()
        now = time.monotonic()
        if self._last_cycle is not None:   # how long the servos went without an instruction
            with self._lock:
                self._longest_cycle_gap = max(self._longest_cycle_gap, now - self._last_cycle)
        self._last_cycle = now
        if reboot is not None:
            self._reboot_servos(reboot)
            return
        if take_zero:
            self._zero = self._positions.copy()
        if torque and not self._torque:
            self._torque_on(*((goal.mode, goal.values) if goal is not None else self._safe))
            if goal is not None:
                goal.written = True
        elif not torque and self._torque:
            self._set_torque(False)
        elif take_zero and self._mode == motor.TENSION and \
                self._operating == dxl.CURRENT_BASED_POSITION_MODE:
            # a new zero under torque: the travel limits follow it
            self._write_all(dxl.GOAL_POSITION, self._travel_limits(), 'the travel limit')
        if torque and goal is not None and not goal.written:
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

    def _torque_on(self, mode: str, values: np.ndarray) -> None:
        """Switch the torque on holding ``values`` in ``mode``; every path that does comes here."""
        self._hold(mode, values)
        self._set_torque(True)

    def _hold(self, mode: str, values: np.ndarray) -> None:
        """
        Make every servo hold ``values`` in ``mode``, each item read back from every servo.

        A change of Operating Mode resets Goal PWM to PWM Limit, Goal Current to Current Limit
        and the profiles to 0 (Operating Mode page), and is written with the torque off (an
        EEPROM item): the mode goes first, then the control-table items and the mark it reset,
        then the goals, so the torque never comes on under a reset value or an earlier
        session's goal. Both goal items bound the pull in current-based position control; the
        one that eases it goes first: into tension mode the Goal Current (the tension) before
        the travel limit, into displacement mode the Goal Position (from the ramp, where the
        tendon is) before Goal Current at Current Limit. While the tendons are unpowered
        every write is a sync write, and one sync read checks what it wrote: the Operating
        Mode (a servo whose torque was still on refuses it), then the goal items together.
        """
        operating = self._operating_mode(mode)
        n = len(self.ids)
        if operating != self._operating:
            powered = self._torque
            if powered:
                self._off_at = time.perf_counter()

            def switch():
                if powered:   # written again with the mode: a servo that missed it refused it
                    self._sync_write(sdk.GroupSyncWrite(self._port, self._handler,
                                                        *dxl.TORQUE_ENABLE), [0] * n)
                self._sync_write(sdk.GroupSyncWrite(self._port, self._handler,
                                                    *dxl.OPERATING_MODE), [operating] * n)
            self._servos.sync_checked(self.ids, switch, {dxl.OPERATING_MODE: [operating] * n},
                                      'Operating Mode')
            self._torque = False
            self._operating, self._ram_pending = operating, True
        goals = {}   # item -> units, in the order they are written
        if self._ram_pending:
            for channel in self.channels:
                for name, value in channel.control_table:
                    item = dxl.SETTABLE[name]
                    if not item.eeprom:
                        self._servos.write_checked(channel.servo_id,
                                                   (item.address, item.size), value,
                                                   f'control_table.{name}')
            goals[dxl.GOAL_PWM] = self._marks
        units = self._goal_units(mode, values)
        if mode == motor.TENSION:
            goals[dxl.GOAL_CURRENT] = units
            if operating == dxl.CURRENT_BASED_POSITION_MODE:
                goals[dxl.GOAL_POSITION] = self._travel_limits()
        else:
            goals[dxl.GOAL_POSITION] = units
            # Current Limit: the current of max_tension, or the bus file's if that is smaller
            goals[dxl.GOAL_CURRENT] = self._limits

        def write_goals():
            for item, wanted in goals.items():
                self._sync_write(sdk.GroupSyncWrite(self._port, self._handler, *item), wanted)
        self._servos.sync_checked(self.ids, write_goals, goals, 'the goals')
        self._ram_pending = False
        item = dxl.GOAL_CURRENT if mode == motor.TENSION else dxl.GOAL_POSITION
        self._write_goals = sdk.GroupSyncWrite(self._port, self._handler, *item)
        self._mode = mode

    def _write_goal(self, mode: str, values: np.ndarray) -> None:
        if mode == self._mode:
            self._sync_write(self._write_goals, self._goal_units(mode, values))
            return
        self._hold(mode, values)
        if not self._torque:   # the Operating Mode changed: the tendons went unpowered
            self._set_torque(True)
            gap = self._on_at - self._off_at
            with self._lock:
                last, longest, count = self._unpowered
                self._unpowered = (gap, max(longest, gap), count + 1)

    def _goal_units(self, mode: str, values: np.ndarray) -> list[int]:
        """Goal Current or Goal Position [units] of every servo for ``values`` [N or m]."""
        units = []
        for k, channel in enumerate(self.channels):
            if mode == motor.TENSION:
                value = channel.goal_current(float(values[k]), float(self.max_tensions[k]),
                                             self._limits[k])
                if self.settings.operating_mode == dxl.CURRENT_BASED_POSITION_MODE:
                    value = abs(value)    # a bound on the current; the Goal Position pulls
            else:
                value = channel.goal_position(float(values[k]), int(self._zero[k]))
            units.append(value)
        return units

    def _sync_write(self, write, units: Sequence[int]) -> None:
        size = write.data_length
        write.clearParam()
        for servo_id, value in zip(self.ids, units):
            write.addParam(servo_id, list(dxl.unsigned(int(value), size).to_bytes(size, 'little')))
        result = write.txPacket()
        with self._lock:
            self._link.frames_sent += 1
        if result != sdk.COMM_SUCCESS:
            raise OSError(f'sync write failed ({self._handler.getTxRxResult(result)})')

    def _write_all(self, item: tuple[int, int], units: Sequence[int], what: str) -> None:
        """Write ``units`` to ``item`` of every servo in one sync write, and read them back."""
        write = sdk.GroupSyncWrite(self._port, self._handler, *item)
        self._servos.sync_checked(self.ids, lambda: self._sync_write(write, units),
                                  {item: units}, what)

    def _read_state(self) -> bool:
        """Sync-read every servo's state block; False (and counted) if a servo did not answer."""
        result = sync_read(self._read, self.ids)
        now = time.monotonic()
        if result != sdk.COMM_SUCCESS:
            with self._lock:
                self._link.bad_checksum += result == sdk.COMM_RX_CORRUPT
                self._link.parse_errors += result != sdk.COMM_RX_CORRUPT
            self._failures += 1
            if (self._failures >= MAX_FAILED_CYCLES
                    and now - self._last_good > self.lost_after):
                raise BusError(self._silence(self._handler.getTxRxResult(result)))
            return False
        self._failures, self._last_good = 0, now

        def column(item, signed=False):
            offset, size = _OFFSET[item], item[1]
            values = [int.from_bytes(bytes(self._read.data_dict[i][offset:offset + size]),
                                     'little') for i in self.ids]
            return np.array([dxl.signed(v, size) if signed else v for v in values])
        errors = column(dxl.HARDWARE_ERROR_STATUS)
        torque, watchdog = column(dxl.TORQUE_ENABLE), column(dxl.BUS_WATCHDOG, signed=True)
        positions = column(dxl.PRESENT_POSITION, signed=True)
        # s since the last read that succeeded (failed cycles and stalls of this thread in it)
        gap = None if self._positions_at is None else now - self._positions_at
        jumps = positions - self._positions
        self._positions, self._positions_at = positions, now
        down = self._down_servos(column(dxl.GOAL_PWM, signed=True), torque, watchdog, errors,
                                 jumps, gap)
        with self._lock:
            self._servo_read = (torque, errors, watchdog)
            self._servo_faults.update(down)
        if down:
            raise BusError('; '.join(f'servo ID {i}: {why}' for i, why in down.items()))
        current, velocity = column(dxl.PRESENT_CURRENT, True), column(dxl.PRESENT_VELOCITY, True)
        status = None if self._zero is None else MotorStatus(
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

    def _silence(self, result: str) -> str:
        """Say what happened to each servo after ``MAX_FAILED_CYCLES`` cycles without a state."""
        said, faults = self._servos.silence_report(
            self.ids, self._marks, self.firmware,
            f'{self._failures} bus cycles without its state ({result})')
        with self._lock:
            self._servo_faults.update(faults)
        return said

    def _down_servos(self, mark: np.ndarray, torque: np.ndarray, watchdog: np.ndarray,
                     errors: np.ndarray, jumps: np.ndarray, gap: float | None) -> dict[int, str]:
        """
        Return {ID: why} for the servos that lost what configure and enable set.

        ``jumps``: the change of Present Position since the read before [units], ``gap``
        the time since that read [s] (None: no read before on this connection).
        """
        armed = self.settings.bus_watchdog_units
        down = {}
        for k, servo_id in enumerate(self.ids):
            if mark[k] != self._marks[k]:
                # Neither a power-on nor RAM Restore sets Goal PWM below PWM Limit, and a lost
                # indirect map reads its initial Indirect Data: 0.
                down[servo_id] = (f'reset (a power cycle?): its RAM is back at its initial '
                                  f'values (Goal PWM reads {mark[k]}, not the mark '
                                  f'{self._marks[k]}); its zero is gone')
            elif watchdog[k] == -1:
                down[servo_id] = (f'its Bus Watchdog expired (no instruction for more than '
                                  f'{self.settings.bus_watchdog:g} s): it stopped')
            elif armed and self.firmware[servo_id] >= dxl.BUS_WATCHDOG_FIRMWARE \
                    and watchdog[k] != armed:
                down[servo_id] = (f'reset (a power cycle?): its Bus Watchdog reads '
                                  f'{watchdog[k]}, not {armed}')
            elif gap is not None and (lost := dxl.frame_lost(
                    self.models[servo_id], int(jumps[k]), gap)):
                down[servo_id] = lost
            elif self._torque and not torque[k] and not errors[k]:
                down[servo_id] = 'its torque went off without a hardware error (a power cycle?)'
        return down

    def _reboot_servos(self, request: _Reboot) -> None:
        """Reboot ``request.ids`` (every torque off first), then configure every servo again."""
        try:
            self._set_torque(False)
            for servo_id in request.ids:
                for _ in range(WRITE_ATTEMPTS):
                    result, error = self._handler.reboot(self._port, servo_id)
                    if result == sdk.COMM_SUCCESS:
                        break
                if result != sdk.COMM_SUCCESS:
                    raise BusError(f'servo ID {servo_id}: REBOOT failed '
                                   f'({self._servos.why(result, error)})')
            deadline = time.monotonic() + REBOOT_TIME
            for servo_id in request.ids:
                while self._handler.ping(self._port, servo_id)[1] != sdk.COMM_SUCCESS:
                    if time.monotonic() > deadline:
                        raise BusError(f'servo ID {servo_id} does not answer {REBOOT_TIME:g} s '
                                       'after its reboot')
            with self._lock:
                self._down = self._down or self._enabled
            self._configure()   # the same checks as configure, on every servo
        except BusError as error:
            request.message = f'reboot of servo ID {request.ids}: {error}'
            request.done.set()
            raise
        request.ok = True
        request.message = (f'rebooted servo ID {", ".join(map(str, request.ids))} and '
                           'configured every servo again (model, firmware, settings read back); '
                           'torque off until ~/resume')
        logger.info('%s: %s', self.name, request.message)
        request.done.set()

    def _lost(self, why: str) -> None:
        with self._lock:
            if not self._fault and ('servo ID' in why or self._enabled):
                self._fault = why
            # The servos come back torque off, their zero unknown, until the owner recovers.
            self._down = self._down or self._enabled
        logger.error('%s: %s; reconnecting', self.name, why)
        self._close(why)

    def _close(self, why: str) -> None:
        with self._lock:
            self._link.state = DISCONNECTED
            self._link.last_error = why
            self._status = self._servo_read = None
            request, self._reboot = self._reboot, None   # asked of a bus that is gone
        if request is not None:
            request.message = f'not rebooted: the bus closed ({why})'
            request.done.set()
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
