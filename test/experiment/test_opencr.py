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
The FTDCR chain of ``make opencr-v4`` and ``make opencr-v6``: import, calibrate on train, validate.

On the excerpts of test/data/opencr_ftdcr_v4 and _v6 (MIT): the commands, their files and their
metrics, checked against the CSV the command writes and against the definitions (RMSE after
removing the mean offset, per label, in % of the length, the hysteresis of a pull), and each
robot file's hole angles against the tip's motion in its pull file. With the full v4
recordings (the folder in ``OPENCR_V4_DATA``, as ``make opencr-v4 DATA=DIR`` takes it), the
held-out aligned RMSE below opencr-mujoco's 7.7 mm (6.78 mm measured), and the second stage,
the rod's bending friction, well below that (5.91 mm measured; docs/experiments.md says where
the error lives); with the full v6 recordings (``OPENCR_V6_DATA``) the same chain on the second
robot; without them those tests are skipped (they are not in the repository).
"""

import csv
import json
import math
import os
from pathlib import Path
import re
import subprocess

import numpy as np
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.experiment.column_map import load_column_map
from tendon_robot_sim.models.tendon_robot import load_robot

ROOT = Path(__file__).resolve().parents[2]
PEER_MM = 7.7         # opencr-mujoco's held-out aligned RMSE on v4 (issue 39's target: 6.5 mm)


class Robot:
    """One FTDCR: its shipped files, its excerpt and the session's name."""

    def __init__(self, version: str, session: str, val_label: str, pulls: set):
        self.version = version
        self.excerpt = ROOT / 'test' / 'data' / f'opencr_ftdcr_{version}'
        self.session = session
        self.robot = str(ROOT / 'config' / f'opencr_ftdcr_{version}.yaml')
        self.columns = str(ROOT / 'config' / f'opencr_ftdcr_{version}_columns.yaml')
        self.length = load_robot(self.robot).rod.length
        self.val_label = val_label      # the excerpt's one held-out motion
        self.pulls = pulls              # the excerpt's pull labels (and holds)


V4 = Robot('v4', 'tdcr_sysid_20260511-183002', 'rep1_all3_scurve_dir0',
           {'rep1_tendon0_id4_pull', 'rep1_tendon0_id4_pull_hold', 'rep1_tendon4_id2_pull',
            'rep1_tendon4_id2_pull_hold'})
V6 = Robot('v6', 'tdcrv6_sysid_20260406-181730', 'rep1_all3_scurve_dir0',
           {f'rep1_tendon{x}_id{y}_pull' for x, y in enumerate((1, 20, 23, 9, 6, 11, 24, 2, 3))}
           | {'rep1_tendon2_id23_pull_hold', 'rep1_tendon5_id11_pull_hold',
              'rep1_tendon7_id2_pull_hold'})


def make_variable(name: str) -> str:
    """Return a variable of the Makefile: what ``make opencr-v4`` and ``opencr-v6`` run."""
    line = next(line for line in (ROOT / 'Makefile').read_text().splitlines()
                if line.startswith(name + ' :='))
    return line.split(':=', 1)[1].strip()


def chain(robot: Robot, data: Path, folder: Path, fit: str, capsys) -> tuple[dict, dict]:
    """Run ``make opencr-<v>``'s commands; return the val and pull JSON summaries."""
    for part in ('tendon_pull', 'train', 'val'):
        assert cli.main(['import', str(data / f'{robot.session}_{part}.csv'), '--columns',
                         robot.columns, '--robot', robot.robot, '--out',
                         str(folder / part)]) == 0
    options = make_variable('OPENCR_MODEL').split()
    calibrated = str(folder / 'calibrated.yaml')
    assert cli.main(['calibrate', str(folder / 'train'), '--robot', robot.robot, *options,
                     '--fit', fit, '--out', calibrated, '--workers', '2']) == 0
    return (validate(folder / 'val', calibrated, folder / 'val_report', capsys,
                     '--samples-out', str(folder / 'val_samples.csv')),
            validate(folder / 'tendon_pull', calibrated, folder / 'tendon_pull_report', capsys))


