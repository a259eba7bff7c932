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
Write and read rosbag2 bags (CDR messages) without ROS, with ``rosbags``.

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

Reading (:func:`read_messages`, :func:`read_raw`, :func:`bag_topics`) accepts
the bags of this project and those of ``ros2 bag record``: a bag folder
(``metadata.yaml`` with MCAP or sqlite3 ``.db3`` files) or a bare ``.mcap`` /
``.db3`` file. Message types come from the definitions stored in the bag, or
from :data:`DEFAULT_STORE` when a bag stores none.

Integrity: MCAP files written here get their CRC-32 checksums filled in, and every
MCAP file's non-zero checksums are verified before it is read (see
:mod:`tendon_robot_sim.experiment.mcap_crc` for what that does and does not cover); a
mismatch is a :class:`BagError`. A process verifies a file once while it is unchanged
(:func:`~tendon_robot_sim.experiment.mcap_crc.verify_once`): the second opening of a bag
in one command does not read all of it again.

Durability: :meth:`BagWriter.flush` puts every message written so far on disk, where a
killed process (SIGKILL, the OOM killer) or a power cut leaves it: the MCAP chunk being
filled is closed and written, the sqlite3 transaction committed (the database is in
write-ahead-log mode while it is written, every commit synced). A recorder flushes every
:data:`FLUSH_PERIOD`; the bag of a killed recorder has no ``metadata.yaml`` and is made
readable again by :func:`tendon_robot_sim.experiment.bag_recovery.recover_bag`
(``tendon-robot-sim reindex``).
"""

from __future__ import annotations

import contextlib
from contextlib import contextmanager
from dataclasses import dataclass
import os
from pathlib import Path
import shutil
from typing import Iterable, Iterator, Mapping, NamedTuple

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.typesys import get_typestore, Stores

from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.files.outputs import bag_clash, check_links, naming
from tendon_robot_sim.files.yaml_loader import read_yaml, YamlFileError

# The message definitions of ROS 2 Kilted, the distribution of the rclpy
# wheels this project runs on; a type hash that differs from the publisher's
# makes `ros2 bag play` refuse the topic.
DEFAULT_STORE = Stores.ROS2_KILTED
BAG_FORMAT_VERSION = 9
#: Longest time [s] a recorder holds received messages in memory only: what a kill can lose.
FLUSH_PERIOD = 1.0


class BagError(ValueError):
    """A bag cannot be written as asked or read; the message names the topic or file."""


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


# Storage formats of rosbag2, by the names `ros2 bag record --storage` uses.
STORAGE_PLUGINS = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}


class BagWriter:
    """
    A rosbag2 bag of serialized messages; use as a context manager.

    Parameters
    ----------
    path : path
        Bag folder to create; it must not exist.
    store : rosbags.typesys.Stores
        Type store giving message definitions and type hashes.
    storage : str
        ``'mcap'`` (the default of ``ros2 bag record`` since Iron) or ``'sqlite3'``.

    """

    def __init__(self, path: str | Path, store: Stores = DEFAULT_STORE, storage: str = 'mcap'):
        self.path = Path(path)
        if storage not in STORAGE_PLUGINS:
            raise BagError(f'{self.path}: unknown storage {storage!r}; use one of '
                           f'{", ".join(STORAGE_PLUGINS)}')
        if self.path.exists() or self.path.is_symlink():
            raise BagError(f'{self.path}: exists already; a bag is written into a new folder')
        if clash := bag_clash(self.path):
            raise BagError(clash)
        check_links(self.path.parent)
        self.typestore = get_typestore(store)
        self._writer = Writer(self.path, version=BAG_FORMAT_VERSION,
                              storage_plugin=STORAGE_PLUGINS[storage])
        self._connections = {}
        self.counts: dict[str, int] = {}
        self._folders_synced = False

    def open(self) -> 'BagWriter':  # noqa: A003 (named as rosbags' Writer.open)
        self._writer.open()
        if not self._mcap:
            # a log that survives a kill, synced on every commit (flush): see flush()
            self._writer.storage.conn.execute('PRAGMA journal_mode=WAL').fetchone()
            self._writer.storage.conn.execute('PRAGMA synchronous=FULL')
        return self

    @property
    def _mcap(self) -> bool:
        return isinstance(self._writer.storage, McapWriter)

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

    def flush(self) -> None:
        """
        Put every message written so far on disk, where a killed process leaves it.

        MCAP: the chunk being filled is closed (rosbags keeps it in memory until it holds
        1 MiB) and the file synced; sqlite3: the transaction is committed, which syncs the
        write-ahead log. What was flushed survives SIGKILL and a power cut, and
        :func:`~tendon_robot_sim.experiment.bag_recovery.recover_bag` reads it back. The
        first flush also syncs the new bag folder and the folder that holds it, so that after
        a power cut the files are found at all.
        """
        storage = self._writer.storage
        if self._mcap:
            if storage.chunk.msgs:
                storage.close_chunk()
            storage.bio.flush()
            os.fsync(storage.bio.fileno())
        else:
            storage.conn.commit()
        if not self._folders_synced:
            for folder in (self.path, self.path.parent):
                descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)
            self._folders_synced = True

    def close(self) -> None:
        """Finish the storage file, fill in its checksums and write ``metadata.yaml``."""
        if not self._mcap:
            # a closed bag is one file, as rosbag2 and every reader expect it
            self._writer.storage.conn.commit()
            self._writer.storage.conn.execute('PRAGMA journal_mode=DELETE').fetchone()
        self._writer.close()
        for mcap in self.path.glob('*.mcap'):
            mcap_crc.seal(mcap)

    def __enter__(self) -> 'BagWriter':
        return self.open()

    def __exit__(self, kind, value, traceback) -> None:
        """
        Close the bag; remove it if the block or the close failed (a bag written at once).

        A bag written in one block (an import, a synthetic experiment) that ends half-way
        is not the bag asked for: closed, it would look complete. The folder is this
        writer's own: it refuses one that exists. A recording, which keeps what it has,
        closes its writer itself.
        """
        if kind is None:
            try:
                self.close()
                return
            except BaseException as error:
                self._discard()
                raise naming(error, self.path) from None
        self._discard()
        named = naming(value, self.path)
        if named is not value:     # else the block's own error goes on as it was raised
            raise named from None

    def _discard(self) -> None:
        with contextlib.suppress(Exception):    # the error that brought us here is the news
            self._writer.close()
        shutil.rmtree(self.path, ignore_errors=True)


class BagMessages:
    """Serialized (CDR) messages of the experiment topics, from a rosbags type store."""

    def __init__(self, store):
        self.store = store
        self.types = store.types

    def _header(self, stamp_ns: int, frame_id: str):
        time = self.types['builtin_interfaces/msg/Time'](sec=stamp_ns // 10 ** 9,
                                                         nanosec=stamp_ns % 10 ** 9)
        return self.types['std_msgs/msg/Header'](stamp=time, frame_id=frame_id)

    def joint_state(self, stamp_ns: int, names, position=(), effort=()) -> bytes:
        """Return a JointState of ``names`` with ``position`` and/or ``effort`` (else empty)."""
        msg = self.types['sensor_msgs/msg/JointState'](
            header=self._header(stamp_ns, ''), name=list(names),
            position=np.asarray(position, dtype=float), velocity=np.zeros(0),
            effort=np.asarray(effort, dtype=float))
        return self.store.serialize_cdr(msg, 'sensor_msgs/msg/JointState')

    def point(self, stamp_ns: int, frame_id: str, point) -> bytes:
        msg = self.types['geometry_msgs/msg/PointStamped'](
            header=self._header(stamp_ns, frame_id),
            point=self.types['geometry_msgs/msg/Point'](
                x=float(point[0]), y=float(point[1]), z=float(point[2])))
        return self.store.serialize_cdr(msg, 'geometry_msgs/msg/PointStamped')

    def text(self, text: str) -> bytes:
        return self.store.serialize_cdr(self.types['std_msgs/msg/String'](data=text),
                                        'std_msgs/msg/String')

    def static_transform(self, stamp_ns: int, parent: str, child: str, translation) -> bytes:
        """Return a TFMessage of one transform: ``child`` at ``translation`` [m] in ``parent``."""
        types = self.types
        transform = types['geometry_msgs/msg/TransformStamped'](
            header=self._header(stamp_ns, parent), child_frame_id=child,
            transform=types['geometry_msgs/msg/Transform'](
                translation=types['geometry_msgs/msg/Vector3'](
                    x=float(translation[0]), y=float(translation[1]), z=float(translation[2])),
                rotation=types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
        return self.store.serialize_cdr(types['tf2_msgs/msg/TFMessage'](transforms=[transform]),
                                        'tf2_msgs/msg/TFMessage')


class RawMessage(NamedTuple):
    """One message of a bag as stored: CDR bytes of type ``msgtype``."""

    topic: str          # resolved name, e.g. '/tendon/state'
    msgtype: str        # e.g. 'sensor_msgs/msg/JointState'
    stamp_ns: int       # bag timestamp (receive time), ns
    data: bytes         # serialized message (CDR)


def _absolute(topic: str) -> str:
    return topic if topic.startswith('/') else '/' + topic


def check_storage_file(path: Path) -> None:
    """
    Raise BagError for a bag's storage file (``.mcap``, ``.db3``) that is no regular file.

    A folder so named was an errno message or an internal error, and a FIFO was waited on
    for ever, by the readers and by ``reindex`` alike.
    """
    if not path.is_file():
        raise BagError(f'{path}: not a regular file (a folder, device or pipe): move it away '
                       'and run this again')


@contextmanager
def _open_bag(path: str | Path) -> Iterator[AnyReader]:
    """Open ``path`` as an ``AnyReader``; any failure of rosbags becomes a BagError."""
    path = Path(path)
    if not path.exists():
        raise BagError(f'{path}: no such bag (file or folder)')
    if path.is_dir() and not (path / 'metadata.yaml').exists():
        raise BagError(f'{path}: not a rosbag2 bag folder: metadata.yaml is missing'
                       + (f' (its recorder was killed? {RECOVER} {path} recovers it)'
                          if any(path.glob('*.mcap')) or any(path.glob('*.db3')) else ''))
    if path.is_dir():
        try:    # rosbags reads it too; first by the package's rules (a key twice, ...)
            read_yaml(path / 'metadata.yaml')
        except YamlFileError as error:
            raise BagError(str(error)) from None
    for storage in (sorted(path.glob('*.mcap')) + sorted(path.glob('*.db3'))
                    if path.is_dir() else [path]):
        check_storage_file(storage)
    if path.is_file() and path.suffix not in ('.mcap', '.db3'):
        raise BagError(f'{path}: not a rosbag2 bag: a bag is a folder with metadata.yaml or '
                       'a .mcap or .db3 file')
    mcaps = sorted(path.glob('*.mcap')) if path.is_dir() else [path] * (path.suffix == '.mcap')
    for mcap in mcaps:
        try:
            mcap_crc.verify_once(mcap)
        except (mcap_crc.McapCrcError, OSError) as error:
            hint = f' ({RECOVER} {mcap.parent} recovers it)' if 'ends early' in str(error) \
                and path.is_dir() else ''
            raise BagError(f'{mcap}: {error}{hint}') from None
    try:
        reader = AnyReader([path], default_typestore=get_typestore(DEFAULT_STORE))
        reader.open()
    except Exception as error:   # rosbags raises many kinds on a damaged bag
        raise BagError(f'{path}: cannot open the bag ({_describe(error)})') from None
    try:
        yield reader
    finally:
        reader.close()


# The command that recovers the bag of a killed recorder (commands/reindex.py).
RECOVER = 'tendon-robot-sim reindex'
# What rosbags' terse messages mean for a user.
_HINTS = {
    'File end magic is invalid': 'the MCAP file ends early: truncated, or its recorder did '
                                 'not close it',
    'File magic is invalid': 'not an MCAP file',
    'database disk image is malformed': 'the sqlite3 file is damaged or truncated',
    'file is not a database': 'not an sqlite3 file',
}


def _describe(error: Exception) -> str:
    text = str(error).strip() or 'no details'
    hints = [hint for key, hint in _HINTS.items() if key in text]
    return f'{hints[0]}; {type(error).__name__}: {text}' if hints else \
        f'{type(error).__name__}: {text}'


def bag_topics(path: str | Path) -> dict[str, str]:
    """
    Return the topics of the bag at ``path`` and their message types.

    For example ``{'/tendon/state': 'sensor_msgs/msg/JointState'}``.
    """
    with _open_bag(path) as reader:
        return {connection.topic: connection.msgtype for connection in reader.connections}


def bag_span(path: str | Path) -> tuple[int, int]:
    """Return the bag stamps [ns] of the first and the last message of the bag at ``path``."""
    with _open_bag(path) as reader:
        if not reader.message_count:
            raise BagError(f'{path}: holds no messages')
        return reader.start_time, reader.end_time - 1    # rosbags' end is after the last


def topic_matches(topic: str, name: str) -> bool:
    """Tell whether bag topic ``topic`` is ``name`` (relative) in any namespace."""
    topic = topic.lstrip('/')
    return topic == name or topic.endswith('/' + name)


def is_recorded_as(topic: str, name: str) -> bool:
    """Tell whether bag topic ``topic`` is ``name``: absolute itself, relative in any namespace."""
    return topic == name if name.startswith('/') else topic_matches(topic, name)


def recorded_as(name: str, recorded: Iterable[str]) -> list[str]:
    """Return the topics of ``recorded`` that are ``name`` (:func:`is_recorded_as`)."""
    return [topic for topic in recorded if is_recorded_as(topic, name)]


def one_namespace(path: str | Path, name: str, recorded: Iterable[str]) -> list[str]:
    """
    Return the topic of ``recorded`` that is ``name`` (none or one), in whatever namespace.

    An experiment is one robot's: the same topic in two namespaces (two stacks on one graph)
    is refused rather than read as one series.
    """
    found = recorded_as(name, recorded)
    if len(found) > 1:
        raise BagError(f'{path}: holds {name} in {len(found)} namespaces '
                       f'({", ".join(sorted(found))}); '
                       "an experiment is one robot's")
    return found


def one_robot(path: str | Path, names: Iterable[str], recorded: Iterable[str]) -> list[str]:
    """
    Return the topics of ``recorded`` that are ``names``, each in one namespace at most.

    An experiment is one robot's: topics in two namespaces of which neither holds the other
    are two robots' (``/left_arm/tendon/setpoint`` beside ``/right_arm/tendon/state``, whose
    tensions were read as the left arm's) and are refused, naming both. A namespace may hold
    another: a tip sensor outside the stack's namespace (``/tip/measured`` beside
    ``/left_arm/tendon/setpoint``), a replay's ``/replay/tendon/setpoint`` beside
    ``/tip/measured``. Absolute names (``/tf_static``) belong to no namespace.
    """
    recorded = list(recorded)
    found = {name: one_namespace(path, name, recorded) for name in names}
    # each relative topic's namespace, '/' to '/.../', the shortest first
    spaces = sorted(((('/' + topic.lstrip('/'))[:-len(name)], topic)
                     for name, topics in found.items() if not name.startswith('/')
                     for topic in topics), key=lambda space: (len(space[0]), space))
    for (outer, first), (inner, second) in zip(spaces, spaces[1:]):
        if not inner.startswith(outer):
            raise BagError(f'{path}: holds {first} and {second}, in two namespaces of which '
                           "neither holds the other; an experiment is one robot's")
    return [topic for topics in found.values() for topic in topics]


def mistyped(recorded: Mapping[str, str], expected: Mapping[str, str]) -> dict[str, str]:
    """
    Return, per topic of ``expected`` that ``recorded`` holds with another type, why.

    Both map topic names to message types (``pkg/msg/Name``, as :func:`bag_topics` gives);
    a topic ``recorded`` lacks is not mistyped. A message of another type would only fail
    later, deep in whatever reads its fields.
    """
    return {topic: f'of type {recorded[topic]}, expected {msgtype}'
            for topic, msgtype in expected.items()
            if topic in recorded and recorded[topic] != msgtype}


def check_messages(path: str | Path, counts: Mapping[str, int], what: str) -> None:
    """
    Raise BagError unless ``counts`` (messages per topic read from the bag) holds a message.

    A bag of no message (a recording stopped before its first message, or of none of the
    topics wanted) has nothing to ``what`` (replay, play): every reader refuses it the same
    way rather than play nothing for ever.
    """
    if not any(counts.values()):
        raise BagError(f'{path}: holds no messages on {", ".join(counts) or "any topic"}: '
                       f'nothing to {what}')


def offered_qos_of(path: str | Path) -> dict[str, OfferedQos]:
    """
    Return the first offered QoS profile recorded for each topic of the bag.

    Topics recorded without one are left out.
    """
    result = {}
    with _open_bag(path) as reader:
        for connection in reader.connections:
            profiles = getattr(connection.ext, 'offered_qos_profiles', None) or []
            if profiles and connection.topic not in result:
                qos = profiles[0]
                result[connection.topic] = OfferedQos(
                    reliability=qos.reliability.name.lower(),
                    durability=qos.durability.name.lower(), depth=max(int(qos.depth), 1))
    return result


def _stored(reader: AnyReader, path: Path, topics: Iterable[str] | None,
            start: int | None = None, stop: int | None = None):
    """Yield (connection, stamp_ns, data) of ``reader`` in time order, failures as BagError."""
    wanted = None if topics is None else {_absolute(t) for t in topics}
    connections = [c for c in reader.connections if wanted is None or c.topic in wanted]
    if not connections:
        return
    messages = reader.messages(connections=connections, start=start, stop=stop)
    while True:
        try:
            connection, stamp, data = next(messages)
        except StopIteration:
            return
        except Exception as error:   # damaged chunk, truncated file, bad index ...
            raise BagError(f'{path}: cannot read the messages ({_describe(error)})') from None
        yield connection, stamp, data


def read_raw(path: str | Path, topics: Iterable[str] | None = None, start: int | None = None,
             stop: int | None = None) -> Iterator[RawMessage]:
    """
    Yield the stored messages of the bag at ``path`` in time order, not deserialized.

    ``topics``: names to keep, with or without the leading ``/`` (default: all);
    a name the bag lacks yields nothing. ``start``, ``stop``: only the messages stamped in
    [start, stop) [ns] (default: all). Raises :class:`BagError` naming the file
    and the problem for a missing, corrupt or truncated bag.
    """
    with _open_bag(path) as reader:
        for connection, stamp, data in _stored(reader, Path(path), topics, start, stop):
            yield RawMessage(connection.topic, connection.msgtype, stamp, bytes(data))


def read_messages(path: str | Path, topics: Iterable[str] | None = None):
    """
    Yield ``(topic, stamp_ns, msg)`` in time order from a rosbag2 bag.

    ``path`` is a bag folder (``metadata.yaml`` with ``.mcap`` or ``.db3`` files) or a
    bare ``.mcap`` / ``.db3`` file; ``msg`` is deserialized by rosbags, with the
    attributes of the ROS message (``msg.effort``, ``msg.point.x``,
    ``msg.header.stamp.sec`` ...; sequences of numbers are numpy arrays).
    ``topics``: names to keep, with or without the leading ``/`` (default: all);
    a name the bag lacks yields nothing. Raises :class:`BagError` naming the file
    and the problem for a missing, corrupt or truncated bag, or a message that
    does not deserialize.
    """
    with _open_bag(path) as reader:
        for connection, stamp, data in _stored(reader, Path(path), topics):
            try:
                msg = reader.deserialize(data, connection.msgtype)
            except Exception as error:
                raise BagError(f'{path}: message of {connection.topic} at {stamp} ns does not '
                               f'deserialize as {connection.msgtype} ({_describe(error)})') \
                    from None
            yield connection.topic, stamp, msg
