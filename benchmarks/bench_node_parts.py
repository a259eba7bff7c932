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
Where the simulator node's CPU goes per tick under the stream of ``bench_streaming.py``.

The node runs in this process (``SimulatorNode`` on the events executor, ``mode: dynamic``,
``publish_clock`` on); a child process streams the same 0.5 Hz sinusoid at 50 Hz and
subscribes to ``/clock``, as the streaming benchmark's probe does. Its parts are timed in
the node's thread (``time.thread_time``: the callbacks, the model's ``advance``, the compiled
kernel inside it, the ``/clock`` publish); what the thread spends outside the callbacks is
the executor (waking, taking and converting messages, dispatching), what the process spends
outside the thread is DDS's threads. No profiler: cProfile inflates the many small calls
fourfold.

Beside it, the same model without ROS: one ``advance(0.02)`` after each setpoint of the same
sinusoid, back to back (as the in-process figures of docs/performance.md) and paced at 50 Hz
of wall time (sleeping to the next tick, as the node's timer does): what the node's physics
alone costs at its pace, against which the node's own part is measured.

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=42 \
        python benchmarks/bench_node_parts.py --json [--window 12] [--cases steel,nitinol]

``--no-setpoints`` streams to another namespace (the node's input stays constant);
``--ticks`` sets the ticks of the model alone (0: not run). The last line with --json is one
JSON object: per case the microseconds of CPU per 20 ms tick of each part, the model alone's
simulated s per CPU s, and the machine with its load before and after.
"""

import json
import os
import subprocess
import sys
import time

from bench_streaming import CASES, CONFIG, efforts, RATE
from machine import machine_info
from options import names, non_negative_int, Parser, positive
import rclpy
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from tendon_robot_sim.models.registry import create_model, ModelOptions
from tendon_robot_sim.models.rod.dynamics import implicit_grid
from tendon_robot_sim.nodes import simulator_node
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.runner import events_executor

SETTLE = 2.0          # s of the node under the stream before the window
# the callbacks of the timer and the subscription (a node before the raw setpoints has no
# _on_setpoint_data: its subscription calls _on_setpoint)
CALLBACKS = ('_on_tick', '_on_setpoint_data'
             if hasattr(simulator_node.SimulatorNode, '_on_setpoint_data') else '_on_setpoint')
PARTS = tuple(dict.fromkeys(CALLBACKS + ('_on_setpoint', '_on_physics_tick', '_on_publish_tick',
                                         '_step_to_wall_clock')))


def stream(namespace: str, case: str, duration: float) -> None:
    """Publish the streaming benchmark's setpoints to ``/namespace`` and take ``/clock``."""
    tendons = CASES[case][1]
    rclpy.init()
    node = rclpy.create_node(f'node_parts_stream_{os.getpid()}')
    setpoint = node.create_publisher(JointState, f'/{namespace}/{topics.TENDON_SETPOINT.name}',
                                     topics.TENDON_SETPOINT.qos)
    node.create_subscription(topics.CLOCK.msg_type, topics.CLOCK.name, lambda msg: None,
                             topics.CLOCK.qos)
    begin = next_send = time.perf_counter()
    while (now := time.perf_counter()) - begin < duration:
        if now >= next_send:
            setpoint.publish(JointState(name=list(tendons), effort=efforts(case, now - begin)))
            next_send += 1.0 / RATE
        rclpy.spin_once(node, timeout_sec=max(0.0, min(0.005, next_send - now)))
    node.destroy_node()
    rclpy.try_shutdown()


def model_alone(case: str, ticks: int, paced: bool) -> float:
    """
    Return the simulated s per CPU s of the case's dynamic model alone under the stream.

    ``ticks`` ticks, each applying the sinusoid's setpoint and advancing 1 / RATE; ``paced``:
    each then sleeps to the next tick of wall time.
    """
    robot_file, tendons, _, _ = CASES[case]
    _, _, model = create_model(str(CONFIG / robot_file), 'dynamic', ModelOptions())
    period = 1.0 / RATE

    def tick(i: int) -> None:
        model.apply('effort', dict(zip(tendons, efforts(case, i * period))))
        model.advance(period)

    for i in range(int(SETTLE * RATE)):
        tick(i)
    start, due = time.process_time(), time.monotonic()
    for i in range(ticks):
        tick(i)
        if paced:
            due += period
            time.sleep(max(0.0, due - time.monotonic()))
    return ticks * period / (time.process_time() - start)


class Timed:
    """Thread CPU seconds of the calls wrapped by :meth:`wrap`, per name."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def wrap(self, name: str, function):
        def timed(*args, **kwargs):
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.thread_time() - start
        return timed


def run_case(case: str, index: int, window: float, setpoints: bool) -> dict:
    timed = Timed()
    originals = {name: getattr(simulator_node.SimulatorNode, name) for name in PARTS}
    kernels = implicit_grid.stepper
    namespace = f'node_parts_{os.getpid()}_{index}'
    try:
        for name, method in originals.items():
            setattr(simulator_node.SimulatorNode, name, timed.wrap(name, method))
        node = simulator_node.SimulatorNode(namespace=namespace, parameter_overrides=[
            Parameter('robot_file', value=str(CONFIG / CASES[case][0])),
            Parameter('mode', value='dynamic'), Parameter('publish_clock', value=True)])
        node.model.advance = timed.wrap('model advance', node.model.advance)
        node.clock_pub.publish = timed.wrap('/clock publish', node.clock_pub.publish)
        # the compiled steps, where the model has them (the implicit rod)
        implicit_grid.stepper = type('Kernels', (), {
            name: staticmethod(getattr(kernels, name)) if callable(getattr(kernels, name))
            else getattr(kernels, name) for name in dir(kernels) if not name.startswith('__')})
        implicit_grid.stepper.advance = staticmethod(timed.wrap('compiled steps',
                                                                kernels.advance))
        executor = events_executor(node.context)
        executor.add_node(node)
        target = namespace if setpoints else f'{namespace}_nobody'
        streamer = subprocess.Popen([sys.executable, __file__, '--stream', target, case,
                                     str(SETTLE + window + 2.0)])
        try:
            settle = time.monotonic() + SETTLE
            while time.monotonic() < settle:
                executor.spin_once(timeout_sec=0.05)
            timed.seconds.clear()
            sim0, thread0, wall0, cpu0 = (node.sim_clock, time.thread_time(), time.monotonic(),
                                          time.process_time())
            while time.monotonic() - wall0 < window:
                executor.spin_once(timeout_sec=0.05)
            sim1, thread1, wall1, cpu1 = (node.sim_clock, time.thread_time(), time.monotonic(),
                                          time.process_time())
        finally:
            streamer.kill()
            streamer.wait()
            executor.shutdown()
            node.destroy_node()
    finally:
        for name, method in originals.items():
            setattr(simulator_node.SimulatorNode, name, method)
        implicit_grid.stepper = kernels
    wall, thread = wall1 - wall0, thread1 - thread0
    per_tick = 1e6 / (wall * RATE)     # us per 20 ms tick, from s over the window
    parts = {name: seconds * per_tick for name, seconds in timed.seconds.items()}
    parts['executor (thread outside the callbacks)'] = (
        thread - sum(timed.seconds.get(name, 0.0) for name in CALLBACKS)) * per_tick
    parts['other threads (DDS)'] = (cpu1 - cpu0 - thread) * per_tick
    return {'sim_per_cpu_second': (sim1 - sim0) / (cpu1 - cpu0),
            'cpu_share': (cpu1 - cpu0) / wall, 'process_us_per_tick': (cpu1 - cpu0) * per_tick,
            'us_per_tick': parts}


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == '--stream':
        stream(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return 0
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    parser.add_argument('--window', type=positive, default=12.0, help='wall seconds measured')
    parser.add_argument('--cases', type=names(CASES), default=list(CASES),
                        help='comma-separated cases')
    parser.add_argument('--no-setpoints', action='store_true',
                        help='stream to another namespace: the input stays constant')
    parser.add_argument('--ticks', type=non_negative_int, default=500,
                        help='ticks of the model alone, back to back and paced (0: none)')
    args = parser.parse_args()
    result = {'load_before': os.getloadavg(), 'setpoints': not args.no_setpoints, 'cases': {}}
    rclpy.init()
    try:
        for index, case in enumerate(args.cases):
            entry = run_case(case, index, args.window, not args.no_setpoints)
            if args.ticks:
                entry['model_alone'] = {
                    way: model_alone(case, args.ticks, way == 'paced')
                    for way in ('back_to_back', 'paced', 'back_to_back_again')}
            result['cases'][case] = entry
            print(f'{case}: {entry["sim_per_cpu_second"]:.2f} sim s per CPU s, '
                  f'{entry["process_us_per_tick"]:.0f} us of CPU per tick', file=sys.stderr)
            for name, us in sorted(entry['us_per_tick'].items(), key=lambda item: -item[1]):
                print(f'  {name:42s} {us:7.1f} us per tick', file=sys.stderr)
            for way, figure in entry.get('model_alone', {}).items():
                print(f'  model alone, {way}: {figure:.2f} sim s per CPU s', file=sys.stderr)
    finally:
        rclpy.try_shutdown()
    result['machine'] = machine_info('numpy', 'numba')
    result['load_after'] = os.getloadavg()
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
