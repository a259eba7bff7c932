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

r"""
``tendon-robot-sim simulate``: run the dynamic model and report the tip pose.

    tendon-robot-sim simulate --tensions 0,2,0,0 --duration 1.5
    tendon-robot-sim simulate --robot my_robot.yaml --tensions t1=2.0 --until-steady --json
    tendon-robot-sim simulate --robot config/till_tendon_robot.yaml --dt 0.05 \\
        --displacements-csv config/till_tendon_robot_displacements.csv --trajectory-out tip.csv

``--integrator`` picks the explicit (PyElastica) or the implicit (BDF-alpha and shooting) model;
``auto`` (the default) the one the robot needs (``choose_integrator``); ``--alpha`` sets the
implicit one's BDF-alpha parameter (0: BDF2, -0.5: trapezoidal). Constant ``--tensions``
are a step: the run starts at rest without tension (the explicit model settles there first) and
they pull from the first step on. Inputs over time come from CSV files with a column ``t`` [s]
and one column per tendon (by name), linear between rows (two rows at one time make a step; the
format of :mod:`~tendon_robot_sim.experiment.input_profile`): tensions [N], displacements [m]
pulled in (implicit only), or both for different tendons; a tendon named in neither has
tension 0 (slack). Such a run starts at rest in the static equilibrium of the inputs at t = 0
(the explicit model settles there first), ``--duration`` defaulting to the files' last time.
``--trajectory-out`` writes ``t,x,y,z,qx,qy,qz,qw`` (tip in the base frame), then
``tension_<name>`` [N] and
``displacement_<name>`` [m] per tendon (and the implicit model's ``tip_error_estimate``):
every step of the implicit model, every millisecond of
the explicit one. With ``--json`` the last line on stdout is one JSON object with
``tip_position`` [x, y, z] (m, base frame), ``tip_orientation`` [qx, qy, qz, qw], ``sim_time``
(s), ``wall_time`` (s) and ``real_time_factor`` of the run itself (from its t = 0),
``first_call_time`` (s: building the model and its first step, taken apart from the run, in
which numba compiles the integrator on a first run), ``settle_time`` (s: bringing the robot to
rest before t = 0, the explicit model's settling, the implicit one's equilibrium of input
files), each said beside the speed when 1 s or more, ``steady`` and ``integrator``.
``--until-steady`` (constant ``--tensions`` only) ends the run once the tip is at rest, its
trajectory written as a fixed run's. A run takes whole steps: a duration between two steps runs
to the later one. A progress bar goes
to stderr when it is a terminal. ``--world FILE`` puts obstacles in the robot's way (either
integrator; ``auto`` picks as without one): the JSON gets ``contacts`` and ``max_penetration``
(as ``statics --json``), the trajectory ``contact_fx, contact_fy, contact_fz`` [N], the total
contact force on the robot.

The implicit model checks every step (``models/rod/dynamics/implicit_step_control.py``): its
local error estimate of the tip goes in the trajectory's column ``tip_error_estimate`` [m]
(the largest of the row's steps) and its largest in the JSON (``tip_error_estimate``, with
``steps`` and ``smallest_dt``). ``--tip-tolerance M`` makes dt adaptive: each step's estimate
within M metres, dt between ``--dt`` (the largest, and the trajectory's row spacing) and
``--dt-min`` (default ``--dt`` / 16).
"""

import argparse
import json
import sys
import time

import numpy as np
from tendon_robot_sim import default_robot_file, progress_bar
from tendon_robot_sim.commands import (check_steps, command_error, CommandError, finite,
                                       input_file, OutputPath, parse_values, positive, read_inputs,
                                       run_duration, run_steps, time_step, within)
from tendon_robot_sim.experiment.input_profile import MixedInputs, ProfileError
from tendon_robot_sim.files.outputs import open_output
from tendon_robot_sim.models.contact.report import largest_penetration, total_force
from tendon_robot_sim.models.contact.world import load_world, WorldError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.models.rod.dynamics.simulation import (ALPHA_RANGE, choose_integrator,
                                                             INTEGRATORS)
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
from tendon_robot_sim.models.tendon_robot import load_robot

