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
Implicit Cosserat rod dynamics of a tendon robot: BDF-alpha in time, shooting in arc length.

J. Till, V. Aloi, D. C. Rucker, "Real-time dynamics of soft and continuum robots based on Cosserat
rod models", IJRR 2019. The Cosserat PDEs (states p, R, v, u and the body-frame velocities q, w)
are discretised in time by BDF-alpha, x_t = c0 x + x_h, the history x_h known from earlier steps
(:mod:`~tendon_robot_sim.models.rod.dynamics._implicit_kernels`). Each time step is then a boundary
value problem in arc length, solved by shooting with the statics solver's kernels
(:class:`~tendon_robot_sim.models.rod.statics.solver.StaticsSolver`: its grid, residuals, RK4 and
Newton/Broyden iteration, with the dynamic terms switched on). The step is set by the accuracy
wanted, not by the stiffness: a nitinol or steel backbone runs at milliseconds per step where the
explicit model (:mod:`~tendon_robot_sim.models.rod.dynamics.explicit`) needs sub-microsecond steps.

Model: the statics model the robot calls for, ``discrete`` (tendons straight between the discs,
point loads there, the pyelastica constitutive law) with discs, ``cosserat`` (tendons routed
continuously, a distributed load; linear law) without; ``kirchhoff`` on request. Discs add
their mass and rotary inertia at their arc length. Loads: gravity, tip wrench, tendons;
damping: mass-proportional (``rod.damping`` ratio/rate: every velocity decays as dv/dt = -c v,
as in the explicit model) or Kelvin-Voigt (``shear_extension``, ``bending_torsion``), and
square-law drag (``rod.drag``). Inputs per tendon: a tension, or a displacement (length pulled
in) with the tendon's compliance, motor distance and slack
(:func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`); a slack tendon carries no
tension.

Spatial resolution: ``steps`` RK4 steps over the length (split at discs, tendon ends and
shooting nodes), by default :func:`default_steps`: for the discrete model DEFAULT_STEPS or one
per MAX_STEP of length, for continuous ones enough to resolve the time step's bending wavenumber;
for every model enough to follow its fastest waves (WAVE_STEP: at small dt); a halved step
(adaptive dt, retries) runs on a grid of its own dt, the history carried over. Each RK4 stage
keeps its own history, so the scheme is fourth order in arc length (the explicit model's
``rod.elements`` do not apply: its scheme is of second order).
The run starts at rest in the static equilibrium of its inputs
(:mod:`~tendon_robot_sim.models.rod.dynamics.implicit_equilibrium`). It imports neither PyElastica
nor ROS.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Sequence

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.models._cosserat_kernels import Dyn, Z_SIZE
from tendon_robot_sim.models.contact._kernels import LAW_K
from tendon_robot_sim.models.contact.report import sunk_message
from tendon_robot_sim.models.contact.world import World
from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.modal import mass_proportional_damping
from tendon_robot_sim.models.rod.dynamics import _implicit_kernels as stepper
from tendon_robot_sim.models.rod.dynamics.implicit_equilibrium import (DISPLACEMENT,
                                                                       StaticEquilibrium,
                                                                       TendonInputs, TENSION)
from tendon_robot_sim.models.rod.dynamics.implicit_grid import (bending_wavenumber, ContactZones,
                                                                shooting_nodes, wave_rate)
from tendon_robot_sim.models.rod.dynamics.implicit_step_control import (
    MAX_HALVINGS, newton_failure, smallest_level, StepControl, StepNotConverged)
from tendon_robot_sim.models.rod.dynamics.simulation import (ALPHA_RANGE, is_real, Settling,
                                                             SimState)
from tendon_robot_sim.models.rod.dynamics.tendon_friction import (friction_table,
                                                                  friction_unsupported)
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.rod.statics._node_kernels import hole_rows
from tendon_robot_sim.models.rod.statics.solver import CONTACT_STEP, StaticsSolver
from tendon_robot_sim.models.rod.tendons._friction_kernels import FW_SIZE
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
from tendon_robot_sim.models.tendon_robot import Robot, tendon_displacements

DEFAULT_DT = 0.002            # s
# Default spatial resolution of the discrete model: RK4 steps over the rod, and the longest
# step [m]. 20 steps put the nitinol robot's tip within 0.01 mm of 100 steps (a 0.3 s tension
# ramp at dt = 2 ms; benchmarks/bench_implicit.py).
DEFAULT_STEPS = 20
MAX_STEP = 0.025
# Continuous models: at least CONTINUOUS_STEPS RK4 steps, none longer than STEP_LAMBDA /
# lambda, lambda the bending wavenumber of the time step (implicit_grid.NODE_SPACING): the
# grid follows dt, so that its error stays far below dt's own. Till's example at dt = 50 ms
# (12 steps, lambda h = 0.25) is within 0.043 mm of 48 steps over its 25 s, where dt's error
# is 17 mm RMS; the steel robot under the streamed setpoints at dt = 2 ms (13 steps, lambda h
# = 0.47) within 0.024 um of 40 over 3 s, where dt's is 84 um (docs/performance.md).
CONTINUOUS_STEPS = 12
STEP_LAMBDA = 0.5
# Every model: no RK4 step longer than WAVE_STEP / r, r the fastest rate along s of the time
# step's waves (implicit_grid.wave_rate: bending, shear, torsion), which grows as dt shrinks.
# A step's equations grow and decay like exp(+-r s); over an RK4 step of r h = 0.95 the
# decay is exp(-0.95) = 0.387 within 1.5 % (0.389 bending, 0.392 shear), beyond it not
# (bending at 1.89: 0.95 for 0.15, the decaying mode hardly decays). The default robot's 20
# steps at dt = 0.125 ms (bending lambda h = 1.89) stopped converging after 12 steps, its
# node forces ringing up from 2 to 26 N under 2 N of tension; at 62.5 us 50 steps (shear
# r h = 1.41) converged to a tip 69 um off, 40 steps (1.76) failed. The rule changes no grid
# at the default dt (r h = 0.47 on the default robot at 2 ms) nor the discrete model's
# DEFAULT_STEPS on it down to 0.5 ms.
WAVE_STEP = 1.0
# Newton tolerance on the scaled residual (StaticsSolver: forces in E I / L^2, moments
# in E I / L): Till's example stops at about the same (a sum of squares of 1e-12 on residuals
# in N, N m and m). The nitinol robot's tip then stays within 0.3 um of runs converged to 1e-9
# over a second of swinging, and each step takes a fifth fewer rod integrations than at 1e-7.
DEFAULT_TOLERANCE = 1e-5
MAX_ITERATIONS = 30
# Halvings of dt tried when a step does not converge, to say which dt would (as many as a
# rejected step is retried with)
DT_HALVINGS = MAX_HALVINGS


def wave_steps(robot: Robot, dt: float, alpha: float) -> int:
    """Return the fewest RK4 steps over the rod that follow time steps of ``dt`` s: WAVE_STEP."""
    return math.ceil(wave_rate(robot, dt, alpha) * robot.rod.length / WAVE_STEP)


def default_steps(robot: Robot, model: str, dt: float, alpha: float, obstacles: bool) -> int:
    """
    Return the default RK4 steps over the rod for time steps of ``dt`` s (see above).

    The user's dt; a halved step takes the grid of its own dt (``ContactZones._grid_for``,
    the state carried over): at dt / 2 the waves may outrun the grid of dt. With
    ``obstacles`` the discrete model's rule for every model: these are the contact-free
    steps between the contact zones (implicit_grid.py), validated at it; the steel rod swung
    onto a bar (test_contact_zones.py) ends 4.79 um from the 1 mm grid at it and 4.85 um on
    the coarser steps, next to the test's 5 um: no margin to spend there. Every model at
    least the steps of WAVE_STEP (a small dt's fast waves).
    """
    length = robot.rod.length
    waves = wave_steps(robot, dt, alpha)
    if model == 'discrete' or obstacles:
        return max(DEFAULT_STEPS, math.ceil(length / MAX_STEP), waves)
    return max(CONTINUOUS_STEPS, waves,
               math.ceil(bending_wavenumber(robot, dt, alpha) * length / STEP_LAMBDA))


@dataclass(frozen=True)
class Profile:
    """The rod on the RK4 grid: rows per point, base frame and body frame, SI units."""

    arc_lengths: np.ndarray         # (k,) m, reference arc length
    positions: np.ndarray           # (k, 3) m, p
    rotations: np.ndarray           # (k, 3, 3) R, columns d1 d2 d3
    strains: np.ndarray             # (k, 3) v (body; e3 for the Kirchhoff rod)
    curvatures: np.ndarray          # (k, 3) u [1/m] (body)
    velocities: np.ndarray          # (k, 3) q [m/s] (body)
    angular_velocities: np.ndarray  # (k, 3) w [1/s] (body)


class StepFailed(SimulationDiverged):
    """
    A time step could not be taken; the state is the last good step's, time included.

    ``step_dt``: a dt [s] with which the failed step converged when tried again from the last
    good step (that step only: a whole run at it may still fail later), or None; ``failure``:
    the message without its advice.
    """

    def __init__(self, message: str, step_dt: float | None = None, failure: str = ''):
        super().__init__(message)
        self.step_dt = step_dt
        self.failure = failure or message     # what failed, without the advice


class TensionLimitExceeded(StepFailed):
    """A displacement needed a tension above its tendon's ``max_tension``."""


class _Unknowns:
    """Shooting unknowns, their history and Jacobian for one set of input modes."""

    def __init__(self, nx: int, ny: int, nt: int, rows: int, nodes: int, holes: bool):
        self.x = np.zeros(nx)
        self.xs = np.zeros((3, nx))          # x of the last three steps (predictor)
        self.J = np.zeros((nx, nx))
        self.jac_ok = np.zeros(1, dtype=np.bool_)
        # a row of y per shooting node: the Jacobian is rebuilt interval by interval
        # (statics._kernels.solve); with ``holes`` (friction at the discs) then the
        # tendons' holes at the nodes
        extra = hole_rows(nodes, nt, ny) if holes else 0
        self.work = kernels.Work(
            y=np.zeros((3 + nodes + extra, ny)), st=np.zeros((3, ny)), wk=np.zeros(112),
            K=np.zeros((6, 6)), M=np.zeros((4, 3, 3)), hp=np.zeros((nt, 3)), vec=np.zeros((5, nx)),
            Jc=np.zeros((nx, nx)), traj=np.zeros((rows, ny)))


class ImplicitSimulator(TendonInputs, StepControl, ContactZones, StaticEquilibrium,
                        Settling):
    """
    Implicit dynamics of one tendon robot (see the module docstring).

    Parameters
    ----------
    robot : Robot
        The robot description.
    dt : float, optional
        Time step [s], default ``DEFAULT_DT``.
    alpha : float
        BDF-alpha parameter in [-0.5, 0]: 0 is BDF2, -0.5 the trapezoidal rule.
    model : {'discrete', 'cosserat', 'kirchhoff'}, optional
        Default: ``discrete`` with discs, ``cosserat`` without.
    steps : int, optional
        RK4 steps over the rod length; default :func:`default_steps`. A halved step's grid
        (adaptive dt, retries) has :func:`default_steps` of its dt, or these at least WAVE_STEP.
    tolerance : float
        Newton tolerance on the scaled shooting residual of each step.
    world : World, optional
        Obstacles (:mod:`tendon_robot_sim.models.contact.world`): the statics' smooth penalty
        along the rod, with normal damping and regularised Coulomb friction on the velocity of
        the rod's axis (``models/contact/_kernels.py``). Default steps: at most
        ``CONTACT_STEP`` of the statics apart in the contact zones, where the rod's pose is
        near an obstacle (:mod:`~tendon_robot_sim.models.rod.dynamics.implicit_grid`: checked
        every step, the grid refined when the rod nears an obstacle elsewhere), the
        contact-free steps elsewhere.
    tip_tolerance : float, optional
        Tolerance [m] on the local error estimate of the tip position per step: dt adapts
        between ``dt_min`` and ``dt`` (:mod:`~tendon_robot_sim.models.rod.dynamics.
        implicit_step_control`). Without it every step of dt is checked against a jump to
        another solution (JUMP_LIMIT rod lengths) and retried smaller when it fails.
    dt_min : float, optional
        With ``tip_tolerance``: the smallest step [s], rounded down to dt / 2^k; default
        dt / 2^MAX_HALVINGS.
    displacement_ramp : float, optional
        Simulated time [s] over which a new displacement command is reached, linearly from
        where the tendon is, from the time it is given, however the run is cut into
        :meth:`advance` calls (a node's ticks, as long as its machine lets them be). Default:
        over the next :meth:`advance` call.

    Raises
    ------
    InputError
        For a bad argument, or a robot the model cannot take.

    """

    def __init__(self, robot: Robot, dt: float | None = None, alpha: float = 0.0,
                 model: str | None = None, steps: int | None = None,
                 tolerance: float = DEFAULT_TOLERANCE, world: World | None = None,
                 tip_tolerance: float | None = None, dt_min: float | None = None,
                 displacement_ramp: float | None = None):
        dt = DEFAULT_DT if dt is None else dt
        if displacement_ramp is not None and not (
                is_real(displacement_ramp) and math.isfinite(displacement_ramp)
                and displacement_ramp >= 0.0):
            raise InputError(f'displacement_ramp: must be a finite number >= 0 s, got '
                             f'{displacement_ramp!r}')
        if not (is_real(dt) and math.isfinite(dt) and dt > 0.0):
            raise InputError(f'dt: must be a finite number > 0 s, got {dt!r}')
        if not (is_real(alpha) and ALPHA_RANGE[0] <= alpha <= ALPHA_RANGE[1]):
            raise InputError(f'alpha: must be in [{ALPHA_RANGE[0]}, {ALPHA_RANGE[1]}] '
                             f'(0: BDF2, -0.5: trapezoidal), got {alpha!r}')
        model = model or ('discrete' if robot.vertebra_positions.size else 'cosserat')
        refused = friction_unsupported(robot, model)
        if refused:
            raise InputError(refused)
        # with a world and the default steps: CONTACT_STEP in the contact zones
        # (implicit_grid.py), the contact-free step elsewhere
        contact_step = CONTACT_STEP if steps is None else None
        obstacles = world is not None and bool(world.obstacles)
        rod = robot.rod
        if steps is None:
            steps = default_steps(robot, model, float(dt), float(alpha), obstacles)
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise InputError(f'steps: must be an integer >= 1, got {steps!r}')

        def grid_step(dt_k: float) -> float:
            """RK4 step [m] valid at dt_k: the default's, or the user's within WAVE_STEP."""
            return rod.length / (default_steps(robot, model, dt_k, float(alpha), obstacles)
                                 if contact_step else
                                 max(steps, wave_steps(robot, dt_k, float(alpha))))
        # adaptive steps down to dt / 2^k: nodes for the smallest (implicit_step_control)
        node_positions = shooting_nodes(
            robot, model, float(dt) / 2 ** (smallest_level(dt, tip_tolerance, dt_min)
                                            if tip_tolerance is not None else 0), float(alpha))
        self.robot, self.model, self.dt, self.alpha = robot, model, float(dt), float(alpha)
        self.tendon_names = robot.tendon_names
        self.n_tendons = nt = len(robot.tendons)
        self.sample_period = self.dt
        self._tolerance = tolerance
        self._max_iterations = MAX_ITERATIONS
        self._max_tensions = robot.max_tensions
        self._compliance = np.array([t.compliance for t in robot.tendons])
        self._motor = np.array([t.motor_distance for t in robot.tendons])
        coef = self._coefficients(robot)
        friction = friction_table(robot)
        self.friction = friction.shape[1] > 0
        z_size = Z_SIZE + 2 * friction.shape[1]   # with friction s_i, frozen s_i,t (Dyn.Z)
        node_scale = np.repeat([rod.length, 1.0, rod.bending_stiffness / rod.length ** 2,
                                rod.bending_stiffness / rod.length, rod.length / self.dt,
                                1.0 / self.dt], 3)
        self._iq = 18 if model == 'discrete' else 18 + nt   # column of q in the state
        # then w; with friction each tendon's tension along s (_cosserat_kernels.Dyn)
        self._it = self._iq + 6
        self._ny = self._it + (nt if self.friction else 0)

        def plan(statics: StaticsSolver, rows: int, shooting_nodes: np.ndarray):
            dyn = Dyn(on=True, coef=coef.copy(), Zh=np.zeros((rows, z_size)),
                      Z=np.zeros((rows, z_size)), friction=friction,
                      fw=np.zeros((nt + 1, FW_SIZE)))
            return statics.kernel_plan(dyn=dyn, nodes=shooting_nodes,
                                       node_R=np.zeros((shooting_nodes.size, 3, 3)),
                                       node_scale=node_scale,
                                       tendon=statics.kernel_plan().tendon.copy())
        # the grid (implicit_grid.py); per grid the time steps' plan, the statics on the same
        # path (c0 = 0, no history) with the same nodes, and in one piece (where its cold
        # start is well conditioned)
        try:
            self._setup_grid(robot, model, robot.rod.length / steps, contact_step, tolerance,
                             node_positions, world, plan, grid_step)
        except StaticsInputError as error:
            raise InputError(str(error)) from None
        self._rest = self.statics.rest_lengths
        self.shooting_intervals = self._node_rows.size + 1
        self._tau = np.zeros(nt)                # of the last good step
        self._lengths = np.zeros(nt)
        self._scratch = np.zeros((2, nt))       # tensions and lengths of the steps' tries
        self._info = np.zeros(stepper.INFO_SIZE)
        self._unknowns: dict[tuple, _Unknowns] = {}
        # Newton iterations, residual evaluations (integrations of the rod), steps solved by
        # homotopy (_implicit_kernels._homotopy), steps that took the sliding friction's
        # direction from the step before (_implicit_kernels._step), since the start
        self.stats = np.zeros(4)
        self.displacement_ramp = displacement_ramp
        self._configure_control(tip_tolerance, dt_min)
        self.reset()

    # ------------------------------------------------------------------ set-up

    def _coefficients(self, robot: Robot) -> np.ndarray:
        """Dyn.coef of this robot (c0 is set per step)."""
        rod = robot.rod
        damping = rod.damping
        bse = damping.shear_extension if damping.kelvin_voigt else (0.0, 0.0, 0.0)
        bbt = damping.bending_torsion if damping.kelvin_voigt else (0.0, 0.0, 0.0)
        rho_j = rod.density * np.array([rod.second_moment, rod.second_moment, rod.polar_moment])
        disc = robot.disc_inertia
        return np.concatenate(([0.0, rod.linear_density], rho_j, bse, bbt, rod.drag,
                               [mass_proportional_damping(robot)],
                               [disc[0], disc[0], disc[1]])).astype(float)

    def _new_bays(self) -> kernels.Bays:
        nv = self.robot.vertebra_positions.size + 1 if self.model == 'discrete' else 0
        return kernels.Bays(P=np.zeros((nv, 3)), Q=np.zeros((nv, 3, 3)),
                            J=np.zeros((nv, 6, 6)), flags=np.zeros((2, nv), dtype=np.bool_))

    def _unknowns_for(self, modes: np.ndarray, plan=None) -> _Unknowns:
        plan = self._plan if plan is None else plan
        key = (tuple(modes.tolist()), plan.nodes.size)
        if key not in self._unknowns:
            nx = 6 + int(np.sum(modes == DISPLACEMENT)) + kernels.NODE_SIZE * plan.nodes.size
            self._unknowns[key] = _Unknowns(nx, self._ny, self.n_tendons, self._grid,
                                            plan.nodes.size,
                                            self.friction and self.model == 'discrete')
        return self._unknowns_work(self._unknowns[key])

    @property
    def tip_load(self) -> tuple[np.ndarray, np.ndarray]:
        """Return copies of the applied tip force [N] and moment [N m], world frame."""
        return self._tip_load[0].copy(), self._tip_load[1].copy()

    def set_tip_load(self, force, moment=(0.0, 0.0, 0.0)) -> None:
        """Set the external tip force [N] and moment [N m], world frame (3 finite numbers each)."""
        wrench = []
        for name, value in (('force', force), ('moment', moment)):
            items = list(np.ravel(value)) if hasattr(value, '__len__') and not isinstance(
                value, (str, bytes)) else None
            if items is None or len(items) != 3 or not all(
                    is_real(v) and math.isfinite(v) for v in items):
                raise InputError(f'tip {name}: must be 3 finite numbers, got {value!r}')
            wrench.append(np.array(items, dtype=float))
        self._tip_load = tuple(wrench)

    # ------------------------------------------------------------------ start
    # (the static equilibrium a run starts from: StaticEquilibrium, implicit_equilibrium.py)

    def reset(self) -> None:
        """Back to t = 0 at rest in the zero-tension equilibrium, the description's tip load."""
        self._modes = np.full(self.n_tendons, TENSION)
        self._commands = {TENSION: np.zeros(self.n_tendons),
                          DISPLACEMENT: np.zeros(self.n_tendons)}
        self._tip_load = (self.robot.tip_load.force.copy(), self.robot.tip_load.moment.copy())
        self._ramp_end = None       # simulated time [s] the displacement ramp ends (None: no ramp)
        self.place_at_rest()

    def _respace(self, dt: float) -> None:
        """History for steps of dt from z and its rate at the last step (Zold, Zt)."""
        c0, c1, c2, d1 = stepper.bdf_coefficients(dt, self.alpha)
        # z one step back, z - dt z_t, stands in for the step before
        self._plan.dyn.Zh[:] = (c1 + c2) * self._Zold - c2 * dt * self._Zt + d1 * self._Zt
        self._bdf = np.array([c0, c1 + d1 * c0, c2, d1])

    def _solve(self, plan, unknowns: _Unknowns) -> None:
        """One shooting solve of ``plan`` from unknowns.x with the current inputs."""
        tip = np.concatenate(self._tip_load)
        kernels.solve(plan, self._modes, self._commands[TENSION], self._commands[DISPLACEMENT],
                      tip, unknowns.x, unknowns.J, unknowns.jac_ok, self._tolerance,
                      MAX_ITERATIONS, math.inf, self._traj, self._tau, self._lengths,
                      self._bays[id(plan)], unknowns.work, self._info)

    def _check_limits(self, time: float) -> None:
        over = np.flatnonzero((self._modes == DISPLACEMENT) & (self._tau > self._max_tensions))
        if over.size:
            i = over[0]
            raise InputError(
                f'displacements[{self.tendon_names[i]!r}]: at t = {time:.6g} s the robot needs '
                f'{self._tau[i]:.4g} N of it, above max_tension = {self._max_tensions[i]:g} N; '
                'refused')

    # ------------------------------------------------------------------ stepping

    def advance(self, duration: float, result: bool = True) -> SimState | None:
        """
        Step ``round(duration / dt)`` time steps under the current inputs; return the state.

        Tensions apply from the first step; a displacement moves from where it is to the new
        command linearly over the steps of this call, or with ``displacement_ramp`` until that
        much simulated time after the command. ``result`` False: return None, for a
        caller that reads :meth:`state` less often than it advances (the node publishes at its
        own rate; the state's shape is a statics integration of the rod).

        Raises
        ------
        InputError
            If ``duration`` is not a finite number >= 0.
        StepFailed
            A step did not converge (the message says which dt would), or needed a tension above
            ``max_tension`` (:class:`TensionLimitExceeded`); the state stays at the last good
            step, and after a failed convergence :meth:`reset` is needed.

        """
        if not (is_real(duration) and math.isfinite(duration) and duration >= 0.0):
            raise InputError(f'duration: must be a finite number >= 0 s, got {duration!r}')
        n = round(duration / self.dt)
        if (self._modes == DISPLACEMENT).any() or (self._solved_modes == DISPLACEMENT).any():
            # a motor does not jump: a new displacement is reached by a ramp
            q = self._displacement_inputs(n)
        else:
            # the kernel reads the displacements of displacement-controlled tendons only
            q = np.zeros((n, self.n_tendons))
        self._step(np.repeat(self._commands[TENSION][None], n, axis=0), q, step=True)
        return self.state() if result else None

    def follow(self, values: np.ndarray, field: str | Sequence[str],
               step: bool = False) -> np.ndarray:
        """
        Take one step per row of ``values`` (n, n_tendons): the inputs at the step's end time.

        Between rows the inputs are linear (in the halves of a step taken again smaller), from
        the last step's to the first row's too; ``step`` True: the first row's tensions hold
        from the start (a step input, as :meth:`advance` applies them).

        ``field``: 'tension' [N] or 'displacement' [m] for every tendon, or one of them per
        tendon (mixed inputs). Returns the record (n, 15 + 2 n_tendons) of the steps: tip
        position, rotation (row-major) and body-frame velocity, then the tensions and tendon
        lengths (``_implicit_kernels.REC_*``). Raises like :meth:`advance`; a tension input is
        checked against ``max_tension``, a displacement step above it is refused.
        """
        values = np.asarray(values, dtype=float)
        fields = [field] * self.n_tendons if isinstance(field, str) else list(field)
        label = field if isinstance(field, str) else 'inputs'
        if values.ndim != 2 or values.shape[1] != self.n_tendons or len(fields) != self.n_tendons:
            raise InputError(f'{label}: expected rows of {counted(self.n_tendons, "value")}')
        if not np.all(np.isfinite(values)):
            raise InputError(f'{label}: must be finite')
        if not set(fields) <= {'tension', 'displacement'}:
            raise InputError(f"field: 'tension' or 'displacement' per tendon, got {field!r}")
        pulled = np.array([f == 'displacement' for f in fields])
        names = [self.tendon_names[i] for i in np.flatnonzero(~pulled)]
        for row in (values.max(axis=0), values.min(axis=0), values[-1]):   # checks the range
            self.set_tensions({name: row[self.tendon_names.index(name)] for name in names})
        self.set_displacements({name: values[-1, i] for i, name in enumerate(self.tendon_names)
                                if pulled[i]}, check=False)
        return self._step(np.where(pulled, 0.0, values), np.where(pulled, values, 0.0), step)

    def _kernel_steps(self, tau_in: np.ndarray, q_in: np.ndarray
                      ) -> tuple[np.ndarray, StepFailed | None]:
        """
        Take a step of dt per row of inputs in one kernel call, unchecked (``StepControl``).

        Returns the record of the steps taken and the error that stopped them, or None.
        """
        nt = self.n_tendons
        if self._failed:
            return (np.empty((0, stepper.REC_TAU + 2 * nt)),
                    StepFailed(f'{self._failed} (call reset() before advancing)'))
        n = tau_in.shape[0]
        record = np.empty((n, stepper.REC_TAU + 2 * nt))
        unknowns = self._unknowns_for(self._modes)
        tip = np.repeat(np.concatenate(self._tip_load)[None], n, axis=0)
        done, status, tendon = self._advance_grid(unknowns, tau_in, q_in, tip, record)
        start = self.time
        for i in range(done):
            self._record_tip(start + (i + 1) * self.dt, record[i, 0:3])
        self.time = start + done * self.dt
        if done:
            self._tau[:] = record[done - 1, stepper.REC_TAU:stepper.REC_TAU + nt]
            self._lengths[:] = record[done - 1, stepper.REC_TAU + nt:]
            self._q_last = q_in[done - 1].copy()
        if done and self.statics.world is not None:
            sunk = sunk_message(self.statics.contacts(self._good), self.statics._contact.radius[0],
                                self.dt)
            if sunk:
                self._failed = f'at t = {self.time:.6g} s: {sunk}'
                return record[:done], StepFailed(self._failed)
        if status == stepper.OVER_TENSION:
            name = self.tendon_names[tendon]
            return record[:done], TensionLimitExceeded(
                f'displacements[{name!r}]: the step to t = {self.time + self.dt:.6g} s needs '
                f'more than max_tension = {self._max_tensions[tendon]:g} N of tendon {name!r}; '
                f'refused (the state stays at t = {self.time:.6g} s)')
        if status == stepper.NOT_CONVERGED:
            failure = (f'the implicit step from t = {self.time:.6g} s did not converge with '
                       f'dt = {self.dt:g} s{self._contact_note()}')
            newton = newton_failure(self._info, self._tolerance)
            if self.retries_smaller():
                return record[:done], StepNotConverged(failure, newton)
            step_dt = self._smaller_dt(unknowns, tau_in[done], q_in[done])
            # the inputs are blamed only if their static equilibrium is not found either
            advice = (f'tried again from t = {self.time:.6g} s, this step converged with dt = '
                      f'{step_dt:g} s; try dt = {step_dt:g} s' if step_dt is not None else
                      f'{newton}; neither did it with any dt down to {self.dt_min:g} s'
                      f'{self._held_note()}: ' + (
                          'the static equilibrium of these inputs is found, so a numerical '
                          'failure of the step, not inputs out of reach'
                          if self._within_reach(tau_in[done], q_in[done])
                          else 'the inputs may be out of reach'))
            self._failed = f'{failure}; {advice}'
            return record[:done], StepFailed(self._failed, step_dt, failure)
        return record, None

    def _within_reach(self, tau_in: np.ndarray, q_in: np.ndarray) -> bool:
        """
        Whether the static equilibrium of a step's inputs is found, within ``max_tension``.

        The run's state is left alone (``_static_tensions``).
        """
        commands = self._commands[TENSION].copy()
        self._commands[TENSION][:] = tau_in
        try:
            tensions, part = self._static_tensions(self._modes, q_in)
        except InputError:
            return False
        finally:
            self._commands[TENSION][:] = commands
        return part == 1.0 and bool(np.all(tensions <= self._max_tensions))

    def _contact_note(self) -> str:
        """
        With a world: ', in contact with obstacle X (penalty_stiffness k): ...' for a message.

        The obstacle the last good step presses hardest, else the one nearest the rod: a stiff
        contact is the usual reason a step does not converge.
        """
        world = self.statics.world
        if world is None or not world.obstacles:
            return ''
        contacts = self.statics.contacts(self._good)
        if contacts:
            name = max(contacts, key=lambda c: float(np.linalg.norm(c.force))).obstacle
            where = 'in contact with'
        else:
            name = world.names[int(np.argmin(self.statics.gaps(self._good)))]
            where = 'nearest'
        law = world.obstacles[world.names.index(name)].law
        return (f', {where} obstacle {name!r} (penalty_stiffness {law[LAW_K]:g} N/m^2: a '
                'smaller dt or a lower penalty_stiffness lets the contact converge)')

    def _switch_modes(self) -> None:
        """
        Carry the last step over to new input modes: unknowns and last inputs.

        A tendon now under displacement control starts from its tension (or zero slack), the
        base wrench is kept; the predictor starts without a velocity.
        """
        old = self._unknowns_for(self._solved_modes)
        new = self._unknowns_for(self._modes)
        pl = self._plan
        z = [self._tau[t] / pl.scale[0, 6 + t]
             for t in np.flatnonzero(self._modes == DISPLACEMENT)]
        nodes = kernels.NODE_SIZE * pl.nodes.size
        new.x[:] = np.concatenate((old.x[0:6], z, old.x[old.x.size - nodes:]))
        new.xs[:] = new.x
        new.jac_ok[0] = False
        nt = self.n_tendons
        self._last[0:nt] = self._tau
        self._last[nt:2 * nt] = self._current_displacements(self._solved_modes)
        self._solved_modes = self._modes.copy()

    def _smaller_dt(self, unknowns: _Unknowns, tau_in: np.ndarray,
                    q_in: np.ndarray) -> float | None:
        """
        Return the largest dt / 2^k (k up to ``levels``) over which the failed step converges.

        Each try takes the failed step as 2^k steps from the last good one, on the grid of
        the smaller step (``_grid_for``), its history re-spaced for it; everything is put back
        afterwards. Only this step is tried: a run at that dt has another history and may fail
        elsewhere. None if none does.
        """
        grid = self._layout_now
        saved = (self._plan.dyn.Zh.copy(), self._Zold.copy(), self._Zt.copy(),
                 unknowns.x.copy(), unknowns.xs.copy(), self._bdf.copy(),
                 self._plan.node_R.copy(), self._plan.dyn.friction.copy())
        bays = self._bays[id(self._plan)]     # the same on every grid
        saved_bays = [memory.copy() for memory in bays]
        nt = self.n_tendons
        for k in range(1, self.levels + 1):
            dt = self.dt / 2 ** k
            self._grid_for(dt)
            unknowns = self._unknowns_work(unknowns)
            self._respace(dt)
            unknowns.xs[1:] = unknowns.xs[0]
            unknowns.jac_ok[0] = False
            n = 2 ** k
            done, status, _ = stepper.advance(
                self._plan, self._modes, self._last.copy(), np.repeat(tau_in[None], n, axis=0),
                np.repeat(q_in[None], n, axis=0),
                np.repeat(np.concatenate(self._tip_load)[None], n, axis=0), unknowns.x,
                unknowns.xs, unknowns.J, unknowns.jac_ok, self._tolerance, MAX_ITERATIONS,
                self._traj, self._scratch[0], self._scratch[1], bays, unknowns.work,
                self._info, self._bdf, self._Zold, self._Zt, self._max_tensions, self._iq,
                np.empty_like(self._good), np.empty((n, stepper.REC_TAU + 2 * nt)),
                np.zeros(4), *self._watch(None))
            self._use_layout(grid)
            (self._plan.dyn.Zh[:], self._Zold[:], self._Zt[:], unknowns.x[:], unknowns.xs[:],
             self._bdf[:], self._plan.node_R[:], self._plan.dyn.friction[:]) = saved
            for memory, kept in zip(bays, saved_bays):
                memory[:] = kept
            if status == stepper.DONE:
                return dt
        return None

    # ------------------------------------------------------------------ output

    def state(self) -> SimState:
        """Return the state after the last good step (arrays are copies)."""
        shape = self.statics.shape(self._good)
        tip_rotation = shape.rotations[-1]
        q_tip = self._good[-1, self._iq:self._iq + 3]
        displacements = self._current_displacements(self._solved_modes)
        return SimState(
            time=self.time, tip_position=shape.centerline[:, -1].copy(),
            tip_orientation=shape.tip_orientation, tip_rotation=tip_rotation.copy(),
            tip_velocity=tip_rotation @ q_tip, centerline=shape.centerline,
            vertebra_positions=shape.vertebra_positions,
            vertebra_rotations=shape.vertebra_rotations,
            vertebra_orientations=shape.vertebra_orientations, tendon_paths=shape.tendon_paths,
            tensions=self._tau.copy(), tendon_lengths=self._lengths.copy(),
            tendon_displacements=displacements, contacts=self.statics.contacts(self._good),
            tip_tensions=self.tip_tensions())

    def tip_tensions(self) -> np.ndarray | None:
        """
        Tension [N] at each tendon's anchor after the last good step; None without friction.

        The tension state along s stops changing past a tendon's end, so the last row holds it.
        """
        if not self.friction:
            return None
        return self._good[-1, self._it:self._it + self.n_tendons].copy()

    def _current_displacements(self, modes: np.ndarray) -> np.ndarray:
        """Displacements [m] at the last step: the inputs, or those of the tensions."""
        displacements = tendon_displacements(self._rest, self._lengths, self._tau,
                                             self._compliance, self._motor)
        controlled = modes == DISPLACEMENT
        displacements[controlled] = self._q_last[controlled]
        return displacements

    def profile(self) -> Profile:
        """
        Return the rod along its arc length after the last good step (continuous models).

        The discrete model keeps internal forces, not strains, in its state: InputError.
        """
        if self.model == 'discrete':
            raise InputError('profile: the discrete model keeps internal forces, not strains; '
                             'use model cosserat or kirchhoff')
        g = self._good
        strains = np.tile([0.0, 0.0, 1.0], (g.shape[0], 1)) if self.model == 'kirchhoff' \
            else g[:, 12:15].copy()
        return Profile(arc_lengths=self.statics.arc_lengths.copy(), positions=g[:, 0:3].copy(),
                       rotations=g[:, 3:12].reshape(-1, 3, 3).copy(), strains=strains,
                       curvatures=g[:, 15:18].copy(),
                       velocities=g[:, self._iq:self._iq + 3].copy(),
                       angular_velocities=g[:, self._iq + 3:self._iq + 6].copy())

    def record_poses(self, record: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tip positions (n, 3) [m] and quaternions (n, 4) [qx, qy, qz, qw] of a record."""
        rotations = record[:, stepper.REC_R:stepper.REC_R + 9].reshape(-1, 3, 3)
        return record[:, 0:3].copy(), rotation_to_quaternion(rotations)

    def record_tendons(self, record: np.ndarray, q_in: np.ndarray | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
        """Tensions (n, nt) [N] and displacements (n, nt) [m] of a record."""
        nt = self.n_tendons
        tau = record[:, stepper.REC_TAU:stepper.REC_TAU + nt]
        lengths = record[:, stepper.REC_TAU + nt:]
        displacements = tendon_displacements(self._rest, lengths, tau, self._compliance,
                                             self._motor)
        if q_in is not None:
            controlled = self._modes == DISPLACEMENT
            displacements[:, controlled] = q_in[:, controlled]
        return tau.copy(), displacements

    @property
    def summary(self) -> str:
        """One line on the integrator."""
        scheme = 'BDF2' if self.alpha == 0.0 else f'BDF-alpha {self.alpha:g}'
        return (f'implicit ({scheme}, {self.model}, {self.steps} RK4 steps, '
                f'{self.shooting_intervals} shooting intervals), dt {self.dt:.3g} s')


__all__ = ['ImplicitSimulator', 'StepFailed', 'TensionLimitExceeded']
