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
Plain numpy/scipy reference of the parallel robot's kinetostatics.

For tests of the fast solver (:mod:`tendon_robot_sim.models.pcr.kinetostatics`).

The paper's own numerical method, written independently of the numba kernels:

* each rod integrated by ``scipy.integrate.solve_ivp`` (DOP853, tight tolerances) on
  Eqs. (1)-(2) with hat matrices, instead of fixed-step RK4;
* rotations from ``scipy.spatial.transform.Rotation`` (R0 = R_M * intrinsic XYX (q1, q2,
  q3), R_e = intrinsic ZYX (yaw, pitch, roll));
* base forces as unknowns in the rod's base frame (the kernels: world frame), and the
  spherical-joint condition as R_e^T m_i(L) = 0 as the paper writes Eq. (5);
* ``scipy.optimize.root`` (MINPACK hybrd) on the full 42 x 42 inverse system instead of
  the structured Newton iteration, started from the rigid-link solution. Forward solves
  are checked through it: its motor angles must take the fast forward solver back to
  the pose.

Seconds per solve: tests and spot checks only.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import root
from scipy.spatial.transform import Rotation

from tendon_robot_sim.models.cosserat import StaticsError, stiffness_matrices
from tendon_robot_sim.models.geometry import hat
from tendon_robot_sim.models.pcr.kinetostatics import crank_tips, rigid_inverse
from tendon_robot_sim.models.pcr.robot import PcrRobot

E3 = np.array([0.0, 0.0, 1.0])


class PcrReference:
    """The paper's shooting problem for one robot, solved with scipy."""

    def __init__(self, robot: PcrRobot, rtol: float = 1e-11):
        self.robot = robot
        self.rtol = rtol
        self.Kse, self.Kbt = stiffness_matrices(robot.rods, shear_coefficient=1.0)
        self.ustar = np.array([robot.precurvature, 0.0, 0.0])
        self.f = robot.rods.linear_density * robot.gravity
        L, EI = robot.rods.length, robot.rods.bending_stiffness
        self.L, self.force_scale, self.moment_scale = L, EI / L ** 2, EI / L
        self.paper = robot.compat == 'paper'

    def rhs(self, s, y):
        """Eqs. (1)-(2): p' = R v, R' = R u^, n' = -f, m' = -p' x n."""
        R = y[3:12].reshape(3, 3)
        n, m = y[12:15], y[15:18]
        v = R.T @ n / self.Kse + E3
        u = R.T @ m / self.Kbt + self.ustar
        p_s = R @ v
        return np.concatenate((p_s, (R @ hat(u)).ravel(), -self.f, -np.cross(p_s, n)))

    def base(self, i: int, q1: float, q2: float, q3: float):
        """p0, R0 of rod i."""
        p0 = crank_tips(self.robot, np.full(6, q1))[i]
        angles = [q1, q2, q3] if self.paper else [0.0, q2, q3]
        R0 = self.robot.motor_rotations[i] @ Rotation.from_euler('XYX', angles).as_matrix()
        return p0, R0

    def rod(self, i: int, q, nb0, mz):
        """Integrate rod i; returns the solve_ivp solution (y (18, k))."""
        p0, R0 = self.base(i, *q)
        n0 = R0 @ nb0
        m0 = mz * (R0[:, 2] if self.paper else E3)
        y0 = np.concatenate((p0, R0.ravel(), n0, m0))
        sol = solve_ivp(self.rhs, (0.0, self.L), y0, method='DOP853', rtol=self.rtol,
                        atol=self.rtol * 1e-2)
        return sol.y

    def residual(self, x, pose, wrench):
        """E of the paper (Eqs. 3-5) for the inverse unknowns x (42,), scaled."""
        pe = pose[:3]
        Re = Rotation.from_euler('ZYX', pose[5:2:-1]).as_matrix()
        E = np.zeros(42)
        force, moment = -wrench[:3].copy(), -wrench[3:].copy()
        if self.paper:
            moment -= np.cross(pe, wrench[:3])
        for i in range(6):
            b = x[7 * i:7 * i + 7]
            y = self.rod(i, b[4:7], b[0:3] * self.force_scale, b[3] * self.moment_scale)[:, -1]
            p, n, m = y[0:3], y[12:15], y[15:18]
            E[6 * i:6 * i + 3] = (pe + Re @ self.robot.joint_positions[i] - p) / self.L
            E[6 * i + 3:6 * i + 6] = Re.T @ m / self.moment_scale
            force += n
            moment += np.cross(p, n) + m
        E[36:39] = force / self.force_scale
        E[39:42] = moment / self.moment_scale
        return E

    def inverse(self, pose, wrench) -> np.ndarray:
        """
        Return the joint angles q (6, 3) [rad] (q1, q2, q3 per rod) that hold the platform.

        The platform is at pose [x, y, z, roll, pitch, yaw] under wrench [F, M] (world). Raises
        StaticsError if root does not converge. (Forward solves are checked against this: the
        motor angles it returns must bring the fast forward solver back to the pose.)
        """
        pose = np.asarray(pose, dtype=float)
        wrench = np.asarray(wrench, dtype=float)
        q = rigid_inverse(self.robot, pose[:3], pose[3:])
        n0 = wrench[:3] / 6.0 + self.f * self.L
        x0 = np.zeros(42)
        for i in range(6):
            _, R0 = self.base(i, *q[i])
            x0[7 * i:7 * i + 3] = R0.T @ n0 / self.force_scale
            x0[7 * i + 4:7 * i + 7] = q[i]
        sol = root(self.residual, x0, args=(pose, wrench), method='hybr',
                   options={'xtol': 1e-13})
        if np.max(np.abs(sol.fun)) > 1e-9:
            raise StaticsError(f'reference solve failed: {sol.message} '
                               f'(residual {np.max(np.abs(sol.fun)):.3g})')
        return sol.x.reshape(6, 7)[:, 4:7]
