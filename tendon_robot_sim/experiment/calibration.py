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
Predict and validate against measured holds (:mod:`.experiment`), and replay recordings.

* :func:`predict` solves each hold's equilibrium with one model: ``cosserat``,
  ``kirchhoff`` or ``discrete`` (statics solver, milliseconds per hold) or
  ``dynamic`` (PyElastica run until steady, seconds per hold; tensions only). The
  predicted point is the tip, or the robot's ``tip_marker`` on it.
* :func:`validate` compares predictions with the measured tips; :func:`write_report`
  writes the Markdown summary and PNG plots.
* :func:`replay_dynamic` feeds a recording's whole tension series to the dynamic
  simulator and compares the simulated tip with the measured one over time.

The fit of robot parameters to them is :mod:`tendon_robot_sim.experiment.fitting`. The
independent solves of one evaluation (all parameter sets of a finite-difference Jacobian
times chunks of holds) run in parallel: on local processes or on a Dask cluster
(:mod:`tendon_robot_sim.parallel`); ``workers=1`` solves in this process.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from tendon_robot_sim import produced_by, progress_bar
from tendon_robot_sim.experiment.experiment import advance_to, Hold, Recording, STATE_TOPIC
from tendon_robot_sim.files.outputs import make_folder, save_figure, write_output
from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.plotting import legend_beside
from tendon_robot_sim.models.rod.statics.analysis.sensitivity import (
    linear_points, linearize, restarted, solutions)
from tendon_robot_sim.models.rod.statics.solver import MODELS, StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import has_friction, StickSlipStatics
from tendon_robot_sim.models.tendon_robot import Robot, robot_from_dict
from tendon_robot_sim.parallel import Pool, Scheduler

PREDICT_MODELS = MODELS + ('dynamic',)
# Longest simulated time per hold of the dynamic model [s].
DYNAMIC_MAX_TIME = 20.0


class CalibrationError(ValueError):
    """Bad calibration input; the message names the option and the problem."""


# --------------------------------------------------------------------------- prediction


def _solve_batch(task) -> tuple:
    """
    Worker: the measured points of a chunk of holds for several robots. Module level.

    The task: robots (YAML data), model, commands and input modes of the holds, RK4 step,
    and each hold's warm-start memory (or None). Each hold is solved for the first robot
    first, starting from its memory (else from the hold before), then for the others from
    the first robot's solution: the finite differences of a calibration start where the
    point they perturb ended. Returns the points (k, m, 3) [m, NaN where a solve failed], the
    tip rotations (k, m, 3, 3) and the first robot's memory after each hold.
    """
    robots_data, model, commands, modes, step, memories = task
    robots = [robot_from_dict(data) for data in robots_data]
    points = np.full((len(robots), len(commands), 3), np.nan)
    rotations = np.full((len(robots), len(commands), 3, 3), np.nan)
    if model == 'dynamic':
        from tendon_robot_sim.models.rod.dynamics.factory import dynamic_simulator
        for k, robot in enumerate(robots):
            simulator = dynamic_simulator(robot)
            for i, values in enumerate(commands):
                simulator.reset()
                simulator.set_tensions(values)
                points[k, i] = simulator.run_until_steady(DYNAMIC_MAX_TIME).tip_position
        return points, rotations, [None] * len(commands)
    solvers = [StaticsSolver(robot, model, step=step) for robot in robots]
    after = list(memories)
    for i, (values, mode) in enumerate(zip(commands, modes)):
        for k, (robot, solver) in enumerate(zip(robots, solvers)):
            start = memories[i] if k == 0 else after[i]
            if start is not None:
                solver.recall(start)
            solve = solver.solve_tensions if mode == 'tension' else solver.solve_displacements
            try:
                result = solve(values)
            except ConvergenceError:
                continue
            points[k, i] = result.tip_position + result.tip_rotation @ robot.tip_marker
            rotations[k, i] = result.tip_rotation
            if k == 0:
                after[i] = solver.memory()
    return points, rotations, after


