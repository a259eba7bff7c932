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
TendonForces: numba kernel against the plain-numpy path, and closed-form invariants.

The rods are real PyElastica CosseratRods, straight or deformed by writing their
positions and directors; no time stepping happens here.
"""

import math

import elastica as ea
import numpy as np
from numpy.testing import assert_allclose
import pytest
from scipy.spatial.transform import Rotation, Slerp

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics.tendon_forces import (tendon_wrench_numpy, TendonForces,
                                                                TendonLayout)
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())


def make_robot(elements=10, gravity=(0.0, 0.0, 0.0), mass=0.0, tendons=None, vertebrae=None,
               tip_load=None, base=None):
    """Return the default robot with some fields replaced (no gravity, massless vertebrae)."""
    data = DEFAULT.to_dict()
    data['rod']['elements'] = elements
    data['gravity'] = list(gravity)
    data['vertebrae']['mass'] = mass
    if tendons is not None:
        data['tendons'] = tendons
    if vertebrae is not None:
        data['vertebrae'] = dict(vertebrae, mass=mass)
    if tip_load is not None:
        data['tip_load'] = tip_load
    if base is not None:
        data['base'] = base
    return robot_from_dict(data)


# Holes that move from vertebra to vertebra, anchors at the tip and in the middle.
MIXED_TENDONS = [
    {'name': 'straight', 'offset': 0.015, 'angle_deg': 30.0},
    {'name': 'helix', 'offset': 0.012, 'angle_deg': 0.0, 'routing': 'helical', 'turns': 0.5},
    {'name': 'taper', 'offset': 0.015, 'angle_deg': 200.0, 'routing': 'tapered',
     'end_offset': 0.006, 'end': 0.15},
    {'name': 'short', 'offset': 0.01, 'angle_deg': 270.0, 'end': 0.1},
]
TILTED_BASE = {'position': [0.1, -0.2, 0.3], 'direction': [0.0, 1.0, 1.0],
               'normal': [1.0, 0.0, 0.0]}


def straight_rod(robot):
    base = robot.base
    return ea.CosseratRod.straight_rod(
        robot.rod.elements, base.position.copy(), base.direction.copy(), base.normal.copy(),
        robot.rod.length, robot.rod.radius, robot.rod.density,
        youngs_modulus=robot.rod.youngs_modulus, shear_modulus=robot.rod.shear_modulus)


def deformed_rod(robot, seed):
    """Return a rod with random node positions and random rotations of its elements."""
    rod = straight_rod(robot)
    rng = np.random.default_rng(seed)
    rod.position_collection += rng.normal(0.0, 0.02, rod.position_collection.shape)
    rotations = Rotation.random(robot.rod.elements, random_state=seed).as_matrix()
    # directors are world -> local: Q' = Q R^T turns every element by R
    rod.director_collection[...] = np.einsum(
        'abe,ecb->ace', rod.director_collection, rotations)
    return rod


def kernel_loads(robot, rod, tensions):
    forcing = TendonForces(robot, np.asarray(tensions, dtype=float))
    rod.external_forces[...] = 0.0
    rod.external_torques[...] = 0.0
    forcing.apply_forces(rod, np.float64(0.0))
    forcing.apply_torques(rod, np.float64(0.0))
    return rod.external_forces.copy(), rod.external_torques.copy(), forcing.layout


def numpy_loads(robot, rod, tensions):
    layout = TendonLayout.from_robot(robot)
    return tendon_wrench_numpy(
        rod.position_collection, rod.director_collection, layout, np.asarray(tensions, float),
        robot.vertebra_mass * robot.gravity, robot.tip_load.force, robot.tip_load.moment)


@pytest.mark.parametrize('elements', [10, 20, 30])
@pytest.mark.parametrize('seed', [0, 1])
def test_kernel_matches_numpy_on_a_deformed_rod(elements, seed):
    robot = make_robot(elements, gravity=(0.3, 2.0, -9.0), mass=0.003, tendons=MIXED_TENDONS,
                       tip_load={'force': [0.1, -0.2, 0.3], 'moment': [0.01, 0.02, -0.03]},
                       base=TILTED_BASE)
    rod = deformed_rod(robot, seed)
    tensions = [1.5, 2.0, 0.0, 3.0]
    forces, torques, _ = kernel_loads(robot, rod, tensions)
    expected_forces, expected_torques = numpy_loads(robot, rod, tensions)
    assert np.abs(forces).max() > 1.0 and np.abs(torques).max() > 0.01
    assert_allclose(forces, expected_forces, rtol=1e-12, atol=1e-12)
    assert_allclose(torques, expected_torques, rtol=1e-12, atol=1e-12)


def test_kernel_adds_to_existing_loads():
    robot = make_robot(tendons=MIXED_TENDONS)
    rod = deformed_rod(robot, 3)
    forcing = TendonForces(robot, np.array([1.0, 1.0, 1.0, 1.0]))
    rod.external_forces[...] = 1.0
    rod.external_torques[...] = -2.0
    forcing.apply_forces(rod)
    expected_forces, expected_torques = numpy_loads(robot, rod, [1.0, 1.0, 1.0, 1.0])
    assert_allclose(rod.external_forces, expected_forces + 1.0, atol=1e-12)
    assert_allclose(rod.external_torques, expected_torques - 2.0, atol=1e-12)


@pytest.mark.parametrize('seed', [4, 5, 6])
def test_tendon_loads_are_internal(seed):
    """With the base plate's share, tendon forces and moments sum to zero (any shape)."""
    robot = make_robot(20, tendons=MIXED_TENDONS, base=TILTED_BASE)
    rod = deformed_rod(robot, seed)
    tensions = np.array([1.0, 2.5, 0.7, 4.0])
    forces, torques, layout = kernel_loads(robot, rod, tensions)
    holes = layout.hole_positions(rod.position_collection, rod.director_collection)
    first = holes[:, :, 0] - layout.base_holes
    plate_forces = tensions[:, None] * first / np.linalg.norm(first, axis=1, keepdims=True)
    assert_allclose(forces.sum(axis=1) + plate_forces.sum(axis=0), 0.0, atol=1e-12)
    world_torques = np.einsum('bae,be->ae', rod.director_collection, torques)   # Q.T tau
    moment = (np.cross(rod.position_collection.T, forces.T).sum(axis=0)
              + world_torques.sum(axis=1)
              + np.cross(layout.base_holes, plate_forces).sum(axis=0))
    assert np.abs(forces).max() > 0.5
    assert_allclose(moment, 0.0, atol=1e-12)


