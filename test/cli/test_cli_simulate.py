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

"""``tendon-robot-sim simulate`` run as a real subprocess."""

import json
import os
from pathlib import Path
import re
import subprocess
import sys

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.tendon_robot import load_robot
import yaml

ROOT = Path(__file__).resolve().parents[2]


def simulate(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'simulate', *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


@pytest.fixture(scope='module')
def coarse_robot(tmp_path_factory):
    """Write the default robot on 10 elements, damping ratio 0.3: short runs that settle fast."""
    data = load_robot(default_robot_file()).with_changes(
        elements=10, damping={'ratio': 0.3}).to_dict()
    path = tmp_path_factory.mktemp('robot') / 'coarse.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


def test_json_summary(coarse_robot):
    result = simulate('--robot', str(coarse_robot), '--tensions', '0,2,0,0',
                      '--duration', '0.3', '--json')
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(summary['tip_position']) == 3 and len(summary['tip_orientation']) == 4
    assert summary['sim_time'] == pytest.approx(0.3, abs=1e-4)
    assert summary['wall_time'] > 0 and summary['real_time_factor'] > 0
    assert summary['steady'] is False
    assert summary['tensions'] == [0.0, 2.0, 0.0, 0.0]
    # t1 sits at 90 degrees, on d2 = -y: the tip swings towards -y
    assert summary['tip_position'][1] < -0.01
    assert 'tip position' in result.stdout


def test_until_steady_and_tensions_by_name(coarse_robot):
    result = simulate('--robot', str(coarse_robot), '--tensions', 't0=1.5', '--until-steady',
                      '--max-time', '4', '--json')
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary['steady'] is True
    assert summary['sim_time'] < 4.0
    assert summary['tensions'] == [1.5, 0.0, 0.0, 0.0]
    assert 'steady: yes' in result.stdout


def test_bad_tensions_exit_non_zero_with_one_line_on_stderr(coarse_robot):
    result = simulate('--robot', str(coarse_robot), '--tensions=-1,0,0,0', '--json')
    assert result.returncode == 2
    assert result.stdout == ''
    assert result.stderr.strip().splitlines() == [
        'tendon-robot-sim simulate: error: tensions[0]: must be >= 0, got -1.0']


def test_bad_robot_file_exits_non_zero_with_one_line_on_stderr(tmp_path):
    path = tmp_path / 'robot.yaml'
    path.write_text('name: [oops')
    result = simulate('--robot', str(path), '--json')
    assert result.returncode == 2
    assert result.stdout == ''
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f'tendon-robot-sim simulate: error: {path}: not valid YAML')


# The remaining error paths run in this process (same code as the subprocess, minus the
# ~3 s of interpreter start and PyElastica import per run).


@pytest.mark.parametrize('args, message', [
    (['--tensions', '1,2'], 'tensions: expected 4 values'),
    (['--tensions', 'nan,0,0,0'], "--tensions: item 0 ('nan') must be finite"),
    (['--tensions', '30,0,0,0'], "tensions[0]: must be <= max_tension 20.0 N of tendon 't0'"),
    (['--tensions', 'tx=1'], "tensions: unknown tendon 'tx' (known: t0, t1, t2, t3)"),
    (['--tensions', '1,x,0,0'], "--tensions: item 1 ('x') is not a number"),
    (['--tensions', 't0=1,2'], '--tensions: use either values or name=value pairs'),
    (['--tensions', 't0=1,t0=2'], "--tensions: tendon 't0' is given twice"),
    (['--duration', '-1'], 'argument --duration: must be a finite number > 0, got -1'),
    (['--until-steady', '--max-time', 'inf'],
     'argument --max-time: must be a finite number > 0, got inf'),
    (['--dt', '1e-3', '--duration', '0.1'], 'simulation diverged at t = '),
])
def test_bad_input_messages(coarse_robot, capsys, args, message):
    # a diverged run is a valid input without a result: exit 1; the rest are bad inputs: 2
    expected = 1 if 'diverged' in message else 2
    assert main(['simulate', '--robot', str(coarse_robot), *args, '--json']) == expected
    out, err = capsys.readouterr()
    assert out == ''
    errors = [line for line in err.splitlines() if 'error' in line]
    assert len(errors) == 1, err
    assert errors[0].startswith('tendon-robot-sim simulate: error: ')
    assert message in errors[0]


