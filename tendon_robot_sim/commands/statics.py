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
``tendon-robot-sim statics``: solve the static equilibrium and report the tip pose.

    tendon-robot-sim statics --tensions 0,2,0,0
    tendon-robot-sim statics --model discrete --displacements t0=0.004 --json
    tendon-robot-sim statics --tensions 1,0,0,0 --tip-force 0,0,-0.05 --json
    tendon-robot-sim statics --tensions 0,3,0,0 --world config/world_post.yaml --json
    tendon-robot-sim statics --robot config/robot_friction.yaml --model discrete \
        --tensions-csv pull_release.csv --trajectory-out loop.csv

With ``--json`` the last line on stdout is one JSON object with ``tip_position``
[x, y, z] (m, base frame), ``tip_orientation`` [qx, qy, qz, qw], ``tensions`` (N),
``displacements`` (m), ``converged``, ``residual``, ``solve_time_ms``, ``stability``
(is the equilibrium stable: :mod:`~tendon_robot_sim.models.rod.statics.analysis.stability`;
an unstable one also warns on stderr, ``--no-stability`` skips it) and more (see
:meth:`tendon_robot_sim.models.rod.statics.solver.StaticsResult.to_dict`); with ``--world``
also ``contacts``, a list of ``{obstacle, s, point, normal, force, penetration}`` (arc length
in m, point and force in the world frame, the force on the robot in N, penetration in m) and
``max_penetration`` (m). The solve time includes no numba compilation: the command compiles
the solver's kernels first (or loads them from numba's cache), then times a cold solve.

