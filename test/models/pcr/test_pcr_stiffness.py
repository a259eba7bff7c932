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
Cartesian stiffness of the parallel robot with its motors held (models.pcr.stiffness).

The variational equations (implicit function theorem on the shooting residual) against
central differences of forward solves; reciprocity (a symmetric K) and K proportional to E
where the rods are unstressed; the held equilibrium reached from an inverse solution.
"""

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.stability import unstable_because
from tendon_robot_sim.models.pcr.stiffness import (angular_rate_matrix, stiffness,
                                                   stiffness_by_differences)

ROBOT = load_pcr_robot(default_pcr_file())
POSE = np.array([0.03, -0.02, 0.45, 0.05, -0.04, 0.1])
WRENCH = np.array([0.5, -0.3, -5.0, 0.02, 0.01, -0.03])


def _held(robot, pose=POSE, wrench=WRENCH):
    """Return a solver holding the motors that keep the platform at pose under wrench."""
    solver = PcrSolver(robot)
    q1 = solver.inverse(pose[:3], pose[3:], wrench[:3], wrench[3:]).motor_angles
    solver.hold_motors()
    return solver, q1


@pytest.mark.parametrize('compat', ['paper', 'dfki2024'])
def test_variational_stiffness_matches_central_differences(compat):
    """
    The one linear solve of the variational route equals 12 forward solves' differences.

    Central differences (step 1e-2 of the force and moment scales) carry ~1e-6 relative
    truncation and tolerance error; a missing term of dE/dw (the p_e x F of Eq. 3, a sign,
    the rpy-rate to rotation-vector map) moves whole columns by 1e-2 or more of their size.
    """
    solver, q1 = _held(ROBOT.with_changes(compat=compat))
    exact = stiffness(solver, q1, WRENCH[:3], WRENCH[3:])
    numeric = stiffness_by_differences(solver, q1, WRENCH[:3], WRENCH[3:])
    for column in range(6):
        size = np.max(np.abs(numeric.compliance[:, column]))
        assert_allclose(exact.compliance[:, column], numeric.compliance[:, column],
                        rtol=0.0, atol=1e-4 * size)
    assert_allclose(exact.axial, numeric.axial, rtol=1e-4)
    assert_allclose(exact.equilibrium.position, POSE[:3], atol=1e-9)


def test_stiffness_at_the_rest_pose_is_the_held_inverse_solution():
    """At rest, on the axis: the axial value is K_zz (z decoupled), the robot stable."""
    solver, q1 = _held(ROBOT, np.array([0, 0, 0.4, 0, 0, 0]), np.zeros(6))
    result = stiffness(solver, q1)
    assert_allclose(result.equilibrium.position, [0, 0, 0.4], atol=1e-12)
    assert unstable_because(ROBOT, result.equilibrium, result.matrix) is None
    assert_allclose(result.axial, result.matrix[2, 2], rtol=1e-9)
    # the 3-fold symmetry: equal lateral stiffnesses, no coupling of z with x, y
    assert_allclose(result.matrix[0, 0], result.matrix[1, 1], rtol=1e-9)
    assert np.max(np.abs(result.matrix[2, :2])) < 1e-9 * result.axial


def test_unstressed_rods_give_a_symmetric_stiffness_proportional_to_e():
    """
    Without gravity and load the rods rest stress-free: K is the linear-elastic stiffness.

    Maxwell-Betti reciprocity makes it symmetric, and every rod stiffness (E A, G A, E I,
    G J) scales with E, so K does. With the rods' weight, the paper's base condition m(0) =
    m_z R0 e3 (not perpendicular to the universal joint's first axis when q3 != 0) does work
    and K loses its symmetry by about m_z / (E I / L): measured 1.5e-5 of max |K| at rest.
    """
    weightless = ROBOT.with_changes(gravity=np.zeros(3))
    solver, q1 = _held(weightless, wrench=np.zeros(6))
    K = stiffness(solver, q1).matrix
    assert np.max(np.abs(K - K.T)) < 1e-7 * np.max(np.abs(K))
    stiffer = weightless.with_changes(youngs_modulus=10.0 * weightless.rods.youngs_modulus)
    stiff, q1_stiff = _held(stiffer, wrench=np.zeros(6))
    assert_allclose(q1_stiff, q1, atol=1e-12)            # unstressed: the same motor angles
    assert_allclose(stiffness(stiff, q1).matrix, 10.0 * K, rtol=0.0,
                    atol=1e-7 * np.max(np.abs(K)))
    solver, q1 = _held(ROBOT, wrench=np.zeros(6))
    K = stiffness(solver, q1).matrix
    assert 1e-6 < np.max(np.abs(K - K.T)) / np.max(np.abs(K)) < 1e-3


def test_angular_rate_matrix_maps_rpy_rates_to_the_world_rotation():
    """omega^ = dR/dt R^T for R = Rz(yaw) Ry(pitch) Rx(roll), by differences."""
    from tendon_robot_sim.models.pcr.kinetostatics import platform_rotation
    rpy, rate, h = np.array([0.3, -0.4, 1.1]), np.array([0.2, -0.7, 0.5]), 1e-6
    dR = (platform_rotation(rpy + h * rate) - platform_rotation(rpy - h * rate)) / (2 * h)
    W = dR @ platform_rotation(rpy).T
    assert_allclose([W[2, 1], W[0, 2], W[1, 0]], angular_rate_matrix(rpy) @ rate, atol=1e-8)


def test_hold_motors_needs_an_inverse_solution():
    with pytest.raises(StaticsInputError, match='no inverse solution'):
        PcrSolver(ROBOT).hold_motors()
    with pytest.raises(StaticsInputError, match='no forward solution'):
        PcrSolver(ROBOT).jacobians(inverse=False)
