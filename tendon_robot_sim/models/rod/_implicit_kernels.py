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
Numba kernel of the implicit dynamics (:mod:`tendon_robot_sim.models.rod.implicit_dynamics`).

Time steps of BDF-alpha (Till, Aloi & Rucker, "Real-time dynamics of soft and continuum robots
based on Cosserat rod models", IJRR 2019). A time derivative is x_t = c0 x + x_h with

    c0 = (1.5 + alpha) / (dt (1 + alpha)),  c1 = -2 / dt,  c2 = (0.5 + alpha) / (dt (1 + alpha)),
    d1 = alpha / (1 + alpha),  x_h = c1 x(t - dt) + c2 x(t - 2 dt) + d1 x_t(t - dt),

(alpha = 0: BDF2; alpha = -0.5: the trapezoidal rule). Each step is then the static shooting
problem of the statics solver (:func:`~tendon_robot_sim.models.rod._statics_kernels.solve`: the
same Newton/Broyden iteration, residuals and RK4 grid) with the dynamic terms switched on
(``Plan.dyn``); its unknowns are predicted by linear extrapolation of the last two steps, and
the Jacobian is kept from step to step (Broyden updates, rebuilt when a step stalls).

numba caches this kernel with the solver compiled into it, keyed on this file only: after an
edit of ``_statics_kernels.py`` or ``_cosserat_kernels.py``, touch this file too (or clear the
cache) so that it is compiled again.
"""

import numpy as np

from tendon_robot_sim.models._cosserat_kernels import CONVERGED, DISCRETE, DYN_C0
from tendon_robot_sim.models._numerics import kernel, rotate_by
from tendon_robot_sim.models.rod._statics_kernels import NODE_SIZE, solve, TENSION

# advance() status: every step taken, a step did not converge, a tension above its limit
DONE, NOT_CONVERGED, OVER_TENSION = 0, 1, 2
# Columns of advance()'s record per step: tip p and R (row-major), tip q (body), then the
# tensions and the tendon lengths
REC_P, REC_R, REC_Q, REC_TAU = 0, 3, 12, 15
# Input continuation within a step that does not converge: numbers of equal parts tried
CONTINUATION_STEPS = (4, 16)


def bdf_coefficients(dt: float, alpha: float) -> tuple[float, float, float, float]:
    """Return (c0, c1, c2, d1) of BDF-alpha for the step dt [s] (see the module docstring)."""
    c0 = (1.5 + alpha) / (dt * (1.0 + alpha))
    c2 = (0.5 + alpha) / (dt * (1.0 + alpha))
    return c0, -2.0 / dt, c2, alpha / (1.0 + alpha)


@kernel
def _tension_jump(pl, modes, last, tau_in):
    """Total change [N] of the tension inputs from ``last`` to ``tau_in``."""
    jump = 0.0
    for t in range(tau_in.size):
        if modes[t] == TENSION:
            jump += tau_in[t] - last[t]
    return jump


@kernel
def _load_axially(pl, x, jump):
    """
    Add to the force unknowns the axial compression a tension change of ``jump`` N makes.

    The rod carries it at once (axial waves cross it within microseconds): nb_3 -= jump at the
    base and at each node (body frame for continuous robots; the discrete model's world-frame
    n along the node's d3); the bending part of the change reaches them only later.
    """
    x[2] -= jump / pl.scale[0, 2]
    k0 = x.size - NODE_SIZE * pl.nodes.size
    sc = pl.node_scale
    for j in range(pl.nodes.size):
        f = k0 + NODE_SIZE * j + 6
        if pl.model == DISCRETE:
            # d3 of the node: column 2 of node_R (its small rotation left out)
            for i in range(3):
                x[f + i] -= pl.node_R[j, i, 2] * jump / sc[6 + i]
        else:
            x[f + 2] -= jump / sc[8]


@kernel
def _recenter(pl, x, xs, E, th):
    """Turn each node's reference rotation by its rotation unknown, which becomes 0."""
    k0 = x.size - NODE_SIZE * pl.nodes.size
    sc = pl.node_scale
    for j in range(pl.nodes.size):
        r = k0 + NODE_SIZE * j + 3
        for i in range(3):
            th[i] = x[r + i] * sc[3 + i]
        rotate_by(pl.node_R[j], th, pl.node_R[j], E)
        for i in range(3):
            for h in range(1, xs.shape[0]):
                xs[h, r + i] -= x[r + i]
            xs[0, r + i] = 0.0
            x[r + i] = 0.0


@kernel
def _predict(xs, x):
    """Predict x of the next step from those of the last three, xs[0:3] (quadratic)."""
    for r in range(x.size):
        x[r] = 3.0 * xs[0, r] - 3.0 * xs[1, r] + xs[2, r]


@kernel
def _step(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter, traj, tau,
          lengths, bays, w, info, blend, stats):
    """
    Solve one time step from the predicted x; on failure by continuation in the inputs.

    Predictor: quadratic extrapolation of the last three steps, plus the axial load of changed
    tensions (:func:`_load_axially`). Continuation: the inputs move from ``last`` (tensions,
    displacement inputs and tip wrench of the last step) to the new ones in
    CONTINUATION_STEPS equal parts, each solved from the last. Returns True when converged.
    """
    nt = tau.size
    jump = _tension_jump(pl, modes, last, tau_in)
    _predict(xs, x)
    _load_axially(pl, x, jump)
    solve(pl, modes, tau_in, q_in, tip, x, J, jac_ok, tol, max_iter, traj, tau, lengths, bays,
          w, info)
    stats[0] += info[1]
    stats[1] += info[2]
    if info[3] == CONVERGED:
        return True
    stats[2] += 1
    # the prediction may be what failed (after a jump the rod's motion turns within a step):
    # from the last step's own unknowns, with a Jacobian built anew
    for r in range(x.size):
        x[r] = xs[0, r]
    _load_axially(pl, x, jump)
    jac_ok[0] = False
    solve(pl, modes, tau_in, q_in, tip, x, J, jac_ok, tol, max_iter, traj, tau, lengths, bays,
          w, info)
    stats[0] += info[1]
    stats[1] += info[2]
    if info[3] == CONVERGED:
        return True
    for parts in CONTINUATION_STEPS:
        _predict(xs, x)
        for k in range(1, parts + 1):
            f = k / parts
            for t in range(nt):
                blend[t] = last[t] + f * (tau_in[t] - last[t])
                blend[nt + t] = last[nt + t] + f * (q_in[t] - last[nt + t])
            for c in range(6):
                blend[2 * nt + c] = last[2 * nt + c] + f * (tip[c] - last[2 * nt + c])
            _load_axially(pl, x, jump / parts)
            jac_ok[0] = False
            solve(pl, modes, blend[0:nt], blend[nt:2 * nt], blend[2 * nt:], x, J, jac_ok, tol,
                  max_iter, traj, tau, lengths, bays, w, info)
            stats[0] += info[1]
            stats[1] += info[2]
            if info[3] != CONVERGED:
                break
        if info[3] == CONVERGED:
            return True
    return False


@kernel
def advance(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter, traj, tau,
            lengths, bays, w, info, bdf, Zold, Zt, max_tension, iq, good, record, stats):
    """
    Take one time step per row of tau_in, q_in, tip ((n, nt), (n, nt), (n, 6)).

    x: the unknowns of the last step, xs (3, nx): x of the last three steps (predictor, see
    :func:`_step`); last (2 nt + 6): the tensions, displacement inputs and tip wrench of the last
    step; bdf = (c0, c1 + d1 c0, c2, d1);
    Zold, Zt: z and its rate at the last step; pl.dyn.Zh: the history of the next step. After
    each converged step the history moves on: Zt = c0 Z + Zh, Zh = (c1 + d1 c0) Z + c2 Zold +
    d1 Zh, Zold = Z. ``iq``: column of q in the state. ``good`` gets the trajectory of each
    converged step (traj also holds those of failed tries), ``record`` (n, 15 + 2 nt) the tip
    and tendons of each step (REC_*). ``stats`` accumulates Newton iterations, residual
    evaluations and steps that needed continuation.

    Returns (steps taken, status, tendon over its limit or -1). A step that fails leaves x,
    xs, ``last`` and the history as they were after the last good step.
    """
    dyn = pl.dyn
    Z, Zh = dyn.Z, dyn.Zh
    c0, k1, c2, d1 = bdf[0], bdf[1], bdf[2], bdf[3]
    dyn.coef[DYN_C0] = c0
    nx = x.size
    nt = tau.size
    end = traj.shape[0] - 1
    blend = np.empty(last.size)
    E, th = np.empty((3, 3)), np.empty(3)
    for i in range(tau_in.shape[0]):
        if not _step(pl, modes, last, tau_in[i], q_in[i], tip[i], x, xs, J, jac_ok, tol,
                     max_iter, traj, tau, lengths, bays, w, info, blend, stats):
            for r in range(nx):
                x[r] = xs[0, r]
            return i, NOT_CONVERGED, -1
        for t in range(nt):
            if tau[t] > max_tension[t]:
                for r in range(nx):
                    x[r] = xs[0, r]
                return i, OVER_TENSION, t
        # the predictor's velocity leaves out the jump the inputs made
        jump = _tension_jump(pl, modes, last, tau_in[i])
        for h in range(xs.shape[0] - 1, 0, -1):
            for r in range(nx):
                xs[h, r] = xs[h - 1, r]
            _load_axially(pl, xs[h], jump)
        for r in range(nx):
            xs[0, r] = x[r]
        _recenter(pl, x, xs, E, th)
        for t in range(nt):
            last[t] = tau[t]
            last[nt + t] = q_in[i, t]
        for c in range(6):
            last[2 * nt + c] = tip[i, c]
        for row in range(Z.shape[0]):
            for col in range(Z.shape[1]):
                z, zh = Z[row, col], Zh[row, col]
                Zt[row, col] = c0 * z + zh
                Zh[row, col] = k1 * z + c2 * Zold[row, col] + d1 * zh
                Zold[row, col] = z
        for row in range(traj.shape[0]):
            for col in range(traj.shape[1]):
                good[row, col] = traj[row, col]
        out = record[i]
        for col in range(12):
            out[REC_P + col] = traj[end, col]
        for col in range(3):
            out[REC_Q + col] = traj[end, iq + col]
        for t in range(nt):
            out[REC_TAU + t] = tau[t]
            out[REC_TAU + nt + t] = lengths[t]
    return tau_in.shape[0], DONE, -1
