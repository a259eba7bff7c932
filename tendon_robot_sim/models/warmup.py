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
Compile ahead: run every model once so numba compiles (and caches) all its kernels.

A kernel compiles on its first call for the argument types of that call, 20-30 s for the
rod's dynamics and statics on a laptop; with ``cache=True`` the machine code is written
to numba's cache (next to the sources, or ``NUMBA_CACHE_DIR``, see
:func:`tendon_robot_sim.numba_cache_dir`) and later processes load it in well under a
second. Calling the models as the simulator node and the commands do (same constructors,
same argument types) compiles exactly the signatures they will ask for: the rod dynamics,
explicit (``advance_rod``) and implicit (``advance``), the rod statics of every formulation
(solve, poses) and the statics' sensitivities of a calibration, the stick-slip statics of
tendon friction against obstacles, the parallel robot (``pcr_solve``), the snake and the
constant-curvature trunk kernels.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.pcr import robot as pcr_robot
from tendon_robot_sim.models.registry import create_model, ModelOptions, MODELS
from tendon_robot_sim.models.rod.statics.solver import MODELS as STATICS_MODELS
from tendon_robot_sim.models.sim_model import InputError, SimModel
from tendon_robot_sim.models.snake import robot as snake
from tendon_robot_sim.models.trunk import robot as bellows_robot

# kind -> the shipped description its models are warmed on (config/)
DESCRIPTIONS = {
    'tendon_robot': 'robot.yaml',
    pcr_robot.KIND: 'pcr_6rus.yaml',
    snake.KIND: 'rolling_joint_snake.yaml',
    bellows_robot.KIND: 'bionic_handling_assistant.yaml',
}
STEPS = 3   # time steps a timed model takes: the first compiles, the others check the cache
# The models `make demo` runs, compiled first so that the demo can start while the others
# compile: the simulator of the default robot (rod dynamics, integrator auto: explicit for
# its tension input) and the discrete statics of the demo's tip target and of the tension
# controller's tip Jacobian (statics_model auto: discrete for a robot with vertebra discs).
# test/models/test_warmup.py checks that the demo resolves to these.
DEMO = ('tendon_robot dynamic (explicit)', 'tendon_robot quasi_static (discrete)')
# Tendon friction and obstacles compile kernels of their own (the stick-slip sequence's capstan
# and motor settling, the contact probes): the default robot with friction on the post and plate
# (config/), as `statics --tensions-csv` or a calibration of the friction runs them.
FRICTION_ROBOT, WORLD = 'robot_friction.yaml', 'world_post.yaml'


def tasks(which: str = 'all') -> Iterator[tuple[str, Callable[[], None]]]:
    """
    Yield (label, warm) for the models of every kind: ``warm()`` compiles its kernels.

    ``which``: ``all``, ``demo`` (the models of ``make demo``, :data:`DEMO`, in that order)
    or ``rest`` (all but those).
    """
    if which == 'demo':
        found = dict(tasks())
        yield from ((label, found[label]) for label in DEMO)
        return
    for label, warm in _all_tasks():
        if which == 'all' or label not in DEMO:
            yield label, warm


def _all_tasks() -> Iterator[tuple[str, Callable[[], None]]]:
    for kind, modes in MODELS.items():
        path = share_dir() / 'config' / DESCRIPTIONS[kind]
        for mode in modes:
            if (kind, mode) == ('tendon_robot', 'quasi_static'):
                variants = [(m, ModelOptions(statics_model=m)) for m in STATICS_MODELS]
            elif (kind, mode) == ('tendon_robot', 'dynamic'):
                variants = [(i, ModelOptions(integrator=i)) for i in ('explicit', 'implicit')]
            else:
                variants = [('', ModelOptions())]
            for variant, options in variants:
                label = f'{kind} {mode}' + (f' ({variant})' if variant else '')
                yield label, _warmer(path, mode, options)
    yield 'tendon_robot calibration (statics sensitivities)', _warm_sensitivities
    yield 'tendon_robot quasi_static (friction, world)', _warm_friction_and_world


def _warm_friction_and_world() -> None:
    """Run the quasi-static model of a robot with tendon friction against obstacles."""
    from tendon_robot_sim.models.contact.world import load_world

    world = load_world(share_dir() / 'config' / WORLD)
    exercise(create_model(share_dir() / 'config' / FRICTION_ROBOT, 'quasi_static',
                          ModelOptions(world=world))[2])


def _warm_sensitivities() -> None:
    """Linearise a statics solution and move it, as a calibration's Jacobian does."""
    from tendon_robot_sim.models.rod.statics.analysis.sensitivity import (
        linear_points, linearize, solutions)
    from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
    from tendon_robot_sim.models.tendon_robot import load_robot

    robot = load_robot(share_dir() / 'config' / DESCRIPTIONS['tendon_robot'])
    solver = StaticsSolver(robot, 'cosserat')
    commands = np.zeros((1, len(robot.tendons)))
    solver.solve_displacements(commands[0])
    linear_points(solver, linearize(solver, commands, False,
                                    solutions(solver, [solver.memory()], False),
                                    robot.tip_marker))


def _warmer(path: Path, mode: str, options: ModelOptions) -> Callable[[], None]:
    return lambda: exercise(create_model(path, mode, options)[2])


def warm(label: str) -> str:
    """Compile the kernels of the model ``label`` (of :func:`tasks`); return the label."""
    dict(tasks())[label]()
    return label


def exercise(model: SimModel) -> None:
    """Build-time solves done, take one setpoint of every field, step, report the state."""
    for field in model.inputs.fields:
        try:
            model.apply(field, np.zeros(len(model.inputs.names)))
        except InputError:
            pass   # the kernels compiled before the model refused the values
    if model.timed:
        model.advance(STEPS * model.dt)
    model.state()
