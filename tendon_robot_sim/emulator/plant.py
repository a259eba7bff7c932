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
The emulated robot: where the tip goes and how far each tendon is pulled in.

The emulator needs two answers, fast enough to give them at every status tick
(50 Hz): for given tensions, the tip position and tendon displacements; and
for given displacements, the tensions that hold them. Both come from the
quasi-static model (:class:`tendon_robot_sim.models.rod.statics.solver.StaticsSolver`,
a few milliseconds per solve), the only physics the emulator depends on.
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import Robot

logger = logging.getLogger(__name__)

#: Newton tolerance of the plant's solves (scaled residual, see StaticsSolver).
PLANT_TOLERANCE = 1e-7


class Plant:
    """
    Quasi-static robot shared by the emulated devices (thread-safe).

    Parameters
    ----------
    robot : Robot
        What to model (geometry, material, gravity, tendon limits).
    model : str
        Statics model (see :mod:`tendon_robot_sim.models.rod.statics.solver`).

    """

    def __init__(self, robot: Robot, model: str = 'cosserat'):
        self.robot = robot
        self.n_tendons = len(robot.tendons)
        self.max_tensions = robot.max_tensions
        # The wire carries micrometres; a scaled residual of 1e-7 moves the tip by about
        # 1e-8 rod lengths (nanometres), and spares the displacement solves the last
        # iterations, where antagonistic tendons make them ill-conditioned.
        self._solver = StaticsSolver(robot, model=model, tolerance=PLANT_TOLERANCE)
        self._lock = threading.Lock()
        self._tensions: np.ndarray | None = None
        self._failing = False
        self.apply(np.zeros(self.n_tendons))

    def apply(self, tensions: np.ndarray) -> bool:
        """
        Load the tendons with ``tensions`` (n,) [N] and solve for the new shape.

        Returns False, keeping the previous shape, if the solver does not converge.
        """
        tensions = np.asarray(tensions, dtype=float)
        with self._lock:
            if self._tensions is not None and np.array_equal(tensions, self._tensions):
                return True
            try:
                result = self._solver.solve_tensions(tensions)
            except ConvergenceError as error:
                if self._tensions is None:
                    raise
                self._report(error)
                return False
            self._failing = False
            self._tensions = tensions.copy()
            self._tip = np.array(result.tip_position, dtype=float)
            self._displacements = np.array(result.tendon_displacements, dtype=float)
        return True

    @property
    def tip_position(self) -> np.ndarray:
        """(3,) tip position in the base frame [m] under the applied tensions."""
        with self._lock:
            return self._tip.copy()

    @property
    def displacements(self) -> np.ndarray:
        """(n,) tendon displacements [m] under the applied tensions."""
        with self._lock:
            return self._displacements.copy()

    def tensions_for(self, displacements: np.ndarray) -> np.ndarray | None:
        """
        (n,) tensions [N] that hold the tendons at ``displacements`` (n,) [m].

        A tendon asked to push goes slack (0 N). None if the solver does not converge
        (the displacements are out of reach).
        """
        with self._lock:
            try:
                result = self._solver.solve_displacements(
                    np.asarray(displacements, dtype=float))
            except ConvergenceError as error:
                self._report(error)
                return None
            self._failing = False
        return np.array(result.tensions, dtype=float)

    def _report(self, error: ConvergenceError) -> None:
        # Once per run of failures: the devices retry at every step.
        if not self._failing:
            logger.warning('plant: no equilibrium, the motors hold their last state: %s', error)
        self._failing = True
