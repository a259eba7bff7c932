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
Bending friction: the backbone keeps a bend that no tendon holds (``rod.bending_friction``).

A tendon robot's discs rub on the backbone and on each other, and its slack tendons lie in
their holes: friction that resists a change of the bend whatever the tendons' tensions. Each
bay of the rod (a segment of the statics grid: between discs and tendon ends) carries one
Jenkins element in parallel with the elastic rod (Iwan, "A distributed-element model for
hysteresis and its steady-state dynamic response", J. Appl. Mech. 1966): a spring of stiffness
k = ``stiffness_ratio`` E I in series with a slider that slips at the moment M_f =
``moment``. With kappa the bay's mean bending curvature (its turn over its length about the
body's d1 and d2, 2-vectors) the bay's bending moment is

    m = E I kappa + f,    f = k (kappa - kappa_p),    |f| <= M_f,

the slider's place kappa_p moving only while |f| = M_f (a circle in the plane of bending: an
isotropic slider, radial return). From one state of a quasi-static sequence to the next, with
f_0 and kappa_0 the last state's,

    f = P(f_0 + k (kappa - kappa_0)),    P(g) = g min(1, M_f / |g|).

In the rod this is a rest curvature u* = -f / (E I) of the bay (:func:`set_rest_curvature`:
m = E I (u - u*)), so the rod solvers are the frictionless ones; f and
the shape are solved together by the fixed point f <- P((k / (E I) f + g) / (1 + k / (E I))),
g = f_0 + k (kappa(f) - kappa_0) the element's moment for the shape solved with f: the radial
return of the elastic predictor, exact in one step for a bay whose moment does not depend on
f (tensions and loads given) and contracting by at most k / (E I + k) per step otherwise
(displacements given: the tendons' pull answers the bend).

What it gives: loaded from rest, the bay is stiffer by k until |f| reaches M_f, then bends as
the rod alone, offset by M_f / (E I); unloaded, it keeps its curvature until the moment has
fallen by 2 M_f (k large) and ends, unloaded, with the curvature M_f / (E I) of the last
direction it was bent in; bent in another direction, the slider follows: the memory is of the
last large bend, not a sum of all. ``test/models/rod/statics/test_bending_friction.py`` checks
the loop against its closed form under a cycled tip moment. Default none: today's results.

The discs rub on the backbone and the tendons on their holes with a normal force that grows
with the tendons' pull (Coulomb friction). ``tension_arm`` lambda [m] makes the bound of bay b

    M_f,b = M_0,b + lambda sum_i tau_i,

tau_i the motor tensions [N] of the tendons anchored beyond the bay's middle (those that run
through it; lambda is a friction coefficient times the radius it acts at). It holds nothing
more where the tendons are slack (M_0 does) and most in the proximal bays of a robot whose
segments all pull. With displacements given the tensions answer the bend, so the bound is
taken from each solve of the fixed point below, the last one's kept. lambda = 0: M_0 alone.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.rod.statics._kernels import SEG_N
from tendon_robot_sim.models.rod.statics.result import StaticsResult

# The fixed point has converged when no element's moment moves by more than this fraction of
# M_f in an iteration (1e-4 of the opencr-mujoco FTDCR v4's 2 mN m moves its tip by ~1 um).
MOMENT_TOLERANCE = 1e-4
MAX_ITERATIONS = 60
# Steps the fixed point's acceleration combines (:func:`accelerated`).
ANDERSON_DEPTH = 4


def segment_ends(solver) -> np.ndarray:
    """Return the first and last arc length [m] of each segment of a solver's grid, (k, 2)."""
    plan = solver.kernel_plan()
    ends = np.cumsum(plan.seg_h * plan.seg[:, SEG_N])
    return np.column_stack((np.concatenate(([0.0], ends[:-1])), ends))


def set_rest_curvature(solver, ustar) -> None:
    """
    Give each segment of a solver's grid (:func:`segment_ends`) a rest curvature [1/m].

    ``ustar`` (k, 3), body frame: the rod's moment there is Kbt (u - u*), so a rod without
    loads takes the curvature u* (the kernels' ``Plan.ustar``, zero unless this sets it); in
    the solver's later solves.
    """
    ustar = np.asarray(ustar, dtype=float)
    plan = solver.kernel_plan()     # the solver's own arrays
    if ustar.shape != plan.ustar.shape or not np.all(np.isfinite(ustar)):
        raise StaticsInputError(f'rest curvature: must be {plan.ustar.shape} finite values '
                                f'[1/m], got shape {ustar.shape}')
    plan.ustar[:] = ustar


