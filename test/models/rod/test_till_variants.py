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
Till's statics model variants: the "Paper vs package" table of docs/tendon_robot.md.

Each row's command is run (in-process) and its tip compared with the two columns: Till's
example programs' output, to the 6 digits they print, and what the table says we compute.
"""

import json
from pathlib import Path
import re
import shlex

import numpy as np
import pytest
from tendon_robot_sim.cli import main
import yaml

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / 'docs' / 'tendon_robot.md').read_text()
TABLE = DOC[DOC.index("**Till's statics model variants**"):DOC.index("**Tuzlaci's")]
ROWS = [[cell.strip() for cell in line.split('|')[1:-1]] for line in TABLE.splitlines()
        if line.startswith('| ') and '`tendon-robot-sim' in line]


def vector(cell: str) -> np.ndarray:
    return np.array([float(v) for v in re.match(r'\(([^)]*)\)', cell).group(1).split(',')])


def test_the_table_has_the_five_studies():
    assert [row[0].split(',')[0].split(' (')[0] for row in ROWS] == [
        'Cosserat rod', 'Kirchhoff rod', 'helical routing', 'converging routing',
        'displacement control']


@pytest.mark.parametrize('study, till, ours, command', ROWS, ids=[row[0] for row in ROWS])
def test_each_study_computes_what_the_table_says(study, till, ours, command, capsys,
                                                 monkeypatch):
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command.strip('`'))
    assert argv[0] == 'tendon-robot-sim'
    assert main(argv[1:]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    tip = np.array(result['tip_position'])
    # Till's centerline.dat has 6 significant digits: 1e-6 m at these sizes
    np.testing.assert_allclose(tip, vector(till), rtol=0, atol=1.5e-6)
    np.testing.assert_allclose(tip, vector(ours), rtol=0, atol=1.5e-6)
    if 'tension' in ours:
        tension = float(re.search(r'tension ([\d.]+) N', ours).group(1))
        assert result['tensions'][0] == pytest.approx(tension, abs=1e-4)
        assert result['tensions'][1:] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize('variant', ['helical', 'converging', 'displacement'])
def test_the_variants_differ_from_the_steel_rod_only_in_the_tendons(variant):
    base = yaml.safe_load((ROOT / 'config' / 'steel_rod_robot.yaml').read_text())
    other = yaml.safe_load((ROOT / 'config' / f'steel_rod_{variant}.yaml').read_text())
    for key in set(base) | set(other):
        if key not in ('name', 'tendons'):
            assert other.get(key) == base.get(key), key
    for mine, theirs in zip(other['tendons'], base['tendons']):
        for key, value in theirs.items():
            assert mine[key] == value, (variant, key)
