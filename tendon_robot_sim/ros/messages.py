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
Conversions between simulator state (numpy, SI, base frame) and ROS messages.

The messages a node publishes many times a second can be updated in place (``reuse``): a
generated message class costs tens of microseconds to construct (a Marker about 60 us, with its
texture, mesh and UV fields; a colour 15 us), which at 50 Hz was most of the simulator's
publishing. rclpy copies a message when it publishes it, so the publisher may change it after.
"""

from functools import lru_cache
import math
from typing import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, TransformStamped
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Header
from tendon_robot_sim import counted
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, Marker as Shape,
                                               ModelState, Polyline, Pose as ModelPose)
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray


def time_msg(seconds: float) -> Time:
    """Return a ``builtin_interfaces/Time`` from seconds (>= 0)."""
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def _set_pose(msg: Pose, pose: ModelPose) -> None:
    """Write ``pose`` into ``msg`` in place."""
    p, q = pose.position, pose.orientation
    msg.position.x, msg.position.y, msg.position.z = float(p[0]), float(p[1]), float(p[2])
    o = msg.orientation
    o.x, o.y, o.z, o.w = float(q[0]), float(q[1]), float(q[2]), float(q[3])


def quaternion_msg(q: np.ndarray) -> Quaternion:
    """``Quaternion`` from ``[qx, qy, qz, qw]``."""
    return Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))


def point_msg(p: np.ndarray) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def wrench_from_msg(msg, base_frame: str, max_force: float,
                    max_torque: float) -> tuple[np.ndarray, np.ndarray]:
    """
    Tip force [N] and moment [N m] of a ``tip/wrench`` WrenchStamped, base frame.

    ``max_force`` [N] and ``max_torque`` [N m] bound their norms: the node parameters
    ``max_tip_force`` and ``max_tip_torque`` (ros.parameters.TIP_WRENCH_BOUND).

    Raises
    ------
    InputError
        Naming the field: a ``header.frame_id`` other than the base frame (empty
        means the base frame), a non-finite component, or a norm above its bound.

    """
    frame = msg.header.frame_id
    if frame not in ('', base_frame):
        raise InputError(f'header.frame_id: {frame!r} is not the base frame {base_frame!r}')
    wrench = msg.wrench
    loads = []
    for name, v, bound, unit in (('force', wrench.force, max_force, 'N'),
                                 ('torque', wrench.torque, max_torque, 'N m')):
        value = np.array([v.x, v.y, v.z])
        if not np.all(np.isfinite(value)):
            raise InputError(f'wrench.{name}: non-finite {value.tolist()}')
        norm = math.hypot(*value)    # inf past the largest double: above any bound too
        if norm > bound:
            # the parameter is named after the field: max_tip_force, max_tip_torque
            raise InputError(f'wrench.{name}: {norm:.4g} {unit} is more than max_tip_{name} '
                             f'({bound:g} {unit})')
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


def check_one_field(msg: JointState) -> None:
    """
    Refuse a setpoint or command that fills both ``effort`` and ``position``.

    A receiver would apply one and drop the other without a word; the hardware bridge refuses
    the same message, so the controllers do too. (The simulator takes ``effort`` first: its
    model of the measured tensions follows ``tendon/state``, which carries both.)
    """
    if len(msg.effort) > 0 and len(msg.position) > 0:
        raise InputError('effort/position: both filled; a setpoint carries exactly one of '
                         'effort (tension, N; bellows: Pa) and position (displacement, m; '
                         'motor angle, rad)')


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
            f'{field}: has {counted(len(values), "value")} for {counted(len(msg.name), "name")} '
            f'{list(msg.name)}')
    if len(set(msg.name)) != len(msg.name):
        duplicates = sorted({n for n in msg.name if list(msg.name).count(n) > 1})
        raise InputError(f'name: {duplicates} appear more than once')
    return dict(zip(msg.name, values))


def state_values(msg: JointState, names: Sequence[str], field: str,
                 quantity: str) -> np.ndarray:
    """
    Return one value of ``field`` per tendon of ``names`` from a ``tendon/state``, in that order.

    ``quantity`` names the values in errors ('displacement', 'tension').

    Raises
    ------
    InputError
        A state without names, one that lacks a tendon, or a non-finite value (besides the
        errors of :func:`joint_values`).

    """
    values = joint_values(msg, field, len(names))
    if not isinstance(values, dict):
        raise InputError('name: tendon/state must name its tendons')
    missing = [n for n in names if n not in values]
    if missing:
        raise InputError(f'name: no {quantity} for {missing}')
    result = np.array([values[n] for n in names])
    if not np.all(np.isfinite(result)):
        raise InputError(f'{field}: non-finite {quantity}')
    return result


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


def tip_pose_msg(tip: ModelPose, frame_id: str, stamp: Time,
                 reuse: PoseStamped | None = None) -> PoseStamped:
    """``tip/pose``: the tip frame in the base frame; ``reuse``: a message to update instead."""
    msg = reuse if reuse is not None else PoseStamped()
    msg.header = Header(stamp=stamp, frame_id=frame_id)
    _set_pose(msg.pose, tip)
    return msg


def transforms_msg(state: ModelState, base_frame: str, tip_frame: str, frame_prefix: str,
                   stamp: Time, reuse: TFMessage | None = None) -> TFMessage:
    """
    ``/tf``: base -> tip, and base -> ``<frame_prefix><i>`` for each numbered frame.

    ``reuse``: the message this returned for an earlier state, whose transforms are updated.
    """
    header = Header(stamp=stamp, frame_id=base_frame)
    poses = ((tip_frame, state.tip),
             *((f'{frame_prefix}{i}', pose) for i, pose in enumerate(state.frames)))
    old = reuse.transforms if reuse is not None and len(reuse.transforms) == len(poses) else None
    msg = reuse if old is not None else TFMessage(
        transforms=[TransformStamped() for _ in poses])
    for t, (child, pose) in zip(msg.transforms, poses):
        t.header = header
        t.child_frame_id = child
        p, q = pose.position, pose.orientation
        v, r = t.transform.translation, t.transform.rotation
        v.x, v.y, v.z = float(p[0]), float(p[1]), float(p[2])
        r.x, r.y, r.z, r.w = float(q[0]), float(q[1]), float(q[2]), float(q[3])
    return msg


def markers_msg(shapes: Sequence[Shape], frame_id: str, stamp: Time,
                reuse: MarkerArray | None = None) -> MarkerArray:
    """
    Build a ``backbone/markers`` message: one marker per shape, numbered within its namespace.

    Polyline -> LINE_STRIP, Cylinder -> CYLINDER, LineList -> LINE_LIST (per-point colours).
    ``reuse``: the message this returned for an earlier state; each of its markers of the
    type the shape at its place needs is updated instead of built.
    """
    header = Header(stamp=stamp, frame_id=frame_id)
    counts: dict[str, int] = {}
    old = reuse.markers if reuse is not None else ()
    markers = []
    for i, shape in enumerate(shapes):
        kind = (Marker.CYLINDER if isinstance(shape, Cylinder) else
                Marker.LINE_STRIP if isinstance(shape, Polyline) else Marker.LINE_LIST)
        if i < len(old) and old[i].type == kind:
            marker = old[i]     # what its type does not set is as built
        else:
            marker = Marker(type=kind, action=Marker.ADD)
            marker.pose.orientation.w = 1.0
        marker.header = header
        marker.ns = shape.ns
        marker.id = counts.get(shape.ns, 0)
        counts[shape.ns] = marker.id + 1
        if kind == Marker.CYLINDER:
            _set_pose(marker.pose, shape.pose)
            scale = marker.scale
            scale.x = scale.y = float(shape.diameter)
            scale.z = float(shape.height)
            marker.color = color_msg(shape.color)
        elif kind == Marker.LINE_STRIP:
            marker.scale.x = float(shape.width)
            marker.color = color_msg(shape.color)
            _set_points(marker, shape.points)
        else:
            marker.scale.x = float(shape.width)
            marker.color = color_msg((0.0, 0.0, 0.0, 1.0))
            _set_points(marker, shape.points)
            colors = _segment_colors(tuple(tuple(c) for c in shape.colors))
            if marker.colors is not colors:
                marker.colors = colors
        markers.append(marker)
    if reuse is None:
        return MarkerArray(markers=markers)
    reuse.markers = markers
    return reuse


def _set_points(marker: Marker, points: np.ndarray) -> None:
    """Write the columns of ``points`` (3, n) into ``marker.points``, in place if it has n."""
    values = points.T.tolist()
    if len(marker.points) != len(values):
        marker.points = [Point(x=x, y=y, z=z) for x, y, z in values]
        return
    for point, (x, y, z) in zip(marker.points, values):
        point.x, point.y, point.z = x, y, z


def color_msg(rgba) -> ColorRGBA:
    """``ColorRGBA`` of ``(r, g, b, a)``: one shared object per colour, not to be changed."""
    return _color(float(rgba[0]), float(rgba[1]), float(rgba[2]), float(rgba[3]))


@lru_cache(maxsize=256)
def _color(r: float, g: float, b: float, a: float) -> ColorRGBA:
    return ColorRGBA(r=r, g=g, b=b, a=a)


@lru_cache(maxsize=16)
def _segment_colors(colors: tuple) -> list[ColorRGBA]:
    """
    Return a LINE_LIST's ``colors`` (one per point) of one colour per segment: a shared list.

    The tendons' colours stay from state to state: a marker keeps the list (60 to 180 entries,
    each checked by the setter) and it is not built again. Not to be changed.
    """
    return [color_msg(c) for c in colors for _ in range(2)]
