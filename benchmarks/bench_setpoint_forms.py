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
What ``replay --simulate`` pays to check a long recording's setpoints before it replays it.

A bag of ``--minutes`` of the default stack's topics at 50 Hz (setpoints, tendon state, tip
pose and measurement, and markers filling it to about 175 kB/s, docs/experiments.md) is
written, then timed, each the best of ``--repeat``: verifying its checksums (what the first
opening of the bag in a process costs), the openings of one ``replay --simulate`` (topics,
QoS, the setpoints' forms, the playback's first message) of a bag the process has not
verified, opening it and reading the setpoint topic's stored messages, the whole check
(:func:`tendon_robot_sim.ros.replay.setpoint_forms`), both of a bag verified already, and
the setpoints' forms read from bytes already in memory by ``joint_state_form``, by the
general ``Decoder`` and by rclpy's deserialization.

    python benchmarks/bench_setpoint_forms.py --json
"""

from itertools import islice
import json
import os
from pathlib import Path
import tempfile
import time

from geometry_msgs.msg import PointStamped, PoseStamped
from machine import machine_info
from options import Parser, positive, positive_int
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.experiment.bag import (bag_topics, BagWriter, offered_qos_of, OfferedQos,
                                             read_raw)
from tendon_robot_sim.ros.cdr import Decoder, joint_state_form
from tendon_robot_sim.ros.replay import setpoint_forms

SETPOINT = '/tendon/setpoint'
RATE = 50           # Hz, every topic
MARKERS = 3200      # bytes of markers a tick: the stack's 175 kB/s with the other topics
NAMES = ['t0', 't1', 't2', 't3']


def write_recording(path: Path, minutes: float) -> int:
    """Write ``minutes`` of the stack's topics; return the number of setpoints."""
    ticks = int(minutes * 60 * RATE)
    pose, point = serialize_message(PoseStamped()), serialize_message(PointStamped())
    markers = serialize_message(String(data='x' * MARKERS))
    with BagWriter(path) as bag:
        for topic, msgtype in ((SETPOINT, 'sensor_msgs/msg/JointState'),
                               ('/tendon/state', 'sensor_msgs/msg/JointState'),
                               ('/tip/pose', 'geometry_msgs/msg/PoseStamped'),
                               ('/tip/measured', 'geometry_msgs/msg/PointStamped'),
                               ('/backbone/markers', 'std_msgs/msg/String')):
            bag.add_topic(topic, msgtype, OfferedQos())
        for tick in range(ticks):
            stamp = tick * 1_000_000_000 // RATE
            values = [float(tick % 7), 0.5, 0.0, 1.0]
            bag.write(SETPOINT, stamp, serialize_message(JointState(name=NAMES, effort=values)))
            bag.write('/tendon/state', stamp + 1, serialize_message(JointState(
                name=NAMES, position=values, velocity=values, effort=values)))
            bag.write('/tip/pose', stamp + 2, pose)
            bag.write('/tip/measured', stamp + 3, point)
            bag.write('/backbone/markers', stamp + 4, markers)
    return ticks


def replay_openings(bag: Path, hours_ago: int) -> None:
    """Open ``bag`` as one ``replay --simulate`` does, as a bag this process has not verified."""
    # A new mtime (an old one, so that it counts as settled) makes the files new to the
    # process's memory of verified files: what a new command meets.
    then = time.time_ns() - hours_ago * 3600 * 10 ** 9
    for path in bag.iterdir():
        os.utime(path, ns=(then, then))
    bag_topics(bag)
    offered_qos_of(bag)
    setpoint_forms(bag, SETPOINT)
    list(islice(read_raw(bag), 1))


def best_of(repeat: int, work) -> float:
    """Return the shortest wall time [s] of ``repeat`` runs of ``work()``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--minutes', type=positive, default=30.0, help='minutes of recording')
    parser.add_argument('--repeat', type=positive_int, default=5, help='runs of each timing')
    parser.add_argument('--folder', type=Path, default=None,
                        help='where the bag goes (default: a temporary folder)')
    parser.add_argument('--json', action='store_true', help='print JSON only')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        bag = Path(folder) / 'recording'
        setpoints = write_recording(bag, args.minutes)
        size = sum(f.stat().st_size for f in bag.iterdir())
        data = [message.data for message in read_raw(bag, [SETPOINT])]
        decode = Decoder(JointState)
        hours = iter(range(1, args.repeat + 1))
        seconds = {
            'verify_checksums': best_of(args.repeat, lambda: [
                mcap_crc.verify(mcap) for mcap in bag.glob('*.mcap')]),
            'replay_openings': best_of(args.repeat, lambda: replay_openings(
                bag, next(hours))),
            'read_setpoints': best_of(args.repeat, lambda: sum(1 for _ in read_raw(
                bag, [SETPOINT]))),
            'check': best_of(args.repeat, lambda: setpoint_forms(bag, SETPOINT)),
            'forms_joint_state_form': best_of(args.repeat, lambda: [
                joint_state_form(d) for d in data]),
            'forms_decoder': best_of(args.repeat, lambda: [decode(d) for d in data]),
            'forms_rclpy': best_of(args.repeat, lambda: [
                deserialize_message(d, JointState) for d in data]),
        }
    report = {'benchmark': 'setpoint_forms', 'minutes': args.minutes, 'bag_bytes': size,
              'setpoints': setpoints, 'seconds': seconds, 'machine': machine_info('rosbags')}
    if not args.json:
        print(f'{args.minutes:g} min, {size / 1e6:.0f} MB, {setpoints} setpoints:')
        for what, value in seconds.items():
            print(f'  {what}: {value:.2f} s')
    print(json.dumps(report))


if __name__ == '__main__':
    main()