# Simulated seconds between progress-bar updates.
CHUNK = 0.05
# Implicit model: fewest steps between them (each call around the kernel costs about 0.3 ms of
# Python: at Till's dt = 50 ms one step a call took twice the integration's own time).
CHUNK_STEPS = 20
# --until-steady: the most simulated time [s] unless --max-time says otherwise
MAX_TIME = 10.0
# Explicit model: simulated seconds between trajectory rows and input updates.
EXPLICIT_SAMPLE = 1e-3
# Explicit model (it starts straight): longest settling under the inputs at t = 0 [s].
SETTLE_TIME = 20.0
# Wall seconds beyond which a run says how long it will take, once its speed is measured over
# this many wall seconds or chunks after the first chunk (which holds the start-up).
LONG_RUN = 30.0
ESTIMATE_AFTER, ESTIMATE_CHUNKS = 1.0, 20


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'simulate', help='run the dynamic simulation and print the tip pose',
        description='Simulate the robot (explicit PyElastica or implicit Cosserat dynamics) under '
                    'constant tensions or inputs over time, and print the tip pose.')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--integrator', choices=INTEGRATORS, default='auto',
                        help='explicit (PyElastica position Verlet, tensions only), implicit '
                             '(BDF2 with shooting in arc length) or auto: implicit for robots '
                             'without discs, with discs closer together than the nodes of '
                             'rod.elements, with Kelvin-Voigt damping, drag or tendon friction, '
                             'or stiff ones (default auto)')
    parser.add_argument('--tensions', default=None, metavar='T',
                        help="constant tendon tensions in N: one per tendon ('0,2,0,0') or by "
                             "name ('t1=2.0,t3=0.5', others 0), default all 0. A step: the run "
                             'starts at rest without tension and they pull from the first step '
                             'on (to start in equilibrium under tensions, give --tensions-csv)')
    parser.add_argument('--tensions-csv', default=None, metavar='FILE',
                        help='tensions over time: columns t [s] and tendon names [N], '
                             'linear between rows, a step where two rows share a time; the run '
                             'starts at rest in the equilibrium of the t = 0 row')
    parser.add_argument('--displacements-csv', default=None, metavar='FILE',
                        help='displacements over time: columns t [s] and tendon names [m], '
                             'positive when pulled in (implicit integrator); with '
                             '--tensions-csv for other tendons. A tendon named in neither file '
                             'has tension 0 (slack)')
    until = parser.add_mutually_exclusive_group()
    until.add_argument('--duration', type=positive, default=None, metavar='S',
                       help="simulated time in s (default 1.0, or the input file's last time)")
    until.add_argument('--until-steady', action='store_true',
                       help='with constant --tensions: run until the tip is at rest (see '
                            '--max-time); the trajectory keeps the whole run')
    parser.add_argument('--max-time', type=positive, default=None, metavar='S',
                        help=f'with --until-steady: most simulated time in s (default '
                             f'{MAX_TIME:g})')
    parser.add_argument('--dt', type=time_step, default=None, metavar='S',
                        help='time step in s (default: explicit, from the stability bound; '
                             'implicit, 2 ms)')
    parser.add_argument('--alpha', type=bdf_alpha, default=None, metavar='A',
                        help=f'BDF-alpha parameter of the implicit integrator, within '
                             f'[{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}]: 0 is BDF2 (the default, '
                             'damps what dt does not resolve), -0.5 the trapezoidal rule (no '
                             'numerical damping)')
    # 1 nm: below round-off of a tip's position; the steps it asks are bounded by --dt-min
    parser.add_argument('--tip-tolerance', type=within(1e-9, 1.0, 'm'), default=None,
                        metavar='M',
                        help="implicit integrator: adaptive dt, each step's local error estimate "
                             'of the tip position within M metres (dt between --dt-min and --dt; '
                             'default: fixed dt, a step refused only when it leaves the motion)')
    parser.add_argument('--dt-min', type=time_step, default=None, metavar='S',
                        help='with --tip-tolerance: the smallest step in s, rounded down to '
                             '--dt / 2^k (default --dt / 16)')
    parser.add_argument('--world', default=None, metavar='FILE',
                        help='world description YAML: obstacles the robot touches '
                             '(docs/tendon_robot.md, "Contact with the world"); the trajectory '
                             'gets the total contact force')
    parser.add_argument('--trajectory-out', default=None, metavar='FILE.csv',
                        type=OutputPath('file', ('.csv',)),
                        help='write the tip and the tendons over time to this CSV file')
    parser.add_argument('--json', action='store_true',
                        help='end the output with one JSON line: the tip pose, sim_time, '
                             'wall_time [s] and real_time_factor of the run itself (from its '
                             't = 0), first_call_time [s] (building the model and its first '
                             'step, apart from the run: numba compiles the integrator on a '
                             'first run), settle_time [s] (bringing the robot to rest before '
                             't = 0), steady')
    parser.set_defaults(func=run)


