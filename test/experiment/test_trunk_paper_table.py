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
The "Paper vs package" table of docs/trunk.md says what the documented commands compute.

The synthetic runs are made as ``synth-experiment`` makes them (its defaults: hidden robot
``Truth()``, 0.2 mm noise on lengths and tip, 200 Hz; seeds 0 and 2), identified with the
``calibrate`` command itself and validated as ``validate`` does; each row's "computed here"
figures must be these, to the two decimals printed; the paper's, those the report quotes.
"""

from pathlib import Path
import re

import pytest

from tendon_robot_sim.cli import main
from tendon_robot_sim.experiment.identification import read_run
from tendon_robot_sim.experiment.input_profile import read_profile
from tendon_robot_sim.experiment.trunk_validation import (SLIDES, synth_bellows_run, Truth,
                                                          validate_bellows, write_run)
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import load_bellows_robot

ROOT = Path(__file__).resolve().parents[2]
BHA_FILE = ROOT / 'config' / 'bionic_handling_assistant.yaml'
DOC = (ROOT / 'docs' / 'trunk.md').read_text()


def row(study: str) -> list[str]:
    table = DOC[DOC.index('## Paper vs package'):]
    line = next(line for line in table.splitlines() if line.startswith(f'| {study} |'))
    return [cell.strip() for cell in line.split('|')[1:-1]]


def pairs(cell: str) -> list[tuple[float, float]]:
    """Return the 'mean +- std' pairs of a cell, in mm."""
    return [(float(a), float(b)) for a, b in re.findall(r'([\d.]+) \+- ([\d.]+)', cell)]


@pytest.fixture(scope='module')
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp('trunk_table')
    robot = load_bellows_robot(BHA_FILE)
    model = CCDynamics.from_bellows_robot(robot)
    runs = {}
    for name, seed in (('steps', 0), ('ramps', 2)):
        profile = read_profile(ROOT / 'config' / f'bha_pressure_{name}.csv', model.input_names,
                               model.input_range, 'pressure', 'Pa')
        runs[name], _, _ = synth_bellows_run(Truth().robot(robot), profile, seed=seed,
                                             length_noise=2e-4, tip_noise=2e-4)
    write_run(folder / 'bha_steps', robot, runs['steps'])
    runs['steps'] = read_run(folder / 'bha_steps', robot)
    assert main(['calibrate', str(folder / 'bha_steps'), '--robot', str(BHA_FILE), '--fit',
                 'stiffness,damping', '--out', str(folder / 'calibrated.yaml')]) == 0
    calibrated = load_bellows_robot(folder / 'calibrated.yaml')
    return {(name, which): validate_bellows(r, runs[name])
            for name in runs for which, r in (('file', robot), ('calibrated', calibrated))}


def mm(stats):
    return round(stats.mean * 1e3, 2), round(stats.std * 1e3, 2)


def test_kinematic_row(results):
    paper, ours = row('kinematic model, tip error (mean +- std)')[1:3]
    assert pairs(paper) == [SLIDES['kinematic tip']]
    assert pairs(ours) == [mm(results['steps', 'file'].kinematic_tip)]


@pytest.mark.parametrize('run, label, slides', [
    ('steps', 'pressure steps', 'steps'), ('ramps', 'linear pressure', 'linear pressure')])
def test_dynamic_rows(results, run, label, slides):
    paper, ours = row(f'dynamic model, {label}: muscle-length error')[1:3]
    assert pairs(paper) == [SLIDES[f'dynamic muscle length, {slides}']]
    assert pairs(ours) == [mm(results[run, 'file'].dynamic_length),
                           mm(results[run, 'calibrated'].dynamic_length)]
    paper, ours = row(f'dynamic model, {label}: tip error')[1:3]
    assert pairs(paper) == [SLIDES[f'dynamic tip, {slides}']]
    assert pairs(ours) == [mm(results[run, 'file'].dynamic_tip),
                           mm(results[run, 'calibrated'].dynamic_tip)]
