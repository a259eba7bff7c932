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
Six bare Cosserat rods (the LINEAR law of ``_rhs_rod`` in
:mod:`tendon_robot_sim.models._cosserat_kernels`, with rest curvature) coupled through the
platform, solved by Newton's method. The rods are integrated here by :func:`rod_rk4` (the
same classical RK4 as the shared ``rk4``) together with their variational equations, so
each rod's block of the Jacobian is the exact derivative of the discrete residual; the
plain residual goes through the same kernel so that the two belong to one discrete map.
Only ``pcr_solve``, ``pcr_warm_solve``, ``pcr_keep`` and ``pcr_jacobi_determinants`` are
called from Python.
"""

from collections import namedtuple
import math

from tendon_robot_sim.models._cosserat_kernels import (CONVERGED, FAILED, FD_STEP, MAT_KBT,
                                                       MAT_KSE, MAT_RHOAG, MAT_USTAR,
                                                       MAX_ITERATIONS)
from tendon_robot_sim.models._numerics import _pivot, gauss_solve, kernel, norm

# 6-RUS parallel continuum robot (:mod:`tendon_robot_sim.models.pcr.kinetostatics`): six
# bare Cosserat rods (rest curvature, integrated by rod_rk4) coupled through the
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
    'M',       # (4, 3, 3) scratch; M[0] R_e, M[1] R0, M[2] R in rod_rk4, M[3] dR0
    'vec3',    # (2, 3) rod_rk4 scratch: v, u
    'T',       # (15, 7) tangents dp, dR, dm of the rod unknowns (rod_rk4)
    'dn',      # (3, 7) their constant dn
    'tan',     # (3, 15, 7) rod_rk4 scratch of the tangents
    'out',     # (6, 9) p(L), n(L), m(L) of each rod at the last integration
    'outx',    # (6, 9) the same at the current iterate x
    'vec',     # (4, nx) F, F of a trial or probe, trial x, step
    'Jc',      # (nx, nx) copy of the Jacobian for the linear solve
    'traj',    # (steps + 1, 18) trajectory of Jacobian integrations
])

PcrMemory = namedtuple('PcrMemory', [
    # warm-start memory of one kind of solve (inverse or forward): kinetostatics._Memory
    'x',       # (nx,) unknowns being iterated
    'B',       # (6, 9, 7) rod blocks being iterated
    'jac_ok',  # (1,) bool: B may be used (else it is computed exactly first)
    'x_last',  # (nx,) the last solution
    'B_last',  # (6, 9, 7) its blocks
    'u',       # (12,) its inputs: target (6) and wrench (6)
    'S',       # (nx, 12) secant estimate of dx/du
    'du',      # (12,) scratch: inputs minus u
    'solved',  # (1,) bool: x_last, B_last and u hold a solution
])


# --------------------------------------------------------------------------- rod and its tangents


@kernel
def _rod_rates(mat, y, R, v, u, dy):
    """
    Write dy/ds of the bare rod (``_rhs_rod``, LINEAR law) into dy.

    y = p, R (row-major), n, m; v = e3 + R^T n / Kse, u = u* + R^T m / Kbt; p_s = R v,
    R_s = R u^, n_s = -rho A g, m_s = -p_s x n. R (3, 3), v and u (scratch) keep R, the
    strain and the curvature for :func:`_tangent_rates`.
    """
    r00, r01, r02, r10, r11, r12 = y[3], y[4], y[5], y[6], y[7], y[8]
    r20, r21, r22 = y[9], y[10], y[11]
    n0, n1, n2, m0, m1, m2 = y[12], y[13], y[14], y[15], y[16], y[17]
    v0 = (r00 * n0 + r10 * n1 + r20 * n2) / mat[MAT_KSE]
    v1 = (r01 * n0 + r11 * n1 + r21 * n2) / mat[MAT_KSE + 1]
    v2 = 1.0 + (r02 * n0 + r12 * n1 + r22 * n2) / mat[MAT_KSE + 2]
    u0 = (r00 * m0 + r10 * m1 + r20 * m2) / mat[MAT_KBT] + mat[MAT_USTAR]
    u1 = (r01 * m0 + r11 * m1 + r21 * m2) / mat[MAT_KBT + 1] + mat[MAT_USTAR + 1]
    u2 = (r02 * m0 + r12 * m1 + r22 * m2) / mat[MAT_KBT + 2] + mat[MAT_USTAR + 2]
    ps0 = r00 * v0 + r01 * v1 + r02 * v2
    ps1 = r10 * v0 + r11 * v1 + r12 * v2
    ps2 = r20 * v0 + r21 * v1 + r22 * v2
    dy[0], dy[1], dy[2] = ps0, ps1, ps2
    dy[3], dy[4], dy[5] = r01 * u2 - r02 * u1, r02 * u0 - r00 * u2, r00 * u1 - r01 * u0
    dy[6], dy[7], dy[8] = r11 * u2 - r12 * u1, r12 * u0 - r10 * u2, r10 * u1 - r11 * u0
    dy[9], dy[10], dy[11] = r21 * u2 - r22 * u1, r22 * u0 - r20 * u2, r20 * u1 - r21 * u0
    dy[12], dy[13], dy[14] = -mat[MAT_RHOAG], -mat[MAT_RHOAG + 1], -mat[MAT_RHOAG + 2]
    dy[15] = -(ps1 * n2 - ps2 * n1)
    dy[16] = -(ps2 * n0 - ps0 * n2)
    dy[17] = -(ps0 * n1 - ps1 * n0)
    R[0, 0], R[0, 1], R[0, 2] = r00, r01, r02
    R[1, 0], R[1, 1], R[1, 2] = r10, r11, r12
    R[2, 0], R[2, 1], R[2, 2] = r20, r21, r22
    v[0], v[1], v[2] = v0, v1, v2
    u[0], u[1], u[2] = u0, u1, u2


@kernel
def _tangent_rates(mat, y, R, v, u, dy, T, dn, nc, dT):
    """
    Write the rates of the rod's tangents T (15, nc) into dT.

    The variational equations of :func:`_rod_rates`, evaluated after it at the same y.
    Column c of T is dp, dR (row-major), dm; its dn[:, c] is constant (n_s does not depend
    on y): dv = (dR^T n + R^T dn) / Kse, du = (dR^T m + R^T dm) / Kbt,
    dp_s = dR v + R dv, dR_s = dR u^ + R du^, dm_s = -(dp_s x n + p_s x dn).
    """
    n0, n1, n2, m0, m1, m2 = y[12], y[13], y[14], y[15], y[16], y[17]
    for c in range(nc):
        e0, e1, e2 = dn[0, c], dn[1, c], dn[2, c]
        dv = (T[3, c] * n0 + T[6, c] * n1 + T[9, c] * n2
              + R[0, 0] * e0 + R[1, 0] * e1 + R[2, 0] * e2) / mat[MAT_KSE]
        dv1 = (T[4, c] * n0 + T[7, c] * n1 + T[10, c] * n2
               + R[0, 1] * e0 + R[1, 1] * e1 + R[2, 1] * e2) / mat[MAT_KSE + 1]
        dv2 = (T[5, c] * n0 + T[8, c] * n1 + T[11, c] * n2
               + R[0, 2] * e0 + R[1, 2] * e1 + R[2, 2] * e2) / mat[MAT_KSE + 2]
        du0 = (T[3, c] * m0 + T[6, c] * m1 + T[9, c] * m2
               + R[0, 0] * T[12, c] + R[1, 0] * T[13, c] + R[2, 0] * T[14, c]) / mat[MAT_KBT]
        du1 = (T[4, c] * m0 + T[7, c] * m1 + T[10, c] * m2
               + R[0, 1] * T[12, c] + R[1, 1] * T[13, c] + R[2, 1] * T[14, c]) / mat[MAT_KBT + 1]
        du2 = (T[5, c] * m0 + T[8, c] * m1 + T[11, c] * m2
               + R[0, 2] * T[12, c] + R[1, 2] * T[13, c] + R[2, 2] * T[14, c]) / mat[MAT_KBT + 2]
        for a in range(3):
            r = 3 + 3 * a
            dT[a, c] = (T[r, c] * v[0] + T[r + 1, c] * v[1] + T[r + 2, c] * v[2]
                        + R[a, 0] * dv + R[a, 1] * dv1 + R[a, 2] * dv2)
            dT[r, c] = (T[r + 1, c] * u[2] - T[r + 2, c] * u[1]
                        + R[a, 1] * du2 - R[a, 2] * du1)
            dT[r + 1, c] = (T[r + 2, c] * u[0] - T[r, c] * u[2]
                            + R[a, 2] * du0 - R[a, 0] * du2)
            dT[r + 2, c] = (T[r, c] * u[1] - T[r + 1, c] * u[0]
                            + R[a, 0] * du1 - R[a, 1] * du0)
        q0, q1, q2 = dT[0, c], dT[1, c], dT[2, c]
        dT[12, c] = -(q1 * n2 - q2 * n1 + dy[1] * e2 - dy[2] * e1)
        dT[13, c] = -(q2 * n0 - q0 * n2 + dy[2] * e0 - dy[0] * e2)
        dT[14, c] = -(q0 * n1 - q1 * n0 + dy[0] * e1 - dy[1] * e0)


@kernel
def rod_rk4(mat, steps, h, y, traj, T, dn, nc, w):
    """
    Integrate the bare rod (y, 18) and nc tangents (T, (15, nc)) by RK4 steps of h.

    The tangents follow the variational equations through the same RK4 stages, so T at
    the end is the exact derivative of the discrete RK4 map (forward-mode differentiation
    of an explicit Runge-Kutta scheme is that scheme applied to the variational
    equations). Each step's y goes to traj[step + 1]. w: RodWork scratch.
    """
    dy, acc, yt = w.st[0], w.st[1], w.st[2]
    Tt, dT, accT = w.tan[0], w.tan[1], w.tan[2]
    R, v, u = w.M[2], w.vec3[0], w.vec3[1]
    for step in range(steps):
        for i in range(18):
            yt[i] = y[i]
            acc[i] = 0.0
        for i in range(15):
            for c in range(nc):
                Tt[i, c] = T[i, c]
                accT[i, c] = 0.0
        for stage in range(4):
            # stages at s, s + h/2, s + h/2, s + h with weights 1, 2, 2, 1
            _rod_rates(mat, yt, R, v, u, dy)
            if nc > 0:
                _tangent_rates(mat, yt, R, v, u, dy, Tt, dn, nc, dT)
            weight = 1.0 if stage == 0 or stage == 3 else 2.0
            advance = h if stage == 2 else 0.5 * h
            for i in range(18):
                acc[i] += weight * dy[i]
                yt[i] = y[i] + advance * dy[i]
            for i in range(15):
                for c in range(nc):
                    accT[i, c] += weight * dT[i, c]
                    Tt[i, c] = T[i, c] + advance * dT[i, c]
        for i in range(18):
            y[i] += h / 6.0 * acc[i]
            traj[step + 1, i] = y[i]
        for i in range(15):
            for c in range(nc):
                T[i, c] += h / 6.0 * accT[i, c]


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
def _axis_derivative(Q, axis, out):
    """Set out = Q e_axis^ = d/dt [Q Rot_axis(t)] at t = 0 (see :func:`_rotate_axis`)."""
    j, k = (axis + 1) % 3, (axis + 2) % 3
    for i in range(3):
        out[i, axis] = 0.0
        out[i, j] = Q[i, k]
        out[i, k] = -Q[i, j]


@kernel
def _rod_tangents(pl, i, x, b, k, q1, q2, q3, w):
    """
    Set the tangents (w.T, w.dn) of rod i's base state to its k unknowns x[b:b + k].

    n(0) = x[b:b + 3] fs; m(0) = x[b + 3] ms R0 e3 (DFKI2024: e3); the angles move p0
    (q1 only) and R0 (each factor of R0 = R_M Rx(q1) Ry(q2) Rx(q3) differentiated in
    turn; DFKI2024: R_M Ry(q2) Rx(q3)) and, through R0 e3, m(0).
    """
    T, dn, R0, D, A = w.T, w.dn, w.M[1], w.M[3], w.M[2]
    RM = pl.motor_R[i]
    fs, ms = pl.scale[0], pl.scale[1]
    paper = pl.compat == PAPER
    for c in range(k):
        for r in range(15):
            T[r, c] = 0.0
        for a in range(3):
            dn[a, c] = 0.0
    for a in range(3):
        dn[a, a] = fs
        T[12 + a, 3] = ms * (R0[a, 2] if paper else (1.0 if a == 2 else 0.0))
    for c in range(4, k):
        angle = c - (k - 3)         # 0, 1, 2: q1, q2, q3 (forward: q2, q3)
        if angle == 0:
            for a in range(3):
                T[a, c] = pl.crank * (RM[a, 2] * math.cos(q1) - RM[a, 1] * math.sin(q1))
            if not paper:
                continue
            _rotate_axis(RM, 0, q1, A)
            _axis_derivative(A, 0, D)
            _rotate_axis(D, 1, q2, D)
            _rotate_axis(D, 0, q3, D)
        elif angle == 1:
            if paper:
                _rotate_axis(RM, 0, q1, A)
                _rotate_axis(A, 1, q2, A)
            else:
                _rotate_axis(RM, 1, q2, A)
            _axis_derivative(A, 1, D)
            _rotate_axis(D, 0, q3, D)
        else:
            _axis_derivative(R0, 0, D)
        for a in range(3):
            for col in range(3):
                T[3 + 3 * a + col, c] = D[a, col]
            if paper:
                T[12 + a, c] = x[b + 3] * ms * D[a, 2]


@kernel
def _rod_base(pl, i, x, target, traj, w, tangents):
    """
    Set w.y and traj[0] to rod i's base state (paper, Sec. 3.1); return the tangent count.

    p0 = p_M + R_M [0, l1 cos q1, l1 sin q1]; R0 = R_M Rx(q1) Ry(q2) Rx(q3) (DFKI2024:
    R_M Ry(q2) Rx(q3)); m(0) = m_z R0 e3 (universal joint: no moment about its two axes;
    DFKI2024: m_z e3, world). With ``tangents``, w.T and w.dn are set to the derivatives of
    the base state with respect to the rod's unknowns (columns as in x), else 0 is returned.
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
    if not tangents:
        return 0
    _rod_tangents(pl, i, x, b, k, q1, q2, q3, w)
    return k


