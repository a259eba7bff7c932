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
Kinetostatics of the 6-RUS parallel continuum robot (tendon_robot_sim.models.pcr.kinetostatics).

Checked against the independent scipy path (pcr_reference), the rigid-link robot (exact
without gravity and load, the limit of stiff rods), the robot's symmetry, the wrench
balance of the whole robot and round trips; the paper's studies: test_pcr_studies.py.
"""

import math

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.pcr import _kernels as kernels
from tendon_robot_sim.models.pcr.kinetostatics import (_Memory, PcrSolver, rigid_forward,
                                                       rigid_inverse)
from tendon_robot_sim.models.pcr.reference import PcrReference
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot

ROBOT = load_pcr_robot(default_pcr_file())
# an off-axis, tilted pose under a general wrench
POSE = np.array([0.03, -0.02, 0.45, 0.05, -0.04, 0.1])
WRENCH = np.array([0.5, -0.3, -5.0, 0.02, 0.01, -0.03])
# 32 RK4 steps per rod leave the angles ~1.4e-7 rad from the converged discretisation
DISCRETISATION = 1e-6


@pytest.fixture(scope='module')
def solver():
    return PcrSolver(ROBOT)


@pytest.fixture(scope='module')
def reference_inverse():
    return PcrReference(ROBOT).inverse(POSE, WRENCH)


def test_inverse_matches_scipy_reference(solver, reference_inverse):
    solver.reset()
    result = solver.inverse(POSE[:3], POSE[3:], WRENCH[:3], WRENCH[3:])
    assert result.residual <= solver.tolerance
    assert_allclose(result.motor_angles, reference_inverse[:, 0], atol=DISCRETISATION)
    assert_allclose(result.joint_angles, reference_inverse[:, 1:], atol=DISCRETISATION)
    assert result.within_limits


def test_forward_matches_scipy_reference(solver, reference_inverse):
    q1 = reference_inverse[:, 0]
    solver.reset()
    result = solver.forward(q1, WRENCH[:3], WRENCH[3:])
    assert_allclose(result.position, POSE[:3], atol=DISCRETISATION * ROBOT.rods.length)
    assert_allclose(result.orientation, POSE[3:], atol=DISCRETISATION)


@pytest.mark.parametrize('compat', ['paper', 'dfki2024'])
@pytest.mark.parametrize('pose, force', [
    ((0.0, 0.0, 0.4, 0.0, 0.0, 0.0), (0.0, 0.0, -5.0)),
    ((0.1, -0.05, 0.5, 0.1, -0.05, 0.3), (1.0, 2.0, -20.0)),
    ((-0.2, 0.1, 0.55, 0.0, 0.0, -0.4), (0.0, 0.0, 0.0)),
])
def test_forward_of_inverse_returns_the_pose(compat, pose, force):
    robot = ROBOT.with_changes(compat=compat)
    q1 = PcrSolver(robot).inverse(pose[:3], pose[3:], force).motor_angles
    result = PcrSolver(robot).forward(q1, force)     # cold: from the rigid-link pose
    assert_allclose(result.position, pose[:3], atol=1e-6)
    assert_allclose(result.orientation, pose[3:], atol=1e-6)


def test_whole_robot_wrench_balance(solver):
    """
    Base wrenches of the six rods carry the platform wrench and the rods' weight.

    Forces: sum n_i(0) = F + 6 rho A L g; moments: sum (p0_i x n_i(0) + m_i(0)) = p_e x F + M + sum
    integral p_i ds x rho A g (Simpson on the rod shapes).
    """
    result = solver.inverse(POSE[:3], POSE[3:], WRENCH[:3], WRENCH[3:])
    rods = ROBOT.rods
    f = rods.linear_density * ROBOT.gravity
    assert_allclose(result.base_forces.sum(axis=0),
                    WRENCH[:3] + 6 * rods.length * f, atol=1e-9)
    h = result.arc_lengths[1]
    c = result.centerlines
    first_moment = h / 3 * (c[:, :, 0] + 4 * c[:, :, 1:-1:2].sum(axis=2)
                            + 2 * c[:, :, 2:-1:2].sum(axis=2) + c[:, :, -1]).sum(axis=0)
    moment = (np.cross(result.base_positions, result.base_forces).sum(axis=0)
              + result.base_moments.sum(axis=0))
    expected = np.cross(POSE[:3], WRENCH[:3]) + WRENCH[3:] + np.cross(first_moment, f)
    # Simpson on the RK4 grid: ~1e-9 m of first-moment error times 0.1 N/m
    assert_allclose(moment, expected, atol=1e-8)
    # the universal joints transmit no moment about their axes (paper: m(0) along d3)
    d3 = result.base_rotations[:, :, 2]
    assert_allclose(np.cross(result.base_moments, d3), 0.0, atol=1e-12)


def test_symmetric_poses_give_symmetric_motor_angles(solver):
    # on the axis, level: all six motors alike (the robot's 3-fold and mirror symmetry)
    q = solver.inverse([0, 0, 0.45], force=[0, 0, -20]).motor_angles
    assert_allclose(q, q[0], atol=1e-9)
    # the platform centre turned by 120 deg about z (the yaw stays: the platform's joints
    # turn onto each other) turns the motor pairs: (1,2) -> (3,4) -> (5,6)
    x, y, z, yaw = 0.06, 0.03, 0.47, 0.2
    c, s = math.cos(2 * math.pi / 3), math.sin(2 * math.pi / 3)
    base = solver.inverse([x, y, z], [0, 0, yaw], [0, 0, -5]).motor_angles
    turned = solver.inverse([c * x - s * y, s * x + c * y, z], [0, 0, yaw],
                            [0, 0, -5]).motor_angles
    assert_allclose(turned, np.roll(base, 2), atol=1e-9)
    # mirrored in x (x -> -x, yaw -> -yaw): motors M1<->M2, M3<->M6, M4<->M5
    mirrored = solver.inverse([-x, y, z], [0, 0, -yaw], [0, 0, -5]).motor_angles
    assert_allclose(mirrored, base[[1, 0, 5, 4, 3, 2]], atol=1e-9)


def test_without_gravity_and_load_the_rods_keep_their_rest_shape():
    """
    Stress-free rods are the rigid links of rigid_inverse.

    This is exact, not a limit (up to the RK4 discretisation of the rest arc).
    """
    robot = ROBOT.with_changes(gravity=[0.0, 0.0, 0.0])
    result = PcrSolver(robot).inverse(POSE[:3], POSE[3:])
    assert_allclose(result.motor_angles, rigid_inverse(robot, POSE[:3], POSE[3:])[:, 0],
                    atol=DISCRETISATION)
    assert np.max(np.abs(result.base_forces)) < 1e-9
    assert_allclose(rigid_forward(robot, result.motor_angles), POSE, atol=DISCRETISATION)


def test_stiff_rods_tend_to_the_rigid_link_robot():
    """
    Under gravity and load, the motor angles approach the rigid-link inverse kinematics as 1/E.

    The deflection goes as load / stiffness.
    """
    rigid = rigid_inverse(ROBOT, POSE[:3], POSE[3:])[:, 0]
    errors = []
    for factor in (1.0, 10.0, 100.0):
        robot = ROBOT.with_changes(youngs_modulus=ROBOT.rods.youngs_modulus * factor)
        q = PcrSolver(robot).inverse(POSE[:3], POSE[3:], WRENCH[:3], WRENCH[3:]).motor_angles
        errors.append(np.max(np.abs(q - rigid)))
    assert errors[0] > 1e-3
    assert errors[1] == pytest.approx(errors[0] / 10, rel=0.2)
    assert errors[2] == pytest.approx(errors[1] / 10, rel=0.05)


def test_dfki2024_agrees_with_the_paper_where_the_differences_vanish():
    """No load (gravity off), on the axis, r = 0.3: the four differences vanish."""
    paper = ROBOT.with_changes(gravity=[0.0, 0.0, 0.0], precurvature_radius=0.3)
    dfki = paper.with_changes(compat='dfki2024')
    on_axis = PcrSolver(paper).inverse([0, 0, 0.45]).motor_angles
    assert_allclose(PcrSolver(dfki).inverse([0, 0, 0.45]).motor_angles, on_axis, atol=1e-9)
    # ... and they show off the axis under load (p_e x F, base frames, precurvature)
    loaded = ROBOT.with_changes(compat='dfki2024')
    q_paper = PcrSolver(ROBOT).inverse(POSE[:3], POSE[3:], [0, 0, -20]).motor_angles
    q_dfki = PcrSolver(loaded).inverse(POSE[:3], POSE[3:], [0, 0, -20]).motor_angles
    assert np.max(np.abs(q_paper - q_dfki)) > 1e-3


def test_warm_start_and_bad_input(solver):
    solver.reset()
    cold = solver.inverse(POSE[:3], POSE[3:])
    warm = solver.inverse(POSE[:3] + [1e-3, 0, 0], POSE[3:])
    # the kept Jacobian blocks still serve: one residual (6 rods) per iteration and none of
    # the integrations with tangents a new exact Jacobian takes
    assert warm.evaluations == 6 * (warm.iterations + 1)
    assert cold.evaluations > 6 * (cold.iterations + 1)
    with pytest.raises(StaticsInputError, match=r'motor_angles\[2\]: must be within the '
                                                r'motor limits \[-20, 90\] deg, got 100'):
        solver.forward(np.radians([0, 0, 100, 0, 0, 0]))
    with pytest.raises(StaticsInputError, match='position'):
        solver.inverse([0, 0])


def test_a_tolerance_in_metres_bounds_each_rod_ends_gap_to_its_joint():
    # along 1 mm steps (warm solves, most accepted from the secant prediction with no
    # iteration): each coordinate of each rod end's distance to its platform joint, measured
    # on the returned shapes, within the tolerance
    tolerance_m = 1e-5
    loose = PcrSolver(ROBOT, tolerance_m=tolerance_m)
    assert loose.tolerance_m == pytest.approx(tolerance_m)
    assert loose.tolerance == pytest.approx(tolerance_m / ROBOT.rods.length)
    tight = PcrSolver(ROBOT)
    largest = 0.0
    for k in range(40):
        position = POSE[:3] + 1e-3 * np.array([0.0, k, k])
        result = loose.inverse(position, POSE[3:])
        joints = result.position + ROBOT.joint_positions @ result.rotation.T
        largest = max(largest, np.abs(result.centerlines[:, :, -1] - joints).max())
        assert result.residual <= loose.tolerance
        exact = tight.inverse(position, POSE[3:]).motor_angles
        # 1e-5 m of gap is about 4e-5 rad of motor angle (docs/performance.md)
        assert_allclose(result.motor_angles, exact, atol=1e-4)
    assert 0.0 < largest <= tolerance_m
    with pytest.raises(StaticsInputError, match=r'tolerance_m: must be a number > 0, got -1'):
        PcrSolver(ROBOT, tolerance_m=-1.0)


def _memory_in_some_state(rng, solved: bool):
    memory = _Memory()
    for array in (memory.x, memory.B, memory.x_last, memory.B_last, memory.u, memory.arrays.S):
        array[...] = rng.standard_normal(array.shape)
    memory.solved = solved
    return memory


@pytest.mark.parametrize('solved', [True, False])
def test_warm_start_bookkeeping_kernels_match_plain_numpy(solved):
    # the start x_last + S du and the secant update of S, done by the kernels in the solve,
    # against the same bookkeeping written in plain numpy
    rng = np.random.default_rng(7)
    u = rng.standard_normal(12)
    for predict in (True, False):
        ours, ref = (_memory_in_some_state(np.random.default_rng(3), solved) for _ in range(2))
        kernels._inputs_step(u[:6], u[6:], ours.arrays)
        kernels._restore(ours.arrays, predict)
        ref.reference_start(u, predict)
        assert_allclose(ours.x, ref.x, rtol=1e-12, atol=1e-12)
        assert_allclose(ours.B, ref.B, rtol=0, atol=0)   # a copy
        assert ours.arrays.jac_ok[0] and ref.arrays.jac_ok[0]
    ours, ref = (_memory_in_some_state(np.random.default_rng(5), solved) for _ in range(2))
    kernels.pcr_keep(u[:6], u[6:], ours.arrays)
    ref.reference_keep(u)
    for name in ('S', 'x_last', 'B_last', 'u'):
        assert_allclose(getattr(ours.arrays, name), getattr(ref.arrays, name), rtol=1e-12,
                        atol=1e-12, err_msg=name)
    assert ours.solved and ref.solved
    # the updated secant reproduces the step it was given: S du = x - x_last (before)
    if solved:
        before = _memory_in_some_state(np.random.default_rng(5), solved)
        assert_allclose(ours.arrays.S @ (u - before.u), before.x - before.x_last, atol=1e-10)


def test_unreachable_pose_raises_with_its_residual(solver):
    solver.reset()
    with pytest.raises(ConvergenceError, match='out of reach') as info:
        solver.inverse([0, 0, 1.2])
    assert math.isinf(info.value.residual)      # no attempt: not even the rigid links reach
    # reachable by the rigid links but not with this load: a finite residual
    with pytest.raises(ConvergenceError, match=r'wrench \[0.0, 0.0, -400.0') as info:
        solver.inverse([0, 0, 0.4], force=[0, 0, -400])
    assert info.value.residual > solver.tolerance
