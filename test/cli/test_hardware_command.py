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

"""``tendon-robot-sim hardware scan`` and ``calibrate-tension`` against the emulated servos."""


import os
import sys
import threading
import time

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.emulator.devices import DeviceThread
from tendon_robot_sim.emulator.dynamixel import bus_file, DynamixelChain, EmulatedServo
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.devices import load_dynamixel_channels
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
import yaml

pytest.importorskip('dynamixel_sdk')


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


@pytest.fixture
def chain(plant, tmp_path):
    # Servo 3 is an XM540-W270 with older firmware; each has its own true calibration.
    servos = [EmulatedServo(1, gain=80.0, offset=0.3), EmulatedServo(2, gain=95.0),
              EmulatedServo(3, model=1120, firmware=41, gain=110.0, offset=-0.2),
              EmulatedServo(4, gain=100.0)]
    chain = DynamixelChain(plant, servos)
    thread = DeviceThread(chain, PtyEndpoint(str(tmp_path / 'u2d2')), 200.0).start()
    yield chain, thread.endpoint.path
    thread.stop()


def test_scan_lists_every_servo_with_model_and_firmware(chain, capsys):
    _, port = chain
    assert main(['hardware', 'scan', '--port', port, '--baud', '57600']) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ['57600 baud: ID   1  XM430-W350 (model number 1020)  firmware 46',
                   '57600 baud: ID   2  XM430-W350 (model number 1020)  firmware 46',
                   '57600 baud: ID   3  XM540-W270 (model number 1120)  firmware 41',
                   '57600 baud: ID   4  XM430-W350 (model number 1020)  firmware 46']


def test_calibrate_tension_fits_each_servos_true_calibration_and_writes_it(
        chain, tmp_path, capsys):
    servos, port = chain[0].servos, chain[1]
    # the shipped bus file with the latency of the emulated chain (a thread of this
    # process, behind the GIL)
    config = bus_file(tmp_path)
    currents = [0.02, 0.05, 0.1, 0.15]
    # The load cell's readings: each servo's true calibration at the current it is driven
    # with (quantised to the control table's 2.69 mA), plus 10 mN of reading noise.
    rng = np.random.default_rng(1)
    readings = [s.gain * round(a / 2.69e-3) * 2.69e-3 + s.offset + rng.normal(0.0, 0.01)
                for s in servos for a in currents]
    answers = tmp_path / 'answers.txt'
    answers.write_text('\n'.join(f'{r:.4f}' for r in readings) + '\n')
    assert main(['hardware', 'calibrate-tension', '--port', port, '--config', str(config),
                 '--currents', ','.join(map(str, currents)), '--answers', str(answers)]) == 0
    channels = load_dynamixel_channels(config)
    for servo, channel in zip(servos, channels):
        # The emulated servo reports the goal current it holds: the fit recovers gain and
        # offset up to the 10 mN noise over a 0.13 A span.
        assert channel.calibration.gain == pytest.approx(servo.gain, rel=2e-3)
        assert channel.calibration.offset == pytest.approx(servo.offset, abs=0.02)
        assert channel.calibration.residual < 0.02
    assert 'written to' in capsys.readouterr().out


def test_scan_of_a_port_where_nothing_answers_is_an_error(chain, capsys):
    chain[0].silence(1), chain[0].silence(2), chain[0].silence(3), chain[0].silence(4)
    assert main(['hardware', 'scan', '--port', chain[1], '--baud', '1000000']) == 2
    assert 'no Dynamixel answered' in capsys.readouterr().err


def test_calibrate_refuses_bad_answers(chain, tmp_path, capsys):
    config = bus_file(tmp_path)
    answers = tmp_path / 'answers.txt'
    answers.write_text('1.0\nlots\n' + '1\n' * 6)   # eight readings, one not a number
    assert main(['hardware', 'calibrate-tension', '--port', chain[1], '--config', str(config),
                 '--currents', '0.02,0.05', '--answers', str(answers)]) == 2
    assert "'lots' is not a number" in capsys.readouterr().err
    assert yaml.safe_load(config.read_text())['channels'][0]['calibration'] == {
        'gain': 100.0, 'offset': 0.0}   # nothing written


