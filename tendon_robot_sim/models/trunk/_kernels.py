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

The model and its sources are documented in :mod:`tendon_robot_sim.models.trunk.dynamics`;
the tests check these kernels against finite differences of
:func:`tendon_robot_sim.models.geometry.section_pose` and against an energy
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
``e``      e(t) = (theta - sin theta)/theta^3: R = exp(K) has the body         -
           angular velocity w = J_r k' with J_r = I - g K + e K^2
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
(Falkenhahn 2015; Hadzic & Häseli's "d/dt dT/dq'")

    M(x) x'' + c(x, x') = Q,   M = sum m_k J_k^T J_k,   c = sum m_k J_k^T h_k,

J_k = dp_k/dx (3 x 3n), h_k = p_k'' - J_k x''. Q gathers gravity (sum m_k J_k^T g), the
linear springs and dampers (b - K x - D x'), the mass-proportional damping -nu M x' and
the actuation G u (pressures or tensions u).

The integrators are in :mod:`tendon_robot_sim.models.trunk._integrator`.

Speed: the right-hand side is a few thousand flops on 3 x 3 arrays, so numba's
reference counting of arrays (an atomic operation per array view, per call) cost three
quarters of its time. The kernels below the integrator therefore run without numba's
runtime (``_nrt=False``: they must not allocate; scratch arrays come in as
:class:`LagrangeWork` and :class:`Work`), and the small helpers are inlined.

Divisions follow IEEE rules (``error_model='numpy'``): a trial state far off (a step too
long) gives inf or NaN instead of an exception, and the Newton test rejects it, so the
step is split or refused with :class:`~tendon_robot_sim.models.trunk.dynamics.CCDynamicsError`.
"""

from collections import namedtuple
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
# e(t) = sum (-t)^k / (2k+3)!
_E_COEF = np.array([(-1.0) ** k / _FACTORIALS[2 * k + 3] for k in range(_SERIES_TERMS)])

# Relative finite-difference step of Jacobians of the smooth right-hand side.
FD_STEP = 1e-7

# model tuple layout (built by cc_dynamics.CCDynamics.model):
# (base_R (3, 3), fractions (n, k), masses (n, k) kg, gravity (3,) m/s^2,
#  G (3n, m), b (3n,), K (3n, 3n), D (3n, 3n), nu 1/s, inertias (n, k, 3) kg m^2,
#  spin_damping (n, k) N m s/rad)


@njit(cache=True, error_model='numpy', _nrt=False)
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


@njit(cache=True, error_model='numpy', _nrt=False)
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


@njit(cache=True, error_model='numpy', _nrt=False)
def rate_function(t):
    """
    Return e(t) = (theta - sin theta) / theta^3 = (1 - f) / t of t = theta^2.

    Exact at t = 0 (Taylor series below SERIES_LIMIT).
    """
    if t < SERIES_LIMIT:
        value = 0.0
        for k in range(_E_COEF.size - 1, -1, -1):
            value = value * t + _E_COEF[k]
        return value
    th = math.sqrt(t)
    return (th - math.sin(th)) / (t * th)


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
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


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
def _matmul(A, B, out):
    """Set out = A B for 3 x 3 arrays (BLAS calls cost more than the arithmetic here)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
def arc_rotation(xs, vs, R, R_g, R_h):
    """
    Write the rotation of a section's end, R = I + f K + g K^2, with R_g (3, 3, 3) and R_h.

    K = [[0, 0, u_x], [0, 0, u_y], [-u_x, -u_y, 0]] and
    K^2 = -[[u_x^2, u_x u_y, 0], [u_x u_y, u_y^2, 0], [0, 0, t]] are written out entry by
    entry with their derivatives by u_x, u_y (``Kx``, ``Ky``, ``K2x``, ``K2y``) and by time
    (``Kd``, ``K2d``, ``K2dd``; K'' = 0).
    """
    ux, uy = xs[1], xs[2]
    wx, wy = vs[1], vs[2]
    f, f1, f2, g, g1, g2 = sinc_functions(ux * ux + uy * uy)
    td = 2.0 * (ux * wx + uy * wy)
    tdd = 2.0 * (wx * wx + wy * wy)
    for i in range(3):
        for j in range(3):
            K = _skew_entry(i, j, ux, uy)
            Kd = _skew_entry(i, j, wx, wy)
            Kx = _skew_entry(i, j, 1.0, 0.0)
            Ky = _skew_entry(i, j, 0.0, 1.0)
            # K2 = -sym(a b) with a = b = u; K2' = -(u w^T + w u^T) in the plane; K2'' = -2 w w^T
            K2 = _minus_sym_entry(i, j, ux, uy, ux, uy, 1.0)
            K2d = _minus_sym_entry(i, j, ux, uy, wx, wy, 2.0)
            K2dd = _minus_sym_entry(i, j, wx, wy, wx, wy, 2.0)
            K2x = _minus_sym_entry(i, j, ux, uy, 1.0, 0.0, 2.0)
            K2y = _minus_sym_entry(i, j, ux, uy, 0.0, 1.0, 2.0)
            R[i, j] = (1.0 if i == j else 0.0) + f * K + g * K2
            R_g[0, i, j] = 0.0             # the rotation does not depend on l
            R_g[1, i, j] = f1 * 2.0 * ux * K + f * Kx + g1 * 2.0 * ux * K2 + g * K2x
            R_g[2, i, j] = f1 * 2.0 * uy * K + f * Ky + g1 * 2.0 * uy * K2 + g * K2y
            R_h[i, j] = ((f2 * td * td + f1 * tdd) * K + 2.0 * f1 * td * Kd
                         + (g2 * td * td + g1 * tdd) * K2 + 2.0 * g1 * td * K2d + g * K2dd)


@njit(cache=True, error_model='numpy', _nrt=False)
def _skew_entry(i, j, a, b):
    """
    Return entry (i, j) of [[0, 0, a], [0, 0, b], [-a, -b, 0]].

    That is the skew matrix of (-b, a, 0).
    """
    if j == 2 and i < 2:
        return a if i == 0 else b
    if i == 2 and j < 2:
        return -a if j == 0 else -b
    return 0.0


@njit(cache=True, error_model='numpy', _nrt=False)
def _minus_sym_entry(i, j, a1, a2, b1, b2, scale):
    """
    Return entry (i, j) of -scale/2 (a b^T + b a^T) (x, y block), -scale (a . b) (z, z).

    K(a) K(b) + K(b) K(a) = scale * this for the in-plane skew matrices K of
    :func:`_skew_entry`.
    """
    if i == 2 and j == 2:
        return -scale * (a1 * b1 + a2 * b2)
    if i == 2 or j == 2:
        return 0.0
    a_i, b_i = (a1, b1) if i == 0 else (a2, b2)
    a_j, b_j = (a1, b1) if j == 0 else (a2, b2)
    return -0.5 * scale * (a_i * b_j + b_i * a_j)


# Scratch arrays of lagrange_terms (N = 3n coordinates): the kernels run without numba's
# runtime and cannot allocate.
LagrangeWork = namedtuple('LagrangeWork', [
    'Rb',       # (3, 3) rotation of the current section's base, world frame
    'Rb_g',     # (N, 3, 3) its gradient by each coordinate
    'Rb_h',     # (3, 3) its second time derivative at x'' = 0
    'Rb_d',     # (3, 3) its first time derivative
    'wb_g',     # (N, 3) gradient of the base's body angular velocity, vee(Rb^T Rb_g)
    'pb_g',     # (N, 3) gradient of the base's origin
    'pb_h',     # (3,) second time derivative of the base's origin
    'pl',       # (3,) point on the arc, section base frame
    'pl_g',     # (3, 3) its gradient by (l, u_x, u_y)
    'pl_h',     # (3,) its second time derivative
    'J',        # (N, 3) gradient of a point, world frame
    'h',        # (3,) second time derivative of a point, world frame
    'Rl',       # (3, 3) rotation along the arc
    'Rl_g',     # (3, 3, 3) its gradient by (l, u_x, u_y)
    'Rl_h',     # (3, 3) its second time derivative
    'Rl_d',     # (3, 3) its first time derivative
    'product',  # (3, 3) matrix products
    'R_h',      # (3, 3) second time derivative of a mass's rotation
    'xs_s',     # (3,) coordinates of the arc up to a mass (u scaled by its fraction)
    'vs_s',     # (3,) their rates
    'J_w',      # (N, 3) gradient of a mass's body angular velocity
    'w',        # (3,) a mass's body angular velocity
])


@njit(cache=True, error_model='numpy')
def lagrange_work(N):
    """Return the scratch arrays of :func:`lagrange_terms` for N generalised coordinates."""
    return LagrangeWork(
        np.zeros((3, 3)), np.zeros((N, 3, 3)), np.zeros((3, 3)), np.zeros((3, 3)),
        np.zeros((N, 3)), np.zeros((N, 3)), np.zeros(3), np.zeros(3), np.zeros((3, 3)),
        np.zeros(3), np.zeros((N, 3)), np.zeros(3), np.zeros((3, 3)), np.zeros((3, 3, 3)),
        np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)),
        np.zeros(3), np.zeros(3), np.zeros((N, 3)), np.zeros(3))


@njit(cache=True, error_model='numpy', _nrt=False)
def lagrange_terms(x, v, model, M, c, q_gravity, q_spin, work):
    """
    Write the Lagrange terms of the state (x, x') into M, c, q_gravity and q_spin.

    Mass matrix M (3n, 3n), velocity-product term c (3n,), gravity force (3n,) and the
    force of the dampers on the masses' angular velocities (3n,).

    Walks the sections from the base, carrying the base frame of each section (its
    rotation, and the gradient and second time derivative of its rotation and origin;
    the origin itself is not needed) by forward-mode differentiation written out.
    ``work``: a :class:`LagrangeWork` (overwritten).
    """
    base_R, fractions, masses, gravity = model[0], model[1], model[2], model[3]
    inertias, spin_damping = model[9], model[10]
    N = x.size
    M[:, :] = 0.0
    c[:] = 0.0
    q_gravity[:] = 0.0
    q_spin[:] = 0.0
    Rb, Rb_g, Rb_h, Rb_d = work.Rb, work.Rb_g, work.Rb_h, work.Rb_d
    pb_g, pb_h, pl, pl_g, pl_h, J, h = (work.pb_g, work.pb_h, work.pl, work.pl_g, work.pl_h,
                                        work.J, work.h)
    Rl, Rl_g, Rl_h, Rl_d, product = work.Rl, work.Rl_g, work.Rl_h, work.Rl_d, work.product
    _copy(base_R, Rb)
    Rb_g[:, :, :] = 0.0
    Rb_h[:, :] = 0.0
    pb_g[:, :] = 0.0
    pb_h[:] = 0.0
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
            _vee_of_product(Rb, Rb_g[col], work.wb_g[col])
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
                _add_rotation(xs, vs, j, k, model, v, o, M, c, q_spin, work)
        # the base frame of the next section
        arc_point(xs, vs, 1.0, pl, pl_g, pl_h)
        arc_rotation(xs, vs, Rl, Rl_g, Rl_h)
        _compose_point(Rb, Rb_g, Rb_h, Rb_d, pb_g, pb_h, pl, pl_g, pl_h, vs, o, J, h)
        _copy(h, pb_h)
        for a in range(n):
            for i in range(3):
                pb_g[a, i] = J[a, i]
        for i in range(3):
            for b in range(3):
                Rl_d[i, b] = Rl_g[0, i, b] * vs[0] + Rl_g[1, i, b] * vs[1] + Rl_g[2, i, b] * vs[2]
        # Rb_h <- Rb_h Rl + 2 Rb' Rl' + Rb Rl''
        _matmul(Rb_h, Rl, product)
        _matmul(Rb_d, Rl_d, Rb_h)
        for i in range(3):
            for b in range(3):
                Rb_h[i, b] = product[i, b] + 2.0 * Rb_h[i, b]
        _matmul(Rb, Rl_h, product)
        for i in range(3):
            for b in range(3):
                Rb_h[i, b] += product[i, b]
        for col in range(o):
            _matmul(Rb_g[col], Rl, product)
            _copy(product, Rb_g[col])
        for a in range(3):
            _matmul(Rb, Rl_g[a], Rb_g[o + a])
        _matmul(Rb, Rl, product)
        _copy(product, Rb)
    for a in range(N):
        for b in range(a):
            M[a, b] = M[b, a]


@njit(cache=True, error_model='numpy', _nrt=False)
def _copy(source, out):
    """Copy ``source`` into ``out``, an array of the same shape, without numba's runtime."""
    flat_out = out.reshape(out.size)
    flat_source = source.reshape(source.size)
    for i in range(out.size):
        flat_out[i] = flat_source[i]


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
def _vee_of_product(A, B, out):
    """Set out = vee of the skew part of A^T B (3 x 3 arrays); (A^T B)_ij = sum_k A_ki B_kj."""
    for i, (r, s) in enumerate(((2, 1), (0, 2), (1, 0))):
        out[i] = 0.5 * (A[0, r] * B[0, s] + A[1, r] * B[1, s] + A[2, r] * B[2, s]
                        - A[0, s] * B[0, r] - A[1, s] * B[1, r] - A[2, s] * B[2, r])


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
def _add_rotation(xs, vs, j, k, model, v, o, M, c, q_spin, work):
    """
    Add the terms of the rotation of lumped mass k of section j (o = 3 j) with its arc frame.

    With the body angular velocity w = J_w x' (w^ = R^T R') of the arc frame at the mass,
    adds J_w^T I J_w to M and J_w^T (I w'_h + w x I w) to c, w'_h = vee(R^T R'') at
    x'' = 0 (Euler's equations), I = ``model`` inertias[j, k] (principal moments about the
    frame's axes [kg m^2]); and for the spin damper d = spin_damping[j, k] [N m s/rad] on w,
    -d J_w^T w to q_spin. ``work``: the :class:`LagrangeWork` of :func:`lagrange_terms`,
    with the section's base frame in Rb, Rb_h, Rb_d and wb_g; its mass fields are
    overwritten.
    """
    sigma, inertias, spin_damping = model[1][j, k], model[9], model[10][j, k]
    n = o + 3
    J_w, w = work.J_w, work.w
    # the arc frame at sigma is the end frame Rl of the arc with u scaled by sigma
    ux, uy = sigma * xs[1], sigma * xs[2]
    t = ux * ux + uy * uy
    f, _, _, g, _, _ = sinc_functions(t)
    e = rate_function(t)
    # R = Rb Rl: w = Rl^T w_b + J_r k', with Rl^T = I - f K + g K^2 and the right Jacobian
    # J_r = I - g K + e K^2 of Rl = exp(K), K the skew matrix of k = (-u_y, u_x, 0)
    for col in range(o):
        b0, b1, b2 = work.wb_g[col, 0], work.wb_g[col, 1], work.wb_g[col, 2]
        s = ux * b0 + uy * b1
        J_w[col, 0] = b0 - f * ux * b2 - g * ux * s
        J_w[col, 1] = b1 - f * uy * b2 - g * uy * s
        J_w[col, 2] = b2 + f * s - g * t * b2
    for i in range(3):
        J_w[o, i] = 0.0                   # the rotation does not depend on l
    # dk/du_x = sigma (0, 1, 0), dk/du_y = sigma (-1, 0, 0)
    J_w[o + 1, 0] = -sigma * e * ux * uy
    J_w[o + 1, 1] = sigma * (1.0 - e * uy * uy)
    J_w[o + 1, 2] = sigma * g * uy
    J_w[o + 2, 0] = -sigma * (1.0 - e * ux * ux)
    J_w[o + 2, 1] = sigma * e * ux * uy
    J_w[o + 2, 2] = -sigma * g * ux
    for i in range(3):
        w[i] = 0.0
        for col in range(n):
            w[i] += J_w[col, i] * v[col]
    for a in range(n):
        q_spin[a] -= spin_damping * (J_w[a, 0] * w[0] + J_w[a, 1] * w[1] + J_w[a, 2] * w[2])
    if inertias[j, k, 0] + inertias[j, k, 1] + inertias[j, k, 2] > 0.0:
        _add_inertia(xs, vs, sigma, inertias[j, k], o, M, c, work)


@njit(cache=True, error_model='numpy', _nrt=False)
def _add_inertia(xs, vs, sigma, inertia, o, M, c, work):
    """Add the rotational inertia terms of :func:`_add_rotation` (J_w and w in ``work``)."""
    n = o + 3
    xs_s, vs_s, Rl, Rl_g, Rl_h = work.xs_s, work.vs_s, work.Rl, work.Rl_g, work.Rl_h
    J_w, w = work.J_w, work.w
    xs_s[0], xs_s[1], xs_s[2] = xs[0], sigma * xs[1], sigma * xs[2]
    vs_s[0], vs_s[1], vs_s[2] = vs[0], sigma * vs[1], sigma * vs[2]
    arc_rotation(xs_s, vs_s, Rl, Rl_g, Rl_h)
    # R'' = Rb'' Rl + 2 Rb' Rl' + Rb Rl'', with R = Rb Rl in work.product
    Rl_d, R_h, R = work.Rl_d, work.R_h, work.product
    for i in range(3):
        for b in range(3):
            Rl_d[i, b] = Rl_g[1, i, b] * vs_s[1] + Rl_g[2, i, b] * vs_s[2]
    _matmul(work.Rb_d, Rl_d, R)
    _matmul(work.Rb_h, Rl, R_h)
    for i in range(3):
        for b in range(3):
            R_h[i, b] += 2.0 * R[i, b]
    _matmul(work.Rb, Rl_h, R)
    for i in range(3):
        for b in range(3):
            R_h[i, b] += R[i, b]
    _matmul(work.Rb, Rl, R)
    w_dot = work.xs_s                     # xs_s is no longer needed
    _vee_of_product(R, R_h, w_dot)
    # torque = I w'_h + w x (I w)
    t0 = inertia[0] * w_dot[0] + w[1] * inertia[2] * w[2] - w[2] * inertia[1] * w[1]
    t1 = inertia[1] * w_dot[1] + w[2] * inertia[0] * w[0] - w[0] * inertia[2] * w[2]
    t2 = inertia[2] * w_dot[2] + w[0] * inertia[1] * w[1] - w[1] * inertia[0] * w[0]
    for a in range(n):
        c[a] += J_w[a, 0] * t0 + J_w[a, 1] * t1 + J_w[a, 2] * t2
        for b in range(a, n):
            M[a, b] += (J_w[a, 0] * inertia[0] * J_w[b, 0] + J_w[a, 1] * inertia[1] * J_w[b, 1]
                        + J_w[a, 2] * inertia[2] * J_w[b, 2])


@njit(cache=True, error_model='numpy')
def add_matvec(A, x, scale, out):
    """Add scale A x to out."""
    for i in range(out.size):
        total = 0.0
        for k in range(x.size):
            total += A[i, k] * x[k]
        out[i] += scale * total


@njit(cache=True, error_model='numpy', inline='always', _nrt=False)
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
    add_matvec(Rb_h, pl, 1.0, h)
    # 2 Rb' pl', pl' = sum_a pl_g[a] vs[a]
    for a in range(3):
        for i in range(3):
            h[i] += 2.0 * vs[a] * (Rb_d[i, 0] * pl_g[a, 0] + Rb_d[i, 1] * pl_g[a, 1]
                                   + Rb_d[i, 2] * pl_g[a, 2])
    add_matvec(Rb, pl_h, 1.0, h)


# Scratch arrays of the integrator (N = 3n coordinates, state y = (x, x') of size 2N).
Work = namedtuple('Work', [
    'lagrange',   # LagrangeWork
    'M',          # (N, N) mass matrix, then its Cholesky factor
    'terms',      # (2, N) velocity-product term c, force of the spin dampers
    'A',          # (2N, 2N) iteration matrix I - h gamma df/dy (_integrator)
    'vectors',    # (6, 2N) stages Y1, Y2, the second stage's base, f(Y1) (sdirk_step);
                  #   f and the residual of a Newton iteration (_solve_stage), or a shifted
                  #   state and its f (_iteration_matrix)
])


@njit(cache=True, error_model='numpy')
def make_work(N):
    """Return the scratch arrays of :func:`acceleration` and the integrator, N coordinates."""
    return Work(lagrange_work(N), np.zeros((N, N)), np.zeros((2, N)),
                np.zeros((2 * N, 2 * N)), np.zeros((6, 2 * N)))


@njit(cache=True, error_model='numpy', _nrt=False)
def acceleration(x, v, inputs, model, work, out):
    """
    Write x'' (3n,) of the Lagrange equations for actuation ``inputs`` (Pa or N) into out.

    ``work``: a :class:`Work` (its M, terms and lagrange are overwritten).
    """
    G, b, K, D, nu = model[4], model[5], model[6], model[7], model[8]
    N = x.size
    M, c, q_spin = work.M, work.terms[0], work.terms[1]
    lagrange_terms(x, v, model, M, c, out, q_spin, work.lagrange)  # out starts as gravity
    for a in range(N):
        out[a] += b[a] - c[a] + q_spin[a]
        for k in range(G.shape[1]):
            out[a] += G[a, k] * inputs[k]
        for k in range(N):
            out[a] -= K[a, k] * x[k] + (D[a, k] + nu * M[a, k]) * v[k]
    _cholesky_solve(M, out)


@njit(cache=True, error_model='numpy', _nrt=False)
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
