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
A hostile client of the view, as a script or another web page would be: raw HTTP and websocket.

It says what it likes in ``Host``, ``Origin`` and ``Cookie``, speaks viser's wire format (zstd
compressed msgpack from the server, msgpack to it) to learn the page's inputs by their labels,
as an attacker reading the page would, and sends any frame: well-formed messages, wrong values,
unknown types, bytes that are not msgpack, text frames. No part of the view is used here.
"""

from __future__ import annotations

import asyncio
import http.client
import threading
import time

import msgspec
import viser
from waiting import TIMEOUT
import websockets
from websockets.asyncio.client import connect
import zstandard

PROTOCOL = f'viser-v{viser.__version__}'


def get(port: int, path: str = '/', headers: dict | None = None) -> tuple[int, dict, str]:
    """GET ``path`` from the view on 127.0.0.1:``port``; return status, headers and body text."""
    connection = http.client.HTTPConnection('127.0.0.1', port, timeout=TIMEOUT)
    try:
        connection.putrequest('GET', path, skip_host='Host' in (headers or {}))
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), \
            response.read().decode('utf-8', 'replace')
    finally:
        connection.close()


def decode(frame: bytes) -> list[dict]:
    """Return the messages of one server frame (viser's layout: two sizes, zstd msgpack)."""
    size = int.from_bytes(frame[:8], 'little')
    compressed = int.from_bytes(frame[8:16], 'little')
    inner = zstandard.ZstdDecompressor().decompress(frame[16:16 + compressed],
                                                    max_output_size=size)
    return list(msgspec.msgpack.decode(inner)['messages'])


class Refused(Exception):
    """The server refused the websocket's opening handshake; ``status`` is its HTTP status."""

    def __init__(self, status: int):
        super().__init__(f'refused with HTTP {status}')
        self.status = status


class HostileClient:
    """
    One websocket to the view on ``at``:``port``, run in a thread of its own.

    ``path`` may carry a token (``/?token=...``); ``headers`` go into the opening handshake
    (``Origin``, ``Host``, ``Cookie``). Raises :class:`Refused` when the handshake is refused.
    What the server sends is kept (:attr:`messages`) and its inputs by label (:meth:`input`).
    """

    def __init__(self, port: int, path: str = '/', headers: dict | None = None,
                 timeout: float = TIMEOUT, at: str = '127.0.0.1'):
        self.messages: list[dict] = []
        self.closed = None          # the close code, once closed
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        try:
            self._ws = self._run(self._open(at, port, path, dict(headers or {})), timeout)
        except BaseException:
            self._stop()
            raise
        self._reader = asyncio.run_coroutine_threadsafe(self._read(), self._loop)

    def _run(self, coroutine, timeout: float = TIMEOUT):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _open(self, at: str, port: int, path: str, headers: dict):
        origin = headers.pop('Origin', None)
        # the Host header is the address's; the connection goes to at:port whatever it says
        host = headers.pop('Host', f'{at}:{port}')
        try:
            return await connect(f'ws://{host}{path}', subprotocols=[PROTOCOL], origin=origin,
                                 additional_headers=headers, max_size=None, compression=None,
                                 open_timeout=TIMEOUT, host=at, port=port)
        except websockets.exceptions.InvalidStatus as error:
            raise Refused(error.response.status_code) from None

    async def _read(self) -> None:
        try:
            async for frame in self._ws:
                if isinstance(frame, bytes):
                    self.messages.extend(decode(frame))
        except websockets.exceptions.ConnectionClosed:
            pass
        self.closed = self._ws.close_code

    def send(self, frame: bytes | str) -> None:
        """Send one raw frame (bytes: binary, str: text)."""
        self._run(self._ws.send(frame))

    def send_message(self, message: dict) -> None:
        """Send one message as the page does (a msgpack map with its ``type``)."""
        self.send(msgspec.msgpack.encode(message))

    def input(self, label: str, timeout: float = TIMEOUT) -> dict:  # noqa: A003 (the page's)
        """Return the (latest) creation message of the page's input labelled ``label``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [m for m in list(self.messages)
                     if isinstance(m.get('props'), dict) and m['props'].get('label') == label
                     and 'uuid' in m]
            if found:
                return found[-1]
            time.sleep(0.02)
        labels = sorted({m['props'].get('label') for m in list(self.messages)
                         if isinstance(m.get('props'), dict)} - {None})
        raise AssertionError(f'no input {label!r} in the page; it has {labels}')

    def updates(self, uuid: str) -> list:
        """Return the values the server sent for the input ``uuid`` (GuiUpdateMessage)."""
        return [m['updates'] for m in list(self.messages)
                if m.get('type') == 'GuiUpdateMessage' and m.get('uuid') == uuid]

    def texts(self) -> list[str]:
        """Return every Markdown text the server sent (created or updated), in order."""
        found = []
        for m in list(self.messages):
            for fields in (m.get('props'), m.get('updates')):
                if isinstance(fields, dict) and isinstance(fields.get('_markdown'), str):
                    found.append(fields['_markdown'])
        return found

    def close(self) -> None:
        try:
            self._run(self._ws.close(), 10.0)
        finally:
            self._stop()

    def _stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10.0)

    def __enter__(self) -> 'HostileClient':
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def camera(width: int = 1000, height: int = 700) -> dict:
    """Return a camera report as a page sends it first (the view counts it a page from then)."""
    return {'type': 'ViewerCameraMessage', 'wxyz': [1.0, 0.0, 0.0, 0.0],
            'position': [0.5, 0.5, 0.5], 'fov': 1.0, 'near': 0.01, 'far': 100.0,
            'image_height': height, 'image_width': width, 'look_at': [0.0, 0.0, 0.0],
            'up_direction': [0.0, 0.0, 1.0]}


def set_value(uuid: str, value) -> dict:
    """Return a page's move of the input ``uuid`` to ``value``."""
    return {'type': 'GuiUpdateMessage', 'uuid': uuid, 'updates': {'value': value}}
