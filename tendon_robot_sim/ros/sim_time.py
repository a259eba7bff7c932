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
A node on simulated time that has no ``/clock`` yet says so; the time a control period spans.

With ``use_sim_time`` the node's clock reads 0 until the first ``/clock`` message, and a timer
on that clock never fires: a controller published no setpoint and said nothing.

A timer on simulated time fires once for a ``/clock`` step of several periods (rcl skips the
periods the step passes): a simulator at 10 x real time steps its clock once a physics tick,
0.2 s of simulated time at the defaults, ten periods of a 50 Hz controller.
:class:`ControlPeriod` gives a controller the simulated time its call stands for.
"""

from typing import Callable

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.timer import Timer

CHECK_PERIOD = 1.0    # s of the steady clock between two checks


def waiting_for_clock(node: Node) -> bool:
    """Return True while ``node`` is on simulated time and no ``/clock`` has come (time 0)."""
    clock = node.get_clock()
    return clock.ros_time_is_active and clock.now().nanoseconds == 0


def watch_for_clock(node: Node, warn: Callable[[str, str], None], held: str) -> Timer:
    """
    Call ``warn(kind, message)`` every CHECK_PERIOD while ``node`` waits for a ``/clock``.

    ``held`` says what the node does not do until one comes. The timer runs on the steady
    clock, which a missing ``/clock`` does not stop; ``use_sim_time`` set live is followed.
    """
    def check() -> None:
        if waiting_for_clock(node):
            warn('sim time without clock', f'use_sim_time is true and no /clock has arrived: '
                 f'{held} until one does (start the simulator with publish_clock, the launch '
                 f'argument use_sim_time:=true, or set use_sim_time false)')
    return node.create_timer(CHECK_PERIOD, check, clock=Clock(clock_type=ClockType.STEADY_TIME))


class ControlPeriod:
    """
    The time [s] each call of a controller's timer stands for (call it once a timer call).

    On the wall clock (or the first time) the timer's ``period``, as before: a late call is a
    machine that stalled, and a rate-limited setpoint does not jump to catch up. On simulated
    time, the simulated time since the previous call: one call for a ``/clock`` step of ten
    periods moved a setpoint by a tenth of its ``rate_limit`` per second. Time that went back
    (another simulation started) counts one period.
    """

    def __init__(self, node: Node, period: float):
        self.node, self.period = node, period
        self._last = None       # ns on the node's clock at the previous call

    def __call__(self) -> float:
        clock = self.node.get_clock()
        now = clock.now().nanoseconds
        last, self._last = self._last, now
        if not clock.ros_time_is_active or last is None or now <= last:
            return self.period
        return (now - last) * 1e-9
