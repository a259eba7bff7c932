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
Speed of the browser view: scene updates per second and the view's share of one core.

    python benchmarks/bench_view.py --json [--seconds 20] [--robot FILE]

Starts the simulation stack (``tendon-robot-sim launch sim --arg rviz:=false``: the dynamic
rod of the default robot, 50 elements, markers at 50 Hz) in a subprocess, the view node in
this process, and a headless chromium (the page open, as a user has it). Over ``--seconds``
it counts the marker messages the view received and the scene updates it sent to the open
page, and the CPU time of this process (the view node with its web server and DDS; the idle
selenium client besides). The page receives in a web worker, whose websocket frames
DevTools does not report: the updates are counted where they are sent. Beside it, it times
the reading of one of the robot's ``MarkerArray`` messages from its bytes, by rclpy and by
the view's own reader, and turning it into what is drawn, and the guard's check of one camera
report of the page (docs/viewer.md, Security: the frames a page sends are checked, those the
view sends are not). The last line with --json is one JSON object with the figures and the
machine's load.
Targets (issue 31): >= 30 backbone updates per second, < 15 % of one core.
"""

import json
import os
import resource
import subprocess
import sys
import time

from machine import machine_info
from options import Parser, positive, readable_file

WARMUP = 3.0        # s after the page shows the robot, before measuring
START_TIMEOUT = 300.0   # s: a first start compiles nothing (warmup), but a loaded machine


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def per_call_ms(function, calls: int = 2000) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return round((time.perf_counter() - start) / calls * 1e3, 4)


def marker_reading(robot_file: str) -> dict:
    """Time reading the robot's markers from bytes (rclpy, the view's reader) and drawing them."""
    from rclpy.serialization import deserialize_message, serialize_message
    from tendon_robot_sim import default_robot_file
    from tendon_robot_sim.models.registry import create_model
    from tendon_robot_sim.ros.cdr import Decoder
    from tendon_robot_sim.ros.messages import markers_msg, time_msg
    from tendon_robot_sim.view.markers import MarkerScene
    from visualization_msgs.msg import MarkerArray

    _, _, model = create_model(robot_file or default_robot_file())
    msg = markers_msg(model.state().markers, 'base_link', time_msg(0.0))
    data, decode, scene = serialize_message(msg), Decoder(MarkerArray), MarkerScene()
    markers = decode(data).markers
    return {'markers': len(msg.markers), 'points': sum(len(m.points) for m in msg.markers),
            'bytes': len(data),
            'rclpy_deserialize_ms': per_call_ms(lambda: deserialize_message(data, MarkerArray)),
            'view_decoder_ms': per_call_ms(lambda: decode(data)),
            'to_drawn_primitives_ms': per_call_ms(lambda: scene.apply_all([markers]))}


def guard_check_us(page) -> float:
    """Time the guard's check of one camera report from the open page (what a page sends most)."""
    import msgspec

    connection = next(iter(page.guard.connections))
    report = msgspec.msgpack.encode({
        'type': 'ViewerCameraMessage', 'wxyz': [1.0, 0.0, 0.0, 0.0], 'position': [0.5, 0.5, 0.5],
        'fov': 1.0, 'near': 0.01, 'far': 100.0, 'image_height': 700, 'image_width': 1000,
        'look_at': [0.0, 0.0, 0.0], 'up_direction': [0.0, 0.0, 1.0]})
    assert page.guard.problem(connection, report) is None
    return round(1e3 * per_call_ms(lambda: page.guard.problem(connection, report)), 1)


def wait(condition, what: str, timeout: float = START_TIMEOUT):
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise SystemExit(f'bench_view: timed out waiting for {what}')
        time.sleep(0.1)


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=positive, default=20.0, help='measuring window')
    parser.add_argument('--robot', type=readable_file, default=None,
                        help='robot file (default: config/robot.yaml)')
    parser.add_argument('--json', action='store_true', help='print the result as JSON')
    args = parser.parse_args()
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))

    import rclpy
    from rclpy.parameter import Parameter
    from tendon_robot_sim.nodes.view_node import ViewNode
    from tendon_robot_sim.ros.runner import events_executor
    from tendon_robot_sim.ros.spinner import BackgroundSpinner
    from tendon_robot_sim.view.headless import start_browser

    command = [sys.executable, '-m', 'tendon_robot_sim.cli', 'launch', 'sim',
               '--arg', 'rviz:=false'] + (['--robot', args.robot] if args.robot else [])
    stack = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    rclpy.init()
    overrides = [Parameter('port', value=0)] + (
        [Parameter('robot_file', value=os.path.abspath(args.robot))] if args.robot else [])
    view = ViewNode(parameter_overrides=overrides)
    executor = events_executor(view.context)    # as view_node.main spins it
    executor.add_node(view)
    spinner = BackgroundSpinner(executor)
    browser = start_browser()
    try:
        wait(lambda: view.page.frames_drawn > 0, 'the first markers of the stack')
        browser.get(view.page.address)
        wait(lambda: view.page.clients() > 0, 'the page to connect')
        time.sleep(WARMUP)
        load_before = os.getloadavg()[0]
        drawn, markers = view.page.frames_drawn, view.markers_received
        cpu, start = cpu_seconds(), time.monotonic()
        time.sleep(args.seconds)
        cpu, wall = cpu_seconds() - cpu, time.monotonic() - start
        drawn, markers = view.page.frames_drawn - drawn, view.markers_received - markers
        result = {
            'benchmark': 'view', 'robot': args.robot or 'config/robot.yaml (50 elements)',
            'seconds': round(wall, 2),
            'markers_received_per_s': round(markers / wall, 1),
            'scene_updates_sent_per_s': round(drawn / wall, 1),
            'view_cpu_share_of_one_core': round(cpu / wall, 3),
            'one_marker_array': marker_reading(args.robot),
            'guard_camera_report_us': guard_check_us(view.page),
            'targets': {'scene_updates_per_s': 30, 'cpu_share': 0.15},
            'load_average_1min_before': load_before,
            'machine': machine_info('viser', 'rclpy'),
        }
    finally:
        browser.quit()
        spinner.stop()
        view.destroy_node()
        rclpy.try_shutdown()
        stack.send_signal(2)
        stack.wait(timeout=30)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f'{key}: {value}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
