"""Conversions between simulator state (numpy, SI, base frame) and ROS messages."""

from typing import Protocol, Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, TransformStamped, Vector3
import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, Header
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from tendon_robot_sim.core.robot import Robot
from tendon_robot_sim.core.simulator import InputError

# Tendon colours in RViz, cycled by tendon index (matplotlib tab10, RGB).
TENDON_COLORS = ((0.12, 0.47, 0.71), (1.0, 0.50, 0.05), (0.17, 0.63, 0.17),
                 (0.84, 0.15, 0.16), (0.58, 0.40, 0.74), (0.55, 0.34, 0.29))


def time_msg(seconds: float) -> Time:
    """A ``builtin_interfaces/Time`` from seconds (>= 0)."""
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def quaternion_msg(q: np.ndarray) -> Quaternion:
    """``Quaternion`` from ``[qx, qy, qz, qw]``."""
    return Quaternion(x=float(q[0]), y=float(q[1]), z=float(q[2]), w=float(q[3]))


def point_msg(p: np.ndarray) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


class RobotShape(Protocol):
    """The robot state the messages are built from (base frame, m).

    :class:`~tendon_robot_sim.core.simulator.SimState` (dynamic model) and
    :class:`~tendon_robot_sim.core.statics.StaticsResult` (static equilibrium) both
    provide it under these names.
    """

    tip_position: np.ndarray            # (3,)
    tip_orientation: np.ndarray         # (4,) [qx, qy, qz, qw]
    centerline: np.ndarray              # (3, n) backbone points
    vertebra_positions: np.ndarray      # (3, k)
    vertebra_orientations: np.ndarray   # (k, 4) [qx, qy, qz, qw]
    tendon_paths: tuple                 # per tendon (3, j): base hole, vertebra holes


