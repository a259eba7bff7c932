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
Numba kernels of the Cosserat rod shared by the rod statics and the parallel robot.

The tendon robot's shooting solver (:mod:`tendon_robot_sim.models.rod._statics_kernels`)
and the 6-RUS parallel robot's (:mod:`tendon_robot_sim.models.pcr._kernels`) integrate
the same rod: the constitutive laws, the ODE right-hand sides (a bare rod, or a rod
loaded by routed tendons) and a fixed-step RK4 over one segment.

Symbols (Rucker & Webster 2011, "Statics and Dynamics of Continuum Robots With General
Tendon Routing and External Loading", IEEE T-RO 27(6); Till's ContinuumRobotExamples):

=========  ===============================================================  ==========
``p``      backbone position, world frame                                    m
``R``      backbone orientation, columns d1 d2 d3, stored row-major          -
``v``      shear/extension strain, body frame (p_s = R v)                    -
``u``      curvature/twist, body frame (R_s = R u^)                          1/m
``n, m``   internal force and moment (``nb``, ``mb`` in the body frame)      N, N m
``Kse``    diagonal of the shear/extension stiffness                         N
``Kbt``    diagonal of the bending/torsion stiffness                         N m^2
``tau``    tendon tensions                                                   N
``r``      tendon hole in the cross-section, body frame (``rs``, ``rss``:    m, -, 1/m
           first and second derivatives with respect to s)
``pb``     tendon tangent pb_si = u x r + r_s + v, body frame (R&W Eq. 15)   -
=========  ===============================================================  ==========

``s`` is the arc length of the undeformed rod (reference arc length) throughout.

"""

import math

from tendon_robot_sim.models._numerics import inverse3, kernel

COSSERAT, KIRCHHOFF, DISCRETE = 0, 1, 2
LINEAR, PYELASTICA = 0, 1
# Newton solve status codes (the rod and the parallel robot)
CONVERGED, MAX_ITERATIONS, FAILED = 0, 1, 2
# Relative finite-difference step of the Jacobians: residuals are smooth to ~1e-13,
# so 1e-7 balances truncation against round-off (both ~1e-7 relative in J).
FD_STEP = 1e-7
# Slices of the material vector (Plan.mat, PcrPlan.mat)
MAT_KSE, MAT_KBT, MAT_RHOAG, MAT_GRAVITY, MAT_P0, MAT_USTAR = 0, 3, 6, 9, 12, 15


# --------------------------------------------------------------------------- constitutive law


@kernel
def _dilatation(w0, w1, w2, law):
    """
    Dilatation e = |v| for the strain v = e3 + e w, w = Kse^-1 nb.

    LINEAR (Rucker & Webster Sec. II): nb = Kse (v - e3), so v = e3 + w and e is taken
    as 1 (it does not enter the law). PYELASTICA (Gazzola et al. 2018, PyElastica 1.0):
    nb = Kse (v - e3) / e with e = |v|; |e3 + e w| = e gives
    e = 1 / (sqrt(1 - w1^2 - w2^2) - w3). NaN if no such strain exists.
    """
    if law == LINEAR:
        return 1.0
    c = 1.0 - w0 * w0 - w1 * w1
    if not c > 0.0:
        return math.nan
    den = math.sqrt(c) - w2
    if not den > 0.0:
        return math.nan
    return 1.0 / den


@kernel
def strain_from_force(nb, mat, law, v):
    """Strain v (3,) from the body-frame internal force nb; returns the dilatation e."""
    w0 = nb[0] / mat[MAT_KSE]
    w1 = nb[1] / mat[MAT_KSE + 1]
    w2 = nb[2] / mat[MAT_KSE + 2]
    e = _dilatation(w0, w1, w2, law)
    v[0] = e * w0
    v[1] = e * w1
    v[2] = 1.0 + e * w2
    return e


@kernel
def force_from_strain(v, mat, law, nb):
    """Body-frame internal force nb from the strain v; returns the dilatation e."""
    e = 1.0
    if law == PYELASTICA:
        e = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    nb[0] = mat[MAT_KSE] * v[0] / e
    nb[1] = mat[MAT_KSE + 1] * v[1] / e
    nb[2] = mat[MAT_KSE + 2] * (v[2] - 1.0) / e
    return e


@kernel
def _kinematics(y, v0, v1, v2, u0, u1, u2, dy):
    """p_s = R v and R_s = R u^ (row i of R u^ is row i of R x u)."""
    for i in range(3):
        ri0, ri1, ri2 = y[3 + 3 * i], y[4 + 3 * i], y[5 + 3 * i]
        dy[i] = ri0 * v0 + ri1 * v1 + ri2 * v2
        dy[3 + 3 * i] = ri1 * u2 - ri2 * u1
        dy[4 + 3 * i] = ri2 * u0 - ri0 * u2
        dy[5 + 3 * i] = ri0 * u1 - ri1 * u0


@kernel
def _rhs_rod(law, mat, y, dy):
    """
    Write dy/ds of a bare Cosserat rod into dy.

    Discrete model between vertebrae, rods of a parallel robot; y = p, R, n, m (world frame):
    v and u - u* from the constitutive law (u* the rest curvature), n_s = -rho A g,
    m_s = -p_s x n.
    """
    n0, n1, n2 = y[12], y[13], y[14]
    m0, m1, m2 = y[15], y[16], y[17]
    # R^T n / Kse and R^T m / Kbt
    w0 = (y[3] * n0 + y[6] * n1 + y[9] * n2) / mat[MAT_KSE]
    w1 = (y[4] * n0 + y[7] * n1 + y[10] * n2) / mat[MAT_KSE + 1]
    w2 = (y[5] * n0 + y[8] * n1 + y[11] * n2) / mat[MAT_KSE + 2]
    e = _dilatation(w0, w1, w2, law)
    e3 = e * e * e
    _kinematics(y, e * w0, e * w1, 1.0 + e * w2,
                e3 * (y[3] * m0 + y[6] * m1 + y[9] * m2) / mat[MAT_KBT] + mat[MAT_USTAR],
                e3 * (y[4] * m0 + y[7] * m1 + y[10] * m2) / mat[MAT_KBT + 1]
                + mat[MAT_USTAR + 1],
                e3 * (y[5] * m0 + y[8] * m1 + y[11] * m2) / mat[MAT_KBT + 2]
                + mat[MAT_USTAR + 2], dy)
    p0, p1, p2 = dy[0], dy[1], dy[2]
    dy[12] = -mat[MAT_RHOAG]
    dy[13] = -mat[MAT_RHOAG + 1]
    dy[14] = -mat[MAT_RHOAG + 2]
    dy[15] = -(p1 * n2 - p2 * n1)
    dy[16] = -(p2 * n0 - p0 * n2)
    dy[17] = -(p0 * n1 - p1 * n0)


@kernel
def _rhs_tendons(kirchhoff, law, mat, y, rt, act, tau, dy, K, M):
    """
    Write dy/ds of a rod with tendons routed along it into dy (R&W Eqs. 15-17).

    y = p, R, v (Cosserat) or nb (Kirchhoff), u, tendon lengths.

    Sums over the tendons (Eq. 15), with pb = u x r + r_s + v:
    A_i = -tau (pb^)^2 / |pb|^3, G_i = -A_i r^, H_i = r^ G_i = -r^ A_i r^,
    a_i = A_i (u x (pb + r_s) + r_ss), b_i = r x a_i; |pb| is the tendon length per
    unit s. Cosserat (Eq. 16): [[Kn + A, G], [Km + G^T, Ku + H]] [v_s; u_s] =
    [-u x nb - R^T rho A g - a; -u x mb - v x nb - b], solved by block elimination; for
    the LINEAR law Kn = Kse, Ku = Kbt, Km = 0, the PYELASTICA law uses the derivatives
    of nb = Kse (v - e3)/|v| and mb = Kbt u/|v|^3 (Kn = dnb/dv, Km = dmb/dv,
    Ku = dmb/du). Kirchhoff (Eq. 17), v = e3: (Kbt + H) u_s = -u x Kbt u - e3 x nb - b,
    nb_s = -u x nb - G u_s - a - R^T rho A g. Scratch: K (6, 6), M (4, 3, 3).
    """
    u0, u1, u2 = y[15], y[16], y[17]
    Kse0, Kse1, Kse2 = mat[MAT_KSE], mat[MAT_KSE + 1], mat[MAT_KSE + 2]
    Kbt0, Kbt1, Kbt2 = mat[MAT_KBT], mat[MAT_KBT + 1], mat[MAT_KBT + 2]
    if kirchhoff:
        v0, v1, v2 = 0.0, 0.0, 1.0
        nb0, nb1, nb2 = y[12], y[13], y[14]
        e = 1.0
    else:
        v0, v1, v2 = y[12], y[13], y[14]
        e = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2) if law == PYELASTICA else 1.0
        nb0, nb1, nb2 = Kse0 * v0 / e, Kse1 * v1 / e, Kse2 * (v2 - 1.0) / e
    e3 = e * e * e
    mb0, mb1, mb2 = Kbt0 * u0 / e3, Kbt1 * u1 / e3, Kbt2 * u2 / e3
    # K: Cosserat 6x6 matrix of Eq. (16); Kirchhoff Kbt + H in K[0:3, 0:3], G in K[0:3, 3:6]
    for i in range(6):
        for j in range(6):
            K[i, j] = 0.0
    if kirchhoff or law == LINEAR:
        K[0, 0], K[1, 1], K[2, 2] = (Kbt0, Kbt1, Kbt2) if kirchhoff else (Kse0, Kse1, Kse2)
        if not kirchhoff:
            K[3, 3], K[4, 4], K[5, 5] = Kbt0, Kbt1, Kbt2
    else:
        nb = (nb0, nb1, nb2)
        mb = (mb0, mb1, mb2)
        v = (v0, v1, v2)
        for i in range(3):
            for j in range(3):
                K[i, j] = -nb[i] * v[j] / (e * e)
                K[3 + i, j] = -3.0 * mb[i] * v[j] / (e * e)
        K[0, 0] += Kse0 / e
        K[1, 1] += Kse1 / e
        K[2, 2] += Kse2 / e
        K[3, 3], K[4, 4], K[5, 5] = Kbt0 / e3, Kbt1 / e3, Kbt2 / e3
    A, G, H = M[0], M[1], M[2]          # A_i, G_i, H_i of the current tendon
    a0 = a1 = a2 = b0 = b1 = b2 = 0.0
    for t in range(act.size):
        if not act[t]:
            dy[18 + t] = 0.0
            continue
        rr = rt[t]
        r0, r1, r2 = rr[0], rr[1], rr[2]
        s0, s1, s2 = rr[3], rr[4], rr[5]
        # pb = u x r + r_s + v
        pb0 = u1 * r2 - u2 * r1 + s0 + v0
        pb1 = u2 * r0 - u0 * r2 + s1 + v1
        pb2 = u0 * r1 - u1 * r0 + s2 + v2
        pb_norm2 = pb0 * pb0 + pb1 * pb1 + pb2 * pb2
        nrm = math.sqrt(pb_norm2)
        dy[18 + t] = nrm
        if tau[t] == 0.0:
            continue
        c = tau[t] / (pb_norm2 * nrm)
        A[0, 0] = c * (pb_norm2 - pb0 * pb0)
        A[1, 1] = c * (pb_norm2 - pb1 * pb1)
        A[2, 2] = c * (pb_norm2 - pb2 * pb2)
        A[0, 1] = A[1, 0] = -c * pb0 * pb1
        A[0, 2] = A[2, 0] = -c * pb0 * pb2
        A[1, 2] = A[2, 1] = -c * pb1 * pb2
        for i in range(3):
            # row i of G = r x row i of A
            G[i, 0] = r1 * A[i, 2] - r2 * A[i, 1]
            G[i, 1] = r2 * A[i, 0] - r0 * A[i, 2]
            G[i, 2] = r0 * A[i, 1] - r1 * A[i, 0]
        for j in range(3):
            # column j of H = r x column j of G
            H[0, j] = r1 * G[2, j] - r2 * G[1, j]
            H[1, j] = r2 * G[0, j] - r0 * G[2, j]
            H[2, j] = r0 * G[1, j] - r1 * G[0, j]
        # a_i = A (u x (pb + r_s) + r_ss)
        q0, q1, q2 = pb0 + s0, pb1 + s1, pb2 + s2
        w0 = u1 * q2 - u2 * q1 + rr[6]
        w1 = u2 * q0 - u0 * q2 + rr[7]
        w2 = u0 * q1 - u1 * q0 + rr[8]
        ai0 = A[0, 0] * w0 + A[0, 1] * w1 + A[0, 2] * w2
        ai1 = A[1, 0] * w0 + A[1, 1] * w1 + A[1, 2] * w2
        ai2 = A[2, 0] * w0 + A[2, 1] * w1 + A[2, 2] * w2
        a0 += ai0
        a1 += ai1
        a2 += ai2
        b0 += r1 * ai2 - r2 * ai1
        b1 += r2 * ai0 - r0 * ai2
        b2 += r0 * ai1 - r1 * ai0
        for i in range(3):
            for j in range(3):
                if kirchhoff:
                    K[i, j] += H[i, j]
                    K[i, 3 + j] += G[i, j]
                else:
                    K[i, j] += A[i, j]
                    K[i, 3 + j] += G[i, j]
                    K[3 + j, i] += G[i, j]
                    K[3 + i, 3 + j] += H[i, j]
    # R^T rho A g
    g0, g1, g2 = mat[MAT_RHOAG], mat[MAT_RHOAG + 1], mat[MAT_RHOAG + 2]
    f0 = y[3] * g0 + y[6] * g1 + y[9] * g2
    f1 = y[4] * g0 + y[7] * g1 + y[10] * g2
    f2 = y[5] * g0 + y[8] * g1 + y[11] * g2
    # c = -u x mb - v x nb - b
    c0 = -(u1 * mb2 - u2 * mb1) - (v1 * nb2 - v2 * nb1) - b0
    c1 = -(u2 * mb0 - u0 * mb2) - (v2 * nb0 - v0 * nb2) - b1
    c2 = -(u0 * mb1 - u1 * mb0) - (v0 * nb1 - v1 * nb0) - b2
    # -u x nb - a - R^T rho A g (d of Eq. 16; the Kirchhoff nb_s without -G u_s)
    d0 = -(u1 * nb2 - u2 * nb1) - a0 - f0
    d1 = -(u2 * nb0 - u0 * nb2) - a1 - f1
    d2 = -(u0 * nb1 - u1 * nb0) - a2 - f2
    Pi, X = M[2], M[3]
    if kirchhoff:
        inverse3(K, 0, 0, Pi)
        us0 = Pi[0, 0] * c0 + Pi[0, 1] * c1 + Pi[0, 2] * c2
        us1 = Pi[1, 0] * c0 + Pi[1, 1] * c1 + Pi[1, 2] * c2
        us2 = Pi[2, 0] * c0 + Pi[2, 1] * c1 + Pi[2, 2] * c2
        dy[12] = d0 - (K[0, 3] * us0 + K[0, 4] * us1 + K[0, 5] * us2)
        dy[13] = d1 - (K[1, 3] * us0 + K[1, 4] * us1 + K[1, 5] * us2)
        dy[14] = d2 - (K[2, 3] * us0 + K[2, 4] * us1 + K[2, 5] * us2)
    else:
        # block elimination: X = P^-1 G, S = D - C X, u_s = S^-1 (c - C P^-1 d),
        # v_s = P^-1 d - X u_s
        inverse3(K, 0, 0, Pi)
        for i in range(3):
            for j in range(3):
                X[i, j] = Pi[i, 0] * K[0, 3 + j] + Pi[i, 1] * K[1, 3 + j] + Pi[i, 2] * K[2, 3 + j]
        y0 = Pi[0, 0] * d0 + Pi[0, 1] * d1 + Pi[0, 2] * d2
        y1 = Pi[1, 0] * d0 + Pi[1, 1] * d1 + Pi[1, 2] * d2
        y2 = Pi[2, 0] * d0 + Pi[2, 1] * d1 + Pi[2, 2] * d2
        c0 -= K[3, 0] * y0 + K[3, 1] * y1 + K[3, 2] * y2
        c1 -= K[4, 0] * y0 + K[4, 1] * y1 + K[4, 2] * y2
        c2 -= K[5, 0] * y0 + K[5, 1] * y1 + K[5, 2] * y2
        for i in range(3):
            for j in range(3):
                K[3 + i, 3 + j] -= (K[3 + i, 0] * X[0, j] + K[3 + i, 1] * X[1, j]
                                    + K[3 + i, 2] * X[2, j])
        inverse3(K, 3, 3, Pi)
        us0 = Pi[0, 0] * c0 + Pi[0, 1] * c1 + Pi[0, 2] * c2
        us1 = Pi[1, 0] * c0 + Pi[1, 1] * c1 + Pi[1, 2] * c2
        us2 = Pi[2, 0] * c0 + Pi[2, 1] * c1 + Pi[2, 2] * c2
        dy[12] = y0 - (X[0, 0] * us0 + X[0, 1] * us1 + X[0, 2] * us2)
        dy[13] = y1 - (X[1, 0] * us0 + X[1, 1] * us1 + X[1, 2] * us2)
        dy[14] = y2 - (X[2, 0] * us0 + X[2, 1] * us1 + X[2, 2] * us2)
    dy[15], dy[16], dy[17] = us0, us1, us2
    _kinematics(y, v0, v1, v2, u0, u1, u2, dy)


@kernel
def rk4(model, law, mat, rt, act, tau, pt, n, h, row, y, traj, st, K, M):
    """
    Integrate n classical RK4 steps of size h from y (in place).

    Each step is written to traj[row + 1 ...]; rt[pt + i] holds the routing at s + i h / 2.
    """
    ny = y.size
    dy, acc, yt = st[0], st[1], st[2]
    kirchhoff = model == KIRCHHOFF
    for step in range(n):
        for i in range(ny):
            yt[i] = y[i]
            acc[i] = 0.0
        for stage in range(4):
            # stages at s, s + h/2, s + h/2, s + h with weights 1, 2, 2, 1
            if model == DISCRETE:
                _rhs_rod(law, mat, yt, dy)
            else:
                _rhs_tendons(kirchhoff, law, mat, yt, rt[pt + 2 * step + (stage + 1) // 2],
                             act, tau, dy, K, M)
            weight = 1.0 if stage == 0 or stage == 3 else 2.0
            advance = h if stage == 2 else 0.5 * h
            for i in range(ny):
                acc[i] += weight * dy[i]
                yt[i] = y[i] + advance * dy[i]
        for i in range(ny):
            y[i] += h / 6.0 * acc[i]
            traj[row + step + 1, i] = y[i]
