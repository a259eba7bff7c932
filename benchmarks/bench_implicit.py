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
Speed and accuracy of the implicit dynamics (BDF-alpha and shooting, Till et al. 2019).

Cases (``ImplicitSimulator.follow``, the kernels compiled before any timing):

* ``till``: J. Till's tendon-robot dynamics example (ContinuumRobotExamples,
  02_Dynamics/03_Tendon_Robot): its 25 s motor ramp at dt = 50 ms, alpha = 0 (BDF2). Real-time
  factor and the tip's RMS distance from his Richardson-extrapolated trajectory
  (test/models/rod/data). With ``--peer-binary PATH``, a build of his example (not made by
  this script, which builds nothing) runs too, interleaved with ours, in a temporary folder with
  its output discarded: wall and CPU time of both and their ratio.
* ``nitinol``: config/nitinol_robot.yaml (10 discs, the discrete model), t0 ramped to 2 N over
  0.1 s and held, 2 s at dt = 2 ms; ``steel``: config/steel_rod_robot.yaml (no discs, the
  cosserat model), the same. Real-time factor (median block, and of the whole run), Newton
  iterations and rod integrations per step.
* ``nitinol_steps``: the nitinol robot under 6 and 8 N steps in t0 from rest (max_tension 10 N),
  2 s at dt = 2 ms, as above; the steps solved by homotopy; the tip over the first 0.1 s
  against a run at dt = 0.5 ms.
* cost against the spatial resolution (RK4 steps) and against dt, for Till's example and the
  nitinol robot; with the tip's distance from the finest run of each sweep.

CPU time (``time.process_time``, this process only) is given next to wall time: on a shared
machine the wall time includes waiting for a core. The last line with --json is one JSON
object; it carries the load average before and after.

    python benchmarks/bench_implicit.py --json [--peer-binary /path/to/TendonRobotPDE]
"""

import json
import os
from pathlib import Path
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from machine import machine_info
import numpy as np
from options import Parser, positive_int
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.tendon_robot import load_robot
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
CONFIG = share_dir() / 'config'
REFERENCE = ROOT / 'test' / 'models' / 'rod' / 'data' / 'till_tendon_robot_tip.csv'
# Targets of issue 27
TARGETS = {'till_real_time_factor': 10.0, 'till_speedup_over_peer': 2.0,
           'nitinol_real_time_factor_at_2ms': 5.0, 'steel_real_time_factor_at_2ms': 5.0}


def till_inputs(dt: float, duration: float = 24.95) -> np.ndarray:
    """Till's motor displacement [m] at the end of each step (his z(t), pulled in)."""
    ramp = np.loadtxt(CONFIG / 'till_tendon_robot_displacements.csv', delimiter=',',
                      skiprows=1)
    times = dt * np.arange(1, round(duration / dt) + 1)
    return np.interp(times, ramp[:, 0], ramp[:, 1])[:, None]


def run_till(dt: float = 0.05, steps: int | None = None, duration: float = 24.95,
             robot_file: Path = CONFIG / 'till_tendon_robot.yaml', alpha: float = 0.0):
    """(wall s, CPU s, tips (n + 1, 3), simulator) of Till's example (his motor ramp)."""
    sim = ImplicitSimulator(load_robot(robot_file), dt=dt, steps=steps, alpha=alpha)
    sim.set_displacements([0.0])
    sim.place_at_rest()
    start_tip = sim.state().tip_position
    inputs = till_inputs(dt, duration)
    wall, cpu = time.perf_counter(), time.process_time()
    record = sim.follow(inputs, 'displacement')
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, np.vstack((start_tip, record[:, 0:3])), sim


