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
Rods that pass through each other: the clearance of a solution against independent shapes.

The segment distances against brute-force sampling of the segments and a closed form; the
clearance of whole solutions against the rods integrated densely by scipy from their bases
(``scipy_rod`` of the stability test: its own rod equations), for a pose whose rods clear each
other and one whose rods 3 and 4 intersect, a pose the solver finds within the motor limits.
"""

import numpy as np
import pytest

from tendon_robot_sim.models.pcr.clearance import polyline_gap, rod_clearance, segment_distances
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from test_pcr_stability import ROBOT, scipy_rod

# (position [m], roll, pitch, yaw [deg]): found by sampling poses within the motor limits
CROSSED = ([-0.022, -0.023, 0.362], [17.4, 4.3, -79.7])     # rods 3 and 4 through each other
CLEAR = ([0.05, 0.0, 0.45], [0.0, 0.0, 10.0])
# The solver's polylines (33 points a rod) against 400 points of the curves: chords of 16.6 mm
# stay within kappa h^2 / 8 of a curve (0.11 mm at the rest curvature, 0.2 mm at 6 1/m), and
# the solver's RK4 shapes within microns of scipy's. A wrong pair, a wrong sign or a distance
# between the wrong points is off by millimetres.
SHAPE = 0.2e-3


def brute_force(p0, p1, q0, q1, n=20001):
    """Least distance from n points along p0-p1 to the segment q0-q1 (its closest point)."""
    p = p0 + np.linspace(0.0, 1.0, n)[:, None] * (p1 - p0)
    d = q1 - q0
    t = np.clip((p - q0) @ d / (d @ d), 0.0, 1.0)
    return np.min(np.linalg.norm(p - (q0 + t[:, None] * d), axis=1))


def test_segment_distances_match_sampled_segments():
    rng = np.random.default_rng(7)
    ends = rng.normal(size=(200, 4, 3))
    # parallel, collinear and touching pairs beside the random ones
    ends[0, 2:] = ends[0, :2] + [0.3, 0.1, 0.0]
    ends[1, 2:] = ends[1, :2] + 2.5 * (ends[1, 1] - ends[1, 0])
    ends[2, 2] = ends[2, 0] + 0.4 * (ends[2, 1] - ends[2, 0])
    distance, s, t = segment_distances(ends[:, 0], ends[:, 1], ends[:, 2], ends[:, 3])
    expected = np.array([brute_force(*e) for e in ends])
    # 20001 points along a segment of length about 1.6 find the least distance to within a
    # step (8e-5); the closed form's parameters clamped wrongly are off by tenths
    np.testing.assert_allclose(distance, expected, atol=1e-4)
    assert distance[2] == pytest.approx(0.0, abs=1e-12)
    # the parameters name the closest points
    p = ends[:, 0] + s[:, None] * (ends[:, 1] - ends[:, 0])
    q = ends[:, 2] + t[:, None] * (ends[:, 3] - ends[:, 2])
    np.testing.assert_allclose(np.linalg.norm(p - q, axis=1), distance, atol=1e-12)


def test_two_crossing_straight_rods_clear_by_their_offset_less_a_diameter():
    """Rods along x and y, 5 mm apart in z, radius 2 mm: clear by 1 mm where they cross."""
    s = np.linspace(-0.1, 0.1, 21)
    rods = np.zeros((6, 3, 21))
    rods[0, 0] = s
    rods[1, 1], rods[1, 2] = s + 0.003, 0.005
    for k in range(2, 6):   # four rods far away
        rods[k, 0], rods[k, 2] = s, 1.0 * k
    clearance = polyline_gap(rods, s + 0.1, radius=0.002)
    assert clearance.gap == pytest.approx(0.001, abs=1e-12)
    assert clearance.rods == (1, 2)
    np.testing.assert_allclose(clearance.arc_lengths, [0.1, 0.097], atol=1e-12)
    assert clearance.clear
    rods[1, 2] = 0.003          # 3 mm apart: the 4 mm thick rods overlap by 1 mm
    assert polyline_gap(rods, s + 0.1, radius=0.002).gap == pytest.approx(-0.001, abs=1e-12)


@pytest.mark.parametrize('pose, clear', [(CROSSED, False), (CLEAR, True)])
def test_clearance_matches_the_rods_integrated_by_scipy(pose, clear):
    position, rpy = pose
    result = PcrSolver(ROBOT).inverse(np.array(position), np.radians(rpy))
    assert result.within_limits
    clearance = rod_clearance(ROBOT, result)
    dense = np.array([scipy_rod(result, i, points=400, jacobi=False)[2][0:3] for i in range(6)])
    grid = np.linspace(0.0, ROBOT.rods.length, 400)
    expected = polyline_gap(dense, grid, ROBOT.rods.radius)
    assert clearance.clear is clear
    assert clearance.rods == expected.rods
    assert clearance.gap == pytest.approx(expected.gap, abs=SHAPE)
    # the closest points along the rods: within two of the solver's 16.6 mm steps
    np.testing.assert_allclose(clearance.arc_lengths, expected.arc_lengths, atol=0.033)
    if not clear:
        assert expected.gap < -2e-3     # the rods overlap by millimetres on the curves too
