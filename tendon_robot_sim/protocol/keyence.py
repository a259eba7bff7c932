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
Laser displacement controller, Keyence LK-G style: RS-232C command/response.

From the LK-G user manual, chapter RS-232C: every command and response ends with
CR. The host sends ``M0`` (measured values of both outputs) and the controller
answers ``M0,<value 1>,<value 2>``; a value is a sign (``+``/``-``) and seven
characters, right-aligned with leading zeros and a decimal point whose place
depends on the settings (``+01.2345`` mm, ``+1234.56``, ``-00001.2``: the manual's
examples, "Measurement value format", page 5-6); out of range is ``+FFFFFFF`` or
``-FFFFFFF``, and ``XXXXXXXX`` (eight characters, no sign) is what the display
shows as ``-------`` (an alarm, no target: "Measurement value format", page 5-6).
Each of these is an invalid sample of that head, not a fault of the link. A
command it cannot execute gets ``ER,<command>,<code>`` (00 command error, 01
status error, 20 command length error, 21 parameter count error, 22 invalid
parameter, 88 timeout, 99 other: "Outline of the command format", page 5-5). The
answer ``ER,M0,<code>`` is an invalid sample of both heads too (the controller
answered, and measured nothing); an error for another command answers one garbled
on the way, a fault of the link. The line runs at 9600 to 115200 baud
(:data:`BAUDRATES`), 8 data bits, no parity, 1 stop bit.

Two heads on orthogonal axes of the sensor frame give the tip there
(:class:`Heads`); :class:`KeyenceSensor` polls the controller at a rate, with a
timeout per request, and offers the same methods as
:class:`~tendon_robot_sim.protocol.drivers.TipSensorDriver`.

An answer carries no sequence number: it is the answer to a request only because the
controller sends one response for each command, in the order received, and the host
confirms it before sending the next ("Outline of the command format", page 5-5). The same
page heads every response with the command it answers (an error response with ``ER`` and
that command). A request unanswered within the timeout still owes its answer, however late
it comes, so the poller has lost its place: it sends ``M1`` (:data:`RESYNC`, OUT1's value
alone), and drops every answer before the one headed ``M1``; by the order of the answers,
every ``M0`` sent before it has then been answered, so the next ``M0``'s answer is its own.
The ``M1`` answer itself is dropped too (it is not a sample of both heads). Unanswered within
``late_limit`` [s], ``M1`` is sent again (its first answer ends the wait; an ``M1`` answer
that comes after is dropped wherever it comes). A response to ``M0`` that is not headed
``M0`` (garbled) is a parse error, and the poller finds its place the same way: whether
``M0``'s own answer is still to come cannot be told. The poller starts so too, on every
(re)opened port. ``M0`` alone is sent while the answers come in time.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
import logging
import re
import termios
import threading
import time

import numpy as np
import serial

from tendon_robot_sim.protocol.drivers import SensorStatistics
from tendon_robot_sim.protocol.laser import COUNT_MAX, TipMeasurement
from tendon_robot_sim.protocol.link import (CONNECTED, DISCONNECTED, LinkStatistics, LinkView,
                                            open_serial)

logger = logging.getLogger(__name__)

NAME = 'keyence-lkg'
MEASURE = b'M0'
#: OUT1's measured value alone: sent to find the place in the answers after a lost one.
RESYNC = b'M1'
OUT_OF_RANGE = 'FFFFFFF'
#: The whole value when the display shows ``-------`` (alarm, no target).
ALARM = 'XXXXXXXX'
COMMAND_ERROR, STATUS_ERROR = '00', '01'
ERROR_CODES = {'00': 'command error', '01': 'status error', '20': 'command length error',
               '21': 'parameter count error', '22': 'invalid parameter error',
               '88': 'timeout error', '99': 'other error'}


class KeyenceError(ValueError):
    """A response that is not a measurement; the message says what it was."""


class RefusedMeasurement(KeyenceError):
    """The controller's error response to ``M0``: it answered, but measured nothing."""


