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
Numba kernels of the 6-RUS parallel continuum robot's kinetostatics.

The model and its equations: :mod:`tendon_robot_sim.models.pcr.kinetostatics`.
Six bare Cosserat rods (:mod:`tendon_robot_sim.models._cosserat_kernels`: ``_rhs_rod`` with
rest curvature, integrated by ``rk4``) coupled through the platform, solved by Newton's
method with a structured finite-difference Jacobian; only ``pcr_solve`` is called from
Python.
"""

from collections import namedtuple
import math

from tendon_robot_sim.models._cosserat_kernels import (CONVERGED, DISCRETE, FAILED, FD_STEP,
                                                       LINEAR, MAX_ITERATIONS, rk4)
from tendon_robot_sim.models._numerics import broyden, gauss_solve, kernel, norm

# 6-RUS parallel continuum robot (:mod:`tendon_robot_sim.models.pcr.kinetostatics`): six
# bare Cosserat rods (_rhs_rod with rest curvature, integrated by rk4) coupled through the
# platform. Unknowns per rod (scaled): base force n(0) / force scale (world, 3), moment
# m_z(0) / moment scale, then q1, q2, q3 (inverse) or q2, q3 (forward, where the pose p_e /
# L and roll, pitch, yaw follow the 36 rod unknowns). Residual: per rod (p_e + R_e C_i -
# p_i(L)) / L and m_i(L) / moment scale (spherical joint), then the platform balance (Eq.
# 3), force and moment about the origin, scaled.

PAPER, DFKI2024 = 0, 1
# Largest Newton step of an angle [rad] or of the platform position [L]: keeps a cold
# start on the branch of its guess.
PCR_MAX_STEP = 0.3

PcrPlan = namedtuple('PcrPlan', [
    'inverse',   # True: motor angles are unknowns (inverse), False: the pose (forward)
    'compat',    # PAPER | DFKI2024 (see pcr.py)
    'mat',       # (18,) as Plan.mat; p0 unused
    'motor_p',   # (6, 3) motor positions, world [m]
    'motor_R',   # (6, 3, 3) motor frames
    'crank',     # crank length l1 [m]
    'joints',    # (6, 3) platform joints C_i, platform frame [m]
    'steps',     # RK4 steps per rod
    'h',         # RK4 step [m]
    'scale',     # (3,) force [N], moment [N m], length [m] of one unit
])

PcrWork = namedtuple('PcrWork', [
    'y',       # (18,) rod state
    'st',      # (3, 18) RK4 scratch
    'K',       # (6, 6) rk4 scratch
    'M',       # (4, 3, 3) rk4 scratch; M[0] R_e
    'rt',      # (1, 1, 9) rk4 routing (unused by bare rods)
    'act',     # (1,) rk4 tendon flags (unused)
    'tau',     # (1,) rk4 tensions (unused)
    'out',     # (6, 9) p(L), n(L), m(L) of each rod at the current iterate
    'keep',    # (9,) saved rod end during a finite-difference probe
    'vec',     # (4, nx) F, F of a trial or probe, trial x, step
    'Jc',      # (nx, nx) copy of the Jacobian for the linear solve
    'traj',    # (steps + 1, 18) trajectory of probe integrations
])


@kernel
def _rotate_axis(Q, axis, angle, out):
    """
    Set out = Q Rot_axis(angle) (axis 0, 1, 2 = x, y, z; out may alias Q).

    Columns j, k after the axis turn to c Q_j + s Q_k and c Q_k - s Q_j.
    """
    j, k = (axis + 1) % 3, (axis + 2) % 3
    c, s = math.cos(angle), math.sin(angle)
    for i in range(3):
        qj, qk = Q[i, j], Q[i, k]
        out[i, axis] = Q[i, axis]
        out[i, j] = c * qj + s * qk
        out[i, k] = c * qk - s * qj


@kernel
def _platform_rotation(roll, pitch, yaw, R):
    """R_e = Rz(yaw) Ry(pitch) Rx(roll)."""
    for i in range(3):
        for j in range(3):
            R[i, j] = 1.0 if i == j else 0.0
    _rotate_axis(R, 2, yaw, R)
    _rotate_axis(R, 1, pitch, R)
    _rotate_axis(R, 0, roll, R)


@kernel
def _pcr_rod(pl, i, x, target, traj, w, out):
    """
    Integrate rod i from its base (paper, Sec. 3.1) into traj; out = p(L), n(L), m(L).

    p0 = p_M + R_M [0, l1 cos q1, l1 sin q1]; R0 = R_M Rx(q1) Ry(q2) Rx(q3) (DFKI2024:
    R_M Ry(q2) Rx(q3)); m(0) = m_z R0 e3 (universal joint: no moment about its two axes;
    DFKI2024: m_z e3, world).
    """
    k = 7 if pl.inverse else 6
    b = k * i
    q1 = x[b + 4] if pl.inverse else target[i]
    q2, q3 = x[b + k - 2], x[b + k - 1]
    y = w.y
    RM, R0 = pl.motor_R[i], w.M[1]
    c1, s1 = pl.crank * math.cos(q1), pl.crank * math.sin(q1)
    for a in range(3):
        y[a] = pl.motor_p[i, a] + RM[a, 1] * c1 + RM[a, 2] * s1
    if pl.compat == PAPER:
        _rotate_axis(RM, 0, q1, R0)
        _rotate_axis(R0, 1, q2, R0)
    else:
        _rotate_axis(RM, 1, q2, R0)
    _rotate_axis(R0, 0, q3, R0)
    fs, ms = pl.scale[0], pl.scale[1]
    for a in range(3):
        for col in range(3):
            y[3 + 3 * a + col] = R0[a, col]
        y[12 + a] = x[b + a] * fs
        y[15 + a] = x[b + 3] * ms * (R0[a, 2] if pl.compat == PAPER else (1.0 if a == 2 else 0.0))
    for a in range(18):
        traj[0, a] = y[a]
    rk4(DISCRETE, LINEAR, pl.mat, w.rt, w.act, w.tau, 0, pl.steps, pl.h, 0, y, traj, w.st,
        w.K, w.M)
    for a in range(3):
        out[a] = y[a]
        out[3 + a] = y[12 + a]
        out[6 + a] = y[15 + a]


@kernel
def _pcr_assemble(pl, x, target, wrench, out, Re, F):
    """
    Assemble the residual F (42) from the rod ends out (6, 9) and the pose (paper, Eqs. 3-5).

    m_i(L) is taken in the world frame (zero iff R_e^T m_i(L) is); DFKI2024 leaves p_e x F out.
    """
    L, fs, ms = pl.scale[2], pl.scale[0], pl.scale[1]
    if pl.inverse:
        pe0, pe1, pe2 = target[0], target[1], target[2]
        _platform_rotation(target[3], target[4], target[5], Re)
    else:
        pe0, pe1, pe2 = x[36] * L, x[37] * L, x[38] * L
        _platform_rotation(x[39], x[40], x[41], Re)
    sf0 = -wrench[0]
    sf1 = -wrench[1]
    sf2 = -wrench[2]
    sm0 = -wrench[3]
    sm1 = -wrench[4]
    sm2 = -wrench[5]
    if pl.compat == PAPER:
        sm0 -= pe1 * wrench[2] - pe2 * wrench[1]
        sm1 -= pe2 * wrench[0] - pe0 * wrench[2]
        sm2 -= pe0 * wrench[1] - pe1 * wrench[0]
    for i in range(6):
        o = out[i]
        C = pl.joints[i]
        F[6 * i] = (pe0 + Re[0, 0] * C[0] + Re[0, 1] * C[1] + Re[0, 2] * C[2] - o[0]) / L
        F[6 * i + 1] = (pe1 + Re[1, 0] * C[0] + Re[1, 1] * C[1] + Re[1, 2] * C[2] - o[1]) / L
        F[6 * i + 2] = (pe2 + Re[2, 0] * C[0] + Re[2, 1] * C[1] + Re[2, 2] * C[2] - o[2]) / L
        for a in range(3):
            F[6 * i + 3 + a] = o[6 + a] / ms
        sf0 += o[3]
        sf1 += o[4]
        sf2 += o[5]
        sm0 += o[1] * o[5] - o[2] * o[4] + o[6]
        sm1 += o[2] * o[3] - o[0] * o[5] + o[7]
        sm2 += o[0] * o[4] - o[1] * o[3] + o[8]
    F[36], F[37], F[38] = sf0 / fs, sf1 / fs, sf2 / fs
    F[39], F[40], F[41] = sm0 / ms, sm1 / ms, sm2 / ms


@kernel
def _pcr_residual(pl, x, target, wrench, traj, w, F):
    """
    Integrate the six rods and assemble F; False if F is not finite.

    The trajectories go into traj (6, steps + 1, 18).
    """
    for i in range(6):
        _pcr_rod(pl, i, x, target, traj[i], w, w.out[i])
    _pcr_assemble(pl, x, target, wrench, w.out, w.M[0], F)
    for r in range(F.size):
        if not math.isfinite(F[r]):
            return False
    return True


@kernel
def _pcr_jacobian(pl, x, target, wrench, F, J, w):
    """
    Compute the forward-difference Jacobian using the block structure.

    A rod unknown moves only its own rod, so its column costs one rod integration (42 instead
    of 6 x 42), and a pose unknown none. w.out must hold the rod ends at x.
    """
    k = 7 if pl.inverse else 6
    Fd = w.vec[1]
    for c in range(x.size):
        xc = x[c]
        step = FD_STEP * max(1.0, abs(xc))
        x[c] = xc + step
        if c < 6 * k:
            i = c // k
            for a in range(9):
                w.keep[a] = w.out[i, a]
            _pcr_rod(pl, i, x, target, w.traj, w, w.out[i])
            _pcr_assemble(pl, x, target, wrench, w.out, w.M[0], Fd)
            for a in range(9):
                w.out[i, a] = w.keep[a]
        else:
            _pcr_assemble(pl, x, target, wrench, w.out, w.M[0], Fd)
        x[c] = xc
        for r in range(x.size):
            J[r, c] = (Fd[r] - F[r]) / step


@kernel
def pcr_solve(pl, target, wrench, x, J, jac_ok, tol, max_iter, traj, w, info):
    """
    Damped Newton iteration on the coupled shooting residual of the parallel robot.

    The Jacobian J (kept by the caller: warm start) is reused, with good-Broyden updates
    after each step, while each step at least halves ||F||_2, and rebuilt
    (:func:`_pcr_jacobian`) otherwise; with a fresh Jacobian a
    failing step is halved (Armijo on ||F||_2). Angle and position steps are capped at
    PCR_MAX_STEP. On return x holds the last accepted iterate, traj (6, steps + 1, 18) its
    rod trajectories, info = [||F||_inf, iterations, rod integrations, status].
    """
    n = x.size
    k = 7 if pl.inverse else 6
    F, Fn, xn, dx = w.vec[0], w.vec[1], w.vec[2], w.vec[3]
    status = MAX_ITERATIONS
    rods = 6
    it = 0
    fnorm = math.inf
    if not _pcr_residual(pl, x, target, wrench, traj, w, F):
        status = FAILED
    else:
        f2 = norm(F, 2)
        fnorm = norm(F, 0)
        at_x = True     # traj and w.out belong to x
        fresh = False
        while status == MAX_ITERATIONS:
            if fnorm <= tol:
                status = CONVERGED
                break
            if it >= max_iter:
                break
            it += 1
            if not jac_ok[0]:
                if not at_x:
                    _pcr_residual(pl, x, target, wrench, traj, w, F)
                    rods += 6
                    at_x = True
                _pcr_jacobian(pl, x, target, wrench, F, J, w)
                rods += 6 * k
                jac_ok[0] = True
                fresh = True
            for r in range(n):
                dx[r] = -F[r]
                for c in range(n):
                    w.Jc[r, c] = J[r, c]
            if not gauss_solve(w.Jc, dx):
                if fresh:
                    status = FAILED
                jac_ok[0] = False
                continue
            big = 0.0
            for r in range(n):
                if r >= 6 * k or r % k >= 4:
                    big = max(big, abs(dx[r]))
            alpha = min(1.0, PCR_MAX_STEP / big) if big > 0.0 else 1.0
            while True:
                for r in range(n):
                    xn[r] = x[r] + alpha * dx[r]
                ok = _pcr_residual(pl, xn, target, wrench, traj, w, Fn)
                rods += 6
                at_x = False
                fn2 = norm(Fn, 2) if ok else math.inf
                if fn2 <= (1.0 - 1e-4 * alpha) * f2:
                    if fn2 > 0.5 * f2:
                        jac_ok[0] = False
                    broyden(J, F, Fn, dx, alpha)
                    for r in range(n):
                        x[r] = xn[r]
                        F[r] = Fn[r]
                    at_x = True
                    f2 = fn2
                    fnorm = norm(F, 0)
                    fresh = False
                    break
                if not fresh:
                    jac_ok[0] = False
                    break
                alpha *= 0.5
                if alpha < 1e-6:
                    status = FAILED
                    break
        if not at_x:
            _pcr_residual(pl, x, target, wrench, traj, w, F)
            rods += 6
    info[0] = fnorm
    info[1] = it
    info[2] = rods
    info[3] = status
