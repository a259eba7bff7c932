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
Is a static equilibrium stable? The second variation of the total potential energy.

A shooting solve returns whatever equilibrium Newton's method converges to, also an unstable
one (a rod compressed beyond its buckling load kept straight). Where the loads are conservative
(constant tendon tensions, gravity, a dead tip force) the equilibrium is stable when the total
potential energy has a strict minimum there, i.e. when its Hessian over the variations that
keep the base clamped is positive definite (Lagrange-Dirichlet). This module discretises

    V = sum_e h_e [1/2 (v - e3)^T Kse (v - e3) + 1/2 u^T Kbt u]        (elastic, linear law)
        + sum_i T_i l_i                                   (tendons, tension inputs T_i)
        - sum_j m_j g . p_j - F . p(L)                                 (gravity, tip force)

on the solver's grid, coarsened to elements of L / 50 at least (vertebrae and tendon ends stay
nodes): a position p_j and rotation R_j per node (node 0 clamped), per element
the curvature u = log(R_a^T R_b) / h and strain v = R_m^T (p_b - p_a) / h in the mid frame
R_m; a tendon's length l_i is the polyline through its holes p + R r_i(s), at every node up to
its anchor for the continuous models and at the base and the vertebrae for ``discrete``
(its tendon is straight between discs). Masses are lumped at the nodes. The rotations vary as
R_j exp(theta_j^) (body frame).

Why the energy Hessian and not the conjugate-point (Jacobi) test: the tendon loads of the three
models enter the Jacobi equations differently (distributed for the continuous models, at the
discs for ``discrete``), while their potential is one formula, T times the tendon's length, and
a determinant shot along the rod misses the double zero of a symmetric rod buckling in two
planes at once; counting negative eigenvalues does not.

The loads enter the Hessian through the prestress, so it must be taken at an equilibrium of
this discrete energy, not of the solver's ODE (a strain error of 1e-4 of a rod with
E A = 1600 N is 0.16 N of axial force; the inextensible ``kirchhoff`` shape has none): Newton
steps on V move the solver's shape to its discrete twin (they converge to saddles too, so an
unstable shape stays unstable); the default robot's moved by up to 0.1 % of its length
(``cosserat``), 0.5 % (``kirchhoff``) and 1.2 % (``discrete`` at 5 N and 3 N, its
``pyelastica`` law). Hessians of the two-node terms are central differences, all stencils in
one vectorised call, assembled into a dense matrix; its eigenvalues decide.

Displacement inputs hold each tendon at its motor: taut, one of compliance C is a spring, its
potential (l + d - lam)^2 / (2 C lam) = C lam tau^2 / 2 (solver.py's law l + d = lam (1 + C tau),
lam = l* + d - q), whose Hessian is that of T l at its tension plus k g g^T (g: the gradient of
l, k = 1 / (C lam)); a stiff one (C = 0) keeps its length, a constraint whose multiplier is the
tension: the Hessian of tension inputs on the constraints' tangent space. The Newton steps
hold the tensions (the discrete twin holds them at displacements a little off q). Slack, or
taut at zero tension (the edge: exact for one such tendon, on the safe side for several), a
tendon adds nothing. Not for non-conservative loads: a tip moment
(a dead moment does no path-independent work in 3-D), friction, obstacles: those get
``stable = None`` and the reason. The ``pyelastica`` law has no stored energy; the check
uses the linear law there (they differ by ~3 x axial strain in bending stiffness), and for the
inextensible ``kirchhoff`` model the rod's finite Kse (a critical load lower by P / (E A)).
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.description import POSITION_TOLERANCE
from tendon_robot_sim.models.rod.statics.result import Stability, StaticsResult

#: Newton steps on the discrete energy at most, and their goal (scaled gradient, max norm)
RELAX_STEPS = 20
RELAX_TOLERANCE = 1e-6
# eigenvalues within this of zero [E I / L] are neutral, not negative: the difference noise
# is ~1e-5 (a buckled isotropic rod turned about its load's line: -6e-6 with 100 nodes)
NEUTRAL = 1e-4
# fewest elements of the check's grid (coarser than the solver's where that has more)
ELEMENTS = 50
# central-difference steps: positions relative to the element length, rotations [rad]
STEP = 1e-4
# displacement inputs: a tendon below this tension [E I / L^2] is slack (ten times the solver's
# tolerance on its scaled tensions; the unloaded robot's tendons at q = 0 hold 3e-14 N)
EDGE = 1e-6
# constraints of stiff tendons whose gradients' singular value is below this fraction of the
# largest are one constraint twice (four taut tendons of a straight rod hold three)
RANK = 1e-9