@pytest.mark.parametrize('angle', [0.0, 45.0, 90.0, 180.0, 300.0])
def test_straight_rod_parallel_tendon_loads_only_the_anchor(angle):
    tension, offset = 2.0, 0.015
    robot = make_robot(10, tendons=[{'name': 't', 'offset': offset, 'angle_deg': angle}])
    rod = straight_rod(robot)
    forces, torques, layout = kernel_loads(robot, rod, [tension])
    tip_node, tip_element = robot.rod.elements, robot.rod.elements - 1
    # the anchor (the tip vertebra) is pulled back along the rod ...
    assert_allclose(forces[:, tip_node], -tension * robot.base.direction, atol=1e-12)
    # ... and turned towards its hole: h x (-T d3) = T r (-sin a, cos a, 0) in (d1, d2, d3);
    # for a = 0 that is +d2, a rotation taking d3 towards d1, the side of the hole
    a = math.radians(angle)
    assert_allclose(torques[:, tip_element],
                    tension * offset * np.array([-math.sin(a), math.cos(a), 0.0]), atol=1e-12)
    others = np.ones(robot.rod.elements + 1, bool)
    others[tip_node] = False
    assert_allclose(forces[:, others], 0.0, atol=1e-12)
    assert_allclose(torques[:, :tip_element], 0.0, atol=1e-12)


def test_vertebrae_beyond_the_anchor_are_not_loaded():
    robot = make_robot(20, tendons=[{'name': 'half', 'offset': 0.015, 'angle_deg': 60.0,
                                     'end': 0.125}])
    rod = deformed_rod(robot, 7)
    forces, torques, layout = kernel_loads(robot, rod, [3.0])
    anchor_node = layout.nodes[layout.anchors[0]]
    assert anchor_node == 10
    assert np.linalg.norm(forces[:, anchor_node]) > 1.0
    assert_allclose(forces[:, anchor_node + 1:], 0.0, atol=0.0)
    # the anchor's moment is shared by the elements before and after its node
    assert np.abs(torques[:, anchor_node]).max() > 0.001
    assert_allclose(torques[:, anchor_node + 1:], 0.0, atol=0.0)


