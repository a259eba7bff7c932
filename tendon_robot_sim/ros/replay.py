"""A node that publishes a bag's messages again with their recorded timing.

The stored CDR bytes are published as they are (``Publisher.publish(bytes)``), so
nothing is deserialized; rclpy still needs each topic's message class for its
type support, imported from the type name (``sensor_msgs/msg/JointState`` ->
``sensor_msgs.msg.JointState``). Each topic is offered with the QoS of
:mod:`tendon_robot_sim.ros.topics`, else the QoS recorded in the bag, else
RELIABLE depth 10. Messages keep their recorded header stamps, as with
``ros2 bag play``.

Timing: message ``i`` is due ``(stamp_i - stamp_0) / rate`` seconds after the
start of the pass; :meth:`BagPlayer.play` sleeps until then and publishes. A
player publishes from the calling thread and needs no spinning.
"""

from __future__ import annotations

import importlib
from pathlib import Path
import time
from typing import Callable, Iterable

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from tendon_robot_sim.core.bag import bag_topics, BagError, offered_qos_of, read_raw
from tendon_robot_sim.ros import topics as stack_topics
from tendon_robot_sim.ros.topics import COMMAND_QOS, find_topic

# Longest sleep between two looks at ``stop``.
POLL = 0.05
# What the simulator node publishes: in a replay into simulation these come from the
# simulation, not from the bag.
SIMULATOR_OUTPUTS = tuple(topic.name for topic in (
    stack_topics.TENDON_STATE, stack_topics.TIP_POSE, stack_topics.BACKBONE_MARKERS,
    stack_topics.TF, stack_topics.CLOCK))


def message_class(msgtype: str) -> type:
    """The rclpy message class of ``pkg/msg/Name``; ImportError naming the type if absent."""
    package, _, name = msgtype.rpartition('/')
    try:
        return getattr(importlib.import_module(package.replace('/', '.')), name)
    except (ImportError, AttributeError, ValueError):
        raise ImportError(f'message type {msgtype}: no Python package provides it '
                          f'(import {package.replace("/", ".")}.{name} fails)') from None


class BagPlayer(Node):
    """Publishers for the topics of the bag at ``path`` (``topics``: names to keep, with or
    without the leading ``/``; default all; ``exclude``: names not to publish), and
    :meth:`play` to publish them.

    Raises :class:`~tendon_robot_sim.core.bag.BagError` for an unreadable bag, a
    topic the bag does not hold, or a bag with nothing that can be published.
    """

    def __init__(self, path: str | Path, topics: Iterable[str] | None = None,
                 rate: float = 1.0, node_name: str = 'bag_player',
                 exclude: Iterable[str] = (), **kwargs):
        if not rate > 0.0 or rate == float('inf'):
            raise BagError(f'rate: must be a finite number > 0, got {rate}')
        self.path = Path(path)
        self.rate = rate
        recorded = bag_topics(self.path)
        if topics is not None:
            wanted = ['/' + name.lstrip('/') for name in topics]
            missing = [name for name in wanted if name not in recorded]
            if missing:
                raise BagError(f'{self.path}: no topic {", ".join(missing)} in the bag; it '
                               f'holds {", ".join(sorted(recorded))}')
            recorded = {name: recorded[name] for name in wanted}
        excluded = {'/' + name.lstrip('/') for name in exclude}
        recorded = {name: msgtype for name, msgtype in recorded.items() if name not in excluded}
        self.classes, self.skipped = {}, {}
        for topic, msgtype in recorded.items():
            try:
                self.classes[topic] = message_class(msgtype)
            except ImportError as error:
                self.skipped[topic] = str(error)
        if not self.classes:
            raise BagError(f'{self.path}: nothing to publish: '
                           + ('; '.join(f'{t}: {why}' for t, why in self.skipped.items())
                              or 'no topic of the bag is left to publish'))
        super().__init__(node_name, **kwargs)
        offered = offered_qos_of(self.path)
        self.publishers_by_topic = {}
        for topic, msg_class in self.classes.items():
            self.publishers_by_topic[topic] = self.create_publisher(
                msg_class, topic, self._qos(topic, offered.get(topic)))
        for topic, why in self.skipped.items():
            self.get_logger().warning(f'not replaying {topic}: {why}')
        self.counts = {topic: 0 for topic in self.classes}

    @staticmethod
    def _qos(topic: str, offered) -> QoSProfile:
        known = find_topic(topic)
        if known is not None:
            return known.qos
        if offered is not None:
            return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=offered.depth,
                              reliability=ReliabilityPolicy[offered.reliability.upper()],
                              durability=DurabilityPolicy[offered.durability.upper()])
        return COMMAND_QOS      # RELIABLE, depth 10

    def play(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Publish one pass through the bag with the recorded spacing divided by ``rate``;
        False if ``stop()`` became true before the end."""
        start_wall = start_stamp = None
        for message in read_raw(self.path, self.classes):
            if start_stamp is None:
                start_wall, start_stamp = time.monotonic(), message.stamp_ns
            due = start_wall + (message.stamp_ns - start_stamp) * 1e-9 / self.rate
            while (left := due - time.monotonic()) > 0.0:
                if stop():
                    return False
                time.sleep(min(left, POLL))
            if stop():
                return False
            self.publishers_by_topic[message.topic].publish(message.data)
            self.counts[message.topic] += 1
        return True
