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
:func:`~tendon_robot_sim.models.rod.dynamics.build_rod_system`
by many position-Verlet steps in one numba call. It composes PyElastica 1.0's own
kernels (``elastica.rod.cosserat_rod``: internal forces and torques, accelerations;
``elastica.rod.data_structures``: the kinematic and dynamic updates) with the clamp
(``OneEndFixedBC``), gravity, the mass-proportional damper and the tendon forcing
kernel of :mod:`~tendon_robot_sim.models.rod.tendon_forces`, in the order of
``PositionVerlet.step`` on that system (``elastica/timestepper/symplectic_steppers.py``):

1. kinematic half step x += dt/2 v, Q <- exp(-dt/2 omega) Q; clamp positions/directors;
2. internal forces and torques; external loads: gravity, then tendons/vertebrae/tip;
3. accelerations; v += dt dv/dt, omega += dt domega/dt; clamp rates; damping;
4. kinematic half step; clamp positions/directors; external loads zeroed.

The plain path is PyElastica's ``PositionVerlet.step`` on the same system, which
``TendonSimulator(stepper='pyelastica')`` runs and tests compare against.

The tendon forcing kernel (:func:`tendon_wrench_kernel`, with its plain-numpy twin
``tendon_forces.tendon_wrench_numpy``) lives here too: numba's on-disk cache of a
function is invalidated only when its own file changes, so a kernel that
:func:`advance_rod` inlines from another of our modules could go stale after an edit.
"""

from elastica.rod.cosserat_rod import (_compute_internal_forces, _compute_internal_torques,
                                       _update_accelerations,
                                       _zeroed_out_external_forces_and_torques)
from elastica.rod.data_structures import (overload_operator_dynamic_numba,
                                          overload_operator_kinematic_numba)
from numba import njit
import numpy as np


def rod_arrays(block) -> tuple:
    """
    Return the arrays of a PyElastica rod memory block that :func:`advance_rod` reads and writes.

    ``block`` is the (single-rod) ``MemoryBlockCosseratRod`` of a finalized system
    (``next(system.final_systems())``); the tuple holds views, so the system sees
    every step.
    """
    b = block
    return (b.position_collection, b.director_collection, b.velocity_collection,
            b.omega_collection, b.v_w_collection, b.dvdt_dwdt_collection,
            b.acceleration_collection, b.alpha_collection, b.volume, b.lengths, b.tangents,
            b.radius, b.rest_lengths, b.rest_voronoi_lengths, b.dilatation,
            b.voronoi_dilatation, b.sigma, b.rest_sigma, b.shear_matrix, b.internal_stress,
            b.internal_forces, b.ghost_elems_idx, b.bend_matrix, b.rest_kappa, b.kappa,
            b.mass_second_moment_of_inertia, b.internal_couple, b.dilatation_rate,
            b.internal_torques, b.ghost_voronoi_idx, b.mass,
            b.inv_mass_second_moment_of_inertia, b.external_forces, b.external_torques)


@njit(cache=True)
def advance_rod(n_steps, dt, rod, clamp_position, clamp_director, gravity, decay, tendons,
                check_every, origin, limit, tip_samples):
    """
    Advance the rod ``n_steps`` position-Verlet steps of ``dt`` [s], in place.

    Parameters
    ----------
    n_steps : int
        Number of steps.
    dt : float
        Time step [s].
    rod : tuple
        :func:`rod_arrays` of the system's memory block.
    clamp_position : array (3,)
        Position of node 0, world [m].
    clamp_director : array (3, 3)
        Directors of element 0 (rows d1 d2 d3).
    gravity : array (3,)
        Gravitational acceleration, world [m/s^2].
    decay : float
        Per-step factor exp(-c dt) of the mass-proportional damper (1 = undamped).
    tendons : tuple
        The arguments of :func:`tendon_wrench_kernel` after position and director and
        before the output arrays (``TendonForces.kernel_arguments``).
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
    (position, director, velocity, omega, v_w, dvdt_dwdt, acceleration, alpha, volume,
     lengths, tangents, radius, rest_lengths, rest_voronoi_lengths, dilatation,
     voronoi_dilatation, sigma, rest_sigma, shear_matrix, internal_stress, internal_forces,
     ghost_elems_idx, bend_matrix, rest_kappa, kappa, mass_second_moment_of_inertia,
     internal_couple, dilatation_rate, internal_torques, ghost_voronoi_idx, mass,
     inv_mass_second_moment_of_inertia, external_forces, external_torques) = rod
    half = 0.5 * dt
    n_nodes = position.shape[1]
    for step in range(1, n_steps + 1):
        overload_operator_kinematic_numba(half, position, director, velocity, omega)
        _clamp_values(position, director, clamp_position, clamp_director)
        _compute_internal_forces(
            position, volume, lengths, tangents, radius, rest_lengths, rest_voronoi_lengths,
            dilatation, voronoi_dilatation, director, sigma, rest_sigma, shear_matrix,
            internal_stress, internal_forces, ghost_elems_idx)
        _compute_internal_torques(
            position, velocity, tangents, lengths, rest_lengths, director,
            rest_voronoi_lengths, bend_matrix, rest_kappa, kappa, voronoi_dilatation,
            mass_second_moment_of_inertia, omega, internal_stress, internal_couple,
            dilatation, dilatation_rate, internal_torques, ghost_voronoi_idx)
        for a in range(3):
            for k in range(n_nodes):
                external_forces[a, k] += gravity[a] * mass[k]
        tendon_wrench_kernel(position, director, *tendons, external_forces, external_torques)
        _update_accelerations(acceleration, internal_forces, external_forces, mass, alpha,
                              inv_mass_second_moment_of_inertia, internal_torques,
                              external_torques, dilatation)
        overload_operator_dynamic_numba(dt, v_w, dvdt_dwdt)
        for a in range(3):
            velocity[a, 0] = 0.0
            omega[a, 0] = 0.0
        if decay != 1.0:
            velocity *= decay
            omega *= decay
        overload_operator_kinematic_numba(half, position, director, velocity, omega)
        _clamp_values(position, director, clamp_position, clamp_director)
        _zeroed_out_external_forces_and_torques(external_forces, external_torques)
        if step % check_every == 0:
            node = first_bad_node(position, origin, limit)
            if node >= 0:
                return step, node
            for a in range(3):
                tip_samples[step // check_every - 1, a] = position[a, n_nodes - 1]
    return n_steps, first_bad_node(position, origin, limit)


@njit(cache=True)
def _clamp_values(position, director, clamp_position, clamp_director):
    """``OneEndFixedBC.constrain_values``: node 0 and element 0 back to the base."""
    for a in range(3):
        position[a, 0] = clamp_position[a]
        for b in range(3):
            director[a, b, 0] = clamp_director[a, b]


@njit(cache=True)
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


@njit(cache=True)
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
    s0 = (q[2, 1] - q[1, 2]) / (4.0 * cos_half)
    s1 = (q[0, 2] - q[2, 0]) / (4.0 * cos_half)
    s2 = (q[1, 0] - q[0, 1]) / (4.0 * cos_half)
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


@njit(cache=True)
def _add_hole_load(k, rx, ry, rz, fx, fy, fz, director, external_forces, external_torques):
    """
    Add force F (world) at the world offset r from node k of a vertebra's hole.

    The moment r x F is shared by the free elements meeting at node k (see the
    notes of :mod:`~tendon_robot_sim.models.rod.tendon_forces`), each getting its share in
    its own local frame.
    """
    external_forces[0, k] += fx
    external_forces[1, k] += fy
    external_forces[2, k] += fz
    mx = ry * fz - rz * fy
    my = rz * fx - rx * fz
    mz = rx * fy - ry * fx
    n_elems = director.shape[2]
    first = k - 1 if k > 1 else k           # element 0 is clamped
    last = k if k < n_elems else k - 1      # the last node ends the last element
    share = 1.0 / (last - first + 1)
    for e in range(first, last + 1):
        for a in range(3):
            external_torques[a, e] += share * (director[a, 0, e] * mx + director[a, 1, e] * my
                                               + director[a, 2, e] * mz)


@njit(cache=True)
def tendon_wrench_kernel(position, director, nodes, holes, base_holes, anchors, tensions,
                         weight, tip_force, tip_moment, external_forces, external_torques):
    """
    Add all loads of ``TendonForces``; same maths as ``tendon_wrench_numpy``.

    Shapes as in ``tendon_wrench_numpy``; ``nodes`` (k,), ``holes``
    (n_tendons, 3, k), ``base_holes`` (n_tendons, 3), ``anchors`` (n_tendons,).
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
    if not np.any(tensions != 0.0):
        return
    # world offsets of every hole from its node: Q.T h with the vertebra's directors
    q = np.empty((3, 3))
    offsets = np.zeros(holes.shape)
    for i in range(nodes.shape[0]):
        _vertebra_director(director, nodes[i], q)
        for j in range(tensions.shape[0]):
            for a in range(3):
                offsets[j, a, i] = q[0, a] * holes[j, 0, i] + q[1, a] * holes[j, 1, i] \
                    + q[2, a] * holes[j, 2, i]

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
                _add_hole_load(nodes[i - 1], offsets[j, 0, i - 1], offsets[j, 1, i - 1],
                               offsets[j, 2, i - 1], fx + dx * scale, fy + dy * scale,
                               fz + dz * scale, director, external_forces, external_torques)
            fx = -dx * scale
            fy = -dy * scale
            fz = -dz * scale
            px = hx
            py = hy
            pz = hz
        # the anchor: only the pull back towards the previous hole
        i = anchors[j]
        _add_hole_load(nodes[i], offsets[j, 0, i], offsets[j, 1, i], offsets[j, 2, i],
                       fx, fy, fz, director, external_forces, external_torques)
