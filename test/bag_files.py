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
The files of a bag as time leaves them, and how many times their checksums are verified.

Also a long recording, and the memory Python holds at most while it is handled.
"""

import os
from pathlib import Path
import time
import tracemalloc

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos

HOUR = 3600 * 10 ** 9     # ns


def date_back(bag: Path, ns: int = HOUR) -> None:
    """
    Set the mtime of every file of ``bag`` ``ns`` before now, as of a recording made earlier.

    A file just written is verified at every opening (``mcap_crc.SETTLED``).
    """
    then = time.time_ns() - ns
    for path in bag.iterdir() if bag.is_dir() else [bag]:
        os.utime(path, ns=(then, then))


def count_verifications(monkeypatch) -> list[Path]:
    """Return the list each verification of an MCAP file's checksums appends the file to."""
    verified = []
    verify = mcap_crc.verify

    def counted(path):
        verified.append(Path(path))
        return verify(path)
    monkeypatch.setattr(mcap_crc, 'verify', counted)
    return verified


def long_recording(folder: Path) -> BagWriter:
    """
    Record 600 messages of random doubles into the bag ``folder``; its writer, still open.

    zstd leaves random doubles their size: 24 MB, flushed as the recorder does (a chunk a
    second, every 100 messages); the last 99 messages are not flushed.
    """
    rng = np.random.default_rng(3)
    bag = BagWriter(folder).open()
    bag.add_topic('/tendon/state', 'sensor_msgs/msg/JointState', OfferedQos(depth=5))
    for i in range(600):
        bag.write('/tendon/state', i, serialize_message(JointState(effort=rng.random(5000))))
        if i % 100 == 0:
            bag.flush()
    return bag


def peak_memory(call) -> int:
    """Return the most memory [bytes] Python held at once during ``call()``, above its start."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
