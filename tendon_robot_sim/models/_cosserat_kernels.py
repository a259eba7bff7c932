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

The tendon robot's shooting solver (:mod:`tendon_robot_sim.models.rod.statics._kernels`)
and the 6-RUS parallel robot's (:mod:`tendon_robot_sim.models.pcr._kernels`) integrate
the same rod: the constitutive laws, the ODE right-hand sides (a bare rod, or a rod
loaded by routed tendons) and a fixed-step RK4 over one segment; ``poses`` turns a solution's
trajectory into frames and tendon paths.

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

Dynamics (J. Till, V. Aloi, D. C. Rucker, "Real-time dynamics of soft and continuum robots
based on Cosserat rod models", IJRR 2019): with ``Dyn.on`` the same right-hand sides are
those of one implicit time step. The state then also holds the body-frame linear and
angular velocities ``q`` and ``w``; every time derivative is the BDF-alpha formula
x_t = c0 x + x_h, with the history x_h of the evaluation point (row) known from the
previous steps. Added to the statics: the viscous (Kelvin-Voigt) wrench n_v = Bse v_t,
m_v = Bbt u_t, the inertia rho A (q_t + w x q) and rho J w_t + w x rho J w, square-law
drag C q|q| and mass-proportional damping c rho A q, c rho J w (body frame), and the
compatibility equations q_s = v_t - u x q + w x v, w_s = u_t - u x w. Each evaluation
writes its z = (v, u, q, w, v_s, u_s) to ``Dyn.Z[row]``: what the next history is made of.

"""

from collections import namedtuple
import math

from tendon_robot_sim.models._numerics import inverse3, kernel
from tendon_robot_sim.models.contact._kernels import (contact_force, CW_F, CW_P, CW_V,
                                                      within_reach)
from tendon_robot_sim.models.rod.tendons._friction_kernels import (
    FR_COEF, FR_COMPLIANCE, FR_FROZEN, FR_LAW, FR_MOTOR, FR_SLIDING, FR_SLIP, FR_VISCOUS, FW_K,
    FW_LAM, FW_N, FW_R, FW_T, FW_TAN, FW_W, FW_Y, saturation, sliding_coupling, viscous_load)

COSSERAT, KIRCHHOFF, DISCRETE = 0, 1, 2
LINEAR, PYELASTICA = 0, 1
# Newton solve status codes (the rod and the parallel robot)
CONVERGED, MAX_ITERATIONS, FAILED = 0, 1, 2
# Relative finite-difference step of the Jacobians: residuals are smooth to ~1e-13,
# so 1e-7 balances truncation against round-off (both ~1e-7 relative in J).
FD_STEP = 1e-7
# Slices of the material vector (Plan.mat, PcrPlan.mat)
MAT_KSE, MAT_KBT, MAT_RHOAG, MAT_GRAVITY, MAT_P0, MAT_USTAR = 0, 3, 6, 9, 12, 15
# Slices of Dyn.coef: c0 [1/s], rho A [kg/m], rho J diagonal [kg m], Bse [N s],
# Bbt [N m^2 s], drag C [kg/m^2], mass-proportional damping rate c [1/s], disc inertia
# diagonal [kg m^2] (each disc's mass is Plan.end_mass)
DYN_C0, DYN_RHOA, DYN_RHOJ, DYN_BSE, DYN_BBT, DYN_DRAG, DYN_RATE, DYN_DISC_J = (
    0, 1, 2, 5, 8, 11, 14, 15)
DYN_SIZE = 18
# Columns of a row of Dyn.Z and Dyn.Zh: v, u, q, w, v_s, u_s; with tendon friction then s_i
# per tendon (the unstretched tendon length from the motor, rod/tendons/_friction_kernels.py)
Z_V, Z_U, Z_Q, Z_W, Z_VS, Z_US = 0, 3, 6, 9, 12, 15
Z_SIZE = 18

Dyn = namedtuple('Dyn', [
    'on',      # bool: one implicit time step (False: statics; the arrays are not read)
    'coef',    # (DYN_SIZE,) see DYN_*
    'Zh',      # (rows, Z_SIZE) history terms x_h of each evaluation point
    'Z',       # (rows, Z_SIZE) z of each evaluation point at the last evaluation
    #            (Z_SIZE + 2 nt columns with tendon friction: s_i of each tendon, then the
    #            s_i,t that fixes the sliding law's direction where FR_FROZEN is set,
    #            rod/dynamics/_implicit_kernels._step; there and not in a field of its own:
    #            one more array in Dyn made every rod integration 1.8 times slower, friction
    #            or not, as numba passes the plan's tuples by value)
    'friction',  # (FR_SIZE, nt) tendon friction (rod/tendons/_friction_kernels.py), (FR_SIZE, 0)
    #            without; with it the state of a continuous robot also holds each tendon's
    #            tension along s after q, w (column 24 + nt + i) and its length state is
    #            (1 + C tau(0)) times the unstretched length from the base
    'fw',      # (nt + 1, FW_SIZE) scratch of the sliding law (row nt: v_s, u_s)
])


@kernel
def fd_step(x):
    """
    Return the finite-difference step for unknown x.

    Relative, and towards larger |x| so that a tension/slack unknown stays on its side of the
    kink at 0 (one-sided derivative of the branch it is on).
    """
    step = FD_STEP * max(1.0, abs(x))
    return step if x >= 0.0 else -step


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
def viscous_strain(n0, n1, n2, mat, law, dyn, row):
    """
    Return (e, v0, v1, v2): the strain of the body force nb = N(v) + Bse (c0 v + v_h).

    N is the elastic law (:func:`force_from_strain`); without dynamics this is
    :func:`strain_from_force`. The LINEAR law is diagonal; the PYELASTICA law with Bse needs
    Newton's method (3x3, from the elastic strain of nb).
    """
    Kse0, Kse1, Kse2 = mat[MAT_KSE], mat[MAT_KSE + 1], mat[MAT_KSE + 2]
    b0 = b1 = b2 = c0 = h0 = h1 = h2 = 0.0
    if dyn.on:
        c0 = dyn.coef[DYN_C0]
        b0, b1, b2 = dyn.coef[DYN_BSE], dyn.coef[DYN_BSE + 1], dyn.coef[DYN_BSE + 2]
        h0, h1, h2 = dyn.Zh[row, Z_V], dyn.Zh[row, Z_V + 1], dyn.Zh[row, Z_V + 2]
    if law == LINEAR:
        return (1.0, (n0 - b0 * h0) / (Kse0 + c0 * b0), (n1 - b1 * h1) / (Kse1 + c0 * b1),
                (n2 + Kse2 - b2 * h2) / (Kse2 + c0 * b2))
    w0, w1, w2 = n0 / Kse0, n1 / Kse1, n2 / Kse2
    e = _dilatation(w0, w1, w2, law)
    v0, v1, v2 = e * w0, e * w1, 1.0 + e * w2
    if b0 == 0.0 and b1 == 0.0 and b2 == 0.0:
        return e, v0, v1, v2
    for _ in range(30):
        # G(v) = Kse (v - e3) / e + Bse (c0 v + v_h) - nb, A = dG/dv; v -= A^-1 G
        e = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        g0 = Kse0 * v0 / e + b0 * (c0 * v0 + h0) - n0
        g1 = Kse1 * v1 / e + b1 * (c0 * v1 + h1) - n1
        g2 = Kse2 * (v2 - 1.0) / e + b2 * (c0 * v2 + h2) - n2
        f0, f1, f2 = Kse0 * v0 / e ** 3, Kse1 * v1 / e ** 3, Kse2 * (v2 - 1.0) / e ** 3
        a00, a01, a02 = Kse0 / e + c0 * b0 - f0 * v0, -f0 * v1, -f0 * v2
        a10, a11, a12 = -f1 * v0, Kse1 / e + c0 * b1 - f1 * v1, -f1 * v2
        a20, a21, a22 = -f2 * v0, -f2 * v1, Kse2 / e + c0 * b2 - f2 * v2
        c00, c01, c02 = a11 * a22 - a12 * a21, a12 * a20 - a10 * a22, a10 * a21 - a11 * a20
        det = a00 * c00 + a01 * c01 + a02 * c02
        d0 = (c00 * g0 + (a02 * a21 - a01 * a22) * g1 + (a01 * a12 - a02 * a11) * g2) / det
        d1 = (c01 * g0 + (a00 * a22 - a02 * a20) * g1 + (a02 * a10 - a00 * a12) * g2) / det
        d2 = (c02 * g0 + (a01 * a20 - a00 * a21) * g1 + (a00 * a11 - a01 * a10) * g2) / det
        v0, v1, v2 = v0 - d0, v1 - d1, v2 - d2
        if not abs(d0) + abs(d1) + abs(d2) > 1e-15:
            break
    return math.sqrt(v0 * v0 + v1 * v1 + v2 * v2), v0, v1, v2


@kernel
def viscous_curvature(m, e, mat, dyn, row, u):
    """
    Curvature u (3,) of the body moment m = Kbt (u - u*) / e^3 + Bbt (c0 u + u_h).

    e: the dilatation (1 for the LINEAR law and the Kirchhoff rod); u* the rest curvature
    ``mat[MAT_USTAR:]`` (the tendon robot's: its segment's, set by the shooting).
    """
    e3 = e * e * e
    for i in range(3):
        stiffness = mat[MAT_KBT + i] / e3
        if dyn.on:
            b = dyn.coef[DYN_BBT + i]
            u[i] = (m[i] + stiffness * mat[MAT_USTAR + i] - b * dyn.Zh[row, Z_U + i]) / (
                stiffness + dyn.coef[DYN_C0] * b)
        else:
            u[i] = m[i] / stiffness + mat[MAT_USTAR + i]


@kernel
def viscous_wrench(kirchhoff, v, u, e, mat, law, dyn, row, nb, mb):
    """
    Body force nb and moment mb of the strains v, u, their viscous parts included.

    The Kirchhoff rod (v = e3) keeps nb: there the force is a state, not a strain. The moment
    is that of the curvature less the rest curvature ``mat[MAT_USTAR:]``.
    """
    if not kirchhoff:
        force_from_strain(v, mat, law, nb)
    for i in range(3):
        mb[i] = mat[MAT_KBT + i] * (u[i] - mat[MAT_USTAR + i]) / (e * e * e)
        if dyn.on:
            c0 = dyn.coef[DYN_C0]
            if not kirchhoff:
                nb[i] += dyn.coef[DYN_BSE + i] * (c0 * v[i] + dyn.Zh[row, Z_V + i])
            mb[i] += dyn.coef[DYN_BBT + i] * (c0 * u[i] + dyn.Zh[row, Z_U + i])


@kernel
def disc_inertia(dyn, mass, row, q, w, f, m):
    """
    Add to f and m (body frame) the load a disc of ``mass`` puts on the rod.

    The disc rides on the backbone with velocities q, w: it needs m (q_t + w x q) and
    J w_t + w x J w (J its inertia diagonal) and the damper takes c m q, c J w (mass
    proportional); the rod supplies both, so it feels their opposite. ``row`` is the history
    point of the disc (the end of its segment).
    """
    co, zh = dyn.coef, dyn.Zh[row]
    c0, c = co[DYN_C0], co[DYN_RATE]
    J0, J1, J2 = co[DYN_DISC_J], co[DYN_DISC_J + 1], co[DYN_DISC_J + 2]
    q0, q1, q2, w0, w1, w2 = q[0], q[1], q[2], w[0], w[1], w[2]
    f[0] -= mass * (c0 * q0 + zh[Z_Q] + w1 * q2 - w2 * q1 + c * q0)
    f[1] -= mass * (c0 * q1 + zh[Z_Q + 1] + w2 * q0 - w0 * q2 + c * q1)
    f[2] -= mass * (c0 * q2 + zh[Z_Q + 2] + w0 * q1 - w1 * q0 + c * q2)
    m[0] -= J0 * (c0 * w0 + zh[Z_W] + c * w0) + w1 * J2 * w2 - w2 * J1 * w1
    m[1] -= J1 * (c0 * w1 + zh[Z_W + 1] + c * w1) + w2 * J0 * w0 - w0 * J2 * w2
    m[2] -= J2 * (c0 * w2 + zh[Z_W + 2] + c * w2) + w0 * J1 * w1 - w1 * J0 * w0


@kernel
def _inertia_terms(dyn, row, v0, v1, v2, u0, u1, u2, q0, q1, q2, w0, w1, w2):
    """
    Return the dynamic terms of one evaluation point (12 floats, body frame).

    f = rho A (q_t + w x q) + C q|q| + c rho A q: what the rod's internal force must supply
    beyond statics; l = rho J w_t + w x rho J w + c rho J w, likewise for the moment;
    q_s = v_t - u x q + w x v and w_s = u_t - u x w (compatibility). Also writes v, u, q, w
    to Dyn.Z[row].
    """
    co, zh, z = dyn.coef, dyn.Zh[row], dyn.Z[row]
    c0, rhoA, c = co[DYN_C0], co[DYN_RHOA], co[DYN_RATE]
    J0, J1, J2 = co[DYN_RHOJ], co[DYN_RHOJ + 1], co[DYN_RHOJ + 2]
    C0, C1, C2 = co[DYN_DRAG], co[DYN_DRAG + 1], co[DYN_DRAG + 2]
    z[0], z[1], z[2], z[3], z[4], z[5] = v0, v1, v2, u0, u1, u2
    z[6], z[7], z[8], z[9], z[10], z[11] = q0, q1, q2, w0, w1, w2
    vt0, vt1, vt2 = c0 * v0 + zh[0], c0 * v1 + zh[1], c0 * v2 + zh[2]
    ut0, ut1, ut2 = c0 * u0 + zh[3], c0 * u1 + zh[4], c0 * u2 + zh[5]
    return (rhoA * (c0 * q0 + zh[6] + w1 * q2 - w2 * q1 + c * q0) + C0 * q0 * abs(q0),
            rhoA * (c0 * q1 + zh[7] + w2 * q0 - w0 * q2 + c * q1) + C1 * q1 * abs(q1),
            rhoA * (c0 * q2 + zh[8] + w0 * q1 - w1 * q0 + c * q2) + C2 * q2 * abs(q2),
            J0 * (c0 * w0 + zh[9] + c * w0) + w1 * J2 * w2 - w2 * J1 * w1,
            J1 * (c0 * w1 + zh[10] + c * w1) + w2 * J0 * w0 - w0 * J2 * w2,
            J2 * (c0 * w2 + zh[11] + c * w2) + w0 * J1 * w1 - w1 * J0 * w0,
            vt0 - (u1 * q2 - u2 * q1) + (w1 * v2 - w2 * v1),
            vt1 - (u2 * q0 - u0 * q2) + (w2 * v0 - w0 * v2),
            vt2 - (u0 * q1 - u1 * q0) + (w0 * v1 - w1 * v0),
            ut0 - (u1 * w2 - u2 * w1),
            ut1 - (u2 * w0 - u0 * w2),
            ut2 - (u0 * w1 - u1 * w0))


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
def _contact_load(world, y, moving, iq, a):
    """
    Return the contact load per unit length f_c [N/m] (world frame) on the rod at y.

    Penalty at the envelope of radius a [m] (the rod's ``world.radius[0]``, a disc's
    ``world.radius[1]``) around p = y[0:3]; moving (dynamics):
    also damping and friction on the velocity R q (q = y[iq:iq + 3], body frame). The returned
    array is scratch of ``world.work``: use it before the next call.
    """
    cw = world.work
    p, vel, f = cw[CW_P:CW_P + 3], cw[CW_V:CW_V + 3], cw[CW_F:CW_F + 3]
    for i in range(3):
        p[i] = y[i]
        f[i] = 0.0
        vel[i] = (y[3 + 3 * i] * y[iq] + y[4 + 3 * i] * y[iq + 1] + y[5 + 3 * i] * y[iq + 2]
                  if moving else 0.0)
    contact_force(world, p, vel, moving, a, f, cw[0:12])
    return f


@kernel
def disc_contact(world, y, moving, iq, thickness, f):
    """
    Add to f the contact force [N] (world frame) on a disc of ``thickness`` [m] at y.

    The disc replaces the rod's envelope over its thickness: thickness (f_c at the disc's
    radius - f_c at the rod's), the rod's share being in the rod's distributed load. Applied
    at the backbone: the normal load's moment about it is zero (it points at the axis); that
    of friction at the rim is left out, as the explicit model's nodes leave it out.
    """
    if not within_reach(world, y, max(world.radius[0], world.radius[1])):
        return
    fc = _contact_load(world, y, moving, iq, world.radius[1])
    d0, d1, d2 = fc[0], fc[1], fc[2]
    fc = _contact_load(world, y, moving, iq, world.radius[0])
    f[0] += thickness * (d0 - fc[0])
    f[1] += thickness * (d1 - fc[1])
    f[2] += thickness * (d2 - fc[2])


@kernel
def _rhs_rod(law, mat, y, dy, dyn, row, world, touch):
    """
    Write dy/ds of a bare Cosserat rod into dy.

    Discrete model between vertebrae, rods of a parallel robot; y = p, R, n, m (world frame),
    then q, w (body) with dynamics: v and u - u* from the constitutive law (u* the rest
    curvature, viscous parts included), n_s = -rho A g - f_c + R f, m_s = -p_s x n + R l with
    the contact load f_c of :func:`_contact_load` (where ``touch``) and the dynamic terms
    f, l of :func:`_inertia_terms` (zero in statics).
    """
    n0, n1, n2 = y[12], y[13], y[14]
    m0, m1, m2 = y[15], y[16], y[17]
    # R^T n and R^T m
    e, v0, v1, v2 = viscous_strain(y[3] * n0 + y[6] * n1 + y[9] * n2,
                                   y[4] * n0 + y[7] * n1 + y[10] * n2,
                                   y[5] * n0 + y[8] * n1 + y[11] * n2, mat, law, dyn, row)
    e3 = e * e * e
    mb0 = y[3] * m0 + y[6] * m1 + y[9] * m2
    mb1 = y[4] * m0 + y[7] * m1 + y[10] * m2
    mb2 = y[5] * m0 + y[8] * m1 + y[11] * m2
    if dyn.on:
        c0, co, zh = dyn.coef[DYN_C0], dyn.coef, dyn.Zh[row]
        K0, K1, K2 = mat[MAT_KBT] / e3, mat[MAT_KBT + 1] / e3, mat[MAT_KBT + 2] / e3
        B0, B1, B2 = co[DYN_BBT], co[DYN_BBT + 1], co[DYN_BBT + 2]
        u0 = (mb0 + K0 * mat[MAT_USTAR] - B0 * zh[Z_U]) / (K0 + c0 * B0)
        u1 = (mb1 + K1 * mat[MAT_USTAR + 1] - B1 * zh[Z_U + 1]) / (K1 + c0 * B1)
        u2 = (mb2 + K2 * mat[MAT_USTAR + 2] - B2 * zh[Z_U + 2]) / (K2 + c0 * B2)
    else:
        u0 = e3 * mb0 / mat[MAT_KBT] + mat[MAT_USTAR]
        u1 = e3 * mb1 / mat[MAT_KBT + 1] + mat[MAT_USTAR + 1]
        u2 = e3 * mb2 / mat[MAT_KBT + 2] + mat[MAT_USTAR + 2]
    _kinematics(y, v0, v1, v2, u0, u1, u2, dy)
    p0, p1, p2 = dy[0], dy[1], dy[2]
    dy[12] = -mat[MAT_RHOAG]
    dy[13] = -mat[MAT_RHOAG + 1]
    dy[14] = -mat[MAT_RHOAG + 2]
    if touch and world.shape.size and within_reach(world, y, world.radius[0]):
        fc = _contact_load(world, y, dyn.on, 18, world.radius[0])
        for i in range(3):
            dy[12 + i] -= fc[i]
    dy[15] = -(p1 * n2 - p2 * n1)
    dy[16] = -(p2 * n0 - p0 * n2)
    dy[17] = -(p0 * n1 - p1 * n0)
    if dyn.on:
        f0, f1, f2, l0, l1, l2, qs0, qs1, qs2, ws0, ws1, ws2 = _inertia_terms(
            dyn, row, v0, v1, v2, u0, u1, u2, y[18], y[19], y[20], y[21], y[22], y[23])
        for i in range(3):
            dy[12 + i] += y[3 + 3 * i] * f0 + y[4 + 3 * i] * f1 + y[5 + 3 * i] * f2
            dy[15 + i] += y[3 + 3 * i] * l0 + y[4 + 3 * i] * l1 + y[5 + 3 * i] * l2
        dyn.Z[row, Z_VS:Z_SIZE] = 0.0
        dy[18], dy[19], dy[20], dy[21], dy[22], dy[23] = qs0, qs1, qs2, ws0, ws1, ws2


@kernel
def _factor(K, P1, X, P2):
    """
    Factor the 6x6 K = [[K11, K12], [K21, K22]] of R&W Eq. (16) by block elimination.

    P1 = K11^-1, X = P1 K12, K22 becomes the Schur complement S = K22 - K21 X, P2 = S^-1.
    """
    inverse3(K, 0, 0, P1)
    for i in range(3):
        for j in range(3):
            X[i, j] = P1[i, 0] * K[0, 3 + j] + P1[i, 1] * K[1, 3 + j] + P1[i, 2] * K[2, 3 + j]
    for i in range(3):
        for j in range(3):
            K[3 + i, 3 + j] -= (K[3 + i, 0] * X[0, j] + K[3 + i, 1] * X[1, j]
                                + K[3 + i, 2] * X[2, j])
    inverse3(K, 3, 3, P2)


@kernel
def _block_solve(K, P1, X, P2, d0, d1, d2, c0, c1, c2):
    """
    Return (v_s, u_s) solving K (v_s, u_s) = (d, c) with the factors of :func:`_factor`.

    u_s = S^-1 (c - K21 P1 d), v_s = P1 d - X u_s.
    """
    y0 = P1[0, 0] * d0 + P1[0, 1] * d1 + P1[0, 2] * d2
    y1 = P1[1, 0] * d0 + P1[1, 1] * d1 + P1[1, 2] * d2
    y2 = P1[2, 0] * d0 + P1[2, 1] * d1 + P1[2, 2] * d2
    c0 -= K[3, 0] * y0 + K[3, 1] * y1 + K[3, 2] * y2
    c1 -= K[4, 0] * y0 + K[4, 1] * y1 + K[4, 2] * y2
    c2 -= K[5, 0] * y0 + K[5, 1] * y1 + K[5, 2] * y2
    us0 = P2[0, 0] * c0 + P2[0, 1] * c1 + P2[0, 2] * c2
    us1 = P2[1, 0] * c0 + P2[1, 1] * c1 + P2[1, 2] * c2
    us2 = P2[2, 0] * c0 + P2[2, 1] * c1 + P2[2, 2] * c2
    return (y0 - (X[0, 0] * us0 + X[0, 1] * us1 + X[0, 2] * us2),
            y1 - (X[1, 0] * us0 + X[1, 1] * us1 + X[1, 2] * us2),
            y2 - (X[2, 0] * us0 + X[2, 1] * us1 + X[2, 2] * us2), us0, us1, us2)


@kernel
def _rhs_tendons(kirchhoff, law, mat, y, rt, act, tau, dy, K, M, dyn, row, world, touch):
    """
    Write dy/ds of a rod with tendons routed along it into dy (R&W Eqs. 15-17).

    y = p, R, v (Cosserat) or nb (Kirchhoff), u, tendon lengths, then q, w with dynamics.

    Sums over the tendons (Eq. 15), with pb = u x r + r_s + v:
    A_i = -tau (pb^)^2 / |pb|^3, G_i = -A_i r^, H_i = r^ G_i = -r^ A_i r^,
    a_i = A_i (u x (pb + r_s) + r_ss), b_i = r x a_i; |pb| is the tendon length per
    unit s. Cosserat (Eq. 16): [[Kn + A, G], [Km + G^T, Ku + H]] [v_s; u_s] =
    [-u x nb - R^T rho A g - a; -u x mb - v x nb - b], solved by block elimination; for
    the LINEAR law Kn = Kse, Ku = Kbt, Km = 0, the PYELASTICA law uses the derivatives
    of nb = Kse (v - e3)/|v| and mb = Kbt u/|v|^3 (Kn = dnb/dv, Km = dmb/dv,
    Ku = dmb/du). Kirchhoff (Eq. 17), v = e3: (Kbt + H) u_s = -u x Kbt u - e3 x nb - b,
    nb_s = -u x nb - G u_s - a - R^T rho A g. Scratch: K (6, 6), M (4, 3, 3). The contact
    load f_c (:func:`_contact_load`, where ``touch``) joins the weight: rho A g + f_c.
    Dynamics (Till et al. 2019): nb and mb gain Bse v_t and Bbt u_t; their s-derivatives
    c0 Bse v_s + Bse v_sh (likewise Bbt) put c0 Bse, c0 Bbt on the diagonal of K and
    -Bse v_sh, -Bbt u_sh on the right; the f, l of :func:`_inertia_terms` join the force and
    moment right-hand sides. Tendon friction (``dyn.friction``, Cosserat rod only): the
    tension is the state y[24 + nt + i], the length state (1 + C tau(0)) times the unstretched
    length (the path length while the tension is the base's), and the loads of
    :mod:`~tendon_robot_sim.models.rod.tendons._friction_kernels` join the right-hand sides.
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
    # mb = Kbt (u - u*) / e^3: u* the rest curvature of this segment (0 but for the bending
    # friction of models.rod.statics.bending_friction); constant along it, so u_s is unchanged
    mb0 = Kbt0 * (u0 - mat[MAT_USTAR]) / e3
    mb1 = Kbt1 * (u1 - mat[MAT_USTAR + 1]) / e3
    mb2 = Kbt2 * (u2 - mat[MAT_USTAR + 2]) / e3
    nt = act.size
    # BDF-alpha coefficient and history of this point (a statics Dyn has one dummy row)
    co, zh = dyn.coef, dyn.Zh[row if dyn.on else 0]
    cz = co[DYN_C0]
    fr, fw = dyn.friction, dyn.fw
    friction = dyn.on and fr.shape[1] > 0 and not kirchhoff
    it = 24 + nt          # tensions in the state (friction)
    ns = 0                # sliding tendons loaded here
    s_t = 0.0
    ff0 = ff1 = ff2 = fl0 = fl1 = fl2 = 0.0   # viscous friction: force, moment right-hand side
    if dyn.on:
        if not kirchhoff:
            nb0 += co[DYN_BSE] * (cz * v0 + zh[Z_V])
            nb1 += co[DYN_BSE + 1] * (cz * v1 + zh[Z_V + 1])
            nb2 += co[DYN_BSE + 2] * (cz * v2 + zh[Z_V + 2])
        mb0 += co[DYN_BBT] * (cz * u0 + zh[Z_U])
        mb1 += co[DYN_BBT + 1] * (cz * u1 + zh[Z_U + 1])
        mb2 += co[DYN_BBT + 2] * (cz * u2 + zh[Z_U + 2])
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
    if dyn.on:
        for i in range(3):
            if kirchhoff:
                K[i, i] += cz * co[DYN_BBT + i]
            else:
                K[i, i] += cz * co[DYN_BSE + i]
                K[3 + i, 3 + i] += cz * co[DYN_BBT + i]
    A, G, H = M[0], M[1], M[2]          # A_i, G_i, H_i of the current tendon
    a0 = a1 = a2 = b0 = b1 = b2 = 0.0
    for t in range(nt):
        if friction:
            dy[it + t] = 0.0
        if not act[t]:
            dy[18 + t] = 0.0
            continue
        tension = y[it + t] if friction else tau[t]
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
        if friction:
            # the length state is (1 + C tau(0)) times the unstretched length (exactly |pb|
            # where the tension is the base's, as without friction); s_i from the motor (its
            # d / (1 + C tau(0)) below the base), s_i,s and s_i,t
            C = fr[FR_COMPLIANCE, t]
            stretch = 1.0 + C * tau[t]
            dy[18 + t] = nrm * (stretch / (1.0 + C * tension))
            s_i = (fr[FR_MOTOR, t] + y[18 + t]) / stretch
            dyn.Z[row, Z_SIZE + t] = s_i
            # s_i,t: this step's, or a fixed one where the sliding direction is frozen
            s_t = dyn.Z[row, Z_SIZE + nt + t] if fr[FR_FROZEN, t] else cz * s_i + zh[Z_SIZE + t]
        if tension == 0.0:
            continue
        c = tension / (pb_norm2 * nrm)
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
        if friction and fr[FR_LAW, t] == FR_VISCOUS:
            fi0, fi1, fi2 = viscous_load(fr[FR_COEF, t], tension, u0, u1, s_t, pb0 / nrm,
                                         pb1 / nrm, pb2 / nrm)
            ff0 += fi0
            ff1 += fi1
            ff2 += fi2
            fl0 -= r1 * fi2 - r2 * fi1
            fl1 -= r2 * fi0 - r0 * fi2
            fl2 -= r0 * fi1 - r1 * fi0
        elif friction and fr[FR_LAW, t] == FR_SLIDING:
            f = fw[ns]
            f[FW_T] = t
            f[FW_R], f[FW_R + 1], f[FW_R + 2] = r0, r1, r2
            f[FW_TAN], f[FW_TAN + 1], f[FW_TAN + 2] = pb0 / nrm, pb1 / nrm, pb2 / nrm
            f[FW_W], f[FW_W + 1], f[FW_W + 2] = w0, w1, w2
            f[FW_LAM] = tension / nrm
            f[FW_K] = fr[FR_COEF, t] * saturation(s_t, fr[FR_SLIP, t]) * dy[18 + t] / stretch
            ns += 1
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
    if touch and world.shape.size and within_reach(world, y, world.radius[0]):
        # + R^T f_c: contact with the world
        fc = _contact_load(world, y, dyn.on, 18 + nt, world.radius[0])
        f0 += y[3] * fc[0] + y[6] * fc[1] + y[9] * fc[2]
        f1 += y[4] * fc[0] + y[7] * fc[1] + y[10] * fc[2]
        f2 += y[5] * fc[0] + y[8] * fc[1] + y[11] * fc[2]
    # c = -u x mb - v x nb - b
    c0 = -(u1 * mb2 - u2 * mb1) - (v1 * nb2 - v2 * nb1) - b0
    c1 = -(u2 * mb0 - u0 * mb2) - (v2 * nb0 - v0 * nb2) - b1
    c2 = -(u0 * mb1 - u1 * mb0) - (v0 * nb1 - v1 * nb0) - b2
    # -u x nb - a - R^T rho A g (d of Eq. 16; the Kirchhoff nb_s without -G u_s)
    d0 = -(u1 * nb2 - u2 * nb1) - a0 - f0
    d1 = -(u2 * nb0 - u0 * nb2) - a1 - f1
    d2 = -(u0 * nb1 - u1 * nb0) - a2 - f2
    if dyn.on:
        fd0, fd1, fd2, l0, l1, l2, qs0, qs1, qs2, ws0, ws1, ws2 = _inertia_terms(
            dyn, row, v0, v1, v2, u0, u1, u2, y[18 + nt], y[19 + nt], y[20 + nt],
            y[21 + nt], y[22 + nt], y[23 + nt])
        d0 += fd0
        d1 += fd1
        d2 += fd2
        c0 += l0 - co[DYN_BBT] * zh[Z_US]
        c1 += l1 - co[DYN_BBT + 1] * zh[Z_US + 1]
        c2 += l2 - co[DYN_BBT + 2] * zh[Z_US + 2]
        if not kirchhoff:
            d0 -= co[DYN_BSE] * zh[Z_VS]
            d1 -= co[DYN_BSE + 1] * zh[Z_VS + 1]
            d2 -= co[DYN_BSE + 2] * zh[Z_VS + 2]
    if kirchhoff:
        Pi = M[2]
        inverse3(K, 0, 0, Pi)
        us0 = Pi[0, 0] * c0 + Pi[0, 1] * c1 + Pi[0, 2] * c2
        us1 = Pi[1, 0] * c0 + Pi[1, 1] * c1 + Pi[1, 2] * c2
        us2 = Pi[2, 0] * c0 + Pi[2, 1] * c1 + Pi[2, 2] * c2
        dy[12] = d0 - (K[0, 3] * us0 + K[0, 4] * us1 + K[0, 5] * us2)
        dy[13] = d1 - (K[1, 3] * us0 + K[1, 4] * us1 + K[1, 5] * us2)
        dy[14] = d2 - (K[2, 3] * us0 + K[2, 4] * us1 + K[2, 5] * us2)
    else:
        P1, X, P2 = M[0], M[3], M[2]
        _factor(K, P1, X, P2)
        vs0, vs1, vs2, us0, us1, us2 = _block_solve(K, P1, X, P2, d0 + ff0, d1 + ff1,
                                                    d2 + ff2, c0 + fl0, c1 + fl1, c2 + fl2)
        if ns:
            # the sliding law's load along each tendon: x = x_0 + sum k_j n_j K^-1 e_j
            x = fw[nt]
            x[0], x[1], x[2], x[3], x[4], x[5] = vs0, vs1, vs2, us0, us1, us2
            for j in range(ns):
                f = fw[j]
                t0, t1, t2 = f[FW_TAN], f[FW_TAN + 1], f[FW_TAN + 2]
                r0, r1, r2 = f[FW_R], f[FW_R + 1], f[FW_R + 2]
                (f[FW_Y], f[FW_Y + 1], f[FW_Y + 2], f[FW_Y + 3], f[FW_Y + 4],
                 f[FW_Y + 5]) = _block_solve(K, P1, X, P2, t0, t1, t2, r1 * t2 - r2 * t1,
                                             r2 * t0 - r0 * t2, r0 * t1 - r1 * t0)
            sliding_coupling(fw, ns, x)
            for j in range(ns):
                dy[it + int(fw[j, FW_T])] = -fw[j, FW_K] * fw[j, FW_N]
            vs0, vs1, vs2, us0, us1, us2 = x[0], x[1], x[2], x[3], x[4], x[5]
        dy[12], dy[13], dy[14] = vs0, vs1, vs2
    dy[15], dy[16], dy[17] = us0, us1, us2
    _kinematics(y, v0, v1, v2, u0, u1, u2, dy)
    if dyn.on:
        z = dyn.Z[row]
        for i in range(3):
            # v_s (the Kirchhoff rod's is 0: dy holds nb_s there)
            z[Z_VS + i] = 0.0 if kirchhoff else dy[12 + i]
            z[Z_US + i] = dy[15 + i]
        dy[18 + nt], dy[19 + nt], dy[20 + nt] = qs0, qs1, qs2
        dy[21 + nt], dy[22 + nt], dy[23 + nt] = ws0, ws1, ws2


@kernel
def rk4(model, law, mat, rt, act, tau, pt, n, h, row, y, traj, st, K, M, dyn, zr, world, touch):
    """
    Integrate n classical RK4 steps of size h from y (in place).

    Each step is written to traj[row + 1 ...]; rt[pt + i] holds the routing at s + i h / 2.
    With dynamics, stage j of step i is evaluation point zr + 4 i + j of the history: each
    stage keeps its own history, so the scheme is RK4 in arc length of the time-discretised
    equations (their time derivatives are linear combinations of states at the same stage).
    ``world``: the obstacles (contact._kernels.Contact), loading the rod along its length
    where ``touch``, not at all where not (a flag, not a second Contact without obstacles:
    numba passes a Contact by value, and the choice of one of two for each segment cost
    every rod integration of the implicit dynamics about 8 %).
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
            zrow = zr + 4 * step + stage
            if model == DISCRETE:
                _rhs_rod(law, mat, yt, dy, dyn, zrow, world, touch)
            else:
                _rhs_tendons(kirchhoff, law, mat, yt, rt[pt + 2 * step + (stage + 1) // 2],
                             act, tau, dy, K, M, dyn, zrow, world, touch)
            weight = 1.0 if stage == 0 or stage == 3 else 2.0
            advance = h if stage == 2 else 0.5 * h
            for i in range(ny):
                acc[i] += weight * dy[i]
                yt[i] = y[i] + advance * dy[i]
        for i in range(ny):
            y[i] += h / 6.0 * acc[i]
            traj[row + step + 1, i] = y[i]


@kernel
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
