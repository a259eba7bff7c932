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
Compiled time stepping of the clamped, damped, tendon-loaded Cosserat rod.

:func:`advance_rod` advances the rod of
:func:`~tendon_robot_sim.models.rod.dynamics.explicit.build_rod_system` by many position-Verlet
steps in one numba call, over preallocated arrays: nothing is allocated per step. It is
PyElastica 1.0's rod (Gazzola et al., Forward and inverse problems in the mechanics of
soft filaments, 2018) written out element by element: the same discretisation and the
same Voronoi quantities as ``_compute_internal_forces`` and ``_compute_internal_torques``
(``elastica/rod/cosserat_rod.py``), the rotations of ``elastica/_rotations.py`` and the
clamp (``OneEndFixedBC``), gravity, the mass-proportional damper
(``AnalyticalLinearDamper``, uniform) and the tendon forcing kernel of
:mod:`~tendon_robot_sim.models.rod.dynamics.tendon_forces`, in the order of ``PositionVerlet.step``
(``elastica/timestepper/symplectic_steppers.py``), h = dt / 2:

1. kinematic half step: x += h v, Q <- exp(-h [omega]x) Q (:func:`_kinematic_half_step`);
2. external loads: gravity m g, tendons, vertebra weights and the tip wrench
   (:func:`_external_loads`);
3. shear/stretch: l = |x_(i+1) - x_i|, t, e = l / l0, sigma = e Q t - d3,
   n = S (sigma - sigma0), nodal forces Delta(Q.T n / e) (:func:`_shear_stretch`);
4. bend/twist on the Voronoi domains: kappa = log(Q_(i+1) Q_i.T) / D0,
   tau = B (kappa - kappa0), and the element couples
   Delta(tau / E^3) + A((kappa x tau) D0 / E^3) + (Q t x n) l0
   + (J omega / e) x omega + (J omega / e^2) de/dt (:func:`_bend_twist`);
   passes 3 and 4 also apply the strain-rate damping of the highest modes
   (:func:`strain_rate_damping`, our addition to PyElastica's rod, which the PyElastica
   path applies as a forcing);
   and the obstacles' contact loads on the nodes (:func:`contact_loads`);
5. v += dt a, omega += dt alpha, clamp rates, times exp(-c dt) (:func:`_update_rates`);
6. kinematic half step.

Node 0 and element 0 are the clamp: they keep the base pose and zero rates, so the
kernel neither moves them nor computes their accelerations (PyElastica moves them by
zero and then writes the clamp back: the same numbers). Sums are grouped as in
PyElastica's kernels wherever that costs nothing; where it saves time a division
becomes a multiplication by a reciprocal, the compiler may fuse multiply-adds
(``fastmath={'contract'}``, nothing that assumes finite numbers: the divergence check
needs its NaNs) and the small rotations are evaluated by series exact to rounding
(:func:`_rodrigues_factors`, :func:`_angle_over_sine`). Every helper is inlined at numba
level (``inline='always'``): a call between compiled functions increments and decrements
the reference count of each array argument, atomic operations that cost more than a
vertebra's tendon load. So the two paths differ by
rounding only; ``TendonSimulator(stepper='pyelastica')`` runs PyElastica's own
``PositionVerlet.step`` on the same system, which tests compare against.

