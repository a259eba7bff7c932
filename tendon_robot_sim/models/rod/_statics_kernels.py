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
Numba kernels of the shooting-method statics solver (:mod:`tendon_robot_sim.models.rod.statics`).

The models and their equations are documented in :mod:`tendon_robot_sim.models.rod.statics`;
:mod:`tendon_robot_sim.models.rod.statics_reference` solves the same problems with plain
numpy/scipy so tests can compare. Everything below runs in nopython mode, so a whole
solve (Newton iterations, finite-difference Jacobians, fixed-step RK4 integrations)
pays the Python call overhead once.

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
Unknowns and residuals are scaled (``Plan.scale``) to be dimensionless and of order
one; the Newton tolerance is on the scaled residual.

Compile time matters as much as run time here (numba re-optimises every callee inside
each caller): functions take few, plain arrays, big pieces have one call site, and
only ``solve`` (and ``poses``, for outputs) is called from Python.
"""

from collections import namedtuple
import math

from numba import njit

COSSERAT, KIRCHHOFF, DISCRETE = 0, 1, 2
LINEAR, PYELASTICA = 0, 1
TENSION, DISPLACEMENT = 0, 1
# solve() status codes
CONVERGED, MAX_ITERATIONS, FAILED = 0, 1, 2

# Relative finite-difference step of the Jacobians: residuals are smooth to ~1e-13,
# so 1e-7 balances truncation against round-off (both ~1e-7 relative in J).
FD_STEP = 1e-7
# A vertebra pose (discrete model) is converged when it moves less than this, relative
# to the bay length (position) or in radians (rotation): round-off is ~1e-15.
BAY_TOLERANCE = 1e-11
BAY_MAX_ITERATIONS = 40

# Plan.seg columns; Plan.mat slices; Plan.tendon rows
SEG_N, SEG_PT, SEG_ROW, SEG_VERT, SEG_FROM = 0, 1, 2, 3, 4
MAT_KSE, MAT_KBT, MAT_RHOAG, MAT_GRAVITY, MAT_P0, MAT_USTAR = 0, 3, 6, 9, 12, 15
TENDON_SLACK, TENDON_REST, TENDON_COMPLIANCE = 0, 1, 2

# error_model='numpy': a division by zero gives inf/NaN (caught by the finiteness checks)
# instead of compiling exception-raising branches into every division.
_kernel = njit(cache=True, error_model='numpy')

Plan = namedtuple('Plan', [
    'model',      # COSSERAT | KIRCHHOFF | DISCRETE
    'law',        # LINEAR | PYELASTICA constitutive law
    'nt',         # number of tendons
    'seg',        # (nseg, 5) int: RK4 steps, first routing sample in rt, first trajectory
                  #   row, vertebra index (1..k) at the segment's end and start (0: none)
    'seg_h',      # (nseg,) step size per segment [m]
    'rt',         # (npts, nt, 9) r, r_s, r_ss per tendon at s, s + h/2, s + h, ... (body)
    'active',     # (nseg, nt) the tendon runs along the segment
    'ends',       # (nseg, nt) the tendon terminates at the end of the segment
    'end_mass',   # (nseg,) vertebra mass at the end of the segment [kg], 0 if none
    'holes',      # (k + 1, nt, 3) hole of each tendon at the base (row 0) and vertebrae [m]
    'anchor',     # (nt,) vertebra index (1..k) at which each tendon ends (discrete model)
    'mat',        # (18,) Kse [N], Kbt [N m^2], rho A g [N/m], gravity [m/s^2], p0 [m],
                  #   rest curvature u* [1/m] (body; used by _rhs_rod only)
    'R0',         # (3, 3) base orientation
    'scale',      # (2, 6 + nt) physical value of one unit of each unknown (N, N m, N) and
                  #   of each residual (N, N m, m)
    'tendon',     # (3, nt) slack length per newton of negative tendon unknown [m/N],
                  #   rest length l* [m], compliance C [1/N]
])

Bays = namedtuple('Bays', [
    'P',       # (k + 1, 3) guessed position of vertebra j + 1 in the frame of vertebra j [m]
    'Q',       # (k + 1, 3, 3) guessed rotation of vertebra j + 1 relative to vertebra j
    'J',       # (k + 1, 6, 6) last Jacobian of the bay's fixed-point error
    'flags',   # (2, k + 1) P and Q hold a guess; J is usable
])

Work = namedtuple('Work', [
    'y',       # (3, ny) state, bay start state, finite-difference state
    'st',      # (3, ny) RK4: derivative, weighted sum, stage state
    'wk',      # (112,) scratch 3- and 6-vectors (regions per function, see each)
    'K',       # (6, 6) coefficient matrix of R&W Eq. (16), bay Newton matrix
    'M',       # (4, 3, 3) A_i, G_i, Eq. (17) matrix, sum of G_i / rotation scratch
    'hp',      # (nt, 3) previous tendon holes, world frame (discrete model)
    'vec',     # (5, nx) Newton: F, F_new, F of a finite-difference probe, x_new, step
    'Jc',      # (nx, nx) copy of the Jacobian for the linear solve
    'traj',    # (rows, ny) trajectory of the finite-difference integrations
])


# --------------------------------------------------------------------------- small algebra


@_kernel
def _cross(a, b, out):
    """Set out = a x b (out may alias a or b)."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0


