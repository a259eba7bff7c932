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
`tendon-robot-sim view` as a user runs it: it serves the page, says where; Ctrl-C ends it.

And as a hostile web page or script meets it (issue 37): another site's page can neither load
nor drive it, bad frames give a throttled warning and never a traceback, and a view served
beyond this machine says so and wants its token.
"""

from dataclasses import dataclass
import math
import os
from pathlib import Path
import re
import socket
import subprocess
import sys
import time
import urllib.request

from hostile_view import camera, get, HostileClient, Refused, set_value
import msgspec
import numpy as np
import pytest
import rclpy
from recorded import write_bag
from ros_helpers import interrupt, Probe, ROOT, spinning
from tendon_robot_sim.ros import topics
import waiting

# the command's own line, once it is ready (not viser's banner, printed before); the token
# when the page needs one
URL = re.compile(r'(?:playing|view of) .* on http://[\w.:\[\]-]+:(\d+)/?(?:\?token=([\w-]+))?')
THROTTLE_PERIOD = 2.0    # s: the view's warning_throttle_period (its default)


@dataclass
class Served:
    """A running view command: its process, port, token ('' when none is printed), log."""

    process: subprocess.Popen
    port: int
    token: str
    log: Path

    @property
    def url(self) -> str:
        return f'http://127.0.0.1:{self.port}/' + (f'?token={self.token}' if self.token else '')

    @property
    def origin(self) -> dict:
        """Return the headers of a page the view served itself (same origin), with its token."""
        headers = {'Origin': f'http://127.0.0.1:{self.port}'}
        if self.token:
            headers['Cookie'] = f'tendon_robot_sim_view_{self.port}={self.token}'
        return headers

    def output(self) -> str:
        return self.log.read_text()


def serve(tmp_path: Path, *arguments: str) -> Served:
    """Start the command with ``arguments`` (port 0); return it once it says where it serves."""
    log = tmp_path / 'view.log'
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    with open(log, 'w') as out:
        process = subprocess.Popen([sys.executable, '-m', 'tendon_robot_sim.cli', 'view',
                                    '--port', '0', *arguments], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        port, token = waiting.wait_for(lambda: [m.groups() for m in URL.finditer(log.read_text())],
                                       'the address of the page')[-1]
    except AssertionError:
        process.kill()
        raise
    return Served(process, int(port), token or '', log)


def listening(probe: Probe) -> None:
    """Wait until the probe sees the view's command publisher (a command sent before is lost)."""
    waiting.wait_for(lambda: [i for i in probe.get_publishers_info_by_topic(
        topics.TENDON_COMMAND.name) if i.node_name == 'view'], "the view's command publisher")


def mode_arguments(tmp_path: Path, mode: str) -> tuple[str, ...]:
    """Return the command's arguments of ``mode``: live (none), or a small bag written here."""
    if mode == 'live':
        return ()
    write_bag(tmp_path / 'bag', np.zeros((3, 4)))
    return ('--bag', str(tmp_path / 'bag'))


@pytest.mark.parametrize('mode', ['live', 'bag'])
def test_the_command_serves_the_page_and_stops_on_ctrl_c(tmp_path, mode):
    view = serve(tmp_path, *mode_arguments(tmp_path, mode))
    try:
        with urllib.request.urlopen(view.url, timeout=waiting.TIMEOUT) as page:
            assert page.status == 200 and b'<html' in page.read().lower()
    finally:
        code = interrupt(view.process)
    assert code == 0, view.output()
    assert 'Traceback' not in view.output()


