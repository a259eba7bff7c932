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
Robot description: the one source of truth for geometry and material.

A robot is described in YAML (see ``config/robot.yaml``) and loaded into frozen,
validated dataclasses. Every quantity is SI: metres, kilograms, seconds, newtons,
pascals; angles are radians (REP 103): a file may give an angle in degrees only under a key
that says so (``angle_deg`` instead of ``angle``).

Frames
------
``base`` frame (REP 103): origin at ``base.position``; the rod leaves the base
along ``base.direction`` (the material d3 axis at s = 0); ``base.normal`` is d1;
d2 = d3 x d1. Vectors given in the file (``gravity``, ``tip_load``) are expressed
in this frame, which is also the world frame of the simulation.

Tendon holes are placed in the cross-section frame (d1, d2): a hole at angle
``angle`` (measured from d1 towards d2) and radial ``offset`` sits at
``offset * (cos angle, sin angle, 0)`` in body coordinates.

A bad file raises :class:`RobotDescriptionError` with one message that names the
key and the problem, e.g. ``tendons[2].offset: must be > 0, got -0.01``. Hostile
files too: the file size, the nesting depth, the counts (elements, vertebrae,
tendons) and the lengths are bounded (the constants below), YAML aliases are
refused (an alias bomb expands exponentially), and any other failure while loading
becomes the same one-line error.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import yaml

ROUTINGS = ('parallel', 'helical', 'tapered')
# Tendon anchors and vertebra positions are compared with this tolerance [m].
POSITION_TOLERANCE = 1e-9
# Bounds against hostile or mistyped files: far beyond any real robot, small enough that
# loading and simulating cannot exhaust memory or time.
MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 20             # nesting of mappings and lists (a description needs 4)
MAX_ELEMENTS = 1000        # Cosserat elements of the dynamic model
MAX_VERTEBRAE = 1000
MAX_LIST_LENGTH = 1000     # numbers in any one list of a description
MAX_TENDONS = 64
ROD_LENGTH = (1e-3, 100.0)   # m
MIN_SIZE = 1e-6              # m, smallest radius and tendon offset
# Hole layouts whose second singular value is below this fraction of the first are
# planar: every hole on one line through the backbone.
PLANAR_TOLERANCE = 1e-9
# Default damping ratio of the first bending mode: silicone rubber has a loss factor of
# about 0.2 (ratio = loss factor / 2); identify it from a step response for a real rod.
DEFAULT_DAMPING_RATIO = 0.1
# Default vertebra disc: this far beyond the outermost tendon hole [m], and this thick [m].
DISC_MARGIN = 0.003
DEFAULT_DISC_THICKNESS = 0.002


class RobotDescriptionError(ValueError):
    """A robot description that cannot be used; the message names the key."""


# The robot kinds: a description's top-level ``kind`` key, and what the kind is. Each kind
# has its loader (tendon robots here; ``pcr_robot``, ``bellows_robot``, ...); every loader
# starts with :func:`check_kind`, so a file of another kind fails with one clear line.
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
    if expected != TENDON_ROBOT and isinstance(data, Mapping) and 'kind' not in data:
        raise RobotDescriptionError(
            f'kind: required key is missing (kind: {expected} for {ROBOT_KINDS[expected]})')
    kind = description_kind(data)
    if kind != expected:
        wanted = f'kind {expected}' + (' (or no kind)' if expected == TENDON_ROBOT else '')
        raise RobotDescriptionError(
            f'kind: {kind} is {ROBOT_KINDS[kind]}; this takes {ROBOT_KINDS[expected]}, '
            f'{wanted}')


def vertebrae_required(model: str) -> str:
    """Why ``model`` refuses a robot without vertebrae, and what works instead."""
    return (f'vertebrae: the {model} needs vertebra discs (its tendons act on the rod only '
            'at the discs) and this robot has none; without discs use the cosserat or '
            'kirchhoff statics (simulator mode quasi_static with statics_model cosserat or '
            'kirchhoff, --model cosserat or kirchhoff)')


