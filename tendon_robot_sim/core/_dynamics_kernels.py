"""Compiled time stepping of the clamped, damped, tendon-loaded Cosserat rod.

:func:`advance_rod` advances the rod of :func:`~tendon_robot_sim.core.simulator.build_rod_system`
by many position-Verlet steps in one numba call. It composes PyElastica 1.0's own
kernels (``elastica.rod.cosserat_rod``: internal forces and torques, accelerations;
``elastica.rod.data_structures``: the kinematic and dynamic updates) with the clamp
(``OneEndFixedBC``), gravity, the mass-proportional damper and the tendon forcing
kernel of :mod:`~tendon_robot_sim.core.tendon_forces`, in the order of
``PositionVerlet.step`` on that system (``elastica/timestepper/symplectic_steppers.py``):

1. kinematic half step x += dt/2 v, Q <- exp(-dt/2 omega) Q; clamp positions/directors;
2. internal forces and torques; external loads: gravity, then tendons/vertebrae/tip;
3. accelerations; v += dt dv/dt, omega += dt domega/dt; clamp rates; damping;
4. kinematic half step; clamp positions/directors; external loads zeroed.

The plain path is PyElastica's ``PositionVerlet.step`` on the same system, which
``TendonSimulator(stepper='pyelastica')`` runs and tests compare against.
"""

from elastica.rod.cosserat_rod import (
    _compute_internal_forces, _compute_internal_torques, _update_accelerations,
    _zeroed_out_external_forces_and_torques)
from elastica.rod.data_structures import (
    overload_operator_dynamic_numba, overload_operator_kinematic_numba)
from numba import njit

from tendon_robot_sim.core.tendon_forces import _tendon_wrench_kernel


def rod_arrays(block) -> tuple:
    """The arrays of a PyElastica rod memory block that :func:`advance_rod` reads and writes.

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
    """Advance the rod ``n_steps`` position-Verlet steps of ``dt`` [s], in place.

    Parameters
    ----------
    n_steps : int
    dt : float [s]
    rod : tuple
        :func:`rod_arrays` of the system's memory block.
    clamp_position : (3,) position of node 0, world [m].
    clamp_director : (3, 3) directors of element 0 (rows d1 d2 d3).
    gravity : (3,) [m/s^2], world.
    decay : float
        Per-step factor exp(-c dt) of the mass-proportional damper (1 = undamped).
    tendons : tuple
        The arguments of ``_tendon_wrench_kernel`` after position and director and
        before the output arrays (``TendonForces.kernel_arguments``).
    check_every : int
        Steps between divergence checks and tip samples.
    origin : (3,) base position [m]; limit : float, largest distance of a node from it [m].
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
        _tendon_wrench_kernel(position, director, *tendons, external_forces, external_torques)
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
