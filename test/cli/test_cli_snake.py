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

"""``tendon-robot-sim snake`` command line: one real subprocess, the rest through main()."""

import csv
import json
import os
from pathlib import Path
import shlex
import subprocess
import sys

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.cli import main
from tendon_robot_sim.commands.snake import default_snake_file
from tendon_robot_sim.models.snake.dynamics import SnakeDynamics, study_trajectory
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.loads import LinkWrench
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.snake.statics import equilibrium
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
SNAKE = load_snake(default_snake_file())


def read_rows(path):
    with open(path, newline='') as file:
        return list(csv.DictReader(file))


def test_inverse_writes_csv_plot_and_json(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    proc = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'snake', 'inverse', '--trajectory', 'all',
         '--duration', '2', '--dt', '0.05', '--out', str(tmp_path), '--plot', '--json'],
        capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(report['trajectories']) == {'pan', 'tilt', 'both'}
    # the trends of the paper's figure 2, beside ours (test_snake_figure2.py checks them)
    assert [row['paper'] for row in report['figure_2']][3] == '+43 % ("almost 43 %")'
    assert "this run: 2 s in steps of 0.05 s; the paper's: 12.6 s" in proc.stdout
    assert (tmp_path / 'tensions.png').stat().st_size > 10_000
    t, q, qd, qdd = study_trajectory(SNAKE, 'tilt', 2.0, 0.05)
    expected = SnakeDynamics(SNAKE).inverse(t, q, qd, qdd)
    summary = report['trajectories']['tilt']
    assert summary['steps'] == t.size and summary['feasible']
    assert_allclose(list(summary['peak_base_tensions'].values()),
                    expected.base_tensions.max(axis=0), rtol=1e-12)
    rows = read_rows(tmp_path / 'tensions_tilt.csv')
    assert len(rows) == t.size
    assert_allclose([float(r['segment1_cable2']) for r in rows], expected.base_tensions[:, 1],
                    rtol=1e-8)
    assert_allclose([float(r['theta2']) for r in rows], q[:, 1], atol=1e-9)
    assert all('pretension' in r['active_joint1'] for r in rows)
    assert_allclose([float(r['joint3_normal2']) for r in rows], expected.normal_forces[:, 2, 1],
                    rtol=1e-8)
    assert_allclose([float(r['joint4_friction_z1']) for r in rows],
                    expected.friction_forces[:, 3, 0, 1], rtol=1e-8, atol=1e-12)
    assert_allclose([float(r['joint4_friction_y2']) for r in rows],
                    expected.friction_forces[:, 3, 1, 0], rtol=1e-8, atol=1e-12)


def test_inverse_from_a_csv_file(tmp_path, capsys):
    t, q, qd, qdd = study_trajectory(SNAKE, 'both', 6.0, 0.01)
    path = tmp_path / 'motion.csv'
    with open(path, 'w', newline='') as file:
        writer = csv.writer(file)
        writer.writerow(['time'] + [f'q{n}' for n in range(1, 7)])
        writer.writerows(np.column_stack((t, q)).tolist())
    assert main(['snake', 'inverse', '--trajectory', str(path), '--out', str(tmp_path),
                 '--json']) == 0
    rows = read_rows(tmp_path / 'tensions_motion.csv')
    from_file = np.array([float(r['segment2_cable2']) for r in rows])
    # rates from a spline through the samples: the tensions agree with the exact ones to
    # well within what a 10 ms sampling can resolve (interior; the spline's ends are free)
    exact = SnakeDynamics(SNAKE).inverse(t, q, qd, qdd).tensions[:, 1, 1]
    assert_allclose(from_file[20:-20], exact[20:-20], rtol=1e-3)


@pytest.mark.parametrize('text, message', [
    ('t,a,b,c,d,e,f\n0,0,0,0,0,0,0\n',
     '--trajectory: {path}: the first row must be a header starting with "time"'),
    ('time,a,b\n0,0,0\n', '--trajectory: {path}: 2 angle columns, the snake has 6 joints'),
    ('time,a,b,c,d,e,f\n' + '0,0,0,0,0,0,0\n' * 5,
     "--trajectory: {path}: line 3, column 'time': the time repeats the one of line 2"),
    ('time,a,b,c,d,e,f\n' + '0,0,0,0,0,0,0\n' * 3,
     '--trajectory: {path}: needs at least 4 rows of 7'),
    # an angle beyond the rolling surfaces: named by its line and column, as every cell (it
    # said 'q: joint 6 reaches 2 rad at t = 0.000 s', neither file nor line)
    ('time,a,b,c,d,e,f\n' + ''.join(f'{i},0,0,0,0,0,2\n' for i in range(5)),
     "--trajectory: {path}: line 2, column 'f': 2 rad is beyond the rolling surfaces "
     '(|theta| <= 2 alpha = 1.466 rad)'),
    # degrees typed for radians: said so
    ('time,a,b,c,d,e,f\n' + ''.join(f'{i},0,{10 * i},0,0,0,0\n' for i in range(5)),
     "--trajectory: {path}: line 3, column 'b': 10 rad is beyond the rolling surfaces "
     '(|theta| <= 2 alpha = 1.466 rad); angles are radians: 10 deg would be 0.1745'),
])
def test_bad_trajectory_files_are_one_line_errors(tmp_path, capsys, text, message):
    path = tmp_path / 'bad.csv'
    path.write_text(text)
    assert main(['snake', 'inverse', '--trajectory', str(path), '--out', str(tmp_path)]) == 2
    assert message.format(path=path) in capsys.readouterr().err


