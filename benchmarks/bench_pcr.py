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
Speed of the 6-RUS parallel continuum robot's kinetostatics.

The model: tendon_robot_sim.models.pcr.kinetostatics.

Targets of issues 15 and 24 (>= 5000 warm solves per CPU second), next to Rodrigues et
al.'s figure (3.82 s, sd 1.15 s, per inverse solve over a 4000-sample workspace, scipy shooting):

* warm inverse solves along the paper's helix (radius 0.25 m, z 0.40 to 0.55 m, here 2 turns,
  500 points, 5 N load), each warm-started from the previous point: solves per second over
  the whole run, of wall time and of this process's CPU time (the latter does not count the time
  other work on a shared machine takes the core away), and median / p90 wall time of one
  ``inverse`` call -- target >= 500/s;
* cold inverse solve (``reset()`` first: rigid-link start, full Jacobian) at the helix
  points: median -- target <= 50 ms;
* the paper's workspace, 16 heights 0.40 to 0.70 m x 250 points, on all local cores:
  wall time -- target <= 2 min;
* rod integrations per Jacobian: exact, one integration of each rod with its 7 tangents
  (issue 24: the rods' variational equations), vs 42 for structured finite differences
  (one rod per column) and 6 x 42 for plain finite differences of the coupled residual;
  between exact Jacobians the solver updates each rod's block by Broyden steps;
* accuracy: motor angles at the default RK4 steps vs 4 x as many.

Numba compilation (cached after the first run) is excluded and reported as
``first_call_s``. The machine is shared: ``machine.load_average_1min`` says how busy it
was. The last line printed with --json is one JSON object.

    python benchmarks/bench_pcr.py --json
"""

import json
import statistics
import sys
import time

from machine import machine_info
import numpy as np
from options import Parser, positive_int, readable_file, worker_count
from tendon_robot_sim.models.pcr.kinetostatics import DEFAULT_STEPS, helix, PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.workspace import cylinder_samples, workspace
from tqdm import tqdm

LOAD = (0.0, 0.0, -5.0)      # N, the paper's helix load
# Rodrigues et al. 2024: mean time per inverse solve of their workspace estimate [s]
PAPER_SOLVE_S = 3.82


def bench(robot, cold_repeats: int, workers, skip_workspace: bool) -> dict:
    start = time.perf_counter()
    solver = PcrSolver(robot)
    points = helix(turns=2.0)     # as measured in docs/performance.md
    solver.inverse(points[0], force=LOAD)
    first_call = time.perf_counter() - start

    warm, evaluations, iterations = [], [], []
    run_start, cpu_start = time.perf_counter(), time.process_time()
    for p in tqdm(points, desc='warm (helix)', file=sys.stderr, leave=False, disable=None):
        result = solver.inverse(p, force=LOAD)
        warm.append(result.solve_time)
        evaluations.append(result.evaluations)
        iterations.append(result.iterations)
    run_time = time.perf_counter() - run_start
    cpu_time = time.process_time() - cpu_start

    cold, cold_evaluations = [], []
    for p in tqdm(points[::max(1, len(points) // cold_repeats)], desc='cold', file=sys.stderr,
                  leave=False, disable=None):
        solver.reset()
        result = solver.inverse(p, force=LOAD)
        cold.append(result.solve_time)
        cold_evaluations.append(result.evaluations)

    pose = points[len(points) // 2]
    fine = PcrSolver(robot, steps=4 * DEFAULT_STEPS).inverse(pose, force=LOAD).motor_angles
    error = float(np.max(np.abs(PcrSolver(robot).inverse(pose, force=LOAD).motor_angles - fine)))

    warm_ms = np.array(warm) * 1e3
    out = {
        'first_call_s': first_call,
        'warm_solves_per_second': len(points) / run_time,
        # per second of this process's CPU time: what a machine of its own would give
        'warm_solves_per_cpu_second': len(points) / cpu_time,
        'warm_ms_median': float(np.median(warm_ms)),
        'warm_ms_p90': float(np.percentile(warm_ms, 90)),
        'warm_ms_max': float(warm_ms.max()),
        'warm_rod_integrations_median': float(np.median(evaluations)),
        'cold_ms_median': statistics.median(cold) * 1e3,
        'cold_ms_max': max(cold) * 1e3,
        'cold_rod_integrations_median': float(np.median(cold_evaluations)),
        'rod_integrations_per_jacobian': {'variational (6 rods x 7 tangents)': 6,
                                          'structured differences': 6 * 7,
                                          'plain differences': 6 * 6 * 7},
        'warm_iterations_mean': float(np.mean(iterations)),
        'rk4_steps_per_rod': DEFAULT_STEPS,
        'motor_angle_error_rad': error,
    }
    if not skip_workspace:
        samples = cylinder_samples()
        result = workspace(robot, samples, force=None, workers=workers)
        summary = result.summary()
        out['workspace'] = {**summary, 'workers': workers or 'all cores',
                            'speedup_vs_paper_per_solve':
                                PAPER_SOLVE_S / (summary['converged_solve_ms_mean'] * 1e-3)}
    return out


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', type=readable_file, default=None,
                        help='pcr_6rus description (default: package)')
    parser.add_argument('--cold', type=positive_int, default=50, help='cold solves')
    parser.add_argument('--workers', type=worker_count, default=None,
                        help='workspace processes (default: all cores)')
    parser.add_argument('--no-workspace', action='store_true',
                        help='skip the 4000-sample workspace')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    robot = load_pcr_robot(args.robot or default_pcr_file())
    r = bench(robot, args.cold, args.workers, args.no_workspace)
    print(f'{robot.name} ({robot.compat} model, {r["rk4_steps_per_rod"]} RK4 steps per rod): '
          f'warm {r["warm_solves_per_second"]:.0f} solves/s along the helix '
          f'({r["warm_solves_per_cpu_second"]:.0f} per CPU second; median '
          f'{r["warm_ms_median"]:.3f} ms, p90 {r["warm_ms_p90"]:.3f} ms), cold median '
          f'{r["cold_ms_median"]:.2f} ms (max {r["cold_ms_max"]:.1f} ms); motor angle '
          f'discretisation error {r["motor_angle_error_rad"]:.1e} rad')
    if 'workspace' in r:
        w = r['workspace']
        print(f'workspace: {w["samples"]} samples, {w["valid"]} valid, in '
              f'{w["wall_time_s"]:.1f} s; converged solves {w["converged_solve_ms_mean"]:.2f} '
              f'ms mean (sd {w["converged_solve_ms_sd"]:.2f}) vs the paper\'s 3820 ms (sd 1150)')
    summary = {'benchmark': 'pcr', 'robot': robot.name, **r,
               'machine': machine_info('numpy', 'numba', 'scipy')}
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == '__main__':
    sys.exit(main())
