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
Fit robot parameters to measured tips: holds, samples of slow motion, or a replay.

:func:`calibrate` fits the parameters of :mod:`tendon_robot_sim.experiment.fit_parameters`
by :func:`scipy.optimize.least_squares` on the residuals r = predicted - measured point of
every hold (3 per hold, m), or, given a ``recording`` (model ``dynamic``; the damping and the
drag have no static effect), on those of its replay over time.

* Jacobian: forward differences. For the models of
  :data:`~tendon_robot_sim.models.rod.statics.analysis.sensitivity.LINEARISABLE` without
  solving the perturbed robots: each solution is linearised once and each perturbed robot's
  points follow from one residual evaluation per hold (implicit function theorem,
  :mod:`~tendon_robot_sim.models.rod.statics.analysis.sensitivity`), and the next solves start
  where the linearisation predicts them; for the others each perturbed solve starts from the
  solution it perturbs (:meth:`StaticsSolver.recall`): a few residual evaluations instead of a
  solve. The registration (``base.position``) and the marker (``tip_marker``) in closed form
  (a rigid shift, the tip rotation), without a solve.
* Continuation over the data: more than ``search_samples`` holds are first fitted on every
  k-th (to :data:`SEARCH_TOLERANCE`), then on all from there (to :data:`TOLERANCE`; their first
  solves each from the hold before: the solutions at the file's values are too far to start
  Newton from). Multi-start: ``starts`` > 1 fits
  that first stage from the file's values and from ``starts - 1`` Sobol points within the
  bounds and goes on from the best.
* Uncertainty: the covariance s^2 (J^T J)^-1 of z at the optimum (J of solves, also where
  the steps were linearised; s^2 = RSS / (m - p), m residuals, p parameters); standard
  errors and 95 % intervals per parameter, and joint 95 % intervals for all p together
  (Bonferroni: each at 1 - 0.05 / p). They hold if the residuals are independent and the
  model right; residuals of a real robot are neither (the model's
  error is smooth along a motion), so read them as a lower bound.
* Warnings: a parameter the data do not determine (a null direction of J), two whose
  estimates correlate beyond :data:`CORRELATION_LIMIT`, a parameter at its bound, holds
  without an equilibrium.

A hold whose solve fails counts as an error of one rod length in each axis. No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Sequence

import numpy as np

from tendon_robot_sim import counted, progress_bar
from tendon_robot_sim.experiment.calibration import (CalibrationError, Evaluator,
                                                     no_equilibrium, settle_time)
from tendon_robot_sim.experiment.experiment import Hold, Recording
from tendon_robot_sim.experiment.fit_parameters import (at_bound, BENDING_FIELDS,
                                                        DYNAMIC_FIELDS, FitParameter,
                                                        FitParameterError, parse_fit,
                                                        robot_with)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.analysis.sensitivity import LINEARISABLE, restarted
from tendon_robot_sim.models.rod.statics.stick_slip import has_friction
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.parallel import Scheduler