def _strict_json(line):
    """Parse one line of JSON, refusing NaN and Infinity (jq and JSON.parse reject them)."""
    def refuse(constant):
        raise AssertionError(f'{constant} in a JSON line')
    return json.loads(line, parse_constant=refuse)


def test_inverse_peaks_are_over_the_steps_with_tensions_and_the_json_is_json(tmp_path, capsys):
    # Tilt joint 2 up to -1.46 rad in 0.3 s: the last step is infeasible (the contacts would
    # have to pull), the first three are not; the peaks of those three are what the motors
    # must reach, not NaN (a NaN also made the --json line invalid JSON).
    path = tmp_path / 'lift.csv'
    path.write_text('time,q1,q2,q3,q4,q5,q6\n' + ''.join(
        f'{0.1 * i:g},0,{-q:g},0,0,0,0\n' for i, q in enumerate((0, 0.5, 1.0, 1.46))))
    assert main(['snake', 'inverse', '--trajectory', str(path), '--out', str(tmp_path),
                 '--json']) == 1
    out = capsys.readouterr().out
    summary = _strict_json(out.strip().splitlines()[-1])['trajectories']['lift']
    assert summary['infeasible_steps'] > 0 and not summary['feasible']
    rows = read_rows(tmp_path / 'tensions_lift.csv')
    base = np.array([[float(r[f'segment1_cable{c}']) for c in range(1, 5)] for r in rows])
    solved = np.isfinite(base).all(axis=1)
    assert 0 < solved.sum() < len(rows)
    assert_allclose(list(summary['peak_base_tensions'].values()), base[solved].max(axis=0))
    assert_allclose(list(summary['min_base_tensions'].values()), base[solved].min(axis=0))
    assert 'nan N' not in out


def run_json(argv, capsys):
    """Exit code, the JSON report (last line of stdout) and stderr of a command."""
    code = main(argv)
    out = capsys.readouterr()
    return code, json.loads(out.out.strip().splitlines()[-1]), out.err


@pytest.mark.parametrize('duration, reached', [('0.012', 0.015), ('0.035', 0.035)])
def test_forward_runs_a_duration_between_two_steps_to_the_later_one(duration, reached, capsys):
    """
    2.4 steps of 5 ms ran 2 (0.01 s), where cc-dynamics ran 3: one rule, ``commands.run_steps``.

    The report says the time reached, not the --duration asked.
    """
    code, report, _ = run_json(['snake', 'forward', '--from', '1.5,3.5,1,1', '--tensions',
                                '1.5,3.5,1,1', '--duration', duration, '--dt', '0.005',
                                '--json'], capsys)
    assert code == 0
    assert report['time'] == report['duration'] == pytest.approx(reached, rel=1e-12)


def test_forward_stops_where_the_motion_breaks_a_constraint(capsys):
    code, report, err = run_json(['snake', 'forward', '--tensions', 'cable2=3', '--duration',
                                  '0.2', '--json'], capsys)
    assert report['tensions'] == [SNAKE.pretension, 3.0, SNAKE.pretension, SNAKE.pretension]
    # 3 N on the upper cable does not hold the snake's weight: it falls, the base joint opens
    assert code == 1 and report['broken'][0]['joint'] == 1
    assert report['broken'][0]['constraint'] == 'contact'
    assert report['valid_until'] == pytest.approx(report['broken'][0]['time'] - 0.001)
    assert 'its links would lift off each other (contact)' in err and err.count('\n') == 1
    # the last valid state is the simulated one at that time
    t = np.arange(0.0, report['valid_until'] + 5e-4, 0.001)
    q, _ = SnakeDynamics(SNAKE).simulate(t, np.tile(report['tensions'], (t.size, 1)),
                                         np.zeros(6), np.zeros(6))
    assert_allclose(report['q'], q[-1, 0], atol=1e-12)
    assert main(['snake', 'forward', '--tensions', '1,2']) == 2
    assert '2 values, the snake has 4 cables' in capsys.readouterr().err


