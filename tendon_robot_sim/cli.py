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
The ``tendon-robot-sim`` command-line tool.

Each subcommand lives in ``tendon_robot_sim/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed arguments and returning the exit code). Errors a user can fix
are raised as :class:`~tendon_robot_sim.commands.CommandError` and printed to stderr
as one line.
"""

import argparse
import importlib
import sys

from tendon_robot_sim.commands import CommandError

COMMANDS = ('simulate', 'launch', 'demo', 'emulate', 'statics', 'cc', 'cc_dynamics', 'record',
            'replay', 'synth_experiment', 'validate', 'calibrate', 'pcr', 'snake', 'hardware')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='tendon-robot-sim',
        description='Simulate and control tendon-driven continuum robots.')
    subparsers = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in COMMANDS:
        importlib.import_module(f'tendon_robot_sim.commands.{name}').register(subparsers)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CommandError as error:
        print(f'tendon-robot-sim {args.command}: error: {error}', file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == '__main__':
    sys.exit(main())
