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
What the rod's two dynamic simulators share: their state and when the tip is at rest.

:class:`~tendon_robot_sim.models.rod.dynamics.TendonSimulator` (explicit, PyElastica) and
:class:`~tendon_robot_sim.models.rod.implicit_dynamics.ImplicitSimulator` (implicit, BDF-alpha
and shooting) report a :class:`SimState` and settle through :class:`Settling`. This module
imports neither PyElastica nor numba.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
from typing import Callable

import numpy as np

from tendon_robot_sim.models.sim_model import InputError

# Seconds of tip-position history kept for is_steady().
HISTORY_SPAN = 1.0


@dataclass(frozen=True)
class SimState:
    """
    Snapshot of the robot; everything in the base (world) frame, SI units.

    Attributes
    ----------
    time : float
        Simulation time [s].
    tip_position : (3,) [m]
    tip_orientation : (4,) quaternion [qx, qy, qz, qw] of the tip frame (columns d1 d2 d3).
    tip_rotation : (3, 3) columns d1, d2, d3 of the tip (last element).
    tip_velocity : (3,) [m/s]
    centerline : (3, n_nodes) backbone node positions [m].
    vertebra_positions : (3, k) centre of each vertebra disc [m].
    vertebra_rotations : (k, 3, 3) columns d1 d2 d3 of each disc.
    vertebra_orientations : (k, 4) quaternions [qx, qy, qz, qw].
    tendon_paths : tuple of (3, j) arrays
        Per tendon: base hole, then the hole of each vertebra up to its anchor [m].
    tensions : (n_tendons,) currently applied tensions [N].
    tendon_lengths : (n_tendons,) path length from base hole to anchor [m].
    tendon_displacements : (n_tendons,)
        Length pulled in past the base [m], positive when pulling
        (:func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`: with the rest
        length, the path length on the straight rod, the compliance and the motor distance).

    """

    time: float
    tip_position: np.ndarray
    tip_orientation: np.ndarray
    tip_rotation: np.ndarray
    tip_velocity: np.ndarray
    centerline: np.ndarray
    vertebra_positions: np.ndarray
    vertebra_rotations: np.ndarray
    vertebra_orientations: np.ndarray
    tendon_paths: tuple
    tensions: np.ndarray
    tendon_lengths: np.ndarray
    tendon_displacements: np.ndarray


class Settling:
    """
    Tip history, :meth:`is_steady` and :meth:`run_until_steady` of a simulator.

    The simulator provides ``dt``, ``time``, ``advance(duration)`` and ``state()``, sets
    ``sample_period`` (s between tip samples, at least dt) and calls :meth:`_start_history`
    at t = 0 and :meth:`_record_tip` as it steps.
    """

    dt: float
    time: float
    sample_period: float

    def _start_history(self, time: float, tip: np.ndarray) -> None:
        self._history = deque([(float(time), tip.copy())],
                              maxlen=math.ceil(HISTORY_SPAN / self.sample_period) + 2)

    def _record_tip(self, time: float, tip: np.ndarray) -> None:
        """Keep a tip sample for is_steady(), about every ``sample_period``."""
        if time - self._history[-1][0] >= self.sample_period - 0.5 * self.dt:
            self._history.append((float(time), tip.copy()))

    def is_steady(self, speed_tolerance: float = 1e-3, window: float = 0.1) -> bool:
        """
        Whether the tip has come to rest.

        The tip's mean speed over the last ``window`` seconds and over the
        ``window`` before it must both be below ``speed_tolerance`` [m/s]; the
        second window catches the turning points of a slow oscillation. Mean
        speeds (displacement / window) rather than the instantaneous velocity,
        because the weakly damped axial modes of the explicit model keep a
        micrometre-sized, kilohertz tip vibration alive long after the shape has settled.
        False until 2 windows have been simulated since the start or reset().
        A window shorter than 2 tip samples (``2 * sample_period``) is lengthened.
        """
        if not (is_real(window) and 0.0 < window <= HISTORY_SPAN / 2.0):
            raise InputError(f'window: must be in (0, {HISTORY_SPAN / 2.0:g}] s, got {window!r}')
        # at least two tip samples per window
        window = max(window, 2 * self.sample_period)
        times = np.fromiter((sample[0] for sample in self._history), float,
                            len(self._history))
        if times[-1] - times[0] < 2.0 * window - 0.5 * self.dt:
            return False
        # nearest samples to t - window and t - 2 window
        now = times[-1]
        indices = [np.abs(times - (now - m * window)).argmin() for m in (0, 1, 2)]
        tips = [self._history[i][1] for i in indices]
        speeds = [np.linalg.norm(tips[m] - tips[m + 1])
                  / (times[indices[m]] - times[indices[m + 1]]) for m in (0, 1)]
        return bool(max(speeds) < speed_tolerance)

    def run_until_steady(self, max_time: float, check_interval: float = 0.05,
                         speed_tolerance: float = 1e-3, window: float = 0.1,
                         progress: Callable[[float], None] | None = None) -> SimState:
        """
        Advance in chunks of ``check_interval`` [s] until steady or ``max_time`` [s] more.

        ``progress``, if given, is called after each chunk with the simulated
        time of that chunk [s]. Whether the end state is steady is
        :meth:`is_steady` (with the same tolerances).
        """
        for name, value in (('max_time', max_time), ('check_interval', check_interval)):
            if not (is_real(value) and math.isfinite(value) and value > 0.0):
                raise InputError(f'{name}: must be a finite number > 0 s, got {value!r}')
        end = self.time + max_time
        while self.time < end - 0.5 * self.dt:
            chunk = max(min(check_interval, end - self.time), self.dt)
            start = self.time
            self.advance(chunk)
            if progress is not None:
                progress(self.time - start)
            if self.is_steady(speed_tolerance, window):
                break
        return self.state()


def is_real(value) -> bool:
    """Tell whether ``value`` is a real number (bool and strings excluded)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))
