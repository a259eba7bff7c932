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
Constant-curvature Lagrange dynamics as a SimModel (``cc_dynamic``).

The model sits behind the :class:`~tendon_robot_sim.models.sim_model.SimModel` interface.

One model for tendon robots (``effort`` = tension, N) and bellows robots (``kind: bellows``,
``effort`` = gauge pressure, Pa): :class:`~tendon_robot_sim.models.trunk.dynamics.CCDynamics`
integrated by its implicit kernel at constant inputs between setpoints. Joint ``position``
is how much each actuator is shorter than on the straight robot at rest (m; a tendon's
displacement pulled in, a bellows' contraction). Markers: the centre spline of each section
as an arc; frames: the end of each section. No tip wrench (the model takes no external
load). A section bent past its self-contact bend is the model's state, which it reports
(:meth:`CCDynamicsModel.state_problem`) and runs on from.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.geometry import rotation_to_quaternion, self_contact
from tendon_robot_sim.models.sim_model import (INPUT_COLORS, InputError, Inputs, ModelState,
                                               named_values, Polyline, Pose, SimModel,
                                               SimulationDiverged)
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.models.trunk.dynamics import CCDynamics, CCDynamicsError, DEFAULT_TIME_STEP
from tendon_robot_sim.models.trunk.robot import BellowsRobot

ARC_POINTS = 20   # points drawn per section


class CCDynamicsModel(SimModel):
    """Constant-curvature dynamics of a tendon or bellows robot."""

    timed = True
    rest = 'the initial straight state with zero inputs'
    state_check = 'self contact'
    state_valid = 'every section within its self-contact bend'

    def __init__(self, model: CCDynamics, base_frame: str, width: float,
                 dt: float | None = None):
        self.model = model
        self.base_frame = base_frame
        self.width = width
        self.dt = dt or DEFAULT_TIME_STEP
        # (quantity, unit, one input, the inputs)
        self._words = (('pressure', 'Pa', 'bellows', 'bellows') if model.kind == 'pressure'
                       else ('tension', 'N', 'tendon', 'tendons'))
        quantity, unit, _, inputs = self._words
        self.inputs = Inputs(tuple(model.input_names), {'effort': f'{quantity} [{unit}]'},
                             inputs, hint=f'the constant-curvature model takes {quantity}s '
                                          f'(effort, {unit})')
        self.summary = (f'constant-curvature Lagrange dynamics, {model.n_sections} '
                        f'section(s), dt {self.dt:.3g} s')
        self.reset()

    @classmethod
    def of_tendon_robot(cls, robot: Robot, dt: float | None = None) -> 'CCDynamicsModel':
        return cls(CCDynamics.from_tendon_robot(robot), robot.base.frame_id,
                   2.0 * robot.rod.radius, dt)

    @classmethod
    def of_bellows_robot(cls, robot: BellowsRobot, dt: float | None = None
                         ) -> 'CCDynamicsModel':
        # drawn as thick as the ring of bellows around the centre spline
        ring = max(s.ring for s in robot.sections)
        return cls(CCDynamics.from_bellows_robot(robot), robot.base.frame_id, 2.0 * ring, dt)

    def apply(self, field, values) -> None:
        quantity, _, one, _ = self._words
        u = named_values(values, self._inputs, self.inputs.names, field, quantity, one)
        try:
            self._inputs = self.model.input_vector(u, field)
        except CCDynamicsError as error:
            raise InputError(str(error)) from None

    def advance(self, duration: float) -> None:
        steps = round(duration / self.dt)
        if steps < 1:
            return
        try:
            run = self.model.simulate(self._inputs, steps * self.dt, self.dt, self.x, self.v,
                                      record_every=steps)
        except CCDynamicsError as error:
            raise SimulationDiverged(f'{error} (at t = {self.time:.4f} s)') from None
        self.x, self.v = run.x[-1].copy(), run.v[-1].copy()
        self.time += steps * self.dt

    def state_problem(self) -> str | None:
        """Name each section bent through itself, in the words of the ``cc`` commands."""
        theta, length, past = self.model.bends(self.x)
        return '; '.join(f'section {j}: {self_contact(theta[j], length[j], self.model.radii[j])}'
                         for j in np.flatnonzero(past)) or None

    def state(self) -> ModelState:
        frames = self.model.frames(self.x)
        quaternions = rotation_to_quaternion(np.array([R for R, _ in frames]))
        backbone = self.model.backbone(self.x, ARC_POINTS)
        arcs = tuple(
            Polyline('sections', backbone[j * ARC_POINTS:(j + 1) * ARC_POINTS + 1].T,
                     self.width, INPUT_COLORS[j % len(INPUT_COLORS)])
            for j in range(self.model.n_sections))
        return ModelState(
            time=self.time, position=self.model.straight_lengths - self.model.lengths @ self.x,
            effort=self._inputs.copy(), tip=Pose(frames[-1][1], quaternions[-1]),
            frames=tuple(Pose(p, q) for (_, p), q in zip(frames, quaternions)), markers=arcs)

    def reset(self) -> None:
        self.time = 0.0
        self.x = self.model.rest_state
        self.v = np.zeros_like(self.x)
        self._inputs = np.zeros(len(self.model.input_names))