@_kernel
def _gauss_solve(A, b):
    """
    Solve A x = b (n = b.size) by Gaussian elimination with partial pivoting.

    A is overwritten and x is returned in b. False if A is singular.
    """
    n = b.size
    for c in range(n):
        piv = c
        big = abs(A[c, c])
        for r in range(c + 1, n):
            if abs(A[r, c]) > big:
                big = abs(A[r, c])
                piv = r
        if not big > 0.0 or not math.isfinite(big):
            return False
        if piv != c:
            for k in range(c, n):
                A[c, k], A[piv, k] = A[piv, k], A[c, k]
            b[c], b[piv] = b[piv], b[c]
        inv = 1.0 / A[c, c]
        for r in range(c + 1, n):
            f = A[r, c] * inv
            if f != 0.0:
                for k in range(c + 1, n):
                    A[r, k] -= f * A[c, k]
                b[r] -= f * b[c]
    for c in range(n - 1, -1, -1):
        acc = b[c]
        for k in range(c + 1, n):
            acc -= A[c, k] * b[k]
        b[c] = acc / A[c, c]
    return True


@_kernel
def _inverse3(A, i0, j0, out):
    """
    Set out = inverse of the 3x3 block A[i0:i0 + 3, j0:j0 + 3] by the adjugate.

    NaN/inf if singular.
    """
    a00, a01, a02 = A[i0, j0], A[i0, j0 + 1], A[i0, j0 + 2]
    a10, a11, a12 = A[i0 + 1, j0], A[i0 + 1, j0 + 1], A[i0 + 1, j0 + 2]
    a20, a21, a22 = A[i0 + 2, j0], A[i0 + 2, j0 + 1], A[i0 + 2, j0 + 2]
    c00 = a11 * a22 - a12 * a21
    c01 = a12 * a20 - a10 * a22
    c02 = a10 * a21 - a11 * a20
    inv = 1.0 / (a00 * c00 + a01 * c01 + a02 * c02)
    out[0, 0] = c00 * inv
    out[1, 0] = c01 * inv
    out[2, 0] = c02 * inv
    out[0, 1] = (a02 * a21 - a01 * a22) * inv
    out[1, 1] = (a00 * a22 - a02 * a20) * inv
    out[2, 1] = (a01 * a20 - a00 * a21) * inv
    out[0, 2] = (a01 * a12 - a02 * a11) * inv
    out[1, 2] = (a02 * a10 - a00 * a12) * inv
    out[2, 2] = (a00 * a11 - a01 * a10) * inv


@_kernel
def _rotate_by(Q, th, out, E):
    """Set out = Q exp(th^) by Rodrigues' formula (out may alias Q; E is 3x3 scratch)."""
    a = math.sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2])
    if a < 1e-12:
        s1, c1 = 1.0, 0.5
    else:
        s1 = math.sin(a) / a
        c1 = (1.0 - math.cos(a)) / (a * a)
    # E = I + s1 th^ + c1 th^ th^, with th^ th^ = th th^T - |th|^2 I
    for i in range(3):
        for j in range(3):
            E[i, j] = c1 * th[i] * th[j]
        E[i, i] += 1.0 - c1 * a * a
    E[0, 1] -= s1 * th[2]
    E[1, 0] += s1 * th[2]
    E[0, 2] += s1 * th[1]
    E[2, 0] -= s1 * th[1]
    E[1, 2] -= s1 * th[0]
    E[2, 1] += s1 * th[0]
    for i in range(3):
        q0, q1, q2 = Q[i, 0], Q[i, 1], Q[i, 2]
        for j in range(3):
            out[i, j] = q0 * E[0, j] + q1 * E[1, j] + q2 * E[2, j]


# --------------------------------------------------------------------------- constitutive law


@_kernel
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


@_kernel
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


@_kernel
def force_from_strain(v, mat, law, nb):
    """Body-frame internal force nb from the strain v; returns the dilatation e."""
    e = 1.0
    if law == PYELASTICA:
        e = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    nb[0] = mat[MAT_KSE] * v[0] / e
    nb[1] = mat[MAT_KSE + 1] * v[1] / e
    nb[2] = mat[MAT_KSE + 2] * (v[2] - 1.0) / e
    return e


# --------------------------------------------------------------------------- ODE right-hand sides
#
# Written with scalar locals: array views and small calls cost more than the arithmetic.


@_kernel
def _kinematics(y, v0, v1, v2, u0, u1, u2, dy):
    """p_s = R v and R_s = R u^ (row i of R u^ is row i of R x u)."""
    for i in range(3):
        ri0, ri1, ri2 = y[3 + 3 * i], y[4 + 3 * i], y[5 + 3 * i]
        dy[i] = ri0 * v0 + ri1 * v1 + ri2 * v2
        dy[3 + 3 * i] = ri1 * u2 - ri2 * u1
        dy[4 + 3 * i] = ri2 * u0 - ri0 * u2
        dy[5 + 3 * i] = ri0 * u1 - ri1 * u0


