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
``visualization_msgs/Marker`` messages as drawable primitives, for any robot kind.

One generic reading of the marker types the nodes publish (``LINE_STRIP``, ``LINE_LIST``,
``CYLINDER``, ``SPHERE``, ``CUBE``; the world's ``TRIANGLE_LIST`` meshes and the contacts'
``ARROW``), keyed by (namespace, id) as RViz keys them, with
the ``ADD``, ``DELETE`` and ``DELETEALL`` actions. Coordinates stay in the marker's frame
(the stack's base frame): a line marker's points are relative to its pose, a solid is
centred on its pose with its size in ``scale`` (m). Colours become 8-bit RGB plus an
opacity. No ROS import: the fields are read by name, from rclpy's messages, a bag's or
those read straight from the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

# visualization_msgs/Marker constants (the message definition).
ARROW, CUBE, SPHERE, CYLINDER, LINE_STRIP, LINE_LIST, TRIANGLE_LIST = 0, 1, 2, 3, 4, 5, 11
ADD, DELETE, DELETEALL = 0, 2, 3
SOLIDS = {CUBE: 'cube', SPHERE: 'sphere', CYLINDER: 'cylinder'}
LINES = (LINE_STRIP, LINE_LIST)

Key = tuple[str, int]   # (namespace, id)


@dataclass(frozen=True)
class Lines:
    """Segments ``points`` (k, 2, 3) [m] in the frame of ``position``/``wxyz``, RGB per end."""

    points: np.ndarray     # (k, 2, 3) float32
    colors: np.ndarray     # (k, 2, 3) uint8
    width: float           # m
    position: np.ndarray   # (3,) m
    wxyz: np.ndarray       # (4,) unit quaternion, scalar first


@dataclass(frozen=True)
class Solid:
    """A cube, sphere or cylinder (axis z) of size ``scale`` [m] centred at ``position``."""

    shape: str             # 'cube' | 'sphere' | 'cylinder'
    position: np.ndarray   # (3,) m
    wxyz: np.ndarray       # (4,)
    scale: np.ndarray      # (3,) m: diameters x, y and height z (a cylinder)
    color: np.ndarray      # (3,) uint8
    opacity: float


@dataclass(frozen=True)
class Arrow:
    """
    An arrow from ``points[0]`` to ``points[1]`` [m] (posed: in the marker's frame).

    RViz's sizes: ``shaft`` and ``head`` diameters, ``head_length`` [m].
    """

    points: np.ndarray     # (2, 3)
    color: np.ndarray      # (3,) uint8
    shaft: float
    head: float
    head_length: float


@dataclass(frozen=True)
class ArrowBatch:
    """The arrows of one namespace, ordered by id (sizes of the first): one viser node."""

    points: np.ndarray     # (n, 2, 3) m
    colors: np.ndarray     # (n, 3) uint8
    shaft: float
    head: float
    head_length: float


@dataclass(frozen=True)
class Triangles:
    """A triangle mesh ``vertices`` (k, 3, 3) [m] in the frame of ``position``/``wxyz``."""

    vertices: np.ndarray
    color: np.ndarray      # (3,) uint8
    opacity: float
    position: np.ndarray
    wxyz: np.ndarray


@dataclass(frozen=True)
class SolidBatch:
    """The solids of one shape in one namespace, ordered by id: one instanced mesh."""

    shape: str
    positions: np.ndarray  # (n, 3)
    wxyzs: np.ndarray      # (n, 4)
    scales: np.ndarray     # (n, 3)
    colors: np.ndarray     # (n, 3) uint8
    opacities: np.ndarray  # (n,)


def _floats(message, fields: str) -> tuple[float, ...]:
    return tuple(float(getattr(message, f)) for f in fields)


def _wxyz(q) -> tuple[float, ...]:
    """ROS quaternion (x, y, z, w) -> (w, x, y, z), normalised; identity when zero."""
    wxyz = _floats(q, 'wxyz')
    norm = math.hypot(*wxyz)
    return tuple(c / norm for c in wxyz) if norm > 0.0 else (1.0, 0.0, 0.0, 0.0)


def _rows(items, fields: str) -> np.ndarray:
    """
    Return (n, len(fields)) floats of a sequence of messages (points, colours).

    ``items`` is a list of message objects (rclpy's, a bag's) or a numpy structured array
    with those fields (:class:`tendon_robot_sim.ros.cdr.Decoder`'s, read straight from the
    bytes: no object per point).
    """
    if isinstance(items, np.ndarray):
        rows = np.stack([items[f] for f in fields], axis=-1).astype(float)
    else:
        rows = np.array([[getattr(item, f) for f in fields] for item in items], dtype=float)
    return rows.reshape(-1, len(fields))


def _rgb(colors: np.ndarray) -> np.ndarray:
    """Colours (..., 3) in [0, 1] -> uint8."""
    return np.round(np.clip(colors, 0.0, 1.0) * 255.0).astype(np.uint8)


def _unit(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def primitive(marker) -> Lines | Solid | Arrow | Triangles | None:
    """
    Return the primitive of an ADD marker; None for a type not drawn.

    Raises
    ------
    ValueError
        A non-finite coordinate, size, orientation or colour (the message names the marker).

    """
    # one marker's few numbers in plain Python: numpy's call costs more than the arithmetic
    position, wxyz = _floats(marker.pose.position, 'xyz'), _wxyz(marker.pose.orientation)
    r, g, b, a = _floats(marker.color, 'rgba')
    if marker.type in SOLIDS:
        scale = _floats(marker.scale, 'xyz')
        _check_finite(marker, position + wxyz + scale + (r, g, b, a))
        return Solid(SOLIDS[marker.type], np.array(position), np.array(wxyz), np.array(scale),
                     _rgb(np.array([r, g, b])), _unit(a))
    if marker.type == ARROW:
        return _arrow(marker, np.array(position), np.array(wxyz), r, g, b, a)
    if marker.type == TRIANGLE_LIST:
        points = _rows(marker.points, 'xyz')
        _check_finite(marker, position + wxyz + (r, g, b, a), points)
        return Triangles(points[:len(points) // 3 * 3].reshape(-1, 3, 3),
                         _rgb(np.array([r, g, b])), _unit(a), np.array(position),
                         np.array(wxyz))
    if marker.type not in LINES:
        return None
    points, width = _rows(marker.points, 'xyz'), float(marker.scale.x)
    _check_finite(marker, position + wxyz + (r, g, b, a, width), points)
    if len(marker.colors) and len(marker.colors) == len(points):
        colors = _rgb(_rows(marker.colors, 'rgb'))
    else:
        colors = np.tile(_rgb(np.array([r, g, b])), (len(points), 1))
    if marker.type == LINE_STRIP:
        ends = np.stack([np.arange(len(points) - 1), np.arange(1, len(points))], axis=1)
        ends = ends.reshape(-1, 2) if len(points) > 1 else np.zeros((0, 2), dtype=int)
    else:   # LINE_LIST: pairs, an odd last point is dropped (as RViz does)
        ends = np.arange(len(points) // 2 * 2).reshape(-1, 2)
    return Lines(points[ends].astype(np.float32), colors[ends], width, np.array(position),
                 np.array(wxyz))


def _arrow(marker, position, wxyz, r, g, b, a) -> Arrow:
    """
    Return an ARROW as RViz draws it: from ``points[0]`` to ``points[1]``, sizes in scale.

    Without points, along the pose's x axis, ``scale.x`` long (shaft and head then scale.y,
    scale.z, as RViz). Posed into the marker's frame.
    """
    scale = _floats(marker.scale, 'xyz')
    points = _rows(marker.points, 'xyz')
    _check_finite(marker, tuple(position) + tuple(wxyz) + scale + (r, g, b, a), points)
    if len(points) >= 2:
        ends = rotate(wxyz, points[:2]) + position
        shaft, head, head_length = scale
    else:
        ends = np.array([position, position + rotate(wxyz, np.array([[scale[0], 0.0, 0.0]]))[0]])
        shaft, head, head_length = scale[1], scale[2], 0.23 * scale[0]
    return Arrow(ends, _rgb(np.array([r, g, b])), shaft, head, head_length)


def _check_finite(marker, numbers: tuple[float, ...], points: np.ndarray | None = None) -> None:
    if not all(map(math.isfinite, numbers)) or (points is not None
                                                and not np.isfinite(points).all()):
        raise ValueError(f'marker {marker.ns!r}/{marker.id}: non-finite pose, scale, colour '
                         'or point')


class MarkerScene:
    """
    The markers drawn now, as RViz keeps them: by (namespace, id), changed by actions.

    ``frame_id`` is the frame of the latest marker (the stack's base frame); ``skipped``
    names the marker types met that are not drawn, ``rejected`` counts markers with
    non-finite values (left out, the previous one of that key stays).
    """

    def __init__(self):
        self.items: dict[Key, Lines | Solid | Arrow | Triangles] = {}
        self.frame_id = ''
        self.skipped: set[int] = set()
        self.rejected = 0

    def apply(self, markers) -> None:
        """Apply the markers of one ``MarkerArray`` in order."""
        for marker in markers:
            if marker.action == DELETEALL:
                self.items.clear()
                continue
            key = (marker.ns, int(marker.id))
            if marker.action == DELETE:
                self.items.pop(key, None)
                continue
            try:
                shape = primitive(marker)
            except ValueError:
                self.rejected += 1
                continue
            if shape is None:
                self.skipped.add(int(marker.type))
                continue
            self.frame_id = marker.header.frame_id
            self.items[key] = shape

    def apply_all(self, arrays) -> None:
        """
        Apply several ``MarkerArray``'s markers, oldest first, converting only what shows.

        When every marker only adds (as the simulator publishes), only the newest marker of
        each key is converted: the result is that of applying them all.
        """
        if any(marker.action != ADD for markers in arrays for marker in markers):
            for markers in arrays:
                self.apply(markers)
            return
        newest = {}
        for markers in arrays:
            for marker in markers:
                newest[(marker.ns, int(marker.id))] = marker
        self.apply(newest.values())

    def lines(self) -> dict[Key, Lines]:
        return {key: item for key, item in self.items.items() if isinstance(item, Lines)}

    def meshes(self) -> dict[Key, Triangles]:
        return {key: item for key, item in self.items.items() if isinstance(item, Triangles)}

    def arrows(self) -> dict[str, ArrowBatch]:
        """Return the arrows grouped by namespace, each group ordered by id."""
        groups: dict[str, list[Arrow]] = {}
        for (ns, _), item in sorted(self.items.items()):
            if isinstance(item, Arrow):
                groups.setdefault(ns, []).append(item)
        return {ns: ArrowBatch(np.array([a.points for a in arrows]),
                               np.array([a.color for a in arrows]), arrows[0].shaft,
                               arrows[0].head, arrows[0].head_length)
                for ns, arrows in groups.items()}

    def solids(self) -> dict[tuple[str, str], SolidBatch]:
        """Return the solids grouped by (namespace, shape), each group ordered by id."""
        groups: dict[tuple[str, str], list[Solid]] = {}
        for (ns, _), item in sorted(self.items.items()):
            if isinstance(item, Solid):
                groups.setdefault((ns, item.shape), []).append(item)
        return {key: SolidBatch(
            key[1], np.array([s.position for s in solids]), np.array([s.wxyz for s in solids]),
            np.array([s.scale for s in solids]), np.array([s.color for s in solids]),
            np.array([s.opacity for s in solids])) for key, solids in groups.items()}

    def points(self) -> np.ndarray:
        """Return (n, 3) points [m] that outline every marker (line ends, solids' boxes)."""
        points = [np.zeros((0, 3))]
        for item in self.items.values():
            if isinstance(item, Lines):
                rotated = rotate(item.wxyz, item.points.reshape(-1, 3).astype(float))
                points.append(rotated + item.position)
            elif isinstance(item, Arrow):
                points.append(item.points)
            elif isinstance(item, Triangles):
                points.append(rotate(item.wxyz, item.vertices.reshape(-1, 3)) + item.position)
            else:
                corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5)
                                    for z in (-0.5, 0.5)]) * item.scale
                points.append(rotate(item.wxyz, corners) + item.position)
        return np.concatenate(points)

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Return the corners (lo, hi) [m] of a box holding every marker, or None when empty."""
        points = self.points()
        return (points.min(axis=0), points.max(axis=0)) if len(points) else None


def rotate(wxyz: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Rotate ``points`` (n, 3) by the unit quaternion ``wxyz``."""
    w, v = wxyz[0], wxyz[1:]
    t = 2.0 * np.cross(v, points)
    return points + w * t + np.cross(v, t)
