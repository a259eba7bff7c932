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
A node that records topics of the stack into a rosbag2 bag (MCAP or sqlite3).

Subscriptions are ``raw``: rclpy hands over the CDR bytes exactly as published,
so nothing is deserialized and serialized again. Each topic is requested with
the reliability and durability of :mod:`tendon_robot_sim.ros.topics` and recorded
with the topic's QoS as the offered profile, which ``ros2 bag play`` re-offers; the
recorder's own history is :data:`RECORD_DEPTH` deep, not the topic's few messages,
so that the messages that come while the recorder is busy writing (or held up by a
loaded machine) wait for it instead of replacing each other.
"""

from pathlib import Path
import time
from typing import Sequence

from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile
from rclpy.serialization import deserialize_message

from tendon_robot_sim.experiment.bag import BagWriter, FLUSH_PERIOD, OfferedQos
from tendon_robot_sim.ros.topics import Topic, TOPICS, type_name

#: Messages a recorded topic's subscription keeps until the recorder takes them: a second
#: of 1 kHz messages (about 0.3 MB of tendon/state, tens of MB of markers at most).
RECORD_DEPTH = 1000


def record_qos(profile: QoSProfile) -> QoSProfile:
    """Return ``profile`` with the recorder's deep history (its other policies kept)."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=RECORD_DEPTH,
                      reliability=profile.reliability, durability=profile.durability)


def offered_qos(profile: QoSProfile) -> OfferedQos:
    """Return the bag's description of an rclpy QoS profile."""
    return OfferedQos(reliability=profile.reliability.name.lower(),
                      durability=profile.durability.name.lower(), depth=profile.depth)


class BagRecorder(Node):
    """
    Record ``topics`` (default: every topic of the stack) into a new bag at ``path``.

    ``storage`` is ``'mcap'`` or ``'sqlite3'``.

    Timestamps are wall-clock receive times (as ``ros2 bag record`` without
    ``--use-sim-time``). Call :meth:`close` to finish the bag. Every
    :data:`~tendon_robot_sim.experiment.bag.FLUSH_PERIOD` a timer puts what was received on
    disk, so a recorder that is killed loses at most that much (``tendon-robot-sim reindex``
    recovers the rest).
    """

    def __init__(self, path: str | Path, topics: Sequence[Topic] = TOPICS,
                 node_name: str = 'bag_recorder', storage: str = 'mcap', **kwargs):
        bag = BagWriter(path, storage=storage)    # refuses a bad path before the node exists
        super().__init__(node_name, **kwargs)
        self.bag = bag.open()
        self.closed = False
        self.subscriptions_by_topic = {}
        self._published = set()      # resolved names that ever had a (matching) publisher
        self._last: dict[str, bytes] = {}   # the latest message recorded, by resolved name
        for topic in topics:
            subscription = self.create_subscription(
                topic.msg_type, topic.name, self._callback_for(topic), record_qos(topic.qos),
                raw=True,
                event_callbacks=SubscriptionEventCallbacks(matched=self._matched_for(topic)))
            # the resolved name (namespace applied) is what the bag and `ros2 bag play` use
            self.bag.add_topic(subscription.topic_name, type_name(topic.msg_type),
                               offered_qos(topic.qos))
            self.subscriptions_by_topic[subscription.topic_name] = subscription
        self.flush_timer = self.create_timer(FLUSH_PERIOD, self._flush)

    def _flush(self) -> None:
        if not self.closed:
            self.bag.flush()

    def _callback_for(self, topic: Topic):
        resolved = self.resolve_topic_name(topic.name)

        def record(data: bytes) -> None:
            if not self.closed:
                self.bag.write(resolved, time.time_ns(), data)
                self._last[resolved] = data
        return record

    def _matched_for(self, topic: Topic):
        resolved = self.resolve_topic_name(topic.name)

        def matched(info) -> None:
            if info.total_count > 0:
                self._published.add(resolved)
        return matched

    @property
    def unpublished(self) -> list[str]:
        """Return the resolved names of the topics that never had a publisher (nor a message)."""
        return [name for name in self.subscriptions_by_topic
                if name not in self._published and not self.bag.counts.get(name)]

    @property
    def silent(self) -> list[str]:
        """Return the resolved names of the topics that had a publisher but no message."""
        return [name for name in self.subscriptions_by_topic
                if name in self._published and not self.bag.counts.get(name)]

    def silence(self) -> str:
        """Say which topics recorded nothing and why ('' if every one recorded something)."""
        said = [f'{what} {", ".join(names)}' for what, names in (
            ('no publisher ever on', self.unpublished),
            ('a publisher but no message on', self.silent)) if names]
        return '; '.join(said)

    @property
    def counts(self) -> dict[str, int]:
        """Messages recorded per resolved topic name."""
        return dict(self.bag.counts)

    def recorded(self, topic) -> int:
        """Messages recorded of ``topic`` (a :mod:`~tendon_robot_sim.ros.topics` entry)."""
        return self.bag.counts.get(self.resolve_topic_name(topic.name), 0)

    def last(self, topic):
        """Return the latest recorded message of ``topic`` (deserialized); None before one."""
        data = self._last.get(self.resolve_topic_name(topic.name))
        return None if data is None else deserialize_message(data, topic.msg_type)

    def close(self) -> None:
        """Finish the bag (idempotent); later messages are dropped."""
        if not self.closed:
            self.closed = True
            self.bag.close()
