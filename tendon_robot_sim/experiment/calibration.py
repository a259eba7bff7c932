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
Predict, validate and calibrate against measured holds (:mod:`.experiment`).

* :func:`predict` solves each hold's equilibrium with one model: ``cosserat``,
  ``kirchhoff`` or ``discrete`` (statics solver, milliseconds per hold) or
  ``dynamic`` (PyElastica run until steady, seconds per hold; tensions only).
* :func:`validate` compares predictions with the measured tips; :func:`write_report`
  writes the Markdown summary and PNG plots.
* :func:`replay_dynamic` feeds a recording's whole tension series to the dynamic
  simulator and compares the simulated tip with the measured one over time.
* :func:`calibrate` fits robot parameters (:data:`FITTABLE`: ``youngs_modulus``,
  ``shear_modulus``, ``density``, ``radius``, ``vertebra_mass``, ``<tendon>.offset``,
  ``damping``, ``bending_torsion``, ``shear_extension``, ``drag``) by
  :func:`scipy.optimize.least_squares` on the tip residuals of the
  holds, or, given a ``recording`` (model ``dynamic``; needed for the damping and the drag,
  which have no static effect), on the tip residuals of its replay over time, in log-scaled
  parameters z = ln(p / p0), with bounds. Confidence: the covariance s^2 (J^T J)^-1
  of z at the solution, s^2 = RSS / (m - p), m residuals, p parameters; 95 %
  intervals p exp(+-t_{0.975, m-p} sigma_z).

The independent solves of one evaluation (all parameter sets of a finite-difference
Jacobian times chunks of holds) run in parallel: on local processes or on a Dask cluster
(:mod:`tendon_robot_sim.parallel`); ``workers=1`` solves in this process.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import sys
from typing import Sequence

import numpy as np

from tendon_robot_sim.experiment.experiment import advance_to, Hold, Recording
from tendon_robot_sim.files.outputs import make_folder, save_figure, write_output
from tendon_robot_sim.models.plotting import legend_beside
from tendon_robot_sim.models.rod.statics.solver import MODELS, StaticsSolver
from tendon_robot_sim.models.tendon_robot import Robot, robot_from_dict
from tendon_robot_sim.parallel import Pool, Scheduler

PREDICT_MODELS = MODELS + ('dynamic',)
# Rod fields the statics depend on (length does not fit: the vertebrae are placed by arc
# length), the vertebra mass, the hole offset of a tendon as '<tendon name>.offset', and
# the damping (its ratio or rate, as the description gives it; dynamic replays only).
ROD_PARAMETERS = ('youngs_modulus', 'shear_modulus', 'density', 'radius')
# Dynamic parameters, fitted to a recorded trajectory only: the mass-proportional damping,
# the Kelvin-Voigt coefficients and the drag (one value for all three components of a key,
# scaling them together; the implicit integrator replays robots that have them).
DYNAMIC_PARAMETERS = ('damping', 'bending_torsion', 'shear_extension', 'drag')
FITTABLE = ROD_PARAMETERS + ('vertebra_mass', '<tendon>.offset') + DYNAMIC_PARAMETERS
# Longest simulated time per hold of the dynamic model [s].
DYNAMIC_MAX_TIME = 20.0


class CalibrationError(ValueError):
    """Bad calibration input; the message names the option and the problem."""


# --------------------------------------------------------------------------- prediction


def _solve_chunk(task) -> np.ndarray:
    """Worker: tips (k, 3) of a chunk of holds for one robot. Picklable, module level."""
    robot_data, model, commands, modes = task
    robot = robot_from_dict(robot_data)
    tips = np.empty((len(commands), 3))
    if model == 'dynamic':
        from tendon_robot_sim.models.rod.dynamics.factory import dynamic_simulator
        simulator = dynamic_simulator(robot)
        for i, values in enumerate(commands):
            simulator.reset()
            simulator.set_tensions(values)
            tips[i] = simulator.run_until_steady(DYNAMIC_MAX_TIME).tip_position
        return tips
    solver = StaticsSolver(robot, model)
    for i, (values, mode) in enumerate(zip(commands, modes)):
        solve = solver.solve_tensions if mode == 'tension' else solver.solve_displacements
        tips[i] = solve(values).tip_position
    return tips


