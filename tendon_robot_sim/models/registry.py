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
Which simulation model serves a robot description: (kind, mode) -> factory.

A description file's top-level ``kind`` picks the robot kind
(:data:`~tendon_robot_sim.models.description.ROBOT_KINDS`; none: a tendon robot) and with it
the loader; the simulator node's ``mode`` picks one of the kind's models (empty: the kind's
first, its default). Adding a kind or a model is an entry in :data:`LOADERS` and
:data:`MODELS` (a factory that imports its model when it builds it); a model that simulates
contact with a world (:mod:`tendon_robot_sim.models.contact.world`) is also an entry in
:data:`WORLD_MODELS`, which says for which options it takes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import (description_kind, read_yaml, ROBOT_KINDS,
                                                 RobotDescriptionError, TENDON_ROBOT)
from tendon_robot_sim.models.pcr import robot as pcr_robot
from tendon_robot_sim.models.sim_model import InputError, SimModel
from tendon_robot_sim.models.snake import robot as snake
from tendon_robot_sim.models.tendon_robot import load_robot, without_friction
from tendon_robot_sim.models.trunk import robot as bellows_robot


@dataclass(frozen=True)
class ModelOptions:
    """Settings of the node that some models take."""

    dt: float | None = None              # s, time step of a timed model; None: its own
    statics_model: str = 'discrete'      # tendon robot, quasi_static
    integrator: str = 'auto'             # tendon robot, dynamic: auto | implicit | explicit
    alpha: float = 0.0                   # tendon robot, dynamic, implicit: BDF-alpha (0: BDF2)
    tip_tolerance: float | None = None   # tendon robot, dynamic, implicit: adaptive dt [m]
    world: Any = None                    # contact.world.World: obstacles; None: no world
    # tendon robot, dynamic, implicit: simulated time [s] a new displacement is ramped over
    # (the node: one physics period, whatever its ticks); None: over each advance
    displacement_ramp: float | None = None


# kind -> loader of its description file
LOADERS: dict[str, Callable[[Path], Any]] = {
    TENDON_ROBOT: load_robot,
    pcr_robot.KIND: pcr_robot.load_pcr_robot,
    snake.KIND: snake.load_snake,
    bellows_robot.KIND: bellows_robot.load_bellows_robot,
}
# The constant-curvature model serves several kinds (tendon robots, bellows robots).
CC_MODE = 'cc_dynamic'


# The factories import their model when they build it: a node loads the one model it runs
# (its numba kernels, and PyElastica only for the rod's dynamics), which is most of the time
# to a node's first tip pose once the kernels are cached (docs/performance.md, First start).
def _tendon_dynamics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.rod.model import TendonDynamics
    return TendonDynamics(robot, dt=o.dt, integrator=o.integrator, alpha=o.alpha,
                          tip_tolerance=o.tip_tolerance, world=o.world,
                          displacement_ramp=o.displacement_ramp)


def _tendon_statics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.rod.model import TendonStatics
    return TendonStatics(robot, _statics_model(o), world=o.world)


# With a world, ``auto`` takes cosserat, not the discrete statics a robot with discs gets
# without one: every discrete solve in contact starts its bays straight (docs/tendon_robot.md,
# "Not yet"), far too slow for a node's rate. Both integrators of the dynamics have contact,
# and their ``auto`` picks as without a world (as ``simulate --world``).
def _statics_model(o: ModelOptions) -> str:
    return 'cosserat' if o.world is not None and o.statics_model == 'auto' else o.statics_model


def _start_refusal(robot, world, discs: bool) -> str:
    """
    Return why the tendon ``robot`` cannot start in ``world`` ('': it can).

    The models' own check (an obstacle through its base or its unloaded straight shape), so
    that a node is refused before it starts, not when it builds its model.
    """
    from tendon_robot_sim.models.contact.world import check_start_clear, WorldError
    try:
        check_start_clear(world, world.contact(robot.contact_envelope), robot, discs)
    except WorldError as error:
        return str(error)
    return ''


# Every option takes a world (both integrators, the three statics formulations model
# contact); the discs touch in the dynamics and the discrete statics.
def _tendon_dynamics_world(robot, o: ModelOptions) -> str:
    return _start_refusal(robot, o.world, discs=True)


