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
Speed of the rolling-joint snake's dynamics on one core.

Inverse dynamics with the tension optimisation (37) for every joint: trajectory steps per
second over the 12.6 s trajectories of D'Antuono et al. 2023 at 5 ms (all steps of a
trajectory solved together, as ``snake inverse`` does), and one step at a time
(``inverse_step``, numba, as a controller asking for the next step's tensions would).
Target: >= 1000 steps/s (5 x real time at 5 ms steps).

Forward dynamics: real-time factor (simulated / wall time) of RK4 under the tensions of
the inverse dynamics, at the paper's 5 ms (the step of the round-trip test) and at 1 ms.
Target: >= 10.

Each figure is timed in several repeats; the best estimates the cost, the median shows
the load of other processes. The process is pinned to one core. The last line printed
with --json is one JSON object.

    python benchmarks/bench_snake.py --json
"""

import json
import os
import statistics
import sys
import time

from machine import machine_info
import numpy as np
from options import Parser, positive_int, readable_file
from tendon_robot_sim.commands.snake import default_snake_file
from tendon_robot_sim.models.snake.dynamics import SnakeDynamics, study_trajectory
from tendon_robot_sim.models.snake.robot import load_snake
from tqdm import tqdm


def timed(run, repeats: int, desc: str, show: bool) -> list[float]:
    times = []
    for _ in tqdm(range(repeats), desc=desc, disable=not show, file=sys.stderr):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', type=readable_file, default=str(default_snake_file()),
                        help='snake YAML file')
    parser.add_argument('--repeats', type=positive_int, default=5, help='timed runs per figure')
    parser.add_argument('--single-steps', type=positive_int, default=200,
                        help='steps solved one at a time per repeat')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    if hasattr(os, 'sched_setaffinity'):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    show = sys.stderr.isatty()
    snake = load_snake(args.robot)
    dynamics = SnakeDynamics(snake)
    result = {'robot': snake.name, 'joints': snake.n_joints, 'cables': len(snake.cables)}

    inverse = {}
    for which in ('pan', 'tilt', 'both'):
        t, q, qd, qdd = study_trajectory(snake, which)
        dynamics.inverse(t, q, qd, qdd)            # warm up
        times = timed(lambda: dynamics.inverse(t, q, qd, qdd), args.repeats,
                      f'inverse {which}', show)
        inverse[which] = {'steps': int(t.size), 'steps_per_second': t.size / min(times),
                          'median_steps_per_second': t.size / statistics.median(times)}
    t, q, qd, qdd = study_trajectory(snake, 'both')
    n = min(args.single_steps, t.size)
    dynamics.inverse_step(t[0], q[0], qd[0], qdd[0])      # compile
    times = timed(lambda: [dynamics.inverse_step(t[k], q[k], qd[k], qdd[k]) for k in range(n)],
                  args.repeats, 'inverse one step', show)
    inverse['one_step_at_a_time'] = {'steps_per_second': n / min(times),
                                     'median_steps_per_second': n / statistics.median(times)}
    result['inverse'] = inverse

    tensions = dynamics.inverse(t, q, qd, qdd).tensions
    forward = {}
    for substeps, label in ((1, '5ms'), (5, '1ms')):
        dynamics.simulate(t[:3], tensions[:3], q[0], qd[0], substeps)      # compile
        run = (lambda s=substeps: dynamics.simulate(t, tensions, q[0], qd[0], s))
        times = timed(run, args.repeats, f'forward {label}', show)
        q_sim, _ = run()
        forward[label] = {'dt': float(t[1] - t[0]) / substeps,
                          'real_time_factor': float(t[-1] / min(times)),
                          'median_real_time_factor': float(t[-1] / statistics.median(times)),
                          'round_trip_error_rad': float(np.abs(q_sim[:, 0] - q).max())}
    result['forward'] = forward
    result['machine'] = machine_info('numpy', 'scipy', 'numba')

    for which, figures in inverse.items():
        print(f"inverse dynamics, {which}: {figures['steps_per_second']:.0f} steps/s "
              f"(median {figures['median_steps_per_second']:.0f}); target >= 1000")
    for label, figures in forward.items():
        print(f'forward dynamics, RK4 at {label}: real-time factor '
              f"{figures['real_time_factor']:.1f} "
              f"(median {figures['median_real_time_factor']:.1f})"
              f", round trip {figures['round_trip_error_rad']:.2g} rad; target >= 10")
    print(f"load average {result['machine']['load_average_1min']:.2f} on "
          f"{result['machine']['cpus']} cpus ({result['machine']['processor']})")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
