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
``tendon-robot-sim cc-dynamics``: the multi-section constant-curvature Lagrange dynamics.

    tendon-robot-sim cc-dynamics --tensions t0=3 --duration 2 --plot
    tendon-robot-sim cc-dynamics --robot config/bionic_handling_assistant.yaml \
        --pressures p1=1e5,p5=6e4 --duration 3 --plot bha.png --json
    tendon-robot-sim cc-dynamics --robot config/bionic_handling_assistant.yaml \
        --pressures-csv config/bha_pressure_steps.csv --plot steps.png

Starts the robot at rest under gravity (static equilibrium with all inputs 0) and applies
constant inputs from t = 0: tendon tensions (N) for a tendon robot description, bellows
pressures (Pa, gauge) for a ``kind: bellows`` one. Prints
the final state of each section (length l, bending angle theta, direction phi), the tip,
the actuator lengths and the real-time factor. ``--plot`` writes a PNG of the tip over
time and of the backbone at six times. With ``--json`` the last line on stdout is one
JSON object: ``robot``, ``kind``, ``inputs`` (by name), ``duration``, ``dt`` (s),
``sections`` (list of {``length`` m, ``theta`` rad, ``phi`` rad}), ``tip_position`` (m,
world frame), ``actuator_lengths`` (m, by name), ``wall_time`` (s) and
``real_time_factor``.

