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
``tendon-robot-sim simulate``: run the dynamic model and report the tip pose.

    tendon-robot-sim simulate --tensions 0,2,0,0 --duration 1.5
    tendon-robot-sim simulate --robot my_robot.yaml --tensions t1=2.0 --until-steady --json

With ``--json`` the last line on stdout is one JSON object with ``tip_position``
[x, y, z] (m, base frame), ``tip_orientation`` [qx, qy, qz, qw], ``sim_time``
(s), ``wall_time`` (s), ``real_time_factor`` and ``steady``. A progress bar goes
to stderr when it is a terminal.
"""

import argparse
import json
import sys
import time

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (check_steps, command_error, parse_values, positive,
                                       time_step)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics import InputError, SimulationDiverged, TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot
from tqdm import tqdm

# Simulated seconds between progress-bar updates.
CHUNK = 0.05
# Wall seconds beyond which a run says how long it will take.
LONG_RUN = 30.0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'simulate', help='run the dynamic simulation and print the tip pose',
        description='Simulate the robot under constant tendon tensions (PyElastica) and '
                    'print the tip pose.')
    parser.add_argument('--robot', default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--tensions', default=None, metavar='T',
                        help="tendon tensions in N: one per tendon ('0,2,0,0') or by name "
                             "('t1=2.0,t3=0.5', others 0); default all 0")
    until = parser.add_mutually_exclusive_group()
    until.add_argument('--duration', type=positive, default=1.0, metavar='S',
                       help='simulated time in s (default 1.0)')
    until.add_argument('--until-steady', action='store_true',
                       help='run until the tip is at rest (see --max-time)')
    parser.add_argument('--max-time', type=positive, default=10.0, metavar='S',
                        help='with --until-steady: most simulated time in s (default 10)')
    parser.add_argument('--dt', type=time_step, default=None, metavar='S',
                        help='time step in s (default: from the stability bound)')
    parser.add_argument('--json', action='store_true',
                        help='end the output with one JSON line')
    parser.set_defaults(func=run)


def _announcing_long_runs(bar, total: float, start: float):
    """
    Return ``bar.update`` that also says, once, how long a long run will take.

    The bar shows only on a terminal; a run of hours (``--duration 1e9``) must not be
    silent elsewhere: after the first CHUNK, one line on stderr gives the expected wall time.
    """
    update = bar.update
    done = []      # simulated seconds so far (a bar off a terminal counts nothing)

    def announcing(seconds: float) -> None:
        update(seconds)
        if not done and seconds > 0:
            done.append(seconds)
            speed = seconds / (time.perf_counter() - start)
            if total / speed > LONG_RUN:
                print(f'simulating {total:g} s takes about {_duration(total / speed)} at '
                      f'{speed:.3g} x real time; Ctrl-C stops', file=sys.stderr, flush=True)
    return announcing


def _duration(seconds: float) -> str:
    for unit, size in (('years', 3.156e7), ('days', 86400.0), ('h', 3600.0), ('min', 60.0)):
        if seconds >= size:
            return f'{seconds / size:.3g} {unit}'
    return f'{seconds:.3g} s'


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    try:
        robot = load_robot(path)
        sim = TendonSimulator(robot, dt=args.dt)
        if args.tensions is not None:
            sim.set_tensions(parse_values(args.tensions, '--tensions'))
    except (RobotDescriptionError, InputError) as error:
        # one line: YAML parser messages span several
        raise command_error(error) from None

    total = args.max_time if args.until_steady else args.duration
    check_steps(total, sim.dt, kept=False)
    start = time.perf_counter()
    try:
        with tqdm(total=round(total, 6), unit='s', desc='simulating', file=sys.stderr,
                  disable=None, leave=False,
                  bar_format='{l_bar}{bar}| {n:.2f}/{total:.2f} s sim [{elapsed}]') as bar:
            bar.update = _announcing_long_runs(bar, total, start)
            if args.until_steady:
                state = sim.run_until_steady(args.max_time, check_interval=CHUNK,
                                             progress=bar.update)
            else:
                end = args.duration
                state = sim.state()
                while sim.time < end - 0.5 * sim.dt:
                    before = sim.time
                    state = sim.advance(min(CHUNK, end - sim.time))
                    bar.update(sim.time - before)
    except SimulationDiverged as error:
        raise command_error(error) from None
    wall = time.perf_counter() - start
    steady = sim.is_steady()

    result = {
        'robot': robot.name,
        'elements': robot.rod.elements,
        'dt': sim.dt,
        'tensions': state.tensions.tolist(),
        'tip_position': state.tip_position.tolist(),
        'tip_orientation': state.tip_orientation.tolist(),
        'tendon_displacements': state.tendon_displacements.tolist(),
        'sim_time': state.time,
        'wall_time': wall,
        'real_time_factor': state.time / wall if wall > 0 else None,
        'steady': steady,
    }
    tensions_text = ', '.join(f'{name} {value:g}' for name, value in
                              zip(sim.tendon_names, state.tensions))
    print(f'robot {robot.name}: {robot.rod.elements} elements, dt {sim.dt:.3g} s; '
          f'tensions [N]: {tensions_text}')
    print(f'simulated {state.time:.3f} s in {wall:.2f} s wall time '
          f'(real-time factor {result["real_time_factor"]:.2f}); '
          f'steady: {"yes" if steady else "no"}')
    x, y, z = state.tip_position
    print(f'tip position [m] ({robot.base.frame_id}): x {x:.5f}  y {y:.5f}  z {z:.5f}')
    print('tip orientation [qx qy qz qw]: '
          + ' '.join(f'{q:.5f}' for q in state.tip_orientation))
    displacements = zip(sim.tendon_names, state.tendon_displacements)
    print('tendon displacements [mm]: '
          + ', '.join(f'{name} {1e3 * d:.3f}' for name, d in displacements))
    if args.json:
        print(json.dumps(result))
    return 0
