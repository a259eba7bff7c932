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
What the recorder's flush costs: the wall time of ``BagWriter.flush`` once a second.

The recorder flushes every ``FLUSH_PERIOD`` (1 s) in its executor's thread, so that a kill
loses at most that much (docs/experiments.md); while it flushes, no message is written. Each
second of recording here is what the default stack publishes in one (``--rate`` bytes per
second in messages of 1 kB, about the simulator's markers), written as fast as the writer
takes it, then flushed: the flush's wall time (close the MCAP chunk, write, fsync; or commit
the sqlite3 transaction, which syncs its log), per storage, on the disk of ``--folder``.

    python benchmarks/bench_bag_flush.py --json
"""

import json
from pathlib import Path
import statistics
import tempfile
import time

from machine import machine_info
from options import Parser, positive_int
from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos

TOPIC = '/backbone/markers'


def flush_times(folder: Path, storage: str, seconds: int, rate: int) -> list[float]:
    """Record ``seconds`` of ``rate`` bytes/s into a new bag; the wall time of each flush [s]."""
    data = bytes(1000)
    times = []
    with BagWriter(folder / storage, storage=storage) as bag:
        bag.add_topic(TOPIC, 'std_msgs/msg/String', OfferedQos())
        stamp = 0
        for _ in range(seconds):
            for _ in range(rate // len(data)):
                stamp += 1
                bag.write(TOPIC, stamp, data)
            start = time.perf_counter()
            bag.flush()
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--seconds', type=positive_int, default=30, help='seconds of recording')
    parser.add_argument('--rate', type=positive_int, default=175_000,
                        help='bytes per second (the default stack: about 175 kB/s)')
    parser.add_argument('--folder', type=Path, default=None,
                        help='where the bags go (default: a temporary folder)')
    parser.add_argument('--json', action='store_true', help='print JSON only')
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        for storage in ('mcap', 'sqlite3'):
            times = flush_times(Path(folder), storage, args.seconds, args.rate)
            results[storage] = {'flushes': len(times),
                                'median_ms': 1e3 * statistics.median(times),
                                'max_ms': 1e3 * max(times)}
    report = {'benchmark': 'bag_flush', 'seconds': args.seconds, 'bytes_per_second': args.rate,
              'results': results, 'machine': machine_info('rosbags')}
    if not args.json:
        for storage, result in results.items():
            print(f'{storage}: flush median {result["median_ms"]:.2f} ms, '
                  f'max {result["max_ms"]:.2f} ms over {result["flushes"]} flushes')
    print(json.dumps(report))


if __name__ == '__main__':
    main()
