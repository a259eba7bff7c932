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
Which topics of a live stack are silent, and what the page says of each.

A live page heeds the topics a stack publishes steadily (``backbone/markers``,
``tendon/state``): one silent for :data:`STALE_AFTER` s means what the page shows of it is
old; one no node publishes means the stack lacks the node that would (a hardware stack
without its model node), which the view says rather than waiting "yet" forever.
Free of ROS and viser: the view node counts the publishers.
"""

from __future__ import annotations

from typing import Sequence

# s without a message of a topic a stack publishes steadily before a live page says so: three
# periods of the slowest publish rate (the simulator's and the bridge's 1 Hz at least)
STALE_AFTER = 3.0


class Silences:
    """The heeded topics' latest messages (steady time [s]; ``start`` until one came)."""

    def __init__(self, heeded: Sequence[str], start: float):
        self.heard_at = dict.fromkeys(heeded, start)
        self.silent: set[str] = set(heeded)    # not heard yet
        self.why: dict[str, str] = {}          # topic no node publishes -> what is missing

    def heard(self, topic: str, now: float) -> bool:
        """
        Take that a message of ``topic`` came at steady time ``now``.

        Return whether it is the first after a silence of :data:`STALE_AFTER` s (or ever):
        the stack (re)started, perhaps with another robot, whose markers replace all before.
        """
        fresh = topic in self.silent or now - self.heard_at[topic] > STALE_AFTER
        self.heard_at[topic] = now
        self.silent.discard(topic)
        return fresh

    def lines(self, now: float) -> list[str]:
        """
        Return a Markdown line per topic silent for :data:`STALE_AFTER` s at ``now``.

        A topic in :attr:`why` (no node publishes it) says what is missing rather than
        "yet", or that its stack stopped rather than asking.
        """
        lines = []
        for topic, t in self.heard_at.items():
            if now - t <= STALE_AFTER:
                continue
            why = self.why.get(topic)
            if topic in self.silent:
                said = f': {why}' if why else ' yet: is the stack running, in this namespace?'
            else:
                said = (f' for {now - t:.0f} s: what the page shows of it is old ('
                        + ('no node publishes it any more: the stack stopped' if why
                           else 'the stack stopped?') + ')')
            lines.append(f'- **STALE** no `{topic}`{said}')
        return lines