def not_checked(reason: str) -> Stability:
    """Return the Stability of an equilibrium the check does not apply to."""
    return Stability(stable=None, reason=reason)


def _exp(w: np.ndarray) -> np.ndarray:
    """Rotation matrices exp(w^) (..., 3, 3) of rotation vectors w (..., 3) [rad]."""
    a2 = np.sum(w * w, axis=-1)
    small = a2 < 1e-8
    a = np.sqrt(np.where(small, 1.0, a2))
    c1 = np.where(small, 1.0 - a2 / 6.0, np.sin(a) / a)
    c2 = np.where(small, 0.5 - a2 / 24.0, (1.0 - np.cos(a)) / (a * a))
    # exp = I + c1 w^ + c2 w^ w^, with w^ w^ = w w^T - |w|^2 I
    R = c2[..., None, None] * w[..., :, None] * w[..., None, :]
    R[..., [0, 1, 2], [0, 1, 2]] += (1.0 - c2 * a2)[..., None]
    cw = c1[..., None] * w
    for i, j, k in ((2, 1, 0), (0, 2, 1), (1, 0, 2)):
        R[..., i, j] += cw[..., k]
        R[..., j, i] -= cw[..., k]
    return R


def _log(Q: np.ndarray) -> np.ndarray:
    """Rotation vectors (..., 3) of rotation matrices Q (..., 3, 3), angles below pi."""
    w = 0.5 * np.stack((Q[..., 2, 1] - Q[..., 1, 2], Q[..., 0, 2] - Q[..., 2, 0],
                        Q[..., 1, 0] - Q[..., 0, 1]), -1)
    s = np.linalg.norm(w, axis=-1)
    c = 0.5 * (Q[..., 0, 0] + Q[..., 1, 1] + Q[..., 2, 2] - 1.0)
    small = s < 1e-6
    return w * np.where(small, 1.0 + s * s / 6.0,
                        np.arctan2(s, c) / np.where(small, 1.0, s))[..., None]


