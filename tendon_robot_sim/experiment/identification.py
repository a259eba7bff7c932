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
Parameter identification of a bellows robot's CC dynamics (Hadzic & Häseli's procedure).

Stiffnesses from static points (Hadzic & Häseli, "Parameter identification - stiffnesses": at rest
q' = q'' = 0 and the Lagrange equations become linear in the stiffnesses): for each
measured point (pressures p, bellows lengths q) the section coordinates are
x = lengths^+ q, and for section j

    sum_i k_i B_i^T (B_i x_j - q0_i) + k_b (0, u_x, u_y) = (G p + Q_g(x))_j - k_c (l - l0) e_l,

three equations linear in (k_1 .. k_m, k_b) per point: linear least squares over all
points, with 95 % confidence intervals from the residual variance (Student t). The spline
spring k_c is held at its described value: for bellows spaced evenly around the spline,
equal bellows springs act exactly like k_c plus k_b (sum_i B_i^T B_i has no other
direction), so static points cannot separate k_c from the bellows.

Damping from step responses (Hadzic & Häseli, "Parameter identification - damping
coefficient"):
the bellows damper (one value per section, shared by its bellows) and the spline damper of
every section by nonlinear least squares on the simulated bellows lengths of a recorded
run (log-scaled, scipy ``least_squares``), intervals from the Jacobian.

Masses, areas, offsets and rest lengths are taken from the description. No ROS imports.

Sources: a CSV file (:func:`read_samples`) or a rosbag2 bag of ``tendon/state``
(sensor_msgs/JointState, one joint per bellows named as in the description: ``effort`` =
gauge pressure [Pa], ``position`` = contraction [m], how much shorter the bellows is than on
the straight robot at rest, as the simulator publishes it in ``mode: cc_dynamic``; header
stamp = time of the measurement). :func:`read_run` reads such a bag,
:func:`static_points` finds its static points (pressures steady, lengths settled: the hold
detection of :func:`tendon_robot_sim.experiment.stretches.steady_stretches`) and
:func:`response_from_rest` cuts out its first step response, from the end of the first
static point, for the damping fit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import math
from pathlib import Path

import numpy as np

from tendon_robot_sim.experiment.csv_table import (check_increasing, read_table, Table,
                                                   TableError)
from tendon_robot_sim.experiment.experiment import (check_recorded_types, ExperimentError,
                                                    STATE_TOPIC, TIP_COLUMNS, TIP_TOPIC)
from tendon_robot_sim.experiment.fit_parameters import at_bound
from tendon_robot_sim.experiment.recorded import check_finite, joint_field
from tendon_robot_sim.experiment.stretches import steady_stretches
from tendon_robot_sim.models.description import PHYSICAL_RANGES
from tendon_robot_sim.models.trunk.dynamics import (CCDynamics, CCNoSolutionError,
                                                    DEFAULT_TIME_STEP)
from tendon_robot_sim.models.trunk.robot import BellowsRobot

LENGTH_SUFFIX = '_length'
# The time column of a CSV run: 't' (as in input profiles) or 'time'.
TIME_COLUMNS = ('t', 'time')
# Measured pressures within this of a stretch's first sample are the same input [Pa]:
# 1 % of the bellows' working pressure of about 1 bar.
PRESSURE_TOLERANCE = 1e3
# A damper fitted (as a logarithm) down to this fraction of the described one is as good as
# none: the fit's lower bound, short of the description's 0.
DAMPER_FRACTION = 1e-6


class IdentificationError(ValueError):
    """Data that cannot identify the parameters; the message says why."""


@dataclass(frozen=True)
class Estimate:
    """Identified parameters of a bellows robot."""

    robot: BellowsRobot            # the description with the identified values
    names: tuple[str, ...]         # 'section.parameter' or 'section.bellows.parameter'
    values: np.ndarray             # (p,) SI units
    intervals: np.ndarray          # (p, 2) 95 % confidence intervals
    rms_before: float              # residual RMS with the initial values (N or m)
    rms_after: float
    unit: str                      # unit of the residuals: 'N' (statics) or 'm' (lengths)
    warnings: tuple[str, ...] = ()   # a value at the description's limit

    def summary(self) -> str:
        lines = [f'{name}: {value:.6g} (95 % interval {low:.6g} .. {high:.6g})'
                 for name, value, (low, high) in zip(self.names, self.values, self.intervals)]
        lines.append(f'RMS residual: {self.rms_before:.4g} {self.unit} before, '
                     f'{self.rms_after:.4g} {self.unit} after')
        lines += [f'warning: {text}' for text in self.warnings]
        return '\n'.join(lines)


def _limits(keys) -> tuple[np.ndarray, np.ndarray]:
    """Return the values the description loader takes under ``keys`` (PHYSICAL_RANGES)."""
    return (np.array([PHYSICAL_RANGES[key][0] for key in keys]),
            np.array([PHYSICAL_RANGES[key][1] for key in keys]))


def _at_limits(names, keys, values, active, lowest=None) -> list[str]:
    """
    Warn of each value a bounded fit left at its limit (``active``: -1 lower, 1 upper).

    ``lowest``: lower bounds of the fit's own above the description's (dampers, fitted as
    logarithms, cannot reach its 0).
    """
    own = 'as good as none; check the model and the data (--fit stiffness,damping)'
    return [at_bound(name, 'lower' if side < 0 else 'upper', value,
                     '' if side < 0 and lowest is not None else key, own)
            for name, key, value, side in zip(names, keys, values, active) if side]


def read_samples(path: str | Path, robot: BellowsRobot
                 ) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """
    Read the samples of a CSV file.

    Per bellows a pressure column named as the bellows [Pa] and a length column
    ``<name>_length`` [m], and for a recorded run a time column ``t`` (or ``time``) [s].

    Returns (times or None, pressures (k, m), lengths (k, m)).
    """
    names = robot.actuator_names
    table = _read_table(path, names + [n + LENGTH_SUFFIX for n in names])
    time = next((table.column(c) for c in TIME_COLUMNS if c in table.header), None)
    return (time, np.column_stack([table.column(n) for n in names]),
            np.column_stack([table.column(n + LENGTH_SUFFIX) for n in names]))


def read_run_csv(path: str | Path, robot: BellowsRobot) -> Run:
    """
    Read a recorded run from a CSV file: :func:`read_samples` with its time column required.

    Optional columns ``tip_x, tip_y, tip_z`` [m, world frame] give the measured tip at the
    same times. Times must increase: a time that repeats or goes back is named by its line.
    """
    times, pressures, lengths = read_samples(path, robot)
    table = _read_table(path, [])
    if times is None:
        raise IdentificationError(f'{path}: column {TIME_COLUMNS[0]!r} (time, s) missing: a '
                                  'run needs its sample times')
    if times.size < 2:
        raise IdentificationError(f'{path}: a run needs at least two samples, got one')
    try:
        check_increasing(table, next(c for c in TIME_COLUMNS if c in table.header))
    except TableError as error:
        raise IdentificationError(str(error)) from None
    tips = None
    if any(c in table.header for c in TIP_COLUMNS):
        missing = [c for c in TIP_COLUMNS if c not in table.header]
        if missing:
            raise IdentificationError(f'{path}: column {missing[0]!r} missing (the tip needs '
                                      f'{", ".join(TIP_COLUMNS)}, m)')
        tips = np.column_stack([table.column(c) for c in TIP_COLUMNS])
    return Run(str(path), times - times[0], pressures, lengths,
               None if tips is None else times - times[0], tips)


def _read_table(path: str | Path, required: list[str]) -> Table:
    """Return the table of a CSV file; errors name file, line, column."""
    try:
        table = read_table(path)
    except TableError as error:
        raise IdentificationError(str(error)) from None
    missing = [c for c in required if c not in table.header]
    if missing:
        raise IdentificationError(f'{path}: missing columns {missing}')
    if sum(c in table.header for c in TIME_COLUMNS) > 1:
        raise IdentificationError(f'{path}: line 1: give one time column, '
                                  f'{TIME_COLUMNS[0]!r} or {TIME_COLUMNS[1]!r}')
    return table


@dataclass(frozen=True)
class Run:
    """
    Pressures and bellows lengths over time, as recorded on ``tendon/state``.

    Bellows in description order; times in s from the first sample. A recording with a
    ``tip/measured`` topic (or CSV tip columns) also has the measured tip.
    """

    source: str              # the bag, for messages
    times: np.ndarray        # (k,) s, increasing
    pressures: np.ndarray    # (k, m) Pa, gauge
    lengths: np.ndarray      # (k, m) m
    tip_times: np.ndarray | None = None   # (j,) s, increasing, same origin as ``times``
    tips: np.ndarray | None = None        # (j, 3) m, measured tip, world (base) frame


def read_run(path: str | Path, robot: BellowsRobot) -> Run:
    """
    Read the bellows' pressures and lengths from the ``tendon/state`` of a rosbag2 bag.

    Parameters
    ----------
    path : path
        Bag folder, ``.mcap`` or ``.db3`` file; the topic may carry a namespace.
    robot : BellowsRobot
        Names the bellows and gives the straight lengths the contractions count from.

    Returns
    -------
    Run
        Times from the header stamps; of samples with equal stamps (a simulator that is
        paused keeps publishing its state) the last one, whose pressures hold from then on.
        With a ``tip/measured`` topic (geometry_msgs/PointStamped, world frame) also the
        measured tip, its times from its header stamps on the same clock.

    """
    from tendon_robot_sim.experiment.bag import (bag_topics, BagError, one_robot,
                                                 read_messages, recorded_as)

    names = robot.actuator_names
    try:
        topics = bag_topics(path)
        check_recorded_types(path, topics, (STATE_TOPIC, TIP_TOPIC))
        wanted = recorded_as(STATE_TOPIC, topics)
        if len(wanted) != 1:
            raise IdentificationError(
                f'{path}: needs one {STATE_TOPIC} topic (sensor_msgs/JointState, effort = '
                f'pressure [Pa], position = contraction [m] per bellows), found '
                f'{wanted or "none"} among {sorted(topics)}')
        tip_topics = [topic for topic in one_robot(path, (STATE_TOPIC, TIP_TOPIC), topics)
                      if topic not in wanted]
        stamps, pressures, contractions, tips = [], [], [], {}
        for topic, _, msg in read_messages(path, wanted + tip_topics):
            stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
            if topic in tip_topics:     # the last of equal stamps, as for the state
                tips[stamp] = (msg.point.x, msg.point.y, msg.point.z)
                check_finite(np.array([tips[stamp]]),
                             lambda _: f'{path}: {topic} stamped {stamp * 1e-9:.9f} s')
                continue
            where = f'{path}: {wanted[0]} stamped {stamp * 1e-9:.9f} s'
            if stamps and stamp < stamps[-1]:
                raise IdentificationError(f'{where}: header stamps go back in time (from '
                                          f'{stamps[-1] * 1e-9:.9f} s)')
            if stamps and stamp == stamps[-1]:
                stamps.pop()
                pressures.pop()
                contractions.pop()
            stamps.append(stamp)
            pressures.append(joint_field(msg, names, 'effort', where, 'bellows'))
            contractions.append(joint_field(msg, names, 'position', where, 'bellows'))
    except (BagError, ExperimentError) as error:
        raise IdentificationError(str(error)) from None
    if len(stamps) < 2:
        raise IdentificationError(f'{path}: {wanted[0]} has {len(stamps)} sample(s) with '
                                  'distinct header stamps; a run needs more (are the '
                                  'messages stamped with the time of measurement?)')
    straight = CCDynamics.from_bellows_robot(robot).straight_lengths
    tip_stamps = sorted(tips)
    return Run(str(path), (np.array(stamps) - stamps[0]) * 1e-9, np.array(pressures),
               straight - np.array(contractions),
               (np.array(tip_stamps) - stamps[0]) * 1e-9 if tips else None,
               np.array([tips[k] for k in tip_stamps], dtype=float) if tips else None)


def static_points(run: Run, hold_time: float, length_tolerance: float,
                  pressure_tolerance: float = PRESSURE_TOLERANCE
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Find the static points of a run: pressures steady and lengths settled.

    Parameters
    ----------
    run : Run
        Recorded pressures and lengths (:func:`read_run`).
    hold_time : float
        Shortest settled stretch [s].
    length_tolerance : float
        Largest excursion of the bellows lengths (norm over all bellows) in it [m].
    pressure_tolerance : float
        Largest pressure change within a stretch [Pa].

    Returns
    -------
    starts : array (k,)
        Start of each settled stretch [s from the run's start].
    pressures, lengths : arrays (k, m)
        Mean pressures [Pa] and mean settled lengths [m] of each.

    """
    stretches = steady_stretches(run.times, run.pressures, run.times, run.lengths, hold_time,
                                 length_tolerance, pressure_tolerance)
    if not stretches:
        raise IdentificationError(
            f'{run.source}: no static points (pressures within {pressure_tolerance:g} Pa '
            f'and lengths within {length_tolerance * 1e3:g} mm for {hold_time:g} s)')
    return (np.array([s.start for s in stretches]), np.array([s.command for s in stretches]),
            np.array([s.settled for s in stretches]))


def response_from_rest(run: Run, hold_time: float, length_tolerance: float,
                       pressure_tolerance: float = PRESSURE_TOLERANCE) -> Run:
    """
    Return the first step response of a run: from rest until the pressures change again.

    It begins with the last sample of the first static point (the most settled one: the
    damping fit starts the model at the equilibrium of the first pressures) and ends with
    the last sample before the next pressure change, or with the run. Parameters as
    :func:`static_points`; times start again at 0.
    """
    starts, _, _ = static_points(run, hold_time, length_tolerance, pressure_tolerance)
    first = int(np.searchsorted(run.times, starts[0]))
    steps = np.flatnonzero(np.max(np.abs(np.diff(run.pressures[first:], axis=0)), axis=1)
                           > pressure_tolerance)
    if not steps.size:
        raise IdentificationError(f'{run.source}: no pressure step after the first static '
                                  f'point (at {starts[0]:.3f} s): nothing to fit dampers to')
    begin = first + int(steps[0])
    end = first + int(steps[1]) + 1 if steps.size > 1 else len(run.times)
    return replace(run, times=run.times[begin:end] - run.times[begin],
                   pressures=run.pressures[begin:end], lengths=run.lengths[begin:end])


def identify_stiffness(robot: BellowsRobot, pressures: np.ndarray, lengths: np.ndarray
                       ) -> Estimate:
    """
    Bellows and bending stiffnesses from static points (linear least squares).

    Bounded by what the description loader takes (PHYSICAL_RANGES ``stiffness``,
    ``bending_stiffness``): a stiffness the data want below 0 ends at 0, with a warning.

    Parameters
    ----------
    robot : BellowsRobot
        The description the CC model is built from.
    pressures, lengths : arrays (k, m)
        Gauge pressures [Pa] and measured bellows lengths [m] of k static points, bellows in
        description order.

    """
    from scipy.optimize import lsq_linear
    from scipy.stats import t as student_t

    model = CCDynamics.from_bellows_robot(robot)
    pressures, lengths = _points(model, pressures, lengths)
    to_x = np.linalg.pinv(model.lengths)
    names, values, intervals, sections, warnings = [], [], [], [], []
    before, after = [], []
    row = 0
    for j, section in enumerate(robot.sections):
        m = len(section.bellows)
        B = model.lengths[row:row + m, 3 * j:3 * j + 3]
        q0 = np.array([b.rest_length for b in section.bellows])
        design, target = [], []
        for p, q in zip(pressures, lengths):
            x = to_x @ q
            xs = x[3 * j:3 * j + 3]
            columns = [B[i] * (B[i] @ xs - q0[i]) for i in range(m)]
            columns.append(np.array([0.0, xs[1], xs[2]]))
            design.append(np.column_stack(columns))
            load = model.model[4] @ p + model.lagrange_terms(x, np.zeros_like(x))[2]
            load[3 * j] -= section.spline_stiffness * (xs[0] - section.length)
            target.append(load[3 * j:3 * j + 3])
        design, target = np.vstack(design), np.concatenate(target)
        initial = np.array([b.stiffness for b in section.bellows]
                           + [section.bending_stiffness])
        dof = design.shape[0] - design.shape[1]
        if dof <= 0 or np.linalg.matrix_rank(design) < design.shape[1]:
            raise IdentificationError(
                f'{section.name}: {len(pressures)} static points do not determine the '
                f'{design.shape[1]} stiffnesses; add points with other pressure combinations')
        keys = ['stiffness'] * m + ['bending_stiffness']
        solution = lsq_linear(design, target, bounds=_limits(keys), method='bvls')
        k = solution.x
        residual = design @ k - target
        variance = residual @ residual / dof
        sigma = np.sqrt(np.diag(variance * np.linalg.inv(design.T @ design)))
        half = student_t.ppf(0.975, dof) * sigma
        before.append(design @ initial - target)
        after.append(residual)
        section_names = ([f'{section.name}.{b.name}.stiffness' for b in section.bellows]
                         + [f'{section.name}.bending_stiffness'])
        warnings += _at_limits(section_names, keys, k, solution.active_mask)
        names += section_names
        values.append(k)
        intervals.append(np.column_stack((k - half, k + half)))
        bellows = tuple(replace(b, stiffness=float(v)) for b, v in zip(section.bellows, k))
        sections.append(replace(section, bellows=bellows, bending_stiffness=float(k[m])))
        row += m
    return Estimate(replace(robot, sections=tuple(sections)), tuple(names),
                    np.concatenate(values), np.vstack(intervals), _rms(before), _rms(after), 'N',
                    tuple(warnings))


def identify_damping(robot: BellowsRobot, times: np.ndarray, pressures: np.ndarray,
                     lengths: np.ndarray, dt: float | None = None, source: str = 'the run'
                     ) -> Estimate:
    """
    Fit per section a bellows damper (shared by its bellows) and the spline damper.

    Each up to what the description loader takes (PHYSICAL_RANGES ``damping``,
    ``spline_damping``); a damper the data want beyond ends there, with a warning.
    The run starts at rest, at the coordinates of its first lengths. The model is
    integrated with steps of ``dt`` from the first sample time, the pressures held from
    each sample to the next, and its lengths are interpolated linearly at the sample times
    (exact when the samples lie on the integration grid, as the simulator's do).

    Parameters
    ----------
    robot : BellowsRobot
        Description with the dampers to start from (positive).
    times : array (k,)
        Increasing sample times [s].
    pressures, lengths : arrays (k, m)
        Gauge pressures [Pa] and measured bellows lengths [m], bellows in description order.
    dt : float, optional
        Integration step [s]; default the simulator's step (:data:`~tendon_robot_sim.models.
        trunk.dynamics.DEFAULT_TIME_STEP`), for uniform samples shortened to a whole fraction
        of their step.
    source : str
        Where the run comes from, for messages.

    Returns
    -------
    Estimate
        The dampers with 95 % intervals (from the Jacobian, on their logarithms).

    """
    from scipy.optimize import least_squares
    from scipy.stats import t as student_t

    times = np.asarray(times, float)
    steps = np.diff(times)
    if times.ndim != 1 or times.size < 3 or not np.all(steps > 0.0):
        raise IdentificationError(f'{source}: a step response needs at least 3 samples of '
                                  f'increasing time, got {times.size}')
    model = CCDynamics.from_bellows_robot(robot)
    pressures, lengths = _points(model, pressures, lengths)
    # A run whose pressures hold still steps nothing: the fit would return the dampers it
    # started from, their intervals 0 .. inf (the refusal response_from_rest gives a bag).
    if not np.any(np.abs(pressures - pressures[0]) > PRESSURE_TOLERANCE):
        raise IdentificationError(f'{source}: no pressure step (every pressure stays within '
                                  f'{PRESSURE_TOLERANCE:g} Pa of the first sample): nothing '
                                  'to fit dampers to')
    initial = np.array([v for s in robot.sections
                        for v in (s.bellows[0].damping, s.spline_damping)])
    if np.any(initial <= 0.0):
        raise IdentificationError('damping: the description needs positive dampers to '
                                  'start from (the fit scales them)')

    # At rest at the first sample: its lengths give the coordinates exactly (linear map);
    # starting there rather than at the equilibrium of the first pressures keeps a robot
    # that has not quite settled, or stiffnesses not yet identified, out of the residuals.
    x0 = np.linalg.pinv(model.lengths) @ lengths[0]

    # up to what the description loader takes (PHYSICAL_RANGES); down to DAMPER_FRACTION of
    # the start: the loader's 0 is no logarithm
    keys = [key for _ in robot.sections for key in ('damping', 'spline_damping')]
    lowest, highest = DAMPER_FRACTION * initial, _limits(keys)[1]

    def damper_values(z):
        # exp(ln(bound / p0)) may pass the bound
        return np.clip(initial * np.exp(z), lowest, highest)

    def robot_at(z):
        values = damper_values(z)
        return replace(robot, sections=tuple(
            replace(s, spline_damping=float(values[2 * j + 1]),
                    bellows=tuple(replace(b, damping=float(values[2 * j])) for b in s.bellows))
            for j, s in enumerate(robot.sections)))

    names = tuple(n for s in robot.sections
                  for n in (f'{s.name}.bellows_damping', f'{s.name}.spline_damping'))

    def residual(z):
        trial = CCDynamics.from_bellows_robot(robot_at(z))
        try:
            x = simulate_samples(trial, times, pressures, x0, dt)
        except CCNoSolutionError:
            # the integrator's advice (a shorter dt) is not the remedy: the fit went astray
            i = int(np.argmax(np.abs(z)))
            raise CCNoSolutionError(
                f'{source}: the damping fit took {names[i]} to {initial[i] * np.exp(z[i]):.3g} '
                f'N s/m ({np.exp(z[i]):.3g} x the described), where the model cannot be '
                'integrated: the run does not determine the dampers; a model far from the '
                'robot pulls them to extremes (identify the stiffnesses first: --fit '
                'stiffness,damping)') from None
        return (x @ trial.lengths.T - lengths).ravel()

    start = residual(np.zeros(initial.size))
    # dogbox: a damper the data want beyond its limit ends on it (the trust region
    # reflective method's iterates stay strictly inside and stopped 2 % short of 1e6 N s/m)
    fit = least_squares(residual, np.zeros(initial.size), diff_step=1e-2, method='dogbox',
                        bounds=(np.log(lowest / initial), np.log(highest / initial)))
    dof = fit.fun.size - initial.size
    variance = fit.fun @ fit.fun / dof
    sigma_z = np.sqrt(np.diag(variance * np.linalg.pinv(fit.jac.T @ fit.jac)))
    half = student_t.ppf(0.975, dof) * sigma_z
    values = damper_values(fit.x)
    return Estimate(robot_at(fit.x), names, values,
                    np.column_stack((values * np.exp(-half), values * np.exp(half))),
                    _rms([start]), _rms([fit.fun]), 'm',
                    tuple(_at_limits(names, keys, values, fit.active_mask, lowest)))


def simulate_samples(model: CCDynamics, times: np.ndarray, pressures: np.ndarray,
                     x0: np.ndarray, dt: float | None = None) -> np.ndarray:
    """
    Return the model's coordinates x (k, 3n) at the sample ``times`` of a recorded run.

    The model starts from ``x0`` at rest at the first sample and is integrated with steps of
    ``dt`` [s], the recorded pressures (k, m) [Pa] held from each sample to the next; x is
    interpolated linearly at the sample times (exact when the samples lie on the integration
    grid, as the simulator's do). ``dt``: default the simulator's step
    (:data:`~tendon_robot_sim.models.trunk.dynamics.DEFAULT_TIME_STEP`), for uniform samples
    shortened to a whole fraction of their step.
    """
    times = np.asarray(times, float)
    steps = np.diff(times)
    if dt is None:
        dt = DEFAULT_TIME_STEP
        if np.ptp(steps) <= 1e-6 * steps.mean():   # uniform: put every sample on the grid
            dt = steps.mean() / math.ceil(steps.mean() / DEFAULT_TIME_STEP - 1e-9)
    elapsed = times - times[0]
    grid_steps = max(1, int(math.ceil(elapsed[-1] / dt - 1e-6)))
    # the sample whose pressures hold at each grid time (a sample on the grid holds from it)
    held = np.searchsorted(elapsed, np.arange(grid_steps) * dt + 1e-6 * dt, 'right') - 1
    run = model.simulate(lambda t: pressures[held[min(int(round(t / dt)), grid_steps - 1)]],
                         dt * grid_steps, dt=dt, x0=x0)
    return np.column_stack([np.interp(elapsed, run.times, run.x[:, i])
                            for i in range(run.x.shape[1])])


def _points(model: CCDynamics, pressures, lengths) -> tuple[np.ndarray, np.ndarray]:
    pressures = np.atleast_2d(np.asarray(pressures, float))
    lengths = np.atleast_2d(np.asarray(lengths, float))
    m = len(model.input_names)
    if pressures.shape[1] != m or lengths.shape != pressures.shape:
        raise IdentificationError(f'pressures, lengths: need (k, {m}) arrays (bellows '
                                  f'{model.input_names}), got {pressures.shape}, '
                                  f'{lengths.shape}')
    if not (np.all(np.isfinite(pressures)) and np.all(np.isfinite(lengths))):
        raise IdentificationError('pressures, lengths: must be finite')
    return pressures, lengths


def _rms(parts) -> float:
    values = np.concatenate([np.ravel(p) for p in parts])
    return float(math.sqrt(np.mean(values ** 2)))