The tendon forcing kernel (:func:`tendon_wrench_kernel`, with its plain-numpy twin
``tendon_forces.tendon_wrench_numpy``) lives here too: numba's on-disk cache of a
function is invalidated only when its own file changes, so a kernel that
:func:`advance_rod` inlines from another of our modules could go stale after an edit.
"""

from numba import njit
import numpy as np

# the contact laws of every solver (penalty, normal damping, regularised Coulomb); a kernel
# called, not inlined: edit models/contact/_kernels.py and the numba cache of this file must be
# cleared too (its on-disk cache is keyed by this file only)
from tendon_robot_sim.models.contact._kernels import (beyond, contact_force, CUTOFF, CW_F, CW_P,
                                                      CW_V, LAW_DELTA)

# Rows of the work array of rod_work(): per-element (or per-node) scratch of one step.
_LENGTH, _DILATATION = 0, 1         # l, e = l / l0
_TANGENT = 2                        # rows 2-4: Q t, the tangent in the local frame
_STRESS = 5                         # rows 5-7: n, local frame
_NODAL = 8                          # rows 8-10: Q.T n / e, world frame
_COUPLE = 11                        # rows 11-13: tau / E^3 on the Voronoi domains
_TRANSPORT = 14                     # rows 14-16: (kappa x tau) D0 / E^3
_FORCE = 17                         # rows 17-19: external forces, world frame
_TORQUE = 20                        # rows 20-22: external torques, local frames
WORK_ROWS = 23


def rod_arrays(block) -> tuple:
    """
    Return the arrays of a PyElastica rod memory block that :func:`advance_rod` uses.

    ``block`` is the (single-rod) ``MemoryBlockCosseratRod`` of a finalized system
    (``next(system.final_systems())``); the tuple holds views, so the system sees
    every step. State first (written), then the rod's constants (read only).
    """
    b = block
    return (b.position_collection, b.director_collection, b.velocity_collection,
            b.omega_collection, b.mass, b.mass_second_moment_of_inertia,
            b.inv_mass_second_moment_of_inertia, b.rest_lengths, b.rest_voronoi_lengths,
            b.shear_matrix, b.rest_sigma, b.bend_matrix, b.rest_kappa)


def rod_work(n_elems: int) -> np.ndarray:
    """Scratch array of :func:`advance_rod` for a rod of ``n_elems`` elements."""
    return np.zeros((WORK_ROWS, n_elems + 1))


@njit(cache=True, error_model='numpy', fastmath={'contract'})
def advance_rod(n_steps, dt, rod, work, gravity, decay, viscosity, tendons, contact, check_every,
                origin, limit, tip_samples):
    """
    Advance the rod ``n_steps`` position-Verlet steps of ``dt`` [s], in place.

    Parameters
    ----------
    n_steps : int
        Number of steps.
    dt : float
        Time step [s].
    rod : tuple
        :func:`rod_arrays` of the system's memory block; node 0 and element 0 must hold
        the clamp's pose and zero rates (as built).
    work : array (WORK_ROWS, n_nodes)
        :func:`rod_work`, scratch.
    gravity : array (3,)
        Gravitational acceleration, world [m/s^2].
    decay : float
        Per-step factor exp(-c dt) of the mass-proportional damper (1 = undamped).
    viscosity : float
        Time constant beta [s] of the strain-rate damping (:func:`strain_rate_damping`;
        0 = none).
    tendons : tuple
        The arguments of :func:`tendon_wrench_kernel` after position and director and
        before the output arrays (``TendonForces.kernel_arguments``).
    contact : tuple
        The arguments of :func:`contact_loads` after position and velocity and before the
        output (world, rod lengths, disc lengths): an empty world adds nothing.
    check_every : int
        Steps between divergence checks and tip samples.
    origin : array (3,)
        Base position [m].
    limit : float
        Largest distance of a node from ``origin`` [m].
    tip_samples : (n_steps // check_every, 3)
        Receives the tip position after every ``check_every``-th step [m].

    Returns
    -------
    steps : int
        Steps done: ``n_steps``, or fewer when a check found a bad node.
    node : int
        The first node non-finite or farther than ``limit`` from ``origin``, else -1.

    """
    (position, director, velocity, omega, mass, inertia, inv_inertia, rest_lengths,
     rest_voronoi_lengths, shear_matrix, rest_sigma, bend_matrix, rest_kappa) = rod
    n_nodes = position.shape[1]
    half = 0.5 * dt
    if n_steps > 0:
        _kinematic_half_step(half, position, director, velocity, omega)
    for step in range(1, n_steps + 1):
        # the loads first: the strain-rate damping of the bend/twist pass adds to the torques
        _external_loads(position, director, velocity, mass, gravity, tendons, contact, work)
        _shear_stretch(position, director, velocity, omega, rest_lengths, shear_matrix,
                       rest_sigma, viscosity, work)
        _bend_twist(director, omega, rest_voronoi_lengths, bend_matrix, rest_kappa, viscosity,
                    work)
        _update_rates(dt, decay, position, velocity, omega, mass, inertia, inv_inertia,
                      rest_lengths, work)
        if step % check_every != 0 and step < n_steps:
            # this step's closing half step and the next one's opening half step move
            # with the same rates: x + h v + h v = x + dt v and R(h) R(h) = R(dt) (one
            # axis), so one kinematic step of dt does both, equal to rounding
            _kinematic_half_step(dt, position, director, velocity, omega)
            continue
        _kinematic_half_step(half, position, director, velocity, omega)
        if step % check_every == 0:
            node = first_bad_node(position, origin, limit)
            if node >= 0:
                return step, node
            for a in range(3):
                tip_samples[step // check_every - 1, a] = position[a, n_nodes - 1]
        if step < n_steps:
            _kinematic_half_step(half, position, director, velocity, omega)
    return n_steps, first_bad_node(position, origin, limit)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _kinematic_half_step(h, position, director, velocity, omega):
    """
    Move every node and element but the clamp's: x += h v, Q <- R Q, R = exp(-h [omega]x).

    R is ``_get_rotation_matrix(h, omega)`` of ``elastica/_rotations.py``, Rodrigues'
    formula R = I - sin(theta) [u]x + (1 - cos(theta)) [u]x^2 with u = omega / |omega| and
    theta = h |omega|, written with omega itself (:func:`_rodrigues_factors`); Q's rows
    d1 d2 d3 turn with the element.
    """
    for a in range(3):
        for k in range(1, position.shape[1]):
            position[a, k] += h * velocity[a, k]
    for e in range(1, director.shape[2]):
        w0 = omega[0, e]
        w1 = omega[1, e]
        w2 = omega[2, e]
        s, c = _rodrigues_factors(h, w0 * w0 + w1 * w1 + w2 * w2)
        r00 = 1.0 - c * (w1 * w1 + w2 * w2)
        r11 = 1.0 - c * (w0 * w0 + w2 * w2)
        r22 = 1.0 - c * (w0 * w0 + w1 * w1)
        r01 = s * w2 + c * w0 * w1
        r10 = -s * w2 + c * w0 * w1
        r02 = -s * w1 + c * w0 * w2
        r20 = s * w1 + c * w0 * w2
        r12 = s * w0 + c * w1 * w2
        r21 = -s * w0 + c * w1 * w2
        for b in range(3):
            q0 = director[0, b, e]
            q1 = director[1, b, e]
            q2 = director[2, b, e]
            director[0, b, e] = r00 * q0 + r01 * q1 + r02 * q2
            director[1, b, e] = r10 * q0 + r11 * q1 + r12 * q2
            director[2, b, e] = r20 * q0 + r21 * q1 + r22 * q2


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _rodrigues_factors(h, square):
    """
    sin(theta) / |omega| and (1 - cos(theta)) / |omega|^2 for theta = h |omega|.

    ``square`` is |omega|^2. An element turns by micro- to milliradians per half
    step (h = dt / 2, or dt for two half steps at once); below theta = 0.1 rad the Taylor
    series in theta^2 (to theta^9 and theta^10; the next terms are below 3e-18 relative)
    are exact to rounding and need neither the square root, nor the divisions by |omega|
    (PyElastica's axis omega / (|omega| + 1e-14)), nor two library calls, and have no
    cancellation in 1 - cos(theta). Larger turns take the library calls.
    """
    t2 = h * h * square
    if t2 < 0.01:
        sine = h * (1.0 - t2 * (1.0 / 6.0) * (1.0 - t2 * (1.0 / 20.0) * (
            1.0 - t2 * (1.0 / 42.0) * (1.0 - t2 * (1.0 / 72.0)))))
        versine = 0.5 * h * h * (1.0 - t2 * (1.0 / 12.0) * (1.0 - t2 * (1.0 / 30.0) * (
            1.0 - t2 * (1.0 / 56.0) * (1.0 - t2 * (1.0 / 90.0)))))
        return sine, versine
    norm = np.sqrt(square)
    theta = h * norm
    return np.sin(theta) / norm, (1.0 - np.cos(theta)) / square


# theta / sin(theta) = sum_n C_n u^n with u = 1 - cos(theta) (the series of
# acos(1 - u) / sqrt(u (2 - u))); up to u^7 it is exact to rounding for u < 0.01
_ANGLE_OVER_SINE = (1.0, 1.0 / 3.0, 2.0 / 15.0, 2.0 / 35.0, 8.0 / 315.0, 8.0 / 693.0,
                    16.0 / 3003.0, 16.0 / 6435.0)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _angle_over_sine(cosine):
    """
    Return theta / sin(theta) for theta = acos(cosine) in [0, pi), as ``_inv_rotate``.

    ``_inv_rotate`` evaluates (acos(cosine) + 1e-14) / sin(acos(cosine) + 1e-14), two
    library calls per Voronoi domain; bends of the domains are small (theta < 0.14 rad
    is u = 1 - cosine < 0.01), where the series gives the same number to rounding in a
    few multiplications (the 1e-14, which only keeps theta = 0 finite, changes it by
    less than 1e-16). Larger bends take the library calls.
    """
    u = 1.0 - cosine
    if u < 0.01:
        c = _ANGLE_OVER_SINE
        return c[0] + u * (c[1] + u * (c[2] + u * (c[3] + u * (c[4] + u * (
            c[5] + u * (c[6] + u * c[7]))))))
    theta = np.arccos(cosine) + 1e-14
    return theta / np.sin(theta)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _matvec(matrix, e, x, y, z):
    """Return matrix[:, :, e] @ (x, y, z) as three numbers."""
    return (matrix[0, 0, e] * x + matrix[0, 1, e] * y + matrix[0, 2, e] * z,
            matrix[1, 0, e] * x + matrix[1, 1, e] * y + matrix[1, 2, e] * z,
            matrix[2, 0, e] * x + matrix[2, 1, e] * y + matrix[2, 2, e] * z)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _shear_stretch(position, director, velocity, omega, rest_lengths, shear_matrix, rest_sigma,
                   viscosity, work):
    """
    Element lengths, dilatations, local tangents, stresses and Q.T n / e into ``work``.

    ``_compute_internal_forces`` without its temporaries: l = |x_(i+1) - x_i| + 1e-14,
    t = (x_(i+1) - x_i) / l, e = l / l0, sigma = e Q t - d3, n = S (sigma - sigma0);
    the nodal forces are the differences of Q.T n / e (taken in :func:`_update_rates`).
    With a ``viscosity`` beta, n also carries e n_v, n_v = beta S sigma_t the viscous stress
    of :func:`strain_rate_damping`: Q.T (e n_v) / e and (Q t x e n_v) l0 are its force and
    torque.
    """
    for e in range(director.shape[2]):
        dx = position[0, e + 1] - position[0, e]
        dy = position[1, e + 1] - position[1, e]
        dz = position[2, e + 1] - position[2, e]
        length = np.sqrt(dx * dx + dy * dy + dz * dz) + 1e-14
        # one division each for the tangent and for Q.T n / e: what they cost, not
        # their rounding, is what matters here
        inverse = 1.0 / length
        dx *= inverse
        dy *= inverse
        dz *= inverse
        dilatation = length / rest_lengths[e]
        work[_LENGTH, e] = length
        work[_DILATATION, e] = dilatation
        t0, t1, t2 = _matvec(director, e, dx, dy, dz)
        work[_TANGENT, e] = t0
        work[_TANGENT + 1, e] = t1
        work[_TANGENT + 2, e] = t2
        s0 = dilatation * t0 - rest_sigma[0, e]
        s1 = dilatation * t1 - rest_sigma[1, e]
        s2 = (dilatation * t2 - 1.0) - rest_sigma[2, e]
        n0, n1, n2 = _matvec(shear_matrix, e, s0, s1, s2)
        if viscosity > 0.0:
            v0, v1, v2 = _viscous_stress(director, velocity, omega, rest_lengths, shear_matrix,
                                         viscosity, e, dilatation * t0, dilatation * t1,
                                         dilatation * t2)
            n0 += dilatation * v0
            n1 += dilatation * v1
            n2 += dilatation * v2
        work[_STRESS, e] = n0
        work[_STRESS + 1, e] = n1
        work[_STRESS + 2, e] = n2
        inverse = 1.0 / dilatation
        for a in range(3):
            work[_NODAL + a, e] = (director[0, a, e] * n0 + director[1, a, e] * n1
                                   + director[2, a, e] * n2) * inverse


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _bend_twist(director, omega, rest_voronoi_lengths, bend_matrix, rest_kappa, viscosity, work):
    """
    Curvature, couple and their two Voronoi terms into ``work``, per interior node.

    ``_compute_internal_torques``' Voronoi part without its temporaries: with
    E = (l_i + l_(i+1)) / (2 D0) the Voronoi dilatation, kappa = log(Q_(i+1) Q_i.T) / D0
    (``_inv_rotate``: the angle from the trace, the axis from the skew part),
    tau = B (kappa - kappa0); stores tau / E^3 and (kappa x tau) D0 / E^3. With a
    ``viscosity`` beta, adds the viscous couples of :func:`strain_rate_damping` to the
    torques (already holding the external loads).
    """
    q = director
    for k in range(rest_voronoi_lengths.shape[0]):
        j = k + 1
        # R = Q_j Q_k.T: its skew part is sin(theta) [axis]x, its trace 1 + 2 cos(theta)
        r = _relative_rotation(q, j, k)
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = r
        w0 = r21 - r12
        w1 = r02 - r20
        w2 = r10 - r01
        trace = r00 + r11 + r22
        # rounding can take the trace out of [-1, 3]
        trace = max(min(trace, 3.0), -1.0)
        rest = rest_voronoi_lengths[k]
        scale = -0.5 * _angle_over_sine(0.5 * trace - 0.5)
        kappa0 = w0 * scale / rest
        kappa1 = w1 * scale / rest
        kappa2 = w2 * scale / rest
        x0 = kappa0 - rest_kappa[0, k]
        x1 = kappa1 - rest_kappa[1, k]
        x2 = kappa2 - rest_kappa[2, k]
        tau0, tau1, tau2 = _matvec(bend_matrix, k, x0, x1, x2)
        voronoi = 0.5 * (work[_LENGTH, j] + work[_LENGTH, k]) / rest
        inv_cube = 1.0 / (voronoi * voronoi * voronoi)
        work[_COUPLE, k] = tau0 * inv_cube
        work[_COUPLE + 1, k] = tau1 * inv_cube
        work[_COUPLE + 2, k] = tau2 * inv_cube
        work[_TRANSPORT, k] = (kappa1 * tau2 - kappa2 * tau1) * rest * inv_cube
        work[_TRANSPORT + 1, k] = (kappa2 * tau0 - kappa0 * tau2) * rest * inv_cube
        work[_TRANSPORT + 2, k] = (kappa0 * tau1 - kappa1 * tau0) * rest * inv_cube
        if viscosity > 0.0:
            _add_viscous_couple(r, omega, bend_matrix, viscosity / rest, k,
                                work[_TORQUE:_TORQUE + 3])


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _external_loads(position, director, velocity, mass, gravity, tendons, contact, work):
    """Gravity m g, the tendons, vertebra weights, tip wrench and contact into ``work``."""
    force = work[_FORCE:_FORCE + 3]
    torque = work[_TORQUE:_TORQUE + 3]      # (its last column is not used)
    for a in range(3):
        for k in range(position.shape[1]):
            force[a, k] = gravity[a] * mass[k]
    torque[:] = 0.0
    (nodes, holes, base_holes, anchors, tensions, weight, tip_force, tip_moment, q, offsets,
     moments) = tendons
    tendon_wrench_kernel(position, director, nodes, holes, base_holes, anchors, tensions,
                         weight, tip_force, tip_moment, q, offsets, moments, force, torque)
    world, rod_lengths, disc_lengths = contact
    contact_loads(position, velocity, world, rod_lengths, disc_lengths, force)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def contact_loads(position, velocity, world, rod_lengths, disc_lengths, forces):
    """
    Add the obstacles' contact forces on the nodes [N] (world frame) to ``forces`` (3, nodes).

    The distributed load per unit length of every solver (``contact._kernels.contact_force``:
    the smooth penalty, normal damping and regularised Coulomb friction on the node's
    velocity) lumped on the nodes as their mass is: at the envelope of the rod
    (``world.radius[0]``) over ``rod_lengths[k]`` [m] of rod (the node's Voronoi domain less
    the disc there), at that of the disc (``world.radius[1]``) over ``disc_lengths[k]`` (its
    thickness at a vertebra node, 0 elsewhere). Node 0 is the clamp: nothing is applied there.
    Broad phase first (``contact._kernels.beyond``, inlined): a node farther from every
    obstacle's bounding sphere than the larger envelope plus the penalty's cut-off makes no
    call of ``contact_force``.
    """
    n = world.shape.size
    if n == 0:
        return
    cw = world.work
    p, vel, f = cw[CW_P:CW_P + 3], cw[CW_V:CW_V + 3], cw[CW_F:CW_F + 3]
    envelope = max(world.radius[0], world.radius[1])
    for k in range(1, position.shape[1]):
        for a in range(3):
            p[a] = position[a, k]
        near = False
        for j in range(n):
            if not beyond(world, j, p, envelope + CUTOFF * world.law[j, LAW_DELTA]):
                near = True
                break
        if not near:
            continue
        for a in range(3):
            vel[a] = velocity[a, k]
        # part 0 the rod, 1 the disc (not ``envelope``: the broad phase's reach above)
        for part in range(2):
            length = rod_lengths[k] if part == 0 else disc_lengths[k]
            if length == 0.0:
                continue
            f[0] = 0.0
            f[1] = 0.0
            f[2] = 0.0
            contact_force(world, p, vel, True, world.radius[part], f, cw[0:12])
            for a in range(3):
                forces[a, k] += length * f[a]


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _update_rates(dt, decay, position, velocity, omega, mass, inertia, inv_inertia,
                  rest_lengths, work):
    """
    Update omega += dt alpha and v += dt a, then both times ``decay``; not the clamp's.

    The element couple of ``_compute_internal_torques``: Delta(tau / E^3) (differences
    over the Voronoi domains, zero past the ends) + A((kappa x tau) D0 / E^3) (their
    averages) + (Q t x n) l0 + (J omega / e) x omega + (J omega / e^2) de/dt, with
    de/dt = (x_(i+1) - x_i) . (v_(i+1) - v_i) / (l l0) at the velocities before the
    update; alpha = e J^-1 (couple + external torque) (``_update_accelerations``).
    The nodal force is the difference of Q.T n / e, a = (force + external force) / m.
    """
    n_elems = omega.shape[1]
    last = n_elems - 1
    for e in range(1, n_elems):
        dilatation = work[_DILATATION, e]
        inverse = 1.0 / dilatation
        # de/dt over e: (x_(i+1) - x_i) . (v_(i+1) - v_i) / (l l0 e)
        rate = ((position[0, e + 1] - position[0, e]) * (velocity[0, e + 1] - velocity[0, e])
                + (position[1, e + 1] - position[1, e]) * (velocity[1, e + 1] - velocity[1, e])
                + (position[2, e + 1] - position[2, e]) * (velocity[2, e + 1] - velocity[2, e])
                ) / (work[_LENGTH, e] * rest_lengths[e] * dilatation)
        w0 = omega[0, e]
        w1 = omega[1, e]
        w2 = omega[2, e]
        j0, j1, j2 = _matvec(inertia, e, w0, w1, w2)
        j0 *= inverse
        j1 *= inverse
        j2 *= inverse
        t0 = work[_TANGENT, e]
        t1 = work[_TANGENT + 1, e]
        t2 = work[_TANGENT + 2, e]
        n0 = work[_STRESS, e]
        n1 = work[_STRESS + 1, e]
        n2 = work[_STRESS + 2, e]
        length = rest_lengths[e]
        if e < last:
            c0 = (work[_COUPLE, e] - work[_COUPLE, e - 1]) \
                + 0.5 * (work[_TRANSPORT, e] + work[_TRANSPORT, e - 1])
            c1 = (work[_COUPLE + 1, e] - work[_COUPLE + 1, e - 1]) \
                + 0.5 * (work[_TRANSPORT + 1, e] + work[_TRANSPORT + 1, e - 1])
            c2 = (work[_COUPLE + 2, e] - work[_COUPLE + 2, e - 1]) \
                + 0.5 * (work[_TRANSPORT + 2, e] + work[_TRANSPORT + 2, e - 1])
        else:
            c0 = -work[_COUPLE, e - 1] + 0.5 * work[_TRANSPORT, e - 1]
            c1 = -work[_COUPLE + 1, e - 1] + 0.5 * work[_TRANSPORT + 1, e - 1]
            c2 = -work[_COUPLE + 2, e - 1] + 0.5 * work[_TRANSPORT + 2, e - 1]
        c0 += (t1 * n2 - t2 * n1) * length + (j1 * w2 - j2 * w1) + j0 * rate
        c1 += (t2 * n0 - t0 * n2) * length + (j2 * w0 - j0 * w2) + j1 * rate
        c2 += (t0 * n1 - t1 * n0) * length + (j0 * w1 - j1 * w0) + j2 * rate
        c0 += work[_TORQUE, e]
        c1 += work[_TORQUE + 1, e]
        c2 += work[_TORQUE + 2, e]
        step = dt * dilatation
        a0, a1, a2 = _matvec(inv_inertia, e, c0, c1, c2)
        omega[0, e] = (w0 + step * a0) * decay
        omega[1, e] = (w1 + step * a1) * decay
        omega[2, e] = (w2 + step * a2) * decay
    for k in range(1, n_elems + 1):
        step = dt / mass[k]
        for a in range(3):
            if k < n_elems:
                inner = work[_NODAL + a, k] - work[_NODAL + a, k - 1]
            else:
                inner = -work[_NODAL + a, k - 1]
            velocity[a, k] = (velocity[a, k] + step * (inner + work[_FORCE + a, k])) * decay


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def strain_rate_damping(position, director, velocity, omega, rest_lengths, rest_voronoi_lengths,
                        shear_matrix, bend_matrix, viscosity, external_forces, external_torques):
    """
    Add the Kelvin-Voigt forces and couples of the strain rates, C = beta K, to the loads.

    With the strain rates of element i and Voronoi domain k (local frames; b = Q (x_(i+1) -
    x_i) / l0 = e Q t),
    sigma_t = Q (v_(i+1) - v_i) / l0 + b x omega_i and
    kappa_t = (omega_(k+1) - R omega_k) / D0, R = Q_(k+1) Q_k.T (both zero for a rigid motion),
    the dissipation function
    Phi = beta / 2 (sum l0 sigma_t . S sigma_t + sum D0 kappa_t . B kappa_t) gives the
    viscous stress n_v = beta S sigma_t and couple tau_v = beta B kappa_t; the forces and
    torques -dPhi/dv, -dPhi/domega are then Q.T n_v on node i, -Q.T n_v on node i + 1,
    l0 b x n_v on element i, R.T tau_v on element k and -tau_v on element k + 1
    (world forces, local torques, as PyElastica's external loads). They dissipate 2 Phi
    exactly and vanish at rest. Linearised about the straight rod this is C = beta K, S and
    B being the rod's stiffness matrices, so mode i gets the damping ratio beta omega_i / 2
    (``simulation.strain_rate_viscosity`` picks beta). This is the PyElastica path's; the
    compiled stepper does the same inside its passes: e n_v added to the stress in
    :func:`_shear_stretch` (Q.T (e n_v) / e and (Q t x e n_v) l0 are the force and torque
    above) and the couples added to the torques in :func:`_bend_twist`.
    """
    for e in range(director.shape[2]):
        inverse = 1.0 / rest_lengths[e]
        b0, b1, b2 = _matvec(director, e, (position[0, e + 1] - position[0, e]) * inverse,
                             (position[1, e + 1] - position[1, e]) * inverse,
                             (position[2, e + 1] - position[2, e]) * inverse)
        n0, n1, n2 = _viscous_stress(director, velocity, omega, rest_lengths, shear_matrix,
                                     viscosity, e, b0, b1, b2)
        for a in range(3):
            force = director[0, a, e] * n0 + director[1, a, e] * n1 + director[2, a, e] * n2
            external_forces[a, e] += force
            external_forces[a, e + 1] -= force
        length = rest_lengths[e]
        external_torques[0, e] += (b1 * n2 - b2 * n1) * length
        external_torques[1, e] += (b2 * n0 - b0 * n2) * length
        external_torques[2, e] += (b0 * n1 - b1 * n0) * length
    for k in range(rest_voronoi_lengths.shape[0]):
        _add_viscous_couple(_relative_rotation(director, k + 1, k), omega, bend_matrix,
                            viscosity / rest_voronoi_lengths[k], k, external_torques)


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _viscous_stress(director, velocity, omega, rest_lengths, shear_matrix, viscosity, e,
                    b0, b1, b2):
    """
    Viscous stress n_v = beta S sigma_t of element ``e`` (local frame), b = e Q t.

    sigma_t = Q (v_(e+1) - v_e) / l0 + b x omega_e (:func:`strain_rate_damping`).
    """
    inverse = 1.0 / rest_lengths[e]
    u0, u1, u2 = _matvec(director, e, (velocity[0, e + 1] - velocity[0, e]) * inverse,
                         (velocity[1, e + 1] - velocity[1, e]) * inverse,
                         (velocity[2, e + 1] - velocity[2, e]) * inverse)
    w0 = omega[0, e]
    w1 = omega[1, e]
    w2 = omega[2, e]
    n0, n1, n2 = _matvec(shear_matrix, e, u0 + (b1 * w2 - b2 * w1), u1 + (b2 * w0 - b0 * w2),
                         u2 + (b0 * w1 - b1 * w0))
    return viscosity * n0, viscosity * n1, viscosity * n2


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _relative_rotation(q, j, k):
    """R = Q_j Q_k.T row by row: omega_k in the frame of element j is R omega_k."""
    return (q[0, 0, j] * q[0, 0, k] + q[0, 1, j] * q[0, 1, k] + q[0, 2, j] * q[0, 2, k],
            q[0, 0, j] * q[1, 0, k] + q[0, 1, j] * q[1, 1, k] + q[0, 2, j] * q[1, 2, k],
            q[0, 0, j] * q[2, 0, k] + q[0, 1, j] * q[2, 1, k] + q[0, 2, j] * q[2, 2, k],
            q[1, 0, j] * q[0, 0, k] + q[1, 1, j] * q[0, 1, k] + q[1, 2, j] * q[0, 2, k],
            q[1, 0, j] * q[1, 0, k] + q[1, 1, j] * q[1, 1, k] + q[1, 2, j] * q[1, 2, k],
            q[1, 0, j] * q[2, 0, k] + q[1, 1, j] * q[2, 1, k] + q[1, 2, j] * q[2, 2, k],
            q[2, 0, j] * q[0, 0, k] + q[2, 1, j] * q[0, 1, k] + q[2, 2, j] * q[0, 2, k],
            q[2, 0, j] * q[1, 0, k] + q[2, 1, j] * q[1, 1, k] + q[2, 2, j] * q[1, 2, k],
            q[2, 0, j] * q[2, 0, k] + q[2, 1, j] * q[2, 1, k] + q[2, 2, j] * q[2, 2, k])


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _add_viscous_couple(r, omega, bend_matrix, scale, k, torques):
    """
    Add the viscous couple of Voronoi domain ``k`` to ``torques`` [3, n_elems] (local).

    tau_v = beta B (omega_(k+1) - R omega_k) / D0 with ``scale`` = beta / D0 and ``r`` =
    :func:`_relative_rotation`: R.T tau_v on element k, -tau_v on element k + 1.
    """
    j = k + 1
    x0 = omega[0, k]
    x1 = omega[1, k]
    x2 = omega[2, k]
    c0, c1, c2 = _matvec(bend_matrix, k,
                         (omega[0, j] - (r[0] * x0 + r[1] * x1 + r[2] * x2)) * scale,
                         (omega[1, j] - (r[3] * x0 + r[4] * x1 + r[5] * x2)) * scale,
                         (omega[2, j] - (r[6] * x0 + r[7] * x1 + r[8] * x2)) * scale)
    torques[0, k] += r[0] * c0 + r[3] * c1 + r[6] * c2
    torques[1, k] += r[1] * c0 + r[4] * c1 + r[7] * c2
    torques[2, k] += r[2] * c0 + r[5] * c1 + r[8] * c2
    torques[0, j] -= c0
    torques[1, j] -= c1
    torques[2, j] -= c2


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def first_bad_node(position, origin, limit):
    """Index of the first node non-finite or farther than ``limit`` from ``origin``, else -1."""
    limit2 = limit * limit
    for k in range(position.shape[1]):
        dx = position[0, k] - origin[0]
        dy = position[1, k] - origin[1]
        dz = position[2, k] - origin[2]
        distance2 = dx * dx + dy * dy + dz * dz
        # NaN fails every comparison, so "not <=" also catches NaN and inf
        if not distance2 <= limit2:
            return k
    return -1


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _vertebra_director(director, k, q):
    """
    Write the directors of the vertebra on node ``k`` into ``q`` (3, 3).

    Same maths as ``tendon_forces.vertebra_directors``, written out without
    temporaries (this runs for every vertebra at every step):
    D^(1/2) = I (1 - |s|^2 / (1 + c)) + [s]x + s s.T / (1 + c).
    """
    n_elems = director.shape[2]
    a = k - 1
    b = min(k, n_elems - 1)
    for r in range(3):                      # q <- D = Q_b Q_a.T
        for c in range(3):
            q[r, c] = director[r, 0, b] * director[c, 0, a] \
                + director[r, 1, b] * director[c, 1, a] + director[r, 2, b] * director[c, 2, a]
    cos_half = 0.5 * np.sqrt(1.0 + q[0, 0] + q[1, 1] + q[2, 2])
    inverse = 0.25 / cos_half
    s0 = (q[2, 1] - q[1, 2]) * inverse
    s1 = (q[0, 2] - q[2, 0]) * inverse
    s2 = (q[1, 0] - q[0, 1]) * inverse
    f = 1.0 / (1.0 + cos_half)
    diagonal = 1.0 - (s0 * s0 + s1 * s1 + s2 * s2) * f
    h00, h01, h02 = diagonal + s0 * s0 * f, -s2 + s0 * s1 * f, s1 + s0 * s2 * f
    h10, h11, h12 = s2 + s1 * s0 * f, diagonal + s1 * s1 * f, -s0 + s1 * s2 * f
    h20, h21, h22 = -s1 + s2 * s0 * f, s0 + s2 * s1 * f, diagonal + s2 * s2 * f
    for c in range(3):                      # q <- D^(1/2) Q_a
        x, y, z = director[0, c, a], director[1, c, a], director[2, c, a]
        q[0, c] = h00 * x + h01 * y + h02 * z
        q[1, c] = h10 * x + h11 * y + h12 * z
        q[2, c] = h20 * x + h21 * y + h22 * z


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def _add_hole_force(i, k, rx, ry, rz, fx, fy, fz, moments, external_forces):
    """Add force F (world) at the world offset r from node k of vertebra i; r x F to moments."""
    external_forces[0, k] += fx
    external_forces[1, k] += fy
    external_forces[2, k] += fz
    moments[0, i] += ry * fz - rz * fy
    moments[1, i] += rz * fx - rx * fz
    moments[2, i] += rx * fy - ry * fx


@njit(cache=True, error_model='numpy', fastmath={'contract'}, inline='always')
def tendon_wrench_kernel(position, director, nodes, holes, base_holes, anchors, tensions,
                         weight, tip_force, tip_moment, q, offsets, moments, external_forces,
                         external_torques):
    """
    Add all loads of ``TendonForces``; same maths as ``tendon_wrench_numpy``.

    Shapes as in ``tendon_wrench_numpy``; ``nodes`` (k,), ``holes``
    (n_tendons, 3, k), ``base_holes`` (n_tendons, 3), ``anchors`` (n_tendons,);
    ``q`` (3, 3), ``offsets`` (like ``holes``) and ``moments`` (3, k) are scratch
    (this runs every step: it allocates nothing).
    """
    for i in range(nodes.shape[0]):
        for a in range(3):
            external_forces[a, nodes[i]] += weight[a]
    n_elems = director.shape[2]
    for a in range(3):
        external_forces[a, n_elems] += tip_force[a]
        external_torques[a, n_elems - 1] += (director[a, 0, n_elems - 1] * tip_moment[0]
                                             + director[a, 1, n_elems - 1] * tip_moment[1]
                                             + director[a, 2, n_elems - 1] * tip_moment[2])
    pulled = False
    for j in range(tensions.shape[0]):
        pulled = pulled or tensions[j] != 0.0
    if not pulled:
        return
    # world offsets of every hole from its node: Q.T h with the vertebra's directors
    for i in range(nodes.shape[0]):
        _vertebra_director(director, nodes[i], q)
        for j in range(tensions.shape[0]):
            for a in range(3):
                offsets[j, a, i] = q[0, a] * holes[j, 0, i] + q[1, a] * holes[j, 1, i] \
                    + q[2, a] * holes[j, 2, i]
        for a in range(3):
            moments[a, i] = 0.0

    for j in range(tensions.shape[0]):
        tension = tensions[j]
        if tension == 0.0:
            continue
        # Walk the tendon from the base plate (part of the clamp, so its share of the
        # first segment is not applied). Segment i runs from hole i-1 to hole i with
        # pull T u_i; vertebra i gets -T u_i + T u_(i+1), the anchor only -T u_i.
        # (Tuzlaci's delta formula writes Rot_{n+1} on both holes; each hole
        # belongs to its own vertebra, so each uses its own directors.)
        px = base_holes[j, 0]
        py = base_holes[j, 1]
        pz = base_holes[j, 2]
        fx = 0.0                # -T u_(i-1): what vertebra i-1 has so far
        fy = 0.0
        fz = 0.0
        for i in range(anchors[j] + 1):
            k = nodes[i]
            hx = position[0, k] + offsets[j, 0, i]
            hy = position[1, k] + offsets[j, 1, i]
            hz = position[2, k] + offsets[j, 2, i]
            dx = hx - px
            dy = hy - py
            dz = hz - pz
            scale = tension / np.sqrt(dx * dx + dy * dy + dz * dz)
            if i > 0:           # vertebra i-1 is complete: add T u_i and apply
                _add_hole_force(i - 1, nodes[i - 1], offsets[j, 0, i - 1], offsets[j, 1, i - 1],
                                offsets[j, 2, i - 1], fx + dx * scale, fy + dy * scale,
                                fz + dz * scale, moments, external_forces)
            fx = -dx * scale
            fy = -dy * scale
            fz = -dz * scale
            px = hx
            py = hy
            pz = hz
        # the anchor: only the pull back towards the previous hole
        i = anchors[j]
        _add_hole_force(i, nodes[i], offsets[j, 0, i], offsets[j, 1, i], offsets[j, 2, i],
                        fx, fy, fz, moments, external_forces)

    # The moment of a vertebra's holes is shared by the free elements meeting at its
    # node (see the notes of tendon_forces), each getting its share in its own frame.
    for i in range(nodes.shape[0]):
        k = nodes[i]
        first = k - 1 if k > 1 else k           # element 0 is clamped
        last = k if k < n_elems else k - 1      # the last node ends the last element
        share = 1.0 / (last - first + 1)
        mx = share * moments[0, i]
        my = share * moments[1, i]
        mz = share * moments[2, i]
        for e in range(first, last + 1):
            for a in range(3):
                external_torques[a, e] += director[a, 0, e] * mx + director[a, 1, e] * my \
                    + director[a, 2, e] * mz
