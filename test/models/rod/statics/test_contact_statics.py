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
Contact in the shooting statics (cosserat, kirchhoff) against closed forms.

The propped cantilever of small-deflection beam theory (a steel rod clamped horizontally, its
tip resting on a frictionless cylinder whose top is at the clamp's height): support 3wL/8,
clamp 5wL/8, largest deflection wL^4 / (185 EI) at 0.5785 L, at the default contact parameters.
A rod lying on a plane: the plane carries the rod's weight, at the gap where the penalty law
(contact/reference.py, solved by scipy) equals the weight per length.
"""

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.spatial.transform import Rotation
from tendon_robot_sim.models.contact import reference
from tendon_robot_sim.models.contact.world import world_from_dict, WorldError
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

ROOT = Path(__file__).resolve().parents[4]
STEEL = load_robot(ROOT / 'config' / 'steel_rod_robot.yaml')     # 0.5 m, 2 mm, disc-free
L, R = STEEL.rod.length, STEEL.rod.radius
W = STEEL.rod.linear_density * np.linalg.norm(STEEL.gravity)     # N/m
EI = STEEL.rod.bending_stiffness
ALONG_Y = [-np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)]                # cylinder axis z -> world y
PROP_RADIUS = 0.01


def propped_world(**contact):
    # the prop's top touches the rod's underside at the clamp's height: the rod's axis rests
    # at z = 0 when the contact is rigid
    return world_from_dict({'contact': contact, 'obstacles': [
        {'name': 'prop', 'shape': 'cylinder', 'radius': PROP_RADIUS, 'length': 0.05,
         'position': [L, 0.0, -R - PROP_RADIUS], 'orientation': ALONG_Y}]})


@pytest.mark.parametrize('model', ['kirchhoff', 'cosserat'])
def test_the_propped_cantilever_matches_beam_theory_within_2_percent(model):
    result = StaticsSolver(STEEL, model, world=propped_world()).solve_tensions([0.0] * 4)
    (prop,) = result.contacts
    assert prop.obstacle == 'prop'
    # 2 %: the bound; what is left is the penetration (10.8 um of a 0.53 mm
    # deflection) and the contact patch ending 0.26 mm inside the tip
    assert prop.force[2] == pytest.approx(3 * W * L / 8, rel=0.02)
    assert -result.base_force[2] == pytest.approx(5 * W * L / 8, rel=0.02)
    x, z = result.centerline[0], result.centerline[2]
    deepest = np.argmin(z)
    assert -z[deepest] == pytest.approx(W * L ** 4 / (185 * EI), rel=0.02)
    assert x[deepest] == pytest.approx(0.5785 * L, rel=0.02)
    # the penetration the default penalty leaves: stated in docs/tendon_robot.md
    assert 0.0 < result.max_penetration < 15e-6
    assert prop.s == pytest.approx(L, abs=1e-3)
    np.testing.assert_allclose(prop.normal, [0.0, 0.0, 1.0], atol=0.03)


def test_a_rod_lying_on_a_plane_rests_its_whole_weight_on_it():
    k, delta = 1e7, 1e-5                    # the defaults
    gap = brentq(lambda g: reference.penalty(g, k, delta) - W, -1e-3, 1e-3)
    world = world_from_dict({'obstacles': [
        {'name': 'floor', 'shape': 'plane', 'position': [0.0, 0.0, -R - gap]}]})
    result = StaticsSolver(STEEL, 'cosserat', world=world).solve_tensions([0.0] * 4)
    (floor,) = result.contacts
    # the report integrates the load on its own (Hermite) curve: 0.1 % of the weight
    np.testing.assert_allclose(floor.force, [0.0, 0.0, W * L], rtol=1e-3, atol=1e-3 * W * L)
    assert np.linalg.norm(result.base_force) < 1e-3 * W * L
    # the rod floats at the gap where the law carries its weight: straight at the clamp's height
    assert np.max(np.abs(result.centerline[2])) < 1e-8
    assert result.max_penetration == 0.0


def test_a_warm_solve_follows_the_inputs_in_contact():
    solver = StaticsSolver(STEEL, 'kirchhoff', world=propped_world())
    first = solver.solve_tensions([0.0] * 4)
    # a pull on the tendon at the bottom (d1 = -z) presses the tip onto the prop
    pressed = solver.solve_tensions([0.05, 0.0, 0.0, 0.0])
    assert pressed.iterations < first.iterations
    assert pressed.contacts[0].force[2] > first.contacts[0].force[2]
    cold = StaticsSolver(STEEL, 'kirchhoff', world=propped_world()).solve_tensions(
        [0.05, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(pressed.tip_position, cold.tip_position, atol=1e-9)


@pytest.mark.parametrize('model, step', [
    ('cosserat', 0.02), ('cosserat', 0.25), ('cosserat', 1.75), ('discrete', 0.25)],
                         ids=['0.02 N steps', '0.25 N', 'one step', 'discrete, 0.25 N'])
def test_a_warm_step_does_not_carry_the_rod_through_a_thin_plate(model, step):
    """
    The default robot pulled by t3 to 1.75 N onto the post and the 4 mm plate of world_post.yaml.

    Warm Newton solves in 0.02 N steps (a tension controller's ramp) once landed at 1.6 N with
    the tip under the plate (where no penalty acts), hanging on the post: the warm path now
    follows the inputs with the cold continuation's jump check. Every path lands where the cold
    continuation does (1e-7 m: the solver's tolerance; the wrong branch is 50 mm away). The
    discrete model, which the simulator node uses with a world too, in 0.25 N steps.
    """
    from tendon_robot_sim import default_robot_file
    from tendon_robot_sim.models.contact.world import load_world

    robot = load_robot(default_robot_file())
    world = load_world(ROOT / 'config' / 'world_post.yaml')
    warm = StaticsSolver(robot, model, world=world)
    for tension in [*np.arange(step, 1.75 - 1e-9, step), 1.75]:
        stepped = warm.solve_tensions({'t3': float(tension)})
    cold = StaticsSolver(robot, model, world=world).solve_tensions({'t3': 1.75})
    assert {c.obstacle for c in cold.contacts} == {'post', 'plate'}
    assert [c.obstacle for c in stepped.contacts] == [c.obstacle for c in cold.contacts]
    np.testing.assert_allclose(stepped.tip_position, cold.tip_position, atol=1e-7)


def test_an_obstacle_through_the_base_is_refused_naming_it():
    world = world_from_dict({'obstacles': [
        {'name': 'wall', 'shape': 'box', 'size': [0.01, 0.1, 0.1], 'position': [0.0, 0.0, 0.0]}]})
    with pytest.raises(WorldError, match=r"^obstacles\[0\] \(wall\): intersects the robot's base"):
        StaticsSolver(STEEL, 'cosserat', world=world)


def test_a_mesh_obstacle_holds_the_rod_as_the_same_solid_given_by_its_shape(tmp_path):
    import trimesh

    # a box under the last 10 mm of the rod, as a box and as an STL of its 12 triangles
    trimesh.creation.box(extents=[0.02, 0.02, 0.02]).export(tmp_path / 'block.stl')
    pose = {'position': [L, 0.0, -R - 0.01], 'orientation': [0.0, 0.0, 0.3826834, 0.9238795]}
    tips = []
    for block in ({'shape': 'box', 'size': [0.02, 0.02, 0.02]},
                  {'shape': 'mesh', 'file': 'block.stl'}):
        world = world_from_dict({'obstacles': [{'name': 'block', **block, **pose}]}, tmp_path)
        result = StaticsSolver(STEEL, 'kirchhoff', world=world).solve_tensions([0.0] * 4)
        tips.append(result.tip_position)
        assert result.contacts[0].force[2] > 0.3 * W * L / 8
    np.testing.assert_allclose(tips[0], tips[1], atol=1e-9)


def test_a_small_sphere_between_two_coarse_nodes_holds_the_rod_up():
    """
    A sphere of 0.5 mm radius 0.1 mm under the straight rod, a quarter of a 5 mm step past a node.

    The rod touches with a wire's envelope (0.2 mm), so that stages 1.25 mm away cannot feel
    the sphere. The default grid takes the contact-free step (5 mm) only where the rod cannot
    reach an obstacle (models/contact/reach.py): it must take the contact step around the
    sphere, and the rod rest on it (12 mm of sag at the tip without it) where a grid of 0.25 mm
    everywhere puts it. The contact-free grid everywhere, whose RK4 stages fall 1.25 mm either
    side of the sphere, lets the rod sag through it as if it were not there: what this test
    catches if the rule skipped the sphere.
    """
    data = STEEL.to_dict()
    data['contact'] = {'rod_radius': 2e-4}
    wire = robot_from_dict(data)
    s0, radius = 0.30125, 0.0005         # nodes of the 5 mm grid at 0.300 and 0.305
    world = world_from_dict({'obstacles': [
        {'name': 'bead', 'shape': 'sphere', 'radius': radius,
         'position': [s0, 0.0, -2e-4 - radius - 1e-4]}]})
    default = StaticsSolver(wire, 'cosserat', world=world)
    assert np.diff(default.arc_lengths).max() > 4e-3      # coarse near the base
    near = np.abs(default.arc_lengths - s0) < 0.01
    assert np.diff(default.arc_lengths[near]).max() <= 1e-3 + 1e-12
    held = default.solve_tensions([0.0] * 4)
    fine = StaticsSolver(wire, 'cosserat', world=world, step=2.5e-4).solve_tensions([0.0] * 4)
    coarse = StaticsSolver(wire, 'cosserat', world=world, step=0.005).solve_tensions([0.0] * 4)
    sag = StaticsSolver(wire, 'cosserat').solve_tensions([0.0] * 4).tip_position[2]
    lift = fine.tip_position[2] - sag
    assert lift > 0.01                              # the sphere holds the rod up
    # 1 %: the 1 mm grid's resolution of the contact patch; missing the sphere costs 100 %
    assert held.tip_position[2] - sag == pytest.approx(lift, rel=0.01)
    assert [c.obstacle for c in held.contacts] == ['bead']
    assert abs(coarse.tip_position[2] - sag) < 0.01 * lift


def weightless_steel(**base):
    data = STEEL.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    data['base'] = {**data['base'], **base}
    return robot_from_dict(data)


def post_world(rotation=np.eye(3), shift=np.zeros(3)):
    # a post (axis along z) beside the rod at a = 0.3 m, touching its envelope when straight
    q = Rotation.from_matrix(rotation).as_quat().tolist()
    return world_from_dict({'obstacles': [
        {'name': 'post', 'shape': 'cylinder', 'radius': 0.005, 'length': 0.05,
         'position': (rotation @ [0.3, -R - 0.005, 0.0] + shift).tolist(), 'orientation': q}]})


@pytest.mark.parametrize('model', ['kirchhoff', 'cosserat'])
def test_a_tip_force_against_a_post_matches_the_supported_cantilever(model):
    """
    Weightless cantilever, a post at a = 0.3 m, a tip force P pushing the rod onto it.

    Small-deflection theory with the support settled by delta (the rod's deflection at a, read
    from the solution: the penalty's give): R = (P a^2 (3L - a) / (6 EI) - delta) 3 EI / a^3,
    tip P L^3 / (3 EI) - R a^2 (3L - a) / (6 EI). The rigid support's R = P (3L - a) / (2a).
    """
    a, force = 0.3, 0.05
    result = StaticsSolver(weightless_steel(), model, world=post_world()).solve_tensions(
        [0.0] * 4, tip_force=[0.0, -force, 0.0])
    (post,) = result.contacts
    settled = -np.interp(a, result.centerline[0], result.centerline[1])
    support = (force * a ** 2 * (3 * L - a) / (6 * EI) - settled) * 3 * EI / a ** 3
    tip = force * L ** 3 / (3 * EI) - support * a ** 2 * (3 * L - a) / (6 * EI)
    # the settlement is 18 um of the 1.84 mm tip: it moves R by 0.3 %, the tip by 2 %
    assert 0.0 < settled < 30e-6
    # 0.1 %: what small-deflection theory leaves out (slopes of 6 mrad) and the patch's width
    assert post.force[1] == pytest.approx(support, rel=1e-3)
    assert -result.tip_position[1] == pytest.approx(tip, rel=1e-3)
    assert post.force[1] == pytest.approx(force * (3 * L - a) / (2 * a), rel=5e-3)
    # the clamp holds the rest (the post's push along x is 0.9 % of it)
    assert result.base_force[1] == pytest.approx(support - force, rel=2e-3)
    # the post pushes along its normal, tilted by the rod's slope there, theta = P (L - a) a /
    # (4 EI) of the propped span: the patch (within 0.3 mm of a) needs steps finer than the
    # default 1 mm, whose force leans the other way (-0.49 degrees against +0.28)
    fine = StaticsSolver(weightless_steel(), model, world=post_world(), contact_step=2e-4)
    fine = fine.solve_tensions([0.0] * 4, tip_force=[0.0, -force, 0.0])
    lean = fine.contacts[0].force[0] / fine.contacts[0].force[1]
    assert lean == pytest.approx(force * (L - a) * a / (4 * EI), rel=0.05)


def test_the_same_set_up_moved_rigidly_gives_the_moved_solution():
    # base, post and tip force turned and shifted together (REP 103 frames: everything in the
    # world frame): the tip and the contact force turn and shift with them
    turn = Rotation.from_euler('zyx', [0.7, -0.4, 1.1]).as_matrix()
    shift = np.array([0.3, -0.2, 0.5])
    moved = weightless_steel(position=shift.tolist(), direction=turn[:, 0].tolist(),
                             normal=(-turn[:, 2]).tolist())
    results = [StaticsSolver(robot, 'kirchhoff', world=world).solve_tensions(
        [0.0] * 4, tip_force=rotation @ [0.0, -0.05, 0.0])
        for robot, world, rotation in ((weightless_steel(), post_world(), np.eye(3)),
                                       (moved, post_world(turn, shift), turn))]
    # the solver's tolerance (1e-7 scaled) in position and force
    np.testing.assert_allclose(results[1].tip_position, turn @ results[0].tip_position + shift,
                               atol=1e-8)
    np.testing.assert_allclose(results[1].contacts[0].force, turn @ results[0].contacts[0].force,
                               atol=1e-6)


def test_a_rod_clamped_on_a_plane_rests_on_it_as_a_winkler_beam():
    """
    The rod clamped at the height of a floor, lying on it: a beam on an elastic foundation.

    The penalty is a linear spring k (-g) once the rod is many distance scales deep (here
    w / k = 25 delta): EI y'''' + k y = -w with y(0) = y'(0) = 0 gives the far rod sunk by
    w / k, the deepest point (w / k)(1 + exp(-pi)), and the clamp's share of the weight
    w / beta, beta = (k / (4 EI))^(1/4) (the rod's free end, at beta L = 5.6, is left out).
    """
    k, delta = 1e4, 1e-6
    world = world_from_dict({'contact': {'penalty_stiffness': k, 'distance_scale': delta},
                             'obstacles': [{'name': 'floor', 'shape': 'plane',
                                            'position': [0.0, 0.0, -R]}]})
    result = StaticsSolver(STEEL, 'cosserat', world=world).solve_tensions([0.0] * 4)
    (floor,) = result.contacts
    beta = (k / (4 * EI)) ** 0.25
    # 0.1 %: the penalty's smooth transition near the clamp (g within a few delta)
    assert floor.force[2] == pytest.approx(W * (L - 1 / beta), rel=1e-3)
    assert -result.base_force[2] == pytest.approx(W / beta, rel=1e-2)
    assert result.max_penetration == pytest.approx(W / k * (1 + np.exp(-np.pi)), rel=5e-3)
    # the clamp's wave reflected at the free end: e^(-beta L) = 0.4 %, times a few
    assert -result.tip_position[2] == pytest.approx(W / k, rel=2e-2)


def test_a_tip_disc_on_a_floor_props_the_rod_in_the_discrete_statics():
    """
    The steel rod with one disc (5 g, 20 mm radius) at its tip, the floor at the disc's rim.

    The disc touches (the rod, 1 mm, is 19 mm above the floor): a propped cantilever whose
    support also carries the disc's weight, 3wL/8 + m g, less 3 EI delta / L^3 for the
    support settled by delta (the tip's depth, read from the solution).
    """
    data = STEEL.to_dict()
    mass, radius = 0.005, 0.02
    data['vertebrae'] = {'count': 1, 'first': L, 'last': L, 'mass': mass, 'radius': radius,
                         'thickness': 0.002}
    world = world_from_dict({'obstacles': [{'name': 'floor', 'shape': 'plane',
                                            'position': [0.0, 0.0, -radius]}]})
    result = StaticsSolver(robot_from_dict(data), 'discrete', world=world).solve_tensions(
        [0.0] * 4)
    (floor,) = result.contacts
    settled = -result.tip_position[2]
    assert 0.0 < settled < 1e-5
    # 1e-4: the rod's slope (2 mrad) and extension, left out by beam theory
    assert floor.force[2] == pytest.approx(3 * W * L / 8 + mass * np.linalg.norm(STEEL.gravity)
                                           - 3 * EI * settled / L ** 3, rel=1e-4)
    assert floor.s == pytest.approx(L, abs=1e-9)
