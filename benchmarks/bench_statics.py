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
Speed and accuracy of the shooting statics solver (tendon_robot_sim.models.rod.statics.solver).

For the default robot (4 tendons, gravity) in the ``cosserat`` and ``discrete`` models
(``--models`` to change):

* cold solve: ``reset()`` then ``solve_tensions`` (cold guess, full finite-difference
  Jacobian, continuation only if needed), repeated; median and minimum;
* warm solve: a 1 kHz stream of slowly varying tensions (each tendon 2 + 1.5 sin(2 pi
  0.5 t + phase) N, about 5 mN per step), each solve warm-started from the previous
  one: median, 90th percentile and maximum wall time of the whole ``solve_tensions``
  call (input checks and result assembly included) and residual evaluations per solve;
* accuracy: tip distance between the default RK4 step and a converged fine-step
  solution (step / 16), at the benchmark tensions and at full tension on one tendon.

The top-level ``cold_ms``, ``warm_ms_median`` and ``solves_per_second`` are those of the
slower model. Numba compilation (cached after the first run) is reported as
``first_call_s`` and excluded from the timings. The last line printed with --json is one
JSON object.

    python benchmarks/bench_statics.py --json
"""

import json
import statistics
import sys
import time

from machine import machine_info
import numpy as np
from options import names, Parser, positive_int, readable_file
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.statics.solver import DEFAULT_STEPS, MODELS, StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tqdm import tqdm

TENSIONS = np.array([3.0, 2.0, 0.0, 1.0])   # N, cold-solve and accuracy case
RATE = 1000.0                                # Hz, warm-solve stream


def stream(n: int) -> np.ndarray:
    """(n, 4) tensions [N] of the 1 kHz warm-start stream."""
    t = np.arange(n) / RATE
    phases = np.array([0.0, 0.5, 1.0, 1.5]) * np.pi
    return 2.0 + 1.5 * np.sin(2.0 * np.pi * 0.5 * t[:, None] + phases)


def bench_model(robot, model: str, cold_repeats: int, warm_solves: int) -> dict:
    start = time.perf_counter()
    solver = StaticsSolver(robot, model)
    solver.solve_tensions(TENSIONS)
    first_call = time.perf_counter() - start

    cold = []
    for _ in tqdm(range(cold_repeats), desc=f'{model} cold', file=sys.stderr, leave=False,
                  disable=None):
        solver.reset()
        start = time.perf_counter()
        solver.solve_tensions(TENSIONS)
        cold.append(time.perf_counter() - start)

    warm, evaluations = [], []
    inputs = stream(warm_solves + 1)
    solver.solve_tensions(inputs[0])
    for tensions in tqdm(inputs[1:], desc=f'{model} warm', file=sys.stderr, leave=False,
                         disable=None):
        start = time.perf_counter()
        result = solver.solve_tensions(tensions)
        warm.append(time.perf_counter() - start)
        evaluations.append(result.evaluations)

    step = DEFAULT_STEPS[model]
    errors = {}
    for label, tensions in (('benchmark_tensions', TENSIONS),
                            ('full_tension_one_tendon', [robot.tendons[0].max_tension, 0, 0, 0])):
        tip = StaticsSolver(robot, model).solve_tensions(tensions).tip_position
        fine = StaticsSolver(robot, model, step=step / 16,
                             tolerance=1e-9).solve_tensions(tensions).tip_position
        errors[label] = float(np.linalg.norm(tip - fine))

    warm_ms = np.array(warm) * 1e3
    return {
        'first_call_s': first_call,
        'cold_ms': statistics.median(cold) * 1e3,
        'cold_ms_min': min(cold) * 1e3,
        'warm_ms_median': float(np.median(warm_ms)),
        'warm_ms_p90': float(np.percentile(warm_ms, 90)),
        'warm_ms_max': float(warm_ms.max()),
        'solves_per_second': 1e3 / float(np.median(warm_ms)),
        'warm_evaluations_median': float(np.median(evaluations)),
        'rk4_steps': int(solver.arc_lengths.size - 1),
        'step_m': step,
        'constitutive': solver.constitutive,
        'tip_error_m': errors,
    }


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', type=readable_file, default=None,
                        help='robot description (default: package)')
    parser.add_argument('--models', type=names(MODELS), default=['cosserat', 'discrete'],
                        help='comma-separated models (default cosserat,discrete)')
    parser.add_argument('--cold', type=positive_int, default=50, help='cold solves per model')
    parser.add_argument('--warm', type=positive_int, default=2000, help='warm solves per model')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    models = args.models
    robot = load_robot(args.robot or default_robot_file())

    results = {model: bench_model(robot, model, args.cold, args.warm) for model in models}
    for model, r in results.items():
        print(f'{model:9s} ({r["constitutive"]} law, {r["rk4_steps"]} RK4 steps): '
              f'cold {r["cold_ms"]:.2f} ms (min {r["cold_ms_min"]:.2f}), warm median '
              f'{r["warm_ms_median"]:.3f} ms, p90 {r["warm_ms_p90"]:.3f} ms, '
              f'{r["solves_per_second"]:.0f} solves/s, '
              f'{r["warm_evaluations_median"]:.0f} evaluations per warm solve; '
              f'tip error {r["tip_error_m"]["benchmark_tensions"]:.1e} m '
              f'({r["tip_error_m"]["full_tension_one_tendon"]:.1e} m at full tension)')
    slowest = max(results.values(), key=lambda r: r['warm_ms_median'])
    summary = {
        'benchmark': 'statics',
        'robot': robot.name,
        'cold_ms': max(r['cold_ms'] for r in results.values()),
        'warm_ms_median': slowest['warm_ms_median'],
        'solves_per_second': slowest['solves_per_second'],
        'models': results,
        'machine': machine_info('numpy', 'numba', 'scipy'),
    }
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == '__main__':
    sys.exit(main())
