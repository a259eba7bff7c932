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
Speed of the implicit dynamics with tendon friction (issue 41, item 6).

Cases:

* ``till_simple``, ``till_sliding``: J. Till's two friction examples (ContinuumRobotExamples,
  02_Dynamics/03_Tendon_Robot, Cpp_simple_friction and Cpp_sliding_friction;
  config/till_friction_*.yaml), his 25 s motor ramp at his dt = 50 ms and alpha (0, -0.4),
  in process (``ImplicitSimulator.follow``, compiled before timing): wall and CPU time,
  real-time factor, the tip's RMS from his extrapolated trajectory; and through the command
  (``tendon-robot-sim simulate`` in a fresh process): the run's own real-time factor and the
  whole command's wall time, start-up included. With ``--peer-binary PATH``, a build of his
  sliding example (not made by this script, which builds nothing) runs too, after ours, in a
  temporary folder with its output discarded.
* ``nitinol``: config/nitinol_robot.yaml with sliding friction (nu = 0.1) on every tendon at
  slip velocities of 1, 5 and 10 mm/s, run as model ``cosserat`` (tendons routed continuously,
  the discs as masses), t0 ramped to 2 N over 0.1 s and held, 2 s at dt = 2 ms; the same
  without friction beside it. A run whose step does not converge reports where it stopped;
  ``semi_implicit_steps`` counts the steps that took the sliding direction from the step
  before (``_implicit_kernels._step``).
* ``discs``: the same robot and runs as model ``discrete`` (its 10 discs: the capstan jump
  at each hole, rod/tendons/_friction_kernels.py), the robot's own model.

CPU time (``time.process_time``) is given next to wall time: on a shared machine the wall time
includes waiting for a core. The last line with --json is one JSON object, with the load
average before and after.

    python benchmarks/bench_friction_dynamics.py --json [--peer-binary /path/to/his/sliding]
"""

import dataclasses
import json
import os
from pathlib import Path
import re
import statistics
import subprocess
import sys
import time

import bench_implicit
from bench_implicit import robot_case, run_peer, till_figures
from machine import machine_info
import numpy as np
from options import names, Parser, positive_int
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.dynamics.implicit import StepFailed
from tendon_robot_sim.models.tendon_robot import load_robot, TendonFriction
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
CONFIG = share_dir() / 'config'
DATA = ROOT / 'test' / 'models' / 'rod' / 'data'
ALPHA = {'simple': 0.0, 'sliding': -0.4}
# Targets of issue 41, item 6
TARGETS = {'till_sliding_real_time_factor_in_simulate': 10.0,
           'nitinol_sliding_real_time_factor_at_2ms': 3.0}


def run_till(law: str, duration: float = 24.95):
    """(wall s, CPU s, tips (n + 1, 3), simulator) of Till's ``law`` example."""
    return bench_implicit.run_till(duration=duration, alpha=ALPHA[law],
                                   robot_file=CONFIG / f'till_friction_{law}.yaml')


def run_command(law: str) -> dict:
    """Till's ``law`` example through ``simulate`` in a fresh process."""
    argv = [sys.executable, '-m', 'tendon_robot_sim.cli', 'simulate', '--robot',
            str(CONFIG / f'till_friction_{law}.yaml'), '--dt', '0.05', '--alpha',
            str(ALPHA[law]), '--displacements-csv',
            str(CONFIG / 'till_tendon_robot_displacements.csv')]
    wall = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - wall
    found = re.search(r'simulated ([\d.]+) s in ([\d.]+) s wall time \(real-time factor '
                      r'([\d.]+)\)', out)
    return {'command_run_wall_s': float(found.group(2)),
            'command_real_time_factor': float(found.group(3)),
            'command_wall_s_with_start_up': wall}


def till(law: str, repeats: int, peer: str | None, show: bool) -> dict:
    reference = np.loadtxt(DATA / f'till_friction_{law}_tip.csv', delimiter=',', skiprows=1)
    run_till(law, duration=1.0)                          # compile (or load the cache)
    runs, commands = [], []
    for _ in tqdm(range(repeats), desc=f'till {law}', disable=not show, file=sys.stderr):
        wall, cpu, tips, sim = run_till(law)
        runs.append((wall, cpu))
        commands.append(run_command(law))
    result = {'law': law, **till_figures(runs, tips, sim, reference)}
    cpus = [cpu for _, cpu in runs]
    for key in commands[0]:
        result[key + '_median'] = statistics.median(c[key] for c in commands)
    if peer:
        peer_wall, peer_cpu = run_peer(peer)
        result.update({'peer_binary': peer, 'peer_wall_s': peer_wall, 'peer_cpu_s': peer_cpu,
                       'peer_real_time_factor': 25.0 / peer_wall,
                       'speedup_over_peer_cpu': peer_cpu / statistics.median(cpus)})
    return result


