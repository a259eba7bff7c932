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

"""The simulator node as its own process, as a launch starts it: for the benchmarks of it."""

import os
from pathlib import Path
import subprocess
import sys
import time
from typing import Callable

import rclpy

ROOT = Path(__file__).resolve().parent.parent


def environment(cache: str | None = None) -> dict:
    """Return this environment with this checkout's package first; ``cache``: numba's cache."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    if cache is not None:
        env['NUMBA_CACHE_DIR'] = cache
    return env


def start_simulator(namespace: str, robot_file: Path, parameters: dict,
                    cache: str | None = None) -> subprocess.Popen:
    """Start ``simulator_node`` in ``/namespace`` on ``robot_file`` with ``parameters``."""
    return subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.nodes.simulator_node', '--ros-args',
         '-r', f'__ns:=/{namespace}', '-p', f'robot_file:={robot_file}']
        + [arg for name, value in parameters.items() for arg in ('-p', f'{name}:={value}')],
        env=environment(cache), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def spin_until(node, process: subprocess.Popen, condition: Callable[[], bool],
               start: float, timeout: float, case: str) -> None:
    """
    Spin ``node`` until ``condition()``, or ``timeout`` [s] after ``start`` (perf_counter).

    Raises RuntimeError with the simulator's error output if it exits first.
    """
    while not condition() and time.perf_counter() - start < timeout:
        if process.poll() is not None:
            raise RuntimeError(f'{case}: the simulator exited: {process.stderr.read()}')
        rclpy.spin_once(node, timeout_sec=0.01)


def stop(process: subprocess.Popen) -> str:
    """End the simulator; return its error output (its log)."""
    process.terminate()
    return process.communicate(timeout=30)[1] or ''