class _Terms:
    """
    The energy's two-node terms of one robot on nodes at arc lengths s [m] (SI, world frame).

    One term per pair of nodes (``pairs`` (m, 2)): an element (its length ``h`` [m], 0 for a
    tendon chord between non-adjacent nodes) and every tendon's chord between the two nodes
    (body-frame holes ``ra``, ``rb`` (m, n, 3) [m] and ``tension`` (m, n) [N], 0 for none) of
    the n tendons that pull.
    """

    def __init__(self, solver, s: np.ndarray, tensions: np.ndarray):
        robot = solver.robot
        h = np.diff(s)
        index = {(i, i + 1): i for i in range(s.size - 1)}
        pulled = [t for t in range(len(robot.tendons)) if tensions[t] != 0.0]
        self.pulled = pulled
        chords = []     # (term, tendon of the pulled, hole a, hole b, tension)
        for column, t in enumerate(pulled):
            tendon = robot.tendons[t]
            if solver.model == 'discrete':     # straight between the base and the discs
                stations = np.concatenate(([0.0], robot.vertebra_positions[
                    robot.vertebra_positions <= tendon.end + POSITION_TOLERANCE]))
            else:
                stations = s[s <= tendon.end + POSITION_TOLERANCE]
            nodes = np.searchsorted(s, stations - POSITION_TOLERANCE)
            holes = solver.hole_functions[t](np.minimum(s[nodes], tendon.end))[0].T
            for k in range(nodes.size - 1):
                term = index.setdefault((nodes[k], nodes[k + 1]), len(index))
                chords.append((term, column, holes[k], holes[k + 1], tensions[t]))
        m = len(index)
        self.pairs = np.array(list(index), dtype=np.int64).reshape(m, 2)
        self.h = np.concatenate((h, np.zeros(m - h.size)))
        self.elastic = self.h > 0.0
        self.ra, self.rb = np.zeros((m, len(pulled), 3)), np.zeros((m, len(pulled), 3))
        self.tension = np.zeros((m, len(pulled)))
        for term, t, ra, rb, T in chords:
            self.ra[term, t], self.rb[term, t], self.tension[term, t] = ra, rb, T
        self.Kse, self.Kbt = solver.Kse, solver.Kbt
        # lumped weights [N] of the nodes (rod: half of each adjacent element)
        mass = 0.5 * robot.rod.linear_density * (np.concatenate((h, [0.0]))
                                                 + np.concatenate(([0.0], h)))
        for sv in robot.vertebra_positions:
            mass[int(np.argmin(np.abs(s - sv)))] += robot.vertebra_mass
        self.weights = mass[:, None] * robot.gravity[None, :]

    def chords(self, pa, Ra, pb, Rb) -> np.ndarray:
        """Return p_b + R_b r_b - p_a - R_a r_a (..., m, n, 3) [m] of every tendon's chord."""
        # R r as the columns of R times r
        return (pb - pa)[..., None, :] + sum(Rb[..., None, :, j] * self.rb[..., j:j + 1]
                                             - Ra[..., None, :, j] * self.ra[..., j:j + 1]
                                             for j in range(3))

    def energy(self, pa, Ra, pb, Rb) -> np.ndarray:
        """Return each term's energy [J] (..., m) at node poses (..., m, 3), (..., m, 3, 3)."""
        el = self.elastic
        h = self.h[el]
        phi = _log(np.swapaxes(Ra[..., el, :, :], -1, -2) @ Rb[..., el, :, :])
        Rm = Ra[..., el, :, :] @ _exp(0.5 * phi)
        v = np.sum(Rm * (pb[..., el, :] - pa[..., el, :])[..., :, None], axis=-2) / h[:, None]
        v[..., 2] -= 1.0
        u = phi / h[:, None]
        chord = self.chords(pa, Ra, pb, Rb)
        out = np.sum(self.tension * np.linalg.norm(chord, axis=-1), axis=-1)
        out[..., el] += 0.5 * h * (np.sum(self.Kse * v * v, axis=-1)
                                   + np.sum(self.Kbt * u * u, axis=-1))
        return out

    def length_gradients(self, p, R) -> np.ndarray:
        """
        Gradients (n, 6 (N - 1)) of the n pulled tendons' lengths [m] over the free nodes.

        At node poses ``p`` (N, 3), ``R`` (N, 3, 3); coordinates as :func:`_assemble`'s
        (positions [m], rotations R exp(theta^) [rad]), exact (a chord's length is smooth).
        """
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        c = self.chords(p[a], R[a], p[b], R[b])
        length = np.linalg.norm(c, axis=-1)
        # unit chords, zero where a term holds no chord of the tendon
        e = np.where((self.tension != 0.0)[..., None],
                     c / np.where(length > 0.0, length, 1.0)[..., None], 0.0)
        # d|c| = e . (dp_b + R_b (dtheta_b x r_b) - dp_a - R_a (dtheta_a x r_a)), and
        # e . R (dtheta x r) = dtheta . (r x R^T e)
        ea, eb = (np.einsum('mji,mnj->mni', Q, e) for Q in (R[a], R[b]))
        d = np.concatenate((-e, -np.cross(self.ra, ea), e, np.cross(self.rb, eb)), axis=-1)
        index = _coordinates(self.pairs)
        keep = index >= 0
        g = np.zeros((len(self.pulled), 6 * (len(p) - 1)))
        for column in range(len(self.pulled)):
            np.add.at(g[column], index[keep], d[:, column][keep])
        return g


# central-difference stencils in 12 coordinates: the centre, +-e_i, then +-e_i +-e_j (i > j)
_PAIRS = [(i, j) for i in range(12) for j in range(i)]
_STENCILS = np.concatenate((
    np.zeros((1, 12)), np.eye(12), -np.eye(12),
    *[np.array([np.eye(12)[i] * si + np.eye(12)[j] * sj for i, j in _PAIRS])
      for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1))]))


def _derivatives(terms: _Terms, p, R, dx, hessian: bool) -> tuple:
    """
    Gradient and Hessian of the two-node terms in each term's 12 coordinates, by differences.

    Coordinates (p_a, theta_a, p_b, theta_b), the rotations as R exp(theta^): steps ``dx``
    (m, 12) [m] for the positions, STEP [rad] for the rotations; returns (m, 12), (m, 12, 12)
    per unit step (undivided; the Hessian None without ``hessian``). All stencils are
    evaluated in one vectorised call.
    """
    a, b = terms.pairs[:, 0], terms.pairs[:, 1]
    D = _STENCILS if hessian else _STENCILS[:25]
    turn_a, turn_b = _exp(STEP * D[:, 3:6]), _exp(STEP * D[:, 9:12])
    F = terms.energy(p[a] + D[:, None, 0:3] * dx[None, :, 0:3], R[a] @ turn_a[:, None],
                     p[b] + D[:, None, 6:9] * dx[None, :, 6:9], R[b] @ turn_b[:, None])
    F = F - F[0]
    plus, minus = F[1:13].T, F[13:25].T
    grad = 0.5 * (plus - minus)
    if not hessian:
        return grad, None
    hess = np.empty((len(a), 12, 12))
    k = np.arange(12)
    hess[:, k, k] = plus + minus
    n = len(_PAIRS)
    pp, pm, mp, mm = (F[25 + q * n:25 + (q + 1) * n] for q in range(4))
    mixed = (0.25 * (pp - pm - mp + mm)).T
    i, j = np.array(_PAIRS).T
    hess[:, i, j] = mixed
    hess[:, j, i] = mixed
    return grad, hess


