"""Write rosbag2 bags (MCAP storage, CDR messages) without ROS, with ``rosbags``.

The messages arrive already serialized (CDR bytes, e.g. from an rclpy ``raw``
subscription or ``rclpy.serialization.serialize_message``); this module only
stores them. What ``ros2 bag play`` needs besides the bytes:

* ``metadata.yaml`` (rosbag2 format version 9) listing each topic with its type,
  serialization format ``cdr``, offered QoS profiles and type hash (RIHS01);
* in the MCAP file, each type's full message definition (schema encoding
  ``ros2msg``). Both come from the ``rosbags`` type store of the ROS
  distribution the messages were built with (:data:`DEFAULT_STORE`).

Bag timestamps are receive times in nanoseconds since the epoch.

Note on the bytes: what a ``raw`` subscription delivers is exactly the CDR
message. ``rclpy.serialization.serialize_message`` (Kilted wheels) returns 8
extra trailing bytes for messages with an empty float64 sequence (e.g. a
``JointState`` without velocities); ROS deserializers ignore them but
``rosbags``' ``deserialize_cdr`` rejects the size. Record from subscriptions,
as :class:`tendon_robot_sim.ros.recorder.BagRecorder` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_typestore, Stores

# The message definitions of ROS 2 Kilted, the distribution of the rclpy
# wheels this project runs on; a type hash that differs from the publisher's
# makes `ros2 bag play` refuse the topic.
DEFAULT_STORE = Stores.ROS2_KILTED
BAG_FORMAT_VERSION = 9


class BagError(ValueError):
    """A bag cannot be written as asked; the message says which topic or path."""


@dataclass(frozen=True)
class OfferedQos:
    """The QoS a topic's publisher offered, as ``ros2 bag play`` re-offers it."""

    reliability: str = 'reliable'     # 'reliable' | 'best_effort'
    durability: str = 'volatile'      # 'volatile' | 'transient_local'
    depth: int = 10                   # history depth (keep_last)

    def to_rosbags(self) -> Qos:
        try:
            reliability = QosReliability[self.reliability.upper()]
            durability = QosDurability[self.durability.upper()]
        except KeyError as error:
            raise BagError(f'offered QoS: unknown policy value {error.args[0].lower()!r}; '
                           'reliability is reliable|best_effort, durability is '
                           'volatile|transient_local') from None
        # Zero durations mean "not set" (infinite) in rosbag2's QoS metadata.
        zero = QosTime(sec=0, nsec=0)
        return Qos(history=QosHistory.KEEP_LAST, depth=self.depth, reliability=reliability,
                   durability=durability, deadline=zero, lifespan=zero,
                   liveliness=QosLiveliness.AUTOMATIC, liveliness_lease_duration=zero,
                   avoid_ros_namespace_conventions=False)


class BagWriter:
    """A rosbag2 MCAP bag of serialized messages; use as a context manager.

    Parameters
    ----------
    path : path
        Bag folder to create; it must not exist.
    store : rosbags.typesys.Stores
        Type store giving message definitions and type hashes.
    """

    def __init__(self, path: str | Path, store: Stores = DEFAULT_STORE):
        self.path = Path(path)
        if self.path.exists():
            raise BagError(f'{self.path}: exists already; a bag is written into a new folder')
        self.typestore = get_typestore(store)
        self._writer = Writer(self.path, version=BAG_FORMAT_VERSION,
                              storage_plugin=StoragePlugin.MCAP)
        self._connections = {}
        self.counts: dict[str, int] = {}

    def open(self) -> 'BagWriter':
        self._writer.open()
        return self

    def add_topic(self, topic: str, msgtype: str, qos: OfferedQos) -> None:
        """Register ``topic`` of type ``msgtype`` (``pkg/msg/Name``) before writing to it."""
        if topic in self._connections:
            raise BagError(f'topic {topic}: added twice')
        if msgtype not in self.typestore.fielddefs:
            raise BagError(f'topic {topic}: message type {msgtype!r} is not in the type store')
        self._connections[topic] = self._writer.add_connection(
            topic, msgtype, typestore=self.typestore, serialization_format='cdr',
            offered_qos_profiles=[qos.to_rosbags()])
        self.counts[topic] = 0

    def write(self, topic: str, timestamp_ns: int, data: bytes) -> None:
        """Store one serialized (CDR) message of ``topic`` received at ``timestamp_ns``."""
        try:
            connection = self._connections[topic]
        except KeyError:
            raise BagError(f'topic {topic}: not added (known: {sorted(self._connections)})') \
                from None
        self._writer.write(connection, timestamp_ns, data)
        self.counts[topic] += 1

    def close(self) -> None:
        """Finish the MCAP file and write ``metadata.yaml``."""
        self._writer.close()

    def __enter__(self) -> 'BagWriter':
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()