def midpoint_directors(rod, k):
    """Directors halfway (slerp) between elements k - 1 and k; the last element's at the tip."""
    q = rod.director_collection
    if k == q.shape[2]:
        return q[:, :, k - 1]
    # scipy rotations map local -> world: R = Q.T
    ends = Rotation.from_matrix(np.stack((q[:, :, k - 1].T, q[:, :, k].T)))
    return Slerp([0.0, 1.0], ends)(0.5).as_matrix().T


@pytest.mark.parametrize('end', [0.125, 0.25])
def test_anchor_load_on_a_deformed_rod_uses_the_mean_frame_and_shares_the_moment(end):
    """
    Written out for one anchor: the hole in the mean frame, the moment shared.

    Hole x_k + Q.T h with Q halfway between the elements at node k; moment r x F shared by elements
    k - 1 and k (only k - 1 at the tip).
    """
    tension, offset, angle = 2.0, 0.015, math.radians(40.0)
    robot = make_robot(20, tendons=[{'name': 't', 'offset': offset, 'angle_deg': 40.0,
                                     'end': end}])
    rod = deformed_rod(robot, 11)
    forces, torques, _ = kernel_loads(robot, rod, [tension])
    h = offset * np.array([math.cos(angle), math.sin(angle), 0.0])
    k = round(end / 0.0125)                        # anchor node; the vertebra before: k - 2
    x, q = rod.position_collection, rod.director_collection
    anchor_hole = x[:, k] + midpoint_directors(rod, k).T @ h
    previous_hole = x[:, k - 2] + midpoint_directors(rod, k - 2).T @ h
    pull = tension * (previous_hole - anchor_hole) / np.linalg.norm(previous_hole - anchor_hole)
    assert_allclose(forces[:, k], pull, atol=1e-12)
    moment = np.cross(anchor_hole - x[:, k], pull)                  # world
    elements = [k - 1, k] if k < robot.rod.elements else [k - 1]
    for e in elements:
        assert_allclose(torques[:, e], q[:, :, e] @ moment / len(elements), atol=1e-12)


def test_the_first_vertebra_turns_with_the_rod_and_loses_no_moment():
    """
    Check the first vertebra, the one next to the clamp.

    Vertebra 1 sits on node 1 next to the clamped element 0: its frame is halfway to
    element 1 and all of its hole moment goes to element 1.
    """
    robot = make_robot(10, tendons=[{'name': 't', 'offset': 0.015, 'angle_deg': 0.0}])
    rod = deformed_rod(robot, 12)
    forces, torques, layout = kernel_loads(robot, rod, [2.0])
    assert layout.nodes[0] == 1
    assert_allclose(layout.hole_positions(rod.position_collection, rod.director_collection)
                    [0, :, 0], rod.position_collection[:, 1]
                    + midpoint_directors(rod, 1).T @ [0.015, 0.0, 0.0], atol=1e-12)
    assert_allclose(torques[:, 0], 0.0, atol=0.0)
    # every tendon moment reaches a free element: in the world they sum to r x F
    world = np.einsum('bae,be->a', rod.director_collection, torques)
    holes = layout.hole_positions(rod.position_collection, rod.director_collection)[0]
    expected = np.cross(holes - rod.position_collection[:, layout.nodes],
                        forces[:, layout.nodes], axis=0).sum(axis=1)
    assert_allclose(world, expected, atol=1e-12)


def test_vertebra_weight_follows_gravity():
    gravity = np.array([0.0, 9.0, 0.0])
    mass = 0.004
    robot = make_robot(20, gravity=gravity, mass=mass)
    forces, torques, layout = kernel_loads(robot, deformed_rod(robot, 8), [0.0] * 4)
    expected = np.zeros_like(forces)
    expected[:, layout.nodes] = (mass * gravity)[:, None]
    assert list(layout.nodes) == list(range(2, 21, 2))     # every 0.025 m on 0.0125 m nodes
    assert_allclose(forces, expected, atol=1e-15)
    assert_allclose(torques, 0.0, atol=0.0)