def nitinol(slip_velocity: float | None, blocks: int, show: bool,
            model: str = 'cosserat') -> dict:
    """
    Real-time factor of the nitinol robot at dt = 2 ms, model ``model``.

    With sliding friction (nu = 0.1) at ``slip_velocity`` [m/s], or without (None).
    """
    robot = load_robot(CONFIG / 'nitinol_robot.yaml')
    if slip_velocity is not None:
        robot = dataclasses.replace(robot, tendons=tuple(
            dataclasses.replace(t, friction=TendonFriction('sliding', 0.1, slip_velocity))
            for t in robot.tendons))
    try:
        case = robot_case(f'nitinol {model} eps {slip_velocity}', 0.002, 2.0, blocks,
                          show=show, robot=robot, model=model)
    except StepFailed as failure:
        return {'slip_velocity': slip_velocity, 'model': model, 'failed': str(failure)}
    return {'slip_velocity': slip_velocity, **case}


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--peer-binary', default=None, metavar='PATH',
                        help="an already built binary of Till's sliding example to time once")
    parser.add_argument('--repeats', type=positive_int, default=3,
                        help="runs of each of Till's examples")
    parser.add_argument('--blocks', type=positive_int, default=10,
                        help='timed blocks of the nitinol run')
    parser.add_argument('--cases', type=names(('till', 'nitinol', 'discs')),
                        default=['till', 'nitinol', 'discs'],
                        help='comma-separated cases to run (till, nitinol, discs)')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    if args.peer_binary and not os.access(args.peer_binary, os.X_OK):
        parser.error(f'--peer-binary: {args.peer_binary} is not an executable file')
    show = sys.stderr.isatty()
    load_before = machine_info()['load_average_1min']
    cases = set(args.cases)
    slips = (1e-3, 5e-3, 1e-2, None)
    result = {'till': [till('simple', args.repeats, None, show),
                       till('sliding', args.repeats, args.peer_binary, show)]
              if 'till' in cases else [],
              'nitinol': [nitinol(eps, args.blocks, show) for eps in slips]
              if 'nitinol' in cases else [],
              'nitinol_discs': [nitinol(eps, args.blocks, show, 'discrete') for eps in slips]
              if 'discs' in cases else [],
              'targets': TARGETS}
    result['machine'] = machine_info('numpy', 'numba')
    result['load_average_1min_before'] = load_before
    for t in result['till']:
        line = (f"Till's {t['law']} friction example (25 s, dt 50 ms, alpha {t['alpha']:g}): "
                f"{t['real_time_factor']:.1f}x real time in process (CPU "
                f"{t['real_time_factor_cpu']:.1f}x), in simulate "
                f"{t['command_real_time_factor_median']:.1f}x (the command with its start-up "
                f"{t['command_wall_s_with_start_up_median']:.2f} s); RMS "
                f"{t['rms_mm_vs_till_extrapolated']:.3f} mm from his extrapolated trajectory")
        if 'peer_binary' in t:
            line += (f"; his C++ {t['peer_wall_s']:.1f} s wall ({t['peer_real_time_factor']:.3f}x"
                     f" real time), ours {t['speedup_over_peer_cpu']:.0f}x faster in CPU time")
        print(line)
    for case in result['nitinol'] + result['nitinol_discs']:
        if 'failed' in case:
            print(f"nitinol ({case['model']}), slip velocity {case['slip_velocity']} m/s: "
                  f"{case['failed']}")
            continue
        print(f"nitinol ({case['model']}, slip velocity {case['slip_velocity']}) at dt 2 ms: "
              f"{case['real_time_factor']:.1f}x real time (median block; whole run "
              f"{case['real_time_factor_whole_run']:.1f}x, "
              f"CPU {case['real_time_factor_cpu']:.1f}x)"
              f", {case['integrations_per_step']:.1f} rod integrations per step, "
              f"{case['semi_implicit_steps']} of {round(case['sim_time'] / case['dt'])} steps "
              'semi-implicit')
    print(f'load average (1 min) {load_before:.2f} before, '
          f"{result['machine']['load_average_1min']:.2f} after")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
