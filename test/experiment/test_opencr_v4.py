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
The FTDCR v4 chain of ``make opencr-v4``: import, calibrate on train, validate held out.

On the excerpt of test/data/opencr_ftdcr_v4 (MIT): the commands, their files and their
metrics, checked against the CSV the command writes and against the definitions (RMSE after
removing the mean offset, per label, in % of the length, the hysteresis of a pull). With the
full recordings (the folder in ``OPENCR_V4_DATA``, as ``make opencr-v4 DATA=DIR`` takes it),
the held-out aligned RMSE below opencr-mujoco's 7.7 mm (6.78 mm measured), and the second stage,
the rod's bending friction, well below that (5.91 mm measured; docs/experiments.md says where
the error lives); without them those tests are skipped (they are not in the repository).
"""

import csv
import json
import os
from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim import cli

ROOT = Path(__file__).resolve().parents[2]
EXCERPT = ROOT / 'test' / 'data' / 'opencr_ftdcr_v4'
SESSION = 'tdcr_sysid_20260511-183002'
ROBOT = str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
COLUMNS = str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml')
LENGTH = 0.1865       # m
PEER_MM = 7.7         # opencr-mujoco's held-out aligned RMSE (issue 39's target: 6.5 mm)


def make_variable(name: str) -> str:
    """Return a variable of the Makefile: what ``make opencr-v4`` runs."""
    line = next(line for line in (ROOT / 'Makefile').read_text().splitlines()
                if line.startswith(name + ' :='))
    return line.split(':=', 1)[1].strip()


def chain(data: Path, folder: Path, fit: str, capsys) -> tuple[dict, dict]:
    """Run ``make opencr-v4``'s commands; return the val and pull JSON summaries."""
    for part in ('tendon_pull', 'train', 'val'):
        assert cli.main(['import', str(data / f'{SESSION}_{part}.csv'), '--columns', COLUMNS,
                         '--robot', ROBOT, '--out', str(folder / part)]) == 0
    options = make_variable('OPENCR_V4_MODEL').split()
    calibrated = str(folder / 'calibrated.yaml')
    assert cli.main(['calibrate', str(folder / 'train'), '--robot', ROBOT, *options, '--fit',
                     fit, '--out', calibrated, '--workers', '2']) == 0
    summaries = []
    for part, extra in (('val', ['--samples-out', str(folder / 'val_samples.csv')]),
                        ('tendon_pull', [])):
        capsys.readouterr()
        assert cli.main(['validate', str(folder / part), '--robot', calibrated, *options,
                         '--json', '--report', str(folder / f'{part}_report'), *extra]) == 0
        summaries.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1]))
    return summaries[0], summaries[1]


def test_the_chain_on_the_excerpt(tmp_path, capsys):
    # a small fit (the excerpt has 54 train rows): the commands and files, not the accuracy
    val, pull = chain(EXCERPT, tmp_path, '*.pretension@segment,base.position', capsys)
    with open(tmp_path / 'val_samples.csv', newline='') as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ['t', 'label', 'measured_x', 'measured_y', 'measured_z', 'model_x',
                             'model_y', 'model_z']
    assert len(rows) == val['samples'] == 27 and val['failed'] == 0
    measured = np.array([[float(r[f'measured_{a}']) for a in 'xyz'] for r in rows])
    model = np.array([[float(r[f'model_{a}']) for a in 'xyz'] for r in rows])
    # the metrics from the samples written, by their definitions
    error = model - measured
    plain = np.sqrt(np.mean(np.sum(error ** 2, axis=1)))
    aligned = np.sqrt(np.mean(np.sum((error - error.mean(axis=0)) ** 2, axis=1)))
    assert val['tip_rmse_mm'] == pytest.approx(plain * 1e3, rel=1e-9)
    assert val['tip_rmse_aligned_mm'] == pytest.approx(aligned * 1e3, rel=1e-9)
    assert val['tip_rmse_aligned_percent'] == pytest.approx(100 * aligned / LENGTH, rel=1e-9)
    assert list(val['labels']) == ['rep1_all3_scurve_dir0']
    assert val['labels']['rep1_all3_scurve_dir0']['tip_rmse_mm'] == pytest.approx(
        val['tip_rmse_mm'], rel=1e-9)
    # measured in the base frame: the shipped map's is the capture frame, in m
    with open(EXCERPT / f'{SESSION}_val.csv', newline='') as handle:
        first = next(csv.DictReader(handle))
    np.testing.assert_allclose(measured[0], [float(first[f'tip_{a}']) * 1e-3 for a in 'xyz'],
                               rtol=0, atol=1e-12)
    for name in ('report.md', 'paths.png', 'error_time.png', 'worst.png'):
        assert (tmp_path / 'val_report' / name).stat().st_size > 0
    # the pull file: each pull's hysteresis, measured beside a model without memory
    pulls = pull['labels']
    assert set(pulls) == {'rep1_tendon0_id4_pull', 'rep1_tendon0_id4_pull_hold',
                          'rep1_tendon4_id2_pull', 'rep1_tendon4_id2_pull_hold'}
    first = pulls['rep1_tendon0_id4_pull']
    # the measured loop: where the model is in the same place on the way in and out, the
    # measured tip is millimetres apart (the model without memory: within 1 mm)
    assert first['loop_pairs'] > 0 and first['loop_width_mm'] > 5.0
    assert first['return_offset_mm'] >= 0.0 and 'return_error_mm' in first


@pytest.mark.skipif(not os.environ.get('OPENCR_V4_DATA'),
                    reason='the full FTDCR v4 recordings: set OPENCR_V4_DATA to their folder')
def test_the_held_out_error_on_the_full_recordings(tmp_path, capsys):
    data = Path(os.environ['OPENCR_V4_DATA'])
    val, _ = chain(data, tmp_path, make_variable('OPENCR_V4_FIT'), capsys)
    assert val['samples'] == 443 and val['failed'] == 0
    assert val['tip_rmse_aligned_mm'] < PEER_MM, val['tip_rmse_aligned_mm']


@pytest.mark.skipif(not os.environ.get('OPENCR_V4_DATA'),
                    reason='the full FTDCR v4 recordings: set OPENCR_V4_DATA to their folder')
def test_the_bending_friction_stage_lowers_the_held_out_error(tmp_path, capsys):
    data = Path(os.environ['OPENCR_V4_DATA'])
    val, _ = chain(data, tmp_path, make_variable('OPENCR_V4_FIT'), capsys)
    options = make_variable('OPENCR_V4_MODEL').split()
    friction = str(tmp_path / 'calibrated_friction.yaml')
    assert cli.main(['calibrate', str(tmp_path / 'train'), '--robot',
                     str(tmp_path / 'calibrated.yaml'), *options, '--fit',
                     make_variable('OPENCR_V4_FRICTION_FIT'), '--bounds',
                     make_variable('OPENCR_V4_FRICTION_BOUNDS'), '--out', friction,
                     '--workers', '2']) == 0
    capsys.readouterr()
    assert cli.main(['validate', str(tmp_path / 'val'), '--robot', friction, *options,
                     '--json', '--report', str(tmp_path / 'friction_report')]) == 0
    held = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # the memory of the last bend: a clear gain over the frictionless fit (0.87 mm measured)
    assert held['failed'] == 0
    assert held['tip_rmse_aligned_mm'] < val['tip_rmse_aligned_mm'] - 0.5, held
