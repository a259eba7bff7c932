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
Peak memory of reading a long recording into a Recording (``recording_from_messages``).

A hardware recording of ``--minutes`` at ``--rate`` Hz: ``tendon/setpoint``, ``tendon/state``
(effort and position) and ``tip/measured``, each message deserialized by rosbags from its CDR
bytes as :func:`~tendon_robot_sim.experiment.bag.read_messages` yields them (one at a time:
the stream itself holds none). The figures: the peak of the memory Python allocated while
the Recording was built (``tracemalloc``) [MB], that of reading the stream alone, and the
Recording's own arrays.

Before/after a change: run it with ``PYTHONPATH`` on each checkout; the JSON says which
package it measured.
"""

from collections import deque
import json
import time
import tracemalloc

from machine import machine_info
import numpy as np
from options import Parser, positive
from rosbags.typesys import get_typestore, Stores

NAMES = ('t0', 't1', 't2', 't3')


def stream(minutes: float, rate: float, store):
    """Yield ``(topic, stamp_ns, msg)`` of the recording, each message freshly deserialized."""
    from tendon_robot_sim.experiment.bag import BagMessages
    messages = BagMessages(store)
    rng = np.random.default_rng(0)
    period_ns = int(1e9 / rate)
    for i in range(int(minutes * 60 * rate)):
        stamp = 10 ** 18 + i * period_ns
        step = (i // int(5 * rate)) % 4       # a new hold every 5 s
        effort = np.where(np.arange(4) == step, 2.0, 0.0)
        for topic, msgtype, data in (
                ('/tendon/setpoint', 'sensor_msgs/msg/JointState',
                 messages.joint_state(stamp, NAMES, effort=effort)),
                ('/tendon/state', 'sensor_msgs/msg/JointState',
                 messages.joint_state(stamp, NAMES, position=rng.random(4) * 1e-3,
                                      effort=effort + 0.5 + rng.normal(0, 0.05, 4))),
                ('/tip/measured', 'geometry_msgs/msg/PointStamped',
                 messages.point(stamp, 'base_link', (0.2, 0.01 * step, 0.0)))):
            yield topic, stamp + 1000, store.deserialize_cdr(data, msgtype)


def peak_mb(consume, minutes: float, rate: float, store) -> tuple[float, float, object]:
    """Return the peak [MB] Python allocated while ``consume`` read the stream, its s, result."""
    tracemalloc.start()
    start = time.perf_counter()
    result = consume(stream(minutes, rate, store))
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2 ** 20, seconds, result


def main() -> None:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--minutes', type=positive, default=30.0)
    parser.add_argument('--rate', type=positive, default=50.0, help='Hz, each topic')
    args = parser.parse_args()
    import tendon_robot_sim
    from tendon_robot_sim.experiment.experiment import recording_from_messages

    store = get_typestore(Stores.ROS2_KILTED)
    deque(stream(0.1, args.rate, store), maxlen=0)      # its deserializers built beforehand
    # what reading the stream alone takes (a message at a time): not the Recording's
    baseline, _, _ = peak_mb(lambda messages: deque(messages, maxlen=0), args.minutes,
                             args.rate, store)
    peak, seconds, recording = peak_mb(lambda messages: recording_from_messages(messages, NAMES),
                                       args.minutes, args.rate, store)
    kept = sum(array.nbytes for array in (recording.command_times, recording.commands,
                                          recording.tip_times, recording.tips,
                                          recording.applied_times, recording.applied))
    print(json.dumps({
        'package': tendon_robot_sim.__file__,
        'minutes': args.minutes, 'rate_hz': args.rate,
        'messages': 3 * len(recording.tip_times),
        'peak_mb': round(peak, 1), 'stream_alone_peak_mb': round(baseline, 1),
        'recording_arrays_mb': round(kept / 2 ** 20, 1),
        'seconds_traced': round(seconds, 1),
        **machine_info('rosbags', 'numpy')}))


if __name__ == '__main__':
    main()
