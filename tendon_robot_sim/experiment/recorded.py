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
A recording's messages reduced to what the experiment tools read, each counted once.

:func:`~tendon_robot_sim.experiment.experiment.recording_from_messages` keeps, of each
``tendon/setpoint`` and ``tendon/state`` (sensor_msgs/JointState), a :class:`Joints`: its bag
stamp, names (one tuple shared by every message that gives the same names), efforts and
positions (packed); of each ``tip/measured`` its bag stamp and point (packed). Not the
deserialized messages: those took four to five times the memory
(``benchmarks/bench_recording_memory.py``; docs/performance.md, Reading a recording).

A JointState's values in the robot's order (:func:`joint_field`; a setpoint may leave tendons
out, which hold their last value, as the simulator node holds them), and the part of a
recording between two times (:func:`crop`).

Exact duplicates - the same topic, header stamp and data, recorded twice (two recorders on
one bag, a relay republishing onto the topic) - are dropped (:class:`Duplicates`): each
message counts once in a hold's means. A message with a zero header stamp (its publisher did
not stamp it) is never a duplicate: it cannot be told from a repeat of the same value.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass, replace
from typing import Sequence, TYPE_CHECKING

import numpy as np

from tendon_robot_sim import counted

if TYPE_CHECKING:
    from tendon_robot_sim.experiment.experiment import Recording

#: A copy is found when its header stamp is within this of the newest of its topic [ns]: a
#: duplicate arrives right after its original, and the keys kept stay few.
DUPLICATE_WINDOW_NS = 10 * 10 ** 9


class ExperimentError(ValueError):
    """A recording or CSV that cannot be used; the message names the file and the problem."""


# A measured point this many robot lengths from the base is no place the robot reaches, nor a
# base misplaced by a frame: millimetres read as metres put it a thousand lengths out.
REACH = 10.0


def check_reach(points: np.ndarray, length: float, place, unit: str) -> None:
    """
    Refuse a measured point ``REACH`` robot lengths or more from the base: a unit is wrong.

    ``points``: (k, 3) [m, base frame]; ``length``: the robot's [m]; ``place(row)``: where
    the row's point comes from, for the message; ``unit``: what the source's unit was read as.
    """
    distance = np.linalg.norm(points, axis=1)
    far = distance >= REACH * length
    if np.any(far):
        row = int(np.argmax(far))
        raise ExperimentError(f'{place(row)}: the measured point is {distance[row]:g} m from '
                              f"the base, {distance[row] / length:.0f} times the robot's "
                              f'length ({length:g} m): is its unit right ({unit}), and the '
                              'frame?')


def check_finite(points: np.ndarray, place) -> None:
    """
    Refuse a measured point that is not finite (a motion-capture marker lost from view).

    ``points``: (k, 3) [m]; ``place(row)``: where the row's point comes from, for the
    message. Taken, it made a hold's mean tip NaN: every metric null, or a fit that counted
    it as a point without an equilibrium.
    """
    bad = ~np.all(np.isfinite(points), axis=1)
    if np.any(bad):
        row = int(np.argmax(bad))
        raise ExperimentError(f'{place(row)}: the measured point is not finite: '
                              f'{points[row].tolist()}')


@dataclass(frozen=True, slots=True)
class Joints:
    """
    The fields of a JointState the experiment tools use; ``name`` as the message calls it.

    The values are kept packed (float64 bytes): an array object each would take twice the
    memory of a message's four values.
    """

    stamp: int               # bag (receive) stamp [ns]
    name: tuple[str, ...]
    packed_effort: bytes     # N (tensions), as recorded
    packed_position: bytes   # m (displacements), as recorded

    @property
    def effort(self) -> np.ndarray:
        return np.frombuffer(self.packed_effort)

    @property
    def position(self) -> np.ndarray:
        return np.frombuffer(self.packed_position)


class Reducer:
    """Reduces JointState messages to :class:`Joints`, sharing their name tuples."""

    def __init__(self):
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}

    def joints(self, stamp: int, msg) -> Joints:
        """Return the :class:`Joints` of ``msg`` received at ``stamp`` [ns]."""
        names = tuple(msg.name)
        return Joints(stamp, self._names.setdefault(names, names), _packed(msg.effort),
                      _packed(msg.position))


def _packed(values) -> bytes:
    return np.asarray(values, dtype=float).tobytes()


class Tips:
    """The ``tip/measured`` samples: bag stamps [ns] and points [m], packed."""

    def __init__(self):
        self.stamps = array('q')
        self.points = array('d')

    def append(self, stamp: int, msg) -> None:
        self.stamps.append(stamp)
        self.points.extend((msg.point.x, msg.point.y, msg.point.z))

    def __len__(self) -> int:
        return len(self.stamps)


class Duplicates:
    """Tells the exact duplicates of a stream apart (see the module docstring)."""

    def __init__(self):
        self._recent: dict[str, tuple[set, deque]] = {}

    def seen(self, topic: str, msg) -> bool:
        """Tell whether ``msg`` of ``topic`` repeats an earlier one; remember it if not."""
        stamp = msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec
        if stamp == 0:
            return False
        key = (stamp, _content(msg))
        keys, order = self._recent.setdefault(topic, (set(), deque()))
        if key in keys:
            return True
        keys.add(key)
        order.append(key)
        while order[0][0] < stamp - DUPLICATE_WINDOW_NS:
            keys.discard(order.popleft())
        return False


