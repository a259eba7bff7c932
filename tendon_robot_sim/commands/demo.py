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
``tendon-robot-sim demo``: the simulation stack at work, without RViz.

``--world FILE --pull TENDON``: the contact demo instead
(:mod:`tendon_robot_sim.commands.demo_contact`).

Any robot the tension controller drives: a tendon robot (the default) or, with
``--robot config/rolling_joint_snake.yaml``, the rolling-joint snake (cables; no
tip-target step, the snake has no statics model).

Starts the ``sim`` stack headless through the local launcher (simulated time on
``/clock``), pulls each tendon in turn (``--tension`` N for ``--hold`` simulated
seconds once the simulator has the tensions, then on until the tip has settled, at most
``--settle`` s more, then releases it, alike), then sends a tip
target (the tip of the statics model with the first two tendons at ``--tension``:
reachable by construction) and holds it until the tip is within 1 mm or for
``--target-hold`` s of the controller's periods (as many simulated seconds unless a loaded
machine holds the controller up), records every topic of the stack into a
rosbag2 bag, prints the tip position at the end of each step (and whether the tip was
at rest or still moving then) and draws the
backbone of each step as a PNG. Output folder
(``--out``, default ``demo_output/``)::

    robot.yaml         the robot simulated (the robot file, with --elements if given; a copy
                       of the scratch file the nodes read)
    bag/               rosbag2 bag (MCAP, CDR): `tendon-robot-sim replay demo_output/bag`
    step_<i>_<label>.png  backbone, discs and tendons at the end of step i (3-D, side, top)
    overview.png       every step's backbone, side and top views, a colour per tendon
    tip_positions.csv  the printed table
    stack.log          output of the stack's nodes

Every demo checks its stack (the local launcher's checks, the world's too) and the bag's place
before it writes anything into ``--out``: a refused run leaves the folder as it was.

ROS imports happen inside :func:`run`, so the command-line tool loads without rclpy.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
import re
import shlex
import tempfile

import numpy as np
from tendon_robot_sim import default_robot_file, progress_bar
from tendon_robot_sim.commands import (check_output, check_ros_environment, command_error,
                                       CommandError, DefaultsHelpFormatter, input_file, OutputPath,
                                       positive, positive_int, within)
from tendon_robot_sim.commands.demo_hardware import (check_bag, DEVICES, format_table,
                                                     fresh_bag, run_hardware)
from tendon_robot_sim.files.outputs import (make_folder, open_growing, open_output, save_figure,
                                            write_output)
from tendon_robot_sim.launcher import (file_parameters, LaunchError, parameter_table,
                                       StackLauncher)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import load_actuation
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.sim_model import INPUT_COLORS
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.stack import SIMULATOR
import yaml

