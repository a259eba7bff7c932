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
Real-time factor, cost per step and discretisation error of the dynamic simulator.

Speed: for each element count, ``TendonSimulator.advance`` with both steppers
(``compiled``: the allocation-free kernel ``advance_rod``, one numba call per advance;
``pyelastica``: ``PositionVerlet.step`` per step), the default robot with 4 tendons
pulled, at its default time step. Each block advances the same simulated time (state()
included); the variants are timed in interleaved blocks so that load from other
processes hits them alike, and the median block gives the real-time factor (simulated /
wall time; the best block is printed too) and us/step. CPU time per step (the process's
own, so not inflated by waiting for a busy core) is given next to the wall time.

Profile: where a compiled step's time goes. Each part of the kernel (the two kinematic
half steps, shear/stretch, bend/twist, the external loads with the tendons, the update
of the rates) runs alone in a numba loop on the bent rod, in CPU time per step; their sum
is compared with the whole step.

Accuracy: the steady tip under gravity with two tendons pulled, per element count,
against a fine reference (100 elements), run with the compiled stepper and heavy
damping (where a rod comes to rest does not depend on its damping).

The last line printed with --json is one JSON object. Pin it to one core and say how
busy the machine was (the JSON carries the load average):

    taskset -c 1 python benchmarks/bench_dynamics.py --json
