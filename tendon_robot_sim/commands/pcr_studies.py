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
``tendon-robot-sim pcr stiffness|sweep|trajectory``: the parallel robot's studies.

    tendon-robot-sim pcr stiffness                                   # at rest, 0.4 m up
    tendon-robot-sim pcr stiffness --position 0,0,0.45 --force 0,0,-20 --method differences
    tendon-robot-sim pcr stiffness --motor-angles-deg 10,10,12,12,8,8 --json
    tendon-robot-sim pcr sweep --yaw 0:90:46 --out pcr_rotation       # Fig. 4b
    tendon-robot-sim pcr sweep --force 10:300:30 --out pcr_compression  # Fig. 4a, 267 N
    tendon-robot-sim pcr trajectory --helix --out pcr_helix           # Fig. 5

The studies of Rodrigues et al. 2024 (Sec. 4), see docs/pcr.md. ``stiffness`` prints the
6 x 6 tangent Cartesian stiffness with the motors held (world frame, at the platform centre)
and the axial value k_z = 1 / C_zz, at a pose (the motors found by inverse kinetostatics
under the load) or at motor angles. ``sweep`` follows the inverse solutions over the yaw
angles [deg] or the downward forces [N] (LOW:HIGH:N) branch by branch, with a progress bar,
and writes ``rotation.csv``/``rotation.png`` or ``compression.csv``/``compression.png``;
``trajectory --helix`` writes ``helix.csv`` and ``helix.png``. Output folders are checked
before the work starts.
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np

from tendon_robot_sim.commands import (check_output, command_error, CommandError, input_file,
                                       NoResultError, OutputPath, parse_values, parse_vector,
                                       positive, within)
from tendon_robot_sim.files.outputs import make_folder
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.pcr.kinetostatics import helix, PcrSolver, rigid_inverse
from tendon_robot_sim.models.pcr.robot import COMPAT, default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.stability import unstable_because
from tendon_robot_sim.models.pcr.stiffness import stiffness, stiffness_by_differences
from tendon_robot_sim.models.pcr.studies import (compression_study, helix_study,
                                                 REST_POSITION, rotation_sweep,
                                                 write_compression_csv, write_helix_csv,
                                                 write_rotation_csv)

ACTIONS = ('stiffness', 'sweep', 'trajectory')
MAX_SAMPLES = 100_000
# Beyond a few hundred newtons the rods buckle; 10 kN bounds what a sweep may ask for.
MAX_FORCE = 1e4
# Most any angle of the command line may be either way [deg]: a turn; 1e9 deg was solved as
# an angle (or refused by a name the user never gave, such as motor_angles[0]).
MAX_ANGLE_DEG = 360.0
# Turns of the helix: as many as a tendon's helix may make (PHYSICAL_RANGES 'turns'); fewer
# than POINTS_PER_TURN points a turn trace a zig-zag, not a helix.
HELIX_TURNS = (1e-3, 1e3)
POINTS_PER_TURN = 4
REST = ','.join(f'{v:g}' for v in REST_POSITION)


