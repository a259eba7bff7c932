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
Clearance between the rods of the parallel robot: whether two rods pass through each other.

The kinetostatics solves each rod's equations alone: nothing in them keeps two rods apart,
so a solution can have rods that cross. Such a pose is an equilibrium of the model that no
robot reaches (the rods would have to pass through each other on the way). The clearance is
the least distance between the surfaces of two rods, the least distance between their
centerlines less the rods' diameter (2 ``rods.radius``): below zero the rods intersect.

The centerlines are the solution's polylines through its integration points (33 per rod at
the solver's 32 RK4 steps, 16.6 mm apart on the paper's rods). A chord of length h on a
centerline of curvature kappa stays within kappa h^2 / 8 of it: 0.11 mm at the rods' rest
curvature (1 / 0.3 m), so the clearance is that close to the curves' (checked against the
scipy reference's dense rod shapes in ``test/models/pcr/test_pcr_clearance.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from tendon_robot_sim.models.pcr.kinetostatics import PcrResult
from tendon_robot_sim.models.pcr.robot import PcrRobot

# (15, 2): every pair of the six rods, 0-based
PAIRS = np.array(list(combinations(range(6), 2)))


@dataclass(frozen=True)
class Clearance:
    """The closest two rods of a pose."""

    gap: float             # m, least surface distance (< 0: the rods intersect)
    rods: tuple[int, int]  # the two rods, 1-based as in the paper
    arc_lengths: tuple[float, float]   # m, where along each rod

    @property
    def clear(self) -> bool:
        """No two rods intersect."""
        return self.gap >= 0.0

    def says(self) -> str:
        """One line for the commands."""
        (i, j), (s_i, s_j) = self.rods, self.arc_lengths
        return (f'rods {i} and {j} {"clear by" if self.clear else "pass through each other by"} '
                f'{abs(self.gap) * 1e3:.2f} mm (at s = {s_i:.3f} m and {s_j:.3f} m)')


def segment_distances(p0: np.ndarray, p1: np.ndarray, q0: np.ndarray,
                      q1: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Least distances between segments p0-p1 and q0-q1 (arrays (..., 3)), broadcast.

    Returns (distance, s, t): the closest points are p0 + s (p1 - p0) and q0 + t (q1 - q0),
    s, t in [0, 1]. The clamped closest-point parameters of the two lines (Ericson,
    "Real-Time Collision Detection", 2005, Sec. 5.1.9), parallel segments included.
    """
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a = np.einsum('...i,...i', d1, d1)
    e = np.einsum('...i,...i', d2, d2)
    b = np.einsum('...i,...i', d1, d2)
    c = np.einsum('...i,...i', d1, r)
    f = np.einsum('...i,...i', d2, r)
    denominator = a * e - b * b
    with np.errstate(invalid='ignore', divide='ignore'):
        # parallel (denominator 0): any s; take 0
        s = np.where(denominator > 1e-12 * a * e, (b * f - c * e) / denominator, 0.0)
        s = np.clip(s, 0.0, 1.0)
        t = (b * s + f) / e
        # t outside [0, 1]: clamp it and take s again for the clamped t
        s = np.where(t < 0.0, np.clip(-c / a, 0.0, 1.0),
                     np.where(t > 1.0, np.clip((b - c) / a, 0.0, 1.0), s))
    t = np.clip(t, 0.0, 1.0)
    closest = (p0 + s[..., None] * d1) - (q0 + t[..., None] * d2)
    return np.linalg.norm(closest, axis=-1), s, t


def polyline_gap(centerlines: np.ndarray, arc_lengths: np.ndarray,
                 radius: float) -> Clearance:
    """
    Clearance of rods given as polylines: ``centerlines`` (n, 3, k) [m] at ``arc_lengths`` (k,).

    Rods that share an end point (none in the 6-RUS: its joints are refused closer than a
    rod's diameter) would count as touching there.
    """
    points = np.transpose(centerlines, (0, 2, 1))               # (n, k, 3)
    starts, ends = points[:, :-1], points[:, 1:]                # (n, k - 1, 3)
    middles, halves = 0.5 * (starts + ends), 0.5 * np.linalg.norm(ends - starts, axis=-1)
    i, j = PAIRS[:, 0], PAIRS[:, 1]
    # two segments are no closer than their middles less their half lengths: only the pairs
    # of segments that bound could beat the closest middles are solved
    middle = np.linalg.norm(middles[i][:, :, None] - middles[j][:, None, :], axis=-1)
    candidates = np.nonzero(middle - halves[i][:, :, None] - halves[j][:, None, :]
                            <= middle.min())
    pair, a, b = candidates
    distance, s, t = segment_distances(starts[i[pair], a], ends[i[pair], a],
                                       starts[j[pair], b], ends[j[pair], b])
    k = int(np.argmin(distance))
    h = np.diff(arc_lengths)
    return Clearance(gap=float(distance[k] - 2.0 * radius),
                     rods=(int(i[pair[k]]) + 1, int(j[pair[k]]) + 1),
                     arc_lengths=(float(arc_lengths[a[k]] + s[k] * h[a[k]]),
                                  float(arc_lengths[b[k]] + t[k] * h[b[k]])))


def rod_clearance(robot: PcrRobot, result: PcrResult) -> Clearance:
    """Return the clearance of the six rods of ``result`` (an inverse or forward solution)."""
    return polyline_gap(result.centerlines, result.arc_lengths, robot.rods.radius)
