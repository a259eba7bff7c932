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
"""Spin an executor in a background thread and stop it without racing its shutdown."""

import threading
from typing import Callable

from rclpy.executors import Executor
from rclpy.node import Node

from tendon_robot_sim.ros.runner import SPIN_PERIOD


class BackgroundSpinner:
    """
    Spin ``executor`` in a daemon thread until :meth:`stop`.

    ``Executor.spin()`` in a thread and ``Executor.shutdown()`` from another race: shutdown
    destroys the executor's guard conditions while the spinning thread may still trigger
    one ('InvalidHandle: cannot use Destroyable because destruction was requested'). Here
    the thread spins in short ``spin_once`` calls and checks a flag in between; ``stop``
    sets the flag, joins the thread, and only then shuts the executor down.
    """

    def __init__(self, executor: Executor):
        self.executor = executor
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while not self._stop.is_set() and self.executor.context.ok():
            self.executor.spin_once(timeout_sec=SPIN_PERIOD)

    def stop(self, timeout: float = 10.0, drain: Callable[[], None] | None = None) -> None:
        """
        Stop spinning, wait up to ``timeout`` [s] for the thread, shut the executor down.

        ``drain()``, if given, runs in between (the thread ended): to spin the executor on
        alone, as :func:`drain` does.
        """
        self._stop.set()
        self.thread.join(timeout)
        if drain is not None and not self.thread.is_alive():
            drain()
        self.executor.shutdown()


def drain(executor: Executor, node: Node, taken: Callable[[], int]) -> None:
    """
    Run ``node``'s callbacks that are ready until the messages delivered are taken.

    ``taken()`` counts the messages the node's subscriptions took. Stops once more callbacks
    ran without taking one than the node has of other kinds (timers, event handlers, guard
    conditions): the executor runs every ready one of those before the subscriptions, and a
    stack that stops readies an event on each topic beside its last messages.
    """
    others = len(list(node.timers)) + len(list(node.waitables)) + len(list(node.guards))
    idle = 0
    while idle <= others:
        before = taken()
        executor.spin_once(timeout_sec=0.0)
        idle = idle + 1 if taken() == before else 0