def _tendon_statics_world(robot, o: ModelOptions) -> str:
    return _start_refusal(robot, o.world, discs=_statics_model(o) == 'discrete')


def _tendon_cc_dynamics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.trunk.model import CCDynamicsModel
    return CCDynamicsModel.of_tendon_robot(robot, dt=o.dt)


def _pcr_statics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.pcr.model import PcrStatics
    return PcrStatics(robot)


def _snake_dynamics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.snake.model import SnakeDynamicsModel
    return SnakeDynamicsModel(robot, dt=o.dt)


def _bellows_cc_dynamics(robot, o: ModelOptions) -> SimModel:
    from tendon_robot_sim.models.trunk.model import CCDynamicsModel
    return CCDynamicsModel.of_bellows_robot(robot, dt=o.dt)


# kind -> {mode: factory(description, options)}; the first mode of a kind is its default.
MODELS: dict[str, dict[str, Callable[[Any, ModelOptions], SimModel]]] = {
    TENDON_ROBOT: {
        'dynamic': _tendon_dynamics,
        'quasi_static': _tendon_statics,
        CC_MODE: _tendon_cc_dynamics,
    },
    pcr_robot.KIND: {
        'quasi_static': _pcr_statics,
    },
    snake.KIND: {
        'dynamic': _snake_dynamics,
    },
    bellows_robot.KIND: {
        CC_MODE: _bellows_cc_dynamics,
    },
}


# The modes whose models solve each setpoint on receipt, with no simulated time (``timed``
# False): what the simulator node and the local launcher know of a mode before a model is built.
UNTIMED_MODES = ('quasi_static',)


# kind -> {mode: why the model refuses a world with these options ('': it takes it)}: the
# models that simulate contact with obstacles; every other refuses a world.
WORLD_MODELS: dict[str, dict[str, Callable[[Any, ModelOptions], str]]] = {
    TENDON_ROBOT: {
        'dynamic': _tendon_dynamics_world,
        'quasi_static': _tendon_statics_world,
    },
}


def _tendon_robot_options(path, mode: str, o: ModelOptions) -> None:
    # What the model refuses only when it is built, checked before a stack starts (the
    # launcher had started the controllers, then the simulator died): a robot the explicit
    # integrator or the constant-curvature dynamics cannot take (tendon friction), alpha and
    # tip_tolerance where the explicit integrator runs, asked for or what auto picks.
    if mode == CC_MODE:
        from tendon_robot_sim.models.trunk.dynamics import CCDynamics, CCDynamicsError
        try:
            CCDynamics.from_tendon_robot(load_robot(path))
        except CCDynamicsError as error:
            raise ModelConfigurationError(str(error)) from None
        return
    if o.integrator != 'explicit' and o.alpha == 0.0 and o.tip_tolerance is None:
        return   # nothing to check: no description loaded
    from tendon_robot_sim.models.rod.dynamics import simulation
    integrator, why = o.integrator, 'asked for'
    if mode == 'dynamic':
        try:
            integrator, why = simulation.choose_integrator(load_robot(path), integrator)
        except InputError as error:
            raise ModelConfigurationError(str(error)) from None
    simulation.check_implicit_only(integrator, why, o.alpha, o.tip_tolerance)


# kind -> check(description path, mode, options) of the options its models refuse together
# (InputError, ModelConfigurationError); a kind without one takes any.
OPTION_CHECKS: dict[str, Callable[[Any, str, ModelOptions], None]] = {
    TENDON_ROBOT: _tendon_robot_options,
}


def check_options(path: str | Path, kind: str, mode: str, options: ModelOptions) -> None:
    """
    Raise InputError for ``options`` that the model (kind, mode) refuses together.

    The simulator node (at its start) and the local launcher (before it starts anything)
    both ask here.
    """
    check = OPTION_CHECKS.get(kind)
    if check is not None:
        check(path, mode, options)


