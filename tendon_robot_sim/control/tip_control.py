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
Tip-position control step from tensions (ROS-free).

One control period of :class:`TipController`:

1. the Jacobian J = d tip / d T (3 x n, m/N) of the statics model at the current
   tensions, by forward differences (n + 1 warm-started solves);
2. the desired tip displacement dx = gain (target - measured), at most ``max_step`` long;
3. the new tensions by the minimum-tension distribution
   (:func:`~tendon_robot_sim.models.tension_distribution.distribute`): minimise sum(T')
   subject to P J (T' - T) = P dx and lower <= T' <= upper.

P projects onto the directions perpendicular to the base axis that the tendons bend the
rod towards (:attr:`Robot.bending_directions`): base normal d1 and binormal d2, or, for
a planar robot whose holes all lie on one line through the backbone, that line alone.
These are the tip directions that bending controls; the one along the base axis
follows from them because the backbone length is nearly fixed, so it is not
controlled (a 4-tendon robot has only 2 bending degrees of freedom, a planar one 1; the
extra tendon freedom is the co-contraction, which the tension-sum objective removes).
When the step cannot be achieved within the bounds, the distribution takes the closest
achievable one and the step reports ``feasible = False``: the tip then stops at the
boundary of the workspace with every tension within its bounds.
"""

from dataclasses import dataclass

import numpy as np

from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.models.tension_distribution import distribute, DistributionError

JACOBIAN_STEP = 0.01    # N, forward-difference step of the tension Jacobian


@dataclass(frozen=True)
class TipStep:
    """Result of one control period."""

    tensions: np.ndarray    # (n,) N, new tensions within the bounds
    desired: np.ndarray     # (3,) m, tip displacement asked for (base frame)
    predicted: np.ndarray   # (3,) m, linear prediction of the tip displacement
    jacobian: np.ndarray    # (3, n) m/N at the current tensions
    feasible: bool          # False: the desired step was out of reach within the bounds


class TipController:
    """
    Tip-position control of one robot on its statics model.

    Parameters
    ----------
    robot : Robot
        Geometry, limits (``max_tension``) and base frame.
    model : str
        Statics model of the Jacobian (see :class:`StaticsSolver`), default 'discrete'.
    min_tension : float
        Pretension [N], the lower tension bound of every tendon.

    """

    def __init__(self, robot: Robot, model: str = 'discrete', min_tension: float = 0.0):
        self.robot = robot
        self.solver = StaticsSolver(robot, model=model)
        self.upper = robot.max_tensions
        self.set_min_tension(min_tension)
        base = robot.base
        # (k, 3): k = 2 bending directions, or 1 for a planar robot
        self.projection = robot.bending_directions @ np.vstack((base.normal, base.binormal))

    def set_min_tension(self, min_tension: float) -> None:
        if not (np.isfinite(min_tension) and 0.0 <= min_tension <= self.upper.min()):
            raise DistributionError(
                f'min_tension: must be in [0, {self.upper.min():g}] N (the smallest '
                f'max_tension), got {min_tension!r}')
        self.lower = np.full(self.upper.size, float(min_tension))

    def jacobian(self, tensions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Tip position (3,) and d tip / d tensions (3, n) at ``tensions`` [m, m/N]."""
        tensions = np.clip(np.asarray(tensions, dtype=float), 0.0, self.upper)
        tip = self.solver.solve_tensions(tensions).tip_position
        J = np.empty((3, tensions.size))
        for i in range(tensions.size):
            h = JACOBIAN_STEP if tensions[i] + JACOBIAN_STEP <= self.upper[i] else -JACOBIAN_STEP
            perturbed = tensions.copy()
            perturbed[i] += h
            J[:, i] = (self.solver.solve_tensions(perturbed).tip_position - tip) / h
        self.solver.solve_tensions(tensions)    # warm start of the next period at tensions
        return tip, J

    def step(self, tensions, measured, target, gain: float, max_step: float) -> TipStep:
        """
        Return new tensions moving the tip from ``measured`` towards ``target`` (base frame, m).

        ``gain`` (0, 1] is the fraction of the error corrected per step; the step is at most
        ``max_step`` m long (in the controlled plane).
        """
        tensions = np.asarray(tensions, dtype=float)
        error = np.asarray(target, dtype=float) - np.asarray(measured, dtype=float)
        error = self.projection.T @ (self.projection @ error)
        desired = gain * error
        length = np.linalg.norm(desired)
        if length > max_step:
            desired *= max_step / length
        _, J = self.jacobian(tensions)
        A = self.projection @ J
        start = np.clip(tensions, self.lower, self.upper)
        result = distribute(A, A @ start + self.projection @ desired, self.lower, self.upper)
        return TipStep(tensions=result.tensions, desired=desired,
                       predicted=J @ (result.tensions - start), jacobian=J,
                       feasible=result.feasible)
