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
positions; of each ``tip/measured`` its bag stamp and point. Not the deserialized messages.

Exact duplicates - the same topic, header stamp and data, recorded twice (two recorders on
one bag, a relay republishing onto the topic) - are dropped (:class:`Duplicates`): each
message counts once in a hold's means. A message with a zero header stamp (its publisher did
not stamp it) is never a duplicate: it cannot be told from a repeat of the same value.
"""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np

#: A copy is found when its header stamp is within this of the newest of its topic [ns]: a
#: duplicate arrives right after its original, and the keys kept stay few.
DUPLICATE_WINDOW_NS = 10 * 10 ** 9
_EMPTY = np.zeros(0)
_EMPTY.setflags(write=False)


@dataclass(frozen=True, slots=True)
class Joints:
    """The fields of a JointState the experiment tools use; ``name`` as the message calls it."""

    stamp: int               # bag (receive) stamp [ns]
    name: tuple[str, ...]
    effort: np.ndarray       # N (tensions), as recorded
    position: np.ndarray     # m (displacements), as recorded


class Reducer:
    """Reduces JointState messages to :class:`Joints`, sharing their name tuples."""

    def __init__(self):
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}

    def joints(self, stamp: int, msg) -> Joints:
        """Return the :class:`Joints` of ``msg`` received at ``stamp`` [ns]."""
        names = tuple(msg.name)
        return Joints(stamp, self._names.setdefault(names, names), _copy(msg.effort),
                      _copy(msg.position))


def _copy(values) -> np.ndarray:
    # a copy: a view would keep the whole serialized message alive
    return np.array(values, dtype=float) if len(values) else _EMPTY


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
