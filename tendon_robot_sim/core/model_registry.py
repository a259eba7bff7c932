"""Which simulation model serves a robot description: (kind, mode) -> factory.

A description file's top-level ``kind`` picks the robot kind
(:data:`~tendon_robot_sim.core.robot.ROBOT_KINDS`; none: a tendon robot) and with it the
loader; the simulator
node's ``mode`` picks one of the kind's models (empty: the kind's first, its default).
Adding a kind or a model is an entry in :data:`LOADERS` and :data:`MODELS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tendon_robot_sim.core import pcr_robot
from tendon_robot_sim.core.pcr_model import PcrStatics
from tendon_robot_sim.core.robot import (description_kind, load_robot, read_yaml, ROBOT_KINDS,
                                         RobotDescriptionError, TENDON_ROBOT)
from tendon_robot_sim.core.sim_model import InputError, SimModel
from tendon_robot_sim.core.statics import StaticsError
from tendon_robot_sim.core.tendon_models import TendonDynamics, TendonStatics


@dataclass(frozen=True)
class ModelOptions:
    """Settings of the node that some models take."""

    dt: float | None = None              # s, time step of a timed model; None: its own
    statics_model: str = 'discrete'      # tendon robot, quasi_static


# kind -> loader of its description file
LOADERS: dict[str, Callable[[Path], Any]] = {
    TENDON_ROBOT: load_robot,
    pcr_robot.KIND: pcr_robot.load_pcr_robot,
}
# kind -> {mode: factory(description, options)}; the first mode of a kind is its default.
MODELS: dict[str, dict[str, Callable[[Any, ModelOptions], SimModel]]] = {
    TENDON_ROBOT: {
        'dynamic': lambda robot, o: TendonDynamics(robot, dt=o.dt),
        'quasi_static': lambda robot, o: TendonStatics(robot, o.statics_model),
    },
    pcr_robot.KIND: {
        'quasi_static': lambda robot, o: PcrStatics(robot),
    },
}


class ModelConfigurationError(ValueError):
    """No model can be built for this file and mode; the message says why."""


def load_any_description(path: str | Path) -> tuple[str, Any]:
    """(kind, validated description) of the file in ``path``.

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
    """The ``kind`` of the description in ``path``; RobotDescriptionError names the file."""
    try:
        return description_kind(read_yaml(path))
    except RobotDescriptionError as error:
        message = str(error)
        raise RobotDescriptionError(
            message if message.startswith(str(path)) else f'{path}: {message}') from None


def create_model(path: str | Path, mode: str = '', options: ModelOptions = ModelOptions()
                 ) -> tuple[str, str, SimModel]:
    """(kind, mode, model) for the description in ``path``; ``mode`` '': the kind's default.

    Raises
    ------
    ModelConfigurationError
        The file is bad, the kind has no such mode, or the model refuses the robot.
    """
    try:
        kind = file_kind(path)
        modes = MODELS.get(kind, {})
        mode = mode or next(iter(modes), '')
        if modes and mode not in modes:
            raise ModelConfigurationError(
                f'mode: must be one of {list(modes)} for {ROBOT_KINDS[kind]}, got {mode!r}')
        kind, description = load_any_description(path)
        return kind, mode, modes[mode](description, options)
    except (RobotDescriptionError, InputError, StaticsError) as error:
        raise ModelConfigurationError(str(error)) from None