def test_another_sites_page_can_neither_load_nor_drive_the_view(tmp_path):
    """
    Refuse a foreign Origin and a foreign Host, on the page and on its websocket (issue 37).

    A page claiming ``Origin: https://attacker.example`` published tensions; ``Host:
    attacker.example:8080`` (a DNS-rebinding page, its name resolved to this machine) got the
    page. The view's own page (same origin) still drives it: the refusals are the check, not
    a broken view.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    probe = Probe(context=context)
    view = serve(tmp_path)
    try:
        with spinning(probe, context=context):
            listening(probe)
            status, _, body = get(view.port, '/', {'Host': f'attacker.example:{view.port}'})
            assert status == 403 and 'attacker.example' in body
            for headers in ({'Origin': 'https://attacker.example'},
                            {'Origin': f'http://attacker.example:{view.port}',
                             'Host': f'attacker.example:{view.port}'}):
                with pytest.raises(Refused) as refused:
                    HostileClient(view.port, headers=dict(view.origin, **headers)).close()
                assert refused.value.status == 403
            with HostileClient(view.port, headers=view.origin) as page:
                page.send_message(camera())
                page.send_message(set_value(page.input('t0 [N]')['uuid'], 3.0))
                commands = waiting.wait_for(
                    lambda: probe.received[topics.TENDON_COMMAND.name], "the own page's command")
            assert [(list(m.name), list(m.effort)) for _, m in commands] == [(['t0'], [3.0])]
    finally:
        code = interrupt(view.process)
    assert code == 0 and 'Traceback' not in view.output(), view.output()


def warnings_of(output: str) -> list[str]:
    return [line for line in output.splitlines() if '[WARN]' in line or 'warning:' in line]


def test_hostile_frames_give_a_throttled_warning_and_never_a_traceback(tmp_path):
    """
    Each kind of bad frame, 30 times over: a throttled warning each, no traceback (issue 37).

    Before, each printed a Python traceback (300 bad values, 300 tracebacks), and a text
    frame or bytes that are not msgpack closed the page's connection. The same connection
    then still commands the robot.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    probe = Probe(context=context)
    view = serve(tmp_path)
    try:
        with spinning(probe, context=context), HostileClient(view.port,
                                                             headers=view.origin) as page:
            listening(probe)
            page.send_message(camera())
            slider = page.input('t0 [N]')['uuid']
            bad = {'text frame': 'not binary',
                   'not msgpack': b'\xc1\xff\x00',
                   'msgpack, not a map': [1, 2, 3],
                   'no type': {'uuid': slider},
                   'unknown type': {'type': 'NoSuchMessage'},
                   'missing field': {'type': 'GuiUpdateMessage', 'uuid': slider},
                   'unknown property': {'type': 'GuiUpdateMessage', 'uuid': slider,
                                        'updates': {'no_such': 1.0}},
                   'slider value "abc"': set_value(slider, 'abc'),
                   'camera "abc"': dict(camera(), position='abc')}
            start = time.monotonic()
            for _ in range(30):
                for frame in bad.values():
                    page.send(frame if isinstance(frame, (str, bytes))
                              else msgspec.msgpack.encode(frame))
            page.send_message(set_value(slider, 2.0))
            waiting.wait_for(lambda: probe.received[topics.TENDON_COMMAND.name],
                             'the command after the bad frames')
            elapsed = time.monotonic() - start
    finally:
        code = interrupt(view.process)
    output = view.output()
    assert code == 0 and 'Traceback' not in output, output
    said = warnings_of(output)
    assert len(bad) <= len(said) <= len(bad) * (2 + math.ceil(elapsed / THROTTLE_PERIOD)), \
        '\n'.join(said)


@pytest.mark.parametrize('mode', ['live', 'bag'])
def test_a_taken_port_is_said_with_the_port_served(tmp_path, mode):
    """A bag's view on a taken port served on the next one and said nothing of it."""
    arguments = mode_arguments(tmp_path, mode)
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        view = serve(tmp_path, *arguments, '--port', str(port))
        try:
            waiting.wait_for(lambda: f'port {port} is taken: serving on {view.port}'
                             in view.output(), 'the taken port said')
        finally:
            code = interrupt(view.process)
    assert code == 0 and view.port != port, view.output()


def test_a_bags_page_refuses_a_speed_abc_and_a_seek_to_nan(tmp_path):
    """
    ``view --bag``: speed "abc" raised in the package's callback; a seek to NaN showed nan.

    Each is a throttled warning and nothing else: the clock stays where it was, the page
    shows no nan, and a good seek afterwards is taken.
    """
    write_bag(tmp_path / 'bag', np.zeros((20, 4)))
    view = serve(tmp_path, '--bag', str(tmp_path / 'bag'))
    try:
        with HostileClient(view.port, headers=view.origin) as page:
            page.send_message(camera())
            time_slider, speed = page.input('time [s]')['uuid'], page.input('speed')['uuid']
            for _ in range(30):
                for frame in (set_value(speed, 'abc'), set_value(speed, '1e9'),
                              set_value(time_slider, math.nan), set_value(time_slider, 'abc'),
                              set_value(time_slider, math.inf)):
                    page.send_message(frame)
            # the last one NaN, then Play: the page plays from where the clock is (before:
            # "playing at 1 x: nan of 0.38 s", forever)
            page.send_message(set_value(time_slider, math.nan))
            page.send_message(set_value(page.input('Play')['uuid'], True))
            waiting.wait_for(lambda: any('at the end' in text or 'nan' in text
                                         for text in page.texts()), 'the bag played')
            shown = page.texts() + [str(u) for u in page.updates(time_slider)]
            assert not [text for text in shown if 'nan' in text.lower() or 'inf' in text]
            page.send_message(set_value(time_slider, 0.05))
            waiting.wait_for(lambda: any('paused at 0.05' in text for text in page.texts()),
                             'the good seek shown')
    finally:
        code = interrupt(view.process)
    output = view.output()
    assert code == 0 and 'Traceback' not in output, output
    assert 1 <= len(warnings_of(output)) <= 10, output