@_kernel
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


@_kernel
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
        _inverse3(K, 0, 0, Pi)
        us0 = Pi[0, 0] * c0 + Pi[0, 1] * c1 + Pi[0, 2] * c2
        us1 = Pi[1, 0] * c0 + Pi[1, 1] * c1 + Pi[1, 2] * c2
        us2 = Pi[2, 0] * c0 + Pi[2, 1] * c1 + Pi[2, 2] * c2
        dy[12] = d0 - (K[0, 3] * us0 + K[0, 4] * us1 + K[0, 5] * us2)
        dy[13] = d1 - (K[1, 3] * us0 + K[1, 4] * us1 + K[1, 5] * us2)
        dy[14] = d2 - (K[2, 3] * us0 + K[2, 4] * us1 + K[2, 5] * us2)
    else:
        # block elimination: X = P^-1 G, S = D - C X, u_s = S^-1 (c - C P^-1 d),
        # v_s = P^-1 d - X u_s
        _inverse3(K, 0, 0, Pi)
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
        _inverse3(K, 3, 3, Pi)
        us0 = Pi[0, 0] * c0 + Pi[0, 1] * c1 + Pi[0, 2] * c2
        us1 = Pi[1, 0] * c0 + Pi[1, 1] * c1 + Pi[1, 2] * c2
        us2 = Pi[2, 0] * c0 + Pi[2, 1] * c1 + Pi[2, 2] * c2
        dy[12] = y0 - (X[0, 0] * us0 + X[0, 1] * us1 + X[0, 2] * us2)
        dy[13] = y1 - (X[1, 0] * us0 + X[1, 1] * us1 + X[1, 2] * us2)
        dy[14] = y2 - (X[2, 0] * us0 + X[2, 1] * us1 + X[2, 2] * us2)
    dy[15], dy[16], dy[17] = us0, us1, us2
    _kinematics(y, v0, v1, v2, u0, u1, u2, dy)


@_kernel
def _rk4(model, law, mat, rt, act, tau, pt, n, h, row, y, traj, st, K, M):
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


# --------------------------------------------------------------------------- shooting residuals


@_kernel
def _shoot_continuous(pl, x, tau, tip, F, traj, lengths, w):
    """
    Compute the Cosserat/Kirchhoff shooting residual of a continuous robot.

    Integrate from the guessed base wrench to the tip, applying point loads at segment ends:
    vertebra weights and tendon terminations (R&W Eqs. 18-20: F_i = -tau pb/|pb|, L_i = r x
    F_i), also at interior ends of multi-section robots. F[0:6] is the tip force and moment
    imbalance in the tip body frame, scaled. Scratch: wk[36:57].
    """
    y = w.y[0]
    wk = w.wk
    mat = pl.mat
    nb, mb, fb, mm = wk[36:39], wk[39:42], wk[42:45], wk[45:48]
    tmp, pb, v = wk[48:51], wk[51:54], wk[54:57]
    Kbt, g = mat[MAT_KBT:MAT_KBT + 3], mat[MAT_GRAVITY:MAT_GRAVITY + 3]
    cosserat = pl.model == COSSERAT
    nt = pl.nt
    for i in range(3):
        y[i] = mat[MAT_P0 + i]
        nb[i] = x[i] * pl.scale[0, i]
        mb[i] = x[3 + i] * pl.scale[0, 3 + i]
        for j in range(3):
            y[3 + 3 * i + j] = pl.R0[i, j]
    for t in range(nt):
        y[18 + t] = 0.0
    nseg = pl.seg_h.size
    for k in range(nseg + 1):
        if k > 0:
            # body wrench just before the end of segment k - 1, minus its point loads
            if cosserat:
                for i in range(3):
                    v[i] = y[12 + i]
                e = force_from_strain(v, mat, pl.law, nb)
            else:
                v[0] = 0.0
                v[1] = 0.0
                v[2] = 1.0
                e = 1.0
                for i in range(3):
                    nb[i] = y[12 + i]
            for i in range(3):
                mb[i] = Kbt[i] * y[15 + i] / (e * e * e)
                fb[i] = pl.end_mass[k - 1] * (y[3 + i] * g[0] + y[6 + i] * g[1]
                                              + y[9 + i] * g[2])
                mm[i] = 0.0
            last = pl.seg[k - 1, SEG_PT] + 2 * pl.seg[k - 1, SEG_N]
            for t in range(nt):
                if pl.ends[k - 1, t] and tau[t] > 0.0:
                    r = pl.rt[last, t, 0:3]
                    _cross(y[15:18], r, pb)
                    for i in range(3):
                        pb[i] += pl.rt[last, t, 3 + i] + v[i]
                    c = -tau[t] / math.sqrt(pb[0] * pb[0] + pb[1] * pb[1] + pb[2] * pb[2])
                    for i in range(3):
                        pb[i] *= c
                        fb[i] += pb[i]
                    _cross(r, pb, tmp)
                    for i in range(3):
                        mm[i] += tmp[i]
            for i in range(3):
                nb[i] -= fb[i]
                mb[i] -= mm[i]
        if k == nseg:
            break
        # state variables for the body wrench (nb, mb)
        if cosserat:
            e = strain_from_force(nb, mat, pl.law, y[12:15])
            for i in range(3):
                y[15 + i] = e * e * e * mb[i] / Kbt[i]
        else:
            for i in range(3):
                y[12 + i] = nb[i]
                y[15 + i] = mb[i] / Kbt[i]
        if k == 0:
            for i in range(y.size):
                traj[0, i] = y[i]
        _rk4(pl.model, pl.law, mat, pl.rt, pl.active[k], tau, pl.seg[k, SEG_PT],
             pl.seg[k, SEG_N], pl.seg_h[k], pl.seg[k, SEG_ROW], y, traj, w.st, w.K, w.M)
    for i in range(3):
        F[i] = (nb[i] - (y[3 + i] * tip[0] + y[6 + i] * tip[1] + y[9 + i] * tip[2])) \
            / pl.scale[1, i]
        F[3 + i] = (mb[i] - (y[3 + i] * tip[3] + y[6 + i] * tip[4] + y[9 + i] * tip[5])) \
            / pl.scale[1, 3 + i]
    for t in range(nt):
        lengths[t] = y[18 + t]
    return True


