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
Physical bounds on what a device reports (issue 22, item 14).

A device can send well-formed frames with values no robot can produce (a tip
thousands of metres away, a tension far above what the tendon is rated for). Such
a reading is an invalid sample: the bridge neither publishes it nor starts a ramp
from it, warns, and when it lasts commands the safe state.
"""

from __future__ import annotations

import numpy as np


def tension_problem(tensions: np.ndarray, max_tensions: np.ndarray, margin: float,
                    names: list[str]) -> str:
    """
    Say why ``tensions`` [N] cannot be physical ('' if they can).

    Plausible: within ``[-margin, 1 + margin] * max_tension`` of each tendon (a tendon
    does not push; a little noise around 0 and a little overshoot are real).
    """
    low, high = -margin * max_tensions, (1.0 + margin) * max_tensions
    bad = ~np.isfinite(tensions) | (tensions < low) | (tensions > high)
    if not bad.any():
        return ''
    return 'implausible tension ' + ', '.join(
        f'{n} {t:g} N (max_tension {m:g} N)'
        for n, t, m, b in zip(names, tensions, max_tensions, bad) if b)


def tip_problem(tip: np.ndarray, reach: float) -> str:
    """Say why ``tip`` (base frame, m) cannot be physical: beyond ``reach`` [m] of the base."""
    distance = float(np.linalg.norm(tip))
    if np.isfinite(distance) and distance <= reach:
        return ''
    return f'implausible tip {np.round(tip, 4).tolist()} m: {distance:g} m from the base, ' \
           f'beyond the reach {reach:g} m'


class Plausibility:
    """Count implausible readings of one device and tell when they have lasted ``hold`` [s]."""

    def __init__(self, hold: float):
        self.hold = hold
        self.count = 0
        self.since: float | None = None   # time.monotonic() of the first of a run [s]
        self.last = ''

    def update(self, problem: str, now: float) -> bool:
        """Record a reading's ``problem`` ('' if plausible); True if the reading can be used."""
        if not problem:
            self.since = None
            return True
        self.count += 1
        self.last = problem
        if self.since is None:
            self.since = now
        return False

    def sustained(self, now: float) -> bool:
        return self.since is not None and now - self.since > self.hold
