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
The simulator node under streamed setpoints, as a teleoperated robot feeds it (issue 42, item 1).

Each case starts ``simulator_node`` as its own process in ``mode: dynamic`` with ``/clock``
on, at ``real_time_factor`` 1 (as a user runs it), and streams a 0.5 Hz sinusoid on two tendons
(tensions, in antiphase: ``AMPLITUDE`` about ``MEAN`` N) as ``sensor_msgs/JointState`` on
``tendon/setpoint`` at 50 Hz of wall time. Over the window after a start-up second it measures
the simulated time (``/clock``) against wall time and the node's CPU time (``/proc``):
simulated seconds per CPU second (above 1: it keeps real time, on 1/that of a core) and the
CPU share of a core it took, and how often the node logged that a step failed and it reset
the model.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \
        python benchmarks/bench_streaming.py --json [--window 20] [--real-time-factor 100]

``--real-time-factor 100`` runs the node as fast as it can instead (sim per CPU second then
counts the node at full load); ``--publish-rate`` sets how often it publishes its state, tip
pose, markers and /tf (50 Hz by default, as the node). The probe subscribes to ``/clock`` only,
as the issue's did; the node builds and sends no message of a topic nobody subscribes to, so
``--subscribe`` measures it with a subscriber on each of ``tendon/state``, ``tip/pose``,
``backbone/markers`` and ``/tf`` as well (as RViz or a controller beside it; the probe takes
the messages, the node's CPU time counts their building and sending). The last line with
--json is one JSON object: per case the figures, and the machine with its load average before
and after.
"""

import json
import math
import os
import sys
import time

from machine import machine_info
from options import names, Parser, positive
import rclpy
from sensor_msgs.msg import JointState
from simulator_process import ClockedSimulator
from tendon_robot_sim import share_dir
from tendon_robot_sim.ros import topics

CONFIG = share_dir() / 'config'
# name: (robot file, tendons streamed, mean and amplitude [N])
CASES = {
    'nitinol': ('nitinol_robot.yaml', ('t0', 't1'), 1.0, 1.0),
    'steel': ('steel_rod_robot.yaml', ('t0', 't1'), 2.0, 2.0),
}
FREQUENCY = 0.5       # Hz of the sinusoid
RATE = 50.0           # Hz of the setpoints


def efforts(case: str, t: float) -> list:
    """Return the case's setpoint [N] at ``t`` s of the stream, one per streamed tendon."""
    _, _, mean, amplitude = CASES[case]
    wave = amplitude * math.sin(2.0 * math.pi * FREQUENCY * t)
    return [mean + wave, mean - wave]


SETTLE = 1.0
# what the node logs when a step failed and it reset the model (simulator_node.py)
RESET_WARNING = 'The node reset the simulation'
# what --subscribe takes from the node (/tf is absolute: no namespace)
STATE_TOPICS = (topics.TENDON_STATE, topics.TIP_POSE, topics.BACKBONE_MARKERS, topics.TF)


def subscribe_state(node, namespace: str, received: dict) -> list:
    """Subscribe ``node`` to the simulator's state topics; count the messages in ``received``."""
    def count(name):
        def callback(msg):
            received[name] = received.get(name, 0) + 1
        return callback
    return [node.create_subscription(
        topic.msg_type, topic.name if topic.name.startswith('/') else f'/{namespace}/{topic.name}',
        count(topic.name), topic.subscription_qos) for topic in STATE_TOPICS]


def run_case(node, case: str, index: int, window: float, factor: float,
             publish_rate: float, subscribe: bool = False) -> dict:
    robot_file, tendons, _, _ = CASES[case]
    namespace = f'streaming_bench_{os.getpid()}_{index}'
    sent = 0
    received: dict = {}
    subscriptions = subscribe_state(node, namespace, received) if subscribe else []
    with ClockedSimulator(node, case, namespace, CONFIG / robot_file, {
            'mode': 'dynamic', 'real_time_factor': str(float(factor)),
            'publish_rate': str(float(publish_rate))}) as sim:
        clock = sim.clock
        begin = time.perf_counter()
        marks = {}
        next_send = begin
        while time.perf_counter() - begin < SETTLE + window:
            now = time.perf_counter()
            if now >= next_send:
                sim.setpoint.publish(JointState(name=list(tendons),
                                                effort=efforts(case, now - begin)))
                sent += 1
                next_send += 1.0 / RATE
            if 'start' not in marks and now - begin >= SETTLE:
                marks['start'] = (clock[-1], sim.cpu_seconds(), sent, dict(received))
            rclpy.spin_once(node, timeout_sec=max(0.0, min(0.005, next_send - now)))
        marks['end'] = (clock[-1], sim.cpu_seconds(), sent, dict(received))
        if sim.process.poll() is not None:
            raise RuntimeError(f'{case}: the simulator exited: {sim.process.stderr.read()}')
    for subscription in subscriptions:
        node.destroy_subscription(subscription)
    (wall0, sim0), cpu0, sent0, got0 = marks['start']
    (wall1, sim1), cpu1, sent1, got1 = marks['end']
    return {'sim_per_cpu_second': (sim1 - sim0) / (cpu1 - cpu0),
            'real_time_factor': (sim1 - sim0) / (wall1 - wall0),
            'cpu_share': (cpu1 - cpu0) / (wall1 - wall0),
            'setpoints_per_second': (sent1 - sent0) / (wall1 - wall0),
            'window_s': wall1 - wall0,
            # failed steps after which the node reset the model (its warning is throttled:
            # 0 means none, more counts at least one per throttle period)
            'reset_warnings': sim.log.count(RESET_WARNING),
            # with --subscribe: messages a second the probe took per state topic
            'received_per_second': {name: (got1.get(name, 0) - got0.get(name, 0)) / (wall1 - wall0)
                                    for name in sorted(got1)}}


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--window', type=positive, default=20.0, help='wall seconds measured')
    parser.add_argument('--real-time-factor', type=positive, default=1.0,
                        help="the node's real_time_factor (default 1)")
    parser.add_argument('--publish-rate', type=positive, default=50.0,
                        help="the node's publish_rate in Hz (default 50, the node's default)")
    parser.add_argument('--cases', type=names(CASES), default=list(CASES),
                        help='comma-separated cases')
    parser.add_argument('--subscribe', action='store_true',
                        help='subscribe to tendon/state, tip/pose, backbone/markers and /tf too')
    args = parser.parse_args()
    result = {'load_before': os.getloadavg(), 'subscribed': args.subscribe, 'cases': {}}
    rclpy.init()
    node = rclpy.create_node(f'streaming_bench_{os.getpid()}')
    try:
        for index, case in enumerate(args.cases):
            entry = run_case(node, case, index, args.window, args.real_time_factor,
                             args.publish_rate, args.subscribe)
            result['cases'][case] = entry
            print(f'{case:8s} {entry["sim_per_cpu_second"]:6.2f} sim s per CPU s, '
                  f'{entry["real_time_factor"]:5.2f}x real time, '
                  f'{100 * entry["cpu_share"]:5.1f} % of a core, '
                  f'{entry["setpoints_per_second"]:.1f} setpoints/s, '
                  f'{entry["reset_warnings"]} reset warnings'
                  + (f', received/s {entry["received_per_second"]}' if args.subscribe else ''),
                  file=sys.stderr if args.json else sys.stdout, flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    result['machine'] = machine_info('numpy', 'numba')
    result['load_after'] = os.getloadavg()
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
