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
What the rod's two dynamic simulators share: their state, when the tip is at rest, which to use.

:class:`~tendon_robot_sim.models.rod.dynamics.explicit.TendonSimulator` (explicit, PyElastica) and
:class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator` (implicit, BDF-alpha
and shooting) report a :class:`SimState` and settle through :class:`Settling`;
:func:`choose_integrator` picks one for a robot, and
:func:`~tendon_robot_sim.models.rod.dynamics.factory.dynamic_simulator` builds it (above both
simulators: this base never imports them). This module imports neither PyElastica nor numba.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
import re
from typing import Callable

import numpy as np

from tendon_robot_sim.models.cosserat import PYELASTICA_SHEAR_COEFFICIENT
from tendon_robot_sim.models.sim_model import InputError
from tendon_robot_sim.models.tendon_robot import friction_refused, Robot, vertebrae_required

# Seconds of tip-position history kept for is_steady().
HISTORY_SPAN = 1.0
INTEGRATORS = ('auto', 'implicit', 'explicit')
# ``auto`` takes the implicit integrator when the explicit one's stable step would be shorter
# than this [s]: its compiled step costs about 0.1 us per element (5.5 us at 50 elements,
# about a fifth more with the strain-rate damping; docs/performance.md), so below 10 us it
# cannot keep real time at the default resolution.
AUTO_STABLE_STEP = 10e-6
# Damping ratio of the explicit rod's highest mode under its Kelvin-Voigt damping C = beta K
# (strain_rate_viscosity). Without it the kHz modes keep a damping ratio of about 1e-4 from
# the mass-proportional damper alone, and PyElastica's constitutive law (n / e and tau / E^3
# without their conjugate forces: no potential) feeds them energy under large axial strain
# and bending, so the default robot diverged under tensions within its limits (issue 37;
# docs/tendon_robot.md, "Strain-rate damping").
STRAIN_RATE_DAMPING = 0.1
# BDF-alpha of the implicit integrator is A-stable for alpha in [-1/2, 0]: -1/2 the
# trapezoidal rule (no numerical damping), 0 BDF2 (damps what dt does not resolve)
ALPHA_RANGE = (-0.5, 0.0)


@dataclass(frozen=True)
class SimState:
    """
    Snapshot of the robot; everything in the base (world) frame, SI units.

    Attributes
    ----------
    time : float
        Simulation time [s].
    tip_position : (3,) [m]
    tip_orientation : (4,) quaternion [qx, qy, qz, qw] of the tip frame (columns d1 d2 d3).
    tip_rotation : (3, 3) columns d1, d2, d3 of the tip (last element).
    tip_velocity : (3,) [m/s]
    centerline : (3, n_nodes) backbone node positions [m].
    vertebra_positions : (3, k) centre of each vertebra disc [m].
    vertebra_rotations : (k, 3, 3) columns d1 d2 d3 of each disc.
    vertebra_orientations : (k, 4) quaternions [qx, qy, qz, qw].
    tendon_paths : tuple of (3, j) arrays
        Per tendon: base hole, then the hole of each vertebra up to its anchor [m].
    tensions : (n_tendons,) currently applied tensions [N].
    tendon_lengths : (n_tendons,) path length from base hole to anchor [m].
    tendon_displacements : (n_tendons,)
        Length pulled in past the base [m], positive when pulling
        (:func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`: with the rest
        length, the path length on the straight rod, the compliance and the motor distance).
    contacts : tuple of ContactPoint, or None
        With a world: the contact patches (:mod:`tendon_robot_sim.models.contact.report`; the
        penalty's normal load, without damping and friction); None without one.
    tip_tensions : (n_tendons,) or None
        With tendon friction (implicit dynamics): the tension at each tendon's anchor [N]
        (``tensions`` are at the motors); None without.

    """

    time: float
    tip_position: np.ndarray
    tip_orientation: np.ndarray
    tip_rotation: np.ndarray
    tip_velocity: np.ndarray
    centerline: np.ndarray
    vertebra_positions: np.ndarray
    vertebra_rotations: np.ndarray
    vertebra_orientations: np.ndarray
    tendon_paths: tuple
    tensions: np.ndarray
    tendon_lengths: np.ndarray
    tendon_displacements: np.ndarray
    contacts: tuple | None = None
    tip_tensions: np.ndarray | None = None


class Settling:
    """
    Tip history, :meth:`is_steady` and :meth:`run_until_steady` of a simulator.

    The simulator provides ``dt``, ``time``, ``advance(duration)`` and ``state()``, sets
    ``sample_period`` (s between tip samples, at least dt) and calls :meth:`_start_history`
    at t = 0 and :meth:`_record_tip` as it steps.
    """

    dt: float
    time: float
    sample_period: float

    def _start_history(self, time: float, tip: np.ndarray) -> None:
        self._history = deque([(float(time), tip.copy())],
                              maxlen=math.ceil(HISTORY_SPAN / self.sample_period) + 2)

    def _record_tip(self, time: float, tip: np.ndarray) -> None:
        """Keep a tip sample for is_steady(), about every ``sample_period``."""
        if time - self._history[-1][0] >= self.sample_period - 0.5 * self.dt:
            self._history.append((float(time), tip.copy()))

    def is_steady(self, speed_tolerance: float = 1e-3, window: float = 0.1) -> bool:
        """
        Whether the tip has come to rest.

        The tip's mean speed over the last ``window`` seconds and over the
        ``window`` before it must both be below ``speed_tolerance`` [m/s]; the
        second window catches the turning points of a slow oscillation. Mean
        speeds (displacement / window) rather than the instantaneous velocity,
        because the weakly damped axial modes of the explicit model keep a
        micrometre-sized, kilohertz tip vibration alive long after the shape has settled.
        False until 2 windows have been simulated since the start or reset().
        A window shorter than 2 tip samples (``2 * sample_period``) is lengthened.
        """
        if not (is_real(window) and 0.0 < window <= HISTORY_SPAN / 2.0):
            raise InputError(f'window: must be in (0, {HISTORY_SPAN / 2.0:g}] s, got {window!r}')
        # at least two tip samples per window
        window = max(window, 2 * self.sample_period)
        times = np.fromiter((sample[0] for sample in self._history), float,
                            len(self._history))
        if times[-1] - times[0] < 2.0 * window - 0.5 * self.dt:
            return False
        # nearest samples to t - window and t - 2 window
        now = times[-1]
        indices = [np.abs(times - (now - m * window)).argmin() for m in (0, 1, 2)]
        tips = [self._history[i][1] for i in indices]
        speeds = [np.linalg.norm(tips[m] - tips[m + 1])
                  / (times[indices[m]] - times[indices[m + 1]]) for m in (0, 1)]
        return bool(max(speeds) < speed_tolerance)

    def come_to_rest(self, duration: float, exact: bool = False,
                     speed_tolerance: float = 1e-3) -> None:
        """
        Let the robot come to rest under its inputs: until steady, at most ``duration`` [s].

        ``exact``: run exactly ``duration`` (replays of a calibration start alike). The implicit
        simulator puts the robot at rest in its static equilibrium instead.
        """
        if exact:
            self.advance(duration)
        else:
            self.run_until_steady(duration, speed_tolerance=speed_tolerance)

    def run_until_steady(self, max_time: float, check_interval: float = 0.05,
                         speed_tolerance: float = 1e-3, window: float = 0.1,
                         progress: Callable[[float], None] | None = None) -> SimState:
        """
        Advance in chunks of ``check_interval`` [s] until steady or ``max_time`` [s] more.

        ``progress``, if given, is called after each chunk with the simulated
        time of that chunk [s]. Whether the end state is steady is
        :meth:`is_steady` (with the same tolerances).
        """
        for name, value in (('max_time', max_time), ('check_interval', check_interval)):
            if not (is_real(value) and math.isfinite(value) and value > 0.0):
                raise InputError(f'{name}: must be a finite number > 0 s, got {value!r}')
        end = self.time + max_time
        while self.time < end - 0.5 * self.dt:
            chunk = max(min(check_interval, end - self.time), self.dt)
            start = self.time
            self.advance(chunk)
            if progress is not None:
                progress(self.time - start)
            if self.is_steady(speed_tolerance, window):
                break
        return self.state()


def stable_time_step(robot: Robot, n_elements: int | None = None) -> float:
    """
    Largest stable position-Verlet time step of the explicit discrete rod [s].

    The highest natural frequency omega_max of the discretised rod (:func:`highest_frequency`)
    has the damping ratio zeta = :data:`STRAIN_RATE_DAMPING` under the strain-rate damping,
    and Verlet with the damping force of the step's starting velocity is stable while
    omega_max dt <= 2 (sqrt(1 + zeta^2) - zeta), 0.905 x 2 for zeta = 0.1 (the
    amplification matrix of one step of x'' = -omega^2 x - 2 zeta omega x'; 2 undamped).
    Checked against the simulator without mass-proportional damping: stable at the bound,
    blown up 10 % above it (test_simulator.py; undamped PyElastica is stable at 2 / omega_max
    and blows up at 1.03 times that, 10 and 50 elements, default robot). It is the bound of
    the bare rod: the vertebra discs only add mass and inertia, which lowers every frequency,
    and the mass-proportional damper (light for these modes) does not stretch it noticeably,
    so it holds for any disc and damping. The tendon loads within the default robot's limits
    raise its highest frequency by 3.9 % at most (all four at 20 N: the rod's linearisation
    at rest, docs/tendon_robot.md), within the default safety factor 0.9.
    """
    zeta = STRAIN_RATE_DAMPING
    return 2.0 / highest_frequency(robot, n_elements) * (math.sqrt(1.0 + zeta * zeta) - zeta)


def strain_rate_viscosity(robot: Robot, n_elements: int | None = None) -> float:
    """
    Time constant beta [s] of the explicit rod's Kelvin-Voigt damping C = beta K.

    The viscous stress and couple are beta S sigma_t and beta B kappa_t (S, B the rod's
    stiffness matrices; see ``_dynamics_kernels.strain_rate_damping``), so mode i gets the
    damping ratio beta omega_i / 2. beta = 2 zeta / omega_max, zeta =
    :data:`STRAIN_RATE_DAMPING`: 2e-5 for the default robot's first bending mode, whose
    damping stays the description's ``rod.damping``.
    """
    return 2.0 * STRAIN_RATE_DAMPING / highest_frequency(robot, n_elements)


def highest_frequency(robot: Robot, n_elements: int | None = None) -> float:
    """
    Highest natural frequency omega_max [rad/s] of the bare discrete rod.

    It is found in the rod's zig-zag modes (signs alternating element to element). With
    element length l = L / n, density rho, area A, second moment I, a = 2 / l and alpha the
    shear correction (:data:`PYELASTICA_SHEAR_CORRECTION`):

    * axial: a chain of masses rho A l and springs E A / l gives
      omega^2 = 4 E / (rho l^2) (twist likewise 4 G / (rho l^2));
    * shear coupled with bending: node displacement w and element rotation
      theta alternating give the shear strain a w + theta and curvature a theta,
      so with M = diag(rho A l, rho I l) and
      K = l [[alpha G A a^2, alpha G A a], [alpha G A a, alpha G A + E I a^2]]
      omega^2 is the largest eigenvalue of M^-1 K:
      omega^2 = tr/2 + sqrt(tr^2/4 - det), tr = (alpha G (a^2 + A/I) + E a^2) / rho,
      det = alpha G E a^4 / rho^2. Its alpha G A / (rho I) = 4 alpha G / (rho r^2)
      part is the rotational shear mode: for a thick rod (r ~ l) it bounds dt
      whatever the number of elements.

    omega_max is the larger of the two.
    """
    rod = robot.rod
    n_elements = rod.elements if n_elements is None else n_elements
    a = 2.0 / (rod.length / n_elements)
    alpha_g = PYELASTICA_SHEAR_COEFFICIENT * rod.shear_modulus
    e = rod.youngs_modulus
    trace = (alpha_g * (a * a + rod.area / rod.second_moment) + e * a * a) / rod.density
    det = alpha_g * e * a ** 4 / rod.density ** 2
    shear_bending = trace / 2.0 + math.sqrt(max(trace * trace / 4.0 - det, 0.0))
    axial = a * a * max(e, rod.shear_modulus) / rod.density
    return math.sqrt(max(shear_bending, axial))


def vertebra_nodes(robot: Robot, n_elements: int | None = None) -> tuple[np.ndarray, float]:
    """
    Return the node of the explicit model's rod at each vertebra, and the node spacing [m].

    On a rod of ``n_elements`` (default ``rod.elements``) each vertebra sits on the nearest
    node (>= 1: node 0 is the clamped base). ValueError when the robot has no vertebrae, or
    when two of them (or one and the base) would share a node.
    """
    n_elements = robot.rod.elements if n_elements is None else n_elements
    s = robot.vertebra_positions
    if s.size == 0:
        raise ValueError(vertebrae_required('dynamic model'))
    spacing = robot.rod.length / n_elements
    nodes = np.rint(s / spacing).astype(np.int64)
    if nodes[0] < 1 or np.any(np.diff(nodes) == 0):
        raise ValueError(
            f'rod.elements: {n_elements} elements (node spacing {spacing:.4g} m) are too '
            f'coarse to give each vertebra its own node (vertebrae at '
            f'{np.round(s, 6).tolist()} m); use more elements')
    return nodes, spacing


#: What the explicit integrator lacks, by the key :func:`explicit_refuses` names.
EXPLICIT_LACKS = {'vertebrae': 'a robot without vertebra discs',
                  'rod.elements': 'vertebrae closer together than the nodes of its rod.elements',
                  'rod.damping': 'Kelvin-Voigt damping', 'rod.drag': 'air drag',
                  'tendons.friction': 'tendon friction',
                  # the implicit dynamics refuses it too, naming the key (tendon_friction.py)
                  'rod.bending_friction': 'bending friction'}


def explicit_refuses(robot: Robot) -> str:
    """
    Why the explicit simulator cannot model ``robot``; '' when it can.

    It damps mass-proportionally only and has no drag: the Kelvin-Voigt form of
    ``rod.damping`` and ``rod.drag`` need the implicit integrator; and it loads the rod with
    its tendons only at the discs, each on a node of its own (:func:`vertebra_nodes`).
    """
    if not robot.vertebra_positions.size:
        return ('vertebrae: the explicit dynamic model needs vertebra discs (its tendons act on '
                'the rod only at the discs) and this robot has none; the implicit integrator '
                'routes them continuously (integrator implicit or auto)')
    try:
        vertebra_nodes(robot)
    except ValueError as error:
        return str(error)
    if robot.rod.damping.kelvin_voigt:
        return ('rod.damping: the explicit integrator damps mass-proportionally only (ratio or '
                'rate); shear_extension/bending_torsion need the implicit integrator')
    if any(robot.rod.drag):
        return 'rod.drag: the explicit integrator has no air drag; use the implicit integrator'
    return friction_refused(robot, 'explicit integrator')


def choose_integrator(robot: Robot, integrator: str = 'auto') -> tuple[str, str]:
    """
    Return ('implicit' or 'explicit', why) for ``robot``.

    ``auto``: implicit when the explicit integrator cannot take the robot
    (:func:`explicit_refuses`) or its stable step is below AUTO_STABLE_STEP, explicit otherwise.

    Raises
    ------
    InputError
        An unknown ``integrator``, or ``explicit`` for a robot it cannot take.

    """
    if integrator not in INTEGRATORS:
        raise InputError(f'integrator: must be one of {list(INTEGRATORS)}, got {integrator!r}')
    refused = explicit_refuses(robot)
    if integrator == 'explicit':
        if refused:
            raise InputError(f'{refused} (integrator: explicit)')
        return 'explicit', 'asked for'
    if integrator == 'implicit':
        return 'implicit', 'asked for'
    if refused:
        return 'implicit', 'the explicit integrator cannot take ' + EXPLICIT_LACKS[
            re.sub(r'\[\d+\]', '', refused.split(':', 1)[0])]
    step = stable_time_step(robot)
    if step < AUTO_STABLE_STEP:
        return 'implicit', (f'the explicit stable step would be {step * 1e6:.3g} us, below '
                            f'{AUTO_STABLE_STEP * 1e6:g} us')
    return 'explicit', f'stable step {step * 1e6:.3g} us'


def check_implicit_only(integrator: str, why: str, alpha: float = 0.0,
                        tip_tolerance: float | None = None) -> None:
    """
    Raise InputError for ``alpha`` or ``tip_tolerance`` (m) given to the explicit integrator.

    ``integrator``, ``why``: what :func:`choose_integrator` returned. Only the implicit one
    reads them; on the explicit one a run would go as if they had not been given.
    """
    if integrator != 'explicit':
        return
    for name, value, default in (('alpha', alpha, 0.0), ('tip_tolerance', tip_tolerance, None)):
        if value != default:
            raise InputError(f'{name}: applies to the implicit integrator only; the '
                             f'integrator is explicit ({why}): set integrator implicit')


def is_real(value) -> bool:
    """Tell whether ``value`` is a real number (bool and strings excluded)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))
