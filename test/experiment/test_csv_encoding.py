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
Every CSV reader takes a file saved with a byte-order mark (Excel's "CSV UTF-8") as without.

Before, the mark stayed in the first column's name, invisible, and that column was unknown.
"""

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands.snake import read_trajectory
from tendon_robot_sim.experiment.csv_table import read_table
from tendon_robot_sim.experiment.dataset import _read_csv
from tendon_robot_sim.experiment.experiment import read_holds_csv
from tendon_robot_sim.models.tendon_robot import load_robot

BOM = '\ufeff'
ROBOT = load_robot(default_robot_file())


def table(path):
    found = read_table(path)
    return {name: found.column(name).tolist() for name in ('t', 't0')}


def holds(path):
    return [(h.tensions.tolist(), h.tip.tolist()) for h in read_holds_csv(path, ROBOT)]


def trajectory(path):
    return [a.tolist() for a in read_trajectory(path, 2)]


def samples(path):
    return _read_csv(str(path), ['a', 'b'], np.zeros(2), np.ones(2)).tolist()


CASES = [
    (table, 't,t0\n0,1\n1,2\n'),
    (holds, 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,1,0,0,0.2,0,0.1\n'),
    (trajectory, 'time,theta1,theta2\n' + ''.join(f'{0.1 * k:.1f},0,0\n' for k in range(5))),
    (samples, 'a,b\n0.5,0.25\n'),
]


@pytest.mark.parametrize('read, text', CASES, ids=[c[0].__name__ for c in CASES])
def test_a_byte_order_mark_changes_nothing(read, text, tmp_path):
    plain, marked = tmp_path / 'plain.csv', tmp_path / 'marked.csv'
    plain.write_text(text, encoding='utf-8')
    marked.write_text(BOM + text, encoding='utf-8')
    assert marked.read_bytes().startswith(b'\xef\xbb\xbf')
    assert read(marked) == read(plain)
