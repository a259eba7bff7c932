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
``tendon-robot-sim import``: a measured table (CSV) into a rosbag2 bag of the package's topics.

    tendon-robot-sim import train.csv --columns config/opencr_ftdcr_v4_columns.yaml \
        --robot config/opencr_ftdcr_v4.yaml --out train_bag

The column map says which column is what (time, per-tendon inputs, the measured tip, a
label, more markers), in which units and signs, and where the measurement frame and the
tip marker are (:mod:`tendon_robot_sim.experiment.column_map`); the bag holds
``tendon/state``, ``tip/measured`` (base frame), ``experiment/label`` and ``/tf_static``
(:mod:`tendon_robot_sim.experiment.table_import`). Everything is checked before the bag is
written: a bad table or map writes nothing.
"""

import argparse

from tendon_robot_sim import counted, default_robot_file
from tendon_robot_sim.commands import command_error, input_file, OutputPath
from tendon_robot_sim.experiment.bag import BagError
from tendon_robot_sim.experiment.column_map import ColumnMapError, load_column_map
from tendon_robot_sim.experiment.experiment import ExperimentError
from tendon_robot_sim.experiment.table_import import import_table, write_measured_bag
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import load_robot


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'import', help='a measured table (CSV) into a rosbag2 bag, with a column map',
        description='Read a table of time, per-tendon inputs and a measured tip (and a label, '
                    'more markers) with a column map (YAML: columns, units, signs, the '
                    'measurement frame, the tip marker) and write it as a rosbag2 bag of '
                    'tendon/state, tip/measured (base frame) and experiment/label, for replay, '
                    'view --bag, calibrate and validate.')
    parser.add_argument('table', metavar='CSV', help='the measured table (header line, rows)')
    parser.add_argument('--columns', required=True, metavar='MAP.yaml',
                        help='column map: which column is what (docs/experiments.md)')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML whose tendons the map names (default: '
                             'the package config/robot.yaml)')
    parser.add_argument('--out', required=True, metavar='BAG', type=OutputPath('new folder'),
                        help='bag folder to create (MCAP); must not exist')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        robot = load_robot(args.robot or default_robot_file())
        column_map = load_column_map(args.columns)
        measured = import_table(args.table, column_map, robot)
        counts = write_measured_bag(args.out, measured, robot)
    except (RobotDescriptionError, ColumnMapError, ExperimentError, BagError) as error:
        raise command_error(error) from None
    recording = measured.recording
    labels = len(set(recording.labels))
    print(f'{counted(len(recording.tip_times), "row")} over {recording.tip_times[-1]:.1f} s '
          f'({recording.kind}s of {counted(len(robot.tendons), "tendon")}'
          + (f', {counted(labels, "label")}' if labels else '') + f') from {args.table}')
    print(f'wrote {args.out}: ' + ', '.join(f'{topic} {n}' for topic, n in counts.items()))
    return 0
