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
``tendon-robot-sim snake``: the rolling-joint snake (``config/rolling_joint_snake.yaml``).

    tendon-robot-sim snake inverse --trajectory pan --plot
    tendon-robot-sim snake inverse --trajectory all --plot --json
    tendon-robot-sim snake inverse --trajectory my_motion.csv --out runs/a
    tendon-robot-sim snake inverse --trajectory tilt --tip-wrench 0,0,-0.2,0,0,0
    tendon-robot-sim snake forward --from 1.5,3.5,1,1 --tensions 1.5,4.5,1,1 --ramp 1 --json

``inverse``: the minimum cable tensions (Newton-Euler, problem (37) of D'Antuono et al.
2023) along the paper's trajectories (theta = (pi/18) sin(t/2) on the pan joints, the tilt
joints, both, or all three) or a CSV file with a ``time`` column and one column of joint
angles [rad] per joint. Writes ``OUT/tensions_<trajectory>.csv`` (time, angles, every
segment's tensions, normal and friction forces (y, z in the contact frame f3) at both
contact points of every joint, the active constraints per joint, infeasibility) and with
``--plot`` ``OUT/tensions.png`` (base tensions over time, like the paper's figure 2).
Infeasible steps are listed with their time, joint and constraint; with ``all``, the trends of
the paper's figure 2 are compared with its text. With ``--json`` the last line is one JSON
object.

``forward``: integrate the forward dynamics from rest (straight, given angles, or the pose
that the ``--from`` tensions hold) under cable tensions (one per cable, the same along the
cable), stepped or ramped to ``--tensions``, and report the final pose and the pose the final
tensions hold at rest. The motion is checked step by step: where it would need a contact to
pull, slip or carry less than the minimum contact force (the model holds the links together
and rolling regardless), or a joint leaves its rolling surfaces, the model no longer describes
the robot: the command reports the last valid state and exits 1.

Both take ``--tip-wrench FX,FY,FZ,MX,MY,MZ`` (N, N m): an external force and moment at the
tip (the distal vertex of the last link; ``--wrench-link`` puts it on another link's distal
vertex), in the world frame (x out of the wall along the straight snake, z up) or with
``--wrench-frame link`` in the loaded link's own frame, turning with it.
"""

import argparse
import csv
import math
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from tendon_robot_sim import counted, share_dir
from tendon_robot_sim.commands import (check_steps, command_error, CommandError, input_file,
                                       json_line, MAX_STEPS, non_negative, NoResultError,
                                       OutputPath, parse_values, positive, positive_int, run_steps,
                                       TIME_STEP, time_step)
from tendon_robot_sim.experiment.csv_table import check_increasing, read_table, TableError
from tendon_robot_sim.files.outputs import (make_new_folders, open_output, removed_on_failure,
                                            save_figure)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.plotting import legend_beside
from tendon_robot_sim.models.snake.dynamics import (BROKEN_MEANING, GROUPS, InverseDynamics,
                                                    SnakeDivergedError, SnakeDynamics,
                                                    SnakeDynamicsError, study_trajectory)
from tendon_robot_sim.models.snake.loads import check, FRAMES, LinkWrench, LoadError
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.snake.statics import equilibrium
from tendon_robot_sim.models.snake.study import figure_2

STUDY_TRAJECTORIES = ('pan', 'tilt', 'both')
# The paper's study: one period of theta = (pi/18) sin(t/2) [s], in steps of [s].
PAPER_DURATION, PAPER_STEP = 12.6, 0.005
# Line colours of the paper's figure 2 (cable 1 black, 2 blue, 3 red), then matplotlib's.
CABLE_COLOURS = ('black', 'tab:blue', 'tab:red', 'tab:green', 'tab:orange', 'tab:purple')
CABLE_STYLES = ('-', '--', '-.', ':')
CABLE_MARKERS = ('o', 's', '^', 'v', 'D', 'P')
# The panel of each study motion: which joints move.
MOTION_TITLES = {'pan': 'pan joints moving', 'tilt': 'tilt joints moving',
                 'both': 'pan and tilt joints moving'}


def default_snake_file() -> Path:
    return share_dir() / 'config' / 'rolling_joint_snake.yaml'


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'snake', help='rolling-joint snake: minimum cable tensions, forward dynamics',
        description='Newton-Euler dynamics of the tendon-actuated rolling-joint snake.')
    actions = parser.add_subparsers(dest='action', required=True, metavar='ACTION')
    inverse = actions.add_parser(
        'inverse', help='minimum cable tensions along a joint trajectory',
        description='Minimum cable tensions (with contact and rolling constraints) along a '
                    'joint trajectory.')
    inverse.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                         help='snake description YAML (default: config/rolling_joint_snake.yaml)')
    inverse.add_argument('--trajectory', required=True, metavar='pan|tilt|both|all|FILE.csv',
                         help="the motion of D'Antuono et al. 2023 on the pan joints, the "
                              'tilt joints, both, all three one after the other, or a CSV '
                              'file (time, then one angle column per joint, rad)')
    inverse.add_argument('--duration', type=positive, default=None,
                         help=f"the paper's trajectories: length in s (default "
                              f'{PAPER_DURATION:g})')
    inverse.add_argument('--dt', type=time_step, default=None,
                         help=f"the paper's trajectories: time step in s (default "
                              f"{PAPER_STEP:g}, the paper's)")
    inverse.add_argument('--out', default='snake_output', metavar='DIR', type=OutputPath('folder'),
                         help='folder for the CSV files and the plot (default snake_output)')
    inverse.add_argument('--plot', action='store_true',
                         help='also write OUT/tensions.png (base tensions over time)')
    inverse.add_argument('--json', action='store_true', help='end with one JSON line')
    add_wrench_options(inverse)
    inverse.set_defaults(func=run_inverse)

    forward = actions.add_parser(
        'forward', help='simulate the snake under cable tensions (and a tip wrench)',
        description='Integrate the forward dynamics (RK4) from rest under cable tensions, '
                    'stepped or ramped. A motion that breaks a contact or friction constraint '
                    'is reported up to that step and exits 1: the real snake would slip or its '
                    'links lift off each other there.')
    forward.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                         help='snake description YAML (default: config/rolling_joint_snake.yaml)')
    forward.add_argument('--tensions', required=True, metavar='T',
                         help="one tension per cable in N ('1.5,3.5,1,1') or by name (others "
                              'at the pretension)')
    start = forward.add_mutually_exclusive_group()
    start.add_argument('--from', dest='start', default=None, metavar='T0',
                       help='start at rest in the pose these cable tensions hold (their static '
                            'equilibrium, under the --tip-wrench too) instead of straight')
    start.add_argument('--angles', default=None, metavar='Q',
                       help='initial joint angles in rad, one per joint (default 0: straight)')
    forward.add_argument('--ramp', type=non_negative, default=0.0, metavar='S',
                         help='s: move the tensions linearly from the --from tensions (else '
                              'the pretension) to --tensions over this time, at most '
                              '--duration (default 0: a step at t = 0)')
    forward.add_argument('--duration', type=positive, default=2.0, help='s (default 2)')
    forward.add_argument('--dt', type=time_step, default=0.001,
                         help='RK4 step in s (default 1 ms)')
    forward.add_argument('--json', action='store_true', help='end with one JSON line')
    add_wrench_options(forward)
    forward.set_defaults(func=run_forward)


def add_wrench_options(parser) -> None:
    """``--tip-wrench``, ``--wrench-frame``, ``--wrench-link`` (read by :func:`_loads`)."""
    parser.add_argument('--tip-wrench', default=None, metavar='FX,FY,FZ,MX,MY,MZ',
                        help='external force (N) and moment (N m, about the same point) at the '
                             'tip: the distal vertex of the last link (default: none)')
    parser.add_argument('--wrench-frame', choices=FRAMES, default='world',
                        help='world: fixed directions, x out of the wall along the straight '
                             "snake, z up (a payload's weight); link: the loaded link's own "
                             'frame, x along it, turning with it (default world)')
    parser.add_argument('--wrench-link', type=positive_int, default=None, metavar='N',
                        help='put the wrench on the distal vertex of link N instead (1 = next '
                             'to the base; default: the last link, the tip)')


def _loads(snake, args) -> tuple:
    """Return the --tip-wrench as a tuple of LinkWrench (empty without one)."""
    if args.tip_wrench is None:
        if args.wrench_link is not None or args.wrench_frame != 'world':
            raise CommandError('--tip-wrench: --wrench-link and --wrench-frame need a '
                               '--tip-wrench')
        return ()
    values = parse_values(args.tip_wrench, '--tip-wrench')
    if not isinstance(values, list) or len(values) != 6:
        raise CommandError(f'--tip-wrench: must be 6 numbers FX,FY,FZ,MX,MY,MZ (N, N m), got '
                           f'{args.tip_wrench!r}')
    link = snake.n_joints if args.wrench_link is None else args.wrench_link
    try:
        return check(snake, [LinkWrench(link, np.array(values[:3]), np.array(values[3:]),
                                        args.wrench_frame)])
    except LoadError as error:
        option = '--wrench-link' if error.field == 'link' else '--tip-wrench'
        raise CommandError(f'{option}: {error.problem if error.field == "link" else error}'
                           ) from None


def _describe(snake, loads) -> str:
    """' under ... at the tip (world frame)' for the first output line; '' without loads."""
    if not loads:
        return ''
    (load,) = loads
    where = 'the tip' if load.link == snake.n_joints else f'the distal vertex of link {load.link}'
    return (f'; {np.array2string(load.force, precision=4)} N, '
            f'{np.array2string(load.moment, precision=4)} N m at {where} ({load.frame} frame)')


def _wrench_json(loads):
    return [{'link': w.link, 'frame': w.frame, 'force': w.force.tolist(),
             'moment': w.moment.tolist()} for w in loads]


def _load(path):
    try:
        return load_snake(path or default_snake_file())
    except RobotDescriptionError as error:
        raise command_error(error) from None


def read_trajectory(path: Path, n_joints: int, joint_limit: float = math.inf):
    """
    Read t (K,), q, qd, qdd (K, N) from a CSV file; rates from a cubic spline through q.

    The file is read by the package's table reader
    (:func:`~tendon_robot_sim.experiment.csv_table.read_table`); every error names
    ``--trajectory``, the file and, for a cell, its line and column. Rows follow each other
    in steps of ``--dt``'s range (:data:`~tendon_robot_sim.commands.TIME_STEP`): rows 1e300 s
    apart overflowed the spline's rates. An angle beyond ``joint_limit`` (rad, 2 alpha: the
    rolling surfaces) is named by its cell, with its reading in degrees where that fits.
    """
    def check_header(header):
        if not header or header[0] != 'time':
            raise TableError(f'{path}: the first row must be a header starting with "time"')
        if len(header) != n_joints + 1:
            raise TableError(f'{path}: {len(header) - 1} angle columns, the snake has '
                             f'{n_joints} joints')
    try:
        table = read_table(path, check_header=check_header)
        data = table.values
        if data.shape[0] < 4:
            raise TableError(f'{path}: needs at least 4 rows of {n_joints + 1} numbers')
        t = data[:, 0]
        check_increasing(table, 'time')
        steps = np.diff(t)
        outside = np.flatnonzero((steps < TIME_STEP[0]) | (steps > TIME_STEP[1]))
        if outside.size:
            row = int(outside[0]) + 1
            raise TableError(f'{table.where(row, "time")}: {steps[row - 1]:g} s after the line '
                             f'before; a time step must be within [{TIME_STEP[0]:g}, '
                             f'{TIME_STEP[1]:g}] s')
        beyond = np.argwhere(np.abs(data[:, 1:]) > joint_limit)
        if beyond.size:
            row, joint = (int(i) for i in beyond[0])
            angle = data[row, joint + 1]
            hint = (f'; angles are radians: {angle:g} deg would be {math.radians(angle):.4g} rad'
                    if abs(math.radians(angle)) <= joint_limit else '')
            raise TableError(f'{table.where(row, table.header[joint + 1])}: {angle:g} rad is '
                             f'beyond the rolling surfaces (|theta| <= 2 alpha = '
                             f'{joint_limit:.4g} rad){hint}')
    except TableError as error:
        raise CommandError(f'--trajectory: {error}') from None
    spline = CubicSpline(t, data[:, 1:], axis=0)
    return t, data[:, 1:], spline(t, 1), spline(t, 2)


def write_csv(path: Path, snake, result: InverseDynamics) -> None:
    N = snake.n_joints
    header = (['time'] + [f'theta{n + 1}' for n in range(N)]
              + [f'segment{n + 1}_{c}' for n in range(N) for c in snake.cable_names]
              + [f'joint{n + 1}_{quantity}{i}' for n in range(N)
                 for quantity in ('normal', 'friction_y', 'friction_z') for i in (1, 2)]
              + [f'active_joint{n + 1}' for n in range(N)] + ['infeasible'])
    problems = {}
    for p in result.infeasible:
        problems.setdefault(p.time, []).append(f'joint{p.joint}:{p.constraint}')
    with open_output(path, newline='') as file:
        writer = csv.writer(file)
        writer.writerow(header)
        for k, t in enumerate(result.time):
            active = ['+'.join(g for g in GROUPS if result.active[g][k, n]) for n in range(N)]
            writer.writerow([f'{t:.6f}'] + [f'{v:.9g}' for v in result.q[k]]
                            + [f'{v:.9g}' for v in result.tensions[k].ravel()]
                            + [f'{v:.9g}' for v in np.concatenate(
                                (result.normal_forces[k][:, None],
                                 np.moveaxis(result.friction_forces[k], -1, 1)),
                                axis=1).ravel()]
                            + active + [' '.join(problems.get(float(t), []))])


def plot(path: Path, snake, results: dict) -> None:
    """
    Write the base tension of each cable over time, one panel per motion.

    Cables resting at the same floor (the minimum tension) lie on one another: each has its
    own line style and marker, the markers staggered, and the ones drawn first are wider, so
    every one of them shows.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(8, 2.8 * len(results)), squeeze=False,
                             sharex=True)
    cables = len(snake.cable_names)
    for ax, (name, result) in zip(axes[:, 0], results.items()):
        for k, cable in enumerate(snake.cable_names):
            # markers staggered between the cables: one at each place where they coincide
            every = max(len(result.time) // 12, 1)
            ax.plot(result.time, result.base_tensions[:, k], color=CABLE_COLOURS[k % 6],
                    ls=CABLE_STYLES[k % len(CABLE_STYLES)], lw=1.0 + 0.8 * (cables - 1 - k),
                    marker=CABLE_MARKERS[k % len(CABLE_MARKERS)], ms=5,
                    markevery=(k * every // cables, every), label=cable)
        for p in result.infeasible:
            ax.axvline(p.time, color='0.6', lw=0.5)
        ax.set_ylabel('tension at the base [N]')
        ax.set_title(MOTION_TITLES.get(name, name) + ('' if result.feasible else
                                                      f' ({len(result.infeasible)} '
                                                      'infeasible, grey)'))
        ax.grid(alpha=0.3)
    legend_beside(axes[0, 0], fontsize='small', title='cable')     # once, not over the curves
    axes[-1, 0].set_xlabel('time [s]')
    fig.suptitle(f'{snake.name}: minimum cable tensions')
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    plt.close(fig)


def run_inverse(args: argparse.Namespace) -> int:
    snake = _load(args.robot)
    loads = _loads(snake, args)
    dynamics = SnakeDynamics(snake)
    if args.trajectory in STUDY_TRAJECTORIES + ('all',):
        names = STUDY_TRAJECTORIES if args.trajectory == 'all' else (args.trajectory,)
        # their defaults, once it is known that no trajectory file ignores them
        args.duration = PAPER_DURATION if args.duration is None else args.duration
        args.dt = PAPER_STEP if args.dt is None else args.dt
        check_steps(args.duration, args.dt)
        try:
            # whole steps that cover --duration, the rule of every command
            length = run_steps(args.duration, args.dt) * args.dt
            trajectories = {n: study_trajectory(snake, n, length, args.dt) for n in names}
        except SnakeDynamicsError as error:
            raise CommandError(f'--trajectory: {error}') from None
    else:
        for flag, value in (('--duration', args.duration), ('--dt', args.dt)):
            if value is not None:
                raise CommandError(f"{flag}: applies to the paper's trajectories only; a "
                                   'trajectory file gives its own times')
        path = Path(args.trajectory)
        trajectories = {path.stem: read_trajectory(path, snake.n_joints, snake.joint_limit)}
    out = Path(args.out)
    with removed_on_failure(make_new_folders(out)):
        return _inverse_into(out, snake, dynamics, loads, trajectories, args)


def _inverse_into(out: Path, snake, dynamics, loads, trajectories, args) -> int:
    """Solve the trajectories, write their CSV files (and plot) into ``out``; the exit code."""
    if loads:
        print(f'external load{_describe(snake, loads)[1:]}')
    results, summary = {}, {}
    for name, (t, q, qd, qdd) in trajectories.items():
        try:
            result = dynamics.inverse(t, q, qd, qdd, loads=loads)
        except SnakeDynamicsError as error:
            raise CommandError(f'--trajectory {name}: {error}') from None
        results[name] = result
        csv_path = out / f'tensions_{name}.csv'
        write_csv(csv_path, snake, result)
        # the peaks the motors must reach: over the steps with tensions (an infeasible step
        # has none, NaN); None where no step has any
        base = result.base_tensions[np.isfinite(result.base_tensions).all(axis=1)]
        peaks, lows = ((base.max(axis=0), base.min(axis=0)) if base.size
                       else (np.full(len(snake.cables), np.nan),) * 2)
        over = '' if len(base) == t.size else f' (over the {len(base)} steps with tensions)'
        described = (f'base tension peaks{over} ' + ', '.join(
            f'{c} {p:.3f} N' for c, p in zip(snake.cable_names, peaks)) if base.size
            else 'no step with base tensions')
        print(f'{name}: {t.size} steps, {described}; {t.size / result.solve_time:.0f} '
              f'steps/s; {csv_path}')
        for problem in result.infeasible[:10]:
            print(f'  infeasible: {problem}')
        if len(result.infeasible) > 10:
            print(f'  ... {len(result.infeasible) - 10} more infeasible (see the CSV)')
        summary[name] = {
            'steps': int(t.size), 'duration': float(t[-1] - t[0]),
            'peak_base_tensions': dict(zip(snake.cable_names, peaks.tolist())),
            'min_base_tensions': dict(zip(snake.cable_names, lows.tolist())),
            'feasible': result.feasible,
            # a step may break constraints at several joints: the steps, then the constraints
            'infeasible_steps': len({p.time for p in result.infeasible}),
            'broken_constraints': len(result.infeasible),
            'infeasible': [{'time': p.time, 'joint': p.joint, 'constraint': p.constraint}
                           for p in result.infeasible[:100]],
            'active_fraction': {g: float(result.active[g].mean()) for g in GROUPS},
            'solve_time': result.solve_time, 'csv': str(csv_path)}
    report = {'robot': snake.name, 'load': _wrench_json(loads), 'trajectories': summary}
    if args.trajectory == 'all' and len(snake.cables) == 4:
        report['figure_2'] = _print_figure_2(snake, trajectories['pan'][0], results, args)
    if args.plot:
        report['plot'] = str(out / 'tensions.png')
        plot(out / 'tensions.png', snake, results)
        print(f'plot: {report["plot"]}')
    if args.json:
        print(json_line(report))
    infeasible = {name: (s['infeasible_steps'], s['steps'], s['broken_constraints'])
                  for name, s in summary.items() if s['infeasible_steps']}
    if infeasible:
        steps = ', '.join(f'{bad} of {n} steps of {name} ({counted(broken, "broken constraint")})'
                          for name, (bad, n, broken) in infeasible.items())
        raise NoResultError(f'no feasible tensions at {steps}; the first ones listed above '
                            'with their time and joint, all in the CSV')
    return 0


def _print_figure_2(snake, time, results, args) -> list:
    """Print the trends of the paper's figure 2 beside ours; return them for the JSON."""
    trends = figure_2(time, {name: r.base_tensions for name, r in results.items()},
                      snake.cable_names)
    run = ('' if (args.duration, args.dt) == (PAPER_DURATION, PAPER_STEP) else
           f" (this run: {args.duration:g} s in steps of {args.dt:g} s; the paper's: "
           f'{PAPER_DURATION:g} s in steps of {PAPER_STEP:g} s)')
    print(f"figure 2 of D'Antuono et al. 2023 (base tensions), paper | here{run}:")
    for trend in trends:
        print(f'  {trend.name}: {trend.paper} | {trend.here}'
              + ('' if trend.agrees else '  (differs: docs/snake.md says why)'))
    return [{'trend': t.name, 'paper': t.paper, 'here': t.here, 'agrees': t.agrees}
            for t in trends]


def _cable_tensions(snake, text: str, option: str) -> np.ndarray:
    """One tension per cable [N] from ``1.5,3.5,1,1`` or ``cable2=3`` (others: pretension)."""
    values = parse_values(text, option)
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(snake.cable_names))
        if unknown:
            raise CommandError(f'{option}: unknown cable {unknown[0]!r}; cables: '
                               f'{snake.cable_names}')
        values = [values.get(c, snake.pretension) for c in snake.cable_names]
    if len(values) != len(snake.cables):
        raise CommandError(f'{option}: {counted(len(values), "value")}, the snake has '
                           f'{len(snake.cables)} cables')
    tensions = np.array(values)
    if tensions.min() < 0 or tensions.max() > snake.max_tension:
        raise CommandError(f'{option}: must be within [0, {snake.max_tension:g}] N')
    return tensions


def _tension_profile(t: np.ndarray, start: np.ndarray, end: np.ndarray, ramp: float):
    """Tensions (K, C) at the times t: from ``start`` to ``end`` linearly over ``ramp`` s."""
    share = np.clip(t / ramp, 0.0, 1.0) if ramp > 0 else np.ones_like(t)
    return start + share[:, None] * (end - start)


def _stable_step(dynamics: SnakeDynamics, profile, q0: np.ndarray, loads,
                 args: argparse.Namespace) -> str:
    """Say which smaller RK4 step stays finite over the whole run, halving up to 2^-8."""
    end = run_steps(args.duration, args.dt) * args.dt       # the run's, in whole steps
    for k in range(1, 9):
        dt = args.dt / 2 ** k
        if end / dt > MAX_STEPS:
            return (f'no step down to {2 * dt:.3g} s stays stable, and a smaller one would '
                    f'take more than {MAX_STEPS:.0e} steps')
        t = np.arange(run_steps(end, dt) + 1) * dt
        try:
            dynamics.simulate(t, profile(t), q0, np.zeros_like(q0), loads=loads)
        except SnakeDivergedError:
            continue
        return f'--dt {dt:.3g} stays stable over {end:g} s'
    return f'no step down to {args.dt / 2 ** 8:.3g} s stays stable: the tensions are too high'


def _start(snake, args, loads):
    """Return the initial joint angles (N,) and the tensions the run starts from (C,)."""
    if args.angles is not None:
        angles = parse_values(args.angles, '--angles')
        if isinstance(angles, dict) or len(angles) != snake.n_joints:
            raise CommandError(f'--angles: give {snake.n_joints} values in joint order')
        q0 = np.array(angles)
        if np.abs(q0).max() > snake.joint_limit:
            raise CommandError(f'--angles: must be within +-{snake.joint_limit:.4g} rad '
                               f'(2 alpha, the rolling surfaces)')
        return q0, np.full(len(snake.cables), snake.pretension)
    if args.start is None:
        return np.zeros(snake.n_joints), np.full(len(snake.cables), snake.pretension)
    tensions = _cable_tensions(snake, args.start, '--from')
    rest = equilibrium(snake, tensions, loads)
    if not rest.stable:
        why = ('no pose balances them' if not rest.found else
               'the pose that balances them leaves the rolling surfaces' if not rest.within
               else 'the pose that balances them is unstable')
        raise NoResultError(f'--from: these tensions hold the snake nowhere: {why}')
    held = _held(SnakeDynamics(snake), rest.q, tensions, loads)
    if held.infeasible:
        raise NoResultError(f'--from: the real snake cannot rest where these tensions balance '
                            f'it: the {held.infeasible[0].constraint} constraint of joint '
                            f'{held.infeasible[0].joint} breaks there')
    return rest.q, tensions


def _held(dynamics, q, tensions, loads) -> InverseDynamics:
    """Check by Newton-Euler that whole-cable tensions hold the snake at rest at q."""
    snake = dynamics.snake
    zero = np.zeros((1, snake.n_joints))
    return dynamics.inverse([0.0], q[None], zero, zero, loads=loads, tensions=np.broadcast_to(
        tensions, (1, snake.n_joints, len(snake.cables))))


def _validity(dynamics, t, q, qd, profile, loads):
    """
    Check the motion: first invalid sample (t.size if none), check, problem, its meaning.

    A sample is invalid where a joint leaves its rolling surfaces or the motion breaks a
    constraint of (37) (contact, friction, tension bounds).
    """
    snake = dynamics.snake
    outside = np.flatnonzero(np.any(np.abs(q) > snake.joint_limit, axis=1))
    inside = int(outside[0]) if outside.size else t.size
    segments = np.broadcast_to(profile[:inside, None, :],
                               (inside, snake.n_joints, len(snake.cables)))
    check = dynamics.inverse(t[:inside], q[:inside], qd[:inside],
                             dynamics.accelerations(q[:inside], qd[:inside], segments, loads),
                             tensions=segments, loads=loads)
    if check.infeasible:
        first = check.infeasible[0]
        return int(np.searchsorted(t, first.time)), check, str(first), BROKEN_MEANING
    if inside < t.size:
        joint = int(np.argmax(np.abs(q[inside]) > snake.joint_limit)) + 1
        return inside, check, (f't = {t[inside]:.3f} s, joint {joint}: leaves its rolling '
                               f'surfaces (|theta| > {snake.joint_limit:.3f} rad)'), (
            "the links' rims meet there, which the model does not describe (the simulator "
            'node stops the joint at that limit)')
    return t.size, check, None, None


def run_forward(args: argparse.Namespace) -> int:
    snake = _load(args.robot)
    tensions = _cable_tensions(snake, args.tensions, '--tensions')
    loads = _loads(snake, args)
    check_steps(args.duration, args.dt)
    # whole steps that cover --duration (the rule of every command): the report says the end
    t = np.arange(run_steps(args.duration, args.dt) + 1) * args.dt
    if args.ramp > args.duration:
        # the run would end short of --tensions, and report them as the tensions it ran at
        raise CommandError(f'--ramp: {args.ramp:g} s is longer than --duration '
                           f'{args.duration:g} s: the run would end before the tensions reach '
                           '--tensions')
    q0, start = _start(snake, args, loads)
    dynamics = SnakeDynamics(snake)

    def profile(times):
        return _tension_profile(times, start, tensions, args.ramp)

    try:
        q, qd = dynamics.simulate(t, profile(t), q0, np.zeros_like(q0), loads=loads)
    except SnakeDivergedError as error:
        raise NoResultError(f'--dt: {args.dt:g} s diverges at t = {error.time:.3f} s under '
                            f'these tensions; {_stable_step(dynamics, profile, q0, loads, args)}'
                            ) from None
    q, qd = q[:, 0], qd[:, 0]
    np.set_printoptions(precision=6, suppress=True)
    chain = dynamics.kinematics
    change = (f', ramped from {start} N over {args.ramp:g} s' if args.ramp > 0 else
              f', stepped from {start} N at t = 0' if args.start is not None else '')
    print(f'{snake.name}: {t[-1]:g} s under tensions {tensions} N{change}'
          f'{_describe(snake, loads)}')
    if args.start is not None:
        print(f'start: at rest in the pose that {start} N hold, tip at '
              f'{chain.state(q0).tip_position[0]} m')
    end, check, problem, meaning = _validity(dynamics, t, q, qd, profile(t), loads)
    for broken in check.infeasible[:5]:
        print(f'warning: {broken}')
    if len(check.infeasible) > 5:
        print(f'warning: {len(check.infeasible) - 5} more steps break a constraint')
    report = {'robot': snake.name, 'duration': float(t[-1]), 'tensions': tensions.tolist(),
              'from': start.tolist(), 'ramp': args.ramp, 'load': _wrench_json(loads),
              'time': None, 'q': None, 'qd': None, 'tip_position': None, 'valid_until': None}
    if end > 0:
        last = end - 1
        tip = chain.state(q[last]).tip_position[0]
        print(('' if end == t.size else f'the last valid state, t = {t[last]:.3f} s:\n')
              + f'joint angles [rad]: {q[last]}\njoint rates [rad/s]: {qd[last]}\n'
              f'tip position [m]:   {tip}')
        report.update(time=float(t[last]), q=q[last].tolist(), qd=qd[last].tolist(),
                      tip_position=tip.tolist(), valid_until=float(t[last]))
    report.update({'broken_steps': len(check.infeasible),
                   'broken': [{'time': p.time, 'joint': p.joint, 'constraint': p.constraint}
                              for p in check.infeasible[:100]],
                   'problem': problem})
    if problem is None:
        report['rest'] = _report_rest(dynamics, tensions, loads, q[-1], qd[-1])
    if args.json:
        print(json_line(report))
    if problem is not None:
        raise NoResultError(f"the motion stops being the robot's at {problem}: {meaning}")
    return 0


def _report_rest(dynamics, tensions, loads, q_end, qd_end) -> dict | None:
    """Print and return where the final tensions hold the snake at rest, and if they can."""
    snake = dynamics.snake
    rest = equilibrium(snake, tensions, loads, q0=q_end)
    if not rest.stable:
        print('at rest: the final tensions hold the snake in no stable pose on the rolling '
              'surfaces')
        return None
    held = _held(dynamics, rest.q, tensions, loads)
    tip = dynamics.kinematics.state(rest.q).tip_position[0]
    end = dynamics.kinematics.state(q_end).tip_position[0]
    print(f'at rest the final tensions hold the tip at {tip} m'
          + (', every constraint kept' if held.feasible else
             f', but breaking the {held.infeasible[0].constraint} constraint at joint '
             f'{held.infeasible[0].joint}: the real snake cannot rest there')
          + f'; the motion ends {1e3 * np.linalg.norm(end - tip):.1f} mm from it, joints moving '
            f'at up to {np.abs(qd_end).max():.3g} rad/s (the model has no damping)')
    return {'q': rest.q.tolist(), 'tip_position': tip.tolist(), 'holds': held.feasible,
            'broken': [{'joint': p.joint, 'constraint': p.constraint}
                       for p in held.infeasible]}
