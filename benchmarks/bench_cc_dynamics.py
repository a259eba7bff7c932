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
Speed and step-size accuracy of the CC Lagrange dynamics (models/trunk/dynamics.py).

Speed: real-time factor (simulated / wall time) of ``CCDynamics.simulate`` at the
default 5 ms step, for a step response from rest (an input step at t = 0, then
``--duration`` s), on
- the default tendon robot (``config/robot.yaml``: 1 section, 4 tendons, 14 masses),
- the same rod split into 3 tendon sections (anchors at 0.075, 0.15 and 0.25 m, 3 tendons
  each; built here from the default file),
- the Bionic Handling Assistant (``config/bionic_handling_assistant.yaml``: 3 bellows
  sections).
Models are timed in interleaved blocks so that load from other processes hits them alike;
the best block estimates the cost, the median shows the noise. numba runs in one thread.
With ``--compare-schemes`` every block also times the former default, SDIRK2, right after
the default scheme, and each model reports the ratio of their median times
(``sdirk2_speedup_median``: how many times faster SDIRK2 is).

Accuracy: the largest tip distance over 2 s between dt = 5 ms and a dt = 0.25 ms
reference, for the timed step (35 % of the input range) and for a smaller one (10 %).

Energy: the Bionic Handling Assistant without dampers, released from rest under a
pressure step (60, 40 and 80 kPa on one bellows per section), 10 s at the default step
with each integrator: the largest |E(t) - E(0)| over the largest kinetic energy. E is
1/2 x'^T M(x) x' plus the potential, the line integral of the static forces (gravity,
springs, pressures) from the start (8-point Gauss-Legendre); test_cc_dynamics.py checks
the same figure with energies built from the description alone.

The last line printed with --json is one JSON object.

    python benchmarks/bench_cc_dynamics.py --json