@kernel
def _pcr_rod(pl, i, x, target, traj, w, out, tangents):
    """
    Integrate rod i from its base (:func:`_rod_base`) into traj; out = p(L), n(L), m(L).

    With ``tangents``, w.T and w.dn end as the derivatives of p(L), R(L), m(L) and n(L)
    with respect to the rod's unknowns (columns as in x).
    """
    y = w.y
    nc = _rod_base(pl, i, x, target, traj, w, tangents)
    rod_rk4(pl.mat, pl.steps, pl.h, y, traj, w.T, w.dn, nc, w)
    for a in range(3):
        out[a] = y[a]
        out[3 + a] = y[12 + a]
        out[6 + a] = y[15 + a]


@kernel
def _determinant(A):
    """Return det A (n, n) by Gaussian elimination with partial pivoting; A is overwritten."""
    n = A.shape[0]
    det = 1.0
    for c in range(n):
        piv = _pivot(A, c, n)
        if piv < 0:
            return 0.0
        if piv != c:
            det = -det
            for k in range(c, n):
                A[c, k], A[piv, k] = A[piv, k], A[c, k]
        det *= A[c, c]
        for r in range(c + 1, n):
            f = A[r, c] / A[c, c]
            for k in range(c + 1, n):
                A[r, k] -= f * A[c, k]
    return det


