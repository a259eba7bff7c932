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
Numba kernels of the constant-curvature Lagrange dynamics (:mod:`.cc_dynamics`).

The model and its sources are documented in :mod:`tendon_robot_sim.core.cc_dynamics`;
the tests check these kernels against finite differences of
:func:`tendon_robot_sim.core.constant_curvature.section_pose` and against an energy
minimisation written with plain numpy/scipy.

Symbols
=======

=========  ===============================================================  ==========
``x``      generalised coordinates, 3 per section: (l, u_x, u_y), l the      m, rad
           centre-spline length, u = theta (cos phi, sin phi) the bending
           vector (the actuator lengths are q = B x, linear, constant B)
``v``      x' (time derivative)                                              m/s, rad/s
``t``      theta^2 = u_x^2 + u_y^2                                           rad^2
``f, g``   f(t) = sin(theta)/theta, g(t) = (1 - cos theta)/theta^2, with     -
           ``f1 f2 g1 g2`` their first and second derivatives by t
``K``      skew matrix of k = (-u_y, u_x, 0) = theta * bending axis           rad
``R``      section rotation R = I + f K + g K^2 (Rodrigues, exact at 0)      -
``P``      point at fraction sigma of the arc, base frame of the section:    m
           sigma l (sigma g(sigma^2 t) u_x, sigma g u_y, f(sigma^2 t))
``_g``     gradient by each generalised coordinate (first index)
``_h``     second time derivative along x' with x'' = 0 (the velocity-product
           terms: Falkenhahn's d2H/dq_a dq_b q'_a q'_b)
``_d``     first time derivative along x'
=========  ===============================================================  ==========

