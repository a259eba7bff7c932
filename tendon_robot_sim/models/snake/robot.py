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
Description of a tendon-actuated rolling-joint snake (``kind: rolling_joint_snake``).

The robot of D'Antuono et al., "Dynamic model of a tendon-actuated snake robot using the
Newton-Euler formulation" (IFAC 2023): N saddle-shaped links rolling on
each other without pins, pan and tilt joints in a given order, cables through holes in
every link (see ``config/rolling_joint_snake.yaml``). Loaded into frozen, validated
dataclasses with the description helpers of :mod:`tendon_robot_sim.models.tendon_robot`; a bad
file raises :class:`~tendon_robot_sim.models.description.RobotDescriptionError` naming the key.

Frames
------
World = base frame: x along the straight snake, z up. Link n's frame sits at the vertex
of its distal rolling surface (link 0, the fixed base, at the world origin), x along the
link axis towards the tip, so the centre of mass is at ``(-H/2, 0, 0)`` (the
paper's d_{C_n,n}). A cable hole at ``angle`` (from the link y axis towards z) and radial
``offset`` sits at ``offset * (0, cos angle, sin angle)`` across the link axis.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np

from tendon_robot_sim.models.description import (check_kind, check_unique_names,
                                                 DescriptionMapping, load_description,
                                                 MAX_LIST_LENGTH, PHYSICAL_RANGES,
                                                 RobotDescriptionError, short_repr)

KIND = 'rolling_joint_snake'
# Frame the simulator reports the snake in (/tf base_link -> vertebra_<i>, tip/pose).
BASE_FRAME = 'base_link'
# The minimum-tension LP enumerates C(8 + 2C, C - 1) vertices per joint and step: 560 for
# 4 cables, 15 504 for 6; more would exhaust memory and time.
MAX_CABLES = 6
JOINT_TYPES = ('pan', 'tilt')
# Rotation axis of each joint type in the frame of the proximal link.
JOINT_AXES = {'pan': np.array([0.0, 0.0, 1.0]), 'tilt': np.array([0.0, 1.0, 0.0])}


@dataclass(frozen=True)
class Link:
    """One link (all links are alike): rolling profile, mass and inertia."""

    height: float                 # H, m, vertex to vertex
    radius_of_curvature: float    # R, m, of both rolling surfaces
    contact_angle: float          # alpha, rad: surfaces span +-alpha, |theta| <= 2 alpha
    contact_offset: float         # m, contact points c1, c2 at +-this along the joint axis
    mass: float                   # kg
    inertia: np.ndarray           # (3,) kg m^2, principal, about the centre of mass

    @property
    def half_width(self) -> float:
        """R sin(alpha) [m]: how far the rolling surfaces, and so the link, reach off its axis."""
        return self.radius_of_curvature * math.sin(self.contact_angle)

    @property
    def center_of_mass(self) -> np.ndarray:
        """(3,) m, in the link frame (the paper's d_{C_n,n} = [-H/2, 0, 0])."""
        return np.array([-self.height / 2.0, 0.0, 0.0])


@dataclass(frozen=True)
class Cable:
    """A cable: where its holes are across the link axis."""

    name: str
    offset: float    # m, radial
    angle: float     # rad, from the link y axis towards z

    @property
    def lateral(self) -> np.ndarray:
        """(3,) m, the hole's position across the link axis: offset (0, cos, sin)."""
        return self.offset * np.array([0.0, math.cos(self.angle), math.sin(self.angle)])


@dataclass(frozen=True)
class RollingJointSnake:
    """A rolling-joint snake: joints, one link design, cables and contact limits."""

    name: str
    gravity: np.ndarray               # (3,) m/s^2, world frame
    joints: tuple[str, ...]           # 'pan' | 'tilt' per joint, base to tip
    link: Link
    cables: tuple[Cable, ...]
    friction_coefficient: float       # mu_s
    min_contact_force: float          # N, normal force at each contact point (34)
    pretension: float                 # N, lowest cable tension (31)
    max_tension: float                # N

    @property
    def n_joints(self) -> int:
        return len(self.joints)

    @property
    def cable_names(self) -> list[str]:
        return [c.name for c in self.cables]

    @property
    def joint_axes(self) -> np.ndarray:
        """(N, 3): joint n's rotation axis in the frame of link n-1."""
        return np.array([JOINT_AXES[j] for j in self.joints])

    @property
    def joint_limit(self) -> float:
        """Largest |theta| [rad] before the contact leaves the surfaces: 2 alpha."""
        return 2.0 * self.link.contact_angle


# --------------------------------------------------------------------------- loading


def load_snake(path: str | Path) -> RollingJointSnake:
    """
    Load and validate a rolling-joint snake description file.

    Raises
    ------
    RobotDescriptionError
        With one message naming the file, the key and the problem.

    """
    return load_description(path, snake_from_dict)


def snake_from_dict(data: Any) -> RollingJointSnake:
    """Build a validated :class:`RollingJointSnake` from plain data in the YAML schema."""
    check_kind(data, KIND)
    top = DescriptionMapping(
        data, '', required=('kind', 'name', 'joints', 'link', 'cables', 'friction_coefficient',
                            'min_contact_force', 'pretension', 'max_tension'),
        optional=('gravity',))
    top.get('kind')
    name = top.string('name')
    gravity = top.vector('gravity', default=(0.0, 0.0, -9.80665))
    joints = _load_joints(top.get('joints'))
    link = _load_link(DescriptionMapping(
        top.get('link'), 'link',
        required=('height', 'radius_of_curvature', 'contact_offset', 'mass', 'inertia')))
    cables = _load_cables(top.get('cables'), link)
    snake = RollingJointSnake(
        name=name, gravity=gravity, joints=joints, link=link, cables=cables,
        friction_coefficient=top.number('friction_coefficient', positive=True),
        min_contact_force=top.number('min_contact_force', positive=True),
        pretension=top.number('pretension', minimum=0.0),
        max_tension=top.number('max_tension', positive=True))
    top.finish()
    if snake.pretension >= snake.max_tension:
        raise RobotDescriptionError(
            f'pretension: must be < max_tension ({snake.max_tension:g}), '
            f'got {snake.pretension:g}')
    return snake


def _load_joints(data: Any) -> tuple[str, ...]:
    if not isinstance(data, list) or not data or len(data) > MAX_LIST_LENGTH:
        raise RobotDescriptionError(
            f'joints: must be a list of 1 to {MAX_LIST_LENGTH} of {list(JOINT_TYPES)}, '
            f'got {short_repr(data)}')
    for i, joint in enumerate(data):
        if joint not in JOINT_TYPES:
            raise RobotDescriptionError(
                f'joints[{i}]: must be one of {list(JOINT_TYPES)}, got {short_repr(joint)}')
    return tuple(data)


def _load_link(m: DescriptionMapping) -> Link:
    height = m.number('height', positive=True)
    radius = m.number('radius_of_curvature', positive=True)
    alpha = m.angle('contact_angle')
    if not 0.0 < alpha < math.pi / 2:
        raise RobotDescriptionError(f'link.contact_angle: must be in (0, 90) deg, got '
                                    f'{math.degrees(alpha):g} deg')
    inertia = m.vector('inertia', default=(0.0, 0.0, 0.0))
    link = Link(height=height, radius_of_curvature=radius, contact_angle=alpha,
                contact_offset=m.number('contact_offset', positive=True),
                mass=m.number('mass', positive=True), inertia=inertia)
    m.finish()
    # The rolling surfaces span +-alpha: R sin(alpha) across the link axis bounds the link's
    # section (as it bounds the cable holes), and each surface is R (1 - cos alpha) deep.
    half_width = link.half_width
    if link.contact_offset >= half_width:
        raise RobotDescriptionError(
            f'link.contact_offset: the contact points ({link.contact_offset:g} m along the '
            f'joint axis) lie off the link (half-width link.radius_of_curvature x '
            f'sin(link.contact_angle) = {half_width:g} m)')
    depth = radius * (1.0 - math.cos(alpha))
    if height <= depth:
        raise RobotDescriptionError(
            f'link.height: {height:g} m is less than the depth of a rolling surface, '
            f'link.radius_of_curvature x (1 - cos(link.contact_angle)) = {depth:g} m: the rim '
            f'of one would reach past the vertex of the other')
    if np.any(inertia <= 0.0):
        raise RobotDescriptionError(f'link.inertia: must be 3 positive numbers, got '
                                    f'{inertia.tolist()}')
    # principal moments of a rigid body obey the triangle inequality
    for i in range(3):
        if inertia[i] > inertia[(i + 1) % 3] + inertia[(i + 2) % 3] * (1.0 + 1e-9):
            raise RobotDescriptionError(
                f'link.inertia[{i}]: {inertia[i]:g} exceeds the sum of the other two '
                f'principal moments; no rigid body has these')
    _check_mass_fits_link(link)
    return link


def _check_mass_fits_link(link: Link) -> None:
    # The link lies within a cylinder of radius R sin(alpha) and length H about its centre of
    # mass (H/2 from each vertex): a mass or inertia no body in it can have is a unit slip
    # (grams for kg, kg cm^2 for kg m^2), refused rather than simulated.
    a, H, m = link.half_width, link.height, link.mass
    volume = math.pi * a ** 2 * H
    densest = PHYSICAL_RANGES['density'][1]
    if m > densest * volume:
        raise RobotDescriptionError(
            f'link.mass: {m:g} kg in the link (a cylinder of radius link.radius_of_curvature x '
            f'sin(link.contact_angle) = {a:g} m and length link.height = {H:g} m) is '
            f'{m / volume:.3g} kg/m^3, denser than {densest:g}; masses are in kg')
    # about the centre: I_xx = sum m (y^2 + z^2) <= m a^2, I_yy = sum m (x^2 + z^2) <=
    # m ((H/2)^2 + a^2), alike I_zz
    bounds = (m * a ** 2, m * ((H / 2) ** 2 + a ** 2), m * ((H / 2) ** 2 + a ** 2))
    for i, (moment, bound) in enumerate(zip(link.inertia, bounds)):
        if moment > bound * (1.0 + 1e-9):
            raise RobotDescriptionError(
                f'link.inertia[{i}]: {moment:g} kg m^2 needs mass farther from the centre '
                f'than the link reaches (at most {bound:.4g} kg m^2 for link.mass {m:g} kg '
                f'within radius {a:g} m and length {H:g} m); inertias are in kg m^2')


def _load_cables(data: Any, link: Link) -> tuple[Cable, ...]:
    if not isinstance(data, list) or not 2 <= len(data) <= MAX_CABLES:
        raise RobotDescriptionError(
            f'cables: must be a list of 2 to {MAX_CABLES} cables, got {short_repr(data)}')
    # A hole opens on the rolling surfaces of both joint types, so it must lie within the
    # arcs' half-width R sin(alpha) in y and in z.
    half_width = link.half_width
    cables = []
    for i, item in enumerate(data):
        key = f'cables[{i}]'
        m = DescriptionMapping(item, key, required=('name', 'offset'))
        cable = Cable(name=m.string('name'), offset=m.number('offset', positive=True),
                      angle=m.angle('angle'))
        m.finish()
        reach = float(np.max(np.abs(cable.lateral)))
        if reach >= half_width:
            raise RobotDescriptionError(
                f'{key}.offset: the hole ({reach:g} m off the axis) lies outside the rolling '
                f'surface (half-width link.radius_of_curvature x sin(link.contact_angle) = '
                f'{half_width:g} m)')
        _check_own_hole(cable, cables, key)
        cables.append(cable)
    check_unique_names([c.name for c in cables], 'cables', 'cable')
    return tuple(cables)


def _check_own_hole(cable: Cable, cables: list[Cable], key: str) -> None:
    """
    Refuse a cable through the hole of an earlier one: its offset at its angle.

    0 and 360 deg are one angle. The two pull every joint alike at every pose: the tension
    distribution cannot tell them apart, and the minimum-tension problem is degenerate (a
    copied line). At one angle with other offsets they are two cables: the depth of a hole
    below the rolling surface, R - sqrt(R^2 - beta^2), is not linear in its offset, so their
    levers part once the joints bend.
    """
    for j, other in enumerate(cables):
        apart = math.remainder(cable.angle - other.angle, 2.0 * math.pi)
        if abs(apart) < 1e-9 and abs(cable.offset - other.offset) < 1e-12:
            raise RobotDescriptionError(
                f'{key}: through the hole of cables[{j}] ({other.offset:g} m at '
                f'{math.degrees(other.angle):g} deg); two cables through one hole pull alike '
                f'and leave their tensions undetermined')