def bdf_alpha(text: str) -> float:
    """Argument type of ``--alpha``: a number within ALPHA_RANGE."""
    value = finite(text)
    if not ALPHA_RANGE[0] <= value <= ALPHA_RANGE[1]:
        raise argparse.ArgumentTypeError(
            f'must be within [{ALPHA_RANGE[0]:g}, {ALPHA_RANGE[1]:g}] (0: BDF2, -0.5: '
            f'trapezoidal), got {text}')
    return value


def inputs_at(profile: MixedInputs, times: np.ndarray) -> np.ndarray:
    """Return the profile's inputs (m, n) at the times (m,) [s]."""
    return np.array([profile.at(t) for t in times])


def read_series(args: argparse.Namespace, robot, integrator: str) -> MixedInputs | None:
    """Read ``--tensions-csv`` and ``--displacements-csv``; None without either."""
    if args.tensions is not None and (args.tensions_csv or args.displacements_csv):
        raise CommandError('--tensions: constant tensions or input files over time, not both '
                           '(put the constant tensions in --tensions-csv)')
    if args.displacements_csv and integrator == 'explicit':
        raise CommandError('--displacements-csv: the explicit integrator takes tensions '
                           'only; use --integrator implicit (or auto)')
    tensions, displacements = (
        read_inputs(path, option, robot, field) if path else None
        for path, option, field in ((args.tensions_csv, '--tensions-csv', 'tension'),
                                    (args.displacements_csv, '--displacements-csv',
                                     'displacement')))
    if tensions is None and displacements is None:
        return None
    try:
        return MixedInputs(tensions, displacements)
    except ProfileError as error:
        raise CommandError(f'--displacements-csv: {error}') from None


class Trajectory:
    """Rows of the ``--trajectory-out`` file, written when the run ends (however it ends)."""

    def __init__(self, path, names: list[str], contact: bool = False, estimate: bool = False):
        self.path = path          # checked when parsed (OutputPath), before the run
        self.contact = contact and path is not None    # rows carry the total contact force
        self.header = (['t', 'x', 'y', 'z', 'qx', 'qy', 'qz', 'qw']
                       + [f'tension_{n}' for n in names] + [f'displacement_{n}' for n in names]
                       + (['tip_error_estimate'] if estimate else [])
                       + (['contact_fx', 'contact_fy', 'contact_fz'] if contact else []))
        self.rows = []

    def add(self, t, positions, quaternions, tensions, displacements, contacts=None,
            estimates=None) -> None:
        if self.path is not None:
            total = () if contacts is None else (total_force(contacts)[None],)
            estimate = () if estimates is None else (estimates,)
            self.rows.append(np.column_stack((t, positions, quaternions, tensions,
                                              displacements, *estimate, *total)))

    def write(self) -> None:
        if self.path is None:
            return
        rows = np.vstack(self.rows) if self.rows else np.zeros((0, len(self.header)))
        with open_output(self.path) as handle:
            np.savetxt(handle, rows, delimiter=',', header=','.join(self.header), comments='',
                       fmt='%.10g')


