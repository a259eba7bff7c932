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

import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands.snake import read_trajectory
from tendon_robot_sim.experiment.csv_table import read_table
from tendon_robot_sim.experiment.dataset import _read_csv
from tendon_robot_sim.experiment.experiment import read_holds_csv
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import COMMAND_TIMEOUT

BOM = '\ufeff'
ROBOT = load_robot(default_robot_file())
ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize('read, text', CASES, ids=[c[0].__name__ for c in CASES])
def test_a_line_without_end_or_with_a_nul_byte_is_no_csv(read, text, tmp_path):
    """
    Every reader reads a line up to a bound, and refuses a NUL byte: one error naming the line.

    A file of one endless line (``--csv /dev/zero``) was read whole into memory; a file of
    NUL bytes became a header of them, printed in the error.
    """
    from tendon_robot_sim.experiment.csv_table import MAX_LINE
    long, binary = tmp_path / 'long.csv', tmp_path / 'nul.csv'
    header = text.splitlines()[0]
    long.write_text(text + 'x' * (MAX_LINE + 1), encoding='utf-8')
    binary.write_text(header + '\n' + '\0' * 100 + '\n', encoding='utf-8')
    with pytest.raises(Exception, match=rf'{long}: line \d+: longer than {MAX_LINE} characters'):
        read(long)
    with pytest.raises(Exception, match=rf'{binary}: line 2: a NUL byte: is it a CSV file\?'):
        read(binary)


def test_an_endless_file_is_refused_without_reading_it_whole(tmp_path):
    """``dataset --csv /dev/zero`` read until memory ran out; a line's bound ends it at once."""
    limit = ('import resource, sys; from tendon_robot_sim import cli; '
             'resource.setrlimit(resource.RLIMIT_DATA, (2 ** 31, 2 ** 31)); '
             'sys.exit(cli.main(sys.argv[1:]))')
    proc = subprocess.run(
        [sys.executable, '-c', limit, 'dataset', '--robot', default_robot_file(), '--model',
         'cc', '--sampler', 'csv', '--csv', '/dev/zero', '--output', str(tmp_path / 'd')],
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count('\n') == 1, proc.stderr
    assert '/dev/zero: line 1: longer than' in proc.stderr, proc.stderr
