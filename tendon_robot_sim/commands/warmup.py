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

    tendon-robot-sim warmup [--models all|demo|rest] [--jobs N]

``make setup`` runs it: the models ``make demo`` needs first (``--models demo``), then the
others on every core (``--models rest --jobs N``, in the background). After ``colcon build``
run it once. Without it the first start of a node or command compiles its kernels (20-30 s
per model); afterwards they load from numba's cache. Where the package folder is read-only
(a shared colcon install) the cache is ``$XDG_CACHE_HOME/tendon_robot_sim/numba`` (per user);
``NUMBA_CACHE_DIR`` overrides it.
"""

import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

from tendon_robot_sim import progress_bar
from tendon_robot_sim.commands import CommandError, worker_count
from tendon_robot_sim.parallel import ends_with_us

# A model compiled in a process of its own (--jobs): its kernels go to the shared cache.
WARM_ONE = 'import sys; from tendon_robot_sim.models.warmup import warm; warm(sys.argv[1])'


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'warmup', help='compile and cache every numba kernel of every model (once, after setup)',
        description='Compile every numba kernel of every model (rod dynamics and statics, '
                    'parallel robot, snake, constant-curvature trunk) and keep the machine '
                    "code in numba's cache, so that later nodes and commands start in about a "
                    'second instead of compiling for 20-30 s.')
    parser.add_argument('--models', choices=('all', 'demo', 'rest'), default='all',
                        help='which models: all; demo, those `make demo` runs (make setup '
                             'compiles them first); rest, all others')
    parser.add_argument('--jobs', type=worker_count, default=1,
                        help='models compiled at once, each in a process of its own (make '
                             'setup: one per core)')
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
    from tendon_robot_sim.models.warmup import tasks

    if os.environ.get('NUMBA_CACHE_DIR'):
        check_cache_dir(os.environ['NUMBA_CACHE_DIR'])
    work = list(tasks(args.models))
    start = time.perf_counter()
    with progress_bar(total=len(work), desc='compiling kernels', unit='model') as bar:
        if args.jobs == 1:
            for label, warm in work:
                bar.set_postfix_str(label)
                warm()
                bar.update()
        else:
            _in_processes([label for label, _ in work], args.jobs, bar)
    where = os.environ.get('NUMBA_CACHE_DIR', 'beside the package sources (__pycache__)')
    print(f'{len(work)} models warmed in {time.perf_counter() - start:.1f} s; '
          f'numba cache: {where}')
    return 0


def _in_processes(labels: list[str], jobs: int, bar) -> None:
    """Compile the models ``labels``, ``jobs`` at a time, each in a Python process of its own."""
    waiting, running = list(labels), {}
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                label = waiting.pop(0)
                errors = tempfile.TemporaryFile()
                # ends with us, whatever ends us (SIGTERM of make setup's background job)
                running[label] = subprocess.Popen([sys.executable, '-c', WARM_ONE, label],
                                                  stdout=subprocess.DEVNULL, stderr=errors,
                                                  preexec_fn=ends_with_us()), errors
            bar.set_postfix_str(', '.join(running))
            time.sleep(0.1)
            for label, (process, errors) in list(running.items()):
                if process.poll() is None:
                    continue
                del running[label]
                errors.seek(0)
                lines = errors.read().decode(errors='replace').strip().splitlines()
                errors.close()
                if process.returncode != 0:   # a bug, not the user's: an internal error
                    raise RuntimeError(f'{label}: the compile failed (exit '
                                       f'{process.returncode}): {lines[-1] if lines else ""}')
                bar.update()
    finally:   # an error or Ctrl-C: no compile goes on without us
        for process, errors in running.values():
            process.kill()
            process.wait()
            errors.close()
