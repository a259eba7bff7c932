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

"""The benchmarks' command lines: errors as the package's commands give them."""

import argparse
import os
from pathlib import Path
import subprocess

# One-line errors, exit 2 (docs/cli.md), and the package's number types, so that a count of 0
# or a negative time is refused before the work starts rather than as a traceback after it.
from tendon_robot_sim.cli import Parser
from tendon_robot_sim.commands import (non_negative, non_negative_int, positive, positive_int,
                                       within, worker_count)

__all__ = ['git_repository', 'listed', 'names', 'non_negative', 'non_negative_int', 'Parser',
           'positive', 'positive_int', 'readable_file', 'within', 'worker_count']


def names(known):
    """Argument type: comma-separated names, each one of ``known``; returns the list."""
    def parse(text: str) -> list[str]:
        listed = text.split(',')
        unknown = [name for name in listed if name not in known]
        if unknown:
            raise argparse.ArgumentTypeError(f'unknown {unknown}; choose from {list(known)}')
        return listed
    return parse


def readable_file(text: str) -> str:
    """Argument type: a file that exists (a robot description: a typo was a traceback)."""
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f'{text}: no such file')
    return text


def git_repository(text: str) -> str:
    """Argument type: a repository git can clone (a folder or a URL; a typo was a traceback)."""
    # ls-remote reads what clone would, without the copy; no prompt for a password on a URL
    check = subprocess.run(['git', 'ls-remote', '--quiet', text, 'HEAD'], capture_output=True,
                           env=dict(os.environ, GIT_TERMINAL_PROMPT='0'))
    if check.returncode != 0:
        raise argparse.ArgumentTypeError(f'{text}: not a git repository')
    return text


def listed(kind):
    """Argument type: comma-separated values, each of the argument type ``kind``."""
    def parse(text: str) -> list:
        return [kind(item) for item in text.split(',')]
    return parse