def tour_line(path: Path) -> list:
    """Return the ``snake forward`` example of a page, as argv."""
    lines = [line for line in path.read_text().splitlines()
             if line.startswith('tendon-robot-sim snake forward')]
    assert len(lines) == 1, path
    return shlex.split(lines[0].split('#')[0])[1:]


def test_the_tour_example_stays_physical_and_ends_near_the_pose_its_tensions_hold(capsys):
    argv = tour_line(ROOT / 'README.md')
    assert argv == tour_line(ROOT / 'docs' / 'snake.md')
    code, report, _ = run_json(argv, capsys)
    assert code == 0 and report['broken_steps'] == 0 and report['problem'] is None
    assert report['rest']['holds'] and report['time'] == pytest.approx(report['duration'])
    dynamics = SnakeDynamics(SNAKE)
    start, end = np.array(report['from']), np.array(report['tensions'])
    # the start is at rest in the Newton-Euler dynamics under the --from tensions ...
    rest = equilibrium(SNAKE, start)
    zero = np.zeros((1, 6))
    assert np.abs(dynamics.accelerations(rest.q[None], zero, np.tile(start, (1, 6, 1)))
                  ).max() < 1e-3
    # ... and from there the ramp of the tensions, integrated here, gives the reported motion
    t = np.arange(0.0, report['duration'] + 5e-4, 0.001)
    share = np.minimum(t / report['ramp'], 1.0)[:, None]
    q, qd = dynamics.simulate(t, start + share * (end - start), rest.q, np.zeros(6))
    assert_allclose(report['q'], q[-1, 0], atol=1e-9)
    # as docs/snake.md says: the tip rises 34 mm and ends 6 mm from the pose the final
    # tensions hold (the model has no damping)
    held = SnakeKinematics(SNAKE).state(rest.q).tip_position[0]
    assert 1e3 * (report['tip_position'][2] - held[2]) == pytest.approx(34.0, abs=0.5)
    distance = np.linalg.norm(np.subtract(report['rest']['tip_position'],
                                          report['tip_position']))
    assert 1e3 * distance == pytest.approx(6.0, abs=0.5)


def test_the_old_tour_example_is_a_step_the_real_snake_would_slip_in(capsys):
    """From straight, a step to 1.5,3.5,1,1 whips the light distal links: joint 2 slips."""
    code, report, err = run_json(['snake', 'forward', '--tensions', '1.5,3.5,1,1',
                                  '--duration', '0.1', '--json'], capsys)
    assert code == 1 and report['problem'] == 't = 0.041 s, joint 2: friction constraint broken'
    t = np.arange(0.0, 0.0205, 0.001)
    _, qd = SnakeDynamics(SNAKE).simulate(t, np.tile([1.5, 3.5, 1.0, 1.0], (t.size, 1)),
                                          np.zeros(6), np.zeros(6))
    assert abs(qd[-1, 0, 3]) == pytest.approx(17.0, abs=0.5)     # rad/s, joint 4 after 20 ms
    # the same tensions hold the snake at rest with every constraint kept
    rest = equilibrium(SNAKE, [1.5, 3.5, 1.0, 1.0])
    zero = np.zeros((1, 6))
    held = SnakeDynamics(SNAKE).inverse([0.0], rest.q[None], zero, zero,
                                        tensions=np.tile([1.5, 3.5, 1.0, 1.0], (1, 6, 1)))
    assert rest.stable and held.feasible


def test_inverse_under_a_tip_wrench_in_either_frame(tmp_path, capsys):
    t, q, qd, qdd = study_trajectory(SNAKE, 'tilt', 2.0, 0.05)
    for extra, load in (
            ([], LinkWrench(6, np.array([0.0, 0.1, -0.3]), np.array([0.0, 0.01, 0.0]))),
            (['--wrench-frame', 'link', '--wrench-link', '4'],
             LinkWrench(4, np.array([0.0, 0.1, -0.3]), np.array([0.0, 0.01, 0.0]), 'link'))):
        code, report, _ = run_json(
            ['snake', 'inverse', '--trajectory', 'tilt', '--duration', '2', '--dt', '0.05',
             '--out', str(tmp_path), '--tip-wrench', '0,0.1,-0.3,0,0.01,0', '--json'] + extra,
            capsys)
        assert code == 0
        assert report['load'] == [{'link': load.link, 'frame': load.frame,
                                   'force': load.force.tolist(), 'moment': load.moment.tolist()}]
        expected = SnakeDynamics(SNAKE).inverse(t, q, qd, qdd, loads=[load]).base_tensions
        assert_allclose(list(report['trajectories']['tilt']['peak_base_tensions'].values()),
                        expected.max(axis=0), rtol=1e-12)
    bare = SnakeDynamics(SNAKE).inverse(t, q, qd, qdd).base_tensions
    assert expected[:, 1].max() > bare[:, 1].max() + 0.5, 'premise: the load matters'


