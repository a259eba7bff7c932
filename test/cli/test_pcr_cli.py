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
``tendon-robot-sim pcr`` command line: as a real subprocess, or in this process (faster).

A real process where a test checks its exit code or its worker processes; in this process
(:class:`Run`) where it checks what the command prints and writes.
"""

import csv
import io
import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
ROBOT = load_pcr_robot(default_pcr_file())


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''),
               TENDON_ROBOT_SIM_PROGRESS='1')      # the bars into the pipe: tests read them
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'pcr', *args],
                          capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT,
                          cwd=cwd)


class Run:
    """A command run in this process (fast: the kernels stay loaded), like a subprocess."""

    def __init__(self, capsys, *args):
        from tendon_robot_sim import cli
        self.returncode = cli.main(['pcr', *args])
        captured = capsys.readouterr()
        self.stdout, self.stderr = captured.out, captured.err


def test_ik_then_fk_json_lines(capsys):
    proc = Run(capsys, 'ik', '--position', '0.05,0,0.45', '--orientation-deg', '0,0,10',
               '--force', '0,0,-5', '--json')
    assert proc.returncode == 0, proc.stderr
    ik = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = PcrSolver(ROBOT).inverse([0.05, 0, 0.45], np.radians([0, 0, 10]), [0, 0, -5])
    np.testing.assert_allclose(ik['motor_angles'], expected.motor_angles, atol=1e-9)
    assert ik['within_limits'] is True and ik['compat'] == 'paper'
    angles = ','.join(f'{q:.12f}' for q in ik['motor_angles_deg'])
    proc = Run(capsys, 'fk', '--motor-angles-deg', angles, '--force', '0,0,-5', '--json')
    assert proc.returncode == 0, proc.stderr
    fk = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(fk['position'], [0.05, 0, 0.45], atol=1e-6)
    np.testing.assert_allclose(fk['orientation_rpy'], np.radians([0, 0, 10]), atol=1e-6)


def test_a_pose_with_rods_through_each_other_is_no_result(tmp_path, capsys, monkeypatch):
    """Solved within the motor limits, stable, but rods 3 and 4 cross: exit 1, ik and fk."""
    pose = ('--position=-0.022,-0.023,0.362', '--orientation-deg=17.4,4.3,-79.7')
    proc = Run(capsys, 'ik', *pose, '--json')
    assert proc.returncode == 1
    assert 'RODS INTERSECT' in proc.stdout
    ik = json.loads(proc.stdout.strip().splitlines()[-1])
    assert ik['within_limits'] is True and ik['stable'] is True and ik['rods_clear'] is False
    assert ik['rod_clearance'] < -2e-3      # millimetres of overlap, not a rounding
    error, = proc.stderr.strip().splitlines()
    assert error.startswith('tendon-robot-sim pcr ik: error: --position, --orientation-deg: '
                            'rods 3 and 4 pass through each other by ')
    (tmp_path / 'ik.json').write_text(proc.stdout)
    fk = Run(capsys, 'fk', '--from-json', str(tmp_path / 'ik.json'))
    assert fk.returncode == 1 and 'pcr fk: error: --from-json: rods 3 and 4' in fk.stderr
    angles = ','.join(f'{q:.12f}' for q in ik['motor_angles_deg'])
    fk = Run(capsys, 'fk', '--motor-angles-deg', angles)
    assert fk.returncode == 1 and 'error: --motor-angles-deg: rods 3 and 4' in fk.stderr


def test_errors_are_one_line():
    proc = run_cli('fk', '--motor-angles-deg', '10,10,12,12,8,100')
    assert proc.returncode == 2
    assert proc.stderr.strip() == ('tendon-robot-sim pcr fk: error: motor_angles[5]: must be '
                                   'within the motor limits [-20, 90] deg, got 100 deg')
    proc = run_cli('ik', '--position', '0,0,1.5')
    assert proc.returncode == 1 and 'out of reach' in proc.stderr   # no result: exit 1
    assert len(proc.stderr.strip().splitlines()) == 1
    # millimetres typed for metres: the line says how far outside, and in which unit
    proc = run_cli('ik', '--position', '0,0,55')
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1
    assert (f'--position is 55 m from the base, far outside the workspace (no pose of '
            f'{ROBOT.name} reaches beyond {ROBOT.reach:.3g} m): positions are in metres, '
            '0,0,0.055 if these were millimetres, 0,0,0.55 if centimetres') in proc.stderr
    assert 'far outside' not in run_cli('ik', '--position', '0,0,0.9').stderr


@pytest.mark.parametrize('angle', ['90.0001', '-20.00001'])
def test_an_angle_just_beyond_a_motor_limit_is_named_as_typed(capsys, angle):
    # it said 'must be within the motor limits [-20, 90] deg, got 90 deg' (4 digits)
    run = Run(capsys, 'fk', '--motor-angles-deg', f'{angle},0,0,0,0,0')
    assert run.returncode == 2
    assert run.stderr.strip().endswith(f'[-20, 90] deg, got {angle} deg')


def test_an_ik_pose_beyond_the_motor_limits_exits_1_with_its_output():
    """A pose the motors cannot take is no result: exit 1, the solution still printed."""
    proc = run_cli('ik', '--position', '0,0,0.25', '--json')
    assert proc.returncode == 1, proc.stderr
    solution = json.loads(proc.stdout.strip().splitlines()[-1])
    assert solution['within_limits'] is False
    assert 'OUTSIDE THE MOTOR LIMITS' in proc.stdout
    assert proc.stderr.strip() == (
        'tendon-robot-sim pcr ik: error: --position, --orientation-deg: this pose needs motor '
        'angles [-57.24, -57.24, -57.24, -57.24, -57.24, -57.24] deg, outside the motor '
        'limits [-20, 90] deg')


def test_an_action_names_itself_in_every_error_line(tmp_path):
    """The command's own checks said `pcr:`, argparse `pcr sweep:`; now both the latter."""
    unparsed = run_cli('sweep', '--yaw')
    checked = run_cli('sweep', '--yaw', '0:90:x', '--out', str(tmp_path / 'y'))
    for proc in (unparsed, checked):
        assert proc.returncode == 2
        assert proc.stderr.startswith('tendon-robot-sim pcr sweep: error: '), proc.stderr


