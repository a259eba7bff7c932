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
``tendon-robot-sim simulate``: its exit codes from a real subprocess, the rest in this process.

In this process (:class:`Run`) a run is the same ``main()`` as the console script's, without
the ~3 s of interpreter start and PyElastica import of a process per run.
"""

import json
import os
from pathlib import Path
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import COMMAND_TIMEOUT
import yaml

ROOT = Path(__file__).resolve().parents[2]


def simulate(*args, timeout=COMMAND_TIMEOUT):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'simulate', *args],
                          capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


class Run:
    """``simulate`` run in this process, read as a finished subprocess (its code and output)."""

    def __init__(self, capsys, *args):
        self.returncode = main(['simulate', *args])
        self.stdout, self.stderr = capsys.readouterr()


@pytest.fixture(scope='module')
def coarse_robot(tmp_path_factory):
    """Write the default robot on 10 elements, damping ratio 0.3: short runs that settle fast."""
    data = load_robot(default_robot_file()).with_changes(
        elements=10, damping={'ratio': 0.3}).to_dict()
    path = tmp_path_factory.mktemp('robot') / 'coarse.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


def test_json_summary(coarse_robot, capsys):
    result = Run(capsys, '--robot', str(coarse_robot), '--tensions', '0,2,0,0',
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


def test_until_steady_and_tensions_by_name(coarse_robot, capsys):
    result = Run(capsys, '--robot', str(coarse_robot), '--tensions', 't0=1.5', '--until-steady',
                 '--max-time', '4', '--json')
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary['steady'] is True
    assert summary['sim_time'] < 4.0
    assert summary['tensions'] == [1.5, 0.0, 0.0, 0.0]
    assert 'steady: yes' in result.stdout


@pytest.mark.parametrize('integrator', ['explicit', 'implicit'])
def test_until_steady_writes_the_whole_run_to_the_trajectory(
        coarse_robot, integrator, tmp_path, capsys):
    """
    An ``--until-steady`` run writes all its rows, from t = 0 to the state the JSON reports.

    The file kept the t = 0 row only: the run itself was missing from it.
    """
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(coarse_robot), '--integrator', integrator,
                 '--tensions', 't0=1.5', '--until-steady', '--max-time', '4',
                 '--trajectory-out', str(out), '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['steady'] is True
    rows = np.loadtxt(out, delimiter=',', skiprows=1, ndmin=2)
    # a row per step (implicit) or per millisecond (explicit), from 0 to the end of the run
    spacing = summary['dt'] if integrator == 'implicit' else 1e-3
    gaps = np.diff(rows[:, 0])     # the explicit rows are whole steps apart: within 10 %
    assert len(gaps) and np.all(gaps > 0.0) and np.all(gaps < 1.1 * spacing)
    assert rows[0, 0] == 0.0 and rows[-1, 0] == pytest.approx(summary['sim_time'], abs=1e-6)
    assert rows[0, 8] == 0.0 and rows[-1, 8] == 1.5          # tension_t0: the step
    # the last row is the state the JSON reports (both written from it: to print precision)
    np.testing.assert_allclose(rows[-1, 1:4], summary['tip_position'], atol=1e-9)


def test_bad_tensions_exit_non_zero_with_one_line_on_stderr(coarse_robot):
    result = simulate('--robot', str(coarse_robot), '--tensions=-1,0,0,0', '--json')
    assert result.returncode == 2
    assert result.stdout == ''
    assert result.stderr.strip().splitlines() == [
        'tendon-robot-sim simulate: error: tensions[0]: must be >= 0, got -1.0']


def test_a_dt_longer_than_the_run_is_one_line_without_a_stability_warning_before_it():
    """
    ``--dt 2 --duration 1`` on the explicit model is refused: one line, exit 2.

    A warning that dt is above the stability bound came first, from the model built before
    the steps were counted (a process's warning, not seen in-process by capsys).
    """
    result = simulate('--integrator', 'explicit', '--dt', '2', '--duration', '1')
    assert result.returncode == 2
    assert result.stderr == ('tendon-robot-sim simulate: error: --dt: 2 s is longer than '
                             '--duration 1 s: not one step would run\n'), result.stderr


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
    (['--tensions', 't0=1,t0=2'], "--tensions: 't0' is given twice"),
    (['--duration', '-1'], 'argument --duration: must be a finite number > 0, got -1'),
    (['--until-steady', '--max-time', 'inf'],
     'argument --max-time: must be a finite number > 0, got inf'),
    # flags that only work beside another would be ignored
    (['--max-time', '1', '--duration', '0.01'], '--max-time: applies with --until-steady only'),
    # it ran under the file's t = 0 row alone and reported that as the file's run (exit 0)
    (['--until-steady', '--tensions-csv', str(ROOT / 'config' / 'pull_release_tensions.csv')],
     '--until-steady: runs under constant --tensions; inputs over time run to'),
    (['--dt-min', '1e-4', '--integrator', 'implicit'],
     '--dt-min: applies with --tip-tolerance only (adaptive dt)'),
    (['--dt-min', '1e-4'], '--dt-min: applies with --tip-tolerance only (adaptive dt)'),
    (['--tip-tolerance', '1e-4', '--integrator', 'explicit'],
     '--tip-tolerance: applies to the implicit integrator only'),
    # the explicit model settles at rest before the inputs, with the same dt
    (['--dt', '1e-3', '--duration', '0.1'],
     'while the rod settled at rest before the inputs: simulation diverged at t = '),
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


def test_a_run_that_fails_before_its_first_row_leaves_the_trajectory_file_alone(
        coarse_robot, tmp_path, capsys):
    """The explicit rod diverges while it settles, before any row: an older file is kept."""
    older = tmp_path / 'tip.csv'
    older.write_text('t,x\n0,1\n')
    assert main(['simulate', '--robot', str(coarse_robot), '--dt', '1e-3', '--duration', '0.1',
                 '--trajectory-out', str(older)]) == 1
    err = capsys.readouterr().err
    assert 'while the rod settled at rest' in err and 'trajectory up to then' not in err, err
    assert older.read_text() == 't,x\n0,1\n'


@pytest.mark.parametrize('text, message', [
    (None, 'argument --robot: {path}: cannot read: No such file'),
    ('name: x\nrod: {}\nvertebrae: {count: 1}\ntendons: []\n',
     '{path}: rod.length: required key is missing'),
    ('name: x\nrod: {length: 1, radius: 0.01, density: 1, youngs_modulus: 1e6,\n'
     '  shear_modulus: 1e6}\nvertebrae: {count: 1}\n'
     'tendons: [{name: a, offset: -0.01, angle_deg: 0}]\n',
     '{path}: tendons[0].offset: must be > 0, got -0.01'),
])
def test_bad_robot_file_messages(tmp_path, capsys, text, message):
    path = tmp_path / 'robot.yaml'
    if text is not None:
        path.write_text(text)
    assert main(['simulate', '--robot', str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ''
    assert err.startswith(f'tendon-robot-sim simulate: error: {message.format(path=path)}')
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
                                               'displacement_t0,tip_error_estimate')
    rows = np.loadtxt(out, delimiter=',', skiprows=1)
    np.testing.assert_allclose(rows[:, 0], 0.05 * np.arange(101), atol=1e-9)
    assert rows[0, 8] > 1.0                                # at rest, but taut
    ramp = np.interp(rows[:, 0], [0, 3.652, 3.967, 17.63], [0, 0, 0.01619, 0.01619])
    np.testing.assert_allclose(rows[:, 9], ramp, atol=1e-12)
    reference = np.loadtxt(ROOT / 'test' / 'models' / 'rod' / 'data' /
                           'till_tendon_robot_tip.csv', delimiter=',', skiprows=1)
    assert np.abs(rows[:, 1:4] - reference[:101, 1:4]).max() < 0.5e-3
    np.testing.assert_allclose(np.linalg.norm(rows[:, 4:8], axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize('law, alpha', [('simple', '0'), ('sliding', '-0.4')])
def test_tills_friction_examples_run_from_the_shipped_files(law, alpha, tmp_path, capsys):
    """
    config/till_friction_*.yaml with his motor ramp, as their comments say to run them.

    The whole 25 s through the command, against the trajectory his program computes
    (test/models/rod/data/till_friction_*_tip.csv): within 0.2 mm RMS (the issue asks 3 mm;
    test/models/rod/dynamics/test_friction_dynamics.py has the physics).
    """
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(ROOT / 'config' / f'till_friction_{law}.yaml'),
                 '--dt', '0.05', '--alpha', alpha, '--displacements-csv',
                 str(ROOT / 'config' / 'till_tendon_robot_displacements.csv'),
                 '--trajectory-out', str(out)]) == 0
    reference = np.loadtxt(ROOT / 'test' / 'models' / 'rod' / 'data' /
                           f'till_friction_{law}_tip.csv', delimiter=',', skiprows=1)
    rows = np.loadtxt(out, delimiter=',', skiprows=1)[:reference.shape[0]]   # to 25 s: his 24.95
    np.testing.assert_allclose(rows[:, 0], reference[:, 0], atol=1e-9)
    errors = np.linalg.norm(rows[:, 1:4] - reference[:, 1:4], axis=1)
    assert np.sqrt(np.mean(errors ** 2)) < 0.2e-3


@pytest.mark.parametrize('arguments', [
    ['simulate', '--robot', str(ROOT / 'config' / 'till_tendon_robot.yaml'), '--dt', '0.05',
     '--duration', '2', '--displacements-csv',
     str(ROOT / 'config' / 'till_tendon_robot_displacements.csv')],
    ['statics', '--robot', str(ROOT / 'config' / 'robot.yaml'), '--tensions', '1,0,0,0']],
    ids=["simulate Till's example", 'statics'])
def test_a_command_process_loads_only_what_it_works_with(arguments):
    """
    A command as its own process imports no other command's libraries.

    The whole ``simulate`` process was 2.2 CPU s, 0.06 s of them the integration (issue 42):
    every command module was imported to build the parser, scipy came with numba and the
    modal module; ``statics`` took scipy.optimize (0.4 s) from the stick-slip module, which
    only a sequence with friction needs. The modules listed are what those imports brought;
    each takes 0.05 to 0.4 s.
    """
    heavy = ['scipy.linalg', 'scipy.optimize', 'elastica', 'matplotlib', 'dask', 'trimesh',
             'rclpy', 'rosbags', 'tendon_robot_sim.commands.demo_hardware',
             'tendon_robot_sim.models.pcr']
    probe = ('import json, sys\n'
             'from tendon_robot_sim import cli\n'
             'code = cli.main(sys.argv[1:])\n'
             f'print(json.dumps([name for name in {heavy!r} if name in sys.modules]))\n'
             'sys.exit(code)\n')
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    result = subprocess.run([sys.executable, '-c', probe, *arguments], capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize('given, threads', [(None, 1), ('2', 2)])
def test_a_process_of_the_package_runs_one_blas_thread_unless_told(given, threads):
    """
    In a process that imports the package first, numpy's OpenBLAS runs one thread (or the user's).

    A second thread spun for about 0.1 s of CPU as OpenBLAS loaded (0.86 -> 0.75 CPU s for
    Till's example as a process, docs/performance.md). The child's environment is the user's
    (the test run sets the variable itself: it is removed here, or given).
    """
    probe = ('import tendon_robot_sim, numpy, json\n'
             'from threadpoolctl import threadpool_info\n'
             "print(json.dumps([p['num_threads'] for p in threadpool_info()"
             " if p['internal_api'] == 'openblas']))\n")
    env = {k: v for k, v in os.environ.items() if k != 'OPENBLAS_NUM_THREADS'}
    env['PYTHONPATH'] = str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', '')
    if given is not None:
        env['OPENBLAS_NUM_THREADS'] = given
    result = subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True,
                            timeout=COMMAND_TIMEOUT, env=env, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [threads]       # numpy's own OpenBLAS, loaded


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


NITINOL = ROOT / 'config' / 'nitinol_robot.yaml'


def test_tensions_and_displacements_together(tmp_path, capsys):
    """
    Per tendon a tension or a displacement, from two files; a tendon named in neither is slack.

    The nitinol robot: t0 pulled with 1 N, t1 held pulled in by 3 mm, t2 named nowhere. The run
    starts in the static equilibrium of these mixed inputs, which the statics solver, given
    the tensions the run solved for, puts at the same tip with t1 pulled in by 3 mm (0.01 mm:
    the two solvers' tolerances), and stays there.
    """
    tensions, displacements = tmp_path / 'tensions.csv', tmp_path / 'displacements.csv'
    tensions.write_text('t,t0\n0,1\n')
    displacements.write_text('t,t1\n0,0.003\n')
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(NITINOL), '--tensions-csv', str(tensions),
                 '--displacements-csv', str(displacements), '--duration', '0.1',
                 '--trajectory-out', str(out)]) == 0
    rows = np.loadtxt(out, delimiter=',', skiprows=1)
    tension, displacement = rows[:, 8:11], rows[:, 11:14]
    assert np.all(tension[:, 0] == 1.0) and np.all(tension[:, 2] == 0.0)
    assert np.all(displacement[:, 1] == 0.003) and tension[0, 1] > 0.1
    from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
    static = StaticsSolver(load_robot(NITINOL), 'discrete').solve_tensions(tension[0])
    assert static.tendon_displacements[1] == pytest.approx(0.003, abs=1e-5)
    assert np.abs(rows[0, 1:4] - static.tip_position).max() < 1e-5
    assert np.abs(rows[:, 1:4] - rows[0, 1:4]).max() < 1e-5           # at rest
    capsys.readouterr()


def test_a_tendon_not_named_in_the_displacements_is_slack(tmp_path, capsys):
    """
    Pulling t1 alone bends the robot towards it; t0 and t2 follow, without tension.

    (They were once held at displacement 0: the rod stretched them, and the run failed to
    converge.)
    """
    displacements = tmp_path / 'displacements.csv'
    displacements.write_text('t,t1\n0,0\n0.1,0.003\n')
    out = tmp_path / 'tip.csv'
    assert main(['simulate', '--robot', str(NITINOL), '--displacements-csv', str(displacements),
                 '--duration', '0.2', '--trajectory-out', str(out), '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = np.loadtxt(out, delimiter=',', skiprows=1)
    np.testing.assert_allclose(rows[:, 12], np.interp(rows[:, 0], [0, 0.1], [0, 0.003]),
                               atol=1e-12)
    assert np.all(rows[:, [8, 10]] == 0.0) and summary['tensions'][1] > 0.1
    # t1 sits at 120 degrees from d1 = -z (towards d2 = -y): the tip swings to -y
    assert summary['tip_position'][1] < -0.01


def test_constant_tensions_are_a_step_from_the_rest_without_tension(
        coarse_robot, tmp_path, capsys):
    """
    --tensions t1=2: the first row is at rest without tension, the next pulls with 2 N.

    Both integrators. The rest is the statics' zero-tension equilibrium, sagging under gravity
    (the straight rod is 67 mm from it for the default robot, 22 mm for the nitinol one):
    within 0.01 mm for the implicit model (the solvers' tolerances), 5 mm for the explicit
    one, which starts straight and settles first (its 10 elements are 3 mm from the discrete
    statics).
    """
    from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
    for path, integrator, tolerance in ((coarse_robot, 'explicit', 5e-3),
                                        (NITINOL, 'implicit', 1e-5)):
        out = tmp_path / f'{integrator}.csv'
        assert main(['simulate', '--robot', str(path), '--tensions', 't1=2', '--duration',
                     '0.02', '--trajectory-out', str(out), '--integrator', integrator]) == 0
        rows = np.loadtxt(out, delimiter=',', skiprows=1)
        assert rows[0, 0] == 0.0 and rows[0, 9] == 0.0 and np.all(rows[1:, 9] == 2.0)
        robot = load_robot(path)
        rest = StaticsSolver(robot, 'discrete').solve_tensions([0.0] * len(robot.tendons))
        assert np.abs(rows[0, 1:4] - rest.tip_position).max() < tolerance
        assert np.linalg.norm(rows[-1, 1:4] - rows[0, 1:4]) > 1e-4    # then pulled
    capsys.readouterr()


def test_the_help_and_the_docs_say_what_an_unnamed_tendon_and_constant_tensions_get(capsys):
    assert main(['simulate', '--help']) == 0
    text = ' '.join(capsys.readouterr().out.split())
    assert 'A tendon named in neither file has tension 0 (slack)' in text
    assert 'A step: the run starts at rest without tension' in text
    doc = ' '.join((ROOT / 'docs' / 'tendon_robot.md').read_text().split())
    assert '**A tendon named in neither file has tension 0: it is slack**' in doc
    assert '**Constant `--tensions` are a step**: the run starts at rest without tension' in doc


def test_a_divergence_above_the_stability_bound_names_a_stable_step(coarse_robot, capsys):
    assert main(['simulate', '--robot', str(coarse_robot), '--dt', '1e-3', '--json']) == 1
    error = capsys.readouterr().err
    bound = re.search(r'stability bound (\S+) s: a dt <= (\S+) s is stable', error)
    assert bound and float(bound.group(2)) <= float(bound.group(1)), error
    assert main(['simulate', '--robot', str(coarse_robot), '--dt', bound.group(2),
                 '--duration', '0.05']) == 0


def test_every_tendon_at_its_limit_is_simulated(capsys):
    """
    The default robot under 20 N in all four tendons, the issue 37 run that diverged.

    It exited 1, "diverged at t = 6.98 s", after the rod had settled at rest without tension
    (a step from there; it diverged at any dt).
    """
    assert main(['simulate', '--tensions', '20,20,20,20', '--duration', '1', '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['integrator'] == 'explicit'
    assert summary['sim_time'] == pytest.approx(1.0, abs=1e-4)
    # compressed by 80 N, the rod hangs; its tip is on the rod's reach
    assert 0.2 < np.linalg.norm(summary['tip_position']) < 0.25


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


def test_a_start_whose_equilibrium_does_not_converge_has_no_result(tmp_path, capsys):
    """
    Exit 1 as statics on the same file: a 1 kPa rod under gravity, no equilibrium found.

    The implicit model's start at rest under gravity does not converge (w L^3 / E I = 1560,
    beyond the statics' reach; 520 is within it since the continuation's first-step rule of
    test_near_buckling.py); simulate called it bad input (exit 2), statics a solve without
    result (exit 1).
    """
    path = tmp_path / 'soft.yaml'
    path.write_text(yaml.safe_dump({
        'name': 'soft', 'gravity': [0, 0, -9.81],
        'base': {'frame_id': 'base_link', 'position': [0, 0, 0], 'direction': [0, 1, 0],
                 'normal': [0, 0, 1]},
        'rod': {'length': 0.1, 'radius': 0.005, 'density': 1000.0, 'youngs_modulus': 1e3,
                'shear_modulus': 1e3 / 3,
                'damping': {'rate': 5.0}},   # a damping ratio needs the rest shape
        'tendons': [{'name': 't0', 'offset': 0.004, 'angle_deg': -30, 'max_tension': 1.0}]}))
    assert main(['statics', '--robot', str(path), '--tensions', '0']) == 1
    assert 'statics failed' in capsys.readouterr().err
    assert main(['simulate', '--robot', str(path), '--duration', '0.1']) == 1
    error = capsys.readouterr().err
    assert 'the static equilibrium of the inputs at t = 0: cosserat statics failed' in error


def test_auto_runs_a_rod_too_coarse_for_its_discs_on_the_implicit_integrator(tmp_path, capsys):
    """10 discs on 5 elements: auto picked explicit, which refused them (exit 2)."""
    path = tmp_path / 'coarse.yaml'
    path.write_text(yaml.safe_dump(load_robot(default_robot_file()).with_changes(
        elements=5).to_dict()))
    assert main(['simulate', '--robot', str(path), '--tensions', 't0=1', '--duration', '0.02',
                 '--json']) == 0
    out = capsys.readouterr().out
    assert 'implicit integrator (the explicit integrator cannot take vertebrae closer' in out
    assert json.loads(out.strip().splitlines()[-1])['integrator'] == 'implicit'


@pytest.mark.parametrize('inputs', [['--tensions-csv', 'ramp.csv'],
                                    ['--tensions', 't0=3', '--duration', '0.25']])
def test_a_duration_between_two_steps_is_run_to_its_end(inputs, tmp_path, capsys, monkeypatch):
    """
    0.25 s in steps of 0.1 s runs three steps, to 0.3 s, under the file's last row after 0.25 s.

    Rounded to the nearest step count (2), the run ended at 0.2 s, before the file's last row
    (2.4 N of its 3 N), and said it was done.
    """
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'ramp.csv').write_text('t,t0\n0,0\n0.25,3\n')
    assert main(['simulate', '--robot', str(ROOT / 'config' / 'steel_rod_robot.yaml'),
                 *inputs, '--dt', '0.1', '--trajectory-out', 'tip.csv', '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['sim_time'] == pytest.approx(0.3, abs=1e-9)
    assert summary['tensions'][0] == pytest.approx(3.0, abs=1e-12)
    rows = np.loadtxt(tmp_path / 'tip.csv', delimiter=',', skiprows=1)
    np.testing.assert_allclose(rows[:, 0], [0.0, 0.1, 0.2, 0.3], atol=1e-12)


def test_alpha_reaches_the_implicit_model(capsys):
    """--alpha -0.5 runs the trapezoidal rule: the summary and the JSON line say so."""
    assert main(['simulate', '--robot', str(ROOT / 'config' / 'steel_rod_robot.yaml'),
                 '--tensions', 't0=1', '--duration', '0.02', '--alpha', '-0.5', '--json']) == 0
    out = capsys.readouterr().out
    assert 'alpha -0.5' in out
    assert json.loads(out.strip().splitlines()[-1])['alpha'] == -0.5


def test_a_world_puts_its_contacts_in_the_json_and_the_contact_force_in_the_trajectory(
        tmp_path, capsys):
    world = tmp_path / 'prop.yaml'
    world.write_text('obstacles:\n'
                     '  - {name: prop, shape: cylinder, radius: 0.01, length: 0.05,\n'
                     '     position: [0.5, 0.0, -0.011],\n'
                     '     orientation: [-0.7071068, 0, 0, 0.7071068]}\n')
    out = tmp_path / 'run.csv'
    steel = ROOT / 'config' / 'steel_rod_robot.yaml'
    proc = Run(capsys, '--robot', str(steel), '--world', str(world), '--duration', '0.01',
               '--trajectory-out', str(out), '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary['integrator'] == 'implicit'      # auto: the stiff steel rod's
    (contact,) = summary['contacts']
    robot = load_robot(steel)
    weight = robot.rod.linear_density * robot.rod.length * 9.81
    # at rest on the prop from the start: 3/8 of the weight (test_contact_dynamics.py)
    assert contact['force'][2] == pytest.approx(3 * weight / 8, rel=0.02)
    header = out.read_text().splitlines()[0].split(',')
    assert header[-3:] == ['contact_fx', 'contact_fy', 'contact_fz']
    rows = np.loadtxt(out, delimiter=',', skiprows=1, ndmin=2)
    assert len(rows) == 6          # t = 0 and five steps of 2 ms
    np.testing.assert_allclose(rows[:, -1], contact['force'][2], rtol=1e-3)


class _Bar:
    def __init__(self):
        self.n = 0.0

    def update(self, seconds):
        self.n += seconds


@pytest.mark.parametrize('bounded, expected', [
    (False, 'simulating 10 s takes about 3.3 min more at 0.05 x real time'),
    (True, 'simulating until the tip is at rest, at most 10 s: up to about 3.3 min more at '
           '0.05 x real time')])
def test_the_time_left_is_measured_after_the_start_up_and_a_bound_says_so(
        monkeypatch, capsys, bounded, expected):
    """
    ``simulate --until-steady`` once said "10 s takes about 22.5 min" and ended in 13 s.

    The first chunk (numba's compile, here 60 s of wall time) must not enter the speed, and
    ``--max-time`` is a bound, not the run's length.
    """
    from tendon_robot_sim.commands import simulate as command

    clock = [0.0]
    monkeypatch.setattr(command.time, 'perf_counter', lambda: clock[0])
    update = command._announcing_long_runs(_Bar(), 10.0, bounded)
    clock[0] = 60.0        # the first chunk, start-up in it
    update(0.05)
    for _ in range(25):    # then 0.05 x real time
        clock[0] += 1.0
        update(0.05)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_the_explicit_integrator_takes_a_world_and_reports_its_contacts(tmp_path, capsys):
    """The silicone robot's discs come to rest on a floor 1 mm below them (explicit, auto)."""
    robot = tmp_path / 'damped.yaml'
    data = load_robot(default_robot_file()).with_changes(damping={'ratio': 0.9}).to_dict()
    robot.write_text(yaml.safe_dump(data))
    world = tmp_path / 'floor.yaml'
    world.write_text('obstacles: [{name: floor, shape: plane, position: [0, 0, -0.019]}]\n')
    out = tmp_path / 'run.csv'
    proc = Run(capsys, '--robot', str(robot), '--world', str(world), '--duration', '0.02',
               '--trajectory-out', str(out), '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary['integrator'] == 'explicit'
    forces = np.array([c['force'] for c in summary['contacts']])
    assert {c['obstacle'] for c in summary['contacts']} == {'floor'}
    assert np.all(forces[:, 2] > 0.0)
    rows = np.loadtxt(out, delimiter=',', skiprows=1, ndmin=2)
    # the floor carries part of the weight (rod and discs: 0.43 N), none of it pulls
    assert 0.0 < rows[-1, -1] < 0.43
    np.testing.assert_allclose(rows[-1, -1], forces[:, 2].sum(), rtol=1e-6)


TILL = ['--robot', str(ROOT / 'config' / 'till_tendon_robot.yaml'), '--dt', '0.05',
        '--displacements-csv', str(ROOT / 'config' / 'till_tendon_robot_displacements.csv')]
# each integrator and its inputs: constant tensions (explicit, implicit), inputs over time
RUNS = {'explicit': ['--integrator', 'explicit', '--tensions', '0,2,0,0', '--duration', '0.05'],
        'implicit': ['--integrator', 'implicit', '--tensions', '0,2,0,0', '--duration', '0.1'],
        'implicit, inputs over time': [*TILL, '--duration', '1']}


def _arguments(run: str, coarse_robot) -> list[str]:
    """Return the arguments of ``RUNS[run]``: on the coarse robot unless they name one."""
    robot = [] if '--robot' in RUNS[run] else ['--robot', str(coarse_robot)]
    return [*robot, *RUNS[run]]


def _timed_apart(capsys, arguments, key: str, seconds: float, said: str) -> None:
    """Run; the ``seconds`` of a slow call before the run are in ``key``, not in its speed."""
    result = Run(capsys, *arguments, '--json')
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary[key] >= seconds
    assert 0.0 < summary['wall_time'] < seconds
    assert summary['real_time_factor'] == summary['sim_time'] / summary['wall_time']
    assert re.search(rf'; [\d.]+ s before it {said}', result.stdout), result.stdout


def _slow_first_step(monkeypatch, seconds: float) -> list:
    """
    Give simulate a clock of its own, which its integrators' steps advance.

    The first step of either integrator takes ``seconds`` (numba compiling it on a first run),
    every later call 1 ms. Returns the clock ([seconds]).
    """
    from tendon_robot_sim.commands import simulate as command
    from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
    from tendon_robot_sim.models.rod.dynamics.implicit_step_control import StepControl

    clock = [0.0]
    monkeypatch.setattr(command, 'time', SimpleNamespace(perf_counter=lambda: clock[0]))

    def slow(step):
        def stepping(*args, **kwargs):
            clock[0] += seconds if clock[0] == 0.0 else 1e-3
            return step(*args, **kwargs)
        return stepping
    monkeypatch.setattr(TendonSimulator, 'advance', slow(TendonSimulator.advance))
    monkeypatch.setattr(StepControl, '_step', slow(StepControl._step))
    return clock


@pytest.mark.parametrize('run', RUNS)
def test_the_speed_leaves_out_the_first_step_that_compiles_the_integrator(
        run, coarse_robot, monkeypatch, capsys):
    """
    A first run (an empty numba cache) said 0.1 x real time of a model that runs 30 x.

    Its first step, in which numba compiles the integrator (seconds to tens of seconds), was
    timed with the run. It is timed apart (``first_call_time``) and said when 1 s or more.
    """
    _slow_first_step(monkeypatch, 100.0)
    _timed_apart(capsys, _arguments(run, coarse_robot), 'first_call_time', 100.0,
                 'compiling the model')


@pytest.mark.parametrize('run', RUNS)
def test_the_first_step_timed_apart_leaves_the_run_as_it_was(
        run, coarse_robot, monkeypatch, tmp_path, capsys):
    """The trajectory and the end state are those of a run without the first step apart."""
    from tendon_robot_sim.commands import simulate as command

    outputs = {}
    for apart in (True, False):
        if not apart:
            monkeypatch.setattr(command, '_first_step', lambda *args: 0.0)
        out = tmp_path / f'{apart}.csv'
        result = Run(capsys, *_arguments(run, coarse_robot), '--trajectory-out', str(out),
                     '--json')
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout.strip().splitlines()[-1])
        outputs[apart] = (out.read_text(), {
            key: value for key, value in summary.items()
            if key not in ('first_call_time', 'settle_time', 'wall_time', 'real_time_factor',
                           'trajectory_out')})
    assert outputs[True] == outputs[False]


@pytest.mark.parametrize('run', ['explicit', 'implicit, inputs over time'])
def test_the_speed_leaves_out_the_rest_the_run_starts_from(
        run, coarse_robot, monkeypatch, capsys):
    """
    The explicit model's settling counted in the run's speed: 0.2 x for a model at 4 x.

    It settles from straight (1.4 s of wall time for the default robot) before a run of 0.3 s,
    whose sim_time leaves it out. Bringing the robot to rest before t = 0 (the explicit
    model's settling, the implicit one's equilibrium of the inputs at t = 0) is timed apart
    (``settle_time``), said when 1 s or more.
    """
    from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
    from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator

    clock = _slow_first_step(monkeypatch, 1e-3)

    def slow(method):
        """Each call 50 s (the implicit model's at its start too: in first_call_time)."""
        def resting(sim, *args, **kwargs):
            clock[0] += 50.0
            return method(sim, *args, **kwargs)
        return resting
    for simulator, method in ((TendonSimulator, 'run_until_steady'),
                              (ImplicitSimulator, 'place_at_rest')):
        monkeypatch.setattr(simulator, method, slow(getattr(simulator, method)))
    _timed_apart(capsys, _arguments(run, coarse_robot), 'settle_time', 50.0,
                 'settling at rest')
