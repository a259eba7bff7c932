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
Time to the first tip pose of the simulator node, with numba's cache warm and cold.

Each case starts ``simulator_node`` as its own process (as ``ros2 run`` does) and measures
the wall time from the start of the process to the first ``tip/pose`` message received
here. ``warm``: after ``tendon-robot-sim warmup`` (what ``make setup`` runs), numba loads
the compiled kernels from its cache; ``cold``: an empty cache (``NUMBA_CACHE_DIR`` a fresh
folder), every kernel compiles, as on the first start without a warmup.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \
        python benchmarks/bench_first_start.py --json [--no-cold] [--repeat 3]

The last line with --json is one JSON object: seconds per case, the warmup's own time,
and the machine with its load average.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from machine import machine_info
from options import Parser, positive_int
import rclpy
from simulator_process import environment, spin_until, start_simulator, stop
from tendon_robot_sim import share_dir
from tendon_robot_sim.ros import topics

CONFIG = share_dir() / 'config'
# case -> simulator parameters (robot file, mode)
CASES = {
    'tendon_robot dynamic': ('robot.yaml', 'dynamic'),
    'tendon_robot dynamic, nitinol (implicit)': ('nitinol_robot.yaml', 'dynamic'),
    'tendon_robot dynamic, steel (implicit)': ('steel_rod_robot.yaml', 'dynamic'),
    'tendon_robot quasi_static': ('robot.yaml', 'quasi_static'),
    'tendon_robot cc_dynamic': ('robot.yaml', 'cc_dynamic'),
    'rolling_joint_snake dynamic': ('rolling_joint_snake.yaml', 'dynamic'),
    'bellows trunk cc_dynamic': ('bionic_handling_assistant.yaml', 'cc_dynamic'),
    'pcr_6rus quasi_static': ('pcr_6rus.yaml', 'quasi_static'),
}
TIMEOUT = 600.0   # s, a cold start on a loaded machine included


def first_tip_pose(node, case: str, index: int, cache: str | None) -> float:
    """Seconds from starting the simulator of ``case`` to its first tip/pose here."""
    robot, mode = CASES[case]
    namespace = f'first_start_{os.getpid()}_{index}'
    received = []
    subscription = node.create_subscription(
        topics.TIP_POSE.msg_type, f'/{namespace}/{topics.TIP_POSE.name}',
        lambda msg: received.append(time.perf_counter()), topics.TIP_POSE.subscription_qos)
    start = time.perf_counter()
    process = start_simulator(namespace, CONFIG / robot, {'mode': mode}, cache)
    try:
        spin_until(node, process, lambda: bool(received), start, TIMEOUT, case)
    finally:
        stop(process)
        node.destroy_subscription(subscription)
    if not received:
        raise RuntimeError(f'{case}: no tip/pose within {TIMEOUT:g} s')
    return received[0] - start


def warmup(cache: str | None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'warmup'],
                   env=environment(cache), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--no-cold', action='store_true',
                        help='skip the cold starts (each one compiles for a minute or more)')
    parser.add_argument('--repeat', type=positive_int, default=3, help='warm starts per case')
    args = parser.parse_args()
    result = {'cases': {}}
    result['warmup_s'] = warmup(None)   # the cache `make setup` fills; quick when full
    rclpy.init()
    node = rclpy.create_node(f'first_start_probe_{os.getpid()}')
    try:
        index = 0
        for case in CASES:
            times = []
            for _ in range(args.repeat):
                index += 1
                times.append(first_tip_pose(node, case, index, None))
            entry = {'warm_s': statistics.median(times), 'warm_runs_s': times}
            if not args.no_cold:
                index += 1
                with tempfile.TemporaryDirectory(prefix='numba_cold_') as cold:
                    entry['cold_s'] = first_tip_pose(node, case, index, cold)
            result['cases'][case] = entry
            print(f'{case:30s} warm {entry["warm_s"]:6.2f} s'
                  + (f', cold {entry["cold_s"]:6.1f} s' if 'cold_s' in entry else ''),
                  flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    result['machine'] = machine_info('numpy', 'numba')
    print(f"warmup (cache already filled by make setup) {result['warmup_s']:.1f} s; load "
          f"average {result['machine']['load_average_1min']:.2f} on "
          f"{result['machine']['cpus']} cpus")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