def _solve_path(task) -> tuple:
    """
    Worker: the measured points of all holds, in order, for one robot with tendon friction.

    Path-dependent statics (:class:`StickSlipStatics`): each hold solved from the last,
    from rest at the first; a hold without an equilibrium is NaN and the next starts from
    the last one solved. The task: the robot (YAML data), model, commands and input modes,
    RK4 step, largest piece of a tendon with capstan friction (None: the default). Returns
    (points (m, 3), tip rotations (m, 3, 3)). Module level (picklable).
    """
    robot_data, model, commands, modes, step, piece_length = task
    robot = robot_from_dict(robot_data)
    pieces = {} if piece_length is None else {'piece_length': piece_length}
    statics = StickSlipStatics(robot, model, step=step, **pieces)
    points = np.full((len(commands), 3), np.nan)
    rotations = np.full((len(commands), 3, 3), np.nan)
    for i, (values, mode) in enumerate(zip(commands, modes)):
        solve = statics.solve_tensions if mode == 'tension' else statics.solve_displacements
        try:
            result = solve(values)
        except ConvergenceError:
            continue
        points[i] = result.tip_position + result.tip_rotation @ robot.tip_marker
        rotations[i] = result.tip_rotation
    return points, rotations


def _linear_batch(task) -> tuple:
    """
    Worker: the measured points of a chunk of holds for robots near the first, to first order.

    The task: robots (YAML data), model, commands and input modes of the holds, RK4 step,
    and the first robot's memory after each hold's solve (None: no solution). Each solution
    of the first robot is linearised once; the others' points follow from it
    (:mod:`~tendon_robot_sim.models.rod.statics.analysis.sensitivity`: one residual evaluation per
    hold and robot, no solve). Returns the points (k, m, 3) [m, NaN: none], the first
    robot's included; per hold the first robot's memory with the linearisation's Jacobian
    (None: none) and the steps (k - 1, n) of its unknowns to each other robot's solution.
    """
    robots_data, model, commands, modes, step, memories = task
    robots = [robot_from_dict(data) for data in robots_data]
    first = StaticsSolver(robots[0], model, step=step)
    others = [StaticsSolver(robot, model, step=step) for robot in robots[1:]]
    points = np.full((len(robots), len(commands), 3), np.nan)
    memory, steps = [None] * len(commands), [None] * len(commands)
    for tension in (True, False):
        rows = [i for i, mode in enumerate(modes) if (mode == 'tension') == tension]
        if not rows:
            continue
        lin = linearize(first, np.array([commands[i] for i in rows]), tension,
                        solutions(first, [memories[i] for i in rows], tension),
                        robots[0].tip_marker)
        points[0, rows] = lin.points
        moved = np.full((len(others), len(rows), lin.x.shape[1]), np.nan)
        for k, solver in enumerate(others):
            points[k + 1, rows], moved[k] = linear_points(solver, lin)
        for j, i in enumerate(rows):
            if np.isfinite(lin.x[j, 0]):
                memory[i] = restarted(memories[i], tension, inverse=lin.inverse[j])
                steps[i] = moved[:, j]
    return points, memory, steps


def _replay_task(task) -> np.ndarray:
    """Worker: the simulated tips of one replay. Picklable, module level."""
    robot_data, recording, settle_time = task
    return replay_dynamic(robot_from_dict(robot_data), recording,
                          settle_time=settle_time).simulated


@dataclass
class Batch:
    """What :meth:`Evaluator.solve_batch` gives: points and tip rotations per robot."""

    points: list[np.ndarray]     # per robot (m, 3) m: tip + tip rotation @ tip_marker; NaN
    #                              where the solve failed
    rotations: list[np.ndarray]  # per robot (m, 3, 3) tip rotations
    memory: list                 # the first robot's warm-start memory after each hold


