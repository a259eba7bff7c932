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
The loads of the tendons that turn a corner where a point load makes the rod's strains jump.

Rucker & Webster's continuous model loads the rod along each tendon and at its termination;
at a termination the curvature jumps, and so does the tangent of
every tendon that runs on through it: :func:`kink_loads` adds the point load of that corner to
the shooting of :mod:`tendon_robot_sim.models.rod.statics._kernels`.
"""

import math

from tendon_robot_sim.models._cosserat_kernels import (COSSERAT, FD_STEP, MAT_USTAR,
                                                       viscous_curvature, viscous_strain)
from tendon_robot_sim.models._numerics import cross, gauss_solve, kernel

# Newton's method on the wrench after the corner, to its scaled residual at round-off (1e-16
# and below after the last step). The plain fixed point it replaced contracted by about
# -sum tau r^2 / (E I) per pass (0.4 for the default robot at 20 N, 0.8 for the FTDCR v4 at
# 50 N) and diverged, oscillating, past 1; as dG/dx is that negative factor, I - dG/dx is far
# from singular there. Newton took 0 to 3 steps on the v4 at 50 N; one that does not converge
# makes the state NaN, so the solve fails rather than use a wrong corner.
KINK_TOLERANCE = 1e-14
KINK_ITERATIONS = 30


@kernel
def curvature_jumps(pl, k, mm):
    """
    Return whether a point moment makes the curvature u jump where segment k starts.

    A termination's moment (mm, body frame) does. A point force alone (a disc's weight)
    changes only the Cosserat rod's strain v, by the force over the shear stiffness: the
    corner that puts in a tendon (3e-5 rad at the default robot's discs) is left out. So is
    the corner where the bending friction's rest curvature jumps
    (rod/statics/bending_friction.py): applied there, the hidden moments of
    test_bending_friction_fit.py no longer came back from their pull-release loops (not
    understood yet).
    """
    for i in range(3):
        if mm[i] != 0.0:
            return True
    return False


@kernel
def kink_loads(pl, k, start, last, first, tau, it, y, v, nb, mb, w):
    """
    Subtract from nb, mb the loads of the tendons kinked where a point load makes u, v jump.

    A termination at the end of segment k - 1 makes the curvature (and
    in the Cosserat rod the strain) jump there, and with them the tangent pb / |pb| of every
    tendon that runs on (pb = u x r + r_s + v): the tendon bends round a corner of its path
    and pushes the rod with tau (t+ - t-) at its hole. Equilibrium of the rod and tendons
    beyond the cut gives the same (n = external load beyond s - sum tau_i t_i). R&W Eqs.
    18-20 load only the terminations, which left the multi-section robot with a helical
    tendon running on 1 mm off at the tip. t+ depends on the wrench x after the kink: x = G(x)
    (:func:`_after_corner`), solved by Newton's method with a finite-difference Jacobian
    (3 columns in the Kirchhoff rod, whose strain does not depend on the force). NaN in nb if
    it does not converge. ``start``: the history row of segment k's start; ``last``,
    ``first``: the routing rows of the corner in segments k - 1 and k; ``it``: the column of
    the tensions in the state (tendon friction), else -1. Scratch: wk[57:99], w.K and w.hp
    (its tangents t-).
    """
    wk, scale = w.wk, pl.scale
    before, x, g, gp, dx = wk[57:63], wk[63:69], wk[69:75], wk[75:81], wk[81:87]
    size = 1.0
    for i in range(3):
        before[i], before[3 + i] = nb[i], mb[i]
        size = max(size, abs(nb[i]) / scale[0, i], abs(mb[i]) / scale[0, 3 + i])
    for t in range(pl.nt):
        if pl.active[k, t]:
            pb = wk[87:90]
            cross(y[15:18], pl.rt[last, t, 0:3], pb)
            for i in range(3):
                pb[i] += pl.rt[last, t, 3 + i] + v[i]
            norm = math.sqrt(pb[0] * pb[0] + pb[1] * pb[1] + pb[2] * pb[2])
            for i in range(3):
                w.hp[t, i] = pb[i] / norm
    for i in range(3):
        pl.mat[MAT_USTAR + i] = pl.ustar[k, i]
    # the Kirchhoff rod's strain is e3 whatever the force: G does not depend on x[0:3]
    free = 0 if pl.model == COSSERAT else 3
    for i in range(6):
        x[i] = before[i]
    for _ in range(KINK_ITERATIONS):
        _after_corner(pl, k, start, first, tau, it, y, v, before, x, g, w)
        error = 0.0
        for i in range(6):
            dx[i] = g[i] - x[i]
            error = max(error, abs(dx[i]) / scale[0, i])
        if not error > KINK_TOLERANCE * size:
            for i in range(3):
                nb[i], mb[i] = g[i], g[3 + i]
            return
        # K = I - dG/dx, by forward differences column by column
        for j in range(6):
            for i in range(6):
                w.K[i, j] = 1.0 if i == j else 0.0
        for j in range(free, 6):
            h = FD_STEP * max(abs(x[j]), scale[0, j])
            x[j] += h
            _after_corner(pl, k, start, first, tau, it, y, v, before, x, gp, w)
            x[j] -= h
            for i in range(6):
                w.K[i, j] -= (gp[i] - g[i]) / h
        if not gauss_solve(w.K, dx):
            break
        for i in range(6):
            x[i] += dx[i]
    for i in range(3):
        nb[i] = math.nan


@kernel
def _after_corner(pl, k, start, first, tau, it, y, v, before, x, g, w):
    """
    Write to g the wrench after the corner, G(x): ``before`` less the tendons' corner loads.

    x: the wrench after the corner (nb, mb) that sets the strains there, thus t+; t- is w.hp.
    Scratch: wk[87:99].
    """
    wk, mat, dyn = w.wk, pl.mat, pl.dyn
    pb, u, vp, mk = wk[87:90], wk[90:93], wk[93:96], wk[96:99]
    if pl.model == COSSERAT:
        e, vp[0], vp[1], vp[2] = viscous_strain(x[0], x[1], x[2], mat, pl.law, dyn, start)
    else:
        e = 1.0
        vp[0], vp[1], vp[2] = v[0], v[1], v[2]
    viscous_curvature(x[3:6], e, mat, dyn, start, u)
    for i in range(6):
        g[i] = before[i]
    for t in range(pl.nt):
        tension = y[it + t] if it >= 0 else tau[t]
        if not pl.active[k, t] or tension == 0.0:
            continue
        r = pl.rt[first, t, 0:3]
        cross(u, r, pb)
        for i in range(3):
            pb[i] += pl.rt[first, t, 3 + i] + vp[i]
        norm = math.sqrt(pb[0] * pb[0] + pb[1] * pb[1] + pb[2] * pb[2])
        for i in range(3):
            pb[i] = tension * (pb[i] / norm - w.hp[t, i])
            g[i] -= pb[i]
        cross(r, pb, mk)
        for i in range(3):
            g[3 + i] -= mk[i]
