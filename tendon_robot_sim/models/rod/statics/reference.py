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
Plain numpy/scipy reference of the statics models, for tests of the fast solver.

Same physics as :mod:`tendon_robot_sim.models.rod.statics.solver`, written independently of its
numba kernels:

* matrix algebra with hat operators and ``numpy.linalg.solve`` (the kernels use scalar
  formulas and block elimination); the derivatives of the ``pyelastica`` constitutive law
  by complex-step differentiation (the kernels use closed forms);
* adaptive integration (``scipy.integrate.solve_ivp``, DOP853, tight tolerances) instead of
  fixed-step RK4, and rest lengths by ``scipy.integrate.quad``;
* ``scipy.optimize.root`` instead of the kernels' Newton/Broyden iteration;
* the discrete model as one system in the base wrench and every vertebra pose (multiple
  shooting) instead of a nested Newton iteration per bay;
* tension/slack complementarity in displacement mode through the Fischer-Burmeister
  function phi(T, slack) = T + slack - sqrt(T^2 + slack^2) = 0 instead of one signed
  unknown.

It takes seconds per solve: use it for tests and spot checks only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import quad, solve_ivp
from scipy.optimize import root
from scipy.spatial.transform import Rotation

from tendon_robot_sim.models.cosserat import (PYELASTICA_SHEAR_COEFFICIENT, StaticsError,
                                              stiffness_matrices)
from tendon_robot_sim.models.description import POSITION_TOLERANCE
from tendon_robot_sim.models.geometry import hat
from tendon_robot_sim.models.rod.tendons.routing import routing_functions
from tendon_robot_sim.models.tendon_robot import Robot, tendon_displacements

