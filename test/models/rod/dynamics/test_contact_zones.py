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
The implicit dynamics' fine grid only near contact (models/rod/dynamics/implicit_grid.py).

Against the same runs with the contact step (1 mm) over the whole rod: the grids differ where
the zones leave the rod coarse (the contact-free step, whose tip error is ~0.01 mm in free
motion) and in where the 1 mm steps fall under a contact patch a millimetre long. The bounds
below, tips within 5 um and contact forces within 2 %, are a hundred times inside the
cross-solver bounds of test_contact_cross_solver.py (0.5 mm, 5 %) and catch a contact on the
coarse grid: with the per-step check of the zones switched off, the swung rod's tip is 0.35 mm
off and its contact force 6 times off sideways.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim.models.contact.world import world_from_dict
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics.solver import CONTACT_STEP
from tendon_robot_sim.models.tendon_robot import load_robot

ROOT = Path(__file__).resolve().parents[4]
STEEL = load_robot(ROOT / 'config' / 'steel_rod_robot.yaml').with_changes(
    damping={'ratio': 0.9})
NITINOL = load_robot(ROOT / 'config' / 'nitinol_robot.yaml')
ALONG_Y = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]
L, R = STEEL.rod.length, STEEL.rod.radius


def total_force(state) -> np.ndarray:
    return sum((c.force for c in state.contacts), np.zeros(3))


def uniform(robot, **kwargs) -> ImplicitSimulator:
    """Return the same run with the contact step over the whole rod."""
    return ImplicitSimulator(robot, steps=math.ceil(robot.rod.length / CONTACT_STEP), **kwargs)


def covered(zones, s: float) -> bool:
    return any(a <= s <= b for a, b in zones)


def test_a_rod_swung_onto_a_bar_out_of_its_zones_is_refined_where_it_touches():
    """
    The steel rod lifted by 3 N onto a bar 6 mm above it at 0.45 m, which its start is not near.

    Measured: tips within 0.7 um of the 1 mm grid throughout, the force at rest (65 mN) within
    0.7 %; without the check 0.35 mm and 36 mN apart.
    """
    world = world_from_dict({'obstacles': [
        {'name': 'bar', 'shape': 'cylinder', 'radius': 0.005, 'length': 0.05,
         'position': [0.45, 0.0, R + 0.006 + 0.005], 'orientation': ALONG_Y}]})
    runs = []
    for make in (ImplicitSimulator, uniform):
        sim = make(STEEL, world=world, model='kirchhoff', dt=0.002)
        if make is ImplicitSimulator:
            assert not covered(sim.contact_zones, 0.45)
            start_steps, zoned = sim.steps, sim
        sim.set_tensions([0.0, 0.0, 3.0, 0.0])
        runs.append([sim.advance(0.02) for _ in range(15)])
    adaptive = runs[0][-1]
    assert adaptive.contacts and all(covered(zoned.contact_zones, c.s)
                                     for c in adaptive.contacts)
    assert zoned.regrids >= 1
    for state, reference in zip(*runs):
        assert np.linalg.norm(state.tip_position - reference.tip_position) < 5e-6
    force, reference = total_force(adaptive), total_force(runs[1][-1])
    assert np.linalg.norm(reference) > 0.05
    assert np.linalg.norm(force - reference) < 0.02 * np.linalg.norm(reference)
    assert start_steps < 25


@pytest.mark.parametrize('case', ['steel on its prop', 'nitinol discs on a floor'])
def test_at_rest_in_contact_the_zones_give_the_fine_grids_answer_with_fewer_steps(case):
    """
    The benchmark's runs (benchmarks/bench_contact.py): at rest, then 40 ms of steps.

    Measured: tips within 0.05 um, forces within 0.01 %; 36 and 20 RK4 steps for 500 and 200.
    """
    if case == 'steel on its prop':
        robot, model = STEEL, 'kirchhoff'
        world = world_from_dict({'obstacles': [
            {'name': 'prop', 'shape': 'cylinder', 'radius': 0.01, 'length': 0.05,
             'position': [L, 0.0, -R - 0.01], 'orientation': ALONG_Y}]})
    else:
        robot, model = NITINOL, 'discrete'
        world = world_from_dict({'obstacles': [
            {'name': 'floor', 'shape': 'plane', 'position': [0.0, 0.0, -0.019]}]})
    states = []
    for make in (ImplicitSimulator, uniform):
        sim = make(robot, world=world, model=model, dt=0.002)
        states.append((sim.state(), sim.advance(0.04), sim.steps))
    (start, end, steps), (fine_start, fine_end, fine_steps) = states
    assert steps < 0.2 * fine_steps
    for state, reference in ((start, fine_start), (end, fine_end)):
        assert state.contacts
        assert np.linalg.norm(state.tip_position - reference.tip_position) < 1e-6
        force = total_force(reference)
        assert np.linalg.norm(total_force(state) - force) < 1e-3 * np.linalg.norm(force)
