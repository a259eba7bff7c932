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
The rolling-joint snake as a SimModel (``dynamic``).

The model sits behind the :class:`~tendon_robot_sim.models.sim_model.SimModel` interface.

Cable tensions (JointState ``effort``, N, one per whole cable, within [0, ``max_tension``]
of the description) drive the forward dynamics of
:class:`~tendon_robot_sim.models.snake.dynamics.SnakeDynamics` (RK4 in its numba kernel).
The model itself has no damping and ends where a joint leaves its rolling surfaces
(|theta| = 2 alpha); there the links' rims meet, which this adapter adds as a perfectly
inelastic end stop: the joint is held at the limit and its outward rate set to zero.
Rest: straight and still, every cable at the description's pretension, no external load
(under gravity the snake then sags onto its stops until the cables hold it). A tip wrench
(:meth:`SnakeDynamicsModel.set_tip_wrench`, base frame) acts at the tip, the distal vertex of
the last link, until the next one or :meth:`~SnakeDynamicsModel.reset`. Markers use the tendon
robot's namespaces, so every consumer reads them alike: ``backbone`` (the line through the link
vertices), ``vertebrae`` (one cylinder per link), ``tendons`` (the cables through the holes).
"""

from __future__ import annotations

import math

import numpy as np

from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, Inputs, LineList, ModelState,
                                               named_values, Polyline, Pose, SimModel,
                                               SimulationDiverged)
from tendon_robot_sim.models.snake.dynamics import SnakeDivergedError, SnakeDynamics
from tendon_robot_sim.models.snake.loads import check, LinkWrench, LoadError
from tendon_robot_sim.models.snake.robot import BASE_FRAME, RollingJointSnake

# RK4 step [s]: D'Antuono et al. 2023 integrate at 5 ms; 1 ms keeps the end stops within a few
# milliradians and is the largest step the simulator node accepts.
DEFAULT_DT = 1e-3
# RK4 steps per kernel call: a joint on its stop interrupts a call at its first step.
STEPS_PER_CALL = 10
LINK_COLOR = (0.85, 0.85, 0.8, 0.9)
AXIS_COLOR = (0.3, 0.3, 0.3, 1.0)
CABLE_WIDTH = 0.001   # m, drawn only
AXIS_WIDTH = 0.002    # m, drawn only
# Rotation taking a marker's z axis (cylinder axis) onto a link's x axis (along the snake).
Z_TO_X = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])


class SnakeDynamicsModel(SimModel):
    """Forward dynamics of the snake under constant cable tensions between setpoints."""

    timed = True
    rest = 'the straight snake at rest with every cable at its pretension'
    base_frame = BASE_FRAME

    def __init__(self, snake: RollingJointSnake, dt: float | None = None):
        self.snake = snake
        self.dynamics = SnakeDynamics(snake)
        self.dt = dt or DEFAULT_DT
        if not (math.isfinite(self.dt) and self.dt > 0.0):
            raise InputError(f'dt: must be a finite number > 0, got {dt!r}')
        self.summary = f'rolling-joint forward dynamics, RK4 dt {self.dt:.3g} s'
        self.inputs = Inputs(tuple(snake.cable_names), {'effort': 'tension [N]'}, 'cables',
                             hint='the snake takes cable tensions (effort, N)')
        self._rest_lengths = self._cable_lengths(np.zeros(snake.n_joints))
        self.reset()

    def _cable_lengths(self, q: np.ndarray) -> np.ndarray:
        """(C,) m: each cable's length across all joints at angles q."""
        lengths, _ = self.dynamics.kinematics.state(q).cable_segments()
        return lengths[0].sum(axis=0)

    def apply(self, field, values) -> None:
        tensions = named_values(values, self._tensions, self.inputs.names, field, 'tension',
                                'cable')
        limit = self.snake.max_tension
        for name, tension in zip(self.inputs.names, tensions):
            if not 0.0 <= tension <= limit:
                raise InputError(f'{field}[{name}]: must be within [0, max_tension = '
                                 f'{limit:g}] N, got {tension:g}')
        self._tensions = tensions

    def advance(self, duration: float) -> None:
        steps = round(duration / self.dt)
        limit = self.snake.joint_limit
        while steps > 0:
            n = min(steps, STEPS_PER_CALL)
            try:
                q, qd = self.dynamics.simulate(self.dt * np.arange(n + 1),
                                               np.tile(self._tensions, (n + 1, 1)), self.q,
                                               self.qd, loads=self._loads)
            except SnakeDivergedError as error:
                raise SimulationDiverged(f'snake state ran away at t = '
                                         f'{self.time + error.time:.4f} s ({error})') from None
            q, qd = q[:, 0], qd[:, 0]
            beyond = np.flatnonzero(np.any(np.abs(q) > limit, axis=1))
            k = beyond[0] if beyond.size else n
            self.q, self.qd = q[k].copy(), qd[k].copy()
            if beyond.size:      # end stop: on the limit, no outward rate
                stopped = np.abs(self.q) > limit
                self.q[stopped] = np.sign(self.q[stopped]) * limit
                self.qd[stopped] = 0.0
            self.time += k * self.dt
            steps -= k

    def state(self) -> ModelState:
        snake, chain = self.snake, self.dynamics.kinematics.state(self.q)
        rotations, origins = chain.rotations[0, 1:], chain.origins[0]
        quaternions = rotation_to_quaternion(rotations)
        link = snake.link
        centre = np.array([-link.height / 2.0, 0.0, 0.0])   # link frame: distal vertex
        discs = tuple(
            Cylinder('vertebrae', Pose(o + R @ centre, q), 2.0 * link.half_width, link.height,
                     LINK_COLOR)
            for o, R, q in zip(origins[1:], rotations, rotation_to_quaternion(rotations @ Z_TO_X)))
        # each cable: link n-1's hole, link n's hole across joint n, on to the next joint
        holes = np.stack((chain.distal_holes[0], chain.proximal_holes[0]), axis=1)   # (N, 2, C, 3)
        cables = [holes[:, :, c].reshape(-1, 3).T for c in range(len(snake.cables))]
        return ModelState(
            time=self.time, position=self._rest_lengths - self._cable_lengths(self.q),
            effort=self._tensions.copy(), tip=Pose(origins[-1], quaternions[-1]),
            frames=tuple(Pose(o, q) for o, q in zip(origins[1:], quaternions)),
            markers=(Polyline('backbone', origins.T, AXIS_WIDTH, AXIS_COLOR), *discs,
                     LineList.of_paths('tendons', cables, CABLE_WIDTH)))

    def reset(self) -> None:
        self.time = 0.0
        self.q = np.zeros(self.snake.n_joints)
        self.qd = np.zeros(self.snake.n_joints)
        self._tensions = np.full(len(self.snake.cables), self.snake.pretension)
        self._loads = ()

    def set_tip_wrench(self, force, moment) -> None:
        try:
            self._loads = check(self.snake, [LinkWrench.at_tip(self.snake, force, moment)])
        except LoadError as error:     # the fields of geometry_msgs/Wrench
            field = {'moment': 'torque'}.get(error.field, error.field)
            raise InputError(f'wrench.{field}: {error.problem}') from None