E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class ReferenceResult:
    """Reference equilibrium; frames and units as in :class:`~.statics.StaticsResult`."""

    tip_position: np.ndarray     # (3,) m
    tip_rotation: np.ndarray     # (3, 3)
    tensions: np.ndarray         # (n,) N
    tendon_lengths: np.ndarray   # (n,) m
    displacements: np.ndarray    # (n,) m
    rest_lengths: np.ndarray     # (n,) m
    base_force: np.ndarray       # (3,) N, world
    base_moment: np.ndarray      # (3,) N m, world


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return a x b = a^ b (numpy.cross is slow for single 3-vectors)."""
    return hat(a) @ b


def solve_reference(robot: Robot, model: str = 'cosserat', *, tensions=None,
                    displacements=None, tip_force=None, tip_moment=None,
                    constitutive: str | None = None,
                    shear_coefficient: float = PYELASTICA_SHEAR_COEFFICIENT,
                    routing=None, rtol: float = 1e-10) -> ReferenceResult:
    """
    Solve one equilibrium with scipy; give exactly one of tensions or displacements.

    Raises
    ------
    StaticsError
        If scipy's root finder does not converge.

    """
    if (tensions is None) == (displacements is None):
        raise ValueError('give exactly one of tensions and displacements')
    law = constitutive or ('pyelastica' if model == 'discrete' else 'linear')
    tip = np.concatenate((robot.tip_load.force if tip_force is None else tip_force,
                          robot.tip_load.moment if tip_moment is None else tip_moment))
    problem = (_Discrete if model == 'discrete' else _Continuous)(
        robot, model, law, shear_coefficient, routing_functions(robot, routing), tip, rtol)
    return problem.solve(tensions, displacements)


class _Rod:
    """What the continuous and discrete reference problems share."""

    def __init__(self, robot, model, law, shear_coefficient, holes, tip, rtol):
        self.robot, self.model, self.law, self.holes, self.tip = robot, model, law, holes, tip
        self.rtol = rtol
        self.Kse, self.Kbt = stiffness_matrices(robot.rod, shear_coefficient)
        self.R0 = robot.base.rotation
        self.p0 = robot.base.position
        self.rhoAg = robot.rod.linear_density * robot.gravity
        self.ends = np.array([t.end for t in robot.tendons])
        self.compliance = np.array([t.compliance for t in robot.tendons])
        self.motor = np.array([t.motor_distance for t in robot.tendons])
        EI, L = robot.rod.bending_stiffness, robot.rod.length
        self.force_scale, self.moment_scale = EI / L ** 2, EI / L

    def strain(self, nb: np.ndarray) -> np.ndarray:
        """Return v with nb = Kse (v - e3) [/ |v|] (pyelastica law by fixed-point iteration)."""
        w = nb / self.Kse
        if self.law == 'linear':
            return E3 + w
        e = 1.0
        for _ in range(100):
            e_new = np.linalg.norm(E3 + e * w)
            if abs(e_new - e) < 1e-15:
                break
            e = e_new
        return E3 + e * w

    def dilatation(self, v):
        return 1.0 if self.law == 'linear' else np.sqrt(v @ v)   # complex-step safe

    def force(self, v):
        return self.Kse * (v - E3) / self.dilatation(v)

    def moment(self, u, v):
        return self.Kbt * u / self.dilatation(v) ** 3

    def solve(self, tensions, displacements) -> ReferenceResult:
        nt = len(self.robot.tendons)
        self.rest = self.robot.reference_lengths(self.rest_lengths())
        mode_displacement = displacements is not None
        q = np.asarray(displacements if mode_displacement else np.zeros(nt), dtype=float)
        tau_given = None if mode_displacement else np.asarray(tensions, dtype=float)
        if mode_displacement:
            x0 = np.concatenate((self.initial_guess(np.zeros(nt)), np.zeros(nt)))
        else:
            x0 = self.initial_guess(tau_given)

        def residual(x):
            if mode_displacement:
                tau = x[-nt:] * self.force_scale
                F, lengths = self.residual(x[:-nt], tau)
                # the motor's unstretched tendon, stretched, spans the motor distance, the
                # path and the slack
                slack = ((self.rest + self.motor - q) * (1.0 + self.compliance * tau)
                         - lengths - self.motor)
                a, b = tau / self.force_scale, slack / self.robot.rod.length * 1e3
                return np.concatenate((F, a + b - np.sqrt(a * a + b * b)))
            return self.residual(x, tau_given)[0]

        sol = root(residual, x0, method='hybr', options={'xtol': 1e-13, 'maxfev': 20000})
        # the residual decides: hybr reports no progress where round-off stops it below its
        # xtol (an Intel machine's helical case: 5e-11, its equilibrium to 4e-11 m)
        if np.max(np.abs(sol.fun)) > 1e-8:
            raise StaticsError(f'reference {self.model} solve failed: {sol.message} '
                               f'(residual {np.max(np.abs(sol.fun)):.3g})')
        x = sol.x
        tau = x[-nt:] * self.force_scale if mode_displacement else tau_given
        _, lengths = self.residual(x[:-nt] if mode_displacement else x, tau)
        p, R = self.tip_pose
        nb0 = x[0:3] * self.force_scale
        mb0 = x[3:6] * self.moment_scale
        if not mode_displacement:
            q = tendon_displacements(self.rest, lengths, tau, self.compliance, self.motor)
        return ReferenceResult(tip_position=p, tip_rotation=R, tensions=tau,
                               tendon_lengths=lengths, displacements=q, rest_lengths=self.rest,
                               base_force=self.R0 @ nb0, base_moment=self.R0 @ mb0)

    def initial_guess(self, tau) -> np.ndarray:
        """Scaled base wrench of the straight robot under weight, tip load and tensions."""
        robot = self.robot
        d3, L = self.R0[:, 2], robot.rod.length
        weights = [(0.5 * L, self.rhoAg * L)] + [
            (s, robot.vertebra_mass * robot.gravity) for s in robot.vertebra_positions]
        force = self.tip[:3] + sum(w for _, w in weights)
        moment = self.tip[3:] + cross(L * d3, self.tip[:3]) + sum(
            cross(s * d3, w) for s, w in weights)
        nb = self.R0.T @ force - np.sum(tau) * E3
        mb = self.R0.T @ moment - sum(T * cross(f(np.array([0.0]))[0][:, 0], E3)
                                      for T, f in zip(tau, self.holes))
        return np.concatenate((nb / self.force_scale, mb / self.moment_scale))


def tendon_sums(holes, s: float, u: np.ndarray, v: np.ndarray, tau: np.ndarray, active):
    """
    Return the tendon terms of Rucker & Webster's Eq. (15) at arc length s.

    (A, G, H, a, b, |pb| per tendon) for the tendons ``active`` with tensions tau, their hole
    functions ``holes`` (s array -> r, r_s, r_ss, each (3, k), body frame): pb = u x r + r_s + v,
    A_i = -tau (pb^)^2 / |pb|^3, G_i = -A_i r^, H_i = r^ G_i, a_i = A_i (u x (pb + r_s) + r_ss),
    b_i = r x a_i, summed.
    """
    A = np.zeros((3, 3))
    G = np.zeros((3, 3))
    H = np.zeros((3, 3))
    a = np.zeros(3)
    b = np.zeros(3)
    lengths_s = np.zeros(len(tau))
    for i in np.flatnonzero(active):
        r, r_s, r_ss = (c[:, 0] for c in holes[i](np.array([s])))
        pb_si = cross(u, r) + r_s + v
        lengths_s[i] = np.linalg.norm(pb_si)
        A_i = -tau[i] * hat(pb_si) @ hat(pb_si) / lengths_s[i] ** 3
        G_i = -A_i @ hat(r)
        a_i = A_i @ (cross(u, pb_si + r_s) + r_ss)
        A += A_i
        G += G_i
        H += hat(r) @ G_i
        a += a_i
        b += cross(r, a_i)
    return A, G, H, a, b, lengths_s


class _Continuous(_Rod):
    """Cosserat or Kirchhoff rod with continuously routed tendons (R&W 2011)."""

    def rest_lengths(self) -> np.ndarray:
        return np.array([quad(lambda s, f=f: np.linalg.norm(f(np.array([s]))[1][:, 0] + E3),
                              0.0, end, epsabs=1e-13, epsrel=1e-13)[0]
                         for f, end in zip(self.holes, self.ends)])

    def rhs(self, s, y, tau, active):
        R = y[3:12].reshape(3, 3)
        u = y[15:18]
        kirchhoff = self.model == 'kirchhoff'
        if kirchhoff:
            v, nb = E3, y[12:15]
        else:
            v = y[12:15]
            nb = self.force(v)
        mb = self.moment(u, v)
        A, G, H, a, b, lengths_s = tendon_sums(self.holes, s, u, v, tau, active)
        d = -cross(u, nb) - R.T @ self.rhoAg - a
        c = -cross(u, mb) - cross(v, nb) - b
        if kirchhoff:
            u_s = np.linalg.solve(np.diag(self.Kbt) + H, c)
            x_s = d - G @ u_s                       # nb_s
        else:
            # constitutive derivatives by complex step: exact to round-off
            h = 1e-30
            Nv = np.column_stack([self.force(v + 1j * h * e).imag / h for e in np.eye(3)])
            Mv = np.column_stack([self.moment(u, v + 1j * h * e).imag / h for e in np.eye(3)])
            Mu = np.diag(self.Kbt) / self.dilatation(v) ** 3
            K = np.block([[Nv + A, G], [Mv + G.T, Mu + H]])
            x_s = np.linalg.solve(K, np.concatenate((d, c)))
            u_s = x_s[3:]
            x_s = x_s[:3]                           # v_s
        return np.concatenate((R @ v, (R @ hat(u)).ravel(), x_s, u_s, lengths_s))

    def residual(self, x, tau):
        """Tip force and moment error (scaled, tip body frame) and tendon lengths."""
        robot = self.robot
        nb = x[0:3] * self.force_scale
        mb = x[3:6] * self.moment_scale
        breaks = sorted(set(np.round(np.concatenate((
            robot.vertebra_positions if robot.vertebra_mass > 0.0 else [],
            self.ends, [robot.rod.length])), 12)))
        p, R = self.p0.copy(), self.R0.copy()
        lengths = np.zeros(len(tau))
        start = 0.0
        for end in breaks:
            v = E3 if self.model == 'kirchhoff' else self.strain(nb)
            u = self.Kbt ** -1 * mb * self.dilatation(v) ** 3
            y0 = np.concatenate((p, R.ravel(), nb if self.model == 'kirchhoff' else v, u,
                                 lengths))
            active = self.ends >= end - POSITION_TOLERANCE
            sol = solve_ivp(self.rhs, (start, end), y0, method='DOP853', rtol=self.rtol,
                            atol=self.rtol * 1e-3, args=(tau, active))
            y = sol.y[:, -1]
            p, R, u = y[0:3], y[3:12].reshape(3, 3), y[15:18]
            v = E3 if self.model == 'kirchhoff' else y[12:15]
            nb = y[12:15] if self.model == 'kirchhoff' else self.force(v)
            mb = self.moment(u, v)
            moment = mb.copy()
            lengths = y[18:]
            # point loads: vertebra weight, tendon terminations (R&W Eqs. 18-20)
            if np.min(np.abs(robot.vertebra_positions - end), initial=1.0) < 1e-9:
                nb = nb - R.T @ (robot.vertebra_mass * robot.gravity)
            for i in np.flatnonzero(np.abs(self.ends - end) < 1e-9):
                r, r_s, _ = (c[:, 0] for c in self.holes[i](np.array([end])))
                pb_si = cross(u, r) + r_s + v
                F_i = -tau[i] * pb_si / np.linalg.norm(pb_si)
                nb = nb - F_i
                mb = mb - cross(r, F_i)
            # a termination makes u jump (a disc's weight only v: that corner is left out)
            if end < robot.rod.length and np.any(mb != moment):
                nb, mb = self.kinked(end, tau, u, v, nb, mb)
            start = end
        self.tip_pose = (p, R)
        F = np.concatenate(((nb - R.T @ self.tip[:3]) / self.force_scale,
                            (mb - R.T @ self.tip[3:]) / self.moment_scale))
        return F, lengths

    def kinked(self, s, tau, u, v, nb, mb):
        """
        Return nb, mb after the loads of the tendons that run on through a termination at s.

        The termination makes u (and v) jump, so the tangent of each tendon that runs on turns
        there and it pushes the rod with tau (t+ - t-) at its hole; t+ depends on the wrench
        after it: ``scipy.optimize.root`` on that wrench (the kernels: Newton's method with a
        finite-difference Jacobian). NaN if it does not converge, so the solve fails.
        """
        running = np.flatnonzero((self.ends > s + POSITION_TOLERANCE) & (tau != 0.0))
        holes = [tuple(c[:, 0] for c in self.holes[i](np.array([s])))[:2] for i in running]
        scale = np.repeat((self.force_scale, self.moment_scale), 3)

        def tangents(u, v):
            pb = np.array([cross(u, r) + r_s + v for r, r_s in holes]).reshape(-1, 3)
            return pb / np.linalg.norm(pb, axis=1)[:, None]

        before = tangents(u, v)

        def after_corner(x):
            kinked_nb, kinked_mb = x[:3] * scale[:3], x[3:] * scale[3:]
            v_after = E3 if self.model == 'kirchhoff' else self.strain(kinked_nb)
            u_after = kinked_mb / self.Kbt * self.dilatation(v_after) ** 3
            loads = tau[running, None] * (tangents(u_after, v_after) - before)
            moment = sum((cross(r, f) for (r, _), f in zip(holes, loads)), np.zeros(3))
            return np.concatenate((nb - loads.sum(axis=0), mb - moment)) / scale

        sol = root(lambda x: after_corner(x) - x, np.concatenate((nb, mb)) / scale,
                   method='hybr', options={'xtol': 1e-14})
        if not sol.success:
            return np.full(3, np.nan), mb
        kinked = after_corner(sol.x) * scale
        return kinked[:3], kinked[3:]


class _Discrete(_Rod):
    """Vertebra model; unknowns: base wrench and the pose of every vertebra."""

    def __init__(self, *args):
        super().__init__(*args)
        robot = self.robot
        self.s = np.concatenate(([0.0], robot.vertebra_positions))
        self.anchor = np.array([int(np.argmin(np.abs(self.s - e))) for e in self.ends])
        self.hole_body = np.array([[f(np.array([min(s, e)]))[0][:, 0] for s in self.s]
                                   for f, e in zip(self.holes, self.ends)])   # (nt, k + 1, 3)
        self.length_scale = robot.rod.length

    def rest_lengths(self) -> np.ndarray:
        straight = self.hole_body + self.s[None, :, None] * E3
        return np.array([np.sum(np.linalg.norm(np.diff(straight[t, :a + 1], axis=0), axis=1))
                         for t, a in enumerate(self.anchor)])

    def initial_guess(self, tau) -> np.ndarray:
        # vertebra j of the straight robot: at s_j d3, unrotated
        k = self.s.size - 1
        poses = np.zeros((k, 6))
        poses[:, 0:3] = (self.s[1:, None] * self.R0[:, 2]) / self.length_scale
        return np.concatenate((super().initial_guess(tau), poses.ravel()))

    def rhs(self, s, y):
        R = y[3:12].reshape(3, 3)
        nb, mb = R.T @ y[12:15], R.T @ y[15:18]
        v = self.strain(nb)
        u = mb / self.Kbt * self.dilatation(v) ** 3
        p_s = R @ v
        return np.concatenate((p_s, (R @ hat(u)).ravel(), -self.rhoAg, -cross(p_s, y[12:15])))

    def residual(self, x, tau):
        """Tip wrench error, then for each vertebra the integrated minus unknown pose."""
        robot = self.robot
        k = self.s.size - 1
        poses = x[6:].reshape(k, 6)
        guess_p = poses[:, 0:3] * self.length_scale
        guess_R = Rotation.from_rotvec(poses[:, 3:6]).as_matrix() @ self.R0
        n = self.R0 @ (x[0:3] * self.force_scale)
        m = self.R0 @ (x[3:6] * self.moment_scale)
        p, R = self.p0.copy(), self.R0.copy()
        prev = p[:, None] + R @ self.hole_body[:, 0].T    # (3, nt) previous holes
        lengths = np.zeros(len(tau))
        errors = []
        for j in range(1, k + 1):
            y0 = np.concatenate((p, R.ravel(), n, m))
            sol = solve_ivp(self.rhs, (self.s[j - 1], self.s[j]), y0, method='DOP853',
                            rtol=self.rtol, atol=self.rtol * 1e-3)
            y = sol.y[:, -1]
            p, R, n, m = y[0:3], y[3:12].reshape(3, 3), y[12:15], y[15:18]
            errors.append(np.concatenate(((p - guess_p[j - 1]) / self.length_scale,
                                          Rotation.from_matrix(guess_R[j - 1].T @ R).as_rotvec())))
            force = robot.vertebra_mass * robot.gravity
            moment = np.zeros(3)
            for t in np.flatnonzero(self.anchor >= j):
                arm = R @ self.hole_body[t, j]
                hole = p + arm
                lengths[t] += np.linalg.norm(hole - prev[:, t])
                f = -tau[t] * (hole - prev[:, t]) / np.linalg.norm(hole - prev[:, t])
                if self.anchor[t] > j:
                    # towards the hole of the next vertebra, at its unknown pose
                    nxt = guess_p[j] + guess_R[j] @ self.hole_body[t, j + 1]
                    f = f + tau[t] * (nxt - hole) / np.linalg.norm(nxt - hole)
                force = force + f
                moment = moment + cross(arm, f)
                prev[:, t] = hole
            n = n - force
            m = m - moment
        if self.s[-1] < robot.rod.length - 1e-12:
            sol = solve_ivp(self.rhs, (self.s[-1], robot.rod.length),
                            np.concatenate((p, R.ravel(), n, m)), method='DOP853',
                            rtol=self.rtol, atol=self.rtol * 1e-3)
            y = sol.y[:, -1]
            p, R, n, m = y[0:3], y[3:12].reshape(3, 3), y[12:15], y[15:18]
        self.tip_pose = (p, R)
        F = np.concatenate(((n - self.tip[:3]) / self.force_scale,
                            (m - self.tip[3:]) / self.moment_scale, np.concatenate(errors)))
        return F, lengths