def _replay_task(task) -> np.ndarray:
    """Worker: the simulated tips of one replay. Picklable, module level."""
    robot_data, recording, settle_time = task
    return replay_dynamic(robot_from_dict(robot_data), recording,
                          settle_time=settle_time).simulated


class Evaluator(Pool):
    """
    A :class:`~tendon_robot_sim.parallel.Pool` that predicts holds and replays recordings.

    The solves of one evaluation (all parameter sets of a finite-difference Jacobian times
    chunks of holds) are independent tasks; see the pool for ``workers`` and ``scheduler``.
    """

    def replay_many(self, robots: Sequence[Robot], recording: Recording,
                    settle_time: float) -> list[np.ndarray]:
        """Return the simulated tips (j, 3) of :func:`replay_dynamic` per robot, in parallel."""
        return self.map([(robot.to_dict(), recording, settle_time) for robot in robots],
                        _replay_task)

    def predict_many(self, robots: Sequence[Robot], holds: Sequence[Hold],
                     model: str) -> list[np.ndarray]:
        """Predicted tips (m, 3) of ``holds`` for each robot, solved in parallel."""
        if model not in PREDICT_MODELS:
            raise CalibrationError(f'model: must be one of {list(PREDICT_MODELS)}, '
                                   f'got {model!r}')
        modes = ['tension' if h.tensions is not None else 'displacement' for h in holds]
        if model == 'dynamic' and 'displacement' in modes:
            raise CalibrationError('model: dynamic takes tensions only; these holds are '
                                   'displacements (use cosserat or discrete)')
        commands = [np.asarray(h.commands, dtype=float) for h in holds]
        chunks = max(1, min(len(holds), math.ceil(self.workers / len(robots))))
        bounds = np.linspace(0, len(holds), chunks + 1).astype(int)
        tasks = [(robot.to_dict(), model, commands[a:b], modes[a:b])
                 for robot in robots for a, b in zip(bounds[:-1], bounds[1:])]
        results = self.map(tasks, _solve_chunk)
        return [np.vstack(results[k * chunks:(k + 1) * chunks]) for k in range(len(robots))]


def predict(robot: Robot, holds: Sequence[Hold], model: str = 'discrete',
            workers: int | None = 1, scheduler: Scheduler | str | None = None) -> np.ndarray:
    """Predicted tip (m, 3) [m, base frame] of each hold."""
    with Evaluator(workers, scheduler) as evaluator:
        return evaluator.predict_many([robot], holds, model)[0]


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


def _mm(point: np.ndarray) -> str:
    return '(' + ', '.join(f'{v * 1e3:.2f}' for v in point) + ')'


def validate(robot: Robot, holds: Sequence[Hold], model: str = 'discrete',
             workers: int | None = 1, scheduler: Scheduler | str | None = None) -> Validation:
    """Predict every hold and compare with the measured tip."""
    if not holds:
        raise CalibrationError('holds: none to validate')
    predicted = predict(robot, holds, model, workers, scheduler)
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