#: Characters of a value after its sign (the decimal point one of them).
DIGITS = 7
#: A value: sign, then seven digits and at most one decimal point (no exponent, NaN, blank).
VALUE = re.compile(r'[+-](?=[0-9.]{7}$)[0-9]*\.?[0-9]*')
#: The line speeds the controller can be set to (8 data bits, no parity, 1 stop bit).
BAUDRATES = (9600, 19200, 38400, 57600, 115200)


def format_value(mm: float | None, decimals: int = 4) -> str:
    """
    Write ``mm`` as the controller does: sign and 7 characters; None: out of range.

    ``decimals`` is the controller's display setting (0: no decimal point); a value that
    does not fit the seven characters with it is out of range, as on the display.
    """
    if mm is None:
        return '+' + OUT_OF_RANGE
    digits = f'{abs(mm):0{DIGITS}.{decimals}f}'
    if len(digits) > DIGITS:
        return ('+' if mm >= 0 else '-') + OUT_OF_RANGE
    return ('+' if mm >= 0 else '-') + digits


def decimals_for(measuring_range: float) -> int:
    """Return the most decimals with which every value within +-``measuring_range`` [mm] fits."""
    integer = len(str(int(measuring_range)))
    return max(0, DIGITS - integer - 1)


def parse_value(text: str) -> float | None:
    """Read a value [mm]; None when out of range or in alarm. KeyenceError if malformed."""
    if text == ALARM:
        return None
    if len(text) == 8 and text[0] in '+-' and text[1:] == OUT_OF_RANGE:
        return None
    # float() alone took '+nan    ', '+inf    ' and '+1e+0005' for numbers
    if not VALUE.fullmatch(text):
        raise KeyenceError(f'value {text!r}: not a sign and 7 characters (digits, at most one '
                           'decimal point)')
    return float(text)


def baudrate_problem(baudrate) -> str:
    """Say why the controller cannot talk at ``baudrate`` (empty: it can)."""
    if baudrate in BAUDRATES:
        return ''
    rates = ', '.join(str(b) for b in BAUDRATES[:-1])
    return f'the LK-G talks at {rates} or {BAUDRATES[-1]} baud, got {baudrate}'


def invalid_reason(text: str) -> str:
    """Say why a value that :func:`parse_value` reads as None is not a measurement."""
    return f'alarm, no target ({text})' if text == ALARM else f'out of range ({text})'


def command_answered(line: bytes) -> bytes:
    """
    Return the command a response line (no CR) answers, upper case: its header.

    "Outline of the command format" (page 5-5): a response is headed by the command
    received, an error response by ``ER`` and that command.
    """
    parts = line.split(b',')
    if parts[0].upper() == b'ER' and len(parts) == 3:
        return parts[1].upper()
    return parts[0].upper()


def parse_measurement(line: bytes) -> tuple[float | None, float | None]:
    """Both heads' values [mm] (None: out of range) from an ``M0`` response line (no CR)."""
    try:
        text = line.decode('ascii')
    except UnicodeDecodeError:
        raise KeyenceError(f'response {line!r}: not ASCII') from None
    parts = text.split(',')
    if parts[0].upper() == 'ER' and len(parts) == 3:
        # an error for another command answers one garbled on the way: the link's fault
        error = RefusedMeasurement if parts[1].upper() == MEASURE.decode() else KeyenceError
        raise error(f'controller error {parts[2]} '
                    f'({ERROR_CODES.get(parts[2], "unknown code")}) for {parts[1]}')
    if parts[0].upper() != 'M0' or len(parts) != 3:
        raise KeyenceError(f'response {text!r}: expected M0,<value 1>,<value 2>')
    return parse_value(parts[1]), parse_value(parts[2])


