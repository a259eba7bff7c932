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
Description of a bellows-actuated continuum robot (``kind: bellows``).

The robot kind of the elephant-trunk model (Falkenhahn et al. 2015, "Dynamic Modeling
of Bellows-Actuated Continuum Robots Using the Euler-Lagrange Formalism", IEEE T-RO
31(6); Festo's Bionic Handling Assistant): sections in series, each a centre spline
with parallel pneumatic bellows around it. Example: ``config/bionic_handling_assistant.yaml``.

Per section, in its own frame (x = d1 of the section base, angles from d1 towards d2
as for tendon holes):

- ``length``: rest length l0 of the centre spline [m];
- ``spline_stiffness``, ``spline_damping``: spring and damper of the centre spline,
  F = k (l - l0) + d l' [N/m, N s/m] (Hadzic & Häseli's F_spr,spline);
- ``bending_stiffness``: M_bend(theta) = k_b theta, i.e. bending energy k_b theta^2 / 2
  [N m/rad] (their bending moment, linear);
- ``masses``: lumped masses [kg] at fractions of the arc (Hadzic & Häseli lump one mass per
  section at its centre of gravity), each optionally with an ``inertia`` [Ixx, Iyy, Izz]
  [kg m^2] about the arc frame's axes there (rotational kinetic energy; default 0, as
  they neglect it);
- ``bellows``: for each bellows its hole ``offset`` [m] and ``angle`` [rad] (or
  ``angle_deg`` [deg]), effective ``area`` [m^2] (force = p A), length ``stiffness``
  [N/m], ``damping`` [N s/m], spring ``rest_length`` [m] (default: the section length) and
  pressure range [Pa, gauge].

The file is read and checked with the helpers of :mod:`tendon_robot_sim.models.tendon_robot`
(same error messages: one line naming the key). No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np

from tendon_robot_sim.models.description import (Base, check_kind, check_reach, describe_value,
                                                 description_kind, DescriptionMapping, load_base,
                                                 load_description, read_yaml, ROBOT_KINDS,
                                                 RobotDescriptionError, TENDON_ROBOT)

KIND = 'bellows'


@dataclass(frozen=True)
class Bellows:
    """One bellows actuator of a section."""

    name: str
    offset: float          # m, radius of its axis from the centre spline
    angle: float           # rad, from the section's d1 towards d2
    area: float            # m^2, effective area: force = pressure * area
    stiffness: float       # N/m, length spring
    damping: float         # N s/m, length damper
    rest_length: float     # m, length at which its spring is relaxed
    min_pressure: float    # Pa (gauge)
    max_pressure: float    # Pa (gauge)


@dataclass(frozen=True)
class BellowsSection:
    """One constant-curvature section."""

    name: str
    length: float                # m, rest length l0 of the centre spline
    spline_stiffness: float      # N/m
    spline_damping: float        # N s/m
    bending_stiffness: float     # N m/rad
    mass_fractions: np.ndarray   # (k,) fractions of the arc, in (0, 1]
    masses: np.ndarray           # (k,) kg
    inertias: np.ndarray         # (k, 3) kg m^2, principal, about the arc frame's axes
    bellows: tuple[Bellows, ...]

    @property
    def ring(self) -> float:
        """Radius [m] of the ring of bellows about the centre spline: the outermost offset."""
        return max(b.offset for b in self.bellows)


