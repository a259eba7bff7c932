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

"""``tendon-robot-sim emulate`` as a user runs it: a process serving pseudo-terminals."""

from contextlib import contextmanager
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest

from tendon_robot_sim.cli import main
from tendon_robot_sim.protocol.drivers import MotorDriver, TipSensorDriver
from waiting import TIMEOUT, wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_emulate_prints_its_ports_and_pulling_a_tendon_moves_the_measured_tip():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'emulate',
         '--noise', '0', '--time-constant', '0.01'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        ports = {}
        for line in process.stdout:
            if line.startswith('emulating'):
                break
            device, _, path = line.strip().partition(': ')
            ports[device] = path
        assert set(ports) == {'motors', 'sensor'} and all(Path(p).exists() for p in ports.values())
        motors = MotorDriver(ports['motors'], 4).start()
        sensor = TipSensorDriver(ports['sensor']).start()
        try:
            wait_for(lambda: motors.status() is not None, what='motor status')
            before = wait_for(sensor.measurements, what='a tip sample')[-1][0]
            seq = motors.command_tensions([2.0, 0.0, 0.0, 0.0])
            wait_for(lambda: motors.statistics()[1].last_acked_seq == seq, what='the ACK')
            wait_for(lambda: motors.status().tensions[0] == 2.0, what='the tension')
            # t0 runs along base.normal (+z); the sensor (yawed by pi about z) keeps z: pulling
            # t0 lifts the tip, against gravity, in both frames. Waited for (a sample taken
            # before may still be on its way), not read after a fixed 0.1 s.
            samples = []

            def lifted():
                samples.extend(s for s, _ in sensor.measurements())
                return [s for s in samples if s.z - before.z > 0.01]
            after = wait_for(lifted, what='a sample of the lifted tip')[-1]
            # an ACK later than ack_timeout (a loaded machine) has the command sent again
            sent = 1 + motors.statistics()[1].retransmits
        finally:
            motors.stop()
            sensor.stop()
        assert after.valid and after.count > before.count
        process.send_signal(signal.SIGINT)   # Ctrl-C: a summary and exit code 0
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert f'done: {sent} commands received, 1 applied, 0 rejected' in out


