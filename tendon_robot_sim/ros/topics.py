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
The topics of the stack: one table of names, message types and QoS.

Names are relative so that a namespace moves the whole stack; ``/tf`` and
``/clock`` are absolute because every ROS tool expects them there. Every node,
the recorder and the bag writer take the QoS of a topic from here, so a
publisher and its subscribers always match.
"""

from dataclasses import dataclass

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PointStamped, PoseStamped, WrenchStamped
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

# Commands must not be lost (a dropped "back to 0 N" leaves a tendon pulled), so
# RELIABLE; a short queue absorbs bursts; VOLATILE because replaying an old
# command to a node that starts later would move the robot unexpectedly.
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)

# A model that solves each setpoint on receipt (quasi-static) subscribes to the newest only:
# RELIABLE, so the last one (the one that stays) is never lost; depth 1, so that solves slower
# than the stream (a 50 Hz tendon/state) do not fall behind it.
NEWEST_SETPOINT_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                                 reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.VOLATILE)

# What does not change while a node runs (the obstacles of its world): RELIABLE and
# TRANSIENT_LOCAL, depth 1, so that a display started later still gets the one message (REP
# 2003's latched topics, as robot_state_publisher's /robot_description). A subscriber must ask
# for TRANSIENT_LOCAL too to get it (RViz: Durability Policy Transient Local).
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

# Measurements (REP 2003): the publisher offers the system default, RELIABLE, which
# both a default-QoS subscriber and a sensor-data (BEST_EFFORT) subscriber can match;
# a BEST_EFFORT publisher would leave the usual `create_subscription(..., 10)`
# with nothing. KEEP_LAST with a short queue: a slow reliable reader never blocks
# the publisher, it just loses the oldest samples.
MEASUREMENT_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                             reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE)

# Markers are large and for display only: the newest one is all RViz draws.
MARKER_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                        reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)

# How our own nodes subscribe to measurements (REP 2003): the sensor-data profile,
# BEST_EFFORT, because only the newest sample matters and the next one follows
# within one publish period; retransmitting a stale sample would only delay it.
SENSOR_SUBSCRIPTION_QOS = qos_profile_sensor_data

# What tf2_ros.TransformBroadcaster offers: RELIABLE, depth 100, so tf listeners
# (which subscribe RELIABLE) connect and do not lose transforms in bursts.
TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)

# rclcpp's ClockQoS, what every TimeSource subscribes with and simulators and
# `ros2 bag play --clock` publish: only the newest time is useful (depth 1), and a lost
# one is replaced by the next tick's, so BEST_EFFORT (no acknowledgements: the DDS threads
# of the simulator node under a 50 Hz stream took 0.05 ms less a tick, docs/performance.md).
CLOCK_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                       reliability=ReliabilityPolicy.BEST_EFFORT,
                       durability=DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class Topic:
    """One stream of the stack."""

    name: str           # default name, relative unless the convention is absolute
    msg_type: type      # rclpy message class
    qos: QoSProfile     # offered by the publisher
    publisher: str      # who publishes it
    meaning: str        # what a message holds, with units
    sensor_data: bool = False   # our subscribers ask for the sensor-data profile

    @property
    def subscription_qos(self) -> QoSProfile:
        """Return the QoS our subscribers request: sensor data best effort, the rest as offered."""
        return SENSOR_SUBSCRIPTION_QOS if self.sensor_data else self.qos


TENDON_COMMAND = Topic(
    'tendon/command/tension', JointState, COMMAND_QOS, 'user, tools',
    'desired tension per tendon: name = tendon names, effort = N')
TENDON_DISPLACEMENT_COMMAND = Topic(
    'tendon/command/displacement', JointState, COMMAND_QOS, 'user, tools',
    'desired displacement per tendon: name = tendon names, position = m (pulled in past '
    'the base, positive when pulling)')
TENDON_SETPOINT = Topic(
    'tendon/setpoint', JointState, COMMAND_QOS, 'controllers',
    'what the actuators must apply: effort = N (tension mode) or position = m '
    '(displacement mode)')
TENDON_STATE = Topic(
    'tendon/state', JointState, MEASUREMENT_QOS, 'simulator, hardware bridge',
    'per tendon: position = displacement (m, pulled in past the base, positive when '
    'pulling), velocity = m/s, effort = tension (N)', sensor_data=True)
TENDON_TIP_STATE = Topic(
    'tendon/tip_state', JointState, MEASUREMENT_QOS, 'simulator, with tendon friction',
    'per tendon: effort = tension at the anchor (N), where friction makes it differ from the '
    "motor's (tendon/state)", sensor_data=True)
TIP_POSE = Topic(
    'tip/pose', PoseStamped, MEASUREMENT_QOS, 'simulator',
    'tip pose in the base frame (m, unit quaternion)', sensor_data=True)
BACKBONE_MARKERS = Topic(
    'backbone/markers', MarkerArray, MARKER_QOS, 'simulator',
    'backbone centerline (LINE_STRIP), vertebra discs (CYLINDER), tendons (LINE_LIST)',
    sensor_data=True)
TF = Topic(
    '/tf', TFMessage, TF_QOS, 'simulator',
    'base_link -> tip_link and base_link -> vertebra_<i> (i = 0 at the base end)')
TF_STATIC = Topic(
    '/tf_static', TFMessage, LATCHED_QOS, 'robot_state_publisher (ROS launch), the user',
    "fixed frames, latched: the URDF's, and tip_marker in tip_link (where the tip sensor's "
    'point sits on the tip) from a static transform the user publishes')
CLOCK = Topic(
    '/clock', Clock, CLOCK_QOS, 'simulator, when publish_clock is true',
    'simulation time, for use_sim_time users when the simulation runs slower than real time')

TIP_TARGET = Topic(
    'tip/target', PointStamped, COMMAND_QOS, 'user, tools',
    'desired tip position in the base frame (m); switches the tension controller to '
    'tip-position mode')
TIP_WRENCH = Topic(
    'tip/wrench', WrenchStamped, COMMAND_QOS, 'user, tools',
    'external load on the tip, base frame: force (N) and torque (N m); replaces the robot '
    "description's tip_load in the simulator (both modes) and the controllers' models")
TIP_MEASURED = Topic(
    'tip/measured', PointStamped, MEASUREMENT_QOS, 'hardware bridge',
    'tip position measured by the tip sensor, in the base frame (m)', sensor_data=True)
# Diagnostics are few and each one matters to the aggregator: RELIABLE, a short queue.
# Absolute, like /tf: the diagnostic aggregator listens on /diagnostics, whatever the
# namespace of the node that reports.
DIAGNOSTICS = Topic(
    '/diagnostics', DiagnosticArray,
    QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
               reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE),
    'hardware bridge, simulator', 'link health of the motor driver and the tip sensor, safety '
    "state; the simulator's step control (tip_tolerance)")
# Each servo's own state: few messages, each a change that matters, like /diagnostics; but
# relative, so that it moves with the stack's namespace.
TENDON_SERVOS = Topic(
    'tendon/servos', DiagnosticArray, DIAGNOSTICS.qos, 'hardware bridge (dynamixel)',
    'one status per servo, named after its tendon: torque, hardware error, bus watchdog')

WORLD_MARKERS = Topic(
    'world/markers', MarkerArray, LATCHED_QOS, 'simulator, with a world_file',
    'the obstacles of the world file, in the base frame, once (latched): one namespace per '
    'obstacle; plane = thin CUBE, sphere = SPHERE, cylinder = CYLINDER (capsule: and two '
    'SPHERE), box = CUBE, mesh = TRIANGLE_LIST')
CONTACT_MARKERS = Topic(
    'contact/markers', MarkerArray, MARKER_QOS, 'simulator, with a world_file',
    'one ARROW per contact patch from the surface point along the force on the robot '
    '(contact_arrow_scale m per N), namespace = the obstacle, id = its i-th contact along the '
    'rod; DELETE when a contact ends', sensor_data=True)
# One message per contact at each publish: a burst of a few, kept whole (depth 50) so that a
# reliable reader gets every contact of an instant.
CONTACT_WRENCH = Topic(
    'contact/wrench', WrenchStamped,
    QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=50,
               reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE),
    'simulator, with a world_file',
    'one message per contact patch per publish, in the order of the arrows of contact/markers '
    'with the same stamp: force on the robot (N) and its moment about the base frame origin '
    '(p x F, N m), frame = the base frame')

# The topic contract of the simulation stack (what the demo records).
TOPICS = (TENDON_COMMAND, TENDON_SETPOINT, TENDON_STATE, TIP_POSE, BACKBONE_MARKERS, TF, CLOCK)
# What an experiment on the robot adds: the tip measurement and the other commands.
EXPERIMENT_TOPICS = TOPICS + (
    TIP_MEASURED, TIP_TARGET, TENDON_DISPLACEMENT_COMMAND, TIP_WRENCH)
# What a simulator with a world adds.
CONTACT_TOPICS = (WORLD_MARKERS, CONTACT_MARKERS, CONTACT_WRENCH)
# What `record` records unless told: an experiment's topics and what a simulator with tendon
# friction (the tensions at the anchors) or a world publishes; a stack publishes only part.
RECORDED_BY_DEFAULT = EXPERIMENT_TOPICS + (TENDON_TIP_STATE, TF_STATIC) + CONTACT_TOPICS
# Every topic of this table.
ALL_TOPICS = (EXPERIMENT_TOPICS + (DIAGNOSTICS, TENDON_SERVOS, TENDON_TIP_STATE, TF_STATIC)
              + CONTACT_TOPICS)


def find_topic(name: str) -> Topic | None:
    """
    Return the topic of the table called ``name``, or None.

    ``name`` may be resolved or not: a leading ``/`` is ignored.
    """
    for topic in ALL_TOPICS:
        if topic.name.lstrip('/') == name.lstrip('/'):
            return topic
    return None


def type_name(msg_type: type) -> str:
    """ROS 2 type name of an rclpy message class, e.g. ``sensor_msgs/msg/JointState``."""
    package, interface = msg_type.__module__.split('.')[:2]
    return f'{package}/{interface}/{msg_type.__name__}'
