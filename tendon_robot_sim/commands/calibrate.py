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
``tendon-robot-sim calibrate``: fit robot parameters to a recorded experiment.

    tendon-robot-sim calibrate demo_output/synthetic_bag --robot config/robot.yaml \
        --fit youngs_modulus,shear_modulus --out calibrated.yaml
    tendon-robot-sim calibrate holds.csv --fit youngs_modulus --bounds youngs_modulus=1e6:1e8 \
        --scheduler tcp://cluster:8786 --out calibrated.yaml
    tendon-robot-sim calibrate step_bag --model dynamic --fit damping,vertebra_mass \
        --out calibrated.yaml

Least squares on the tip errors of the holds (scipy ``least_squares``, log-scaled
parameters, bounds) or, with ``--model dynamic`` and ``damping`` among the fitted
parameters, on the tip error over the whole recording replayed by the dynamic simulator
(a step response: ``synth-experiment --experiment step``), then prints each fitted value
with its 95 % confidence interval and the RMS tip error before and after, and writes the
calibrated robot description.
The model solves run on all local cores (``--workers``) or on a Dask cluster
(``--scheduler``); a progress bar on stderr counts the parameter sets solved.

For a bellows robot (``--robot`` a ``kind: bellows`` file) the constant-curvature dynamics
is identified as Hadzic & Häseli do: ``--fit stiffness`` fits the bellows and bending
stiffnesses to the static points of the recording (linear least squares), ``--fit damping``
the dampers to the run in ``--step-response`` (default: the recording itself when it is a
bag). A bag holds ``tendon/state`` (pressures as effort [Pa], contractions as position [m]);
its static points are the holds (``--hold-time``, ``--tip-tolerance`` on the bellows
lengths) and the damping run starts at the first of them. A CSV holds static points
(pressures, lengths) or, for ``--step-response``, a run with a ``t`` (or ``time``) column; see
:mod:`tendon_robot_sim.experiment.identification`:

    tendon-robot-sim calibrate bha_bag --robot config/bionic_handling_assistant.yaml \
        --fit stiffness,damping --out calibrated_bha.yaml
    tendon-robot-sim calibrate points.csv --robot config/bionic_handling_assistant.yaml \
        --fit stiffness,damping --step-response step.csv --out calibrated_bha.yaml