def _content(msg) -> tuple:
    """Everything of a JointState or PointStamped but its header stamp, hashable."""
    if hasattr(msg, 'point'):
        return msg.header.frame_id, msg.point.x, msg.point.y, msg.point.z
    fields = (msg.position, msg.velocity, msg.effort)
    return (msg.header.frame_id, tuple(msg.name),
            *(np.asarray(values, dtype=float).tobytes() for values in fields))


def command_vector(msg, names: list[str], held: dict | None,
                   where: str) -> tuple[str, np.ndarray]:
    """
    (kind, values in robot order) of one JointState command.

    A setpoint (``held`` the last value of each tendon so far, updated): its effort
    (tensions), else its position (displacements). A state (``held`` None): its effort
    (measured tensions), else its position (an imported table of displacements).
    """
    if len(msg.effort) or (held is None and not len(msg.position)):
        return 'tension', joint_field(msg, names, 'effort', where, held=held)
    return 'displacement', joint_field(msg, names, 'position', where, held=held)


def joint_field(msg, names: Sequence[str], field: str, where: str,
                noun: str = 'tendon', held: dict[str, float] | None = None) -> np.ndarray:
    """
    Return one field of a JointState message in the order of ``names``.

    Parameters
    ----------
    msg : sensor_msgs/msg/JointState
        As deserialized from a bag (or an rclpy message, or a :class:`Joints`).
    names : sequence of str
        Joints wanted, each of which the message must name; it must name no other.
    field : str
        ``'position'``, ``'velocity'`` or ``'effort'``.
    where, noun : str
        Prefix of error messages (file, topic, time); what a joint is called in them.
    held : dict, optional
        The last value of each joint so far, for a message that may leave some out (a
        setpoint: the simulator holds the others); updated with this message's values.

    Returns
    -------
    numpy.ndarray (len(names),)
        Finite values; an :class:`ExperimentError` otherwise.

    """
    msg_names = list(msg.name)
    data = np.asarray(getattr(msg, field), dtype=float)
    if data.size != len(msg_names):
        raise ExperimentError(f'{where}: {counted(len(msg_names), "name")} but '
                              f'{counted(data.size, field + " value")}')
    given = {}
    for name, value in zip(msg_names, data.tolist()):
        given.setdefault(name, value)     # the first of a name given twice, as before
    for name in names:
        if name not in given and (held is None or name not in held):
            before = '' if held is None else ', and no setpoint before gives it'
            raise ExperimentError(f'{where}: {noun} {name!r} missing{before} '
                                  f'(names: {msg_names})')
    # values of a joint the robot lacks would be dropped, and the rest read as its own
    extra = [name for name in msg_names if name not in names]
    if extra:
        raise ExperimentError(f'{where}: names {extra}, which the robot lacks (its {noun} '
                              f'names: {list(names)}): is its description the robot recorded?')
    vector = np.array([given[name] if name in given else held[name] for name in names],
                      dtype=float)
    if not np.all(np.isfinite(vector)):
        raise ExperimentError(f'{where}: {field} is not finite: {vector.tolist()}')
    if held is not None:
        held.update(given)
    return vector


def applied_tensions(states: list[Joints], names: list[str], source: str, start_ns: int,
                     topic: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """
    Return the times [s] from ``start_ns`` and efforts of the ``topic`` states with efforts.

    What the stack applied for tension setpoints (a hardware bridge applies its
    ``min_tension`` for a setpoint below it); ``(None, None)`` when no state reports efforts.
    """
    efforts = [state for state in states if len(state.effort)]
    if not efforts:
        return None, None
    values = np.empty((len(efforts), len(names)))     # filled row by row: no array per row kept
    for row, state in enumerate(efforts):
        values[row] = joint_field(state, names, 'effort', f'{source}: {topic} at '
                                  f'{(state.stamp - start_ns) * 1e-9:.3f} s')
    times = np.array([state.stamp - start_ns for state in efforts], dtype=float) * 1e-9
    return times, values


def crop(recording: Recording, start: float, end: float, what: str) -> Recording:
    """
    Return the part of ``recording`` from ``start`` to ``end`` [s, its own times].

    The tip samples (and their labels) within [start, end]; the commands and applied
    tensions within it, after the last one before ``start``: the command in force when the
    part begins. Times stay the recording's. ``what`` names the part in errors.
    """
    tips = slice(int(np.searchsorted(recording.tip_times, start)),
                 int(np.searchsorted(recording.tip_times, end, side='right')))
    if tips.start == tips.stop:
        raise ExperimentError(f'{recording.source}: no tip/measured messages {what}')

    def in_force(times):
        first = int(np.searchsorted(times, start, side='right')) - 1
        return slice(max(first, 0), int(np.searchsorted(times, end, side='right')))
    commands = in_force(recording.command_times)
    if commands.start == commands.stop:
        raise ExperimentError(f'{recording.source}: no {recording.command_topic} messages '
                              f'up to the end of the part {what}')
    applied = {}
    if recording.applied is not None:
        kept = in_force(recording.applied_times)
        empty = kept.start == kept.stop     # all after the part: none in it
        applied = {'applied_times': None if empty else recording.applied_times[kept],
                   'applied': None if empty else recording.applied[kept]}
    return replace(recording, command_times=recording.command_times[commands],
                   commands=recording.commands[commands], tip_times=recording.tip_times[tips],
                   tips=recording.tips[tips], labels=recording.labels[tips], **applied)
