"""Which simulation model serves a robot description: (kind, mode) -> factory.

A description file's top-level ``kind`` picks the robot kind (none: a tendon robot,
:data:`TENDON`); the simulator node's ``mode`` picks one of the kind's models (empty:
the kind's first, its default). Adding a kind or a model is an entry in :data:`MODELS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tendon_robot_sim.core import pcr_robot
from tendon_robot_sim.core.pcr_model import PcrStatics
from tendon_robot_sim.core.robot import load_robot, read_yaml, RobotDescriptionError
from tendon_robot_sim.core.sim_model import InputError, SimModel
from tendon_robot_sim.core.statics import StaticsError
from tendon_robot_sim.core.tendon_models import TendonDynamics, TendonStatics

TENDON = 'tendon'


@dataclass(frozen=True)
class ModelOptions:
    """Settings of the node that some models take."""

    dt: float | None = None              # s, time step of a timed model; None: its own
    statics_model: str = 'discrete'      # tendon robot, quasi_static


Factory = Callable[[Path, ModelOptions], SimModel]

# kind -> {mode: factory}; the first mode of a kind is its default.
MODELS: dict[str, dict[str, Factory]] = {
    TENDON: {
        'dynamic': lambda path, o: TendonDynamics(load_robot(path), dt=o.dt),
        'quasi_static': lambda path, o: TendonStatics(load_robot(path), o.statics_model),
    },
    pcr_robot.KIND: {
        'quasi_static': lambda path, o: PcrStatics(pcr_robot.load_pcr_robot(path)),
    },
}


class ModelConfigurationError(ValueError):
    """No model can be built for this file and mode; the message says why."""


def description_kind(path: str | Path) -> str:
    """The ``kind`` of the description in ``path`` (:data:`TENDON` when it has none).

    Raises
    ------
    RobotDescriptionError
        The file cannot be read, or its kind is not one of :data:`MODELS`.
    """
    data = read_yaml(path)
    kind = data.get('kind', TENDON) if isinstance(data, dict) else TENDON
    if kind not in MODELS:
        raise RobotDescriptionError(f'{path}: kind: must be one of {sorted(MODELS)}, '
                                    f'got {kind!r}')
    return kind


def require_kind(path: str | Path, kinds: tuple[str, ...], user: str) -> None:
    """RobotDescriptionError, in one line, unless the description is of one of ``kinds``;
    ``user`` names who refuses it ('the tension controller')."""
    kind = description_kind(path)
    if kind not in kinds:
        raise RobotDescriptionError(
            f'{path}: a {kind} robot; {user} drives {" or ".join(kinds)} robots only')


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
        modes = MODELS[kind]
        mode = mode or next(iter(modes))
        if mode not in modes:
            raise ModelConfigurationError(
                f'mode: must be one of {list(modes)} for a {kind} robot, got {mode!r}')
        return kind, mode, modes[mode](Path(path), options)
    except (RobotDescriptionError, InputError, StaticsError) as error:
        raise ModelConfigurationError(str(error)) from None