@dataclass(frozen=True)
class BellowsRobot:
    """A bellows-actuated continuum robot: sections from the base out."""

    name: str
    base: Base
    gravity: np.ndarray          # (3,) m/s^2, world frame
    sections: tuple[BellowsSection, ...]

    @property
    def actuator_names(self) -> list[str]:
        return [b.name for s in self.sections for b in s.bellows]

    def to_dict(self) -> dict[str, Any]:
        """Return the description as plain data, in the YAML schema (angles in radians)."""
        return {
            'kind': KIND, 'name': self.name,
            'base': {'frame_id': self.base.frame_id, 'position': self.base.position.tolist(),
                     'direction': self.base.direction.tolist(),
                     'normal': self.base.normal.tolist()},
            'gravity': self.gravity.tolist(),
            'sections': [{
                'name': s.name, 'length': s.length, 'spline_stiffness': s.spline_stiffness,
                'spline_damping': s.spline_damping, 'bending_stiffness': s.bending_stiffness,
                'masses': [{'fraction': float(f), 'mass': float(m), 'inertia': i.tolist()}
                           for f, m, i in zip(s.mass_fractions, s.masses, s.inertias)],
                'bellows': [{'name': b.name, 'offset': b.offset,
                             'angle': b.angle, 'area': b.area,
                             'stiffness': b.stiffness, 'damping': b.damping,
                             'rest_length': b.rest_length, 'min_pressure': b.min_pressure,
                             'max_pressure': b.max_pressure} for b in s.bellows],
            } for s in self.sections],
        }


def is_bellows_description(path: str | Path) -> bool:
    """
    Tell whether the YAML file at ``path`` says ``kind: bellows``, else is a tendon robot's.

    For the commands that take both kinds; any other kind is refused, naming both (errors:
    see read_yaml).
    """
    data = read_yaml(path)
    try:
        return is_bellows_data(data)
    except RobotDescriptionError as error:
        raise RobotDescriptionError(f'{path}: {error}') from None


def is_bellows_data(data: Any) -> bool:
    """Tell whether a description is a bellows robot's, else a tendon robot's; refuse others."""
    kind = description_kind(data)
    if kind not in (KIND, TENDON_ROBOT):
        # the constant-curvature models take these two kinds: name both, not one of them
        raise RobotDescriptionError(
            f'kind: {kind} is {ROBOT_KINDS[kind]}; this takes {ROBOT_KINDS[TENDON_ROBOT]} '
            f'(kind {TENDON_ROBOT}, or no kind) or {ROBOT_KINDS[KIND]} (kind {KIND})')
    return kind == KIND


def load_bellows_robot(path: str | Path) -> BellowsRobot:
    """Load and validate a ``kind: bellows`` description; errors name file and key."""
    return load_description(path, bellows_robot_from_dict)


def bellows_robot_from_dict(data: Any) -> BellowsRobot:
    """Build a validated :class:`BellowsRobot` from plain data in the YAML schema."""
    check_kind(data, KIND)
    top = DescriptionMapping(data, '', required=('kind', 'name', 'sections'),
                             optional=('base', 'gravity'))
    top.get('kind')
    name = top.string('name')
    base = load_base(top.mapping('base', default={}))
    gravity = top.vector('gravity', default=(0.0, 0.0, -9.80665))
    items = top.get('sections')
    if not isinstance(items, list) or not items:
        raise RobotDescriptionError(
            f'sections: must be a non-empty list, got {describe_value(items)}')
    sections = tuple(_load_section(item, f'sections[{i}]') for i, item in enumerate(items))
    top.finish()
    names = [n for s in sections for n in [s.name] + [b.name for b in s.bellows]]
    for n in names:
        if names.count(n) > 1:
            raise RobotDescriptionError(f'sections: the name {n!r} is used twice')
    return BellowsRobot(name=name, base=base, gravity=gravity, sections=sections)