# Wall seconds the stack may take to start, and the simulation may stand still.
STARTUP_TIMEOUT = 60.0
STALL_TIMEOUT = 30.0
# --real-time-factor: at most 10, so that the simulator's physics rate, scaled with it
# (paced_parameters), stays within its parameter's range (50 Hz by default)
REAL_TIME_FACTORS = (0.1, 10.0)
# s: defaults of the step timings, set once it is known which the chosen demo reads
TIMING_DEFAULTS = {'hold': 1.0, 'target_hold': 5.0, 'settle': 3.0}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'demo', help='run the simulation stack headless with a scripted tension sequence',
        description='Start the sim stack headless, pull each tendon in turn, record all '
                    'topics to a rosbag2 bag, print tip positions and draw each step as PNG.',
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument('--out', type=OutputPath('folder'), default=None,
                        help='output folder (bag, PNGs, table, log; default demo_output, with '
                             '--hardware demo_output/hardware)')
    parser.add_argument('--robot', type=input_file, default=None,
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--tension', type=positive, default=2.0,
                        help='tension of the pulled tendon in each step [N]')
    parser.add_argument('--hold', type=positive, default=None,
                        help='simulated time each step is held, from when the simulator has '
                             f"its tensions [s] (default: {TIMING_DEFAULTS['hold']})")
    parser.add_argument('--target-hold', type=positive, default=None,
                        help='longest time the tip-target step is held, in periods of the '
                             'tension controller (simulated time while the machine keeps up) '
                             f"[s] (default: {TIMING_DEFAULTS['target_hold']}; the simulated "
                             'demo of a tendon robot only: the others have no tip-target '
                             'step)')
    parser.add_argument('--settle', type=within(0.0, 60.0, 's'), default=None,
                        help='after --hold, hold a tension step on until the tip has settled '
                             '(within 1 mm over 0.5 s), for at most this much more simulated '
                             'time [s]; a row read while the tip still moves says so '
                             f"(default: {TIMING_DEFAULTS['settle']})")
    parser.add_argument('--hardware', choices=sorted(DEVICES), default=None,
                        help='run the hardware stack on emulated devices instead: dynamixel '
                             '(Dynamixel X-series servos and an LK-G style laser) or tdcr (the '
                             "package's own motor driver and laser); --hold is then wall-clock "
                             'time, and the output goes to demo_output/hardware by default')
    parser.add_argument('--world', type=Path, default=None, metavar='FILE',
                        help='the contact demo instead: the sim stack with this world, --pull '
                             'pulled to --tension, the contacts printed and a picture of the '
                             'browser view with the contact forces (demo_output/contact by '
                             'default; make demo-contact)')
    parser.add_argument('--pull', default=None, metavar='TENDON',
                        help='with --world: the tendon pulled to --tension')
    parser.add_argument('--elements', type=positive_int, default=None,
                        help='Cosserat elements of the rod (default: rod.elements of the robot '
                             'file); fewer run faster, at some loss of accuracy')
    parser.add_argument('--real-time-factor', type=within(*REAL_TIME_FACTORS), default=1.0,
                        help="simulated seconds per wall-clock second (the simulator's "
                             'real_time_factor): below 1 slow motion; above 1 the run ends '
                             'sooner, its physics ticks per simulated second as at 1 where the '
                             'machine keeps up (as fast as it can where not), its messages at '
                             'their rate in wall-clock time')
    parser.set_defaults(func=run)


