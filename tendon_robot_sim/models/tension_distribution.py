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
Minimum-tension distribution among antagonistic tendons (ROS-free).

A tendon can only pull, and n tendons produce fewer independent effects (two bending
moments, or two tip directions) than there are tendons, so the tensions achieving a
required effect are not unique. As in the optimisation problem of Section 3.4 of
the rolling-joint snake paper (minimise the sum of cable tensions subject to the
balance equations and a pretension lower bound), :func:`distribute` picks

    minimise  sum(T)   subject to   A T = b,   lower <= T <= upper

with ``A`` any linear map (the bending-moment map of :func:`moment_matrix`, or a tip
Jacobian). It is a linear programme (scipy's HiGHS). When no tension vector within the
bounds achieves ``b``, the closest achievable effect is taken instead (least squares
|A T - b|_2 within the bounds, then the least tension sum at that effect) and the
result says so: the returned tensions are always within the bounds (a tendon whose bounds
meet keeps that value).
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, lsq_linear

from tendon_robot_sim import counted
from tendon_robot_sim.models.tendon_robot import Robot


class DistributionError(ValueError):
    """Inputs of a distribution problem are inconsistent; the message names the field."""


@dataclass(frozen=True)
class Distribution:
    """Tensions of one distribution problem."""

    tensions: np.ndarray    # (n,) N, lower <= tensions <= upper
    achieved: np.ndarray    # (m,) A @ tensions
    feasible: bool          # True: achieved == b (to the solver tolerance)
    error: float            # |achieved - b|_2, in the units of b

    @property
    def message(self) -> str:
        if self.feasible:
            return 'feasible'
        return (f'required effect out of reach within the tension bounds; the closest '
                f'reachable one is off by {self.error:.3g}')


def moment_matrix(robot: Robot) -> np.ndarray:
    """
    Return A (2, n): bending moment [N m] in the (d1, d2) plane of the base per newton.

    Tendon i with hole offset r_i at angle a_i (from d1 towards d2) contributes
    ``T_i r_i (cos a_i, sin a_i, 0) x e3 = T_i r_i (sin a_i, -cos a_i, 0)``.
    """
    return np.array([[t.offset * np.sin(t.angle) for t in robot.tendons],
                     [-t.offset * np.cos(t.angle) for t in robot.tendons]])


def distribute(A, b, lower, upper, tolerance: float = 1e-9) -> Distribution:
    """
    Tensions minimising their sum subject to ``A T = b`` and ``lower <= T <= upper``.

    Parameters
    ----------
    A : array (m, n)
        Linear map from tensions [N] to the controlled effect.
    b : array (m,)
        Required effect.
    lower, upper : array (n,) or float
        Tension bounds [N], finite, lower <= upper.
    tolerance : float
        Relative slack used to decide feasibility of the closest-effect fallback.

    Raises
    ------
    DistributionError
        Shapes do not match, values are not finite, or a lower bound exceeds its upper.

    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    m, n = A.shape
    b = _vector(b, m, 'b')
    lower = _vector(np.broadcast_to(lower, (n,)), n, 'lower')
    upper = _vector(np.broadcast_to(upper, (n,)), n, 'upper')
    if not np.all(np.isfinite(A)):
        raise DistributionError('A: must be finite')
    if np.any(lower > upper):
        bad = np.flatnonzero(lower > upper).tolist()
        raise DistributionError(f'lower: exceeds upper for tendons {bad}')
    bounds = list(zip(lower, upper))
    ones = np.ones(n)
    result = linprog(ones, A_eq=A, b_eq=b, bounds=bounds, method='highs')
    if result.status == 0:
        return _finish(A, b, result.x, lower, upper)
    if result.status != 2:      # 2 = infeasible; anything else is a solver failure
        raise RuntimeError(f'linprog failed: {result.message}')
    # Closest effect: least squares |A T - b|_2 within the bounds (unique effect, so a
    # controller iterating on it does not jump between equally close vertices), then the
    # least tension sum at that effect.
    # A tendon whose bounds meet (a pretension at its max_tension) is a constant, not a
    # variable: lsq_linear refuses lower == upper.
    free = lower < upper
    closest = lower.copy()
    if np.any(free):
        closest[free] = lsq_linear(A[:, free], b - A[:, ~free] @ lower[~free],
                                   bounds=(lower[free], upper[free]), method='bvls').x
    reached = A @ closest
    least = linprog(ones, A_eq=A, b_eq=reached, bounds=bounds, method='highs')
    tensions = least.x if least.status == 0 else closest
    return _finish(A, b, tensions, lower, upper, tolerance)


def _finish(A, b, tensions, lower, upper, tolerance: float = 1e-9) -> Distribution:
    tensions = np.clip(tensions, lower, upper)     # remove solver round-off at the bounds
    achieved = A @ tensions
    error = float(np.linalg.norm(achieved - b))
    scale = float(np.abs(A).sum(axis=0) @ np.maximum(np.abs(lower), np.abs(upper))) + 1e-300
    feasible = error <= max(tolerance, 1e-7) * scale
    return Distribution(tensions=tensions, achieved=achieved, feasible=feasible, error=error)


def _vector(values, size: int, field: str) -> np.ndarray:
    values = np.asarray(values, dtype=float).reshape(-1)
    if values.size != size:
        raise DistributionError(f'{field}: has {counted(values.size, "value")}, expected {size}')
    if not np.all(np.isfinite(values)):
        raise DistributionError(f'{field}: must be finite')
    return values