def _finite(values) -> bool:
    """Return True if every one of ``values`` is a finite number."""
    try:
        return bool(np.all(np.isfinite(np.asarray(values, dtype=float))))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class Heads:
    """
    Where the two heads look: sensor-frame axis (0 x, 1 y, 2 z), sign and offset [m] each.

    Head k reads ``sign_k * (tip[axis_k] - offset_k)`` [mm x 1e3]; the coordinate
    along the third axis is not measured and is reported as ``third`` [m].
    """

    axes: tuple[int, int] = (1, 2)
    signs: tuple[int, int] = (1, 1)
    offsets: tuple[float, float] = (0.0, 0.0)
    third: float = 0.11

    def __post_init__(self):
        # The messages name the bridge's parameters: its start and the launcher check them here.
        for name, values in (('keyence_axes', self.axes), ('keyence_signs', self.signs),
                             ('keyence_offsets', self.offsets)):
            if len(values) != 2:
                raise ValueError(f'{name}: two values (one per head), got {list(values)}')
        if set(self.axes) not in ({0, 1}, {0, 2}, {1, 2}):   # no order: [1, 'a'] is refused
            raise ValueError(f'keyence_axes: two different axes of 0, 1, 2, got {self.axes}')
        if any(s not in (1, -1) for s in self.signs):
            raise ValueError(f'keyence_signs: each +1 or -1, got {self.signs}')
        if not _finite(self.offsets):
            raise ValueError(f'keyence_offsets: finite numbers [m], got {list(self.offsets)}')
        if not _finite([self.third]):
            raise ValueError(f'keyence_third: a finite number [m], got {self.third!r}')

    def tip(self, values_mm: tuple[float, float]) -> np.ndarray:
        """Tip in the sensor frame [m] from both heads' readings [mm]."""
        tip = np.full(3, self.third)
        for axis, sign, offset, value in zip(self.axes, self.signs, self.offsets, values_mm):
            tip[axis] = offset + sign * value * 1e-3
        return tip

    def readings(self, tip: np.ndarray) -> tuple[float, float]:
        """Return what the heads read [mm] for a tip in the sensor frame [m]."""
        return tuple(sign * (tip[axis] - offset) * 1e3 for axis, sign, offset
                     in zip(self.axes, self.signs, self.offsets))