def test_workspace_on_two_processes_writes_csv_and_png(tmp_path):
    proc = run_cli('workspace', '--heights', '0.45:0.6:2', '--per-height', '12', '--workers',
                   '2', '--out', str(tmp_path / 'ws'), '--json')
    assert proc.returncode == 0, proc.stderr
    assert 'pcr workspace' in proc.stderr        # the progress bar
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    with open(tmp_path / 'ws' / 'workspace.csv') as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == summary['samples'] == 24
    valid = [r for r in rows if r['valid'] == '1']
    assert 0 < len(valid) == summary['valid'] < 24
    # no platform turned: the rods stay apart (the closest two by 6 to 10 cm)
    clear = [r for r in valid if r['rods_clear'] == '1' and float(r['rod_clearance_m']) > 0.05]
    assert len(clear) == len(valid) == summary['valid_rods_clear']
    # a valid sample is what a solve in this process gives
    row = valid[-1]
    position = [float(row[k]) for k in 'xyz']
    q = PcrSolver(ROBOT).inverse(position).motor_angles
    np.testing.assert_allclose([float(row[f'q1_{i}_deg']) for i in range(1, 7)],
                               np.degrees(q), atol=1e-4)
    assert (tmp_path / 'ws' / 'workspace.png').stat().st_size > 10000


def test_ik_json_feeds_fk_as_it_is(tmp_path, capsys, monkeypatch):
    """Ik's JSON is SI (radians); fk --from-json takes it without a unit conversion."""
    proc = Run(capsys, 'ik', '--position', '0.04,-0.02,0.47', '--orientation-deg', '-4,0,-8',
               '--json')
    assert proc.returncode == 0, proc.stderr
    (tmp_path / 'ik.txt').write_text(proc.stdout)
    for source, stdin in ((str(tmp_path / 'ik.txt'), ''), ('-', proc.stdout)):
        monkeypatch.setattr(sys, 'stdin', io.StringIO(stdin))
        fk = Run(capsys, 'fk', '--from-json', source, '--json')
        assert fk.returncode == 0, fk.stderr
        pose = json.loads(fk.stdout.strip().splitlines()[-1])
        np.testing.assert_allclose(pose['position'], [0.04, -0.02, 0.47], atol=1e-6)
        np.testing.assert_allclose(pose['orientation_rpy'], np.radians([-4, 0, -8]), atol=1e-6)
    proc = Run(capsys, 'fk', '--from-json', str(tmp_path / 'nothing.txt'))
    assert proc.returncode == 2 and proc.stderr.count('\n') == 1
    assert '--from-json: cannot read' in proc.stderr


