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
Contact in the explicit dynamics, against PyElastica's own ``RodCylinderContact``.

The silicone robot of ``config/robot.yaml``, pulled down by its tendon t2 onto a horizontal
cylinder under its rod and damped to rest, once with this package's contact law (the smooth
penalty per unit length lumped on the nodes) and once as PyElastica 1.0 models it: the same rod
built by the same function, a fixed ``Cylinder`` and ``RodCylinderContact``, a linear spring on
the penetration of each element's segment, ``k`` [N/m] per element (here the penalty stiffness
times the element length, so that both are equally stiff per length; 1e7 N/m^2 leaves about
15 um of penetration). The laws differ where the rod touches (PyElastica measures the segment from
each element's midpoint one element along, and splits its force between that element's nodes), a
difference of the order of an element: at the shipped 50 elements the tips are 0.29 mm apart and
the forces 2.8 % in size (4 degrees in direction), at 100 elements 0.03 mm and 2.6 % as vectors,
where the test holds them (the issue's 0.5 mm and 5 %).
"""

from pathlib import Path

import elastica as ea
from elastica._contact_functions import _calculate_contact_forces_rod_cylinder
import numpy as np
import pytest
from tendon_robot_sim.models.contact import reference
from tendon_robot_sim.models.contact.world import world_from_dict
from tendon_robot_sim.models.rod.dynamics import _explicit_kernels as kernels
from tendon_robot_sim.models.rod.dynamics.explicit import add_rod, contact_lengths, TendonSimulator
from tendon_robot_sim.models.rod.dynamics.tendon_forces import TendonLayout
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

ROOT = Path(__file__).resolve().parents[4]
ELEMENTS = 100
# strongly damped, so that it settles within a second; the discs touch as the rod does
# (RodCylinderContact knows no discs)
_DATA = load_robot(ROOT / 'config' / 'robot.yaml').with_changes(
    damping={'ratio': 0.9}, elements=ELEMENTS).to_dict()
_DATA['contact'] = {'disc_radius': _DATA['rod']['radius']}
SILICONE = robot_from_dict(_DATA)
RADIUS = 0.01                     # m, the cylinder's
K = 1e7                           # N/m^2, the default penalty stiffness
TENSION = [0.0, 0.0, 1.0, 0.0]    # N: t2 pulls the rod down onto the cylinder
SETTLE = 1.0                      # s: tip speed below 1 um/s in both
CENTRE = np.array([0.15, 0.0, -(SILICONE.rod.radius + RADIUS)])    # under the straight rod


def world():
    return world_from_dict({'contact': {'penalty_stiffness': K}, 'obstacles': [
        {'name': 'post', 'shape': 'cylinder', 'radius': RADIUS, 'length': 0.1,
         'position': CENTRE.tolist(),
         'orientation': [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]}]})   # axis along y


class _PyElasticaSystem(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping,
                        ea.Contact):
    pass


def pyelastica_at_rest(dt: float):
    """Return the tip and contact force at rest on PyElastica's own cylinder and contact."""
    system = _PyElasticaSystem()
    rod = add_rod(system, SILICONE, dt, np.array(TENSION), np.zeros((2, 3)))
    cylinder = ea.Cylinder(start=CENTRE - [0.0, 0.05, 0.0], direction=np.array([0.0, 1.0, 0.0]),
                           normal=np.array([1.0, 0.0, 0.0]), base_length=0.1,
                           base_radius=RADIUS, density=1000.0)
    system.append(cylinder)
    system.constrain(cylinder).using(ea.FixedConstraint, constrained_position_idx=(0,),
                                     constrained_director_idx=(0,))
    element = SILICONE.rod.length / SILICONE.rod.elements
    system.detect_contact_between(rod, cylinder).using(ea.RodCylinderContact, k=K * element,
                                                       nu=0.0)
    system.finalize()
    stepper, time = ea.PositionVerlet(), 0.0
    for _ in range(round(SETTLE / dt)):
        time = stepper.step(system, time, dt)
    assert np.linalg.norm(rod.velocity_collection[:, -1]) < 1e-5
    # the force RodCylinderContact applies at rest, by its own function on fresh arrays
    forces = np.zeros_like(rod.external_forces)
    axis = cylinder.length * cylinder.director_collection[2, :, 0]
    start = cylinder.position_collection[:, 0] - 0.5 * axis
    _calculate_contact_forces_rod_cylinder(
        0.5 * (rod.position_collection[:, 1:] + rod.position_collection[:, :-1]),
        rod.lengths * rod.tangents, cylinder.position_collection[:, 0], start,
        axis, rod.radius + cylinder.radius,
        rod.lengths + cylinder.length, rod.internal_forces, forces, np.zeros((3, 1)),
        np.zeros((3, 1)), cylinder.director_collection[:, :, 0], rod.velocity_collection,
        cylinder.velocity_collection, np.float64(K * element), np.float64(0.0),
        np.float64(0.0), np.float64(0.0))
    return rod.position_collection[:, -1].copy(), forces.sum(axis=1)


def test_the_explicit_rod_rests_on_a_cylinder_as_pyelasticas_own_contact_puts_it():
    sim = TendonSimulator(SILICONE, world=world())
    sim.set_tensions(TENSION)
    state = sim.advance(SETTLE)
    assert np.linalg.norm(state.tip_velocity) < 1e-5
    (post,) = state.contacts
    tip, force = pyelastica_at_rest(sim.dt)
    # the free robot's tip would be 86 mm lower: the cylinder holds it
    assert np.linalg.norm(state.tip_position - tip) < 0.5e-3
    assert np.linalg.norm(post.force - force) < 0.05 * np.linalg.norm(force)
    assert 0.0 < post.penetration < 50e-6


def test_the_compiled_contact_loads_are_the_laws_lumped_on_the_nodes():
    """contact_loads against the plain-numpy laws times each node's rod and disc lengths."""
    data = load_robot(ROOT / 'config' / 'robot.yaml').to_dict()
    robot = robot_from_dict(data)
    w = world_from_dict({'contact': {'normal_damping': 3.0, 'friction_coefficient': 0.4},
                         'obstacles': [{'name': 'floor', 'shape': 'plane',
                                        'position': [0.0, 0.0, -0.02]},
                                       {'name': 'ball', 'shape': 'sphere', 'radius': 0.02,
                                        'position': [0.2, 0.0, 0.02]}]})
    contact = w.contact(robot.contact_envelope)
    n = robot.rod.elements + 1
    rng = np.random.default_rng(4)
    position = np.zeros((3, n))
    position[0] = np.linspace(0.0, robot.rod.length, n)
    position[2] = rng.uniform(-0.01, 0.01, n)
    velocity = rng.normal(0.0, 0.01, (3, n))
    rest = np.full(n - 1, robot.rod.length / (n - 1))
    rod_lengths, disc_lengths = contact_lengths(robot, rest, TendonLayout.from_robot(robot).nodes)
    # the clamp's half element carries nothing
    assert rod_lengths.sum() + disc_lengths.sum() == pytest.approx(robot.rod.length - rest[0] / 2)
    assert disc_lengths.sum() == pytest.approx(robot.vertebra_positions.size
                                               * robot.disc_thickness)
    forces = np.zeros((3, n))
    kernels.contact_loads(position, velocity, contact, rod_lengths, disc_lengths, forces)
    expected = np.zeros((n, 3))
    for j in range(len(w.obstacles)):
        d, _, normal = reference.signed_distance(contact.shape[j], contact.pose[j],
                                                 contact.dims[j], position.T)
        for radius, lengths in zip(robot.contact_envelope, (rod_lengths, disc_lengths)):
            expected += lengths[:, None] * reference.contact_force(
                contact.law[j], d, normal, radius, velocity.T)
    assert np.any(expected[:, 2] > 0.1) and np.any(expected[:, 2] < -0.1)   # both touch
    np.testing.assert_allclose(forces.T, expected, rtol=1e-9, atol=1e-12)


def test_the_broad_phase_skips_every_node_far_from_the_obstacles(monkeypatch):
    """Only nodes within the envelope plus the penalty's reach of a bounding sphere are probed."""
    robot = load_robot(ROOT / 'config' / 'robot.yaml')
    w = world_from_dict({'obstacles': [{'name': 'ball', 'shape': 'sphere', 'radius': 0.005,
                                        'position': [0.02, 0.0, 0.02]}]})
    contact = w.contact(robot.contact_envelope)
    n = robot.rod.elements + 1
    position = np.zeros((3, n))
    position[0] = np.linspace(0.0, robot.rod.length, n)
    rest = np.full(n - 1, robot.rod.length / (n - 1))
    lengths = contact_lengths(robot, rest, TendonLayout.from_robot(robot).nodes)
    probed = []

    def counted(world, p, vel, dynamic, a, f, work):
        probed.append(float(p[0]))
        return 0.0

    # the kernel's Python body calls this module's contact_force: count its calls
    monkeypatch.setattr(kernels, 'contact_force', counted)
    kernels.contact_loads.py_func(position, np.zeros((3, n)), contact, *lengths, np.zeros((3, n)))
    # the ball (5 mm) is 20 mm above the axis: within the largest envelope (18 mm discs) plus
    # 20 delta of its bounding sphere for x within 0.02 +- 0.0118 m; farther nodes cost nothing
    assert probed and max(probed) < 0.02 + 0.012


def test_the_pyelastica_stepper_with_the_contact_forcing_follows_the_compiled_one():
    """The forcing class (PyElastica's own step) and the compiled kernel: one trajectory."""
    robot = load_robot(ROOT / 'config' / 'robot.yaml').with_changes(elements=10)
    w = world_from_dict({'contact': {'normal_damping': 2.0, 'friction_coefficient': 0.3},
                         'obstacles': [{'name': 'floor', 'shape': 'plane',
                                        'position': [0.0, 0.0, -0.02]}]})
    tips = []
    for stepper in ('compiled', 'pyelastica'):
        sim = TendonSimulator(robot, world=w, stepper=stepper)
        sim.set_tensions([0.0, 1.0, 2.0, 0.0])
        state = sim.advance(0.2)
        assert state.contacts                   # the discs are on the floor
        tips.append(state.tip_position)
    np.testing.assert_allclose(tips[0], tips[1], atol=1e-9)
