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
    tendon-robot-sim snake forward --tensions 1.5,3.5,1,1 --duration 2 --json

``inverse``: the minimum cable tensions (Newton-Euler, problem (37) of D'Antuono et al.
2023) along the paper's trajectories (theta = (pi/18) sin(t/2) on the pan joints, the tilt
joints, both, or all three) or a CSV file with a ``time`` column and one column of joint
angles [rad] per joint. Writes ``OUT/tensions_<trajectory>.csv`` (time, angles, every
segment's tensions, normal and friction forces (y, z in the contact frame f3) at both
contact points of every joint, the active constraints per joint, infeasibility) and with
``--plot`` ``OUT/tensions.png`` (base tensions over time, like the paper's figure 2).
Infeasible steps are listed with their time, joint and constraint. With ``--json`` the last
line is one JSON object.

``forward``: integrate the forward dynamics from rest (or given angles) under constant
cable tensions (one per cable, the same along the cable) and report the final pose, and
the steps where the motion would need the contacts to pull, slip or carry less than the
minimum contact force (the model holds the links together regardless).
"""

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from tendon_robot_sim import share_dir
from tendon_robot_sim.commands import (check_steps, command_error, CommandError, MAX_STEPS,
                                       NoResultError, OutputPath, parse_values, positive,
                                       time_step)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.plotting import legend_beside
from tendon_robot_sim.models.snake.dynamics import (GROUPS, InverseDynamics, SnakeDivergedError,
                                                    SnakeDynamics, SnakeDynamicsError,
                                                    study_trajectory)
from tendon_robot_sim.models.snake.robot import load_snake

STUDY_TRAJECTORIES = ('pan', 'tilt', 'both')
# Line colours of the paper's figure 2 (cable 1 black, 2 blue, 3 red), then matplotlib's.
CABLE_COLOURS = ('black', 'tab:blue', 'tab:red', 'tab:green', 'tab:orange', 'tab:purple')


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
    inverse.add_argument('--robot', default=None, metavar='FILE',
                         help='snake description YAML (default: config/rolling_joint_snake.yaml)')
    inverse.add_argument('--trajectory', required=True, metavar='pan|tilt|both|all|FILE.csv',
                         help="the motion of D'Antuono et al. 2023 on the pan joints, the "
                              'tilt joints, both, all three one after the other, or a CSV '
                              'file (time, then one angle column per joint, rad)')
    inverse.add_argument('--duration', type=positive, default=12.6,
                         help="the paper's trajectories: length in s (default 12.6)")
    inverse.add_argument('--dt', type=time_step, default=0.005,
                         help="the paper's trajectories: time step in s (default 0.005, "
                              "the paper's)")
    inverse.add_argument('--out', default='snake_output', metavar='DIR', type=OutputPath('folder'),
                         help='folder for the CSV files and the plot (default snake_output)')
    inverse.add_argument('--plot', action='store_true',
                         help='also write OUT/tensions.png (base tensions over time)')
    inverse.add_argument('--json', action='store_true', help='end with one JSON line')
    inverse.set_defaults(func=run_inverse)

    forward = actions.add_parser(
        'forward', help='simulate the snake under constant cable tensions',
        description='Integrate the forward dynamics (RK4) under constant cable tensions.')
    forward.add_argument('--robot', default=None, metavar='FILE',
                         help='snake description YAML (default: config/rolling_joint_snake.yaml)')
    forward.add_argument('--tensions', required=True, metavar='T',
                         help="one tension per cable in N ('1.5,3.5,1,1') or by name")
    forward.add_argument('--angles', default=None, metavar='Q',
                         help='initial joint angles in rad, one per joint (default 0)')
    forward.add_argument('--duration', type=positive, default=2.0, help='s (default 2)')
    forward.add_argument('--dt', type=time_step, default=0.001,
                         help='RK4 step in s (default 1 ms)')
    forward.add_argument('--json', action='store_true', help='end with one JSON line')
    forward.set_defaults(func=run_forward)


def _load(path):
    try:
        return load_snake(path or default_snake_file())
    except RobotDescriptionError as error:
        raise command_error(error) from None


def read_trajectory(path: Path, n_joints: int):
    """Read t (K,), q, qd, qdd (K, N) from a CSV file; rates from a cubic spline through q."""
    try:
        with open(path, newline='', encoding='utf-8') as file:
            rows = list(csv.reader(file))
    except OSError as error:
        raise CommandError(f'{path}: cannot read: {error.strerror}') from None
    except (UnicodeDecodeError, csv.Error) as error:
        raise CommandError(f'{path}: not a CSV text file (binary?): '
                           f'{" ".join(str(error).split())[:120]}') from None
    if not rows or not rows[0] or rows[0][0].strip() != 'time':
        raise CommandError(f'{path}: the first row must be a header starting with "time"')
    if len(rows[0]) != n_joints + 1:
        raise CommandError(f'{path}: {len(rows[0]) - 1} angle columns, the snake has '
                           f'{n_joints} joints')
    header = [name.strip() for name in rows[0]]
    data = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise CommandError(f'{path}: row {number}: {len(row)} values, the header has '
                               f'{len(header)}')
        values = []
        for column, text in zip(header, row):
            try:
                value = float(text)
            except ValueError:
                raise CommandError(f'{path}: row {number}, column {column}: {text!r} is not a '
                                   'number') from None
            if not np.isfinite(value):
                raise CommandError(f'{path}: row {number}, column {column}: must be finite, '
                                   f'got {text.strip()}')
            values.append(value)
        data.append(values)
    data = np.array(data, dtype=float).reshape(-1, len(header))
    if data.shape[0] < 4:
        raise CommandError(f'{path}: needs at least 4 rows of {n_joints + 1} numbers')
    t = data[:, 0]
    if np.any(np.diff(t) <= 0):
        raise CommandError(f'{path}: time must be strictly increasing')
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
    with open(path, 'w', newline='') as file:
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
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(8, 2.8 * len(results)), squeeze=False,
                             sharex=True)
    for ax, (name, result) in zip(axes[:, 0], results.items()):
        for k, cable in enumerate(snake.cable_names):
            ax.plot(result.time, result.base_tensions[:, k], color=CABLE_COLOURS[k % 6],
                    label=cable)
        for p in result.infeasible:
            ax.axvline(p.time, color='0.6', lw=0.5)
        ax.set_ylabel('tension at the base [N]')
        ax.set_title(f'{name} motion' + ('' if result.feasible else
                                         f' ({len(result.infeasible)} infeasible, grey)'))
        ax.grid(alpha=0.3)
        legend_beside(ax, fontsize='small')     # not over the curves
    axes[-1, 0].set_xlabel('time [s]')
    fig.suptitle(f'{snake.name}: minimum cable tensions')
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_inverse(args: argparse.Namespace) -> int:
    snake = _load(args.robot)
    dynamics = SnakeDynamics(snake)
    if args.trajectory in STUDY_TRAJECTORIES + ('all',):
        names = STUDY_TRAJECTORIES if args.trajectory == 'all' else (args.trajectory,)
        check_steps(args.duration, args.dt)
        trajectories = {n: study_trajectory(snake, n, args.duration, args.dt) for n in names}
    else:
        path = Path(args.trajectory)
        trajectories = {path.stem: read_trajectory(path, snake.n_joints)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results, summary = {}, {}
    for name, (t, q, qd, qdd) in trajectories.items():
        try:
            result = dynamics.inverse(t, q, qd, qdd)
        except SnakeDynamicsError as error:
            raise CommandError(f'--trajectory {name}: {error}') from None
        results[name] = result
        csv_path = out / f'tensions_{name}.csv'
        write_csv(csv_path, snake, result)
        peaks = result.base_tensions.max(axis=0)
        print(f'{name}: {t.size} steps, base tension peaks '
              + ', '.join(f'{c} {p:.3f} N' for c, p in zip(snake.cable_names, peaks))
              + f'; {t.size / result.solve_time:.0f} steps/s; {csv_path}')
        for problem in result.infeasible[:10]:
            print(f'  infeasible: {problem}')
        if len(result.infeasible) > 10:
            print(f'  ... {len(result.infeasible) - 10} more infeasible (see the CSV)')
        summary[name] = {
            'steps': int(t.size), 'duration': float(t[-1] - t[0]),
            'peak_base_tensions': dict(zip(snake.cable_names, peaks.tolist())),
            'min_base_tensions': dict(zip(snake.cable_names,
                                          result.base_tensions.min(axis=0).tolist())),
            'feasible': result.feasible, 'infeasible_steps': len(result.infeasible),
            'infeasible': [{'time': p.time, 'joint': p.joint, 'constraint': p.constraint}
                           for p in result.infeasible[:100]],
            'active_fraction': {g: float(result.active[g].mean()) for g in GROUPS},
            'solve_time': result.solve_time, 'csv': str(csv_path)}
    report = {'robot': snake.name, 'trajectories': summary}
    if args.plot:
        report['plot'] = str(out / 'tensions.png')
        plot(out / 'tensions.png', snake, results)
        print(f'plot: {report["plot"]}')
    if args.json:
        print(json.dumps(report))
    infeasible = {name: len(r.infeasible) for name, r in results.items() if r.infeasible}
    if infeasible:
        steps = ', '.join(f'{n} steps of {name}' for name, n in infeasible.items())
        raise NoResultError(f'no feasible tensions at {steps} (each listed above with its time, '
                            'joint and broken constraint; all in the CSV)')
    return 0


def _stable_step(dynamics: SnakeDynamics, tensions: np.ndarray, q0: np.ndarray,
                 args: argparse.Namespace) -> str:
    """Say which smaller RK4 step stays finite over the whole run, halving up to 2^-8."""
    for k in range(1, 9):
        dt = args.dt / 2 ** k
        if args.duration / dt > MAX_STEPS:
            return (f'no step down to {2 * dt:.3g} s stays stable, and a smaller one would '
                    f'take more than {MAX_STEPS:.0e} steps')
        t = np.arange(0.0, args.duration + dt / 2, dt)
        try:
            dynamics.simulate(t, np.tile(tensions, (t.size, 1)), q0, np.zeros_like(q0))
        except SnakeDivergedError:
            continue
        return f'--dt {dt:.3g} stays stable over {args.duration:g} s'
    return f'no step down to {args.dt / 2 ** 8:.3g} s stays stable: the tensions are too high'


def run_forward(args: argparse.Namespace) -> int:
    snake = _load(args.robot)
    values = parse_values(args.tensions, '--tensions')
    if isinstance(values, dict):
        unknown = sorted(set(values) - set(snake.cable_names))
        if unknown:
            raise CommandError(f'--tensions: unknown cable {unknown[0]!r}; cables: '
                               f'{snake.cable_names}')
        values = [values.get(c, snake.pretension) for c in snake.cable_names]
    if len(values) != len(snake.cables):
        raise CommandError(f'--tensions: {len(values)} values, the snake has '
                           f'{len(snake.cables)} cables')
    tensions = np.array(values)
    if tensions.min() < 0 or tensions.max() > snake.max_tension:
        raise CommandError(f'--tensions: must be within [0, {snake.max_tension:g}] N')
    q0 = np.zeros(snake.n_joints)
    if args.angles is not None:
        angles = parse_values(args.angles, '--angles')
        if isinstance(angles, dict) or len(angles) != snake.n_joints:
            raise CommandError(f'--angles: give {snake.n_joints} values in joint order')
        q0 = np.array(angles)
        if np.abs(q0).max() > snake.joint_limit:
            raise CommandError(f'--angles: must be within +-{snake.joint_limit:.4g} rad '
                               f'(2 alpha, the rolling surfaces)')
    check_steps(args.duration, args.dt)
    dynamics = SnakeDynamics(snake)
    t = np.arange(0.0, args.duration + args.dt / 2, args.dt)
    try:
        q, qd = dynamics.simulate(t, np.tile(tensions, (t.size, 1)), q0, np.zeros_like(q0))
    except SnakeDivergedError as error:
        raise NoResultError(f'--dt: {args.dt:g} s diverges at t = {error.time:.3f} s under '
                            f'these tensions; {_stable_step(dynamics, tensions, q0, args)}'
                            ) from None
    q, qd = q[:, 0], qd[:, 0]
    np.set_printoptions(precision=6, suppress=True)
    print(f'{snake.name}: {args.duration:g} s under tensions {tensions} N')
    # the model assumes rolling contact: check it where the joints are on their surfaces
    outside = np.flatnonzero(np.any(np.abs(q) > snake.joint_limit, axis=1))
    inside = int(outside[0]) if outside.size else t.size
    if inside < t.size:
        print(f'warning: a joint leaves the rolling surfaces at t = {t[inside]:.3f} s '
              f'(|theta| > {snake.joint_limit:.3f} rad); the model no longer holds')
    segments = np.broadcast_to(tensions, (inside, snake.n_joints, len(snake.cables)))
    check = dynamics.inverse(t[:inside], q[:inside], qd[:inside],
                             dynamics.accelerations(q[:inside], qd[:inside], segments),
                             tensions=segments)
    for problem in check.infeasible[:5]:
        print(f'warning: {problem}')
    if len(check.infeasible) > 5:
        print(f'warning: {len(check.infeasible) - 5} more steps break a constraint')
    tip = dynamics.kinematics.state(q[-1]).tip_position[0]
    print(f'joint angles [rad]: {q[-1]}')
    print(f'joint rates [rad/s]: {qd[-1]}')
    print(f'tip position [m]:   {tip}')
    if args.json:
        print(json.dumps({'robot': snake.name, 'time': float(t[-1]),
                          'tensions': tensions.tolist(), 'q': q[-1].tolist(),
                          'qd': qd[-1].tolist(), 'tip_position': tip.tolist(),
                          'left_the_surfaces_at': float(t[inside]) if inside < t.size else None,
                          'broken_steps': len(check.infeasible),
                          'broken': [{'time': p.time, 'joint': p.joint,
                                      'constraint': p.constraint}
                                     for p in check.infeasible[:100]]}))
    return 0