class KeyenceSensor:
    """
    Poll an LK-G style controller for the tip; measurements wait in a bounded queue.

    A request unanswered within ``timeout`` [s] is counted (``lost``); its answer, however
    late, is dropped (its bytes in ``bytes_dropped``, ``last_error`` says so), never taken
    for a later one's: the poller asks ``M1`` (again after each ``late_limit`` [s] without
    its answer) and drops all that comes before that answer. A head out of range or in
    alarm gives an invalid sample. The port is reopened with back-off
    when it fails.
    """

    def __init__(self, url: str, heads: Heads, rate: float = 50.0, timeout: float = 0.05,
                 baudrate: int = 115200, queue_length: int = 100,
                 backoff: tuple[float, float] = (0.05, 2.0), name: str = 'tip_sensor',
                 late_limit: float = 0.5):
        # The messages name the bridge's parameters, as those of Heads do.
        if not url:
            raise ValueError('sensor_port: must not be empty')
        try:
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, serial.SerialException) as error:
            raise ValueError(f'sensor_port: cannot use port {url!r}: {error}') from None
        if baudrate not in BAUDRATES:
            raise ValueError(f'sensor_baudrate: {baudrate_problem(baudrate)}')
        self.url, self.heads, self.period, self.timeout = url, heads, 1.0 / rate, timeout
        self.baudrate, self.backoff, self.name = baudrate, backoff, name
        self.late_limit = late_limit
        # False: an answer may still come for a request sent before; found again by M1
        self._synced = False
        self._lock = threading.Lock()
        self._queue: deque[tuple[TipMeasurement, float]] = deque(maxlen=queue_length)
        self._counts = SensorStatistics()
        self._link = LinkStatistics()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f'keyence-{name}', daemon=True)
        self._count = 0

    def start(self) -> 'KeyenceSensor':
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():   # also called on a sensor never started
            self._thread.join(2.0)

    @property
    def connected(self) -> bool:
        return self._link.state == CONNECTED

    @property
    def link(self) -> 'KeyenceSensor':
        """Return self: :meth:`statistics` of the link view gives the link counters."""
        return LinkView(self)

    def measurements(self) -> list[tuple[TipMeasurement, float]]:
        """Return the measurements since the last call (receive time, monotonic s)."""
        with self._lock:
            out = list(self._queue)
            self._queue.clear()
        return out

    def statistics(self) -> tuple[LinkStatistics, SensorStatistics]:
        with self._lock:
            return replace(self._link), replace(self._counts)

    def _run(self) -> None:
        wait = self.backoff[0]
        port = None
        while not self._stop.is_set():
            try:
                if port is None:
                    port = open_serial(self.url, baudrate=self.baudrate, timeout=self.timeout)
                    self._synced = False   # an answer owed before the port failed may come
                    with self._lock:
                        self._link.reconnects += self._link.connects > 0
                        self._link.connects += 1
                        self._link.state, self._link.last_error = CONNECTED, ''
                    wait = self.backoff[0]
                start = time.monotonic()
                self._poll(port)
                self._stop.wait(max(0.0, self.period - (time.monotonic() - start)))
            except (OSError, serial.SerialException, termios.error) as error:
                # termios.error (not an OSError): the terminal vanished under tcflush
                with self._lock:
                    self._link.state, self._link.last_error = DISCONNECTED, str(error)
                    self._link.connect_failures += port is None
                if port is not None:
                    port.close()
                    port = None
                self._stop.wait(wait)
                wait = min(2 * wait, self.backoff[1])
        if port is not None:
            port.close()
        with self._lock:
            self._link.state = DISCONNECTED

    def _poll(self, port) -> None:
        if not self._synced:
            self._resync(port)
            if not self._synced:
                return   # asked again at the next poll, or stopping
        port.reset_input_buffer()
        port.write(MEASURE + b'\r')
        with self._lock:
            self._link.frames_sent += 1
        while True:
            line = port.read_until(b'\r')
            if not (line.endswith(b'\r') and command_answered(line[:-1]) == RESYNC):
                break
            with self._lock:   # an M1 sent again answered after the first: not ours
                self._link.bytes_received += len(line)
                self._link.bytes_dropped += len(line)
        now = time.monotonic()
        with self._lock:
            self._link.bytes_received += len(line)
            if not line.endswith(b'\r'):
                self._counts.lost += 1   # no answer within the timeout
                self._link.bytes_dropped += len(line)
                self._synced = False
                return
            refusal = ''
            try:
                values = parse_measurement(line[:-1])
            except RefusedMeasurement as error:   # an invalid sample, as an alarm is
                values, refusal = (None, None), str(error)
            except KeyenceError as error:
                self._link.parse_errors += 1
                self._link.last_error = str(error)
                self._synced = command_answered(line[:-1]) == MEASURE
                return
            self._link.frames_ok += 1
            self._link.last_rx_time = now
            valid = None not in values
            tip = self.heads.tip(values) if valid else np.zeros(3)
            self._counts.samples += 1
            self._counts.invalid += not valid
            if not valid:
                texts = line[:-1].decode('ascii').split(',')[1:]
                self._counts.last_invalid = refusal or ', '.join(
                    f'head {k + 1} {invalid_reason(text)}'
                    for k, (text, value) in enumerate(zip(texts, values)) if value is None)
            self._counts.overflow += len(self._queue) == self._queue.maxlen
            self._queue.append((TipMeasurement(self._count, *(float(v) for v in tip),
                                               quality=1.0 if valid else 0.0, valid=valid), now))
            self._count = (self._count + 1) % (COUNT_MAX + 1)

    def _resync(self, port) -> None:
        """
        Send ``M1`` and drop all that comes before its answer, and that answer.

        An answer that came before it answers a request sent before (a late one, counted
        lost at its timeout): taken for the next request's, it was an old tip stamped as
        new. In step again once ``M1``'s answer came; not after ``late_limit`` without it
        (nor when stopping).
        """
        port.write(RESYNC + b'\r')
        with self._lock:
            self._link.frames_sent += 1
        deadline = time.monotonic() + self.late_limit
        line = b''   # a line a read's timeout cut is read on
        while not self._stop.is_set():
            data = port.read_until(b'\r')
            line += data
            with self._lock:
                self._link.bytes_received += len(data)
                self._link.bytes_dropped += len(data)
                if line.endswith(b'\r'):
                    if command_answered(line[:-1]) == RESYNC:
                        self._synced = True
                        return
                    self._link.last_error = (f'late answer {line[:-1]!r} to a request that '
                                             'timed out: dropped')
                    line = b''
            if time.monotonic() >= deadline:
                return