"""

import argparse
import math

from tendon_robot_sim import produced_by
from tendon_robot_sim.commands import command_error, CommandError, OutputPath, within
from tendon_robot_sim.commands.validate import (add_recording_options, check_fit,
                                                check_hold_options, csv_files, fill_defaults,
                                                HOLD_FINDING, HOLD_OPTIONS, load_inputs,
                                                load_trajectory, MODEL_ERRORS, POINTS_OPTION,
                                                refuse_given, refuse_statics_options,
                                                SOLVE_OPTIONS, WINDOW_OPTIONS)
from tendon_robot_sim.experiment.experiment import is_csv
from tendon_robot_sim.experiment.fit_parameters import DYNAMIC_FIELDS, FITTABLE
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.experiment.identification import (IdentificationError, identify_damping,
                                                        identify_stiffness, read_run,
                                                        read_run_csv, read_samples,
                                                        response_from_rest, static_points)
from tendon_robot_sim.files.outputs import open_output
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.trunk.dynamics import CCDynamicsError
from tendon_robot_sim.models.trunk.robot import is_bellows_description, load_bellows_robot
import yaml

BELLOWS_FITS = ('stiffness', 'damping')
# The options of a tendon robot's least squares: (dest, option, default when left out); the
# defaults are filled after the paths that read none of them have refused one given.
START_OPTIONS = (('bounds', '--bounds', None), ('starts', '--starts', 1))
EVERY_OPTION = (('every', '--every', 1),)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'calibrate', help='fit robot parameters (E, G, ...) to a recorded experiment',
        description='Least-squares fit of rod parameters to the holds of a recording; writes '
                    'the calibrated robot description.')
    add_recording_options(parser)
    parser.add_argument('--fit', required=True, metavar='NAMES',
                        help=f'comma-separated parameters to fit: {", ".join(FITTABLE)} '
                             '(TENDONS: a tendon name or pattern, e.g. t1.offset, *.compliance; '
                             'a pattern ties the tendons it matches, @segment or @tendon '
                             'fits one value per segment or tendon: *.pretension@segment; '
                             'base.position.z: one component); bellows robots: '
                             f'{", ".join(BELLOWS_FITS)}')
    parser.add_argument('--bounds', default=None, metavar='NAME=LOW:HIGH,...',
                        help='bounds in SI units, NAME as in --fit (default: initial / 10 .. '
                             'initial x 10 for positive quantities; see docs/experiments.md); '
                             'not for bellows robots')
    parser.add_argument('--starts', type=within(1, 1000, kind=int), default=None, metavar='N',
                        help='starting points: the robot file and N - 1 Sobol points within '
                             'the bounds (multi-start; default 1); not for bellows robots')
    parser.add_argument('--every', type=within(1, 1000, kind=int), default=None, metavar='N',
                        help='fit every N-th point only, in their order (the first, the '
                             'N + 1-th, ...): a path-dependent fit (tendon or bending '
                             'friction) on a shorter sequence; default 1, all points; not for '
                             'a trajectory fit (--model dynamic, damping) or bellows robots')
    # the calibrated file may replace the one it starts from (--robot FILE --out FILE)
    parser.add_argument('--out', required=True, metavar='FILE',
                        type=OutputPath('file', rewrites=('robot',)),
                        help='calibrated robot description YAML to write')
    parser.add_argument('--step-response', default=None, metavar='BAG_OR_CSV',
                        help='bellows robots, --fit damping: a recorded run to fit the '
                             'dampers to (bag: its first step response, from the end of its '
                             'first static point until the pressures change again; CSV: from '
                             'rest, columns t, pressures, lengths; default: the recording, '
                             'if a bag)')
    parser.set_defaults(func=run)


def parse_bounds(text):
    """``'youngs_modulus=1e6:1e8'`` -> {'youngs_modulus': (1e6, 1e8)}."""
    bounds = {}
    for item in (text or '').split(','):
        if not item.strip():
            continue
        name, _, span = item.partition('=')
        low, _, high = span.partition(':')
        try:
            low, high = float(low), float(high)
        except ValueError:
            raise CommandError(f'--bounds: {item!r} is not NAME=LOW:HIGH') from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise CommandError(f'--bounds: {name.strip()}: need finite LOW < HIGH, got '
                               f'{span!r}')
        bounds[name.strip()] = (low, high)
    return bounds


def run(args: argparse.Namespace) -> int:
    fit = [name.strip() for name in args.fit.split(',') if name.strip()]
    try:
        bellows = args.robot is not None and is_bellows_description(args.robot)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    if bellows:
        return run_bellows(args, fit)
    if args.step_response is not None:
        raise CommandError("--step-response: applies to a bellows robot's --fit damping only; "
                           'a tendon robot fits its damping to the recording itself (--model '
                           'dynamic)')
    bounds = parse_bounds(args.bounds)
    fill_defaults(args, START_OPTIONS)
    recording = None
    args.model = args.model or 'discrete'
    refuse_statics_options(args, [args.model])
    trajectory_fit = set(fit) & set(DYNAMIC_FIELDS)
    trajectory = args.model == 'dynamic' and bool(trajectory_fit)
    if trajectory:
        refuse_given(args, HOLD_OPTIONS + EVERY_OPTION,
                     f'applies to holds only; --model dynamic fits '
                     f'{", ".join(sorted(trajectory_fit))} to the whole recorded trajectory')
    else:
        check_hold_options(args, args.recording)
    check_fit(args, fit, [args.model], bounds, trajectory)
    if trajectory:
        robot, recording = load_trajectory(args)
        holds = []
        print(f'{len(recording.tip_times)} tip samples over '
              f'{recording.tip_times[-1] - recording.tip_times[0]:.2f} s from '
              f'{args.recording}; fitting {", ".join(fit)} to the trajectory (model dynamic)')
    else:
        fill_defaults(args, EVERY_OPTION)
        robot, holds = load_inputs(args)
        holds = holds[::args.every]
        every = f' (every {args.every})' if args.every > 1 else ''
        print(f'{len(holds)} {args.points}{every} from {args.recording}; fitting '
              f'{", ".join(fit)} with model {args.model}')
    try:
        result = calibrate(robot, holds, fit, bounds, args.model, args.workers,
                           args.scheduler, recording=recording, starts=args.starts,
                           step=args.step, piece_length=args.piece_length)
    except MODEL_ERRORS as error:
        raise command_error(error) from None
    _write_robot(args.out, result.robot.to_dict())
    print(result.summary())
    print(f'wrote {args.out}')
    return 0


def check_bellows_hold_options(args: argparse.Namespace, fit: list[str], response) -> None:
    """Refuse the hold options no bag of the fit would use (static points); default the rest."""
    refuse_given(args, POINTS_OPTION, "not for a bellows robot (its static points are a bag's "
                                      "holds or a CSV file's rows)")
    read = list(dict.fromkeys(([str(args.recording)] if 'stiffness' in fit else [])
                              + ([str(response)] if 'damping' in fit else [])))
    if all(is_csv(path) for path in read):
        refuse_given(args, HOLD_FINDING,
                     f"applies to a bag's static points only; {csv_files(read)}")
    fill_defaults(args, HOLD_OPTIONS)


def run_bellows(args: argparse.Namespace, fit: list[str]) -> int:
    """Identify the CC dynamics of a bellows robot (stiffnesses, then dampers)."""
    if args.model is not None:
        raise CommandError('--model: a bellows robot is identified with its constant-curvature '
                           'dynamics; leave --model out')
    refuse_given(args, START_OPTIONS + EVERY_OPTION + SOLVE_OPTIONS,
                 "applies to a tendon robot's fit only; a bellows robot is identified as "
                 'Hadzic & Häseli do, in this process: linear least squares on every static '
                 'point, the dampers fitted to the step response')
    refuse_given(args, WINDOW_OPTIONS, 'not for a bellows robot: its static points and step '
                                       'response are found in the whole recording')
    unknown = [name for name in fit if name not in BELLOWS_FITS]
    if unknown or not fit:
        raise CommandError(f'--fit: a bellows robot fits {list(BELLOWS_FITS)}, got {fit}')
    if args.step_response is not None and 'damping' not in fit:
        raise CommandError('--step-response: applies to --fit damping only')
    response = args.step_response or (None if is_csv(args.recording) else args.recording)
    if 'damping' in fit and not response:
        raise CommandError('--fit damping: give the recorded run with --step-response '
                           '(a bag or CSV)')
    check_bellows_hold_options(args, fit, response)
    runs = {}   # bags read, by path: the recording may also be the step response

    def run_of(path):
        if path not in runs:
            runs[path] = read_run(path, robot)
        return runs[path]

    try:
        robot = load_bellows_robot(args.robot)
        if 'stiffness' in fit:
            if is_csv(args.recording):
                _, pressures, lengths = read_samples(args.recording, robot)
            else:
                _, pressures, lengths = static_points(run_of(args.recording), args.hold_time,
                                                      args.tip_tolerance)
            estimate = identify_stiffness(robot, pressures, lengths)
            print(f'stiffnesses from {len(pressures)} static points of {args.recording}:')
            print(estimate.summary())
            robot = estimate.robot
        if 'damping' in fit:
            if is_csv(response):
                try:    # a CSV response is --step-response's (the recording's is a bag)
                    run = read_run_csv(response, robot)
                except IdentificationError as error:
                    raise CommandError(f'--step-response: {error}') from None
            else:
                run = response_from_rest(run_of(response), args.hold_time, args.tip_tolerance)
            times, pressures, lengths = run.times, run.pressures, run.lengths
            estimate = identify_damping(robot, times, pressures, lengths, source=str(response))
            print(f'dampers from the run in {response} ({len(times)} samples over '
                  f'{times[-1] - times[0]:.3g} s):')
            print(estimate.summary())
            robot = estimate.robot
    except (RobotDescriptionError, IdentificationError, CCDynamicsError) as error:
        raise command_error(error) from None
    _write_robot(args.out, robot.to_dict())
    print(f'wrote {args.out}')
    return 0


def _write_robot(path: str, description: dict) -> None:
    """Write the calibrated ``description`` to ``--out``, headed by what produced it."""
    try:
        with open_output(path) as handle:
            # a comment, not a key: the loader refuses a key it does not know
            handle.write(f'# calibrated by {produced_by()}\n')
            yaml.safe_dump(description, handle, sort_keys=False)
    except OSError as error:
        raise CommandError(f'--out: cannot write {path}: {error.strerror}') from None
