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
ROS-free drivers: the tendon motor driver and the laser tip sensor.

Both run on a :class:`~tendon_robot_sim.protocol.link.SerialLink` (one I/O thread
each); their public methods only take a lock, so a ROS timer can call them
without ever waiting on the port.

Command delivery (motor driver)
-------------------------------
A setpoint is a state, not an event: only the newest one matters. Each command
frame carries a sequence number; the device applies a command only if its
number differs from the last one it applied, and acknowledges it either way.
The driver therefore guarantees:

* each session starts its sequence numbers at a random value, so the first
  command of a restarted driver is not taken for a repeat of the last command
  the device applied (a clash has odds of 1 in 65536);
* the newest command is written at once, superseding any older one still
  waiting for its ACK (the older one may or may not have been applied, in order);
* an unacknowledged command is re-sent, with the same number, after a back-off
  that starts at ``ack_timeout`` and doubles with each re-send, at most
  ``max_retries`` times; then it is given up (:meth:`MotorDriver.delivery` says
  so, and the owner decides whether to send it again). A ``NAK`` without a number
  (the device could not read a frame) does not hurry the re-send: line noise
  spoils frames in bursts, and a re-send inside the burst would be spoilt too;
* after a reconnect the last command is re-sent once with the same number, so
  a device that lost it (power cycle) gets it and one that has it does not
  apply it twice (unless ``resend_on_reconnect`` is False: then the owner decides);
* a command the device rejects (``NAK`` with its number) is not repeated.
"""

from __future__ import annotations

from collections import deque
import dataclasses
from dataclasses import dataclass
import logging
import secrets
import threading
import time
from typing import Any, Sequence

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.framing import MessageError
from tendon_robot_sim.protocol.laser import COUNT_MAX, sensor_device, TdcrLaserV1, TipMeasurement
from tendon_robot_sim.protocol.link import CONNECTED, LinkStatistics, SerialLink

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MotorStatus:
    """The latest status of every channel, shapes (n,)."""

    modes: tuple[str, ...]        # motor.TENSION or motor.DISPLACEMENT per channel
    displacements: np.ndarray     # m
    velocities: np.ndarray        # m/s
    tensions: np.ndarray          # N
    faults: np.ndarray            # int bit masks
    stamp: float                  # time.monotonic() of the newest channel report [s]
    oldest: float                 # time.monotonic() of the oldest channel report [s]


@dataclass(frozen=True)
class ServoState:
    """One servo's own state, for a motor with a torque switch and a control table."""

    channel: int          # tendon index
    servo_id: int
    model: str            # e.g. 'XM430-W350'
    firmware: int
    torque: bool          # Torque Enable as last read
    hardware_error: int   # Hardware Error Status bits as last read
    bus_watchdog: int     # -1: expired, 0: off, else armed (20 ms units)
    mode: str             # motor.TENSION or motor.DISPLACEMENT
    fault: str            # why this servo is down ('' if it is not)


@dataclass
class CommandStatistics:
    """Command delivery counters of a :class:`MotorDriver` (a snapshot when returned)."""

    commands: int = 0          # commands queued by the owner
    superseded: int = 0        # replaced by a newer one before they were written
    acks: int = 0              # ACKs of the newest command
    naks: int = 0              # rejections
    retransmits: int = 0       # frames re-sent after a timeout or a reconnect
    ack_timeouts: int = 0      # commands given up after max_retries
    last_nak: str = ''
    last_acked_seq: int | None = None
    last_ack_time: float | None = None   # time.monotonic() of the last ACK [s]


@dataclass
class _Outgoing:
    seq: int
    frame: bytes
    sent_at: float | None = None
    retries: int = 0
    acked: bool = False
    rejected: bool = False    # NAK'ed with its number: never sent again
    done: bool = False        # acked, rejected or given up: no more retries