@kernel
def pcr_jacobi_determinants(pl, x, target, traj, w, J, dets):
    """
    Set dets (pl.steps, 6) to det d[p(s) / L, theta(s)] / d[rod unknowns] of each rod.

    ``pl`` a forward plan: the unknowns of rod i are n(0), m_z, q2, q3 (x[6 i:6 i + 6], the
    motor angles in target), the six parameters of the solutions from its base that keep
    its base conditions. Row j after RK4 step j + 1, by the variational equations
    (:func:`rod_rk4`); theta the rotation in the body frame (R^T dR). J (6, 6) is scratch.
    Where the determinant changes sign, the rod has a conjugate point (Jacobi's condition).
    """
    length = pl.h * pl.steps
    y, T = w.y, w.T
    for i in range(6):
        nc = _rod_base(pl, i, x, target, traj, w, True)
        for j in range(pl.steps):
            rod_rk4(pl.mat, 1, pl.h, y, traj, T, w.dn, nc, w)
            for c in range(6):
                for a in range(3):
                    J[a, c] = T[a, c] / length
                J[3, c], J[4, c], J[5, c] = 0.0, 0.0, 0.0
                for a in range(3):
                    r = 3 + 3 * a
                    # (R^T dR)[2, 1], [0, 2], [1, 0]
                    J[3, c] += y[r + 2] * T[r + 1, c]
                    J[4, c] += y[r] * T[r + 2, c]
                    J[5, c] += y[r + 1] * T[r, c]
            dets[j, i] = _determinant(J)


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
        _pcr_rod(pl, i, x, target, traj[i], w, w.out[i], False)
    _pcr_assemble(pl, x, target, wrench, w.out, w.M[0], F)
    for r in range(F.size):
        if not math.isfinite(F[r]):
            return False
    return True


