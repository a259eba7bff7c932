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
Numba kernels of tendon friction in the implicit dynamics: continuous routing and discs.

J. Till's two friction laws (ContinuumRobotExamples, ``02_Dynamics/03_Tendon_Robot``, and the
"Friction" section of its ``Tendon_Robot_Dynamics.tex``; Till, Aloi & Rucker, IJRR 2019), in the
symbols of :mod:`tendon_robot_sim.models._cosserat_kernels` (body frame, reference arc length
s). Per tendon i, ``s_i`` is the unstretched tendon length from the motor to the point at s,

    s_i(0) = d_i / (1 + C_i tau_i(0)),   s_i,s = |pb_i| / (1 + C_i tau_i)

(d_i the motor distance, C_i the compliance), and s_i,t = c0 s_i + s_i,h its BDF-alpha rate
(a history column of ``Dyn.Z``). With t_i = pb_i / |pb_i| the tendon's unit tangent:

``viscous`` (the IJRR 2019 law, Till's ``Cpp_simple_friction``): a load per length

    f_i = beta |tau_i (u_x, u_y)| (-s_i,t) t_i,

added to the force right-hand side of R&W Eq. (16) and its moment -r_i x f_i to the moment
right-hand side, with the signs of Till's example (tension constant along s).

``sliding`` (Till's ``Cpp_sliding_friction``): the tension is a state along the rod,

    tau_i,s = -nu sat(s_i,t) s_i,s |f_n,i|,   sat(x) = x / sqrt(x^2 + eps^2),

f_n,i = tau_i (t_i)_s = A_i (w_i + v_s + u_s x r_i) the tendon's normal force per length
(A_i of R&W Eq. 15, w_i = u x (pb_i + r_i,s) + r_i,ss), and the backbone takes the load of the
tension's change, -tau_i,s (t_i, r_i x t_i), on the right-hand side of Eq. (16). The normal
force depends on v_s, u_s and they on it. Writing k_i = nu sat(s_i,t) s_i,s and n_i = |f_n,i|,
Eq. (16) reads K x = b + sum_i k_i n_i e_i with x = (v_s, u_s), e_i = (t_i, r_i x t_i), so

    x = x_0 + sum_j k_j n_j y_j,   x_0 = K^-1 b,   y_j = K^-1 e_j,

and n_i = |g_i + sum_j k_j n_j h_ij| with g_i = A_i (w_i + v_s0 + u_s0 x r_i) and
h_ij = A_i (v_sj + u_sj x r_i): a small system in the n_i alone. For one sliding tendon,
n = |g + k n h| is a quadratic in n, solved in closed form (:func:`_normal_force`); several are
swept Gauss-Seidel, each tendon in closed form given the others (FRICTION_SWEEPS sweeps: the
coupling between tendons is of order nu tau r^2 / (E I), ~1e-2 for Till's robot). No nested
solver per evaluation point (Till's example runs a Levenberg-Marquardt there);
``test/models/rod/dynamics/test_friction_dynamics.py`` checks it against one.

**At the discs** (the ``discrete`` model, :func:`~tendon_robot_sim.models.rod.statics._kernels.
_shoot_discrete`): the tendon runs straight from hole to hole, so it turns only in the holes,
and its tension is constant along each bay. Through hole k (the base's, then each disc's) the
tendon turns by theta_k, the angle between its directions entering and leaving the hole (at the
base it enters along the base's axis, as in the path-dependent statics,
:func:`~tendon_robot_sim.models.rod.tendons.capstan.wrap_angles`). Its slip rate there is
s_k,t = c0 s_k + s_k,h, Till's s_i,t at the hole with his sign, s_k the unstretched tendon
length from the motor to hole k: s_0 = d / (1 + C T_0), s_(k+1) = s_k + l_k / (1 + C T_k)
(l_k the chord of bay k, T_k its tension). :func:`hole_exponent` gives c_k of each law:

``sliding``: the tension jumps by the capstan law integrated over the hole's turn,

    T_(k+1) = T_k exp(-c_k theta_k),   c_k = nu sat(s_k,t),

and the disc takes T_(k+1) t_(k+1) - T_k t_k at the hole (t the unit chords; the base takes
its own hole's; the anchor's disc -T t of the last bay).

``viscous``: the tension stays the motor's, as in Till's law, and the disc takes his load over
the hole's turn, f = beta T theta_k (-s_k,t) t_h (c_k = beta s_k,t; t_h the tendon's direction
in the hole, midway between its chords), with the signs of his continuous law (the force -f,
the moment r x f). Many discs tend to the continuous laws above with theta_k summing the
tendon's curvature (Till's viscous law takes the backbone's: they differ by O(r kappa)).
"""

import math

from tendon_robot_sim.models._numerics import cross, kernel, norm

# Rows of Dyn.friction (one column per tendon): law, coefficient (beta [s/m] or nu [-]),
# slip velocity eps [m/s], compliance C [1/N], motor distance d [m]; the implicit dynamics'
# state of the sliding law's direction (rod/dynamics/_implicit_kernels._step): 1 while it is
# taken from Dyn.Z's last columns (else 0), and the steps still to take so
FR_LAW, FR_COEF, FR_SLIP, FR_COMPLIANCE, FR_MOTOR, FR_FROZEN, FR_TURNING = 0, 1, 2, 3, 4, 5, 6
FR_SIZE = 7
# FR_LAW values
FR_NONE, FR_VISCOUS, FR_SLIDING = 0.0, 1.0, 2.0
# Columns of Dyn.fw (scratch, one row per sliding tendon): tendon index, r, t, w, tau/|pb|,
# k, y = K^-1 e (v_s, u_s), n
FW_T, FW_R, FW_TAN, FW_W, FW_LAM, FW_K, FW_Y, FW_N = 0, 1, 4, 7, 10, 11, 12, 18
FW_SIZE = 19
# Columns of Dyn.fw in the discrete model (one row per tendon, the hole being passed): the
# tendon's unit direction into the hole (world frame), its unstretched length s from the motor
# to the hole [m], the exponent c of the hole's tension ratio [1/rad]
HS_U, HS_S, HS_C = 0, 3, 4
# Gauss-Seidel sweeps over several sliding tendons (one tendon is solved exactly in one)
FRICTION_SWEEPS = 3


@kernel
def saturation(x, eps):
    """sat(x) = x / sqrt(x^2 + eps^2): the sign of x, smoothed below eps."""
    return x / math.sqrt(x * x + eps * eps)


@kernel
def hole_exponent(fr, t, z, zh, c0, base, s):
    """
    Return c of tendon t's tension ratio exp(-c theta) through a hole (module docstring).

    ``s`` [m]: the unstretched tendon length from the motor to the hole, written to the hole's
    evaluation point z = Dyn.Z[row] at column base + t (base = Z_SIZE), whose history zh =
    Dyn.Zh[row] gives its rate s_t = c0 s + zh[base + t], or z[base + nt + t] where the sliding
    direction is frozen (FR_FROZEN). 0 for a frictionless tendon.
    """
    nt = fr.shape[1]
    z[base + t] = s
    law = fr[FR_LAW, t]
    if law == FR_NONE:
        return 0.0
    s_t = z[base + nt + t] if fr[FR_FROZEN, t] else c0 * s + zh[base + t]
    if law == FR_SLIDING:
        return fr[FR_COEF, t] * saturation(s_t, fr[FR_SLIP, t])
    return fr[FR_COEF, t] * s_t


@kernel
def turn_angle(a0, a1, a2, b0, b1, b2):
    """Angle [rad] in [0, pi] between the unit vectors a and b: atan2(|a x b|, a . b)."""
    c0, c1, c2 = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    return math.atan2(math.sqrt(c0 * c0 + c1 * c1 + c2 * c2), a0 * b0 + a1 * b1 + a2 * b2)


@kernel
def at_base(fr, hs, t, tau, R0, z, zh, c0, base):
    """
    Start tendon t's holes (hs = Dyn.fw) at the base's: s = d / (1 + C tau) there.

    It enters along the base's axis (column 2 of R0); its exponent from the base's evaluation
    point z = Dyn.Z[row], zh = Dyn.Zh[row] (:func:`hole_exponent`).
    """
    s = fr[FR_MOTOR, t] / (1.0 + fr[FR_COMPLIANCE, t] * tau)
    hs[t, HS_S] = s
    hs[t, HS_C] = hole_exponent(fr, t, z, zh, c0, base, s)
    for i in range(3):
        hs[t, HS_U + i] = R0[i, 2]


@kernel
def through_base(fr, hs, t, tau, h, dl):
    """
    Return the tension [N] of tendon t's first bay, along the chord h (length dl [m]).

    Sliding: the motor's ``tau`` after the base hole's capstan jump; viscous: ``tau`` (the
    base takes its hole's load).
    """
    if fr[FR_LAW, t] == FR_VISCOUS:
        return tau
    theta = turn_angle(hs[t, HS_U], hs[t, HS_U + 1], hs[t, HS_U + 2], h[0] / dl, h[1] / dl,
                       h[2] / dl)
    return tau * math.exp(-hs[t, HS_C] * theta)


@kernel
def into_hole(fr, hs, t, tension, h, dl, z, zh, c0, base):
    """
    Move tendon t's hole (hs = Dyn.fw) on along the chord h (length dl [m]) of ``tension`` [N].

    The new hole's s, direction in and exponent (its evaluation point z = Dyn.Z[row], zh).
    """
    s = hs[t, HS_S] + dl / (1.0 + fr[FR_COMPLIANCE, t] * tension)
    hs[t, HS_S] = s
    hs[t, HS_C] = hole_exponent(fr, t, z, zh, c0, base, s)
    for i in range(3):
        hs[t, HS_U + i] = h[i] / dl


@kernel
def out_of_hole(fr, hs, t, tension, hn, nh, rw, yc, f, tmp):
    """
    Return the tension [N] tendon t leaves its hole with, along hn (length nh [m]).

    ``tension``: the bay's before the hole. Sliding: the capstan jump, tension exp(-c theta).
    Viscous: unchanged, and the disc takes Till's load f = beta T theta (-s_t) t_h (t_h the
    tendon's direction in the hole, midway between its chords) with his signs, the force -f
    and the moment r x f (``rw`` = r, world frame): taken off the discrete model's state yc
    (n, m in yc[12:18]). Scratch: f, tmp (3,).
    """
    theta = turn_angle(hs[t, HS_U], hs[t, HS_U + 1], hs[t, HS_U + 2], hn[0] / nh, hn[1] / nh,
                       hn[2] / nh)
    if fr[FR_LAW, t] != FR_VISCOUS:
        return tension * math.exp(-hs[t, HS_C] * theta)
    for i in range(3):
        f[i] = hs[t, HS_U + i] + hn[i] / nh
    mid = norm(f, 2)
    if mid > 0.0:
        g = hs[t, HS_C] * tension * theta / mid      # f = -g (u_in + u_out)
        for i in range(3):
            f[i] *= g
        cross(rw, f, tmp)
        for i in range(3):
            yc[12 + i] -= f[i]
            yc[15 + i] += tmp[i]
    return tension


@kernel
def viscous_load(beta, tau, u0, u1, s_t, t0, t1, t2):
    """Return Till's viscous friction load f_i [N/m] (body frame) of the module docstring."""
    c = beta * tau * math.sqrt(u0 * u0 + u1 * u1) * -s_t
    return c * t0, c * t1, c * t2


@kernel
def _normal_force(q0, q1, q2, h0, h1, h2, lam, t0, t1, t2):
    """
    Return n >= 0 with n = |G + n H|, G = lam P q, H = lam P h, P = I - t t^T.

    n^2 = |G|^2 + 2 n G.H + n^2 |H|^2 has one root n >= 0 when |H| < 1:
    n = (G.H + sqrt((G.H)^2 + (1 - |H|^2) |G|^2)) / (1 - |H|^2). NaN when |H| >= 1 (friction
    too strong for a normal force to exist; the shooting step then fails and is retried).
    """
    qt = q0 * t0 + q1 * t1 + q2 * t2
    g0, g1, g2 = lam * (q0 - qt * t0), lam * (q1 - qt * t1), lam * (q2 - qt * t2)
    ht = h0 * t0 + h1 * t1 + h2 * t2
    k0, k1, k2 = lam * (h0 - ht * t0), lam * (h1 - ht * t1), lam * (h2 - ht * t2)
    a = 1.0 - (k0 * k0 + k1 * k1 + k2 * k2)
    if not a > 0.0:
        return math.nan
    b = g0 * k0 + g1 * k1 + g2 * k2
    return (b + math.sqrt(b * b + a * (g0 * g0 + g1 * g1 + g2 * g2))) / a


@kernel
def sliding_coupling(fw, ns, x):
    """
    Solve the normal forces n_i of the ``ns`` sliding tendons in fw; update x = (v_s, u_s).

    On entry x = x_0 = K^-1 b and fw[i] holds r, t, w, lam = tau/|pb|, k and y = K^-1 e of
    tendon i (see the module docstring); on return fw[i, FW_N] = n_i and x includes the
    friction loads sum_j k_j n_j y_j. tau_i,s = -k_i n_i.
    """
    for i in range(ns):
        fw[i, FW_N] = 0.0
    for _ in range(FRICTION_SWEEPS if ns > 1 else 1):
        for i in range(ns):
            r0, r1, r2 = fw[i, FW_R], fw[i, FW_R + 1], fw[i, FW_R + 2]
            # q = w_i + v_s + u_s x r_i at x_0 plus the other tendons' loads; h = k_i (y_i part)
            q0, q1, q2 = fw[i, FW_W], fw[i, FW_W + 1], fw[i, FW_W + 2]
            h0 = h1 = h2 = 0.0
            for j in range(ns):
                yj = fw[j, FW_Y:FW_Y + 6]
                e0 = yj[0] + yj[4] * r2 - yj[5] * r1
                e1 = yj[1] + yj[5] * r0 - yj[3] * r2
                e2 = yj[2] + yj[3] * r1 - yj[4] * r0
                if j == i:
                    c = fw[i, FW_K]
                    h0, h1, h2 = c * e0, c * e1, c * e2
                else:
                    c = fw[j, FW_K] * fw[j, FW_N]
                    q0 += c * e0
                    q1 += c * e1
                    q2 += c * e2
            q0 += x[0] + x[4] * r2 - x[5] * r1
            q1 += x[1] + x[5] * r0 - x[3] * r2
            q2 += x[2] + x[3] * r1 - x[4] * r0
            fw[i, FW_N] = _normal_force(q0, q1, q2, h0, h1, h2, fw[i, FW_LAM], fw[i, FW_TAN],
                                        fw[i, FW_TAN + 1], fw[i, FW_TAN + 2])
    for j in range(ns):
        c = fw[j, FW_K] * fw[j, FW_N]
        for m in range(6):
            x[m] += c * fw[j, FW_Y + m]
