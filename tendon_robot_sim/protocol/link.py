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
A serial link that keeps itself connected: one I/O thread per device.

:class:`SerialLink` opens its port with :func:`serial.serial_for_url`, so a device
path (``/dev/ttyUSB0``), a TCP bridge (``socket://host:port``) and a loopback
(``loop://``) all work. Its thread reads with a short timeout, cuts the stream
into frames (a partial frame is kept between reads), decodes them with the
device protocol and hands the messages to a callback. Bad frames are counted
and dropped. When the port fails (unplugged, peer closed) the thread closes it
and reopens it with exponential back-off; it never gives up and never raises to
the caller. Writes happen in the same thread: the owner queues frames through
``poll_outgoing``, which the thread calls before every read and once more when it
is stopped, so no caller ever blocks on the port and a frame queued just before
``stop()`` still goes out.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import errno
import logging
import threading
import time
from typing import Any, Callable

import serial

from tendon_robot_sim.protocol.framing import ChecksumError, ProtocolError

logger = logging.getLogger(__name__)

CONNECTED = 'connected'
DISCONNECTED = 'disconnected'


def open_serial(url: str, **settings) -> serial.SerialBase:
    """
    Open ``url`` for this process alone (:func:`serial.serial_for_url` with ``settings``).

    The port is locked (pyserial's ``exclusive``: ``flock``) before its settings are touched,
    so a second hardware bridge, a ``hardware scan`` or any other locking program cannot open
    a port a bridge drives: two hosts on one bus take each other's answers, and the second
    one's configure switched the first one's servos off. SerialException (an OSError) says
    the port is in use.
    """
    try:
        return serial.serial_for_url(url, exclusive=True, **settings)
    except serial.SerialException as error:
        if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
            raise
        raise serial.SerialException('in use by another process (another hardware bridge, a '
                                     'scan?)') from None


@dataclass
class LinkStatistics:
    """Health of one link since it was started (a snapshot when returned)."""

    state: str = DISCONNECTED
    frames_ok: int = 0           # frames decoded into messages
    bad_checksum: int = 0        # frames dropped for a wrong checksum
    parse_errors: int = 0        # malformed, truncated, unknown or invalid frames
    bytes_received: int = 0
    bytes_dropped: int = 0       # garbage between frames and the bytes of bad frames
    frames_sent: int = 0
    connects: int = 0            # successful opens, the first included
    reconnects: int = 0          # successful opens after a lost connection
    connect_failures: int = 0    # failed opens
    last_rx_time: float | None = None   # time.monotonic() of the last good frame [s]
    quiet_reads: int = 0         # reads since the last good frame that brought none
    last_error: str = ''


@dataclass(frozen=True)
class LinkView:
    """The link counters of a device whose ``statistics()`` returns them first."""

    device: Any

    def statistics(self) -> LinkStatistics:
        return self.device.statistics()[0]


class SerialLink:
    """
    Keep one device connected, decode what it sends, write what the owner queues.

    Parameters
    ----------
    url : str
        Port for :func:`serial.serial_for_url`.
    protocol
        Device protocol with ``decoder()`` and ``decode(fields)``.
    on_message : callable(message, rx_time)
        Called in the I/O thread for each decoded message; ``rx_time`` is
        ``time.monotonic()`` [s]. May raise :class:`ProtocolError` to reject the
        message (counted as a parse error).
    on_connect : callable() or None
        Called in the I/O thread after each successful open.
    poll_outgoing : callable(now) -> list of bytes, or None
        Called in the I/O thread before each read; returns frames to write.
    baudrate : int
        Ignored by ``socket://`` and ``loop://``.
    read_timeout : float
        Longest a read waits for the first byte [s]; bounds how late a queued
        frame is written on ports without ``cancel_read`` (sockets).
    write_timeout : float
        Longest a write may block before the link is declared lost [s].
    backoff : (float, float)
        First and longest wait between failed opens [s]; doubles on each failure.
    name : str
        Used in log messages.

    Raises
    ------
    ValueError
        If ``url`` names an unknown scheme (checked without opening the port).

    """

    def __init__(self, url: str, protocol: Any, on_message: Callable[[Any, float], None],
                 on_connect: Callable[[], None] | None = None,
                 poll_outgoing: Callable[[float], list[bytes]] | None = None,
                 baudrate: int = 115200, read_timeout: float = 0.01,
                 write_timeout: float = 0.5, backoff: tuple[float, float] = (0.05, 2.0),
                 name: str = 'link'):
        if not url:
            raise ValueError(f'{name}: port must not be empty')
        try:
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, serial.SerialException) as error:
            raise ValueError(f'{name}: cannot use port {url!r}: {error}') from None
        if not 0.0 < backoff[0] <= backoff[1]:
            raise ValueError(f'{name}: backoff must satisfy 0 < first <= longest, got {backoff}')
        self.url = url
        self.name = name
        self.protocol = protocol
        self._on_message = on_message
        self._on_connect = on_connect
        self._poll_outgoing = poll_outgoing
        self._open_args = {'baudrate': baudrate, 'timeout': read_timeout,
                           'write_timeout': write_timeout}
        self._backoff = backoff
        self._stats = LinkStatistics()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._port: serial.SerialBase | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ owner API

    def start(self) -> None:
        """Start the I/O thread (it connects, and keeps reconnecting, by itself)."""
        if self._thread is not None:
            raise RuntimeError(f'{self.name}: already started')
        self._thread = threading.Thread(target=self._run, name=f'{self.name}-io', daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and close the port."""
        self._stop.set()
        self.wake()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        """Cut the current read short so queued frames are written now."""
        port = self._port
        cancel = getattr(port, 'cancel_read', None)
        if cancel is not None:
            try:
                cancel()
            except (OSError, serial.SerialException):
                pass   # the port is closing; the thread notices by itself

    @property
    def read_timeout(self) -> float:
        """Longest a read waits [s]: a silent device costs the I/O thread one read per this."""
        return self._open_args['timeout']

    @property
    def connected(self) -> bool:
        return self._stats.state == CONNECTED

    def statistics(self) -> LinkStatistics:
        """Return a consistent copy of the counters."""
        with self._lock:
            return dataclasses.replace(self._stats)

    # ------------------------------------------------------------------ I/O thread

    def _run(self) -> None:
        delay = self._backoff[0]
        while not self._stop.is_set():
            try:
                port = open_serial(self.url, **self._open_args)
            except (serial.SerialException, OSError) as error:
                with self._lock:
                    self._stats.connect_failures += 1
                    self._stats.last_error = f'open failed: {error}'
                logger.debug('%s: cannot open %s (%s), retrying in %.2f s',
                             self.name, self.url, error, delay)
                self._stop.wait(delay)
                delay = min(2.0 * delay, self._backoff[1])
                continue
            delay = self._backoff[0]
            self._serve(port)

    def _serve(self, port: serial.SerialBase) -> None:
        decoder = self.protocol.decoder()
        with self._lock:
            self._stats.connects += 1
            if self._stats.connects > 1:
                self._stats.reconnects += 1
            self._stats.state = CONNECTED
        self._port = port
        logger.info('%s: connected to %s', self.name, self.url)
        try:
            if self._on_connect is not None:
                self._on_connect()
            while not self._stop.is_set():
                self._write_outgoing(port)
                data = port.read(max(1, port.in_waiting))
                if not (data and self._receive(decoder, data)):
                    with self._lock:
                        self._stats.quiet_reads += 1
            # Stopped: what the owner queued last (a final safe command) still goes out
            # before the port closes. On a loaded machine the owner's stop came before this
            # thread ran again, and the safe state of a stopping bridge never reached the wire.
            self._write_outgoing(port)
        except (serial.SerialException, OSError) as error:
            with self._lock:
                self._stats.last_error = f'link lost: {error}'
            logger.warning('%s: lost %s (%s); reconnecting', self.name, self.url, error)
        except Exception as error:
            # A bug in a callback must not end the thread that keeps the link alive.
            with self._lock:
                self._stats.last_error = f'internal error: {error!r}'
            logger.exception('%s: internal error; reopening %s', self.name, self.url)
            self._stop.wait(self._backoff[0])
        finally:
            self._port = None
            with self._lock:
                self._stats.state = DISCONNECTED
            # A frame cut by the disconnect can never complete: count it as dropped.
            before = decoder.counters.bytes_dropped
            decoder.reset()
            with self._lock:
                self._stats.bytes_dropped += decoder.counters.bytes_dropped - before
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass   # already gone

    def _write_outgoing(self, port: serial.SerialBase) -> None:
        if self._poll_outgoing is None:
            return
        for frame in self._poll_outgoing(time.monotonic()):
            port.write(frame)
            with self._lock:
                self._stats.frames_sent += 1

    def _receive(self, decoder, data: bytes) -> int:
        """Decode ``data``, hand on its messages; return how many good frames it completed."""
        now, good = time.monotonic(), 0
        before = decoder.counters.bytes_dropped
        items = decoder.feed(data)
        with self._lock:
            self._stats.bytes_received += len(data)
            self._stats.bytes_dropped += decoder.counters.bytes_dropped - before
        for item in items:
            if isinstance(item, ProtocolError):
                self._count_error(item)
                continue
            try:
                message = self.protocol.decode(item)
                self._on_message(message, now)
            except ProtocolError as error:
                self._count_error(error)
                continue
            good += 1
            with self._lock:
                self._stats.frames_ok += 1
                self._stats.last_rx_time = now
                self._stats.quiet_reads = 0
        return good

    def _count_error(self, error: ProtocolError) -> None:
        with self._lock:
            if isinstance(error, ChecksumError):
                self._stats.bad_checksum += 1
            else:
                self._stats.parse_errors += 1
            self._stats.last_error = str(error)
        logger.debug('%s: dropped a frame: %s', self.name, error)