def wrench_from_msg(msg, base_frame: str) -> tuple[np.ndarray, np.ndarray]:
    """Tip force [N] and moment [N m] of a ``tip/wrench`` WrenchStamped, base frame.

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
    """Tensions (N) carried by the ``effort`` field of a tension command or setpoint.

    With names: a mapping ``{name: N}`` (the receiver checks names and values).
    Without names: the efforts in tendon order (the receiver checks the count).

    Raises
    ------
    InputError
        More names or values than the robot's ``n_tendons`` (checked before anything
        else, so a huge message costs nothing), ``effort`` and ``name`` disagree in
        length, or a name appears twice.
    """
    return _tendon_values(msg, 'effort', n_tendons)


def displacements_from_joint_state(msg: JointState,
                                   n_tendons: int) -> dict[str, float] | list[float]:
    """Displacements (m, pulled in past the base) carried by the ``position`` field of a
    displacement setpoint; like :func:`tensions_from_joint_state`."""
    return _tendon_values(msg, 'position', n_tendons)


def updated_command(previous: np.ndarray, values: dict[str, float] | list[float], robot: Robot,
                    field: str, quantity: str) -> np.ndarray:
    """``previous`` (one value per tendon) with ``values`` applied, as the controllers take them.

    A mapping changes only the tendons it names; an unnamed list must give every tendon.

    Raises
    ------
    InputError
        An unknown name, a list of the wrong length, or a non-finite value; the
        message names ``field`` (``effort`` or ``position``) and the ``quantity``.
    """
    command = np.array(previous, dtype=float)
    if isinstance(values, dict):
        for name, value in values.items():
            try:
                command[robot.tendon_index(name)] = value
            except KeyError as error:
                raise InputError(f'name: {error.args[0]}') from None
    elif len(values) != len(command):
        raise InputError(f'{field}: has {len(values)} values without names; give one per '
                         f'tendon {robot.tendon_names} or name them')
    else:
        command[:] = values
    bad = [n for n, c in zip(robot.tendon_names, command) if not np.isfinite(c)]
    if bad:
        raise InputError(f'{field}: non-finite {quantity} for {bad}')
    return command


def _tendon_values(msg: JointState, field: str,
                   n_tendons: int) -> dict[str, float] | list[float]:
    raw = getattr(msg, field)
    for name, items in (('name', msg.name), (field, raw)):
        if len(items) > n_tendons:
            raise InputError(f'{name}: has {len(items)} entries; the robot has {n_tendons} '
                             'tendons')
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


def tendon_state_msg(names: Sequence[str], displacement: np.ndarray, velocity: np.ndarray,
                     tension: np.ndarray, stamp: Time) -> JointState:
    """``tendon/state``: position = displacement [m], velocity [m/s], effort = tension [N]."""
    return JointState(header=Header(stamp=stamp), name=list(names),
                      position=displacement.tolist(), velocity=velocity.tolist(),
                      effort=tension.tolist())


def tip_pose_msg(state: RobotShape, frame_id: str, stamp: Time) -> PoseStamped:
    """``tip/pose``: the tip frame (d1, d2, d3) in the base frame."""
    return PoseStamped(header=Header(stamp=stamp, frame_id=frame_id),
                       pose=Pose(position=point_msg(state.tip_position),
                                 orientation=quaternion_msg(state.tip_orientation)))


def transforms_msg(state: RobotShape, base_frame: str, tip_frame: str, vertebra_prefix: str,
                   stamp: Time) -> TFMessage:
    """``/tf``: base -> tip, and base -> ``<vertebra_prefix><i>`` for each vertebra."""
    def transform(child: str, position: np.ndarray, orientation: np.ndarray):
        t = TransformStamped(header=Header(stamp=stamp, frame_id=base_frame),
                             child_frame_id=child)
        t.transform.translation = Vector3(x=float(position[0]), y=float(position[1]),
                                          z=float(position[2]))
        t.transform.rotation = quaternion_msg(orientation)
        return t

    transforms = [transform(tip_frame, state.tip_position, state.tip_orientation)]
    transforms += [transform(f'{vertebra_prefix}{i}', state.vertebra_positions[:, i], q)
                   for i, q in enumerate(state.vertebra_orientations)]
    return TFMessage(transforms=transforms)


class BackboneMarkers:
    """Builds ``backbone/markers`` for one robot.

    ``backbone``: LINE_STRIP through every node, as wide as the rod. ``vertebrae``:
    one CYLINDER per disc, axis along the disc's d3, radius and thickness from the
    robot description (``vertebrae.radius``, ``vertebrae.thickness``). ``tendons``:
    LINE_LIST, one segment between consecutive holes of each tendon, coloured per tendon.
    """

    def __init__(self, robot: Robot):
        self.disc_diameter = 2.0 * robot.disc_radius             # m
        self.disc_thickness = robot.disc_thickness               # m
        self.rod_diameter = 2.0 * robot.rod.radius               # m

    def build(self, state: RobotShape, frame_id: str, stamp: Time) -> MarkerArray:
        header = Header(stamp=stamp, frame_id=frame_id)
        backbone = Marker(header=header, ns='backbone', id=0, type=Marker.LINE_STRIP,
                          action=Marker.ADD, color=ColorRGBA(r=0.8, g=0.8, b=0.75, a=1.0))
        backbone.pose.orientation.w = 1.0
        backbone.scale.x = self.rod_diameter
        backbone.points = [point_msg(p) for p in state.centerline.T]
        markers = [backbone]
        for i, q in enumerate(state.vertebra_orientations):
            disc = Marker(header=header, ns='vertebrae', id=i, type=Marker.CYLINDER,
                          action=Marker.ADD, color=ColorRGBA(r=0.95, g=0.95, b=0.95, a=0.8))
            disc.pose = Pose(position=point_msg(state.vertebra_positions[:, i]),
                             orientation=quaternion_msg(q))
            disc.scale = Vector3(x=self.disc_diameter, y=self.disc_diameter,
                                 z=self.disc_thickness)
            markers.append(disc)
        tendons = Marker(header=header, ns='tendons', id=0, type=Marker.LINE_LIST,
                         action=Marker.ADD, color=ColorRGBA(a=1.0))
        tendons.pose.orientation.w = 1.0
        tendons.scale.x = 0.001   # line width, m
        for index, path in enumerate(state.tendon_paths):
            r, g, b = TENDON_COLORS[index % len(TENDON_COLORS)]
            color = ColorRGBA(r=r, g=g, b=b, a=1.0)
            for start, end in zip(path.T[:-1], path.T[1:]):
                tendons.points += [point_msg(start), point_msg(end)]
                tendons.colors += [color, color]
        markers.append(tendons)
        return MarkerArray(markers=markers)