def write_report(directory: str | Path, validation: Validation | Sequence[Validation],
                 source: str = '', trajectory: Trajectory | None = None,
                 fits: Sequence[Calibration] | None = None) -> Path:
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

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for axis, (a, b, label) in zip(axes, ((0, 1, 'x-y (top)'), (0, 2, 'x-z (side)'),
                                          (1, 2, 'y-z (front)'))):
        axis.plot(measured[:, a], measured[:, b], 'o', mfc='none', label='measured')
        for v, marker in zip(validations, 'x+1234'):
            predicted = v.predicted * 1e3
            axis.plot(predicted[:, a], predicted[:, b], marker, label=f'predicted ({v.model})')
        for i, point in enumerate(measured):
            axis.annotate(str(index[i]), point[[a, b]], fontsize=7, xytext=(3, 3),
                          textcoords='offset points')
        axis.set_xlabel('xyz'[a] + ' [mm]')
        axis.set_ylabel('xyz'[b] + ' [mm]')
        axis.set_title(label)
        axis.set_aspect('equal', adjustable='datalim')
        axis.grid(True, alpha=0.3)
    legend_beside(axes[0], fontsize=8)     # not over the points
    fig.suptitle('tip per hold, base frame')
    fig.tight_layout()
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
    text = [f'# Validation report: {best.robot.name}', '']
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
             '', '## Holds', '', best.table(), '', '## Plots', '',
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
    of each tip sample.
    """
    from tqdm import tqdm

    from tendon_robot_sim.models.rod.dynamics.factory import dynamic_simulator

    if recording.kind != 'tension':
        raise CalibrationError('model: the dynamic replay takes tensions; this recording '
                               'has displacement setpoints')
    simulator = dynamic_simulator(robot)
    simulator.set_tensions(recording.commands[0])
    if settle_time is None:
        simulator.come_to_rest(max_settle)
    else:
        simulator.come_to_rest(settle_time, exact=True)
    offset = simulator.time - recording.command_times[0]
    simulated = np.empty_like(recording.tips)
    command = 0
    times = recording.command_times
    for j, sample_time in enumerate(tqdm(recording.tip_times, desc='dynamic replay',
                                         unit='sample', file=sys.stderr,
                                         disable=not progress)):
        while command + 1 < len(times) and times[command + 1] <= sample_time:
            command += 1
            advance_to(simulator, times[command] + offset)
            simulator.set_tensions(recording.commands[command])
        simulated[j] = advance_to(simulator, sample_time + offset).tip_position
    return Trajectory(times=recording.tip_times, measured=recording.tips, simulated=simulated,
                      errors=np.linalg.norm(simulated - recording.tips, axis=1),
                      settle_time=float(offset + recording.command_times[0]))


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


# --------------------------------------------------------------------------- calibration


def _settle_time(robot: Robot) -> float:
    """Return the simulated seconds of a replay's settling: 8 time constants of the first mode."""
    from tendon_robot_sim.models.modal import mass_proportional_damping

    rate = mass_proportional_damping(robot)   # c: every mode decays as exp(-c t / 2)
    return DYNAMIC_MAX_TIME if rate <= 0.0 else min(DYNAMIC_MAX_TIME, 16.0 / rate)


def _tendon_parameter(robot: Robot, name: str) -> int | None:
    """Index of the tendon of a '<tendon>.offset' parameter; None for other names."""
    tendon, dot, field = name.rpartition('.')
    if not dot:
        return None
    if field != 'offset' or tendon not in robot.tendon_names:
        raise CalibrationError(f'fit: unknown parameter {name!r}; fittable: '
                               f'{list(ROD_PARAMETERS)}, vertebra_mass, damping, or '
                               f'<tendon>.offset with a tendon of {robot.tendon_names}')
    return robot.tendon_index(tendon)


def _vector_parameter(robot: Robot, name: str):
    """Return the three values of a Kelvin-Voigt key or of the drag; None without that form."""
    if name == 'drag':
        return robot.rod.drag
    return getattr(robot.rod.damping, name)


def parameter_value(robot: Robot, name: str) -> float:
    """Return the current value of a fittable parameter (SI units)."""
    index = _tendon_parameter(robot, name)
    if index is not None:
        return float(robot.tendons[index].offset)
    if name == 'vertebra_mass':
        if not robot.vertebra_positions.size:
            raise CalibrationError('fit: vertebra_mass: this robot has no vertebrae to weigh')
        return float(robot.vertebra_mass)
    if name == 'damping':
        damping = robot.rod.damping
        if damping.kelvin_voigt:
            raise CalibrationError('fit: damping: this robot has the Kelvin-Voigt form; fit '
                                   'bending_torsion or shear_extension')
        return float(damping.ratio if damping.ratio is not None else damping.rate)
    if name in ('bending_torsion', 'shear_extension', 'drag'):
        values = _vector_parameter(robot, name)
        if values is None:
            raise CalibrationError(f'fit: {name}: this robot has no Kelvin-Voigt damping '
                                   '(rod.damping: {shear_extension, bending_torsion})')
        return float(values[0])
    if name in ROD_PARAMETERS:
        return float(getattr(robot.rod, name))
    raise CalibrationError(f'fit: unknown parameter {name!r}; fittable: {list(FITTABLE)}')


