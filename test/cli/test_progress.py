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
Progress bars: drawn on a terminal, not into a log, unless asked (docs/cli.md, progress bars).

A cluster job's log filled with one carriage-return line per update of the bars that were
always drawn (``dataset``, ``pcr workspace``, ``calibrate``, ``warmup``).
"""

import os
from pathlib import Path
import pty
import re
import subprocess
import sys
import termios

import pytest
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
ROBOT = str(ROOT / 'config' / 'robot.yaml')
BAR = 'dataset cc: 100%'


def dataset_stderr(tmp_path: Path, terminal: bool, **environment: str) -> str:
    """Return what a small ``dataset`` printed on stderr, a terminal's or a pipe's."""
    env = {name: value for name, value in os.environ.items()
           if name not in ('TQDM_DISABLE', 'TENDON_ROBOT_SIM_PROGRESS')}
    env.update(environment, PYTHONPATH=str(ROOT))
    argv = [sys.executable, '-m', 'tendon_robot_sim.cli', 'dataset', '--robot', ROBOT,
            '--model', 'cc', '--samples', '2', '--workers', '1', '--output',
            str(tmp_path / f'cc{len(list(tmp_path.iterdir()))}')]
    if not terminal:
        result = subprocess.run(argv, capture_output=True, text=True, env=env,
                                timeout=COMMAND_TIMEOUT)
        assert result.returncode == 0, result.stderr
        return result.stderr
    main, child = pty.openpty()
    termios.tcsetwinsize(child, (24, 80))      # a new pty has 0 columns: tqdm drew nothing
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=child, env=env)
    os.close(child)
    written = b''
    try:
        while chunk := os.read(main, 4096):     # read as it comes: a full pty would block
            written += chunk
    except OSError:     # EIO: the child closed the terminal
        pass
    finally:
        os.close(main)
    assert process.wait(timeout=COMMAND_TIMEOUT) == 0, written
    return written.decode()


@pytest.mark.parametrize('terminal, environment, drawn', [
    (False, {}, False),
    (False, {'TENDON_ROBOT_SIM_PROGRESS': '1'}, True),
    (True, {}, True),
    (True, {'TQDM_DISABLE': '1'}, False),
], ids=['log', 'log, asked for', 'terminal', 'terminal, TQDM_DISABLE'])
def test_a_bar_is_drawn_on_a_terminal_or_when_asked_for(terminal, environment, drawn,
                                                        tmp_path):
    stderr = dataset_stderr(tmp_path, terminal, **environment)
    assert (BAR in stderr) == drawn, stderr
    if not drawn:
        assert stderr == '', stderr


def test_every_bar_is_drawn_through_the_one_rule():
    """No module but the package's root creates a tqdm bar: each would need the rule again."""
    elsewhere = [str(path.relative_to(ROOT)) for path in (ROOT / 'tendon_robot_sim').rglob('*.py')
                 if path.name != '__init__.py' or path.parent.name != 'tendon_robot_sim'
                 if re.search(r'^\s*(from tqdm|import tqdm)', path.read_text(), re.MULTILINE)]
    assert elsewhere == [], 'use tendon_robot_sim.progress_bar in ' + ', '.join(elsewhere)
