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
Throttled fault logs of a node: one throttle per kind of fault, any severity, for every node.

rclpy's ``throttle_duration_sec`` throttles per call site: a node that sent all its warnings
through one helper method had one throttle, so a flood of one fault (a stream of bad
setpoints) hid a different one (a target in the wrong frame) for the whole period.
:class:`FaultWarnings` keeps a throttle per kind: each fault is said at once, then at most
once per period while it repeats.

rclpy also keys the state of a log call by its call site (file, line, bytecode offset) and
refuses a call site whose severity changes: ``ValueError: Logger severity cannot be changed
between calls``. A helper that logs what it is given through one call (a logger's bound
method passed in, or ``logger.log(text, severity)``) took its node down the first time a
second severity came through it (a rejected wrench, WARN, then a divergence, ERROR).
:func:`log_at` gives each severity a call site of its own; every helper that logs at a
severity chosen at run time goes through it (``test/ros/test_node_logging.py`` walks them).
"""

import re
import time

from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.logging import LoggingSeverity

# The field an error message starts with ('effort: non-finite ...' -> 'effort').
_FIELD = re.compile(r'^\s*([\w.\[\]/]+):')


def log_at(logger: RcutilsLogger, severity: LoggingSeverity, text: str) -> None:
    """Log ``text`` at ``severity`` (DEBUG .. FATAL), any severity after any other."""
    # one call site per severity: rclpy refuses a call site whose severity changes
    if severity == LoggingSeverity.DEBUG:
        logger.debug(text)
    elif severity == LoggingSeverity.INFO:
        logger.info(text)
    elif severity == LoggingSeverity.WARN:
        logger.warning(text)
    elif severity == LoggingSeverity.ERROR:
        logger.error(text)
    elif severity == LoggingSeverity.FATAL:
        logger.fatal(text)
    else:
        raise ValueError(f'severity: one of DEBUG, INFO, WARN, ERROR, FATAL, got {severity!r}')


def fault_kind(what: str, reason: str) -> str:
    """Return the kind of a rejection: ``what`` and the field its ``reason`` starts with."""
    field = _FIELD.match(reason)
    return f'{what}: {field.group(1)}' if field else what


class FaultWarnings:
    """
    Log ``text`` under ``kind`` unless the same kind was logged less than ``period`` s ago.

    ``logger`` is the node's (``node.get_logger()``); ``period`` is a number or a callable
    returning it (a live parameter). A fault is a warning unless its call says otherwise.
    """

    def __init__(self, logger: RcutilsLogger, period):
        self.logger = logger
        self.period = period if callable(period) else (lambda: period)
        self._last: dict[str, float] = {}

    def __call__(self, kind: str, text: str,
                 severity: LoggingSeverity = LoggingSeverity.WARN) -> bool:
        """Log ``text`` at ``severity`` unless ``kind`` is throttled; True if logged."""
        now = time.monotonic()
        if now - self._last.get(kind, -float('inf')) < self.period():
            return False
        self._last[kind] = now
        log_at(self.logger, severity, text)
        return True
