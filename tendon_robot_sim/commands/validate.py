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
``tendon-robot-sim validate``: compare a model with a recorded experiment.

    tendon-robot-sim validate demo_output/synthetic_bag --robot config/robot.yaml \
        --report demo_output/report
    tendon-robot-sim validate holds.csv --model cosserat --report report
    tendon-robot-sim validate demo_output/synthetic_bag --model discrete,cosserat,kirchhoff \
        --fit youngs_modulus,shear_modulus --report demo_output/report
    tendon-robot-sim validate bha_bag --robot config/bionic_handling_assistant.yaml \
        --report bha_report

Finds the quasi-static holds of a bag (``tendon/setpoint`` or ``tendon/state`` constant
and ``tip/measured`` steady for ``--hold-time``) or reads a CSV of holds, predicts each
hold's tip with the model, prints the error summary and writes ``report.md``,
``tips.png`` and ``error_vs_tension.png`` into the report folder. With ``--model
dynamic`` and a bag it also replays the whole tension series through the dynamic
simulator and reports the tip error over time (``trajectory.png``; about 0.6 s of
computing per recorded second on the default robot).

Several models (``--model discrete,cosserat,kirchhoff``) are validated on the same holds and
compared side by side; the report says which is closest to the data. ``--fit NAMES`` first
calibrates those parameters for each model on the holds (as ``calibrate`` does), so that each
model is compared at its best.