``--tensions-csv`` or ``--displacements-csv`` (the format of ``simulate``'s input files: a column
``t`` and one per tendon) make a quasi-static sequence: the rows are solved in order, each from
the last. A tendon with ``friction: {law: sliding}`` then sticks and slides on its guides
(:mod:`~tendon_robot_sim.models.rod.statics.stick_slip`), so the result depends on the path: a
pull and release draws a hysteresis loop. ``--trajectory-out`` writes per row ``t,x,y,z`` (tip,
base frame), ``qx,qy,qz,qw``, then per tendon ``tension_<name>`` (at the motor, N),
``tip_tension_<name>`` (at the anchor, N) and ``displacement_<name>`` (m), and with ``--world``
``contact_fx,contact_fy,contact_fz``, the obstacles' total force on the robot (N, world frame,
as ``simulate``'s). A single solve of a robot with friction is the first state of such a
sequence: pulled from rest.
"""

import argparse
import dataclasses
import json
import sys

import numpy as np

from tendon_robot_sim import default_robot_file, progress_bar
from tendon_robot_sim.commands import (command_error, CommandError, input_file, NoResultError,
                                       OutputPath, parse_values, parse_vector, read_inputs)
from tendon_robot_sim.experiment.input_profile import input_problem
from tendon_robot_sim.files.outputs import open_output
from tendon_robot_sim.models.contact.report import total_force
from tendon_robot_sim.models.contact.world import load_world, WorldError
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.rod.statics.analysis.stability import check_stability, not_checked
from tendon_robot_sim.models.rod.statics.solver import CONSTITUTIVE_LAWS, MODELS, StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import (has_friction, plot_hysteresis,
                                                            StickSlipStatics)
from tendon_robot_sim.models.rod.tendons.inputs import tendon_values
from tendon_robot_sim.models.tendon_robot import load_robot


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'statics', help='solve the static equilibrium (shooting method) and print the tip pose',
        description='Solve the static equilibrium of the robot for given tendon tensions or '
                    'displacements (Cosserat-rod shooting method) and print the tip pose.')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--model', choices=MODELS, default='cosserat',
                        help='cosserat (default): continuous tendons, shear and extension; '
                             'kirchhoff: no shear or extension; discrete: tendons straight '
                             'between vertebrae, the static twin of the dynamic simulator')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--tensions', metavar='T',
                        help="tendon tensions in N: one per tendon ('0,2,0,0') or by name "
                             "('t1=2.0,t3=0.5', others 0)")
    inputs.add_argument('--displacements', metavar='Q',
                        help='tendon displacements in m, pulled in past the base (positive '
                             'pulls, negative lets out), each within the rod length either '
                             'way: one per tendon or by name')
    inputs.add_argument('--tensions-csv', metavar='FILE',
                        help='a quasi-static sequence of tensions: columns t and tendon names '
                             '[N], each row solved from the last (tendons with friction stick '
                             'and slide)')
    inputs.add_argument('--displacements-csv', metavar='FILE',
                        help='a quasi-static sequence of displacements: columns t and tendon '
                             'names [m], each row solved from the last')
    parser.add_argument('--trajectory-out', default=None, metavar='FILE.csv',
                        type=OutputPath('file', ('.csv',)),
                        help='with --tensions-csv or --displacements-csv: write the tip, the '
                             'tensions at motor and anchor and the displacements per row')
    parser.add_argument('--plot', default=None, metavar='FILE.png',
                        type=OutputPath('file', ('.png', '.svg', '.pdf')),
                        help='with --tensions-csv or --displacements-csv: plot the tip and the '
                             'tip tension against the input of the tendon that moves most '
                             '(rising solid, falling dashed: the hysteresis loop)')
    parser.add_argument('--tip-force', metavar='FX,FY,FZ', default=None,
                        help='external tip force in N, world frame (default: robot tip_load)')
    parser.add_argument('--tip-moment', metavar='MX,MY,MZ', default=None,
                        help='external tip moment in N m, world frame (default: robot tip_load)')
    parser.add_argument('--constitutive', choices=CONSTITUTIVE_LAWS, default=None,
                        help='constitutive law (default: pyelastica for discrete, else linear)')
    parser.add_argument('--world', default=None, metavar='FILE',
                        help='world description YAML: obstacles the robot touches (every model; '
                             'the discrete model touches with its discs; docs/tendon_robot.md, '
                             '"Contact with the world")')
    parser.add_argument('--no-stability', action='store_true',
                        help='skip the stability check of the equilibrium (second variation of '
                             'the energy, about 0.2 s; docs/tendon_robot.md, "Stability")')
    parser.add_argument('--json', action='store_true', help='end the output with one JSON line')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    tip_force = parse_vector(args.tip_force, '--tip-force')
    tip_moment = parse_vector(args.tip_moment, '--tip-moment')
    sequence = args.tensions_csv or args.displacements_csv
    for option, value in (('--trajectory-out', args.trajectory_out), ('--plot', args.plot)):
        if value is not None and not sequence:
            raise CommandError(f'{option}: needs a sequence, --tensions-csv or '
                               '--displacements-csv')
    try:
        robot = load_robot(path)
        world = None if args.world is None else load_world(args.world)
        if args.displacements is not None:
            _check_displacements(robot, args.displacements)
        if has_friction(robot) or sequence:
            return _sequence(args, robot, tip_force, tip_moment, world)
        solver = StaticsSolver(robot, args.model, constitutive=args.constitutive, world=world)
        if args.tensions is not None:
            values = parse_values(args.tensions, '--tensions')
            solve = solver.solve_tensions
        else:
            values = parse_values(args.displacements, '--displacements')
            solve = solver.solve_displacements
        solver.compile_kernels()
        result = solve(values, tip_force, tip_moment)
        if not args.no_stability:
            result = dataclasses.replace(result, stability=check_stability(
                solver, result, tip_force, tip_moment,
                displacements=args.displacements is not None))
    except (RobotDescriptionError, StaticsError, WorldError) as error:
        # one line: YAML parser messages span several
        raise command_error(error) from None
    beyond = result.beyond_limits(robot)
    if beyond:     # displacements only: tensions beyond the limits are refused as input
        raise NoResultError(f'--displacements{beyond}; no equilibrium within the limits')
    _report(args, robot, solver.constitutive, result)
    return 0


def _check_displacements(robot, text: str) -> None:
    """
    Refuse ``--displacements`` beyond the range of a ``--displacements-csv`` row (exit 2).

    Millimetres typed as metres (``t0=4``) were solved for seconds, then reported as an
    equilibrium out of reach (exit 1), where the same value in a file is refused.
    """
    values = tendon_values(parse_values(text, '--displacements'), 'displacements',
                           robot.tendon_names)
    problem = input_problem(values[None], robot, 'displacement')
    if problem is not None:
        _, column, why = problem
        raise CommandError(f'--displacements: {robot.tendon_names[column]}: {why}')


def _report(args: argparse.Namespace, robot, constitutive: str, result) -> None:
    """Print an equilibrium (and with --json its JSON line)."""
    np.set_printoptions(precision=6, suppress=True)
    print(f'robot {robot.name}, model {result.model} ({constitutive} law)')
    print(f'tip position [m]:     {result.tip_position}')
    print(f'tip orientation:      {result.tip_orientation}  [qx qy qz qw]')
    print(f'tensions [N]:         {result.tensions}')
    if result.tip_tensions is not None:
        print(f'tip tensions [N]:     {result.tip_tensions}')
    print(f'displacements [m]:    {result.tendon_displacements}')
    print(f'residual {result.residual:.3g} after {result.iterations} Newton iterations, '
          f'cold solve {result.solve_time * 1e3:.2f} ms')
    for contact in result.contacts or ():
        print(f'contact {contact.obstacle} at s = {contact.s:.4f} m: force [N] {contact.force}, '
              f'penetration {contact.penetration * 1e6:.1f} um')
    stability = result.stability
    if stability is not None:
        print('stability:            ' + (
            f'not checked ({stability.reason})' if stability.stable is None else
            f'{"stable" if stability.stable else "UNSTABLE"}, smallest eigenvalue '
            f'{stability.min_eigenvalue:.4g} E I / L, {stability.negative_modes} negative and '
            f'{stability.neutral_modes} neutral modes'))
        if stability.warning():
            print(stability.warning(), file=sys.stderr)
    if args.json:
        print(json.dumps({'robot': robot.name, 'constitutive': constitutive,
                          **result.to_dict()}))


def _sequence(args: argparse.Namespace, robot, tip_force, tip_moment, world) -> int:
    """
    Solve a quasi-static sequence (or one state pulled from rest), each state from the last.

    Rows solved before a failure are still written to --trajectory-out (none solved: the
    file is left as it was). A row whose
    equilibrium needs more than a tendon's max_tension ends the sequence (exit 1), written
    after them.
    """
    solver = StickSlipStatics(robot, args.model, constitutive=args.constitutive, world=world)
    solver.set_tip_load(robot.tip_load.force if tip_force is None else tip_force,
                        robot.tip_load.moment if tip_moment is None else tip_moment)
    if args.tensions_csv or args.displacements_csv:
        field = 'tension' if args.tensions_csv else 'displacement'
        option = '--tensions-csv' if args.tensions_csv else '--displacements-csv'
        profile = read_inputs(args.tensions_csv or args.displacements_csv, option, robot, field)
        times, rows = profile.times, profile.values
        if args.plot is not None and len(rows) < 2:     # a curve needs two states
            raise CommandError(f'--plot: draws the states against their input, and {option} '
                               'has one row; give two or more, or leave --plot out')
    else:
        field = 'tension' if args.tensions is not None else 'displacement'
        option = '--tensions' if args.tensions is not None else '--displacements'
        rows = [parse_values(args.tensions if args.tensions is not None
                             else args.displacements, option)]
        times = np.zeros(1)
    solve = solver.solve_tensions if field == 'tension' else solver.solve_displacements
    names = robot.tendon_names
    header = (['t', 'x', 'y', 'z', 'qx', 'qy', 'qz', 'qw'] + [f'tension_{n}' for n in names]
              + [f'tip_tension_{n}' for n in names] + [f'displacement_{n}' for n in names]
              + (['contact_fx', 'contact_fy', 'contact_fz'] if world is not None else []))
    if len(rows) == 1 and not (args.tensions_csv or args.displacements_csv):
        try:    # compile the kernels first: the solve time is that of a solve from rest
            solve(rows[0])
            solver.reset()
        except StaticsError as error:
            raise command_error(error) from None
    out, result, failure, beyond = [], None, None, None
    for k in progress_bar(range(len(rows)), len(rows) > 1, desc='states', unit='state'):
        try:
            result = solve(rows[k])
        except StaticsError as error:
            # as a single solve's: no state found (not converged) exit 1, a bad row exit 2
            failure = type(command_error(error))(
                ' '.join(f'{option}: row {k + 1} (t = {times[k]:g} s): {error}'.split()))
            break
        contact = () if world is None else (total_force(result.contacts),)
        out.append(np.concatenate(([times[k]], result.tip_position,
                                   rotation_to_quaternion(result.tip_rotation),
                                   result.tensions, result.tip_tensions,
                                   result.tendon_displacements, *contact)))
        # displacements only (tensions beyond the limits are refused as input): no state of
        # the robot, nor one the next row could start from
        beyond = result.beyond_limits(robot)
        if beyond:
            if len(rows) > 1:
                beyond += f' in row {k + 1} (t = {times[k]:g} s)'
            break
    table = np.array(out).reshape(-1, len(header))
    kept = ''
    if args.trajectory_out is not None and len(table):    # no row: an older file is kept
        with open_output(args.trajectory_out) as handle:
            np.savetxt(handle, table, delimiter=',', header=','.join(header), comments='',
                       fmt='%.10g')
        kept = f'; the rows solved are in {args.trajectory_out}'
    if args.plot is not None and len(table) > 1:
        n = len(names)
        inputs = table[:, 8:8 + n] if field == 'tension' else table[:, 8 + 2 * n:8 + 3 * n]
        i = int(np.argmax(np.ptp(inputs, axis=0)))
        unit = 'N' if field == 'tension' else 'm'
        plot_hysteresis(inputs[:, i], table[:, 1:4], table[:, 8 + i], table[:, 8 + n + i],
                        f'{field} of {names[i]} at the motor [{unit}]', args.plot)
        print(f'wrote {args.plot}')
    if failure:
        raise type(failure)(f'{failure}{kept}')
    if beyond:
        raise NoResultError(f'{option}{beyond}; no equilibrium within the limits{kept}')
    if len(rows) > 1:
        print(f'{len(rows)} states solved in sequence; the last:')
    if not args.no_stability:
        result = dataclasses.replace(result, stability=not_checked(
            'path-dependent statics (a sequence, tendon friction or bending friction)'))
    _report(args, robot, solver.constitutive, result)
    return 0