@_kernel
def _orthonormalize(y, row):
    """
    Replace R = y[3:12] (row-major) by its nearest rotation and copy it to row.

    One Newton-Schulz step, R <- R (3 I - R^T R) / 2, is exact to round-off for the ~1e-8
    drift of RK4.
    """
    R = y[3:12]
    S = row[3:12]   # scratch for R^T R, then the result
    for a in range(3):
        for b in range(3):
            S[3 * a + b] = R[a] * R[b] + R[3 + a] * R[3 + b] + R[6 + a] * R[6 + b]
    for i in range(3):
        r0, r1, r2 = R[3 * i], R[3 * i + 1], R[3 * i + 2]
        for b in range(3):
            acc = 3.0 * R[3 * i + b] - (r0 * S[b] + r1 * S[3 + b] + r2 * S[6 + b])
            y[3 + 3 * i + b] = 0.5 * acc
    for i in range(9):
        row[3 + i] = y[3 + i]


@_kernel
def _bay_error(ys, yend, P, Q, e, ds):
    """
    Write the fixed-point error of a bay into e and return its max norm.

    The error is the integrated minus the guessed pose of vertebra j + 1 in the frame of
    vertebra j: position / ds, and the axial vector of skew(Q^T Q_integrated).
    """
    # P_int = R_j^T (p_end - p_j)
    for i in range(3):
        acc = 0.0
        for col in range(3):
            acc += ys[3 + 3 * col + i] * (yend[col] - ys[col])
        e[i] = (acc - P[i]) / ds
    # S = Q^T Q_int with Q_int[a, b] = sum_l R_j[l, a] R_end[l, b]; only skew(S) is needed
    s01 = s10 = s02 = s20 = s12 = s21 = 0.0
    for a in range(3):
        qi0 = qi1 = qi2 = 0.0
        for col in range(3):
            rl = ys[3 + 3 * col + a]
            qi0 += rl * yend[3 + 3 * col]
            qi1 += rl * yend[4 + 3 * col]
            qi2 += rl * yend[5 + 3 * col]
        s01 += Q[a, 0] * qi1
        s10 += Q[a, 1] * qi0
        s02 += Q[a, 0] * qi2
        s20 += Q[a, 2] * qi0
        s12 += Q[a, 1] * qi2
        s21 += Q[a, 2] * qi1
    e[3] = 0.5 * (s21 - s12)
    e[4] = 0.5 * (s02 - s20)
    e[5] = 0.5 * (s10 - s01)
    m = 0.0
    for i in range(6):
        m = max(m, abs(e[i]))
    return m if math.isfinite(m) else math.inf


