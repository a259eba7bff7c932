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
The demo's phases (``ros.demo.run_phases``) against a stack that lags its clock.

On a loaded machine a full suite once read the demo's "t0 2 N" row at the rest position. At
three times real time the tension controller fell behind /clock, and a step whose tensions had
not come within ``hold`` simulated seconds ran without them; and a hold ended by /clock takes
the last pose that has come, while later ones may still be queued. Here a stand-in for the
simulator and the controller (a real node over DDS) lags its clock in either way.
"""

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_msgs.msg import ColorRGBA, Header
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.demo import DemoDriver, Phase, run_phases, wait_until
from visualization_msgs.msg import Marker, MarkerArray
from waiting import TIMEOUT

STEP = 0.02        # s of simulated time a tick
CONTROL_RATE = 50.0    # Hz: the controller's rate, one setpoint a tick when it keeps up
MOVES = 0.1        # s after the tensions arrive, the stand-in's tip moves ...
REST, PULLED = (0.24, 0.0, -0.067), (0.25, 0.0, 0.007)    # ... from here to here [m]
HOLD = 0.5         # s


class LaggingStack(Node):
    """
    Publishes /clock, tendon/setpoint, tendon/state and tip poses; each lags as asked.

    ``lag``: the poses are stamped that many simulated seconds behind /clock. A setpoint every
    ``every`` ticks (a controller behind the clock), and a command's tensions in tendon/state
    after ``ramp`` of them.
    """

    def __init__(self, lag: float = 0.0, every: int = 1, ramp: int = 0, **kwargs):
        super().__init__('lagging_stack', **kwargs)
        self.lag, self.every, self.ramp = lag, every, ramp
        self.t, self.ticks = 0.0, 0
        self.tensions = {'t0': 0.0}
        self.command, self.setpoints = None, 0     # the command waiting, setpoints since
        self.applied_at = None       # simulated time the pull arrived
        self.clock = self.create_publisher(Clock, topics.CLOCK.name, topics.CLOCK.qos)
        self.state = self.create_publisher(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                           topics.TENDON_STATE.qos)
        self.pose = self.create_publisher(topics.TIP_POSE.msg_type, topics.TIP_POSE.name,
                                          topics.TIP_POSE.qos)
        self.markers = self.create_publisher(MarkerArray, topics.BACKBONE_MARKERS.name,
                                             topics.BACKBONE_MARKERS.qos)
        self.setpoint = self.create_publisher(topics.TENDON_SETPOINT.msg_type,
                                              topics.TENDON_SETPOINT.name,
                                              topics.TENDON_SETPOINT.qos)
        self.create_subscription(topics.TENDON_COMMAND.msg_type, topics.TENDON_COMMAND.name,
                                 self._on_command, topics.TENDON_COMMAND.qos)
        self.create_timer(0.01, self._tick)

    def _on_command(self, msg) -> None:
        self.command, self.setpoints = dict(zip(msg.name, msg.effort)), 0

    def tip_at(self, t: float) -> tuple[float, float, float]:
        """Return the stand-in's tip at simulated time ``t``."""
        moved = self.applied_at is not None and t >= self.applied_at + MOVES
        return PULLED if moved else REST

    def _tick(self) -> None:
        self.t += STEP
        self.ticks += 1
        now, seen = _stamp(self.t), max(0.0, self.t - self.lag)
        self.clock.publish(Clock(clock=now))
        if self.ticks % self.every == 0:
            self.setpoint.publish(topics.TENDON_SETPOINT.msg_type(
                header=Header(stamp=now), name=list(self.tensions),
                effort=list(self.tensions.values())))
            self.setpoints += 1
        if self.command is not None and self.setpoints >= self.ramp:
            self.tensions, self.command = self.command, None
            if self.applied_at is None and any(self.tensions.values()):
                self.applied_at = self.t
        self.state.publish(topics.TENDON_STATE.msg_type(
            header=Header(stamp=now), name=list(self.tensions),
            effort=list(self.tensions.values())))
        pose = topics.TIP_POSE.msg_type()
        pose.header.stamp = _stamp(seen)
        pose.pose.position = Point(**dict(zip('xyz', self.tip_at(seen))))
        pose.pose.orientation.w = 1.0
        self.pose.publish(pose)
        tip = Point(**dict(zip('xyz', self.tip_at(seen))))
        color = ColorRGBA(r=1.0, a=1.0)
        self.markers.publish(MarkerArray(markers=[
            Marker(ns='backbone', points=[Point(), tip]),
            Marker(ns='tendons', points=[Point(), tip], colors=[color, color])]))


def _stamp(t: float) -> Time:
    return Time(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)) % 1_000_000_000)


def run_one_pull(**lags):
    """Run the demo's phase "t0 2 N" against a LaggingStack; return (snapshot, stack, driver)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    stack, driver = LaggingStack(context=context, **lags), DemoDriver(context=context)
    try:
        for node in (stack, driver):
            executor.add_node(node)
        # the driver sees the stand-in: its time runs and its poses come
        assert wait_until(executor, lambda: (driver.tip_pose is not None
                                             and driver.now() > stack.lag + 0.1
                                             and driver.command_pub.get_subscription_count()),
                          TIMEOUT, alive=lambda: None), 'the stand-in never came up'
        (snapshot,) = run_phases(executor, driver, [Phase('t0 2 N', {'t0': 2.0})], HOLD,
                                 alive=lambda: None, progress=lambda *_: None,
                                 wall_timeout=60.0, control_rate=CONTROL_RATE)
        return snapshot, stack, driver
    finally:
        executor.shutdown()
        for node in (stack, driver):
            node.destroy_node()
        rclpy.shutdown(context=context)


def test_a_hold_ends_on_a_pose_stamped_at_its_end_not_on_the_clock():
    """The poses a second behind /clock: the row is read from a pose after the pull."""
    snapshot, stack, driver = run_one_pull(lag=1.0)
    assert stack.applied_at is not None
    np.testing.assert_allclose(snapshot.tip_position, PULLED, atol=1e-12)
    assert driver.tip_time() >= stack.applied_at + HOLD - STEP


def test_a_step_waits_for_its_tensions_by_the_controllers_periods_not_the_clock():
    """
    A controller at a tenth of its rate against /clock: the tensions come 2 s after the command.

    By the clock the step gave up waiting after HOLD (0.5 s) and read the rest; by the
    controller's periods (HOLD of them: 25 setpoints, 5 s here) the tensions come first.
    """
    snapshot, stack, _ = run_one_pull(every=10, ramp=10)
    assert stack.applied_at is not None
    np.testing.assert_allclose(snapshot.tip_position, PULLED, atol=1e-12)