def _last_json(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('extra', [('--force', '0,0,-5', '--moment', '0.05,0,0'),
                                   ('--compat', 'dfki2024', '--force', '0,0,-5')])
def test_fk_from_json_solves_under_the_iks_wrench_and_model(tmp_path, capsys, extra):
    # ik under a load (and in the authors' code's model): its motor angles hold the pose it
    # was given under that load only; fk --from-json took the angles and solved them under
    # the description's load (none) in the description's model: 4.3 mm and 0.46 deg off.
    pose = ['--position', '0.05,0,0.45', '--orientation-deg', '0,0,10']
    path = tmp_path / 'ik.txt'
    path.write_text(Run(capsys, 'ik', *pose, *extra, '--json').stdout)
    fk = _last_json(Run(capsys, 'fk', '--from-json', str(path), '--json'))
    np.testing.assert_allclose(fk['position'], [0.05, 0, 0.45], atol=1e-6)
    np.testing.assert_allclose(fk['orientation_rpy'], np.radians([0, 0, 10]), atol=1e-6)
    # an explicit load is a question of its own: what the same motors do under it
    unloaded = _last_json(Run(capsys, 'fk', '--from-json', str(path), '--force', '0,0,0',
                              '--moment', '0,0,0', '--json'))
    assert unloaded['force'] == [0, 0, 0] and unloaded['position'][2] > 0.45
    # the line's load is input like --force: one line naming it, exit 2
    for force, problem in (('[0, 0, NaN]', 'force must be 3 finite numbers (N)'),
                           ('[0, 0, -1e9]', 'force[2]: must be within [-100000, 100000] N')):
        path.write_text(f'{{"motor_angles": [0, 0, 0, 0, 0, 0], "force": {force}}}\n')
        run = Run(capsys, 'fk', '--from-json', str(path))
        assert run.returncode == 2 and f'--from-json: {problem}' in run.stderr


def test_stiffness_by_both_methods_is_the_models(capsys):
    from tendon_robot_sim.models.pcr.stiffness import stiffness
    pose = ['--position', '0.03,-0.02,0.45', '--orientation-deg', '3,-2,6', '--force',
            '0.5,-0.3,-5']
    exact = _last_json(Run(capsys, 'stiffness', *pose, '--json'))
    solver = PcrSolver(ROBOT)
    q1 = solver.inverse([0.03, -0.02, 0.45], np.radians([3, -2, 6]),
                        [0.5, -0.3, -5]).motor_angles
    solver.hold_motors()
    K = stiffness(solver, q1, [0.5, -0.3, -5]).matrix
    np.testing.assert_allclose(exact['stiffness'], K, rtol=0, atol=1e-9 * np.max(np.abs(K)))
    assert exact['method'] == 'variational' and exact['stable'] is True
    numeric = _last_json(Run(capsys, 'stiffness', *pose, '--method', 'differences', '--json'))
    # central differences: ~1e-6 of each column (test_pcr_stiffness.py)
    np.testing.assert_allclose(numeric['compliance'], exact['compliance'], rtol=0,
                               atol=1e-4 * np.max(np.abs(exact['compliance'])))
    held = _last_json(Run(capsys, 'stiffness', '--motor-angles-deg',
                          ','.join(f'{q:.12f}' for q in np.degrees(q1)),
                          '--force', '0.5,-0.3,-5', '--json'))
    np.testing.assert_allclose(held['position'], [0.03, -0.02, 0.45], atol=1e-6)
    np.testing.assert_allclose(held['axial_stiffness'], exact['axial_stiffness'], rtol=1e-6)


def test_yaw_sweep_across_the_end_of_a_branch_writes_csv_and_png(tmp_path, capsys,
                                                                 monkeypatch):
    """
    The branch from 92 deg ends at 95.07 deg; a cold start finds another at 104 deg.

    Cold starts find nothing at 96 to 102 deg; the second branch, followed backwards from
    104 deg, fills them.
    """
    monkeypatch.setenv('TENDON_ROBOT_SIM_PROGRESS', '1')    # the bar into capsys's stderr
    proc = Run(capsys, 'sweep', '--yaw', '92:104:7', '--out', str(tmp_path / 's'), '--json')
    summary = _last_json(proc)
    assert 'pcr sweep --yaw' in proc.stderr                   # the progress bar
    with open(tmp_path / 's' / 'rotation.csv') as handle:
        rows = list(csv.DictReader(handle))
    assert [r['yaw_deg'] for r in rows] == ['92', '94', '96', '98', '100', '102', '104']
    assert [r['branch'] for r in rows] == ['0', '0', '1', '1', '1', '1', '1']
    assert [r['start'] for r in rows] == ['cold', 'warm'] + ['backward'] * 4 + ['cold']
    assert summary['solved'] == 7 and len(summary['branches']) == 2
    assert 95.0 < summary['branches'][0][1] < 95.15 and summary['branches'][0][3] is True
    # a row is what an inverse solve gives, followed from 92 deg in this process
    solver = PcrSolver(ROBOT)
    for yaw in np.linspace(92.0, 94.0, 5):
        q = solver.inverse([0, 0, 0.4], np.radians([0, 0, yaw])).motor_angles
    np.testing.assert_allclose([float(rows[1][f'q1_{i}_deg']) for i in range(1, 7)],
                               np.degrees(q), atol=1e-6)
    assert (tmp_path / 's' / 'rotation.png').stat().st_size > 20000


def test_force_sweep_and_helix_write_csv_and_png(tmp_path, capsys):
    summary = _last_json(Run(capsys, 'sweep', '--force', '100:120:3', '--out',
                             str(tmp_path / 'f'), '--json'))
    with open(tmp_path / 'f' / 'compression.csv') as handle:
        rows = list(csv.DictReader(handle))
    assert [r['held_branch'] for r in rows] == ['0', '0', '-1']   # held: ends at 119 N
    assert 118.0 < summary['held_limit_force'] < 120.0
    np.testing.assert_allclose(float(rows[0]['held_secant_N_per_m']),
                               100.0 / float(rows[0]['held_drop_m']), rtol=1e-8)
    assert (tmp_path / 'f' / 'compression.png').stat().st_size > 20000
    assert summary['rods_crossed_N'] == [] and float(rows[0]['rod_clearance_m']) > 0.1
    crossed = Run(capsys, 'sweep', '--force', '250:260:2', '--out', str(tmp_path / 'c'),
                  '--json')
    assert crossed.returncode == 0      # a sweep reports, as it does unstable samples
    assert _last_json(crossed)['rods_crossed_N'] == [250.0, 260.0]
    assert 'two rods pass through each other at 250, 260 N' in crossed.stdout
    summary = _last_json(Run(capsys, 'trajectory', '--helix', '--points', '40', '--out',
                             str(tmp_path / 'h'), '--json'))
    assert summary['solved'] == summary['points'] == 40 and summary['max_error_m'] < 1e-10
    assert summary['rods_crossed_points'] == []
    with open(tmp_path / 'h' / 'helix.csv') as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 40 and float(rows[-1]['z_ref']) == 0.55
    assert min(float(r['rod_clearance_m']) for r in rows) > 0.1
    assert (tmp_path / 'h' / 'helix.png').stat().st_size > 20000


def test_a_sweep_without_any_solution_exits_1_after_its_progress_bar(tmp_path):
    """Reachable by the rigid links, but beyond the largest force (268 N): no result, exit 1."""
    proc = run_cli('sweep', '--force', '400:500:2', '--out', str(tmp_path / 'n'))
    assert proc.returncode == 1 and 'Traceback' not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        'tendon-robot-sim pcr sweep: error: --force: no inverse solution at any force of '
        "'400:500:2'")


def test_a_workspace_without_any_reachable_pose_exits_1_and_keeps_its_files(tmp_path):
    """A cylinder far beyond the rods: a workspace of no pose is no result (it exited 0)."""
    out = tmp_path / 'far'
    proc = run_cli('workspace', '--radius', '1e30', '--per-height', '2', '--out', str(out))
    assert proc.returncode == 1 and 'Traceback' not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith('tendon-robot-sim pcr workspace: error: --radius, --heights: none '
                           'of the 32 samples is reachable within the motor limits'), proc.stderr
    # and no library warning (a legend with nothing in it) on the way
    assert 'Warning' not in proc.stderr, proc.stderr
    assert (out / 'workspace.csv').is_file() and (out / 'workspace.png').is_file()