@_kernel
def _bay_solve(pl, k, j, tau, yout, traj, bays, w):
    """
    Integrate bay k of the discrete model, from vertebra j (0: the base) to the next one.

    Start from w.y[1] (the state after the loads of vertebra j known so far).

    Tendons passing vertebra j pull it towards their next hole, which sits on the
    downstream vertebra. The pose (P, Q) of that vertebra relative to vertebra j is found
    by a damped Newton iteration on the bay's fixed-point error (integrated - guessed
    pose). The finite-difference Jacobian is kept in ``bays`` between calls and reused
    while it reduces the error fourfold per step; a step that increases the error is
    halved (fresh Jacobian) or triggers a new Jacobian (stale one). One integration per
    pass of the loop: ``probe`` < 0 integrates the trial guess into yout, ``probe`` =
    c >= 0 the finite-difference step along coordinate c into scratch. yout ends as the
    bay's end state; on failure the bay's memory is cleared.
    Scratch: wk[60:102], M[0:3].
    """
    ys, yfd = w.y[1], w.y[2]
    wk = w.wk
    e, ec, d, P2 = wk[60:66], wk[66:72], wk[72:78], wk[78:81]
    tmp, hn, f, rw = wk[81:84], wk[84:87], wk[87:90], wk[90:93]
    et, Pa = wk[93:99], wk[99:102]
    Q2, E, Qa = w.M[0], w.M[1], w.M[2]
    pulled = False
    if j > 0:
        for t in range(pl.nt):
            if pl.anchor[t] > j and tau[t] > 0.0:
                pulled = True
    n, h = pl.seg[k, SEG_N], pl.seg_h[k]
    ds = n * h
    P, Q, J = bays.P[j], bays.Q[j], bays.J[j]
    if not bays.flags[0, j]:
        for i in range(3):
            P[i] = 0.0
            for col in range(3):
                Q[i, col] = 1.0 if i == col else 0.0
        P[2] = ds
        bays.flags[0, j] = True
    probe = -1
    fresh = False
    err = math.inf      # error at the accepted guess (Pa, Qa), which is e
    lam = 1.0           # fraction of the Newton step d being tried
    for _ in range(7 * BAY_MAX_ITERATIONS):
        if probe < 0:
            Pc, Qc, yc, trc = P, Q, yout, traj
        else:
            Pc, Qc, yc, trc = P2, Q2, yfd, w.traj
        for i in range(ys.size):
            yc[i] = ys[i]
        for t in range(pl.nt):
            if not pulled or pl.anchor[t] <= j or tau[t] == 0.0:
                continue
            # pull towards the guessed next hole and its moment about the backbone
            hj1, hj = pl.holes[j + 1, t], pl.holes[j, t]
            for i in range(3):
                tmp[i] = Pc[i] + Qc[i, 0] * hj1[0] + Qc[i, 1] * hj1[1] + Qc[i, 2] * hj1[2]
            for i in range(3):
                R0i, R1i, R2i = ys[3 + 3 * i], ys[4 + 3 * i], ys[5 + 3 * i]
                hn[i] = ys[i] + R0i * tmp[0] + R1i * tmp[1] + R2i * tmp[2] - w.hp[t, i]
                rw[i] = R0i * hj[0] + R1i * hj[1] + R2i * hj[2]
            c = tau[t] / math.sqrt(hn[0] * hn[0] + hn[1] * hn[1] + hn[2] * hn[2])
            for i in range(3):
                f[i] = c * hn[i]
            _cross(rw, f, tmp)
            for i in range(3):
                yc[12 + i] -= f[i]
                yc[15 + i] -= tmp[i]
        _rk4(pl.model, pl.law, pl.mat, pl.rt, pl.active[k], tau, pl.seg[k, SEG_PT], n, h,
             pl.seg[k, SEG_ROW], yc, trc, w.st, w.K, w.M)
        # RK4 leaves R orthogonal only to ~1e-8; the vertebra's holes (and the pose (P, Q)
        # they are matched with) need a rotation, so project it onto SO(3)
        _orthonormalize(yc, trc[pl.seg[k, SEG_ROW] + n])
        if not pulled:
            return True
        step = False     # next: a Newton step from the accepted guess
        if probe >= 0:
            _bay_error(ys, yfd, P2, Q2, ec, ds)
            # columns per unit of (P / ds, rotation angle)
            for i in range(6):
                J[i, probe] = (ec[i] - e[i]) / FD_STEP
            probe += 1
            if probe == 6:
                bays.flags[1, j] = True
                fresh = True
                probe = -1
                step = True
        else:
            new = _bay_error(ys, yout, P, Q, et, ds)
            if new <= BAY_TOLERANCE:
                return True
            if new < err:
                if new > 0.25 * err and not fresh:
                    bays.flags[1, j] = False
                if err < math.inf:
                    # good Broyden update with the accepted step lam d:
                    # J += ((e_new - e) - J lam d) (lam d)^T / |lam d|^2
                    ss = 0.0
                    for i in range(6):
                        ss += (lam * d[i]) ** 2
                    for i in range(6):
                        corr = et[i] - e[i]
                        for col in range(6):
                            corr -= J[i, col] * lam * d[col]
                        corr /= ss
                        for col in range(6):
                            J[i, col] += corr * lam * d[col]
                fresh = False
                err = new
                for i in range(6):
                    e[i] = et[i]
                for i in range(3):
                    Pa[i] = P[i]
                    for col in range(3):
                        Qa[i, col] = Q[i, col]
                step = True
            elif fresh and lam > 1.0 / 64.0:
                lam *= 0.5
            elif not fresh:
                bays.flags[1, j] = False
            else:
                break
            if not bays.flags[1, j]:
                probe = 0
                step = False
        if step:
            lam = 1.0
            A = w.K
            for i in range(6):
                d[i] = -e[i]
                for col in range(6):
                    A[i, col] = J[i, col]
            if not _gauss_solve(A, d):
                if fresh:
                    break
                bays.flags[1, j] = False
                probe = 0
        if probe < 0:
            # trial guess: accepted guess + lam * d
            for i in range(3):
                P[i] = Pa[i] + lam * d[i] * ds
                tmp[i] = lam * d[3 + i]
            _rotate_by(Qa, tmp, Q, E)
            continue
        # probe pose: accepted guess moved by one finite-difference step along `probe`
        for i in range(3):
            P[i] = Pa[i]
            P2[i] = Pa[i]
            tmp[i] = 0.0
            for col in range(3):
                Q[i, col] = Qa[i, col]
        if probe < 3:
            P2[probe] += FD_STEP * ds
            for i in range(3):
                for col in range(3):
                    Q2[i, col] = Qa[i, col]
        else:
            tmp[probe - 3] = FD_STEP
            _rotate_by(Qa, tmp, Q2, E)
    bays.flags[0, j] = False
    bays.flags[1, j] = False
    return False


