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
``StaticsSolver.compile_kernels``: what `statics` runs before it times a cold solve.

It once solved the problem twice and timed the second: a contact solve of 5 s took 11.
"""

import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import tendon_robot_sim
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent

# In a fresh process: which kernels each solve loads after compile_kernels (none, if it did its
# job); the same without compile_kernels shows the check can see one.
LOADS = """
import json, sys
import numba
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

def loaded():
    return {f'{name}.{value.__name__}': len(value.overloads)
            for name, module in list(sys.modules.items()) if name.startswith('tendon_robot_sim.')
            for value in list(vars(module).values())
            if isinstance(value, numba.core.registry.CPUDispatcher)}

robot = load_robot(default_robot_file())
world = load_world(share_dir() / 'config' / 'world_post.yaml')
compiled = sys.argv[1] == 'compiled'
out = {}
for model, obstacles in (('discrete', None), ('cosserat', world), ('kirchhoff', None)):
    solver = StaticsSolver(robot, model, world=obstacles)
    if compiled:
        solver.compile_kernels()
    before = loaded()
    result = solver.solve_tensions([0.0, 0.0, 0.0, 1.0])
    solver.solve_displacements(result.tendon_displacements)
    out[model] = sorted(name for name, n in loaded().items() if n != before.get(name, 0))
print(json.dumps(out))
"""


def loads(how: str) -> dict:
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    proc = subprocess.run([sys.executable, '-c', LOADS, how], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_after_compile_kernels_no_solve_loads_a_kernel():
    assert loads('compiled') == {'discrete': [], 'cosserat': [], 'kirchhoff': []}
    # without it the first model's solve loads the solver's kernels: the check sees them
    assert 'tendon_robot_sim.models.rod.statics._kernels.solve' in loads('plain')['discrete']


def test_compile_kernels_leaves_no_memory_behind():
    """
    The solve after it is the cold solve of a fresh solver: the same iterations, the same tip.

    Against an obstacle: the contact continuation once started from the Jacobian left behind
    (274 iterations fresh, 281 after compile_kernels or any solve and reset).
    """
    robot = load_robot(default_robot_file())
    world = load_world(share_dir() / 'config' / 'world_post.yaml')
    fresh = StaticsSolver(robot, 'cosserat', world=world).solve_tensions([0.0, 0.0, 0.0, 1.0])
    solver = StaticsSolver(robot, 'cosserat', world=world)
    solver.compile_kernels()
    after = solver.solve_tensions([0.0, 0.0, 0.0, 1.0])
    assert after.iterations == fresh.iterations
    # the same arithmetic from the same start: agreement far inside the 1e-8 residual
    assert np.abs(after.tip_position - fresh.tip_position).max() < 1e-12
