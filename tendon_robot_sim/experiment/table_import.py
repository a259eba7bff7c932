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
Import a measured table (CSV) into a rosbag2 bag of the package's own topics.

A column map (:mod:`tendon_robot_sim.experiment.column_map`) says which column is what; the
table becomes, per row, stamped with its time:

* ``tendon/state`` (sensor_msgs/JointState, one joint per tendon of the robot): ``position``
  = displacement [m, pulled in past the base, positive when pulling] or ``effort`` =
  tension [N], as the table gives the inputs;
* ``tip/measured`` (geometry_msgs/PointStamped, the robot's base frame, m);
* ``experiment/label`` (std_msgs/String) where the table has a label column;
* ``marker/<name>/measured`` for more measured points along the robot;

and, once, on ``/tf_static``, where the measured point sits on the tip (``tip_marker`` in
``tip_link``) when the map gives it. Every command that reads recordings reads the bag:
``replay``, ``view --bag``, ``calibrate`` and ``validate`` (``--points samples``: every row a
quasi-static sample). No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tendon_robot_sim import progress_bar
from tendon_robot_sim.experiment.column_map import ColumnMap
from tendon_robot_sim.experiment.csv_table import check_increasing, read_table, TableError
from tendon_robot_sim.experiment.experiment import (ExperimentError, LABEL_TOPIC, MARKER_FRAME,
                                                    RECORDED_TYPES, Recording, STATE_TOPIC,
                                                    TF_STATIC_TOPIC, TIP_FRAME, TIP_TOPIC)
from tendon_robot_sim.experiment.input_profile import input_problem
from tendon_robot_sim.experiment.recorded import check_reach, REACH
from tendon_robot_sim.models.tendon_robot import Robot


# The first time a stamp cannot hold: builtin_interfaces/Time's seconds are an int32.
LAST_STAMP = 2 ** 31


@dataclass(frozen=True)
class MeasuredTable:
    """A measured table in SI units and the base frame, in the robot's tendon order."""

    recording: Recording                   # commands and tips at each row's time
    markers: dict[str, np.ndarray]         # name -> (k, 3) m, base frame


def import_table(path: str | Path, column_map: ColumnMap, robot: Robot) -> MeasuredTable:
    """
    Read a measured table with ``column_map`` for ``robot``.

    Raises
    ------
    ExperimentError
        One line naming the file, line and column (a column the table lacks, a cell that is
        not a finite number, a time stamp not after the one before, or less than a
        nanosecond after it (a bag's stamps are whole nanoseconds), or outside a ROS time, a
        tension outside [0, the tendon's ``max_tension``], a displacement longer than the rod
        either way) or the map's key (a tendon the robot lacks).

    """
    inputs = column_map.input_columns_for(robot.tendon_names)
    _check_marker(column_map, robot.rod.length)
    numbers = ([column_map.time_column] + [c.column for c in inputs]
               + list(column_map.tip_columns)
               + [c for _, columns, _ in column_map.markers for c in columns])
    texts = [column_map.label_column] if column_map.label_column else []
    try:
        table = read_table(path, list(dict.fromkeys(numbers)), texts)
    except TableError as error:
        raise ExperimentError(str(error)) from None
    times = table.column(column_map.time_column) * column_map.time_factor
    # a stamp is a ROS time (builtin_interfaces/Time: int32 seconds since 1970), the bag's
    # time unsigned nanoseconds: a time out of that range is a wrong unit or a relative time
    # that starts below 0, which no bag holds
    outside = (times < 0.0) | (times >= LAST_STAMP)
    if np.any(outside):
        row = int(np.argmax(outside))
        raise ExperimentError(f'{table.where(row, column_map.time_column)}: the time stamp '
                              f'{times[row]:g} s is outside what a ROS time holds (0 to '
                              f'{LAST_STAMP - 1} s since 1970): is time.unit right?')
    try:
        check_increasing(table, column_map.time_column, times, noun='time stamp')
    except TableError as error:
        raise ExperimentError(str(error)) from None
    # the bag stamps whole nanoseconds from the first row (write_measured_bag): rows closer
    # than that would share a stamp, seconds read as nanoseconds among them
    shared = np.diff(np.round((times - times[0]) * 1e9)) <= 0.0
    if np.any(shared):
        row = int(np.argmax(shared)) + 1
        raise ExperimentError(f'{table.where(row, column_map.time_column)}: the time stamp is '
                              f'{times[row] - times[row - 1]:.3g} s after the one of line '
                              f"{table.lines[row - 1]}, where a bag's stamps are whole "
                              'nanoseconds: is time.unit right?')
    commands = np.column_stack([table.column(c.column) * c.factor for c in inputs])
    # the robot description's limits, as every command that takes a tendon input applies them
    problem = input_problem(commands, robot, column_map.kind)
    if problem is not None:
        row, col, why = problem
        raise ExperimentError(f'{table.where(row, inputs[col].column)}: {why}')

    def points(columns, factor):
        measured = column_map.to_base(np.column_stack([table.column(c) for c in columns]),
                                      factor)
        check_reach(measured, robot.rod.length, lambda row: table.where(row, columns[0]),
                    f'a table unit read as {factor:g} m')
        return measured

    start_ns = int(round(times[0] * 1e9))
    relative = times - times[0]
    labels = table.texts[column_map.label_column] if column_map.label_column else ()
    recording = Recording(
        kind=column_map.kind, source=str(path), command_topic=STATE_TOPIC,
        command_times=relative, commands=commands, tip_times=relative.copy(),
        tips=points(column_map.tip_columns, column_map.tip_factor), labels=tuple(labels),
        tip_marker=column_map.marker_offset, start_ns=start_ns)
    markers = {name: points(columns, factor) for name, columns, factor in column_map.markers}
    return MeasuredTable(recording, markers)


def _check_marker(column_map: ColumnMap, length: float) -> None:
    """Refuse a marker ``REACH`` robot lengths or more from the tip: its unit is wrong."""
    if column_map.marker_offset is None:
        return
    distance = float(np.linalg.norm(column_map.marker_offset))
    if distance >= REACH * length:
        raise ExperimentError(f'{column_map.path}: marker.translation: the marker is '
                              f'{distance:g} m from the tip, {distance / length:.0f} times the '
                              f"robot's length ({length:g} m): is marker.unit right (read as "
                              f'{column_map.marker_factor:g} m)?')


def write_measured_bag(path: str | Path, measured: MeasuredTable, robot: Robot) -> dict:
    """
    Write ``measured`` as a new bag folder ``path`` (MCAP); return the messages per topic.

    Raises :class:`~tendon_robot_sim.experiment.bag.BagError` if ``path`` exists.
    """
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos

    recording = measured.recording
    names = robot.tendon_names
    frame = robot.base.frame_id
    # a sensor stream as the hardware bridge offers it (reliable, REP 2003: best effort would
    # leave a default subscriber of `ros2 bag play` with nothing); a latched /tf_static
    sensor = OfferedQos(depth=5)
    with BagWriter(path) as bag:
        messages = BagMessages(bag.typestore)
        bag.add_topic('/' + STATE_TOPIC, RECORDED_TYPES[STATE_TOPIC], sensor)
        bag.add_topic('/' + TIP_TOPIC, RECORDED_TYPES[TIP_TOPIC], sensor)
        if recording.labels:
            bag.add_topic('/' + LABEL_TOPIC, RECORDED_TYPES[LABEL_TOPIC], OfferedQos())
        for name in measured.markers:
            bag.add_topic(f'/marker/{name}/measured', RECORDED_TYPES[TIP_TOPIC], sensor)
        if recording.tip_marker is not None:
            bag.add_topic(TF_STATIC_TOPIC, RECORDED_TYPES[TF_STATIC_TOPIC],
                          OfferedQos(durability='transient_local', depth=1))
            bag.write(TF_STATIC_TOPIC, recording.start_ns,
                      messages.static_transform(recording.start_ns, TIP_FRAME, MARKER_FRAME,
                                                recording.tip_marker))
        displacement = recording.kind == 'displacement'
        # a table of up to 10^6 rows (csv_table.MAX_ROWS) is minutes of writing: shown
        for k, time in enumerate(progress_bar(recording.tip_times, desc='import', unit='row')):
            stamp = recording.start_ns + int(round(time * 1e9))
            if recording.labels:
                bag.write('/' + LABEL_TOPIC, stamp, messages.text(recording.labels[k]))
            values = recording.commands[k]
            bag.write('/' + STATE_TOPIC, stamp, messages.joint_state(
                stamp, names, position=values if displacement else (),
                effort=() if displacement else values))
            bag.write('/' + TIP_TOPIC, stamp, messages.point(stamp, frame, recording.tips[k]))
            for name, points in measured.markers.items():
                bag.write(f'/marker/{name}/measured', stamp,
                          messages.point(stamp, frame, points[k]))
        return dict(bag.counts)
