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
``tendon-robot-sim pcr``: kinetostatics of the 6-RUS parallel continuum robot.

    tendon-robot-sim pcr ik --position 0.05,0,0.45 --orientation-deg 0,0,10 --force 0,0,-5
    tendon-robot-sim pcr fk --motor-angles-deg 10,10,12,12,8,8 --force 0,0,-5 --json
    tendon-robot-sim pcr ik --position 0,0,0.5 --json | tendon-robot-sim pcr fk --from-json -
    tendon-robot-sim pcr workspace --out pcr_workspace --workers 2
    tendon-robot-sim pcr workspace --orientations-deg '0,0,0;0,0,20;0,0,-20' --per-height 100
    tendon-robot-sim pcr workspace --scheduler tcp://cluster:8786 --heights 0.4:0.7:16
    tendon-robot-sim pcr stiffness | sweep --yaw 0:90:46 | trajectory --helix (pcr_studies)

Angles on the command line are degrees, and their options say so (``-deg``; orientation:
roll, pitch, yaw with R_e = Rz Ry Rx); the JSON is SI (radians), and ``fk --from-json``
reads the motor angles of an ``ik --json`` result as they are. Forces N, moments N m,
positions m, world frame. ``ik`` and ``fk`` print the pose, the
motor and universal-joint angles and the rod base wrenches; with ``--json`` the last line
is one JSON object
(:meth:`tendon_robot_sim.models.pcr.kinetostatics.PcrResult.to_dict`: SI units, angles
in rad, plus ``motor_angles_deg``). ``workspace`` solves the inverse problem over a
cylinder of platform positions (default: the paper's 16 heights x 250 points) on all
local cores or a Dask cluster, with a progress bar, and writes ``workspace.csv`` and
``workspace.png`` (the paper's Fig. 6; a position counts as reachable when it is valid at
every orientation of ``--orientations-deg``) into ``--out``. The solve time of ``ik``/``fk`` is
that of a cold solve after one that loaded the compiled kernels.
"""

import argparse
import json
import math
from pathlib import Path
import sys

import numpy as np

from tendon_robot_sim.commands import (add_scheduler_options, command_error, CommandError,
                                       input_file, NoResultError, OutputPath, parse_vector,
                                       pcr_studies, positive, positive_int,
                                       scheduler_of, VECTOR_KEYS, worker_count)
from tendon_robot_sim.files.outputs import make_new_folders, removed_on_failure
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import check_range, RobotDescriptionError
from tendon_robot_sim.models.pcr.clearance import rod_clearance
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import COMPAT, default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.stability import instability
from tendon_robot_sim.models.pcr.workspace import (cylinder_samples, HEIGHTS, PER_HEIGHT, RADIUS,
                                                   workspace)
from tendon_robot_sim.parallel import ParallelError

# About 1.6 ms per solve on one core: 10^7 solves are about 5 core-hours.
MAX_WORKSPACE_SOLVES = 10_000_000


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'pcr', help='6-RUS parallel continuum robot: inverse/forward kinetostatics, workspace, '
                    "stiffness, the paper's studies",
        description='Kinetostatics of the 6-RUS parallel continuum robot (Cosserat rods, '
                    'shooting method).')
    actions = parser.add_subparsers(dest='action', required=True, metavar='ACTION')
    ik = actions.add_parser('ik', help='platform pose and wrench -> motor angles')
    ik.add_argument('--position', required=True, metavar='X,Y,Z',
                    help='platform centre in m, world frame')
    ik.add_argument('--orientation-deg', default='0,0,0', metavar='ROLL,PITCH,YAW',
                    help='platform orientation in deg (R_e = Rz Ry Rx; default level)')
    fk = actions.add_parser('fk', help='motor angles and wrench -> platform pose')
    angles = fk.add_mutually_exclusive_group(required=True)
    angles.add_argument('--motor-angles-deg', metavar='Q1,...,Q6',
                        help='the six motor angles in deg')
    angles.add_argument('--from-json', metavar='FILE',
                        help="the motor angles of an 'ik --json' result: its last JSON line "
                             "('motor_angles', rad), from FILE or - for standard input; solved "
                             'under its force, moment and compat unless given here')
    ws = actions.add_parser('workspace', help='reachable workspace (PNG + CSV)')
    ws.add_argument('--heights', default=f'{HEIGHTS[0]:g}:{HEIGHTS[-1]:g}:{HEIGHTS.size}',
                    metavar='LOW:HIGH:N', help='platform heights in m (default %(default)s)')
    ws.add_argument('--per-height', type=positive_int, default=PER_HEIGHT, metavar='N',
                    help='samples per height (default %(default)s)')
    ws.add_argument('--radius', type=positive, default=RADIUS, metavar='M',
                    help='cylinder radius in m (default %(default)s)')
    ws.add_argument('--orientations-deg', default='0,0,0', metavar='R,P,Y;R,P,Y...',
                    help='platform orientations in deg, each position solved at each; a '
                         'position is reachable when valid at all (default level)')
    ws.add_argument('--workers', type=worker_count, default=None, metavar='N',
                    help='local processes (default: all cores; 1: none; at most the cores and '
                         'the tasks run)')
    add_scheduler_options(ws)
    ws.add_argument('--out', default='pcr_workspace', metavar='DIR', type=OutputPath('folder'),
                    help='folder for workspace.csv and workspace.png (default %(default)s)')
    pcr_studies.add_parsers(actions)
    for action in (ik, fk, ws):
        action.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                            help='kind: pcr_6rus description (default: config/pcr_6rus.yaml)')
        action.add_argument('--compat', choices=COMPAT, default=None,
                            help="model: the paper's, or the authors' published code "
                                 "(default: the description's compat)")
        action.add_argument('--force', default=None, metavar='FX,FY,FZ',
                            help='external force at the platform centre in N, world frame '
                                 "(default: the description's load)")
        action.add_argument('--moment', default=None, metavar='MX,MY,MZ',
                            help="external moment in N m (default: the description's load)")
        action.add_argument('--json', action='store_true',
                            help='end the output with one JSON line')
    parser.set_defaults(func=run)


def _json_solution(source: str) -> dict:
    """
    Read the motor angles [rad] of an ``ik --json`` output and what they were solved under.

    From its last JSON line with ``motor_angles`` (file or -): those, and where the line has
    them ``force`` [N], ``moment`` [N m] and ``compat``; ik's motor angles hold its pose under
    that load in that model only.
    """
    try:
        text = sys.stdin.read() if source == '-' else Path(source).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f'--from-json: cannot read {source}: '
                           f'{getattr(error, "strerror", None) or error}') from None
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and 'motor_angles' in data:
            solved = {key: _json_numbers(data[key], key, count, unit) for key, count, unit
                      in (('motor_angles', 6, 'rad'), ('force', 3, 'N'), ('moment', 3, 'N m'))
                      if key in data}
            if 'compat' in data:
                if data['compat'] not in COMPAT:
                    raise CommandError(f'--from-json: compat must be one of {list(COMPAT)}, '
                                       f'got {str(data["compat"])[:80]}')
                solved['compat'] = data['compat']
            return solved
    raise CommandError(f"--from-json: {source} has no JSON line with 'motor_angles' (the last "
                       "line of 'tendon-robot-sim pcr ik --json')")


def _json_numbers(values, key: str, count: int, unit: str) -> np.ndarray:
    if not (isinstance(values, list) and len(values) == count
            and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                    and math.isfinite(v) for v in values)):
        raise CommandError(f'--from-json: {key} must be {count} finite numbers ({unit}), '
                           f'got {str(values)[:80]}')
    for i, value in enumerate(values):     # a load keeps the range of the option's
        try:
            check_range(value, f'--from-json: {key}[{i}]', VECTOR_KEYS.get(key))
        except RobotDescriptionError as error:
            raise CommandError(str(error)) from None
    return np.array(values, dtype=float)


def _heights(text: str) -> np.ndarray:
    try:
        low, high, count = text.split(':')
        low, high, count = float(low), float(high), int(count)
    except ValueError:
        raise CommandError(f'--heights: must be LOW:HIGH:N, got {text!r}') from None
    if count < 1 or not high >= low or not math.isfinite(high - low):
        raise CommandError(f'--heights: need finite LOW <= HIGH and N >= 1, got {text!r}')
    pcr_studies.one_of_range(count, low, high, text, '--heights')
    return np.linspace(low, high, count)


def _beyond_reach(robot, position: np.ndarray) -> str:
    """
    Return the hint for an ik position beyond any pose of ``robot``, or ''.

    Often millimetres or centimetres typed as metres (``0,0,55``): the solver alone said only
    that it did not converge.
    """
    distance = float(np.linalg.norm(position))
    if distance <= robot.reach:
        return ''
    return (f'; --position is {distance:g} m from the base, far outside the workspace (no pose '
            f'of {robot.name} reaches beyond {robot.reach:.3g} m): positions are in metres, '
            f'{_scaled(position, 1e-3)} if these were millimetres, {_scaled(position, 1e-2)} '
            'if centimetres')


def _scaled(vector: np.ndarray, factor: float) -> str:
    return ','.join(f'{v * factor:.6g}' for v in vector)


def run(args: argparse.Namespace) -> int:
    if args.action in pcr_studies.ACTIONS:
        return pcr_studies.run(args)
    force = parse_vector(args.force, '--force')
    moment = parse_vector(args.moment, '--moment')
    compat = args.compat
    if args.action == 'fk' and args.from_json is not None:
        # the ik's load and model unless given here: its motor angles hold its pose under them
        solved = _json_solution(args.from_json)
        force = solved.get('force') if args.force is None else force
        moment = solved.get('moment') if args.moment is None else moment
        compat = solved.get('compat') if compat is None else compat
    hint = ''
    try:
        robot = load_pcr_robot(args.robot or default_pcr_file())
        if compat is not None:
            robot = robot.with_changes(compat=compat)
        if args.action == 'workspace':
            return _workspace(args, robot, force, moment)
        solver = PcrSolver(robot)
        if args.action == 'ik':
            position = parse_vector(args.position, '--position')
            hint = _beyond_reach(robot, position)
            orientation = pcr_studies.degrees(args.orientation_deg, '--orientation-deg', 3)
            inputs = (position, orientation, force, moment)
            solve = solver.inverse
        else:
            motor_angles = (solved['motor_angles'] if args.from_json is not None else
                            pcr_studies.degrees(args.motor_angles_deg, '--motor-angles-deg', 6))
            inputs = (motor_angles, force, moment)
            solve = solver.forward
        solve(*inputs)       # loads (or compiles) the kernels
        solver.reset()
        result = solve(*inputs)
    except (RobotDescriptionError, StaticsError) as error:
        failed = command_error(error)
        if args.action == 'ik' and isinstance(error, StaticsError):
            failed = type(failed)(f'{failed}{hint}')
        raise failed from None
    # a solution beyond the limits is refused for that; hold_motors needs it within them
    unstable = (instability(solver, result)
                if args.action == 'ik' and result.within_limits else None)
    clearance = rod_clearance(robot, result)
    np.set_printoptions(precision=6, suppress=True)
    print(f'robot {robot.name} ({robot.compat} model), {args.action}')
    print(f'platform position [m]:     {result.position}')
    print(f'platform rpy [deg]:        {np.degrees(result.orientation)}')
    print(f'motor angles q1 [deg]:     {np.degrees(result.motor_angles)}'
          + ('' if result.within_limits else '  OUTSIDE THE MOTOR LIMITS'))
    print('universal joints q2, q3 [deg]:')
    print(np.degrees(result.joint_angles))
    print('rod base forces n(0) [N]:')
    print(result.base_forces)
    print(f'residual {result.residual:.3g} after {result.iterations} Newton iterations, '
          f'{result.evaluations} rod integrations, cold solve {result.solve_time * 1e3:.2f} ms')
    print(f'rod clearance:             {clearance.says()}')
    if unstable:
        print('UNSTABLE: an equilibrium the robot cannot hold')
    if not clearance.clear:
        print('RODS INTERSECT: a pose the robot cannot take')
    if args.json:
        stable = {'stable': not unstable} if args.action == 'ik' else {}
        print(json.dumps({'robot': robot.name, 'compat': robot.compat, **result.to_dict(),
                          **stable, 'rods_clear': clearance.clear,
                          'rod_clearance': clearance.gap}))
    # fk refuses motor angles beyond the limits as input; ik's are its output
    beyond = result.beyond_limits(robot)
    if beyond:
        # printed above all the same, as a workspace's files are kept
        raise NoResultError(f'--position, --orientation-deg: {beyond}')
    if unstable:
        raise NoResultError(f'--position, --force: {unstable}')
    if not clearance.clear:
        given = ('--position, --orientation-deg' if args.action == 'ik'
                 else '--from-json' if args.from_json is not None else '--motor-angles-deg')
        raise NoResultError(f'{given}: {clearance.says()}: an equilibrium of the model that '
                            'the robot cannot reach')
    return 0


def _orientations(text: str) -> list[np.ndarray]:
    """R,P,Y;R,P,Y... in deg; an error names the orientation of several that is bad."""
    items = text.split(';')
    if len(items) == 1:
        return [pcr_studies.degrees(text, '--orientations-deg', 3)]
    for k, item in enumerate(items):
        if not item.strip():
            raise CommandError(f'--orientations-deg: orientation {k + 1} of {len(items)} is '
                               "empty (a ';' too many?)")
    return [pcr_studies.degrees(item, f'--orientations-deg (orientation {k + 1})', 3)
            for k, item in enumerate(items)]


def _workspace(args, robot, force, moment) -> int:
    heights = _heights(args.heights)
    orientations = _orientations(args.orientations_deg)
    solves = heights.size * args.per_height * len(orientations)
    if solves > MAX_WORKSPACE_SOLVES:
        raise CommandError(f'--heights, --per-height, --orientations-deg: {solves:.3g} solves, '
                           f'more than {MAX_WORKSPACE_SOLVES:.0e} (about 5 core-hours); '
                           'sample more coarsely')
    positions = cylinder_samples(args.radius, heights, args.per_height)
    out = Path(args.out)
    try:
        created = make_new_folders(out)
    except OSError as error:
        raise CommandError(f'--out: cannot create {out}: {error.strerror}') from None
    try:
        with removed_on_failure(created):
            result = workspace(robot, positions, orientations, force, moment, args.workers,
                               scheduler_of(args))
    except ParallelError as error:
        raise command_error(error) from None
    result.write_csv(out / 'workspace.csv')
    result.plot(out / 'workspace.png', f'{robot.name} ({robot.compat} model), platform '
                f'orientations {np.round(np.degrees(orientations), 2).tolist()} deg')
    summary = result.summary()
    if not summary['valid']:
        # a workspace of no pose is no workspace: exit 1, as a sweep out of reach (files kept)
        raise NoResultError(f'--radius, --heights: none of the {summary["samples"]} samples is '
                            f'reachable within the motor limits ({summary["converged"]} '
                            f'converged); wrote {out / "workspace.csv"} and '
                            f'{out / "workspace.png"}')
    print(f'{summary["valid"]} of {summary["samples"]} samples valid (converged and within '
          f'the motor limits [{math.degrees(robot.motor_limits[0]):g}, '
          f'{math.degrees(robot.motor_limits[1]):g}] deg; '
          f'{summary["valid"] - summary["valid_rods_clear"]} of them with two rods through '
          f'each other), {summary["reachable_positions"]} '
          f'of {summary["positions"]} positions reachable, in {result.wall_time:.1f} s; '
          f'converged solves {summary["converged_solve_ms_mean"]:.2f} ms mean, '
          f'{summary["converged_solve_ms_sd"]:.2f} ms sd')
    print(f'wrote {out / "workspace.csv"} and {out / "workspace.png"}')
    if args.json:
        print(json.dumps({'robot': robot.name, 'compat': robot.compat, **summary}))
    return 0
