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
Where the camera of each page looks: framing the robot, and following it until a user moves it.

Free of viser: a camera is anything with viser's ``CameraHandle`` fields (``position``,
``look_at``, ``wxyz``, ``fov``, ``image_width``, ``image_height``), as a page reports them.
:class:`Framing` decides, from what a page reports and the robot's outline, when the view
moves that page's camera; :class:`~tendon_robot_sim.view.page.ViewPage` applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull

# The camera looks at the robot from this direction (base frame): from -y, a little from
# the front and above, so the default robot (along +x, bending in y and z) shows its length.
VIEW_DIRECTION = np.array([0.35, -1.0, 0.45])
FIELD_OF_VIEW = np.radians(50.0)   # vertical
FILL = 1.15        # the robot fills the view up to this margin
UP = np.array([0.0, 0.0, 1.0])   # REP 103: z up
PANEL_WIDTH = 400  # px of the page's width that the control panel covers, on the right
# m: a reported camera this close to where the view put it is where the view put it (the
# page reports it in float64, back through its own frame transform: ~1e-15 m apart)
CAMERA_TOLERANCE = 1e-6


def reserved(width: int) -> float:
    """Return the share of a page ``width`` px wide that the control panel covers."""
    return min(PANEL_WIDTH / width, 0.5) if width else 0.0