def test_calibrate_tension_drives_one_servo_at_a_time_when_one_is_grouped_under_another(
        chain, tmp_path, monkeypatch):
    """
    Servo 2 at Secondary ID 1 takes only its own channel's Goal Currents.

    A Goal Current meant for servo 1 is a unicast write, which servo 2 did too
    (Secondary(Shadow) ID page): channel 0's steps drove channel 1's servo as well. The tool
    switches it off before channel 0's first step.
    """
    servos, port = chain[0].servos, chain[1]
    servos[1]._put(dxl.SECONDARY_ID, 1)
    goals = []   # the Goal Currents servo 2 takes, from its ID or its Secondary ID
    write = servos[1].write

    def recorded(address, data):
        if address == dxl.GOAL_CURRENT[0]:
            goals.append(int.from_bytes(data, 'little'))
        return write(address, data)
    monkeypatch.setattr(servos[1], 'write', recorded)
    answers = tmp_path / 'answers.txt'
    answers.write_text('\n'.join(f'{k + 1}' for k in range(8)) + '\n')
    assert main(['hardware', 'calibrate-tension', '--port', port, '--config',
                 str(bus_file(tmp_path)), '--currents', '0.02,0.05', '--answers',
                 str(answers)]) == 0
    assert goals == [7, 19]   # its own two steps: 0.02 A and 0.05 A in 2.69 mA units
    assert servos[1].get(dxl.SECONDARY_ID) == 255