class _Loader(yaml.SafeLoader):
    """
    SafeLoader that also reads ``16.6e6`` as a float (YAML 1.2; 1.1 makes it a string).

    It refuses aliases and nesting deeper than :data:`MAX_DEPTH`.
    """

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, 'aliases (*name) are not allowed in a robot description',
                self.peek_event().start_mark)
        self._depth = getattr(self, '_depth', 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f'nested deeper than {MAX_DEPTH} levels',
                    self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_Loader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$'),
    list('-+0123456789.'))


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file with :class:`_Loader`; errors name the file."""
    path = Path(path)
    try:
        with open(path, 'rb') as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise RobotDescriptionError(f'{path}: cannot read: {error.strerror}') from None
    if len(data) > MAX_FILE_BYTES:
        raise RobotDescriptionError(f'{path}: larger than {MAX_FILE_BYTES} bytes')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise RobotDescriptionError(f'{path}: not UTF-8 text (byte {error.start})') from None
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as error:
        raise RobotDescriptionError(f'{path}: not valid YAML: {_one_line(error)}') from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as error:
        raise RobotDescriptionError(f'{path}: cannot parse: {type(error).__name__}: '
                                    f'{_one_line(error)}') from None


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


@dataclass(frozen=True)
class Damping:
    """
    Mass-proportional damping of the dynamic model: exactly one field is set.

    Every velocity decays as dv/dt = -c v, which gives bending mode i the damping
    ratio c / (2 omega_i) (see :mod:`tendon_robot_sim.models.modal`).
    """

    ratio: float | None = None   # zeta of the first bending mode, dimensionless
    rate: float | None = None    # c, 1/s

    def to_dict(self) -> dict[str, float]:
        return {'ratio': self.ratio} if self.ratio is not None else {'rate': self.rate}


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


@dataclass(frozen=True)
class Rod(CircularSection):
    """Elastic backbone: a straight, uniform, circular rod."""

    length: float            # L, m
    radius: float            # m
    density: float           # rho, kg/m^3
    youngs_modulus: float    # E, Pa
    shear_modulus: float     # G, Pa
    elements: int            # number of Cosserat elements in the dynamic model
    damping: Damping         # of the dynamic model
    end_joint_correction: bool = True   # soften the end joints (simulator.soften_end_joints)


@dataclass(frozen=True)
class Tendon:
    """
    One tendon: its hole path in the cross-section and its limits.

    The hole at arc length s (0 <= s <= end) is at radius
    ``rho(s) = offset + (end_offset - offset) s / end`` and angle
    ``theta(s) = angle + 2 pi turns s / end`` in the (d1, d2) plane.
    """

    name: str
    offset: float         # m, hole radius at the base
    angle: float          # rad, hole angle at the base, from d1 towards d2
    end: float            # m, arc length of the anchor
    routing: str          # 'parallel' | 'helical' | 'tapered'
    turns: float          # revolutions over [0, end]
    end_offset: float     # m, hole radius at the anchor
    compliance: float     # 1/N, tendon strain per newton
    max_tension: float    # N

    def hole(self, s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Hole position r(s) and its derivatives r_s, r_ss in body coordinates.

        Parameters
        ----------
        s : float or array (k,)
            Arc length [m], 0 <= s <= end.

        Returns
        -------
        r, r_s, r_ss : arrays (3,) or (3, k)
            Position [m], first derivative [-] and second derivative [1/m]
            of the hole with respect to s, in the (d1, d2, d3) frame (z = 0).

        """
        s = np.asarray(s, dtype=float)
        rho_s = (self.end_offset - self.offset) / self.end
        theta_s = 2.0 * math.pi * self.turns / self.end
        rho = self.offset + rho_s * s
        theta = self.angle + theta_s * s
        c, si = np.cos(theta), np.sin(theta)
        zero = np.zeros_like(s)
        r = np.stack((rho * c, rho * si, zero))
        # d/ds (rho e(theta)) = rho_s e + rho theta_s e_perp
        r_s = np.stack((rho_s * c - rho * theta_s * si, rho_s * si + rho * theta_s * c, zero))
        # second derivative (rho_ss = theta_ss = 0)
        r_ss = np.stack((
            -2.0 * rho_s * theta_s * si - rho * theta_s ** 2 * c,
            2.0 * rho_s * theta_s * c - rho * theta_s ** 2 * si,
            zero,
        ))
        return r, r_s, r_ss


