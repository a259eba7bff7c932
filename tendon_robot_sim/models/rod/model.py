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
The tendon robot behind the :class:`~tendon_robot_sim.models.sim_model.SimModel` interface.

``dynamic``: Cosserat rod dynamics, explicit (PyElastica, tensions) or implicit (BDF-alpha
and shooting, tensions or displacements). ``quasi_static``: one
:class:`~tendon_robot_sim.models.rod.statics.solver.StaticsSolver` equilibrium per setpoint, of
tensions or of displacements (whose solved tensions must stay within ``max_tension``); with
tendon friction in the description, each setpoint's equilibrium is solved from the last
(:class:`~tendon_robot_sim.models.rod.statics.stick_slip.StickSlipStatics`: stick and slip).
Both report the same shape: backbone, vertebra discs, tendon paths.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tendon_robot_sim.models.contact.world import World
from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.rod.dynamics.simulation import check_implicit_only, choose_integrator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import has_friction, StickSlipStatics
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, Inputs, LineList, ModelState,
                                               Polyline, Pose, SimModel)
from tendon_robot_sim.models.tendon_robot import Robot

BACKBONE_COLOR = (0.8, 0.8, 0.75, 1.0)
DISC_COLOR = (0.95, 0.95, 0.95, 0.8)
TENDON_WIDTH = 0.001   # m, line width of the tendons in RViz
# Load (steps needed over steps afforded) below which an adaptive model behind its tolerance
# for the budget is allowed a finer step again
BUDGET_SLACK = 0.5


def tendon_model_state(robot: Robot, shape, time: float = 0.0) -> ModelState:
    """
    Return a :class:`ModelState` of a SimState or StaticsResult ``shape`` of ``robot``.

    Markers: ``backbone`` (as wide as the rod), one ``vertebrae`` disc per vertebra
    (axis along its d3, radius and thickness from the description), ``tendons``: one
    segment between consecutive holes of each tendon, coloured per tendon.
    """
    discs = tuple(
        Cylinder('vertebrae', Pose(shape.vertebra_positions[:, i], q), 2.0 * robot.disc_radius,
                 robot.disc_thickness, DISC_COLOR)
        for i, q in enumerate(shape.vertebra_orientations))
    return ModelState(
        time=time, position=shape.tendon_displacements, effort=shape.tensions,
        tip=Pose(shape.tip_position, shape.tip_orientation),
        frames=tuple(Pose(shape.vertebra_positions[:, i], q)
                     for i, q in enumerate(shape.vertebra_orientations)),
        markers=(Polyline('backbone', shape.centerline, 2.0 * robot.rod.radius, BACKBONE_COLOR),
                 *discs, LineList.of_paths('tendons', shape.tendon_paths, TENDON_WIDTH)),
        tip_effort=getattr(shape, 'tip_tensions', None), contacts=shape.contacts)


class TendonDynamics(SimModel):
    """
    Cosserat rod dynamics, explicit or implicit (``choose_integrator`` picks one).

    Which: :func:`~tendon_robot_sim.models.rod.dynamics.simulation.choose_integrator`.

    Explicit: :class:`~tendon_robot_sim.models.rod.dynamics.explicit.TendonSimulator` (PyElastica,
    tensions). Implicit: :class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator`
    (BDF-alpha and shooting, ``alpha``: 0 BDF2, -0.5 trapezoidal; the explicit model refuses
    any other than 0): tensions (``effort``, N) or displacements (``position``, m pulled in)
    per tendon, as the setpoint names them; a displacement whose equilibrium would need more
    than ``max_tension`` is refused. ``world``: obstacles (implicit only: the registry refuses
    a world for the explicit one before it builds the model).
    """

    timed = True

    def __init__(self, robot: Robot, dt: float | None = None, integrator: str = 'auto',
                 alpha: float = 0.0, tip_tolerance: float | None = None,
                 world: World | None = None, displacement_ramp: float | None = None):
        self.robot = robot
        self.base_frame = robot.base.frame_id
        self.integrator, why = choose_integrator(robot, integrator)
        # Here, not at the top: importing PyElastica takes 0.3 s (2 s on a loaded core) of
        # the start of the models that do not use it.
        if self.integrator == 'implicit':
            from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
            self.sim = ImplicitSimulator(robot, dt=dt, alpha=alpha, tip_tolerance=tip_tolerance,
                                         world=world, displacement_ramp=displacement_ramp)
            self.summary = f'{self.sim.summary} ({why})'
            self.rest = 'the zero-tension equilibrium, at rest'
            self.reports_tip_effort = self.sim.friction
            self.inputs = Inputs(robot.tendon_names, {'effort': 'tension [N]',
                                                      'position': 'displacement [m], pulled in'},
                                 'tendons')
        else:
            check_implicit_only(self.integrator, why, alpha, tip_tolerance)
            from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
            self.sim = TendonSimulator(robot, dt=dt, world=world)
            self.summary = f'explicit, dt {self.sim.dt:.3g} s ({why})'
            self.rest = 'the initial straight state with zero tension'
            self.inputs = Inputs(
                robot.tendon_names, {'effort': 'tension [N]'}, 'tendons',
                hint='displacement setpoints need the implicit integrator (integrator:=implicit) '
                     'or mode:=quasi_static; the explicit integrator applies tensions (effort, N)')
        self.dt = self.sim.dt
        self._coarse = 0    # the simulator's coarse_steps when the budget began to hold it

    def apply(self, field, values) -> None:
        if field == 'position':
            self.sim.set_displacements(values)
        else:
            self.sim.set_tensions(values)

    def advance(self, duration: float) -> None:
        self.sim.advance(duration, result=False)   # state() when asked

    def state(self) -> ModelState:
        return tendon_model_state(self.robot, self.sim.state(), self.sim.time)

    def fit_budget(self, load: float) -> str:
        """
        Allow one halving of dt fewer when behind (``load`` > 1), one more below BUDGET_SLACK.

        Only with a ``tip_tolerance`` (adaptive dt); the message stays while steps above the
        tolerance were kept since the budget first held the model back.
        """
        sim = self.sim
        if not getattr(sim, 'adaptive', False):
            return ''
        finest = sim.budget_level
        if load > 1.0:
            sim.budget_level = max(0, (sim.level if finest is None else finest) - 1)
        elif finest is not None and load < BUDGET_SLACK:
            sim.budget_level = None if finest + 1 >= sim.levels else finest + 1
        if sim.budget_level is None:
            self._coarse = sim.coarse_steps
            return ''
        if sim.coarse_steps == self._coarse:
            return ''
        return (f'tip_tolerance {sim.tip_tolerance:g} m not met: the real-time budget allows '
                f'steps down to {sim.dt / 2 ** sim.budget_level:.3g} s only')

    def reset(self) -> None:
        self.sim.reset()
        self._coarse = getattr(self.sim, 'coarse_steps', 0)

    def set_tip_wrench(self, force, moment) -> None:
        self.sim.set_tip_load(force, moment)


