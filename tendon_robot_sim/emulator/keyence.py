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
An emulated laser displacement controller, Keyence LK-G style, on the rig's tip.

Answers ``M0<CR>`` with ``M0,<value 1>,<value 2><CR>`` and ``M1<CR>`` (OUT1 alone, what the
poller asks to find its place after a lost answer) with ``M1,<value 1><CR>`` (see
:mod:`tendon_robot_sim.protocol.keyence`): each head reads the plant's tip along
its axis of the sensor frame, written as the LK-G manual's "Measurement value format"
(page 5-6) says: a sign and seven characters, right-aligned, the decimal point where the
display setting puts it (``decimals``; by default the most that every value of the
measuring range fits: 3 for +-250 mm, ``+123.456``), ``+FFFFFFF``/``-FFFFFFF`` beyond its
measuring range and ``XXXXXXXX`` in alarm (the display shows ``-------``).
Any other command gets ``ER,<command>,00`` (command error); ``refuse`` makes it answer
``M0`` and ``M1`` with the error response of the manual's "Outline of the command format"
(page 5-5) too, ``ER,M0,<code>`` and ``ER,M1,<code>``: every response is headed by the
command it answers. It sends nothing unasked. ``answer_late`` holds answers back, as a
controller slower than the host's timeout would: the manual's "Outline of the command
format" (page 5-5) has it send back one response for each command it receives, and a
response held back holds back those of the commands after it.
"""

from __future__ import annotations

from collections import deque
import time

import numpy as np

from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.protocol import keyence
from tendon_robot_sim.protocol.mounting import SensorMount


class KeyenceController:
    """
    Two heads measuring the plant's tip, each within +- ``measuring_range`` [mm].

    250 mm is the LK-G500's range.

    ``blind(head)`` puts a head out of range (a target lost), ``blind(head, False)``
    back in; ``alarm(head)`` makes it report the alarm value, ``alarm(head, False)``
    stops it; ``noise`` is the standard deviation of each reading [mm]; ``decimals`` the
    display setting (None: the most the measuring range fits); ``refuse(code)`` answers
    ``M0`` and ``M1`` with the error code (01: status error ...), ``refuse(None)`` measures again;
    ``answer_late(delay)`` sends the next answer ``delay`` [s] after its command, measured
    when the command came (``late_sent``: those sent).
    """

    def __init__(self, plant: Plant, mount: SensorMount,
                 heads: keyence.Heads = keyence.Heads(), measuring_range: float = 250.0,
                 noise: float = 0.0, seed: int = 0, decimals: int | None = None):
        self.plant, self.mount, self.heads = plant, mount, heads
        self.measuring_range, self.noise = measuring_range, noise
        self.decimals = keyence.decimals_for(measuring_range) if decimals is None else decimals
        self.rng = np.random.default_rng(seed)
        self.blinded = [False, False]
        self.alarms = [False, False]
        self.refusal: str | None = None   # the error code M0 is answered with, if any
        self.buffer = b''
        self.answered = 0
        self.errors = 0
        self.late: list[float] = []   # the delays [s] of the next answers to hold back
        self.late_sent: list[bytes] = []
        # Answers held back, in order: (time.monotonic() due, answer, held back on purpose)
        self._held: deque[tuple[float, bytes, bool]] = deque()

    def blind(self, head: int, out_of_range: bool = True) -> None:
        self.blinded[head] = out_of_range

    def alarm(self, head: int, on: bool = True) -> None:
        self.alarms[head] = on

    def refuse(self, code: str | None = keyence.STATUS_ERROR) -> None:
        self.refusal = code

    def answer_late(self, delay: float, count: int = 1) -> None:
        """Send each of the next ``count`` answers ``delay`` [s] after its command."""
        self.late.extend([delay] * count)

    def receive(self, data: bytes) -> list[bytes]:
        """Answer every complete command line (in order, behind any answer held back)."""
        now = time.monotonic()
        for reply in self._answer(data):
            late = bool(self.late)
            self._held.append((now + self.late.pop(0) if late else now, reply, late))
        return self._due(now)

    def _due(self, now: float) -> list[bytes]:
        """Take the answers due by ``now`` off the front of the queue."""
        out = []
        while self._held and self._held[0][0] <= now:
            _, reply, late = self._held.popleft()
            out.append(reply)
            if late:
                self.late_sent.append(reply)
        return out

    def _answer(self, data: bytes) -> list[bytes]:
        self.buffer += data
        replies = []
        while b'\r' in self.buffer:
            line, self.buffer = self.buffer.split(b'\r', 1)
            command = line.strip().upper()
            measures = command in (keyence.MEASURE, keyence.RESYNC)
            if measures and self.refusal is None:
                values = self._values()[:1 if command == keyence.RESYNC else 2]
                replies.append(command + b',' + b','.join(v.encode() for v in values) + b'\r')
                self.answered += 1
            else:
                self.errors += 1
                code = self.refusal if measures else keyence.COMMAND_ERROR
                replies.append(b'ER,' + command[:2] + b',' + code.encode() + b'\r')
        return replies

    def _values(self) -> list[str]:
        readings = self.heads.readings(self.mount.to_sensor(self.plant.tip_position))
        out = []
        for head, mm in enumerate(readings):
            mm += self.rng.normal(0.0, self.noise) if self.noise > 0.0 else 0.0
            if self.alarms[head]:
                out.append(keyence.ALARM)
            elif self.blinded[head] or abs(mm) > self.measuring_range:
                out.append(('-' if mm < 0 else '+') + keyence.OUT_OF_RANGE)
            else:
                out.append(keyence.format_value(mm, self.decimals))
        return out

    def step(self, now: float) -> list[bytes]:
        """Send the answers held back that are due: the controller only answers."""
        return self._due(now)
