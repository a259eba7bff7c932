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

"""The plot's samples over a window of time and the y range it gives them, without viser."""

from __future__ import annotations

from collections import deque
import math
from typing import Sequence

import numpy as np
from tendon_robot_sim.view.inputs import nice_step


class History:
    """Samples (time [s], values) of the last ``window`` seconds."""

    def __init__(self, window: float):
        self.window = window
        self.samples: deque[tuple[float, np.ndarray]] = deque()

    def add(self, t: float, values: np.ndarray) -> None:
        if self.samples and t < self.samples[-1][0]:
            self.samples.clear()    # time went back (a bag seeked back): start again
        self.samples.append((t, np.asarray(values, dtype=float)))
        while self.samples and self.samples[0][0] < t - self.window:
            self.samples.popleft()

    def arrays(self, now: float, width: int) -> tuple[np.ndarray, ...]:
        """Return (seconds before ``now``, then one array per value), ``width`` values."""
        rows = [(t, v) for t, v in self.samples if len(v) == width]
        if not rows:
            return (np.zeros(0),) + tuple(np.zeros(0) for _ in range(width))
        times = np.array([t for t, _ in rows]) - now
        values = np.array([v for _, v in rows])
        return (times,) + tuple(values[:, i] for i in range(width))


def value_range(data: Sequence[np.ndarray], current: tuple[float, float] | None = None
                ) -> tuple[float, float] | None:
    """
    Return the y range of a plot of ``data`` (the value arrays), rounded out to round steps.

    uPlot kept the range of the empty plot it began with (0 to 100): the page sets one from
    the data. ``current`` is kept while it holds every value and is less than four times the
    range the data need, so the axis does not jump at every sample. None without finite data.
    Values all at or above 0 (tensions) keep a range from 0 or above.
    """
    values = np.concatenate([np.asarray(d, dtype=float).ravel() for d in data]) if data \
        else np.zeros(0)
    values = values[np.isfinite(values)]
    if not values.size:
        return current
    low, high = float(values.min()), float(values.max())
    span = high - low
    # a constant: 10 % around it; zeros (nothing pulled yet): 0 to 0.6 rather than tiny steps
    pad = 0.1 * span if span > 0.0 else (0.1 * abs(high) if high else 0.5)
    step = nice_step((span + 2.0 * pad) / 5.0)
    bottom, top = math.floor((low - pad) / step) * step, math.ceil((high + pad) / step) * step
    if low >= 0.0 > bottom:
        bottom = 0.0
    if current is not None and current[0] <= low and high <= current[1] \
            and current[1] - current[0] < 4.0 * (top - bottom):
        return current
    return bottom, top