def bay_curvatures(result: StaticsResult, ends: np.ndarray) -> np.ndarray:
    """
    Return the mean bending curvature of each bay [1/m], body frame (d1, d2 components).

    ``ends`` (k, 2): each bay's first and last arc length [m] (:func:`segment_ends`): the
    rotation vector of R(s_a)^T R(s_b) over s_b - s_a.
    """
    rows = np.searchsorted(result.arc_lengths, ends - 1e-12)
    rows = np.minimum(rows, result.arc_lengths.size - 1)
    R = result.rotations
    return turn_vectors(np.einsum('kji,kjl->kil', R[rows[:, 0]], R[rows[:, 1]]))[:, :2] \
        / (ends[:, 1] - ends[:, 0])[:, None]


def turn_vectors(S: np.ndarray) -> np.ndarray:
    """
    Return the rotation vectors theta a [rad] of rotations S (k, 3, 3), each turn below pi.

    The log map from the axial vector of skew(S), sin(theta) a, and the trace, 1 + 2
    cos(theta): what ``Rotation.from_matrix(S).as_rotvec()`` gives for the rod's nearly
    orthogonal rotations (RK4 drift ~1e-8, below the friction's tolerance by far), at a
    twentieth of its cost (scipy projects each matrix onto SO(3) first); the bending
    friction's fixed point takes it once per solve.
    """
    axial = 0.5 * np.stack((S[:, 2, 1] - S[:, 1, 2], S[:, 0, 2] - S[:, 2, 0],
                            S[:, 1, 0] - S[:, 0, 1]), axis=1)
    sine = np.linalg.norm(axial, axis=1)
    theta = np.arctan2(sine, 0.5 * (np.trace(S, axis1=1, axis2=2) - 1.0))
    # theta / sin(theta), 1 + theta^2 / 6 where sin(theta) underflows the quotient
    ratio = np.where(sine > 1e-8, theta / np.maximum(sine, 1e-300), 1.0 + theta * theta / 6.0)
    return axial * ratio[:, None]