A bellows robot (``--robot`` a ``kind: bellows`` file) is validated on a recorded run (a bag
of ``tendon/state`` and ``tip/measured``, or a CSV file with ``t``, the pressures,
``<name>_length`` and ``tip_x, tip_y, tip_z``) with Hadzic & Häseli's metrics: the tip error
of the kinematic model (tip from the measured muscle lengths) and the muscle-length and tip
errors of the dynamic model (driven by the measured pressures), mean and standard deviation
(:mod:`tendon_robot_sim.experiment.trunk_validation`); report ``report.md``,
``lengths.png``, ``tip.png``.
"""

import argparse

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (add_scheduler_options, command_error, CommandError,
                                       input_file, json_line, naming_options, non_negative,
                                       OutputPath, positive, scheduler_of, within, worker_count)
from tendon_robot_sim.experiment.calibration import (CalibrationError, closest,
                                                     path_dependent, PREDICT_MODELS,
                                                     replay_dynamic, validate, write_report)
from tendon_robot_sim.experiment.experiment import (DEFAULT_HOLD_TIME, DEFAULT_TIP_TOLERANCE,
                                                    ExperimentError, is_csv, load_points, POINTS,
                                                    read_recording)
from tendon_robot_sim.experiment.fit_parameters import FITTABLE
from tendon_robot_sim.experiment.fitting import calibrate, fit_parameters
from tendon_robot_sim.experiment.tip_validation import (SampleValidation, validate_samples,
                                                        worst_labels, write_samples_csv,
                                                        write_samples_report)
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.stick_slip import DEFAULT_PIECE_LENGTH
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.models.trunk.robot import is_bellows_description
from tendon_robot_sim.parallel import ParallelError


def add_recording_options(parser, several_models: bool = False) -> None:
    """Options shared by validate and calibrate (validate: ``--model`` takes a list)."""
    parser.add_argument('recording', metavar='BAG_OR_CSV',
                        help='rosbag2 bag (folder, .mcap or .db3) or CSV file of holds')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--model', default=None,
                        choices=None if several_models else PREDICT_MODELS,
                        metavar='MODEL[,MODEL...]' if several_models else None,
                        help='discrete (default): static twin of the dynamic simulator; '
                             'cosserat, kirchhoff: continuous tendons; dynamic: PyElastica '
                             'until steady (seconds per hold, tensions only)'
                             + ('; several, comma-separated: compared side by side'
                                if several_models else '')
                             + '; not for bellows robots')
    # default None, resolved by fill_defaults: one given where nothing reads it is refused
    parser.add_argument('--hold-time', type=positive, default=None, metavar='S',
                        help=f'bag: shortest steady stretch of a hold in s '
                             f'(default {DEFAULT_HOLD_TIME:g})')
    parser.add_argument('--tip-tolerance', type=positive, default=None,
                        metavar='M', help=f'bag: largest tip excursion in a hold in m '
                                          f'(bellows robots: of the bellows lengths; '
                                          f'default {DEFAULT_TIP_TOLERANCE:g})')
    parser.add_argument('--points', choices=POINTS, default=None,
                        help='bag: the quasi-static holds (default), or every tip sample with '
                             'the command before it (slow continuous motion, e.g. an imported '
                             'motion-capture table)')
    for option, bound in (('--start', 'first'), ('--end', 'last')):
        parser.add_argument(option, type=non_negative, default=None, metavar='S',
                            help=f'bag: take only the part from --start to --end, in s from '
                                 f"the bag's first message (default: from its {bound} message); "
                                 'e.g. fit on one part of a recording, validate on another')
    parser.add_argument('--step', type=within(1e-5, 1.0, 'm'), default=None, metavar='M',
                        help="largest RK4 step of the statics in m (default: the model's "
                             'own, 5 mm; 2.5 mm for discrete); not for --model dynamic or '
                             'bellows robots')
    parser.add_argument('--piece-length', type=within(1e-3, 1.0, 'm'), default=None,
                        metavar='M',
                        help='largest piece of a tendon with capstan friction in m: each '
                             'piece holds one tension; longer pieces solve faster, less '
                             f'closely (default {DEFAULT_PIECE_LENGTH:g}); not for --model '
                             'dynamic or bellows robots')
    parser.add_argument('--workers', type=worker_count, default=None, metavar='N',
                        help='local processes for the model solves (default: all cores; '
                             '1: none); not for bellows robots')
    add_scheduler_options(parser)


# The options that find the points of a bag: (dest, option, default when left out).
HOLD_FINDING = (('hold_time', '--hold-time', DEFAULT_HOLD_TIME),
                ('tip_tolerance', '--tip-tolerance', DEFAULT_TIP_TOLERANCE))
POINTS_OPTION = (('points', '--points', 'holds'),)
HOLD_OPTIONS = HOLD_FINDING + POINTS_OPTION
# The part of a bag to take (None when left out: all of it).
WINDOW_OPTIONS = (('start', '--start', None), ('end', '--end', None))
# The options of a tendon robot's model solves (None when left out): the rod statics (not
# the dynamic simulator), and where they run (a bellows robot's models read none of them).
STATICS_OPTIONS = (('step', '--step', None), ('piece_length', '--piece-length', None))
SOLVE_OPTIONS = STATICS_OPTIONS + (
    ('workers', '--workers', None), ('scheduler', '--scheduler', None),
    ('tls_ca_file', '--tls-ca-file', None), ('tls_cert', '--tls-cert', None),
    ('tls_key', '--tls-key', None))


def refuse_given(args: argparse.Namespace, options, why: str) -> None:
    """Refuse the first of ``options`` given (nothing would read it): ``why``."""
    for dest, option, _ in options:
        if getattr(args, dest) is not None:
            raise CommandError(f'{option}: {why}')


def fill_defaults(args: argparse.Namespace, options) -> None:
    """Give the ``options`` left out their documented defaults (after refuse_given)."""
    for dest, _, default in options:
        if getattr(args, dest) is None:
            setattr(args, dest, default)


def csv_files(names: list[str]) -> str:
    """Say that the files of ``names`` are CSV files: 'a.csv is a CSV file'."""
    if len(names) == 1:
        return f'{names[0]} is a CSV file'
    return f'{" and ".join(names)} are CSV files'


def check_hold_options(args: argparse.Namespace, recording, after=None) -> None:
    """Refuse the hold options no bag among the recordings would use; default the rest."""
    read = [str(recording)] + ([] if after is None else [f'--after {after}'])
    if is_csv(recording) and (after is None or is_csv(after)):
        refuse_given(args, HOLD_OPTIONS,
                     f"applies to a bag's holds only; {csv_files(read)} of holds")
    elif args.points == 'samples':
        refuse_given(args, HOLD_FINDING, 'applies to --points holds only (samples: every tip '
                                         'sample, no holds to find)')
    fill_defaults(args, HOLD_OPTIONS)


def refuse_statics_options(args: argparse.Namespace, models: list[str]) -> None:
    """Refuse --step and --piece-length when no model of ``models`` solves the statics."""
    if set(models) == {'dynamic'}:
        refuse_given(args, STATICS_OPTIONS, 'applies to the statics models only; --model '
                                            'dynamic solves with the dynamic simulator')


def model_names(args: argparse.Namespace) -> list[str]:
    """Return the models of ``--model`` (default discrete); CommandError for an unknown one."""
    names = [m.strip() for m in (args.model or 'discrete').split(',')]
    for name in names:
        if name not in PREDICT_MODELS:
            raise CommandError(f'--model: {name!r} is not one of {", ".join(PREDICT_MODELS)}')
    if len(set(names)) != len(names):
        raise CommandError(f'--model: a model is named twice: {args.model}')
    return names


def check_fit(args: argparse.Namespace, fit: list[str], models: list[str],
              bounds: dict | None = None, trajectory: bool = False) -> None:
    """
    Refuse a bad ``--fit`` or ``--bounds`` before the recording is read (CommandError).

    Checked against the robot file: the robot as measured differs only in a ``tip_marker``
    the recording gives, so the bounds of a marker the file leaves out wait for it.
    """
    try:
        robot = load_robot(args.robot or default_robot_file())
    except RobotDescriptionError as error:
        raise command_error(error) from None
    bounds = dict(bounds or {})
    if not any(robot.tip_marker):
        bounds = {name: span for name, span in bounds.items() if not name.startswith('tip_marker')}
    for model in models:
        try:
            fit_parameters(robot, fit, bounds, model, trajectory)
        except CalibrationError as error:
            raise CommandError(naming_options(error, ('fit', 'bounds'))) from None


def load_inputs(args: argparse.Namespace):
    """(robot, holds) of the parsed options; user errors as CommandError."""
    args.scheduler = scheduler_of(args)
    try:
        robot = load_robot(args.robot or default_robot_file())
        return points_of(args, args.recording, robot, window_of(args))
    except (RobotDescriptionError, ExperimentError) as error:
        raise command_error(error) from None


def points_of(args: argparse.Namespace, recording, robot, window=(None, None)):
    """(robot as measured, points) of ``recording`` by --points, --hold-time, --tip-tolerance."""
    return load_points(recording, robot, args.points, args.hold_time, args.tip_tolerance,
                       window)


def window_of(args: argparse.Namespace) -> tuple[float | None, float | None]:
    """Return the part of the recording to take: (--start, --end) [s]."""
    return args.start, args.end


def load_history(args: argparse.Namespace, robot) -> list:
    """Return the points of ``--after`` (none without it), read as the recording's."""
    if args.after is None:
        return []
    try:
        return points_of(args, args.after, robot)[1]
    except ExperimentError as error:
        raise CommandError(f'--after: {error}') from None