class TendonStatics(SimModel):
    """
    Static equilibria, solved on receipt of a setpoint.

    Tensions (``effort``, N) or displacements (``position``, m pulled in); a rejected setpoint
    keeps the last equilibrium. ``world``: obstacles (every statics formulation; the solver
    refuses one that intersects the base).
    """

    rest = 'the zero-tension equilibrium'

    def __init__(self, robot: Robot, model: str, world: World | None = None):
        self.robot = robot
        self.base_frame = robot.base.frame_id
        # with friction the result depends on the path: each setpoint from the last
        self._friction = self.reports_tip_effort = has_friction(robot)
        self.solver = (StickSlipStatics(robot, model, world=world) if self._friction
                       else StaticsSolver(robot, model=model, world=world))
        self.summary = f'{self.solver.model} statics' + (
            ', with friction (each state from the last)' if self._friction else '')
        self.inputs = Inputs(robot.tendon_names, {'effort': 'tension [N]',
                                                  'position': 'displacement [m], pulled in'},
                             'tendons')
        self._zero = ('effort', np.zeros(len(robot.tendons)))
        # where reset() returns: zero tension (sagging under gravity)
        self._rest = self.solver.solve_tensions(self._zero[1])
        self.reset()

    def apply(self, field, values) -> None:
        if isinstance(values, Mapping):     # it changes the tendons it names; the others hold
            shape = self._shape
            held = shape.tendon_displacements if field == 'position' else shape.tensions
            values = {**dict(zip(self.robot.tendon_names, held.tolist())), **values}
        # with friction the solver has stored the state it solved: a refused one must leave
        # no trace on the path, or the next setpoint starts from a state never shown
        kept = self.solver.path_state() if self._friction else None
        try:
            self._shape = self._solve(field, values)
        except InputError:
            if kept is not None:
                self.solver.restore_path(kept)
            raise
        self._last = (field, values)

    def _solve(self, field, values):
        """Return the equilibrium of a setpoint; InputError where it is refused."""
        try:
            if field == 'position':
                shape = self.solver.solve_displacements(values)
                # Position control must not pull harder than the tendons allow (what
                # TendonSimulator.set_tensions enforces for tension setpoints).
                beyond = shape.beyond_limits(self.robot)
                if beyond:
                    raise InputError(f'position{beyond}')
            else:
                shape = self.solver.solve_tensions(values)
        except StaticsInputError as error:
            raise InputError(str(error)) from None
        except ConvergenceError as error:
            raise InputError(f'{error}; still publishing the last equilibrium') from None
        return shape

    def state(self) -> ModelState:
        return tendon_model_state(self.robot, self._shape)

    def reset(self) -> None:
        self._wrench = (self.robot.tip_load.force, self.robot.tip_load.moment)
        self.solver.set_tip_load(*self._wrench)
        if self._friction:      # back at rest: no tension stuck in the tendons, no bend held
            self.solver.reset()
        self._shape = self._rest
        self._last = self._zero

    def set_tip_wrench(self, force, moment) -> None:
        self.solver.set_tip_load(force, moment)
        try:
            self.apply(*self._last)    # the last setpoint (none yet: zero tension) under the load
        except InputError:
            # refused: later setpoints are solved under the load of the equilibrium still shown
            self.solver.set_tip_load(*self._wrench)
            raise
        self._wrench = (force, moment)