@_kernel
def _shoot_discrete(pl, x, tau, tip, F, traj, lengths, bays, w):
    """
    Discrete (vertebra) model shooting residual.

    The backbone between vertebrae is a bare Cosserat rod; at vertebra j each tendon
    applies tau (unit vector to its next hole) - tau (unit vector from its previous hole),
    the moment of that force about the backbone, and the vertebra weight. The "to the
    next hole" part is resolved with the bay after the vertebra (``_bay_solve``); the
    rest is applied here. F[0:6] is the tip force and moment imbalance, world frame,
    scaled. Scratch: wk[36:57].
    """
    y, ys = w.y[0], w.y[1]
    wk = w.wk
    nb, mb, fw, mw = wk[36:39], wk[39:42], wk[42:45], wk[45:48]
    h, rw, fi = wk[48:51], wk[51:54], wk[54:57]
    mat = pl.mat
    nt = pl.nt
    for i in range(3):
        nb[i] = x[i] * pl.scale[0, i]
        mb[i] = x[3 + i] * pl.scale[0, 3 + i]
    for i in range(3):
        y[i] = mat[MAT_P0 + i]
        y[12 + i] = pl.R0[i, 0] * nb[0] + pl.R0[i, 1] * nb[1] + pl.R0[i, 2] * nb[2]
        y[15 + i] = pl.R0[i, 0] * mb[0] + pl.R0[i, 1] * mb[1] + pl.R0[i, 2] * mb[2]
        for col in range(3):
            y[3 + 3 * i + col] = pl.R0[i, col]
    for t in range(nt):
        lengths[t] = 0.0
        for i in range(3):
            w.hp[t, i] = mat[MAT_P0 + i] + (pl.R0[i, 0] * pl.holes[0, t, 0]
                                            + pl.R0[i, 1] * pl.holes[0, t, 1]
                                            + pl.R0[i, 2] * pl.holes[0, t, 2])
    for i in range(y.size):
        traj[0, i] = y[i]
    for k in range(pl.seg_h.size):
        for i in range(y.size):
            ys[i] = y[i]
        if not _bay_solve(pl, k, pl.seg[k, SEG_FROM], tau, y, traj, bays, w):
            return False
        j = pl.seg[k, SEG_VERT]
        if j == 0:
            continue
        for i in range(3):
            fw[i] = pl.end_mass[k] * mat[MAT_GRAVITY + i]
            mw[i] = 0.0
        for t in range(nt):
            if pl.anchor[t] < j:
                continue
            hj = pl.holes[j, t]
            for i in range(3):
                rw[i] = y[3 + 3 * i] * hj[0] + y[4 + 3 * i] * hj[1] + y[5 + 3 * i] * hj[2]
                h[i] = y[i] + rw[i] - w.hp[t, i]
            dl = math.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
            lengths[t] += dl
            if tau[t] > 0.0:
                for i in range(3):
                    fi[i] = -tau[t] * h[i] / dl
                    fw[i] += fi[i]
                _cross(rw, fi, h)
                for i in range(3):
                    mw[i] += h[i]
            for i in range(3):
                w.hp[t, i] = y[i] + rw[i]
        for i in range(3):
            y[12 + i] -= fw[i]
            y[15 + i] -= mw[i]
    for i in range(3):
        F[i] = (y[12 + i] - tip[i]) / pl.scale[1, i]
        F[3 + i] = (y[15 + i] - tip[3 + i]) / pl.scale[1, 3 + i]
    return True


@_kernel
def _residual(pl, mode, tau_in, q, tip, x, F, traj, tau, lengths, bays, w):
    """
    Scaled shooting residual F(x) (size 6, or 6 + nt in displacement mode).

    Unknowns x: base internal force nb(0) and moment mb(0) (body frame, scaled), and in
    displacement mode one variable z per tendon holding tension (z > 0) or slack (z < 0),
    after Till's displacement-control example: tau = max(z, 0), slack = max(-z, 0) * (slack
    length per newton). The length residual is l + slack + q - l* (1 + C tau): tendon
    length above the base plus slack plus pulled-in displacement equals the stretched
    rest length. Fills tau and lengths; False if the state became non-finite.
    """
    nt = pl.nt
    for t in range(nt):
        if mode == TENSION:
            tau[t] = tau_in[t]
        else:
            tau[t] = max(x[6 + t], 0.0) * pl.scale[0, 6 + t]
    if pl.model == DISCRETE:
        ok = _shoot_discrete(pl, x, tau, tip, F, traj, lengths, bays, w)
    else:
        ok = _shoot_continuous(pl, x, tau, tip, F, traj, lengths, w)
    if not ok:
        return False
    if mode == DISPLACEMENT:
        for t in range(nt):
            slack = max(-x[6 + t], 0.0) * pl.scale[0, 6 + t] * pl.tendon[TENDON_SLACK, t]
            rest = pl.tendon[TENDON_REST, t]
            F[6 + t] = (lengths[t] + slack + q[t]
                        - rest * (1.0 + pl.tendon[TENDON_COMPLIANCE, t] * tau[t])) \
                / pl.scale[1, 6 + t]
    for i in range(x.size):
        if not math.isfinite(F[i]):
            return False
    return True


