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
Real-time factor and discretisation error of the dynamic simulator, per resolution.

Speed: for each element count, ``TendonSimulator.advance`` with both steppers
(``compiled``: one numba call per advance; ``pyelastica``: ``PositionVerlet.step`` per
step), the default robot with 4 tendons pulled, at its default time step. Each block
advances the same simulated time (state() included); the variants are timed in
interleaved blocks so that load from other processes hits them alike, and the median
block gives the real-time factor (simulated / wall time; the best block is printed too).

Accuracy: the steady tip under gravity with two tendons pulled, per element count,
against a fine reference (100 elements), run with the compiled stepper and heavy
damping (where a rod comes to rest does not depend on its damping).

The last line printed with --json is one JSON object.

    python benchmarks/bench_dynamics.py --json
"""

import argparse
import json
import statistics
import sys
import time

from machine import machine_info
import numpy as np
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics import STEPPERS, TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot
from tqdm import tqdm

# Targets of issue 11 (one core of the project's machine).
TARGETS = {'compiled_rtf_at_50': 2.0, 'compiled_rtf_at_10': 8.0, 'speedup_at_10': 3.0}


def speed(robot, elements: int, tensions, block: float, repeats: int, show: bool) -> dict:
    """Real-time factors of both steppers at ``elements``, ``repeats`` blocks of ``block`` s."""
    sims = {}
    for stepper in STEPPERS:
        sim = TendonSimulator(robot.with_changes(elements=elements), stepper=stepper)
        sim.set_tensions(tensions)
        sim.advance(0.01)                    # compile and start moving
        sims[stepper] = sim
    factors = {stepper: [] for stepper in STEPPERS}
    order = list(STEPPERS)
    for _ in tqdm(range(repeats), desc=f'{elements} elements', disable=not show,
                  file=sys.stderr):
        for stepper in order:
            start = time.perf_counter()
            sims[stepper].advance(block)
            factors[stepper].append(block / (time.perf_counter() - start))
        order.reverse()                      # neither always runs right after the other
    dt = sims['compiled'].dt
    result = {'elements': elements, 'dt': dt, 'stable_dt': sims['compiled'].stable_dt}
    for stepper, values in factors.items():
        result[f'{stepper}_real_time_factor'] = statistics.median(values)
        result[f'{stepper}_real_time_factor_best'] = max(values)
        result[f'{stepper}_us_per_step'] = dt / statistics.median(values) * 1e6
    # blocks timed back to back share the machine's load: compare them pairwise
    result['speedup'] = statistics.median(
        c / p for c, p in zip(factors['compiled'], factors['pyelastica']))
    return result


def accuracy(robot, tensions, elements: list[int], reference: int, max_time: float,
             show: bool) -> dict:
    tips = {}
    damped = robot.with_changes(damping={'ratio': 0.5})
    for n in tqdm(sorted(set(elements) | {reference}), desc='accuracy', disable=not show,
                  file=sys.stderr):
        sim = TendonSimulator(damped.with_changes(elements=n))
        sim.set_tensions(tensions)
        state = sim.run_until_steady(max_time, speed_tolerance=1e-5)
        tips[n] = (state.tip_position, sim.is_steady(1e-5))
    ref = tips[reference][0]
    return {
        'tensions': list(map(float, tensions)),
        'reference_elements': reference,
        'reference_tip': ref.tolist(),
        'cases': {
            n: {
                'tip': tip.tolist(),
                'error_mm': 1e3 * float(np.linalg.norm(tip - ref)),
                'error_percent_of_length':
                    100 * float(np.linalg.norm(tip - ref)) / robot.rod.length,
                'steady': steady,
            }
            for n, (tip, steady) in tips.items() if n != reference
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', default=str(default_robot_file()), help='robot YAML file')
    parser.add_argument('--elements', default='10,20,50', help='element counts to compare')
    parser.add_argument('--tensions', default='1,2,1,0.5',
                        help='tensions for the timing, N, one per tendon (default 1,2,1,0.5)')
    parser.add_argument('--block', type=float, default=0.05,
                        help='simulated seconds per timed block (default 0.05)')
    parser.add_argument('--repeats', type=int, default=15, help='timed blocks per stepper')
    parser.add_argument('--accuracy-tensions', default='2,1,0,0',
                        help='tensions for the accuracy case, N (default 2,1,0,0)')
    parser.add_argument('--reference-elements', type=int, default=100)
    parser.add_argument('--max-time', type=float, default=10.0,
                        help='simulated seconds allowed to reach steady state')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)

    robot = load_robot(args.robot)
    elements = [int(n) for n in args.elements.split(',')]
    show = sys.stderr.isatty()
    tensions = [float(t) for t in args.tensions.split(',')]
    load_before = machine_info()['load_average_1min']
    runs = [speed(robot, n, tensions, args.block, args.repeats, show) for n in elements]
    errors = accuracy(robot, [float(t) for t in args.accuracy_tensions.split(',')], elements,
                      args.reference_elements, args.max_time, show)
    result = {'speed': runs, 'accuracy': errors, 'targets': TARGETS,
              'machine': machine_info('numpy', 'numba', 'pyelastica'),
              'load_average_1min_before': load_before}
    print(f'robot {robot.name}; real-time factor = simulated / wall time, median block '
          f'(best); tip error of the steady tip vs {args.reference_elements} elements')
    for run in runs:
        case = errors['cases'][run['elements']]
        print(f"{run['elements']:3d} elements, dt {run['dt'] * 1e6:.0f} us: compiled "
              f"{run['compiled_real_time_factor']:.2f} "
              f"({run['compiled_real_time_factor_best']:.2f}), pyelastica "
              f"{run['pyelastica_real_time_factor']:.2f} "
              f"({run['pyelastica_real_time_factor_best']:.2f}), speed-up {run['speedup']:.1f}; "
              f"tip error {case['error_mm']:.2f} mm = {case['error_percent_of_length']:.3f} % "
              f"of L{'' if case['steady'] else ' (NOT steady)'}")
    print(f'load average (1 min) {load_before:.2f} before, '
          f"{result['machine']['load_average_1min']:.2f} after")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
