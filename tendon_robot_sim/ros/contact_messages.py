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
The world and its contacts as ROS messages: world/markers, contact/markers, contact/wrench.

Everything in the robot's world frame (its base frame, REP 103), SI units. Obstacles: one
namespace per obstacle (its name), so that RViz lists and hides each; contacts: one ARROW per
contact patch, in the namespace of the obstacle it touches, from the surface point along the
force on the robot, ``scale`` m per N (the simulator's ``contact_arrow_scale``). A contact's
``WrenchStamped`` gives the force on the robot [N] and its moment about the world frame's
origin, p x F [N m] (what a wrench in that frame means: the wrenches of one instant add up to
the obstacles' total wrench on the robot); the contact point is the arrow's start.
"""

from __future__ import annotations

from typing import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Vector3, Wrench, WrenchStamped
import numpy as np
from std_msgs.msg import Header
from tendon_robot_sim.models.contact.world import Obstacle, World
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.ros.messages import color_msg, point_msg, quaternion_msg
from visualization_msgs.msg import Marker, MarkerArray

OBSTACLE_COLOR = (0.55, 0.6, 0.7, 0.6)     # translucent: the robot behind stays visible
CONTACT_COLOR = (1.0, 0.0, 1.0, 1.0)    # magenta: no tendon's colour (tab10)
PLANE_SIZE = 1.0          # m: side of the square drawn for an (infinite) plane
PLANE_THICKNESS = 0.001   # m: drawn below the plane's surface
ARROW_SHAFT = 0.002       # m: shaft diameter; the head is twice as wide, 4 shafts long
MIN_ARROW = 0.005         # m: an arrow never shorter (a light touch still shows)


def world_markers_msg(world: World, frame_id: str, stamp: Time) -> MarkerArray:
    """
    Build ``world/markers``: the obstacles of ``world`` in ``frame_id``.

    Plane: a thin CUBE, ``PLANE_SIZE`` square, its top face on the plane; sphere: SPHERE;
    cylinder: CYLINDER (a capsule adds a SPHERE at each end); box: CUBE; mesh: TRIANGLE_LIST
    of its posed triangles.
    """
    header = Header(stamp=stamp, frame_id=frame_id)
    markers = []
    for obstacle in world.obstacles:
        markers += _obstacle_markers(obstacle, header)
    return MarkerArray(markers=markers)


def _obstacle_markers(o: Obstacle, header: Header) -> list[Marker]:
    def marker(kind: int, position, size, index: int = 0) -> Marker:
        m = Marker(header=header, ns=o.name, id=index, type=kind, action=Marker.ADD,
                   color=color_msg(OBSTACLE_COLOR))
        m.pose.position = point_msg(position)
        m.pose.orientation = quaternion_msg(rotation_to_quaternion(o.rotation))
        m.scale = Vector3(x=float(size[0]), y=float(size[1]), z=float(size[2]))
        return m

    if o.shape == 'plane':
        normal = o.rotation[:, 2]
        return [marker(Marker.CUBE, o.position - 0.5 * PLANE_THICKNESS * normal,
                       (PLANE_SIZE, PLANE_SIZE, PLANE_THICKNESS))]
    if o.shape == 'sphere':
        return [marker(Marker.SPHERE, o.position, [2.0 * o.dims[0]] * 3)]
    if o.shape == 'cylinder':
        radius, half = o.dims[0], o.dims[1]
        found = [marker(Marker.CYLINDER, o.position, (2 * radius, 2 * radius, 2 * half))]
        if o.capsule:
            axis = o.rotation[:, 2]
            found += [marker(Marker.SPHERE, o.position + sign * half * axis, [2 * radius] * 3,
                             index) for index, sign in ((1, -1.0), (2, 1.0))]
        return found
    if o.shape == 'box':
        return [marker(Marker.CUBE, o.position, 2.0 * o.dims)]
    mesh = marker(Marker.TRIANGLE_LIST, np.zeros(3), (1.0, 1.0, 1.0))
    mesh.pose.orientation.x = mesh.pose.orientation.y = mesh.pose.orientation.z = 0.0
    mesh.pose.orientation.w = 1.0
    corners = o.triangles.reshape(-1, 3) @ o.rotation.T + o.position
    mesh.points = [point_msg(p) for p in corners]
    return [mesh]


def contact_markers_msg(contacts: Sequence, shown: set, frame_id: str, stamp: Time,
                        scale: float) -> tuple[MarkerArray, set]:
    """
    Build ``contact/markers``: one ARROW per contact; DELETE for the arrows of ``shown`` gone.

    An arrow is ``scale`` [m/N] times the force long, at least ``MIN_ARROW``.

    ``contacts``: :class:`~tendon_robot_sim.models.contact.report.ContactPoint` items; ``shown``
    the (namespace, id) of the arrows published last. Returns the message and the keys it
    shows. Arrow i of an obstacle is the obstacle's i-th contact along the rod.
    """
    header = Header(stamp=stamp, frame_id=frame_id)
    markers, keys, counts = [], set(), {}
    for contact in contacts:
        index = counts[contact.obstacle] = counts.get(contact.obstacle, -1) + 1
        force = np.asarray(contact.force, dtype=float)
        magnitude = float(np.linalg.norm(force))
        length = max(MIN_ARROW, scale * magnitude)
        direction = force / magnitude if magnitude > 0.0 else np.asarray(contact.normal)
        arrow = Marker(header=header, ns=contact.obstacle, id=index, type=Marker.ARROW,
                       action=Marker.ADD, color=color_msg(CONTACT_COLOR),
                       scale=Vector3(x=ARROW_SHAFT, y=2 * ARROW_SHAFT, z=4 * ARROW_SHAFT))
        arrow.pose.orientation.w = 1.0
        start = np.asarray(contact.point, dtype=float)
        arrow.points = [point_msg(start), point_msg(start + length * direction)]
        markers.append(arrow)
        keys.add((contact.obstacle, index))
    for ns, index in sorted(shown - keys):
        markers.append(Marker(header=header, ns=ns, id=index, action=Marker.DELETE))
    return MarkerArray(markers=markers), keys


def contact_wrench_msgs(contacts: Sequence, frame_id: str, stamp: Time) -> list[WrenchStamped]:
    """
    Build the ``contact/wrench`` messages of one instant: one per contact, in the arrows' order.

    Force on the robot [N] and its moment about the origin of ``frame_id``, p x F [N m].
    """
    header = Header(stamp=stamp, frame_id=frame_id)
    found = []
    for contact in contacts:
        force = np.asarray(contact.force, dtype=float)
        moment = np.cross(np.asarray(contact.point, dtype=float), force)
        found.append(WrenchStamped(header=header, wrench=Wrench(
            force=Vector3(x=float(force[0]), y=float(force[1]), z=float(force[2])),
            torque=Vector3(x=float(moment[0]), y=float(moment[1]), z=float(moment[2])))))
    return found