def _announcing_long_runs(bar, total: float, bounded: bool = False):
    """
    Return ``bar.update`` that also says, once, how long a long run will take.

    The bar shows only on a terminal; a run of hours (``--duration 1e9``) must not be
    silent elsewhere: one line on stderr gives the expected wall time of the rest of the run.
    The speed is measured from the end of the first chunk on, which holds the start-up (numba's
    compile, the first solves: a 13 s run was once announced at 22 min), over at least
    ESTIMATE_AFTER wall seconds or ESTIMATE_CHUNKS chunks. With ``bounded`` (``--until-steady``)
    ``total`` is the bound ``--max-time``, and the line says so: the run ends when the tip is
    at rest, often much sooner.
    """
    update = bar.update
    done = [0.0]         # simulated seconds so far (a bar off a terminal counts nothing)
    first: list = []     # (wall, simulated) at the end of the first chunk
    chunks = [0]
    told = []

    def announcing(seconds: float) -> None:
        update(seconds)
        if told or seconds <= 0:
            return
        done[0] += seconds
        now = time.perf_counter()
        if not first:
            first.append((now, done[0]))
            return
        chunks[0] += 1
        wall = now - first[0][0]
        if wall < ESTIMATE_AFTER and chunks[0] < ESTIMATE_CHUNKS:
            return
        told.append(True)
        speed = (done[0] - first[0][1]) / max(wall, 1e-9)
        rest = max(total - done[0], 0.0) / speed
        if rest > LONG_RUN:
            if bounded:
                print(f'simulating until the tip is at rest, at most {total:g} s: up to about '
                      f'{_duration(rest)} more at {speed:.3g} x real time; Ctrl-C stops',
                      file=sys.stderr, flush=True)
            else:
                print(f'simulating {total:g} s takes about {_duration(rest)} more at '
                      f'{speed:.3g} x real time; Ctrl-C stops', file=sys.stderr, flush=True)
    return announcing


def _duration(seconds: float) -> str:
    for unit, size in (('years', 3.156e7), ('days', 86400.0), ('h', 3600.0), ('min', 60.0)):
        if seconds >= size:
            return f'{seconds / size:.3g} {unit}'
    return f'{seconds:.3g} s'


def _check_companions(args: argparse.Namespace) -> None:
    """Refuse a flag that only works beside another one (it would be ignored)."""
    if args.max_time is not None and not args.until_steady:
        raise CommandError('--max-time: applies with --until-steady only')
    if args.until_steady and (args.tensions_csv or args.displacements_csv):
        # the run stopped at the first rest, under the file's t = 0 row, and said it was done
        raise CommandError('--until-steady: runs under constant --tensions; inputs over time '
                           'run to the last time of their file (or --duration)')
    if args.dt_min is not None and args.tip_tolerance is None:
        raise CommandError('--dt-min: applies with --tip-tolerance only (adaptive dt)')