@dataclass(frozen=True)
class TipLoad:
    """External wrench at the tip, world frame."""

    force: np.ndarray    # (3,) N
    moment: np.ndarray   # (3,) N m


@dataclass(frozen=True)
class Robot:
    """A tendon-driven continuum robot."""

    name: str
    base: Base
    gravity: np.ndarray                # (3,) m/s^2, world frame
    rod: Rod
    vertebra_positions: np.ndarray     # (k,) m, arc lengths, increasing; k = 0: no discs
    vertebra_mass: float               # kg, per vertebra
    tendons: tuple[Tendon, ...]
    tip_load: TipLoad
    disc_radius: float = 0.0           # m, of every vertebra disc
    disc_thickness: float = 0.0        # m

    @property
    def disc_inertia(self) -> tuple[float, float]:
        """
        Rotary inertia of one disc about a diameter and about its axis [kg m^2].

        Thin cylinder: m (3 r^2 + t^2) / 12 and m r^2 / 2.
        """
        m, r, t = self.vertebra_mass, self.disc_radius, self.disc_thickness
        return m * (3.0 * r * r + t * t) / 12.0, 0.5 * m * r * r

    @property
    def tendon_names(self) -> list[str]:
        return [t.name for t in self.tendons]

    @property
    def max_tensions(self) -> np.ndarray:
        return np.array([t.max_tension for t in self.tendons])

    @property
    def bending_directions(self) -> np.ndarray:
        """
        Directions the tendons can bend the rod towards, in the base cross-section.

        Rows are orthonormal (d1, d2) components: d1 and d2 when the holes at the base span
        the cross-section; one row, the line of the holes pointing to the first tendon's
        hole, when every hole lies on one line through the backbone (a planar robot, e.g.
        two antagonistic tendons).
        """
        holes = np.array([[t.offset * math.cos(t.angle), t.offset * math.sin(t.angle)]
                          for t in self.tendons])
        singular = np.linalg.svd(holes, compute_uv=False)
        if singular.size > 1 and singular[1] > PLANAR_TOLERANCE * singular[0]:
            return np.eye(2)
        first = self.tendons[0].angle
        return np.array([[math.cos(first), math.sin(first)]])

    def tendon_index(self, name: str) -> int:
        """Index of the tendon called ``name``; KeyError names the known ones."""
        for i, tendon in enumerate(self.tendons):
            if tendon.name == name:
                return i
        raise KeyError(f'unknown tendon {name!r}; known tendons: {self.tendon_names}')

    def with_changes(self, **rod_changes: Any) -> 'Robot':
        """Return a copy with some rod fields replaced, in the YAML schema (calibration, tests)."""
        data = self.to_dict()
        data['rod'].update(rod_changes)
        return robot_from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Return the description as plain data, in the YAML schema (angles in radians)."""
        data = {
            'name': self.name,
            'base': {
                'frame_id': self.base.frame_id,
                'position': self.base.position.tolist(),
                'direction': self.base.direction.tolist(),
                'normal': self.base.normal.tolist(),
            },
            'gravity': self.gravity.tolist(),
            'rod': {
                'length': self.rod.length, 'radius': self.rod.radius,
                'density': self.rod.density, 'youngs_modulus': self.rod.youngs_modulus,
                'shear_modulus': self.rod.shear_modulus, 'elements': self.rod.elements,
                'damping': self.rod.damping.to_dict(),
                'end_joint_correction': self.rod.end_joint_correction,
            },
            'vertebrae': {
                'positions': self.vertebra_positions.tolist(),
                'mass': self.vertebra_mass,
                'radius': self.disc_radius,
                'thickness': self.disc_thickness,
            },
            'tendons': [
                {
                    'name': t.name, 'offset': t.offset, 'angle': t.angle,
                    'end': t.end, 'routing': t.routing, 'turns': t.turns,
                    'end_offset': t.end_offset, 'compliance': t.compliance,
                    'max_tension': t.max_tension,
                }
                for t in self.tendons
            ],
            'tip_load': {
                'force': self.tip_load.force.tolist(),
                'moment': self.tip_load.moment.tolist(),
            },
        }
        if not self.vertebra_positions.size:
            del data['vertebrae']      # optional: a robot without discs
        return data


# --------------------------------------------------------------------------- loading


def load_robot(path: str | Path) -> Robot:
    """
    Load and validate a robot description file.

    Raises
    ------
    RobotDescriptionError
        With one message naming the file, the key and the problem.

    """
    return load_description(path, robot_from_dict)


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


def robot_from_dict(data: Any) -> Robot:
    """Build a validated :class:`Robot` from plain data in the YAML schema."""
    check_kind(data, TENDON_ROBOT)
    top = DescriptionMapping(data, '', required=('name', 'rod', 'tendons'),
                             optional=('kind', 'base', 'gravity', 'vertebrae', 'tip_load'))
    top.get('kind')
    name = top.string('name')
    base = load_base(top.mapping('base', default={}))
    gravity = top.vector('gravity', default=(0.0, 0.0, -9.80665))
    rod = _load_rod(top.mapping('rod'))
    vertebrae = top.mapping('vertebrae', default={'count': 0})
    positions, mass = _load_vertebrae(vertebrae, rod.length)
    tendons = _load_tendons(top.get('tendons'), rod.length, positions)
    disc_radius, disc_thickness = _load_discs(vertebrae, tendons)
    tip = top.mapping('tip_load', default={})
    tip_load = TipLoad(force=tip.vector('force', default=(0.0, 0.0, 0.0)),
                       moment=tip.vector('moment', default=(0.0, 0.0, 0.0)))
    tip.finish()
    top.finish()
    return Robot(name=name, base=base, gravity=gravity, rod=rod,
                 vertebra_positions=positions, vertebra_mass=mass,
                 tendons=tendons, tip_load=tip_load, disc_radius=disc_radius,
                 disc_thickness=disc_thickness)


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


def _load_rod(m: 'DescriptionMapping') -> Rod:
    rod = Rod(
        length=m.number('length', positive=True, minimum=ROD_LENGTH[0],
                        maximum=ROD_LENGTH[1]),
        radius=m.number('radius', positive=True, minimum=MIN_SIZE),
        density=m.number('density', positive=True),
        youngs_modulus=m.number('youngs_modulus', positive=True),
        shear_modulus=m.number('shear_modulus', positive=True),
        elements=m.integer('elements', default=50, minimum=2, maximum=MAX_ELEMENTS),
        damping=_load_damping(m.mapping('damping', default={'ratio': DEFAULT_DAMPING_RATIO})),
        end_joint_correction=m.boolean('end_joint_correction', default=True),
    )
    m.finish()
    if rod.radius >= rod.length:
        raise RobotDescriptionError(
            f'rod.radius: must be smaller than rod.length ({rod.length}), got {rod.radius}')
    return rod


def _load_damping(m: 'DescriptionMapping') -> Damping:
    given = [key for key in ('ratio', 'rate') if key in m]
    if len(given) != 1:
        raise RobotDescriptionError(
            f'rod.damping: give exactly one of ratio (damping ratio of the first bending '
            f'mode) or rate (1/s), got {sorted(m.data) or "neither"}')
    if given[0] == 'ratio':
        damping = Damping(ratio=m.number('ratio', minimum=0.0))
        if damping.ratio >= 1.0:
            raise RobotDescriptionError(
                f'rod.damping.ratio: must be < 1 (an oscillating first mode), got '
                f'{damping.ratio:g}')
    else:
        damping = Damping(rate=m.number('rate', minimum=0.0))
    m.finish()
    return damping


def _load_discs(m: 'DescriptionMapping', tendons: tuple[Tendon, ...]) -> tuple[float, float]:
    """Disc radius (default: outermost tendon hole + DISC_MARGIN) and thickness [m]."""
    outermost = max(max(t.offset, t.end_offset) for t in tendons)
    radius = m.number('radius', default=outermost + DISC_MARGIN, positive=True)
    thickness = m.number('thickness', default=DEFAULT_DISC_THICKNESS, positive=True)
    m.finish()
    return radius, thickness


def _load_vertebrae(m: 'DescriptionMapping', length: float) -> tuple[np.ndarray, float]:
    mass = m.number('mass', default=0.0, minimum=0.0)
    if 'positions' in m:
        for key in ('count', 'first', 'last'):
            if key in m:
                raise RobotDescriptionError(
                    f'vertebrae.{key}: give either positions or count/first/last, not both')
        positions = m.number_list('positions', max_length=MAX_VERTEBRAE)
    else:
        count = m.integer('count', minimum=0, maximum=MAX_VERTEBRAE)
        if count == 0:
            positions = np.zeros(0)
        else:
            last = m.number('last', default=length, positive=True)
            first = m.number('first', default=last / count, positive=True)
            if count > 1 and first >= last:
                raise RobotDescriptionError(
                    f'vertebrae.first: must be < vertebrae.last ({last}) when count > 1, '
                    f'got {first}')
            positions = np.linspace(first, last, count) if count > 1 else np.array([last])
    for i, s in enumerate(positions):
        if not 0.0 < s <= length + POSITION_TOLERANCE:
            raise RobotDescriptionError(
                f'vertebrae.positions[{i}]: must be in (0, rod.length = {length}], got {s}')
    if np.any(np.diff(positions) <= 0.0):
        raise RobotDescriptionError('vertebrae.positions: must be strictly increasing')
    return np.minimum(positions, length), mass


def _load_tendons(data: Any, length: float, vertebrae: np.ndarray) -> tuple[Tendon, ...]:
    if not isinstance(data, list) or not data:
        raise RobotDescriptionError(
            f'tendons: must be a non-empty list, got {describe_value(data)}')
    if len(data) > MAX_TENDONS:
        raise RobotDescriptionError(f'tendons: at most {MAX_TENDONS}, got {len(data)}')
    tendons = []
    for i, item in enumerate(data):
        key = f'tendons[{i}]'
        m = DescriptionMapping(item, key, required=('name', 'offset'),
                               optional=('end', 'routing', 'turns', 'end_offset', 'compliance',
                                         'max_tension'))
        name = m.string('name')
        offset = m.number('offset', positive=True, minimum=MIN_SIZE)
        angle = m.angle('angle')
        end = m.number('end', default=length, positive=True)
        routing = m.choice('routing', ROUTINGS, default='parallel')
        turns = m.number('turns', default=0.0)
        end_offset = m.number('end_offset', default=offset, minimum=0.0)
        compliance = m.number('compliance', default=0.0, minimum=0.0)
        max_tension = m.number('max_tension', default=20.0, positive=True)
        m.finish()
        if end > length + POSITION_TOLERANCE:
            raise RobotDescriptionError(
                f'{key}.end: must be <= rod.length ({length}), got {end}')
        if vertebrae.size and np.min(np.abs(vertebrae - end)) > 1e-6:
            raise RobotDescriptionError(
                f'{key}.end: a tendon is anchored at a vertebra; no vertebra at {end} m '
                f'(vertebrae at {np.round(vertebrae, 6).tolist()})')
        if routing == 'parallel' and (turns != 0.0 or end_offset != offset):
            raise RobotDescriptionError(
                f'{key}.routing: parallel routing needs turns = 0 and end_offset = offset; '
                f'use routing: helical or tapered')
        if routing == 'helical' and turns == 0.0:
            raise RobotDescriptionError(f'{key}.turns: helical routing needs turns != 0')
        if routing == 'tapered' and end_offset == offset:
            raise RobotDescriptionError(
                f'{key}.end_offset: tapered routing needs end_offset != offset')
        tendons.append(Tendon(name=name, offset=offset, angle=angle, end=min(end, length),
                              routing=routing, turns=turns, end_offset=end_offset,
                              compliance=compliance, max_tension=max_tension))
    check_unique_names([t.name for t in tendons], 'tendons', 'tendon')
    return tuple(tendons)


def check_unique_names(names: Sequence[str], key: str, what: str) -> None:
    """
    Raise naming the first repeated name of the list ``key`` (e.g. ``tendons[3].name``).

    ``what`` names an item in the message: ``duplicate tendon name 't0'``.
    """
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise RobotDescriptionError(f'{key}[{i}].name: duplicate {what} name {name!r}')


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
        if not isinstance(data, Mapping):
            raise RobotDescriptionError(
                f'{key or "robot description"}: must be a mapping, got {describe_value(data)}')
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
                    'elements', 'damping', 'end_joint_correction'),
            'damping': ('ratio', 'rate'),
            'vertebrae': ('count', 'first', 'last', 'positions', 'mass', 'radius',
                          'thickness'),
            'tip_load': ('force', 'moment'),
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
    return value
