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
Robot descriptions: the loader, its checks and its errors, shared by every robot kind.

A robot is described in YAML (``config/*.yaml``) and loaded into frozen, validated
dataclasses by its kind's loader (:mod:`tendon_robot_sim.models.tendon_robot`,
:mod:`~tendon_robot_sim.models.trunk.robot`, :mod:`~tendon_robot_sim.models.snake.robot`,
:mod:`~tendon_robot_sim.models.pcr.robot`). Every quantity is SI: metres, kilograms,
seconds, newtons, pascals; angles are radians (REP 103): a file may give an angle in
degrees only under a key that says so (``angle_deg`` instead of ``angle``).

A bad file raises :class:`RobotDescriptionError` with one message that names the key and
the problem, e.g. ``tendons[2].offset: must be > 0, got -0.01``. Hostile files too: the
file is read by the package's one YAML loader (:mod:`tendon_robot_sim.files.yaml_loader`:
size and nesting bounded, aliases and duplicate keys refused), list lengths are bounded
(below), and any other failure while loading becomes the same one-line error.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from tendon_robot_sim.files import yaml_loader

# Positions along a backbone (anchors, vertebrae, section ends) are compared with this
# tolerance [m].
POSITION_TOLERANCE = 1e-9
# Bounds against hostile or mistyped files: far beyond any real robot, small enough that
# loading and simulating cannot exhaust memory or time.
MAX_LIST_LENGTH = 1000     # numbers in any one list of a description


class RobotDescriptionError(ValueError):
    """A robot description that cannot be used; the message names the key."""


# The physical range of every number a description holds, by its key (the last name of its
# path: rod.youngs_modulus -> youngs_modulus, gravity[2] -> gravity), in the key's SI unit:
# far beyond any real robot, but not so far that a model is asked for the impossible (a
# Young's modulus of 1e-30 Pa once reached the models and broke them). check_number applies
# it to every number of every kind's description; test/models/test_description_extremes.py
# requires an entry for every numeric key of the shipped files. An angle in radians is
# checked by DescriptionMapping.angle (at most a full turn, None here); in degrees
# (``*_deg``) by DEGREES.
# The size of a part (a rod's length and radius, a disc, a crank, a hole's offset) is at least
# MIN_SIZE: a PCR rod of radius 1e-30 m once passed and left its solver with an infinite
# residual; a rod is at least ROD_LENGTH[0] long. A position along the backbone may be 0.
MIN_SIZE = 1e-6            # m
MIN_LENGTH = 1e-3          # m
LENGTH = (0.0, 100.0, 'm', 'up to 100 m')
SIZE = (MIN_SIZE, 10.0, 'm', 'from 1 um to 10 m')
STIFFNESS = (0.0, 1e9, 'N/m', 'up to a steel bar')
PHYSICAL_RANGES: dict[str, tuple[float, float, str, str] | None] = {
    # geometry
    'length': (MIN_LENGTH, 100.0, 'm', 'from 1 mm to 100 m'),
    'rest_length': (MIN_LENGTH, 100.0, 'm', 'from 1 mm to 100 m'),
    'height': (MIN_SIZE, 100.0, 'm', 'from 1 um to 100 m'), 'first': LENGTH,
    'last': LENGTH, 'positions': LENGTH, 'end': LENGTH,
    'crank_length': (MIN_SIZE, 100.0, 'm', 'from 1 um to 100 m'),
    'radius_of_curvature': (MIN_SIZE, 100.0, 'm', 'from 1 um to 100 m'),
    'precurvature_radius': (MIN_SIZE, 1e6, 'm', 'from 1 um to 1000 km'),
    'radius': SIZE, 'thickness': SIZE, 'offset': SIZE,
    'end_offset': (0.0, 10.0, 'm', 'up to 10 m: 0 converges on the axis'),
    'contact_offset': SIZE,
    'area': (MIN_SIZE ** 2, 100.0, 'm^2', 'from 1 um^2 to 100 m^2'),
    'position': (-1e3, 1e3, 'm', 'within 1 km of the world origin'),
    'tip_marker': (-10.0, 10.0, 'm', 'within 10 m of the tip'),
    'pair': (-100.0, 100.0, 'm', 'within 100 m of the base centre'),
    'direction': (-1e6, 1e6, '', 'a direction, normalised when loaded'),
    'normal': (-1e6, 1e6, '', 'a direction, normalised when loaded'),
    'turns': (-1e3, 1e3, 'revolutions', 'at most 1000 turns'),
    'fraction': (0.0, 1.0, '', 'a fraction of the section'),
    # materials
    # up to 100 x diamond: the nearly rigid rods of a rigid-limit study
    'youngs_modulus': (1e3, 1e14, 'Pa', 'from a soft hydrogel to a nearly rigid rod'),
    'shear_modulus': (1e2, 1e14, 'Pa', 'from a soft hydrogel to a nearly rigid rod'),
    'poisson_ratio': (0.0, 0.5, '', 'of an isotropic material'),
    'density': (1.0, 2e5, 'kg/m^3', 'from an aerogel to ten times the densest metals: a rod may '
                'carry its tendons and spacers smeared over it'),
    # masses and inertias
    'mass': (0.0, 1e3, 'kg', 'up to a tonne'),
    'inertia': (0.0, 1e3, 'kg m^2', 'up to a tonne at a metre'),
    # loads, actuation and stiffness
    'gravity': (-100.0, 100.0, 'm/s^2', "up to ten times the Earth's"),
    'force': (-1e5, 1e5, 'N', 'up to 10 tonnes-force'),
    'moment': (-1e4, 1e4, 'N m', 'up to 10 tonnes-force at a metre'),
    'max_tension': (0.0, 1e5, 'N', 'up to 10 tonnes-force'),
    'pretension': (0.0, 1e5, 'N', 'up to 10 tonnes-force'),
    'min_contact_force': (0.0, 1e5, 'N', 'up to 10 tonnes-force'),
    'compliance': (0.0, 1.0, '1/N', 'at most a strain of 1 per newton'),
    'motor_distance': LENGTH,
    'friction_coefficient': (0.0, 10.0, '', 'of any pair of materials'),
    # a tendon's friction on its guides (tendons[i].friction.coefficient): the viscous law's
    # beta, and the sliding law's narrower range below
    'coefficient': (0.0, 1e3, '', "viscous beta in s/m (Till's example: 4), a sliding nu "
                    'within sliding_coefficient'),
    # the Jenkins elements of rod.bending_friction: their spring over the rod's E I (their
    # slip moment is a 'moment')
    'stiffness_ratio': (1e-3, 1e3, '', "a friction element's stiffness over the rod's E I"),
    'sliding_coefficient': (0.0, 2.0, '', 'Coulomb-capstan nu of a tendon on its guides: PTFE '
                            'about 0.05, steel on steel about 0.8'),
    'max_pressure': (-1e5, 1e8, 'Pa', 'gauge, from vacuum to 1000 bar'),
    'min_pressure': (-1e5, 1e8, 'Pa', 'gauge, from vacuum to 1000 bar'),
    'stiffness': STIFFNESS, 'spline_stiffness': STIFFNESS,
    'bending_stiffness': (0.0, 1e6, 'N m/rad', 'up to a steel beam'),
    'damping': (0.0, 1e6, 'N s/m', "up to a car's shock absorber x 1000"),
    'spline_damping': (0.0, 1e6, 'N s/m', "up to a car's shock absorber x 1000"),
    'shear_extension': (0.0, 1e9, 'N s', 'Kelvin-Voigt damping of a thick steel bar x 1000'),
    'bending_torsion': (0.0, 1e6, 'N m^2 s', 'Kelvin-Voigt damping of a thick steel bar x 1000'),
    'drag': (0.0, 1e6, 'kg/m^2', 'square-law drag of a rod in honey x 1000'),
    'ratio': (0.0, 1.0, '', 'a damping ratio'),
    'rate': (0.0, 1e6, '1/s', 'a decay rate'),
    # angles in radians: DescriptionMapping.angle
    'angle': None, 'contact_angle': None, 'limits': None, 'pair_angles': None,
    # contact: the world file (models/contact/world.py) and the robot's contact envelope
    'penalty_stiffness': (0.0, 1e12, 'N/m^2', 'load per metre of rod per metre of penetration'),
    'distance_scale': (1e-9, 1.0, 'm', "the smooth penalty's transition, 1 nm to 1 m"),
    'normal_damping': (0.0, 1e9, 'N s/m^2', 'per metre of rod'),
    'slip_velocity': (1e-9, 10.0, 'm/s', 'regularises Coulomb friction'),
    'size': SIZE, 'scale': (1e-9, 1e6, '', 'of a mesh file'),
    'orientation': (-1e6, 1e6, '', 'a quaternion, normalised when loaded'),
    'rod_radius': SIZE, 'disc_radius': SIZE,
}
DEGREES = (-360.0, 360.0, 'deg', 'at most a full turn')


def key_of(path: str) -> str:
    """Return the key of a path in a description: ``tendons[2].offset`` -> ``offset``."""
    return re.sub(r'(\[\d+\])+$', '', path.rpartition('.')[2])


def check_range(value: float, path: str, key: str | None = None) -> None:
    """
    Raise unless ``value`` is within the physical range of its key (:data:`PHYSICAL_RANGES`).

    ``key``: the key of the range, if not the last name of ``path``.
    """
    key = key or key_of(path)
    bounds = DEGREES if key.endswith('_deg') else PHYSICAL_RANGES.get(key)
    if bounds is None:
        return
    low, high, unit, why = bounds
    if not low <= value <= high:
        raise RobotDescriptionError(
            f'{path}: must be within [{low:g}, {high:g}]{" " + unit if unit else ""} ({why}), '
            f'got {value:g}')


# The robot kinds: a description's top-level ``kind`` key, and what the kind is. Each kind
# has its loader (models/tendon_robot.py, models/<kind>/robot.py); every loader starts
# with :func:`check_kind`, so a file of another kind fails with one clear line.
TENDON_ROBOT = 'tendon_robot'
ROBOT_KINDS = {
    TENDON_ROBOT: 'a tendon-driven continuum robot',
    'pcr_6rus': 'a 6-RUS parallel continuum robot',
    'bellows': 'a bellows-actuated continuum robot',
    'rolling_joint_snake': 'a rolling-joint snake robot',
}


def description_kind(data: Any) -> str:
    """Return the ``kind`` of a description as read from YAML; ``tendon_robot`` when absent."""
    kind = data.get('kind', TENDON_ROBOT) if isinstance(data, Mapping) else TENDON_ROBOT
    if not isinstance(kind, str) or kind not in ROBOT_KINDS:
        raise RobotDescriptionError(
            f'kind: must be one of {sorted(ROBOT_KINDS)}, got {describe_value(kind)}')
    return kind


def check_kind(data: Any, expected: str) -> None:
    """
    Raise unless the description ``data`` is of kind ``expected``, naming both kinds.

    Only a tendon robot may leave ``kind`` out.
    """
    # an empty file or a list has no kind to compare: naming a kind there would mislead
    require_mapping(data, '')
    if expected != TENDON_ROBOT and isinstance(data, Mapping) and 'kind' not in data:
        # a file without kind is a tendon robot's (config/robot.yaml): say so, and what is asked
        raise RobotDescriptionError(
            f'kind: none given, so {ROBOT_KINDS[TENDON_ROBOT]} ({TENDON_ROBOT}); this takes '
            f'{ROBOT_KINDS[expected]}, kind: {expected}')
    kind = description_kind(data)
    if kind != expected:
        wanted = f'kind {expected}' + (' (or no kind)' if expected == TENDON_ROBOT else '')
        raise RobotDescriptionError(
            f'kind: {kind} is {ROBOT_KINDS[kind]}; this takes {ROBOT_KINDS[expected]}, '
            f'{wanted}')


def require_mapping(data: Any, key: str) -> None:
    """Raise naming ``key`` (empty: the whole description) unless ``data`` is a mapping."""
    if not isinstance(data, Mapping):
        raise RobotDescriptionError(
            f'{key or "robot description"}: must be a mapping, got {describe_value(data)}')


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file with the package's one loader; RobotDescriptionError names the file."""
    try:
        return yaml_loader.read_yaml(path)
    except yaml_loader.YamlFileError as error:
        raise RobotDescriptionError(str(error)) from None


def _one_line(error: Exception) -> str:
    return ' '.join(str(error).split())[:500]


@dataclass(frozen=True)
class Base:
    """Clamped base of the rod: pose of s = 0 in the world frame."""

    frame_id: str
    position: np.ndarray    # (3,) m
    direction: np.ndarray   # (3,) unit, d3 at s = 0
    normal: np.ndarray      # (3,) unit, d1 at s = 0

    @property
    def binormal(self) -> np.ndarray:
        """d2 = d3 x d1 at s = 0 (unit)."""
        return np.cross(self.direction, self.normal)

    @property
    def rotation(self) -> np.ndarray:
        """R (3x3) whose columns are d1, d2, d3 of the base: body -> world."""
        return np.column_stack((self.normal, self.binormal, self.direction))


class CircularSection:
    """
    Section properties of a uniform rod of circular cross-section.

    A base for the dataclasses that have ``radius`` [m], ``density`` [kg/m^3] and
    ``youngs_modulus`` [Pa] (:class:`Rod`, the parallel robot's rods).
    """

    radius: float
    density: float
    youngs_modulus: float

    @property
    def area(self) -> float:
        """Cross-section area A = pi r^2 [m^2]."""
        return math.pi * self.radius ** 2

    @property
    def second_moment(self) -> float:
        """Second moment of area I = pi r^4 / 4 [m^4] (about d1 or d2)."""
        return math.pi * self.radius ** 4 / 4.0

    @property
    def polar_moment(self) -> float:
        """Polar moment J = 2 I [m^4] (about d3)."""
        return 2.0 * self.second_moment

    @property
    def bending_stiffness(self) -> float:
        """E I [N m^2]."""
        return self.youngs_modulus * self.second_moment

    @property
    def linear_density(self) -> float:
        """Linear density rho A [kg/m]."""
        return self.density * self.area


def load_description(path: str | Path, from_dict: Callable[[Any], Any]) -> Any:
    """``from_dict`` of the YAML in ``path``; a RobotDescriptionError names the file."""
    data = read_yaml(path)
    try:
        return from_dict(data)
    except RobotDescriptionError as error:
        raise RobotDescriptionError(f'{path}: {error}') from None
    except (ArithmeticError, MemoryError, RecursionError, TypeError, ValueError) as error:
        # A check above missed a case: still one line naming the file, never a traceback.
        raise RobotDescriptionError(f'{path}: cannot load: {type(error).__name__}: '
                                    f'{_one_line(error)}') from None


def load_base(m: 'DescriptionMapping') -> Base:
    frame_id = m.string('frame_id', default='base_link')
    position = m.vector('position', default=(0.0, 0.0, 0.0))
    direction = m.unit_vector('direction', default=(1.0, 0.0, 0.0))
    normal = m.unit_vector('normal', default=(0.0, 0.0, 1.0))
    if abs(float(direction @ normal)) > 1e-6:
        raise RobotDescriptionError(
            f'base.normal: must be perpendicular to base.direction, '
            f'got dot product {float(direction @ normal):.3g}')
    m.finish()
    return Base(frame_id=frame_id, position=position, direction=direction, normal=normal)


def check_unique_names(names: Sequence[str], key: str, what: str) -> None:
    """
    Raise naming the first repeated name of the list ``key`` (e.g. ``tendons[3].name``).

    ``what`` names an item in the message: ``duplicate tendon name 't0'``.
    """
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise RobotDescriptionError(f'{key}[{i}].name: duplicate {what} name {name!r}')


def check_reach(key: str, what: str, reach: float, body: str, length_key: str,
                length: float) -> None:
    """
    Refuse a part ``reach`` [m] off its axis when the ``body`` is shorter than that.

    No robot holds a tendon or a bellows farther out than its rod or section is long (the
    shipped files: at most a fifth of it): such an offset is a length in mm given as m.
    ``what`` says what is that far out: ``a hole 8 m from the backbone``.
    """
    if reach > length:
        raise RobotDescriptionError(
            f'{key}: {what} is farther out than the {body} is long ({length_key} {length:g} m)'
            f'; a length in mm?')


def describe_value(value: Any) -> str:
    return f'{type(value).__name__} {short_repr(value)}' if value is not None else 'nothing'


def short_repr(value: Any) -> str:
    """``repr(value)``, cut to 80 characters: error messages stay one readable line."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        # (repr refuses integers of more than 4300 digits)
        return f'an integer of about {round(value.bit_length() * math.log10(2))} digits'
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


class DescriptionMapping:
    """A YAML mapping read key by key; unknown keys are rejected by :meth:`finish`."""

    def __init__(self, data: Any, key: str, required: Sequence[str] = (),
                 optional: Sequence[str] = ()):
        self.key = key
        if data is None and not required:
            data = {}
        require_mapping(data, key)
        self.data = dict(data)
        self.known = set(required) | set(optional)
        self.required = set(required)
        for name in required:
            if name not in self.data:
                raise RobotDescriptionError(f'{self._path(name)}: required key is missing')
        self.seen: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self.data

    def _path(self, name: str) -> str:
        return f'{self.key}.{name}' if self.key else name

    def get(self, name: str, default: Any = None) -> Any:
        self.seen.add(name)
        self.known.add(name)
        return self.data.get(name, default)

    def mapping(self, name: str, default: Any = None) -> 'DescriptionMapping':
        optional = {
            'base': ('frame_id', 'position', 'direction', 'normal'),
            'rod': ('length', 'radius', 'density', 'youngs_modulus', 'shear_modulus',
                    'elements', 'damping', 'end_joint_correction', 'drag'),
            'damping': ('ratio', 'rate', 'shear_extension', 'bending_torsion'),
            'vertebrae': ('count', 'first', 'last', 'positions', 'mass', 'radius',
                          'thickness'),
            'tip_load': ('force', 'moment'),
            'contact': ('rod_radius', 'disc_radius'),
        }[name]
        value = self.get(name, default)
        return DescriptionMapping(value, self._path(name), optional=optional)

    def string(self, name: str, default: str | None = None) -> str:
        value = self.get(name, default)
        if not isinstance(value, str) or not value:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be a non-empty string, got {describe_value(value)}')
        return value

    def number(self, name: str, default: float | None = None, positive: bool = False,
               minimum: float | None = None, maximum: float | None = None) -> float:
        value = self.get(name, default)
        if name not in self.data and default is None:
            raise RobotDescriptionError(f'{self._path(name)}: required key is missing')
        value = check_number(value, self._path(name), positive, minimum)
        if maximum is not None and value > maximum:
            raise RobotDescriptionError(f'{self._path(name)}: must be <= {maximum:g}, '
                                        f'got {value:g}')
        return value

    def integer(self, name: str, default: int | None = None, minimum: int = 0,
                maximum: int | None = None) -> int:
        value = self.get(name, default)
        if value is None:
            raise RobotDescriptionError(f'{self._path(name)}: required key is missing')
        if isinstance(value, bool) or not isinstance(value, int):
            raise RobotDescriptionError(
                f'{self._path(name)}: must be an integer, got {describe_value(value)}')
        if value < minimum:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be >= {minimum}, got {short_repr(value)}')
        if maximum is not None and value > maximum:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be <= {maximum}, got {short_repr(value)}')
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise RobotDescriptionError(
                f'{self._path(name)}: must be true or false, got {describe_value(value)}')
        return value

    def choice(self, name: str, choices: Sequence[str], default: str) -> str:
        value = self.get(name, default)
        if value not in choices:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be one of {list(choices)}, got {describe_value(value)}')
        return value

    def number_list(self, name: str, max_length: int = MAX_LIST_LENGTH,
                    size: int | None = None) -> np.ndarray:
        value = self.get(name)
        if not isinstance(value, list) or not value:
            raise RobotDescriptionError(f'{self._path(name)}: must be a non-empty list of '
                                        f'numbers, got {describe_value(value)}')
        if size is not None and len(value) != size:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be a list of {size} numbers, got {len(value)}')
        if len(value) > max_length:
            raise RobotDescriptionError(
                f'{self._path(name)}: at most {max_length} numbers, got {len(value)}')
        return np.array([check_number(v, f'{self._path(name)}[{i}]', False, None)
                         for i, v in enumerate(value)])

    def angle(self, name: str, default: float | None = None) -> float:
        """
        Read an angle [rad]: radians under ``name``, or degrees under ``name_deg``.

        REP 103 makes radians the unit of angles, so a bare key is radians; degrees must say
        so in the key. Exactly one of the two keys may be given.
        """
        key = self._angle_key(name, required=default is None)
        if key is None:
            return default
        value = self.number(key)
        return math.radians(value) if key != name else self._check_radians(name, value)

    def angle_list(self, name: str, size: int) -> np.ndarray:
        """Read ``size`` angles [rad], under ``name`` in radians or ``name_deg`` in degrees."""
        key = self._angle_key(name, required=True)
        values = self.number_list(key, size=size)
        return np.radians(values) if key != name else self._check_radians(name, values)

    def _check_radians(self, name: str, value: Any) -> Any:
        # Files of earlier versions gave degrees under the bare key: refuse what cannot be
        # meant as radians rather than read 90 degrees as 90 rad.
        if np.max(np.abs(value)) > 2.0 * math.pi:
            shown = (f'{value:g}' if np.ndim(value) == 0
                     else '[' + ', '.join(f'{v:g}' for v in value) + ']')
            raise RobotDescriptionError(
                f'{self._path(name)}: {shown} rad is more than a full turn; angles are '
                f'radians (REP 103): for degrees write {name}_deg: {shown}')
        return value

    def _angle_key(self, name: str, required: bool) -> str | None:
        degrees = f'{name}_deg'
        self.known.update((name, degrees))
        given = [key for key in (name, degrees) if key in self.data]
        if len(given) == 2:
            raise RobotDescriptionError(
                f'{self._path(name)}: give the angle once, in radians under {name!r} or in '
                f'degrees under {degrees!r}, not both')
        if not given and required:
            raise RobotDescriptionError(
                f'{self._path(name)}: required key is missing (radians; or {degrees!r} in '
                f'degrees)')
        return given[0] if given else None

    def vector(self, name: str, default: Sequence[float]) -> np.ndarray:
        value = self.get(name, list(default))
        if not isinstance(value, list) or len(value) != 3:
            raise RobotDescriptionError(
                f'{self._path(name)}: must be a list of 3 numbers, got {describe_value(value)}')
        return np.array([check_number(v, f'{self._path(name)}[{i}]', False, None)
                         for i, v in enumerate(value)])

    def unit_vector(self, name: str, default: Sequence[float]) -> np.ndarray:
        v = self.vector(name, default)
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            raise RobotDescriptionError(f'{self._path(name)}: must be a non-zero vector')
        return v / norm

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.known)
        if unknown:
            raise RobotDescriptionError(
                f'{self._path(unknown[0])}: unknown key (known keys: {sorted(self.known)})')


def check_number(value: Any, path: str, positive: bool, minimum: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RobotDescriptionError(f'{path}: must be a number, got {describe_value(value)}')
    try:
        value = float(value)
    except OverflowError:
        raise RobotDescriptionError(f'{path}: must be finite, got {short_repr(value)}') from None
    if not math.isfinite(value):
        raise RobotDescriptionError(f'{path}: must be finite, got {value}')
    if positive and value <= 0.0:
        raise RobotDescriptionError(f'{path}: must be > 0, got {value:g}')
    if minimum is not None and value < minimum:
        raise RobotDescriptionError(f'{path}: must be >= {minimum:g}, got {value:g}')
    check_range(value, path)
    return value