class Evaluator(Pool):
    """
    A :class:`~tendon_robot_sim.parallel.Pool` that predicts holds and replays recordings.

    The holds of one evaluation are cut into contiguous chunks, one per worker (one task
    each, all parameter sets of a finite-difference Jacobian together: each builds its solvers
    once); see the pool for ``workers`` and ``scheduler``.
    """

    def replay_many(self, robots: Sequence[Robot], recording: Recording,
                    settle_time: float) -> list[np.ndarray]:
        """Return the simulated tips (j, 3) of :func:`replay_dynamic` per robot, in parallel."""
        return self.map([(robot.to_dict(), recording, settle_time) for robot in robots],
                        _replay_task)

    def solve_batch(self, robots: Sequence[Robot], holds: Sequence[Hold], model: str,
                    step: float | None = None, memory: Sequence | None = None,
                    piece_length: float | None = None) -> Batch:
        """
        Solve ``holds`` for each robot (the first starting from ``memory``), in parallel.

        The measured point of a hold is the tip plus the tip rotation times the robot's
        ``tip_marker``. ``piece_length`` [m]: the largest piece of a tendon with capstan
        friction (:class:`StickSlipStatics`; None: its default).
        """
        if model not in PREDICT_MODELS:
            raise CalibrationError(f'model: must be one of {list(PREDICT_MODELS)}, '
                                   f'got {model!r}')
        if model == 'dynamic' and any(h.tensions is None for h in holds):
            raise CalibrationError('model: dynamic takes tensions only; these holds are '
                                   'displacements (use cosserat or discrete)')
        if path_dependent(robots, model):
            # each robot solves all holds in order, the robots in parallel
            modes = ['tension' if h.tensions is not None else 'displacement' for h in holds]
            commands = [np.asarray(h.commands, dtype=float) for h in holds]
            results = self.map([(robot.to_dict(), model, commands, modes, step, piece_length)
                                for robot in robots], _solve_path)
            return Batch(points=[r[0] for r in results], rotations=[r[1] for r in results],
                         memory=[None] * len(holds))
        results = self.map(self._tasks(robots, holds, model, step, memory), _solve_batch)
        return Batch(points=[np.concatenate([r[0][k] for r in results])
                             for k in range(len(robots))],
                     rotations=[np.concatenate([r[1][k] for r in results])
                                for k in range(len(robots))],
                     memory=[m for r in results for m in r[2]])

    def linear_batch(self, robots: Sequence[Robot], holds: Sequence[Hold], model: str,
                     step: float | None, memory: Sequence) -> tuple:
        """
        Points (k, m, 3) of ``holds`` for robots near the first, to first order, in parallel.

        ``memory``: the first robot's warm-start memory after each hold's solve
        (:attr:`Batch.memory`; None where it has no solution: NaN points). A statics model.
        Also returns per hold that memory with a fresh Jacobian and the steps (k - 1, n) of the
        unknowns to the other robots' solutions (None: no solution).
        """
        results = self.map(self._tasks(robots, holds, model, step, memory), _linear_batch)
        return (np.concatenate([r[0] for r in results], axis=1),
                [m for r in results for m in r[1]], [s for r in results for s in r[2]])

    def _tasks(self, robots, holds, model, step, memory) -> list[tuple]:
        """One task per worker: robots, model, a contiguous chunk of the holds, step, memory."""
        modes = ['tension' if h.tensions is not None else 'displacement' for h in holds]
        commands = [np.asarray(h.commands, dtype=float) for h in holds]
        memory = list(memory) if memory is not None else [None] * len(holds)
        chunks = max(1, min(len(holds), self.workers))
        bounds = np.linspace(0, len(holds), chunks + 1).astype(int)
        data = [robot.to_dict() for robot in robots]
        return [(data, model, commands[a:b], modes[a:b], step, memory[a:b])
                for a, b in zip(bounds[:-1], bounds[1:])]

    def predict_many(self, robots: Sequence[Robot], holds: Sequence[Hold],
                     model: str) -> list[np.ndarray]:
        """Predicted measured points (m, 3) of ``holds`` per robot; NaN: no equilibrium."""
        return self.solve_batch(robots, holds, model).points


def predict(robot: Robot, holds: Sequence[Hold], model: str = 'discrete',
            workers: int | None = 1, scheduler: Scheduler | str | None = None,
            step: float | None = None, piece_length: float | None = None,
            history: Sequence[Hold] = ()) -> np.ndarray:
    """
    Predicted measured point (m, 3) [m, base frame] of each hold; NaN: no equilibrium.

    ``history``: holds the robot went through just before (a recording that this one
    continues). A path-dependent model (friction) solves them first, in order, and starts
    ``holds`` from the state they leave; their points are not returned.
    """
    if not path_dependent([robot], model):
        history = ()        # each hold is solved on its own: the history changes nothing
    with Evaluator(workers, scheduler) as evaluator:
        return evaluator.solve_batch([robot], [*history, *holds], model, step,
                                     piece_length=piece_length).points[0][len(history):]


def path_dependent(robots: Sequence[Robot], model: str) -> bool:
    """Return True if ``model``'s prediction of a hold depends on the holds before it."""
    return model != 'dynamic' and any(has_friction(robot) for robot in robots)


