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
The world description (models/contact/world.py) and the contact kernels against their numpy twin.

Distances are compared with the independent formulation of contact/reference.py (faces of each
solid, brute force over a mesh's triangles) and with closed forms (a sphere and its icosphere
mesh); the laws with their definitions (energy derivative by finite differences).
"""

from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim.models.contact import _kernels as kernels, mesh, reference
from tendon_robot_sim.models.contact.world import (check_clear, check_rest_clear, load_world,
                                                   world_from_dict, WorldError)
import trimesh

ROOT = Path(__file__).resolve().parents[3]
TILT = [0.3, -0.1, 0.2, 1.0]        # a quaternion of no special axis (normalised on load)


def probe(contact, points, radius=0.0):
    n, k = contact.shape.size, len(points)
    out = (np.zeros((n, k)), np.zeros((n, k, 3)), np.zeros((n, k, 3)), np.zeros((n, k)))
    kernels.probe(contact, points, np.full(k, radius), *out, np.zeros(12))
    return out


def test_every_shape_agrees_with_the_numpy_twin():
    world = world_from_dict({'obstacles': [
        {'name': 'table', 'shape': 'plane', 'position': [0, 0, -0.1], 'normal': [0, 0.3, 1]},
        {'name': 'post', 'shape': 'cylinder', 'radius': 0.01, 'length': 0.2,
         'position': [0.1, 0, 0], 'orientation': TILT},
        {'name': 'pill', 'shape': 'cylinder', 'capsule': True, 'radius': 0.01, 'length': 0.1,
         'position': [0.1, 0.1, 0], 'orientation': TILT},
        {'name': 'ball', 'shape': 'sphere', 'radius': 0.02, 'position': [0, 0.1, 0]},
        {'name': 'crate', 'shape': 'box', 'size': [0.1, 0.08, 0.05], 'position': [0.2, 0, 0],
         'orientation': TILT}]})
    contact = world.contact((0.001, 0.005))
    points = np.random.default_rng(0).uniform(-0.2, 0.3, (3000, 3))
    gaps, surface, normals, _ = probe(contact, points)
    for j in range(len(world.obstacles)):
        d, c, n = reference.signed_distance(contact.shape[j], contact.pose[j], contact.dims[j],
                                            points)
        # round-off only: both are exact formulas of the same solid
        np.testing.assert_allclose(gaps[j], d, atol=1e-12)
        np.testing.assert_allclose(surface[j], c, atol=1e-12)
        np.testing.assert_allclose(normals[j], n, atol=1e-9)
    assert np.sum(gaps < 0.0) > 100           # the sample reaches inside the solids


def test_a_mesh_searched_through_its_grid_finds_what_brute_force_finds(tmp_path):
    trimesh.creation.icosphere(subdivisions=3, radius=20.0).export(tmp_path / 'ball.stl')
    trimesh.creation.icosphere(subdivisions=3, radius=20.0).export(tmp_path / 'ball.obj')
    rng = np.random.default_rng(1)
    directions = rng.normal(size=(400, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    points = [0.1, 0.0, 0.0] + directions * rng.uniform(0.0195, 0.0205, (400, 1))
    for name in ('ball.stl', 'ball.obj'):
        world = world_from_dict({'obstacles': [
            {'name': 'bone', 'shape': 'mesh', 'file': name, 'scale': 0.001,
             'position': [0.1, 0, 0]}]}, tmp_path)
        contact = world.contact((0.0, 0.0))
        gaps, surface, _, _ = probe(contact, points)
        d, c, _ = reference.signed_distance(kernels.MESH, contact.pose[0], contact.dims[0],
                                            points, contact.tri)
        # within reach (the penalty's cut-off) the grid finds the closest face; beyond, nothing
        near = np.abs(d) < kernels.CUTOFF * 1e-5
        assert near.sum() > 100 and np.all(gaps[0][~near] > 1e29)
        np.testing.assert_allclose(gaps[0][near], d[near], atol=1e-12)
        np.testing.assert_allclose(surface[0][near], c[near], atol=1e-12)
        gaps[0][~near] = d[~near]
        # the faceted sphere is within its sagitta (~0.1 mm at 20 mm, 1280 faces) of the sphere
        sphere = np.linalg.norm(points - [0.1, 0.0, 0.0], axis=1) - 0.02
        assert np.max(np.abs(gaps[0] - sphere)) < 1.5e-4
        clear = np.abs(sphere) > 2e-4
        assert np.all(np.sign(gaps[0][clear]) == np.sign(sphere[clear]))


def test_the_penalty_is_the_derivative_of_its_energy_and_a_linear_spring_when_deep():
    k, delta = 1e7, 1e-5
    g = np.linspace(-5e-4, 2e-4, 301)
    step = 1e-9
    numeric = -(reference.energy(g + step, k, delta) - reference.energy(g - step, k, delta)) \
        / (2 * step)
    np.testing.assert_allclose(reference.penalty(g, k, delta), numeric, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([kernels.penalty(x, k, delta) for x in g],
                               reference.penalty(g, k, delta), rtol=1e-12)
    assert reference.penalty(-1e-3, k, delta) == pytest.approx(k * 1e-3, rel=1e-6)
    assert reference.penalty(kernels.CUTOFF * delta, k, delta) < 1e-16 * k * delta


def test_damping_and_friction_follow_the_regularised_coulomb_law():
    law = np.array([1e5, 1e-4, 2.0, 0.4, 1e-3])
    world = world_from_dict({'contact': {'penalty_stiffness': 1e5, 'distance_scale': 1e-4,
                                         'normal_damping': 2.0, 'friction_coefficient': 0.4,
                                         'slip_velocity': 1e-3},
                             'obstacles': [{'name': 'floor', 'shape': 'plane'}]})
    contact = world.contact((0.001, 0.001))
    np.testing.assert_array_equal(contact.law[0], law)
    p = np.array([0.0, 0.0, 0.0009])
    for vel in ([0.05, 0.0, 0.0], [0.0, 2e-4, -0.01], [0.0, 0.0, 0.0]):
        f = np.zeros(3)
        kernels.contact_force(contact, p, np.array(vel), True, 0.001, f, np.zeros(12))
        expected = reference.contact_force(law, np.array([0.0009]), np.array([[0, 0, 1.0]]),
                                           0.001, np.array([vel]))[0]
        np.testing.assert_allclose(f, expected, rtol=1e-12)
    # fast slip: |f_t| -> mu f_n; no slip: no friction
    fn = reference.penalty(-1e-4, 1e5, 1e-4)
    f = np.zeros(3)
    kernels.contact_force(contact, p, np.array([0.05, 0.0, 0.0]), True, 0.001, f, np.zeros(12))
    assert -f[0] == pytest.approx(0.4 * fn, rel=1e-3)


def test_a_world_file_loads_with_its_defaults_and_overrides(tmp_path):
    path = tmp_path / 'world.yaml'
    path.write_text('contact: {friction_coefficient: 0.3}\n'
                    'obstacles:\n'
                    '  - {name: post, shape: cylinder, radius: 0.01, length: 0.2,\n'
                    '     contact: {penalty_stiffness: 1.0e5}}\n'
                    '  - {name: wall, shape: box, size: [1, 0.1, 1], position: [0, 1, 0]}\n')
    world = load_world(path)
    assert world.names == ['post', 'wall']
    post, wall = world.obstacles
    assert post.law[kernels.LAW_K] == 1e5 and post.law[kernels.LAW_MU] == 0.3
    assert wall.law[kernels.LAW_K] == 1e7 and wall.law[kernels.LAW_DELTA] == 1e-5
    np.testing.assert_array_equal(wall.dims, [0.5, 0.05, 0.5])
    assert load_world(ROOT / 'config' / 'world_post.yaml').obstacles


@pytest.mark.parametrize('text, message', [
    ('obstacles: [{name: a, shape: cone}]', 'obstacles[0].shape: must be one of'),
    ('obstacles: [{name: a, shape: sphere, radius: -0.1}]', 'obstacles[0].radius: must be > 0'),
    ('obstacles: [{name: a, shape: sphere}]', 'obstacles[0].radius: required key is missing'),
    ('obstacles: [{name: a, shape: box, size: [1, 0, 1]}]', 'obstacles[0].size[1]: must be'),
    ('obstacles: [{name: a, shape: plane, radius: 1}]', 'obstacles[0].radius: unknown key'),
    ('obstacles: [{name: a, shape: plane}, {name: a, shape: plane}]',
     "obstacles[1].name: duplicate obstacle name 'a'"),
    ('obstacles: [{name: a, shape: plane, contact: {penalty_stiffness: 0}}]',
     'obstacles[0].contact.penalty_stiffness: must be > 0'),
    ('obstacles: [{name: a, shape: sphere, radius: 1, orientation: [0, 0, 0, 0]}]',
     'obstacles[0].orientation: must be a non-zero quaternion'),
    ('obstacles: [{name: a, shape: plane, orientation: [0.38, 0, 0, 0.92]}]',
     'obstacles[0].orientation: a plane is posed by its outward normal'),
    ('obstacles: [{name: a, shape: mesh, file: world.yaml}]',
     "obstacles[0].file: must be an .stl or .obj file, got 'world.yaml'"),
    ('obstacles: [{name: a, shape: mesh, file: fake.stl}]', 'obstacles[0].file: '),
    ('obstacles: [{name: a, shape: mesh, file: missing.obj}]', 'obstacles[0].file: cannot read'),
    ('obstacles: {a: 1}', 'obstacles: must be a list'),
    ('walls: []', 'obstacles: required key is missing'),
])
def test_a_bad_world_fails_with_one_line_naming_the_key(tmp_path, text, message):
    (tmp_path / 'fake.stl').write_bytes(b'solid nothing\nthis is not a mesh\n')
    path = tmp_path / 'world.yaml'
    path.write_text(text)
    with pytest.raises(WorldError) as error:
        load_world(path)
    assert str(error.value).startswith(f'{path}: {message}')
    assert '\n' not in str(error.value)


def test_a_closed_mesh_turned_inside_out_is_refused_and_an_open_one_taken(tmp_path):
    box = trimesh.creation.box(extents=[0.1, 0.1, 0.02])
    box.export(tmp_path / 'box.stl')
    inside_out = box.copy()
    inside_out.invert()
    inside_out.export(tmp_path / 'inside_out.stl')
    # a terrain: the box's top alone, open (solid below it, whatever its volume would say)
    top = box.copy()
    top.update_faces(box.face_normals[:, 2] > 0.5)
    top.export(tmp_path / 'top.stl')
    assert mesh.closed_volume(np.asarray(box.triangles)) == pytest.approx(2e-4, rel=1e-12)
    assert mesh.closed_volume(np.asarray(top.triangles)) is None
    for name in ('box.stl', 'top.stl'):
        world_from_dict({'obstacles': [{'name': 'b', 'shape': 'mesh', 'file': name}]}, tmp_path)
    with pytest.raises(WorldError, match=r'^obstacles\[0\]\.file: .*inside_out\.stl is a closed '
                                         r'mesh whose face normals point inwards \(volume '
                                         r'-0\.0002 m\^3\); flip its faces$'):
        world_from_dict({'obstacles': [{'name': 'b', 'shape': 'mesh', 'file': 'inside_out.stl'}]},
                        tmp_path)


def test_a_mesh_beyond_the_face_bound_is_refused(tmp_path, monkeypatch):
    trimesh.creation.icosphere(subdivisions=2).export(tmp_path / 'ball.stl')    # 320 faces
    monkeypatch.setattr(mesh, 'MAX_MESH_FACES', 100)
    with pytest.raises(WorldError, match=r'obstacles\[0\]\.file: .* has 320 faces, at most 100'):
        world_from_dict({'obstacles': [{'name': 'b', 'shape': 'mesh', 'file': 'ball.stl'}]},
                        tmp_path)


def test_a_mesh_file_of_a_million_faces_is_refused_before_it_is_read(tmp_path):
    # a binary STL of 10^6 faces: an 84-byte header and 50 bytes a face; sparse, so the test
    # writes nothing (the bound is on the file's size: the file is never parsed)
    with open(tmp_path / 'huge.stl', 'wb') as f:
        f.truncate(84 + 50 * 1_000_000)
    with pytest.raises(WorldError, match=rf'obstacles\[0\]\.file: .*huge\.stl is larger than '
                                         rf'{mesh.MAX_MESH_BYTES} bytes'):
        world_from_dict({'obstacles': [{'name': 'b', 'shape': 'mesh', 'file': 'huge.stl'}]},
                        tmp_path)


def test_an_obstacle_at_the_base_is_refused():
    world = world_from_dict({'obstacles': [
        {'name': 'floor', 'shape': 'plane', 'position': [0, 0, -0.01]},
        {'name': 'ball', 'shape': 'sphere', 'radius': 0.01, 'position': [0.0, 0.0, 0.012]}]})
    contact = world.contact((0.005, 0.005))
    with pytest.raises(WorldError, match=r'obstacles\[1\] \(ball\): intersects the base'):
        check_clear(world, contact, np.zeros(3), 'the base')
    check_clear(world, world.contact((0.001, 0.001)), np.zeros(3), 'the base')


def test_a_base_deep_inside_a_mesh_is_refused_though_no_face_is_within_reach(tmp_path):
    # the contact search sees a mesh only within reach of its faces (here 0.1 m away): the
    # base point's winding number tells it is inside, as the same box as a shape does
    trimesh.creation.box(extents=[0.2, 0.2, 0.2]).export(tmp_path / 'crate.stl')
    for shape in ({'shape': 'mesh', 'file': 'crate.stl'},
                  {'shape': 'box', 'size': [0.2, 0.2, 0.2]}):
        for position, inside in (([0.05, 0.0, 0.0], True), ([0.2, 0.0, 0.0], False)):
            world = world_from_dict({'obstacles': [
                {'name': 'crate', 'position': position, 'orientation': TILT, **shape}]},
                tmp_path)
            contact = world.contact((0.001, 0.001))
            if inside:
                with pytest.raises(WorldError, match=r'obstacles\[0\] \(crate\): intersects'):
                    check_clear(world, contact, np.zeros(3), 'the base')
            else:
                check_clear(world, contact, np.zeros(3), 'the base')


def test_an_obstacle_the_unloaded_straight_robot_is_inside_is_refused():
    # the rod along +x from the origin, 0.25 m, envelope 5 mm, a disc of 18 mm at s = 0.2
    def check(obstacle, discs=()):
        world = world_from_dict({'obstacles': [{'name': 'o', **obstacle}]})
        check_rest_clear(world, world.contact((0.005, 0.018)), np.zeros(3),
                         np.array([1.0, 0.0, 0.0]), 0.25, np.array(discs, dtype=float))

    ball = {'shape': 'sphere', 'radius': 0.01}
    with pytest.raises(WorldError, match=r'^obstacles\[0\] \(o\): intersects the unloaded '
                                         r'straight robot .*its rod at s = 0\.1 m, 0\.013 m'):
        check({**ball, 'position': [0.1, 0.0, 0.002]})
    # the envelope touching: 1e-6 m in, below the distance scale (1e-5 m): the penalty's
    # transition, from which the solves start
    check({**ball, 'position': [0.1, 0.0, 0.015 - 1e-6]})
    with pytest.raises(WorldError, match=r'its rod at s = 0\.1 m, 2e-05 m inside'):
        check({**ball, 'position': [0.1, 0.0, 0.015 - 2e-5]})
    # past the tip, clear; a disc only where the solver touches with its discs
    check({**ball, 'position': [0.25 + 0.016, 0.0, 0.0]})
    beside = {**ball, 'position': [0.2, 0.0, 0.025]}
    check(beside)
    with pytest.raises(WorldError, match=r'its disc at s = 0\.2 m, 0\.003 m inside'):
        check(beside, discs=[0.2])


def test_winding_number_is_one_inside_a_closed_mesh_and_zero_outside():
    ball = np.asarray(trimesh.creation.icosphere(subdivisions=2, radius=0.05).triangles)
    # sign and size of the sum of solid angles: 4 pi inside, 0 outside, either side of a face
    for point, expected in (([0.0, 0.0, 0.0], 1.0), ([0.0, 0.0, 0.045], 1.0),
                            ([0.0, 0.0, 0.051], 0.0), ([1.0, 2.0, 3.0], 0.0)):
        assert mesh.winding_number(ball, np.array(point)) == pytest.approx(expected, abs=1e-9)
    # faces turned inside out: the solid is the outside
    assert mesh.winding_number(ball[:, ::-1], np.zeros(3)) == pytest.approx(-1.0, abs=1e-9)


def test_the_robot_touches_with_its_rod_and_discs_unless_its_description_says_otherwise():
    from tendon_robot_sim.models.description import RobotDescriptionError
    from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

    robot = load_robot(ROOT / 'config' / 'robot.yaml')
    assert robot.contact_envelope == (robot.rod.radius, robot.disc_radius)
    data = robot.to_dict()
    data['contact'] = {'rod_radius': 0.007}
    changed = robot_from_dict(data)
    assert changed.contact_envelope == (0.007, robot.disc_radius)
    assert robot_from_dict(changed.to_dict()).contact_envelope == (0.007, robot.disc_radius)
    data['contact'] = {'disc_radius': -0.01}
    with pytest.raises(RobotDescriptionError, match=r'^contact\.disc_radius: must be > 0'):
        robot_from_dict(data)