#: What became of a command (:meth:`MotorDriver.delivery`).
PENDING = 'pending'       # written or about to be, waiting for its ACK
DELIVERED = 'delivered'   # acknowledged: the device has applied it
REJECTED = 'rejected'     # NAK'ed with its number: the device refuses it
GIVEN_UP = 'given up'     # no ACK after max_retries re-sends
SUPERSEDED = 'superseded'  # a newer command replaced it


class MotorDriver:
    """
    Tendon motor driver on a serial link.

    Parameters
    ----------
    url : str
        Port (``/dev/ttyUSB0``, ``socket://host:port``, ``loop://``).
    channels : int
        Number of tendons; the device must report channels ``0 .. channels-1``.
    device : str
        Protocol name in :data:`tendon_robot_sim.protocol.motor.MOTOR_DEVICES`.
    ack_timeout : float
        Wait for an ACK before re-sending [s].
    max_retries : int
        Re-sends of one command before it is given up.
    resend_on_reconnect : bool
        Re-send the last command once after a reconnect (see the module docstring).
    lost_after : float or None
        While enabled, a device that sent nothing valid for this long [s] is a fault, as a
        lost port is, if the link read its port meanwhile (a stall of this process is not the
        device's silence); None: silence is only the link's staleness.
    **link_options
        Passed to :class:`SerialLink` (baudrate, read_timeout, backoff ...).

    """

    def __init__(self, url: str, channels: int, device: str = motor.TdcrMotorV1.name,
                 ack_timeout: float = 0.1, max_retries: int = 3,
                 resend_on_reconnect: bool = True, lost_after: float | None = None,
                 **link_options: Any):
        if not 1 <= channels <= motor.MAX_CHANNELS:
            raise ValueError(f'channels: must be in [1, {motor.MAX_CHANNELS}], got {channels}')
        if ack_timeout <= 0.0:
            raise ValueError(f'ack_timeout: must be > 0 s, got {ack_timeout}')
        self.channels = channels
        self.protocol = motor.motor_device(device)
        self.ack_timeout = ack_timeout
        self.max_retries = max_retries
        self.resend_on_reconnect = resend_on_reconnect
        self.lost_after = lost_after
        self._lock = threading.Lock()
        self._seq = secrets.randbelow(motor.SEQ_MAX + 1)   # the first command gets seq + 1
        self._pending: _Outgoing | None = None     # queued, not yet written
        self._last: _Outgoing | None = None        # last written
        self._resend = False
        self._commands = CommandStatistics()
        self._reports: list[tuple[motor.ChannelStatus, float] | None] = [None] * channels
        self._faults_after = -np.inf   # fault() reads reports received after this [s]
        # Between enable and disable a lost port is a fault: the connects the link should
        # have counted if it never dropped since then (or since the last clear_fault), and
        # the first loss seen, kept as it was said until clear_fault
        self._connects_expected: int | None = None
        self._heard_since = -np.inf   # silence counts from here at the earliest [s]
        self._link_fault = ''
        self.link = SerialLink(url, self.protocol, self._on_message, self._on_connect,
                               self._poll_outgoing, name=link_options.pop('name', 'motors'),
                               **link_options)

    def start(self) -> 'MotorDriver':
        self.link.start()
        return self

    def stop(self, final_tensions: Sequence[float] | None = None, timeout: float = 0.3) -> None:
        """
        Stop the I/O thread, first sending ``final_tensions`` [N] if connected.

        Waits up to ``timeout`` [s] for the device to acknowledge the final command.
        """
        if final_tensions is not None and self.connected:
            seq = self.command_tensions(final_tensions)
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self._commands.last_acked_seq != seq:
                time.sleep(0.005)
        self.link.stop()

    @property
    def connected(self) -> bool:
        return self.link.connected

    # The streaming device has no torque switch and reports its faults in every status.
    def enable(self, safe_tensions: Sequence[float]) -> None:
        """Activate: nothing to switch on; from now on a lost port is a fault."""
        with self._lock:
            self._watch_link()

    def disable(self) -> None:
        """Deactivate: nothing to switch off; the owner commands the safe state."""
        with self._lock:
            self._connects_expected, self._link_fault = None, ''

    def _watch_link(self) -> None:
        """Count a loss of the port, or silence, from now (lock held); a port down now is one."""
        link = self.link.statistics()
        self._connects_expected = link.connects + (link.state != CONNECTED)
        self._heard_since = time.monotonic()
        self._link_fault = ''

    def fault(self) -> str:
        """
        Return the faults seen since the last :meth:`clear_fault` ('' none).

        The port lost (unplugged, the device gone) while enabled, even if it came back:
        what the device did meanwhile is unknown; so is a device silent for ``lost_after``
        (nothing valid: no status, no ACK, or only spoilt frames). The fault flags of the
        device's reports, every one but tension limit: that one says the device clamped a
        target to its own limit and holds it there, its protection at work (as a servo's
        current bound).
        """
        link, now = self.link.statistics(), time.monotonic()
        with self._lock:
            reports, after = list(self._reports), self._faults_after
            if self._connects_expected is not None and not self._link_fault:
                self._link_fault = self._link_problem(link, now)
            said = [self._link_fault] if self._link_fault else []
        for report in reports:
            if report is None or report[1] <= after:
                continue
            flags = report[0].faults & ~motor.FAULT_TENSION_LIMIT
            if flags:
                said.append(f'channel {report[0].channel}: {", ".join(motor.fault_names(flags))}')
        return '; '.join(said)

    def _link_problem(self, link: LinkStatistics, now: float) -> str:
        """Why the link of an enabled device is at fault ('' if it is not), said once."""
        if link.state != CONNECTED or link.connects != self._connects_expected:
            return f'port {self.link.url}: {link.last_error or "disconnected"}'
        silent = now - max(self._heard_since, link.last_rx_time or -np.inf)
        if self.lost_after is None or silent <= self.lost_after:
            return ''
        # Silence the I/O thread heard: half the reads it makes in lost_after brought nothing
        # valid. A stall of this process (a loaded host, not the device) leaves the device's
        # frames unread in the port, and few reads: the first read after it takes the frames.
        if link.quiet_reads < 0.5 * self.lost_after / self.link.read_timeout:
            return ''
        return (f'port {self.link.url}: the device is silent, nothing valid received '
                f'for {silent:.1f} s ({link.last_error or "no frame"})')

    def clear_fault(self) -> None:
        """Forget the faults so far: a flag that persists, a port still down, come back."""
        with self._lock:
            self._faults_after = time.monotonic()
            if self._connects_expected is not None:
                self._watch_link()

    def recover(self) -> None:
        """Nothing to bring back: the device takes the owner's next command as it comes."""

    def resume_refusal(self) -> str:
        """Return '': the device's faults are flags in its status, not a switched-off motor."""
        return ''

    def diagnostic_values(self) -> list[tuple[str, object]]:
        """Return []: nothing beyond the link and delivery counters."""
        return []

    def reboot(self, timeout: float) -> tuple[bool, str]:
        """Return (False, why): the streaming protocol has no reboot instruction."""
        return False, f'{self.protocol.name} has no reboot instruction'

    def servo_states(self) -> list[ServoState]:
        """Return []: the streaming device reports per channel in its status only."""
        return []

    def fault_names(self, bits: int) -> list[str]:
        return motor.fault_names(bits)

    # ------------------------------------------------------------------ commands

    def command_tensions(self, tensions: Sequence[float]) -> int:
        """
        Queue tension mode for every channel [N]; returns the sequence number.

        Raises
        ------
        FieldError
            If a value cannot go on the wire (NaN, negative, too large): nothing is queued.

        """
        return self._queue(lambda seq: motor.SetTensions(seq, self._values(tensions)))

    def command_displacements(self, displacements: Sequence[float]) -> int:
        """Queue displacement mode for every channel [m]; returns the sequence number."""
        return self._queue(lambda seq: motor.SetDisplacements(seq, self._values(displacements)))

    def _values(self, values: Sequence[float]) -> tuple[float, ...]:
        values = tuple(float(v) for v in values)
        if len(values) != self.channels:
            raise ValueError(f'expected {counted(self.channels, "value")}, one per channel, '
                             f'got {len(values)}')
        return values

    def check_command(self, mode: str, values: Sequence[float]) -> None:
        """Raise FieldError if ``values`` in ``mode`` (motor.TENSION ...) cannot go on the wire."""
        build = motor.SetTensions if mode == motor.TENSION else motor.SetDisplacements
        self.protocol.encode(build(0, self._values(values)))

    def delivery(self, seq: int) -> str:
        """
        Tell what became of command ``seq``.

        PENDING, DELIVERED, REJECTED, GIVEN_UP or SUPERSEDED.
        """
        with self._lock:
            if self._pending is not None:
                return PENDING if self._pending.seq == seq else SUPERSEDED
            last = self._last
            if last is None or last.seq != seq:
                return SUPERSEDED
            if last.acked:
                return DELIVERED
            if last.rejected:
                return REJECTED
            return GIVEN_UP if last.done else PENDING

    def _queue(self, build) -> int:
        with self._lock:
            seq = (self._seq + 1) % (motor.SEQ_MAX + 1)
            frame = self.protocol.encode(build(seq))   # raises before anything changes
            self._seq = seq
            self._commands.commands += 1
            self._commands.superseded += self._pending is not None
            self._pending = _Outgoing(seq, frame)
        self.link.wake()
        return seq

    # ------------------------------------------------------------------ status

    def status(self) -> MotorStatus | None:
        """Return the latest report of every channel, or None until each has reported."""
        with self._lock:
            reports = list(self._reports)
        if any(r is None for r in reports):
            return None
        statuses = [r[0] for r in reports]
        stamps = [r[1] for r in reports]
        return MotorStatus(
            modes=tuple(s.mode for s in statuses),
            displacements=np.array([s.displacement for s in statuses]),
            velocities=np.array([s.velocity for s in statuses]),
            tensions=np.array([s.tension for s in statuses]),
            faults=np.array([s.faults for s in statuses], dtype=int),
            stamp=max(stamps), oldest=min(stamps))

    def statistics(self) -> tuple[LinkStatistics, CommandStatistics]:
        """Snapshots of the link and command counters."""
        with self._lock:
            commands = dataclasses.replace(self._commands)
        return self.link.statistics(), commands

    # ------------------------------------------------------------------ I/O thread

    def _on_connect(self) -> None:
        with self._lock:
            # Re-send the last command once, unless a newer one is about to go anyway.
            self._resend = (self.resend_on_reconnect and self._last is not None
                            and not self._last.rejected and self._pending is None)

    def _poll_outgoing(self, now: float) -> list[bytes]:
        with self._lock:
            if self._pending is not None:
                self._last, self._pending = self._pending, None
                self._last.sent_at = now
                return [self._last.frame]
            last = self._last
            if last is None:
                return []
            if self._resend:
                self._resend = False
                last.done = False
                last.retries = 0
                return self._retransmit(last, now)
            if last.done or now - last.sent_at < self.ack_timeout * 2 ** last.retries:
                return []
            if last.retries >= self.max_retries:
                last.done = True
                self._commands.ack_timeouts += 1
                logger.warning('motors: command %d not acknowledged after %d retries',
                               last.seq, last.retries)
                return []
            return self._retransmit(last, now)

    def _retransmit(self, out: _Outgoing, now: float) -> list[bytes]:
        out.retries += 1
        out.sent_at = now
        self._commands.retransmits += 1
        return [out.frame]

    def _on_message(self, message: Any, rx_time: float) -> None:
        if isinstance(message, motor.ChannelStatus):
            if message.channel >= self.channels:
                raise MessageError(f'MST.channel: {message.channel} is not a channel of '
                                   f'this robot (0 .. {self.channels - 1})')
            with self._lock:
                self._reports[message.channel] = (message, rx_time)
        elif isinstance(message, motor.Ack):
            with self._lock:
                last = self._last
                if last is not None and message.seq == last.seq:
                    last.acked = last.done = True
                    self._commands.acks += 1
                    self._commands.last_acked_seq = message.seq
                    self._commands.last_ack_time = rx_time
        elif isinstance(message, motor.Nak):
            self._on_nak(message)
        else:
            raise MessageError(f'{type(message).__name__}: a motor driver never sends this')

    def _on_nak(self, nak: motor.Nak) -> None:
        with self._lock:
            self._commands.naks += 1
            self._commands.last_nak = f'seq {nak.seq}: {nak.reason}'
            last = self._last
            if last is None or last.done:
                return
            # A NAK without a number (an unreadable frame) waits for the back-off.
            if nak.seq == last.seq:
                last.done = last.rejected = True
                logger.warning('motors: device rejected command %d (%s)', nak.seq, nak.reason)


