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

Finds the quasi-static holds of a bag (``tendon/setpoint`` or ``tendon/state`` constant
and ``tip/measured`` steady for ``--hold-time``) or reads a CSV of holds, predicts each
hold's tip with the model, prints the error summary and writes ``report.md``,
``tips.png`` and ``error_vs_tension.png`` into the report folder. With ``--model
dynamic`` and a bag it also replays the whole tension series through the dynamic
simulator and reports the tip error over time (``trajectory.png``; about 0.6 s of
computing per recorded second on the default robot).
"""

import argparse

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (add_scheduler_options, command_error, CommandError,
                                       OutputPath, positive, scheduler_of, worker_count)
from tendon_robot_sim.experiment.calibration import (CalibrationError, PREDICT_MODELS,
                                                     replay_dynamic, validate, write_report)
from tendon_robot_sim.experiment.experiment import (DEFAULT_HOLD_TIME, DEFAULT_TIP_TOLERANCE,
                                                    ExperimentError, is_csv, load_recording,
                                                    read_recording)
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics import InputError, SimulationDiverged
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.parallel import ParallelError


def add_recording_options(parser) -> None:
    """Options shared by validate and calibrate."""
    parser.add_argument('recording', metavar='BAG_OR_CSV',
                        help='rosbag2 bag (folder, .mcap or .db3) or CSV file of holds')
    parser.add_argument('--robot', default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--model', choices=PREDICT_MODELS, default='discrete',
                        help='discrete (default): static twin of the dynamic simulator; '
                             'cosserat, kirchhoff: continuous tendons; dynamic: PyElastica '
                             'until steady (seconds per hold, tensions only)')
    parser.add_argument('--hold-time', type=positive, default=DEFAULT_HOLD_TIME, metavar='S',
                        help=f'bag: shortest steady stretch of a hold in s '
                             f'(default {DEFAULT_HOLD_TIME:g})')
    parser.add_argument('--tip-tolerance', type=positive, default=DEFAULT_TIP_TOLERANCE,
                        metavar='M', help=f'bag: largest tip excursion in a hold in m '
                                          f'(bellows robots: of the bellows lengths; '
                                          f'default {DEFAULT_TIP_TOLERANCE:g})')
    parser.add_argument('--workers', type=worker_count, default=None, metavar='N',
                        help='local processes for the model solves (default: all cores; '
                             '1: none)')
    add_scheduler_options(parser)


def load_inputs(args: argparse.Namespace):
    """(robot, holds) of the parsed options; user errors as CommandError."""
    args.scheduler = scheduler_of(args)
    try:
        robot = load_robot(args.robot or default_robot_file())
        holds = load_recording(args.recording, robot, args.hold_time, args.tip_tolerance)
    except (RobotDescriptionError, ExperimentError) as error:
        raise command_error(error) from None
    return robot, holds


def load_trajectory(args: argparse.Namespace):
    """(robot, Recording) of the parsed options (a bag); user errors as CommandError."""
    if is_csv(args.recording):
        raise CommandError(f'{args.recording}: a CSV file holds steady tips only; fitting '
                           f'the damping needs a recorded trajectory (a bag)')
    try:
        robot = load_robot(args.robot or default_robot_file())
        return robot, read_recording(args.recording, robot)
    except (RobotDescriptionError, ExperimentError) as error:
        raise command_error(error) from None


MODEL_ERRORS = (CalibrationError, ParallelError, StaticsError, InputError, SimulationDiverged)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'validate', help='compare a model with the holds of a recorded experiment',
        description='Find the quasi-static holds of a recording, predict each tip with a '
                    'model and report the error (Markdown + PNG).')
    add_recording_options(parser)
    parser.add_argument('--report', required=True, metavar='DIR', type=OutputPath('folder'),
                        help='folder for report.md, tips.png and error_vs_tension.png')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    robot, holds = load_inputs(args)
    trajectory = None
    try:
        result = validate(robot, holds, args.model, args.workers, args.scheduler)
        if args.model == 'dynamic' and not is_csv(args.recording):
            trajectory = replay_dynamic(robot, read_recording(args.recording, robot),
                                        progress=True)
    except ExperimentError as error:
        raise command_error(error) from None
    except MODEL_ERRORS as error:
        raise command_error(error) from None
    path = write_report(args.report, result, source=str(args.recording),
                        trajectory=trajectory)
    print(result.table())
    print(result.summary())
    if trajectory is not None:
        print(trajectory.summary())
    elif args.model == 'dynamic':
        print('a CSV of holds has no time series: no dynamic replay')
    plots = ['tips.png', 'error_vs_tension.png'] + (['trajectory.png'] if trajectory else [])
    print(f'wrote {path} and ' + ', '.join(str(path.parent / name) for name in plots))
    return 0