def add_parsers(actions) -> None:
    """Add the ``stiffness``, ``sweep`` and ``trajectory`` sub-commands of ``pcr``."""
    st = actions.add_parser('stiffness', help='6x6 Cartesian stiffness with the motors held')
    where = st.add_mutually_exclusive_group()
    where.add_argument('--position', default=None, metavar='X,Y,Z',
                       help=f'platform centre in m (default {REST}); the motors come from '
                            'inverse kinetostatics under --force/--moment')
    where.add_argument('--motor-angles-deg', metavar='Q1,...,Q6',
                       help='hold these motor angles (deg) instead')
    st.add_argument('--orientation-deg', default='0,0,0', metavar='ROLL,PITCH,YAW',
                    help='platform orientation with --position (default level)')
    st.add_argument('--force', default=None, metavar='FX,FY,FZ',
                    help='external force at the platform centre at the equilibrium, N, world '
                         "frame (default: the description's load)")
    st.add_argument('--moment', default=None, metavar='MX,MY,MZ',
                    help='external moment about the platform centre, N m (default: the '
                         "description's load)")
    st.add_argument('--method', choices=('variational', 'differences'), default='variational',
                    help='variational equations (one linear solve) or central differences of '
                         '12 forward solves (default %(default)s)')
    sw = actions.add_parser('sweep', help="the paper's rotation or compression study "
                                          '(CSV + PNG)')
    what = sw.add_mutually_exclusive_group(required=True)
    what.add_argument('--yaw', metavar='LOW:HIGH:N',
                      help='platform yaw angles in deg (the paper: 0:90)')
    what.add_argument('--force', metavar='LOW:HIGH:N',
                      help='downward forces in N at the platform centre (the paper: 10:300:30)')
    sw.add_argument('--position', default=REST, metavar='X,Y,Z',
                    help='platform centre in m (default %(default)s, the rest height)')
    sw.add_argument('--out', default='pcr_sweep', metavar='DIR', type=OutputPath('folder'),
                    help='folder for rotation.* or compression.* (default %(default)s)')
    tr = actions.add_parser('trajectory', help='follow the helix: FK(IK) error (CSV + PNG)')
    tr.add_argument('--helix', action='store_true',
                    help="the paper's helix (Fig. 5): the default, and so far the only path")
    tr.add_argument('--radius', type=positive, default=0.25, metavar='M',
                    help='helix radius in m (default %(default)s)')
    tr.add_argument('--heights', default='0.4:0.55', metavar='LOW:HIGH',
                    help='start and end height in m (default %(default)s)')
    tr.add_argument('--turns', type=within(*HELIX_TURNS), default=1.0, metavar='N',
                    help="turns (default %(default)s, as the authors' code)")
    tr.add_argument('--points', type=within(2, MAX_SAMPLES, kind=int), default=500,
                    metavar='N', help='points along the helix, at least '
                                      f'{POINTS_PER_TURN} a turn (default %(default)s)')
    tr.add_argument('--force', default='0,0,-5', metavar='FX,FY,FZ',
                    help="force at the platform centre in N (default %(default)s, the paper's)")
    tr.add_argument('--out', default='pcr_trajectory', metavar='DIR', type=OutputPath('folder'),
                    help='folder for helix.csv and helix.png (default %(default)s)')
    for action in (st, sw, tr):
        action.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                            help='kind: pcr_6rus description (default: config/pcr_6rus.yaml)')
        action.add_argument('--compat', choices=COMPAT, default=None,
                            help="model: the paper's, or the authors' published code "
                                 "(default: the description's compat)")
        action.add_argument('--json', action='store_true',
                            help='end the output with one JSON line')


def output_folder(folder: Path, option: str, names) -> Path:
    """Create ``folder`` (checked by :class:`OutputPath`); CommandError if a name is a folder."""
    make_folder(folder)
    for name in names:
        check_output(folder / name, option, 'file')
    return folder


def _range(text: str, option: str, count: int = 3) -> np.ndarray:
    """LOW:HIGH:N (count 3, N samples) or LOW:HIGH (count 2) of finite numbers."""
    parts = text.split(':')
    try:
        if len(parts) != count:
            raise ValueError
        low, high = float(parts[0]), float(parts[1])
        samples = int(parts[2]) if count == 3 else 2
    except ValueError:
        shape = 'LOW:HIGH:N' if count == 3 else 'LOW:HIGH'
        raise CommandError(f'{option}: must be {shape}, got {text!r}') from None
    if not (math.isfinite(low) and math.isfinite(high) and high >= low):
        raise CommandError(f'{option}: need finite LOW <= HIGH, got {text!r}')
    if not 1 <= samples <= MAX_SAMPLES:
        raise CommandError(f'{option}: N must be within [1, {MAX_SAMPLES}], got {text!r}')
    one_of_range(samples, low, high, text, option)
    return np.linspace(low, high, samples)


def one_of_range(samples: int, low: float, high: float, text: str, option: str) -> None:
    """Refuse N = 1 of LOW < HIGH: linspace gives LOW alone, as if HIGH were not given."""
    if samples == 1 and high > low:
        raise CommandError(f'{option}: N = 1 samples LOW alone; give N >= 2 for LOW < HIGH, '
                           f'got {text!r}')


def degrees(text: str, option: str, count: int) -> np.ndarray:
    """``count`` angles in deg of an option (``'0,0,10'``), each within a turn; in rad."""
    values = parse_values(text, option)
    if not isinstance(values, list) or len(values) != count:
        raise CommandError(f'{option}: must be {count} comma-separated numbers, got {text!r}')
    for index, value in enumerate(values):
        if abs(value) > MAX_ANGLE_DEG:
            raise CommandError(f'{option}: item {index} ({value:g} deg) must be within '
                               f'[-{MAX_ANGLE_DEG:g}, {MAX_ANGLE_DEG:g}] deg')
    return np.radians(values)


def run(args: argparse.Namespace) -> int:
    """Run one of :data:`ACTIONS` (parsed by :func:`add_parsers`)."""
    jobs = {'stiffness': _stiffness, 'sweep': _sweep, 'trajectory': _trajectory}
    try:
        robot = load_pcr_robot(args.robot or default_pcr_file())
        if args.compat is not None:
            robot = robot.with_changes(compat=args.compat)
        return jobs[args.action](args, robot)
    except (RobotDescriptionError, StaticsError) as error:
        raise command_error(error) from None


def _print_json(args, robot, data: dict) -> None:
    if args.json:
        print(json.dumps({'robot': robot.name, 'compat': robot.compat, **data}))