@kernel
def _pcr_blocks(pl, x, target, w, B):
    """
    Set B (6, 9, k) to the exact derivatives of each rod end (p, n, m)(L) by its k unknowns.

    A rod's unknowns move only its own rod end: one integration of the rod with its k
    tangents (:func:`rod_rk4`) gives its block, the derivatives of the discrete RK4 map.
    Also sets w.out to the rod ends at x (not traj).
    """
    k = 7 if pl.inverse else 6
    T, dn = w.T, w.dn
    for i in range(6):
        _pcr_rod(pl, i, x, target, w.traj, w, w.out[i], True)
        for c in range(k):
            for a in range(3):
                B[i, a, c] = T[a, c]
                B[i, 3 + a, c] = dn[a, c]
                B[i, 6 + a, c] = T[12 + a, c]


@kernel
def _block_broyden(B, k, x, xn, out, outn):
    """
    Apply a good-Broyden update to each rod's block after the step x -> xn.

    The rod ends moved from out to outn (6, 9): B_i += (d_i - B_i s_i) s_i^T / (s_i^T s_i)
    with s_i the step of rod i's k unknowns. Six rank-one secants per step (one per
    rod) keep the blocks close to the derivatives; n(L) = n(0) - rho A g L is linear
    and its rows stay exact.
    """
    for i in range(6):
        b = k * i
        ss = 0.0
        for c in range(k):
            ss += (xn[b + c] - x[b + c]) ** 2
        if not ss > 0.0:
            continue
        for r in range(9):
            corr = outn[i, r] - out[i, r]
            for c in range(k):
                corr -= B[i, r, c] * (xn[b + c] - x[b + c])
            corr /= ss
            for c in range(k):
                B[i, r, c] += corr * (xn[b + c] - x[b + c])


