"""Plain numpy/scipy reference of the parallel robot's kinetostatics, for tests of the
fast solver (:mod:`tendon_robot_sim.core.pcr`).

The paper's own numerical method, written independently of the numba kernels:

* each rod integrated by ``scipy.integrate.solve_ivp`` (DOP853, tight tolerances) on
  Eqs. (1)-(2) with hat matrices, instead of fixed-step RK4;
* rotations from ``scipy.spatial.transform.Rotation`` (R0 = R_M * intrinsic XYX (q1, q2,
  q3), R_e = intrinsic ZYX (yaw, pitch, roll));
* base forces as unknowns in the rod's base frame (the kernels: world frame), and the
  spherical-joint condition as R_e^T m_i(L) = 0 as the paper writes Eq. (5);
* ``scipy.optimize.root`` (MINPACK hybrd) on the full 42 x 42 system instead of the
  structured Newton iteration, started from the rigid-link solution.

Seconds per solve: tests and spot checks only.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import root
from scipy.spatial.transform import Rotation

from tendon_robot_sim.core.pcr import crank_tips, rigid_forward, rigid_inverse
from tendon_robot_sim.core.pcr_robot import PcrRobot
from tendon_robot_sim.core.statics import StaticsError
from tendon_robot_sim.core.statics_reference import hat

E3 = np.array([0.0, 0.0, 1.0])


class PcrReference:
    """The paper's shooting problem for one robot, solved with scipy."""

    def __init__(self, robot: PcrRobot, rtol: float = 1e-11):
        self.robot = robot
        self.rtol = rtol
        self.Kse, self.Kbt = robot.rods.stiffness
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

    def residual(self, x, inverse, target, wrench):
        """E of the paper (Eqs. 3-5), scaled."""
        k = 7 if inverse else 6
        if inverse:
            pe, rpy = target[:3], target[3:]
        else:
            pe, rpy = x[36:39] * self.L, x[39:42]
        Re = Rotation.from_euler('ZYX', rpy[::-1]).as_matrix()
        E = np.zeros(42)
        force, moment = -wrench[:3].copy(), -wrench[3:].copy()
        if self.paper:
            moment -= np.cross(pe, wrench[:3])
        for i in range(6):
            b = x[k * i:k * i + k]
            q = b[4:7] if inverse else (target[i], b[4], b[5])
            y = self.rod(i, q, b[0:3] * self.force_scale, b[3] * self.moment_scale)[:, -1]
            p, n, m = y[0:3], y[12:15], y[15:18]
            E[6 * i:6 * i + 3] = (pe + Re @ self.robot.joint_positions[i] - p) / self.L
            E[6 * i + 3:6 * i + 6] = Re.T @ m / self.moment_scale
            force += n
            moment += np.cross(p, n) + m
        E[36:39] = force / self.force_scale
        E[39:42] = moment / self.moment_scale
        return E

    def solve(self, inverse: bool, target, wrench):
        """Unknowns of the inverse (target: pose (6,)) or forward (target: q1 (6,))
        problem; returns (q (6, 3) rad, pose (6,)). Raises StaticsError if root fails."""
        robot = self.robot
        target = np.asarray(target, dtype=float)
        wrench = np.asarray(wrench, dtype=float)
        pose = target if inverse else rigid_forward(robot, target)
        q = rigid_inverse(robot, pose[:3], pose[3:])
        n0 = wrench[:3] / 6.0 + self.f * self.L
        k = 7 if inverse else 6
        x0 = np.zeros(42)
        for i in range(6):
            p0, R0 = self.base(i, *q[i])
            x0[k * i:k * i + 3] = R0.T @ n0 / self.force_scale
            x0[k * i + 4:k * i + k] = q[i] if inverse else q[i, 1:]
        if not inverse:
            x0[36:39] = pose[:3] / self.L
            x0[39:42] = pose[3:]
        sol = root(self.residual, x0, args=(inverse, target, wrench), method='hybr',
                   options={'xtol': 1e-13})
        if np.max(np.abs(sol.fun)) > 1e-9:
            raise StaticsError(f'reference solve failed: {sol.message} '
                               f'(residual {np.max(np.abs(sol.fun)):.3g})')
        x = sol.x
        blocks = x[:6 * k].reshape(6, k)
        if inverse:
            return blocks[:, 4:7], target.copy()
        q = np.column_stack((target, blocks[:, 4:6]))
        return q, np.concatenate((x[36:39] * self.L, x[39:42]))
