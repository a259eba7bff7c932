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
A node that publishes a bag's messages again with their recorded timing.

The stored CDR bytes are published as they are (``Publisher.publish(bytes)``), so
nothing is deserialized; rclpy still needs each topic's message class for its
type support. A bag is data from anywhere, so its type names never pick what
Python imports: a type is resolved only if an installed ROS interface package
declares it in the ament index (``share/ament_index/resource_index/
rosidl_interfaces/<package>`` under ``AMENT_PREFIX_PATH`` or this Python's prefix),
and only from that package's installed module; any other type is reported and
its topic skipped. Each topic is offered with the QoS of
:mod:`tendon_robot_sim.ros.topics`, else the QoS recorded in the bag, else
RELIABLE depth 10. Messages keep their recorded header stamps, as with
``ros2 bag play``.

Timing: message ``i`` is due ``(stamp_i - stamp_0) / rate`` seconds after the
start of the pass; :meth:`BagPlayer.play` sleeps until then and publishes. A
player publishes from the calling thread and needs no spinning.

:func:`setpoint_forms` reads what the recorded setpoints give, not their values (names,
and how many values in which fields), for a replay into simulation to check the robot
against before it starts.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
import re
import sys
import time
from typing import Callable, Iterable, Mapping, NamedTuple

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from tendon_robot_sim.experiment.bag import (bag_topics, BagError, is_recorded_as,
                                             offered_qos_of, read_raw, recorded_as)
from tendon_robot_sim.ros import topics as stack_topics
from tendon_robot_sim.ros.cdr import CdrError, joint_state_form
from tendon_robot_sim.ros.topics import COMMAND_QOS, find_topic

# Longest sleep between two looks at ``stop``.
POLL = 0.05
# What the simulator node publishes: in a replay into simulation these come from the
# simulation, not from the bag.
SIMULATOR_OUTPUTS = tuple(topic.name for topic in (
    stack_topics.TENDON_STATE, stack_topics.TIP_POSE, stack_topics.BACKBONE_MARKERS,
    stack_topics.TF, stack_topics.CLOCK))


# ROS package and message names (REP 144 and the rosidl naming rules).
_MSGTYPE = re.compile(r'([a-z][a-z0-9_]*)/msg/([A-Z][A-Za-z0-9]*)')


def ament_prefixes() -> list[Path]:
    """Install prefixes searched for interface packages: AMENT_PREFIX_PATH, then sys.prefix."""
    paths = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    return [Path(p) for p in dict.fromkeys(paths + [sys.prefix])]


def message_class(msgtype: str) -> type:
    """
    Return the rclpy message class of ``pkg/msg/Name`` of an installed interface package.

    Raises
    ------
    ImportError
        If ``msgtype`` is not a message type that an installed ROS interface package
        declares in the ament index; nothing is imported then.

    """
    match = _MSGTYPE.fullmatch(msgtype)
    if match is None:
        raise ImportError(f'message type {msgtype!r}: not a ROS message type name '
                          '(package/msg/Name)')
    package, name = match.groups()
    for prefix in ament_prefixes():
        index = prefix / 'share' / 'ament_index' / 'resource_index' / 'rosidl_interfaces'
        try:
            declared = (index / package).read_text().split()
        except OSError:
            continue
        if f'msg/{name}.msg' in declared or f'msg/{name}.idl' in declared:
            return _installed_class(package, name, msgtype)
    raise ImportError(f'message type {msgtype}: no installed ROS interface package declares '
                      'it (ament index); not replayed')


def _installed_class(package: str, name: str, msgtype: str) -> type:
    """Import ``package.msg.name`` only from an installed location, never the working folder."""
    spec = importlib.util.find_spec(package)
    origin = None if spec is None or spec.origin is None else Path(spec.origin).resolve()
    if origin is None or not any(origin.is_relative_to(p.resolve()) for p in ament_prefixes()):
        raise ImportError(f'message type {msgtype}: package {package} is not imported from an '
                          f'install prefix ({origin}); not replayed')
    try:
        return getattr(importlib.import_module(f'{package}.msg'), name)
    except (ImportError, AttributeError) as error:
        raise ImportError(f'message type {msgtype}: declared but not importable ({error})') \
            from None


class BagPlayer(Node):
    """
    Publishers for the topics of the bag at ``path``, and :meth:`play` to publish them.

    ``topics``: names to keep, with or without the leading ``/``; default all; ``exclude``:
    names not to publish (a relative one in any namespace); ``remap``: recorded name -> name
    to publish on (:func:`remapped`); ``recorded``: the bag's topics and types, if read
    already (:func:`~tendon_robot_sim.experiment.bag.bag_topics`).

    Raises :class:`~tendon_robot_sim.experiment.bag.BagError` for an unreadable bag, a
    topic the bag does not hold, or a bag with nothing that can be published.
    """

    def __init__(self, path: str | Path, topics: Iterable[str] | None = None,
                 rate: float = 1.0, node_name: str = 'bag_player',
                 exclude: Iterable[str] = (), remap: dict[str, str] | None = None,
                 recorded: Mapping[str, str] | None = None, **kwargs):
        if not rate > 0.0 or rate == float('inf'):
            raise BagError(f'rate: must be a finite number > 0, got {rate}')
        self.path = Path(path)
        self.rate = rate
        recorded = dict(bag_topics(self.path) if recorded is None else recorded)
        if topics is not None:
            wanted = ['/' + name.lstrip('/') for name in topics]
            missing = [name for name in wanted if name not in recorded]
            if missing:
                raise BagError(f'{self.path}: no topic {", ".join(missing)} in the bag; it '
                               f'holds {", ".join(sorted(recorded))}')
            recorded = {name: recorded[name] for name in wanted}
        excluded = {topic for name in exclude for topic in recorded_as(name, recorded)}
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
        self.publishers_by_topic = {}   # by the recorded name
        for topic, msg_class in self.classes.items():
            self.publishers_by_topic[topic] = self.create_publisher(
                msg_class, remapped(topic, remap or {}), self._qos(topic, offered.get(topic)))
        for topic, why in self.skipped.items():
            self.get_logger().warning(f'not replaying {topic}: {why}')
        self.counts = dict.fromkeys(self.classes, 0)

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

    def subscribed_nodes(self, topic: str) -> list[str]:
        """Full names of the nodes that subscribe to what is published for recorded ``topic``."""
        name = self.publishers_by_topic[topic].topic_name
        return [f'{info.node_namespace.rstrip("/")}/{info.node_name}'
                for info in self.get_subscriptions_info_by_topic(name)]

    def play(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """
        Publish one pass through the bag with the recorded spacing divided by ``rate``.

        False if ``stop()`` became true before the end.
        """
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

    def wait_for_delivery(self, timeout: float) -> list[str]:
        """
        Wait up to ``timeout`` [s] for every matched reliable subscriber to acknowledge.

        A process that ends right after its last publish can take the messages not yet
        delivered (a loaded machine, a resend) with it. Returns the topics still waiting.
        """
        end = time.monotonic() + timeout
        return [topic for topic, publisher in self.publishers_by_topic.items()
                if not publisher.wait_for_all_acked(
                    Duration(nanoseconds=int(max(end - time.monotonic(), 0.0) * 1e9)))]


def remapped(topic: str, remap: Mapping[str, str]) -> str:
    """
    Return the name recorded ``topic`` is published on, by ``remap`` (recorded -> published).

    A relative name of ``remap`` is the topic in any namespace, as the experiment readers
    take it, and a relative name it maps to lands in that namespace: a stack launched in
    ``left_arm`` records ``/left_arm/tendon/setpoint``, which ``{'tendon/setpoint':
    'replay/tendon/setpoint'}`` publishes on ``/left_arm/replay/tendon/setpoint``, away from
    that stack's hardware bridge as the same bag without a namespace is. Absolute names are
    themselves.
    """
    for name, target in remap.items():
        if is_recorded_as(topic, name):
            namespace = '/' if name.startswith('/') else topic[:len(topic) - len(name)]
            return target if target.startswith('/') else namespace + target
    return topic


class SetpointForm(NamedTuple):
    """What a setpoint gives, not its values: :func:`tendon_robot_sim.ros.cdr.joint_state_form`."""

    names: tuple[str, ...]
    sizes: tuple[tuple[str, int], ...]    # (field, number of values) of those holding any


def setpoint_forms(path: str | Path, topic: str) -> dict[SetpointForm, int]:
    """
    Return the forms of the ``sensor_msgs/JointState`` messages of ``topic`` in the bag.

    Each with its number of messages, in the order the forms first appear.
    """
    forms: dict[SetpointForm, int] = {}
    for message in read_raw(path, [topic]):
        try:
            form = SetpointForm(*joint_state_form(message.data))
        except CdrError as error:
            raise BagError(f'{path}: message of {message.topic} at {message.stamp_ns} ns does '
                           f'not deserialize as {message.msgtype} ({error})') from None
        forms[form] = forms.get(form, 0) + 1
    return forms