def run(args: argparse.Namespace) -> int:
    _check_companions(args)
    if args.max_time is None:       # its default, once it is known not to be given alone
        args.max_time = MAX_TIME
    path = args.robot or default_robot_file()
    try:
        robot = load_robot(path)
        world = None if args.world is None else load_world(args.world)
        # displacements over time need the implicit integrator: auto takes it for them
        asked = ('implicit' if args.displacements_csv and args.integrator == 'auto'
                 else args.integrator)
        integrator, why = choose_integrator(robot, asked)
        series = read_series(args, robot, integrator)
        field = series.fields if series is not None else None
        duration, given_by = run_duration(
            args.duration, series.end if series is not None else None,
            '--tensions-csv' if args.tensions_csv else '--displacements-csv', 1.0)
        total = args.max_time if args.until_steady else duration
        steps = {'kept': args.trajectory_out is not None,
                 'option': '--max-time' if args.until_steady else given_by}
        if args.dt is not None:     # before the model, whose warning of dt would come first
            check_steps(total, args.dt, **steps)
        if integrator == 'explicit' and args.tip_tolerance is not None:   # and --dt-min
            raise CommandError(f'--tip-tolerance: applies to the implicit integrator only; this '
                               f'run is explicit ({why}): add --integrator implicit')
        if integrator == 'explicit' and args.alpha is not None:
            raise CommandError(f'--alpha: applies to the implicit integrator only; this run is '
                               f'explicit ({why}): add --integrator implicit')
        # building the model (numba compiles the implicit one's statics on a first run)
        start = time.perf_counter()
        if integrator == 'implicit':
            from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator

            def make():
                return ImplicitSimulator(robot, dt=args.dt, alpha=_alpha(args), world=world,
                                         tip_tolerance=args.tip_tolerance, dt_min=args.dt_min)
        else:
            from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator

            def make():
                return TendonSimulator(robot, dt=args.dt, world=world)
        sim = make()
        built = time.perf_counter() - start
        # a trajectory file keeps a row per step (implicit) or per millisecond (explicit)
        check_steps(total, sim.dt, **steps)
        trajectory = Trajectory(args.trajectory_out, robot.tendon_names, world is not None,
                                integrator == 'implicit')
        first_call = built + _first_step(sim, integrator, make)
        _set_start(sim, args, series)
    except (RobotDescriptionError, InputError, WorldError) as error:
        # one line: YAML parser messages span several
        raise command_error(error) from None

    constant = _named(robot, args.tensions)
    try:
        with progress_bar(total=round(total, 6), unit='s', desc='simulating', leave=False,
                          bar_format='{l_bar}{bar}| {n:.2f}/{total:.2f} s sim [{elapsed}]') as bar:
            bar.update = _announcing_long_runs(bar, total, args.until_steady)
            # the rest before t = 0 is not in sim_time: timed apart from the run
            start = time.perf_counter()
            origin = _to_rest(sim, integrator, series, constant)
            begin = time.perf_counter()
            settle = begin - start
            if integrator == 'implicit':
                _run_implicit(sim, args, series, field, duration, trajectory, bar, constant)
            else:
                _run_explicit(sim, args, series, duration, trajectory, bar, constant, origin)
    except (SimulationDiverged, InputError) as error:
        kept = ''
        if trajectory.path and trajectory.rows:    # no row yet: an older file stays as it was
            trajectory.write()
            kept = f'; the trajectory up to then is in {trajectory.path}'
        message = str(error)
        if getattr(error, 'step_dt', None) is not None:
            message = _whole_run_dt(robot, args, series, field, duration, error, sim.dt, world)
        # exit 1 or 2 as command_error judges the error
        raise type(command_error(error))(' '.join(message.split()) + kept) from None
    trajectory.write()
    wall = time.perf_counter() - begin
    state = sim.state()
    steady = sim.is_steady()
    sim_time = state.time - origin
    result = {
        'robot': robot.name,
        'integrator': integrator,
        'elements': robot.rod.elements if integrator == 'explicit' else sim.steps,
        'dt': sim.dt,
        'alpha': sim.alpha if integrator == 'implicit' else None,
        'tensions': state.tensions.tolist(),
        'tip_position': state.tip_position.tolist(),
        'tip_orientation': state.tip_orientation.tolist(),
        'tendon_displacements': state.tendon_displacements.tolist(),
        'sim_time': sim_time,
        'wall_time': wall,
        'real_time_factor': sim_time / wall if wall > 0 else None,
        'first_call_time': first_call,
        'settle_time': settle,
        'steady': steady,
        'trajectory_out': str(trajectory.path) if trajectory.path else None,
        **({} if integrator == 'explicit' else {
            'tip_tolerance': sim.tip_tolerance, 'tip_error_estimate': sim.max_estimate,
            'steps': sim.steps_taken, 'smallest_dt': sim.smallest_dt}),
        **({} if state.contacts is None else {
            'contacts': [c.to_dict() for c in state.contacts],
            'max_penetration': largest_penetration(state.contacts)}),
    }
    tensions_text = ', '.join(f'{name} {value:g}' for name, value in
                              zip(sim.tendon_names, state.tensions))
    resolution = (f'{robot.rod.elements} elements' if integrator == 'explicit'
                  else f'{sim.steps} RK4 steps, alpha {sim.alpha:g}')
    print(f'robot {robot.name}: {integrator} integrator ({why}), {resolution}, dt {sim.dt:.3g} s; '
          f'tensions [N]: {tensions_text}')
    print(f'simulated {sim_time:.3f} s in {wall:.2f} s wall time '
          f'(real-time factor {result["real_time_factor"]:.2f})'
          + (f'; {first_call:.3g} s before it compiling the model, once' if first_call >= 1.0
             else '')
          + (f'; {settle:.3g} s before it settling at rest' if settle >= 1.0 else '')
          + f'; steady: {"yes" if steady else "no"}')
    x, y, z = state.tip_position
    print(f'tip position [m] ({robot.base.frame_id}): x {x:.5f}  y {y:.5f}  z {z:.5f}')
    print('tip orientation [qx qy qz qw]: '
          + ' '.join(f'{q:.5f}' for q in state.tip_orientation))
    displacements = zip(sim.tendon_names, state.tendon_displacements)
    print('tendon displacements [mm]: '
          + ', '.join(f'{name} {1e3 * d:.3f}' for name, d in displacements))
    if trajectory.path:
        print(f'trajectory: {trajectory.path}')
    if args.json:
        print(json.dumps(result))
    return 0


