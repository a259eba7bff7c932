#!/usr/bin/env python3

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
Statics pressed onto obstacles: the default robot pulled by t3 onto config/world_post.yaml.

The robot of ``config/robot.yaml`` pulled by t3 to 1.75 N onto the post and the 4 mm plate
(the case of ``test/models/rod/statics/test_contact_statics.py``), per statics model
(``cosserat``, ``discrete``):

* the cold solve at 1.75 N (load continuation from the unloaded rod, as ``statics --world``
  runs it);
* the press in 0.25 N steps, each from the last (``statics --world --tensions-csv``);
* a tension controller's ramp, 0.02 N steps (the simulator node's ``mode:=quasi_static``).

Each is timed in CPU seconds of this process (``time.process_time``: what a free core gives)
and counts Newton iterations; ``--repeats`` rounds, medians. Numba compilation is excluded
(one cold solve first). The tip of each path is compared with the cold solve's (the solver's
tolerance is 1e-7 m; the wrong branch, under the plate, is 50 mm away). The last line printed
with --json is one JSON object.

    python benchmarks/bench_contact_press.py --json
"""

import json
import statistics
import time

from machine import machine_info
import numpy as np
from options import names, Parser, positive_int
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import MODELS, StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

ROBOT = load_robot(default_robot_file())
WORLD = load_world(default_robot_file().parent / 'world_post.yaml')
PULL = 1.75   # N on t3


def path(model, step):
    """Solve the pull in ``step`` N steps from rest; CPU seconds, iterations, the last result."""
    solver = StaticsSolver(ROBOT, model, world=WORLD)
    start, iterations = time.process_time(), 0
    for tension in [*np.arange(step, PULL - 1e-9, step), PULL]:
        result = solver.solve_tensions({'t3': float(tension)})
        iterations += result.iterations
    return time.process_time() - start, iterations, result


def case(model, repeats):
    runs = {'cold': [], 'steps_0.25N': [], 'ramp_0.02N': []}
    tips = {}
    for _ in range(repeats):
        for name, step in (('cold', PULL), ('steps_0.25N', 0.25), ('ramp_0.02N', 0.02)):
            cpu, iterations, result = path(model, step)
            runs[name].append((cpu, iterations))
            tips[name] = result.tip_position
    out = {'model': model}
    for name, values in runs.items():
        out[name] = {'cpu_s': statistics.median(v[0] for v in values),
                     'newton_iterations': statistics.median(v[1] for v in values),
                     'tip_from_cold_m': float(np.abs(tips[name] - tips['cold']).max())}
    return out


def main():
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--models', type=names(MODELS), default=['cosserat', 'discrete'])
    parser.add_argument('--repeats', type=positive_int, default=3)
    parser.add_argument('--json', action='store_true')
    args = parser.parse_args()
    models = args.models
    for model in models:       # compile first
        path(model, PULL)
    results = []
    for model in models:
        result = case(model, args.repeats)
        results.append(result)
        print(model, ', '.join(f"{name} {result[name]['cpu_s']:.2f} s CPU "
                               f"({result[name]['newton_iterations']:.0f} iterations)"
                               for name in ('cold', 'steps_0.25N', 'ramp_0.02N')), flush=True)
    if args.json:
        print(json.dumps({'cases': results, 'machine': machine_info()}))


if __name__ == '__main__':
    main()
