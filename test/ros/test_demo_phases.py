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
The demo's phases (``ros.demo.run_phases``) against a simulator whose poses lag its clock.

On a loaded machine a full suite once read the demo's "t0 2 N" row at the rest position: /clock
had run past the hold's end while the poses after the pull were still queued, and the hold,
ended by the clock, took the last pose that had come. Here a stand-in simulator (a real node
over DDS) stamps each pose a second behind its /clock, as such a queue delivers them.
"""

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_msgs.msg import ColorRGBA, Header
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.demo import DemoDriver, Phase, run_phases
from visualization_msgs.msg import Marker, MarkerArray

LAG = 1.0          # s of simulated time the poses are stamped behind /clock
STEP = 0.02        # s of simulated time a tick
MOVES = 0.1        # s after the tensions arrive, the stand-in's tip moves ...
REST, PULLED = (0.24, 0.0, -0.067), (0.25, 0.0, 0.007)    # ... from here to here [m]
HOLD = 0.5         # s


class LaggingSimulator(Node):
    """Publishes /clock, tendon/state (the commanded tensions) and tip poses LAG s old."""

    def __init__(self, **kwargs):
        super().__init__('lagging_simulator', **kwargs)
        self.t = 0.0
        self.tensions = {'t0': 0.0}
        self.applied_at = None       # simulated time the pull arrived
        self.clock = self.create_publisher(Clock, topics.CLOCK.name, topics.CLOCK.qos)
        self.state = self.create_publisher(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                           topics.TENDON_STATE.qos)
        self.pose = self.create_publisher(topics.TIP_POSE.msg_type, topics.TIP_POSE.name,
                                          topics.TIP_POSE.qos)
        self.markers = self.create_publisher(MarkerArray, topics.BACKBONE_MARKERS.name,
                                             topics.BACKBONE_MARKERS.qos)
        self.create_subscription(topics.TENDON_COMMAND.msg_type, topics.TENDON_COMMAND.name,
                                 self._on_command, topics.TENDON_COMMAND.qos)
        self.create_timer(0.01, self._tick)

    def _on_command(self, msg) -> None:
        self.tensions = dict(zip(msg.name, msg.effort))
        if self.applied_at is None and any(self.tensions.values()):
            self.applied_at = self.t

    def tip_at(self, t: float) -> tuple[float, float, float]:
        """Return the stand-in's tip at simulated time ``t``."""
        moved = self.applied_at is not None and t >= self.applied_at + MOVES
        return PULLED if moved else REST

    def _tick(self) -> None:
        self.t += STEP
        now, seen = _stamp(self.t), max(0.0, self.t - LAG)
        self.clock.publish(Clock(clock=now))
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


@pytest.fixture
def nodes():
    context = rclpy.Context()
    rclpy.init(context=context)
    executor = SingleThreadedExecutor(context=context)
    sim, driver = LaggingSimulator(context=context), DemoDriver(context=context)
    for node in (sim, driver):
        executor.add_node(node)
    yield executor, sim, driver
    executor.shutdown()
    for node in (sim, driver):
        node.destroy_node()
    rclpy.shutdown(context=context)


def test_a_hold_ends_on_a_pose_stamped_at_its_end_not_on_the_clock(nodes):
    executor, sim, driver = nodes
    # the driver sees the stand-in: its time runs and its poses come
    while not (driver.tip_pose is not None and driver.now() > LAG + 0.1
               and driver.command_pub.get_subscription_count() >= 1):
        executor.spin_once(timeout_sec=0.05)
    phase = Phase('t0 2 N', {'t0': 2.0})
    (snapshot,) = run_phases(executor, driver, [phase], HOLD, alive=lambda: None,
                             progress=lambda *_: None, wall_timeout=60.0, control_rate=50.0)
    assert sim.applied_at is not None
    # the pose the row reads was stamped after the pull had moved the tip
    np.testing.assert_allclose(snapshot.tip_position, PULLED, atol=1e-12)
    assert driver.tip_time() >= sim.applied_at + HOLD - STEP
