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
import subprocess
import sys

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.cli import main
from tendon_robot_sim.commands.snake import default_snake_file
from tendon_robot_sim.models.snake.dynamics import SnakeDynamics, study_trajectory
from tendon_robot_sim.models.snake.robot import load_snake

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
        capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(report['trajectories']) == {'pan', 'tilt', 'both'}
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
    ('t,a,b,c,d,e,f\n0,0,0,0,0,0,0\n', 'header starting with "time"'),
    ('time,a,b\n0,0,0\n', '2 angle columns, the snake has 6 joints'),
    ('time,a,b,c,d,e,f\n' + '0,0,0,0,0,0,0\n' * 5, 'strictly increasing'),
    ('time,a,b,c,d,e,f\n' + ''.join(f'{i},0,0,0,0,0,2\n' for i in range(5)), 'joint 6 reaches'),
])
def test_bad_trajectory_files_are_one_line_errors(tmp_path, capsys, text, message):
    path = tmp_path / 'bad.csv'
    path.write_text(text)
    assert main(['snake', 'inverse', '--trajectory', str(path), '--out', str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_forward_reports_the_final_pose(capsys):
    assert main(['snake', 'forward', '--tensions', 'cable2=3', '--duration', '0.2',
                 '--json']) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report['tensions'] == [SNAKE.pretension, 3.0, SNAKE.pretension, SNAKE.pretension]
    assert len(report['q']) == SNAKE.n_joints and report['time'] == pytest.approx(0.2)
    # 3 N on the upper cable does not hold the snake's weight: it falls, contacts open
    assert report['broken_steps'] > 0 and report['broken'][0]['joint'] == 1
    assert main(['snake', 'forward', '--tensions', '1,2']) == 2
    assert '2 values, the snake has 4 cables' in capsys.readouterr().err