@pytest.mark.parametrize('mode, power', [('live', 'publish on /tendon/command/tension'),
                                         ('bag', 'watch this recording')])
def test_a_view_beyond_this_machine_warns_and_wants_its_token(tmp_path, mode, power):
    """
    ``--host 0.0.0.0`` logged one INFO line and served anyone (issue 37).

    Now a WARN at start says what anyone on the network can do, and nothing is served
    without the token of the printed address: not the page, not the websocket.
    """
    view = serve(tmp_path, '--host', '0.0.0.0', *mode_arguments(tmp_path, mode))
    try:
        warned = waiting.wait_for(lambda: [w for w in warnings_of(view.output())
                                           if 'anyone on the network' in w], 'the warning')
        assert power in warned[0], warned
        assert view.token, 'no token in the printed address'
        assert get(view.port, '/')[0] == 403
        assert get(view.port, f'/?token={view.token[:-1]}')[0] == 403
        assert get(view.port, f'/?token={view.token}')[0] == 200
        with pytest.raises(Refused):
            HostileClient(view.port, headers={'Origin': f'http://127.0.0.1:{view.port}'})
        HostileClient(view.port, headers=view.origin).close()
    finally:
        code = interrupt(view.process)
    assert code == 0 and 'Traceback' not in view.output(), view.output()


@pytest.mark.parametrize('flag, value', [((), 'false'), (('--remote-control',), 'true')])
def test_remote_control_is_the_view_nodes_opt_in(monkeypatch, flag, value):
    """``view --remote-control`` sets the node's remote_control; without it, false."""
    from tendon_robot_sim import cli
    from tendon_robot_sim.nodes import view_node

    given = []
    monkeypatch.setattr(view_node, 'main', lambda args: given.append(args) or 0)
    assert cli.main(['view', '--host', '0.0.0.0', *flag]) == 0
    assert f'remote_control:={value}' in given[0] and 'host:=0.0.0.0' in given[0]


# The view node whose page takes long to refresh (viser's event loop busy, a loaded machine):
# its timer waits in the main thread for the loop (ViewPage.in_loop)
SLOW_REFRESH = """
import sys, time
from tendon_robot_sim.nodes import view_node
from tendon_robot_sim.view import page

def slow(self, *times):
    print('refreshing', flush=True)
    time.sleep(5.0)

page.ViewPage._refresh = slow
sys.exit(view_node.main(['--ros-args', '-p', 'port:=0']))
"""


def test_ctrl_c_while_the_view_waits_for_its_page_is_quiet(tmp_path):
    """
    Ctrl-C while a timer of the view waits for viser's loop ends the view without a traceback.

    The stop's interrupt of the busy main thread reached rclpy's EventsExecutor, which logged
    "[FATAL] Exception in 'timers' callback" and 15 lines of traceback.
    """
    log = tmp_path / 'out.log'
    with open(log, 'w') as out:
        process = subprocess.Popen([sys.executable, '-c', SLOW_REFRESH], cwd=ROOT, env=dict(
            os.environ, PYTHONPATH=os.pathsep.join(
                p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p)),
            stdout=out, stderr=subprocess.STDOUT)
    try:
        waiting.wait_for(lambda: 'refreshing' in log.read_text(), 'a refresh under way')
    finally:
        code = interrupt(process)
    assert code == 0, log.read_text()
    assert 'Traceback' not in log.read_text() and 'FATAL' not in log.read_text(), \
        log.read_text()