def _first_step(sim, integrator: str, make) -> float:
    """
    Return the wall seconds of the integrator's first step, taken apart from the run.

    numba compiles the integrator on a first run (an empty cache: seconds to tens of seconds),
    which the run's speed counted: 0.1 x real time of a model that runs 30 x. The step leaves
    the run as it was: the explicit model takes it and is built again (``reset``: as new,
    without the warnings of a second simulator), the implicit model on a simulator of its own
    from ``make`` (its ``reset`` need not undo all that a step leaves: the solvers' warm
    starts, a contact grid refined).
    """
    first = make() if integrator == 'implicit' else sim
    start = time.perf_counter()
    try:
        first.advance(first.dt)
    except (SimulationDiverged, InputError):
        pass        # the run meets it too, and says so
    seconds = time.perf_counter() - start
    if first is sim:
        sim.reset()
    return seconds


def _alpha(args) -> float:
    """BDF-alpha of the implicit integrator: --alpha, or 0 (BDF2)."""
    return 0.0 if args.alpha is None else args.alpha


def _set_start(sim, args, series) -> None:
    """Set the inputs at t = 0: the input files' first values or --tensions."""
    if series is not None:
        series.start(sim)
    elif args.tensions is not None:
        sim.set_tensions(parse_values(args.tensions, '--tensions'))


def _whole_run_dt(robot, args, series, field, duration, error, failed_dt: float,
                  world) -> str:
    """
    Return the message of a failed implicit step, with a --dt that completes the whole run.

    The model found a dt with which the failed step converges (``error.step_dt``), for that
    step only; the run is tried again from t = 0 at it, and at halves of it down to the
    model's smallest (DT_HALVINGS halvings of the ``failed_dt``), so that the advice is one
    that was seen to work for this run.
    """
    from tendon_robot_sim.models.rod.dynamics.implicit import DT_HALVINGS, ImplicitSimulator
    smallest = failed_dt / 2 ** DT_HALVINGS
    dt = error.step_dt
    while dt >= smallest * (1.0 - 1e-9):
        sim = ImplicitSimulator(robot, dt=dt, alpha=_alpha(args), world=world)
        try:
            _set_start(sim, args, series)
            _to_rest(sim, 'implicit', series, None)
            with progress_bar(total=round(duration, 6), unit='s', desc=f'trying --dt {dt:g}',
                              leave=False) as bar:
                _run_implicit(sim, args, series, field, duration,
                              Trajectory(None, robot.tendon_names, world is not None), bar,
                              _named(robot, args.tensions))
        except (SimulationDiverged, InputError):
            dt /= 2.0
            continue
        return f'{error.failure}; the whole run converges with --dt {dt:g} (tried)'
    return (f'{error.failure}; a run from t = 0 with --dt {error.step_dt:g} (with which that step '
            f'converged) or any down to {smallest:g} s fails too (tried): the inputs may be out '
            'of reach')


def _named(robot, tensions: str | None) -> np.ndarray:
    """Return --tensions as a vector (the simulator's set_tensions has checked them)."""
    values = parse_values(tensions, '--tensions') if tensions is not None else []
    if isinstance(values, dict):
        return np.array([values.get(name, 0.0) for name in robot.tendon_names])
    return np.array(values, dtype=float) if len(values) else np.zeros(len(robot.tendons))


def _to_rest(sim, integrator: str, series, constant) -> float:
    """
    Bring the robot to rest before the run's t = 0; return the model's time there.

    The implicit model is at rest from its start; inputs over time put it in the static
    equilibrium of their values at t = 0. The explicit model starts straight and settles.
    """
    if integrator == 'implicit':
        if series is not None:
            sim.place_at_rest()
        return 0.0
    if series is None:      # constant tensions are a step from the rest without tension
        sim.set_tensions(np.zeros(len(constant)))
    try:
        sim.run_until_steady(SETTLE_TIME, speed_tolerance=1e-4)
    except SimulationDiverged as error:
        raise SimulationDiverged(f'while the rod settled at rest before the inputs: '
                                 f'{_without_reset(error)}') from None
    return sim.time