def _stiffness(args, robot) -> int:
    force = parse_vector(args.force, '--force')
    moment = parse_vector(args.moment, '--moment')
    solver = PcrSolver(robot)
    if args.motor_angles_deg is not None:
        q1 = degrees(args.motor_angles_deg, '--motor-angles-deg', 6)
        where = f'motor angles {np.round(np.degrees(q1), 4).tolist()} deg held'
    else:
        position = parse_vector(args.position or REST, '--position')
        orientation = degrees(args.orientation_deg, '--orientation-deg', 3)
        pose = solver.inverse(position, orientation, force, moment)
        beyond = pose.beyond_limits(robot)
        if beyond:
            raise NoResultError(f'--position: {beyond}')
        solver.hold_motors()
        q1 = pose.motor_angles
        where = 'the motors that hold this pose held'
    method = stiffness if args.method == 'variational' else stiffness_by_differences
    try:
        result = method(solver, q1, force, moment)
    except np.linalg.LinAlgError:
        raise NoResultError('the tangent stiffness is singular here (a limit point of the '
                            'equilibria)') from None
    e = result.equilibrium
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    print(f'robot {robot.name} ({robot.compat} model), tangent stiffness by the '
          f'{result.method} method, {where}')
    print(f'platform position [m]: {e.position}, rpy [deg]: {np.degrees(e.orientation)}')
    print(f'motor angles q1 [deg]: {np.degrees(e.motor_angles)}')
    print(f'load: force {e.force} N, moment {e.moment} N m (world frame, at the platform '
          'centre)')
    print('K = d[F, M] / d[delta p, delta theta], world frame at the platform centre '
          '(N/m, N/rad; N m/m, N m/rad):')
    print(result.matrix)
    print(f'axial stiffness k_z = 1 / C_zz = {result.axial:.6g} N/m (z force per z '
          f'displacement, the platform otherwise free); K_zz = {result.matrix[2, 2]:.6g} N/m')
    unstable = unstable_because(robot, e, result.matrix)
    print(f'UNSTABLE with the motors held: {unstable}' if unstable else
          'stable with the motors held (no rod buckled, K positive definite)')
    _print_json(args, robot, {**result.to_dict(), 'stable': unstable is None})
    return 0


def _branches(sweep, unit: str, scale: float = 1.0) -> list[str]:
    return [b.describe(unit, scale) for b in sweep.branches]


def _check_reach(robot, positions, yaws, option: str) -> None:
    """
    Raise NoResultError before any work when the rigid-link robot reaches none of the poses.

    A cold solve starts from the rigid-link solution and gives up where there is none
    (docs/pcr.md), so no sample of such a study could be solved.
    """
    for position, yaw in zip(positions, yaws):
        if np.all(np.isfinite(rigid_inverse(robot, position, (0.0, 0.0, yaw)))):
            return
    raise NoResultError(f'{option}: out of reach of the robot at every sample (even of its '
                        'rigid-link version)')


def _unsolved(values, solved, unit: str) -> None:
    if not solved.all():
        missing = ', '.join(f'{v:g}' for v in values[~solved][:12])
        more = ', ...' if (~solved).sum() > 12 else ''
        print(f'no solution found at {missing}{more} {unit}: no branch followed reaches them '
              'and cold starts find none')


def _crossed(values, clearances, unit: str) -> list[float]:
    """Print where two rods pass through each other (clearance below 0); return those values."""
    with np.errstate(invalid='ignore'):
        crossed = values[clearances < 0.0]
    if crossed.size:
        listed = ', '.join(f'{v:g}' for v in crossed[:12]) + (', ...' if crossed.size > 12 else '')
        print(f'two rods pass through each other at {listed} {unit} (rod_clearance_m below 0): '
              'equilibria of the model the robot cannot take')
    return crossed.tolist()


