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

"""Minimum-tension distribution against a brute-force vertex enumeration (no LP)."""

import itertools
import math

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from tendon_robot_sim.models.tension_distribution import (distribute, DistributionError,
                                                          moment_matrix)


def brute_force_minimum(A, b, lower, upper):
    """
    Least sum(T) over the vertices of {A T = b, lower <= T <= upper}, or None.

    A vertex of the polytope has at least n - m tensions at a bound; the remaining m
    follow from the equalities. The LP optimum lies at a vertex.
    """
    m, n = A.shape
    best = None
    for free in itertools.combinations(range(n), m):
        fixed = [i for i in range(n) if i not in free]
        sub = A[:, free]
        if abs(np.linalg.det(sub)) < 1e-12:
            continue
        for choice in itertools.product((0, 1), repeat=len(fixed)):
            T = np.empty(n)
            T[fixed] = np.where(np.array(choice) == 1, upper[fixed], lower[fixed])
            T[list(free)] = np.linalg.solve(sub, b - A[:, fixed] @ T[fixed])
            if np.all(T >= lower - 1e-9) and np.all(T <= upper + 1e-9):
                if best is None or T.sum() < best.sum():
                    best = T
    return best


def random_robot(rng, n=4):
    data = load_robot(default_robot_file()).to_dict()
    angles = np.sort(rng.uniform(0.0, 360.0, n))
    data['tendons'] = [{'name': f't{i}', 'offset': float(rng.uniform(0.005, 0.02)),
                        'angle_deg': float(a), 'routing': 'parallel',
                        'max_tension': float(rng.uniform(5.0, 20.0))}
                       for i, a in enumerate(angles)]
    data['vertebrae'].pop('radius', None)   # discs that hold the holes: the default radius
    return robot_from_dict(data)


def test_moment_matrix_is_hole_cross_axis():
    robot = load_robot(default_robot_file())
    A = moment_matrix(robot)
    for i, tendon in enumerate(robot.tendons):
        hole = tendon.offset * np.array([math.cos(tendon.angle), math.sin(tendon.angle), 0.0])
        assert np.allclose(A[:, i], np.cross(hole, [0.0, 0.0, 1.0])[:2])


def test_minimum_tension_matches_brute_force_for_random_moments_and_angles():
    rng = np.random.default_rng(5)
    feasible_cases = 0
    for _ in range(40):
        robot = random_robot(rng)
        A = moment_matrix(robot)
        lower = np.full(4, rng.uniform(0.0, 1.0))
        upper = robot.max_tensions
        b = A @ rng.uniform(lower, upper)      # reachable by construction
        result = distribute(A, b, lower, upper)
        reference = brute_force_minimum(A, b, lower, upper)
        assert reference is not None
        assert result.feasible
        assert np.allclose(A @ result.tensions, b, atol=1e-9)
        assert np.all(result.tensions >= lower) and np.all(result.tensions <= upper)
        assert result.tensions.sum() == pytest.approx(reference.sum(), abs=1e-7)
        feasible_cases += 1
    assert feasible_cases == 40


def test_out_of_reach_moment_gives_the_closest_moment_within_bounds():
    robot = load_robot(default_robot_file())     # holes at 0, 90, 180, 270 deg
    A = moment_matrix(robot)
    lower, upper = np.full(4, 0.5), robot.max_tensions
    r = robot.tendons[0].offset
    # Largest moment along -d2 (tendon t0 at d1: (sin 0, -cos 0) = (0, -1)): t0 at max,
    # its antagonist t2 at the pretension; t1 and t3 balance each other at pretension.
    b = np.array([0.0, -2.0 * upper[0] * r])
    result = distribute(A, b, lower, upper)
    assert not result.feasible and 'out of reach' in result.message
    assert np.all(result.tensions >= lower) and np.all(result.tensions <= upper)
    assert np.allclose(result.tensions, [upper[0], lower[1], lower[2], lower[3]])
    assert np.allclose(result.achieved, [0.0, -(upper[0] - lower[2]) * r])


def test_out_of_reach_with_a_tendon_pinned_at_lower_equal_upper():
    """
    A tendon whose bounds meet (pretension = its max_tension, allowed) stays at that value.

    The closest-effect fallback raised scipy's 'Each lower bound must be strictly less than
    each upper bound' instead: the tip loop skipped every step of an unreachable target.
    """
    # T0 - T1 + T2 with T2 pinned at 1: at most 2 - 0 + 1 = 3, far below the 10 asked for.
    result = distribute([[1.0, -1.0, 1.0]], [10.0], [0.0, 0.0, 1.0], [2.0, 2.0, 1.0])
    assert not result.feasible
    assert np.allclose(result.tensions, [2.0, 0.0, 1.0])
    assert np.allclose(result.achieved, [3.0])
    # Every tendon pinned: the only tensions there are.
    result = distribute([[1.0, -1.0]], [5.0], [0.5, 0.5], [0.5, 0.5])
    assert not result.feasible and np.allclose(result.tensions, [0.5, 0.5])


def test_general_map_and_bad_inputs():
    A = np.array([[1.0, -1.0, 0.5]])
    result = distribute(A, [0.3], 0.1, [2.0, 2.0, 2.0])
    reference = brute_force_minimum(A, np.array([0.3]), np.full(3, 0.1), np.full(3, 2.0))
    assert result.tensions.sum() == pytest.approx(reference.sum())
    with pytest.raises(DistributionError, match='b: has 2 values'):
        distribute(A, [0.3, 1.0], 0.0, 1.0)
    with pytest.raises(DistributionError, match='lower: exceeds upper'):
        distribute(A, [0.3], 2.0, 1.0)
    with pytest.raises(DistributionError, match='b: must be finite'):
        distribute(A, [math.nan], 0.0, 1.0)
