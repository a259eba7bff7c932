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
Where the tip sensor sits: its frame in the base frame, read from the URDF.

The laser sensor reports the tip in its own frame (``tip_sensor_link``). The
URDF (``urdf/tendon_robot.urdf``) is the one place that says where that frame
is: a chain of fixed joints from the base link to the sensor link. The bridge
uses it to publish measurements in the base frame, the emulator to produce them.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import math
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import numpy as np

logger = logging.getLogger(__name__)


class MountingError(ValueError):
    """The URDF does not place the sensor link; the message names the file and the joint."""


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation of URDF ``rpy`` (fixed axes x, then y, then z): Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


@dataclass(frozen=True)
class SensorMount:
    """Pose of the sensor frame in the base frame: p_base = rotation @ p_sensor + translation."""

    base_frame: str
    sensor_frame: str
    rotation: np.ndarray      # (3, 3), columns = sensor axes in the base frame
    translation: np.ndarray   # (3,) m, sensor origin in the base frame

    def to_base(self, p_sensor: np.ndarray) -> np.ndarray:
        """(3,) point in the sensor frame [m] -> base frame [m]."""
        return self.rotation @ np.asarray(p_sensor, dtype=float) + self.translation

    def to_sensor(self, p_base: np.ndarray) -> np.ndarray:
        """(3,) point in the base frame [m] -> sensor frame [m]."""
        return self.rotation.T @ (np.asarray(p_base, dtype=float) - self.translation)


def sensor_mount(urdf: str | Path, base_frame: str = 'base_link',
                 sensor_frame: str = 'tip_sensor_link') -> SensorMount:
    """
    Compose the fixed joints from ``base_frame`` down to ``sensor_frame``.

    Parameters
    ----------
    urdf : str or Path
        A URDF file, or the URDF text itself (``robot_description``) when it
        starts with ``<``.
    base_frame : str
        The link the returned pose is relative to.
    sensor_frame : str
        The link of the sensor, reached from ``base_frame`` through fixed joints only.

    Raises
    ------
    MountingError
        The file cannot be read, a joint on the way is not fixed, or the chain
        does not reach ``base_frame``.

    """
    text = str(urdf)
    source = 'robot_description'
    if not text.lstrip().startswith('<'):
        source = text
        try:
            text = Path(urdf).read_text()
        except OSError as error:
            raise MountingError(f'{source}: cannot read: {error.strerror}') from None
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise MountingError(f'{source}: not valid XML: {error}') from None
    by_child = {}
    for joint in root.iter('joint'):
        child = joint.find('child')
        if child is not None:
            by_child[child.get('link')] = joint
    rotation, translation = np.eye(3), np.zeros(3)
    link = sensor_frame
    while link != base_frame:
        joint = by_child.get(link)
        if joint is None:
            raise MountingError(f'{source}: no joint has child link {link!r}, so '
                                f'{sensor_frame!r} is not attached to {base_frame!r}')
        name = joint.get('name')
        if joint.get('type') != 'fixed':
            raise MountingError(f'{source}: joint {name!r} on the way from {base_frame!r} '
                                f'to {sensor_frame!r} must be fixed, is {joint.get("type")!r}')
        origin = joint.find('origin')
        xyz = _triple(origin, 'xyz', source, name)
        rpy = _triple(origin, 'rpy', source, name)
        # parent <- child: p_parent = R_j p_child + t_j; prepend to the chain so far.
        r_joint = rpy_matrix(*rpy)
        rotation, translation = r_joint @ rotation, r_joint @ translation + xyz
        link = joint.find('parent').get('link')
    return SensorMount(base_frame, sensor_frame, rotation, translation)


def _triple(origin, key: str, source: str, joint: str) -> np.ndarray:
    text = origin.get(key) if origin is not None else None
    if text is None:
        return np.zeros(3)
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise MountingError(f'{source}: joint {joint!r} origin {key}: must be 3 numbers, '
                            f'got {text!r}')
    return values
