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
Steady stretches of a recording: where the commands stay constant and the measurement settles.

The holds of a tendon robot's recording (:mod:`tendon_robot_sim.experiment.experiment`: the
tip under tensions) and of a trunk's run (:mod:`tendon_robot_sim.experiment.identification`:
the bellows lengths under pressures) are found alike.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Stretch:
    """
    A steady stretch of a recording: constant command, settled measurement.

    Times in s from the recording start; command and measurement in their own units.
    """

    command: np.ndarray    # (n,) mean command over the stretch
    settled: np.ndarray    # (d,) mean measurement over the settled part
    start: float           # s, first settled sample
    end: float             # s, last settled sample
    duration: float        # s, of the settled part (one sample period added)
    samples: int           # measurement samples averaged


def steady_stretches(command_times: np.ndarray, commands: np.ndarray,
                     sample_times: np.ndarray, samples: np.ndarray, hold_time: float,
                     tolerance: float, command_tolerance: float) -> list[Stretch]:
    """
    Find the stretches where the commands stay constant and the measurement settles.

    A stretch begins where a command differs by more than ``command_tolerance`` from the
    first command of the previous stretch (any component). Its settled part is the last
    run of samples that all stay within ``tolerance`` (Euclidean norm) of the median of the
    stretch's last quarter (in time); a stretch counts if that part lasts ``hold_time`` or
    longer.

    Parameters
    ----------
    command_times : array (k,)
        Increasing times of the commands [s].
    commands : array (k, n)
        Commands (tensions, displacements, pressures ...).
    sample_times : array (j,)
        Increasing times of the measurement [s].
    samples : array (j, d)
        Measurement (tip position, actuator lengths ...).
    hold_time, tolerance, command_tolerance : float
        Shortest settled part [s]; largest excursion of the measurement in it (its unit);
        largest change of a command within the stretch (its unit).

    Returns
    -------
    list of Stretch
        In time order.

    """
    segments = []   # piecewise-constant command stretches [begin, end)
    begin = 0
    for i in range(1, len(commands) + 1):
        if (i == len(commands)
                or np.max(np.abs(commands[i] - commands[begin])) > command_tolerance):
            end_time = command_times[i] if i < len(commands) else np.inf
            segments.append((command_times[begin], end_time, commands[begin:i].mean(axis=0)))
            begin = i
    stretches = []
    for begin_time, end_time, vector in segments:
        inside = (sample_times >= begin_time) & (sample_times < end_time)
        stamps, points = sample_times[inside], samples[inside]
        if stamps.size < 2:
            continue
        # by time, not by count: a recording may sample the transient more densely
        settled = np.median(points[stamps >= stamps[-1] - 0.25 * (stamps[-1] - stamps[0])],
                            axis=0)
        far = np.flatnonzero(np.linalg.norm(points - settled, axis=1) > tolerance)
        first = far[-1] + 1 if far.size else 0
        if stamps.size - first < 2:
            continue
        period = (stamps[-1] - stamps[first]) / (stamps.size - first - 1)
        duration = stamps[-1] - stamps[first] + period
        if duration < hold_time - 1e-9:
            continue
        stretches.append(Stretch(command=vector, settled=points[first:].mean(axis=0),
                                 start=float(stamps[first]), end=float(stamps[-1]),
                                 duration=float(duration),
                                 samples=int(stamps.size - first)))
    return stretches
