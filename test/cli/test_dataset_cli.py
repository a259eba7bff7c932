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

"""``tendon-robot-sim dataset``: a stopped run resumed, and bad input (one-line errors)."""

import json
from pathlib import Path

import pyarrow.parquet as pq

from tendon_robot_sim.cli import main

CONFIG = Path(__file__).resolve().parents[2] / 'config'
ROBOT = str(CONFIG / 'robot.yaml')


def test_stopped_run_goes_on_with_the_same_command(tmp_path, capsys):
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '7', '--chunk-size',
            '3', '--workers', '1', '--output', str(tmp_path / 'cc'), '--json']
    assert main(argv + ['--max-chunks', '1']) == 0
    assert 'stopped after 1 of 3 chunks' in capsys.readouterr().out
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary['solved_now'] == 4 and summary['complete']
    assert pq.read_table(tmp_path / 'cc.parquet').column('sample').to_pylist() == list(range(7))


def test_statics_of_a_robot_without_discs_and_its_model_named(tmp_path, capsys):
    """The statics model as the simulator picks it (cosserat here), or the one named."""
    argv = ['dataset', '--robot', str(CONFIG / 'steel_rod_robot.yaml'), '--model', 'statics',
            '--samples', '2', '--workers', '1', '--json']
    for named, model in ((), 'cosserat'), (('--statics-model', 'kirchhoff'), 'kirchhoff'):
        out = tmp_path / model
        assert main(argv + ['--output', str(out), *named]) == 0
        assert json.loads(capsys.readouterr().out.splitlines()[-1])['converged'] == 2
        assert json.loads(out.with_suffix('.json').read_text())['statics_model'] == model