def run(args) -> int:
    check_ros_environment()
    robot_file = args.robot or default_robot_file()
    try:
        _, actuation = load_actuation(robot_file, 'the demo')
    except RobotDescriptionError as error:
        raise command_error(error) from None
    robot = actuation.statics_robot     # a tendon robot; None: no statics, no tip target
    if args.elements is not None:
        if robot is None:
            raise CommandError('--elements: only a tendon robot has Cosserat elements')
        try:
            robot = robot.with_changes(elements=args.elements)
        except RobotDescriptionError as error:
            raise CommandError(f'--elements: {error}') from None
    if not (np.isfinite(args.tension) and 0.0 < args.tension <= actuation.max_tensions.min()):
        raise CommandError(f'--tension: must be in (0, {actuation.max_tensions.min():g}] N '
                           f'(the smallest max_tension of the robot), got {args.tension:g}')
    _check_timings(args, robot)
    if not (np.isfinite(args.hold) and 0.0 < args.hold <= 60.0):
        raise CommandError(f'--hold: must be in (0, 60] s, got {args.hold:g}')
    if not (np.isfinite(args.target_hold) and 0.0 < args.target_hold <= 60.0):
        raise CommandError(f'--target-hold: must be in (0, 60] s, got {args.target_hold:g}')
    if (args.pull is None) != (args.world is None):
        raise CommandError('--pull: goes with --world (the contact demo), and --world needs it')
    if args.real_time_factor != 1.0 and (args.world is not None or args.hardware is not None):
        raise CommandError('--real-time-factor: the simulated demo only (the contact demo is '
                           'quasi-static, the hardware runs in real time)')
    if args.world is not None:
        if robot is None or args.hardware is not None or args.elements is not None:
            raise CommandError('--world: the contact demo simulates a tendon robot, without '
                               '--hardware or --elements')
        from tendon_robot_sim.commands.demo_contact import run_contact
        args.out = args.out or check_output('demo_output/contact', '--out', 'folder')
        return run_contact(args, robot, robot_file)
    if args.hardware is not None:
        if robot is None:
            raise CommandError('--hardware: the hardware stack drives a tendon robot')
        if args.elements is not None:
            raise CommandError('--elements: the hardware demo has no simulated rod')
        args.out = args.out or check_output('demo_output/hardware', '--out', 'folder')
        return run_hardware(args, robot, robot_file)
    out = args.out or check_output('demo_output', '--out', 'folder')
    bag = out / 'bag'
    if robot is None:
        simulated, said = Path(robot_file).read_text(), f'robot: {robot_file}'
    else:
        simulated = (f'# simulated by tendon-robot-sim demo: {robot_file}, rod.elements = '
                     f'{robot.rod.elements}\n' + yaml.safe_dump(robot.to_dict(), sort_keys=False))
        said = f'robot: {robot.name!r} from {robot_file}, rod.elements = {robot.rod.elements}'
    check_bag(bag)

    from tendon_robot_sim.ros.demo import demo_phases
    target = None if robot is None else demo_target(actuation.statics_robot, args.tension)
    phases = demo_phases(actuation.names, args.tension, target)
    # The nodes read the robot simulated from a scratch file: the stack is checked (the
    # launcher) before anything is written to --out, so a refused run leaves it as it was;
    # OUT/robot.yaml is its copy.
    with tempfile.TemporaryDirectory(prefix='tendon_robot_sim_demo_') as scratch:
        demo_robot = Path(scratch) / 'robot.yaml'
        demo_robot.write_text(simulated, encoding='utf-8')
        try:
            launcher = StackLauncher(
                'sim', {'robot': str(demo_robot), 'rviz': 'false', 'use_sim_time': 'true'},
                paced_parameters(args.real_time_factor))
        except LaunchError as error:
            raise command_error(error) from None
        make_folder(out)
        write_output(out / 'robot.yaml', simulated)
        print(said)
        fresh_bag(bag)
        # The demo's DDS traffic stays on this machine (and does not see other robots).
        os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        log_path = out / 'stack.log'
        with open_growing(log_path) as log:
            launcher.log_into(log)
            snapshots, counts = _record(launcher, bag, phases, args.hold, args.target_hold,
                                        log_path, args.settle)

    rows = _table(snapshots)
    print(format_table(rows, 't_sim [s]', {p.label for p in phases if p.target is not None}))
    if target is not None:
        reached = snapshots[-1].tip_position
        print(f'tip target [mm]: x {target[0] * 1e3:.1f}, y {target[1] * 1e3:.1f}, '
              f'z {target[2] * 1e3:.1f}; reached {np.linalg.norm(reached - target) * 1e3:.2f} '
              'mm from it')
    with open_output(out / 'tip_positions.csv', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['step', 'phase', 'time_s', 'tip_x_m', 'tip_y_m', 'tip_z_m',
                         'tip_spread_m', 'settled'])
        writer.writerows(rows)
    pictures = _draw(snapshots, out)
    print(f'\nbag: {bag} ({sum(counts.values())} messages: '
          + ', '.join(f'{topic} {n}' for topic, n in counts.items()) + ')')
    print(f'pictures: {len(pictures)} PNG files in {out} (overview.png shows every step)')
    # the package's own players: `make setup`'s venv has no ROS CLI (`ros2 bag play`)
    print(f'replay: tendon-robot-sim replay {shlex.quote(str(bag))}; '
          f'tendon-robot-sim view --bag {shlex.quote(str(bag))}')
    return 0


def paced_parameters(factor: float) -> list[str]:
    """
    Return the simulator's ``--param`` overrides that run it at ``factor`` times real time.

    Faster than real time, the physics ticks (each a /clock message) come ``factor`` times as
    often in wall-clock time, so that per simulated second there are as many as at 1: the
    tension controller, on simulated time, runs its loop as at 1. The messages stay at their
    rate in wall-clock time (fewer per simulated second), so that the bag's recorder keeps up
    on a busy machine as at 1. Slower than real time, the rates stay: smooth to watch.
    """
    table = parameter_table(SIMULATOR)
    given = {**{name: param.default for name, param in table.items()},
             **file_parameters(SIMULATOR)}
    rate = min(given['physics_rate'] * max(factor, 1.0), table['physics_rate'].range[1])
    return [f'simulator:real_time_factor:={factor!r}', f'simulator:physics_rate:={rate!r}']


