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
Numba kernel of the implicit dynamics (:mod:`tendon_robot_sim.models.rod.dynamics.implicit`).

Time steps of BDF-alpha (Till, Aloi & Rucker, "Real-time dynamics of soft and continuum robots
based on Cosserat rod models", IJRR 2019). A time derivative is x_t = c0 x + x_h with

    c0 = (1.5 + alpha) / (dt (1 + alpha)),  c1 = -2 / dt,  c2 = (0.5 + alpha) / (dt (1 + alpha)),
    d1 = alpha / (1 + alpha),  x_h = c1 x(t - dt) + c2 x(t - 2 dt) + d1 x_t(t - dt),

(alpha = 0: BDF2; alpha = -0.5: the trapezoidal rule). Each step is then the static shooting
problem of the statics solver (:func:`~tendon_robot_sim.models.rod.statics._kernels.solve`: the
same Newton/Broyden iteration, residuals and RK4 grid) with the dynamic terms switched on
(``Plan.dyn``); its unknowns are predicted by quadratic extrapolation of the last three steps,
and the Jacobian is kept from step to step (Broyden updates, rebuilt when a step stalls, a
probe of a shooting node's unknowns integrating from that node on: with tendon friction to
the tip, without it to the next node).

numba caches this kernel with the solver compiled into it, keyed on this file only: after an
edit of ``statics/_kernels.py``, ``statics/_node_kernels.py`` or ``_cosserat_kernels.py``, touch
this file too (or clear the cache) so that it is compiled again.
"""

import math

import numpy as np

from tendon_robot_sim.models._cosserat_kernels import CONVERGED, DISCRETE, DYN_C0, Z_SIZE
from tendon_robot_sim.models._numerics import kernel, rotate_by
from tendon_robot_sim.models.contact._kernels import near, within_reach
from tendon_robot_sim.models.rod.statics._kernels import Bays, NODE_SIZE, solve, TENSION
from tendon_robot_sim.models.rod.tendons._friction_kernels import (FR_FROZEN, FR_LAW, FR_SLIDING,
                                                                   FR_TURNING)

# advance() status: every step taken, a step did not converge, a tension above its limit, the
# rod came near an obstacle where its grid is coarse (implicit_grid.py)
DONE, NOT_CONVERGED, OVER_TENSION, REGRID = 0, 1, 2, 3
# Points per coarse RK4 step at which the rod's distance to the world is checked (its ends
# and the points between them, on the cubic Hermite curve through the ends' positions and
# tangents)
WATCH_POINTS = 4
# Columns of advance()'s record per step: tip p and R (row-major), tip q (body), then the
# tensions and the tendon lengths
REC_P, REC_R, REC_Q, REC_TAU = 0, 3, 12, 15
# Homotopy of a step that does not converge from its predicted start (_homotopy): first and
# smallest step in lam, and most shooting solves
LAMBDA_STEPS = (1.0, 1.0 / 256.0)
HOMOTOPY_SOLVES = 40
# advance()'s info (n >= INFO_SIZE): the last solve's [||F||_inf, iterations, residual
# evaluations, status] (_kernels.solve), those of the failed solve of a step from its
# prediction at INFO_PREDICTED, and the last lam the homotopy solved (_homotopy)
INFO_PREDICTED, INFO_LAMBDA, INFO_SIZE = 4, 8, 9
# Sliding tendon friction (_step): Newton iterations of a step on its own equations, and the
# steps taken semi-implicitly after one that did not converge in them
SLIDING_ITERATIONS = 15
TURN_STEPS = 100.0


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
def _copy_bays(src, dst):
    """
    Copy the discrete model's bay memory (vertebra pose guesses and their Jacobians).

    A shooting try that fails leaves guesses of a wild iterate behind, from which the next
    try's very first integration can fail: every try starts from those of the last good step.
    """
    dst.P[:] = src.P
    dst.Q[:] = src.Q
    dst.J[:] = src.J
    dst.flags[:] = src.flags


@kernel
def _new_bays(bays):
    """Return a copy of bay memory ``bays``."""
    return Bays(bays.P.copy(), bays.Q.copy(), bays.J.copy(), bays.flags.copy())


@kernel
def near_coarse(world, traj, watch, reach, w):
    """
    Return the first watched RK4 step whose rod comes near an obstacle, or -1.

    ``watch`` (m,): first trajectory row of each coarse step (the next row ends it), ``reach``
    (m, 2): its length h [m] and the distance [m] (beyond the penalty's reach) that counts
    as near. The rod is sampled at WATCH_POINTS + 1 points per step on the cubic Hermite
    curve of its end positions and tangents d3 (h d3: the stretch is left out). Scratch: w
    (15,).
    """
    p = w[12:15]
    for i in range(watch.size):
        a = watch[i]
        h = reach[i, 0]
        # the step lies within 0.55 h of its chord's midpoint: most are far from everything
        for e in range(3):
            p[e] = 0.5 * (traj[a, e] + traj[a + 1, e])
        if not within_reach(world, p, reach[i, 1] + 0.55 * h):
            continue
        for k in range(WATCH_POINTS + 1):
            t = k / WATCH_POINTS
            h00, h10 = (1.0 + 2.0 * t) * (1.0 - t) ** 2, t * (1.0 - t) ** 2
            h01, h11 = t * t * (3.0 - 2.0 * t), t * t * (t - 1.0)
            for e in range(3):
                p[e] = (h00 * traj[a, e] + h01 * traj[a + 1, e]
                        + h * (h10 * traj[a, 5 + 3 * e] + h11 * traj[a + 1, 5 + 3 * e]))
            if near(world, p, reach[i, 1], w):
                return i
    return -1


@kernel
def _predict(xs, x):
    """Predict x of the next step from those of the last three, xs[0:3] (quadratic)."""
    for r in range(x.size):
        x[r] = 3.0 * xs[0, r] - 3.0 * xs[1, r] + xs[2, r]


@kernel
def _freeze_sliding(pl, Zt, fail):
    """
    Choose the sliding law's direction of each sliding tendon for a step; True if any slides.

    A tendon whose countdown FR_TURNING is on, or every sliding tendon after a ``fail``ed
    solve (the countdown then starts at TURN_STEPS), takes sat(s_i,t) at each evaluation point
    from the last step's s_i,t (from ``Zt`` into Dyn.Z's last nt columns, FR_FROZEN set); the
    others evaluate it at the step's own s_i,t (FR_FROZEN cleared).
    """
    dyn = pl.dyn
    fr = dyn.friction
    sliding = False
    for t in range(fr.shape[1]):
        if fr[FR_LAW, t] != FR_SLIDING:
            continue
        sliding = True
        if fail:
            fr[FR_TURNING, t] = TURN_STEPS
        fr[FR_FROZEN, t] = 1.0 if fr[FR_TURNING, t] > 0.0 else 0.0
        for row in range(dyn.Z.shape[0]):
            dyn.Z[row, Z_SIZE + fr.shape[1] + t] = Zt[row, Z_SIZE + t]
    return sliding


@kernel
def _keep_used_rates(pl):
    """
    After a converged step, put in each sliding tendon's held columns the rate it slid by.

    The rate s_i,t its direction sat(s_i,t) came from: a held tendon's is already there
    (:func:`_freeze_sliding`), a free one's is the step's own, c0 s_i + s_i,h. ``advance``
    keeps them in Zt's held columns: the direction the last step used, from which
    :func:`_homotopy` starts (a held direction may turn from one step to the next).
    """
    dyn = pl.dyn
    fr = dyn.friction
    nf = fr.shape[1]
    c0 = dyn.coef[DYN_C0]
    for t in range(nf):
        if fr[FR_LAW, t] != FR_SLIDING or fr[FR_FROZEN, t] > 0.0:
            continue
        for row in range(dyn.Z.shape[0]):
            dyn.Z[row, Z_SIZE + nf + t] = c0 * dyn.Z[row, Z_SIZE + t] + dyn.Zh[row, Z_SIZE + t]


@kernel
def _hold_between(pl, Zt, lam):
    """
    Hold each sliding tendon's direction at lam of the way from the last step's to this one's.

    The rate it is taken from: Zt's held columns (the one the last step's direction came from,
    :func:`_keep_used_rates`) at lam = 0, Zt's s_i,t (the semi-implicit step's) at lam = 1.
    """
    dyn = pl.dyn
    fr = dyn.friction
    nf = fr.shape[1]
    for t in range(nf):
        if fr[FR_LAW, t] != FR_SLIDING:
            continue
        for row in range(dyn.Z.shape[0]):
            used = Zt[row, Z_SIZE + nf + t]
            dyn.Z[row, Z_SIZE + nf + t] = (Zt[row, Z_SIZE + t] if lam == 1.0 else
                                           used + lam * (Zt[row, Z_SIZE + t] - used))


@kernel
def _count_turning(pl, done):
    """After a step: free every direction; if ``done``, one step less of each countdown."""
    fr = pl.dyn.friction
    for t in range(fr.shape[1]):
        if done:
            fr[FR_TURNING, t] = max(0.0, fr[FR_TURNING, t] - 1.0)
        fr[FR_FROZEN, t] = 0.0


@kernel
def _step(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter, traj, tau,
          lengths, bays, good_bays, w, info, blend, Zt, Zold, path, stats):
    """
    Solve one time step from the predicted x; on failure by homotopy from the last step.

    Predictor: quadratic extrapolation of the last three steps, plus the axial load of changed
    tensions (:func:`_load_axially`). Sliding tendon friction: Till's law evaluates its
    direction sat(s_i,t), regularised below the slip velocity eps, at the step's own s_i,t;
    it switches over eps / c0 of tendon length in a step (1.3 um at eps = 1 mm/s and dt =
    2 ms), and where a tendon's sliding turns, Newton's method from the predicted start steps
    across that band back and forth, and the step's equations may have no solution near the
    last step's. So a step with a sliding tendon gets SLIDING_ITERATIONS; if it does not
    converge in them, it is solved again with the direction at every evaluation point taken
    from the last step (semi-implicit: the residual is then as smooth as without friction),
    and so are the next TURN_STEPS steps (:func:`_freeze_sliding`; stats[3] counts the
    semi-implicit steps). Else on failure :func:`_homotopy` (``path``: its scratch), the
    sliding direction semi-implicit; ``info`` then keeps the failed solve (INFO_*). Returns
    True when converged.
    """
    jump = _tension_jump(pl, modes, last, tau_in)
    _predict(xs, x)
    _load_axially(pl, x, jump)
    sliding = _freeze_sliding(pl, Zt, False)
    frozen = sliding and pl.dyn.friction[FR_FROZEN].max() > 0.0
    free = sliding and pl.dyn.friction[FR_FROZEN].min() == 0.0
    if free:
        kept, fresh = J.copy(), jac_ok[0]
    solve(pl, modes, tau_in, q_in, tip, x, J, jac_ok, tol,
          SLIDING_ITERATIONS if free else max_iter, math.inf, traj, tau, lengths, bays, w, info)
    stats[0] += info[1]
    stats[1] += info[2]
    done = info[3] == CONVERGED
    if free and not done:
        # the semi-implicit step from the prediction, with the last step's Jacobian
        _freeze_sliding(pl, Zt, True)
        frozen = True
        _predict(xs, x)
        _load_axially(pl, x, jump)
        J[:] = kept
        jac_ok[0] = fresh
        solve(pl, modes, tau_in, q_in, tip, x, J, jac_ok, tol, max_iter, math.inf, traj, tau,
              lengths, bays, w, info)
        stats[0] += info[1]
        stats[1] += info[2]
        done = info[3] == CONVERGED
    if not done:
        # what the solve from the prediction ended with (info[0:4] goes on to the homotopy's)
        for k in range(INFO_PREDICTED):
            info[INFO_PREDICTED + k] = info[k]
        stats[2] += 1
        if sliding:
            _freeze_sliding(pl, Zt, True)
            frozen = True
        done = _homotopy(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter,
                         traj, tau, lengths, bays, good_bays, w, info, blend, Zt, Zold, path,
                         jump, stats)
    if done and frozen:
        stats[3] += 1
    if sliding:
        if done:
            _keep_used_rates(pl)
        _count_turning(pl, done)
    return done


@kernel
def _homotopy(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter, traj, tau,
              lengths, bays, good_bays, w, info, blend, Zt, Zold, path, jump, stats):
    """
    Solve the step by continuation from the last step, which solves its own equations exactly.

    H(x, lam) = F(x; u(lam), x_h(lam)) with the inputs u(lam) = u_last + lam (u - u_last) (the
    tensions, displacement inputs and tip wrench in ``last``) and the history x_h(lam) =
    x_h,last + lam (x_h - x_h,last), where x_h,last = Zt - c0 Zold makes c0 z + x_h the last
    step's rate at its own z: at lam = 0 the last step's unknowns xs[0] solve H, at lam = 1 H
    is this step's equations with the user's inputs (same dt, same history), so the answer is
    the BDF-alpha step itself, only reached by a path (after a tension jump the step's
    solution lies outside the basin of the predicted start; with a constant input, after
    the rod's motion has turned within a step). lam grows by steps tried first at
    LAMBDA_STEPS[0] (the whole step from the last one's unknowns, a fresh Jacobian), doubled
    after a success, halved after a failure down to LAMBDA_STEPS[1]; each solve starts from a
    secant prediction along the path, the discrete model's bay memory from that of the last
    lam solved. At most HOMOTOPY_SOLVES solves. ``path``: (Zh of this step, x and x of the lam
    before at the last lam solved, bays of it). info[INFO_LAMBDA]: the last lam solved.
    The sliding friction's held direction moves along the path too (:func:`_hold_between`),
    from the one the last step used to this step's: a held direction turns where the slide
    does, and from the new one at lam = 0 the last step was no solution (the default robot
    with friction under fast tension changes: 938 scaled residual, t1 turned at 7 holes).
    """
    dyn = pl.dyn
    Zh = dyn.Zh
    c0 = dyn.coef[DYN_C0]
    Zh_step, xa, xb, lam_bays = path
    nt = tau.size
    n_in = last.size
    for row in range(Zh.shape[0]):
        for col in range(Zh.shape[1]):
            Zh_step[row, col] = Zh[row, col]
    for r in range(x.size):
        xa[r] = xs[0, r]
        xb[r] = xs[0, r]
    _copy_bays(good_bays, lam_bays)
    lam, lam_b, dl = 0.0, 0.0, LAMBDA_STEPS[0]
    jac_ok[0] = False
    done = False
    for _ in range(HOMOTOPY_SOLVES):
        target = min(1.0, lam + dl)
        # at lam = 1 exactly this step's history and inputs (a tension at its max_tension
        # must not come out an ulp above it)
        for row in range(Zh.shape[0]):
            for col in range(Zh.shape[1]):
                old = Zt[row, col] - c0 * Zold[row, col]
                Zh[row, col] = (Zh_step[row, col] if target == 1.0 else
                                old + target * (Zh_step[row, col] - old))
        for i in range(n_in):
            new = tau_in[i] if i < nt else (q_in[i - nt] if i < 2 * nt else tip[i - 2 * nt])
            blend[i] = new if target == 1.0 else last[i] + target * (new - last[i])
        # secant prediction along the path (none from lam = 0)
        slope = (target - lam) / (lam - lam_b) if lam > lam_b else 0.0
        for r in range(x.size):
            x[r] = xa[r] + slope * (xa[r] - xb[r])
        _load_axially(pl, x, (target - lam) * jump)
        _hold_between(pl, Zt, target)
        _copy_bays(lam_bays, bays)
        solve(pl, modes, blend[0:nt], blend[nt:2 * nt], blend[2 * nt:], x, J, jac_ok, tol,
              max_iter, math.inf, traj, tau, lengths, bays, w, info)
        stats[0] += info[1]
        stats[1] += info[2]
        if info[3] == CONVERGED:
            if target == 1.0:
                done = True
                break
            for r in range(x.size):
                xb[r] = xa[r]
                xa[r] = x[r]
            lam_b, lam = lam, target
            _copy_bays(bays, lam_bays)
            dl *= 2.0
        else:
            dl *= 0.5
            jac_ok[0] = False
            if dl < LAMBDA_STEPS[1]:
                break
    for row in range(Zh.shape[0]):
        for col in range(Zh.shape[1]):
            Zh[row, col] = Zh_step[row, col]
    info[INFO_LAMBDA] = 1.0 if done else lam
    return done


@kernel
def advance(pl, modes, last, tau_in, q_in, tip, x, xs, J, jac_ok, tol, max_iter, traj, tau,
            lengths, bays, w, info, bdf, Zold, Zt, max_tension, iq, good, record, stats, watch,
            reach):
    """
    Take one time step per row of tau_in, q_in, tip ((n, nt), (n, nt), (n, 6)).

    x: the unknowns of the last step, xs (3, nx): x of the last three steps (predictor, see
    :func:`_step`); last (2 nt + 6): the tensions, displacement inputs and tip wrench of the last
    step; bdf = (c0, c1 + d1 c0, c2, d1);
    Zold, Zt: z and its rate at the last step; pl.dyn.Zh: the history of the next step. After
    each converged step the history moves on: Zt = c0 Z + Zh, Zh = (c1 + d1 c0) Z + c2 Zold +
    d1 Zh, Zold = Z. ``iq``: column of q in the state. ``good`` gets the trajectory of each
    converged step (traj also holds those of failed tries), ``record`` (n, 15 + 2 nt) the tip
    and tendons of each step (REC_*); ``info`` (INFO_SIZE) how a failed step's solves ended.
    ``stats`` accumulates Newton iterations, residual
    evaluations, steps that needed the homotopy (:func:`_homotopy`) and steps that took the
    sliding direction from the step before (:func:`_step`). ``watch``, ``reach``: the coarse
    RK4 steps a converged step may not bring near an obstacle (:func:`near_coarse`; else
    status REGRID).

    Returns (steps taken, status, tendon over its limit or watched step near an obstacle or
    -1). A step that fails leaves x, xs, ``last`` and the history as they were after the last
    good step.
    """
    dyn = pl.dyn
    Z, Zh = dyn.Z, dyn.Zh
    c0, k1, c2, d1 = bdf[0], bdf[1], bdf[2], bdf[3]
    dyn.coef[DYN_C0] = c0
    nx = x.size
    nt = tau.size
    nf = dyn.friction.shape[1]
    end = traj.shape[0] - 1
    blend = np.empty(last.size)
    E, th = np.empty((3, 3)), np.empty(3)
    # the bay memory of the last good step, and the homotopy's scratch
    good_bays = _new_bays(bays)
    path = (np.empty_like(Zh), np.empty(nx), np.empty(nx), _new_bays(bays))
    scratch = np.empty(15)
    for i in range(tau_in.shape[0]):
        if pl.contact.shape.size:
            # with obstacles the discrete model's bays start straight each step: from the
            # poses a refused trial left, the bays' inner fixed point could settle bent away
            # from the tendon (statics/continuation.py's docstring)
            bays.flags[:] = False
        if not _step(pl, modes, last, tau_in[i], q_in[i], tip[i], x, xs, J, jac_ok, tol,
                     max_iter, traj, tau, lengths, bays, good_bays, w, info, blend, Zt, Zold, path,
                     stats):
            for r in range(nx):
                x[r] = xs[0, r]
            _copy_bays(good_bays, bays)
            return i, NOT_CONVERGED, -1
        for t in range(nt):
            if tau[t] > max_tension[t]:
                for r in range(nx):
                    x[r] = xs[0, r]
                _copy_bays(good_bays, bays)
                return i, OVER_TENSION, t
        # a contact the coarse grid would miss: the step is taken again on a finer one
        hit = near_coarse(pl.contact, traj, watch, reach, scratch) if watch.size else -1
        if hit >= 0:
            for r in range(nx):
                x[r] = xs[0, r]
            _copy_bays(good_bays, bays)
            return i, REGRID, hit
        _copy_bays(bays, good_bays)
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
            # the held columns: the rate the step's sliding direction came from (_homotopy)
            for col in range(Z_SIZE + nf, Z.shape[1]):
                Zt[row, col] = Z[row, col]
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