def with_parameters(robot: Robot, values: dict[str, float]) -> Robot:
    """
    Return a copy of ``robot`` with fittable parameters replaced.

    A tendon's offset moves its hole along its whole length (``end_offset`` too when
    the routing is parallel, which needs them equal).
    """
    data = robot.to_dict()
    for name, value in values.items():
        index = _tendon_parameter(robot, name)
        if index is not None:
            tendon = data['tendons'][index]
            if tendon['routing'] == 'parallel':
                tendon['end_offset'] = float(value)
            tendon['offset'] = float(value)
        elif name == 'vertebra_mass':
            if 'vertebrae' not in data:
                raise CalibrationError('vertebra_mass: this robot has no vertebrae to weigh')
            data['vertebrae']['mass'] = float(value)
        elif name == 'damping':      # the ratio or the rate, whichever the robot gives
            data['rod']['damping'] = {next(iter(data['rod']['damping'])): float(value)}
        elif name in ('bending_torsion', 'shear_extension', 'drag'):
            # the three components together, in their proportions
            old = np.asarray(_vector_parameter(robot, name), dtype=float)
            new = old * (value / old[0]) if old[0] > 0.0 else np.full(3, float(value))
            target = data['rod'] if name == 'drag' else data['rod']['damping']
            target[name] = new.tolist()
        else:
            data['rod'][name] = float(value)
    return robot_from_dict(data)


@dataclass(frozen=True)
class Calibration:
    """Result of :func:`calibrate`."""

    robot: Robot                       # the calibrated robot
    names: tuple[str, ...]             # fitted parameters
    initial: np.ndarray                # (p,) initial values
    values: np.ndarray                 # (p,) fitted values
    intervals: np.ndarray              # (p, 2) 95 % confidence intervals
    rms_before: float                  # m, RMS tip error with the initial values
    rms_after: float                   # m
    evaluations: int                   # residual evaluations (parameter sets solved)

    def summary(self) -> str:
        lines = []
        for name, start, value, (low, high) in zip(self.names, self.initial, self.values,
                                                   self.intervals):
            lines.append(f'{name}: {value:.6g} (95 % interval {low:.6g} .. {high:.6g}; '
                         f'initial {start:.6g})')
        lines.append(f'RMS tip error: {self.rms_before * 1e3:.3f} mm before, '
                     f'{self.rms_after * 1e3:.3f} mm after')
        return '\n'.join(lines)


