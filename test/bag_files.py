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

"""The files of a bag as time leaves them, and how many times their checksums are verified."""

import os
from pathlib import Path
import time

from tendon_robot_sim.experiment import mcap_crc

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
