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
Plain numpy/scipy reference of the implicit dynamics, for tests of the fast solver.

The time steps of :mod:`tendon_robot_sim.models.rod.dynamics.implicit` for a rod with tendons
routed continuously along it (the ``cosserat`` model, linear constitutive law; discs, when the
robot has them, as point masses), written independently of the numba kernels:

* the BDF-alpha coefficients computed here (Till, Aloi & Rucker, "Real-time dynamics of soft
  and continuum robots based on Cosserat rod models", IJRR 2019);
* the rod equations of Till's tendon-robot dynamics example in matrix form (hat operators,
  ``numpy.linalg.solve`` of the 6x6 system, the tendon terms of the statics' reference),
  integrated by classical RK4 on a fine grid of its own (an adaptive integrator would make
  the shooting residual rough at its tolerance), with
  the history terms as cubic splines of arc length through that grid instead of values kept
  at every RK4 stage;
* single shooting solved by ``scipy.optimize.root`` instead of multiple shooting with the
  kernels' Newton/Broyden iteration, and tension/slack complementarity of displacement inputs
  through the Fischer-Burmeister function instead of one signed unknown.

A step takes seconds: use it for a few steps in tests only.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import quad
from scipy.interpolate import CubicSpline
from scipy.optimize import root

from tendon_robot_sim.models.cosserat import PYELASTICA_SHEAR_COEFFICIENT, stiffness_matrices
from tendon_robot_sim.models.geometry import hat
from tendon_robot_sim.models.modal import mass_proportional_damping
from tendon_robot_sim.models.rod.statics.reference import tendon_sums
from tendon_robot_sim.models.tendon_robot import Robot

E3 = np.array([0.0, 0.0, 1.0])
STEP = 0.01         # m, longest RK4 step (the kernels take 5 to 35 mm)


class ImplicitReference:
    """
    Implicit time steps of one continuously routed robot.

    ``inputs``: per tendon 'tension' or 'displacement'. Call :meth:`start` with the inputs at
    t = 0 (static equilibrium), then :meth:`step` with those at the end of each step; both
    return the tip position [m].
    """

    def __init__(self, robot: Robot, dt: float, alpha: float = 0.0, inputs=None):
        self.robot, self.dt = robot, dt
        rod = robot.rod
        self.L = rod.length
        Kse, Kbt = stiffness_matrices(rod, PYELASTICA_SHEAR_COEFFICIENT)
        self.Kse, self.Kbt = np.diag(Kse), np.diag(Kbt)
        damping = rod.damping
        self.Bse = np.diag(damping.shear_extension if damping.kelvin_voigt else np.zeros(3))
        self.Bbt = np.diag(damping.bending_torsion if damping.kelvin_voigt else np.zeros(3))
        self.C = np.diag(rod.drag)
        self.rate = mass_proportional_damping(robot)
        self.rhoA = rod.linear_density
        self.rhoJ = rod.density * np.diag([rod.second_moment, rod.second_moment,
                                           rod.polar_moment])
        self.g = robot.gravity
        self.R0 = robot.base.rotation
        self.p0 = robot.base.position
        self.disc_mass = robot.vertebra_mass
        diameter, axis = robot.disc_inertia
        self.disc_J = np.diag([diameter, diameter, axis])
        self.holes = [t.hole for t in robot.tendons]
        self.ends = np.array([t.end for t in robot.tendons])
        self.compliance = np.array([t.compliance for t in robot.tendons])
        self.motor = np.array([t.motor_distance for t in robot.tendons])
        self.modes = list(inputs or ['tension'] * len(robot.tendons))
        breaks = set(np.round(self.ends, 12)) | {round(self.L, 12)}
        if self.disc_mass > 0.0:
            breaks |= set(np.round(robot.vertebra_positions, 12))
        self.breaks = np.array(sorted(breaks))
        starts = np.concatenate(([0.0], self.breaks[:-1]))
        self.grids = [np.linspace(a, b, int(np.ceil((b - a) / STEP)) + 1)
                      for a, b in zip(starts, self.breaks)]
        self.rest = np.array([quad(lambda s, t=t: np.linalg.norm(t.hole(s)[1] + E3), 0.0, t.end,
                                   epsabs=1e-13, epsrel=1e-13)[0] for t in robot.tendons])
        c0 = (1.5 + alpha) / (dt * (1.0 + alpha))
        self.bdf = (c0, -2.0 / dt, (0.5 + alpha) / (dt * (1.0 + alpha)), alpha / (1.0 + alpha))
        self.c0 = 0.0

    # ------------------------------------------------------------------ the rod

    def _history(self, k: int, s: float) -> np.ndarray:
        """History terms (18,) of segment k at arc length s (zero in statics)."""
        if self.c0 == 0.0:
            return np.zeros(18)
        return self.splines[k](s)

    def _strains(self, nb, mb, zh):
        """v, u of nb = Kse (v - e3) + Bse (c0 v + v_h) and likewise mb."""
        v = np.linalg.solve(self.Kse + self.c0 * self.Bse,
                            nb + self.Kse @ E3 - self.Bse @ zh[0:3])
        u = np.linalg.solve(self.Kbt + self.c0 * self.Bbt, mb - self.Bbt @ zh[3:6])
        return v, u

    def _wrench(self, v, u, zh):
        """nb, mb of the strains (viscous parts included)."""
        return (self.Kse @ (v - E3) + self.Bse @ (self.c0 * v + zh[0:3]),
                self.Kbt @ u + self.Bbt @ (self.c0 * u + zh[3:6]))

    def _rhs(self, s, y, k, tau, active):
        """Return dy/ds, y = p, R, v, u, q, w, tendon lengths, and z = v, u, q, w, v_s, u_s."""
        R = y[3:12].reshape(3, 3)
        v, u, q, w = y[12:15], y[15:18], y[18:21], y[21:24]
        zh = self._history(k, s)
        c0 = self.c0
        v_t, u_t = c0 * v + zh[0:3], c0 * u + zh[3:6]
        q_t, w_t = c0 * q + zh[6:9], c0 * w + zh[9:12]
        nb, mb = self._wrench(v, u, zh)
        # the tendons' distributed load: as in the statics' reference (R&W Eq. 15)
        A, G, H, a, b, lengths_s = tendon_sums(self.holes, s, u, v, tau, active)
        force = (-hat(u) @ nb - R.T @ (self.rhoA * self.g) - a
                 + self.rhoA * (hat(w) @ q + q_t + self.rate * q) + self.C @ (q * np.abs(q))
                 - self.Bse @ zh[12:15])
        moment = (-hat(u) @ mb - hat(v) @ nb - b + self.rhoJ @ (w_t + self.rate * w)
                  + hat(w) @ self.rhoJ @ w - self.Bbt @ zh[15:18])
        K = np.block([[self.Kse + c0 * self.Bse + A, G],
                      [G.T, self.Kbt + c0 * self.Bbt + H]])
        vs_us = np.linalg.solve(K, np.concatenate((force, moment)))
        dy = np.concatenate((R @ v, (R @ hat(u)).ravel(), vs_us, v_t - hat(u) @ q + hat(w) @ v,
                             u_t - hat(u) @ w, lengths_s))
        return dy, np.concatenate((v, u, q, w, vs_us))

    def _shoot(self, x, inputs, keep=False):
        """Tip residual and tendon lengths of the unknowns x (base wrench, then tensions)."""
        nt = len(self.modes)
        tau = np.array(inputs, dtype=float)
        nd = 0
        for t, mode in enumerate(self.modes):
            if mode == 'displacement':
                tau[t] = x[6 + nd] * self.force_scale
                nd += 1
        scale = self.force_scale
        nb, mb = x[0:3] * scale, x[3:6] * scale * self.L
        p, R = self.p0.copy(), self.R0.copy()
        q, w = np.zeros(3), np.zeros(3)
        lengths = np.zeros(nt)
        start = 0.0
        zs = []
        for k, end in enumerate(self.breaks):
            v, u = self._strains(nb, mb, self._history(k, start))
            active = self.ends >= end - 1e-12
            y = np.concatenate((p, R.ravel(), v, u, q, w, lengths))
            grid = self.grids[k]
            z = []
            for s, h in zip(grid[:-1], np.diff(grid)):
                k1, z1 = self._rhs(s, y, k, tau, active)
                z.append(z1)
                k2 = self._rhs(s + h / 2, y + h / 2 * k1, k, tau, active)[0]
                k3 = self._rhs(s + h / 2, y + h / 2 * k2, k, tau, active)[0]
                k4 = self._rhs(s + h, y + h * k3, k, tau, active)[0]
                y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if keep:
                zs.append(np.array(z + [self._rhs(end, y, k, tau, active)[1]]))
            p, R = y[0:3], y[3:12].reshape(3, 3)
            v, u, q, w, lengths = y[12:15], y[15:18], y[18:21], y[21:24], y[24:]
            nb, mb = self._wrench(v, u, self._history(k, end))
            # point loads at the end: a disc, tendon terminations (R&W Eqs. 18-20)
            if self.disc_mass > 0.0 and np.min(np.abs(self.robot.vertebra_positions - end)) < 1e-9:
                zh = self._history(k, end)
                q_t, w_t = self.c0 * q + zh[6:9], self.c0 * w + zh[9:12]
                nb = nb - self.disc_mass * (R.T @ self.g - q_t - hat(w) @ q - self.rate * q)
                mb = mb + self.disc_J @ (w_t + self.rate * w) + hat(w) @ self.disc_J @ w
            for i in np.flatnonzero(np.abs(self.ends - end) < 1e-9):
                r, r_s, _ = self.robot.tendons[i].hole(end)
                F_i = -tau[i] * (hat(u) @ r + r_s + v) / np.linalg.norm(hat(u) @ r + r_s + v)
                nb, mb = nb - F_i, mb - hat(r) @ F_i
            start = end
        tip = self.robot.tip_load
        F = np.concatenate(((nb - R.T @ tip.force) / scale,
                            (mb - R.T @ tip.moment) / (scale * self.L)))
        if keep:
            self.z, self.tip = zs, p
        return F, tau, lengths

    def _residual(self, x, inputs):
        F, tau, lengths = self._shoot(x, inputs)
        extra = []
        for t, mode in enumerate(self.modes):
            if mode == 'displacement':
                stretched = ((self.rest[t] + self.motor[t] - inputs[t])
                             * (1 + self.compliance[t] * tau[t]))
                slack = stretched - lengths[t] - self.motor[t]
                a, b = tau[t] / self.force_scale, slack / self.L * 1e3
                extra.append(a + b - np.sqrt(a * a + b * b))
        return np.concatenate((F, extra))

    def _solve(self, inputs) -> np.ndarray:
        sol = root(self._residual, self.x, args=(inputs,), method='hybr',
                   options={'xtol': 1e-11, 'maxfev': 2000})
        if np.max(np.abs(sol.fun)) > 1e-8:      # hybr may stall at the round-off floor
            raise RuntimeError(f'reference step failed: {sol.message} '
                               f'(residual {np.max(np.abs(sol.fun)):.3g})')
        self.x = sol.x
        self._shoot(self.x, inputs, keep=True)
        return self.tip.copy()

    # ------------------------------------------------------------------ time

    def start(self, inputs) -> np.ndarray:
        """Solve the static equilibrium of ``inputs`` (one per tendon): a robot at rest."""
        rod = self.robot.rod
        self.force_scale = rod.bending_stiffness / rod.length ** 2
        nd = self.modes.count('displacement')
        tension = sum(v for v, m in zip(inputs, self.modes) if m == 'tension')
        self.x = np.concatenate(([0.0, 0.0, -tension / self.force_scale, 0.0, 0.0, 0.0],
                                 np.zeros(nd)))
        self.c0 = 0.0
        tip = self._solve(inputs)
        c0, c1, c2, d1 = self.bdf
        self.z_old = [z.copy() for z in self.z]
        self.zh = [(c1 + c2) * z for z in self.z]
        self.c0 = c0
        self._splines()
        return tip

    def step(self, inputs) -> np.ndarray:
        """One time step to the ``inputs`` at its end; the tip position [m]."""
        tip = self._solve(inputs)
        c0, c1, c2, d1 = self.bdf
        for k, z in enumerate(self.z):
            # x_h of the next step: c1 x + c2 x_old + d1 x_t, x_t = c0 x + x_h
            self.zh[k] = c1 * z + c2 * self.z_old[k] + d1 * (c0 * z + self.zh[k])
            self.z_old[k] = z.copy()
        self._splines()
        return tip

    def _splines(self):
        self.splines = [CubicSpline(grid, zh, axis=0) for grid, zh in zip(self.grids, self.zh)]