# Forward-difference step in z (a relative change of 1e-3 of a positive quantity).
FD_STEP = 1e-3
# Fields whose effect depends on the path (tendon and bending friction): each hold is solved
# from the last.
PATH_FIELDS = ('friction',) + BENDING_FIELDS
# The first stage of a fit to more holds than this uses every k-th.
SEARCH_SAMPLES = 400
# |correlation| of two estimates beyond which the data hardly tell them apart.
CORRELATION_LIMIT = 0.995
# Singular values of J (columns scaled to unit norm) below this fraction of the largest:
# directions the data do not fix (a finite-difference Jacobian is good to about 1e-4 here).
RANK_TOLERANCE = 1e-3
# A parameter this close to a bound (fraction of its range in z) is at the bound.
AT_BOUND = 1e-3
# A fit starts at least this far (fraction of the range in z) inside the bounds.
START_MARGIN = 1e-3
# least_squares' ftol and xtol: a fit stops when a step lowers the sum of squares by less than
# this fraction (the RMS by half of it) or moves the scaled parameters by about as little;
# parameters are then within a few hundredths of their standard error of the optimum.
TOLERANCE = 1e-5
# The same for the first stage, which only finds where the second starts: on the FTDCR v4 train
# set its optimum on every 5th sample lies about 20 standard errors (of the fit on all) from the
# second's, and its last steps at 1e-5 (the RMS down by another 0.02 %) brought it no closer.
SEARCH_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate`. Values in SI (angles and rotations: turns, rad)."""

    robot: Robot                          # the calibrated robot
    parameters: tuple[FitParameter, ...]
    values: np.ndarray                    # (p,)
    sigma: np.ndarray                     # (p,) standard errors; inf: not determined
    intervals: np.ndarray                 # (p, 2) 95 % confidence intervals, each alone
    joint_intervals: np.ndarray           # (p, 2) 95 % for all p together (Bonferroni)
    correlations: np.ndarray              # (p, p) of the estimates
    rms_before: float                     # m, RMS (Euclidean) error with the initial values
    rms_after: float                      # m
    evaluations: int                      # parameter sets solved
    linearised: int                       # of them: linearised about a solution (Jacobian)
    holds: int                            # holds (or samples) fitted
    failed: int                           # of them without an equilibrium at the optimum
    warnings: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def initial(self) -> np.ndarray:
        return np.array([p.initial for p in self.parameters])

    def summary(self) -> str:
        lines = []
        for p, value, sigma, (low, high), (jlow, jhigh) in zip(
                self.parameters, self.values, self.sigma, self.intervals,
                self.joint_intervals):
            lines.append(f'{p.name}: {value:.6g} +- {sigma:.3g} (95 % interval {low:.6g} .. '
                         f'{high:.6g}, jointly {jlow:.6g} .. {jhigh:.6g}; initial '
                         f'{p.initial:.6g})')
        lines.append(f'RMS tip error: {self.rms_before * 1e3:.3f} mm before, '
                     f'{self.rms_after * 1e3:.3f} mm after ({self.holds} points, '
                     f'{self.evaluations} parameter sets solved, {self.linearised} of them '
                     'linearised about a solution)')
        lines += [f'warning: {text}' for text in self.warnings]
        return '\n'.join(lines)

    def to_dict(self) -> dict:
        """Return the result as JSON-ready data (SI units)."""
        return {
            'parameters': {p.name: {'value': float(v), 'sigma': float(s),
                                    'interval': [float(a), float(b)],
                                    'joint_interval': [float(c), float(d)],
                                    'initial': p.initial, 'bounds': [p.low, p.high]}
                           for p, v, s, (a, b), (c, d) in zip(
                               self.parameters, self.values, self.sigma, self.intervals,
                               self.joint_intervals)},
            'rms_before_mm': self.rms_before * 1e3, 'rms_after_mm': self.rms_after * 1e3,
            'points': self.holds, 'failed': self.failed, 'evaluations': self.evaluations,
            'linearised': self.linearised,
            'warnings': list(self.warnings),
        }


class _Problem:
    """The residuals and Jacobian of one fit over one set of holds, with their cache."""

    def __init__(self, robot: Robot, params, holds, model, evaluator: Evaluator, step, bar,
                 recording: Recording | None = None, piece_length: float | None = None):
        self.robot, self.params, self.holds, self.model = robot, params, holds, model
        self.evaluator, self.step, self.bar, self.recording = evaluator, step, bar, recording
        self.piece_length = piece_length
        self.measured = (recording.tips if recording is not None
                         else np.array([h.tip for h in holds]))
        self.settle = settle_time(robot) if recording is not None else None
        self.cache = {}
        self.memory = None
        self.memory_at = None      # the z whose solutions self.memory holds
        self.linearised = 0        # parameter sets evaluated by linearisation
        self.idle = []             # the parameters the last Jacobian found moving no point
        self.moves = None          # the last linearisation: z, the shifts, each hold's steps
        self.low = np.array([p.z_bounds[0] for p in params])
        self.high = np.array([p.z_bounds[1] for p in params])
        # without gravity (none fitted either) and tip load, a turn of the base turns the
        # robot rigidly
        rigid = not (np.any(robot.gravity) or np.any(robot.tip_load.force)
                     or np.any(robot.tip_load.moment)
                     or any(p.field == 'gravity' for p in params))
        self.closed_form = [p.analytic or (rigid and p.field == 'base.rotation')
                            for p in params]
        self.base_position = robot.base.position
        self.path_dependent = has_friction(robot) or any(
            p.field in PATH_FIELDS for p in params)

    def forget(self) -> None:
        """Start the next solves afresh: each from the hold before, none from a memory."""
        self.memory = self.memory_at = self.moves = None

    def robot_at(self, z: np.ndarray) -> Robot:
        return robot_with(self.robot, self.params, [p.at(v) for p, v in zip(self.params, z)])

    def _robot_or_none(self, z: np.ndarray) -> Robot | None:
        """Return the robot at z; None where the values make no robot (every point fails)."""
        try:
            return self.robot_at(z)
        except RobotDescriptionError:      # e.g. a slack beyond any tendon's reference length
            return None

    def evaluate(self, zs: list[np.ndarray]) -> list[tuple]:
        """(residual (3m,), failed (m,), rotations (m, 3, 3) or None) of each z."""
        missing = [z for z in zs if z.tobytes() not in self.cache]
        if missing:
            # the bar's total: the sets solved so far and this batch's, so that it shows the
            # time left of the batch at the rate so far (how many steps the least squares
            # will take is not known ahead: the total grows with each)
            self.bar.total = self.bar.n + len(missing)
            self.bar.refresh()
            robots = [self._robot_or_none(z) for z in missing]
            valid = [robot for robot in robots if robot is not None]
            if not valid:
                points, rotations = [], []
            elif self.recording is not None:
                points = self.evaluator.replay_many(valid, self.recording, self.settle)
                rotations = [None] * len(valid)
            else:
                batch = self.evaluator.solve_batch(valid, self.holds, self.model, self.step,
                                                   self._start(missing[0]), self.piece_length)
                points, rotations = batch.points, batch.rotations
                if robots[0] is not None:      # the memory is the first robot's
                    self.memory, self.memory_at = batch.memory, missing[0].tobytes()
            solved = iter(zip(points, rotations))
            m = len(self.measured)
            nowhere = (np.full((m, 3), np.nan), np.full((m, 3, 3), np.nan))
            for z, robot in zip(missing, robots):
                point, rotation = next(solved) if robot is not None else nowhere
                error = point - self.measured
                failed = np.isnan(error[:, 0])
                error[failed] = self.robot.rod.length
                self.cache[z.tobytes()] = (error.ravel(), failed, rotation)
            self.bar.update(len(missing))
        return [self.cache[z.tobytes()] for z in zs]

    def residual(self, z) -> np.ndarray:
        return self.evaluate([np.asarray(z, dtype=float)])[0][0]

    def jacobian(self, z, solve: bool = False) -> np.ndarray:
        """Return the Jacobian at z; ``solve``: of solved perturbed robots, never linearised."""
        z = np.asarray(z, dtype=float)
        solved = [j for j, closed in enumerate(self.closed_form) if not closed]
        # a robot with tendon friction is solved along the path (its points depend on the
        # order): no linearisation of one hold's solution holds for it
        linear = (not solve and self.recording is None and self.model in LINEARISABLE
                  and not self.path_dependent)
        shifted = []
        for j in solved:
            zj = z.copy()
            zj[j] += FD_STEP if zj[j] + FD_STEP <= self.high[j] else -FD_STEP   # inside
            shifted.append(zj)
        r0, failed0, rotations = self.evaluate([z])[0]
        J = np.zeros((r0.size, len(self.params)))
        if linear:
            changed = self._linear_changes(z, shifted, failed0)
        else:
            changed = [(r - r0, failed) for r, failed, _ in self.evaluate(shifted)]
        # the parameters that moved no point, every point solved both ways (:meth:`fit`)
        self.idle = [j for j, (change, failed) in zip(solved, changed)
                     if not np.any(change) and not np.any(failed | failed0)]
        for j, zj, (change, failed) in zip(solved, shifted, changed):
            column = change / (zj[j] - z[j])
            column.reshape(-1, 3)[failed | failed0] = 0.0
            J[:, j] = column
        points = (r0.reshape(-1, 3) + self.measured) - self._base(z)
        turn = self._turn_jacobian(z)
        for j, p in enumerate(self.params):
            if p.field == 'base.position':        # the whole robot shifts
                J[p.component::3, j] = p.scale
            elif p.field == 'tip_marker':         # the marker turns with the tip
                J[:, j] = (rotations[:, :, p.component] * p.scale).ravel()
            elif p.field == 'base.rotation' and self.closed_form[j]:
                # d(exp(w) R0 x)/dw_k = (J_l(w) e_k) x (point - base), J_l the left Jacobian
                J[:, j] = (np.cross(turn[:, p.component], points) * p.scale).ravel()
            if self.closed_form[j]:
                J[:, j].reshape(-1, 3)[failed0] = 0.0
        return J

    def _linear_changes(self, z: np.ndarray, shifted: list[np.ndarray],
                        failed: np.ndarray) -> list[tuple]:
        """
        Return the change of the residual (3m,) and the failed points (m,) at each ``shifted``.

        To first order from the solutions at z, without solving the shifted robots
        (:meth:`Evaluator.linear_batch`): the columns of the Jacobian.
        """
        base = self._robot_or_none(z)
        if base is None:        # no robot, no point: every column is zero (as when solved)
            return [(np.zeros(3 * len(failed)), np.ones(len(failed), dtype=bool))
                    for _ in shifted]
        if self.memory is None or self.memory_at != z.tobytes():   # not the last solved
            batch = self.evaluator.solve_batch([base], self.holds, self.model, self.step,
                                               self.memory, self.piece_length)
            self.memory, self.memory_at = batch.memory, z.tobytes()
        memory = [None if f else m for m, f in zip(self.memory, failed)]
        robots = [self._robot_or_none(zj) for zj in shifted]
        valid = [robot is not None for robot in robots]
        points, fresh, steps = self.evaluator.linear_batch(
            [base] + [robot for robot in robots if robot is not None], self.holds, self.model,
            self.step, memory)
        # the next solves start where the linearisation predicts them (:meth:`_start`)
        self.memory = [new if new is not None else old for new, old in zip(fresh, self.memory)]
        changes = np.array([zj - z for zj, ok in zip(shifted, valid) if ok])
        self.moves = (z, changes, steps) if len(changes) else None
        self.bar.total = self.bar.n + len(shifted)
        self.bar.update(len(shifted))
        self.linearised += len(shifted)
        changed = iter(points[1:] - points[0])
        result = []
        for robot in robots:
            change = next(changed) if robot is not None else np.full((len(failed), 3), np.nan)
            nowhere = np.isnan(change).any(axis=1)
            change[nowhere] = 0.0
            result.append((change.ravel(), nowhere))
        return result

    def _start(self, z: np.ndarray) -> list | None:
        """
        Return the memory the solves at z start from: the last solutions, moved to first order.

        After a linearisation at the last solutions' z0 (:meth:`_linear_changes`) each
        solution's unknowns are moved by their steps to the shifted robots, combined as
        z - z0 is of the shifts (least squares: the shifts are along the solved parameters).
        """
        if self.moves is None or self.moves[0].tobytes() != self.memory_at:
            return self.memory
        z0, changes, steps = self.moves
        weights = np.linalg.lstsq(changes.T, z - z0, rcond=None)[0]
        return [memory if row is None or not np.all(np.isfinite(row)) else
                restarted(memory, hold.tensions is not None, weights @ row)
                for memory, row, hold in zip(self.memory, steps, self.holds)]

    def _base(self, z: np.ndarray) -> np.ndarray:
        """Return the base position [m] at z."""
        base = self.base_position.copy()
        for p, value in zip(self.params, z):
            if p.field == 'base.position':
                base[p.component] = p.from_z(value)
        return base

    def _turn_jacobian(self, z: np.ndarray) -> np.ndarray:
        """Left Jacobian of SO(3) at the base rotation vector w of z (3, 3)."""
        w = np.zeros(3)
        for p, value in zip(self.params, z):
            if p.field == 'base.rotation':
                w[p.component] = p.from_z(value)
        theta = float(np.linalg.norm(w))
        W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        if theta < 1e-8:
            return np.eye(3) + 0.5 * W
        return (np.eye(3) + (1.0 - math.cos(theta)) / theta ** 2 * W
                + (theta - math.sin(theta)) / theta ** 3 * W @ W)

    def fit(self, z0: np.ndarray, first: bool = False, **options):
        """
        Return the least squares from z0.

        ``first``: the fit from the robot file's values, which refuses a parameter that moves
        no point there. A change of it leaves every residual as it is: the fit never moves it,
        and its value would be its start (the file's moved by the start's margin: a
        motor_distance of 0 came out 2.5 mm, +- inf).
        """
        from scipy.optimize import least_squares

        # from inside the bounds: the trust region reflective method hardly leaves a bound
        # it starts on (its scaling shrinks the steps there to nothing)
        margin = START_MARGIN * (self.high - self.low)
        z0 = np.clip(z0, self.low + margin, self.high - margin)
        return least_squares(self.residual, z0,
                             jac=self._refusing_idle(z0) if first else self.jacobian,
                             bounds=(self.low, self.high), x_scale=1.0, **options)

    def _refusing_idle(self, z0: np.ndarray):
        """Return :meth:`jacobian`, refusing at ``z0`` a parameter that moves no point."""
        def jacobian(z):
            J = self.jacobian(z)
            if np.array_equal(z, z0) and self.idle:
                names = ', '.join(self.params[j].name for j in self.idle)
                raise CalibrationError(f'fit: {names}: no effect on the fitted points at the '
                                       "robot file's values (a change moves no tip, so the "
                                       'fit cannot place it); leave it out of --fit')
            return J
        return jacobian


def fit_parameters(robot: Robot, fit: Sequence[str],
                   bounds: dict[str, tuple[float, float]] | None = None,
                   model: str = 'discrete', trajectory: bool = False) -> list[FitParameter]:
    """
    Return the parameters of ``fit`` (:func:`parse_fit`) that ``model`` can fit.

    ``trajectory``: to a recorded trajectory (``model`` dynamic), else to holds or samples.
    What needs no recording: :func:`calibrate` checks it again, a command first, before it
    reads one. CalibrationError naming the item (``fit: ...``, ``bounds: ...``).
    """
    try:
        params = parse_fit(robot, list(fit), bounds)
    except FitParameterError as error:
        raise CalibrationError(str(error)) from None
    if trajectory:
        if model != 'dynamic':
            raise CalibrationError(f'model: fitting a trajectory needs model dynamic, got '
                                   f'{model!r}')
        analytic = [p.name for p in params if p.analytic]
        if analytic:
            raise CalibrationError(f'fit: {analytic[0]} is fitted to holds or samples, not to '
                                   'a dynamic replay')
        return params
    dynamic = [p.name for p in params if p.field in DYNAMIC_FIELDS]
    if dynamic:
        raise CalibrationError(f'fit: {dynamic[0]} has no static effect; fit it to a '
                               'recorded trajectory (model dynamic, a step response)')
    # the dynamic model settles each hold from rest, where friction does nothing (no
    # history, and its laws vanish at rest): such a fit would return the start, any value
    frictional = [p.name for p in params if p.field in PATH_FIELDS]
    if model == 'dynamic' and frictional:
        raise CalibrationError(
            f'fit: {frictional[0]}: the dynamic model settles each hold from rest, where '
            'friction has no effect; fit it with a statics model (discrete, cosserat or '
            'kirchhoff: each hold from the last)')
    return params


def calibrate(robot: Robot, holds: Sequence[Hold], fit: Sequence[str] = ('youngs_modulus',),
              bounds: dict[str, tuple[float, float]] | None = None, model: str = 'discrete',
              workers: int | None = None, scheduler: Scheduler | str | None = None,
              progress: bool = True, recording: Recording | None = None, starts: int = 1,
              step: float | None = None, search_samples: int = SEARCH_SAMPLES,
              piece_length: float | None = None) -> Calibration:
    """
    Least-squares fit of robot parameters to the measured points.

    Parameters
    ----------
    robot : Robot
        Initial guess; its values start and scale the parameters.
    holds : sequence of Hold
        The measured points to fit: holds, or samples of slow motion (ignored when
        ``recording`` is given).
    fit : sequence of str
        ``--fit`` items (:mod:`~tendon_robot_sim.experiment.fit_parameters`).
    bounds : dict {item: (low, high)}, optional
        SI units; default per kind of parameter (fit_parameters).
    model : str
        A statics model (``cosserat``, ``kirchhoff``, ``discrete``) or ``dynamic``.
    workers, scheduler
        See :class:`~tendon_robot_sim.experiment.calibration.Evaluator`.
    progress : bool
        A tqdm bar on stderr over the parameter sets solved: its total is the sets asked for
        so far (each least-squares step adds its own), its time left that of the step under
        way, at the rate of the sets before.
    recording : Recording, optional
        Fit the whole tip trajectory of this (tension) recording instead, replayed by
        :func:`~tendon_robot_sim.experiment.calibration.replay_dynamic` (model
        ``dynamic``); each replay first settles for 8 time constants of the initial robot's
        first mode, so that the residuals are smooth in the parameters.
    starts : int
        Starting points of the first stage (1: the robot file's values).
    step : float, optional
        Largest RK4 step of the statics [m] (default: the model's own).
    search_samples : int
        Most holds of the first stage (every k-th hold); all holds in the second.
    piece_length : float, optional
        Largest piece of a tendon with capstan friction [m] (default: that of
        :class:`~tendon_robot_sim.models.rod.statics.stick_slip.StickSlipStatics`).

    """
    from threadpoolctl import threadpool_limits

    params = fit_parameters(robot, fit, bounds, model, trajectory=recording is not None)
    points = len(holds) if recording is None else len(recording.tip_times)
    if 3 * points <= len(params):
        give = 'gives' if points == 1 else 'give'
        raise CalibrationError(f'points: {counted(points, "point")} {give} {3 * points} '
                               f'residuals, too few for {counted(len(params), "parameter")}')
    if not (isinstance(starts, int) and starts >= 1):
        raise CalibrationError(f'starts: must be a whole number >= 1, got {starts!r}')
    options = {'xtol': TOLERANCE, 'ftol': TOLERANCE, 'gtol': 1e-10}
    search_options = {**options, 'xtol': SEARCH_TOLERANCE, 'ftol': SEARCH_TOLERANCE}
    # one BLAS thread in this process: the least squares' SVD of J (3 m x p) takes 5 ms on
    # one, and 0.3 s of CPU (0.6 s wall) on two threads that spin for a core another process
    # holds (the FTDCR v4 fit on the loaded 2-core machine); the workers use no BLAS
    with Evaluator(workers, scheduler) as evaluator, threadpool_limits(1, user_api='blas'):
        bar = progress_bar(desc='calibrate (parameter sets)', unit='set', shown=progress,
                           total=0,
                           bar_format='{desc}: {n_fmt}/{total_fmt} sets so far |{bar}| '
                                      '[{elapsed}<{remaining} this step, {rate_fmt}]')
        try:
            problem = _Problem(robot, params, holds, model, evaluator, step, bar, recording,
                               piece_length)
            z0 = np.zeros(len(params))
            stride = (1 if recording is not None
                      else max(1, math.ceil(len(holds) / max(search_samples, 1))))
            search = problem if stride == 1 else _Problem(robot, params, list(holds)[::stride],
                                                          model, evaluator, step, bar,
                                                          piece_length=piece_length)
            z = z0 if search is problem and starts == 1 else _best_start(search, z0, starts,
                                                                         search_options)
            rms_before = _rms(problem.residual(z0))
            if z is not z0:
                # the first stage moved the parameters far: each worker's solves at z start
                # from the hold before (a continuation along the data), not from the
                # solutions at z0 (from which Newton gets lost: on the FTDCR v4 train set a
                # solve of all samples took 8 times as long)
                problem.forget()
            solution = problem.fit(z, first=z is z0, **options)
            # the uncertainty and the warnings from solves: a linearised Jacobian is as good
            # for the steps but blurs a combination the data do not determine (E and the
            # compliances without gravity) to 2e-3 of the largest singular value
            J = problem.jacobian(solution.x, solve=True)
            r, failed, _ = problem.evaluate([solution.x])[0]
        finally:
            bar.close()
    if failed.all():
        # every point a rod length of error, before and after: the fit measured nothing
        raise no_equilibrium(model, failed.size)
    problems = {id(problem): problem, id(search): search}.values()
    evaluations = sum(len(p.cache) + p.linearised for p in problems)
    linearised = sum(p.linearised for p in problems)
    return _result(problem, solution.x, J, r, failed, rms_before, evaluations, linearised)


def _rms(residual: np.ndarray) -> float:
    """Return the RMS Euclidean error [m] of residuals (3 per point)."""
    return float(np.sqrt(np.mean(residual ** 2) * 3))


def _best_start(search: _Problem, z0: np.ndarray, starts: int, options: dict) -> np.ndarray:
    """Fit the first stage from z0 and from starts - 1 Sobol points; return the best z."""
    candidates = [z0]
    if starts > 1:
        from scipy.stats import qmc
        # The first starts - 1 points of a power-of-2 draw are the points random(starts - 1)
        # gives, without scipy's warning (printed to calibrate's user) that other counts lose
        # the sequence's balance: a user's --starts is any count.
        m = math.ceil(math.log2(starts - 1))
        unit = qmc.Sobol(d=z0.size, scramble=True, seed=0).random_base2(m)[:starts - 1]
        candidates += list(search.low + unit * (search.high - search.low))
    best = None
    for z in candidates:
        # far from the last point: start every hold afresh
        search.forget()
        solution = search.fit(z, first=z is z0, **options)
        if best is None or solution.cost < best.cost:
            best = solution
    return best.x


def _result(problem: _Problem, z: np.ndarray, J: np.ndarray, r: np.ndarray,
            failed: np.ndarray, rms_before: float, evaluations: int,
            linearised: int) -> Calibration:
    """Return the calibration at z: values, uncertainty from J, warnings."""
    from scipy.stats import t as student_t

    params = problem.params
    p = len(params)
    dof = max(r.size - p, 1)
    s2 = float(r @ r) / dof
    # on unit columns, so that a parameter's units do not decide what counts as degenerate
    norms = np.linalg.norm(J, axis=0)
    norms[norms == 0.0] = 1.0
    _, singular, vt = np.linalg.svd(J / norms, full_matrices=False)
    rank = singular > RANK_TOLERANCE * (singular[0] if singular.size else 0.0)
    covariance = s2 * (vt[rank].T / singular[rank] ** 2) @ vt[rank] / np.outer(norms, norms)
    sigma_z = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    undetermined = np.zeros(p, dtype=bool)
    for vector in vt[~rank]:
        undetermined |= np.abs(vector) > 0.1
    sigma_z[undetermined] = np.inf
    with np.errstate(invalid='ignore', divide='ignore'):
        correlations = covariance / np.outer(sigma_z, sigma_z)
    values = np.array([q.at(v) for q, v in zip(params, z)])
    quantiles = (float(student_t.ppf(0.975, dof)), float(student_t.ppf(1 - 0.025 / p, dof)))
    bands = []
    for quantile in quantiles:
        bands.append(np.array([_interval(q, v, s * quantile)
                               for q, v, s in zip(params, z, sigma_z)]))
    sigma = np.array([q.initial * math.exp(v) * s if q.log else q.scale * s
                      for q, v, s in zip(params, z, sigma_z)])
    warnings = _warnings(params, z, problem, vt[~rank], correlations, undetermined, failed)
    return Calibration(robot=problem.robot_at(z), parameters=tuple(params), values=values,
                       sigma=sigma, intervals=bands[0], joint_intervals=bands[1],
                       correlations=correlations, rms_before=rms_before, rms_after=_rms(r),
                       evaluations=evaluations, linearised=linearised,
                       holds=len(problem.measured),
                       failed=int(failed.sum()), warnings=tuple(warnings))


def _interval(p: FitParameter, z: float, half: float) -> tuple[float, float]:
    if not half < 50.0:      # undetermined, or wider than any meaning (exp overflows)
        return (-math.inf if not p.log else 0.0), math.inf
    return p.from_z(z - half), p.from_z(z + half)


def _warnings(params, z, problem: _Problem, null, correlations, undetermined, failed):
    warnings = []
    for vector in null:
        names = [q.name for q, c in zip(params, vector) if abs(c) > 0.1]
        warnings.append(
            f'not identifiable from these data: {" and ".join(names)}'
            + (' (only a combination of them is determined)' if len(names) > 1 else
               ' (no effect on the fitted points)')
            + '; fix one (leave it out of --fit) or add motions that tell them apart')
    p = len(params)
    for i in range(p):
        for j in range(i + 1, p):
            if (not undetermined[i] and not undetermined[j]
                    and abs(correlations[i, j]) > CORRELATION_LIMIT):
                warnings.append(f'{params[i].name} and {params[j].name} are hardly identifiable '
                                f'apart: their estimates correlate {correlations[i, j]:+.4f}; '
                                'fix one or add motions that tell them apart')
    for q, v, low, high in zip(params, z, problem.low, problem.high):
        for bound, text, value, limit in ((low, 'lower', q.low, q.limits[0]),
                                          (high, 'upper', q.high, q.limits[1])):
            if abs(v - bound) <= AT_BOUND * (high - low):
                warnings.append(at_bound(q.name, text, value,
                                         q.written_as if value == limit else ''))
    if failed.any():
        warnings.append(f'{int(failed.sum())} of {failed.size} points have no equilibrium at '
                        'the fitted values (each counted as a rod length of error)')
    return warnings