``--tensions-csv`` / ``--pressures-csv`` take the inputs over time from a CSV file
(:mod:`tendon_robot_sim.experiment.input_profile`: a column ``t`` in s and one per actuator,
linear between rows, a step where two rows share a time): the run starts at rest under the
profile's inputs at t = 0 and lasts until its last row unless ``--duration`` says otherwise
(in whole steps that cover it: :func:`~tendon_robot_sim.commands.run_steps`). Each step takes
the profile's mean over it, so a row acts from its time on, a step between two steps for the
share after it; ``inputs`` in the JSON are those in force at the end (the last row once the run
reaches it) and ``profile`` names the file.
"""

import argparse
import json
import math
from pathlib import Path
import re
import time

import numpy as np

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (check_output, check_steps, command_error, CommandError,
                                       input_file, NoResultError, OutputPath, parse_values,
                                       PLOT_SUFFIXES, positive, run_duration, run_steps,
                                       time_step)
from tendon_robot_sim.experiment.input_profile import ProfileError, read_profile
from tendon_robot_sim.files.outputs import make_folder
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.geometry import self_contact
from tendon_robot_sim.models.trunk.dynamics import (CCDynamicsError, DEFAULT_SCHEME,
                                                    DEFAULT_TIME_STEP, load_cc_dynamics,
                                                    plot_trajectory, SCHEMES)

# --plot without a file: a name that says what the plot holds, in the output folder every
# command's defaults share (git-ignored).
DEFAULT_PLOT = 'demo_output/cc_dynamics_<robot>_<inputs>.png'


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'cc-dynamics', help='constant-curvature Lagrange dynamics (elephant-trunk model)',
        description='Simulate a multi-section constant-curvature robot (Falkenhahn 2015 '
                    'Lagrange model) under constant tensions or pressures.')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML: a tendon robot or a kind: bellows robot '
                             '(default: the package config/robot.yaml)')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--tensions', metavar='T',
                        help="tendon tensions in N: one per tendon ('0,3,0,0') or by name "
                             "('t1=3', others 0)")
    inputs.add_argument('--pressures', metavar='P',
                        help='bellows gauge pressures in Pa: one per bellows or by name '
                             "('p1=1e5', others 0)")
    inputs.add_argument('--tensions-csv', metavar='CSV',
                        help='tendon tensions over time: a column t (s) and one per tendon (N), '
                             'linear between rows, a step where two rows share a time')
    inputs.add_argument('--pressures-csv', metavar='CSV',
                        help='bellows pressures over time: a column t (s) and one per bellows '
                             '(Pa), linear between rows, a step where two rows share a time')
    parser.add_argument('--duration', type=positive, default=None, metavar='S',
                        help="simulated time in s (default 2, or a profile's last time)")
    parser.add_argument('--dt', type=time_step, default=DEFAULT_TIME_STEP, metavar='S',
                        help=f'time step in s (default {DEFAULT_TIME_STEP})')
    parser.add_argument('--scheme', choices=sorted(SCHEMES), default=DEFAULT_SCHEME,
                        help='integrator: gauss (order 4, adds no damping: the energy of an '
                             'undamped robot is kept) or sdirk2 (L-stable: damps the stiff '
                             'modes, and part of the slow ones; faster on stiff robots) '
                             '(default %(default)s)')
    parser.add_argument('--plot', nargs='?', const=True, default=None, metavar='PNG',
                        type=OutputPath('file', PLOT_SUFFIXES),
                        help=f'write a plot of the run (default file {DEFAULT_PLOT}: '
                             "the robot's name and the inputs, or the profile's name)")
    parser.add_argument('--json', action='store_true', help='end the output with one JSON line')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    try:
        model = load_cc_dynamics(path)
    except (RobotDescriptionError, CCDynamicsError) as error:
        raise command_error(error) from None
    option = '--pressures' if model.kind == 'pressure' else '--tensions'
    pressures = args.pressures is not None or args.pressures_csv is not None
    if pressures != (model.kind == 'pressure'):
        raise CommandError(f'{path}: the actuators of {model.name} take {model.kind}s; '
                           f'use {option} or {option}-csv')
    profile = read_inputs_profile(args, model)
    if args.plot is True:
        default = Path(default_plot(model.name, args))
        make_folder(check_output(default.parent, '--plot', 'folder'))
        args.plot = check_output(default, '--plot', 'file', PLOT_SUFFIXES)
    duration, given_by = run_duration(args.duration, profile.end if profile else None,
                                      f'{option}-csv', 2.0)
    check_steps(duration, args.dt, option=given_by)
    # whole steps that cover the duration (a file's last row is reached): the rule of every
    # command, which the model's own rounding to the nearest step then keeps
    duration = run_steps(duration, args.dt) * args.dt
    try:
        if profile is None:
            inputs = model.input_vector(parse_values(args.pressures or args.tensions, option),
                                        option)
            # start at rest under gravity alone, so that the run shows the step response
            rest = model.equilibrium(np.zeros_like(inputs))
        else:
            # each step takes the profile's mean over it: a row acts from its time on, also
            # one between two steps (the inputs of a step's start missed a last row's step)
            def inputs(t):
                return profile.mean(t, t + args.dt)
            rest = model.equilibrium(profile.at(0.0))
        # one step first: numba compiles the integrator on a first run (an empty cache, some
        # 20 s), which the speed of the run below would otherwise count
        start = time.perf_counter()
        model.simulate(inputs, args.dt, dt=args.dt, x0=rest, scheme=args.scheme)
        compiling = time.perf_counter() - start
        start = time.perf_counter()
        run = model.simulate(inputs, duration, dt=args.dt, x0=rest, scheme=args.scheme)
        wall = time.perf_counter() - start
    except CCDynamicsError as error:
        raise command_error(error) from None
    contact = run.self_contact()
    if contact is not None:
        # as cc refuses such a bend: past it the arc runs through itself, not the robot
        k, j, theta, length = contact
        problem = self_contact(theta, length, model.radii[j])
        raise NoResultError(f't = {run.times[k]:.4g} s, section {j}: {problem}')
    # the inputs in force at the end: a profile's last row once the run reaches it
    inputs = run.inputs[-1] if profile is None else profile.at(float(run.times[-1]))

    np.set_printoptions(precision=6, suppress=True)
    final = run.x[-1]
    sections = [{'length': float(length), 'theta': math.hypot(ux, uy),
                 'phi': math.atan2(uy, ux) if ux or uy else 0.0}
                for length, ux, uy in final.reshape(-1, 3)]
    tip = model.frames(final)[-1][1]
    lengths = run.actuator_lengths[-1]
    print(f'robot {model.name}: {model.n_sections} CC section(s), {model.kind} inputs, '
          f'{run.times[-1]:.3g} s in {wall:.3g} s ({run.times[-1] / wall:.1f} x real time'
          + (f'; {compiling:.3g} s before it compiling the model, once' if compiling >= 1.0
             else '') + ')')
    for j, section in enumerate(sections):
        print(f'section {j}: l {section["length"]:.6g} m, theta {section["theta"]:.6g} rad, '
              f'phi {section["phi"]:.6g} rad')
    print(f'tip position [m]:     {tip}')
    print(f'actuator lengths [m]: {lengths}')
    if args.plot:
        plot_trajectory(run, args.plot)
        print(f'wrote {args.plot}')
    if args.json:
        print(json.dumps({
            'robot': model.name, 'kind': model.kind,
            'inputs': dict(zip(model.input_names, inputs.tolist())),
            'duration': float(run.times[-1]), 'dt': args.dt, 'sections': sections,
            **({'profile': profile.source} if profile else {}),
            'tip_position': tip.tolist(),
            'actuator_lengths': dict(zip(model.input_names, lengths.tolist())),
            'wall_time': wall, 'real_time_factor': float(run.times[-1] / wall)}))
    return 0


def default_plot(robot: str, args: argparse.Namespace) -> str:
    """
    Return the default ``--plot`` file: ``demo_output/cc_dynamics_<robot>_<inputs>.png``.

    ``<inputs>`` is the profile's file name, or the inputs as given (``t0=3,t1=2``); two runs
    of the tour with different inputs no longer write over each other.
    """
    profile = args.pressures_csv or args.tensions_csv
    inputs = Path(profile).stem if profile else (args.tensions or args.pressures)
    slug = re.sub(r'[^A-Za-z0-9=.+-]+', '_', f'{robot}_{inputs}').strip('_')
    return f'demo_output/cc_dynamics_{slug}.png'


def read_inputs_profile(args: argparse.Namespace, model):
    """Return the :class:`InputProfile` of ``--tensions-csv``/``--pressures-csv``, or None."""
    path = args.pressures_csv or args.tensions_csv
    if path is None:
        return None
    quantity, unit = ('pressure', 'Pa') if model.kind == 'pressure' else ('tension', 'N')
    try:
        return read_profile(path, model.input_names, model.input_range, quantity, unit)
    except ProfileError as error:
        raise CommandError(f'--{quantity}s-csv: {error}') from None
