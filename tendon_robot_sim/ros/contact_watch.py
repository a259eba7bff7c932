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
A node that commands tensions and reads the contacts back (``demo --world``).

It publishes ``tendon/command/tension`` and keeps the latest ``tendon/state`` and the contacts
of the latest instant whose arrows (``contact/markers``) and wrenches (``contact/wrench``) have
all arrived: pairs matched by stamp and order, as docs/ros_interface.md describes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rclpy.node import Node

from tendon_robot_sim.ros import topics

ADD = 0    # visualization_msgs/Marker.ADD


@dataclass(frozen=True)
class SeenContact:
    """One contact as the topics carry it: obstacle, point [m], force on the robot [N]."""

    obstacle: str
    point: np.ndarray
    force: np.ndarray


class ContactWatcher(Node):
    """Commands tensions; keeps the latest tendon state and the latest complete contacts."""

    def __init__(self, **kwargs):
        super().__init__('contact_watcher', **kwargs)
        self.command_pub = self.create_publisher(
            topics.TENDON_COMMAND.msg_type, topics.TENDON_COMMAND.name, topics.TENDON_COMMAND.qos)
        self.state = None
        self._arrows = []          # the latest contact/markers' arrows
        self._wrenches = []        # wrenches of the arrows' stamp
        self.contacts: list[SeenContact] | None = None   # None: no complete instant yet
        self.contacts_stamp = None   # their stamp (None: no contact)
        self.create_subscription(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                 self._on_state, topics.TENDON_STATE.subscription_qos)
        self.create_subscription(topics.CONTACT_MARKERS.msg_type, topics.CONTACT_MARKERS.name,
                                 self._on_arrows, topics.CONTACT_MARKERS.subscription_qos)
        self.create_subscription(topics.CONTACT_WRENCH.msg_type, topics.CONTACT_WRENCH.name,
                                 self._on_wrench, topics.CONTACT_WRENCH.subscription_qos)

    def command(self, tensions: dict[str, float]) -> None:
        self.command_pub.publish(topics.TENDON_COMMAND.msg_type(
            name=list(tensions), effort=[float(v) for v in tensions.values()]))

    def applied(self, tensions: dict[str, float]) -> bool:
        """Whether the simulator's latest ``tendon/state`` carries ``tensions`` [N]."""
        if self.state is None:
            return False
        effort = dict(zip(self.state.name, self.state.effort))
        return all(abs(effort.get(name, np.nan) - value) <= 1e-9
                   for name, value in tensions.items())

    def _on_state(self, msg) -> None:
        self.state = msg

    def _on_arrows(self, msg) -> None:
        arrows = [m for m in msg.markers if m.action == ADD]
        self._arrows = arrows
        if not arrows:     # nothing touches
            self.contacts, self.contacts_stamp = [], None
            return
        stamp = arrows[0].header.stamp if arrows else None
        self._wrenches = [w for w in self._wrenches if w.header.stamp == stamp]
        self._complete()

    def _on_wrench(self, msg) -> None:
        self._wrenches.append(msg)
        self._complete()

    def _complete(self) -> None:
        if not self._arrows or len(self._wrenches) != len(self._arrows) or \
                any(w.header.stamp != self._arrows[0].header.stamp for w in self._wrenches):
            return
        self.contacts_stamp = self._arrows[0].header.stamp
        self.contacts = [
            SeenContact(arrow.ns, np.array([arrow.points[0].x, arrow.points[0].y,
                                            arrow.points[0].z]),
                        np.array([w.wrench.force.x, w.wrench.force.y, w.wrench.force.z]))
            for arrow, w in zip(self._arrows, self._wrenches)]
