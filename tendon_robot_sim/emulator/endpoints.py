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
The device side of a serial line: pseudo-terminal, TCP server or real port.

An endpoint is what an emulated device reads from and writes to; ``path`` is
what the host (the bridge) opens with :func:`serial.serial_for_url`.
:meth:`Endpoint.hang_up` breaks the link the way unplugging a USB adapter does
(the host's next read fails and, until :meth:`Endpoint.come_back`, it cannot
reopen the port); the device then comes back under the same path.

Port specifications (:func:`open_endpoint`):

``pty``
    a new pseudo-terminal; ``path`` is its ``/dev/pts/N`` (changes on disconnect).
``pty:LINK``
    the same, plus a symlink ``LINK`` to it that is moved to the new terminal
    on disconnect, like a ``/dev/serial/by-id`` link (use this for reconnect tests).
    A link already there is replaced unless it points at a pseudo-terminal that exists
    (another emulator's: refused); one left dangling by a crashed run is replaced.
``tcp:[HOST:]PORT``
    a TCP server (one client at a time); the host opens ``socket://HOST:PORT``.
    Port 0 picks a free port.
anything else
    opened with :func:`serial.serial_for_url`, e.g. one end of a null-modem cable.
"""

from __future__ import annotations

import abc
import logging
import os
from pathlib import Path
import select
import socket
import stat
import time
import tty

import serial
from tendon_robot_sim.files.outputs import check_links

logger = logging.getLogger(__name__)

_CHUNK = 4096


class Endpoint(abc.ABC):
    """One device port. Reads and writes never block longer than asked."""

    #: What the host opens.
    path: str

    @abc.abstractmethod
    def read(self, timeout: float) -> bytes:
        """Bytes from the host, waiting at most ``timeout`` [s]; b'' if none."""

    @abc.abstractmethod
    def write(self, data: bytes) -> int:
        """Send to the host; returns the bytes that did not fit (dropped, like a UART)."""

    def publish(self) -> None:
        """Make ``path`` reachable: called once the device answers (default: it already is)."""

    @abc.abstractmethod
    def hang_up(self) -> None:
        """Drop the link now; the host cannot reconnect until :meth:`come_back`."""

    @abc.abstractmethod
    def come_back(self) -> None:
        """Be reachable again at ``path`` after :meth:`hang_up`."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the port for good."""


class PtyEndpoint(Endpoint):
    """
    A pseudo-terminal; the host opens the slave side.

    The emulator keeps its own slave descriptor open, in raw mode: the terminal
    then survives the host closing and reopening it, and the line discipline
    never echoes the device's output back to it before the host has configured
    the port.
    """

    def __init__(self, link: str | None = None):
        self.link = Path(link) if link else None
        if self.link is not None and _links_to_a_terminal(self.link):
            # a link left by a crashed run dangles, unless its terminal's number was reused
            raise FileExistsError(f'{self.link} is a link to {os.readlink(self.link)}, a '
                                  'terminal in use (another emulator serving it?); stop that '
                                  'one, or give another path (or remove the link if nothing '
                                  'of yours serves it)')
        self._open(publish=False)
        if self.link is not None:
            # The folder must take the link: made here, a failure is the caller's, naming the
            # port. It is taken away until the device answers (publish): a host that finds it
            # must not meet a terminal nobody reads yet.
            try:
                self.publish()
            except OSError:
                self._close()
                raise
            self.link.unlink()

    def _open(self, publish: bool = True) -> None:
        if self.link is not None:     # never in a folder reached by a link someone planted
            check_links(self.link.parent)
            for path in (self.link, self._temporary()):
                if path.exists() and not path.is_symlink():   # a file of the user's
                    raise FileExistsError(f'{path} exists and is not a link; give a new path')
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.tty_name = os.ttyname(self._slave)
        self.path = str(self.link) if self.link is not None else self.tty_name
        if publish:
            self.publish()

    def _temporary(self) -> Path:
        return self.link.with_name(self.link.name + '.new')

    def publish(self) -> None:
        """Point the link at the terminal (atomically: the host never sees a missing path)."""
        if self.link is None or self._master is None:
            return
        temporary = self._temporary()
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(self.tty_name)
        temporary.replace(self.link)

    def read(self, timeout: float) -> bytes:
        if self._master is None:
            time.sleep(timeout)
            return b''
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return b''
        try:
            return os.read(self._master, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return b''

    def write(self, data: bytes) -> int:
        if self._master is None:
            return len(data)
        try:
            written = os.write(self._master, data)
        except BlockingIOError:
            written = 0
        return len(data) - written

    def hang_up(self) -> None:
        # Closing the master makes the host's reads fail (EIO); removing the link makes
        # its reopen attempts fail until the new terminal is there.
        self._close()

    def come_back(self) -> None:
        if self._master is None:
            self._open()

    def close(self) -> None:
        self._close()

    def _close(self) -> None:
        if self._master is None:
            return
        os.close(self._master)
        os.close(self._slave)
        self._master = self._slave = None
        if self.link is not None and self.link.is_symlink():
            self.link.unlink()


def _links_to_a_terminal(link: Path) -> bool:
    """Return whether ``link`` is a link to a pseudo-terminal that exists (its master is open)."""
    try:
        return link.is_symlink() and stat.S_ISCHR(link.stat().st_mode) and (
            os.path.realpath(link).startswith('/dev/pts/'))
    except OSError:
        return False


class TcpEndpoint(Endpoint):
    """A TCP server serving one host at a time (a newer client replaces the older)."""

    def __init__(self, host: str = '127.0.0.1', port: int = 0):
        self._client: socket.socket | None = None
        self._server: socket.socket | None = None
        self._address = (host, port)
        self._listen()
        host, port = self._address = self._server.getsockname()[:2]
        self.path = f'socket://{host}:{port}'

    def _listen(self) -> None:
        self._server = socket.create_server(self._address)
        self._server.setblocking(False)

    def read(self, timeout: float) -> bytes:
        if self._server is None:
            time.sleep(timeout)
            return b''
        sockets = [self._server] + ([self._client] if self._client else [])
        ready, _, _ = select.select(sockets, [], [], timeout)
        if self._server in ready:
            client, _ = self._server.accept()
            client.setblocking(False)
            self._drop_client()
            self._client = client
        if self._client is None or self._client not in ready:
            return b''
        try:
            data = self._client.recv(_CHUNK)
        except (BlockingIOError, InterruptedError):
            return b''
        except OSError:
            data = b''
        if not data:
            self._drop_client()   # the host went away
        return data

    def write(self, data: bytes) -> int:
        if self._client is None:
            return len(data)
        try:
            return len(data) - self._client.send(data)
        except BlockingIOError:
            return len(data)
        except OSError:
            self._drop_client()
            return len(data)

    def hang_up(self) -> None:
        # Stop listening too, so the host's reconnects are refused while "unplugged".
        self.close()

    def come_back(self) -> None:
        if self._server is None:
            self._listen()

    def close(self) -> None:
        self._drop_client()
        if self._server is not None:
            self._server.close()
            self._server = None

    def _drop_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class SerialEndpoint(Endpoint):
    """
    A port opened with :func:`serial.serial_for_url` (e.g. one end of a null modem).

    ``path`` is this port, not the host's: the host opens the other end of the cable.
    """

    def __init__(self, url: str, baudrate: int = 115200):
        self.path = url
        self._open_args = {'baudrate': baudrate, 'timeout': 0.0, 'write_timeout': 0.0}
        self._port = serial.serial_for_url(url, **self._open_args)

    def read(self, timeout: float) -> bytes:
        if not self._port.is_open:
            time.sleep(timeout)
            return b''
        self._port.timeout = timeout
        return self._port.read(max(1, self._port.in_waiting))

    def write(self, data: bytes) -> int:
        if not self._port.is_open:
            return len(data)
        try:
            return len(data) - (self._port.write(data) or 0)
        except serial.SerialTimeoutException:
            return len(data)

    def hang_up(self) -> None:
        # A real line has no "unplug": the device just goes silent and deaf.
        self._port.close()

    def come_back(self) -> None:
        if not self._port.is_open:
            self._port.open()

    def close(self) -> None:
        self._port.close()


def open_endpoint(spec: str) -> Endpoint:
    """
    Open an endpoint from a port specification (see the module docstring).

    Raises
    ------
    ValueError
        The specification cannot be used; the message says why.

    """
    try:
        if spec == 'pty':
            return PtyEndpoint()
        if spec.startswith('pty:'):
            return PtyEndpoint(spec[4:])
        if spec.startswith('tcp:'):
            host, _, port = spec[4:].rpartition(':')
            if not (port.isascii() and port.isdigit() and int(port) <= 65535):
                raise ValueError(f'the TCP port must be a whole number 1..65535 (or 0: any free '
                                 f'one), got {port!r}')
            return TcpEndpoint(host or '127.0.0.1', int(port))
        return SerialEndpoint(spec)
    except (OSError, OverflowError, serial.SerialException, ValueError) as error:
        raise ValueError(f'port {spec!r}: {error}') from None
