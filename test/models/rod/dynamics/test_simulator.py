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
TendonSimulator: physics against closed forms, input checking, divergence, reset.

Analytic cases run coarse rods (10-20 elements) with a damping ratio of 0.5 in the
first bending mode, which settles them in under a simulated second. Tolerances are
from the brief: 1 % of the length for the tendon arc, 2 % of the deflection for the
cantilever.
"""

import math

import numpy as np
from numpy.testing import assert_allclose, assert_array_equal
import pytest
from scipy.spatial.transform import Rotation

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.rod.dynamics._explicit_kernels import (_angle_over_sine,
                                                                    _rodrigues_factors)
from tendon_robot_sim.models.rod.dynamics.explicit import (InputError,
                                                           PYELASTICA_SHEAR_CORRECTION,
                                                           SimulationDiverged, stable_time_step,
                                                           TendonSimulator)
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())


def make_robot(elements=10, gravity=(0.0, 0.0, 0.0), mass=0.0, damping=0.5, tendons=None,
               vertebrae=None):
    data = DEFAULT.to_dict()
    data['rod'].update(elements=elements, damping={'ratio': damping})
    data['gravity'] = list(gravity)
    data['vertebrae']['mass'] = mass
    if vertebrae is not None:
        data['vertebrae'] = dict(vertebrae, mass=mass)
    if tendons is not None:
        data['tendons'] = tendons
    return robot_from_dict(data)


# ------------------------------------------------------------------ physics


def test_one_tendon_bends_the_rod_into_a_circular_arc():
    """Dense massless vertebrae, no gravity: an arc of curvature T r / (E I)."""
    tension, offset, n = 3.0, 0.015, 20
    robot = make_robot(n, vertebrae={'count': n})          # a vertebra on every node
    sim = TendonSimulator(robot)
    sim.set_tensions({'t0': tension})
    state = sim.run_until_steady(3.0, speed_tolerance=1e-4)
    assert sim.is_steady(1e-4)

    rod = robot.rod
    kappa = tension * offset / rod.bending_stiffness
    theta = kappa * rod.length                             # ~1 rad
    # the tendon also compresses the backbone by T / (E A)
    arc = rod.length * (1.0 - tension / (rod.youngs_modulus * rod.area))
    radius = arc / theta
    # t0's hole is on d1 = +z: the rod curls up in the x-z plane
    expected_tip = np.array([radius * math.sin(theta), 0.0, radius * (1.0 - math.cos(theta))])
    error = np.linalg.norm(state.tip_position - expected_tip)
    assert error < 0.01 * rod.length, f'tip {state.tip_position}, arc {expected_tip}'
    # the tip tangent d3 has turned by theta from +x towards +z
    tangent = state.tip_rotation[:, 2]
    assert_allclose(tangent, [math.cos(theta), 0.0, math.sin(theta)], atol=0.02)


def _cantilever_deflection(elements):
    g = 1.3                    # m/s^2, small deflection (2 % of the length)
    robot = make_robot(elements, gravity=(0.0, -g, 0.0))
    sim = TendonSimulator(robot)
    state = sim.run_until_steady(3.0, speed_tolerance=1e-5)
    assert sim.is_steady(1e-5)
    assert abs(state.tip_position[2]) < 1e-12          # stays in the plane of gravity
    rod = robot.rod
    q = rod.linear_density * g
    # Euler-Bernoulli plus the (0.1 %) Timoshenko shear term with PyElastica's factor
    expected = (q * rod.length ** 4 / (8.0 * rod.bending_stiffness)
                + q * rod.length ** 2 / (2.0 * PYELASTICA_SHEAR_CORRECTION
                                         * rod.shear_modulus * rod.area))
    return -state.tip_position[1], expected


def test_cantilever_under_its_own_weight_converges_to_euler_bernoulli():
    coarse, expected = _cantilever_deflection(10)
    fine, _ = _cantilever_deflection(20)
    assert abs(fine - expected) < 0.02 * expected, (fine, expected)
    # second order in the element length (the end joints are softened)
    ratio = (expected - coarse) / (expected - fine)
    assert 3.0 < ratio < 5.0, (coarse, fine, expected)


def test_opposite_tendons_with_equal_tension_keep_the_rod_straight():
    robot = make_robot(10)
    sim = TendonSimulator(robot)
    sim.set_tensions([5.0, 0.0, 5.0, 0.0])
    state = sim.advance(0.2)
    # the axial modes ring on (weak translational damping): average the tip over 0.1 s
    tips = np.array([sim.advance(0.0005).tip_position for _ in range(200)])
    for state in (state, sim.state()):
        assert np.abs(state.centerline[1:]).max() < 1e-9 * robot.rod.length
    # only the compression of the backbone, 2 T / (E A)
    shortening = 2 * 5.0 / (robot.rod.youngs_modulus * robot.rod.area) * robot.rod.length
    assert abs(robot.rod.length - tips[:, 0].mean() - shortening) < 0.1 * shortening


@pytest.mark.parametrize('angle', [0.0, 90.0, 135.0, 270.0])
def test_pulling_a_tendon_bends_the_tip_towards_its_side(angle):
    robot = make_robot(10, tendons=[{'name': 'pull', 'offset': 0.015, 'angle_deg': angle}])
    sim = TendonSimulator(robot)
    sim.set_tensions([1.0])
    tip = sim.advance(0.2).tip_position - robot.base.position
    lateral = tip - (tip @ robot.base.direction) * robot.base.direction
    a = math.radians(angle)
    side = math.cos(a) * robot.base.normal + math.sin(a) * robot.base.binormal
    assert np.linalg.norm(lateral) > 0.01
    assert lateral @ side / np.linalg.norm(lateral) > math.cos(math.radians(2.0))


def test_default_robot_hangs_down_under_gravity():
    sim = TendonSimulator(DEFAULT.with_changes(elements=10))
    state = sim.advance(0.2)
    assert state.tip_position[2] < -0.01
    assert abs(state.tip_position[1]) < 1e-12


# ------------------------------------------------------------------ state


def test_state_is_consistent():
    robot = make_robot(20, gravity=(0.0, 0.0, -9.8), mass=0.002)
    sim = TendonSimulator(robot)
    sim.set_tensions([0.0, 2.0, 0.0, 0.0])
    state = sim.advance(0.1)
    n_nodes = robot.rod.elements + 1
    assert state.centerline.shape == (3, n_nodes)
    assert state.vertebra_positions.shape == (3, 10)
    assert_array_equal(state.vertebra_positions, state.centerline[:, 2::2])
    assert_array_equal(state.tip_position, state.centerline[:, -1])
    for rotation, quaternion in zip(
            list(state.vertebra_rotations) + [state.tip_rotation],
            list(state.vertebra_orientations) + [state.tip_orientation]):
        assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-9)
        assert_allclose(Rotation.from_quat(quaternion).as_matrix(), rotation, atol=1e-9)
        assert quaternion[3] >= 0.0
    assert_array_equal(state.vertebra_rotations[-1], state.tip_rotation)
    assert state.time == pytest.approx(0.1, abs=sim.dt)
    assert_array_equal(state.tensions, [0.0, 2.0, 0.0, 0.0])
    for path in state.tendon_paths:
        assert path.shape == (3, 11)
        assert_allclose(np.linalg.norm(path[:, 0] - robot.base.position), 0.015)
    lengths = [np.linalg.norm(np.diff(p, axis=1), axis=0).sum() for p in state.tendon_paths]
    assert_allclose(state.tendon_lengths, lengths)
    # t1 is pulled in, t3 on the other side paid out
    assert state.tendon_displacements[1] > 1e-3
    assert state.tendon_displacements[3] < -1e-3


def test_tendon_displacements_at_rest_and_compliance():
    robot = make_robot(10, tendons=[
        {'name': 'a', 'offset': 0.015, 'angle_deg': 0.0, 'compliance': 0.001},
        {'name': 'b', 'offset': 0.01, 'angle_deg': 90.0, 'end': 0.125, 'routing': 'helical',
         'turns': 0.25}])
    sim = TendonSimulator(robot)
    state = sim.state()
    assert_allclose(state.tendon_lengths[0], 0.25, rtol=1e-12)
    assert state.tendon_lengths[1] > 0.125           # a helix is longer than its rod
    assert_allclose(state.tendon_displacements, 0.0, atol=1e-15)
    sim.set_tensions([2.0, 0.0])
    # straight rod, before any step: only the tendon's own stretch; the motor has taken in
    # the unstretched length the 0.25 m path no longer needs, 0.25 - 0.25 / (1 + 0.001/N * 2 N)
    assert_allclose(sim.state().tendon_displacements, [0.25 - 0.25 / 1.002, 0.0], atol=1e-15)


def test_state_arrays_are_copies():
    sim = TendonSimulator(make_robot(10))
    state = sim.state()
    state.centerline[...] = 7.0
    state.tensions[...] = 3.0
    assert sim.state().centerline.max() < 1.0
    assert_array_equal(sim.tensions, 0.0)
    sim.tensions[0] = 5.0
    assert_array_equal(sim.tensions, 0.0)


def test_run_until_steady_stops_early_and_is_steady_is_false_while_moving():
    sim = TendonSimulator(make_robot(10, gravity=(0.0, 0.0, -9.8)))
    assert not sim.is_steady()
    sim.advance(0.25)
    assert not sim.is_steady()             # still swinging down
    state = sim.run_until_steady(5.0)
    assert sim.is_steady()
    assert state.time < 3.0
    # one step per call (as a node might) still keeps enough history to judge
    for _ in range(round(0.055 / sim.dt)):
        sim.advance(sim.dt)
    assert sim.is_steady(window=0.025)
    with pytest.raises(InputError, match=r'^window: must be in \(0, 0.5\] s, got 2$'):
        sim.is_steady(window=2)


def test_rotation_to_quaternion_matches_scipy():
    rotations = Rotation.random(500, random_state=3)
    matrices = rotations.as_matrix()
    # include half turns, where the quaternion's w vanishes
    matrices[:3] = Rotation.from_rotvec(np.pi * np.eye(3)).as_matrix()
    q = rotation_to_quaternion(matrices)
    assert_allclose(np.abs(np.einsum('ka,ka->k', q, Rotation.from_matrix(matrices).as_quat())),
                    1.0, atol=1e-12)               # same rotation, up to sign
    assert np.all(q[:, 3] >= 0.0)
    assert_allclose(q[3:], rotations.as_quat(canonical=True)[3:], atol=1e-12)


# ------------------------------------------------------------------ inputs


@pytest.mark.parametrize('tensions, message', [
    ([0.0, 0.0, -1.0, 0.0], r'^tensions\[2\]: must be >= 0, got -1.0$'),
    ([0.0, float('nan'), 0.0, 0.0], r'^tensions\[1\]: must be finite, got nan$'),
    ([float('inf'), 0.0, 0.0, 0.0], r'^tensions\[0\]: must be finite, got inf$'),
    ([0.0, 0.0, 0.0, 25.0], r"^tensions\[3\]: must be <= max_tension 20.0 N of tendon 't3', "
                            r'got 25.0$'),
    ([1.0, 2.0, 3.0], r'^tensions: expected 4 values \(one per tendon t0, t1, t2, t3\), got 3$'),
    ([1.0] * 5, r'^tensions: expected 4 values .* got 5$'),
    (['1', 0, 0, 0], r"^tensions\[0\]: must be a number, got '1'$"),
    ([True, 0, 0, 0], r'^tensions\[0\]: must be a number, got True$'),
    ('1,2,3,4', r'^tensions: must be a sequence of numbers or a mapping'),
    (2.0, r'^tensions: must be a sequence of numbers or a mapping'),
    ({'tx': 1.0}, r"^tensions: unknown tendon 'tx' \(known: t0, t1, t2, t3\)$"),
    ({'t1': -0.5}, r"^tensions\['t1'\]: must be >= 0, got -0.5$"),
])
def test_bad_tensions_are_rejected_and_change_nothing(tensions, message):
    sim = TendonSimulator(make_robot(10))
    sim.set_tensions([1.0, 0.0, 0.5, 0.0])
    sim.advance(0.01)
    before = sim.state()
    with pytest.raises(InputError, match=message):
        sim.set_tensions(tensions)
    assert_array_equal(sim.tensions, [1.0, 0.0, 0.5, 0.0])
    after = sim.state()
    assert after.time == before.time
    assert_array_equal(after.centerline, before.centerline)


def test_tensions_by_name_change_only_the_named_tendons():
    sim = TendonSimulator(make_robot(10))
    sim.set_tensions(np.array([1.0, 2.0, 3.0, 4.0]))
    sim.set_tensions({'t2': 0.5, 't0': 0})
    assert_array_equal(sim.tensions, [0.0, 2.0, 0.5, 4.0])
    sim.set_tensions((np.float32(1.5), 0, 20, 0))          # max_tension itself is allowed
    assert_array_equal(sim.tensions, [1.5, 0.0, 20.0, 0.0])


@pytest.mark.parametrize('kwargs, message', [
    ({'dt': 0.0}, r'^dt: must be a finite number > 0, got 0.0$'),
    ({'dt': -1e-5}, r'^dt: must be a finite number > 0'),
    ({'dt': float('nan')}, r'^dt: must be a finite number > 0, got nan$'),
    ({'dt': '1e-5'}, r"^dt: must be a finite number > 0, got '1e-5'$"),
    ({'safety_factor': 0.0}, r'^safety_factor: must be in \(0, 1\], got 0.0$'),
    ({'safety_factor': 1.5}, r'^safety_factor: must be in \(0, 1\]'),
])
def test_bad_construction_arguments(kwargs, message):
    with pytest.raises(InputError, match=message):
        TendonSimulator(make_robot(10), **kwargs)


def test_rod_too_coarse_for_the_vertebrae_is_an_input_error():
    with pytest.raises(InputError, match='rod.elements: 5 elements .* too coarse'):
        TendonSimulator(make_robot(5))


@pytest.mark.parametrize('duration', [-0.1, float('nan'), float('inf'), None, '1'])
def test_bad_duration_is_rejected_and_changes_nothing(duration):
    sim = TendonSimulator(make_robot(10))
    with pytest.raises(InputError, match=r'^duration: must be a finite number >= 0 s, got '):
        sim.advance(duration)
    assert sim.time == 0.0


def test_advance_steps_round_duration_over_dt():
    sim = TendonSimulator(make_robot(10), dt=1e-5)
    sim.advance(0.00104)
    assert sim.time == pytest.approx(104 * 1e-5, rel=1e-12)
    sim.advance(0.0)
    assert sim.time == pytest.approx(104 * 1e-5, rel=1e-12)


# ------------------------------------------------------------------ time step, divergence, reset


def test_default_time_step_is_the_stability_bound_times_the_safety_factor():
    robot = make_robot(20)
    assert TendonSimulator(robot).dt == pytest.approx(0.9 * stable_time_step(robot))
    assert TendonSimulator(robot, safety_factor=0.5).dt == pytest.approx(
        0.5 * stable_time_step(robot))
    # finer rods need smaller steps, down to the rotational shear limit r / c_s
    bounds = [stable_time_step(robot, n) for n in (10, 20, 40, 80)]
    assert bounds == sorted(bounds, reverse=True)


@pytest.mark.parametrize('elements', [10, 30])
def test_stability_bound_is_sharp_without_damping(elements):
    """Undamped, the rod survives dt at the bound and blows up 10 % above it."""
    robot = make_robot(elements, gravity=(0.0, 0.0, -9.8), damping=0.0)
    bound = stable_time_step(robot)
    stable = TendonSimulator(robot, dt=0.99 * bound)
    stable.set_tensions([2.0, 1.0, 0.0, 0.0])
    stable.advance(3000 * stable.dt)
    unstable = TendonSimulator(robot, dt=1.1 * bound)
    unstable.set_tensions([2.0, 1.0, 0.0, 0.0])
    with pytest.raises(SimulationDiverged):
        unstable.advance(3000 * unstable.dt)


def test_too_large_dt_diverges_quickly_with_a_clear_message_and_reset_restores():
    robot = make_robot(10, gravity=(0.0, 0.0, -9.8))
    # 5 x: far above every limit
    sim = TendonSimulator(robot, dt=5.0 * stable_time_step(robot))
    sim.set_tensions([2.0, 0.0, 0.0, 0.0])
    initial = TendonSimulator(robot, dt=sim.dt).state()
    with pytest.raises(SimulationDiverged, match=(
            r'^simulation diverged at t = \S+ s \(step \d+\): node \d+ (is \S+ m from the '
            r'base \(limit 2 rod lengths = 0.5 m\)|has a non-finite position .*); '
            r'dt = \S+ s, stability bound \S+ s: a dt <= \S+ s is stable; call reset\(\) to '
            r'start again$')):
        sim.advance(1.0)
    assert sim.time < 0.05                                  # caught within a few steps
    with pytest.raises(SimulationDiverged, match=r'call reset\(\) before advancing'):
        sim.advance(0.001)
    sim.reset()
    state = sim.state()
    assert state.time == 0.0
    assert_array_equal(state.tensions, 0.0)
    assert_array_equal(state.centerline, initial.centerline)
    assert_array_equal(state.vertebra_rotations, initial.vertebra_rotations)
    assert_array_equal(state.tip_velocity, 0.0)


def test_a_divergence_within_the_stability_bound_names_no_step():
    """A load beyond what the rod can carry diverges at any dt: the message does not name one."""
    robot = make_robot(10, gravity=(0.0, 0.0, -9.8))
    sim = TendonSimulator(robot)
    assert sim.dt < sim.stable_dt
    sim.set_tip_load([0.0, 0.0, 1e9])
    with pytest.raises(SimulationDiverged, match=(
            r'stability bound \S+ s: dt is within it, so a smaller step does not help \(the '
            r'loads are beyond what the explicit model follows; try the implicit integrator\); '
            r'call reset\(\) to start again$')):
        sim.advance(1.0)


def test_reset_restores_the_initial_state_exactly():
    robot = make_robot(10, gravity=(0.0, 0.0, -9.8), mass=0.002)
    sim = TendonSimulator(robot)
    fresh = TendonSimulator(robot)
    sim.set_tensions([3.0, 1.0, 0.0, 0.0])
    sim.advance(0.1)
    sim.reset()
    assert_array_equal(sim.tensions, 0.0)
    assert not sim.is_steady()
    for run in (sim, fresh):
        run.set_tensions([0.0, 1.0, 2.0, 0.0])
    moved, expected = sim.advance(0.05), fresh.advance(0.05)
    assert moved.time == expected.time
    assert_array_equal(moved.centerline, expected.centerline)
    assert_array_equal(moved.tip_velocity, expected.tip_velocity)


@pytest.mark.parametrize('elements', [10, 50])
def test_compiled_stepper_follows_pyelastica_position_verlet(elements):
    """
    advance_rod is PyElastica's rod written out: same trajectory as PositionVerlet.step.

    The rod swings up under two tendons, then under two others, with discs, gravity and
    damping, for 1 s (36 000 steps at 50 elements). The kernel groups some sums
    differently, lets the compiler fuse multiply-adds and evaluates the small rotations
    by series, so the two differ by rounding only (about 2e-14 m here); 1e-9 m on the
    tip and the centreline allows for that and catches any missing or changed term
    (leaving out the rotational inertia transport (J omega / e) x omega moves the tip
    by 0.4 mm). With 10 elements the rod bends by more than 0.14 rad per
    Voronoi domain, so the library path of the curvature is taken too.
    """
    robot = make_robot(elements, gravity=(0.0, 0.0, -9.8), mass=0.002, damping=0.05)
    runs = [TendonSimulator(robot, stepper=stepper) for stepper in ('compiled', 'pyelastica')]
    for sim in runs:
        sim.set_tensions([3.0, 2.0, 0.0, 0.5])
        sim.advance(0.3)
        sim.set_tensions([0.0, 1.0, 2.0, 0.0])
        sim.advance(0.7)
    compiled, reference = (sim.state() for sim in runs)
    # PyElastica adds up 2 half steps a step, the kernel counts steps
    assert compiled.time == pytest.approx(reference.time, rel=1e-10)
    assert reference.time == pytest.approx(1.0, abs=runs[0].dt)
    assert np.linalg.norm(reference.tip_velocity) > 0.01          # still moving
    assert np.linalg.norm(compiled.tip_position - reference.tip_position) < 1e-9
    assert np.abs(compiled.centerline - reference.centerline).max() < 1e-9
    assert np.abs(compiled.vertebra_rotations - reference.vertebra_rotations).max() < 1e-9
    assert np.abs(compiled.tip_velocity - reference.tip_velocity).max() < 1e-9


def test_series_of_the_rotations_match_the_library_functions():
    """
    The kernel's small-angle series against numpy on both sides of their switch.

    theta / sin(theta) from cos(theta) (the curvature; the series below 0.14 rad) and
    sin(theta) / |omega|, (1 - cos(theta)) / |omega|^2 with theta = h |omega| (the
    kinematic rotation; the series below 0.1 rad), from a nanoradian to 3 rad:
    equal to rounding (near pi, theta / sin(theta) from a rounded cosine loses 3 digits).
    """
    theta = np.geomspace(1e-9, 3.0, 500)
    ratio = np.array([_angle_over_sine(c) for c in np.cos(theta)])
    assert_allclose(ratio, theta / np.sin(theta), rtol=1e-13)
    assert _angle_over_sine(1.0) == 1.0
    h = 2e-5
    omega = theta / h
    factors = np.array([_rodrigues_factors(h, w * w) for w in omega])
    assert_allclose(factors[:, 0], np.sin(theta) / omega, rtol=1e-14)
    # above the switch 1 - cos(theta), as PyElastica has it, cancels digits away
    assert_allclose(factors[:, 1], 2.0 * np.sin(theta / 2.0) ** 2 / omega ** 2, rtol=1e-12)
    assert _rodrigues_factors(h, 0.0) == (h, 0.5 * h * h)


def test_unknown_stepper_is_an_input_error():
    with pytest.raises(InputError, match=r"^stepper: must be one of \['compiled', 'pyelastica'\]"):
        TendonSimulator(make_robot(10), stepper='euler')


def test_tip_load_set_at_run_time_matches_the_description_and_reset_restores():
    """A run-time tip load gives the trajectory of the same load in the description."""
    loaded = make_robot(10, gravity=(0.0, 0.0, -9.8)).to_dict()
    loaded['tip_load'] = {'force': [0.0, 0.05, 0.1], 'moment': [0.0, 0.0, 0.002]}
    described = TendonSimulator(robot_from_dict(loaded))
    sim = TendonSimulator(make_robot(10, gravity=(0.0, 0.0, -9.8)))
    sim.set_tip_load((0.0, 0.05, 0.1), (0.0, 0.0, 0.002))
    for run in (sim, described):
        run.advance(0.1)
    assert_array_equal(sim.state().centerline, described.state().centerline)
    force, moment = sim.tip_load
    assert force.tolist() == [0.0, 0.05, 0.1] and moment.tolist() == [0.0, 0.0, 0.002]
    for bad, message in (((0.0, 1.0), r'^tip force: must be 3 numbers'),
                         ((0.0, math.nan, 0.0), r'^tip force: must be finite'),
                         ('abc', r'^tip force: must be 3 numbers')):
        with pytest.raises(InputError, match=message):
            sim.set_tip_load(bad)
    assert sim.tip_load[0].tolist() == [0.0, 0.05, 0.1]          # unchanged
    sim.reset()
    assert_array_equal(np.concatenate(sim.tip_load), 0.0)
