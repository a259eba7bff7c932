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

from tendon_robot_sim.models._cosserat_kernels import (COSSERAT, MAT_USTAR, viscous_curvature,
                                                       viscous_strain)
from tendon_robot_sim.models._numerics import cross, kernel

# The fixed point of the corner loads: its scaled wrench to round-off; it contracts by about
# tau r^2 / (E I) per pass, 0.4 for the default robot at 20 N
KINK_TOLERANCE = 1e-14
KINK_ITERATIONS = 100


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
    tendon running on 1 mm off at the tip. t+ depends on the wrench after the kink: a fixed
    point, contracting by about tau r^2 / (E I) per pass. ``start``: the history row of segment
    k's start; ``last``, ``first``: the routing rows of the corner in segments k - 1 and k;
    ``it``: the column of the tensions in the state (tendon friction), else -1. Scratch:
    wk[57:81] and w.hp (its tangents t-).
    """
    wk, mat, dyn = w.wk, pl.mat, pl.dyn
    nb0, mb0, u, vp, pb, mk = (wk[57:60], wk[60:63], wk[63:66], wk[66:69], wk[69:72],
                               wk[78:81])
    size = 1.0
    for i in range(3):
        nb0[i] = nb[i]
        mb0[i] = mb[i]
        size = max(size, abs(nb[i]) / pl.scale[0, i], abs(mb[i]) / pl.scale[0, 3 + i])
    for t in range(pl.nt):
        if pl.active[k, t]:
            cross(y[15:18], pl.rt[last, t, 0:3], pb)
            for i in range(3):
                pb[i] += pl.rt[last, t, 3 + i] + v[i]
            norm = math.sqrt(pb[0] * pb[0] + pb[1] * pb[1] + pb[2] * pb[2])
            for i in range(3):
                w.hp[t, i] = pb[i] / norm
    for i in range(3):
        mat[MAT_USTAR + i] = pl.ustar[k, i]
    for _ in range(KINK_ITERATIONS):
        if pl.model == COSSERAT:
            e, vp[0], vp[1], vp[2] = viscous_strain(nb[0], nb[1], nb[2], mat, pl.law, dyn,
                                                    start)
        else:
            e = 1.0
            vp[0], vp[1], vp[2] = v[0], v[1], v[2]
        viscous_curvature(mb, e, mat, dyn, start, u)
        for i in range(3):
            wk[72 + i] = nb[i]
            wk[75 + i] = mb[i]
            nb[i] = nb0[i]
            mb[i] = mb0[i]
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
                nb[i] -= pb[i]
            cross(r, pb, mk)
            for i in range(3):
                mb[i] -= mk[i]
        moved = 0.0
        for i in range(3):
            moved = max(moved, abs(nb[i] - wk[72 + i]) / pl.scale[0, i],
                        abs(mb[i] - wk[75 + i]) / pl.scale[0, 3 + i])
        if not moved > KINK_TOLERANCE * size:
            return