@pytest.mark.parametrize('argv, message', [
    (['--motors', 'tcp:not-a-port'], "--motors: port 'tcp:not-a-port'"),
    (['--sensor', '/nonexistent/tty'], "--sensor: port '/nonexistent/tty'"),
    (['--garbage', '2'], 'argument --garbage: must be within [0, 1], got 2'),
    (['--status-rate', '0'], 'argument --status-rate: must be a number within [0.01, 10000] Hz, '
                             'got 0'),
    (['--status-rate', 'nan'], 'argument --status-rate: must be a number within [0.01, 10000] '
                               'Hz, got nan'),
    (['--time-constant', 'inf'], 'argument --time-constant: must be a finite number >= 0'),
    # a TCP port that is no number, or none a socket takes: the option and what it must be
    (['--motors', 'tcp:abc'], "--motors: port 'tcp:abc': the TCP port must be a whole number "
                              "1..65535 (or 0: any free one), got 'abc'"),
    (['--sensor', 'tcp:localhost:99999'], "--sensor: port 'tcp:localhost:99999': the TCP "
                                          'port must be a whole number 1..65535'),
    (['--motors', 'tcp:-1'], 'the TCP port must be a whole number 1..65535'),
    # a device of the other kind: not taken for a serial device of that name
    (['--motors', 'keyence-lkg:pty'], '--motors: keyence-lkg is a sensor kind, not a motor '
                                      'kind (motor kinds: tdcr-motor-v1, dynamixel)'),
    (['--sensor', 'dynamixel:pty'], '--sensor: dynamixel is a motor kind, not a sensor kind '
                                    '(sensor kinds: tdcr-laser-v1, keyence-lkg)'),
])
def test_emulate_rejects_bad_arguments_with_one_line(argv, message, capsys):
    assert main(['emulate', '--duration', '0.1', *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith('tendon-robot-sim emulate: error: ') and message in err
    assert err.count('\n') == 1


@contextmanager
def emulator(*argv):
    """Run ``emulate ARGV`` in its own process; yield its lines up to 'emulating', then SIGINT."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'emulate', *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        lines = []
        for line in process.stdout:
            if line.startswith('emulating'):
                break
            lines.append(line.strip())
        yield lines
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=TIMEOUT)
        assert process.returncode == 0, err
    finally:
        process.kill()
        process.wait()


def bus_file_of(lines):
    """Return the bus file an emulator's output names."""
    line = next(x for x in lines if x.startswith('bus file: '))
    return Path(line.split('dynamixel_file:=')[1])


def test_emulate_writes_the_emulated_chains_bus_file_beside_its_port(tmp_path):
    """The shipped bus file's latency is a bench's; the emulated chain's is ANSWER_LATENCY."""
    import yaml
    from tendon_robot_sim.emulator.dynamixel import ANSWER_LATENCY

    link = tmp_path / 'dxl'
    with emulator('--motors', f'dynamixel:pty:{link}', '--sensor', 'none') as lines:
        bus = tmp_path / 'dxl.yaml'
        assert bus_file_of(lines) == bus
        written = yaml.safe_load(bus.read_text())
    shipped = yaml.safe_load((ROOT / 'config' / 'dynamixel.yaml').read_text())
    assert written.pop('latency_timer') == ANSWER_LATENCY
    shipped.pop('latency_timer', None)
    assert written == shipped
    # removed with the link when it stops: a file left there later is someone else's
    assert sorted(tmp_path.iterdir()) == []
    # a bare pseudo-terminal: a folder of its own, named in the output, removed at the end
    with emulator('--motors', 'dynamixel:pty', '--sensor', 'none') as lines:
        bus = bus_file_of(lines)
        assert yaml.safe_load(bus.read_text())['latency_timer'] == ANSWER_LATENCY
        assert bus.parent.name.startswith('tendon_robot_sim_emulate_')
    assert not bus.parent.exists()


def test_emulate_keeps_a_file_of_the_users_where_its_bus_file_would_go(tmp_path, capsys):
    link, bus = tmp_path / 'dev', tmp_path / 'dev.yaml'
    bus.write_text('precious: 1\n')
    assert main(['emulate', '--duration', '0.1', '--motors', f'dynamixel:pty:{link}',
                 '--sensor', 'none']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and f'--motors: {bus} exists and is not a bus file' in err
    assert bus.read_text() == 'precious: 1\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['dev.yaml']
    # one an emulator killed before its end left: the same text, taken over and removed
    from tendon_robot_sim.emulator.dynamixel import bus_text
    bus.write_text(bus_text())
    assert main(['emulate', '--duration', '0.1', '--motors', f'dynamixel:pty:{link}',
                 '--sensor', 'none']) == 0
    assert sorted(tmp_path.iterdir()) == []
    # nor the sensor's link in its place
    assert main(['emulate', '--duration', '0.1', '--motors', f'dynamixel:pty:{link}',
                 '--sensor', f'pty:{bus}']) == 2
    assert '--sensor: ' in capsys.readouterr().err and sorted(tmp_path.iterdir()) == []


def test_emulate_refuses_one_link_for_both_devices(tmp_path, capsys):
    # the sensor's terminal took the motors' link: the bridge's motor port was the sensor
    link = tmp_path / 'a'
    assert main(['emulate', '--duration', '0.1', '--motors', f'pty:{link}',
                 '--sensor', f'keyence-lkg:pty:{tmp_path}/../{tmp_path.name}/a']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--sensor: ' in err and 'same link as --motors' in err
    assert not link.exists() and not link.is_symlink()


def test_emulate_leaves_a_link_to_a_terminal_in_use_alone_and_replaces_a_dangling_one(
        tmp_path, capsys):
    from tendon_robot_sim.emulator.endpoints import PtyEndpoint

    link = tmp_path / 'dev'
    other = PtyEndpoint(str(link))      # another emulator, serving its terminal there
    try:
        other.publish()
        target = os.readlink(link)
        assert main(['emulate', '--duration', '0.1', '--sensor', 'none',
                     '--motors', f'pty:{link}']) == 2
        err = capsys.readouterr().err
        assert err.count('\n') == 1 and (
            f"--motors: port 'pty:{link}': {link} is a link to {target}, a terminal in use"
            in err)
        assert os.readlink(link) == target
    finally:
        other.close()
    link.symlink_to(tmp_path / 'a_terminal_gone')     # left by a crashed run
    assert main(['emulate', '--duration', '0.1', '--sensor', 'none',
                 '--motors', f'pty:{link}']) == 0
