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
Who may load the view's page, and what a page's messages may say (docs/viewer.md, Security).

viser serves the page and its websocket on one port, through the ``websockets`` server: the
page is the HTTP answer of a websocket opening handshake (``process_request``), and every
frame a page sends is read by viser's consumer (``recv``, then msgpack, then the handler of
its type). Any web page in the operator's browser can reach that port: another site's page
opens the websocket with its own ``Origin``; a DNS-rebinding page (its own name resolved to
this machine) sends its own name as ``Host``. So :class:`Guard` sits at those two places:

* **every request** (the page's and the websocket's) is checked before viser answers it
  (:meth:`Guard.refusal`): ``Host`` must be a name of this machine (an IP address,
  ``localhost``, the machine's own names); ``Origin``, when a browser sends one, must be the
  page's own (``http://`` + Host); and where the view needs its token, the request must carry
  it (``?token=`` of the printed address, or the cookie the page got with it). A refusal is
  an HTTP 403 with one line saying why, and a throttled warning;
* **every frame** is checked before viser reads it (:meth:`Guard.problem`): binary msgpack,
  a message type the page sends (:data:`ACCEPTED`; anything else, viser's share-URL request
  included, is refused), each field of the type viser declares, numbers finite, a GUI update
  that sets the ``value`` of one of the page's inputs to a value of that input's kind, a
  gizmo move of the page's gizmo. A bad frame is dropped with a throttled warning; the
  connection stays;
* **every control message** (all but the camera reports) needs the token where the view needs
  it, and, once the view commands real hardware, a page on this machine unless
  ``remote_control`` allows others (:meth:`Guard.may_command`).

The token is needed when the view commands real hardware or listens beyond loopback
(:attr:`Guard.token_required`); it is 32 random URL-safe characters (``secrets``), compared
in constant time.

viser 1.1 offers no hook for any of this. Its server makes one ``websockets`` ``serve()``
call when it starts; :func:`start_server` adds websockets' own extension point to that call,
``create_connection`` (a :class:`GuardedConnection`: its ``handshake`` puts the request check
before viser's ``process_request``, its ``recv`` the frame check before viser's consumer).
The inputs and gizmos of the page are looked up in viser's own registries
(:func:`_page_input`, :func:`_page_gizmo`).
"""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
import dataclasses
import functools
import hmac
import http
import ipaddress
import math
import secrets
import socket
import threading
import typing
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit
import weakref

import msgspec
import viser
from viser import _messages
import websockets.asyncio.server
from websockets.asyncio.server import ServerConnection
from websockets.protocol import State

TOKEN_BYTES = 24          # 32 URL-safe characters
# The messages a page of the view sends, and whether each one commands (needs the right to).
ACCEPTED: dict[str, bool] = {
    'ViewerCameraMessage': False,               # where the page's camera is: watching only
    'GuiUpdateMessage': True,                   # a slider, field, dropdown or button
    'TransformControlsUpdateMessage': True,     # the tip target's gizmo, dragged
    'TransformControlsDragStartMessage': True,
    'TransformControlsDragEndMessage': True,
}
MESSAGE_TYPES = {cls.__name__: cls for cls in _messages.Message.get_subclasses()}
# Close code of a page that may no longer command (policy violation, RFC 6455).
POLICY_VIOLATION = 1008
Warn = Callable[[str, str], object]


def is_loopback(host: str) -> bool:
    """Tell whether the address ``host`` (a name or an IP) reaches this machine only."""
    try:
        return ipaddress.ip_address(host.strip('[]')).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return False
    return bool(addresses) and all(_loopback_ip(a) for a in addresses)


def _loopback_ip(address: str) -> bool:
    ip = ipaddress.ip_address(address.split('%')[0])
    mapped = getattr(ip, 'ipv4_mapped', None)
    return (mapped or ip).is_loopback


def machine_names() -> set[str]:
    """Return the names this machine goes by: ``localhost``, its host name, FQDN, ``.local``."""
    name = socket.gethostname().lower()
    names = {'localhost', name, f'{name}.local'}
    try:
        names.add(socket.getfqdn().lower())
    except OSError:
        pass
    return names - {''}


def _host_name(host: str) -> str:
    """Return the name of a ``Host`` value (no port, no IPv6 brackets), lowercased."""
    host = host.strip().lower()
    if host.startswith('['):
        return host[1:].partition(']')[0]
    return host.rpartition(':')[0] if host.count(':') == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _header(request, name: str) -> str | None:
    """Return the one value of header ``name``; '' when it is given twice; None when absent."""
    values = request.headers.get_all(name)
    return None if not values else values[0] if len(values) == 1 else ''


class Guard:
    """
    The checks of one view's page: requests, frames, control; ``warn(kind, text)`` says a refusal.

    ``host`` is the address the page is served on. ``hardware``: the view commands real
    hardware (the token is needed from the start; :meth:`commands_hardware` turns it on
    later); ``remote_control``: pages of other machines may then command too.
    """

    def __init__(self, host: str, warn: Warn, hardware: bool = False,
                 remote_control: bool = False):
        self.host = host
        self.loopback = is_loopback(host)
        self.warn = warn
        self.hardware = hardware
        self.remote_control = remote_control
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.names = machine_names()
        self.server: viser.ViserServer | None = None
        self.connections: weakref.WeakSet[ServerConnection] = weakref.WeakSet()
        self.installed = False      # viser's serve() took the guarded connections

    @property
    def token_required(self) -> bool:
        """Whether a request and a control message need the token."""
        return self.hardware or not self.loopback

    def cookie(self, port: int) -> str:
        """Return the name of the token's cookie: one per port (a cookie is per host only)."""
        return f'tendon_robot_sim_view_{port}'

    # ------------------------------------------------------------------ requests

    def refusal(self, connection: ServerConnection, request) -> str | None:
        """Say why the request (the page's, or the websocket's) is refused; None: it is not."""
        host = _header(request, 'Host')
        if not host or not self.serves(_host_name(host)):
            return (f'Host {host!r} is not a name of this machine (a page of another site '
                    'that resolved its own name here?)')
        origin = _header(request, 'Origin')
        if origin is not None and origin.lower() != f'http://{host}'.lower():
            return f"Origin {origin!r} is not the page of this view (another site's page?)"
        if self.token_required and not self.authenticated(connection, request):
            return ('no valid token: open the address the view printed at start '
                    '(http://...?token=...)')
        return None

    def serves(self, name: str) -> bool:
        """Whether ``name`` (of a Host header) names this machine: an IP, or one of its names."""
        return _is_ip(name) or name in self.names

    def authenticated(self, connection: ServerConnection, request) -> bool:
        """Whether ``request`` carries the token (its ``?token=``, or its cookie)."""
        given = parse_qs(urlsplit(request.path).query).get('token', [])
        cookie = self.cookie(connection.local_address[1])
        for header in request.headers.get_all('Cookie'):
            for pair in header.split(';'):
                name, _, value = pair.strip().partition('=')
                if name == cookie:
                    given.append(value)
        return any(hmac.compare_digest(value.encode('utf-8', 'replace'),
                                       self.token.encode()) for value in given)

    # ------------------------------------------------------------------ frames

    def problem(self, connection: ServerConnection, frame) -> tuple[str, str] | None:
        """
        Say why a page's frame is refused, as (kind, text); None: viser may read it.

        ``kind`` is one of a fixed few (what the throttle keys on: never a name a page chose).
        """
        if isinstance(frame, str):
            return 'text frame', 'a text frame (a page of the view sends binary msgpack)'
        try:
            data = msgspec.msgpack.decode(frame)
        except msgspec.DecodeError as error:
            return 'not msgpack', f'bytes that are not msgpack ({error})'
        if not isinstance(data, dict):
            return 'not a map', f'msgpack that is not a message (a map): a {type(data).__name__}'
        if not isinstance(data.get('type'), str):
            return 'no type', 'a map without a message "type"'
        name = data['type']
        if name not in ACCEPTED:
            if name in MESSAGE_TYPES:
                return 'not taken', f'a message this view does not take: {_shown(name)}'
            return 'unknown type', f'an unknown message type: {_shown(name)}'
        problem = _fields(MESSAGE_TYPES[name], data) or self._meaning(name, data)
        if problem is not None:
            return f'{name}: {problem[0]}', f'{name}: {problem[1]}'
        if ACCEPTED[name]:
            refused = self.may_command(connection)
            if refused is not None:
                return 'control', f'{name} refused: {refused}'
        return None

    def _meaning(self, name: str, data: dict) -> tuple[str, str] | None:
        """Say (what, why) a well-typed message does not fit this page; None: it fits."""
        if name == 'GuiUpdateMessage':
            return self._gui_update(data['uuid'], data['updates'])
        if name.startswith('TransformControls'):
            if _page_gizmo(self.server, data['name']) is None:
                return 'name', f'name: no gizmo {_shown(data["name"])} in this page'
        if name == 'ViewerCameraMessage':
            if not 0.0 < data['fov'] < math.pi or not 0.0 < data['near'] < data['far'] \
                    or data['image_width'] < 0 or data['image_height'] < 0:
                return 'range', 'fov, near, far or image size out of range'
        return None

    def _gui_update(self, uuid: str, updates: dict) -> tuple[str, str] | None:
        handle = _page_input(self.server, uuid)
        if handle is None:
            return 'uuid', f'uuid: no input {_shown(uuid)} in this page'
        if list(updates) != ['value']:
            return 'property', (f'updates: a page sets the value of an input, not '
                                f'{_shown(sorted(map(str, updates)))}')
        label = getattr(handle, 'label', '')
        problem = _value_problem(updates['value'], handle.value,
                                 getattr(handle, 'options', None))
        return None if problem is None else ('value', f'value of {label!r}: {problem}')

    def may_command(self, connection: ServerConnection) -> str | None:
        """Say why the page behind ``connection`` may not command; None: it may."""
        if self.token_required and not self.authenticated(connection, connection.request):
            return ('the page was opened without the token (open the address the view '
                    'printed at start)')
        if self.hardware and not self.remote_control and \
                not _loopback_ip(connection.remote_address[0]):
            return ('a page of another machine commands real hardware only with the view '
                    'parameter remote_control:=true')
        return None

    def refused(self, connection: ServerConnection, kind: str, text: str) -> None:
        """Say a refusal (throttled per kind) with the peer's address."""
        peer = connection.remote_address
        where = f'{peer[0]}:{peer[1]}' if peer else 'a closed connection'
        self.warn(f'view refused: {kind}', f'refused from {where}: {text}')

    # ------------------------------------------------------------------ hardware

    def commands_hardware(self) -> bool:
        """
        Mark that the view now commands real hardware; True if that changed anything.

        From then on every request and control message needs the token; the pages opened
        without it are closed (they cannot reconnect without it).
        """
        if self.hardware:
            return False
        self.hardware = True
        if self.server is not None:
            self.server.get_event_loop().call_soon_threadsafe(self._close_unauthenticated)
        return True

    def _close_unauthenticated(self) -> None:
        """Close the pages opened without the token (in the event loop's thread)."""
        for connection in list(self.connections):
            if not self.authenticated(connection, connection.request):
                asyncio.ensure_future(connection.close(
                    POLICY_VIOLATION, 'this view now commands real hardware: open it with '
                    'its token'))


def _shown(value: Any, limit: int = 60) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters (a page chose it)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + '...'


@functools.lru_cache(maxsize=None)
def _schema(cls: type) -> tuple[tuple[str, Callable[[Any], str | None], bool], ...]:
    """Return (name, check, required) of each field a message of type ``cls`` is built from."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _check_of(hints[f.name]), f.default is dataclasses.MISSING
                  and f.default_factory is dataclasses.MISSING)
                 for f in dataclasses.fields(cls) if f.init and f.name in hints)


def _fields(cls: type, data: dict) -> tuple[str, str] | None:
    """Say (what, why) a field of ``data`` does not fit the dataclass ``cls``; None: all fit."""
    schema = _schema(cls)
    unknown = set(data) - {'type'} - {name for name, _, _ in schema}
    if unknown:
        return 'fields', f'unknown field {_shown(sorted(map(str, unknown))[0])}'
    for name, check, required in schema:
        if name not in data:
            if required:
                return 'fields', f'missing field {name!r}'
            continue
        problem = check(data[name])
        if problem is not None:
            return 'fields', f'field {name}: {problem}'
    return None


@functools.lru_cache(maxsize=None)
def _check_of(hint: Any) -> Callable[[Any], str | None]:
    """
    Return a check of a value (as msgpack gives it) against the type ``hint``.

    The check says why the value does not fit, or returns None.
    """
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return lambda value: None
    if hint is float:
        return _number_problem
    if hint in (int, str, bool):
        return lambda value: None if type(value) is hint else \
            f'{_shown(value)} is not {hint.__name__}'
    if origin is tuple:
        return _tuple_check(arguments)
    if origin is dict:
        return lambda value: None if isinstance(value, dict) and all(
            isinstance(k, str) for k in value) else f'{_shown(value)} is not a map of names'
    return lambda value: f'a field of type {hint} this view does not check'


def _tuple_check(arguments: tuple) -> Callable[[Any], str | None]:
    """Return the check of a ``Tuple[arguments]`` (fixed, or ``T, ...``)."""
    repeated = arguments[-1:] == (Ellipsis,)
    checks = tuple(map(_check_of, arguments[:1] if repeated else arguments))

    def check(value: Any) -> str | None:
        if not isinstance(value, (list, tuple)):
            return f'{_shown(value)} is not a list'
        if not repeated and len(value) != len(checks):
            return f'{len(value)} items, not {len(checks)}'
        for item, item_check in zip(value, checks * len(value) if repeated else checks):
            problem = item_check(item)
            if problem is not None:
                return problem
        return None
    return check


def _number_problem(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f'{_shown(value)} is not a number'
    if not math.isfinite(value):
        return f'{value} is not finite'
    return None


def _value_problem(value: Any, current: Any, options) -> str | None:
    """Say why ``value`` cannot be the value of an input whose value is ``current``."""
    if isinstance(current, bool):
        return None if isinstance(value, bool) else f'{_shown(value)} is not true or false'
    if isinstance(current, (int, float)):
        return _number_problem(value)
    if isinstance(current, str):
        if not isinstance(value, str):
            return f'{_shown(value)} is not text'
        if options is not None and value not in options:
            return f'{_shown(value)} is not one of {list(options)}'
        return None
    if isinstance(current, tuple):
        if not isinstance(value, (list, tuple)) or len(value) != len(current):
            return f'{_shown(value)} is not {len(current)} numbers'
        return next((p for p in map(_number_problem, value) if p is not None), None)
    return f'an input of a kind this view does not take ({type(current).__name__})'


def _page_input(server: viser.ViserServer | None, uuid: str):
    """Return the page's GUI input ``uuid`` (viser's registry), or None."""
    if server is None:
        return None
    handle = server.gui._gui_input_handle_from_uuid.get(uuid)
    return None if handle is None or handle._impl.removed else handle


def _page_gizmo(server: viser.ViserServer | None, name: str):
    """Return the page's transform controls called ``name`` (viser's registry), or None."""
    if server is None:
        return None
    return server.scene._handle_from_transform_controls_name.get(name)


class GuardedConnection(ServerConnection):
    """A websocket connection of the view: the request and every frame pass :attr:`guard`."""

    guard: Guard

    async def handshake(self, process_request=None, process_response=None, *args,
                        **kwargs) -> None:
        guard = self.guard

        async def checked(connection: ServerConnection, request):
            refusal = guard.refusal(connection, request)
            if refusal is not None:
                guard.refused(connection, 'request', refusal)
                return connection.respond(http.HTTPStatus.FORBIDDEN,
                                          f'tendon_robot_sim view: refused: {refusal}\n')
            try:    # viser's page server: a path it cannot look up raised (a 500 before)
                response = process_request(connection, request) if process_request else None
                if asyncio.iscoroutine(response):
                    response = await response
            except Exception as error:   # noqa: B902 (any: the request fails, not the view)
                guard.refused(connection, 'request', f'{_shown(request.path)} failed: {error}')
                return connection.respond(http.HTTPStatus.NOT_FOUND, 'not found\n')
            if response is not None and 'token' in parse_qs(urlsplit(request.path).query) \
                    and guard.authenticated(connection, request):
                # the page's websocket (same host, the query stripped) carries the cookie
                response.headers['Set-Cookie'] = (
                    f'{guard.cookie(connection.local_address[1])}={guard.token}; Path=/; '
                    'HttpOnly; SameSite=Strict')
            return response
        await super().handshake(checked, process_response, *args, **kwargs)
        if self.protocol.state is State.OPEN:
            guard.connections.add(self)

    async def recv(self, decode: bool | None = None):
        while True:
            frame = await super().recv(decode)
            problem = self.guard.problem(self, frame)
            if problem is None:
                return frame
            self.guard.refused(self, *problem)


_STARTING = threading.Lock()   # one viser server starts at a time: serve() is intercepted


@contextmanager
def _quiet_viser():
    """Keep viser's start-up banner off the terminal: it prints the address without the token."""
    import rich
    console = rich.get_console()
    quiet, console.quiet = console.quiet, True
    try:
        yield
    finally:
        console.quiet = quiet


def start_server(guard: Guard, host: str, port: int, label: str) -> viser.ViserServer:
    """
    Start viser's server on ``host:port`` with ``guard`` on every request and frame.

    viser's ``WebsockServer`` calls ``websockets.asyncio.server.serve()`` in its thread while
    the constructor waits for the port to be bound (again on the next port when one is
    taken); for that time the call gets ``create_connection``, the guarded connection class.

    Raises
    ------
    RuntimeError
        viser started without calling ``serve()`` (another viser version): the view does not
        run unguarded.

    """
    connection = type('GuardedConnection', (GuardedConnection,), {'guard': guard})
    serve = websockets.asyncio.server.serve

    def guarded(*args, **kwargs):
        guard.installed = True
        return serve(*args, **kwargs, create_connection=connection)
    with _STARTING, _quiet_viser():
        websockets.asyncio.server.serve = guarded
        try:
            server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
        finally:
            websockets.asyncio.server.serve = serve
    if not guard.installed:
        server.stop()
        raise RuntimeError(f'viser {viser.__version__} did not start its server through '
                           'websockets.asyncio.server.serve: the view cannot guard it')
    guard.server = server
    return server
