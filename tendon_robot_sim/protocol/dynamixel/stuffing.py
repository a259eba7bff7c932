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
Byte stuffing of Protocol 2.0 (the ROBOTIS e-Manual's Protocol 2.0 page, Packet Process).

From the instruction (or status) byte to the last parameter, an ``FD`` is added after
every ``FF FF FD`` ("If FF FF FD already exists, add a 0xFD to change it to FF FF FD FD"),
so that no data reads as a header; the receiver takes each added ``FD`` out again after
the CRC, which covers the stuffed bytes, checks out. Shared by the bus driver's packets
and the emulated servos.
"""

from __future__ import annotations


def stuff(field: bytes) -> bytes:
    """Add ``FD`` after every ``FF FF FD`` of the instruction/status and parameter field."""
    out = bytearray()
    for byte in field:
        out.append(byte)
        if out[-3:] == b'\xff\xff\xfd':
            out.append(0xFD)
    return bytes(out)


def unstuff(field: bytes) -> bytes:
    """Remove the ``FD`` that stuffing added after every ``FF FF FD`` (the inverse of stuff)."""
    out = bytearray()
    removed = False   # the FD after this FF FF FD is gone: one that follows is data
    for byte in field:
        if byte == 0xFD and out[-3:] == b'\xff\xff\xfd' and not removed:
            removed = True
            continue
        out.append(byte)
        removed = False
    return bytes(out)
