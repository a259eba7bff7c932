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
Actuator inputs over time from a CSV file: the steps and ramps of an experiment.

Format: a header line with a column ``t`` (time, s) and one column per actuator, named as
in the robot description (a tendon's tension in N, a bellows' gauge pressure in Pa); an
actuator without a column stays at 0. Rows in non-decreasing ``t``. Between two rows the
inputs change linearly (a ramp, as Hadzic & Häseli's "linear pressure" runs); two rows at
the same time make a step (the second row holds from that time on, as their "steps" runs);
before the first row the first row holds, after the last row the last.

    t,p1,p5
    0,0,0
    1,0,0
    1,80000,0
    3,80000,0
    5,0,60000

No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Sequence

import numpy as np

from tendon_robot_sim.experiment.csv_table import read_table, TableError

TIME_COLUMN = 't'


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file, line and column."""


@dataclass(frozen=True)
class InputProfile:
    """Piecewise-linear inputs over time (see the module docstring)."""

    source: str              # the file, for messages
    names: tuple[str, ...]   # every actuator of the robot, in its order
    times: np.ndarray        # (k,) s, non-decreasing
    values: np.ndarray       # (k, m) N or Pa, actuators in ``names`` order
    given: tuple[str, ...] = ()   # the actuators the file has a column of

    @property
    def end(self) -> float:
        """Return the time of the last row [s]."""
        return float(self.times[-1])

    def at(self, t: float) -> np.ndarray:
        """Return the inputs (m,) at time ``t`` [s]."""
        i = int(np.searchsorted(self.times, t, side='right')) - 1   # last row at or before t
        if i < 0:
            return self.values[0].copy()
        if i + 1 == len(self.times):
            return self.values[-1].copy()
        t0, t1 = self.times[i], self.times[i + 1]
        w = (t - t0) / (t1 - t0)       # t1 > t0: the last of rows at equal times was taken
        return (1.0 - w) * self.values[i] + w * self.values[i + 1]

    @cached_property
    def _areas(self) -> np.ndarray:
        """(k, m): the integral of the inputs from the first row to each row (a step: 0)."""
        pieces = np.diff(self.times)[:, None] * (self.values[1:] + self.values[:-1]) / 2.0
        return np.vstack((np.zeros((1, self.values.shape[1])), np.cumsum(pieces, axis=0)))

    def integral(self, t: float) -> np.ndarray:
        """Return the inputs' integral, (m,) [N s or Pa s], from the first row to ``t``."""
        i = int(np.searchsorted(self.times, t, side='right')) - 1
        if i < 0:
            return (t - self.times[0]) * self.values[0]
        # the trapezoid from row i: exact, the inputs being linear up to the next row
        return self._areas[i] + (t - self.times[i]) * (self.values[i] + self.at(t)) / 2.0

    def mean(self, start: float, end: float) -> np.ndarray:
        """
        Return the mean inputs (m,) over [``start``, ``end``] (end > start) [s].

        What a model stepping in time takes over a step: a ramp as it is, a step at a time
        within it for the share of the step after that time (its impulse kept).
        """
        return (self.integral(end) - self.integral(start)) / (end - start)


class MixedInputs:
    """
    Tensions for some tendons, displacements for others: two profiles of the same tendons.

    Each tendon takes the input of the profile that has its column (one of them at most); a
    tendon in neither has tension 0 (slack), as a motor that lets its tendon go.
    """

    def __init__(self, tensions: InputProfile | None, displacements: InputProfile | None):
        profiles = [p for p in (tensions, displacements) if p is not None]
        if tensions is not None and displacements is not None:
            both = [name for name in tensions.given if name in displacements.given]
            if both:
                raise ProfileError(f'tendon {both[0]!r} is also in {tensions.source}; give each '
                                   'tendon one input')
        self.names = profiles[0].names
        self.tensions, self.displacements = tensions, displacements
        pulled = displacements.given if displacements is not None else ()
        self.fields = ['displacement' if name in pulled else 'tension' for name in self.names]
        self._pulled = np.array([field == 'displacement' for field in self.fields])
        self.end = max(p.end for p in profiles)

    def at(self, t: float) -> np.ndarray:
        """Return each tendon's input (n,) at ``t`` [s]: N or m, as its field."""
        tension = (self.tensions.at(t) if self.tensions is not None
                   else np.zeros(len(self.names)))
        if self.displacements is None:
            return tension
        return np.where(self._pulled, self.displacements.at(t), tension)

    def start(self, sim) -> None:
        """Command the inputs at t = 0 on a simulator (``set_tensions``, ``set_displacements``)."""
        values = self.at(0.0)
        if not self._pulled.any():
            sim.set_tensions(values)
            return
        named = list(zip(self.names, values, self._pulled))
        sim.set_tensions({name: value for name, value, pulled in named if not pulled})
        sim.set_displacements({name: value for name, value, pulled in named if pulled})


def tendon_input_limits(robot, quantity: str) -> np.ndarray:
    """
    Return each tendon's input range [low, high] (n, 2): ``tension`` N or ``displacement`` m.

    Tensions within [0, max_tension] (the robot description's); displacements within the rod's
    length either way (no tendon moves more: beyond it, a unit mistake). The one bound of
    every command that reads tendon inputs from a file (``simulate``, ``statics``, ``import``,
    a CSV of holds for ``calibrate`` and ``validate``).
    """
    if quantity == 'tension':
        return np.column_stack((np.zeros(len(robot.tendons)), robot.max_tensions))
    return np.tile([-robot.rod.length, robot.rod.length], (len(robot.tendons), 1))


def input_problem(commands: np.ndarray, robot, quantity: str) -> tuple[int, int, str] | None:
    """
    Return (row, column, why) of the first of ``commands`` (k, n) outside its tendon's range.

    The ranges of :func:`tendon_input_limits`; None when every command is within them. For
    the tables that carry tendon inputs with their measurements (``import``, a CSV of holds).
    """
    low, high = tendon_input_limits(robot, quantity).T
    outside = (commands < low) | (commands > high)
    if not np.any(outside):
        return None
    row, col = (int(i) for i in np.argwhere(outside)[0])
    value = commands[row, col]
    if quantity != 'tension':
        why = (f'a displacement must be within [{low[col]:g}, {high[col]:g}] m (the rod length '
               f'either way), got {value:g} m')
    elif value < 0.0:
        why = f'a tension must be >= 0 N, got {value:g} N'
    else:
        why = (f'a tension must be <= max_tension = {high[col]:g} N of tendon '
               f'{robot.tendons[col].name!r}, got {value:g} N')
    return row, col, why


def read_profile(path: str | Path, names: Sequence[str], limits: np.ndarray,
                 quantity: str = 'tension', unit: str = 'N') -> InputProfile:
    """
    Read an input profile for actuators ``names`` with allowed ranges ``limits`` (m, 2).

    Errors name the file, the line and the column: a missing or unreadable file, an unknown
    or repeated column, a cell that is not a finite number, times that go back, a value
    outside its actuator's range (``quantity`` and ``unit`` word it).
    """
    names = tuple(names)

    def check_header(header):
        # before the rows: a header split on another separator, or a column without a name
        # (a trailing comma), is the header's fault, not that of a cell below it
        for i, column in enumerate(header):
            if not column:
                raise ProfileError(f'{path}: line 1: column {i + 1} has no name (a comma at '
                                   'the end of the header?)')
            if column != TIME_COLUMN and column not in names:
                raise ProfileError(f'{path}: line 1: unknown column {column!r}; expected '
                                   f'{TIME_COLUMN!r} (s) and actuators of {list(names)} '
                                   f'({quantity}, {unit}), separated by commas')
        if TIME_COLUMN not in header:
            raise ProfileError(f'{path}: line 1: column {TIME_COLUMN!r} (time, s) missing')
        if len(header) < 2:
            raise ProfileError(f'{path}: line 1: no actuator column; name one of {list(names)}')

    try:
        table = read_table(path, check_header=check_header)
    except TableError as error:
        raise ProfileError(str(error)) from None
    times = table.column(TIME_COLUMN)
    for k, t in enumerate(times):
        if t < 0.0 or (k and t < times[k - 1]):
            raise ProfileError(f'{table.where(k, TIME_COLUMN)}: times must be >= 0 s and not '
                               f'decrease, got {t:g} s')
    values = np.zeros((len(times), len(names)))
    for i, name in enumerate(names):
        low, high = limits[i]
        if name not in table.header:
            if not low <= 0.0 <= high:
                raise ProfileError(f'{path}: line 1: column {name!r} missing, and 0 {unit} is '
                                   f'outside its {quantity} range [{low:g}, {high:g}] {unit}')
            continue
        values[:, i] = table.column(name)
        outside = np.flatnonzero((values[:, i] < low) | (values[:, i] > high))
        if outside.size:
            k = outside[0]
            raise ProfileError(f'{table.where(k, name)}: {values[k, i]:g} {unit} is outside '
                               f'the {quantity} range [{low:g}, {high:g}] {unit}')
    return InputProfile(str(path), names, times, values,
                        tuple(name for name in names if name in table.header))
