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

"""Conversions between simulator state (numpy, SI, base frame) and ROS messages."""

from typing import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, TransformStamped, Vector3
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Header
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, LineList, Marker as Shape,
                                               ModelState, Polyline, Pose as ModelPose)
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray


def time_msg(seconds: float) -> Time:
    """Return a ``builtin_interfaces/Time`` from seconds (>= 0)."""
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def quaternion_msg(q: np.ndarray) -> Quaternion:
    """``Quaternion`` from ``[qx, qy, qz, qw]``."""
    return Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))


def point_msg(p: np.ndarray) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def wrench_from_msg(msg, base_frame: str) -> tuple[np.ndarray, np.ndarray]:
    """
    Tip force [N] and moment [N m] of a ``tip/wrench`` WrenchStamped, base frame.

    Raises
    ------
    InputError
        Naming the field: a ``header.frame_id`` other than the base frame (empty
        means the base frame) or a non-finite component.

    """
    frame = msg.header.frame_id
    if frame not in ('', base_frame):
        raise InputError(f'header.frame_id: {frame!r} is not the base frame {base_frame!r}')
    wrench = msg.wrench
    loads = []
    for name, v in (('force', wrench.force), ('torque', wrench.torque)):
        value = np.array([v.x, v.y, v.z])
        if not np.all(np.isfinite(value)):
            raise InputError(f'wrench.{name}: non-finite {value.tolist()}')
        loads.append(value)
    return loads[0], loads[1]


def tensions_from_joint_state(msg: JointState, n_tendons: int) -> dict[str, float] | list[float]:
    """
    Tensions (N) carried by the ``effort`` field of a tension command or setpoint.

    With names: a mapping ``{name: N}`` (the receiver checks names and values).
    Without names: the efforts in tendon order (the receiver checks the count).

    Raises
    ------
    InputError
        More names or values than the robot's ``n_tendons`` (checked before anything
        else, so a huge message costs nothing), ``effort`` and ``name`` disagree in
        length, or a name appears twice.

    """
    return joint_values(msg, 'effort', n_tendons)


def displacements_from_joint_state(msg: JointState,
                                   n_tendons: int) -> dict[str, float] | list[float]:
    """
    Return the displacements carried by the ``position`` field of a displacement setpoint.

    Displacements in m, pulled in past the base; like :func:`tensions_from_joint_state`.
    """
    return joint_values(msg, 'position', n_tendons)


def joint_values(msg: JointState, field: str, count: int,
                 noun: str = 'tendons') -> dict[str, float] | list[float]:
    """
    Return the values of ``field`` of a setpoint for ``count`` inputs (``noun``).

    A mapping {name: value} when the message has names, else the list; see
    :func:`tensions_from_joint_state`.
    """
    raw = getattr(msg, field)
    for name, items in (('name', msg.name), (field, raw)):
        if len(items) > count:
            raise InputError(f'{name}: has {len(items)} entries; the robot has {count} {noun}')
    values = [float(v) for v in raw]
    if not msg.name:
        return values
    if len(values) != len(msg.name):
        raise InputError(
            f'{field}: has {len(values)} values for {len(msg.name)} names {list(msg.name)}')
    if len(set(msg.name)) != len(msg.name):
        duplicates = sorted({n for n in msg.name if list(msg.name).count(n) > 1})
        raise InputError(f'name: {duplicates} appear more than once')
    return dict(zip(msg.name, values))


def joint_state_msg(names: Sequence[str], position: np.ndarray, velocity: np.ndarray,
                    effort: np.ndarray, stamp: Time) -> JointState:
    """
    Build a ``tendon/state`` message.

    Per input the position (tendon displacement [m], motor angle [rad]), velocity and effort
    (tension [N]; empty when the model has none).
    """
    return JointState(header=Header(stamp=stamp), name=list(names),
                      position=position.tolist(), velocity=velocity.tolist(),
                      effort=effort.tolist())


def pose_msg(pose: ModelPose) -> Pose:
    return Pose(position=point_msg(pose.position), orientation=quaternion_msg(pose.orientation))


def tip_pose_msg(tip: ModelPose, frame_id: str, stamp: Time) -> PoseStamped:
    """``tip/pose``: the tip frame in the base frame."""
    return PoseStamped(header=Header(stamp=stamp, frame_id=frame_id), pose=pose_msg(tip))


def transforms_msg(state: ModelState, base_frame: str, tip_frame: str, frame_prefix: str,
                   stamp: Time) -> TFMessage:
    """``/tf``: base -> tip, and base -> ``<frame_prefix><i>`` for each numbered frame."""
    def transform(child: str, pose: ModelPose):
        t = TransformStamped(header=Header(stamp=stamp, frame_id=base_frame),
                             child_frame_id=child)
        p = pose.position
        t.transform.translation = Vector3(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        t.transform.rotation = quaternion_msg(pose.orientation)
        return t

    return TFMessage(transforms=[transform(tip_frame, state.tip)] + [
        transform(f'{frame_prefix}{i}', pose) for i, pose in enumerate(state.frames)])


def markers_msg(shapes: Sequence[Shape], frame_id: str, stamp: Time) -> MarkerArray:
    """
    Build a ``backbone/markers`` message: one marker per shape, numbered within its namespace.

    Polyline -> LINE_STRIP, Cylinder -> CYLINDER, LineList -> LINE_LIST (per-point colours).
    """
    header = Header(stamp=stamp, frame_id=frame_id)
    counts: dict[str, int] = {}
    markers = []
    for shape in shapes:
        marker = Marker(header=header, ns=shape.ns, id=counts.get(shape.ns, 0),
                        action=Marker.ADD)
        counts[shape.ns] = marker.id + 1
        marker.pose.orientation.w = 1.0
        if isinstance(shape, Cylinder):
            marker.type = Marker.CYLINDER
            marker.pose = pose_msg(shape.pose)
            marker.scale = Vector3(x=shape.diameter, y=shape.diameter, z=shape.height)
            marker.color = color_msg(shape.color)
        elif isinstance(shape, Polyline):
            marker.type = Marker.LINE_STRIP
            marker.scale.x = shape.width
            marker.color = color_msg(shape.color)
            marker.points = [point_msg(p) for p in shape.points.T]
        elif isinstance(shape, LineList):
            marker.type = Marker.LINE_LIST
            marker.scale.x = shape.width
            marker.color = ColorRGBA(a=1.0)
            marker.points = [point_msg(p) for p in shape.points.T]
            marker.colors = [color_msg(c) for c in shape.colors for _ in range(2)]
        markers.append(marker)
    return MarkerArray(markers=markers)


def color_msg(rgba) -> ColorRGBA:
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))