@pytest.mark.parametrize('baud', ['12', '57601'])
def test_calibrate_refuses_a_baud_rate_the_sdk_cannot_open_with_a_one_line_error(
        chain, tmp_path, capsys, baud):
    # scan refused these; calibrate-tension ended in 'internal error' (exit 70)
    config = bus_file(tmp_path)
    assert main(['hardware', 'calibrate-tension', '--port', chain[1], '--config', str(config),
                 '--baud', baud, '--answers', str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f'--baud: [{baud}] not among the rates the SDK opens' in err


def test_scan_refuses_a_baud_rate_that_is_not_a_whole_number(chain, capsys):
    # 57600.7 was cut to 57600 and scanned as if it had been asked for
    assert main(['hardware', 'scan', '--port', chain[1], '--baud', '57600.7']) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--baud: '57600.7' is not a whole number" in err


@pytest.mark.parametrize('currents, message', [
    ('0.1,0.1', '0.1 A and 0.1 A are one Goal Current (37 units'),
    ('0.02,0.0201', '0.02 A and 0.0201 A are one Goal Current (7 units'),
    ('0.001,0.1', '0.001 A is below half a Goal Current unit')])
def test_calibrate_refuses_currents_that_are_one_goal_current_before_driving_a_servo(
        chain, tmp_path, capsys, currents, message):
    """
    Steps at one Goal Current (2.69 mA units), or at none, give no line to fit.

    numpy fitted a line through two points at one current anyway (a rank warning, a gain
    of its least-norm solution) and the tool wrote that calibration, exit 0, after driving
    every servo.
    """
    servos, port = chain[0].servos, chain[1]
    config = bus_file(tmp_path)
    before = config.read_text()
    answers = tmp_path / 'answers.txt'
    answers.write_text('\n'.join(f'{k + 1}' for k in range(8)) + '\n')
    driven = goal_currents_written(servos)
    assert main(['hardware', 'calibrate-tension', '--port', port, '--config', str(config),
                 '--currents', currents, '--answers', str(answers)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f'--currents: {message}' in err
    assert config.read_text() == before and driven == []


def goal_currents_written(servos) -> list:
    """Return the list each later write of a Goal Current to one of ``servos`` adds it to."""
    driven = []
    for servo in servos:
        write = servo.write

        def recorded(address, data, servo=servo, write=write):
            if address == dxl.GOAL_CURRENT[0]:
                driven.append(servo)
            return write(address, data)
        servo.write = recorded
    return driven


def test_calibrate_refuses_an_answers_file_too_short_before_driving_a_servo(
        chain, tmp_path, capsys):
    """Four channels at two steps need eight readings: three are found short at once."""
    config = bus_file(tmp_path)
    before = config.read_text()
    answers = tmp_path / 'answers.txt'
    answers.write_text('1\n\n2\n3\n')
    driven = goal_currents_written(chain[0].servos)
    assert main(['hardware', 'calibrate-tension', '--port', chain[1], '--config', str(config),
                 '--currents', '0.02,0.05', '--answers', str(answers)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f'--answers: {answers} holds 3 readings; 4 channels at 2 currents need 8' in err
    assert config.read_text() == before and driven == []


@pytest.mark.parametrize('given', ['same path', 'relative', 'hard link', 'symlink'])
def test_calibrate_refuses_the_bus_file_as_its_answers_before_driving_a_servo(
        chain, tmp_path, capsys, monkeypatch, given):
    """
    ``--answers`` the file ``--config`` names: its YAML lines were read as readings.

    The first servo was driven before its first line failed as a reading; the file is now
    refused, by what it is (the same file by any name), before the port is opened.
    """
    config = bus_file(tmp_path)
    before = config.read_text()
    assert len([line for line in before.splitlines() if line.strip()]) >= 8    # not too short
    monkeypatch.chdir(tmp_path)
    answers = {'same path': str(config), 'relative': config.name,
               'hard link': tmp_path / 'answers.txt', 'symlink': tmp_path / 'answers.yaml'}[given]
    if given == 'hard link':
        os.link(config, answers)
    if given == 'symlink':
        answers.symlink_to(config)
    driven = goal_currents_written(chain[0].servos)
    assert main(['hardware', 'calibrate-tension', '--port', chain[1], '--config', str(config),
                 '--currents', '0.02,0.05', '--answers', str(answers)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.endswith(f'--config: {config} is what --answers reads; the output would '
                        'replace it: give another file'), err
    assert config.read_text() == before and driven == []


def test_calibrate_asks_each_reading_on_stdin_while_its_servo_holds_the_current(
        chain, tmp_path, monkeypatch):
    """
    At a terminal, each reading is asked while the servo pulls, one answer at a time.

    The tool read stdin to its end before it drove a servo, and asked for each reading once
    the servo was switched off again: a user at a terminal saw no question and nothing pull
    until Ctrl-D, and then no tendon held its tension when the reading was asked.
    """
    servos, port = chain[0].servos, chain[1]
    steps = [(servo, units) for servo in servos for units in (7, 19)]   # 0.02, 0.05 A
    read_end, write_end = os.pipe()
    held = []   # (servo ID, Goal Current) of the servo pulling when each answer was typed

    def user():
        with open(write_end, 'w') as typed:
            for k, (servo, units) in enumerate(steps):
                deadline = time.monotonic() + 30.0   # the tool's move: nothing drove it
                while not (servo.get(dxl.TORQUE_ENABLE) == 1
                           and servo.get(dxl.GOAL_CURRENT) == units):
                    if time.monotonic() > deadline:
                        return
                    time.sleep(0.01)
                held.append((servo.servo_id, units))
                typed.write(f'{k % 2 + 1}\n')
                typed.flush()
    monkeypatch.setattr(sys, 'stdin', open(read_end))
    typing = threading.Thread(target=user)
    typing.start()
    try:
        assert main(['hardware', 'calibrate-tension', '--port', port, '--config',
                     str(bus_file(tmp_path)), '--currents', '0.02,0.05']) == 0
    finally:
        typing.join()
    assert held == [(s.servo_id, units) for s, units in steps]
    assert all(servo.get(dxl.TORQUE_ENABLE) == 0 for servo in servos)


@pytest.mark.parametrize('readings, message', [
    # 1e300 N was fitted and written as a gain of 3e301 N/A, exit 0
    ('1.0\n1e300\n' + '1\n' * 6, 'answers: channel 0 at 0.05 A: must be within [0, 100000] N'),
    ('1.0\n2e5\n' + '1\n' * 6, 'answers: channel 0 at 0.05 A: must be within [0, 100000] N'),
    # One reading at every step (a load cell not tied or not read): the fit's gain was the
    # rounding error of numpy's least squares, 5.97e-16 N/A, above 0, written with exit 0,
    # after which the bridge's every tension above 1 N asked for the whole Current Limit.
    ('1\n' * 8, 'channel 0: the tension does not rise with the current')])
def test_calibrate_refuses_readings_that_are_no_calibration(
        chain, tmp_path, capsys, readings, message):
    config = bus_file(tmp_path)
    before = config.read_text()
    answers = tmp_path / 'answers.txt'
    answers.write_text(readings)
    assert main(['hardware', 'calibrate-tension', '--port', chain[1], '--config', str(config),
                 '--currents', '0.02,0.05', '--answers', str(answers)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert config.read_text() == before