def load_trajectory(args: argparse.Namespace):
    """(robot, Recording) of the parsed options (a bag); user errors as CommandError."""
    if is_csv(args.recording):
        raise CommandError(f'{args.recording}: a CSV file holds steady tips only; fitting '
                           f'the damping needs a recorded trajectory (a bag)')
    try:
        robot = load_robot(args.robot or default_robot_file())
        return robot, read_recording(args.recording, robot, window_of(args))
    except (RobotDescriptionError, ExperimentError) as error:
        raise command_error(error) from None


MODEL_ERRORS = (CalibrationError, ParallelError, StaticsError, InputError, SimulationDiverged)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'validate', help='compare a model with the holds of a recorded experiment',
        description='Find the quasi-static holds of a recording (or take every sample: '
                    '--points samples), predict each tip with one or more models and report the '
                    'error (Markdown + PNG, --json, --samples-out); for a bellows robot (kind: '
                    'bellows), compare its kinematic and dynamic models with a recorded run, '
                    "with Hadzic & Häseli's metrics.")
    add_recording_options(parser, several_models=True)
    parser.add_argument('--report', required=True, metavar='DIR', type=OutputPath('folder'),
                        help='folder for report.md and its plots (holds: tips.png and '
                             'error_vs_tension.png; samples: paths.png, error_time.png and '
                             'worst.png)')
    parser.add_argument('--fit', default=None, metavar='NAMES',
                        help='calibrate these parameters for each model on the holds first '
                             f'(as calibrate --fit: {", ".join(FITTABLE)} but damping)')
    parser.add_argument('--json', action='store_true',
                        help='print the metrics as JSON, the last line: tip_rmse_mm, '
                             'tip_rmse_aligned_mm (after the mean offset), in %% of the length, '
                             'per label (with the hysteresis of each motion); the best '
                             "model's at the top, every model's under models")
    parser.add_argument('--after', default=None, metavar='BAG_OR_CSV',
                        help='a recording the robot made just before this one (read as this '
                             'one, with --points): a model with memory (friction) goes '
                             'through its points first, in order, and starts where that '
                             'recording left the robot; a model without memory skips them; '
                             'they are not scored')
    parser.add_argument('--samples-out', default=None, metavar='FILE.csv',
                        type=OutputPath('file', ('.csv',)),
                        help='write the measured and predicted point of every hold or sample '
                             '(t, label, measured_x.._z, model_x.._z; m, base frame); one model')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        bellows = args.robot is not None and is_bellows_description(args.robot)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    if bellows:
        for given, option in ((args.json, '--json'), (args.samples_out, '--samples-out'),
                              (args.after, '--after')):
            if given:
                raise CommandError(f'{option}: not for a bellows robot (its report has '
                                   "Hadzic & Häseli's metrics)")
        return run_bellows(args)
    models = model_names(args)
    refuse_statics_options(args, models)
    if args.samples_out is not None and len(models) > 1:
        raise CommandError(f"--samples-out: the table holds one model's points; give one "
                           f'--model, got {args.model}')
    fit = [name.strip() for name in (args.fit or '').split(',') if name.strip()]
    if args.fit is not None and not fit:
        raise CommandError('--fit: name at least one parameter')
    check_hold_options(args, args.recording, args.after)
    if fit:
        check_fit(args, fit, models)
    robot, holds = load_inputs(args)
    history = load_history(args, robot)
    samples = args.points == 'samples'
    trajectory, results, points, fits = None, [], [], []
    try:
        for model in models:
            fitted = robot
            if fit:
                print(f'calibrating {", ".join(fit)} with model {model}')
                fits.append(calibrate(robot, holds, fit, model=model, workers=args.workers,
                                      scheduler=args.scheduler, step=args.step,
                                      piece_length=args.piece_length))
                fitted = fits[-1].robot
                print(fits[-1].summary())
            if history:
                print(f'model {model}: ' + (
                    f'goes through the {len(history)} points of {args.after} first'
                    if path_dependent([fitted], model) else
                    f'starts fresh: its prediction does not depend on the points before (the '
                    f'{len(history)} points of {args.after} are skipped)'))
            if samples:
                points.append(validate_samples(fitted, holds, model, args.workers,
                                               args.scheduler, args.step, args.piece_length,
                                               history))
            else:
                results.append(validate(fitted, holds, model, args.workers, args.scheduler,
                                        args.step, args.piece_length, history))
                points.append(SampleValidation(model, fitted, tuple(holds),
                                               results[-1].predicted))
            if model == 'dynamic' and not is_csv(args.recording):
                trajectory = replay_dynamic(
                    fitted, read_recording(args.recording, robot, window_of(args)),
                    progress=True)
    except ExperimentError as error:
        raise command_error(error) from None
    except MODEL_ERRORS as error:
        raise command_error(error) from None
    if samples:
        path = write_samples_report(args.report, points, source=str(args.recording))
        plots = ['paths.png', 'error_time.png', 'worst.png']
        for result in points:
            print(result.summary())
            worst = result.per_label()
            print('worst motions (aligned RMSE): ' + ', '.join(
                f'{label} {worst[label]["tip_rmse_aligned_mm"]:.1f} mm'
                for label in worst_labels(result, 5)))
    else:
        path = write_report(args.report, results, source=str(args.recording),
                            trajectory=trajectory, fits=fits or None)
        for result in results:
            print(result.table())
            print(result.summary())
        if len(results) > 1:
            print(closest(results))
        plots = ['tips.png', 'error_vs_tension.png'] + (['trajectory.png'] if trajectory else [])
    if trajectory is not None:
        print(trajectory.summary())
    elif 'dynamic' in models:
        print('a CSV of holds has no time series: no dynamic replay')
    print(f'wrote {path} and ' + ', '.join(str(path.parent / name) for name in plots))
    if args.samples_out is not None:
        write_samples_csv(args.samples_out, points[0])
        print(f'wrote {args.samples_out}')
    if args.json:
        best = min(points, key=lambda v: v.rmse(aligned=True))
        summary = {'recording': str(args.recording), 'points': args.points,
                   'after': None if args.after is None else str(args.after), **best.to_dict()}
        if len(points) > 1:
            summary['models'] = {v.model: v.to_dict() for v in points}
        print(json_line(summary))
    return 0