def demo_target(robot: Robot, tension: float) -> np.ndarray:
    """
    Return the tip target of the demo [m, base frame].

    The statics tip (discrete model) with the first two tendons at ``tension`` N and the others
    slack, so it is reachable. ``robot``: the tip controller's model of the robot
    (``Actuation.statics_robot``: without its friction).
    """
    tensions = np.zeros(len(robot.tendons))
    tensions[:2] = tension
    return StaticsSolver(robot, 'discrete').solve_tensions(tensions).tip_position


def _check_timings(args, robot) -> None:
    """Refuse a step timing the chosen demo never reads (exit 2); set the others' defaults."""
    if args.world is not None:      # one quasi-static press: no step is held
        unread = {'hold': 'the contact demo holds no step',
                  'settle': 'the contact demo holds no step'}
    else:
        unread = {}
    if robot is None or args.world is not None or args.hardware is not None:
        # the snake has no statics model; the contact and the hardware demos pull only
        unread['target_hold'] = 'only the simulated demo of a tendon robot has a tip-target step'
    for name, default in TIMING_DEFAULTS.items():
        given = getattr(args, name) is not None
        if given and name in unread:
            raise CommandError(f"--{name.replace('_', '-')}: {unread[name]}")
        if not given:
            setattr(args, name, default)


def _record(launcher: StackLauncher, bag: Path, phases, hold: float, target_hold: float,
            log_path: Path, settle: float = 0.0):
    """Run the stack, drive the phases and record; (snapshots, messages per topic)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from tendon_robot_sim.ros.demo import (DemoDriver, phase_budget, run_phases, shut_down,
                                           wait_recorded, wait_until)
    from tendon_robot_sim.ros import topics
    from tendon_robot_sim.ros.recorder import BagRecorder

    def alive() -> None:
        for node in launcher.exited():
            raise CommandError(f'node {node.entry.name} exited with code '
                               f'{node.process.returncode}; see {log_path}')

    # Ctrl-C and SIGTERM are the command's (cli.main: exit 130 or 143, after the clean-up
    # below); rclpy's own handler shut the context down under the executor, which ended as an
    # internal error
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor()
    nodes = []
    try:
        launcher.start()
        recorder = BagRecorder(bag)
        nodes.append(recorder)
        driver = DemoDriver()
        nodes.append(driver)
        for node in nodes:
            executor.add_node(node)
        # Ready: the robot is drawn (to the driver and into the bag: the recorder's
        # subscriptions can match later than the driver's), time runs, and the controller and
        # the recorder both listen to commands, the controller to tip targets (a command sent
        # earlier would be lost to them).
        ready = wait_until(
            executor, lambda: (driver.tip_pose is not None and driver.markers is not None
                               and recorder.recorded(topics.TENDON_STATE)
                               and recorder.recorded(topics.TIP_POSE)
                               and driver.now() > 0.0
                               and driver.command_pub.get_subscription_count() >= 2
                               and driver.target_pub.get_subscription_count() >= 1),
            STARTUP_TIMEOUT, alive)
        if not ready:
            raise CommandError(f'the sim stack did not come up within {STARTUP_TIMEOUT:g} s; '
                               f'see {log_path}')
        # at most: settling counted, and taken off the total where a step did not need it
        total = sum(phase_budget(p, hold, target_hold, settle) for p in phases)
        with progress_bar(total=total, unit='s', desc='simulated', mininterval=0.5,
                          bar_format='{desc}: {percentage:3.0f}%|{bar}| {n:.2f}/{total:.2f} s '
                                     '[{elapsed}<{remaining}] {postfix}') as bar:
            def progress(seconds: float, label: str, budget: float) -> None:
                bar.set_postfix_str(label, refresh=False)
                bar.total += budget
                bar.update(seconds)
            try:
                rate = driver.control_rate(executor, STARTUP_TIMEOUT, alive)
                snapshots = run_phases(executor, driver, phases, hold, alive, progress,
                                       STALL_TIMEOUT, rate, target_hold, settle)
            except TimeoutError as error:
                raise CommandError(f'{error}; see {log_path}') from None
        # the bag holds the last tabled tip (on a loaded machine it was once still queued)
        if not wait_recorded(executor, recorder, topics.TIP_POSE, driver.tip_time(),
                             STALL_TIMEOUT, alive):
            raise CommandError(f'the bag did not get the last tip pose within '
                               f'{STALL_TIMEOUT:g} s; see {log_path}')
        counts = recorder.counts
    finally:
        shut_down(executor, nodes, launcher)
    return snapshots, counts


def _table(snapshots) -> list[list]:
    return [[i, s.phase.label, round(s.time, 3), *np.round(s.tip_position, 5).tolist(),
             round(min(s.tip_spread, 99.0), 5), s.settled] for i, s in enumerate(snapshots)]


def _draw(snapshots, out: Path) -> list[Path]:
    """One PNG per step (3D view, side view x-z, top view x-y) and an overview."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    limits = _limits(snapshots)
    names = list(snapshots[0].phase.tensions)     # the first phase, rest, names every tendon
    paths = []
    for i, snapshot in enumerate(snapshots):
        fig = step_figure(i, snapshot, limits, names)
        slug = re.sub(r'[^a-z0-9]+', '_', snapshot.phase.label.lower()).strip('_')
        paths.append(out / f'step_{i:02d}_{slug}.png')
        save_figure(fig, paths[-1], dpi=100)
        plt.close(fig)
    fig = overview_figure(snapshots, limits)
    paths.append(out / 'overview.png')
    save_figure(fig, paths[-1], dpi=100)
    plt.close(fig)
    return paths


