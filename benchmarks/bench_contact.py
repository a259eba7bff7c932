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
Speed and accuracy of contact (issue 40): the propped cantilever in the statics and the dynamics.

The steel rod of ``config/steel_rod_robot.yaml`` (0.5 m, 2 mm) clamped horizontally, its tip on
a frictionless cylinder whose top touches the rod's underside at the clamp's height (the test
``test/models/rod/statics/test_contact_statics.py``), at the default contact parameters:

* statics (``kirchhoff``, ``cosserat``) at the default grid and several RK4 steps
  everywhere, and at other penalty stiffnesses: cold solve time (load continuation from the
  unloaded rod), warm solve time (a stream of tendon tensions, 1 mN apart; wall and CPU
  time), the support and clamp forces and the largest deflection against beam theory (3wL/8,
  5wL/8, wL^4 / (185 EI) at 0.5785 L), the penetration;
* implicit dynamics (``kirchhoff``, dt = 2 ms) at rest on the prop: the real-time factor at
  the default steps with a world (one per ``CONTACT_STEP`` where the rod can reach the prop)
  and at 100 steps;
* the issue's speed targets as ``simulate`` runs them (``--speed-only`` for these alone): the
  nitinol robot (implicit, its default ``discrete`` model, dt = 2 ms) resting its discs on a
  floor beside a post, the steel robot (implicit, dt = 2 ms) resting on its prop, and the
  silicone robot (explicit) in ``config/world_post.yaml`` pulled onto the post and the plate,
  each against the same run without a world and (implicit) with one RK4 step per
  ``CONTACT_STEP`` over the whole rod (the grid before the broad phase of
  ``models/contact/reach.py`` and the contact zones of ``models/rod/dynamics/implicit_grid.py``);
  the runs take turns, ``--repeats`` rounds of ``--duration`` (at least 0.5 s simulated), and
  each gets its median and its best real-time factor (wall time), the median per second of
  the process's CPU time (the time waiting for a core left out: on a loaded machine the
  nearer to a quiet one), RK4 steps and contact zones.

Numba compilation is excluded (one solve first). The last line printed with --json is one JSON
object.

    python benchmarks/bench_contact.py --json
