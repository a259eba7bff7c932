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
How fast the simulator node runs each robot in ``mode: dynamic``, publishing as in a launch.

Each case starts ``simulator_node`` as its own process with ``real_time_factor`` 100 (as
fast as it can) and ``/clock`` on, steps a tendon between 0 and 2 N every simulated second
over ``tendon/setpoint`` (as a user at real time would), and measures simulated seconds
(``/clock``) per wall second over the window after a start-up second, with the process's CPU
time. A factor of 1 or more: the node keeps real time with ``real_time_factor: 1`` (the
default), and about 1/factor of a core is what it costs.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \
        python benchmarks/bench_sim_node.py --json [--window 10]

The last line with --json is one JSON object: per case the factor and the CPU share, and
the machine with its load average.
"""

import json
import os
import sys
import time

from machine import machine_info
from options import Parser, within
import rclpy
from sensor_msgs.msg import JointState
from simulator_process import ClockedSimulator
from tendon_robot_sim import share_dir

CONFIG = share_dir() / 'config'
CASES = {
    'nitinol robot (10 discs, implicit)': 'nitinol_robot.yaml',
    'steel robot (no discs, implicit)': 'steel_rod_robot.yaml',
    'default silicone robot (explicit)': 'robot.yaml',
}
SETTLE = 1.0            # s of wall time before the window
STEP = 2.0              # N
# s: /clock comes from the node's 50 Hz steady-clock timers, so the window's ends are known to
# 0.02 s: 2 % at 1 s; a shorter one measured that, not the node (0.001 s: no start mark at all)
WINDOW = within(1.0, 3600.0, 's')


def run_case(node, case: str, index: int, window: float) -> dict:
    namespace = f'sim_node_bench_{os.getpid()}_{index}'
    with ClockedSimulator(node, case, namespace, CONFIG / CASES[case],
                          {'mode': 'dynamic', 'real_time_factor': '100.0'}) as sim:
        clock = sim.clock
        begin = time.perf_counter()

        def drive(until: float) -> tuple:
            """Step the tendon until ``until`` s after ``begin``; the last /clock, the CPU time."""
            while time.perf_counter() - begin < until:
                pulled = int(clock[-1][1]) % 2 == 1       # a step each simulated second
                sim.setpoint.publish(JointState(name=['t0'], effort=[STEP if pulled else 0.0]))
                rclpy.spin_once(node, timeout_sec=0.02)
            return clock[-1], sim.cpu_seconds()
        start = drive(SETTLE)
        end = drive(SETTLE + window)
    (wall0, sim0), cpu0 = start
    (wall1, sim1), cpu1 = end
    return {'real_time_factor': (sim1 - sim0) / (wall1 - wall0),
            'cpu_share': (cpu1 - cpu0) / (wall1 - wall0), 'window_s': wall1 - wall0}


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--window', type=WINDOW, default=10.0, help='wall seconds measured')
    args = parser.parse_args()
    result = {'cases': {}}
    rclpy.init()
    node = rclpy.create_node(f'sim_node_bench_{os.getpid()}')
    try:
        for index, case in enumerate(CASES):
            entry = run_case(node, case, index, args.window)
            result['cases'][case] = entry
            print(f'{case:36s} {entry["real_time_factor"]:6.2f}x real time, '
                  f'{100 * entry["cpu_share"]:5.1f} % of a core', flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    result['machine'] = machine_info('numpy', 'numba')
    print(f"load average {result['machine']['load_average_1min']:.2f} on "
          f"{result['machine']['cpus']} cpus")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
