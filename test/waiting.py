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

"""Polling for a condition, shared by the node, device and emulator tests (no rclpy here)."""

import threading
import time

# s wall: the deadline of every wait for a condition. Generous, so that only a real hang
# fails: at load 6 to 20 on two cores a node start, a tendon at rest or a page load took
# 5 to 20 times as long as on a quiet machine. A test that holds passes as soon as its
# condition holds; only a failing one waits this long.
TIMEOUT = 120.0
# s wall: the deadline of a command or a script a test runs to its end (a demo, a sweep, a
# replay): a quiet machine needs a tenth of it; a command that hangs still fails.
COMMAND_TIMEOUT = 600.0


def wait_for(condition, what: str = 'condition', timeout: float = TIMEOUT, period: float = 0.005,
             between=None):
    """
    Call ``condition()`` until it returns something true, and return that.

    ``between()`` runs between two calls (default: sleep ``period`` s; a ROS test spins its
    node there). Raises AssertionError naming ``what`` when ``timeout`` s (wall) pass first.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout:g} s waiting for {what}')
        if between is None:
            time.sleep(period)
        else:
            between()


def first_line(process, starts: str, timeout: float = TIMEOUT) -> str:
    """
    Return the first line ``process`` (a text-mode Popen) prints, which must begin ``starts``.

    Otherwise, or when it prints none within ``timeout`` s, the process is killed and the
    AssertionError says all it printed: a message built with communicate() while it still
    ran (its output stays open) waited for ever.
    """
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    try:
        line = process.stdout.readline()
    finally:
        timer.cancel()
    if not line.startswith(starts):
        process.kill()
        rest = process.communicate(timeout=timeout)[0]
        raise AssertionError(f'expected a first line starting {starts!r}, got: {line}{rest}')
    return line
