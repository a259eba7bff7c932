"""Which simulation model serves a robot description: (kind, mode) -> factory.

A description file's top-level ``kind`` picks the robot kind (none: a tendon robot,
:data:`~tendon_robot_sim.core.sim_model.TENDON`) and with it the loader; the simulator
node's ``mode`` picks one of the kind's models (empty: the kind's first, its default).
Adding a kind or a model is an entry in :data:`LOADERS` and :data:`MODELS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tendon_robot_sim.core import pcr_robot
from tendon_robot_sim.core.pcr_model import PcrStatics
from tendon_robot_sim.core.robot import load_robot, RobotDescriptionError
from tendon_robot_sim.core.sim_model import description_kind, InputError, SimModel, TENDON
from tendon_robot_sim.core.statics import StaticsError
from tendon_robot_sim.core.tendon_models import TendonDynamics, TendonStatics


@dataclass(frozen=True)
class ModelOptions:
    """Settings of the node that some models take."""

    dt: float | None = None              # s, time step of a timed model; None: its own
    statics_model: str = 'discrete'      # tendon robot, quasi_static


# kind -> loader of its description file
LOADERS: dict[str, Callable[[Path], Any]] = {
    TENDON: load_robot,
    pcr_robot.KIND: pcr_robot.load_pcr_robot,
}
# kind -> {mode: factory(description, options)}; the first mode of a kind is its default.
MODELS: dict[str, dict[str, Callable[[Any, ModelOptions], SimModel]]] = {
    TENDON: {
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
    kind = description_kind(path)
    if kind not in LOADERS:
        raise RobotDescriptionError(f'{path}: kind: must be one of {sorted(LOADERS)}, '
                                    f'got {kind!r}')
    return kind, LOADERS[kind](path)


def create_model(path: str | Path, mode: str = '', options: ModelOptions = ModelOptions()
                 ) -> tuple[str, str, SimModel]:
    """(kind, mode, model) for the description in ``path``; ``mode`` '': the kind's default.

    Raises
    ------
    ModelConfigurationError
        The file is bad, the kind has no such mode, or the model refuses the robot.
    """
    try:
        kind = description_kind(path)
        modes = MODELS.get(kind, {})
        mode = mode or next(iter(modes), '')
        if modes and mode not in modes:
            raise ModelConfigurationError(
                f'mode: must be one of {list(modes)} for a {kind} robot, got {mode!r}')
        kind, description = load_any_description(path)
        return kind, mode, modes[mode](description, options)
    except (RobotDescriptionError, InputError, StaticsError) as error:
        raise ModelConfigurationError(str(error)) from None
