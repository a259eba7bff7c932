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
Which implicit time steps are kept: a local error estimate, its acceptance test, smaller retries.

A converged shooting residual says that a step solves the BDF-alpha equations, not that it
continues the motion: undamped by the trapezoidal rule (alpha = -0.5), a step can land on
another branch of them (the disc-free nitinol robot's tip 150 mm away within 2 ms, the steel
rod's as if it were a third of its length). Every step's tip is therefore compared with its
prediction from the history, the classic predictor-corrector (Milne) estimate of the local
error: with p_pred the quadratic through the last three tips (any spacing), the corrector's
error C h^3 p''' and the predictor's P h^3 p''',

    e = |C| / |P - C| |p - p_pred|,   C = (1/6 - (1 + alpha) / 2) / (1.5 + alpha),

C the error constant of BDF-alpha (-2/9 for BDF2, -1/12 for the trapezoidal rule: Taylor
expansion of x_t = c0 x + x_h) and P = (h + h1)(h + h1 + h2) / (6 h^2) for the last spacings
h1, h2 (1 at a constant step). A step is accepted when e is within a limit: the user's
``tip_tolerance`` [m], or without one JUMP_LIMIT rod lengths. A rejected step is taken again
as two halves (dt / 2, inputs linear in between), each checked, down to MAX_HALVINGS halvings;
with a fixed step the run then returns to the user's dt, with a tolerance it stays at the finer
level until the estimate allows a coarser one (adaptive dt between dt / 2^MAX_HALVINGS, or
``dt_min``, and dt). If no halving is accepted the step fails with :class:`StepRejected`.

The tip estimate does not see a smooth runaway: the trapezoidal rule, which conserves the
energy of a linear system, let the steel rod without gravity under a constant 2 N curl up
within 16 ms (tip speed 1 to 13 m/s) with estimates below 0.4 mm. Continuous models (no discs)
under tension inputs with alpha < 0 (BDF2's damping never showed it; the check costs a tenth
of a streamed call) therefore also check the energy at the end of each call:
E = kinetic + elastic + gravity + sum tau_i l_i - F_tip . p_tip (the tensions' and the tip
force's potential) may not grow by more than ENERGY_GROWTH of the rod's kinetic and elastic
energy between two calls (damping and BDF2 only take energy out; a tension that changes within
the call may add sum |delta tau_i| L). A call that fails is taken again a row at a time, the row
that fails halved as above.

A change of dt restarts the BDF-alpha history from the last step's z and z_t (the step before
stands in as z - dt z_t: ``ImplicitSimulator._respace``), as a variable-step BDF restarts at
lower order, and the unknowns' predictor from the last step alone. It also moves to the grid
of the new dt (``ContactZones._grid_for``: finer RK4 steps where the smaller step's waves need
them), the history carried over; the halvings stop where that grid would need more than
MAX_GRID_STEPS steps. The steps of a call are
taken in one kernel call and checked afterwards: a call with a rejected step is rolled back to
its start and taken again up to the step before it (the same equations from the same state),
so runs without rejections cost only the check.
"""

from __future__ import annotations

import math

import numpy as np

from tendon_robot_sim.models.cosserat import stiffness_matrices
from tendon_robot_sim.models.rod.dynamics import _implicit_kernels as stepper
from tendon_robot_sim.models.rod.dynamics.simulation import is_real
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged

# Acceptance without a tolerance: the local error estimate of the tip within this fraction of
# the rod length. The examples' default runs (BDF2 at their dt) stay below 0.006 (Till's
# example at 50 ms: 4.2 mm on 0.714 m; the nitinol robot's 8 N step 0.93 mm on 0.2 m), the
# trapezoidal rule's branch jumps start at 0.05 (steel rod without gravity: 25.6 mm on 0.5 m;
# disc-free nitinol: 15.3 mm on 0.2 m).
JUMP_LIMIT = 0.02
# Most halvings of dt tried on a rejected step at a fixed dt; the default range of adaptive dt
# (its shooting nodes are placed for the smallest step: twice as many at dt / 16)
MAX_HALVINGS = 6
ADAPTIVE_HALVINGS = 4
# Growth of the energy a call may show, as a share of the rod's kinetic and elastic energy
# (before or after the call, the larger): the trapezoidal rule's own error on the steel rod's
# free vibration is below 1 % over 10 s (test_implicit_dynamics.py)
ENERGY_GROWTH = 0.1
# Adaptive dt: rows a kernel call takes between decisions, and the share of the tolerance
# below which the next call tries twice the step (the local error grows like dt^3: 8x)
CHUNK_ROWS = 8
COARSEN_BELOW = 0.1
# Most RK4 steps along the rod of a halved step's grid (``_grid_for``: it grows like 1 / dt,
# the default robot's from 20 at 2 ms to 288 at 15.6 us and 2299 at 2 us; the cost of a step
# with it): the halvings stop at the last dt whose grid has no more
MAX_GRID_STEPS = 1000


class StepRejected(SimulationDiverged):
    """No dt down to the smallest tried made a step pass the acceptance test (state: before it)."""


class StepNotConverged(SimulationDiverged):
    """
    A step that the step control takes again smaller did not converge (never escapes it).

    ``newton``: how its solves ended (:func:`newton_failure`).
    """

    def __init__(self, message: str, newton: str = ''):
        super().__init__(message)
        self.newton = newton


def newton_failure(info: np.ndarray, tolerance: float) -> str:
    """
    Say how the solves of a step that did not converge ended.

    ``info``: the kernels' (``_implicit_kernels.INFO_*``): the solve from the step's prediction
    ([||F||_inf, iterations, residual evaluations, status]) and the homotopy's last lam;
    ``tolerance`` on the scaled residual.
    """
    predicted = info[stepper.INFO_PREDICTED:stepper.INFO_PREDICTED + 4]
    residual, iterations, status = predicted[0], int(predicted[1]), int(predicted[3])
    if not math.isfinite(residual):
        how = ('the rod could not be integrated from the predicted start (a state not finite, '
               "or a disc's bay that did not converge)")
    elif status == kernels.MAX_ITERATIONS:
        how = (f'the Newton iteration from the predicted start stopped after {iterations} '
               f'iterations at a scaled residual of {residual:.3g} (tolerance {tolerance:g})')
    else:
        how = (f'the Newton iteration from the predicted start stalled at a scaled residual of '
               f'{residual:.3g} (tolerance {tolerance:g})')
    return (f'{how}, and the homotopy from the last step got {info[stepper.INFO_LAMBDA]:.3g} '
            'of the way')


def error_constant(alpha: float) -> float:
    """Return the error constant C of BDF-alpha: x(t + h) - x_(n+1) = C h^3 x'''."""
    return (1.0 / 6.0 - 0.5 * (1.0 + alpha)) / (1.5 + alpha)


def tip_error_estimates(times: np.ndarray, tips: np.ndarray, alpha: float) -> np.ndarray:
    """
    Local error estimates [m] of the steps to times[3:] (tips (m + 3, 3) [m], times [s]).

    The first three rows are the accepted steps before; each estimate compares the step's tip
    with the quadratic through the three tips before it (see the module docstring).
    """
    a, b, c, t = times[:-3], times[1:-2], times[2:-1], times[3:]
    weights = ((t - b) * (t - c) / ((a - b) * (a - c)), (t - a) * (t - c) / ((b - a) * (b - c)),
               (t - a) * (t - b) / ((c - a) * (c - b)))
    predicted = sum(w[:, None] * p for w, p in zip(weights, (tips[:-3], tips[1:-2], tips[2:-1])))
    h3 = (t - c) ** 3
    corrector = error_constant(alpha) * h3
    predictor = (t - a) * (t - b) * (t - c) / 6.0
    return (np.abs(corrector) / np.abs(predictor - corrector)
            * np.linalg.norm(tips[3:] - predicted, axis=1))


def smallest_level(dt: float, tip_tolerance: float | None, dt_min: float | None) -> int:
    """Most halvings of dt the step control takes (dt_min rounded down to dt / 2^k)."""
    if tip_tolerance is None:
        return MAX_HALVINGS
    if dt_min is None:
        return ADAPTIVE_HALVINGS
    return max(0, math.floor(math.log2(dt / dt_min) + 1e-9))


class StepControl:
    """
    The acceptance test, retries and adaptive dt of :class:`ImplicitSimulator` (a base class).

    The simulator provides ``dt``, ``time``, ``alpha``, ``robot``, its history and unknowns
    (``_plan``, ``_Zold``, ``_Zt``, ``_bdf``, ``_bays``, ``_unknowns_for``, ``_respace``), its
    grid (``_layout_now``, ``_use_layout``, ``_grid_for``, ``_grid_step``, ``_reach_layout``:
    ``implicit_grid.py``),
    its inputs and outputs of the last step (``_modes``, ``_solved_modes``, ``_switch_modes``,
    ``_last``, ``_good``, ``_tau``, ``_lengths``, ``_q_last``) and ``_kernel_steps``, which
    takes steps of ``dt`` and returns their record and the error that stopped them (or None).
    """

    def _configure_control(self, tip_tolerance: float | None, dt_min: float | None) -> None:
        """Set the acceptance limit: ``tip_tolerance`` [m] (adaptive dt down to dt_min) or none."""
        if tip_tolerance is not None and not (is_real(tip_tolerance) and math.isfinite(
                tip_tolerance) and tip_tolerance > 0.0):
            raise InputError(
                f'tip_tolerance: must be a finite number > 0 m, got {tip_tolerance!r}')
        if dt_min is not None:
            if tip_tolerance is None:
                raise InputError('dt_min: applies with a tip_tolerance only (adaptive dt)')
            if not (is_real(dt_min) and 0.0 < dt_min <= self.dt):
                raise InputError(f'dt_min: must be a number in (0, dt = {self.dt:g}] s, '
                                 f'got {dt_min!r}')
        self.tip_tolerance = None if tip_tolerance is None else float(tip_tolerance)
        self._row_dt = self.dt
        # without a tolerance BDF2 keeps every converged step (its damping never showed a
        # jump, and the examples' default runs stay as they were); the energy check holds
        self._limit = (self.tip_tolerance if tip_tolerance is not None else
                       JUMP_LIMIT * self.robot.rod.length if self.alpha < 0.0 else math.inf)
        self._levels = smallest_level(self.dt, tip_tolerance, dt_min)
        # each halving on a grid valid for it (``_grid_for``), within MAX_GRID_STEPS
        length = self.robot.rod.length
        finest = max(length / self._reach_layout.step, MAX_GRID_STEPS) * (1.0 + 1e-9)
        self._held = False            # whether MAX_GRID_STEPS stops the halvings
        while self._levels and length / self._grid_step(self.dt / 2 ** self._levels) > finest:
            self._levels -= 1
            self._held = True
        self.dt_min = self.dt / 2 ** self._levels
        self._level = 0               # halvings of dt of the adaptive steps now
        self._spaced = self.dt        # the step the BDF history is spaced for
        self.estimates = np.zeros(0)  # of the rows of the last call (largest of its steps)
        self.max_estimate = 0.0       # since the start, m
        self.steps_taken = 0          # accepted time steps since the start (halves included)
        self.smallest_dt = self.dt    # smallest accepted step since the start, s
        # halvings a real-time budget allows (None: any); steps kept above the tolerance
        # because of it since the start
        self.budget_level: int | None = None
        self.coarse_steps = 0
        rod = self.robot.rod
        self._Kse, self._Kbt = stiffness_matrices(rod)
        self._rho_j = rod.density * np.array([rod.second_moment, rod.second_moment,
                                              rod.polar_moment])

    @property
    def level(self) -> int:
        """Halvings of dt the adaptive steps take now."""
        return self._level

    @property
    def levels(self) -> int:
        """Most halvings of dt the step control takes."""
        return self._levels

    @property
    def adaptive(self) -> bool:
        """Whether dt adapts to ``tip_tolerance``."""
        return self.tip_tolerance is not None

    def _start_history(self, time: float, tip: np.ndarray) -> None:
        super()._start_history(time, tip)
        dt = self.dt
        self._tip_times = np.array([time - 2.0 * dt, time - dt, time])
        self._tips = np.tile(tip, (3, 1))
        self._level = 0
        self._spaced = dt
        self.max_estimate, self.steps_taken, self.smallest_dt = 0.0, 0, dt
        self._energy = self._energies()

    # ------------------------------------------------------------------ stepping

    def _step(self, tau_in: np.ndarray, q_in: np.ndarray, step: bool = False) -> np.ndarray:
        """
        Take a row of inputs per step of dt, each checked (see the module docstring).

        ``step``: the first row's tensions hold from the start of the call, also in the halves
        of a row taken again smaller (a step input); False: the halves ramp them linearly from
        the last step's (sampled inputs).
        """
        n, nt = tau_in.shape[0], self.n_tendons
        record = np.empty((n, stepper.REC_TAU + 2 * nt))
        self.estimates = np.zeros(n)
        if n == 0:
            return record
        if not np.array_equal(self._modes, self._solved_modes):
            self._switch_modes()
        dt = self.dt
        # halves of the first row ramp the tensions from the last step's, unless they are a step
        # (ramped over a row of dt, a step would reach the halves' solution only at that dt)
        previous = (np.where((self._modes == stepper.TENSION) & (not step), self._last[:nt],
                             tau_in[0]),
                    self._last[nt:2 * nt].copy())
        i, level = 0, self._level
        if self.budget_level is not None:
            level = min(level, self.budget_level)
        self._one_by_one = False
        try:
            while i < n:
                m = (1 if self._one_by_one else min(n - i, CHUNK_ROWS) if self.adaptive
                     else n - i)
                rows, level, failure = self._rows(previous, tau_in[i:i + m], q_in[i:i + m],
                                                  level, record[i:], self.estimates[i:])
                if rows:
                    previous = (tau_in[i + rows - 1], q_in[i + rows - 1])
                i += rows
                if failure is not None:
                    raise failure
                if not self.adaptive:
                    level = 0
        finally:
            self.dt = dt
            self._level = level
        return record

    def _rows(self, previous, tau_in, q_in, level, record, estimates, first_try=None):
        """
        Take rows at ``level`` halvings of dt; return (rows done, next level, error or None).

        On a rejected step: the rows before it are kept, its row is taken again one level finer
        (and that row is done when accepted there). ``first_try``: (dt, why) of the row's first
        rejection, for the message when no level is accepted.
        """
        steps = 2 ** level
        tau, q = _substeps(previous[0], tau_in, steps), _substeps(previous[1], q_in, steps)
        # nothing to roll back to where no step can be refused (BDF2 at a fixed dt)
        kept = (self._snapshot() if self.adaptive or level or self._energy is not None
                or math.isfinite(self._limit) else None)
        sub, times, estimate, error = self._checked(tau, q, self._row_dt / steps)
        bad = np.flatnonzero(~(estimate <= self._limit))
        if bad.size and self.adaptive and self.budget_level is not None and (
                level >= self.budget_level):
            # the real-time budget allows no finer step: kept, and counted
            self.coarse_steps += int(bad.size)
            bad = bad[:0]
        # the first step not accepted: rejected, or (retried smaller) not converged
        first = bad[0] if bad.size else (
            sub.shape[0] if isinstance(error, StepNotConverged) else None)
        gained = None
        if first is None and sub.shape[0] and self._energy is not None:
            # halves ramp a jump of the inputs over the row: its work counts
            gained = self._energy_gained(np.vstack((previous[0], tau_in))[
                (level == 0):sub.shape[0] // steps + 1])
            if gained is not None and tau_in.shape[0] > 1:
                # which row: the call again, a row at a time
                self._restore(kept)
                self._one_by_one = True
                return 0, level, None
            if gained is not None:
                first = 0
        if first is None:
            rows = sub.shape[0] // steps
            self._keep(sub, times, estimate, steps, rows, record, estimates)
            if error is not None:
                return rows, level, error
            if self.adaptive and level > 0 and estimate.max() < COARSEN_BELOW * self._limit:
                level -= 1
            return rows, level, None
        row = first // steps
        self._restore(kept)
        if row:
            # the rows before the rejected one again: the same equations from the same state
            sub, times, estimate, error = self._checked(tau[:row * steps], q[:row * steps],
                                                        self._row_dt / steps)
            self._keep(sub, times, estimate, steps, row, record, estimates)
            self._energy = self._energies()
            return row, level, error
        estimated = estimate[first] if first < estimate.size else None
        # (why, dt, whether a smaller dt lowers it: an estimate above the tolerance)
        why = (self._why(estimated, gained, error), self._row_dt / steps,
               estimated is not None and gained is None)
        if level >= self._levels:
            return 0, level, self._rejection(first_try or why, why)
        return self._rows(previous, tau_in[:1], q_in[:1], level + 1, record, estimates,
                          first_try or why)

    def retries_smaller(self) -> bool:
        """Whether a step that does not converge is taken again smaller (adaptive, or halves)."""
        return self.adaptive or self.dt < self._row_dt

    def _checked(self, tau: np.ndarray, q: np.ndarray, dt: float):
        """Take steps of ``dt``; return their record, times [s], estimates and error (or None)."""
        if not math.isclose(self._spaced, dt, rel_tol=1e-12):
            self._grid_for(dt)
            self._respace(dt)
            unknowns = self._unknowns_for(self._modes)
            unknowns.xs[1:] = unknowns.xs[0]
            unknowns.jac_ok[0] = False      # the Jacobian of another c0
            self._spaced = dt
        self.dt = dt
        try:
            sub, error = self._kernel_steps(tau, q)
        finally:
            self.dt = self._row_dt
        times = np.concatenate((self._tip_times, self.time - dt * np.arange(
            sub.shape[0] - 1, -1, -1)))
        tips = np.concatenate((self._tips, sub[:, stepper.REC_P:stepper.REC_P + 3]))
        return sub, times[3:], tip_error_estimates(times, tips, self.alpha), error

    def _keep(self, sub, times, estimate, steps, rows, record, estimates) -> None:
        """Keep ``rows`` rows of checked steps: the record at each row's end, its estimate."""
        done = rows * steps
        if not done:
            return
        record[:rows] = sub[steps - 1:done:steps]
        estimates[:rows] = estimate[:done].reshape(rows, steps).max(axis=1)
        self._tip_times = np.concatenate((self._tip_times, times[:done]))[-3:]
        self._tips = np.concatenate((self._tips, sub[:done, stepper.REC_P:stepper.REC_P + 3]))[-3:]
        self.max_estimate = max(self.max_estimate, float(estimate[:done].max()))
        self.steps_taken += int(done)
        self.smallest_dt = float(min(self.smallest_dt, self._row_dt / steps))

    def _why(self, estimate: float | None, gained: float | None, error=None) -> str:
        """
        Say why a step was refused: tip ``estimate`` [m] (None: not converged), ``gained``.

        ``error``: the StepNotConverged of a step that did not converge, which says how.
        """
        if gained is not None:
            return (f'its energy grew by {gained:.3g} J (a runaway of the integrator, not a '
                    'motion)')
        if estimate is None:
            return ('it did not converge' if not getattr(error, 'newton', '')
                    else f'it did not converge: {error.newton}')
        if self.adaptive:
            return f'its tip error estimate {estimate:.3g} m is above tip_tolerance'
        return (f'its tip left the motion by {estimate:.3g} m (local error estimate, above '
                f'{JUMP_LIMIT:g} rod lengths: a jump to another solution of the step)')

    def _held_note(self) -> str:
        """' (... is the smallest step: ...)' when MAX_GRID_STEPS stops the halvings, or ''."""
        if not self._held:
            return ''
        return (f' ({self.dt_min:.3g} s is the smallest step: a smaller one would need more '
                f'than {MAX_GRID_STEPS} RK4 steps along the rod)')

    def _rejection(self, first_try: tuple, last_try: tuple) -> StepRejected:
        """
        Return the error of a step no dt made right: (why, dt, ...) of its first and last try.

        A lower dt_min is advised only where it helps: where the smallest step's estimate was
        above the tolerance (it falls like dt^3) and smaller steps are taken (MAX_GRID_STEPS);
        not where that step did not converge (the default robot's steps of 31.25 us and less
        do not, on a grid valid for them).
        """
        advice = ('; the trapezoidal rule damps nothing: try --alpha 0' if self.alpha < -0.25
                  else '' if not self.adaptive
                  else '; lower dt_min or raise tip_tolerance' if last_try[2] and not self._held
                  else f'{self._held_note()}; raise tip_tolerance')
        tries = (f'at dt = {last_try[1]:.3g} s {last_try[0]}' if first_try is last_try else
                 f'at dt = {first_try[1]:.3g} s {first_try[0]}; halved down to '
                 f'{last_try[1]:.3g} s, {last_try[0]}')
        return StepRejected(
            f'the step from t = {self.time:.6g} s was not accepted: {tries}{advice}; the state '
            f'stays at t = {self.time:.6g} s')

    # ------------------------------------------------------------------ energy

    def _energies(self) -> tuple | None:
        """
        Return the energies of the last good step, or None where they are not checked.

        (Kinetic + elastic + gravity energy [J], kinetic + elastic [J], tendon lengths [m],
        tip [m]); continuous models only (the discrete model keeps internal forces, not strains).
        """
        if self.model == 'discrete' or self.alpha == 0.0:
            return None
        g = self._good
        rod = self.robot.rod
        strains = (g[:, 12:15] - [0.0, 0.0, 1.0] if self.model == 'cosserat'
                   else np.zeros((g.shape[0], 3)))       # Kirchhoff: inextensible, unshearable
        q, w = g[:, self._iq:self._iq + 3], g[:, self._iq + 3:self._iq + 6]
        motion = (0.5 * rod.linear_density * np.sum(q * q, axis=1)
                  + 0.5 * np.sum(self._rho_j * w * w, axis=1)
                  + 0.5 * np.sum(self._Kse * strains * strains, axis=1)
                  + 0.5 * np.sum(self._Kbt * g[:, 15:18] ** 2, axis=1))
        height = -rod.linear_density * g[:, 0:3] @ self.robot.gravity
        s = self.statics.arc_lengths
        kinetic_elastic = float(np.trapezoid(motion, s))
        return (kinetic_elastic + float(np.trapezoid(height, s)), kinetic_elastic,
                self._lengths.copy(), g[-1, 0:3].copy())

    def _energy_gained(self, tau_rows: np.ndarray) -> float | None:
        """
        Return the energy [J] the steps since the last check made beyond ENERGY_GROWTH, or None.

        Under the inputs of the last row (see the module docstring); None too when the
        energy is not checked (discrete model, a displacement input) or within bounds.
        """
        before, after = self._energy, self._energies()
        self._energy = after
        if before is None or after is None or np.any(self._modes != stepper.TENSION):
            return None
        tau, force = tau_rows[-1], self._tip_load[0]

        def total(energy):
            return energy[0] + float(tau @ energy[2]) - float(force @ energy[3])
        changes = np.abs(np.diff(tau_rows, axis=0)).sum()
        gained = total(after) - total(before)
        allowed = (ENERGY_GROWTH * max(before[1], after[1])
                   + changes * self.robot.rod.length)
        return gained if gained > allowed else None

    # ------------------------------------------------------------------ roll back

    def _snapshot(self) -> tuple:
        unknowns = self._unknowns_for(self._modes)
        # (the friction table holds the sliding direction's countdown: _implicit_kernels._step)
        arrays = (self._plan.dyn.Zh, self._Zold, self._Zt, self._plan.dyn.friction, unknowns.x,
                  unknowns.xs, unknowns.J, unknowns.jac_ok, self._plan.node_R, self._last,
                  self._good, self._tau,
                  self._lengths, self._q_last, self._tip_times, self._tips,
                  *self._bays[id(self._plan)])
        return (arrays, [a.copy() for a in arrays], self.time, self._spaced, self._bdf.copy(),
                self._history.copy(), self._energy, self._layout_now)

    def _restore(self, kept: tuple) -> None:
        arrays, copies, self.time, self._spaced, bdf, self._history, self._energy, grid = kept
        self._use_layout(grid)      # the grid the arrays belong to (implicit_grid.py)
        self._bdf = bdf.copy()
        for array, copy in zip(arrays, copies):
            array[...] = copy
        self._failed = None


def _substeps(previous: np.ndarray, rows: np.ndarray, steps: int) -> np.ndarray:
    """Return the inputs of ``steps`` equal steps per row, linear from the row before."""
    if steps == 1:
        return rows
    before = np.vstack((previous[None], rows[:-1]))
    share = (np.arange(1, steps + 1) / steps)[None, :, None]
    return (before[:, None] + share * (rows - before)[:, None]).reshape(-1, rows.shape[1])