"""

import json
import statistics
import sys
import time

from machine import machine_info
import numpy as np
from options import Parser, positive, positive_int
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.description import read_yaml
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from tendon_robot_sim.models.trunk.dynamics import (CCDynamics, DEFAULT_SCHEME,
                                                    DEFAULT_TIME_STEP, load_cc_dynamics, SCHEMES)
from tendon_robot_sim.models.trunk.robot import bellows_robot_from_dict
from tqdm import tqdm

# Hadzic & Häseli's implementation: forward Euler, 0.52 s per 0.5 ms step, i.e. 16.6 min of
# computing per simulated second.
THESIS_REAL_TIME_FACTOR = 1.0 / (16.6 * 60.0)
TARGETS = {'tendon_1_section': 100.0, 'tendon_3_sections': 10.0, 'bha_3_sections': 10.0}


def three_section_tendon_robot():
    data = load_robot(default_robot_file()).to_dict()
    data['tendons'] = [
        {'name': f's{j}_t{i}', 'offset': 0.015, 'angle_deg': 120.0 * i + 40.0 * j, 'end': end,
         'max_tension': 20.0}
        for j, end in enumerate((0.075, 0.15, 0.25)) for i in range(3)]
    return CCDynamics.from_tendon_robot(robot_from_dict(data))


def energy_drift(scheme: str, duration: float = 10.0) -> float:
    """Largest energy error of the undamped BHA over ``duration`` s, per kinetic-energy swing."""
    data = read_yaml(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    for section in data['sections']:
        section['spline_damping'] = 0.0
        for bellows in section['bellows']:
            bellows['damping'] = 0.0
    model = CCDynamics.from_bellows_robot(bellows_robot_from_dict(data))
    pressures = np.zeros(len(model.input_names))
    pressures[[0, 4, 8]] = 6e4, 4e4, 8e4
    run = model.simulate(pressures, duration, record_every=4, scheme=scheme)
    nodes, weights = np.polynomial.legendre.leggauss(8)
    x0 = run.x[0]

    def potential(x):                    # -integral of the static forces from x0 to x
        return -sum(0.5 * w * model.static_force(x0 + 0.5 * (s + 1) * (x - x0), pressures)
                    @ (x - x0) for s, w in zip(nodes, weights))

    kinetic = np.array([0.5 * v @ model.lagrange_terms(x, v)[0] @ v
                        for x, v in zip(run.x, run.v)])
    energy = kinetic + np.array([potential(x) for x in run.x])
    return float(np.max(np.abs(energy - energy[0])) / kinetic.max())


def step_inputs(model, fraction: float = 0.35):
    """``fraction`` of each actuator's range on every third actuator, the others at minimum."""
    low, high = model.input_range.T
    return np.where(np.arange(len(model.input_names)) % 3 == 0,
                    low + fraction * (high - low), low)


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=positive, default=5.0,
                        help='simulated seconds per block (default 5)')
    parser.add_argument('--repeats', type=positive_int, default=7,
                        help='blocks per model (default 7)')
    parser.add_argument('--json', action='store_true', help='print one JSON line at the end')
    parser.add_argument('--compare-schemes', action='store_true',
                        help='also time sdirk2 in the same blocks and report its speed-up')
    args = parser.parse_args()
    schemes = tuple(SCHEMES) if args.compare_schemes else (DEFAULT_SCHEME,)
    models = {
        'tendon_1_section': load_cc_dynamics(default_robot_file()),
        'tendon_3_sections': three_section_tendon_robot(),
        'bha_3_sections': load_cc_dynamics(share_dir() / 'config'
                                           / 'bionic_handling_assistant.yaml'),
    }
    for model in models.values():        # compile (or load the cache) and warm up
        for scheme in schemes:
            model.simulate(step_inputs(model), 0.05, scheme=scheme)
    times = {(name, scheme): [] for name in models for scheme in schemes}
    order = list(models)
    for _ in tqdm(range(args.repeats), desc='timing', disable=not sys.stderr.isatty(),
                  file=sys.stderr):
        for name in order:
            model = models[name]
            for scheme in schemes:
                start = time.perf_counter()
                model.simulate(step_inputs(model), args.duration, scheme=scheme)
                times[name, scheme].append(time.perf_counter() - start)
        order.reverse()
    result = {'duration': args.duration, 'dt': DEFAULT_TIME_STEP, 'repeats': args.repeats,
              'thesis_real_time_factor': THESIS_REAL_TIME_FACTOR, 'models': {}}
    for name, model in models.items():
        errors = {}
        for fraction in (0.35, 0.1):
            inputs = step_inputs(model, fraction)
            coarse = model.simulate(inputs, 2.0)
            fine = model.simulate(inputs, 2.0, dt=DEFAULT_TIME_STEP / 20, record_every=20)
            gap = np.linalg.norm(coarse.tip_positions() - fine.tip_positions(), axis=1)
            errors[fraction] = 1e3 * float(gap.max())
        own = times[name, DEFAULT_SCHEME]
        best, median = min(own), statistics.median(own)
        result['models'][name] = {
            'sections': model.n_sections, 'inputs': len(model.input_names),
            'masses': int(np.count_nonzero(model.model[2])),
            'real_time_factor_best': args.duration / best,
            'real_time_factor_median': args.duration / median,
            'us_per_step_best': best / round(args.duration / DEFAULT_TIME_STEP) * 1e6,
            'target_real_time_factor': TARGETS[name],
            'tip_error_vs_dt_0.25ms_mm': errors[0.35],
            'tip_error_vs_dt_0.25ms_small_step_mm': errors[0.1],
            'speedup_over_thesis_median': args.duration / median / THESIS_REAL_TIME_FACTOR,
        }
        if args.compare_schemes:
            result['models'][name]['sdirk2_speedup_median'] = (
                median / statistics.median(times[name, 'sdirk2']))
    result['energy_drift_bha_10s'] = {scheme: energy_drift(scheme) for scheme in SCHEMES}
    result['machine'] = machine_info('numpy', 'numba', 'scipy')
    for name, row in result['models'].items():
        print(f'{name:18s} real time x {row["real_time_factor_best"]:6.1f} best, '
              f'{row["real_time_factor_median"]:6.1f} median (target '
              f'{row["target_real_time_factor"]:g}); {row["us_per_step_best"]:.0f} us/step; '
              f'tip error at 5 ms {row["tip_error_vs_dt_0.25ms_mm"]:.3g} mm '
              f'({row["tip_error_vs_dt_0.25ms_small_step_mm"]:.3g} mm for the small step)')
        if 'sdirk2_speedup_median' in row:
            print(f'{"":18s} sdirk2 {row["sdirk2_speedup_median"]:.2f} times as fast (medians)')
    print('energy error of the undamped BHA over 10 s at 5 ms, per kinetic-energy swing: '
          + ', '.join(f'{scheme} {100 * drift:.2f} %'
                      for scheme, drift in result['energy_drift_bha_10s'].items()))
    print(f'load average (1 min) {result["machine"]["load_average_1min"]:.2f}; '
          f'Hadzic & Häseli: {THESIS_REAL_TIME_FACTOR:.2g} x real time')
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
