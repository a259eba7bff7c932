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
from sensor_msgs.msg import JointState
from tendon_robot_sim.ros import topics

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 120.0   # s to the first /clock (the first start of a checkout compiles)


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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux /proc)."""
    fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class ClockedSimulator:
    """
    ``simulator_node`` with ``/clock`` on, started and ended as a context manager.

    On entry: ``node`` subscribes ``/clock`` (``clock``: (perf_counter, simulated seconds) per
    message) and publishes setpoints (``setpoint``) to the simulator in ``/namespace``, which
    runs on ``robot_file`` with ``parameters`` (``publish_clock`` is set); it returns once the
    first ``/clock`` came. On exit the simulator ends (``log``: its error output) and the
    subscription and publisher go. ``case`` names the run in errors.
    """

    def __init__(self, node, case: str, namespace: str, robot_file: Path, parameters: dict,
                 timeout: float = START_TIMEOUT):
        self.node, self.case, self.timeout = node, case, timeout
        self.namespace, self.robot_file = namespace, robot_file
        self.parameters = {**parameters, 'publish_clock': 'true'}
        self.clock: list[tuple[float, float]] = []
        self.log = ''

    def __enter__(self) -> 'ClockedSimulator':
        node = self.node
        self.subscription = node.create_subscription(   # /clock is absolute: no namespace
            topics.CLOCK.msg_type, topics.CLOCK.name,
            lambda msg: self.clock.append((time.perf_counter(),
                                           msg.clock.sec + 1e-9 * msg.clock.nanosec)),
            topics.CLOCK.qos)
        self.setpoint = node.create_publisher(
            JointState, f'/{self.namespace}/{topics.TENDON_SETPOINT.name}',
            topics.TENDON_SETPOINT.qos)
        self.process = start_simulator(self.namespace, self.robot_file, self.parameters)
        try:
            spin_until(node, self.process, lambda: bool(self.clock), time.perf_counter(),
                       self.timeout, self.case)
            if not self.clock:
                raise RuntimeError(f'{self.case}: no /clock within {self.timeout:g} s')
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def cpu_seconds(self) -> float:
        """CPU seconds of the simulator's process so far."""
        return cpu_seconds(self.process.pid)

    def __exit__(self, *exc) -> None:
        self.log = stop(self.process)
        self.node.destroy_subscription(self.subscription)
        self.node.destroy_publisher(self.setpoint)


def stop(process: subprocess.Popen) -> str:
    """End the simulator; return its error output (its log)."""
    process.terminate()
    return process.communicate(timeout=30)[1] or ''
