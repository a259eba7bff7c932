#!/usr/bin/env python3

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
CPU time of ``tendon-robot-sim simulate`` on Till's example as a whole process (issue 42).

Till's tendon-robot example (``config/till_tendon_robot.yaml``, dt = 50 ms, his displacement
ramp, 25 s simulated) run as users run it: one process per run, numba's cache warm. Per run:
the process's CPU time (user + system, from the kernel's accounting of the child) and wall
time; beside them the integration's own time, the ``wall_time`` the command reports of a
second run in this process (kernels loaded: the model's time alone), and the floor under
any command: the interpreter, numpy and numba imported alone, in this environment and with
the one OpenBLAS thread the package sets (``tendon_robot_sim/__init__.py``) unless it is set
(this script imports the package only after the processes ran, so that they inherit the
environment as given). Target: at most 0.8 CPU s.
The processes run as a user's do, with Python's bytecode cache (``__pycache__``): a
PYTHONDONTWRITEBYTECODE in this environment (some sandboxes set it) is left out of theirs,
since without it every module of the package is compiled from source on every start (about
0.06 s here).

    python benchmarks/bench_command_start.py --json [--repeat 5]

The last line with --json is one JSON object; ``machine.load_average_1min`` says how busy
the machine was (taken before and after).
"""

import contextlib
import io
import json
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import time

from machine import machine_info
from options import Parser, positive_int

CONFIG = Path(__file__).resolve().parents[1] / 'config'
ARGS = ['simulate', '--robot', str(CONFIG / 'till_tendon_robot.yaml'), '--dt', '0.05',
        '--displacements-csv', str(CONFIG / 'till_tendon_robot_displacements.csv'), '--json']
TARGET_CPU_S = 0.8
# name: (code, variables set for that process)
FLOORS = {'python': ('pass', {}), 'python + numpy': ('import numpy', {}),
          'python + numpy + numba': ('import numba', {}),
          'python + numpy + numba, one OpenBLAS thread': ('import numba',
                                                          {'OPENBLAS_NUM_THREADS': '1'})}


def timed(command: list, variables: dict | None = None) -> tuple[float, float, str]:
    """Run ``command``; return its CPU seconds (user + system), wall seconds and stdout."""
    environment = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}
    environment.update(variables or {})
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=environment)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f'{command[0]} exited {process.returncode}')
    return usage.ru_utime + usage.ru_stime, wall, out


def integration_alone() -> float:
    """Return the command's own wall_time [s] of its second run in this process."""
    from tendon_robot_sim import cli      # last: it sets OPENBLAS_NUM_THREADS in os.environ
    for _ in range(2):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(ARGS) == 0
    return json.loads(out.getvalue().strip().splitlines()[-1])['wall_time']


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeat', type=positive_int, default=5, help='runs of each process')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    tool = shutil.which('tendon-robot-sim') or str(Path(sys.executable).parent /
                                                   'tendon-robot-sim')
    load_before = os.getloadavg()[0]
    timed([tool, *ARGS])             # numba's cache warm, files in the page cache
    runs, floors = [], {name: [] for name in FLOORS}
    for _ in range(args.repeat):     # interleaved: the load changes alike for each
        cpu, wall, out = timed([tool, *ARGS])
        runs.append((cpu, wall, json.loads(out.strip().splitlines()[-1])['wall_time']))
        for name, (code, variables) in FLOORS.items():
            floors[name].append(timed([sys.executable, '-c', code], variables)[0])
    cpus, walls, reported = zip(*runs)
    result = {
        'benchmark': 'command_start',
        'case': "simulate, Till's example (25 s at dt = 50 ms)",
        'command': ['tendon-robot-sim', *ARGS],
        'process_cpu_s_median': statistics.median(cpus),
        'process_cpu_s': list(cpus),
        'process_wall_s_median': statistics.median(walls),
        'reported_wall_time_s_median': statistics.median(reported),
        'integration_alone_s': integration_alone(),
        'floor_cpu_s_median': {name: statistics.median(v) for name, v in floors.items()},
        'target_process_cpu_s': TARGET_CPU_S,
        'met': statistics.median(cpus) <= TARGET_CPU_S,
        'bytecode_cache': 'on (PYTHONDONTWRITEBYTECODE left out)'
                          if 'PYTHONDONTWRITEBYTECODE' in os.environ else 'on',
        'load_average_1min_before': load_before,
        'machine': machine_info('numpy', 'numba', 'scipy'),
    }
    print(f"simulate on Till's example as a process: {result['process_cpu_s_median']:.2f} CPU s "
          f'(median of {args.repeat}; target <= {TARGET_CPU_S}), '
          f"{result['process_wall_s_median']:.2f} s wall; the integration alone "
          f"{result['integration_alone_s']:.3f} s; python + numpy + numba alone "
          f"{result['floor_cpu_s_median']['python + numpy + numba']:.2f} CPU s; load "
          f"{load_before:.1f} -> {result['machine']['load_average_1min']:.1f}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
