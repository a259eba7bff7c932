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
The 6-RUS parallel continuum robot as a SimModel (``quasi_static``).

The model sits behind the :class:`~tendon_robot_sim.models.sim_model.SimModel` interface.

Motor angles q1 (JointState ``position``, rad) in; each setpoint is solved by the
forward kinetostatics
(:meth:`~tendon_robot_sim.models.pcr.kinetostatics.PcrSolver.forward`) under the
description's load, or the tip wrench given since; a setpoint whose equilibrium has two rods
passing through each other (:mod:`~tendon_robot_sim.models.pcr.clearance`) is refused as one
that does not converge is: the robot cannot get there. The tip is the platform frame (centre
p_e, orientation R_e). Markers: the six rods, the cranks, the platform as a disc through
its joints. No force at the inputs is reported (``effort`` empty).
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.pcr.clearance import rod_clearance
from tendon_robot_sim.models.pcr.kinetostatics import crank_tips, PcrSolver
from tendon_robot_sim.models.pcr.robot import MOTOR_NAMES, PcrRobot
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, Inputs, LineList, ModelState,
                                               named_values, Polyline, Pose, SimModel)

# The description's world frame: z up, origin at the centre of the motor triangle.
BASE_FRAME = 'base_link'
ROD_COLOR = (0.7, 0.72, 0.75, 1.0)
CRANK_COLOR = (0.3, 0.3, 0.3, 1.0)
PLATFORM_COLOR = (0.2, 0.45, 0.7, 0.8)
PLATFORM_THICKNESS = 0.01   # m, drawn only
CRANK_WIDTH = 0.01          # m, drawn only


class PcrStatics(SimModel):
    """Forward kinetostatics of each motor-angle setpoint; rest: all motor angles 0."""

    rest = 'the equilibrium at motor angles 0'
    base_frame = BASE_FRAME

    def __init__(self, robot: PcrRobot):
        self.robot = robot
        self.solver = PcrSolver(robot)
        low, high = np.degrees(robot.motor_limits)
        self.summary = f'forward kinetostatics, motor limits {low:g} .. {high:g} deg'
        self.inputs = Inputs(
            MOTOR_NAMES, {'position': 'motor angle q1 [rad]'},
            'motors', hint='the parallel robot takes motor angles (position, rad)')
        self.reset()

    def apply(self, field, values) -> None:
        q1 = named_values(values, self._q1, self.inputs.names, field, 'motor angle', 'motor')
        self._solve(q1, self._wrench)

    def _solve(self, q1: np.ndarray, wrench: tuple) -> None:
        try:
            result = self.solver.forward(q1, *wrench)
        except StaticsInputError as error:
            raise InputError(f'position: {error}') from None
        except ConvergenceError as error:
            raise InputError(f'{error}; still publishing the last equilibrium') from None
        clearance = rod_clearance(self.robot, result)
        if not clearance.clear:
            raise InputError(f'position: {clearance.says()}: a pose the robot cannot take; '
                             'still publishing the last equilibrium')
        self._result, self._q1, self._wrench = result, q1, wrench

    def state(self) -> ModelState:
        result, robot = self._result, self.robot
        cranks = np.empty((3, 12))
        cranks[:, 0::2] = robot.motor_positions.T
        cranks[:, 1::2] = crank_tips(robot, result.motor_angles).T
        joint_radius = float(np.linalg.norm(robot.joint_positions[0, :2]))
        tip = Pose(result.position, rotation_to_quaternion(result.rotation))
        return ModelState(
            time=0.0, position=result.motor_angles.copy(), effort=np.zeros(0), tip=tip,
            markers=(*(Polyline('rods', c, 2.0 * robot.rods.radius, ROD_COLOR)
                       for c in result.centerlines),
                     LineList('cranks', cranks, [CRANK_COLOR] * 6, CRANK_WIDTH),
                     Cylinder('platform', tip, 2.0 * joint_radius, PLATFORM_THICKNESS,
                              PLATFORM_COLOR)))

    def reset(self) -> None:
        self.solver.reset()
        self._q1 = np.zeros(6)
        self._solve(self._q1, (None, None))

    def set_tip_wrench(self, force, moment) -> None:
        self._solve(self._q1, (force, moment))