@pytest.mark.parametrize('text, message', [
    (None, 'cannot read: No such file'),
    ('name: x\nrod: {}\nvertebrae: {count: 1}\ntendons: []\n',
     'rod.length: required key is missing'),
    ('name: x\nrod: {length: 1, radius: 0.01, density: 1, youngs_modulus: 1e6,\n'
     '  shear_modulus: 1e6}\nvertebrae: {count: 1}\n'
     'tendons: [{name: a, offset: -0.01, angle_deg: 0}]\n',
     'tendons[0].offset: must be > 0, got -0.01'),
])
def test_bad_robot_file_messages(tmp_path, capsys, text, message):
    path = tmp_path / 'robot.yaml'
    if text is not None:
        path.write_text(text)
    assert main(['simulate', '--robot', str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ''
    assert err.startswith(f'tendon-robot-sim simulate: error: {path}: {message}')
    assert err.count('\n') == 1


def test_displacements_over_time_write_the_trajectory(tmp_path, capsys):
    """
    Till's example for 5 s in-process: the trajectory file has the documented columns.

    The run starts at rest in the static equilibrium of the inputs at t = 0 (the tendon
    already carries tension: the rod hangs sideways) and follows Till's own trajectory
    (test/models/rod/data) within 0.5 mm.
    """
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(ROOT / 'config' / 'till_tendon_robot.yaml'),
                 '--dt', '0.05', '--duration', '5', '--displacements-csv',
                 str(ROOT / 'config' / 'till_tendon_robot_displacements.csv'),
                 '--trajectory-out', str(out), '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['integrator'] == 'implicit' and summary['real_time_factor'] > 0
    assert summary['sim_time'] == pytest.approx(5.0)
    assert out.read_text().splitlines()[0] == ('t,x,y,z,qx,qy,qz,qw,tension_t0,'
                                               'displacement_t0')
    rows = np.loadtxt(out, delimiter=',', skiprows=1)
    np.testing.assert_allclose(rows[:, 0], 0.05 * np.arange(101), atol=1e-9)
    assert rows[0, 8] > 1.0                                # at rest, but taut
    ramp = np.interp(rows[:, 0], [0, 3.652, 3.967, 17.63], [0, 0, 0.01619, 0.01619])
    np.testing.assert_allclose(rows[:, 9], ramp, atol=1e-12)
    reference = np.loadtxt(ROOT / 'test' / 'models' / 'rod' / 'data' /
                           'till_tendon_robot_tip.csv', delimiter=',', skiprows=1)
    assert np.abs(rows[:, 1:4] - reference[:101, 1:4]).max() < 0.5e-3
    np.testing.assert_allclose(np.linalg.norm(rows[:, 4:8], axis=1), 1.0, atol=1e-9)


def test_tensions_over_time_on_the_explicit_model(coarse_robot, tmp_path, capsys):
    """The explicit model settles under the inputs at t = 0, then writes a row per ms."""
    inputs = tmp_path / 'tensions.csv'
    inputs.write_text('t,t1\n0,0.5\n0.02,1.5\n')
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(coarse_robot), '--tensions-csv', str(inputs),
                 '--trajectory-out', str(out), '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['integrator'] == 'explicit'
    assert summary['sim_time'] == pytest.approx(0.02, abs=1e-4)
    rows = np.loadtxt(out, delimiter=',', skiprows=1)
    assert rows.shape[1] == 8 + 8 and 20 <= rows.shape[0] <= 22   # ~1 ms apart, whole steps
    np.testing.assert_allclose(rows[[0, -1], 9], [0.5, 1.5], atol=0.01)   # tension_t1
    assert np.linalg.norm(rows[1, 1:4] - rows[0, 1:4]) < 1e-4      # at rest at first


def test_the_dt_a_failed_run_advises_completes_the_run(capsys):
    """
    A run that fails names a --dt that simulate saw complete the whole run; given, it does.

    20 N in t0 and t1 of the default robot at dt = 50 ms: the first step does not converge.
    """
    run = ['simulate', '--tensions', 't0=20,t1=20', '--integrator', 'implicit', '--duration',
           '0.1', '--json']
    assert main([*run, '--dt', '0.05']) == 1
    error = capsys.readouterr().err.strip()
    advised = re.search(r'the whole run converges with --dt ([0-9.e-]+) \(tried\)$', error)
    assert advised, error
    assert main([*run, '--dt', advised.group(1)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['sim_time'] == pytest.approx(0.1)
    assert summary['dt'] == float(advised.group(1)) < 0.05


def test_alpha_reaches_the_implicit_model(capsys):
    """--alpha -0.5 runs the trapezoidal rule: the summary and the JSON line say so."""
    assert main(['simulate', '--robot', str(ROOT / 'config' / 'steel_rod_robot.yaml'),
                 '--tensions', 't0=1', '--duration', '0.02', '--alpha', '-0.5', '--json']) == 0
    out = capsys.readouterr().out
    assert 'alpha -0.5' in out
    assert json.loads(out.strip().splitlines()[-1])['alpha'] == -0.5
