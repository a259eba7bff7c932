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

"""``tendon-robot-sim cc-dynamics``: one real subprocess, the rest in-process through main()."""

import json
import math
import os
from pathlib import Path
import re
import subprocess
import sys

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.cli import main
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
BHA = str(ROOT / 'config' / 'bionic_handling_assistant.yaml')


def test_tendon_run_settles_at_the_bent_rod_and_plots(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    plot = tmp_path / 'run.png'
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'cc-dynamics', '--tensions', 't1=2',
         '--duration', '40', '--plot', str(plot), '--json'],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary['duration'] == pytest.approx(40.0)
    assert plot.stat().st_size > 10_000
    # settled (nu = 0.1 1/s damps the swing by e^-2 in 40 s: check the bending out of
    # the gravity plane, which the bent Kirchhoff rod gives as theta = T r L / E I)
    robot = load_robot(ROOT / 'config' / 'robot.yaml')
    tendon, rod = robot.tendons[1], robot.rod
    section = summary['sections'][0]
    sideways = section['theta'] * math.sin(section['phi'])
    assert sideways == pytest.approx(2.0 * tendon.offset * rod.length / rod.bending_stiffness,
                                     rel=0.05)


def test_a_first_run_times_the_model_apart_from_compiling_its_kernels(tmp_path):
    """
    A first run (an empty numba cache) said `3 s in 21.3 s (0.1 x real time)`.

    The model runs 13 to 165 x real time (README); the 21 s were numba compiling it once. The
    run is timed after a first step that compiles, and the compiling is said apart.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'cache'),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'cc-dynamics', '--tensions', 't0=3,t1=2',
         '--duration', '10'],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    speed = float(re.search(r'\(([\d.]+) x real time', first).group(1))
    # warm, 10 s take 0.2 s here: 1 x leaves 50 times that for a loaded machine
    assert speed >= 1.0, first
    assert re.search(r'[\d.]+ s before it compiling', first), first


def test_bellows_run_json(capsys):
    assert main(['cc-dynamics', '--robot', BHA, '--pressures', 'p1=1e5,p5=6e4',
                 '--duration', '0.2', '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['kind'] == 'pressure' and len(summary['sections']) == 3
    assert summary['inputs']['p5'] == 6e4
    # pressure lengthens its bellows beyond the unpressurised opposite ones
    lengths = summary['actuator_lengths']
    assert lengths['p1'] > max(lengths['p2'], lengths['p3'])


@pytest.mark.parametrize('args, message', [
    (['--pressures', '1e5'], 'take tensions; use --tensions'),
    (['--robot', BHA, '--tensions', '1'], 'take pressures; use --pressures'),
    (['--tensions', 't1=30'], r't1 = 30 N is outside \[0, 20\] N'),
    (['--robot', BHA, '--pressures', 'p1=1e5', '--duration', '-1'],
     'argument --duration: must be a finite number > 0'),
    (['--robot', 'missing.yaml', '--tensions', '1'], 'missing.yaml: cannot read'),
])
def test_bad_input_messages(args, message, capsys):
    assert main(['cc-dynamics', *args]) == 2
    error = capsys.readouterr().err
    assert error.count('\n') == 1
    assert re.search(message, error), error


def test_plots_of_the_tours_two_runs_have_names_of_their_own(tmp_path, monkeypatch, capsys):
    """Both ``--plot`` of the tour once wrote ./cc_dynamics.png, the second over the first."""
    monkeypatch.chdir(tmp_path)
    assert main(['cc-dynamics', '--tensions', 't0=3,t1=2', '--duration', '0.05', '--plot']) == 0
    assert main(['cc-dynamics', '--robot', BHA, '--pressures-csv',
                 str(ROOT / 'config' / 'bha_pressure_steps.csv'), '--duration', '0.05',
                 '--plot']) == 0
    written = re.findall(r'^wrote (.*)$', capsys.readouterr().out, re.M)
    assert written == ['demo_output/cc_dynamics_silicone_tdcr_t0=3_t1=2.png',
                       'demo_output/cc_dynamics_bionic_handling_assistant_bha_pressure_steps.png']
    assert all((tmp_path / name).stat().st_size > 10_000 for name in written)


@pytest.mark.parametrize('duration, reached', [('0.012', 0.015), ('0.035', 0.035)])
def test_a_duration_between_two_steps_runs_to_the_later_one(duration, reached, capsys):
    """
    2.4 steps of 5 ms ran 2 (0.01 s), as a file's last time between two steps ended before it.

    The rule of every command that steps a model in time (``commands.run_steps``, also
    ``simulate`` and ``snake forward``): the steps that cover the duration, a ratio within
    round-off of a whole number (0.035 / 0.005 = 7.000000000000001) being that number.
    """
    assert main(['cc-dynamics', '--tensions', 't0=1', '--duration', duration, '--dt', '0.005',
                 '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['duration'] == pytest.approx(reached, rel=1e-12)


def profile_run(tmp_path, capsys, text, *args):
    """Run cc-dynamics on the profile ``text`` (default robot); return its JSON line."""
    path = tmp_path / 'profile.csv'
    path.write_text(text)
    assert main(['cc-dynamics', '--tensions-csv', str(path), '--dt', '0.005', *args,
                 '--json']) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_a_profiles_last_row_acts_from_its_time_on_and_the_json_gives_it(tmp_path, capsys):
    """
    A step in the profile's last row never acted: each step held the inputs of its start.

    From rest, a force acting over a share s of one step moves the robot by s times as much
    impulse (the response is linear in the force at the start of a motion): a step at the
    start of the run's last step moves it, one in the middle of that step half as much, where
    the inputs of its start moved it not at all. The JSON's ``inputs`` are those in force at
    the run's end, the last row (they were the last step's, before the step).
    """
    whole = profile_run(tmp_path, capsys, 't,t1\n0,0\n0.05,0\n0.05,3\n', '--duration', '0.055')
    half = profile_run(tmp_path, capsys, 't,t1\n0,0\n0.0525,0\n0.0525,3\n')
    still = profile_run(tmp_path, capsys, 't,t1\n0,0\n', '--duration', '0.055')
    assert half['duration'] == whole['duration'] == pytest.approx(0.055, rel=1e-12)
    assert half['inputs']['t1'] == whole['inputs']['t1'] == 3.0
    moved = {name: np.subtract(run['tip_position'], still['tip_position'])
             for name, run in (('whole', whole), ('half', half))}
    assert np.linalg.norm(moved['whole']) > 1e-7
    assert_allclose(moved['half'], 0.5 * moved['whole'], rtol=0.02,
                    atol=0.02 * np.linalg.norm(moved['whole']))


TILL = ROOT / 'config' / 'till_tendon_robot.yaml'


def test_a_run_that_coils_past_self_contact_is_no_result(capsys):
    """
    Till's robot at 20 N coiled to 6.8 rad of bend, exit 0, where ``cc`` refuses such a bend.

    The arc meets itself from 2 pi L / (L + 2 rho) (6.27 rad) on; the tension's static bend
    alone, T r L / E I = 6.4 rad, is past it. The run is checked as ``cc`` checks a bend:
    exit 1, one line saying when, which section and the bend.
    """
    robot = load_robot(TILL)
    rod, tendon = robot.rod, robot.tendons[0]
    assert 20.0 * tendon.offset * rod.length / rod.bending_stiffness > 2 * math.pi * \
        rod.length / (rod.length + 2 * rod.radius)
    assert main(['cc-dynamics', '--robot', str(TILL), '--tensions', 't0=20', '--json']) == 1
    out, err = capsys.readouterr()
    assert err.count('\n') == 1 and 'Traceback' not in err and '{' not in out
    found = re.search(r'error: t = ([\d.]+) s, section 0: a bend of ([\d.]+) rad passes '
                      r'through itself: .*\(([\d.]+) rad\)', err)
    assert found, err
    time, bend, limit = (float(found.group(i)) for i in (1, 2, 3))
    assert 0.0 < time <= 2.0 and bend >= limit
    # the section's length changes by T / E A, 1e-4 of it: the bound of its rest length
    assert limit == pytest.approx(2 * math.pi * rod.length / (rod.length + 2 * rod.radius),
                                  rel=1e-3)


def test_a_run_short_of_self_contact_is_a_result(capsys):
    """
    At 5 N Till's robot bends at most 4 rad, short of its self contact: exit 0.

    From rest under gravity (its slope w L^3 / 6 E I) a step of T r L / E I overshoots to at
    most twice that.
    """
    rod = load_robot(TILL).rod
    tendon = 5.0 * load_robot(TILL).tendons[0].offset * rod.length / rod.bending_stiffness
    gravity = rod.linear_density * 9.81 * rod.length ** 3 / (6 * rod.bending_stiffness)
    assert gravity + 2 * tendon < 2 * math.pi * rod.length / (rod.length + 2 * rod.radius)
    assert main(['cc-dynamics', '--robot', str(TILL), '--tensions', 't0=5', '--json']) == 0