def project(points: np.ndarray, camera) -> np.ndarray:
    """
    Return the pixels (n, 2) (column, row) of base-frame ``points`` (n, 3) in ``camera``'s image.

    ``camera``: viser's camera of a page, ``wxyz``/``position`` of the camera frame in the
    world (OpenCV axes: z forward, x right, y down), ``fov`` vertical, ``image_width`` and
    ``image_height`` in px.
    """
    w, x, y, z = camera.wxyz
    rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                         [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                         [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    local = (np.asarray(points) - camera.position) @ rotation
    focal = 0.5 * camera.image_height / np.tan(0.5 * camera.fov)
    depth = np.maximum(local[:, 2], 1e-9)     # behind the camera: far outside the image
    return np.stack([focal * local[:, 0] / depth + 0.5 * camera.image_width,
                     focal * local[:, 1] / depth + 0.5 * camera.image_height], axis=1)


def in_view(points: np.ndarray, camera) -> bool:
    """Tell whether every point is in ``camera``'s image, left of the control panel."""
    pixels = project(points, camera)
    free = camera.image_width * (1.0 - reserved(camera.image_width))
    return bool(pixels[:, 0].min() >= 0 and pixels[:, 0].max() <= free
                and pixels[:, 1].min() >= 0 and pixels[:, 1].max() <= camera.image_height)


def camera_pose(points: np.ndarray, aspect: float, fov: float = FIELD_OF_VIEW,
                reserved: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """
    Return (camera position, look-at point) [m] in which ``points`` (n, 3) fill the view.

    The camera looks along -:data:`VIEW_DIRECTION` at the middle of the points' box, from
    the nearest distance at which every point lies within the vertical field of view ``fov``
    [rad] and the horizontal one of the image ``aspect`` (width / height), with a margin;
    ``reserved`` is the fraction of the width on the right that the control panel covers:
    the robot fills the rest, centred in it.
    """
    lo, hi = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (lo + hi)
    back = VIEW_DIRECTION / np.linalg.norm(VIEW_DIRECTION)    # from the centre to the camera
    right = np.cross(-back, UP)
    right /= np.linalg.norm(right)
    up = np.cross(right, -back)
    tan_v = np.tan(0.5 * fov) / FILL
    tan_h = tan_v * aspect * (1.0 - reserved)
    offsets = points - centre
    # a point at depth (d - o.back) is in view when |o.right| <= tan_h (d - o.back), likewise up
    distance = max(np.max(np.abs(offsets @ right) / tan_h + offsets @ back),
                   np.max(np.abs(offsets @ up) / tan_v + offsets @ back), 0.05)
    # move the camera right, so that the robot sits in the middle of the part left free
    shift = reserved * distance * np.tan(0.5 * fov) * aspect * right
    return centre + distance * back + shift, centre + shift


def hull(points: np.ndarray) -> np.ndarray:
    """
    Return the corners of the convex hull of ``points`` (n, 3): they frame as all points do.

    :func:`camera_pose` depends on the points through their box and maxima of convex
    functions, which the hull's corners attain; so what the view framed stays a few hundred
    points however often the robot leaves the view. Flat or straight sets are jogged (QJ).
    """
    return points[ConvexHull(points, qhull_options='QJ').vertices]


@dataclass
class Aim:
    """Where the view put a page's camera, the ``points`` it framed, and whether it got there."""

    position: np.ndarray
    look_at: np.ndarray
    points: np.ndarray
    reached: bool = False


class Framing:
    """
    Which pages' cameras the view holds, and where it put them (by client id).

    The view frames a page once it knows both the page's image size and the robot's outline
    (whichever comes last), and again whenever part of the robot leaves that page's view
    (left of the panel): it then frames what it framed before and the robot now, so the
    camera only backs off, to the space the robot has swept. A camera is the view's until
    its page reports it somewhere else after it got where the view put it: a user orbited,
    panned or zoomed, and the camera is theirs until :meth:`reset` (*Frame the robot*).
    Decisions follow the page's own reports, never a clock, so a slow page (a loaded
    machine) is framed alike.
    """

    def __init__(self, tolerance: float = CAMERA_TOLERANCE):
        self.tolerance = tolerance
        self.aims: dict[int, Aim] = {}
        self.released: set[int] = set()    # pages whose user moved the camera

    def reset(self, client_id: int) -> None:
        """Hold ``client_id``'s camera again and frame it afresh (a user asked to)."""
        self.released.discard(client_id)
        self.aims.pop(client_id, None)

    def anew(self) -> None:
        """
        Frame afresh every page the view holds: the robot is another (its stack restarted).

        What they framed is the old robot's, which they would keep in view: a small robot
        after the parallel robot would stay a speck. A user's camera stays theirs.
        """
        self.aims = {client: aim for client, aim in self.aims.items()
                     if client in self.released}

    def forget(self, client_id: int) -> None:
        """Drop a page that closed."""
        self.released.discard(client_id)
        self.aims.pop(client_id, None)

    def _there(self, camera, aim: Aim) -> bool:
        return (np.allclose(camera.position, aim.position, rtol=0.0, atol=self.tolerance)
                and np.allclose(camera.look_at, aim.look_at, rtol=0.0, atol=self.tolerance))

    def follows(self, client_id: int) -> bool:
        return client_id not in self.released

    def decide(self, client_id: int, camera, points: np.ndarray, reported: bool = True
               ) -> tuple[np.ndarray, np.ndarray] | None:
        """
        Return the (position, look-at) [m] to move ``camera`` to, or None to leave it.

        ``camera``: the page ``client_id``'s camera; ``reported``: the page has just
        reported it (else a look between reports: viser's camera holds the last move the
        view sent as soon as it is sent, before the page has applied it, so only a report
        tells that the page got there, or that a user moved it). ``points`` (n, 3): the
        robot's outline now (empty: not known yet).
        """
        if client_id in self.released or not len(points) or not camera.image_width:
            return None
        aim = self.aims.get(client_id)
        if aim is not None:
            if not reported:
                if not aim.reached:
                    return None
            elif not self._there(camera, aim):
                if aim.reached:
                    self.released.add(client_id)     # the user moved it: theirs from now on
                # else the page has not applied the move yet: a report from before it, or
                # from between its position and its look-at
                return None
            aim.reached = True
            if in_view(points, camera):
                return None
            points = hull(np.concatenate([aim.points, points]))
        width, height = camera.image_width, camera.image_height
        position, look_at = camera_pose(points, width / height, camera.fov or FIELD_OF_VIEW,
                                        reserved(width))
        self.aims[client_id] = Aim(position, look_at, points)
        return position, look_at
