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
Contact in the implicit dynamics against closed forms.

The propped cantilever of small-deflection theory (see ../statics/test_contact_statics.py),
lifted off its prop by a tendon, dropped and settled to rest. Sliding: the same rod's tip on its
prop, pushed sideways by a tip force F; Coulomb's law holds the tip while F < mu N (regularised:
it creeps at about v_eps F / (mu N)) and lets it slide to where the rod's lateral stiffness
3 EI / L^3 carries F - mu N once F > mu N.
"""

from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim.models.contact.world import world_from_dict
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.tendon_robot import load_robot

ROOT = Path(__file__).resolve().parents[4]
# strongly damped (damping ratio 0.9 of the first mode), so that it settles in a few periods
STEEL = load_robot(ROOT / 'config' / 'steel_rod_robot.yaml').with_changes(
    damping={'ratio': 0.9})
L, R = STEEL.rod.length, STEEL.rod.radius
W = STEEL.rod.linear_density * np.linalg.norm(STEEL.gravity)
EI = STEEL.rod.bending_stiffness
ALONG_Y = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]
# a prop of 50 mm radius: a contact patch the 5 mm steps of the dynamics resolve
PROP = 0.05


def simulator(**contact):
    world = world_from_dict({'contact': contact, 'obstacles': [
        {'name': 'prop', 'shape': 'cylinder', 'radius': PROP, 'length': 0.05,
         'position': [L, 0.0, -R - PROP], 'orientation': ALONG_Y}]})
    return ImplicitSimulator(STEEL, world=world, steps=100, model='kirchhoff', dt=0.005)


def test_the_propped_cantilever_dropped_on_its_prop_settles_as_beam_theory_says():
    sim = simulator()
    sim.set_tensions([0.0, 0.0, 2.0, 0.0])         # t2, on top: lifts the tip off the prop
    lifted = sim.advance(0.05)
    assert lifted.tip_position[2] > 5e-3 and not lifted.contacts
    sim.set_tensions([0.0] * 4)
    state = sim.advance(1.0)
    assert np.linalg.norm(state.tip_velocity) < 1e-4
    (prop,) = state.contacts
    # 2 %: the bound (here within 0.6 %, 4 um penetration)
    assert prop.force[2] == pytest.approx(3 * W * L / 8, rel=0.02)
    x, z = state.centerline[0], state.centerline[2]
    deepest = np.argmin(z)
    assert -z[deepest] == pytest.approx(W * L ** 4 / (185 * EI), rel=0.02)
    assert x[deepest] == pytest.approx(0.5785 * L, rel=0.02)
    assert 0.0 < prop.penetration < 10e-6


@pytest.mark.parametrize('factor', [0.5, 2.0])
def test_the_tip_slides_only_once_the_push_exceeds_mu_times_the_normal_load(factor):
    mu, slip = 0.3, 1e-4
    sim = simulator(friction_coefficient=mu, slip_velocity=slip)
    start = sim.state()
    normal = start.contacts[0].force[2]
    assert normal == pytest.approx(3 * W * L / 8, rel=0.02)
    push = factor * mu * normal
    sim.set_tip_load([0.0, push, 0.0])
    moved = sim.advance(0.25).tip_position[1] - start.tip_position[1]
    if factor < 1.0:
        # held: only the regularisation's creep, about v_eps F / (mu N) (measured 1.13 times
        # that: the first steps' elastic response), 0.4 % of what twice the push slides
        assert 0.0 < moved < 1.5 * slip * 0.25 * factor
    else:
        # slid to where the rod's lateral stiffness carries F - mu N; 5 %: the creep on top
        assert moved == pytest.approx((push - mu * normal) * L ** 3 / (3 * EI), rel=0.05)
