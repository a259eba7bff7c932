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

import time

TIMEOUT = 30.0   # s wall: generous, so a loaded 2-core CI machine fails only on a real hang


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
