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
Error in time against CPU time of the implicit dynamics: fixed dt and adaptive (--tip-tolerance).

Cases (``ImplicitSimulator.follow``, BDF2, the kernels compiled before any timing):

* ``till``: J. Till's tendon-robot example (config/till_tendon_robot.yaml), its 25 s motor
  displacement ramp (config/till_tendon_robot_displacements.csv); rows at his dt = 50 ms;
* ``nitinol``: config/nitinol_robot.yaml, t0 stepped to 4 N at t = 0 and back to 0 at 0.5 s,
  1 s; rows at 2 ms (the default dt).

Each case runs at fixed dt (the rows' dt and halvings of it) and adaptive with tolerances on
the tip's local error estimate (rows at the largest dt, steps down to dt / 16). The error is
the tip's distance from the dt -> 0 solution at the rows' times: Richardson extrapolation of
the two finest fixed runs (second order: y_f + (y_f - y_2f) / 3), which are not timed against.
CPU time (``time.process_time``) of the stepping only. The last line with --json is one JSON
object, with the machine and the load average before and after.

    python benchmarks/bench_error_control.py --json
"""

import json
import os
import time

from machine import machine_info
import numpy as np
from options import names, Parser
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.tendon_robot import load_robot

CONFIG = share_dir() / 'config'


def till_case():
    """(robot, row dt, rows' times, inputs at the times, field) of Till's example."""
    ramp = np.loadtxt(CONFIG / 'till_tendon_robot_displacements.csv', delimiter=',',
                      skiprows=1)
    return load_robot(CONFIG / 'till_tendon_robot.yaml'), 0.05, 25.0, (
        lambda t: np.interp(t, ramp[:, 0], ramp[:, 1])[:, None]), 'displacement'


def nitinol_case():
    """Return the nitinol robot case: 4 N on t0 from t = 0 to 0.5 s (steps both ways), 1 s."""
    def tensions(t):
        values = np.zeros((t.size, 3))
        values[:, 0] = np.where(t < 0.5 - 1e-9, 4.0, 0.0)
        return values
    return load_robot(CONFIG / 'nitinol_robot.yaml'), 0.002, 1.0, tensions, 'tension'


def run(robot, dt, duration, inputs, field, rows_dt, **control):
    """Return the tip positions at multiples of rows_dt [m] and the stepping's CPU seconds."""
    sim = ImplicitSimulator(robot, dt=dt, **control)
    times = dt * np.arange(1, round(duration / dt) + 1)
    values = inputs(times)
    # the state at t = 0 is the equilibrium of the inputs there
    if field == 'displacement':
        sim.set_displacements(inputs(np.zeros(1))[0])
    else:
        sim.set_tensions(inputs(np.zeros(1))[0])
    sim.place_at_rest()
    start = time.process_time()
    record = sim.follow(values, field)
    cpu = time.process_time() - start
    keep = round(rows_dt / dt)
    return record[keep - 1::keep, 0:3], cpu, sim


def errors(tips, reference):
    distance = np.linalg.norm(tips - reference, axis=1)
    return float(np.sqrt(np.mean(distance ** 2))), float(distance.max())


def sweep(case, halvings: int, tolerances) -> dict:
    robot, dt, duration, inputs, field = case()
    finest = [run(robot, dt / 2 ** k, duration, inputs, field, dt)[0]
              for k in (halvings - 1, halvings)]
    reference = finest[1] + (finest[1] - finest[0]) / 3.0
    out = {'row_dt': dt, 'reference': f'Richardson of dt / {2 ** (halvings - 1)} and '
                                      f'dt / {2 ** halvings}',
           'reference_step': float(np.sqrt(np.mean(np.sum((finest[1] - finest[0]) ** 2,
                                                          axis=1)))),
           'fixed': [], 'adaptive': []}
    for k in range(0, halvings - 1):
        tips, cpu, sim = run(robot, dt / 2 ** k, duration, inputs, field, dt)
        rms, worst = errors(tips, reference)
        out['fixed'].append({'dt': dt / 2 ** k, 'cpu_s': cpu, 'rms_m': rms, 'max_m': worst,
                             'steps': sim.steps_taken})
    for tolerance in tolerances:
        tips, cpu, sim = run(robot, dt, duration, inputs, field, dt, tip_tolerance=tolerance)
        rms, worst = errors(tips, reference)
        out['adaptive'].append({'tip_tolerance': tolerance, 'cpu_s': cpu, 'rms_m': rms,
                                'max_m': worst, 'steps': sim.steps_taken,
                                'smallest_dt': sim.smallest_dt,
                                'largest_estimate_m': sim.max_estimate})
    return out


def main() -> None:
    parser = Parser(description=__doc__.split('\n')[1])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--cases', type=names(('till', 'nitinol')), default=['till', 'nitinol'],
                        help='comma-separated cases')
    args = parser.parse_args()
    load_before = os.getloadavg()
    # compile the kernels before any timing
    run(*nitinol_case()[:1], 0.002, 0.01, nitinol_case()[3], 'tension', 0.002)
    run(*nitinol_case()[:1], 0.002, 0.01, nitinol_case()[3], 'tension', 0.002,
        tip_tolerance=1e-3)
    cases = {'till': (till_case, 6, (1e-2, 3e-3, 1e-3, 3e-4, 1e-4)),
             'nitinol': (nitinol_case, 5, (1e-3, 3e-4, 1e-4, 3e-5))}
    result = {'machine': machine_info('numba', 'numpy'), 'load_before': load_before}
    for name in args.cases:
        case, halvings, tolerances = cases[name]
        result[name] = sweep(case, halvings, tolerances)
        print(name, json.dumps(result[name], indent=1), flush=True)
    result['load_after'] = os.getloadavg()
    if args.json:
        print(json.dumps(result))


if __name__ == '__main__':
    main()