# --------------------------------------------------------------------------- validation


class _ErrorStatistics:
    """Mean, max and RMS of ``self.errors`` (m)."""

    errors: np.ndarray

    @property
    def mean(self) -> float:
        return float(self.errors.mean())

    @property
    def max(self) -> float:  # noqa: A003 (next to mean and rms)
        return float(self.errors.max())

    @property
    def rms(self) -> float:
        return float(np.sqrt(np.mean(self.errors ** 2)))


@dataclass(frozen=True)
class Validation(_ErrorStatistics):
    """Per-hold comparison of measured and predicted tips. Lengths in m."""

    model: str
    robot: Robot
    holds: tuple[Hold, ...]
    predicted: np.ndarray      # (m, 3) m
    errors: np.ndarray         # (m,) m, |predicted - measured|

    @property
    def errors_percent(self) -> np.ndarray:
        """Errors in % of the rod length."""
        return 100.0 * self.errors / self.robot.rod.length

    def table(self) -> str:
        """Markdown table: one row per hold."""
        names = self.robot.tendon_names
        unit = 'N' if self.holds[0].tensions is not None else 'm'
        head = (['hold'] + [f'{n} [{unit}]' for n in names]
                + ['measured tip [mm]', 'predicted tip [mm]', 'error [mm]', 'error [% L]'])
        rows = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
        for i, hold in enumerate(self.holds):
            cells = ([str(i + 1)] + [f'{v:.4g}' for v in hold.commands]
                     + [_mm(hold.tip), _mm(self.predicted[i]), f'{self.errors[i] * 1e3:.3f}',
                        f'{self.errors_percent[i]:.3f}'])
            rows.append('| ' + ' | '.join(cells) + ' |')
        return '\n'.join(rows)

    def summary(self) -> str:
        length = self.robot.rod.length
        return (f'{len(self.holds)} holds, model {self.model}: tip error mean '
                f'{self.mean * 1e3:.3f} mm ({100 * self.mean / length:.3f} % of L), max '
                f'{self.max * 1e3:.3f} mm ({100 * self.max / length:.3f} %), RMS '
                f'{self.rms * 1e3:.3f} mm ({100 * self.rms / length:.3f} %)')


def _tension_sources(holds: Sequence[Hold]) -> list[str]:
    """Return the report's line saying which topic the holds' tensions are from, if known."""
    counts = Counter(hold.tension_topic for hold in holds if hold.tension_topic)
    if not counts:
        return []
    means = {STATE_TOPIC: ' (the mean over the steady part)'}
    topics = ', '.join(f'`{topic}`{means.get(topic, "")} for {count} of {len(holds)} holds'
                       for topic, count in sorted(counts.items()))
    return [f'Tensions from {topics}.', '']


def _mm(point: np.ndarray) -> str:
    return '(' + ', '.join(f'{v * 1e3:.2f}' for v in point) + ')'


def no_equilibrium(model: str, points: int) -> ConvergenceError:
    """
    Return the error of a run in which none of ``points`` points has an equilibrium.

    A valid input without a result (exit 1): the robot cannot take the recorded inputs, or
    the file is not the robot recorded; what was fitted or predicted is no result.
    """
    return ConvergenceError(f'model {model}: none of the {points} points has an equilibrium '
                            '(is the robot file the robot recorded, and are its inputs in the '
                            'units the robot takes?)', math.nan, 0)


def validate(robot: Robot, holds: Sequence[Hold], model: str = 'discrete',
             workers: int | None = 1, scheduler: Scheduler | str | None = None,
             step: float | None = None, piece_length: float | None = None,
             history: Sequence[Hold] = ()) -> Validation:
    """Predict every hold (after ``history``: :func:`predict`); compare with the measured tip."""
    if not holds:
        raise CalibrationError('holds: none to validate')
    predicted = predict(robot, holds, model, workers, scheduler, step, piece_length, history)
    failed = np.flatnonzero(np.isnan(predicted[:, 0]))
    if failed.size:
        commands = np.round(holds[failed[0]].commands, 6).tolist()
        raise ConvergenceError(f'{model} statics: no equilibrium found for hold '
                               f'{failed[0] + 1} of {len(holds)} (commands {commands})',
                               math.nan, 0)
    measured = np.array([h.tip for h in holds])
    return Validation(model=model, robot=robot, holds=tuple(holds), predicted=predicted,
                      errors=np.linalg.norm(predicted - measured, axis=1))