def world_refusal(kind: str, mode: str, description, options: ModelOptions) -> str:
    """
    Return why the model (kind, mode) with ``options`` cannot take a world; '' when it can.

    The simulator node and the local launcher (before it starts anything) both ask here.
    """
    support = WORLD_MODELS.get(kind, {}).get(mode)
    if support is not None:
        return support(description, options)
    takes = '; '.join(f'{ROBOT_KINDS[k]}: mode {" or ".join(modes)}'
                      for k, modes in WORLD_MODELS.items())
    return (f'mode {mode} of {ROBOT_KINDS[kind]} does not model contact with obstacles '
            f'(models with contact: {takes})')


@dataclass(frozen=True)
class Actuation:
    """What a tension controller needs of a robot pulled by tendons or cables."""

    names: tuple[str, ...]            # tendons or cables, in order
    max_tensions: np.ndarray          # (n,) N
    base_frame: str
    base_position: np.ndarray         # (3,) m, base frame origin in the world
    reach: float                      # m, length of the robot from its base
    statics_robot: Any = None         # description a TipController takes; None: no statics
    # N, the description's own lower bound of every tension (the snake's pretension, which
    # keeps its cables from going slack); a controller never commands less. 0: none
    min_tension: float = 0.0


# kind -> actuation of its description, for the kinds driven by tensions.
ACTUATIONS: dict[str, Callable[[Any], Actuation]] = {
    # the tip controller's model is frictionless: friction is model error to it, like an
    # unknown load (the single statics solve has no memory of the path)
    TENDON_ROBOT: lambda robot: Actuation(
        tuple(robot.tendon_names), robot.max_tensions, robot.base.frame_id,
        robot.base.position, robot.rod.length, statics_robot=without_friction(robot)),
    snake.KIND: lambda robot: Actuation(
        tuple(robot.cable_names), np.full(len(robot.cables), robot.max_tension),
        snake.BASE_FRAME, np.zeros(3), robot.n_joints * robot.link.height,
        min_tension=robot.pretension),
}


@dataclass(frozen=True)
class InputLimits:
    """
    The inputs a setpoint of the simulator carries for a robot, with their bounds.

    ``field`` is the JointState field (``effort``, ``position``), ``quantity`` and ``unit``
    what it holds (``tension``, ``N``); ``low`` and ``high`` (n,) are the description's
    bounds of each input, in that unit. What the browser view's sliders may command.
    """

    names: tuple[str, ...]
    field: str
    quantity: str
    unit: str
    low: np.ndarray
    high: np.ndarray


def _tensions(actuation: Actuation) -> InputLimits:
    """Return the tensions of ``actuation``, from its own lower bound (a controller's floor)."""
    n = len(actuation.names)
    return InputLimits(actuation.names, 'effort', 'tension', 'N',
                       np.full(n, actuation.min_tension), actuation.max_tensions.copy())


def _bellows_pressures(robot) -> InputLimits:
    bellows = [b for section in robot.sections for b in section.bellows]
    return InputLimits(tuple(b.name for b in bellows), 'effort', 'pressure', 'Pa',
                       np.array([b.min_pressure for b in bellows]),
                       np.array([b.max_pressure for b in bellows]))


def _motor_angles(robot) -> InputLimits:
    n = len(pcr_robot.MOTOR_NAMES)
    low, high = robot.motor_limits
    return InputLimits(pcr_robot.MOTOR_NAMES, 'position', 'motor angle', 'rad',
                       np.full(n, low), np.full(n, high))


# kind -> the simulator's inputs of its description with their bounds (the kind's default
# model; a tendon robot in mode cc_dynamic takes the same tensions).
INPUT_LIMITS: dict[str, Callable[[Any], InputLimits]] = {
    TENDON_ROBOT: lambda robot: _tensions(ACTUATIONS[TENDON_ROBOT](robot)),
    pcr_robot.KIND: _motor_angles,
    snake.KIND: lambda robot: _tensions(ACTUATIONS[snake.KIND](robot)),
    bellows_robot.KIND: _bellows_pressures,
}


def input_limits(path: str | Path) -> tuple[str, InputLimits]:
    """
    (kind, input limits) of the description in ``path``.

    Raises
    ------
    RobotDescriptionError
        The file is bad or its kind unknown.

    """
    kind, description = load_any_description(path)
    return kind, INPUT_LIMITS[kind](description)


