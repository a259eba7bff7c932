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
``tendon-robot-sim launch``: run a ROS stack without ``ros2 launch``.

Starts the nodes of ``tendon_robot_sim.stack.STACKS[<stack>]`` as local
processes (see :mod:`tendon_robot_sim.launcher`) and stops them on Ctrl-C.
"""

from pathlib import Path

from tendon_robot_sim.commands import check_ros_environment, command_error, OutputPath
from tendon_robot_sim.launcher import LaunchError, parse_assignment, StackLauncher
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import load_any_description
from tendon_robot_sim.stack import STACKS


def register(subparsers) -> None:
    arguments = '; '.join(
        f'{stack}: ' + ', '.join(f'{a.name} (default {a.default!r})' for a in s.arguments)
        for stack, s in sorted(STACKS.items()))
    parser = subparsers.add_parser(
        'launch', help='start a ROS stack (nodes as local processes)',
        description='Start the nodes of a stack as local processes, from the same stack '
                    'definition as launch/<stack>.launch.py; Ctrl-C stops them all. '
                    'robot_state_publisher and rviz2 are skipped with a note when not '
                    'installed. Every launch argument and --param is checked against the '
                    "stack definition and the nodes' parameter tables before anything "
                    f'starts. Launch arguments: {arguments}.')
    parser.add_argument('stack', choices=sorted(STACKS), help='which stack')
    parser.add_argument('--robot', metavar='FILE', type=Path,
                        help='robot description YAML of any kind (launch argument robot)')
    parser.add_argument('--world', metavar='FILE', type=Path,
                        help='world description YAML: obstacles the robot touches (launch '
                             'argument world)')
    parser.add_argument('--namespace', metavar='NS',
                        help='namespace of all nodes (launch argument namespace)')
    parser.add_argument('--frame-prefix', metavar='PREFIX',
                        help='prepended to every frame id, e.g. left_arm/ (launch argument '
                             "frame_prefix; default: '<namespace>/' in a namespace)")
    parser.add_argument('--arg', action='append', default=[], metavar='NAME:=VALUE',
                        help='a launch argument, e.g. rviz:=false or use_sim_time:=true')
    parser.add_argument('--param', action='append', default=[], metavar='[NODE:]NAME:=VALUE',
                        help='a node parameter (YAML value), for NODE only or for every '
                             'node, e.g. simulator:publish_rate:=20')
    parser.add_argument('--dry-run', action='store_true',
                        help='check every launch argument and parameter as the real launch '
                             'does, print the command lines and exit; without --params-dir '
                             "each node's generated parameter file is printed beneath its "
                             'line (the line names it by its bare name) and no file is kept')
    parser.add_argument('--params-dir', metavar='DIR', type=OutputPath('folder'),
                        help="write each node's generated parameter file (launch arguments, "
                             '--param values, robot_description) into DIR, created if '
                             'missing, and keep it there; the command lines name these '
                             'files, so a line printed by --dry-run runs one node by hand '
                             '(default: a temporary folder, removed when the launch ends)')
    parser.set_defaults(func=run)


def launch_arguments(args) -> dict[str, str]:
    """Launch argument values from ``--arg``, ``--robot``, ``--namespace``, ``--frame-prefix``."""
    try:
        values = dict(parse_assignment(text, 'launch argument') for text in args.arg)
    except LaunchError as error:
        raise command_error(error) from None
    if args.robot is not None:
        try:
            load_any_description(args.robot)
        except RobotDescriptionError as error:
            # named as --arg robot:= is: the launch argument, then the file's own line
            raise command_error(LaunchError(f'launch argument robot: {error}')) from None
        values['robot'] = str(args.robot.resolve())
    if args.world is not None:
        values['world'] = str(args.world.resolve())
    if args.namespace is not None:
        values['namespace'] = args.namespace
    if args.frame_prefix is not None:
        values['frame_prefix'] = args.frame_prefix
    return values


def run(args) -> int:
    check_ros_environment()
    try:
        launcher = StackLauncher(args.stack, launch_arguments(args), args.param,
                                 params_dir=args.params_dir)
    except LaunchError as error:
        raise command_error(error) from None
    if args.dry_run:
        print(launcher.describe())
        return 0
    return launcher.run()
