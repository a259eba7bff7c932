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
The tendon law of the shooting statics (:mod:`tendon_robot_sim.models.rod.statics._kernels`).

Tensions given, or displacements with a tension/slack unknown z per tendon: tau = max(z, 0),
slack = max(-z, 0) x (slack length per newton); the length residual of a tendon and the Newton
step across its kink at z = 0 (:func:`slack_branches`).
"""

import math

import numpy as np

from tendon_robot_sim.models._numerics import kernel

# what a solve is given per tendon (tensions or displacements); Plan.tendon rows
TENSION, DISPLACEMENT = 0, 1
TENDON_SLACK, TENDON_REST, TENDON_COMPLIANCE, TENDON_MOTOR = 0, 1, 2, 3
# most taut tension/slack unknowns whose 2^m branch sets slack_branches tries (O(2^m m n^2))
MAX_SWITCHED = 6


@kernel
def tensions(pl, modes, tau_in, x, tau):
    """Write the tendon tensions tau [N]: given (TENSION) or the unknowns' max(z, 0)."""
    i = 6
    for t in range(pl.nt):
        if modes[t] == TENSION:
            tau[t] = tau_in[t]
        else:
            tau[t] = max(x[i], 0.0) * pl.scale[0, 6 + t]
            i += 1


@kernel
def tendon_residuals(pl, modes, q, x, F, tau, lengths):
    """
    Write the length residuals F[6:] of ``_kernels._residual`` from the tendons' path lengths.

    They depend on the tendons' law (rest length, compliance, motor distance) and not on the
    rod's shape beyond ``lengths``. False if F is not finite.
    """
    i = 6
    for t in range(pl.nt):
        if modes[t] == TENSION:
            continue
        slack = max(-x[i], 0.0) * pl.scale[0, 6 + t] * pl.tendon[TENDON_SLACK, t]
        d = pl.tendon[TENDON_MOTOR, t]
        F[i] = (lengths[t] + d + slack - (pl.tendon[TENDON_REST, t] + d - q[t])
                * (1.0 + pl.tendon[TENDON_COMPLIANCE, t] * tau[t])) / pl.scale[1, 6 + t]
        i += 1
    for i in range(x.size):
        if not math.isfinite(F[i]):
            return False
    return True


@kernel
def slack_branches(pl, modes, x, H, dx, Hs, dxs, col, row):
    """
    Put the Newton step dx = -H F of ``_kernels.solve`` on the branches of the tendon law.

    Semi-smooth Newton on the kink of tau = max(z, 0), slack = max(-z, 0).
    H is the inverse Jacobian, built with each z's column from the side of 0 that z is on
    (``fd_step``: the taut side at z = 0). A step that takes a taut z below 0 extrapolates the
    taut branch past the kink, where the residual follows the slack branch instead: tau = 0, so
    z moves only its own length residual, by g = -slack per newton x x scale / F scale per
    unit. This decides the solve where the taut branch is singular: with stiff tendons, four
    tendons in opposed pairs have path lengths with l0 + l2 = l1 + l3 to first order for any
    bending and extension, so a pull on all four makes them all taut at once, and the
    co-contraction (1, -1, 1, -1) of their tensions moves no length. The taut step then runs
    along it by (residual / ~0), either way, across the kinks, and the damped Newton stalls
    (a symmetric pull in the ``discrete`` model: a scaled residual of 4e-7 against a singular
    value of 3e-8; docs/tendon_robot.md, "Statics solver").

    Where the step takes a taut z below 0, each set S of the taut z is tried on the slack
    branch: per z of S (index i), H with column i replaced by the slack one, c = g e_i
    (Sherman-Morrison with w = H c: H -= (w - e_i) H[i, :] / w_i), and the step to the root of
    the piecewise-linear model (taut branch to z = 0, slack on):
    dx -= (w - e_i) (x_i + dx_i) / w_i. The shortest step whose root is on the branches it
    assumed (z < 0 in S, z >= 0 for the other taut z) replaces dx, its H replaces H; none: dx
    is left as it was. Slack z keep their branch (the taut column needs a residual
    evaluation). Hs: (n, n), dxs, col, row: (n,) scratch.
    """
    n = x.size
    # the taut displacement unknowns: their index, and g
    taut, g = np.empty(pl.nt, dtype=np.int64), np.empty(pl.nt)
    m = 0
    crossed = False
    i = 6
    for t in range(pl.nt):
        if modes[t] == TENSION:
            continue
        if x[i] >= 0.0:
            taut[m] = i
            g[m] = -pl.tendon[TENDON_SLACK, t] * pl.scale[0, 6 + t] / pl.scale[1, 6 + t]
            m += 1
            crossed = crossed or x[i] + dx[i] < 0.0
        i += 1
    if not crossed or m > MAX_SWITCHED:
        return
    best, shortest = -1, math.inf
    for mask in range(1, 1 << m):
        if _switch(x, H, dx, Hs, dxs, col, row, taut[:m], g, mask):
            step = 0.0
            for r in range(n):
                step += dxs[r] * dxs[r]
            if step < shortest:
                best, shortest = mask, step
    if best > 0:
        _switch(x, H, dx, Hs, dxs, col, row, taut[:m], g, best)
        for r in range(n):
            dx[r] = dxs[r]
            for c in range(n):
                H[r, c] = Hs[r, c]


@kernel
def _switch(x, H, dx, Hs, dxs, col, row, taut, g, mask):
    """
    Write into Hs, dxs the inverse Jacobian and step of :func:`slack_branches` for one set.

    The set: the unknowns taut[k] (slack branch slope g[k]) whose bit k of ``mask`` is set.
    True if the step's root is on the branches it assumed.
    """
    n = x.size
    for r in range(n):
        dxs[r] = dx[r]
        for c in range(n):
            Hs[r, c] = H[r, c]
    for k in range(taut.size):
        if not mask >> k & 1:
            continue
        i = taut[k]
        wi = g[k] * Hs[i, i]
        if wi == 0.0:
            return False
        for r in range(n):
            col[r] = g[k] * Hs[r, i] - (1.0 if r == i else 0.0)
            row[r] = Hs[i, r]
        step = (x[i] + dxs[i]) / wi
        for r in range(n):
            dxs[r] -= col[r] * step
            for c in range(n):
                Hs[r, c] -= col[r] * row[c] / wi
    for k in range(taut.size):
        if (x[taut[k]] + dxs[taut[k]] < 0.0) != bool(mask >> k & 1):
            return False
    return True
