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
The shooting grid of the statics: segments between breaks, each split into equal RK4 steps.

A segment ends at every vertebra, at the rod's end, at every tendon end (continuous models:
a tendon's termination is a point load) and at the extra breaks (the implicit dynamics'
shooting nodes). With obstacles the rod gets a finer step in its contact zones: by default
from the first arc length at which it can reach one
(:func:`~tendon_robot_sim.models.contact.reach.first_reach`) to its end, in the implicit
dynamics where its pose brings it near one
(:mod:`~tendon_robot_sim.models.rod.dynamics.implicit_grid`); the continuous models' grid
also breaks at the zones' ends.
"""

from typing import NamedTuple, Sequence

import numpy as np

from tendon_robot_sim.models.description import POSITION_TOLERANCE


class Grid(NamedTuple):
    """Per segment: start and end [m], RK4 steps, step [m], first routing sample and row."""

    start: np.ndarray
    end: np.ndarray
    n: np.ndarray
    h: np.ndarray
    pt: np.ndarray       # first routing sample (s, s + h/2, ..., s + n h per segment)
    row: np.ndarray      # first trajectory row


def shooting_grid(breaks: Sequence[float], step: float, contact_step: float,
                  zones: Sequence[tuple[float, float]]) -> Grid:
    """
    Return the segments ending at ``breaks`` [m] (sorted, merged within POSITION_TOLERANCE).

    Segments that overlap a contact zone (a, b) [m] of ``zones`` get ``min(step,
    contact_step)``, the others ``step`` (the largest RK4 step [m]; each segment split evenly).
    """
    ends = []
    for b in sorted(breaks):
        if not ends or b - ends[-1] > POSITION_TOLERANCE:
            ends.append(b)
    end = np.array(ends)
    start = np.concatenate(([0.0], end[:-1]))
    fine = np.zeros(end.size, dtype=bool)
    for a, b in zones:
        fine |= (end > a + POSITION_TOLERANCE) & (start < b - POSITION_TOLERANCE)
    largest = np.where(fine, min(step, contact_step), step)
    n = np.maximum(1, np.ceil((end - start) / largest - 1e-9)).astype(np.int64)
    pt = np.concatenate(([0], np.cumsum(2 * n + 1)[:-1])).astype(np.int64)
    row = np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.int64)
    return Grid(start=start, end=end, n=n, h=(end - start) / n, pt=pt, row=row)
