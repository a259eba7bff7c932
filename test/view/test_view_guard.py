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
The view's guard against hostile clients, walked class by class (issue 37), without ROS.

Real pages (:class:`ViewPage`, viser's server) and real clients: raw HTTP requests and raw
websocket frames (``hostile_view``), saying what they like in Host, Origin and Cookie. Walked:
every kind of request a foreign page or script makes (Host, Origin, token, for the page and
for its websocket); every kind of bad frame (not binary, not msgpack, not a message, every
message type viser knows that the page does not send, every field of every type the page
does send); every input of a live page and of a bag's page with every kind of wrong value.
Each refusal is one warning and nothing else: no callback runs, nothing is sent, the
connection stays, no traceback.
"""

import dataclasses
import ipaddress
import math
import socket
from types import SimpleNamespace
import typing

from hostile_view import camera, get, HostileClient, Refused, set_value
import msgspec
import numpy as np
from pages import make_page, Page, Recorder
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.registry import input_limits
from tendon_robot_sim.ros.throttle import FaultWarnings
from tendon_robot_sim.view import guard as guard_module
from tendon_robot_sim.view.guard import ACCEPTED, MESSAGE_TYPES
from tendon_robot_sim.view.inputs import command_of
from tendon_robot_sim.view.page import ViewPage
import waiting


@pytest.fixture(scope='module')
def live():
    page = make_page()
    yield page
    page.page.close()


@pytest.fixture()
def client(live):
    """Connect a client as the page itself would (same origin), counted as a page."""
    with HostileClient(live.page.port,
                       headers={'Origin': f'http://127.0.0.1:{live.page.port}'}) as page:
        page.send_message(camera())
        waiting.wait_for(lambda: live.page.clients(), 'the client counted as a page')
        yield page


def settle(page: Page, client: HostileClient, start: int, count: int) -> list:
    """
    Send a good camera report and wait until ``count`` refusals are said since ``start``.

    Frames of one connection are handled in order: once the refusals are said, the frames
    before were all read.
    """
    return waiting.wait_for(lambda: len(page.said.since(start)) >= count and
                            page.said.since(start), f'{count} refusals')


def nothing_done(page: Page) -> tuple:
    return (list(page.sent), list(page.targets), list(page.calls), list(page.played))


# ------------------------------------------------------------------ requests


def foreign_requests(port: int) -> list:
    """Return (what, headers) of requests the view refuses, whatever token they carry."""
    return [
        ('a DNS-rebinding name', {'Host': f'attacker.example:{port}'}),
        ('a rebinding name without port', {'Host': 'attacker.example'}),
        ("another site's page", {'Origin': 'https://attacker.example'}),
        ('a page of another port of this machine', {'Origin': f'http://127.0.0.1:{port + 1}'}),
        ('a sandboxed page', {'Origin': 'null'}),
        ('the right origin over https', {'Origin': f'https://127.0.0.1:{port}'}),
        ('a rebinding page, Host and Origin alike',
         {'Host': f'attacker.example:{port}', 'Origin': f'http://attacker.example:{port}'}),
    ]


def own_requests(port: int) -> list:
    """Return (what, headers) of requests of this machine's own pages and scripts."""
    return [('a script (no Origin)', {}),
            ('the page itself', {'Origin': f'http://127.0.0.1:{port}'}),
            ('localhost', {'Host': f'localhost:{port}', 'Origin': f'http://localhost:{port}'}),
            ('IPv6 loopback', {'Host': f'[::1]:{port}', 'Origin': f'http://[::1]:{port}'}),
            ('an SSH tunnel on another port', {'Host': 'localhost:9999',
                                               'Origin': 'http://localhost:9999'}),
            ("the machine's name", {'Host': f'{socket.gethostname()}:{port}'})]


def test_foreign_pages_get_neither_the_page_nor_the_websocket(live):
    port = live.page.port
    for what, headers in foreign_requests(port):
        start = len(live.said.said)
        status, _, body = get(port, '/', headers)
        assert status == 403 and 'refused' in body, what
        with pytest.raises(Refused) as refused:
            HostileClient(port, headers=dict(headers)).close()
        assert refused.value.status == 403, what
        assert len(live.said.since(start)) == 2, (what, live.said.since(start))
        assert all(kind == 'view refused: request' for kind, _ in live.said.since(start))
    for what, headers in own_requests(port):
        assert get(port, '/', headers)[0] == 200, what
        HostileClient(port, headers=dict(headers)).close()


def test_a_path_the_page_server_cannot_look_up_is_not_found(live):
    """Viser's file lookup raised on a name too long (an HTTP 500 before)."""
    start = len(live.said.said)
    assert get(live.page.port, '/' + 'a' * 5000)[0] == 404
    assert get(live.page.port, '/%00')[0] == 404
    assert [kind for kind, _ in live.said.since(start)] == ['view refused: request']


def test_a_request_with_two_hosts_or_two_origins_is_refused(live):
    port = live.page.port
    for request in (f'GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: attacker.example\r\n\r\n',
                    f'GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}'
                    '\r\nOrigin: https://attacker.example\r\n\r\n',
                    'GET / HTTP/1.1\r\n\r\n', 'GET / HTTP/1.1\r\nHost: \r\n\r\n'):
        with socket.create_connection(('127.0.0.1', port), timeout=waiting.TIMEOUT) as raw:
            raw.sendall(request.encode())
            answer = raw.recv(4096).decode('latin-1')
        assert answer.split()[1] in ('400', '403'), (request, answer[:200])


@pytest.fixture(scope='module')
def hardware():
    """Serve a page of real hardware: the token from the start."""
    page = make_page(hardware=True)
    yield page
    page.page.close()


def test_a_view_of_hardware_wants_its_token_for_the_page_and_the_websocket(hardware):
    port, token = hardware.page.port, hardware.page.guard.token
    cookie = hardware.page.guard.cookie(port)
    wrong = token[:-1] + ('y' if token.endswith('x') else 'x')   # a random token may end in x
    for what, path, headers in (
            ('no token', '/', {}),
            ('a wrong token', f'/?token={wrong}', {}),
            ('a token cut short', f'/?token={token[:-1]}', {}),
            ('an empty token', '/?token=', {}),
            ("another view's cookie", '/', {'Cookie': f'tendon_robot_sim_view_1={token}'}),
            ('a wrong cookie', '/', {'Cookie': f'{cookie}=nope'})):
        assert get(port, path, headers)[0] == 403, what
        with pytest.raises(Refused):
            HostileClient(port, path, dict(headers)).close()
    status, response, _ = get(port, f'/?token={token}')
    assert status == 200
    # the page's websocket (its address without the query) carries the token in a cookie
    assert response['Set-Cookie'] == f'{cookie}={token}; Path=/; HttpOnly; SameSite=Strict'
    assert get(port, '/', {'Cookie': f'other=1; {cookie}={token}'})[0] == 200
    # a foreign page refused even with the token (a token leaks; an origin cannot be faked)
    for _, headers in foreign_requests(port):
        assert get(port, f'/?token={token}', headers)[0] == 403
    with HostileClient(port, f'/?token={token}') as page:
        page.send_message(camera())
        page.send_message(set_value(page.input('t0 [N]')['uuid'], 1.0))
        waiting.wait_for(lambda: hardware.sent == [('t0', 1.0)], 'the command')
    assert hardware.page.address.endswith(f':{port}/?token={token}')


def test_once_the_view_commands_hardware_pages_without_the_token_are_closed():
    """Close the pages opened without the token once the view finds a hardware bridge."""
    page = make_page()
    try:
        port, token = page.page.port, page.page.guard.token
        with HostileClient(port) as without, HostileClient(port, f'/?token={token}') as with_:
            for client in (without, with_):
                client.send_message(camera())
            slider = without.input('t0 [N]')['uuid']
            without.send_message(set_value(slider, 1.0))
            waiting.wait_for(lambda: page.sent == [('t0', 1.0)], 'the command before')
            assert page.page.guard.commands_hardware()
            assert not page.page.guard.commands_hardware()     # once
            waiting.wait_for(lambda: without.closed == guard_module.POLICY_VIOLATION,
                             'the page without the token closed')
            assert get(port, '/')[0] == 403
            with_.send_message(set_value(slider, 2.0))
            waiting.wait_for(lambda: page.sent[-1:] == [('t0', 2.0)], 'the command after')
    finally:
        page.page.close()


def outside_address() -> str | None:
    """Return an address of this machine that is not loopback (none sent), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(('192.0.2.1', 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback else address


def test_a_page_of_another_machine_commands_hardware_only_with_remote_control():
    address = outside_address()
    if address is None:
        pytest.skip('this machine has no address beyond loopback')
    for remote_control in (False, True):
        page = make_page(host='0.0.0.0', hardware=True, remote_control=remote_control)
        try:
            token = page.page.guard.token
            with HostileClient(page.page.port, f'/?token={token}',
                               {'Host': f'{address}:{page.page.port}'}, at=address) as far:
                far.send_message(camera())
                start = len(page.said.said)
                far.send_message(set_value(far.input('t0 [N]')['uuid'], 1.0))
                if remote_control:
                    waiting.wait_for(lambda: page.sent == [('t0', 1.0)], 'the command')
                else:
                    said = waiting.wait_for(lambda: page.said.since(start), 'the refusal')
                    assert said[0][0] == 'view refused: control'
                    assert 'remote_control' in said[0][1]
                    assert page.sent == []
        finally:
            page.page.close()


# ------------------------------------------------------------------ frames

def test_frames_that_are_no_message_give_a_warning_each_and_nothing_else(live, client):
    before = nothing_done(live)
    frames = {'text frame': ['{"type": "GuiUpdateMessage"}', ''],
              'not msgpack': [b'\xc1', b'\x92\x01', b'', b'\xff' * 100],
              'not a map': [msgspec.msgpack.encode(v) for v in ([1, 2], 3, 'x', None, 1.5)],
              'no type': [msgspec.msgpack.encode(v) for v in (
                  {}, {'uuid': 'x'}, {'type': 3}, {'type': None}, {'type': ['GuiUpdateMessage']},
                  {1: 'GuiUpdateMessage'})],
              'unknown type': [msgspec.msgpack.encode({'type': name}) for name in (
                  'NoSuchMessage', '', '__class__', 'Message', 'x' * 10_000)]}
    for kind, cases in frames.items():
        start = len(live.said.said)
        for frame in cases:
            client.send(frame)
        said = settle(live, client, start, len(cases))
        assert [k for k, _ in said] == [f'view refused: {kind}'] * len(cases), said
        assert max(len(text) for _, text in said) < 400     # a page's text is cut
    assert nothing_done(live) == before and client.closed is None


def test_every_message_type_the_page_does_not_send_is_refused(live, client):
    """Each of viser's message types but the page's own: the share-URL request included."""
    before = nothing_done(live)
    others = sorted(set(MESSAGE_TYPES) - set(ACCEPTED))
    assert 'ShareUrlRequest' in others and len(others) > 50
    start = len(live.said.said)
    for name in others:
        client.send_message({'type': name})
    said = settle(live, client, start, len(others))
    assert [k for k, _ in said] == ['view refused: not taken'] * len(others)
    assert live.page.server._share_tunnel is None      # no public tunnel was asked for
    assert nothing_done(live) == before and client.closed is None


def wrong_values(hint) -> list:
    """Values that do not fit the type ``hint`` of a field of a message."""
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if hint is float:
        return ['abc', None, True, math.nan, math.inf, -math.inf, [1.0], {'a': 1}]
    if hint in (int, str, bool):
        return [v for v in ('abc', 1.5, None, [1], True, 3) if type(v) is not hint]
    if origin is tuple:
        size = len(arguments) if arguments[-1:] != (Ellipsis,) else 2
        good = [1.0] * size
        return ['abc', None, good[:-1], good + [1.0], [math.nan] + good[1:],
                ['abc'] + good[1:], {'a': 1}]
    if origin is dict:
        return ['abc', [1, 2], None, {1: 2}]
    raise AssertionError(f'no wrong values for {hint}')


def good_message(name: str, live: Page) -> dict:
    """Return a message of type ``name`` that the page takes as it is."""
    gizmo = '/tip_target_gizmo'
    return {'ViewerCameraMessage': camera(),
            'GuiUpdateMessage': {'type': 'GuiUpdateMessage', 'uuid': 'set below',
                                 'updates': {'value': 1.0}},
            'TransformControlsUpdateMessage': {
                'type': 'TransformControlsUpdateMessage', 'name': gizmo,
                'wxyz': [1.0, 0.0, 0.0, 0.0], 'position': [0.0, 0.0, 0.2], 'owner': ''},
            'TransformControlsDragStartMessage': {
                'type': 'TransformControlsDragStartMessage', 'name': gizmo, 'owner': ''},
            'TransformControlsDragEndMessage': {
                'type': 'TransformControlsDragEndMessage', 'name': gizmo, 'owner': ''}}[name]


def test_every_field_of_every_message_the_page_sends_is_checked(live, client):
    """Missing, unknown and wrong-typed fields of each accepted type, walked from viser's own."""
    before = nothing_done(live)
    slider = client.input('t0 [N]')['uuid']
    cases = []
    for name in ACCEPTED:
        good = good_message(name, live)
        if name == 'GuiUpdateMessage':
            good['uuid'] = slider
        hints = typing.get_type_hints(MESSAGE_TYPES[name])
        cases.append(dict(good, no_such_field=1))
        for field in dataclasses.fields(MESSAGE_TYPES[name]):
            if not field.init or field.name not in hints:
                continue
            if field.default is dataclasses.MISSING:
                cases.append({k: v for k, v in good.items() if k != field.name})
            cases += [dict(good, **{field.name: value}) for value in wrong_values(
                hints[field.name])]
    start = len(live.said.said)
    for message in cases:
        client.send_message(message)
    said = settle(live, client, start, len(cases))
    assert len(said) == len(cases)
    assert all(kind.endswith(': fields') for kind, _ in said), said
    assert nothing_done(live) == before and client.closed is None


# The inputs of the live page (a hardware bridge, a bag and a target): what page_inputs waits for
LABELS = {'t0 [N]', 'Stop', 'Resume', 'time [s]', 'speed', 'Send target', 'Play', 'target [m]',
          'All to their lowest', 'Frame the robot'}


def page_inputs(client: HostileClient) -> dict:
    """Return the page's inputs as a page learns them: {label: creation message}."""
    def learnt() -> dict | None:
        inputs = {}
        for message in list(client.messages):
            props = message.get('props')
            if isinstance(props, dict) and 'label' in props and 'uuid' in message and \
                    message.get('type') != 'GuiFolderMessage':
                inputs[props['label']] = message
        return inputs if LABELS <= set(inputs) else None
    # they arrive after the connection is counted, in the client's own thread
    return waiting.wait_for(learnt, "the page's inputs")


def bad_values(message: dict) -> list:
    """Values that an input of the kind of ``message`` (its creation message) never takes."""
    kind = message['type']
    if kind == 'GuiButtonMessage':
        return ['abc', 1, 1.0, None, [True], 'true']
    if kind in ('GuiSliderMessage', 'GuiNumberMessage'):
        return ['abc', '1.0', None, True, math.nan, math.inf, -math.inf, [1.0], {'v': 1.0}]
    if kind == 'GuiVector3Message':
        return ['abc', 1.0, [1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [1.0, 'abc', 3.0],
                [math.nan, 0.0, 0.0], [0.0, math.inf, 0.0], None, [True, 0.0, 0.0]]
    if kind == 'GuiDropdownMessage':
        return ['abc', '1e9', '', 1.0, None, ['1'], '1 ']
    raise AssertionError(f'an input of the page that the walk does not know: {kind}')


def test_every_input_of_the_page_refuses_every_kind_of_wrong_value(live, client):
    """Sliders, the target field, every button, the playback's time and speed."""
    inputs = page_inputs(client)
    kinds = {m['type'] for m in inputs.values()}
    assert kinds == {'GuiSliderMessage', 'GuiButtonMessage', 'GuiVector3Message',
                     'GuiDropdownMessage'}, kinds
    before = nothing_done(live)
    start = len(live.said.said)
    count = 0
    for label, message in inputs.items():
        for value in bad_values(message):
            client.send_message(set_value(message['uuid'], value))
            count += 1
        for updates in ({'min': 0.0}, {'value': 1.0, 'max': 1e9}, {'disabled': True}, {},
                        {'visible': False}):
            client.send_message({'type': 'GuiUpdateMessage', 'uuid': message['uuid'],
                                 'updates': updates})
            count += 1
    for uuid in ('no-such-input', '', 'x' * 1000):
        client.send_message(set_value(uuid, 1.0))
        count += 1
    said = settle(live, client, start, count)
    assert len(said) == count
    assert {kind for kind, _ in said} == {'view refused: GuiUpdateMessage: value',
                                          'view refused: GuiUpdateMessage: property',
                                          'view refused: GuiUpdateMessage: uuid'}
    assert nothing_done(live) == before and client.closed is None
    # the values and properties are where they were
    slider = live.page.commands.sliders['t0']
    assert (slider.min, slider.max, slider.disabled, slider.visible) == (
        0.0, float(live.page.commands.command.high[0]), False, True)


def test_the_gizmo_and_the_camera_take_only_what_a_page_sends(live, client):
    before = nothing_done(live)
    start = len(live.said.said)
    messages = [dict(good_message('TransformControlsUpdateMessage', live), name='/base'),
                dict(good_message('TransformControlsDragStartMessage', live), name='nope'),
                dict(camera(), fov=0.0), dict(camera(), fov=4.0), dict(camera(), near=-1.0),
                dict(camera(), near=10.0, far=1.0), dict(camera(), image_width=-5)]
    for message in messages:
        client.send_message(message)
    said = settle(live, client, start, len(messages))
    assert [k for k, _ in said] == ['view refused: TransformControlsUpdateMessage: name',
                                    'view refused: TransformControlsDragStartMessage: name'] + \
        ['view refused: ViewerCameraMessage: range'] * 5
    assert nothing_done(live) == before and client.closed is None


def test_after_every_refusal_the_page_still_commands(live, client):
    """Take what a real page sends: each control once, on the same kind of connection."""
    inputs = page_inputs(client)
    start = len(live.said.said)
    client.send_message(set_value(inputs['t0 [N]']['uuid'], 2.0))
    waiting.wait_for(lambda: ('t0', 2.0) in live.sent, 'the slider')
    client.send_message(set_value(inputs['Stop']['uuid'], True))
    waiting.wait_for(lambda: 'stop' in live.calls, 'Stop')
    client.send_message(set_value(inputs['target [m]']['uuid'], [0.0, 0.01, 0.2]))
    client.send_message(set_value(inputs['Send target']['uuid'], True))
    waiting.wait_for(lambda: live.targets, 'the target')
    np.testing.assert_allclose(live.targets[-1], [0.0, 0.01, 0.2])
    client.send_message(set_value(inputs['time [s]']['uuid'], 0.5))
    client.send_message(set_value(inputs['speed']['uuid'], '2'))
    waiting.wait_for(lambda: ('speed', 2.0) in live.played and ('seek', 0.5) in live.played,
                     'the playback moved')
    client.send_message(good_message('TransformControlsDragStartMessage', live))
    client.send_message(dict(good_message('TransformControlsUpdateMessage', live),
                             position=[0.0, 0.02, 0.2]))
    client.send_message(good_message('TransformControlsDragEndMessage', live))
    waiting.wait_for(lambda: len(live.targets) >= 2, 'the dragged target')
    assert live.said.since(start) == []


def test_a_flood_of_one_fault_is_one_warning_a_period_and_hides_no_other(client, live):
    """300 bad slider values: one warning; a text frame between them still says its own."""
    said = []
    warn = FaultWarnings(SimpleNamespace(warning=said.append), 60.0)
    recorder, live.page.guard.warn = live.page.guard.warn, warn
    try:
        slider = client.input('t0 [N]')['uuid']
        for i in range(300):
            client.send_message(set_value(slider, 'abc'))
            if i == 150:
                client.send('text')
        client.send_message({'type': 'NoSuchMessage'})
        waiting.wait_for(lambda: len(said) >= 3, 'the warnings')
    finally:
        live.page.guard.warn = recorder
    assert len(said) == 3 and "'abc' is not a number" in said[0], said
    assert 'text frame' in said[1] and 'unknown message type' in said[2]


def test_no_refusal_prints_a_traceback(live, capfd):
    """Everything above in one connection again, with the terminal watched."""
    with HostileClient(live.page.port) as client:
        client.send_message(camera())
        start = len(live.said.said)
        slider = client.input('t0 [N]')['uuid']
        for frame in ('text', b'\xc1', msgspec.msgpack.encode([1]),
                      msgspec.msgpack.encode({'type': 'ShareUrlRequest'}),
                      msgspec.msgpack.encode({'type': 'NoSuchMessage'}),
                      msgspec.msgpack.encode(set_value(slider, 'abc')),
                      msgspec.msgpack.encode({'type': 'GuiUpdateMessage', 'uuid': slider,
                                              'updates': {'no_such': 1}})):
            client.send(frame)
        settle(live, client, start, 7)
    err = capfd.readouterr().err
    assert 'Traceback' not in err and 'Task exception' not in err, err


def test_a_callback_that_fails_is_a_warning_not_a_traceback(capfd):
    """Say an exception in a page's callback (a bug; the last line behind the guard) once."""
    said = Recorder()

    def fails(name, value):
        raise RuntimeError('the publisher is gone')
    _, limits = input_limits(default_robot_file())
    page = ViewPage('fails', warn=said, port=0, command=command_of('tension', limits),
                    send_command=fails)
    try:
        with HostileClient(page.port) as client:
            client.send_message(camera())
            client.send_message(set_value(client.input('t0 [N]')['uuid'], 1.0))
            waiting.wait_for(lambda: said.said, 'the warning')
    finally:
        page.close()
    assert said.said == [('view: page message failed',
                          "a page's message failed: RuntimeError: the publisher is gone")]
    assert 'Traceback' not in capfd.readouterr().err