"""

import json
import math
import statistics
import time

from machine import machine_info
import numpy as np
from options import Parser, positive, positive_int
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.contact.world import load_world, world_from_dict
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics.solver import CONTACT_STEP, StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

ROBOT = load_robot(default_robot_file().parent / 'steel_rod_robot.yaml')
L, R = ROBOT.rod.length, ROBOT.rod.radius
W = ROBOT.rod.linear_density * np.linalg.norm(ROBOT.gravity)
EI = ROBOT.rod.bending_stiffness


def world(radius=0.01, stiffness=1e7):
    return world_from_dict({'contact': {'penalty_stiffness': stiffness}, 'obstacles': [
        {'name': 'prop', 'shape': 'cylinder', 'radius': radius, 'length': 0.05,
         'position': [L, 0.0, -R - radius], 'orientation': [-0.5 ** 0.5, 0.0, 0.0, 0.5 ** 0.5]}]})


def errors(centerline, support, clamp):
    z = centerline[2]
    deepest = int(np.argmin(z))
    return {'support_error': support / (3 * W * L / 8) - 1.0,
            'clamp_error': clamp / (5 * W * L / 8) - 1.0,
            'deflection_error': -z[deepest] / (W * L ** 4 / (185 * EI)) - 1.0,
            'location_error': centerline[0, deepest] / (0.5785 * L) - 1.0}


def statics(model, step, repeats, stiffness=1e7):
    solver = StaticsSolver(ROBOT, model, world=world(stiffness=stiffness), step=step)
    solver.solve_tensions([0.0] * 4)
    cold = []
    for _ in range(repeats):
        solver.reset()
        start = time.perf_counter()
        result = solver.solve_tensions([0.0] * 4)
        cold.append(time.perf_counter() - start)
    warm, warm_cpu = [], []
    for k in range(50):
        start, start_cpu = time.perf_counter(), time.process_time()
        solver.solve_tensions([1e-3 * (k % 10), 0.0, 0.0, 0.0])
        warm.append(time.perf_counter() - start)
        warm_cpu.append(time.process_time() - start_cpu)
    (prop,) = result.contacts
    return {'model': model, 'step_m': step, 'stiffness': stiffness,
            'cold_ms': 1e3 * statistics.median(cold),
            'warm_ms_median': 1e3 * statistics.median(warm),
            'warm_cpu_ms_median': 1e3 * statistics.median(warm_cpu),
            'penetration_m': result.max_penetration,
            **errors(result.centerline, prop.force[2], -result.base_force[2])}


def dynamics(steps, duration):
    sim = ImplicitSimulator(ROBOT, world=world(), steps=steps, model='kirchhoff', dt=0.002)
    sim.advance(0.01)
    start = time.perf_counter()
    state = sim.advance(duration)
    wall = time.perf_counter() - start
    (prop,) = state.contacts
    return {'steps': sim.steps, 'dt_s': sim.dt, 'real_time_factor': duration / wall,
            'support_error': prop.force[2] / (3 * W * L / 8) - 1.0}


def in_contact(name, make, tensions, duration, repeats, uniform=None):
    """
    Real-time factors of ``make(world, steps)`` at rest or pulled in contact, without the world.

    ``uniform``: RK4 steps that put one step per CONTACT_STEP over the whole rod (the grid
    before the broad phase), run too. The runs take turns, ``repeats`` rounds: the median and
    the best of each (on a machine others load, the best is the least disturbed).
    """
    row = {'robot': name}
    runs = [('world', True, None), ('free', False, None)]
    if uniform:
        runs.insert(1, ('uniform', True, uniform))
    sims, factors = {}, {label: [] for label, _, _ in runs}
    cpu = {label: [] for label, _, _ in runs}
    for label, world, steps in runs:
        sims[label] = sim = make(world, steps)
        sim.set_tensions(tensions)
        sim.advance(0.05)                           # compiled, and in contact
        row[f'{label}_rk4_steps'] = getattr(sim, 'steps', None)
    for _ in range(repeats):
        for label, _, _ in runs:
            start, start_cpu = time.perf_counter(), time.process_time()
            sims[label].advance(duration)
            factors[label].append(duration / (time.perf_counter() - start))
            cpu[label].append(duration / (time.process_time() - start_cpu))
    for label, world, _ in runs:
        row[f'{label}_real_time_factor'] = statistics.median(factors[label])
        row[f'{label}_best_real_time_factor'] = max(factors[label])
        # per second of this process's CPU time: what waits for a core leaves out
        row[f'{label}_cpu_real_time_factor'] = statistics.median(cpu[label])
        if world:
            state = sims[label].state()
            row[f'{label}_contacts'] = sorted({c.obstacle for c in state.contacts})
            row[f'{label}_tip_m'] = state.tip_position.tolist()
            row[f'{label}_forces_n'] = [c.force.tolist() for c in state.contacts]
            row[f'{label}_zones_m'] = getattr(sims[label], 'contact_zones', None)
            row[f'{label}_rk4_steps_end'] = getattr(sims[label], 'steps', None)
            row['dt_s'] = sims[label].dt
    return row


def speed_rows(duration, repeats):
    nitinol = load_robot(default_robot_file().parent / 'nitinol_robot.yaml')
    silicone = load_robot(default_robot_file())
    beside = world_from_dict({'obstacles': [
        {'name': 'floor', 'shape': 'plane', 'position': [0.0, 0.0, -0.019]},
        {'name': 'post', 'shape': 'cylinder', 'radius': 0.01, 'length': 0.2, 'capsule': True,
         'position': [0.15, 0.03, 0.0]}]})
    post = load_world(default_robot_file().parent / 'world_post.yaml')
    return [
        in_contact('nitinol (implicit)', lambda w, steps: ImplicitSimulator(
            nitinol, dt=0.002, steps=steps, world=beside if w else None), [0.0] * 3, duration,
            repeats,
            uniform=math.ceil(nitinol.rod.length / CONTACT_STEP)),
        in_contact('steel (implicit)', lambda w, steps: ImplicitSimulator(
            ROBOT, dt=0.002, steps=steps, world=world() if w else None), [0.0] * 4, duration,
            repeats,
            uniform=math.ceil(L / CONTACT_STEP)),
        in_contact('silicone (explicit)', lambda w, steps: TendonSimulator(
            silicone, world=post if w else None), [0.0, 0.0, 0.0, 2.0], duration, repeats),
    ]


def main():
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeats', type=positive_int, default=3)
    parser.add_argument('--duration', type=positive, default=0.2, help='simulated s per run')
    parser.add_argument('--json', action='store_true')
    parser.add_argument('--speed-only', action='store_true',
                        help='only the simulate runs of the speed targets')
    args = parser.parse_args()
    speed = speed_rows(max(args.duration, 0.5), args.repeats)
    for row in speed:
        def factor(label):
            return (f"{row[f'{label}_real_time_factor']:.2f} (best "
                    f"{row[f'{label}_best_real_time_factor']:.2f}, CPU time "
                    f"{row[f'{label}_cpu_real_time_factor']:.2f})")
        uniform = f", one step per mm {factor('uniform')}" if 'uniform_rk4_steps' in row else ''
        print(f"simulate {row['robot']:20s} dt {row['dt_s'] * 1e3:.3g} ms, in contact with "
              f"{', '.join(row['world_contacts'])}: {factor('world')} x real time (without "
              f"the world {factor('free')}{uniform})")
    if args.speed_only:
        if args.json:
            print(json.dumps({'machine': machine_info(), 'simulate': speed}))
        return
    # step None: the default grid (the contact-free step until the rod can reach the prop)
    rows = [statics(model, step, args.repeats) for model in ('kirchhoff', 'cosserat')
            for step in (None, 0.0005, 0.001, 0.002)]
    rows += [statics('kirchhoff', 0.001, args.repeats, stiffness) for stiffness in (1e6, 1e8)]
    for row in rows:
        step = 'default' if row['step_m'] is None else f"{row['step_m'] * 1e3:.1f} mm"
        print(f"statics {row['model']:9s} step {step}, k {row['stiffness']:.0e} N/m^2: cold "
              f"{row['cold_ms']:.0f} ms, warm {row['warm_ms_median']:.1f} ms (CPU time "
              f"{row['warm_cpu_ms_median']:.1f} ms); support "
              f"{100 * row['support_error']:+.2f} %, clamp {100 * row['clamp_error']:+.2f} %, "
              f"deflection {100 * row['deflection_error']:+.2f} % at "
              f"{100 * row['location_error']:+.2f} %, penetration "
              f"{row['penetration_m'] * 1e6:.1f} um")
    runs = [dynamics(steps, args.duration) for steps in (None, 100)]
    for run in runs:
        print(f"implicit {run['steps']} steps, dt {run['dt_s'] * 1e3:.0f} ms: real-time factor "
              f"{run['real_time_factor']:.2f}")
    if args.json:
        print(json.dumps({'machine': machine_info(), 'statics': rows, 'implicit': runs,
                          'simulate': speed}))


if __name__ == '__main__':
    main()
