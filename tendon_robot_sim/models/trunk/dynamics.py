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
Multi-section constant-curvature Lagrange dynamics (the elephant-trunk model).

Sources: V. Falkenhahn et al. 2015, "Dynamic Modeling of Bellows-Actuated Continuum
Robots Using the Euler-Lagrange Formalism", IEEE T-RO 31(6) (Falkenhahn 2017, DOI
10.18419/opus-9226), as implemented by Hadzic & Häseli ("Implementation of Kinematics and
Dynamics of an Elephant Trunk like Robotic Arm", bachelor thesis, ETH Zurich):
M(q) q'' + Omega(q, q') q' + N(q, q') = tau(p).

Model
-----
n sections in series, each a constant-curvature (CC) arc whose pose is
:func:`tendon_robot_sim.models.geometry.section_pose`. Each section has actuators
(bellows or tendons) parallel to its centre spline at radius r_i and angle a_i; the
length of actuator i is

    q_i = l - r_i theta cos(phi - a_i) = l - r_i (cos a_i u_x + sin a_i u_y),

linear in the section's coordinates x = (l, u_x, u_y), u = theta (cos phi, sin phi). For
three actuators q = B x with B constant and invertible, so x are their muscle-length
coordinates after a constant linear change (the Lagrange equations keep their form); x
also serves a 4-tendon section, whose 4 lengths are not independent. In x the CC
kinematics is analytic (functions of theta^2 only), so theta -> 0 needs no special case:
the kernels sum series below theta = 2 (:mod:`._kernels`).

Energies and forces, per section (Hadzic & Häseli, "Dynamic model"; Falkenhahn 2015 Sec. III):

- kinetic: T = 1/2 sum m_k |p_k'|^2 of lumped masses on the arcs, plus, where a mass has
  an ``inertia``, 1/2 w^T I w of its rotation with the arc frame (they neglect it);
- potential: gravity -m_k g . p_k, actuator springs k_i (q_i - q0_i)^2 / 2, the centre
  spline spring k_c (l - l0)^2 / 2 and the bending energy k_b theta^2 / 2 (M_bend = k_b theta);
- dissipation: actuator dampers d_i q_i', spline damper d_c l', and a mass-proportional
  damping nu M x' (the dynamic model's damper for the tendon robot);
- actuation: pressure p_i pushes bellows i with p_i A_i; tension T_i pulls tendon i (a
  tendon anchored at the end of section j runs through sections 1..j).

Tendon robots come from the existing description (``config/robot.yaml``): sections end
at the tendon anchors, l0 is the section length, k_c = E A / l0, k_b = E I / l0 (the
Kirchhoff rod bent into an arc), no actuator springs; the rod mass sits at Gauss-Legendre
points and every vertebra at its place; damping as the dynamic (PyElastica) model's
mass-proportional damper (``rod.damping``; rate c = 2 zeta omega_1 for a ratio): on the
velocities (c M x') and on the angular velocities of the masses (c J per mass, J the rotary
inertia of the rod piece or disc about a diameter).
Bellows robots come from a ``kind: bellows`` file (:mod:`tendon_robot_sim.models.trunk.robot`).

No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from tendon_robot_sim.files.outputs import save_figure
from tendon_robot_sim.models.description import (POSITION_TOLERANCE, read_yaml,
                                                 RobotDescriptionError)
from tendon_robot_sim.models.geometry import section_pose, self_contact_bend
from tendon_robot_sim.models.modal import mass_proportional_damping
from tendon_robot_sim.models.plotting import equal_axes, legend_beside
from tendon_robot_sim.models.tendon_robot import friction_refused, Robot, robot_from_dict
from tendon_robot_sim.models.trunk import _integrator as integrator, _kernels as kernels
from tendon_robot_sim.models.trunk.kinematics import chain_frames, section_matrix
from tendon_robot_sim.models.trunk.robot import (bellows_robot_from_dict, BellowsRobot,
                                                 is_bellows_data)

# Default time step [s]: 5 ms resolves the bending modes of the default robots (first
# modes below 10 Hz); there the Gauss-Legendre integrator keeps the energy of the undamped
# robot within 1 % of its kinetic-energy swing over 10 s (test_cc_dynamics.py).
DEFAULT_TIME_STEP = 5e-3
# The integrators (see _integrator): 'gauss' adds no damping of its own (the default);
# 'sdirk2' is L-stable, damping the stiff modes within a step and part of the slow ones.
SCHEMES = {'gauss': integrator.GAUSS, 'sdirk2': integrator.SDIRK2}
DEFAULT_SCHEME = 'gauss'
# Newton tolerance of each implicit stage: |dY| <= ATOL + RTOL |Y| (m, rad, m/s, rad/s);
# far below the error of a 5 ms step (0.1 mm and more, benchmarks/bench_cc_dynamics.py),
# while 1e-10 costs about twice the iterations.
ATOL, RTOL, MAX_ITERATIONS = 1e-7, 1e-5, 10
# Static equilibrium: Newton tolerance on the residual in m and rad (force / diagonal
# stiffness), iteration limit, and load steps of the continuation when Newton fails.
STATIC_TOLERANCE = 1e-12
STATIC_ITERATIONS = 50
CONTINUATION_STEPS = 10
# Gauss-Legendre points per section carrying the rod mass of a tendon robot.
ROD_MASS_POINTS = 4


class CCDynamicsError(ValueError):
    """A robot or an input the constant-curvature dynamics cannot take."""


class CCNoSolutionError(CCDynamicsError):
    """A valid input without a result: the integration or the static equilibrium failed."""


@dataclass(frozen=True)
class CCTrajectory:
    """A simulated run: states at ``times``."""

    model: 'CCDynamics'
    times: np.ndarray        # (k,) s
    x: np.ndarray            # (k, 3n) (l m, u_x rad, u_y rad) per section
    v: np.ndarray            # (k, 3n) rates
    inputs: np.ndarray       # (k, m) Pa or N, held from each time to the next
    jacobians: int           # Jacobians the integrator computed (cost indicator)
    split_steps: int         # steps whose Newton iteration needed substeps

    @property
    def actuator_lengths(self) -> np.ndarray:
        """(k, m) m: bellows lengths, or tendon path lengths from the base to the anchor."""
        return self.x @ self.model.lengths.T

    def tip_positions(self) -> np.ndarray:
        """(k, 3) m, world frame."""
        return np.array([self.model.frames(x)[-1][1] for x in self.x])

    def self_contact(self) -> tuple[int, int, float, float] | None:
        """
        Return the first state whose bend passes through itself, or None.

        (index of the state, section, its bend theta [rad], its length [m]): the first at
        or past :func:`~tendon_robot_sim.models.geometry.self_contact_bend` of the section's
        length and ``model.radii``, the check of the ``cc`` command on each state.
        """
        theta, length, past = self.model.bends(self.x)
        if not past.any():
            return None
        k, j = (int(i) for i in np.argwhere(past)[0])
        return k, j, float(theta[k, j]), float(length[k, j])


class CCDynamics:
    """
    The Lagrange dynamics of a multi-section CC robot; build it with a factory.

    Parameters
    ----------
    name : str
    areas : array (m,) or None
        Effective bellows areas [m^2]: the inputs are gauge pressures [Pa] pushing
        bellows (``kind`` 'pressure'); None: tensions [N] pulling tendons ('tension').
    input_names : list of str, m
    input_range : array (m, 2)
        Allowed [min, max] of each input (Pa or N).
    lengths : array (m, 3n)
        Actuator lengths q = lengths @ x [m].
    base_rotation, base_position : arrays (3, 3), (3,)
        Pose of the robot base in the world frame.
    rest_lengths : array (n,)
        Centre-spline rest lengths l0 [m] (the state x = (l0, 0, 0) per section is the
        straight, unloaded robot).
    fractions, masses : arrays (n, k)
        Lumped masses [kg] at fractions of each section's arc (0 = unused slot).
    gravity : array (3,)
        m/s^2, world frame.
    stiffness, rest_force : arrays (3n, 3n), (3n,)
        Linear elastic forces b - K x of springs and bending (generalised, N or N m).
    damping : array (3n, 3n)
        Linear dampers: force -D x'.
    mass_damping : float
        nu [1/s]: force -nu M(x) x'.
    inertias : array (n, k, 3), optional
        Principal moments of inertia [kg m^2] of the lumped masses about the axes of the
        arc frame at each (rotational kinetic energy); default 0 (neglected, as
        by Hadzic & Häseli).
    spin_damping : array (n, k), optional
        Dampers [N m s/rad] on the angular velocity of each lumped mass's arc frame;
        default 0.
    radii : array (n,), optional
        Radius [m] of each section about its centre spline, for its self contact
        (:meth:`CCTrajectory.self_contact`); default 0 (a full turn).

    """

    def __init__(self, name: str, areas: np.ndarray | None, input_names: Sequence[str],
                 input_range: np.ndarray, lengths: np.ndarray, base_rotation: np.ndarray,
                 base_position: np.ndarray, rest_lengths: np.ndarray, fractions: np.ndarray,
                 masses: np.ndarray, gravity: np.ndarray, stiffness: np.ndarray,
                 rest_force: np.ndarray, damping: np.ndarray, mass_damping: float,
                 inertias: np.ndarray | None = None, spin_damping: np.ndarray | None = None,
                 radii: np.ndarray | None = None):
        self.name = name
        self.kind = 'tension' if areas is None else 'pressure'
        self.input_names = list(input_names)
        self.input_range = np.asarray(input_range, dtype=float)
        self.lengths = np.asarray(lengths, dtype=float)
        self.base_rotation = np.asarray(base_rotation, dtype=float)
        self.base_position = np.asarray(base_position, dtype=float)
        self.rest_lengths = np.asarray(rest_lengths, dtype=float)
        self.n_sections = self.rest_lengths.size
        self.radii = (np.zeros(self.n_sections) if radii is None
                      else np.asarray(radii, dtype=float))
        # pressure pushes (force +p A along q), tension pulls (force -T along q):
        # generalised force G u = lengths^T (sign * area * u)
        if areas is None:
            actuation = -self.lengths.T
        else:
            actuation = self.lengths.T * np.asarray(areas, dtype=float)
        self.model = (self.base_rotation.copy(), np.ascontiguousarray(fractions, dtype=float),
                      np.ascontiguousarray(masses, dtype=float),
                      np.asarray(gravity, dtype=float).copy(),
                      np.ascontiguousarray(actuation), np.asarray(rest_force, dtype=float),
                      np.ascontiguousarray(stiffness, dtype=float),
                      np.ascontiguousarray(damping, dtype=float), float(mass_damping),
                      np.zeros(np.shape(masses) + (3,)) if inertias is None
                      else np.ascontiguousarray(inertias, dtype=float),
                      np.zeros(np.shape(masses)) if spin_damping is None
                      else np.ascontiguousarray(spin_damping, dtype=float))

    # ---------------------------------------------------------------- factories

    @classmethod
    def from_tendon_robot(cls, robot: Robot) -> 'CCDynamics':
        """Build the CC model of a tendon robot with parallel tendons (``config/robot.yaml``)."""
        refused = friction_refused(robot, 'constant-curvature dynamics')
        if refused:
            raise CCDynamicsError(refused)
        bad = [t.name for t in robot.tendons if t.routing != 'parallel']
        if bad:
            raise CCDynamicsError(
                f'tendons {bad}: constant curvature needs parallel tendon routing')
        ends = []
        for end in sorted(t.end for t in robot.tendons):
            if not ends or end - ends[-1] > POSITION_TOLERANCE:
                ends.append(end)
        if robot.rod.length - ends[-1] > POSITION_TOLERANCE:
            raise CCDynamicsError(
                f'tendons[].end: the rod continues {robot.rod.length - ends[-1]:.3g} m past '
                'the last anchor; the CC dynamics needs a tendon anchored at the rod tip')
        bounds = np.concatenate(([0.0], ends))
        section_lengths = np.diff(bounds)
        n = section_lengths.size
        rod = robot.rod
        lengths = np.zeros((len(robot.tendons), 3 * n))
        rows = section_matrix([t.offset for t in robot.tendons], [t.angle for t in robot.tendons])
        for i, (tendon, row) in enumerate(zip(robot.tendons, rows)):
            for j in range(n):
                if bounds[j + 1] <= tendon.end + POSITION_TOLERANCE:
                    lengths[i, 3 * j:3 * j + 3] = row
        nodes, weights = np.polynomial.legendre.leggauss(ROD_MASS_POINTS)
        c = mass_proportional_damping(robot)    # 1/s, as in the dynamic (PyElastica) model
        fractions, masses, spin_damping = [], [], []
        for j in range(n):
            frac = list(0.5 * (nodes + 1.0))
            mass = list(0.5 * weights * rod.linear_density * section_lengths[j])

            inside = ((robot.vertebra_positions > bounds[j] + POSITION_TOLERANCE)
                      & (robot.vertebra_positions <= bounds[j + 1] + POSITION_TOLERANCE))
            for s in robot.vertebra_positions[inside]:
                frac.append(min((s - bounds[j]) / section_lengths[j], 1.0))
                mass.append(robot.vertebra_mass)
            fractions.append(frac)
            masses.append(mass)
            # The dynamic model's mass-proportional damper slows every velocity at the rate
            # c, angular ones too: a torque c J w on each mass, with J its rotary inertia
            # about a diameter (rod piece: m I / A; disc: a thin cylinder).
            spin_damping.append([c * m * rod.second_moment / rod.area
                                 for m in mass[:ROD_MASS_POINTS]]
                                + [c * robot.disc_inertia[0]] * (len(mass) - ROD_MASS_POINTS))
        stiffness = np.zeros((3 * n, 3 * n))
        rest_force = np.zeros(3 * n)
        for j, l0 in enumerate(section_lengths):
            k_c = rod.youngs_modulus * rod.area / l0        # N/m, axial
            k_b = rod.bending_stiffness / l0                # N m/rad, E I / l0
            stiffness[3 * j:3 * j + 3, 3 * j:3 * j + 3] = np.diag((k_c, k_b, k_b))
            rest_force[3 * j] = k_c * l0
        return cls(robot.name, None, robot.tendon_names,
                   np.column_stack((np.zeros(len(robot.tendons)), robot.max_tensions)),
                   lengths, robot.base.rotation, robot.base.position, section_lengths,
                   *_padded(fractions, masses), robot.gravity, stiffness, rest_force,
                   np.zeros((3 * n, 3 * n)), c,
                   spin_damping=_padded(fractions, spin_damping)[1],
                   radii=np.full(n, rod.radius))

    @classmethod
    def from_bellows_robot(cls, robot: BellowsRobot) -> 'CCDynamics':
        """Build the CC model of a bellows robot (``kind: bellows``)."""
        n = len(robot.sections)
        names = robot.actuator_names
        lengths = np.zeros((len(names), 3 * n))
        stiffness = np.zeros((3 * n, 3 * n))
        damping = np.zeros((3 * n, 3 * n))
        rest_force = np.zeros(3 * n)
        row = 0
        for j, section in enumerate(robot.sections):
            o = slice(3 * j, 3 * j + 3)
            B = section_matrix([b.offset for b in section.bellows],
                               [b.angle for b in section.bellows])
            k = np.array([b.stiffness for b in section.bellows])
            d = np.array([b.damping for b in section.bellows])
            q0 = np.array([b.rest_length for b in section.bellows])
            lengths[row:row + len(B), o] = B
            row += len(B)
            # springs k (q - q0)^2 / 2 and k_c (l - l0)^2 / 2, bending k_b |u|^2 / 2
            stiffness[o, o] = B.T @ (k[:, None] * B) + np.diag(
                (section.spline_stiffness, section.bending_stiffness,
                 section.bending_stiffness))
            rest_force[o] = B.T @ (k * q0) + np.array(
                (section.spline_stiffness * section.length, 0.0, 0.0))
            damping[o, o] = B.T @ (d[:, None] * B) + np.diag((section.spline_damping, 0, 0))
        bellows = [b for s in robot.sections for b in s.bellows]
        return cls(
            robot.name, np.array([b.area for b in bellows]), names,
            np.array([[b.min_pressure, b.max_pressure] for b in bellows]), lengths,
            robot.base.rotation, robot.base.position,
            np.array([s.length for s in robot.sections]),
            *_padded([s.mass_fractions for s in robot.sections],
                     [s.masses for s in robot.sections]),
            robot.gravity, stiffness, rest_force, damping, 0.0,
            _padded_inertias([s.inertias for s in robot.sections]),
            # the bellows' axes: the section reaches at least that far from its spline
            radii=[s.ring for s in robot.sections])

    # ---------------------------------------------------------------- state

    @property
    def rest_state(self) -> np.ndarray:
        """Return x (3n,) of the straight robot with every section at its rest length."""
        x = np.zeros(3 * self.n_sections)
        x[0::3] = self.rest_lengths
        return x

    @property
    def straight_lengths(self) -> np.ndarray:
        """
        Return the actuator lengths (m,) [m] of the straight robot at rest.

        The zero of the joint ``position`` the simulator publishes: an actuator's position
        is how much shorter than this it is (a tendon pulled in, a bellows contracted).
        """
        return self.lengths @ self.rest_state

    def input_vector(self, values: Sequence[float] | dict, field: str = 'inputs') -> np.ndarray:
        """Return the range-checked inputs (one per actuator, or name -> value, others 0)."""
        if isinstance(values, dict):
            u = np.zeros(len(self.input_names))
            for name, value in values.items():
                if name not in self.input_names:
                    raise CCDynamicsError(
                        f'{field}: unknown actuator {name!r}; known: {self.input_names}')
                u[self.input_names.index(name)] = value
        else:
            u = np.asarray(values, dtype=float)
            if u.shape != (len(self.input_names),):
                raise CCDynamicsError(f'{field}: need one value per actuator '
                                      f'{self.input_names}, got {np.size(u)}')
        unit = 'Pa' if self.kind == 'pressure' else 'N'
        for name, value, (low, high) in zip(self.input_names, u, self.input_range):
            if not low <= value <= high:        # also rejects NaN
                raise CCDynamicsError(f'{field}: {name} = {value:g} {unit} is outside '
                                      f'[{low:g}, {high:g}] {unit}')
        return u

    # ---------------------------------------------------------------- equations

    def acceleration(self, x: np.ndarray, v: np.ndarray, inputs: np.ndarray) -> np.ndarray:
        """Return the accelerations x'' (3n,) at state (x, x') under ``inputs`` (Pa or N)."""
        x = np.asarray(x, float)
        out = np.empty_like(x)
        kernels.acceleration(x, np.asarray(v, float), np.asarray(inputs, float), self.model,
                             kernels.make_work(x.size), out)
        return out

    def lagrange_terms(self, x: np.ndarray, v: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """
        Return M(x), c(x, x'), the gravity force and the force of the spin dampers.

        M(x) (3n, 3n) kg (m or rad based), velocity products c(x, x').
        """
        N = 3 * self.n_sections
        M, c, q_gravity, q_spin = np.empty((N, N)), np.empty(N), np.empty(N), np.empty(N)
        kernels.lagrange_terms(np.asarray(x, float), np.asarray(v, float), self.model,
                               M, c, q_gravity, q_spin, kernels.lagrange_work(N))
        return M, c, q_gravity, q_spin

    def static_force(self, x: np.ndarray, inputs: np.ndarray) -> np.ndarray:
        """Generalised force at rest (x' = 0): zero at a static equilibrium."""
        q_gravity = self.lagrange_terms(x, np.zeros_like(x))[2]
        G, b, K = self.model[4], self.model[5], self.model[6]
        return G @ inputs + b - K @ x + q_gravity

    def equilibrium(self, inputs: np.ndarray, guess: np.ndarray | None = None) -> np.ndarray:
        """
        Return x (3n,) of the static equilibrium under ``inputs`` (x' = x'' = 0).

        Hadzic & Häseli's identification idea: at rest the Lagrange equations are the static
        model. Damped Newton from ``guess`` (default: rest state); if that fails, by
        continuation from zero inputs in CONTINUATION_STEPS load steps.
        """
        inputs = np.asarray(inputs, float)
        x, converged = self._static_newton(
            inputs, self.rest_state if guess is None else np.asarray(guess, float))
        if converged:
            return x
        x = self.rest_state
        for fraction in np.linspace(0.0, 1.0, CONTINUATION_STEPS + 1)[1:]:
            x, converged = self._static_newton(fraction * inputs, x)
            if not converged:
                raise CCNoSolutionError(f'no static equilibrium found (continuation stalled '
                                        f'at {fraction:.0%} of the inputs)')
        return x

    def _static_newton(self, inputs: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, bool]:
        """
        Run damped Newton on the static force; return (x, converged).

        The residual is divided by the diagonal stiffness (so it is in m and rad).
        """
        scale = np.diag(self.model[6]).copy()      # N/m, N m/rad
        scale[scale == 0.0] = 1.0

        def residual(z):
            return self.static_force(z, inputs) / scale

        x = x.copy()
        r = residual(x)
        for _ in range(STATIC_ITERATIONS):
            if not np.all(np.isfinite(r)):
                return x, False
            if np.max(np.abs(r)) <= STATIC_TOLERANCE:
                return x, True
            jacobian = np.empty((x.size, x.size))
            for col in range(x.size):
                step = kernels.FD_STEP * max(1.0, abs(x[col]))
                shifted = x.copy()
                shifted[col] += step
                jacobian[:, col] = (residual(shifted) - r) / step
            try:
                dx = np.linalg.solve(jacobian, -r)
            except np.linalg.LinAlgError:
                return x, False
            alpha = 1.0
            while True:       # backtrack until the residual norm decreases
                trial = x + alpha * dx
                r_trial = residual(trial)
                if (np.linalg.norm(r_trial) < (1.0 - 1e-4 * alpha) * np.linalg.norm(r)
                        or alpha < 1e-3):
                    break
                alpha *= 0.5
            x, r = trial, r_trial
        return x, bool(np.max(np.abs(r)) <= STATIC_TOLERANCE)

    def natural_frequencies(self, x: np.ndarray, inputs: np.ndarray) -> np.ndarray:
        """
        Undamped natural frequencies [Hz], ascending, of small motions about x.

        Linearises the static force by central differences: K_t = -dQ/dx, then
        solves K_t phi = omega^2 M phi.
        """
        x = np.asarray(x, float)
        N = x.size
        stiffness = np.empty((N, N))
        for col in range(N):
            step = 1e-6 * max(1.0, abs(x[col]))
            dx = np.zeros(N)
            dx[col] = step
            stiffness[:, col] = -(self.static_force(x + dx, inputs)
                                  - self.static_force(x - dx, inputs)) / (2.0 * step)
        M = self.lagrange_terms(x, np.zeros(N))[0]
        omega2 = np.linalg.eigvals(np.linalg.solve(M, stiffness)).real
        return np.sort(np.sqrt(np.maximum(omega2, 0.0))) / (2.0 * math.pi)

    # ---------------------------------------------------------------- integration

    def simulate(self, inputs: np.ndarray | Callable[[float], np.ndarray], duration: float,
                 dt: float = DEFAULT_TIME_STEP, x0: np.ndarray | None = None,
                 v0: np.ndarray | None = None, record_every: int = 1,
                 scheme: str = DEFAULT_SCHEME) -> CCTrajectory:
        """
        Integrate from (x0, v0) (default: rest) for ``duration`` s with steps of ``dt``.

        ``inputs``: constant (m,) or a function of time returning (m,), evaluated at the
        start of each step and held over it. ``scheme``: a key of :data:`SCHEMES`. Raises
        :class:`CCDynamicsError` if a step fails even when split into 2^5 substeps.
        """
        if scheme not in SCHEMES:
            raise CCDynamicsError(f'scheme: {scheme!r} is not one of {sorted(SCHEMES)}')
        for name, value in (('duration', duration), ('dt', dt)):
            if not (math.isfinite(value) and value > 0.0):
                raise CCDynamicsError(f'{name}: must be > 0 s, got {value}')
        steps = max(1, int(round(duration / dt)))
        times = np.arange(steps) * dt
        if callable(inputs):
            table = np.array([self.input_vector(inputs(t)) for t in times])
        else:
            table = np.tile(self.input_vector(inputs), (steps, 1))
        N = 3 * self.n_sections
        y0 = np.concatenate((self.rest_state if x0 is None else np.asarray(x0, float),
                             np.zeros(N) if v0 is None else np.asarray(v0, float)))
        states, done, jacobians, split = integrator.integrate(
            y0, float(dt), table, self.model, int(record_every), ATOL, RTOL, MAX_ITERATIONS,
            SCHEMES[scheme])
        if done < steps:
            raise CCNoSolutionError(
                f'dt: integration failed at t = {done * dt:.4g} s (step {done}): the implicit '
                f'stages did not converge even in 32 substeps of {dt / 32:.3g} s; try a dt '
                f'below {dt / 32:.3g} s')
        recorded = np.arange(states.shape[0]) * record_every
        held = table[np.minimum(recorded, steps - 1)]
        return CCTrajectory(self, recorded * dt, states[:, :N], states[:, N:], held,
                            jacobians, split)

    # ---------------------------------------------------------------- geometry

    def frames(self, x: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """World pose (R (3, 3), p (3,)) of the end of every section, base outwards."""
        return chain_frames(self.base_rotation, self.base_position, x)

    def bends(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Return each section's bend theta [rad], length [m], and whether it passes through itself.

        ``x`` (..., 3n), one state or many; each result (..., n). Past: at or past
        :func:`~tendon_robot_sim.models.geometry.self_contact_bend` of the section's length
        and :attr:`radii`, the check of the ``cc`` command (:meth:`CCTrajectory.self_contact`,
        and the simulator node's ``self contact`` status).
        """
        sections = np.asarray(x, dtype=float).reshape(*np.shape(x)[:-1], -1, 3)
        theta = np.hypot(sections[..., 1], sections[..., 2])
        return theta, sections[..., 0], theta >= self_contact_bend(sections[..., 0], self.radii)

    def backbone(self, x: np.ndarray, points: int = 20) -> np.ndarray:
        """(n * points + 1, 3) m: points along the centre splines, world frame."""
        R, p = self.base_rotation, self.base_position
        out = [p]
        for length, ux, uy in np.asarray(x, float).reshape(-1, 3):
            theta, phi = math.hypot(ux, uy), math.atan2(uy, ux)
            for sigma in np.linspace(0.0, 1.0, points + 1)[1:]:
                out.append(p + R @ section_pose(sigma * theta, phi, sigma * length)[1])
            Rl, pl = section_pose(theta, phi, length)
            p = p + R @ pl
            R = R @ Rl
        return np.array(out)


def _padded(fractions: Sequence[Sequence[float]], masses: Sequence[Sequence[float]]
            ) -> tuple[np.ndarray, np.ndarray]:
    """Ragged per-section lists -> (n, k) arrays; unused slots have mass 0."""
    k = max(len(m) for m in masses)
    frac = np.ones((len(masses), k))
    mass = np.zeros((len(masses), k))
    for j, (f, m) in enumerate(zip(fractions, masses)):
        frac[j, :len(f)] = f
        mass[j, :len(m)] = m
    return frac, mass


def _padded_inertias(inertias: Sequence[np.ndarray]) -> np.ndarray:
    """Ragged per-section (k_j, 3) inertias -> (n, k, 3); unused slots 0."""
    out = np.zeros((len(inertias), max(len(i) for i in inertias), 3))
    for j, values in enumerate(inertias):
        out[j, :len(values)] = values
    return out


def load_cc_dynamics(path: str | Path) -> CCDynamics:
    """
    Load the CC dynamics of the robot in ``path``.

    A ``kind: bellows`` file or a tendon robot description (no ``kind``). Errors name the file
    and the key.
    """
    data = read_yaml(path)
    try:
        if is_bellows_data(data):
            return CCDynamics.from_bellows_robot(bellows_robot_from_dict(data))
        return CCDynamics.from_tendon_robot(robot_from_dict(data))
    except (RobotDescriptionError, CCDynamicsError) as error:
        raise type(error)(f'{path}: {error}') from None


def plot_trajectory(trajectory: CCTrajectory, path: str | Path, snapshots: int = 6) -> None:
    """
    PNG: tip position over time, and the backbone at ``snapshots`` times, side and top view.

    Both projections (x-z and x-y, one scale on both axes): a robot that bends out of the
    x-z plane (tip y -75 mm) looked straight in a side view alone.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    model = trajectory.model
    tips = trajectory.tip_positions()
    fig, (left, side, top) = plt.subplots(1, 3, figsize=(15, 4.5))
    for axis, label in enumerate('xyz'):
        left.plot(trajectory.times, tips[:, axis] * 1e3, label=f'tip {label}')
    left.set_xlabel('time [s]')
    left.set_ylabel('tip position [mm], world frame')
    legend_beside(left)
    left.grid(True, alpha=0.3)
    picks = np.linspace(0, len(trajectory.times) - 1, snapshots).round().astype(int)
    colours = plt.cm.viridis(np.linspace(0.0, 1.0, snapshots))
    shapes = [model.backbone(trajectory.x[index]) * 1e3 for index in picks]
    for ax, (a, b), title in ((side, (0, 2), 'side view (x-z)'), (top, (0, 1), 'top view (x-y)')):
        for points, index, colour in zip(shapes, picks, colours):
            ax.plot(points[:, a], points[:, b], color=colour,
                    label=f't = {trajectory.times[index]:.2f} s')
        equal_axes(ax, np.concatenate(shapes)[:, [a, b]])
        ax.set_xlabel(f'{"xyz"[a]} [mm]')
        ax.set_ylabel(f'{"xyz"[b]} [mm]')
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
    legend_beside(top, fontsize=8)
    unit = 'Pa' if model.kind == 'pressure' else 'N'
    active = ', '.join(f'{n} {v:g}' for n, v in zip(model.input_names, trajectory.inputs[-1])
                       if v) or 'all 0'
    fig.suptitle(f'{model.name}: CC Lagrange dynamics, {model.kind}s [{unit}]: {active}',
                 fontsize=10)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)