"""

import json
import statistics
import sys
import time

from machine import machine_info
from numba import njit
import numpy as np
from options import listed, non_negative, Parser, positive, positive_int, readable_file
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics import _explicit_kernels as kernels
from tendon_robot_sim.models.rod.dynamics.explicit import STEPPERS, TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot
from tqdm import tqdm

# Targets of issue 24 (one core of the project's machine).
TARGETS = {'compiled_us_per_step_at_50': 5.5, 'compiled_rtf_at_50': 5.0,
           'compiled_rtf_at_10': 15.0}


def speed(robot, elements: int, tensions, block: float, repeats: int, show: bool) -> dict:
    """Real-time factors of both steppers at ``elements``, ``repeats`` blocks of ``block`` s."""
    sims = {}
    for stepper in STEPPERS:
        sim = TendonSimulator(robot.with_changes(elements=elements), stepper=stepper)
        sim.set_tensions(tensions)
        sim.advance(0.01)                    # compile and start moving
        sims[stepper] = sim
    factors = {stepper: [] for stepper in STEPPERS}
    cpu = {stepper: [] for stepper in STEPPERS}
    order = list(STEPPERS)
    for _ in tqdm(range(repeats), desc=f'{elements} elements', disable=not show,
                  file=sys.stderr):
        for stepper in order:
            start, start_cpu = time.perf_counter(), time.process_time()
            sims[stepper].advance(block)
            factors[stepper].append(block / (time.perf_counter() - start))
            cpu[stepper].append(time.process_time() - start_cpu)
        order.reverse()                      # neither always runs right after the other
    dt = sims['compiled'].dt
    result = {'elements': elements, 'dt': dt, 'stable_dt': sims['compiled'].stable_dt}
    for stepper, values in factors.items():
        result[f'{stepper}_real_time_factor'] = statistics.median(values)
        result[f'{stepper}_real_time_factor_best'] = max(values)
        result[f'{stepper}_us_per_step'] = dt / statistics.median(values) * 1e6
        result[f'{stepper}_cpu_us_per_step'] = statistics.median(cpu[stepper]) / round(
            block / dt) * 1e6
    # blocks timed back to back share the machine's load: compare them pairwise
    result['speedup'] = statistics.median(
        c / p for c, p in zip(factors['compiled'], factors['pyelastica']))
    return result


@njit
def _kinematics(n, h, rod):
    for i in range(n):                       # +h, -h: the rod stays where it is
        kernels._kinematic_half_step(h if i % 2 == 0 else -h, rod[0], rod[1], rod[2], rod[3])


@njit
def _shear_stretch(n, rod, viscosity, work):
    for _ in range(n):
        kernels._shear_stretch(rod[0], rod[1], rod[2], rod[3], rod[7], rod[9], rod[10],
                               viscosity, work)


@njit
def _bend_twist(n, rod, viscosity, work):
    for _ in range(n):
        kernels._bend_twist(rod[1], rod[3], rod[8], rod[11], rod[12], viscosity, work)


@njit
def _external_loads(n, rod, gravity, tendons, contact, work):
    for _ in range(n):
        kernels._external_loads(rod[0], rod[1], rod[2], rod[4], gravity, tendons, contact,
                                work)


@njit
def _update_rates(n, rod, work):
    for _ in range(n):                       # dt = 0: the same arithmetic, the rod stays
        kernels._update_rates(0.0, 1.0, rod[0], rod[2], rod[3], rod[4], rod[5], rod[6],
                              rod[7], work)


def profile(robot, elements: int, tensions, steps: int, repeats: int) -> dict:
    """CPU us per step of each part of advance_rod and of the whole, best of ``repeats``."""
    sim = TendonSimulator(robot.with_changes(elements=elements))
    sim.set_tensions(tensions)
    sim.advance(0.05)                        # bent and moving
    # the kernel's own arguments (rod arrays, work, gravity, decay, viscosity, tendons,
    # contact)
    rod, work, gravity, _, viscosity, tendons, contact = sim._compiled[:7]
    half = 0.5 * sim.dt
    parts = {
        'kinematic_half_steps_x2': lambda n: _kinematics(2 * n, half, rod),
        'shear_stretch_forces': lambda n: _shear_stretch(n, rod, viscosity, work),
        'bend_twist_couples': lambda n: _bend_twist(n, rod, viscosity, work),
        'gravity_tendon_and_contact_loads':
            lambda n: _external_loads(n, rod, gravity, tendons, contact, work),
        'rate_update_and_damper': lambda n: _update_rates(n, rod, work),
    }
    result = {}
    for name, run in parts.items():
        run(10)                              # compile
        times = []
        for _ in range(repeats):
            start = time.process_time()
            run(steps)
            times.append(time.process_time() - start)
        result[name] = min(times) / steps * 1e6
    whole = []
    # from the same bent state each time, for at most 0.5 s (before the strain-rate damping,
    # the rod blew up after 1.1 s at 100 elements and these tensions)
    steps = min(steps, round(0.5 / sim.dt))
    for _ in range(repeats):
        sim.reset()
        sim.set_tensions(tensions)
        sim.advance(0.05)
        start = time.process_time()
        sim.advance(steps * sim.dt)
        whole.append(time.process_time() - start)
    result = {'elements': elements, 'parts_cpu_us_per_step': result,
              'sum_of_parts': sum(result.values()),
              'whole_step_cpu_us': min(whole) / steps * 1e6}
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
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', type=readable_file, default=str(default_robot_file()),
                        help='robot YAML file')
    parser.add_argument('--elements', type=listed(positive_int), default=[10, 20, 50, 100],
                        help='element counts to compare')
    parser.add_argument('--tensions', type=listed(non_negative), default=[1.0, 2.0, 1.0, 0.5],
                        help='tensions for the timing, N, one per tendon (default 1,2,1,0.5)')
    parser.add_argument('--block', type=positive, default=0.05,
                        help='simulated seconds per timed block (default 0.05)')
    parser.add_argument('--repeats', type=positive_int, default=15,
                        help='timed blocks per stepper')
    parser.add_argument('--accuracy-tensions', type=listed(non_negative),
                        default=[2.0, 1.0, 0.0, 0.0],
                        help='tensions for the accuracy case, N (default 2,1,0,0)')
    parser.add_argument('--reference-elements', type=positive_int, default=100)
    parser.add_argument('--max-time', type=positive, default=10.0,
                        help='simulated seconds allowed to reach steady state')
    parser.add_argument('--profile-steps', type=positive_int, default=20000,
                        help='steps per timed run of each part in the profile')
    parser.add_argument('--no-accuracy', action='store_true',
                        help='skip the accuracy runs (speed and profile only)')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)

    robot = load_robot(args.robot)
    elements = args.elements
    show = sys.stderr.isatty()
    tensions = args.tensions
    load_before = machine_info()['load_average_1min']
    runs = [speed(robot, n, tensions, args.block, args.repeats, show) for n in elements]
    profiles = [profile(robot, n, tensions, args.profile_steps, 7)
                for n in tqdm(elements, desc='profile', disable=not show, file=sys.stderr)]
    errors = None if args.no_accuracy else accuracy(
        robot, args.accuracy_tensions, elements,
        args.reference_elements, args.max_time, show)
    result = {'speed': runs, 'profile': profiles, 'accuracy': errors, 'targets': TARGETS,
              'machine': machine_info('numpy', 'numba', 'pyelastica'),
              'load_average_1min_before': load_before}
    print(f'robot {robot.name}; real-time factor = simulated / wall time, median block '
          f'(best); us/step wall (CPU)')
    for run in runs:
        line = (f"{run['elements']:3d} elements, dt {run['dt'] * 1e6:.0f} us: compiled "
                f"{run['compiled_real_time_factor']:.2f} "
                f"({run['compiled_real_time_factor_best']:.2f}) "
                f"{run['compiled_us_per_step']:.2f} ({run['compiled_cpu_us_per_step']:.2f}) us, "
                f"pyelastica {run['pyelastica_real_time_factor']:.2f} "
                f"({run['pyelastica_real_time_factor_best']:.2f}) "
                f"{run['pyelastica_us_per_step']:.2f} "
                f"({run['pyelastica_cpu_us_per_step']:.2f}) us, speed-up {run['speedup']:.1f}")
        if errors is not None:
            case = errors['cases'].get(run['elements'])
            line += ('; tip error vs {} elements {}'.format(
                args.reference_elements, 'n/a (the reference)' if case is None else
                f"{case['error_mm']:.2f} mm = {case['error_percent_of_length']:.3f} % of L"
                f"{'' if case['steady'] else ' (NOT steady)'}"))
        print(line)
    print('profile, CPU us per step of each part (best of 7):')
    for entry in profiles:
        parts = ', '.join(f'{name} {value:.2f}'
                          for name, value in entry['parts_cpu_us_per_step'].items())
        print(f"{entry['elements']:3d} elements: {parts}; sum {entry['sum_of_parts']:.2f}, "
              f"whole step {entry['whole_step_cpu_us']:.2f}")
    print(f'load average (1 min) {load_before:.2f} before, '
          f"{result['machine']['load_average_1min']:.2f} after")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
