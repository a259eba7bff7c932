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
Stability of an equilibrium of the parallel robot with its motors held.

Two conditions, both necessary (the second variation of the potential energy, rods and
platform, positive definite; Till and Rucker, "Elastic Stability of Cosserat Rods and Parallel
Continuum Robots", IEEE T-RO 33(3), 2017):

* each rod with the platform held is stable: no conjugate point inside it. The solutions of the
  rod's equations from its base that keep the base conditions (n(0), m_z, q2, q3 varied) form a
  6-parameter family; where the 6 x 6 map from them to the position and rotation at s turns
  singular (its determinant changes sign) a Jacobi field held at both ends exists, and the rod
  buckles with its ends held there. A load far beyond the rods' Euler loads can still have a
  solution, the rods bent into a higher mode (more and more sign changes): an equilibrium, but
  one no robot holds;
* the platform with the motors held is stable: the tangent stiffness of
  :mod:`tendon_robot_sim.models.pcr.stiffness` positive definite.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.cosserat import stiffness_matrices
from tendon_robot_sim.models.pcr.kinetostatics import PcrResult, PcrSolver, rot_x
from tendon_robot_sim.models.pcr.robot import PcrRobot
from tendon_robot_sim.models.pcr.stiffness import tangent_compliance

# RK4 steps per rod for the conjugate-point test, and the central-difference step (scaled
# units: E I / L^2, E I / L, rad)
STEPS = 256
STEP = 1e-6


def _ry(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _rates(y, kse, kbt, ustar, f):
    """Eqs. (1)-(2) for a batch of rod states y (..., 18)."""
    R = y[..., 3:12].reshape(y.shape[:-1] + (3, 3))
    n, m = y[..., 12:15], y[..., 15:18]
    v = np.einsum('...ji,...j->...i', R, n) / kse
    v[..., 2] += 1.0
    u = np.einsum('...ji,...j->...i', R, m) / kbt + ustar
    p_s = np.einsum('...ij,...j->...i', R, v)
    uhat = np.zeros(u.shape[:-1] + (3, 3))
    uhat[..., 0, 1], uhat[..., 0, 2], uhat[..., 1, 2] = -u[..., 2], u[..., 1], -u[..., 0]
    uhat[..., 1, 0], uhat[..., 2, 0], uhat[..., 2, 1] = u[..., 2], -u[..., 1], u[..., 0]
    dy = np.empty_like(y)
    dy[..., 0:3] = p_s
    dy[..., 3:12] = (R @ uhat).reshape(y.shape[:-1] + (9,))
    dy[..., 12:15] = -f
    dy[..., 15:18] = -np.cross(p_s, n)
    return dy


def conjugate_points(robot: PcrRobot, result: PcrResult) -> list[np.ndarray]:
    """
    Arc lengths [m] of the conjugate points of each rod of ``result`` (6 arrays, empty: none).

    A sign change of det d[p(s) / L, theta(s)] / d[n(0) L^2 / (E I), m_z L / (E I), q2, q3],
    by central differences of RK4 solutions, after the first 2 % of the rod (the determinant
    starts at zero at s = 0).
    """
    rods = robot.rods
    L, EI = rods.length, rods.bending_stiffness
    kse, kbt = stiffness_matrices(rods, shear_coefficient=1.0)
    ustar = np.array([robot.precurvature, 0.0, 0.0])
    f = rods.linear_density * np.asarray(robot.gravity)
    y = np.empty((6, 13, 18))
    for i in range(6):
        R0, q3 = result.base_rotations[i], result.joint_angles[i, 1]
        mz = result.base_moments[i] @ R0[:, 2]
        for k in range(13):
            x = np.zeros(6)
            if k:
                x[(k - 1) // 2] = STEP if k % 2 else -STEP
            Rb = R0 @ rot_x(-q3) @ _ry(x[4]) @ rot_x(q3) @ rot_x(x[5])
            y[i, k] = np.concatenate((result.base_positions[i], Rb.ravel(),
                                      result.base_forces[i] + x[:3] * EI / L ** 2,
                                      (mz + x[3] * EI / L) * Rb[:, 2]))
    h = L / STEPS
    dets = np.empty((STEPS, 6))
    J = np.empty((6, 6, 6))
    for j in range(STEPS):
        k1 = _rates(y, kse, kbt, ustar, f)
        k2 = _rates(y + 0.5 * h * k1, kse, kbt, ustar, f)
        k3 = _rates(y + 0.5 * h * k2, kse, kbt, ustar, f)
        k4 = _rates(y + h * k3, kse, kbt, ustar, f)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        dy = (y[:, 1::2] - y[:, 2::2]) / (2.0 * STEP)          # (6 rods, 6 params, 18)
        R = y[:, 0, 3:12].reshape(6, 3, 3)
        D = np.einsum('rji,rkjl->rkil', R, dy[:, :, 3:12].reshape(6, 6, 3, 3))
        J[:, :3, :] = np.swapaxes(dy[:, :, 0:3], 1, 2) / L
        J[:, 3, :], J[:, 4, :], J[:, 5, :] = D[:, :, 2, 1], D[:, :, 0, 2], D[:, :, 1, 0]
        dets[j] = np.linalg.det(J)
    s = h * np.arange(1, STEPS + 1)
    points = []
    for i in range(6):
        d = dets[s > L / 50, i]
        flips = np.nonzero(np.sign(d[1:]) != np.sign(d[:-1]))[0]
        points.append(s[s > L / 50][flips + 1])
    return points


def held_stiffness(solver: PcrSolver) -> np.ndarray:
    """K (6, 6) with the motors held at the solver's last inverse solution (world frame)."""
    return np.linalg.inv(tangent_compliance(solver, solver.hold_motors()))


def instability(solver: PcrSolver, result: PcrResult) -> str | None:
    """
    Say why the last inverse solution ``result`` of ``solver`` is unstable; None if stable.

    ``result`` must be the solver's last inverse solution (its motors are then held).
    """
    robot = solver.robot
    load = f'{np.round(result.force, 4).tolist()} N (platform weight included)'
    points = conjugate_points(robot, result)
    buckled = [i + 1 for i, p in enumerate(points) if p.size]
    if buckled:
        most = max(p.size for p in points)
        return (f'under the force {load} the rods {buckled} are buckled (up to {most} '
                f'conjugate points along a rod): an equilibrium, unstable, that no robot holds')
    try:
        K = held_stiffness(solver)
    except np.linalg.LinAlgError:
        return f'under the force {load} the pose is at a limit point (stiffness singular)'
    if np.linalg.eigvalsh(0.5 * (K + K.T))[0] <= 0.0:
        return (f'under the force {load} the platform is unstable with the motors held (its '
                f'tangent stiffness has a negative direction)')
    return None
