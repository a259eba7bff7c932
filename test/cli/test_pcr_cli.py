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

"""``tendon-robot-sim pcr`` command line, run as a real subprocess."""

import csv
import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np

from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot

ROOT = Path(__file__).resolve().parents[2]
ROBOT = load_pcr_robot(default_pcr_file())


def run_cli(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'pcr', *args],
                          capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


def test_ik_then_fk_json_lines():
    proc = run_cli('ik', '--position', '0.05,0,0.45', '--orientation-deg', '0,0,10',
                   '--force', '0,0,-5', '--json')
    assert proc.returncode == 0, proc.stderr
    ik = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = PcrSolver(ROBOT).inverse([0.05, 0, 0.45], np.radians([0, 0, 10]), [0, 0, -5])
    np.testing.assert_allclose(ik['motor_angles'], expected.motor_angles, atol=1e-9)
    assert ik['within_limits'] is True and ik['compat'] == 'paper'
    angles = ','.join(f'{q:.12f}' for q in ik['motor_angles_deg'])
    proc = run_cli('fk', '--motor-angles-deg', angles, '--force', '0,0,-5', '--json')
    assert proc.returncode == 0, proc.stderr
    fk = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(fk['position'], [0.05, 0, 0.45], atol=1e-6)
    np.testing.assert_allclose(fk['orientation_rpy'], np.radians([0, 0, 10]), atol=1e-6)


def test_errors_are_one_line():
    proc = run_cli('fk', '--motor-angles-deg', '10,10,12,12,8,100')
    assert proc.returncode == 2
    assert proc.stderr.strip() == ('tendon-robot-sim pcr: error: motor_angles[5]: must be '
                                   'within the motor limits [-20, 90] deg, got 100 deg')
    proc = run_cli('ik', '--position', '0,0,1.5')
    assert proc.returncode == 1 and 'out of reach' in proc.stderr   # no result: exit 1
    assert len(proc.stderr.strip().splitlines()) == 1


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
    # a valid sample is what a solve in this process gives
    row = valid[-1]
    position = [float(row[k]) for k in 'xyz']
    q = PcrSolver(ROBOT).inverse(position).motor_angles
    np.testing.assert_allclose([float(row[f'q1_{i}_deg']) for i in range(1, 7)],
                               np.degrees(q), atol=1e-4)
    assert (tmp_path / 'ws' / 'workspace.png').stat().st_size > 10000


def test_ik_json_feeds_fk_as_it_is(tmp_path):
    """Ik's JSON is SI (radians); fk --from-json takes it without a unit conversion."""
    proc = run_cli('ik', '--position', '0.04,-0.02,0.47', '--orientation-deg', '-4,0,-8',
                   '--json')
    assert proc.returncode == 0, proc.stderr
    (tmp_path / 'ik.txt').write_text(proc.stdout)
    for source, stdin in ((str(tmp_path / 'ik.txt'), None), ('-', proc.stdout)):
        fk = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'pcr', 'fk',
                             '--from-json', source, '--json'], input=stdin, capture_output=True,
                            text=True, timeout=120, env=dict(
                                os.environ, PYTHONPATH=str(ROOT) + os.pathsep
                                + os.environ.get('PYTHONPATH', '')))
        assert fk.returncode == 0, fk.stderr
        pose = json.loads(fk.stdout.strip().splitlines()[-1])
        np.testing.assert_allclose(pose['position'], [0.04, -0.02, 0.47], atol=1e-6)
        np.testing.assert_allclose(pose['orientation_rpy'], np.radians([-4, 0, -8]), atol=1e-6)
    proc = run_cli('fk', '--from-json', str(tmp_path / 'nothing.txt'))
    assert proc.returncode == 2 and proc.stderr.count('\n') == 1
    assert '--from-json: cannot read' in proc.stderr