def load_actuation(path: str | Path, user: str) -> tuple[str, Actuation]:
    """
    (kind, actuation) of the description in ``path``.

    Raises
    ------
    RobotDescriptionError
        The file is bad, or its kind is not driven by tensions (``user`` refuses it).

    """
    kind, description = load_any_description(path)
    if kind not in ACTUATIONS:
        raise RobotDescriptionError(f'{path}: kind: {kind} is {ROBOT_KINDS[kind]}; {user} '
                                    'drives tendons or cables only')
    return kind, ACTUATIONS[kind](description)


class ModelConfigurationError(ValueError):
    """No model can be built for this file and mode; the message says why."""


def load_any_description(path: str | Path) -> tuple[str, Any]:
    """
    (kind, validated description) of the file in ``path``.

    Raises
    ------
    RobotDescriptionError
        The file is bad or its kind unknown; one line naming the file and the key.

    """
    kind = file_kind(path)
    if kind not in LOADERS:
        raise RobotDescriptionError(f'{path}: kind: {kind} is {ROBOT_KINDS[kind]}, which '
                                    f'has no simulation model yet (models: {sorted(LOADERS)})')
    return kind, LOADERS[kind](path)


def file_kind(path: str | Path) -> str:
    """Return the ``kind`` of the description in ``path``; RobotDescriptionError names the file."""
    try:
        return description_kind(read_yaml(path))
    except RobotDescriptionError as error:
        message = str(error)
        raise RobotDescriptionError(
            message if message.startswith(str(path)) else f'{path}: {message}') from None


def create_model(path: str | Path, mode: str = '', options: ModelOptions = ModelOptions()
                 ) -> tuple[str, str, SimModel]:
    """
    (kind, mode, model) for the description in ``path``; ``mode`` '': the kind's default.

    Raises
    ------
    ModelConfigurationError
        The file is bad, the kind has no such mode, the model refuses the robot, or it
        refuses a world (``options.world``: :func:`world_refusal`).

    """
    try:
        kind = file_kind(path)
        mode = check_mode(kind, mode)
        kind, description = load_any_description(path)
        if options.world is not None:
            refusal = world_refusal(kind, mode, description, options)
            if refusal:
                raise ModelConfigurationError(f'world_file: {refusal}')
        return kind, mode, MODELS[kind][mode](description, options)
    except _refusals() as error:
        from tendon_robot_sim.models.contact.world import WorldError
        # a world the model refuses is named by the node's parameter, as world_refusal's
        named = 'world_file: ' if isinstance(error, WorldError) else ''
        raise ModelConfigurationError(f'{named}{error}') from None


def _refusals() -> tuple[type[Exception], ...]:
    """
    Return the errors with which a model refuses a description it cannot simulate.

    Each kind's own (the constant-curvature model refuses helical tendons): a node that
    starts with such a file reports it in one line instead of a traceback.
    """
    from tendon_robot_sim.models.contact.world import WorldError
    from tendon_robot_sim.models.snake.dynamics import SnakeDynamicsError
    from tendon_robot_sim.models.trunk.dynamics import CCDynamicsError
    # WorldError: a world the model refuses (an obstacle through the base or the start)
    return (RobotDescriptionError, InputError, StaticsError, CCDynamicsError, SnakeDynamicsError,
            WorldError)


def check_mode(kind: str, mode: str) -> str:
    """
    Return the model ``mode`` of a robot ``kind`` ('': the kind's default).

    ModelConfigurationError names the modes of the kind; the simulator node and the local
    launcher (before it starts anything) both ask here.
    """
    modes = MODELS.get(kind, {})
    mode = mode or next(iter(modes), '')
    if modes and mode not in modes:
        raise ModelConfigurationError(f'mode: must be one of {_mode_list(modes)} for '
                                      f'{ROBOT_KINDS[kind]}, got {mode!r}')
    return mode


def _mode_list(modes) -> str:
    """
    List the modes of a kind for an error message.

    Its own models, then the constant-curvature one that several kinds share.
    """
    own = [m for m in modes if m != CC_MODE]
    shared = [f'{[CC_MODE]} (constant curvature)'] if CC_MODE in modes else []
    return ' or '.join(([str(own)] if own else []) + shared)
