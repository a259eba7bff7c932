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
Dynamic simulation of a tendon-driven continuum robot with PyElastica 1.0.

:class:`TendonSimulator` builds a Cosserat rod from a
:class:`~tendon_robot_sim.models.tendon_robot.Robot`
(vertebra discs with mass and inertia, clamped at the base, gravity,
mass-proportional damping, the Kelvin-Voigt damping of its strain rates
(:class:`StrainRateDamping`), contact with the obstacles of a world (:class:`WorldContact`), one
:class:`~tendon_robot_sim.models.rod.dynamics.tendon_forces.TendonForces` for all tendons; see
:func:`build_rod_system`), steps it with position Verlet (compiled, or PyElastica's
``PositionVerlet.step`` as the reference) at a time step derived
from the stability bound (:func:`stable_time_step`), watches for divergence and
reports a :class:`SimState`. It imports no ROS.

Frames: the world frame is the robot's base frame (``robot.base.frame_id``);
every position, rotation and velocity in a :class:`SimState` is expressed in it.
Rotations are 3x3 matrices whose columns are the material axes d1, d2, d3;
quaternions are [qx, qy, qz, qw] with qw >= 0.
"""

from __future__ import annotations

import logging
import math
from typing import Mapping

import elastica as ea
import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.models.contact import _kernels as contact_kernels
from tendon_robot_sim.models.contact.report import node_contacts, sunk_message
from tendon_robot_sim.models.contact.world import check_start_clear, no_contact, World
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.modal import mass_proportional_damping
from tendon_robot_sim.models.rod.dynamics._explicit_kernels import (advance_rod,
                                                                    contact_loads,
                                                                    first_bad_node, rod_arrays,
                                                                    rod_work,
                                                                    strain_rate_damping)
# SimState is the state of both rod simulators, stable_time_step the explicit one's bound
# (re-exported here)
from tendon_robot_sim.models.rod.dynamics.simulation import (  # noqa: F401
    explicit_refuses, is_real, Settling, SimState, stable_time_step, strain_rate_viscosity)
from tendon_robot_sim.models.rod.dynamics.tendon_forces import (TendonForces, TendonLayout,
                                                                vertebra_directors)
# InputError and SimulationDiverged are the errors of every simulation model
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
from tendon_robot_sim.models.tendon_robot import Robot, tendon_displacements

logger = logging.getLogger(__name__)

# PyElastica 1.0 multiplies the shear stiffness G A by this Timoshenko correction
# (elastica/rod/factory_function.py, Kaneko 1975 for Poisson's ratio 0.5);
# bending E I and torsion G J are used as given.
PYELASTICA_SHEAR_CORRECTION = 27.0 / 28.0
# The penalty's stiffest point: d f_n / d(-g) peaks at 1.045 k (at g = -3.1 delta), above the
# linear spring k it tends to.
PENALTY_PEAK = 1.045
# A node farther than this many rod lengths from the base means the run has blown up.
RUNAWAY_LENGTHS = 2.0
# Steps between divergence checks: cheap enough to be negligible, soon enough that
# an unstable run is caught within a few steps of its first NaN or runaway.
CHECK_EVERY = 10
# How TendonSimulator steps: one allocation-free numba call per advance()
# (_explicit_kernels.advance_rod), or PyElastica's PositionVerlet.step per step (the reference).
# The first is the default.
STEPPERS = ('compiled', 'pyelastica')


class _System(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping):
    """PyElastica system collection with the modules the simulator uses."""


class StrainRateDamping(ea.NoForces):
    """
    The rod's Kelvin-Voigt damping C = beta K of its strain rates as a PyElastica forcing.

    :func:`~tendon_robot_sim.models.rod.dynamics._explicit_kernels.strain_rate_damping` on the
    rod's state at the time of the forces (the compiled stepper does the same inside its passes);
    ``viscosity`` is beta [s]
    (:func:`~tendon_robot_sim.models.rod.dynamics.simulation.strain_rate_viscosity`).
    """

    def __init__(self, viscosity: float):
        super().__init__()
        self.viscosity = float(viscosity)

    def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
        """Add the viscous forces and torques of the current strain rates."""
        strain_rate_damping(system.position_collection, system.director_collection,
                            system.velocity_collection, system.omega_collection,
                            system.rest_lengths, system.rest_voronoi_lengths,
                            system.shear_matrix, system.bend_matrix, self.viscosity,
                            system.external_forces, system.external_torques)


class WorldContact(ea.NoForces):
    """
    The obstacles' contact loads on the rod's nodes as a PyElastica forcing.

    :func:`~tendon_robot_sim.models.rod.dynamics._explicit_kernels.contact_loads` (the compiled
    stepper calls the same inside its loads pass): the contact laws of every solver
    (``models/contact/_kernels.py``) lumped on the nodes. ``arguments``: its arguments after
    position and velocity (:func:`contact_lengths`).
    """

    def __init__(self, arguments: tuple):
        super().__init__()
        self.arguments = arguments

    def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
        """Add the contact forces of the current positions and velocities."""
        contact_loads(system.position_collection, system.velocity_collection, *self.arguments,
                      system.external_forces)


def contact_lengths(robot: Robot, rest_lengths: np.ndarray, nodes: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """
    Length of rod and of disc envelope each node carries the contact load of [m], (n + 1,).

    A node stands for its Voronoi domain of the rod (half of each element next to it, from
    the elements' ``rest_lengths``); a vertebra node's disc (``nodes``) replaces the rod's
    envelope over the disc's thickness. The clamp's node carries nothing.
    """
    domain = np.zeros(rest_lengths.size + 1)
    domain[:-1] += 0.5 * rest_lengths
    domain[1:] += 0.5 * rest_lengths
    domain[0] = 0.0
    disc = np.zeros_like(domain)
    disc[nodes] = np.minimum(robot.disc_thickness, domain[nodes])
    return domain - disc, disc


def contact_time_step(robot: Robot, stiffness: float) -> float:
    """
    Return the largest stable step [s] of a node on the contact spring of ``stiffness`` alone.

    A node carries the mass and the contact load of the same length of rod (a disc adds mass
    for its thickness of envelope: slower), so its contact frequency is sqrt(PENALTY_PEAK k /
    (rho A)) whatever the elements, and position Verlet is stable below 2 / frequency.
    """
    return 2.0 / math.sqrt(PENALTY_PEAK * stiffness / robot.rod.linear_density)


def soften_end_joints(rod) -> None:
    """
    Give the first and last bending joints the stiffness of their real domains.

    PyElastica bends a rod only at its n - 1 interior nodes, each standing for
    one element length l, so the half elements at the clamp (element 0 keeps the
    clamped directors) and at the free end never bend: bending is missing over
    [0, l/2] and [L - l/2, L], an O(l) error (a cantilever under its own weight
    deflects 2 l / L too little: 18 % with 10 elements). Joint 0 (node 1) stands
    for [0, 3l/2] and the last joint for [L - 3l/2, L]; scaling their bend/twist
    stiffness by l / (1.5 l) = 2/3 restores the full bending length and makes the
    error O(l^2) (4 % of the deflection with 10 elements, 1 % with 20; see
    test/models/rod/dynamics/test_simulator.py). Call before ``finalize()``.
    """
    domain = rod.rest_voronoi_lengths.copy()
    domain[0] += 0.5 * rod.rest_lengths[0]
    domain[-1] += 0.5 * rod.rest_lengths[-1]     # the same joint when n = 2
    rod.bend_matrix *= rod.rest_voronoi_lengths / domain


def add_vertebra_discs(rod, robot: Robot, layout: TendonLayout) -> None:
    """
    Add the mass and rotary inertia of the vertebra discs to ``rod``, before ``finalize()``.

    Each disc's mass goes to its node; its rotary inertia (thin cylinder,
    :attr:`Robot.disc_inertia`: about a diameter for d1 and d2, about its axis for d3)
    is shared equally by the free elements next to the node: elements k-1 and k,
    only k when k-1 is the clamped element 0, only k-1 at the tip.
    PyElastica keeps the inverse inertia too, so both are updated.
    """
    diameter, axis = robot.disc_inertia
    inertia = np.diag((diameter, diameter, axis))
    n_elems = rod.n_elems
    for k in layout.nodes:
        rod.mass[k] += robot.vertebra_mass
        elements = [e for e in (k - 1, k) if 0 < e < n_elems]
        for e in elements:
            rod.mass_second_moment_of_inertia[:, :, e] += inertia / len(elements)
    rod.inv_mass_second_moment_of_inertia[:] = np.linalg.inv(
        rod.mass_second_moment_of_inertia.transpose(2, 0, 1)).transpose(1, 2, 0)


def build_rod_system(robot: Robot, dt: float, tensions: np.ndarray,
                     tip_wrench: np.ndarray | None = None,
                     contact: contact_kernels.Contact | None = None,
                     damping_rate: float | None = None):
    """
    Build the finalized PyElastica system of ``robot`` and its rod, straight, at rest.

    The rod carries the vertebra discs (:func:`add_vertebra_discs`), is clamped at
    node 0 / element 0 (``OneEndFixedBC``), has its end joints softened
    (:func:`soften_end_joints`) when ``rod.end_joint_correction`` is on, is loaded by
    gravity (which weighs the discs too) and by one :class:`TendonForces` reading
    the shared ``tensions`` [N] and ``tip_wrench`` (default ``robot.tip_load``)
    arrays, and is damped by ``AnalyticalLinearDamper``'s
    uniform protocol: every velocity times exp(-c dt) per step, c from
    :func:`~tendon_robot_sim.models.modal.mass_proportional_damping` (or ``damping_rate``, its
    value, where the caller has it already: it solves an eigenproblem), and by
    :class:`StrainRateDamping`, which damps the highest modes. With ``contact`` (the kernels'
    world, :meth:`~tendon_robot_sim.models.contact.world.World.contact`) the obstacles load it
    (:class:`WorldContact`).
    """
    system = _System()
    rod = add_rod(system, robot, dt, tensions, tip_wrench, contact, damping_rate)
    system.finalize()
    return system, rod


def add_rod(system, robot: Robot, dt: float, tensions: np.ndarray,
            tip_wrench: np.ndarray | None = None,
            contact: contact_kernels.Contact | None = None,
            damping_rate: float | None = None):
    """
    Append the rod of :func:`build_rod_system` with its loads to ``system``; return the rod.

    ``system``: a PyElastica system collection with constraints, forcing and damping, not yet
    finalized (a test adds PyElastica's own obstacles and contact before finalizing it).
    """
    spec = robot.rod
    rod = ea.CosseratRod.straight_rod(
        spec.elements,
        start=robot.base.position.copy(),
        # copies: PyElastica normalises ``normal`` in place
        direction=robot.base.direction.copy(),
        normal=robot.base.normal.copy(),
        base_length=spec.length,
        base_radius=spec.radius,
        density=spec.density,
        youngs_modulus=spec.youngs_modulus,
        shear_modulus=spec.shear_modulus,
    )
    add_vertebra_discs(rod, robot, TendonLayout.from_robot(robot))
    if spec.end_joint_correction:
        soften_end_joints(rod)
    system.append(rod)
    system.constrain(rod).using(
        ea.OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,))
    system.add_forcing_to(rod).using(ea.GravityForces, acc_gravity=robot.gravity.copy())
    system.add_forcing_to(rod).using(TendonForces, robot=robot, tensions=tensions,
                                     vertebra_weight=False, tip_wrench=tip_wrench)
    system.add_forcing_to(rod).using(StrainRateDamping, viscosity=strain_rate_viscosity(robot))
    if contact is not None and contact.shape.size:
        lengths = contact_lengths(robot, rod.rest_lengths, TendonLayout.from_robot(robot).nodes)
        system.add_forcing_to(rod).using(WorldContact, arguments=(contact, *lengths))
    rate = mass_proportional_damping(robot) if damping_rate is None else damping_rate
    if rate > 0.0:
        system.dampen(rod).using(ea.AnalyticalLinearDamper, uniform_damping_constant=rate,
                                 time_step=dt)
    return rod


class TendonSimulator(Settling):
    """
    PyElastica simulation of one tendon-driven robot.

    Parameters
    ----------
    robot : Robot
        The robot description (geometry, material, tendons, loads).
    dt : float, optional
        Time step [s]. Default: ``safety_factor * stable_time_step(robot)``.
    safety_factor : float
        Fraction (0, 1] of the stability bound used when ``dt`` is not given.
    stepper : {'compiled', 'pyelastica'}
        ``compiled`` advances many steps in one allocation-free numba call
        (:func:`~tendon_robot_sim.models.rod.dynamics._explicit_kernels.advance_rod`, the same
        discretisation written out element by element);
        ``pyelastica`` calls ``PositionVerlet.step`` of the same system once per
        step (the reference it is tested against, several times slower).
    world : World, optional
        Obstacles (:mod:`tendon_robot_sim.models.contact.world`): the contact laws of every
        solver (smooth penalty, normal damping, regularised Coulomb friction on the nodes'
        velocities) lumped on the nodes (:func:`contact_lengths`); the state reports the
        contacts. WorldError if an obstacle intersects the base.

    Raises
    ------
    InputError
        For a bad ``dt`` or ``safety_factor``, or a rod too coarse for its vertebrae.

    """

    def __init__(self, robot: Robot, dt: float | None = None, safety_factor: float = 0.9,
                 stepper: str = 'compiled', world: World | None = None):
        if stepper not in STEPPERS:
            raise InputError(f'stepper: must be one of {list(STEPPERS)}, got {stepper!r}')
        self.stepper = stepper
        refused = explicit_refuses(robot)
        if refused:
            raise InputError(refused)
        self.robot = robot
        self.tendon_names = robot.tendon_names
        self.n_tendons = len(robot.tendons)
        self.world = world
        self._contact = no_contact() if world is None else world.contact(robot.contact_envelope)
        if world is not None:
            check_start_clear(world, self._contact, robot, discs=True)
        self.stable_dt = stable_time_step(robot)
        # the stiffest obstacle and the step its contact alone allows (None: no obstacle)
        self._stiffest = None
        if world is not None and world.obstacles:
            stiffest = max(world.obstacles, key=lambda o: o.law[contact_kernels.LAW_K])
            bound = contact_time_step(robot, stiffest.law[contact_kernels.LAW_K])
            self._stiffest = (stiffest, bound)
            # rod and contact spring in parallel: their frequencies add in squares
            self.stable_dt = 1.0 / math.hypot(1.0 / self.stable_dt, 1.0 / bound)
        if not (is_real(safety_factor) and 0.0 < safety_factor <= 1.0):
            raise InputError(f'safety_factor: must be in (0, 1], got {safety_factor!r}')
        if dt is None:
            dt = safety_factor * self.stable_dt
        elif not (is_real(dt) and math.isfinite(dt) and dt > 0.0):
            raise InputError(f'dt: must be a finite number > 0, got {dt!r}')
        elif dt > self.stable_dt:
            logger.warning('dt = %.3g s is above the stability bound %.3g s; the run may '
                           'diverge', dt, self.stable_dt)
        self.dt = float(dt)
        try:
            self._layout = TendonLayout.from_robot(robot)
        except ValueError as error:
            raise InputError(str(error)) from None
        off = np.abs(self._layout.mismatch).max()
        if off > 1e-6:
            logger.warning('vertebrae are up to %.3g m away from their nodes; choose '
                           'rod.elements so that they fall on nodes', off)
        # Shared with TendonForces: written in place, never rebound.
        self._tensions = np.zeros(self.n_tendons)
        self._tip_wrench = np.zeros((2, 3))
        # once: both steppers' damper take it, and every reset rebuilds them
        self._damping_rate = mass_proportional_damping(robot)
        self._build()
        self._rest_lengths = robot.reference_lengths(self._layout.path_lengths(
            self._layout.tendon_paths(self._rod.position_collection,
                                      self._rod.director_collection)))

    # ------------------------------------------------------------------ set-up

    def _build(self) -> None:
        """Create the PyElastica system in its initial straight state at t = 0."""
        self._tip_wrench[:] = (self.robot.tip_load.force, self.robot.tip_load.moment)
        self._system, self._rod = build_rod_system(self.robot, self.dt, self._tensions,
                                                   self._tip_wrench, self._contact,
                                                   self._damping_rate)
        self._contact_lengths = contact_lengths(self.robot, self._rod.rest_lengths,
                                                self._layout.nodes)
        self._stepper = ea.PositionVerlet()
        block = next(self._system.final_systems())
        forcing = TendonForces(self.robot, self._tensions, vertebra_weight=False,
                               tip_wrench=self._tip_wrench)
        # advance_rod's arguments after (n_steps, dt): views of the system's state (built
        # with the clamp's pose at node 0 / element 0), scratch, loads, damping and checks
        self._compiled = (
            rod_arrays(block), rod_work(self._rod.n_elems), self.robot.gravity.copy(),
            math.exp(-self._damping_rate * self.dt),
            strain_rate_viscosity(self.robot), forcing.kernel_arguments,
            (self._contact, *self._contact_lengths), CHECK_EVERY,
            self.robot.base.position.copy(), RUNAWAY_LENGTHS * self.robot.rod.length)
        self.time = 0.0
        self._steps = 0
        self._diverged: str | None = None
        # tip samples for is_steady(): about every CHECK_EVERY steps, however advance() is called
        self.sample_period = CHECK_EVERY * self.dt
        self._start_history(0.0, self._rod.position_collection[:, -1])

    def reset(self) -> None:
        """
        Back to the initial straight state at t = 0 with zero tensions.

        The tip load returns to the description's ``tip_load``.

        The PyElastica system is rebuilt, so no state (memory blocks, damper,
        constraint) survives from the previous run; the compiled kernels are reused.
        """
        self._tensions[:] = 0.0
        self._build()

    # ------------------------------------------------------------------ inputs

    @property
    def tensions(self) -> np.ndarray:
        """Return a copy of the applied tensions [N], (n_tendons,)."""
        return self._tensions.copy()

    def set_tensions(self, tensions) -> None:
        """
        Set the tendon tensions [N].

        Parameters
        ----------
        tensions : sequence of n_tendons numbers, or mapping {tendon name: number}
            A mapping changes only the tendons it names. Each value must be
            finite, >= 0 and <= the tendon's ``max_tension``.

        Raises
        ------
        InputError
            Naming the value and the problem; nothing is changed then.

        """
        new = self._tensions.copy()
        if isinstance(tensions, Mapping):
            for name, value in tensions.items():
                if name not in self.tendon_names:
                    raise InputError(f'tensions: unknown tendon {name!r} '
                                     f'(known: {", ".join(self.tendon_names)})')
                index = self.tendon_names.index(name)
                new[index] = self._check_tension(value, index, f'tensions[{name!r}]')
        else:
            if isinstance(tensions, (str, bytes)) or not hasattr(tensions, '__len__'):
                raise InputError('tensions: must be a sequence of numbers or a mapping '
                                 f'{{tendon name: number}}, got {type(tensions).__name__}')
            values = list(np.ravel(tensions)) if isinstance(tensions, np.ndarray) \
                else list(tensions)
            if len(values) != self.n_tendons:
                raise InputError(
                    f'tensions: expected {counted(self.n_tendons, "value")} (one per tendon '
                    f'{", ".join(self.tendon_names)}), got {len(values)}')
            for index, value in enumerate(values):
                new[index] = self._check_tension(value, index, f'tensions[{index}]')
        self._tensions[:] = new

    @property
    def tip_load(self) -> tuple[np.ndarray, np.ndarray]:
        """Return copies of the applied tip force [N] and moment [N m], world frame."""
        return self._tip_wrench[0].copy(), self._tip_wrench[1].copy()

    def set_tip_load(self, force, moment=(0.0, 0.0, 0.0)) -> None:
        """
        Set the external tip force [N] and moment [N m], world (base) frame.

        Raises
        ------
        InputError
            Unless both are 3 finite numbers; nothing is changed then.

        """
        wrench = np.empty((2, 3))
        for row, (name, value) in enumerate((('force', force), ('moment', moment))):
            values = list(np.ravel(value)) if hasattr(value, '__len__') and not isinstance(
                value, (str, bytes)) else None
            if values is None or len(values) != 3 or not all(is_real(v) for v in values):
                raise InputError(f'tip {name}: must be 3 numbers, got {value!r}')
            if not all(math.isfinite(v) for v in values):
                raise InputError(f'tip {name}: must be finite, got {values}')
            wrench[row] = values
        self._tip_wrench[:] = wrench

    def _check_tension(self, value, index: int, field: str) -> float:
        if not is_real(value):
            raise InputError(f'{field}: must be a number, got {value!r}')
        value = float(value)
        if not math.isfinite(value):
            raise InputError(f'{field}: must be finite, got {value}')
        if value < 0.0:
            raise InputError(f'{field}: must be >= 0, got {value}')
        limit = self.robot.tendons[index].max_tension
        if value > limit:
            raise InputError(f'{field}: must be <= max_tension {limit} N of tendon '
                             f'{self.tendon_names[index]!r}, got {value}')
        return value

    # ------------------------------------------------------------------ stepping

    def advance(self, duration: float, result: bool = True) -> SimState | None:
        """
        Step ``round(duration / dt)`` time steps and return the new state (None: ``result`` False).

        ``result`` False: for a caller that reads :meth:`state` less often than it advances
        (the node publishes at its own rate).

        Raises
        ------
        InputError
            If ``duration`` is not a finite number >= 0.
        SimulationDiverged
            When a node position becomes non-finite or farther than
            2 rod lengths from the base (checked every few steps and at the end), or with a
            world when the rod's axis ends inside an obstacle (deeper than the envelope's
            radius: the contact was not resolved). The state is then invalid until
            :meth:`reset`.

        """
        if not (is_real(duration) and math.isfinite(duration) and duration >= 0.0):
            raise InputError(f'duration: must be a finite number >= 0 s, got {duration!r}')
        if self._diverged:
            raise SimulationDiverged(f'{self._diverged} (call reset() before advancing)')
        n_steps = round(duration / self.dt)
        if self.stepper == 'compiled':
            self._advance_compiled(n_steps)
        else:
            self._advance_pyelastica(n_steps)
        self._steps += n_steps
        if not result and self.world is None:
            return None
        state = self.state()
        sunk = sunk_message(state.contacts, self._contact.radius[0], self.dt)
        if sunk:
            self._diverged = f'at t = {self.time:.6g} s: {sunk}'
            raise SimulationDiverged(f'{self._diverged}; call reset() to start again')
        return state if result else None

    def _advance_compiled(self, n_steps: int) -> None:
        samples = np.empty((n_steps // CHECK_EVERY, 3))
        done, node = advance_rod(n_steps, self.dt, *self._compiled, samples)
        start = self.time
        self.time = start + done * self.dt
        for i in range(done // CHECK_EVERY):
            self._record_tip(start + (i + 1) * CHECK_EVERY * self.dt, samples[i])
        self._record_tip(self.time, self._rod.position_collection[:, -1])
        if node >= 0:
            self._fail(node, done, self.time, RUNAWAY_LENGTHS * self.robot.rod.length)

    def _advance_pyelastica(self, n_steps: int) -> None:
        system, stepper, dt = self._system, self._stepper, self.dt
        position = self._rod.position_collection
        origin = self.robot.base.position
        limit = RUNAWAY_LENGTHS * self.robot.rod.length
        time = self.time
        try:
            for step in range(1, n_steps + 1):
                time = stepper.step(system, time, dt)
                if step % CHECK_EVERY == 0 or step == n_steps:
                    node = first_bad_node(position, origin, limit)
                    if node >= 0:
                        self._fail(node, step, time, limit)
                    self._record_tip(time, position[:, -1])
        finally:
            self.time = float(time)

    def _fail(self, node: int, step: int, time: float, limit: float) -> None:
        p = self._rod.position_collection[:, node]
        if np.all(np.isfinite(p)):
            what = (f'node {node} is {np.linalg.norm(p - self.robot.base.position):.3g} m from '
                    f'the base (limit {RUNAWAY_LENGTHS:g} rod lengths = {limit:g} m)')
        else:
            what = f'node {node} has a non-finite position {p.tolist()}'
        if self.dt > self.stable_dt:
            # 3 digits, rounded down: the step named is within the bound
            digits = 10.0 ** (math.floor(math.log10(self.stable_dt)) - 2)
            advice = f'a dt <= {math.floor(self.stable_dt / digits) * digits:.3g} s is stable'
        else:
            # below the bound a smaller step cannot help: say so rather than name one
            advice = ('dt is within it, so a smaller step does not help (the loads are beyond '
                      'what the explicit model follows; try the implicit integrator)')
        if self._stiffest is not None and self.dt > self._stiffest[1]:
            obstacle, bound = self._stiffest
            advice += (f'; the contact with obstacle {obstacle.name!r} (penalty_stiffness '
                       f'{obstacle.law[contact_kernels.LAW_K]:g} N/m^2) alone needs dt <= '
                       f'{bound:.3g} s: give a smaller dt or a lower penalty_stiffness')
        self._diverged = (
            f'simulation diverged at t = {time:.6g} s (step {self._steps + step}): {what}; '
            f'dt = {self.dt:.3g} s, stability bound {self.stable_dt:.3g} s: {advice}')
        raise SimulationDiverged(f'{self._diverged}; call reset() to start again')

    # ------------------------------------------------------------------ output

    def state(self) -> SimState:
        """Return the current :class:`SimState` (arrays are copies)."""
        rod, layout = self._rod, self._layout
        position = rod.position_collection.copy()
        director = rod.director_collection
        # directors rows d1 d2 d3 -> rotation matrices with columns d1 d2 d3
        vertebra_rotations = np.transpose(vertebra_directors(director, layout.nodes),
                                          (2, 1, 0)).copy()
        tip_rotation = director[:, :, -1].T.copy()
        quaternions = rotation_to_quaternion(
            np.concatenate((vertebra_rotations, tip_rotation[np.newaxis])))
        paths = layout.tendon_paths(position, director)
        lengths = layout.path_lengths(paths)
        compliance = np.array([t.compliance for t in self.robot.tendons])
        motor = np.array([t.motor_distance for t in self.robot.tendons])
        tensions = self._tensions.copy()
        return SimState(
            time=self.time,
            tip_position=position[:, -1].copy(),
            tip_orientation=quaternions[-1],
            tip_rotation=tip_rotation,
            tip_velocity=rod.velocity_collection[:, -1].copy(),
            centerline=position,
            vertebra_positions=position[:, layout.nodes].copy(),
            vertebra_rotations=vertebra_rotations,
            vertebra_orientations=quaternions[:-1],
            tendon_paths=paths,
            tensions=tensions,
            tendon_lengths=lengths,
            tendon_displacements=tendon_displacements(self._rest_lengths, lengths, tensions,
                                                      compliance, motor),
            contacts=None if self.world is None else tuple(node_contacts(
                self.world.names, self._contact,
                np.concatenate(([0.0], np.cumsum(rod.rest_lengths))), position.T,
                *self._contact_lengths)),
        )
