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
A newcomer's time from ``git clone`` to the demo robot moving, as the README tells it.

Clones the repository into a fresh folder, runs ``make demo`` there (which runs ``make setup``
first) and stamps, from the clone's start: each line ``scripts/setup.sh`` logs, and the demo's
first progress bar ("simulated:"), printed once the stack is up, the robot drawn and time
running. Then it stops the demo (Ctrl-C, the demo's own clean-up), ends the setup's background
compile of the other models and removes the clone.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \
        python benchmarks/bench_time_to_robot.py --json [--cold-downloads] [--repo DIR]

``--cold-downloads`` gives uv an empty cache, so every wheel is downloaded as on a new
machine; without it uv takes what this machine downloaded before. The last line with --json
is one JSON object: seconds per stamp, and the machine with its load average before and after.
"""

import json
import os
from pathlib import Path
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from machine import machine_info
from options import git_repository, Parser

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 1800.0   # s: a loaded machine took 25 min once
MOVING = 'simulated:'


def stamped_lines(process: subprocess.Popen, start: float, until: str):
    """Yield (seconds since start, line) of the process's output until a line holds ``until``."""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    pending = b''
    while time.perf_counter() - start < TIMEOUT:
        if not selector.select(timeout=1.0):
            if process.poll() is not None:
                return
            continue
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            return
        pending += chunk.replace(b'\r', b'\n')
        *lines, pending = pending.split(b'\n')
        for line in lines:
            text = line.decode(errors='replace').strip()
            if text:
                yield time.perf_counter() - start, text
                if until in text:
                    return
    raise TimeoutError(f'no "{until}" within {TIMEOUT:g} s')


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--repo', type=git_repository, default=str(ROOT),
                        help='the repository to clone')
    parser.add_argument('--cold-downloads', action='store_true',
                        help='an empty uv cache: every wheel downloaded')
    args = parser.parse_args()
    result = {'stamps': []}
    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix='time_to_robot_'))
    # the demo's bar into this pipe: drawn on a terminal only, unless asked (docs/cli.md)
    env = dict(os.environ, TENDON_ROBOT_SIM_PROGRESS='1')
    if args.cold_downloads:
        env['UV_CACHE_DIR'] = str(work / 'uv_cache')
    clone = work / 'tendon_robot_sim'
    try:
        start = time.perf_counter()
        subprocess.run(['git', 'clone', '-q', args.repo, str(clone)], check=True)
        result['clone_s'] = time.perf_counter() - start
        demo = subprocess.Popen(['make', 'demo'], cwd=clone, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            for seconds, line in stamped_lines(demo, start, MOVING):
                if line.startswith('[setup]') or MOVING in line:
                    result['stamps'].append({'s': round(seconds, 1), 'line': line[:160]})
                    print(f'{seconds:7.1f} s  {line[:120]}', flush=True)
                    if MOVING in line:
                        result['robot_moving_s'] = seconds
        finally:
            if demo.poll() is None:
                os.killpg(demo.pid, signal.SIGINT)
                try:
                    demo.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(demo.pid, signal.SIGKILL)
                    demo.wait()
    finally:
        # the setup's background compile of the other models runs from the clone's venv
        subprocess.run(['pkill', '-f', str(clone)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    if 'robot_moving_s' not in result:
        print('error: the demo never showed its progress bar', file=sys.stderr)
        return 1
    result['machine'] = machine_info()
    result['machine']['load_average_1min_before'] = load_before
    print(f"from git clone to the demo robot moving: {result['robot_moving_s']:.0f} s "
          f"(load {load_before:.1f} before, {result['machine']['load_average_1min']:.1f} after)")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