def _load_section(data: Any, key: str) -> BellowsSection:
    m = DescriptionMapping(data, key, required=(
        'name', 'length', 'spline_stiffness', 'bending_stiffness', 'masses', 'bellows'),
        optional=('spline_damping',))
    name = m.string('name')
    length = m.number('length', positive=True)
    spline_stiffness = m.number('spline_stiffness', minimum=0.0)
    spline_damping = m.number('spline_damping', default=0.0, minimum=0.0)
    bending_stiffness = m.number('bending_stiffness', minimum=0.0)
    masses = m.get('masses')
    if not isinstance(masses, list) or not masses:
        raise RobotDescriptionError(f'{key}.masses: must be a non-empty list of '
                                    f'{{fraction, mass}}, got {masses!r}')
    fractions, values, inertias = [], [], []
    for i, item in enumerate(masses):
        mass = DescriptionMapping(item, f'{key}.masses[{i}]', required=('fraction', 'mass'),
                                  optional=('inertia',))
        fraction = mass.number('fraction', positive=True)
        if fraction > 1.0:
            raise RobotDescriptionError(
                f'{key}.masses[{i}].fraction: must be in (0, 1], got {fraction:g}')
        fractions.append(fraction)
        values.append(mass.number('mass', positive=True))
        inertia = mass.vector('inertia', default=(0.0, 0.0, 0.0))
        if np.any(inertia < 0.0):
            raise RobotDescriptionError(
                f'{key}.masses[{i}].inertia: must be >= 0, got {inertia.tolist()}')
        inertias.append(inertia)
        mass.finish()
    bellows = m.get('bellows')
    if not isinstance(bellows, list) or len(bellows) < 3:
        raise RobotDescriptionError(
            f'{key}.bellows: must be a list of at least 3 bellows (3 coordinates per '
            f'section), got {bellows!r}')
    actuators = tuple(_load_bellows(item, f'{key}.bellows[{i}]', length)
                      for i, item in enumerate(bellows))
    m.finish()
    rows = np.array([[1.0, b.offset * math.cos(b.angle), b.offset * math.sin(b.angle)]
                     for b in actuators])
    if np.linalg.matrix_rank(rows, tol=1e-9) < 3:
        raise RobotDescriptionError(
            f'{key}.bellows: the bellows must not all lie on one line through the centre '
            f'spline (their lengths must determine length and bending)')
    if spline_stiffness + sum(b.stiffness for b in actuators) == 0.0:
        raise RobotDescriptionError(
            f'{key}.spline_stiffness: the section needs a length spring (spline or bellows)')
    # The potential's Hessian in (l, u_x, u_y) sums k_c e_l e_l^T, k_b on u and k_i b_i b_i^T
    # (b_i a row above): singular in a bending direction, no load has a static shape and
    # gravity folds the section up (the length spring is checked above).
    springs = ([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] if bending_stiffness > 0.0 else [])
    springs += [[1.0, 0.0, 0.0]] if spline_stiffness > 0.0 else []
    springs += [row for row, b in zip(rows.tolist(), actuators) if b.stiffness > 0.0]
    if np.linalg.matrix_rank(np.array(springs), tol=1e-9) < 3:
        raise RobotDescriptionError(
            f'{key}.bending_stiffness: the section needs a bending spring: '
            f'bending_stiffness > 0, or bellows springs (stiffness > 0) around the centre '
            f'spline, not all on one line through it')
    return BellowsSection(name=name, length=length, spline_stiffness=spline_stiffness,
                          spline_damping=spline_damping, bending_stiffness=bending_stiffness,
                          mass_fractions=np.array(fractions), masses=np.array(values),
                          inertias=np.array(inertias), bellows=actuators)


def _load_bellows(data: Any, key: str, length: float) -> Bellows:
    m = DescriptionMapping(data, key, required=('name', 'offset', 'area', 'stiffness',
                                                'max_pressure'),
                           optional=('damping', 'rest_length', 'min_pressure'))
    bellows = Bellows(
        name=m.string('name'),
        offset=m.number('offset', positive=True),
        angle=m.angle('angle'),
        area=m.number('area', positive=True),
        stiffness=m.number('stiffness', minimum=0.0),
        damping=m.number('damping', default=0.0, minimum=0.0),
        rest_length=m.number('rest_length', default=length, positive=True),
        min_pressure=m.number('min_pressure', default=0.0),
        max_pressure=m.number('max_pressure', positive=True),
    )
    m.finish()
    # bent at all, a bellows farther out than the section is long would be shorter than
    # nothing: a length in mm given as m
    check_reach(f'{key}.offset', f'a bellows {bellows.offset:g} m from the centre spline',
                bellows.offset, 'section', f'{key.rsplit(".", 1)[0]}.length', length)
    if bellows.min_pressure >= bellows.max_pressure:
        raise RobotDescriptionError(
            f'{key}.min_pressure: must be < max_pressure ({bellows.max_pressure:g}), '
            f'got {bellows.min_pressure:g}')
    return bellows
