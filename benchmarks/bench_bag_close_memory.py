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
Peak memory of closing a long MCAP recording, of verifying it and of reindexing it, by size.

Closing a bag fills in its checksums (``mcap_crc.seal``) and every first opening verifies them
(``mcap_crc.verify``): both once read the whole file into memory, twice over. Here a bag of
``--size`` MB (random doubles, which zstd leaves their size; flushed every ``--chunk`` MB as
the recorder's one-second flushes close a chunk) is written, then closed, then verified, each
step in its own process so that its peak resident memory (``VmHWM`` of ``/proc``) is its own:
the figures are the rise of the peak over that before the step [MB]. ``reindex`` repairs a copy
of the bag taken just before the close, as a killed recorder leaves it.
"""

import argparse
import json
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

from machine import machine_info
import numpy as np
from options import Parser, positive, positive_int
from simulator_process import environment

TOPIC = '/tendon/state'


def peak_mb() -> float:
    """Peak resident memory of this process so far [MB] (Linux /proc)."""
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
    raise RuntimeError('no VmHWM in /proc/self/status')


def write_and_close(folder: Path, size_mb: int, chunk_mb: float) -> dict:
    """Write a bag of ``size_mb`` into ``folder``; its size and the close's peak rise."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos
    rng = np.random.default_rng(1)
    bag = BagWriter(folder / 'bag').open()
    bag.add_topic(TOPIC, 'sensor_msgs/msg/JointState', OfferedQos())
    message_bytes = 8 * 5000
    per_flush = max(1, int(chunk_mb * 2**20 / message_bytes))
    for i in range(int(size_mb * 2**20 / message_bytes)):
        bag.write(TOPIC, i, serialize_message(JointState(effort=rng.random(5000))))
        if i % per_flush == per_flush - 1:
            bag.flush()
    shutil.copytree(folder / 'bag', folder / 'killed')     # the bag as a kill leaves it
    before = peak_mb()
    bag.close()
    (storage,) = (folder / 'bag').glob('*.mcap')
    return {'file_mb': storage.stat().st_size / 2**20, 'close_peak_rise_mb': peak_mb() - before}


def verify(folder: Path) -> dict:
    """Verify the bag's checksums; the peak rise."""
    from tendon_robot_sim.experiment import mcap_crc
    (storage,) = (folder / 'bag').glob('*.mcap')
    before = peak_mb()
    checked = mcap_crc.verify(storage)
    return {'checksums': checked, 'verify_peak_rise_mb': peak_mb() - before}


def reindex(folder: Path) -> dict:
    """Recover the copy of the bag taken before it was closed; the peak rise."""
    from tendon_robot_sim.experiment.bag_recovery import recover_bag
    before = peak_mb()
    recovered = recover_bag(folder / 'killed')
    return {'reindex_messages': sum(recovered.counts.values()),
            'reindex_peak_rise_mb': peak_mb() - before}


def in_child(*args: str) -> dict:
    """Run this script's ``--step`` in a new process (this checkout's package); what it printed."""
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True,
                         text=True, env=environment()).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--size', type=positive_int, default=200, help='MB of messages in the bag')
    parser.add_argument('--chunk', type=positive, default=0.2,
                        help='MB written between flushes (the default stack: 0.175 a second)')
    parser.add_argument('--folder', type=Path, default=None,
                        help='where the bag goes (default: a temporary folder)')
    parser.add_argument('--step', choices=('close', 'verify', 'reindex'), help=argparse.SUPPRESS)
    parser.add_argument('--json', action='store_true', help='print JSON only')
    args = parser.parse_args()
    if args.step == 'close':
        print(json.dumps(write_and_close(args.folder, args.size, args.chunk)))
        return
    if args.step in ('verify', 'reindex'):
        print(json.dumps({'verify': verify, 'reindex': reindex}[args.step](args.folder)))
        return
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        results = {**in_child('--step', 'close', '--folder', folder, '--size', str(args.size),
                              '--chunk', str(args.chunk)),
                   **in_child('--step', 'verify', '--folder', folder),
                   **in_child('--step', 'reindex', '--folder', folder)}
    report = {'benchmark': 'bag_close_memory', 'results': results,
              'machine': machine_info('rosbags')}
    if not args.json:
        print(f'{results["file_mb"]:.0f} MB bag: close +{results["close_peak_rise_mb"]:.0f} MB, '
              f'verify +{results["verify_peak_rise_mb"]:.0f} MB, '
              f'reindex +{results["reindex_peak_rise_mb"]:.0f} MB peak memory')
    print(json.dumps(report))


if __name__ == '__main__':
    main()