def test_forward_from_the_pose_held_under_a_tip_wrench(capsys):
    code, report, _ = run_json(['snake', 'forward', '--from', '1.5,4,1,1', '--tensions',
                                '1.5,4,1,1', '--tip-wrench', '0,0,-0.1,0,0,0', '--duration',
                                '0.05', '--json'], capsys)
    load = LinkWrench(6, np.array([0.0, 0.0, -0.1]), np.zeros(3))
    rest = equilibrium(SNAKE, [1.5, 4.0, 1.0, 1.0], [load])
    # started at rest where the tensions hold it under the load, it stays there
    assert code == 0 and report['broken_steps'] == 0
    assert_allclose(report['q'], rest.q, atol=1e-6)
    assert_allclose(report['rest']['q'], rest.q, atol=1e-6)
    unloaded = equilibrium(SNAKE, [1.5, 4.0, 1.0, 1.0])
    assert np.abs(rest.q - unloaded.q).max() > 0.05, 'premise: the load bends the snake'


@pytest.mark.parametrize('trajectory, motion, missing', [
    ('tilt', 'tilt', 'tilt'), ('both', 'both', 'tilt'), ('all', 'tilt', 'tilt'),
    ('pan', 'pan', 'pan')])
def test_a_study_motion_of_joints_the_snake_lacks_is_refused(trajectory, motion, missing,
                                                             tmp_path, capsys):
    """A tilt motion of a snake of pan joints moved nothing, and said tensions for it, exit 0."""
    joints = 'tilt' if missing == 'pan' else 'pan'
    robot = tmp_path / 'snake.yaml'
    robot.write_text(default_snake_file().read_text().replace(
        'joints: [pan, tilt, pan, tilt, pan, tilt]', f'joints: [{", ".join([joints] * 6)}]'))
    out = tmp_path / 'out'
    assert main(['snake', 'inverse', '--robot', str(robot), '--trajectory', trajectory,
                 '--duration', '0.1', '--out', str(out)]) == 2
    assert capsys.readouterr().err == (
        f'tendon-robot-sim snake inverse: error: --trajectory: {motion} moves the {missing} '
        f'joints, and the snake has none (its joints: {", ".join([joints] * 6)})\n')
    assert not out.exists()


def test_the_exit_line_counts_infeasible_steps_not_broken_constraints(tmp_path, capsys):
    """
    10 N m about z at the tip: no step of the pan motion has tensions, at several joints each.

    The last line said "no feasible tensions at 66 steps of pan" of an 11-step motion: it
    counted the broken constraints (time, joint, constraint) as steps.
    """
    code, report, err = run_json(['snake', 'inverse', '--trajectory', 'pan', '--duration',
                                  '0.05', '--tip-wrench', '0,0,0,0,0,10', '--out',
                                  str(tmp_path), '--json'], capsys)
    summary = report['trajectories']['pan']
    rows = read_rows(tmp_path / 'tensions_pan.csv')
    steps = sum(bool(r['infeasible']) for r in rows)
    broken = sum(len(r['infeasible'].split()) for r in rows)
    assert code == 1 and steps == summary['steps'] == 11
    # infeasible_steps counts steps, as its name and the exit line say; the constraints
    # they break are counted apart
    assert summary['infeasible_steps'] == steps
    assert summary['broken_constraints'] == broken > steps
    assert (f'no feasible tensions at {steps} of {steps} steps of pan ({broken} broken '
            'constraints') in err


def test_the_json_lists_the_first_100_infeasible_steps_and_counts_them_all(tmp_path, capsys):
    """
    The JSON line keeps its size: the first 100 broken constraints, the count of all of them.

    docs/snake.md said it had every infeasible step; the CSV has every one.
    """
    path = tmp_path / 'held.csv'
    path.write_text('time,q1,q2,q3,q4,q5,q6\n' + ''.join(
        f'{0.01 * i:g},0,-1.46,0,0,0,0\n' for i in range(120)))
    code, report, _ = run_json(['snake', 'inverse', '--trajectory', str(path), '--out',
                                str(tmp_path), '--json'], capsys)
    assert code == 1
    summary = report['trajectories']['held']
    assert summary['infeasible_steps'] == 120 and len(summary['infeasible']) == 100
    assert summary['broken_constraints'] >= 120
    rows = read_rows(tmp_path / 'tensions_held.csv')
    assert sum(bool(r['infeasible']) for r in rows) == 120
    docs = (ROOT / 'docs' / 'snake.md').read_text()
    assert 'every infeasible step (time, joint, constraint)' not in docs
    assert ('steps without feasible tensions (`infeasible_steps`), the constraints they '
            'break (`broken_constraints`') in ' '.join(docs.split())
    assert 'and the first 100 of these' in ' '.join(docs.split())