With these, the Lagrange equations of point masses m_k at positions p_k(x) are
(Falkenhahn 2015; the seed's "d/dt dT/dq'" slide)

    M(x) x'' + c(x, x') = Q,   M = sum m_k J_k^T J_k,   c = sum m_k J_k^T h_k,

J_k = dp_k/dx (3 x 3n), h_k = p_k'' - J_k x''. Q gathers gravity (sum m_k J_k^T g), the
linear springs and dampers (b - K x - D x'), the mass-proportional damping -nu M x' and
the actuation G u (pressures or tensions u).

The integrator is the 2-stage, L-stable, stiffly accurate SDIRK method of order 2
(Alexander 1977, gamma = 1 - 1/sqrt 2), with a simplified Newton iteration on a
finite-difference Jacobian computed once per step. L-stability damps the stiff axial
modes (a fixed-step implicit midpoint rule would keep them ringing).
"""

import math

from numba import njit
import numpy as np

# Below t = theta^2 = SERIES_LIMIT the functions of t are summed from their Taylor
# series (the closed forms lose digits as theta -> 0); 16 terms leave < 1e-20 at t = 4.
SERIES_LIMIT = 4.0
_SERIES_TERMS = 16
_FACTORIALS = np.array([math.factorial(k) for k in range(2 * _SERIES_TERMS + 3)], dtype=float)
# f(t) = sum (-t)^k / (2k+1)!,  g(t) = sum (-t)^k / (2k+2)!
_F_COEF = np.array([(-1.0) ** k / _FACTORIALS[2 * k + 1] for k in range(_SERIES_TERMS)])
_G_COEF = np.array([(-1.0) ** k / _FACTORIALS[2 * k + 2] for k in range(_SERIES_TERMS)])

# Relative finite-difference step of the integrator's Jacobian (smooth right-hand side).
FD_STEP = 1e-7
GAMMA = 1.0 - 1.0 / math.sqrt(2.0)
# Substep halvings tried when the Newton iteration of a step does not converge.
MAX_HALVINGS = 5
# Newton iterations per stage above which the Jacobian is renewed for the next step.
FAST_NEWTON = 5

# model tuple layout (built by cc_dynamics.CCDynamics.model):
# (base_R (3, 3), fractions (n, k), masses (n, k) kg, gravity (3,) m/s^2,
#  G (3n, m), b (3n,), K (3n, 3n), D (3n, 3n), nu 1/s, inertias (n, k, 3) kg m^2,
#  spin_damping (n, k) N m s/rad)


@njit(cache=True)
def _series(coef, t):
    """Value and first two t-derivatives of sum coef[k] t^k (Horner)."""
    value = 0.0
    first = 0.0
    second = 0.0
    for k in range(coef.size - 1, -1, -1):
        second = second * t + 2.0 * first
        first = first * t + value
        value = value * t + coef[k]
    return value, first, second


@njit(cache=True)
def sinc_functions(t):
    """f, f1, f2, g, g1, g2 of t = theta^2 (see the module symbols); exact at t = 0."""
    if t < SERIES_LIMIT:
        f, f1, f2 = _series(_F_COEF, t)
        g, g1, g2 = _series(_G_COEF, t)
        return f, f1, f2, g, g1, g2
    th = math.sqrt(t)
    s = math.sin(th)
    c = math.cos(th)
    f = s / th
    f1 = (th * c - s) / (2.0 * t * th)
    f2 = (3.0 * s - 3.0 * th * c - t * s) / (4.0 * t * t * th)
    g = (1.0 - c) / t
    g1 = (th * s - 2.0 * (1.0 - c)) / (2.0 * t * t)
    g2 = (t * c - 5.0 * th * s + 8.0 - 8.0 * c) / (4.0 * t * t * t)
    return f, f1, f2, g, g1, g2


@njit(cache=True)
def arc_point(xs, vs, sigma, p, p_g, p_h):
    """
    Point at fraction ``sigma`` of a section's arc, in the section's base frame.

    xs = (l, u_x, u_y), vs = their rates. Writes p (3,) [m], p_g (3, 3) (row a = dp/dx_a)
    and p_h (3,) [m/s^2] (second time derivative with x'' = 0).
    """
    l, ux, uy = xs[0], xs[1], xs[2]
    dl, wx, wy = vs[0], vs[1], vs[2]
    s = sigma * sigma
    f, f1, f2, g, g1, g2 = sinc_functions(s * (ux * ux + uy * uy))
    td = 2.0 * (ux * wx + uy * wy)       # t'
    tdd = 2.0 * (wx * wx + wy * wy)      # t'' (u'' = 0)
    # P(u): p = sigma l P
    P0, P1, P2 = sigma * g * ux, sigma * g * uy, f
    for a in range(2):
        ta = 2.0 * (ux if a == 0 else uy)          # dt/du_a
        p_g[a + 1, 0] = sigma * l * sigma * (g1 * s * ta * ux + (g if a == 0 else 0.0))
        p_g[a + 1, 1] = sigma * l * sigma * (g1 * s * ta * uy + (g if a == 1 else 0.0))
        p_g[a + 1, 2] = sigma * l * f1 * s * ta
    p_g[0, 0] = sigma * P0
    p_g[0, 1] = sigma * P1
    p_g[0, 2] = sigma * P2
    Pd0 = sigma * (g1 * s * td * ux + g * wx)
    Pd1 = sigma * (g1 * s * td * uy + g * wy)
    Pd2 = f1 * s * td
    Pdd0 = sigma * (g2 * s * s * td * td * ux + g1 * s * tdd * ux + 2.0 * g1 * s * td * wx)
    Pdd1 = sigma * (g2 * s * s * td * td * uy + g1 * s * tdd * uy + 2.0 * g1 * s * td * wy)
    Pdd2 = f2 * s * s * td * td + f1 * s * tdd
    p[0] = sigma * l * P0
    p[1] = sigma * l * P1
    p[2] = sigma * l * P2
    p_h[0] = sigma * (2.0 * dl * Pd0 + l * Pdd0)
    p_h[1] = sigma * (2.0 * dl * Pd1 + l * Pdd1)
    p_h[2] = sigma * (2.0 * dl * Pd2 + l * Pdd2)


@njit(cache=True)
def _matmul(A, B, out):
    """Set out = A B for 3 x 3 arrays (BLAS calls cost more than the arithmetic here)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(cache=True)
def _add_matvec(A, x, scale, out):
    """Add scale A x to out, for a 3 x 3 A."""
    for i in range(3):
        out[i] += scale * (A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2])


@njit(cache=True)
def arc_rotation(xs, vs, R, R_g, R_h, scratch):
    """
    Rotation of a section's end, R = I + f K + g K^2, with R_g (3, 3, 3) and R_h.

    K = [[0, 0, u_x], [0, 0, u_y], [-u_x, -u_y, 0]] and
    K^2 = -[[u_x^2, u_x u_y, 0], [u_x u_y, u_y^2, 0], [0, 0, t]] are written out with
    their derivatives by u_x, u_y (``Kx``, ``Ky``, ``K2x``, ``K2y``) and by time (``Kd``,
    ``K2d``, ``K2dd``; K'' = 0), into ``scratch`` (9, 3, 3), which is overwritten.
    """
    ux, uy = xs[1], xs[2]
    wx, wy = vs[1], vs[2]
    f, f1, f2, g, g1, g2 = sinc_functions(ux * ux + uy * uy)
    td = 2.0 * (ux * wx + uy * wy)
    tdd = 2.0 * (wx * wx + wy * wy)
    scratch[:] = 0.0
    K, K2, Kd, K2d, K2dd, Kx, Ky, K2x, K2y = (scratch[0], scratch[1], scratch[2], scratch[3],
                                              scratch[4], scratch[5], scratch[6], scratch[7],
                                              scratch[8])
    _skew_xy(ux, uy, K)
    _skew_xy(wx, wy, Kd)
    _skew_xy(1.0, 0.0, Kx)
    _skew_xy(0.0, 1.0, Ky)
    # K2 = -sym(a b) with a = b = u; K2' = -(u w^T + w u^T) in the plane; K2'' = -2 w w^T
    _minus_sym(ux, uy, ux, uy, 1.0, K2)
    _minus_sym(ux, uy, wx, wy, 2.0, K2d)
    _minus_sym(wx, wy, wx, wy, 2.0, K2dd)
    _minus_sym(ux, uy, 1.0, 0.0, 2.0, K2x)
    _minus_sym(ux, uy, 0.0, 1.0, 2.0, K2y)
    for i in range(3):
        for j in range(3):
            R[i, j] = (1.0 if i == j else 0.0) + f * K[i, j] + g * K2[i, j]
            R_g[0, i, j] = 0.0             # the rotation does not depend on l
            R_g[1, i, j] = (f1 * 2.0 * ux * K[i, j] + f * Kx[i, j]
                            + g1 * 2.0 * ux * K2[i, j] + g * K2x[i, j])
            R_g[2, i, j] = (f1 * 2.0 * uy * K[i, j] + f * Ky[i, j]
                            + g1 * 2.0 * uy * K2[i, j] + g * K2y[i, j])
            R_h[i, j] = ((f2 * td * td + f1 * tdd) * K[i, j] + 2.0 * f1 * td * Kd[i, j]
                         + (g2 * td * td + g1 * tdd) * K2[i, j] + 2.0 * g1 * td * K2d[i, j]
                         + g * K2dd[i, j])


@njit(cache=True)
def _skew_xy(a, b, out):
    """Set out = [[0, 0, a], [0, 0, b], [-a, -b, 0]]: the skew matrix of (-b, a, 0)."""
    out[0, 2] = a
    out[1, 2] = b
    out[2, 0] = -a
    out[2, 1] = -b


@njit(cache=True)
def _minus_sym(a1, a2, b1, b2, scale, out):
    """
    Set out = -scale/2 (a b^T + b a^T) on the (x, y) block and -scale (a . b) at (z, z).

    Then K(a) K(b) + K(b) K(a) = scale * out for the in-plane skew matrices K of ``_skew_xy``.
    """
    out[0, 0] = -0.5 * scale * 2.0 * a1 * b1
    out[0, 1] = -0.5 * scale * (a1 * b2 + a2 * b1)
    out[1, 0] = out[0, 1]
    out[1, 1] = -0.5 * scale * 2.0 * a2 * b2
    out[2, 2] = -0.5 * scale * 2.0 * (a1 * b1 + a2 * b2)


@njit(cache=True)
def lagrange_terms(x, v, model, M, c, q_gravity, q_spin):
    """
    Compute the mass matrix, velocity products, gravity and spin-damper forces.

    Mass matrix M (3n, 3n), velocity-product term c (3n,), gravity force (3n,) and the force of
    the dampers on the masses' angular velocities (3n,).

    Walks the sections from the base, carrying the base frame of each section (its
    rotation, and the gradient and second time derivative of its rotation and origin;
    the origin itself is not needed) by forward-mode differentiation written out.
    """
    base_R, fractions, masses, gravity = model[0], model[1], model[2], model[3]
    inertias, spin_damping = model[9], model[10]
    N = x.size
    M[:, :] = 0.0
    c[:] = 0.0
    q_gravity[:] = 0.0
    q_spin[:] = 0.0
    Rb = base_R.copy()
    Rb_g = np.zeros((N, 3, 3))
    Rb_h = np.zeros((3, 3))
    Rb_d = np.zeros((3, 3))
    pb_g = np.zeros((N, 3))
    pb_h = np.zeros(3)
    pl = np.zeros(3)
    pl_g = np.zeros((3, 3))
    pl_h = np.zeros(3)
    J = np.zeros((N, 3))
    h = np.zeros(3)
    Rl = np.zeros((3, 3))
    Rl_g = np.zeros((3, 3, 3))
    Rl_h = np.zeros((3, 3))
    Rl_d = np.zeros((3, 3))
    work = np.zeros((3, 3))
    scratch = np.zeros((9, 3, 3))
    rotation_work = (np.zeros(3), np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3, 3)),
                     np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((N, 3)),
                     np.zeros(3), scratch)
    for j in range(N // 3):
        o = 3 * j
        n = o + 3                         # later coordinates do not move this section
        xs = x[o:n]
        vs = v[o:n]
        Rb_d[:, :] = 0.0
        for col in range(o):
            for i in range(3):
                for b in range(3):
                    Rb_d[i, b] += Rb_g[col, i, b] * v[col]
        for k in range(masses.shape[1]):
            m = masses[j, k]
            if m == 0.0:
                continue
            arc_point(xs, vs, fractions[j, k], pl, pl_g, pl_h)
            _compose_point(Rb, Rb_g, Rb_h, Rb_d, pb_g, pb_h, pl, pl_g, pl_h, vs, o, J, h)
            for a in range(n):
                c[a] += m * (J[a, 0] * h[0] + J[a, 1] * h[1] + J[a, 2] * h[2])
                q_gravity[a] += m * (J[a, 0] * gravity[0] + J[a, 1] * gravity[1]
                                     + J[a, 2] * gravity[2])
                for b in range(a, n):
                    M[a, b] += m * (J[a, 0] * J[b, 0] + J[a, 1] * J[b, 1] + J[a, 2] * J[b, 2])
            if (inertias[j, k, 0] + inertias[j, k, 1] + inertias[j, k, 2] > 0.0
                    or spin_damping[j, k] > 0.0):
                _add_rotation(Rb, Rb_g, Rb_h, Rb_d, xs, vs, fractions[j, k], inertias[j, k],
                              spin_damping[j, k], v, o, M, c, q_spin, rotation_work)
        # the base frame of the next section
        arc_point(xs, vs, 1.0, pl, pl_g, pl_h)
        arc_rotation(xs, vs, Rl, Rl_g, Rl_h, scratch)
        _compose_point(Rb, Rb_g, Rb_h, Rb_d, pb_g, pb_h, pl, pl_g, pl_h, vs, o, J, h)
        pb_h[:] = h
        pb_g[:n] = J[:n]
        Rl_d[:, :] = Rl_g[0] * vs[0] + Rl_g[1] * vs[1] + Rl_g[2] * vs[2]
        # Rb_h <- Rb_h Rl + 2 Rb' Rl' + Rb Rl''
        _matmul(Rb_h, Rl, work)
        Rb_h[:, :] = work
        _matmul(Rb_d, Rl_d, work)
        Rb_h += 2.0 * work
        _matmul(Rb, Rl_h, work)
        Rb_h += work
        for col in range(o):
            _matmul(Rb_g[col], Rl, work)
            Rb_g[col] = work
        for a in range(3):
            _matmul(Rb, Rl_g[a], Rb_g[o + a])
        _matmul(Rb, Rl, work)
        Rb[:, :] = work
    for a in range(N):
        for b in range(a):
            M[a, b] = M[b, a]


@njit(cache=True)
def _vee_of_product(A, B, out):
    """Set out = vee of the skew part of A^T B (3 x 3 arrays); (A^T B)_ij = sum_k A_ki B_kj."""
    for i, (r, s) in enumerate(((2, 1), (0, 2), (1, 0))):
        out[i] = 0.5 * (A[0, r] * B[0, s] + A[1, r] * B[1, s] + A[2, r] * B[2, s]
                        - A[0, s] * B[0, r] - A[1, s] * B[1, r] - A[2, s] * B[2, r])


@njit(cache=True)
def _add_rotation(Rb, Rb_g, Rb_h, Rb_d, xs, vs, sigma, inertia, spin_damping, v, o, M, c,
                  q_spin, work):
    """
    Rotation of a lumped mass at fraction ``sigma`` of section o // 3 with its arc frame.

    ``inertia`` (3,) [kg m^2]: principal moments about the arc frame's axes there. With the
    body angular velocity w = J_w x' (w^ = R^T R'), adds J_w^T I J_w to M and
    J_w^T (I w'_h + w x I w) to c, w'_h = vee(R^T R'') at x'' = 0 (Euler's equations).
    ``spin_damping`` [N m s/rad]: a damper on w, adds -spin_damping J_w^T w to q_spin.
    ``work``: arrays (3,), (3,), (3, 3), (3, 3, 3), (3, 3), (3, 3), (3, 3), (3n, 3), (3,),
    (9, 3, 3) this function may overwrite.
    """
    n = o + 3
    xs_s, vs_s, Rl, Rl_g, Rl_h, R, dR, J_w, w, scratch = work
    # the arc frame at sigma is the end frame of the arc with u scaled by sigma
    xs_s[0], xs_s[1], xs_s[2] = xs[0], sigma * xs[1], sigma * xs[2]
    vs_s[0], vs_s[1], vs_s[2] = vs[0], sigma * vs[1], sigma * vs[2]
    arc_rotation(xs_s, vs_s, Rl, Rl_g, Rl_h, scratch)
    _matmul(Rb, Rl, R)
    J_w[o] = 0.0                          # the rotation does not depend on l
    for col in range(o):
        _matmul(Rb_g[col], Rl, dR)
        _vee_of_product(R, dR, J_w[col])
    for a in range(1, 3):                 # the rotation does not depend on l
        _matmul(Rb, Rl_g[a], dR)
        _vee_of_product(R, dR, J_w[o + a])
        J_w[o + a] *= sigma
    for i in range(3):
        w[i] = 0.0
        for col in range(n):
            w[i] += J_w[col, i] * v[col]
    for a in range(n):
        q_spin[a] -= spin_damping * (J_w[a, 0] * w[0] + J_w[a, 1] * w[1] + J_w[a, 2] * w[2])
    if inertia[0] + inertia[1] + inertia[2] == 0.0:
        return
    # R'' = Rb'' Rl + 2 Rb' Rl' + Rb Rl''
    Rl_d = Rl_g[1] * vs_s[1] + Rl_g[2] * vs_s[2]
    R_h = np.empty((3, 3))
    _matmul(Rb_h, Rl, R_h)
    _matmul(Rb_d, Rl_d, dR)
    R_h += 2.0 * dR
    _matmul(Rb, Rl_h, dR)
    R_h += dR
    w_dot = np.empty(3)
    _vee_of_product(R, R_h, w_dot)
    torque = inertia * w_dot + np.cross(w, inertia * w)
    for a in range(n):
        c[a] += J_w[a] @ torque
        for b in range(a, n):
            M[a, b] += (J_w[a, 0] * inertia[0] * J_w[b, 0] + J_w[a, 1] * inertia[1] * J_w[b, 1]
                        + J_w[a, 2] * inertia[2] * J_w[b, 2])


@njit(cache=True)
def _compose_point(Rb, Rb_g, Rb_h, Rb_d, pb_g, pb_h, pl, pl_g, pl_h, vs, o, J, h):
    """
    Compose the world point pb + Rb pl of section o // 3 with its derivatives (in place).

    Rows 0..o+2 of its gradient J and its second time derivative h = pb'' + Rb'' pl + 2 Rb' pl'
    + Rb pl''.
    """
    for col in range(o):
        for i in range(3):
            J[col, i] = pb_g[col, i] + (Rb_g[col, i, 0] * pl[0] + Rb_g[col, i, 1] * pl[1]
                                        + Rb_g[col, i, 2] * pl[2])
    for a in range(3):
        for i in range(3):
            J[o + a, i] = Rb[i, 0] * pl_g[a, 0] + Rb[i, 1] * pl_g[a, 1] + Rb[i, 2] * pl_g[a, 2]
    for i in range(3):
        h[i] = pb_h[i]
    _add_matvec(Rb_h, pl, 1.0, h)
    # 2 Rb' pl', pl' = sum_a pl_g[a] vs[a]
    for a in range(3):
        for i in range(3):
            h[i] += 2.0 * vs[a] * (Rb_d[i, 0] * pl_g[a, 0] + Rb_d[i, 1] * pl_g[a, 1]
                                   + Rb_d[i, 2] * pl_g[a, 2])
    _add_matvec(Rb, pl_h, 1.0, h)


@njit(cache=True)
def acceleration(x, v, inputs, model):
    """Return x'' (3n,) of the Lagrange equations for actuation ``inputs`` (Pa or N)."""
    G, b, K, D, nu = model[4], model[5], model[6], model[7], model[8]
    N = x.size
    M = np.empty((N, N))
    c = np.empty(N)
    Q = np.empty(N)
    q_spin = np.empty(N)
    lagrange_terms(x, v, model, M, c, Q, q_spin)   # Q starts as the gravity force
    for a in range(N):
        Q[a] += b[a] - c[a] + q_spin[a]
        for k in range(G.shape[1]):
            Q[a] += G[a, k] * inputs[k]
        for k in range(N):
            Q[a] -= K[a, k] * x[k] + (D[a, k] + nu * M[a, k]) * v[k]
    _cholesky_solve(M, Q)
    return Q


@njit(cache=True)
def _cholesky_solve(M, Q):
    """Q <- M^-1 Q for a symmetric positive definite M (overwritten by its factor L)."""
    N = Q.size
    for j in range(N):
        d = M[j, j]
        for k in range(j):
            d -= M[j, k] * M[j, k]
        M[j, j] = math.sqrt(d)        # NaN if M is not positive definite: caught by callers
        for i in range(j + 1, N):
            e = M[i, j]
            for k in range(j):
                e -= M[i, k] * M[j, k]
            M[i, j] = e / M[j, j]
    for i in range(N):                # L z = Q
        for k in range(i):
            Q[i] -= M[i, k] * Q[k]
        Q[i] /= M[i, i]
    for i in range(N - 1, -1, -1):    # L^T x = z
        for k in range(i + 1, N):
            Q[i] -= M[k, i] * Q[k]
        Q[i] /= M[i, i]


@njit(cache=True)
def _rhs(y, inputs, model):
    N = y.size // 2
    out = np.empty(2 * N)
    out[:N] = y[N:]
    out[N:] = acceleration(y[:N], y[N:], inputs, model)
    return out


@njit(cache=True)
def _iteration_matrix(y, hg, inputs, model):
    """W = (I - hg J)^-1 with J = df/dy by forward differences (2 * 3n + 1 evaluations)."""
    n = y.size
    f0 = _rhs(y, inputs, model)
    A = np.eye(n)
    z = y.copy()
    for col in range(n):
        step = FD_STEP * max(1.0, abs(y[col]))
        z[col] = y[col] + step
        A[:, col] -= hg * (_rhs(z, inputs, model) - f0) / step
        z[col] = y[col]
    return np.linalg.inv(A)


@njit(cache=True)
def _solve_stage(Y, base, hg, W, inputs, model, atol, rtol, max_iterations):
    """Simplified Newton on Y = base + hg f(Y), in place; iterations used, -1 if failed."""
    for iteration in range(1, max_iterations + 1):
        dY = -(W @ (Y - base - hg * _rhs(Y, inputs, model)))
        Y += dY
        if not np.all(np.isfinite(Y)):
            return -1
        if np.max(np.abs(dY) / (atol + rtol * np.abs(Y))) <= 1.0:
            return iteration
    return -1


@njit(cache=True)
def sdirk_step(y, h, inputs, model, W, atol, rtol, max_iterations):
    """
    One SDIRK2 step of h [s] on y = (x, x'), in place, with W = (I - h GAMMA J)^-1.

    Returns the larger Newton iteration count of the two stages, or -1 on failure.
    """
    hg = h * GAMMA
    # predictors: one linearly implicit (Rosenbrock) step, i.e. the first Newton
    # iteration from y, at the price of one evaluation of f
    Y1 = y + W @ (hg * _rhs(y, inputs, model))
    first = _solve_stage(Y1, y, hg, W, inputs, model, atol, rtol, max_iterations)
    if first < 0:
        return -1
    F1 = (Y1 - y) / hg                    # f(Y1), exact at the stage solution
    base = y + (h - hg) * F1
    Y2 = base + W @ (hg * F1)
    second = _solve_stage(Y2, base, hg, W, inputs, model, atol, rtol, max_iterations)
    if second < 0:
        return -1
    y[:] = Y2                             # stiffly accurate: y_n+1 is the last stage
    return max(first, second)


@njit(cache=True)
def integrate(y0, h, inputs, model, record_every, atol, rtol, max_iterations):
    """
    Integrate len(inputs) steps of h [s], inputs held per step (zero-order hold).

    The Jacobian (and W) is kept while the Newton iterations converge fast (at most
    FAST_NEWTON iterations); it is renewed when they slow down or fail. A step that
    fails with a fresh Jacobian is retried as 2, 4, ... 2^MAX_HALVINGS substeps; if
    that fails too, integration stops.

    Returns (states (len(inputs) // record_every + 1, 2 * 3n), steps done, Jacobians
    computed, steps split into substeps).
    """
    n_steps = inputs.shape[0]
    states = np.full((n_steps // record_every + 1, y0.size), np.nan)
    y = y0.copy()
    states[0] = y
    W = np.eye(y.size)
    W_step = 0.0                          # substep length W was made for; 0: none
    jacobians = 0
    split = 0
    for i in range(n_steps):
        substeps = 1
        fresh = False
        while True:
            hs = h / substeps
            if W_step != hs:
                W[:, :] = _iteration_matrix(y, hs * GAMMA, inputs[i], model)
                W_step = hs
                fresh = True
                jacobians += 1
            z = y.copy()
            worst = 0
            for _ in range(substeps):
                worst = sdirk_step(z, hs, inputs[i], model, W, atol, rtol, max_iterations)
                if worst < 0:
                    break
            if worst >= 0:
                y = z
                if worst > FAST_NEWTON:
                    W_step = 0.0
                break
            W_step = 0.0
            if fresh:
                substeps *= 2
                if substeps > 2 ** MAX_HALVINGS:
                    return states, i, jacobians, split
        if substeps > 1:
            split += 1
        if (i + 1) % record_every == 0:
            states[(i + 1) // record_every] = y
    return states, n_steps, jacobians, split
