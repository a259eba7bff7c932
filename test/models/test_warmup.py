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

"""``tendon-robot-sim warmup`` compiles every kernel the models use into numba's cache."""

import json
import os
from pathlib import Path
import subprocess
import sys

import tendon_robot_sim
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.registry import MODELS
from tendon_robot_sim.models.rod.dynamics.simulation import choose_integrator
from tendon_robot_sim.models.rod.statics.solver import model_for, MODELS as STATICS_MODELS
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.models.warmup import DEMO, tasks

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent

# Run every model as the warmup does, in a fresh process, and count numba's cache hits and
# misses (a miss is a compile) over every dispatcher of the package's kernel modules.
COUNT_COMPILES = """
import json, sys
import numba
from tendon_robot_sim.models.warmup import tasks
for label, warm in tasks():
    warm()
hits, misses = 0, {}
for name, module in list(sys.modules.items()):
    if not name.startswith('tendon_robot_sim.'):
        continue
    for value in list(vars(module).values()):
        if isinstance(value, numba.core.registry.CPUDispatcher):
            hits += sum(value.stats.cache_hits.values())
            if value.stats.cache_misses:
                misses[f'{name}.{value.__name__}'] = sum(value.stats.cache_misses.values())
print(json.dumps({'hits': hits, 'misses': misses}))
"""


def run(*arguments: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    return subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3600)


def test_every_model_of_every_kind_is_warmed():
    labels = [label for label, _ in tasks()]
    for kind, modes in MODELS.items():
        for mode in modes:
            assert any(label.startswith(f'{kind} {mode}') for label in labels), (kind, mode)
    for model in STATICS_MODELS:
        assert f'tendon_robot quasi_static ({model})' in labels


def test_the_demo_models_are_those_make_demo_runs_and_the_rest_is_everything_else():
    robot = load_robot(default_robot_file())
    # the sim stack's simulator: the kind's first mode, integrator auto
    assert next(iter(MODELS['tendon_robot'])) == 'dynamic'
    assert choose_integrator(robot)[0] == 'explicit'
    # the tension controller's statics_model auto (the demo's tip target: discrete too)
    assert model_for(robot, 'auto') == 'discrete'
    assert DEMO == ('tendon_robot dynamic (explicit)', 'tendon_robot quasi_static (discrete)')
    demo, rest = [label for label, _ in tasks('demo')], [label for label, _ in tasks('rest')]
    assert demo == list(DEMO)
    assert sorted(demo + rest) == sorted(label for label, _ in tasks())


def test_after_the_warmup_no_model_compiles():
    # In the cache the tests share (the package's, or NUMBA_CACHE_DIR): after `make setup`
    # this warmup finds everything compiled and takes seconds. Two at a time, each model in
    # a process of its own, as make setup compiles them.
    warmup = run('-m', 'tendon_robot_sim.cli', 'warmup', '--jobs', '2')
    assert warmup.returncode == 0, warmup.stderr
    assert f'{len(list(tasks()))} models warmed' in warmup.stdout
    counted = run('-c', COUNT_COMPILES)
    assert counted.returncode == 0, counted.stderr
    compiles = json.loads(counted.stdout.splitlines()[-1])
    assert compiles['misses'] == {}, 'compiled although warmed up'
    assert compiles['hits'] > 0   # the kernels came from the cache