def validate(bag: Path, robot_file: str, report: Path, capsys, *extra: str) -> dict:
    """Run ``validate`` as the chain does; return its JSON summary."""
    capsys.readouterr()
    assert cli.main(['validate', str(bag), '--robot', robot_file,
                     *make_variable('OPENCR_MODEL').split(), '--json', '--report', str(report),
                     *extra]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def read_rows(path: Path) -> list[dict]:
    with open(path, newline='') as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize('robot', (V4, V6), ids=lambda r: r.version)
def test_make_reads_the_session_its_data_folder_holds(robot, tmp_path):
    # one recipe for both robots; the session is the one SESSION_train.csv in DATA
    plan = subprocess.run(['make', '-n', f'opencr-{robot.version}', f'DATA={robot.excerpt}'],
                          cwd=ROOT, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    for part in ('tendon_pull', 'train', 'val'):
        assert f'{robot.excerpt}/{robot.session}_$part.csv' in plan.stdout
    assert f'config/opencr_ftdcr_{robot.version}_columns.yaml' in plan.stdout
    assert f'demo_output/opencr_{robot.version}/calibrated_friction.yaml' in plan.stdout
    # a folder without a session: one line naming it, exit 2, nothing run
    empty = subprocess.run(['make', f'opencr-{robot.version}', f'DATA={tmp_path}'], cwd=ROOT,
                           capture_output=True, text=True)
    assert empty.returncode == 2
    assert (f'make opencr-{robot.version} DATA={tmp_path}: expected one SESSION_train.csv '
            'there, found 0') in empty.stderr
    assert 'tendon_robot_sim.cli import' not in empty.stdout


@pytest.mark.parametrize('robot', (V4, V6), ids=lambda r: r.version)
def test_each_hole_angle_is_where_the_tip_went_when_its_tendon_was_pulled(robot):
    # the angles start the fit: a hole off by a third of a turn would start it in the wrong
    # valley. The tip moves towards the pulled tendon's hole: its direction at the largest
    # pull of each pull in the file, against the robot file's angle of that tendon (v4's are
    # opencr-mujoco's step 1, v6's this direction rounded: within 6 degrees either way)
    columns = {c.tendon: c.column for c in load_column_map(robot.columns).inputs}
    angles = {t.name: t.angle for t in load_robot(robot.robot).tendons}
    rows = read_rows(robot.excerpt / f'{robot.session}_tendon_pull.csv')
    checked = 0
    for label in sorted({r['pattern_label'] for r in rows}):
        match = re.fullmatch(r'rep\d+_tendon(\d)_id(\d+)_pull', label)
        if not match:
            continue
        x, servo = int(match.group(1)), f'servo_{match.group(2)}_mm'
        tendon = f's{x // 3 + 1}_t{x % 3}'
        assert columns[tendon] == servo, (label, columns[tendon])    # the map follows the labels
        pull = [r for r in rows if r['pattern_label'] == label]
        largest = max(pull, key=lambda r: float(r[servo]))
        moved = [float(largest[f'tip_{a}']) - float(pull[0][f'tip_{a}']) for a in 'xy']
        assert math.hypot(*moved) > 20.0, label        # mm: a clear bend
        off = math.remainder(math.atan2(moved[1], moved[0]) - angles[tendon], math.tau)
        assert abs(off) < math.radians(6.0), (label, math.degrees(off))
        checked += 1
    assert checked == len([p for p in robot.pulls if not p.endswith('_hold')])


@pytest.mark.parametrize('robot', (V4, V6), ids=lambda r: r.version)
def test_the_chain_on_the_excerpt(robot, tmp_path, capsys):
    # a small fit (the excerpts have 54 train rows): the commands and files, not the accuracy
    val, pull = chain(robot, robot.excerpt, tmp_path, '*.pretension@segment,base.position',
                      capsys)
    rows = read_rows(tmp_path / 'val_samples.csv')
    held = read_rows(robot.excerpt / f'{robot.session}_val.csv')
    assert list(rows[0]) == ['t', 'label', 'measured_x', 'measured_y', 'measured_z', 'model_x',
                             'model_y', 'model_z']
    assert len(rows) == val['samples'] == len(held) and val['failed'] == 0
    measured = np.array([[float(r[f'measured_{a}']) for a in 'xyz'] for r in rows])
    model = np.array([[float(r[f'model_{a}']) for a in 'xyz'] for r in rows])
    # the metrics from the samples written, by their definitions
    error = model - measured
    plain = np.sqrt(np.mean(np.sum(error ** 2, axis=1)))
    aligned = np.sqrt(np.mean(np.sum((error - error.mean(axis=0)) ** 2, axis=1)))
    assert val['tip_rmse_mm'] == pytest.approx(plain * 1e3, rel=1e-9)
    assert val['tip_rmse_aligned_mm'] == pytest.approx(aligned * 1e3, rel=1e-9)
    assert val['tip_rmse_aligned_percent'] == pytest.approx(100 * aligned / robot.length, rel=1e-9)
    assert list(val['labels']) == [robot.val_label]
    assert val['labels'][robot.val_label]['tip_rmse_mm'] == pytest.approx(
        val['tip_rmse_mm'], rel=1e-9)
    # measured in the base frame: the shipped map's is the capture frame, in m
    first = held[0]
    np.testing.assert_allclose(measured[0], [float(first[f'tip_{a}']) * 1e-3 for a in 'xyz'],
                               rtol=0, atol=1e-12)
    for name in ('report.md', 'paths.png', 'error_time.png', 'worst.png'):
        assert (tmp_path / 'val_report' / name).stat().st_size > 0
    # the pull file: each pull's hysteresis, measured beside a model without memory
    pulls = pull['labels']
    assert set(pulls) == robot.pulls
    first = pulls[min(p for p in pulls if p.startswith('rep1_tendon0_'))]
    # the measured loop: where the model is in the same place on the way in and out, the
    # measured tip is millimetres apart (the model without memory: within 1 mm)
    assert first['loop_pairs'] > 0 and first['loop_width_mm'] > 5.0
    assert first['return_offset_mm'] >= 0.0 and 'return_error_mm' in first


def full_data(robot: Robot) -> pytest.MarkDecorator:
    """Skip unless the full recordings of ``robot`` are at hand (OPENCR_V4_DATA, ...)."""
    variable = f'OPENCR_{robot.version.upper()}_DATA'
    return pytest.mark.skipif(not os.environ.get(variable),
                              reason=f'the full FTDCR {robot.version} recordings: set '
                                     f'{variable} to their folder')


def full_chain(robot: Robot, folder: Path, capsys) -> dict:
    """``make opencr-<v>``'s first stage on the full recordings; return the val summary."""
    data = Path(os.environ[f'OPENCR_{robot.version.upper()}_DATA'])
    val, _ = chain(robot, data, folder, make_variable('OPENCR_FIT'), capsys)
    assert val['failed'] == 0
    return val


@full_data(V4)
def test_the_held_out_error_on_the_full_recordings(tmp_path, capsys):
    val = full_chain(V4, tmp_path, capsys)
    assert val['samples'] == 443
    assert val['tip_rmse_aligned_mm'] < PEER_MM, val['tip_rmse_aligned_mm']


@full_data(V4)
def test_the_bending_friction_stage_lowers_the_held_out_error(tmp_path, capsys):
    val = full_chain(V4, tmp_path, capsys)
    friction = str(tmp_path / 'calibrated_friction.yaml')
    assert cli.main(['calibrate', str(tmp_path / 'train'), '--robot',
                     str(tmp_path / 'calibrated.yaml'), *make_variable('OPENCR_MODEL').split(),
                     '--fit', make_variable('OPENCR_FRICTION_FIT'), '--bounds',
                     make_variable('OPENCR_FRICTION_BOUNDS'), '--out', friction,
                     '--workers', '2']) == 0
    held = validate(tmp_path / 'val', friction, tmp_path / 'friction_report', capsys)
    # the memory of the last bend: a clear gain over the frictionless fit (0.87 mm measured)
    assert held['failed'] == 0
    assert held['tip_rmse_aligned_mm'] < val['tip_rmse_aligned_mm'] - 0.5, held


@full_data(V6)
def test_the_second_robot_is_predicted_better_calibrated_than_from_its_file(tmp_path, capsys):
    # no peer figure for v6 (opencr-mujoco publishes none): the chain's fit on train against
    # the robot file's own values on the same held-out motions (11.9 against 18.4 mm measured)
    val = full_chain(V6, tmp_path, capsys)
    assert val['samples'] == 274
    uncalibrated = validate(tmp_path / 'val', V6.robot, tmp_path / 'file_report', capsys)
    assert val['tip_rmse_aligned_mm'] < 0.8 * uncalibrated['tip_rmse_aligned_mm'], (
        val['tip_rmse_aligned_mm'], uncalibrated['tip_rmse_aligned_mm'])