def run_bellows(args: argparse.Namespace) -> int:
    """Validate a bellows robot's kinematic and dynamic models on a recorded run."""
    from tendon_robot_sim.experiment.identification import (IdentificationError, read_run,
                                                            read_run_csv)
    from tendon_robot_sim.experiment.trunk_validation import (validate_bellows,
                                                              write_bellows_report)
    from tendon_robot_sim.models.trunk.dynamics import CCDynamicsError
    from tendon_robot_sim.models.trunk.robot import load_bellows_robot

    for given, option in ((args.model, '--model'), (args.fit, '--fit')):
        if given is not None:
            raise CommandError(f'{option}: a bellows robot is validated with its kinematic and '
                               'dynamic models together, as Hadzic & Häseli do; leave '
                               f'{option} out')
    refuse_given(args, HOLD_OPTIONS, "applies to a tendon robot's holds only; a bellows robot "
                                     'is validated on its whole recorded run')
    refuse_given(args, SOLVE_OPTIONS, "applies to a tendon robot's models only; a bellows "
                                      "robot's constant-curvature models run in this process")
    refuse_given(args, WINDOW_OPTIONS, 'not for a bellows robot: it is validated on its whole '
                                       'recorded run')
    try:
        robot = load_bellows_robot(args.robot)
        run = (read_run_csv if is_csv(args.recording) else read_run)(args.recording, robot)
        result = validate_bellows(robot, run)
    except (RobotDescriptionError, IdentificationError, CCDynamicsError) as error:
        raise command_error(error) from None
    path = write_bellows_report(args.report, result)
    print(result.summary())
    plots = ', '.join(str(path.parent / name) for name in ('lengths.png', 'tip.png'))
    print(f'wrote {path} and {plots}')
    return 0
