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
Speed of the path-dependent (stick-slip) statics: states per second of a quasi-static sequence.

The default robot with sliding friction nu = 0.2 on every tendon (``config/robot_friction.yaml``)
in the ``discrete`` and ``cosserat`` models (``--models``): a pull and release of all four
tendons in turn, ``--states`` states of ``STEP`` N each (tensions, and the same through
displacements), each state solved from the last; beside it the same sequence of the robot
without friction through the frictionless solver. Numba compilation (cached after the first
run) is excluded; each rate is given in wall time and per CPU second of this process (what a
loaded machine changes least). The issue's target: at least 200 states per second on the
default robot. The last line printed with --json is one JSON object.

    python benchmarks/bench_stick_slip.py --json
"""

import dataclasses
import json
import sys
import time

from machine import machine_info
import numpy as np
from options import names, Parser, positive_int
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.statics.solver import MODELS, StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot

STEP = 0.25        # N of motor tension between states
PEAK = 6.0         # N: each tendon in turn pulled to this and released


def sequence(states: int) -> np.ndarray:
    """(states, 4) motor tensions [N]: each tendon in turn ramped to PEAK and back."""
    ramp = np.concatenate((np.arange(0.0, PEAK, STEP), np.arange(PEAK, 0.0, -STEP)))
    rows = [np.eye(4)[k % 4] * t for k in range(states // ramp.size + 1) for t in ramp]
    return np.array(rows[:states])


def rate(solve, inputs) -> tuple[float, float, float]:
    """
    States per second (wall), the median milliseconds of one state, states per CPU second.

    The CPU rate (this process's time) is what a loaded machine changes least.
    """
    times = []
    cpu = time.process_time()
    for row in inputs:
        start = time.perf_counter()
        solve(row)
        times.append(time.perf_counter() - start)
    cpu = time.process_time() - cpu
    return len(times) / sum(times), float(np.median(times)) * 1e3, len(times) / cpu


def bench_model(robot, model: str, states: int) -> dict:
    inputs = sequence(states)
    friction = StickSlipStatics(robot, model)
    # compiles both paths' kernels
    friction.solve_displacements(friction.solve_tensions(inputs[1]).tendon_displacements)
    friction.reset()
    tension_rate, tension_ms, tension_cpu = rate(friction.solve_tensions, inputs)
    friction.reset()
    lengths = [friction.solve_tensions(row).tendon_displacements for row in inputs]
    friction.reset()
    displacement_rate, displacement_ms, displacement_cpu = rate(friction.solve_displacements,
                                                                lengths)
    bare = StaticsSolver(dataclasses.replace(robot, tendons=tuple(
        dataclasses.replace(t, friction=None) for t in robot.tendons)), model)
    bare_rate, bare_ms, bare_cpu = rate(bare.solve_tensions, inputs)
    return {'pieces_per_tendon': int(friction.pieces[0]),
            'states_per_second': tension_rate, 'state_ms_median': tension_ms,
            'states_per_cpu_second': tension_cpu,
            'displacement_states_per_second': displacement_rate,
            'displacement_state_ms_median': displacement_ms,
            'displacement_states_per_cpu_second': displacement_cpu,
            'frictionless_states_per_second': bare_rate, 'frictionless_state_ms_median': bare_ms,
            'frictionless_states_per_cpu_second': bare_cpu}


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--models', type=names(MODELS), default=['discrete', 'cosserat'],
                        help='comma-separated statics models (default discrete,cosserat)')
    parser.add_argument('--states', type=positive_int, default=400, help='states per sequence')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    robot = load_robot(share_dir() / 'config' / 'robot_friction.yaml')
    results = {model: bench_model(robot, model, args.states) for model in args.models}
    for model, r in results.items():
        print(f'{model:9s} ({r["pieces_per_tendon"]} pieces per tendon): '
              f'{r["states_per_second"]:.0f} states/s by tension '
              f'({r["state_ms_median"]:.2f} ms median), '
              f'{r["displacement_states_per_second"]:.0f} by displacement; without friction '
              f'{r["frictionless_states_per_second"]:.0f} states/s; per CPU second '
              f'{r["states_per_cpu_second"]:.0f}, {r["displacement_states_per_cpu_second"]:.0f}, '
              f'{r["frictionless_states_per_cpu_second"]:.0f}')
    summary = {'benchmark': 'stick_slip_statics', 'robot': robot.name, 'states': args.states,
               'models': results, 'machine': machine_info('numpy', 'numba', 'scipy')}
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == '__main__':
    sys.exit(main())