@_kernel
def _fd_step(x):
    """
    Return the finite-difference step for unknown x.

    Relative, and towards larger |x| so that a tension/slack unknown stays on its side of the
    kink at 0 (one-sided derivative of the branch it is on).
    """
    step = FD_STEP * max(1.0, abs(x))
    return step if x >= 0.0 else -step


@_kernel
def _norm(a, p):
    """Euclidean (p = 2) or max (p = 0) norm of a."""
    acc = 0.0
    for i in range(a.size):
        if p == 2:
            acc += a[i] * a[i]
        else:
            acc = max(acc, abs(a[i]))
    return math.sqrt(acc) if p == 2 else acc


@_kernel
def _broyden(J, F, Fn, dx, alpha):
    """
    Apply the good Broyden update after the step s = alpha dx took F to Fn.

    J += ((Fn - F) - J s) s^T / (s^T s).
    """
    n = F.size
    ss = alpha * alpha * _norm(dx, 2) ** 2
    for r in range(n):
        js = 0.0
        for c in range(n):
            js += J[r, c] * alpha * dx[c]
        corr = (Fn[r] - F[r] - js) / ss if ss > 0.0 else 0.0
        for c in range(n):
            J[r, c] += corr * alpha * dx[c]


@_kernel
def solve(pl, mode, tau_in, q, tip, x, J, jac_ok, tol, max_iter, traj, tau, lengths, bays,
          w, info):
    """
    Damped Newton iteration with Broyden updates on the shooting residual.

    The Jacobian J (kept by the caller between solves: warm start) is rebuilt by forward
    differences when it is missing or when a step fails to halve ||F||; between rebuilds,
    good-Broyden rank-one updates keep it current. A step with a stale Jacobian that does
    not decrease ||F|| triggers a rebuild; with a fresh one, backtracking halves the step
    (Armijo condition on ||F||_2). Each pass of the loop evaluates the residual once, at
    the point ``probe`` selects: < 0 a Newton trial point, >= 0 a finite-difference probe
    of column ``probe`` (written to scratch, so traj keeps the accepted solution).

    On return x holds the last accepted iterate, traj/tau/lengths its solution, and
    info = [||F||_inf, iterations, residual evaluations, status].
    """
    n = x.size
    F, Fn, Fd, xn, dx = w.vec[0], w.vec[1], w.vec[2], w.vec[3], w.vec[4]
    Jc = w.Jc
    for r in range(n):
        xn[r] = x[r]
    probe = -1         # what the next evaluation is for
    first = True       # the next trial point is x itself
    alpha = 1.0
    fresh = False
    f2 = math.inf
    fnorm = math.inf
    it = 0
    nev = 0
    status = MAX_ITERATIONS
    for _ in range(max_iter * (n + 32)):
        nev += 1
        # one call site: numba compiles the whole shooting code into each
        Fx, trx = (Fn, traj) if probe < 0 else (Fd, w.traj)
        ok = _residual(pl, mode, tau_in, q, tip, xn, Fx, trx, tau, lengths, bays, w)
        if probe >= 0:
            if not ok:
                status = FAILED
                break
            step = xn[probe] - x[probe]
            for r in range(n):
                J[r, probe] = (Fd[r] - F[r]) / step
            xn[probe] = x[probe]
            probe += 1
            if probe < n:
                xn[probe] = x[probe] + _fd_step(x[probe])
                continue
            probe = -1
            jac_ok[0] = True
            fresh = True
        elif first:
            if not ok:
                status = FAILED
                break
            first = False
            for r in range(n):
                F[r] = Fn[r]
            f2 = _norm(F, 2)
            fnorm = _norm(F, 0)
        else:
            fn2 = _norm(Fn, 2) if ok else math.inf
            if fn2 <= (1.0 - 1e-4 * alpha) * f2:
                _broyden(J, F, Fn, dx, alpha)     # accept
                if fn2 > 0.5 * f2:
                    jac_ok[0] = False
                fresh = False
                for r in range(n):
                    x[r] = xn[r]
                    F[r] = Fn[r]
                f2 = fn2
                fnorm = _norm(F, 0)
            elif fresh and alpha > 1e-6:
                alpha *= 0.5
                for r in range(n):
                    xn[r] = x[r] + alpha * dx[r]
                continue
            elif fresh:
                status = FAILED
                break
            else:
                jac_ok[0] = False
        # at an accepted point (or after a rejected step with a stale Jacobian)
        if fnorm <= tol:
            status = CONVERGED
            break
        if not jac_ok[0]:
            probe = 0
            for r in range(n):
                xn[r] = x[r]
            xn[0] = x[0] + _fd_step(x[0])
            continue
        if it >= max_iter:
            break
        it += 1
        for r in range(n):
            dx[r] = -F[r]
            for c in range(n):
                Jc[r, c] = J[r, c]
        if not _gauss_solve(Jc, dx):
            if fresh:
                status = FAILED
                break
            jac_ok[0] = False
            probe = 0
            for r in range(n):
                xn[r] = x[r]
            xn[0] = x[0] + _fd_step(x[0])
            continue
        alpha = 1.0
        for r in range(n):
            xn[r] = x[r] + dx[r]
    info[0] = fnorm
    info[1] = it
    info[2] = nev
    info[3] = status