def _run_implicit(sim, args, series, field, duration, trajectory, bar, constant) -> None:
    """Run the implicit model from its rest at t = 0 (:func:`_to_rest`)."""
    first = sim.state()
    trajectory.add(0.0, first.tip_position[None], first.tip_orientation[None],
                   first.tensions[None], first.tendon_displacements[None], first.contacts,
                   np.zeros(1))
    steady = _steady_check(sim, args.until_steady)
    steps = run_steps(args.max_time if args.until_steady else duration, sim.dt)
    # the contact force of every step comes from its state: one step at a time
    per_chunk = 1 if trajectory.contact else max(CHUNK_STEPS, round(CHUNK / sim.dt))
    for begin in range(0, steps, per_chunk):
        t = sim.dt * np.arange(begin + 1, min(begin + per_chunk, steps) + 1)
        if series is not None:
            values = inputs_at(series, t)
            record = sim.follow(values, field)
        else:
            values = np.tile(constant, (t.size, 1))
            # constant tensions are a step from the first step on, in its halves too
            record = sim.follow(values, 'tension', step=True)
        positions, quaternions = sim.record_poses(record)
        tensions, displacements = sim.record_tendons(
            record, values if series is not None else None)
        trajectory.add(t, positions, quaternions, tensions, displacements,
                       sim.state().contacts if trajectory.contact else None, sim.estimates)
        bar.update(t.size * sim.dt)
        if steady():
            break


def _run_explicit(sim, args, series, duration, trajectory, bar, constant, origin) -> None:
    """Run the explicit model from its rest at model time ``origin`` (:func:`_to_rest`)."""
    try:
        _follow_explicit(sim, args, series, duration, trajectory, bar, constant, origin)
    except SimulationDiverged as error:
        # the model's clock includes the settling: say where the run itself was
        raise SimulationDiverged(
            f'{_without_reset(error)} (model time; the inputs started at t = {origin:.6g} s, '
            f'after the rod settled at rest: {sim.time - origin:.6g} s into the run)') from None


def _without_reset(error: SimulationDiverged) -> str:
    """Return the simulator's message without its advice to call reset() (a command ends)."""
    return str(error).removesuffix('; call reset() to start again')


def _follow_explicit(sim, args, series, duration, trajectory, bar, constant, origin) -> None:
    """Apply the inputs from ``origin`` on (the explicit model at rest there)."""
    if series is None:
        _sample(sim, origin, trajectory)
        sim.set_tensions(constant)
    steady = _steady_check(sim, args.until_steady)
    # a row (and an input update) about every millisecond when asked for, else progress chunks
    period = EXPLICIT_SAMPLE if trajectory.path or series is not None else CHUNK
    per_sample = max(1, round(period / sim.dt))
    steps = run_steps(args.max_time if args.until_steady else duration, sim.dt)
    if series is not None:
        _sample(sim, origin, trajectory)
    for done in range(0, steps, per_sample):
        n = min(per_sample, steps - done)
        before = sim.time
        if series is not None:
            sim.set_tensions(series.at((done + n) * sim.dt))
        sim.advance(n * sim.dt)
        _sample(sim, origin, trajectory)
        bar.update(sim.time - before)
        if steady():
            break


def _steady_check(sim, until_steady: bool):
    """
    Return a function that says whether ``--until-steady`` ends the run now.

    It asks ``sim.is_steady()`` every CHUNK of simulated time, as ``run_until_steady`` does;
    the run loops themselves step, so that an ``--until-steady`` run writes every row of its
    trajectory (through ``run_until_steady`` the file kept the t = 0 row only).
    """
    due = [sim.time + CHUNK]

    def steady() -> bool:
        if not until_steady or sim.time < due[0] - 0.5 * sim.dt:
            return False
        due[0] = sim.time + CHUNK
        return sim.is_steady()
    return steady


def _sample(sim, origin: float, trajectory: Trajectory) -> None:
    if trajectory.path is None:
        return
    state = sim.state()
    trajectory.add(state.time - origin, state.tip_position[None],
                   rotation_to_quaternion(state.tip_rotation[None]), state.tensions[None],
                   state.tendon_displacements[None], state.contacts)