def _sweep(args, robot) -> int:
    position = np.asarray(parse_vector(args.position, '--position'))
    if args.yaw is not None:
        yaws = _range(args.yaw, '--yaw')
        if np.max(np.abs(yaws)) > MAX_ANGLE_DEG:
            raise CommandError(f'--yaw: within [-{MAX_ANGLE_DEG:g}, {MAX_ANGLE_DEG:g}] deg, got '
                               f'{args.yaw!r}')
        out = output_folder(args.out, '--out', ('rotation.csv', 'rotation.png'))
        _check_reach(robot, [position] * yaws.size, np.radians(yaws), '--position')
        sweep = rotation_sweep(robot, np.radians(yaws), position)
        if not sweep.converged.any():
            raise NoResultError(f'--yaw: no inverse solution at any yaw of {args.yaw!r}')
        from tendon_robot_sim.models.pcr.figures import plot_rotation
        write_rotation_csv(sweep, out / 'rotation.csv')
        plot_rotation(sweep, robot, out / 'rotation.png', f'{robot.name} ({robot.compat} '
                      f'model): platform yaw at {position.tolist()} m')
        unstable = yaws[sweep.data['stable'] == 0.0]
        summary = {'samples': int(yaws.size), 'solved': int(sweep.converged.sum()),
                   'branches': [[math.degrees(b.low), math.degrees(b.high), b.low_end,
                                 b.high_end] for b in sweep.branches],
                   'unstable_from_deg': float(unstable[0]) if unstable.size else None}
        print(f'{summary["solved"]} of {yaws.size} yaw angles solved; '
              + '; '.join(_branches(sweep, 'deg', 180.0 / math.pi)))
        _unsolved(yaws, sweep.converged, 'deg')
        summary['rods_crossed_deg'] = _crossed(yaws, sweep.data['clearance'], 'deg')
        if unstable.size:
            print(f'unstable with the motors held from {unstable[0]:g} deg (sampled)')
        print(f'wrote {out / "rotation.csv"} and {out / "rotation.png"}')
    else:
        forces = _range(args.force, '--force')
        if forces[0] < 0.0 or forces[-1] > MAX_FORCE:
            raise CommandError(f'--force: downward forces within [0, {MAX_FORCE:g}] N, got '
                               f'{args.force!r}')
        out = output_folder(args.out, '--out', ('compression.csv', 'compression.png'))
        _check_reach(robot, [position], [0.0], '--position')
        study = compression_study(robot, forces, position)
        if not study.inverse.converged.any():
            raise NoResultError(f'--force: no inverse solution at any force of {args.force!r}')
        from tendon_robot_sim.models.pcr.figures import plot_compression
        write_compression_csv(study, out / 'compression.csv')
        plot_compression(study, robot, out / 'compression.png', f'{robot.name} '
                         f'({robot.compat} model): downward force at {position.tolist()} m')
        held = study.held
        summary = {'samples': int(forces.size), 'solved': int(study.inverse.converged.sum()),
                   'largest_force': study.largest_force,
                   'branches': [[b.low, b.high, b.low_end, b.high_end]
                                for b in study.inverse.branches],
                   'held_limit_force': held.branches[0].high if held.branches else None,
                   'held_fitted_stiffness': study.fitted_stiffness}
        print(f'{summary["solved"]} of {forces.size} forces solved (motors hold the platform); '
              + '; '.join(_branches(study.inverse, 'N')))
        _unsolved(forces, study.inverse.converged, 'N')
        summary['rods_crossed_N'] = _crossed(forces, study.inverse.data['clearance'], 'N')
        print(f'largest force with a solution: {study.largest_force:.2f} N')
        if held.branches:
            print(f'motors held at their unloaded angles: solved up to '
                  f'{held.branches[0].high:.2f} N; least-squares force / height drop through '
                  f'0 over those samples: {study.fitted_stiffness:.2f} N/m')
        print(f'wrote {out / "compression.csv"} and {out / "compression.png"}')
    _print_json(args, robot, summary)
    return 0


def _trajectory(args, robot) -> int:
    low, high = _range(args.heights, '--heights', 2)
    force = np.asarray(parse_vector(args.force, '--force'))
    if args.points < POINTS_PER_TURN * args.turns:
        raise CommandError(f'--points: {args.points} points do not trace {args.turns:g} '
                           f'turn{"s" * (args.turns != 1)} of a helix; '
                           f'give at least {POINTS_PER_TURN} a turn '
                           f'({math.ceil(POINTS_PER_TURN * args.turns)})')
    points = helix(args.points, args.radius, (low, high), args.turns)
    out = output_folder(args.out, '--out', ('helix.csv', 'helix.png'))
    _check_reach(robot, points, np.zeros(len(points)), '--helix')
    study = helix_study(robot, points, force)
    errors = study.errors
    solved = np.isfinite(errors)
    if not solved.any():
        raise NoResultError('--helix: no point of the helix has an inverse and forward solution')
    from tendon_robot_sim.models.pcr.figures import plot_helix
    write_helix_csv(study, out / 'helix.csv')
    plot_helix(study, out / 'helix.png', f'{robot.name} ({robot.compat} model): helix under '
               f'{force.tolist()} N')
    summary = {'points': int(errors.size), 'solved': int(solved.sum()),
               'max_error_m': float(np.max(errors[solved])),
               'mean_error_m': float(np.mean(errors[solved]))}
    print(f'{summary["solved"]} of {errors.size} points solved both ways; FK(IK) position '
          f'error max {summary["max_error_m"]:.3g} m, mean {summary["mean_error_m"]:.3g} m')
    summary['rods_crossed_points'] = _crossed(np.arange(errors.size), study.clearances, 'points')
    print(f'wrote {out / "helix.csv"} and {out / "helix.png"}')
    _print_json(args, robot, summary)
    return 0
