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
Cross-solver contact: a tendon-bent robot pressed against a cylinder, solved three ways.

The statics (cosserat, a continuous rod with RK4 steps of 1 mm), the implicit dynamics settled
to rest (the same kernels in a BDF2 time step) and, for the silicone robot, the explicit
dynamics settled to rest (PyElastica's discretisation with the penalty lumped on its nodes:
another formulation of the rod and of the contact): the issue's bounds, tips within 0.5 mm and
contact forces within 5 % (as vectors). Both robots are strongly damped so that they settle
within a second or two; the silicone robot touches with its rod only (its discs are given the
rod's radius), which every solver models. The discrete statics, whose discs touch with their own
envelope as the explicit model's do, against the explicit dynamics: the silicone robot's discs
resting on a floor under its weight.
"""

import functools
from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim.files.yaml_loader import read_yaml
from tendon_robot_sim.models.contact.world import world_from_dict
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

ROOT = Path(__file__).resolve().parents[3]
ALONG_Y = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]


def cylinder_world(radius: float, centre) -> object:
    return world_from_dict({'obstacles': [
        {'name': 'post', 'shape': 'cylinder', 'radius': radius, 'length': 0.1,
         'position': list(centre), 'orientation': ALONG_Y}]})


def assert_agree(tip, force, other_tip, other_force):
    """Assert the issue's bounds: tips within 0.5 mm, contact forces within 5 % as vectors."""
    assert np.linalg.norm(np.asarray(tip) - other_tip) < 0.5e-3
    assert np.linalg.norm(np.asarray(force) - other_force) < 0.05 * np.linalg.norm(other_force)


def test_the_steel_robot_lifted_against_a_cylinder_rests_where_the_statics_puts_it():
    """
    The steel rod, lifted by 2 N on its top tendon against a cylinder 5 mm above it.

    Measured: tips 0.005 mm apart, forces (10 mN) within 0.5 %. At rest the implicit step's
    tip velocity is the BDF difference of positions solved to Newton's tolerance: 3e-6 to
    1.8e-5 m/s here from one rounding to another (one BLAS thread or two), so rest is the tip
    still over the last 0.5 s (moved 0.02 to 0.07 um), not one step's velocity.
    """
    robot = load_robot(ROOT / 'config' / 'steel_rod_robot.yaml').with_changes(
        damping={'ratio': 0.9})
    world = cylinder_world(0.05, (0.4, 0.0, robot.rod.radius + 0.005 + 0.05))
    tensions = [0.0, 0.0, 2.0, 0.0]
    statics = StaticsSolver(robot, 'cosserat', world=world).solve_tensions(tensions)
    (pressed,) = statics.contacts
    assert pressed.force[2] < -5e-3            # the cylinder holds the rod down
    sim = ImplicitSimulator(robot, world=world, model='cosserat', steps=100, dt=0.005)
    sim.set_tensions(tensions)
    before = sim.advance(1.0).tip_position
    state = sim.advance(0.5)
    assert np.linalg.norm(state.tip_position - before) < 1e-6
    (settled,) = state.contacts
    assert_agree(state.tip_position, settled.force, statics.tip_position, pressed.force)


def test_the_silicone_robot_pulled_onto_a_cylinder_rests_alike_in_three_solvers():
    """
    The silicone robot, pulled by 1 N on t2 onto a cylinder under its rod (0.5 N of contact).

    Measured: implicit against statics 0.001 mm and 0.03 %; explicit (100 elements) against
    statics 0.14 mm and 2.2 % (the lumped load's direction: 1.3 degrees).
    """
    data = load_robot(ROOT / 'config' / 'robot.yaml').with_changes(
        damping={'ratio': 0.9}, elements=100).to_dict()
    data['contact'] = {'disc_radius': data['rod']['radius']}
    robot = robot_from_dict(data)
    world = cylinder_world(0.01, (0.15, 0.0, -(robot.rod.radius + 0.01)))
    tensions = [0.0, 0.0, 1.0, 0.0]
    statics = StaticsSolver(robot, 'cosserat', world=world).solve_tensions(tensions)
    (pressed,) = statics.contacts
    assert pressed.force[2] > 0.3
    implicit = ImplicitSimulator(robot, world=world, model='cosserat', dt=0.004)
    explicit = TendonSimulator(robot, world=world)
    for sim in (implicit, explicit):
        sim.set_tensions(tensions)
        state = sim.advance(1.0)
        assert np.linalg.norm(state.tip_velocity) < 1e-5
        (settled,) = state.contacts
        assert_agree(state.tip_position, settled.force, statics.tip_position, pressed.force)


def test_the_discs_rest_on_a_floor_in_the_discrete_statics_as_in_the_explicit_dynamics():
    """
    The silicone robot sagging onto a floor 12 mm below its discs: its tip disc rests there.

    Both apply the penalty at the disc's radius (18 mm) over its thickness: measured tips
    0.001 mm apart and forces (0.14 N) within 0.2 %. The rod's envelope (5.5 mm) would let the
    tip sink 12.5 mm further.
    """
    robot = load_robot(ROOT / 'config' / 'robot.yaml').with_changes(damping={'ratio': 0.9})
    world = world_from_dict({'obstacles': [{'name': 'floor', 'shape': 'plane',
                                            'position': [0.0, 0.0, -0.03]}]})
    statics = StaticsSolver(robot, 'discrete', world=world).solve_tensions([0.0] * 4)
    (resting,) = statics.contacts
    assert resting.s == pytest.approx(robot.rod.length)   # on the tip disc
    assert resting.force[2] > 0.1
    assert statics.tip_position[2] - robot.disc_radius > -0.03 - 1e-4
    sim = TendonSimulator(robot, world=world)
    state = sim.advance(1.0)
    assert np.linalg.norm(state.tip_velocity) < 1e-5
    (settled,) = state.contacts
    assert_agree(state.tip_position, settled.force, statics.tip_position, resting.force)


def _silicone_reproductions():
    """Return the silicone robot and the three set-ups that once curled the discrete model."""
    robot = load_robot(ROOT / 'config' / 'robot.yaml').with_changes(damping={'ratio': 0.9})
    floor = world_from_dict({'obstacles': [{'name': 'floor', 'shape': 'plane',
                                            'position': [0.0, 0.0, -0.03]}]})
    below = cylinder_world(0.01, (0.15, 0.0, -(robot.rod.radius + 0.015 + 0.01)))
    post = read_yaml(ROOT / 'config' / 'world_post.yaml')
    post['contact']['friction_coefficient'] = 0.0      # the statics has no Coulomb friction
    return robot, {'floor, 1 N on t2': (floor, [0.0, 0.0, 1.0, 0.0]),
                   'cylinder 15 mm under the rod, 1 N on t2': (below, [0.0, 0.0, 1.0, 0.0]),
                   'world_post.yaml, 2 N on t3': (world_from_dict(post), [0.0, 0.0, 0.0, 2.0])}


@functools.cache
def _explicit_at_rest(case: str):
    """
    Return the explicit dynamics of ``case`` after 1.5 s: tip position, velocity, contacts.

    The reference of both tests below (the same robot, world and tensions): run once per case.
    """
    robot, cases = _silicone_reproductions()
    world, tensions = cases[case]
    sim = TendonSimulator(robot, world=world)
    sim.set_tensions(tensions)
    state = sim.advance(1.5)
    return state.tip_position, state.tip_velocity, tuple(state.contacts)


@pytest.mark.parametrize('case', ['floor, 1 N on t2', 'cylinder 15 mm under the rod, 1 N on t2',
                                  'world_post.yaml, 2 N on t3'])
def test_the_discrete_statics_in_contact_under_tendon_loads_rests_as_the_explicit_dynamics(case):
    """
    The silicone robot's discs pressed onto a floor, a cylinder, the post and plate.

    A cold solve once settled on bays bent away from the tendon (world_post.yaml: tip at
    y = -176 mm, touching nothing; the floor: no convergence). Against the explicit dynamics
    settled to rest (PyElastica's discretisation, the same disc envelope), the issue's bounds
    protect the contact's place and load: tips within 0.5 mm, every obstacle's force within 5 %.
    Measured: tips 0.01-0.02 mm apart, forces within 0.5 %.
    """
    robot, cases = _silicone_reproductions()
    world, tensions = cases[case]
    statics = StaticsSolver(robot, 'discrete', world=world).solve_tensions(tensions)
    tip, tip_velocity, contacts = _explicit_at_rest(case)
    assert np.linalg.norm(tip_velocity) < 1e-4
    pressed = {c.obstacle: c.force for c in statics.contacts}
    settled = {c.obstacle: c.force for c in contacts}
    assert sorted(pressed) == sorted(settled)
    assert np.linalg.norm(statics.tip_position - tip) < 0.5e-3
    for name, force in settled.items():
        assert np.linalg.norm(pressed[name] - force) < 0.05 * np.linalg.norm(force)


@pytest.mark.parametrize('case', ['floor, 1 N on t2', 'world_post.yaml, 2 N on t3'])
def test_the_implicit_discrete_dynamics_at_250_steps_rests_as_the_explicit_dynamics(case):
    """
    The implicit dynamics' discrete model (the statics' shooting, RK4 steps of 1 mm) in contact.

    It was seen to reach a shape curled away from the tendon at 250 RK4 steps; against the
    explicit dynamics at rest, the issue's bounds: tips within 0.5 mm, forces within 5 %.
    Measured: floor 0.003 mm, 0.4 %.
    """
    robot, cases = _silicone_reproductions()
    world, tensions = cases[case]
    sim = ImplicitSimulator(robot, world=world, model='discrete', steps=250, dt=0.004)
    sim.set_tensions(tensions)
    state = sim.advance(1.5)
    assert np.linalg.norm(state.tip_velocity) < 1e-4
    tip, forces = state.tip_position, {c.obstacle: c.force for c in state.contacts}
    other_tip, other_velocity, contacts = _explicit_at_rest(case)
    assert np.linalg.norm(other_velocity) < 1e-4
    other_forces = {c.obstacle: c.force for c in contacts}
    assert sorted(forces) == sorted(other_forces)
    assert np.linalg.norm(tip - other_tip) < 0.5e-3
    for name, force in other_forces.items():
        assert np.linalg.norm(forces[name] - force) < 0.05 * np.linalg.norm(force)


def test_the_discrete_statics_warm_stepped_onto_a_floor_stays_on_it():
    """
    The floor case stepped up to 1 N on t2 in warm solves, each from the last.

    From the bays the last solve left, the first step (0.125 N) once curled the rod up off
    the floor (tip 5 mm above the base, 1 N: 198 mm). Every step must keep the tip disc on the
    floor, and the last must land where the cold solve does (checked against the explicit
    dynamics above) within 0.01 mm: the same equilibrium, only reached another way.
    """
    robot, cases = _silicone_reproductions()
    world, tensions = cases['floor, 1 N on t2']
    solver = StaticsSolver(robot, 'discrete', world=world)
    for k in range(1, 9):
        stepped = solver.solve_tensions(np.array(tensions) * k / 8)
        assert [c.obstacle for c in stepped.contacts] == ['floor']
    cold = StaticsSolver(robot, 'discrete', world=world).solve_tensions(tensions)
    assert np.linalg.norm(stepped.tip_position - cold.tip_position) < 1e-5
