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

r"""
Warm inverse kinetostatics of the parallel robot side by side with Till's C++ (issue 42).

The peer: J. Till's structured CSG inverse kinetostatics (ContinuumRobotExamples,
``01_Statics/03_CSG_IK_Speedup/Cpp_5``), a Stewart-Gough robot of six straight rods solved
by Levenberg-Marquardt with a structured finite-difference Jacobian, until the sum of squares
of its residual (m, rad, N, N m) is below 1e-6. Its ``main`` moves the platform 1 mm in y
and z per solve, 100 solves up then 100 down, 50000 solves each from the last, and prints
solves per second of its CPU time (std::clock). Ours: the 6-RUS robot
(``config/pcr_6rus.yaml``, 32 RK4 steps per rod) along the same path from (0, 0.02, 0.48) m,
``PcrSolver.inverse`` once per point (the whole result, rod shapes included), solves per
second of this process's CPU time, at a tolerance in metres (``--tolerance-m``: each
coordinate of each rod end's gap to its platform joint) and at the default tolerance. The
runs alternate, ours then the peer, ``--repeat`` times: the load changes alike for both.

The peer is a binary built outside this repository (``--peer-binary``: docs/performance.md
says how); without one the JSON says so, and whether a C++ compiler is on this machine.

Accuracy (untimed, the first ``--accuracy-points`` points of the path, for each tolerance
of ``--tolerances-m``): the gap of the rod ends to their joints (the distance, m; the peer's
own residual measures the same), the motor angles against the default tolerance's, and the
platform position the motors give (a forward solve at the default tolerance) against the
target. Solves per CPU second and Newton iterations per solve at each of those tolerances
(``--cost-solves`` each, not alternated) give what a tolerance costs.

    taskset -c 1 python benchmarks/bench_pcr_peer.py --peer-binary PATH --json

The last line with --json is one JSON object; ``machine.load_average_1min`` says how busy the
machine was.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from machine import machine_info
import numpy as np
from options import Parser, positive, positive_int
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tqdm import tqdm

START = (0.0, 0.02, 0.48)   # m, the peer's start of its timed path
PERIOD = 200                # solves: 100 up by 1 mm in y and z, 100 down
PEER_SOLVES = 50000         # the peer's main: fixed
TARGET_RATIO = 1.5
RATE = re.compile(r'Solution rate:\s*([0-9.eE+-]+)\s*Hz')


def till_path(count: int) -> np.ndarray:
    """Return the peer's platform positions (count, 3) [m]: +-1 mm in y and z per solve."""
    step = np.where(np.arange(count) % PERIOD < PERIOD // 2, 1e-3, -1e-3)
    path = np.zeros((count, 3))
    path[:] = START
    path[:, 1] += np.cumsum(step)
    path[:, 2] += np.cumsum(step)
    return path


def ours(robot, path: np.ndarray, tolerance_m: float | None) -> tuple[float, float]:
    """Return warm inverse solves per CPU second along ``path`` and Newton iterations a solve."""
    solver = (PcrSolver(robot) if tolerance_m is None
              else PcrSolver(robot, tolerance_m=tolerance_m))
    solver.inverse(START)
    inverse = solver.inverse
    iterations = 0
    cpu = time.process_time()
    for position in path:
        iterations += inverse(position).iterations
    return len(path) / (time.process_time() - cpu), iterations / len(path)


def peer(binary: str) -> tuple[float, float]:
    """Run the peer; return its printed solves per CPU second and the process's CPU seconds."""
    process = subprocess.Popen([os.path.abspath(binary)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    found = RATE.search(out)
    if os.waitstatus_to_exitcode(status) != 0 or not found:
        raise SystemExit(f'--peer-binary: {binary} did not print its solution rate: {out!r}')
    return float(found.group(1)), usage.ru_utime + usage.ru_stime


def accuracy(robot, path: np.ndarray, tolerances) -> dict:
    """Gap, motor angle and pose errors along ``path`` at each tolerance (None: default)."""
    reference, forward = PcrSolver(robot), PcrSolver(robot)
    reference.inverse(START)
    exact = np.array([reference.inverse(p).motor_angles for p in path])
    out = {}
    for tolerance_m in tolerances:
        solver = (PcrSolver(robot) if tolerance_m is None
                  else PcrSolver(robot, tolerance_m=tolerance_m))
        solver.inverse(START)
        forward.reset()
        gaps, angles, poses = [], [], []
        for position, q_exact in zip(path, exact):
            result = solver.inverse(position)
            joints = result.position + robot.joint_positions @ result.rotation.T
            gaps.append(np.linalg.norm(result.centerlines[:, :, -1] - joints, axis=1).max())
            angles.append(np.abs(result.motor_angles - q_exact).max())
            poses.append(np.linalg.norm(forward.forward(result.motor_angles).position
                                        - position))
        out[f'{solver.tolerance_m:.3g}'] = {
            'tolerance_m': solver.tolerance_m, 'gap_m_max': float(np.max(gaps)),
            'gap_m_mean': float(np.mean(gaps)), 'motor_angle_error_rad_max': float(np.max(angles)),
            'platform_position_error_m_max': float(np.max(poses)),
            'platform_position_error_m_mean': float(np.mean(poses))}
    return out


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--peer-binary', default=None, metavar='PATH',
                        help="an already built binary of Till's Cpp_5 example")
    parser.add_argument('--tolerance-m', type=positive, default=1e-6,
                        help='our tolerance in the side-by-side run, m (default %(default)g)')
    parser.add_argument('--solves', type=positive_int, default=PEER_SOLVES,
                        help='our solves per run (default: as many as the peer)')
    parser.add_argument('--repeat', type=positive_int, default=3, help='alternated runs of each')
    parser.add_argument('--tolerances-m', default='1e-4,1e-5,1e-6,1e-7',
                        help='tolerances of the accuracy and cost table, m (and the default)')
    parser.add_argument('--accuracy-points', type=positive_int, default=1000)
    parser.add_argument('--cost-solves', type=positive_int, default=10000)
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    if args.peer_binary and not os.access(args.peer_binary, os.X_OK):
        parser.error(f'--peer-binary: {args.peer_binary} is not an executable file')
    robot = load_pcr_robot(default_pcr_file())
    path = till_path(args.solves)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    PcrSolver(robot).inverse(START)     # numba's cache loaded (compiled the first time)
    first_call = time.perf_counter() - start

    rounds = []
    for _ in tqdm(range(args.repeat), desc='side by side', file=sys.stderr, disable=None):
        row = {'ours_per_cpu_s': ours(robot, path, args.tolerance_m)[0],
               'ours_default_tolerance_per_cpu_s': ours(robot, path, None)[0]}
        if args.peer_binary:
            row['peer_per_cpu_s'], row['peer_process_cpu_s'] = peer(args.peer_binary)
            row['ratio'] = row['ours_per_cpu_s'] / row['peer_per_cpu_s']
            row['ratio_default_tolerance'] = (row['ours_default_tolerance_per_cpu_s']
                                              / row['peer_per_cpu_s'])
        row['load_average_1min'] = os.getloadavg()[0]
        rounds.append(row)

    tolerances = [float(t) for t in args.tolerances_m.split(',')]
    if args.tolerance_m not in tolerances:
        tolerances.append(args.tolerance_m)
    cost = {}
    for tolerance_m in tolerances + [None]:
        rate, iterations = ours(robot, path[:args.cost_solves], tolerance_m)
        cost['default' if tolerance_m is None else f'{tolerance_m:.3g}'] = {
            'per_cpu_s': rate, 'iterations_per_solve': iterations}
    compiler = shutil.which('g++') or shutil.which('c++') or shutil.which('clang++')
    result = {
        'benchmark': 'pcr_peer',
        'path': f'{args.solves} solves from {START} m, +-1 mm in y and z, {PERIOD} per period',
        'tolerance_m': args.tolerance_m,
        'first_call_s': first_call,
        'rounds': rounds,
        'ours_per_cpu_s_median': statistics.median(r['ours_per_cpu_s'] for r in rounds),
        'ours_default_tolerance_per_cpu_s_median':
            statistics.median(r['ours_default_tolerance_per_cpu_s'] for r in rounds),
        'peer': (f'ran {args.peer_binary}' if args.peer_binary else
                 'not run: no --peer-binary given; '
                 + (f'a C++ compiler is here ({compiler})' if compiler
                    else 'no C++ compiler on this machine')),
        'peer_stop': 'sum of squares of its residual (m, rad, N, N m) below 1e-6: any gap '
                     'of a rod end to its joint below 1e-3 m',
        'accuracy': accuracy(robot, till_path(args.accuracy_points), tolerances + [None]),
        'cost_per_cpu_s': cost,
        'target_ratio': TARGET_RATIO,
        'load_average_1min_before': load_before,
        'machine': machine_info('numpy', 'numba'),
    }
    line = (f"ours at {args.tolerance_m:g} m: {result['ours_per_cpu_s_median']:.0f} solves per "
            f"CPU s (default tolerance {result['ours_default_tolerance_per_cpu_s_median']:.0f})")
    if args.peer_binary:
        ratios = [r['ratio'] for r in rounds]
        result.update({
            'peer_per_cpu_s_median': statistics.median(r['peer_per_cpu_s'] for r in rounds),
            'ratio_median': statistics.median(ratios), 'ratio_min': min(ratios),
            'ratio_max': max(ratios),
            'ratio_default_tolerance_median':
                statistics.median(r['ratio_default_tolerance'] for r in rounds),
            'met': min(ratios) >= TARGET_RATIO})
        line += (f"; Till's C++ {result['peer_per_cpu_s_median']:.0f}: {min(ratios):.2f}x to "
                 f'{max(ratios):.2f}x (target {TARGET_RATIO}x)')
    else:
        line += f"; peer {result['peer']}"
    print(line + f"; load {load_before:.1f} -> {result['machine']['load_average_1min']:.1f}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