def closest(validations: Sequence[Validation]) -> str:
    """
    Say which model is closest to the data (lowest RMS tip error) and by how much.

    One line, e.g. ``closest to the data: discrete (RMS 0.23 mm); then cosserat 0.59 mm
    (2.6 x), kirchhoff 0.93 mm (4.1 x)``.
    """
    ranked = sorted(validations, key=lambda v: v.rms)
    best = ranked[0]
    rest = ', '.join(f'{v.model} {v.rms * 1e3:.3g} mm ({v.rms / best.rms:.2g} x)'
                     for v in ranked[1:])
    return (f'closest to the data: {best.model} (RMS tip error {best.rms * 1e3:.3g} mm)'
            + (f'; then {rest}' if rest else ''))


def error_scale(span: float, largest: float) -> float:
    """
    Return how many times to enlarge the tip errors so they show on a plot of ``span``.

    The largest error drawn about a tenth of the span, the factor a round 1, 2 or 5 times a
    power of ten (never below 1): a 0.5 mm error on a 250 mm plot is a dot, drawn 50 x it is
    an arrow.
    """
    if not largest > 0.0:
        return 1.0
    wanted = 0.1 * span / largest
    if wanted <= 1.0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(wanted))
    return max(step * power for step in (1.0, 2.0, 5.0) if step * power <= wanted)


def _label_groups(points: np.ndarray, distance: float) -> list[tuple[np.ndarray, str]]:
    """
    Gather the 1-based numbers of ``points`` (k, 2) closer than ``distance`` to a group's first.

    One label per group ('3,7,12'): labels of holds that lie on one another overlapped.
    """
    groups: list[tuple[np.ndarray, list[int]]] = []
    for i, point in enumerate(points):
        for anchor, members in groups:
            if np.linalg.norm(point - anchor) < distance:
                members.append(i + 1)
                break
        else:
            groups.append((point, [i + 1]))
    return [(anchor, ','.join(map(str, members))) for anchor, members in groups]


def tips_figure(measured: np.ndarray, validations: Sequence[Validation]):
    """
    Return the figure of the tips per hold (mm, base frame): top, side and front projections.

    The measured tips are circles numbered by hold; each model's error is an arrow from the
    measured tip towards the predicted one, enlarged by :func:`error_scale` of its own largest
    error (the legend says by how much), so errors far below the robot's size show.
    """
    from matplotlib import pyplot as plt

    span = float(np.ptp(measured, axis=0).max()) or 1.0
    # a factor per model: one model 10 times better than another still shows its errors
    scales = [error_scale(span, float(np.max(v.errors)) * 1e3) for v in validations]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.6))
    for axis, (a, b, label) in zip(axes, ((0, 1, 'x-y (top)'), (0, 2, 'x-z (side)'),
                                          (1, 2, 'y-z (front)'))):
        axis.plot(measured[:, a], measured[:, b], 'o', mfc='none', color='0.3', label='measured')
        for k, (v, scale) in enumerate(zip(validations, scales)):
            error = v.predicted * 1e3 - measured
            axis.quiver(measured[:, a], measured[:, b], error[:, a], error[:, b], angles='xy',
                        scale_units='xy', scale=1.0 / scale, color=f'C{k}', width=0.005,
                        label=f'{v.model}: error x {scale:g} (largest '
                              f'{np.max(v.errors) * 1e3:.3g} mm)')
            # quiver leaves the arrow heads out of the limits
            heads = measured + scale * error
            axis.update_datalim(heads[:, [a, b]])
        shown = measured[:, [a, b]]
        extent = max(float(np.ptp(shown, axis=0).max()), 1e-9)
        for anchor, text in _label_groups(shown, 0.08 * extent):
            axis.annotate(text, anchor, fontsize=7, xytext=(4, 4), textcoords='offset points')
        axis.set_xlabel('xyz'[a] + ' [mm]')
        axis.set_ylabel('xyz'[b] + ' [mm]')
        axis.set_title(label)
        axis.set_aspect('equal', adjustable='datalim')
        axis.grid(True, alpha=0.3)
    legend_beside(axes[-1], fontsize=8)     # not over the points
    fig.suptitle('tip per hold, base frame: measured (numbered) and the error towards each '
                 "model's prediction, enlarged by the legend's factor")
    fig.tight_layout()
    return fig