def _limits(snapshots) -> list[tuple[float, float]]:
    """One cube around every step's backbone [m]: the pictures of all steps share a scale."""
    points = np.concatenate([s.centerline for s in snapshots], axis=1)
    centre = (points.max(axis=1) + points.min(axis=1)) / 2.0
    half = (points.max(axis=1) - points.min(axis=1)).max() / 2.0 + 0.03
    return [(c - half, c + half) for c in centre]


def _tendon_handles(names) -> list:
    """Legend entries of the tendons' colours (the markers' INPUT_COLORS, in tendon order)."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], color=INPUT_COLORS[k % len(INPUT_COLORS)][:3], lw=2, label=name)
            for k, name in enumerate(names)]


def step_figure(i: int, snapshot, limits, names):
    """
    Return the figure of step ``i``: 3-D view, side view (x-z), top view (x-y), one scale.

    The 3-D panel is as large as the others, its labels kept clear of the side view's, and a
    legend beside the top view names the tendons' colours.
    """
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(14, 5.2), layout='constrained')
    grid = fig.add_gridspec(1, 3, width_ratios=(1.25, 1, 1), wspace=0.08)
    ax = fig.add_subplot(grid[0], projection='3d')
    _draw_robot(ax, snapshot, (0, 1, 2))
    _axes(ax, limits, (0, 1, 2))
    ax.zaxis.labelpad = 8
    ax.set_title('3-D view', fontsize=10)
    for k, (view, title) in enumerate((((0, 2), 'side view (x-z)'),
                                       ((0, 1), 'top view (x-y)'))):
        ax2 = fig.add_subplot(grid[1 + k])
        _draw_robot(ax2, snapshot, view)
        _axes(ax2, limits, view)
        ax2.set_title(title, fontsize=10)
    ax2.legend(handles=_tendon_handles(names), title='tendon',
               fontsize=8, loc='upper left', bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    tip = snapshot.tip_position * 1e3
    fig.suptitle(f'step {i}: {snapshot.phase.label}  (t = {snapshot.time:.2f} s);  '
                 f'tip [mm]: x {tip[0]:.1f}, y {tip[1]:.1f}, z {tip[2]:.1f}')
    return fig


def overview_figure(snapshots, limits):
    """
    Return the overview: every step's backbone in a side (x-z) and a top (x-y) view.

    A pull is drawn in its tendon's colour; the rest and the releases, which lie on one
    another, are one grey line; the tip-target step is black, dashed, its target a cross.
    """
    import matplotlib.pyplot as plt

    names = list(snapshots[0].phase.tensions)      # rest names every tendon
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), layout='constrained')
    for view, ax, title in (((0, 2), axes[0], 'side view (x-z)'),
                            ((0, 1), axes[1], 'top view (x-y)')):
        view = list(view)
        rests = []
        for i, snapshot in enumerate(snapshots):
            phase = snapshot.phase
            pulled = [k for k, name in enumerate(names) if phase.tensions.get(name, 0.0) > 0.0]
            line = snapshot.centerline[view]
            if phase.target is not None:
                ax.plot(*line, color='k', ls='--', lw=1.5, label=f'{i}: {phase.label}')
                ax.plot(*np.asarray(phase.target)[view], 'kx', ms=9, mew=2, label='tip target')
            elif pulled:
                colour = INPUT_COLORS[pulled[0] % len(INPUT_COLORS)][:3]
                ax.plot(*line, color=colour, lw=2, label=f'{i}: {phase.label}')
            else:
                rests.append(i)
                ax.plot(*line, color='0.55', lw=4, alpha=0.5,
                        label=None if len(rests) > 1 else 'rest and released')
        _axes(ax, limits, view)
        ax.set_title(title, fontsize=10)
    handles, labels = axes[1].get_legend_handles_labels()
    if rests:
        labels[labels.index('rest and released')] = (
            'steps ' + ', '.join(map(str, rests)) + ': rest and released')
    axes[1].legend(handles, labels, fontsize=8, loc='upper left', bbox_to_anchor=(1.02, 1.0),
                   borderaxespad=0.0)
    fig.suptitle('backbone at the end of each step')
    return fig


def _draw_robot(ax, snapshot, view: tuple[int, ...]) -> None:
    """
    Backbone, disc rims, tendons and tip, in the coordinates ``view`` (2 or 3 of x y z).

    Rims and the segments of one colour are joined into one line broken by NaN
    columns: a few artists draw much faster than one per segment.
    """
    view = list(view)
    ax.plot(*snapshot.centerline[view], color='0.35', lw=3)
    angles = np.linspace(0.0, 2.0 * np.pi, 33)
    gap = np.full((3, 1), np.nan)
    rims = []
    for centre, normal in zip(snapshot.disc_centers.T, snapshot.disc_normals.T):
        # two unit vectors spanning the disc plane
        helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0, 1.0, 0])
        u = np.cross(normal, helper)
        u /= np.linalg.norm(u)
        v = np.cross(normal, u)
        rims += [centre[:, None] + snapshot.disc_radius * (
            np.outer(u, np.cos(angles)) + np.outer(v, np.sin(angles))), gap]
    if rims:
        ax.plot(*np.concatenate(rims, axis=1)[view], color='0.6', lw=1)
    for color in np.unique(snapshot.tendon_colors, axis=0):
        mine = np.all(snapshot.tendon_colors == color, axis=1)
        lines = [np.column_stack((start, end, gap[:, 0]))
                 for start, end in snapshot.tendon_segments[mine]]
        ax.plot(*np.concatenate(lines, axis=1)[view], color=color, lw=1)
    ax.scatter(*snapshot.tip_position[view], color='red', s=15, zorder=5)


def _axes(ax, limits, view: tuple[int, ...]) -> None:
    names = ('x [m]', 'y [m]', 'z [m]')
    setters = ((ax.set_xlim, ax.set_xlabel), (ax.set_ylim, ax.set_ylabel))
    if len(view) == 3:
        from matplotlib.ticker import MaxNLocator
        setters += ((ax.set_zlim, ax.set_zlabel),)
        ax.set_box_aspect((1, 1, 1))
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):     # ticks that do not run together
            axis.set_major_locator(MaxNLocator(nbins=4))
    else:
        ax.set_aspect('equal')
        ax.grid(True, lw=0.3)
    for (set_limits, set_label), axis in zip(setters, view):
        set_limits(*limits[axis])
        set_label(names[axis])