@kernel
def _pcr_jacobian(pl, x, target, wrench, F, B, out, J, w):
    """
    Assemble the Jacobian J of F at x from the rod blocks B and the rod ends out at x.

    The rod rows are -dp/L and dm/ms, the platform rows dn/fs and d(p x n + m)/ms
    (:func:`_pcr_assemble` differentiated); a pose unknown (forward) moves no rod, its
    column is a forward difference of the assembly alone.
    """
    k = 7 if pl.inverse else 6
    L, fs, ms = pl.scale[2], pl.scale[0], pl.scale[1]
    for c in range(x.size):
        for r in range(x.size):
            J[r, c] = 0.0
    for i in range(6):
        o, Bi = out[i], B[i]
        for c in range(k):
            col = k * i + c
            dp0, dp1, dp2 = Bi[0, c], Bi[1, c], Bi[2, c]
            e0, e1, e2 = Bi[3, c], Bi[4, c], Bi[5, c]
            for a in range(3):
                J[6 * i + a, col] = -Bi[a, c] / L
                J[6 * i + 3 + a, col] = Bi[6 + a, c] / ms
                J[36 + a, col] = Bi[3 + a, c] / fs
            J[39, col] = (dp1 * o[5] - dp2 * o[4] + o[1] * e2 - o[2] * e1 + Bi[6, c]) / ms
            J[40, col] = (dp2 * o[3] - dp0 * o[5] + o[2] * e0 - o[0] * e2 + Bi[7, c]) / ms
            J[41, col] = (dp0 * o[4] - dp1 * o[3] + o[0] * e1 - o[1] * e0 + Bi[8, c]) / ms
    Fd = w.vec[1]
    for c in range(6 * k, x.size):
        xc = x[c]
        step = FD_STEP * max(1.0, abs(xc))
        x[c] = xc + step
        _pcr_assemble(pl, x, target, wrench, out, w.M[0], Fd)
        x[c] = xc
        for r in range(x.size):
            J[r, c] = (Fd[r] - F[r]) / step