def _coordinates(pairs: np.ndarray) -> np.ndarray:
    """Rows (m, 12) of the 12 coordinates of the terms on ``pairs`` (m, 2) among the free."""
    a, b = pairs[:, 0], pairs[:, 1]
    return np.concatenate((6 * a[:, None] + np.arange(6), 6 * b[:, None] + np.arange(6)),
                          axis=1) - 6      # node 0 clamped: index < 0


def _assemble(terms: _Terms, p, R, tip_force, steps, hessian: bool = True) -> tuple:
    """
    Gradient (6 (n-1),) and Hessian of V over the free nodes 1..n-1, per unit coordinate.

    The Hessian None without ``hessian``.
    """
    n = len(p)
    a, b = terms.pairs[:, 0], terms.pairs[:, 1]
    dx = np.concatenate((steps[a], steps[b]), axis=1)
    grad_t, hess_t = _derivatives(terms, p, R, dx, hessian)
    grad_t /= dx
    index = _coordinates(terms.pairs)
    G = np.zeros(6 * (n - 1))
    keep = index >= 0
    np.add.at(G, index[keep], grad_t[keep])
    loads = -terms.weights.copy()
    loads[-1] -= tip_force
    G.reshape(n - 1, 6)[:, 0:3] += loads[1:]
    if not hessian:
        return G, None
    hess_t /= dx[:, :, None] * dx[:, None, :]
    H = np.zeros((6 * (n - 1), 6 * (n - 1)))
    both = keep[:, :, None] & keep[:, None, :]
    rows = np.broadcast_to(index[:, :, None], both.shape)[both]
    cols = np.broadcast_to(index[:, None, :], both.shape)[both]
    np.add.at(H, (rows, cols), hess_t[both])
    return G, H


def _nodes(solver, s: np.ndarray) -> np.ndarray:
    """
    Return the rows of the grid s [m] the check keeps: elements of L / ELEMENTS at least.

    Every vertebra and tendon end stays a node (the discrete model's 101 nodes cost twice the
    time of 51 for an eigenvalue within the discretisation error of either).
    """
    robot = solver.robot
    needed = np.concatenate((robot.vertebra_positions, [t.end for t in robot.tendons]))
    rows, last = [0], 0.0
    for i in range(1, s.size):
        if (i == s.size - 1 or s[i] - last >= robot.rod.length / ELEMENTS - POSITION_TOLERANCE
                or np.any(np.abs(needed - s[i]) <= POSITION_TOLERANCE)):
            rows.append(i)
            last = s[i]
    return np.array(rows)


def _held(solver, result: StaticsResult, terms: _Terms, p, R, D, Hs) -> np.ndarray:
    """
    Return the scaled Hessian ``Hs`` of tension inputs with the taut tendons held by motors.

    A taut tendon of compliance C adds its spring, k g g^T with g the gradient of its length
    l and k = d tau / d l = 1 / (C lam), lam = l* + d - q its unstretched length from the
    motor (solver.py: l + d = lam (1 + C tau)); a stiff one (C = 0) keeps its length:
    ``Hs`` on the tangent space g^T dx = 0 (the Hessian of the Lagrangian, the tension the
    multiplier, is that of tension inputs). ``D`` (6 (N - 1),) scales coordinates as ``Hs``'s.
    """
    robot = solver.robot
    EI, L = robot.rod.bending_stiffness, robot.rod.length
    pulled = np.array(terms.pulled, dtype=np.int64)
    # the edge (taut at zero tension) counts as slack: a direction dx of negative curvature
    # or -dx slackens one such tendon, so this is exact for one; opposite ones may each block
    # the other's slack direction (then a shape called unstable can be held: stable is sure)
    taut = result.tensions[pulled] > EDGE * EI / L ** 2
    if not np.any(taut):
        return Hs
    g = terms.length_gradients(p, R)[taut] * D
    t = pulled[taut]
    C = np.array([robot.tendons[i].compliance for i in t])
    lam = (solver.rest_lengths[t] + np.array([robot.tendons[i].motor_distance for i in t])
           - result.tendon_displacements[t])
    spring = C > 0.0
    k = 1.0 / (C[spring] * lam[spring]) / (EI / L)
    Hs = Hs + (g[spring].T * k) @ g[spring]
    if np.all(spring):
        return Hs
    U, sv, _ = np.linalg.svd(g[~spring].T)
    Z = U[:, int(np.sum(sv > RANK * sv[0])):]     # orthonormal basis of the tangent space
    return Z.T @ Hs @ Z


