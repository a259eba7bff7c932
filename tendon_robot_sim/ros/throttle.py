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
Throttled warnings of a node: one throttle per kind of fault, for every node.

rclpy's ``throttle_duration_sec`` throttles per call site: a node that sent all its warnings
through one helper method had one throttle, so a flood of one fault (a stream of bad
setpoints) hid a different one (a target in the wrong frame) for the whole period.
:class:`FaultWarnings` keeps a throttle per kind: each fault is said at once, then at most
once per period while it repeats.
"""

import re
import time
from typing import Callable

# The field an error message starts with ('effort: non-finite ...' -> 'effort').
_FIELD = re.compile(r'^\s*([\w.\[\]/]+):')


def fault_kind(what: str, reason: str) -> str:
    """Return the kind of a rejection: ``what`` and the field its ``reason`` starts with."""
    field = _FIELD.match(reason)
    return f'{what}: {field.group(1)}' if field else what


class FaultWarnings:
    """
    Log ``text`` under ``kind`` unless the same kind was logged less than ``period`` s ago.

    ``period`` is a number or a callable returning it (a live parameter); ``log`` takes the
    text (``node.get_logger().warning`` by default of the caller's choice).
    """

    def __init__(self, log: Callable[[str], None], period):
        self.log = log
        self.period = period if callable(period) else (lambda: period)
        self._last: dict[str, float] = {}

    def __call__(self, kind: str, text: str, log: Callable[[str], None] | None = None) -> bool:
        """Log ``text`` (with ``log``, default the one given) unless throttled; True if logged."""
        now = time.monotonic()
        if now - self._last.get(kind, -float('inf')) < self.period():
            return False
        self._last[kind] = now
        (log or self.log)(text)
        return True
