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


"""The ``auto`` integrator as docs/tendon_robot.md tells it: its threshold and its table."""

from pathlib import Path
import re

import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.dynamics.simulation import (AUTO_STABLE_STEP, choose_integrator,
                                                             explicit_refuses, stable_time_step)
from tendon_robot_sim.models.tendon_robot import load_robot

PAGE = (Path(__file__).resolve().parents[4] / 'docs' / 'tendon_robot.md').read_text()
SECTION = PAGE[PAGE.index('## Dynamic model'):PAGE.index('### Explicit (PyElastica)')]
ROW = re.compile(r'^\| `config/([a-z_]+\.yaml)` \([^|]*\) \| ([0-9.]+ us|-) \| (explicit|implicit)'
                 r'[^|]* \|$', re.MULTILINE)


def test_the_documented_threshold_is_the_code_s():
    documented = re.search(r'its stable step would be below ([0-9.]+) us', SECTION)
    assert documented, 'docs/tendon_robot.md no longer states the auto threshold'
    assert float(documented.group(1)) * 1e-6 == pytest.approx(AUTO_STABLE_STEP, rel=1e-12)


@pytest.mark.parametrize('row', ROW.findall(SECTION), ids=lambda row: row[0])
def test_each_row_of_the_table_is_what_auto_does(row):
    """
    The stable step as printed (to its last digit) and the integrator auto picks.

    A robot the explicit model refuses has no stable step ('-').
    """
    name, step, pick = row
    robot = load_robot(share_dir() / 'config' / name)
    assert choose_integrator(robot, 'auto')[0] == pick
    if step == '-':
        assert explicit_refuses(robot)
        return
    printed = step.split()[0]
    digits = len(printed.split('.')[1]) if '.' in printed else 0
    assert abs(float(printed) - stable_time_step(robot) * 1e6) <= 0.5 * 10.0 ** -digits


def test_the_table_has_its_rows():
    assert len(ROW.findall(SECTION)) == 4


def test_auto_does_not_pick_the_explicit_integrator_for_a_rod_too_coarse_for_its_discs():
    """
    Take the implicit integrator for 10 discs on 5 elements, which the explicit one refuses.

    Two discs fall on one node of the explicit rod; the implicit model has its own resolution,
    and ``explicit`` says why it refuses. Auto picked explicit for such a robot (its stable
    step is long), which then refused it.
    """
    from tendon_robot_sim.models.rod.dynamics.tendon_forces import TendonLayout
    from tendon_robot_sim.models.sim_model import InputError
    coarse = load_robot(share_dir() / 'config' / 'robot.yaml').with_changes(elements=5)
    assert stable_time_step(coarse) > AUTO_STABLE_STEP
    refused = explicit_refuses(coarse)
    assert refused.startswith('rod.elements: 5 elements (node spacing 0.05 m) are too coarse')
    with pytest.raises(ValueError) as layout:      # the check the explicit model makes
        TendonLayout.from_robot(coarse)
    assert str(layout.value) == refused
    integrator, why = choose_integrator(coarse, 'auto')
    assert integrator == 'implicit'
    assert why == ('the explicit integrator cannot take vertebrae closer together than the '
                   'nodes of its rod.elements')
    with pytest.raises(InputError, match=r'^rod.elements: .* \(integrator: explicit\)$'):
        choose_integrator(coarse, 'explicit')
