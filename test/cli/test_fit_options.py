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
``calibrate --fit`` and ``validate --fit``: a bad name or bound is refused before any work.

Before any work: nothing on standard output (no holds counted, no "calibrating ..."), one line
on standard error naming the option, exit 2, and the recording not read: the bag of these
tests, an imported FTDCR v4 table, has no holds, so an error about holds would mean it was.
"""

from pathlib import Path

import pytest

from tendon_robot_sim import cli

ROOT = Path(__file__).resolve().parents[2]
ROBOT = str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
TABLE = ROOT / 'test' / 'data' / 'opencr_ftdcr_v4' / 'tdcr_sysid_20260511-183002_val.csv'


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    path = tmp_path_factory.mktemp('fit_options') / 'val_bag'
    assert cli.main(['import', str(TABLE), '--columns',
                     str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml'), '--robot', ROBOT,
                     '--out', str(path)]) == 0
    return path


# (--fit, more options, what the one line says)
CASES = [
    ('youngs_modulus,bogus', [], "--fit: unknown parameter 'bogus'"),
    ('youngs_modulus,youngs_modulus', [], '--fit: a parameter is given twice'),
    ('q*.offset', [], "--fit: q*.offset: no tendon matches 'q*'"),
    ('*.pretension@', [], "--fit: unknown parameter '*.pretension@'"),
    ('*.pretension@seg', [], "--fit: unknown parameter '*.pretension@seg'"),
    ('base.position.w', [], "--fit: unknown parameter 'base.position.w'"),
    ('damping', [], '--fit: damping has no static effect'),
    ('*.friction', ['--model', 'dynamic'], '--fit: s1_t0+'),
    ('youngs_modulus', ['--bounds', 'shear_modulus=1:2'], "--bounds: 'shear_modulus' is not "
                                                          'fitted'),
    ('youngs_modulus', ['--bounds', 'youngs_modulus=2e3:3e3'], '--bounds: youngs_modulus needs'),
    ('youngs_modulus', ['--bounds', 'youngs_modulus=1:1e8'],
     '--bounds: youngs_modulus: (1, 1e+08) reaches beyond what the robot description takes '
     'for rod.youngs_modulus, 1000 .. 1e+14'),
]


@pytest.mark.parametrize('fit, more, text', CASES, ids=[' '.join([c[0], *c[1]]) for c in CASES])
def test_calibrate_refuses_a_bad_fit_before_any_work(bag, tmp_path, capsys, fit, more, text):
    out = tmp_path / 'calibrated.yaml'
    code = cli.main(['calibrate', str(bag), '--robot', ROBOT, '--fit', fit, *more,
                     '--out', str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2 and stdout == '' and err.count('\n') == 1, (code, stdout, err)
    assert text in err, err
    assert not out.exists()


@pytest.mark.parametrize('fit, text', [
    ('bogus', "--fit: unknown parameter 'bogus'"),
    ('*.pretension@', "--fit: unknown parameter '*.pretension@'"),
    ('damping', '--fit: damping has no static effect'),
])
def test_validate_refuses_a_bad_fit_before_any_work(bag, tmp_path, capsys, fit, text):
    report = tmp_path / 'report'
    code = cli.main(['validate', str(bag), '--robot', ROBOT, '--points', 'samples', '--fit', fit,
                     '--report', str(report)])
    stdout, err = capsys.readouterr()
    assert code == 2 and stdout == '' and err.count('\n') == 1, (code, stdout, err)
    assert text in err, err
