#!/usr/bin/env python3
"""Speed (and, with --accuracy, discretisation error) of the dynamic simulator.

Speed: microseconds per PyElastica time step of the robot's rod, bare (clamp,
gravity, damping) and with the one TendonForces object loading all tendons, and
the real-time factor of ``TendonSimulator.advance`` (simulated / wall time,
divergence checks and the final state() included); for reference, the bare rod
with PyElastica's own AnalyticalLinearDamper instead of CompiledLinearDamper.
The variants are timed in interleaved blocks so that load from other processes
hits them alike: the minimum over blocks estimates each cost, the median shows
the noise, and ``overhead_ratio`` is the median of (tendons / bare) over pairs of
blocks timed back to back.

Accuracy: steady-state tip under gravity with two tendons pulled, at the
robot's element count (and any others asked for) against a fine reference.

The last line printed with --json is one JSON object.

    python benchmarks/bench_dynamics.py --json
    python benchmarks/bench_dynamics.py --accuracy --json
"""

import argparse
import json
import statistics
import sys
import time

import elastica
import numpy as np
from tqdm import tqdm

from machine import machine_info
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.core.robot import load_robot
from tendon_robot_sim.core.simulator import build_rod_system, TendonSimulator


def block_time(run, steps: int) -> float:
    """Microseconds per step of ``run(steps)``."""
    start = time.perf_counter()
    run(steps)
    return (time.perf_counter() - start) / steps * 1e6


def stepping(system, dt):
    stepper = elastica.PositionVerlet()
    clock = [0.0]

    def run(steps):
        t = clock[0]
        for _ in range(steps):
            t = stepper.step(system, t, dt)
        clock[0] = t
    return run


def speed(robot, tensions, steps: int, repeats: int, show: bool) -> dict:
    sim = TendonSimulator(robot)
    sim.set_tensions(tensions)
    bare, _ = build_rod_system(robot, sim.dt, None)
    stock, _ = build_rod_system(robot, sim.dt, None, elastica.AnalyticalLinearDamper)
    loaded, _ = build_rod_system(robot, sim.dt, np.array(tensions, dtype=float))
    runs = {
        'bare': stepping(bare, sim.dt),
        'bare_stock_damper': stepping(stock, sim.dt),
        'tendons': stepping(loaded, sim.dt),
        'advance': lambda n: sim.advance(n * sim.dt),
    }
    for run in runs.values():         # compile and settle
        run(200)
    times = {name: [] for name in runs}
    order = list(runs)
    for _ in tqdm(range(repeats), desc='timing', disable=not show, file=sys.stderr):
        for name in order:
            times[name].append(block_time(runs[name], steps))
        order.reverse()           # no variant always runs right after another
    best = {name: min(values) for name, values in times.items()}
    median = {name: statistics.median(values) for name, values in times.items()}
    # blocks timed back to back share the machine's load: compare them pairwise
    ratios = [t / b for t, b in zip(times['tendons'], times['bare'])]
    return {
        'us_per_step_bare': best['bare'],
        'us_per_step_tendons': best['tendons'],
        'us_per_step_advance': best['advance'],
        'us_per_step_bare_stock_damper': best['bare_stock_damper'],
        'overhead_ratio': statistics.median(ratios),
        'overhead_ratio_of_minima': best['tendons'] / best['bare'],
        'real_time_factor': sim.dt / (best['advance'] * 1e-6),
        'median_us_per_step': median,
        'median_real_time_factor': sim.dt / (median['advance'] * 1e-6),
        'dt': sim.dt,
        'stable_dt': sim.stable_dt,
        'elements': robot.rod.elements,
        'tendons': len(robot.tendons),
        'steps_per_block': steps,
        'blocks': repeats,
    }


def accuracy(robot, tensions, elements: list[int], reference: int, max_time: float,
             show: bool) -> dict:
    tips = {}
    cases = sorted(set(elements) | {reference})
    for n in tqdm(cases, desc='accuracy', disable=not show, file=sys.stderr):
        sim = TendonSimulator(robot.with_changes(elements=n))
        sim.set_tensions(tensions)
        state = sim.run_until_steady(max_time, speed_tolerance=1e-4)
        tips[n] = (state.tip_position, sim.is_steady(1e-4), state.time)
    ref = tips[reference][0]
    length = robot.rod.length
    return {
        'tensions': list(map(float, tensions)),
        'reference_elements': reference,
        'reference_tip': ref.tolist(),
        'cases': [
            {
                'elements': n,
                'tip': tip.tolist(),
                'error_mm': 1e3 * float(np.linalg.norm(tip - ref)),
                'error_percent_of_length': 100 * float(np.linalg.norm(tip - ref)) / length,
                'steady': steady,
                'sim_time': t,
            }
            for n, (tip, steady, t) in tips.items() if n != reference
        ],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', default=str(default_robot_file()), help='robot YAML file')
    parser.add_argument('--tensions', default='1,2,1,0.5',
                        help='tensions for the timing, N, one per tendon (default 1,2,1,0.5)')
    parser.add_argument('--steps', type=int, default=4000, help='steps per timed block')
    parser.add_argument('--repeats', type=int, default=25, help='timed blocks per variant')
    parser.add_argument('--accuracy', action='store_true',
                        help='also compare the steady tip with a fine reference')
    parser.add_argument('--accuracy-tensions', default='2,1,0,0',
                        help='tensions for the accuracy case, N (default 2,1,0,0)')
    parser.add_argument('--elements', default='',
                        help='extra element counts for --accuracy, e.g. 20,50')
    parser.add_argument('--reference-elements', type=int, default=100)
    parser.add_argument('--max-time', type=float, default=10.0,
                        help='simulated seconds allowed to reach steady state')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)

    robot = load_robot(args.robot)
    show = sys.stderr.isatty()
    result = speed(robot, [float(t) for t in args.tensions.split(',')], args.steps,
                   args.repeats, show)
    result['machine'] = machine_info('numpy', 'numba', 'pyelastica')
    print(f"robot {robot.name}: {result['elements']} elements, dt = {result['dt']:.3g} s "
          f"(stability bound {result['stable_dt']:.3g} s)")
    print(f"us per step: bare {result['us_per_step_bare']:.1f}, with {result['tendons']} "
          f"tendons {result['us_per_step_tendons']:.1f} (x{result['overhead_ratio']:.3f}), "
          f"advance() {result['us_per_step_advance']:.1f}; bare with PyElastica's damper "
          f"{result['us_per_step_bare_stock_damper']:.1f}")
    print(f"real-time factor {result['real_time_factor']:.2f} (median "
          f"{result['median_real_time_factor']:.2f}); load average "
          f"{result['machine']['load_average_1min']:.2f}")
    if args.accuracy:
        extra = [int(n) for n in args.elements.split(',') if n]
        result['accuracy'] = accuracy(
            robot, [float(t) for t in args.accuracy_tensions.split(',')],
            [robot.rod.elements] + extra, args.reference_elements, args.max_time, show)
        for case in result['accuracy']['cases']:
            print(f"{case['elements']} elements: tip {np.round(case['tip'], 5).tolist()} m, "
                  f"{case['error_mm']:.2f} mm = {case['error_percent_of_length']:.2f} % of "
                  f"length from {args.reference_elements} elements"
                  f"{'' if case['steady'] else ' (NOT steady)'}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