def bay_moments(moment, anchors: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """
    Return each bay's slip moment M_f [N m], (k,), from the description's ``moment``.

    ``moment``: one value, or one per segment of the robot, base first, the segments ending
    at ``anchors`` [m] (``Robot.segment_ends``); a bay takes the segment its middle lies in
    (beyond the last anchor: the last). ``ends`` (k, 2): the bays' first and last arc length
    [m] (:func:`segment_ends`).
    """
    moment = np.asarray(moment, dtype=float)
    if moment.ndim == 0:
        return np.full(len(ends), float(moment))
    middles = np.mean(ends, axis=1)
    return moment[np.minimum(np.searchsorted(anchors, middles), moment.size - 1)]


def slide(trial: np.ndarray, bound: float | np.ndarray) -> np.ndarray:
    """
    Return P(trial): each row (a 2-vector moment [N m]) shortened to at most ``bound``.

    ``bound`` [N m]: one for all rows, or one per row (k,).
    """
    size = np.linalg.norm(trial, axis=1)
    return trial * np.minimum(1.0, bound / np.maximum(size, 1e-300))[:, None]


class BendingFriction:
    """
    The Jenkins elements of a robot's bays and their state along a sequence (module docstring).

    Parameters
    ----------
    moment : float or ndarray (k,)
        M_f [N m], the slider's bound: one for all bays, or one per bay (:func:`bay_moments`).
    stiffness_ratio : float
        k / (E I) [-].
    bending_stiffness : float
        E I [N m^2] of the rod.
    ends : ndarray (k, 2)
        The bays' first and last arc length [m].
    tension_arm : float
        lambda [m]: the bound of a bay grows by lambda times the tensions through it.
    tendon_ends : ndarray (n,)
        Where each tendon is anchored [m]: it runs through the bays whose middle lies before.

    """

    def __init__(self, moment: float, stiffness_ratio: float, bending_stiffness: float,
                 ends: np.ndarray, tension_arm: float = 0.0, tendon_ends=()):
        self.ends = np.asarray(ends, dtype=float)
        self.base = np.broadcast_to(np.asarray(moment, dtype=float), len(self.ends)).copy()
        self.bound = self.base.copy()
        # (k, n): lambda where bay b carries tendon i, else 0
        self.arms = float(tension_arm) * (np.mean(self.ends, axis=1)[:, None]
                                          < np.asarray(tendon_ends, float)[None, :])
        self.ratio = float(stiffness_ratio)
        self.EI = float(bending_stiffness)
        self.iterations = 0      # of the last settle
        self.reset()

    def reset(self) -> None:
        """Return to rest: no friction moment, the straight rod the elements' reference."""
        self.moments = np.zeros((self.ends.shape[0], 2))
        self.curvatures = np.zeros((self.ends.shape[0], 2))

    def rest_curvature(self, moments: np.ndarray) -> np.ndarray:
        """Return the bays' rest curvature u* = -f / (E I) [1/m], (k, 3), of moments f [N m]."""
        return np.column_stack((-moments / self.EI, np.zeros(len(moments))))

    def held(self, tensions: np.ndarray) -> np.ndarray:
        """Return each bay's bound [N m] beyond M_0 at the motor ``tensions`` [N], (k,)."""
        return self.arms @ np.maximum(tensions, 0.0)

    def settle(self, solve, set_rest_curvature) -> StaticsResult:
        """
        Solve the next state: ``solve()`` the rod with the rest curvature set before it.

        ``set_rest_curvature(u*)`` gives the solvers the bays' rest curvature (k, 3) [1/m];
        ``solve()`` returns the state's equilibrium with it. Stores the elements' moments and
        curvatures of the state and returns its equilibrium.
        """
        k = self.ratio * self.EI
        f = self.moments.copy()
        change = np.inf
        history = []
        for self.iterations in range(1, MAX_ITERATIONS + 1):
            set_rest_curvature(self.rest_curvature(f))
            result = solve()
            kappa = bay_curvatures(result, self.ends)
            if self.arms.any():
                self.bound = self.base + self.held(result.tensions)
            tolerance = MOMENT_TOLERANCE * float(np.max(self.bound, initial=0.0))
            trial = self.moments + k * (kappa - self.curvatures)
            held = slide(trial, self.bound)
            change = float(np.max(np.abs(f - held), initial=0.0))
            if change <= tolerance:
                self.moments, self.curvatures = held, kappa
                return result
            # the moment that sticks with the bend it sets, were the rod's moment the same
            # (kappa + f / EI fixed), returned radially onto the bound where it slides
            f = accelerated(f, slide((self.ratio * f + trial) / (1.0 + self.ratio),
                                     self.bound), history, self.bound)
        raise ConvergenceError(
            f'bending friction: the friction moments did not settle with the shape in '
            f'{MAX_ITERATIONS} iterations (last change {change:.3g} N m)', change,
            MAX_ITERATIONS)


def accelerated(f: np.ndarray, g: np.ndarray, history: list, bound: float) -> np.ndarray:
    """
    Return the next moments [N m] of the fixed point f = G(f) from g = G(f): Anderson's mixing.

    The plain step g contracts by k / (E I + k) at best and, with displacements given, by
    less: the tendons' pull answers a bay's bend, which the step does not know. Anderson
    acceleration (Walker & Ni, "Anderson acceleration for fixed-point iterations", SIAM J.
    Numer. Anal. 2011; type II, the last ``ANDERSON_DEPTH`` steps) takes the combination of
    the last steps whose residual G(f) - f is least, so learning the shape's answer across
    bays; returned onto the bound where it slides. ``history``: the (f, G(f) - f) pairs of this
    fixed point so far, kept here; a residual that grows starts it afresh (the iteration
    crossed a kink of the slide: a bay started or stopped to slip).
    """
    residual = (g - f).ravel()
    if history and residual @ residual > history[-1][1] @ history[-1][1]:
        history.clear()
    history.append((g.ravel().copy(), residual))
    del history[:-ANDERSON_DEPTH - 1]
    if len(history) < 2:
        return g
    values = np.array([h[0] for h in history]).T
    residuals = np.array([h[1] for h in history]).T
    dR = np.diff(residuals, axis=1)
    gamma = np.linalg.lstsq(dR, residual, rcond=None)[0]
    return slide((g.ravel() - np.diff(values, axis=1) @ gamma).reshape(g.shape), bound)
