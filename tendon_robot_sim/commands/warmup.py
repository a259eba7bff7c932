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
``tendon-robot-sim warmup``: compile every numba kernel once, ahead of the first start.

    tendon-robot-sim warmup

``make setup`` runs it; after ``colcon build`` run it once. Without it the first start of a
node or command compiles its kernels (20-30 s per model); afterwards they load from numba's
cache. Where the package folder is read-only (a shared colcon install) the cache is
``$XDG_CACHE_HOME/tendon_robot_sim/numba`` (per user); ``NUMBA_CACHE_DIR`` overrides it.
"""

import argparse
import os
from pathlib import Path
import sys
import time

from tendon_robot_sim.commands import CommandError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'warmup', help='compile and cache every numba kernel of every model (once, after setup)',
        description='Compile every numba kernel of every model (rod dynamics and statics, '
                    'parallel robot, snake, constant-curvature trunk) and keep the machine '
                    "code in numba's cache, so that later nodes and commands start in about a "
                    'second instead of compiling for 20-30 s.')
    parser.set_defaults(func=run)


def check_cache_dir(cache: str) -> None:
    """Raise CommandError unless numba can create and write the folder ``cache``."""
    existing = Path(cache).absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise CommandError(f'NUMBA_CACHE_DIR {cache}: {existing} is not a folder; the '
                           'compiled kernels could not be kept')
    if not os.access(existing, os.W_OK):
        raise CommandError(f'NUMBA_CACHE_DIR {cache}: {existing} is not writable; the '
                           'compiled kernels could not be kept')


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from tendon_robot_sim.models.warmup import tasks

    if os.environ.get('NUMBA_CACHE_DIR'):
        check_cache_dir(os.environ['NUMBA_CACHE_DIR'])
    work = list(tasks())
    start = time.perf_counter()
    with tqdm(work, desc='compiling kernels', unit='model', file=sys.stderr) as bar:
        for label, warm in bar:
            bar.set_postfix_str(label)
            warm()
    where = os.environ.get('NUMBA_CACHE_DIR', 'beside the package sources (__pycache__)')
    print(f'{len(work)} models warmed in {time.perf_counter() - start:.1f} s; '
          f'numba cache: {where}')
    return 0