@_kernel
def poses(traj, frame_rows, path_rows, path_holes, quats, points):
    """
    Write the frame quaternions and path points of a solution trajectory.

    traj (rows, ny) has rows holding p, R (row-major); the outputs are:

    quats (k, 4): unit quaternions [qx, qy, qz, qw], qw >= 0, of R at frame_rows (k,), by
    Shepperd's method (the largest of 4 q_i^2 picks the formulas);
    points (3, j): p + R h at path_rows (j,) for body-frame offsets path_holes (j, 3).
    """
    for k in range(frame_rows.size):
        m = traj[frame_rows[k], 3:12]
        dw = 1.0 + m[0] + m[4] + m[8]
        dx = 1.0 + m[0] - m[4] - m[8]
        dy = 1.0 - m[0] + m[4] - m[8]
        dz = 1.0 - m[0] - m[4] + m[8]
        a, b, c = m[7] - m[5], m[2] - m[6], m[3] - m[1]
        e, f, g = m[1] + m[3], m[2] + m[6], m[5] + m[7]
        if dw >= dx and dw >= dy and dw >= dz:
            x, y, z, w = a, b, c, dw
        elif dx >= dy and dx >= dz:
            x, y, z, w = dx, e, f, a
        elif dy >= dz:
            x, y, z, w = e, dy, g, b
        else:
            x, y, z, w = f, g, dz, c
        norm = math.sqrt(x * x + y * y + z * z + w * w)
        if w < 0.0:
            norm = -norm
        quats[k, 0] = x / norm
        quats[k, 1] = y / norm
        quats[k, 2] = z / norm
        quats[k, 3] = w / norm
    for k in range(path_rows.size):
        row = traj[path_rows[k]]
        h = path_holes[k]
        for i in range(3):
            points[i, k] = row[i] + row[3 + 3 * i] * h[0] + row[4 + 3 * i] * h[1] \
                + row[5 + 3 * i] * h[2]


# --------------------------------------------------------------------------- parallel robot
#
# 6-RUS parallel continuum robot (:mod:`tendon_robot_sim.models.pcr.kinetostatics`): six
# bare Cosserat rods (_rhs_rod with rest curvature, integrated by _rk4) coupled through the
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
    'K',       # (6, 6) _rk4 scratch
    'M',       # (4, 3, 3) _rk4 scratch; M[0] R_e
    'rt',      # (1, 1, 9) _rk4 routing (unused by bare rods)
    'act',     # (1,) _rk4 tendon flags (unused)
    'tau',     # (1,) _rk4 tensions (unused)
    'out',     # (6, 9) p(L), n(L), m(L) of each rod at the current iterate
    'keep',    # (9,) saved rod end during a finite-difference probe
    'vec',     # (4, nx) F, F of a trial or probe, trial x, step
    'Jc',      # (nx, nx) copy of the Jacobian for the linear solve
    'traj',    # (steps + 1, 18) trajectory of probe integrations
])


@_kernel
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


@_kernel
def _platform_rotation(roll, pitch, yaw, R):
    """R_e = Rz(yaw) Ry(pitch) Rx(roll)."""
    for i in range(3):
        for j in range(3):
            R[i, j] = 1.0 if i == j else 0.0
    _rotate_axis(R, 2, yaw, R)
    _rotate_axis(R, 1, pitch, R)
    _rotate_axis(R, 0, roll, R)


@_kernel
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
    _rk4(DISCRETE, LINEAR, pl.mat, w.rt, w.act, w.tau, 0, pl.steps, pl.h, 0, y, traj, w.st,
         w.K, w.M)
    for a in range(3):
        out[a] = y[a]
        out[3 + a] = y[12 + a]
        out[6 + a] = y[15 + a]


@_kernel
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


@_kernel
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


@_kernel
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


@_kernel
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
        f2 = _norm(F, 2)
        fnorm = _norm(F, 0)
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
            if not _gauss_solve(w.Jc, dx):
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
                fn2 = _norm(Fn, 2) if ok else math.inf
                if fn2 <= (1.0 - 1e-4 * alpha) * f2:
                    if fn2 > 0.5 * f2:
                        jac_ok[0] = False
                    _broyden(J, F, Fn, dx, alpha)
                    for r in range(n):
                        x[r] = xn[r]
                        F[r] = Fn[r]
                    at_x = True
                    f2 = fn2
                    fnorm = _norm(F, 0)
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
