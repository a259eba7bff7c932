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
Recorded experiments as quasi-static holds, and synthetic experiments to test with.

A *hold* is a stretch of a recording where the tendon commands stay constant and
the measured tip stays put for at least ``hold_time`` seconds: one static
equilibrium to compare a model with (Tuzlaci, "TendonForces", section "Physical
experimentation / validation"). Sources:

* a rosbag2 bag (:func:`tendon_robot_sim.experiment.bag.read_messages`; MCAP or sqlite3,
  written by this project or by ``ros2 bag record``) with ``tendon/setpoint``
  (sensor_msgs/JointState: ``effort`` = tensions in N, or ``position`` = displacements
  in m) - or, when the bag has no setpoints, ``tendon/state`` (its ``effort``, or its
  ``position`` when it has no effort: a measured table imported by
  :mod:`tendon_robot_sim.experiment.table_import`) - and ``tip/measured``
  (geometry_msgs/PointStamped, base frame, m); optionally ``experiment/label``
  (std_msgs/String: the motion the following samples belong to) and, on ``/tf_static``,
  the point of the tip that ``tip/measured`` gives (frame ``tip_marker`` in ``tip_link``).
  Beside tension setpoints, the ``tendon/state`` efforts are the tensions the stack applied
  (a hardware bridge applies its ``min_tension`` for a setpoint below it): the setpoints
  still mark the holds, the state gives their tensions (:attr:`Recording.applied`);
* a CSV file of holds: one column per tendon named as the tendon (tension, N) or
  ``<name>_displacement`` (m), and ``tip_x, tip_y, tip_z`` (m, base frame).

A recording gives holds (:func:`holds_from_recording`), or every tip sample with the
command it follows (:func:`samples_from_recording`: slow continuous motion taken as
quasi-static). Times are the bag's receive stamps. No ROS installation is needed.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from tendon_robot_sim import counted, progress_bar
from tendon_robot_sim.experiment.bag import topic_matches
from tendon_robot_sim.experiment.csv_table import CSV_ENCODING, csv_lines, TableError
from tendon_robot_sim.experiment.input_profile import input_problem
from tendon_robot_sim.experiment.recorded import (applied_tensions, check_finite, check_reach,
                                                  command_vector, crop, Duplicates,
                                                  ExperimentError, Reducer, Tips)
from tendon_robot_sim.experiment.stretches import steady_stretches, Stretch
from tendon_robot_sim.files.outputs import open_output
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import Robot, robot_from_dict

SETPOINT_TOPIC = 'tendon/setpoint'
STATE_TOPIC = 'tendon/state'
TIP_TOPIC = 'tip/measured'
LABEL_TOPIC = 'experiment/label'
TF_STATIC_TOPIC = '/tf_static'
# The types a recording holds them as: the stack's (ros/topics.py; named here, this package
# being free of ROS, and tied to that table by a test).
RECORDED_TYPES = {SETPOINT_TOPIC: 'sensor_msgs/msg/JointState',
                  STATE_TOPIC: 'sensor_msgs/msg/JointState',
                  TIP_TOPIC: 'geometry_msgs/msg/PointStamped',
                  LABEL_TOPIC: 'std_msgs/msg/String',
                  TF_STATIC_TOPIC: 'tf2_msgs/msg/TFMessage'}
# A part of a bag: (start, end) in s from its first message; None: the bag's own start, end.
Window = tuple[float | None, float | None]
# The frames of the measured point on the tip: the simulator's tip frame and the marker's.
TIP_FRAME = 'tip_link'
MARKER_FRAME = 'tip_marker'
TIP_COLUMNS = ('tip_x', 'tip_y', 'tip_z')
DISPLACEMENT_SUFFIX = '_displacement'
# Defaults of hold detection: shortest steady stretch [s], largest tip excursion [m].
DEFAULT_HOLD_TIME = 1.0
DEFAULT_TIP_TOLERANCE = 0.002
# Setpoints equal within this are the same command [N or m]; measured tensions
# (tendon/state) within STATE_TOLERANCE [N].
COMMAND_TOLERANCE = 1e-9
STATE_TOLERANCE = 0.05
# Synthetic recordings: the tip sensor reports this long after the setpoint [s]; a
# step response starts from rest, settled for at most this long [s].
TIP_DELAY = 0.001
STEP_SETTLE_TIME = 30.0


@dataclass(frozen=True)
class Hold:
    """One quasi-static hold: constant commands, steady tip. SI units, base frame."""

    tensions: np.ndarray | None        # (n,) N per tendon (robot order), or None
    displacements: np.ndarray | None   # (n,) m per tendon, or None
    tip: np.ndarray                    # (3,) m, measured tip, mean over the steady part
    duration: float                    # s, length of the steady part (0 for CSV rows)
    samples: int                       # tip samples averaged (1 for CSV rows)
    start: float = 0.0                 # s, start of the steady part from the recording start
    label: str = ''                    # the motion it belongs to (experiment/label), if any
    # where the tensions are from: STATE_TOPIC (a hold: the mean of the state's efforts over
    # the steady part), SETPOINT_TOPIC, or '' (CSV rows, displacements)
    tension_topic: str = ''

    @property
    def commands(self) -> np.ndarray:
        """Return the tensions or, in displacement mode, the displacements."""
        return self.tensions if self.tensions is not None else self.displacements


@dataclass(frozen=True)
class Recording:
    """The command and tip time series of a recording; times in s from its start."""

    kind: str                    # 'tension' (N) or 'displacement' (m)
    source: str                  # for error messages: the file
    command_topic: str           # SETPOINT_TOPIC or STATE_TOPIC
    command_times: np.ndarray    # (k,) s, increasing
    commands: np.ndarray         # (k, n) per tendon, robot order
    tip_times: np.ndarray        # (j,) s, increasing
    tips: np.ndarray             # (j, 3) m, base frame
    labels: tuple[str, ...] = ()           # (j,) the motion of each tip sample; () none
    tip_marker: np.ndarray | None = None   # (3,) m, tip frame: the point tips gives, if known
    start_ns: int = 0            # bag stamp of time 0 [ns]
    # tendon/state efforts beside tension setpoints: the tensions the stack applied
    # (measured on a real robot: noisy), at applied_times (m,) s; else None
    applied_times: np.ndarray | None = None
    applied: np.ndarray | None = None      # (m, n) N, robot order

    def applied_series(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the times [s] and values of the applied tensions, else of the commands."""
        if self.applied is None:
            return self.command_times, self.commands
        return self.applied_times, self.applied

    def label_at(self, time: float) -> str:
        """Return the label of the last tip sample at or before ``time`` [s] ('' if none)."""
        if not self.labels:
            return ''
        i = int(np.searchsorted(self.tip_times, time, side='right')) - 1
        return self.labels[max(i, 0)]


def recording_from_messages(messages: Iterable, tendon_names: Sequence[str],
                            source: str = 'recording') -> Recording:
    """
    Command and tip series of a time-ordered stream of ``(topic, stamp_ns, msg)``.

    Commands: ``tendon/setpoint`` (``effort``, or ``position`` when effort is empty),
    or ``tendon/state`` when the stream has no setpoints; beside tension setpoints, the
    ``tendon/state`` efforts as the applied tensions; tips: ``tip/measured``. Topics may carry
    a namespace. A setpoint may name some tendons only: the others hold their last setpoint,
    as in the simulator; a state must name every tendon of ``tendon_names``. Exact duplicates
    count once, and only the fields used are kept (:mod:`~tendon_robot_sim.experiment.recorded`).
    """
    names = list(tendon_names)
    reducer, duplicates, tips = Reducer(), Duplicates(), Tips()
    setpoints, states, labels, marker = [], [], [], None
    for topic, stamp, msg in messages:
        if topic_matches(topic, SETPOINT_TOPIC) or topic_matches(topic, STATE_TOPIC):
            if not duplicates.seen(topic, msg):
                (setpoints if topic_matches(topic, SETPOINT_TOPIC) else states).append(
                    reducer.joints(stamp, msg))
        elif topic_matches(topic, TIP_TOPIC):
            if not duplicates.seen(topic, msg):
                tips.append(stamp, msg)
        elif topic_matches(topic, LABEL_TOPIC):
            labels.append((stamp, msg.data))
        elif topic == TF_STATIC_TOPIC:
            marker = _marker_transform(msg, marker)
    commands, topic = (setpoints, SETPOINT_TOPIC) if setpoints else (states, STATE_TOPIC)
    if not commands:
        raise ExperimentError(f'{source}: no {SETPOINT_TOPIC} or {STATE_TOPIC} messages')
    if not tips:
        raise ExperimentError(f'{source}: no {TIP_TOPIC} messages')
    start_ns = min(commands[0].stamp, tips.stamps[0])
    kind = None
    values = np.empty((len(commands), len(names)))    # filled row by row: no array per row kept
    held = None if topic == STATE_TOPIC else {}
    for row, command in enumerate(commands):
        where = f'{source}: {topic} at {(command.stamp - start_ns) * 1e-9:.3f} s'
        msg_kind, values[row] = command_vector(command, names, held, where)
        if kind is None:
            kind = msg_kind
        elif msg_kind != kind:
            raise ExperimentError(f'{source}: {topic} mixes tensions and displacements')
    applied_times, applied = (applied_tensions(states, names, source, start_ns, STATE_TOPIC)
                              if kind == 'tension' and topic == SETPOINT_TOPIC else (None, None))
    tip_stamps = np.frombuffer(tips.stamps, dtype=np.int64)
    if labels:   # the last label at or before each tip sample
        stamps = np.array([s for s, _ in labels])
        index = np.searchsorted(stamps, tip_stamps, side='right') - 1
        labels = tuple(labels[i][1] if i >= 0 else '' for i in index)
    return Recording(
        kind=kind, source=source, command_topic=topic,
        command_times=np.array([c.stamp - start_ns for c in commands], dtype=float) * 1e-9,
        commands=values,
        tip_times=(tip_stamps - start_ns).astype(float) * 1e-9,
        tips=np.frombuffer(tips.points, dtype=float).reshape(-1, 3).copy(),
        labels=tuple(labels), tip_marker=marker, start_ns=int(start_ns),
        applied_times=applied_times, applied=applied)


def _marker_transform(msg, found: np.ndarray | None) -> np.ndarray | None:
    """Return the translation of MARKER_FRAME in TIP_FRAME from a TFMessage, else ``found``."""
    for transform in msg.transforms:
        if (transform.child_frame_id.endswith(MARKER_FRAME)
                and transform.header.frame_id.endswith(TIP_FRAME)):
            t = transform.transform.translation
            return np.array([t.x, t.y, t.z], dtype=float)
    return found


def holds_from_recording(recording: Recording, hold_time: float = DEFAULT_HOLD_TIME,
                         tip_tolerance: float = DEFAULT_TIP_TOLERANCE,
                         command_tolerance: float | None = None) -> list[Hold]:
    """
    Find the quasi-static holds of a recording.

    Parameters
    ----------
    recording : Recording
        The command and tip series, e.g. from :func:`read_recording`.
    hold_time : float
        Shortest steady stretch that counts as a hold [s].
    tip_tolerance : float
        A stretch is steady while every tip sample stays within this distance [m] of
        the median of the last quarter of the stretch (the settled tip).
    command_tolerance : float, optional
        Commands within this of the first command of a stretch are the same command
        [N or m]; default :data:`COMMAND_TOLERANCE` for setpoints and
        :data:`STATE_TOLERANCE` for measured tensions (``tendon/state``). A hold's
        command is the mean over its stretch.

    Returns
    -------
    list of Hold
        In time order; the tip is the mean over the steady part of each hold, and so are the
        tensions when the recording has applied tensions there (:func:`_hold_tensions`).

    """
    if command_tolerance is None:
        command_tolerance = (STATE_TOLERANCE if recording.command_topic == STATE_TOPIC
                             else COMMAND_TOLERANCE)
    holds = []
    for stretch in steady_stretches(recording.command_times, recording.commands,
                                    recording.tip_times, recording.tips, hold_time,
                                    tip_tolerance, command_tolerance):
        common = {'tip': stretch.settled, 'duration': stretch.duration,
                  'samples': stretch.samples, 'start': stretch.start,
                  'label': recording.label_at(stretch.start)}
        if recording.kind == 'tension':
            tensions, topic = _hold_tensions(recording, stretch)
            holds.append(Hold(tensions=tensions, displacements=None, tension_topic=topic,
                              **common))
        else:
            holds.append(Hold(tensions=None, displacements=stretch.command, **common))
    return holds


def _hold_tensions(recording: Recording, stretch: Stretch) -> tuple[np.ndarray, str]:
    """
    Return a tension hold's tensions and their topic.

    The mean of the applied tensions over the steady part, its first to its last tip sample
    (as the tip's: a measured state's noise averages out, where holds segmented on it fell
    apart), when the recording has some there; else the stretch's command.
    """
    if recording.applied is not None:
        times = recording.applied_times
        inside = (times >= stretch.start) & (times <= stretch.end)
        if np.any(inside):
            return recording.applied[inside].mean(axis=0), STATE_TOPIC
    return stretch.command, recording.command_topic


def samples_from_recording(recording: Recording) -> list[Hold]:
    """
    Return every tip sample with the last command at or before it, as one-sample holds.

    For slow continuous motion, taken as quasi-static (each sample a static equilibrium
    under the command it follows), as motion-capture recordings of tendon robots are
    calibrated (opencr-mujoco's sysid). Samples before the first command are left out. A
    sample's tensions are the last applied tensions at or before it, if any, else the
    command's.
    """
    index = np.searchsorted(recording.command_times, recording.tip_times, side='right') - 1
    samples = []
    for j, i in enumerate(index):
        if i < 0:
            continue
        common = {'tip': recording.tips[j], 'duration': 0.0, 'samples': 1,
                  'start': float(recording.tip_times[j]),
                  'label': recording.labels[j] if recording.labels else ''}
        if recording.kind == 'tension':
            tensions, topic = _sample_tensions(recording, i, recording.tip_times[j])
            samples.append(Hold(tensions=tensions, displacements=None, tension_topic=topic,
                                **common))
        else:
            samples.append(Hold(tensions=None, displacements=recording.commands[i], **common))
    return samples


def _sample_tensions(recording: Recording, command: int,
                     time: float) -> tuple[np.ndarray, str]:
    """Return the last applied tensions at or before ``time``, else the command's; their topic."""
    if recording.applied is not None:
        k = int(np.searchsorted(recording.applied_times, time, side='right')) - 1
        if k >= 0:
            return recording.applied[k], STATE_TOPIC
    return recording.commands[command], recording.command_topic


def holds_from_messages(messages: Iterable, tendon_names: Sequence[str],
                        hold_time: float = DEFAULT_HOLD_TIME,
                        tip_tolerance: float = DEFAULT_TIP_TOLERANCE,
                        source: str = 'recording') -> list[Hold]:
    """:func:`holds_from_recording` of :func:`recording_from_messages`."""
    return holds_from_recording(recording_from_messages(messages, tendon_names, source),
                                hold_time, tip_tolerance)


def read_holds_csv(path: str | Path, robot: Robot) -> list[Hold]:
    """Read holds from a CSV file (see the module docstring); errors name file, line and column."""
    path = Path(path)
    names = robot.tendon_names
    try:
        handle = path.open(newline='', encoding=CSV_ENCODING)
    except OSError as error:
        raise ExperimentError(f'{path}: cannot read: {error.strerror}') from None
    with handle:
        reader = _csv_rows(handle, path)     # the lines with a cell, as import reads a table
        first, header = next(reader, (0, []))
        header = [cell.strip() for cell in header]
        if not header:
            raise ExperimentError(f'{path}: empty file; expected a header line')
        at = f'{path}: line {first}'
        tension_cols = [c for c in header if c in names]
        displacement_cols = [c for c in header if c.endswith(DISPLACEMENT_SUFFIX)
                             and c[:-len(DISPLACEMENT_SUFFIX)] in names]
        known = set(tension_cols) | set(displacement_cols) | set(TIP_COLUMNS)
        for column in header:
            if column not in known:
                raise ExperimentError(
                    f'{at}: unknown column {column!r}; expected the tendon names '
                    f'{names} (tension, N) or <name>{DISPLACEMENT_SUFFIX} (m), and '
                    f'{", ".join(TIP_COLUMNS)} (m)')
        if len(set(header)) != len(header):
            raise ExperimentError(f'{at}: a column is given twice: {header}')
        for column in TIP_COLUMNS:
            if column not in header:
                raise ExperimentError(f'{at}: column {column!r} missing')
        if tension_cols and displacement_cols:
            raise ExperimentError(f'{at}: give tensions or displacements, not both')
        displacement = bool(displacement_cols)
        wanted = [n + DISPLACEMENT_SUFFIX if displacement else n for n in names]
        for column in wanted:
            if column not in header:
                raise ExperimentError(f'{at}: column {column!r} missing (one column '
                                      f'per tendon: {wanted})')
        holds, lines = [], []
        for line, row in reader:
            lines.append(line)
            if len(row) != len(header):
                raise ExperimentError(f'{path}: line {line}: {counted(len(row), "value")}, '
                                      f'header has {counted(len(header), "column")}')
            values = {}
            for column, cell in zip(header, row):
                try:
                    values[column] = float(cell)
                except ValueError:
                    raise ExperimentError(f'{path}: line {line}, column {column!r}: '
                                          f'{cell!r} is not a number') from None
                if not math.isfinite(values[column]):
                    raise ExperimentError(f'{path}: line {line}, column {column!r}: '
                                          f'{cell!r} is not finite')
            commands = np.array([values[c] for c in wanted])
            # the bounds of every command that reads tendon inputs from a file
            problem = input_problem(commands[np.newaxis], robot,
                                    'displacement' if displacement else 'tension')
            if problem is not None:
                _, k, why = problem
                raise ExperimentError(f'{path}: line {line}, column {wanted[k]!r}: {why}')
            holds.append(Hold(tensions=None if displacement else commands,
                              displacements=commands if displacement else None,
                              tip=np.array([values[c] for c in TIP_COLUMNS]),
                              duration=0.0, samples=1))
    if not holds:
        raise ExperimentError(f'{path}: no data lines after the header')
    check_reach(np.array([hold.tip for hold in holds]), robot.rod.length,
                lambda row: f'{path}: line {lines[row]}, columns {", ".join(TIP_COLUMNS)}',
                'read as m')
    return holds


def _csv_rows(handle, path: Path) -> Iterator[tuple[int, list[str]]]:
    """
    Yield (line, row) of each row of a CSV file with a cell that is not blank.

    ``line``: the file's line the row ends on (a quoted cell may hold a line break). A binary
    or malformed file is an ExperimentError.
    """
    reader = csv.reader(csv_lines(handle, path))
    try:
        for row in reader:
            if any(cell.strip() for cell in row):
                yield reader.line_num, row
    except TableError as error:     # a line without end, a NUL byte
        raise ExperimentError(str(error)) from None
    except UnicodeDecodeError as error:
        raise ExperimentError(f'{path}: not UTF-8 text (byte {error.start} of a block): '
                              'is it a CSV file?') from None
    except csv.Error as error:
        raise ExperimentError(f'{path}: line {reader.line_num + 1}: not CSV: {error}') \
            from None


def write_holds_csv(path: str | Path, robot: Robot, holds: Sequence[Hold]) -> None:
    """Write holds in the format :func:`read_holds_csv` reads."""
    displacement = holds[0].tensions is None
    columns = [n + DISPLACEMENT_SUFFIX if displacement else n for n in robot.tendon_names]
    with open_output(path, newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(columns + list(TIP_COLUMNS))
        for hold in holds:
            writer.writerow([repr(float(v)) for v in hold.commands]
                            + [repr(float(v)) for v in hold.tip])


def check_recorded_types(path: str | Path, recorded: dict[str, str],
                         names: Iterable[str]) -> None:
    """
    Refuse a bag that holds a topic of ``names`` of another type than the stack's.

    ``recorded``: the bag's topics and their types (as ``bag.bag_topics`` gives them); a
    relative name matches in any namespace, as the readers take it. A message of another
    type would fail later, deep in whatever reads its fields.
    """
    from tendon_robot_sim.experiment.bag import mistyped, recorded_as

    expected = {topic: RECORDED_TYPES[name] for name in names
                for topic in recorded_as(name, recorded)}
    wrong = mistyped(recorded, expected)
    if wrong:
        topic, why = next(iter(wrong.items()))
        raise ExperimentError(f'{path}: {topic} {why}')


def read_recording(path: str | Path, robot: Robot, window: Window = (None, None)) -> Recording:
    """
    Read the command and tip series of a rosbag2 bag (folder, ``.mcap`` or ``.db3``).

    Its topics may carry a namespace (a stack launched in one), each topic in one at most,
    all of one robot (:func:`~tendon_robot_sim.experiment.bag.one_robot`).
    ``window``: (start, end) in s from the bag's first message (any topic), either None
    for the bag's own; only the part within it (:func:`~.recorded.crop`).
    """
    from tendon_robot_sim.experiment.bag import (bag_span, bag_topics, BagError, one_robot,
                                                 read_messages)
    try:
        recorded = bag_topics(path)
        check_recorded_types(path, recorded, RECORDED_TYPES)
        topics = one_robot(path, RECORDED_TYPES, recorded)
        part = None if window == (None, None) else _check_window(path, window, bag_span(path))
        recording = recording_from_messages(read_messages(path, topics), robot.tendon_names,
                                            source=str(path))
    except BagError as error:
        raise ExperimentError(str(error)) from None
    if part is not None:
        start, end, first = part
        offset = (recording.start_ns - first) * 1e-9      # the recording's time 0 in the bag's
        recording = crop(recording, start - offset, end - offset,
                         f'between {start:g} s and {end:g} s (--start, --end)')

    def place(row):
        return f'{path}: {TIP_TOPIC} at {recording.tip_times[row]:.3f} s'
    check_finite(recording.tips, place)     # within the part: --start, --end leave one out
    check_reach(recording.tips, robot.rod.length, place, 'read as m')
    return recording


def _check_window(path: Path, window: Window, span: tuple[int, int]) -> tuple[float, float, int]:
    """
    Return (start, end) [s] of ``window`` and its origin, the bag stamp of its first message.

    ``span``: the bag stamps of its first and last message [ns]; a bound None is the bag's.
    """
    length = (span[1] - span[0]) * 1e-9
    start, end = (0.0 if window[0] is None else window[0],
                  length if window[1] is None else window[1])
    for name, value in (('--start', start), ('--end', end)):
        if not (math.isfinite(value) and 0.0 <= value <= length):
            raise ExperimentError(f'{name}: must be within [0, {length:.3f}] s, the span of '
                                  f'{path} from its first message, got {value:g}')
    if start >= end:
        raise ExperimentError(f'--start: must be before the end ({end:g} s), got {start:g}')
    return start, end, span[0]


def is_csv(path: str | Path) -> bool:
    """Tell a CSV file (suffix ``.csv``, any case) from a bag (anything else)."""
    return Path(path).suffix.lower() == '.csv'


POINTS = ('holds', 'samples')


def load_recording(path: str | Path, robot: Robot, hold_time: float = DEFAULT_HOLD_TIME,
                   tip_tolerance: float = DEFAULT_TIP_TOLERANCE,
                   points: str = 'holds', window: Window = (None, None)) -> list[Hold]:
    """Load the holds (or ``points='samples'``: every tip sample) of a CSV file or a bag."""
    return load_points(path, robot, points, hold_time, tip_tolerance, window)[1]


def load_points(path: str | Path, robot: Robot, points: str = 'holds',
                hold_time: float = DEFAULT_HOLD_TIME,
                tip_tolerance: float = DEFAULT_TIP_TOLERANCE,
                window: Window = (None, None)) -> tuple[Robot, list[Hold]]:
    """
    Return the robot as measured and the points of a CSV file of holds or a bag.

    ``points``: ``'holds'`` (:func:`holds_from_recording`) or ``'samples'``
    (:func:`samples_from_recording`; a CSV's rows are its points either way). The robot is
    ``robot``, with the recording's tip marker (``/tf_static``) when the robot file gives
    none: a calibrated ``tip_marker`` in the file wins over the nominal one of the recording.
    ``window``: of a bag, the part to take (:func:`read_recording`); a CSV has none.
    """
    path = Path(path)
    if points not in POINTS:
        raise ExperimentError(f'points: must be one of {", ".join(POINTS)}, got {points!r}')
    if is_csv(path):
        if window != (None, None):
            raise ExperimentError(f'--start, --end: apply to a bag (a time series); {path} is '
                                  'a CSV file of holds')
        return robot, read_holds_csv(path, robot)
    recording = read_recording(path, robot, window)
    if recording.tip_marker is not None and not np.any(robot.tip_marker):
        robot = robot_from_dict({**robot.to_dict(), 'tip_marker': recording.tip_marker.tolist()})
    if points == 'samples':
        found = samples_from_recording(recording)
        if not found:
            raise ExperimentError(f'{path}: no tip sample after the first command')
        return robot, found
    holds = holds_from_recording(recording, hold_time, tip_tolerance)
    if not holds:
        raise ExperimentError(f'{path}: no holds (commands constant and tip within '
                              f'{tip_tolerance * 1e3:g} mm for {hold_time:g} s); slow '
                              'continuous motion: every sample with --points samples')
    return robot, holds


# --------------------------------------------------------------------------- synthetic


def experiment_tendons(robot: Robot) -> tuple[int, int]:
    """
    Return the (vertical-plane, horizontal-plane) tendon indices.

    The hole most against gravity (pulling lifts the tip) and the hole most perpendicular to
    gravity.
    """
    g = robot.gravity / np.linalg.norm(robot.gravity)
    along = np.array([robot.base.rotation @ np.array([math.cos(t.angle), math.sin(t.angle), 0.0])
                      for t in robot.tendons]) @ g
    return int(np.argmin(along)), int(np.argmin(np.abs(along)))


def experiment_plan(robot: Robot) -> list[tuple[str, np.ndarray]]:
    """
    Return Tuzlaci's three validation experiments as (label, tensions) holds.

    1. self weight only; 2. the horizontal-plane tendon at 25, 50, 75 % of 8 N (capped
    at its max_tension); 3. ten holds with increasing tensions on the vertical-plane
    and the horizontal-plane tendon together (up to 4 N and 6 N, capped).
    """
    vertical, horizontal = experiment_tendons(robot)
    limits = robot.max_tensions
    n = len(robot.tendons)
    plan = [('1: self weight', np.zeros(n))]
    for tension in (2.0, 4.0, 6.0):
        tau = np.zeros(n)
        tau[horizontal] = min(tension, limits[horizontal])
        plan.append((f'2: {robot.tendons[horizontal].name} {tau[horizontal]:g} N', tau))
    plan.append(('1: self weight', np.zeros(n)))
    for k in range(1, 11):
        tau = np.zeros(n)
        tau[vertical] = min(k * 4.0 / 10.0, limits[vertical])
        tau[horizontal] = min(k * 6.0 / 10.0, limits[horizontal])
        plan.append((f'3.{k}', tau))
    return plan


def synth_experiment(path: str | Path, robot_true: Robot, noise: float = 2e-4, seed: int = 0,
                     rate: float = 50.0, hold_duration: float = 3.0, transition: float = 0.5,
                     model: str = 'discrete') -> list[tuple[str, np.ndarray, np.ndarray]]:
    """
    Simulate Tuzlaci's validation experiments on ``robot_true`` and write them as a bag.

    The bag looks like a hardware recording: ``tendon/setpoint`` (JointState, effort
    in N, at ``rate``) and ``tip/measured`` (PointStamped in the base frame, at
    ``rate``, with Gaussian noise of standard deviation ``noise`` [m] per axis). Each
    hold of :func:`experiment_plan` lasts ``hold_duration`` [s]; between holds the
    tensions ramp linearly over ``transition`` [s]. ``model``: a statics model
    (``discrete``, the default, the static twin of the dynamic simulator; ``cosserat``,
    ``kirchhoff``), whose tip follows the static equilibrium of every sample, or
    ``dynamic``: the dynamic simulator, settled at rest, then driven through the whole
    experiment in time (each tip 1 ms after its setpoint, as the bag stamps it), so that
    the holds show the swing and settling of a real recording.

    Returns
    -------
    list of (label, tensions (n,), noiseless tip (3,))
        The holds as simulated (the truth behind the bag): the static tip, or with model
        ``dynamic`` the tip at the end of the hold.

    """
    _check_noise(noise)
    plan = experiment_plan(robot_true)
    dt = 1.0 / rate
    schedule = []   # (time s, tensions); the holds' last samples
    ends = []
    previous = None
    for label, tensions in plan:
        if previous is not None:
            steps = max(1, int(round(transition / dt)))
            schedule += [(None, previous + (tensions - previous) * k / steps)
                         for k in range(1, steps)]
        schedule += [(None, tensions)] * int(round(hold_duration / dt))
        ends.append(len(schedule) - 1)
        previous = tensions
    schedule = [(k * dt, tensions) for k, (_, tensions) in enumerate(schedule)]
    if model == 'dynamic':
        tips = _simulate_timeline(robot_true, schedule, 'synthetic experiment')
    else:
        solver = StaticsSolver(robot_true, model)
        tips = [solver.solve_tensions(tau).tip_position for _, tau in schedule]
    samples = [(t, tau, tip) for (t, tau), tip in zip(schedule, tips)]
    _write_bag(path, robot_true, samples, noise, seed)
    return [(label, tensions.copy(), tips[end].copy())
            for (label, tensions), end in zip(plan, ends)]


def synth_step_response(path: str | Path, robot_true: Robot, tension: float = 2.0,
                        noise: float = 2e-4, seed: int = 0, rate: float = 50.0,
                        before: float = 0.5, after: float = 3.0) -> tuple[np.ndarray, list]:
    """
    Simulate a tension step with the dynamic model and write it as a bag.

    The robot rests under zero tension (settled until its tip moves slower than
    0.01 mm/s), then the vertical-plane tendon (:func:`experiment_tendons`) steps to
    ``tension`` [N] (at most its max_tension) at ``before`` [s] and holds it for
    ``after`` [s]: the free response that identifies the damping (and, through the
    frequency, the vertebra mass). Setpoints and tips at ``rate`` [Hz] as in
    :func:`synth_experiment`; each tip is the simulated one 1 ms after its setpoint,
    when the bag stamps it.

    Returns
    -------
    step : (n,) the tensions after the step [N]
    samples : list of (time s, tensions (n,), noiseless tip (3,))

    """
    _check_noise(noise)
    vertical, _ = experiment_tendons(robot_true)
    limit = robot_true.max_tensions[vertical]
    if not (math.isfinite(tension) and 0.0 < tension <= limit):
        raise ExperimentError(f'tension: must be within (0, {limit:g}] N, the max_tension of '
                              f'tendon {robot_true.tendon_names[vertical]!r}, got {tension:g}')
    step = np.zeros(len(robot_true.tendons))
    step[vertical] = tension
    schedule = [(k / rate, step if k / rate >= before - 1e-9 else np.zeros_like(step))
                for k in range(int(round((before + after) * rate)))]
    tips = _simulate_timeline(robot_true, schedule, 'step response')
    samples = [(t, tau, tip) for (t, tau), tip in zip(schedule, tips)]
    _write_bag(path, robot_true, samples, noise, seed)
    return step, samples


def _simulate_timeline(robot: Robot, schedule: list, label: str) -> list[np.ndarray]:
    """
    Return the dynamic simulator's tip TIP_DELAY after each (time s, tensions) setpoint.

    The robot first rests under zero tension (settled until its tip moves slower than
    0.01 mm/s, at most STEP_SETTLE_TIME s, or placed in its static equilibrium by the
    implicit integrator); each setpoint holds until the next.
    """
    from tendon_robot_sim.models.rod.dynamics.factory import dynamic_simulator

    simulator = dynamic_simulator(robot)    # explicit or implicit, as the robot needs
    simulator.come_to_rest(STEP_SETTLE_TIME, speed_tolerance=1e-5)
    start = simulator.time
    tips = []
    for time, tensions in progress_bar(schedule, desc=label, unit='sample'):
        advance_to(simulator, start + time)
        simulator.set_tensions(tensions)
        tips.append(advance_to(simulator, start + time + TIP_DELAY).tip_position.copy())
    return tips


def advance_to(simulator, time: float):
    """
    Advance ``simulator`` to its last step at or before ``time`` [s]; return the state.

    A time half a step away (the tip stamped TIP_DELAY = 1 ms after its setpoint, the
    implicit integrator's 2 ms steps) is a tie that rounding breaks by the last bit of the
    float: the recording and its replay must take the same step.
    """
    steps = math.floor((time - simulator.time) / simulator.dt + 1e-6)
    return simulator.advance(max(0, steps) * simulator.dt)


def with_disc_twist(robot: Robot, degrees: float) -> Robot:
    """
    Return ``robot`` with its discs twisted about the backbone, ``degrees`` in all at the tip.

    Each disc is turned in proportion to its arc length, as when discs glued on by hand
    creep round a little each: every tendon's holes follow a helix of ``degrees`` / 360
    more turns (a parallel tendon becomes helical). An effect the robot file does not
    describe, for synthetic experiments.
    """
    if degrees == 0.0:
        return robot
    data = robot.to_dict()
    for tendon in data['tendons']:
        # a tendon ending early turns by the twist at its anchor
        tendon['turns'] += degrees / 360.0 * tendon['end'] / robot.rod.length
        tendon['routing'] = 'helical' if tendon['routing'] == 'parallel' else tendon['routing']
    return robot_from_dict(data)


def _check_noise(noise: float) -> None:
    if not (noise >= 0.0 and math.isfinite(noise)):
        raise ExperimentError(f'noise: must be a finite number >= 0 m, got {noise!r}')


def _write_bag(path: str | Path, robot: Robot, samples, noise: float, seed: int) -> None:
    """
    Write (time s, tensions, noiseless tip) samples as a hardware-like bag.

    ``tendon/setpoint`` (JointState, effort in N) and ``tip/measured`` (PointStamped,
    base frame, with Gaussian noise of standard deviation ``noise`` [m] per axis,
    stamped TIP_DELAY after its setpoint).
    """
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos

    rng = np.random.default_rng(seed)
    names = robot.tendon_names
    t0_ns = 1_700_000_000 * 10 ** 9
    with BagWriter(path) as bag:
        messages = BagMessages(bag.typestore)
        bag.add_topic('/' + SETPOINT_TOPIC, 'sensor_msgs/msg/JointState', OfferedQos())
        bag.add_topic('/' + TIP_TOPIC, 'geometry_msgs/msg/PointStamped',
                      OfferedQos(depth=5))
        for time, tensions, tip in samples:
            stamp_ns = t0_ns + int(round(time * 1e9))
            bag.write('/' + SETPOINT_TOPIC, stamp_ns,
                      messages.joint_state(stamp_ns, names, effort=tensions))
            measured = tip + rng.normal(0.0, noise, 3)
            # the sensor reports a little after the setpoint it sees the effect of (stamped
            # with the setpoint's time, as before)
            bag.write('/' + TIP_TOPIC, stamp_ns + int(round(TIP_DELAY * 1e9)),
                      messages.point(stamp_ns, robot.base.frame_id, measured))
