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
A simulator on simulated time resumes after a stall where it stopped, over real DDS (loopback).

With ``publish_clock`` the physics tick after a stall of the machine caught up on the wall
clock with as many steps as its budget allowed, and the publishing timer sent one state for
all of them: a bag of a bellows robot recorded beside other work lost 1.4 s of simulated time
in a hold, and ``calibrate`` found 2 static points of 3. And with physics ticks longer than
the publishing period, each tick's state went out twice, the second time with velocity 0.
"""

import threading
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_helpers import spinning, stamp_seconds, wait_for
from sensor_msgs.msg import JointState
from tendon_robot_sim.nodes.simulator_node import MAX_BACKLOG_PERIODS, SimulatorNode
from tendon_robot_sim.ros import topics

PHYSICS, PUBLISH = 10.0, 50.0   # Hz: long ticks, whose budget affords a long catch-up
STALL = 1.0                     # s the executor is held up: 10 ticks


def test_a_stall_leaves_no_gap_longer_than_the_backlog_kept_and_no_state_twice(robot_file):
    context = rclpy.Context()
    rclpy.init(context=context)
    simulator = SimulatorNode(namespace='stall', context=context, parameter_overrides=[
        Parameter('robot_file', value=str(robot_file)),
        Parameter('mode', value='cc_dynamic'),     # the cheapest timed model
        Parameter('publish_clock', value=True),
        Parameter('physics_rate', value=PHYSICS), Parameter('publish_rate', value=PUBLISH)])
    listener = Node('listener', namespace='stall', context=context)
    stamps, stalled = [], threading.Event()
    listener.create_subscription(
        JointState, topics.TENDON_STATE.name,
        lambda msg: stamps.append(stamp_seconds(msg.header.stamp)),
        QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                   reliability=ReliabilityPolicy.RELIABLE))

    def stall():
        # the stimulus, not a wait: once states come, the machine holds the node's executor
        # up for STALL s
        if len(stamps) < 10:
            return
        timer.cancel()
        time.sleep(STALL)
        stalled.set()
    timer = listener.create_timer(0.05, stall)
    with spinning(simulator, listener, context=context):
        wait_for(stalled.is_set, 'the stall')
        resumed = len(stamps)
        wait_for(lambda: len(stamps) > resumed + 20, 'states after the stall')
    gaps = np.diff(stamps)
    # the physics runs at most MAX_BACKLOG_PERIODS ticks ahead, the publishing one of its
    # periods after it (before: as far as a tick's budget took it, 0.5 s at 0.75 ms a step);
    # 1e-6: sums of 5 ms steps
    bound = MAX_BACKLOG_PERIODS / PHYSICS + 1.0 / PUBLISH + 1e-6
    assert gaps.max() <= bound, f'largest gap {gaps.max():.3f} s of simulated time'
    assert gaps.min() > 0.0     # and no state twice
