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
The multiple shooting's nodes: where an integration restarts from unknowns, and what it keeps.

Kernels of :mod:`tendon_robot_sim.models.rod.statics._kernels` (the implicit dynamics' shooting
restarts at its nodes): a node's restart, which writes its defect and starts the next interval
from its unknowns, and the state a whole integration propagated to each node, kept so that a
finite-difference probe of an interval's unknowns integrates that interval alone (``solve``),
or with tendon friction that interval and those after it, from the state and, at the discs,
each tendon's last hole kept at its node.
"""

from tendon_robot_sim.models._cosserat_kernels import DISCRETE
from tendon_robot_sim.models._numerics import kernel, rotate_by
from tendon_robot_sim.models.rod.statics._rotation_kernels import _rotation_error
from tendon_robot_sim.models.rod.tendons._friction_kernels import HS_C

# Unknowns (and defect residuals) per multiple-shooting node: p, rotation, force, moment, q, w
NODE_SIZE = 18
# Values per tendon of its last hole (Dyn.fw's HS_U, HS_S, HS_C) that a node keeps in the
# discrete model with tendon friction
HOLE_SIZE = HS_C + 1


def hole_rows(nodes: int, nt: int, ny: int) -> int:
    """Return the rows of Work.y after the nodes' states that keep the tendons' holes there."""
    return nodes * -(-nt * HOLE_SIZE // ny)


@kernel
def _restart(pl, j, x, F, y, f, m, iq, w):
    """
    Multiple shooting: at node j, write the defect of the propagated state, then take the node's.

    The integration restarts at the start of segment pl.nodes[j] from unknowns (scaled by
    pl.node_scale): position p, a rotation th of the node's reference, R = node_R exp(th^),
    the force f and moment m (the model's own: body nb, mb for continuous robots, world n, m
    for the discrete model), and the velocities q, w (state columns iq, iq + 3). The unknowns
    are the 18 of node j among the last 18 M of x, and their defects (propagated - node; the
    rotation's is :func:`_rotation_error` of R_node^T R) the same entries of F. Tendon lengths
    run on: they feed nothing back. Scratch: M[2], M[3], wk[108:111].
    """
    k0 = x.size - NODE_SIZE * (pl.nodes.size - j)
    sc = pl.node_scale
    Rn, E, th = w.M[3], w.M[2], w.wk[108:111]
    for i in range(3):
        th[i] = x[k0 + 3 + i] * sc[3 + i]
    rotate_by(pl.node_R[j], th, Rn, E)
    # rotation defect from the propagated R (rows of y[3:12]) and the node's: S = Rn^T R
    s01 = s10 = s02 = s20 = s12 = s21 = trace = 0.0
    for a in range(3):
        s01 += Rn[a, 0] * y[4 + 3 * a]
        s10 += Rn[a, 1] * y[3 + 3 * a]
        s02 += Rn[a, 0] * y[5 + 3 * a]
        s20 += Rn[a, 2] * y[3 + 3 * a]
        s12 += Rn[a, 1] * y[5 + 3 * a]
        s21 += Rn[a, 2] * y[4 + 3 * a]
        trace += Rn[a, 0] * y[3 + 3 * a] + Rn[a, 1] * y[4 + 3 * a] + Rn[a, 2] * y[5 + 3 * a]
    _rotation_error(s01, s10, s02, s20, s12, s21, trace, F[k0 + 3:k0 + 6])
    for i in range(3):
        F[k0 + 3 + i] /= sc[3 + i]
    for i in range(3):
        F[k0 + i] = y[i] / sc[i] - x[k0 + i]
        F[k0 + 6 + i] = f[i] / sc[6 + i] - x[k0 + 6 + i]
        F[k0 + 9 + i] = m[i] / sc[9 + i] - x[k0 + 9 + i]
        F[k0 + 12 + i] = y[iq + i] / sc[12 + i] - x[k0 + 12 + i]
        F[k0 + 15 + i] = y[iq + 3 + i] / sc[15 + i] - x[k0 + 15 + i]
        y[i] = x[k0 + i] * sc[i]
        f[i] = x[k0 + 6 + i] * sc[6 + i]
        m[i] = x[k0 + 9 + i] * sc[9 + i]
        y[iq + i] = x[k0 + 12 + i] * sc[12 + i]
        y[iq + 3 + i] = x[k0 + 15 + i] * sc[15 + i]
        for col in range(3):
            y[3 + 3 * i + col] = Rn[i, col]


@kernel
def _keep_node(pl, w, part, j, y):
    """
    Keep the state propagated to node j (before its restart) in w.y[3 + j]; True if kept.

    Only a whole integration (``part`` < 0) keeps it, and only where the work holds a row per
    node (the implicit dynamics': :func:`_resume` starts an interval from it); with tendon
    friction at the discs also each tendon's last hole (:func:`_keep_holes`).
    """
    if part >= 0 or w.y.shape[0] < 3 + pl.nodes.size:
        return False
    for i in range(y.size):
        w.y[3 + j, i] = y[i]
    if runs_on(pl) and holes_kept(pl, w):
        _keep_holes(pl, w, j, pl.dyn.fw)
    return True


@kernel
def probes_by_interval(pl, w, k0):
    """
    Return True if the Jacobian's probes may integrate from their node on (``solve``).

    With nodes and tensions given (``k0`` = 6: no unknown but the base's before the nodes'),
    where the work keeps the nodes' states, and at the discs with tendon friction their holes.
    """
    return (pl.nodes.size > 0 and k0 == 6 and w.y.shape[0] >= 3 + pl.nodes.size
            and not (runs_on(pl) and pl.model == DISCRETE and not holes_kept(pl, w)))


@kernel
def runs_on(pl):
    """
    Return True if a probe of an interval's unknowns integrates on to the tip (``solve``).

    Tendon friction carries the tensions (and at the discs each tendon's last hole) across
    the nodes, so an interval's unknowns change the residuals of every interval after it.
    """
    return pl.dyn.on and pl.dyn.friction.shape[1] > 0


@kernel
def holes_kept(pl, w):
    """Return True if Work.y has the rows to keep the tendons' holes at every node."""
    m = pl.nodes.size
    return m > 0 and w.y.shape[0] >= 3 + m and \
        (w.y.shape[0] - 3 - m) // m * w.y.shape[1] >= pl.nt * HOLE_SIZE


@kernel
def _hole_cell(pl, w, j, t, c):
    """Return the row and column of Work.y keeping value c of tendon t's hole at node j."""
    m = pl.nodes.size
    per = (w.y.shape[0] - 3 - m) // m
    ny = w.y.shape[1]
    f = (3 + m + per * j) * ny + t * HOLE_SIZE + c
    return f // ny, f % ny


@kernel
def _keep_holes(pl, w, j, hs):
    """
    Keep each tendon's last hole (hs = Dyn.fw) at node j; the discrete model with friction.

    Beside the state a whole integration kept there (:func:`_keep_node`): the interval from
    node j resumes from both (:func:`_resume_holes`).
    """
    for t in range(pl.nt):
        for c in range(HOLE_SIZE):
            row, col = _hole_cell(pl, w, j, t, c)
            w.y[row, col] = hs[t, c]


@kernel
def _resume_holes(pl, w, j, hs):
    """Take each tendon's last hole at node j from those :func:`_keep_holes` kept."""
    for t in range(pl.nt):
        for c in range(HOLE_SIZE):
            row, col = _hole_cell(pl, w, j, t, c)
            hs[t, c] = w.y[row, col]


@kernel
def _resume(pl, w, part, y):
    """
    Return the segment the integration starts at: 0, or interval ``part``'s first node's.

    From a node (``part`` >= 1) the state y is the one kept there by the last whole
    integration (:func:`_keep_node`), which the node's restart takes as propagated; so are
    the tendons' holes where they were kept.
    """
    if part < 1:
        return 0
    for i in range(y.size):
        y[i] = w.y[2 + part, i]
    if runs_on(pl) and holes_kept(pl, w):
        _resume_holes(pl, w, part - 1, pl.dyn.fw)
    return pl.nodes[part - 1]