@kernel
def pcr_solve(pl, target, wrench, x, B, jac_ok, tol, max_iter, traj, w, info):
    """
    Damped Newton iteration on the coupled shooting residual of the parallel robot.

    The Jacobian is assembled at each iterate from the rod blocks B (6, 9, 7): the
    derivatives of each rod end by its own unknowns, kept by the caller (warm start).
    They are computed exactly (:func:`_pcr_blocks`) when jac_ok is False, and otherwise
    follow each step by a good-Broyden update per rod (:func:`_block_broyden`); they are
    recomputed after a step that does not reduce ||F||_2 ten-fold. With fresh blocks a
    failing step is halved (Armijo on ||F||_2). Angle and position steps are capped at
    PCR_MAX_STEP. On return x holds the last accepted iterate, traj (6, steps + 1, 18) its
    rod trajectories, info = [||F||_inf, iterations, rod integrations, status] (an
    integration with tangents counts as one).
    """
    n = x.size
    k = 7 if pl.inverse else 6
    F, Fn, xn, dx = w.vec[0], w.vec[1], w.vec[2], w.vec[3]
    outx = w.outx
    status = MAX_ITERATIONS
    rods = 6
    it = 0
    fnorm = math.inf
    if not _pcr_residual(pl, x, target, wrench, traj, w, F):
        status = FAILED
    else:
        for i in range(6):
            for a in range(9):
                outx[i, a] = w.out[i, a]
        f2 = norm(F, 2)
        fnorm = norm(F, 0)
        at_x = True     # traj belongs to x
        fresh = False
        while status == MAX_ITERATIONS:
            if fnorm <= tol:
                status = CONVERGED
                break
            if it >= max_iter:
                break
            it += 1
            if not jac_ok[0]:
                _pcr_blocks(pl, x, target, w, B)
                rods += 6
                jac_ok[0] = True
                fresh = True
            _pcr_jacobian(pl, x, target, wrench, F, B, outx, w.Jc, w)
            for r in range(n):
                dx[r] = -F[r]
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
                    if fn2 > 0.1 * f2:
                        jac_ok[0] = False
                    _block_broyden(B, k, x, xn, outx, w.out)
                    for r in range(n):
                        x[r] = xn[r]
                        F[r] = Fn[r]
                    for i in range(6):
                        for a in range(9):
                            outx[i, a] = w.out[i, a]
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


# --------------------------------------------------------------------------- warm starts


@kernel
def _inputs_step(target, wrench, mem):
    """Set mem.du to the inputs (target, wrench) minus those of the last solution."""
    for r in range(6):
        mem.du[r] = target[r] - mem.u[r]
        mem.du[6 + r] = wrench[r] - mem.u[6 + r]


@kernel
def _restore(mem, predict):
    """
    Start from the last solution, with its blocks; moved by x += S du when ``predict``.

    du: the inputs' step (:func:`_inputs_step`).
    """
    nu = mem.du.size
    for r in range(mem.x.size):
        step = 0.0
        if predict:
            for c in range(nu):
                step += mem.S[r, c] * mem.du[c]
        mem.x[r] = mem.x_last[r] + step
    mem.B[:] = mem.B_last
    mem.jac_ok[0] = True


@kernel
def pcr_keep(target, wrench, mem):
    """
    Remember the solution mem.x (blocks mem.B) of the inputs; update S by its secant.

    Good Broyden on the solutions: S += (dx - S du) du^T / (du^T du), dx = x - x_last,
    du the inputs' step, so that x_last + S du predicts the next start along a path.
    """
    nu = mem.du.size
    if mem.solved[0]:
        _inputs_step(target, wrench, mem)
        dd = 0.0
        for c in range(nu):
            dd += mem.du[c] * mem.du[c]
        if dd > 0.0:
            for r in range(mem.x.size):
                corr = mem.x[r] - mem.x_last[r]
                for c in range(nu):
                    corr -= mem.S[r, c] * mem.du[c]
                corr /= dd
                for c in range(nu):
                    mem.S[r, c] += corr * mem.du[c]
    mem.solved[0] = True
    for r in range(6):
        mem.u[r] = target[r]
        mem.u[6 + r] = wrench[r]
    mem.x_last[:] = mem.x
    mem.B_last[:] = mem.B


@kernel
def pcr_warm_solve(pl, target, wrench, mem, tol, max_iter, traj, w, info):
    """
    Solve from the last solution (mem.solved): predicted by its secant, then as it was.

    :func:`pcr_solve` from x_last + S du, then from x_last, each with the last blocks; the
    first that converges is kept (:func:`pcr_keep`). info as pcr_solve's, with the
    iterations and rod integrations of both attempts; True if one converged.
    """
    iterations = 0.0
    rods = 0.0
    for predict in (True, False):
        _inputs_step(target, wrench, mem)
        _restore(mem, predict)
        pcr_solve(pl, target, wrench, mem.x, mem.B, mem.jac_ok, tol, max_iter, traj, w, info)
        iterations += info[1]
        rods += info[2]
        if info[3] == CONVERGED:
            break
    info[1] = iterations
    info[2] = rods
    if info[3] != CONVERGED:
        return False
    pcr_keep(target, wrench, mem)
    return True