def test_tip_load_force_at_last_node_and_moment_in_local_frame():
    force, moment = np.array([0.5, -0.1, 0.2]), np.array([0.01, -0.03, 0.02])
    robot = make_robot(10, tip_load={'force': force.tolist(), 'moment': moment.tolist()})
    rod = deformed_rod(robot, 9)
    forces, torques, _ = kernel_loads(robot, rod, [0.0] * 4)
    assert_allclose(forces[:, -1], force, atol=1e-15)
    assert_allclose(forces[:, :-1], 0.0, atol=0.0)
    local = rod.director_collection[:, :, -1] @ moment
    assert_allclose(torques[:, -1], local, atol=1e-15)
    # back in the world frame it is the given moment
    assert_allclose(rod.director_collection[:, :, -1].T @ torques[:, -1], moment, atol=1e-15)


def test_helical_holes_are_taken_per_vertebra():
    """On a straight rod each vertebra is pulled along the chords between its helical holes."""
    tension = 2.0
    robot = make_robot(10, tendons=[{'name': 'helix', 'offset': 0.015, 'angle_deg': 0.0,
                                     'routing': 'helical', 'turns': 1.0}], base=TILTED_BASE)
    rod = straight_rod(robot)
    forces, torques, layout = kernel_loads(robot, rod, [tension])
    base, tendon = robot.base, robot.tendons[0]
    # independent geometry: hole angle 2 pi s / L around the rod axis
    s = np.concatenate(([0.0], robot.vertebra_positions))
    theta = 2 * math.pi * s / robot.rod.length
    body = 0.015 * np.stack((np.cos(theta), np.sin(theta), np.zeros_like(s)))
    holes = base.position[:, None] + base.rotation @ (body + np.stack((0 * s, 0 * s, s)))
    assert_allclose(holes[:, 1:], layout.hole_positions(rod.position_collection,
                                                        rod.director_collection)[0], atol=1e-12)
    chords = np.diff(holes, axis=1)
    pull = tension * chords / np.linalg.norm(chords, axis=0)
    expected = -pull
    expected[:, :-1] += pull[:, 1:]
    assert_allclose(forces[:, layout.nodes], expected, atol=1e-12)
    # the moments use the same per-vertebra holes: h x (Q F)
    q = rod.director_collection[:, :, layout.nodes - 1]
    local = np.einsum('abk,bk->ak', q, expected)
    assert_allclose(torques[:, layout.nodes - 1],
                    np.cross(tendon.hole(robot.vertebra_positions)[0], local, axis=0), atol=1e-12)
    # a helix pulls its middle vertebrae straight towards the axis (hence no moment)
    offsets = holes[:, 1:-1] - base.position[:, None] - np.outer(base.direction, s[1:-1])
    middle = forces[:, layout.nodes[:-1]]
    assert np.linalg.norm(middle, axis=0).min() > 0.1
    assert_allclose(np.cross(middle, offsets, axis=0), 0.0, atol=1e-12)
    assert np.all(np.einsum('ak,ak->k', middle, offsets) < 0.0)


def test_tensions_are_read_live_from_the_shared_array():
    robot = make_robot(10)
    rod = straight_rod(robot)
    tensions = np.zeros(4)
    forcing = TendonForces(robot, tensions)
    forcing.apply_forces(rod)
    assert np.all(rod.external_forces == 0.0)
    tensions[2] = 1.5
    forcing.apply_forces(rod)
    assert_allclose(rod.external_forces[:, -1], -1.5 * robot.base.direction, atol=1e-12)


def test_tensions_must_be_a_shared_float_array():
    robot = make_robot(10)
    with pytest.raises(ValueError, match=r'tensions: must be a float64 array of shape \(4,\)'):
        TendonForces(robot, np.zeros(3))
    with pytest.raises(ValueError, match='float64'):
        TendonForces(robot, np.zeros(4, dtype=int))


def test_layout_rejects_a_rod_too_coarse_for_its_vertebrae():
    robot = make_robot(10, vertebrae={'count': 20})
    with pytest.raises(ValueError, match='rod.elements: 10 elements .* too coarse'):
        TendonLayout.from_robot(robot)


def test_layout_places_vertebrae_on_nearest_nodes():
    layout = TendonLayout.from_robot(make_robot(30))
    assert list(layout.nodes) == [3 * k for k in range(1, 11)]
    assert_allclose(layout.mismatch, 0.0, atol=1e-12)
    assert list(layout.anchors) == [9] * 4