def check_stability(solver, result: StaticsResult, tip_force=None, tip_moment=None,
                    displacements: bool = False) -> Stability:
    """
    Return the stability of ``result``, an equilibrium solved by ``solver``.

    ``tip_force`` [N] and ``tip_moment`` [N m] (world frame) are the tip load it was solved
    with, None: ``robot.tip_load``. ``displacements``: it was solved for displacement inputs
    (the motors hold the tendons: a taut one is a spring of its compliance, a stiff one keeps
    its length; a slack one adds nothing), else for tensions. Not checked (``stable`` None
    with the reason): a tip moment, obstacles, a discrete energy without an equilibrium near
    ``result``.
    """
    robot = solver.robot
    force = robot.tip_load.force if tip_force is None else np.asarray(tip_force, float)
    moment = robot.tip_load.moment if tip_moment is None else np.asarray(tip_moment, float)
    if solver.world is not None:
        return not_checked('obstacles: the contact loads are not part of the check')
    if np.any(moment != 0.0):
        return not_checked('a tip moment: a dead moment is not a conservative load in 3-D')
    rows = _nodes(solver, result.arc_lengths)
    p, R = result.centerline.T[rows], result.rotations[rows]   # world frame
    terms = _Terms(solver, result.arc_lengths[rows], result.tensions)
    L, EI = robot.rod.length, robot.rod.bending_stiffness
    h = np.diff(result.arc_lengths[rows])
    near = np.minimum(np.concatenate((h, [h[-1]])), np.concatenate(([h[0]], h)))
    steps = np.repeat(np.column_stack((near, np.ones_like(near))), 3, axis=1) * STEP
    # scaled coordinates: p / L and theta; energy / (E I / L); metric: the nodes' lengths / L
    scale = np.tile(np.array([L] * 3 + [1.0] * 3), len(p) - 1)
    metric = np.repeat(0.5 * (np.concatenate((h, [0.0])) + np.concatenate(([0.0], h)))[1:], 6) / L
    D = scale / np.sqrt(metric)
    G, H = _assemble(terms, p, R, force, steps)
    # the inverse, not scipy's LU: statics must not load scipy.linalg (0.2 s, issue 42)
    H_inv, fresh, last = np.linalg.inv(H), True, np.inf
    for k in range(RELAX_STEPS + 1):
        g = np.max(np.abs(G * D / (EI / L)))
        if g < RELAX_TOLERANCE:
            break
        if k == RELAX_STEPS:
            return not_checked(f'the discrete energy has no equilibrium near the solved shape '
                               f'(scaled gradient {g:.2g} after {k} Newton steps)')
        if g > 0.25 * last and not fresh:
            # slow with the old Hessian: a new one (Newton's method proper)
            H = _assemble(terms, p, R, force, steps)[1]
            H_inv, fresh = np.linalg.inv(H), True
        # else the last Hessian: gradients only, as the shape moves little
        dq = (H_inv @ -G).reshape(-1, 6)
        p[1:] += dq[:, 0:3]
        R[1:] = R[1:] @ _exp(dq[:, 3:6])
        G, fresh, last = _assemble(terms, p, R, force, steps, hessian=False)[0], False, g
    if not fresh:
        H = _assemble(terms, p, R, force, steps)[1]
    Hs = H * np.outer(D, D) / (EI / L)
    if displacements:
        Hs = _held(solver, result, terms, p, R, D, Hs)
    eigenvalues = np.linalg.eigvalsh(0.5 * (Hs + Hs.T))
    negative = int(np.sum(eigenvalues < -NEUTRAL))
    return Stability(stable=negative == 0, min_eigenvalue=float(eigenvalues[0]),
                     negative_modes=negative,
                     neutral_modes=int(np.sum(np.abs(eigenvalues) <= NEUTRAL)))