def write_report(directory: str | Path, validation: Validation | Sequence[Validation],
                 source: str = '', trajectory: Trajectory | None = None,
                 fits: Sequence | None = None) -> Path:
    """
    Write ``report.md``, ``tips.png`` and ``error_vs_tension.png`` into ``directory``.

    ``validation``: one model's, or several models' on the same holds, compared side by
    side (the report says which is closest to the data); ``fits``: the calibration that gave
    each model its robot, if any. With a ``trajectory`` (:func:`replay_dynamic`) also
    ``trajectory.png``.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    validations = [validation] if isinstance(validation, Validation) else list(validation)
    best = min(validations, key=lambda v: v.rms)
    directory = Path(directory)
    make_folder(directory)
    measured = np.array([h.tip for h in best.holds]) * 1e3
    index = np.arange(1, len(best.holds) + 1)

    fig = tips_figure(measured, validations)
    save_figure(fig, directory / 'tips.png', dpi=110)
    plt.close(fig)

    fig, axis = plt.subplots(figsize=(6, 4))
    commands = np.array([h.commands for h in best.holds])
    total = commands.sum(axis=1)
    for v in validations:
        axis.plot(total, v.errors * 1e3, 'o', label=v.model)
    for i in range(len(index)):
        axis.annotate(str(index[i]), (total[i], best.errors[i] * 1e3), fontsize=7,
                      xytext=(3, 3), textcoords='offset points')
    unit = 'N' if best.holds[0].tensions is not None else 'm'
    kind = 'tension' if unit == 'N' else 'displacement'
    axis.set_xlabel(f'sum of tendon {kind}s [{unit}]')
    axis.set_ylabel('tip error [mm]')
    axis.set_title('tip error per hold (' + ', '.join(v.model for v in validations) + ')')
    axis.grid(True, alpha=0.3)
    if len(validations) > 1:
        axis.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, directory / 'error_vs_tension.png', dpi=110)
    plt.close(fig)

    rod = best.robot.rod
    text = [f'# Validation report: {best.robot.name}', '', f'Written by {produced_by()}.', '']
    if source:
        text += [f'Recording: `{source}`', '']
    if len(validations) > 1:
        text += ['## Models side by side', '',
                 '| model | E [Pa] | G [Pa] | mean [mm] | max [mm] | RMS [mm] | RMS [% of L] |',
                 '|---|---|---|---|---|---|---|']
        for v in validations:
            text.append(f'| `{v.model}` | {v.robot.rod.youngs_modulus:.6g} | '
                        f'{v.robot.rod.shear_modulus:.6g} | {v.mean * 1e3:.3f} | '
                        f'{v.max * 1e3:.3f} | {v.rms * 1e3:.3f} | '
                        f'{100 * v.rms / rod.length:.3f} |')
        text += ['', closest(validations)[0].upper() + closest(validations)[1:] + '.', '']
        if fits:
            text += [f'Each model was first calibrated on these holds ({", ".join(fits[0].names)}'
                     ', from the robot file): its error is its best fit, a lower bound of what '
                     'it predicts for new holds.', '']
        text += [f'The holds below are those of the closest model, `{best.model}`.', '']
    text += [f'Model: `{best.model}`; E = {rod.youngs_modulus:.6g} Pa, '
             f'G = {rod.shear_modulus:.6g} Pa, L = {rod.length:g} m.', '',
             best.summary() + '.', '',
             '| | mm | % of length |', '|---|---|---|',
             f'| mean | {best.mean * 1e3:.3f} | {100 * best.mean / rod.length:.3f} |',
             f'| max | {best.max * 1e3:.3f} | {100 * best.max / rod.length:.3f} |',
             f'| RMS | {best.rms * 1e3:.3f} | {100 * best.rms / rod.length:.3f} |',
             '', '## Holds', '', best.table(), '', *_tension_sources(best.holds),
             '## Plots', '',
             '![measured and predicted tips](tips.png)', '',
             '![error vs tension](error_vs_tension.png)', '']
    if trajectory is not None:
        _plot_trajectory(directory / 'trajectory.png', trajectory)
        text += ['## Dynamic replay of the whole recording', '',
                 f'The dynamic simulator settled {trajectory.settle_time:.2f} s under the '
                 'first command, then followed the recorded tensions.', '',
                 trajectory.summary() + '.', '',
                 '![tip over time](trajectory.png)', '']
    path = directory / 'report.md'
    write_output(path, '\n'.join(text))
    return path


# --------------------------------------------------------------------------- replay


@dataclass(frozen=True)
class Trajectory(_ErrorStatistics):
    """Measured and simulated tip over a recording. Times in s, lengths in m."""

    times: np.ndarray        # (j,) s from the recording start (tip sample times)
    measured: np.ndarray     # (j, 3) m
    simulated: np.ndarray    # (j, 3) m
    errors: np.ndarray       # (j,) m
    settle_time: float       # s simulated before the recording starts (first command)

    def summary(self) -> str:
        return (f'dynamic replay of {self.times[-1] - self.times[0]:.1f} s: tip error over '
                f'time mean {self.mean * 1e3:.3f} mm, max {self.max * 1e3:.3f} mm, RMS '
                f'{self.rms * 1e3:.3f} mm')


def replay_dynamic(robot: Robot, recording: Recording, max_settle: float = DYNAMIC_MAX_TIME,
                   progress: bool = False, settle_time: float | None = None) -> Trajectory:
    """
    Replay a recording's tension series through the dynamic simulator.

    The simulator first settles under the first command (the real robot was at rest
    when the recording started): until steady, at most ``max_settle`` s of simulated
    time, or exactly ``settle_time`` s when given (calibration: every parameter set
    starts the same way, so the residuals are smooth in the parameters). Then it
    applies each command at its recorded time; the simulated tip is taken at the time
    of each tip sample. The tensions are the applied ones (``tendon/state`` beside tension
    setpoints: :meth:`Recording.applied_series`), else the commands.
    """
    from tendon_robot_sim.models.rod.dynamics.factory import dynamic_simulator

    if recording.kind != 'tension':
        raise CalibrationError('model: the dynamic replay takes tensions; this recording '
                               'has displacement setpoints')
    times, tensions = recording.applied_series()
    simulator = dynamic_simulator(robot)
    simulator.set_tensions(tensions[0])
    if settle_time is None:
        simulator.come_to_rest(max_settle)
    else:
        simulator.come_to_rest(settle_time, exact=True)
    offset = simulator.time - times[0]
    simulated = np.empty_like(recording.tips)
    command = 0
    for j, sample_time in enumerate(progress_bar(recording.tip_times, progress,
                                                 desc='dynamic replay', unit='sample')):
        while command + 1 < len(times) and times[command + 1] <= sample_time:
            command += 1
            advance_to(simulator, times[command] + offset)
            simulator.set_tensions(tensions[command])
        simulated[j] = advance_to(simulator, sample_time + offset).tip_position
    return Trajectory(times=recording.tip_times, measured=recording.tips, simulated=simulated,
                      errors=np.linalg.norm(simulated - recording.tips, axis=1),
                      settle_time=float(offset + times[0]))


def _plot_trajectory(path: Path, trajectory: Trajectory) -> None:
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(4, 1, figsize=(9, 8), sharex=True)
    for k, axis in enumerate(axes[:3]):
        axis.plot(trajectory.times, trajectory.measured[:, k] * 1e3, '.', ms=2,
                  label='measured')
        axis.plot(trajectory.times, trajectory.simulated[:, k] * 1e3, '-', lw=1,
                  label='simulated (dynamic)')
        axis.set_ylabel('xyz'[k] + ' [mm]')
        axis.grid(True, alpha=0.3)
    legend_beside(axes[0], fontsize=8)     # not over the points
    axes[3].plot(trajectory.times, trajectory.errors * 1e3, '-', lw=1)
    axes[3].set_ylabel('error [mm]')
    axes[3].set_xlabel('time [s]')
    axes[3].grid(True, alpha=0.3)
    fig.suptitle('tip over time, base frame')
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    plt.close(fig)


def settle_time(robot: Robot) -> float:
    """Return the simulated seconds of a replay's settling: 8 time constants of the first mode."""
    from tendon_robot_sim.models.modal import mass_proportional_damping

    rate = mass_proportional_damping(robot)   # c: every mode decays as exp(-c t / 2)
    return DYNAMIC_MAX_TIME if rate <= 0.0 else min(DYNAMIC_MAX_TIME, 16.0 / rate)