@dataclass
class SensorStatistics:
    """Sample counters of a :class:`TipSensorDriver` (a snapshot when returned)."""

    samples: int = 0       # measurements received
    invalid: int = 0       # measurements flagged "no target"
    lost: int = 0          # samples missing from the counter sequence
    overflow: int = 0      # measurements dropped because nobody polled
    last_invalid: str = ''   # what the last invalid sample said


class TipSensorDriver:
    """
    Laser tip sensor on a serial link; measurements wait in a bounded queue.

    Parameters
    ----------
    url : str
        Port (``/dev/ttyUSB1``, ``socket://host:port``, ``loop://``).
    device : str
        Protocol name in :data:`tendon_robot_sim.protocol.laser.SENSOR_DEVICES`.
    queue_length : int
        Measurements kept between two polls; older ones are dropped and counted.
    **link_options
        Passed to :class:`SerialLink`.

    """

    def __init__(self, url: str, device: str = TdcrLaserV1.name, queue_length: int = 100,
                 **link_options: Any):
        self.protocol = sensor_device(device)
        self._lock = threading.Lock()
        self._queue: deque[tuple[TipMeasurement, float]] = deque(maxlen=queue_length)
        self._counts = SensorStatistics()
        self._last_count: int | None = None
        self.link = SerialLink(url, self.protocol, self._on_message,
                               name=link_options.pop('name', 'tip_sensor'), **link_options)

    def start(self) -> 'TipSensorDriver':
        self.link.start()
        return self

    def stop(self) -> None:
        self.link.stop()

    @property
    def connected(self) -> bool:
        return self.link.connected

    def measurements(self) -> list[tuple[TipMeasurement, float]]:
        """
        Return the measurements since the last call, oldest first.

        Each comes with its receive time (``time.monotonic()`` [s]); invalid ones are
        included (``valid`` is False).
        """
        with self._lock:
            out = list(self._queue)
            self._queue.clear()
        return out

    def statistics(self) -> tuple[LinkStatistics, SensorStatistics]:
        with self._lock:
            counts = dataclasses.replace(self._counts)
        return self.link.statistics(), counts

    def _on_message(self, message: Any, rx_time: float) -> None:
        if not isinstance(message, TipMeasurement):
            raise MessageError(f'{type(message).__name__}: a tip sensor never sends this')
        with self._lock:
            self._counts.samples += 1
            self._counts.invalid += not message.valid
            if not message.valid:
                self._counts.last_invalid = 'no target (valid N)'
            if self._last_count is not None:
                self._counts.lost += (message.count - self._last_count - 1) % (COUNT_MAX + 1)
            self._last_count = message.count
            self._counts.overflow += len(self._queue) == self._queue.maxlen
            self._queue.append((message, rx_time))