def calibrate(robot: Robot, holds: Sequence[Hold], fit: Sequence[str] = ('youngs_modulus',),
              bounds: dict[str, tuple[float, float]] | None = None, model: str = 'discrete',
              workers: int | None = None, scheduler: Scheduler | str | None = None,
              progress: bool = True, recording: Recording | None = None) -> Calibration:
    """
    Least-squares fit of rod parameters to the measured tips.

    Parameters
    ----------
    robot : Robot
        Initial guess; its values scale the parameters.
    holds : sequence of Hold
        The steady tips to fit (ignored when ``recording`` is given).
    fit : sequence of str
        Parameters to fit (:data:`FITTABLE`), e.g. ``['youngs_modulus', 't1.offset']``.
    bounds : dict {name: (low, high)}, optional
        In the field's unit; default (initial / 10, initial x 10).
    model : str
        A statics model (``cosserat``, ``kirchhoff``, ``discrete``) or ``dynamic``.
    workers, scheduler
        See :class:`Evaluator`.
    progress : bool
        A tqdm bar on stderr over residual evaluations.
    recording : Recording, optional
        Fit the whole tip trajectory of this (tension) recording instead of the holds,
        replayed by :func:`replay_dynamic` (model ``dynamic``). Each replay first
        settles for the same simulated time: 8 time constants 1 / (zeta omega_1) of the
        initial robot's first mode (at most ``DYNAMIC_MAX_TIME``), so that
        the residuals are smooth in the parameters.

    """
    from scipy.optimize import least_squares
    from scipy.stats import t as student_t
    from tqdm import tqdm

    names = tuple(fit)
    if not names:
        raise CalibrationError('fit: name at least one parameter')
    initial = np.array([parameter_value(robot, name) for name in names])
    if len(set(names)) != len(names):
        raise CalibrationError(f'fit: a parameter is given twice: {list(names)}')
    bounds = dict(bounds or {})
    for name in bounds:
        if name not in names:
            raise CalibrationError(f'bounds: {name!r} is not fitted ({list(names)})')
    low = np.empty(len(names))
    high = np.empty(len(names))
    for i, name in enumerate(names):
        # a hole stays within its discs (the description's rule): no trial beyond them
        rim = (robot.disc_radius if name.endswith('.offset') and robot.vertebra_positions.size
               else math.inf)
        lo, hi = bounds.get(name, (initial[i] / 10.0, min(initial[i] * 10.0, rim)))
        if not (0.0 < lo < hi and lo <= initial[i] <= hi):
            raise CalibrationError(f'bounds: {name} needs 0 < low <= initial ({initial[i]:g}) '
                                   f'<= high, got ({lo:g}, {hi:g})')
        low[i], high[i] = math.log(lo / initial[i]), math.log(hi / initial[i])
    if recording is not None:
        if model != 'dynamic':
            raise CalibrationError(f'model: fitting a trajectory needs model dynamic, got '
                                   f'{model!r}')
        measured = recording.tips.ravel()
        settle_time = _settle_time(robot)
    else:
        dynamic = [name for name in names if name in DYNAMIC_PARAMETERS]
        if dynamic:
            raise CalibrationError(f'fit: {dynamic[0]} has no static effect; fit it to a '
                                   'recorded trajectory (model dynamic, a step response)')
        measured = np.array([h.tip for h in holds]).ravel()
    m = measured.size
    if m <= len(names):
        raise CalibrationError(f'holds: {m // 3} tips give {m} residuals, too few for '
                               f'{len(names)} parameters')

    def robot_at(z: np.ndarray) -> Robot:
        return with_parameters(robot, dict(zip(names, initial * np.exp(z))))

    cache = {}
    step = 1e-4   # forward-difference step in z (relative change of the parameter)

    def evaluate(zs: list[np.ndarray]) -> list[np.ndarray]:
        missing = [z for z in zs if z.tobytes() not in cache]
        if missing:
            robots = [robot_at(z) for z in missing]
            tips = (evaluator.replay_many(robots, recording, settle_time) if recording
                    is not None else evaluator.predict_many(robots, holds, model))
            for z, t in zip(missing, tips):
                cache[z.tobytes()] = t.ravel() - measured
            bar.update(len(missing))
        return [cache[z.tobytes()] for z in zs]

    def residual(z):
        return evaluate([np.asarray(z, dtype=float)])[0]

    def jacobian(z):
        z = np.asarray(z, dtype=float)
        shifted = []
        for j in range(len(z)):
            zj = z.copy()
            # step into the bounds
            zj[j] += step if zj[j] + step <= high[j] else -step
            shifted.append(zj)
        values = evaluate([z] + shifted)
        return np.column_stack([(v - values[0]) / (s[j] - z[j])
                                for j, (v, s) in enumerate(zip(values[1:], shifted))])

    with Evaluator(workers, scheduler) as evaluator:
        bar = tqdm(desc='calibrate (parameter sets)', unit='set', file=sys.stderr,
                   disable=not progress)
        try:
            z0 = np.zeros(len(names))
            rms_before = float(np.sqrt(np.mean(residual(z0) ** 2) * 3))
            solution = least_squares(residual, z0, jac=jacobian, bounds=(low, high),
                                     x_scale=1.0, xtol=1e-10, ftol=1e-12, gtol=1e-12)
            J = jacobian(solution.x)
        finally:
            bar.close()
    r = residual(solution.x)
    dof = m - len(names)
    s2 = float(r @ r) / dof
    try:
        covariance = s2 * np.linalg.inv(J.T @ J)
    except np.linalg.LinAlgError:
        raise CalibrationError(f'fit: the holds do not determine {list(names)} (singular '
                               'Jacobian); add holds that excite them') from None
    sigma = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    values = initial * np.exp(solution.x)
    quantile = float(student_t.ppf(0.975, dof))
    intervals = np.column_stack((values * np.exp(-quantile * sigma),
                                 values * np.exp(quantile * sigma)))
    return Calibration(robot=robot_at(solution.x), names=names, initial=initial, values=values,
                       intervals=intervals, rms_before=rms_before,
                       rms_after=float(np.sqrt(np.mean(r ** 2) * 3)),
                       evaluations=len(cache))
