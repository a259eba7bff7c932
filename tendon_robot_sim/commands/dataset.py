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
``tendon-robot-sim dataset``: a Parquet dataset of (actuation -> shape) samples.

Examples::

    tendon-robot-sim dataset --robot config/robot.yaml --model statics --samples 10000
    tendon-robot-sim dataset --robot config/pcr_6rus.yaml --model pcr --sampler lhs \\
        --samples 100000 --scheduler tcp://cluster:8786 --output data/pcr

The driver: :mod:`tendon_robot_sim.experiment.dataset`. Started again with the same
settings, a killed run solves only the chunks it had not written.
"""

import argparse
import json

from tendon_robot_sim.commands import (add_scheduler_options, CommandError, input_file,
                                       naming_options, non_negative_int, NoResultError,
                                       OutputPath, positive_int, scheduler_of, worker_count)
from tendon_robot_sim.experiment.dataset import (ADAPTERS, build_dataset, DatasetError,
                                                 SAMPLERS)
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.constant_curvature import ConstantCurvatureError
from tendon_robot_sim.models.rod.statics.solver import NODE_MODELS
from tendon_robot_sim.parallel import ParallelError

SAMPLES = 1000      # --samples of a random sampler by default


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'dataset', help='sample the actuation space, solve each sample, write Parquet',
        description='Sample the actuation space of a robot, solve each sample with a model '
                    '(warm-started along a space-filling curve), and write one Parquet row '
                    'per sample (inputs, tip pose, backbone points, residual, converged) '
                    'with a JSON description of the robot and the model. Resumable.')
    parser.add_argument('--robot', type=input_file, required=True, metavar='FILE',
                        help='robot description')
    parser.add_argument('--model', required=True, choices=sorted(ADAPTERS),
                        help='; '.join(f'{k}: {v[1]}' for k, v in sorted(ADAPTERS.items())))
    parser.add_argument('--statics-model', choices=NODE_MODELS, default=None,
                        help='with --model statics: the statics model (default auto: discrete '
                             'with vertebra discs, cosserat without, as the simulator and the '
                             'controllers choose)')
    parser.add_argument('--samples', type=positive_int, default=None, metavar='N',
                        help=f'number of samples (default {SAMPLES}; not with --sampler csv)')
    parser.add_argument('--sampler', choices=SAMPLERS, default='uniform',
                        help='uniform, Latin hypercube, or the rows of --csv '
                             '(default %(default)s)')
    parser.add_argument('--csv', default=None, metavar='FILE',
                        help='inputs for --sampler csv: a header naming the inputs '
                             '(tension_<tendon> [N] or q1_1..q1_6 [rad])')
    parser.add_argument('--random-state', type=non_negative_int, default=None, metavar='N',
                        help='random number generator state (default 0; not with --sampler '
                             'csv)')
    parser.add_argument('--chunk-size', type=positive_int, default=50, metavar='N',
                        help='samples per task and per part file (default %(default)s)')
    parser.add_argument('--max-chunks', type=positive_int, default=None, metavar='N',
                        help='stop after N chunks (the next run goes on from there)')
    parser.add_argument('--workers', type=worker_count, default=None, metavar='N',
                        help='local processes (default: all cores; 1: none; at most the '
                             'cores and the tasks run; not with --scheduler)')
    add_scheduler_options(parser)
    parser.add_argument('--output', default='dataset', metavar='PATH',
                        type=OutputPath('prefix', ('.parquet', '.json')),
                        help='writes PATH.parquet and PATH.json (default %(default)s)')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.set_defaults(func=run)


#: The arguments of build_dataset that its errors name, each given here as --<name>
OPTIONS_OF_ARGUMENTS = ('samples', 'csv', 'output', 'scheduler')


def run(args: argparse.Namespace) -> int:
    # what exists but is no file (a folder, /dev/null): the loader names what it is
    if args.sampler == 'csv' and args.csv is None:
        raise CommandError('--csv: --sampler csv needs a file')
    if args.sampler != 'csv' and args.csv is not None:    # it would be ignored
        raise CommandError(f'--csv: applies with --sampler csv only (this run: --sampler '
                           f'{args.sampler})')
    for option, value in (('--samples', args.samples), ('--random-state', args.random_state)):
        if args.sampler == 'csv' and value is not None:     # the file sets the samples
            raise CommandError(f'{option}: applies with --sampler uniform or lhs only (this '
                               'run: --sampler csv, one sample a row of --csv)')
    if args.model != 'statics' and args.statics_model is not None:
        raise CommandError(f'--statics-model: applies with --model statics only (this run: '
                           f'--model {args.model})')
    try:
        summary = build_dataset(args.robot, args.model, args.output, args.samples or SAMPLES,
                                args.sampler, args.random_state or 0, args.csv, args.chunk_size,
                                args.workers, scheduler_of(args), args.max_chunks,
                                statics_model=args.statics_model or 'auto')
    # ConstantCurvatureError: a robot --model cc does not take (several sections, converging
    # routing, friction), refused as the model is built, as `cc` refuses it
    except (ConstantCurvatureError, DatasetError, ParallelError, RobotDescriptionError,
            StaticsError) as error:
        raise CommandError(naming_options(error, OPTIONS_OF_ARGUMENTS)) from None
    except OSError as error:    # a write through a file object names no file: the output
        raise CommandError(f'--output: {error.filename or args.output}: '
                           f'{error.strerror or error}') from None
    if summary['complete']:
        print(f'{summary["samples"]} samples ({summary["converged"]} converged, '
              f'{summary["failed"]} failed, kept and flagged) in {args.output}.parquet, '
              f'description in {args.output}.json')
    else:
        print(f'stopped after {summary["chunks_done"]} of {summary["chunks"]} chunks; run '
              'the same command again to go on')
    if args.json:
        print(json.dumps(summary))
    if summary['complete'] and not summary['converged']:
        raise NoResultError(f'no sample of {summary["samples"]} converged (all kept, flagged '
                            f'and with their error in {args.output}.parquet)')
    return 0