def run_peer(binary: str) -> tuple[float, float]:
    """(wall s, CPU s) of one run of Till's compiled example, in a folder of its own."""
    with tempfile.TemporaryDirectory() as folder:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        subprocess.run([os.path.abspath(binary)], cwd=folder, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def till(peer: str | None, repeats: int, show: bool) -> dict:
    reference = np.loadtxt(REFERENCE, delimiter=',', skiprows=1)
    run_till(duration=1.0)                                  # compile
    ours, theirs = [], []
    for _ in tqdm(range(repeats), desc='till', disable=not show, file=sys.stderr):
        wall, cpu, tips, sim = run_till()
        ours.append((wall, cpu))
        if peer:
            theirs.append(run_peer(peer))
    result = till_figures(ours, tips, sim, reference)
    walls, cpus = zip(*ours)
    if peer:
        peer_walls, peer_cpus = zip(*theirs)
        result.update({
            'peer_binary': peer, 'peer_wall_s_median': statistics.median(peer_walls),
            'peer_cpu_s_median': statistics.median(peer_cpus),
            # runs back to back share the machine's load: compare them pairwise
            'speedup_over_peer_wall': statistics.median(p / o for p, o in zip(peer_walls, walls)),
            'speedup_over_peer_cpu': statistics.median(p / o for p, o in zip(peer_cpus, cpus)),
        })
    return result


def till_figures(runs, tips: np.ndarray, sim: ImplicitSimulator, reference: np.ndarray) -> dict:
    """Speed of the (wall s, CPU s) ``runs`` of Till's 25 s example and the last run's error."""
    errors = np.linalg.norm(tips - reference[:, 1:4], axis=1)
    walls, cpus = zip(*runs)
    return {
        'dt': sim.dt, 'alpha': sim.alpha, 'sim_time': 25.0, 'steps_rk4': sim.steps,
        'shooting_intervals': sim.shooting_intervals,
        'wall_s_median': statistics.median(walls), 'cpu_s_median': statistics.median(cpus),
        'real_time_factor': 25.0 / statistics.median(walls),
        'real_time_factor_cpu': 25.0 / statistics.median(cpus),
        'rms_mm_vs_till_extrapolated': 1e3 * float(np.sqrt(np.mean(errors ** 2))),
        'max_mm_vs_till_extrapolated': 1e3 * float(errors.max()),
        'iterations_per_step': float(sim.stats[0] / 499),
        'integrations_per_step': float(sim.stats[1] / 499),
    }


def ramp(robot, dt: float, duration: float) -> np.ndarray:
    """Tensions per step: t0 ramped to 2 N over 0.1 s, then held."""
    tensions = np.zeros((round(duration / dt), len(robot.tendons)))
    tensions[:, 0] = np.minimum(2.0, 2.0 * dt * np.arange(1, tensions.shape[0] + 1) / 0.1)
    return tensions


def step(tension: float):
    """Return the inputs of a step to ``tension`` N in t0 at t = 0 (like :func:`ramp`)."""
    def inputs(robot, dt: float, duration: float) -> np.ndarray:
        tensions = np.zeros((round(duration / dt), len(robot.tendons)))
        tensions[:, 0] = tension
        return tensions
    return inputs


def robot_case(name: str, dt: float, duration: float, blocks: int, steps: int | None = None,
               show: bool = False, inputs=ramp, robot=None, model: str | None = None) -> dict:
    """
    Real-time factor of ``name`` under ``inputs`` (the ramp), in ``blocks`` timed blocks.

    ``robot``: a description to run instead of the shipped one of ``name``; ``model``: the
    statics model of the shooting (default: the robot's).
    """
    if robot is None:
        robot = load_robot(CONFIG / f'{name}_robot.yaml' if name != 'steel' else
                           CONFIG / 'steel_rod_robot.yaml')
    sim = ImplicitSimulator(robot, dt=dt, steps=steps, model=model)
    sim.follow(inputs(robot, dt, 3 * dt), 'tension')          # compile
    sim.reset()
    sim.stats[:] = 0.0
    tensions = inputs(robot, dt, duration)
    walls, cpus = [], []
    begin = time.perf_counter()
    for block in tqdm(np.array_split(tensions, blocks), desc=f'{name} dt {dt * 1e3:g} ms',
                      disable=not show, file=sys.stderr):
        wall, cpu = time.perf_counter(), time.process_time()
        record = sim.follow(block, 'tension')
        walls.append(block.shape[0] * dt / (time.perf_counter() - wall))
        cpus.append(block.shape[0] * dt / (time.process_time() - cpu))
    whole = duration / (time.perf_counter() - begin)
    n = tensions.shape[0]
    return {'robot': name, 'model': sim.model, 'dt': dt, 'steps_rk4': sim.steps,
            'shooting_intervals': sim.shooting_intervals, 'sim_time': duration,
            'real_time_factor': statistics.median(walls),
            'real_time_factor_whole_run': whole,
            'real_time_factor_best': max(walls),
            'real_time_factor_cpu': statistics.median(cpus),
            'ms_per_step_cpu': dt / statistics.median(cpus) * 1e3,
            'iterations_per_step': float(sim.stats[0] / n),
            'integrations_per_step': float(sim.stats[1] / n),
            'continuation_steps': int(sim.stats[2]), 'semi_implicit_steps': int(sim.stats[3]),
            'tip': record[-1, 0:3].tolist(),
            'tip_tensions': None if not sim.friction else sim.tip_tensions().tolist()}


def large_steps(blocks: int, show: bool) -> list[dict]:
    """
    6 and 8 N steps on the nitinol robot at dt = 2 ms: speed, and the tip against dt = 0.5 ms.

    The first steps after the jump are solved by homotopy (``continuation_steps``). Over the
    first 0.1 s, the whip, the largest tip distance from a run at 0.5 ms and how far the tip
    travels.
    """
    rows = []
    for tension in (6.0, 8.0):
        case = robot_case('nitinol', 0.002, 2.0, blocks, show=show, inputs=step(tension))
        robot = load_robot(CONFIG / 'nitinol_robot.yaml')
        tips = []
        for dt in (0.002, 0.0005):
            sim = ImplicitSimulator(robot, dt=dt)
            record = sim.follow(step(tension)(robot, dt, 0.1), 'tension')
            tips.append(record[round(0.002 / dt) - 1::round(0.002 / dt), 0:3])
        rest = sim.statics.solve_tensions([0.0] * len(robot.tendons)).tip_position
        case.update(tension=tension, whip_travel_mm=1e3 * float(
            np.linalg.norm(tips[1] - rest, axis=1).max()), whip_mm_from_dt_0_5_ms=1e3 * float(
            np.linalg.norm(tips[0] - tips[1], axis=1).max()))
        rows.append(case)
    return rows


def sweep(name: str, values, key: str, show: bool) -> list[dict]:
    """Cost and tip against RK4 steps (``key`` 'steps') or dt ('dt')."""
    rows = []
    for value in tqdm(values, desc=f'{name} vs {key}', disable=not show, file=sys.stderr):
        if name == 'till':
            dt = value if key == 'dt' else 0.05
            wall, cpu, tips, sim = run_till(dt=dt, steps=value if key == 'steps' else None,
                                            duration=10.0)
            rows.append({key: value, 'cpu_s_per_sim_s': cpu / 10.0, 'tip': tips[-1].tolist(),
                         'integrations_per_step': float(sim.stats[1] / (tips.shape[0] - 1))})
        else:
            dt = value if key == 'dt' else 0.002
            case = robot_case(name, dt, 0.5, 1, steps=value if key == 'steps' else None)
            rows.append({key: value, 'cpu_s_per_sim_s': 1.0 / case['real_time_factor_cpu'],
                         'tip': case['tip'],
                         'integrations_per_step': case['integrations_per_step']})
    finest = np.array(rows[-1 if key == 'steps' else 0]['tip'])
    for row in rows:
        row['tip_mm_from_finest'] = 1e3 * float(np.linalg.norm(np.array(row['tip']) - finest))
    return rows


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--peer-binary', default=None, metavar='PATH',
                        help="an already built binary of Till's example to time beside ours")
    parser.add_argument('--repeats', type=positive_int, default=5,
                        help="runs of Till's example each")
    parser.add_argument('--blocks', type=positive_int, default=10,
                        help='timed blocks per robot case')
    parser.add_argument('--no-sweeps', action='store_true', help='skip the cost sweeps')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    if args.peer_binary and not os.access(args.peer_binary, os.X_OK):
        parser.error(f'--peer-binary: {args.peer_binary} is not an executable file')
    show = sys.stderr.isatty()
    load_before = machine_info()['load_average_1min']
    result = {'till': till(args.peer_binary, args.repeats, show),
              'robots': [robot_case(name, 0.002, 2.0, args.blocks, show=show)
                         for name in ('nitinol', 'steel')],
              'nitinol_steps': large_steps(args.blocks, show),
              'targets': TARGETS}
    if not args.no_sweeps:
        result['sweeps'] = {
            'till_steps': sweep('till', [6, 12, 24, 48], 'steps', show),
            'till_dt': sweep('till', [0.01, 0.02, 0.05, 0.1], 'dt', show),
            'nitinol_steps': sweep('nitinol', [10, 20, 40, 80], 'steps', show),
            'nitinol_dt': sweep('nitinol', [0.001, 0.002, 0.005, 0.01], 'dt', show),
        }
    result['machine'] = machine_info('numpy', 'numba')
    result['load_average_1min_before'] = load_before
    t = result['till']
    line = (f"Till's example (25 s, dt 50 ms, BDF2): {t['real_time_factor']:.1f}x real time "
            f"({t['real_time_factor_cpu']:.1f}x in CPU time), RMS "
            f"{t['rms_mm_vs_till_extrapolated']:.3f} mm from his extrapolated trajectory")
    if args.peer_binary:
        line += (f"; his C++ {t['peer_wall_s_median']:.2f} s wall, {t['peer_cpu_s_median']:.2f} s"
                 f" CPU: ours is {t['speedup_over_peer_wall']:.1f}x faster (wall), "
                 f"{t['speedup_over_peer_cpu']:.1f}x (CPU)")
    print(line)
    for case in result['robots']:
        print(f"{case['robot']} ({case['model']}, {case['steps_rk4']} RK4 steps, "
              f"{case['shooting_intervals']} intervals) at dt {case['dt'] * 1e3:g} ms: "
              f"{case['real_time_factor']:.1f}x real time (best block "
              f"{case['real_time_factor_best']:.1f}x, CPU {case['real_time_factor_cpu']:.1f}x), "
              f"{case['integrations_per_step']:.1f} rod integrations per step")
    for case in result['nitinol_steps']:
        print(f"nitinol, {case['tension']:g} N step at dt 2 ms: {case['real_time_factor']:.1f}x "
              f"real time (median block; whole 2 s run {case['real_time_factor_whole_run']:.1f}x"
              f", CPU {case['real_time_factor_cpu']:.1f}x), {case['continuation_steps']} steps "
              f"by homotopy; first 0.1 s: tip within {case['whip_mm_from_dt_0_5_ms']:.1f} mm of "
              f"dt 0.5 ms, of {case['whip_travel_mm']:.0f} mm travelled")
    for name, rows in result.get('sweeps', {}).items():
        key = 'steps' if name.endswith('steps') else 'dt'
        print(f'{name}: ' + '; '.join(
            f"{row[key]:g}: {row['cpu_s_per_sim_s']:.3f} CPU s/s, "
            f"{row['tip_mm_from_finest']:.3f} mm" for row in rows))
    print(f'load average (1 min) {load_before:.2f} before, '
          f"{result['machine']['load_average_1min']:.2f} after")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
