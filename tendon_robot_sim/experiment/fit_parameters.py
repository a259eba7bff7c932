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
The parameters a calibration fits (``calibrate --fit``), their bounds, ties and scaling.

Each name is one parameter of the robot description, or one value several share (a tie):

* the rod: ``youngs_modulus``, ``shear_modulus``, ``density``, ``radius``; the discs:
  ``vertebra_mass``; the dynamics (replays only): ``damping``, ``bending_torsion``,
  ``shear_extension``, ``drag``;
* a tendon field, ``TENDONS.FIELD``: ``offset`` (hole radius, m), ``angle`` (a turn of the
  holes about the backbone, rad, from the file's angles), ``compliance`` (1/N, strain per
  newton), ``pretension`` (N: the tension on the straight robot at zero displacement, held as
  the tendon's ``reference_length``), ``motor_distance`` (m), ``friction`` (the Coulomb-capstan
  coefficient nu of the sliding law, dimensionless; from 0 where the file has none: the fit
  then solves the holds in order, each from the last, by the path-dependent statics).
  ``bending_friction.moment`` (N m) and ``bending_friction.stiffness_ratio`` (-): the rod's
  bending friction (``rod.bending_friction``, from none: moment 0, ratio 1), path-dependent
  alike; ``bending_friction.moment@segment``: one moment per segment (``Robot.segment_ends``);
  ``bending_friction.tension_arm`` (m): the bound's growth with the tendons' tension.
  TENDONS is a tendon's name or a pattern (``*``, ``s1_*``): the matching tendons share one
  value (tied; tied angles turn together). ``@segment`` fits one value per segment of the
  match (tendons anchored at the same arc length), ``@tendon`` one per tendon:
  ``*.pretension@segment``;
* the registration of the measurements: ``base.position`` (m) and ``base.rotation`` (a
  rotation vector about the base frame's axes, rad, turning the robot about its base from the
  file's orientation), each or one component (``base.position.z``); the marker the tip sensor
  sees: ``tip_marker`` (m, tip frame), or one component;
* the load: ``gravity`` (m/s^2, world frame: where the robot's weight pulls), or one
  component (``gravity.z``): a robot whose mounting was not recorded (standing, hanging or
  lying) finds it, the components passing through 0 from one side to the other.

Positive quantities (moduli, masses, sizes, compliance, damping) are fitted as z = ln(p / p0),
with default bounds p0 / 10 .. 10 p0; the others linearly, z = (p - p0) / scale, with default
bounds that say what they mean (below). Every bound, default or given, lies within what the
robot description loader takes for the value (:func:`description_limits`, from the loader's own
table and constants): a fit never writes a robot file that cannot be loaded again. No ROS
imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
import math
from typing import Mapping, Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from tendon_robot_sim.models.description import PHYSICAL_RANGES
from tendon_robot_sim.models.tendon_robot import (anchors, BendingFriction, FRICTION_LAWS,
                                                  MAX_DAMPING_RATIO, MAX_TENSION_ARM,
                                                  REFERENCE_LENGTH_FACTORS, Robot,
                                                  robot_from_dict)

ROD_FIELDS = ('youngs_modulus', 'shear_modulus', 'density', 'radius')
DYNAMIC_FIELDS = ('damping', 'bending_torsion', 'shear_extension', 'drag')
TENDON_FIELDS = ('offset', 'angle', 'compliance', 'pretension', 'motor_distance', 'friction')
# rod.bending_friction (models.rod.statics.bending_friction): path-dependent, as 'friction'
BENDING_FIELDS = ('bending_friction.moment', 'bending_friction.stiffness_ratio',
                  'bending_friction.tension_arm')
VECTOR_FIELDS = ('base.position', 'base.rotation', 'tip_marker', 'gravity')
GROUPINGS = ('segment', 'tendon')
FITTABLE = (ROD_FIELDS + ('vertebra_mass',) + tuple(f'<tendons>.{f}' for f in TENDON_FIELDS)
            + VECTOR_FIELDS + DYNAMIC_FIELDS + BENDING_FIELDS
            + (BENDING_FIELDS[0] + '@segment',))
# Fitted as logarithms: positive by nature.
LOG_FIELDS = (ROD_FIELDS + ('vertebra_mass', 'offset', 'compliance') + DYNAMIC_FIELDS
              + ('bending_friction.stiffness_ratio',))
# Default half-widths of the bounds of the linear parameters, and their scales (the size of a
# unit step of z), in their units; lengths in rod lengths.
ANGLE_BOUND, ANGLE_SCALE = 0.5, 0.05          # rad
ROTATION_BOUND, ROTATION_SCALE = 0.5, 0.01    # rad
POSITION_BOUND, POSITION_SCALE = 1.0, 0.01    # rod lengths
PRETENSION_SCALE = 1.0                        # N
MOTOR_DISTANCE_BOUND, MOTOR_DISTANCE_SCALE = 10.0, 0.1   # rod lengths
# gravity's components, in standard gravity: any mounting, and a weight off by up to 2 times
GRAVITY_BOUND, GRAVITY_SCALE, STANDARD_GRAVITY = 2.0, 0.05, 9.80665     # -, -, m/s^2
FRICTION_SCALE = 0.05                         # nu; bounds: the description's range of nu
# the bending friction's slip moment, in E I / L (the moment that bends the rod by 1 rad):
# from 0 to a residual bend of 1 rad
BENDING_MOMENT_BOUND, BENDING_MOMENT_SCALE = 1.0, 0.01
# its growth with the tendons' tension (tension_arm, a friction coefficient times the radius
# it acts at): from 0 to the sliding law's largest nu (2) times the largest hole offset, in
# steps of 1e-5 m (10 N through a bay: 0.1 mN m)
TENSION_ARM_SCALE = 1e-5
AXES = 'xyz'
# The key of models.description.PHYSICAL_RANGES a fitted field is written under, where it is
# not the field's last name; and where in the description it is written (for messages).
RANGE_KEYS = {'vertebra_mass': 'mass', 'friction': FRICTION_LAWS['sliding'],
              'base.position': 'position'}
WRITTEN_AS = {'vertebra_mass': 'vertebrae.mass', 'friction': 'tendons.friction.coefficient',
              'bending_torsion': 'rod.damping.bending_torsion',
              'shear_extension': 'rod.damping.shear_extension'}


class FitParameterError(ValueError):
    """A parameter name or bound that cannot be fitted; the message names it."""


@dataclass(frozen=True)
class FitParameter:
    """One fitted value: a robot field, or a tie of several."""

    name: str                  # as reported: 'youngs_modulus', 's1_t0+s1_t1.pretension', ...
    spec: str                  # the --fit item it comes from (its bounds key)
    field: str                 # 'youngs_modulus', ..., a TENDON_FIELDS item, a VECTOR_FIELDS one
    tendons: tuple[int, ...]   # tendon fields: the tendons that share the value
    component: int             # vector fields: 0, 1, 2 (x, y, z); else -1
    initial: float             # SI (angle, rotation: 0, the turn from the file)
    low: float
    high: float
    log: bool                  # fitted as ln(p / initial); else (p - initial) / scale
    scale: float
    # what the robot description loader takes (:func:`description_limits`) and where the
    # value is written: a bound at a limit is the file's, not a choice of the fit
    limits: tuple[float, float] = (-math.inf, math.inf)
    written_as: str = ''

    @property
    def analytic(self) -> bool:
        """Tell whether the tips' derivative needs no new solve (rigid shift, marker)."""
        return self.field in ('base.position', 'tip_marker')

    def to_z(self, value: float) -> float:
        return (math.log(value / self.initial) if self.log
                else (value - self.initial) / self.scale)

    def from_z(self, z: float) -> float:
        return self.initial * math.exp(z) if self.log else self.initial + z * self.scale

    def at(self, z: float) -> float:
        """Return the value at ``z`` within the bounds (``exp(ln(high / p0))`` may pass high)."""
        return min(max(self.from_z(z), self.low), self.high)

    @property
    def z_bounds(self) -> tuple[float, float]:
        return self.to_z(self.low), self.to_z(self.high)


def at_bound(name: str, side: str, value: float, limit_of: str = '', cure: str = '') -> str:
    """
    Return the warning of a fit that ended at its ``side`` ('lower', 'upper') bound.

    ``limit_of``: the description's value whose limit the bound is (no file holds more, so
    the bound is not to be widened); empty: a bound of the fit's own, which ``--bounds``
    widens, or what ``cure`` says.
    """
    cure = (f"the robot description's limit of {limit_of}; check the model and the data"
            if limit_of else cure or 'widen --bounds or check the model')
    return f'{name} ended at its {side} bound ({value:g}): the data want it beyond; {cure}'


def segments(robot: Robot, tendons: Sequence[int]) -> list[tuple[int, ...]]:
    """Group tendon indices by the arc length of their anchor (a segment), base first."""
    ends = anchors([robot.tendons[t] for t in tendons])
    return [tuple(t for t in tendons if round(robot.tendons[t].end, 9) == end) for end in ends]


def parse_fit(robot: Robot, items: Sequence[str],
              bounds: Mapping[str, tuple[float, float]] | None = None) -> list[FitParameter]:
    """
    Expand ``--fit`` items into parameters, with their initial values and bounds.

    ``bounds``: {item as given: (low, high)} in SI units, for every parameter of the item.
    Raises :class:`FitParameterError` naming the item.
    """
    bounds = dict(bounds or {})
    if not items:
        raise FitParameterError('fit: name at least one parameter')
    if len(set(items)) != len(items):
        raise FitParameterError(f'fit: a parameter is given twice: {list(items)}')
    for key in bounds:
        if key not in items:
            raise FitParameterError(f'bounds: {key!r} is not fitted ({", ".join(items)})')
    params = []
    for item in items:
        params += [_with_bounds(robot, p, bounds.get(item)) for p in _expand(robot, item)]
    seen = {}
    for p in params:
        for key in _targets(p):
            if seen.get(key, p.spec) != p.spec:
                raise FitParameterError(f'fit: {p.spec} and {seen[key]} both fit {key}')
            seen[key] = p.spec
    return params


def _targets(p: FitParameter) -> list[str]:
    """Name the robot values a parameter sets (to refuse two parameters setting one)."""
    if p.tendons:
        return [f'{t}.{p.field}' for t in p.tendons]
    if p.field == BENDING_FIELDS[0]:      # the whole rod's or a segment's: one item sets them
        return [p.field]
    return [f'{p.field}[{p.component}]' if p.component >= 0 else p.field]


def _expand(robot: Robot, item: str) -> list[FitParameter]:
    if item in ROD_FIELDS + DYNAMIC_FIELDS + BENDING_FIELDS + ('vertebra_mass',):
        return [_parameter(item, item, item, (), -1, _scalar_value(robot, item))]
    if item == BENDING_FIELDS[0] + '@segment':       # one moment per segment, base first
        return [_parameter(f'{BENDING_FIELDS[0]}[{j}]', item, BENDING_FIELDS[0], (), j, value)
                for j, value in enumerate(_segment_moments(robot))]
    for field in VECTOR_FIELDS:
        # one axis after the dot: 'xy' is a substring of AXES, not an axis
        if item == field or item.startswith(field + '.') and item[len(field) + 1:] in tuple(AXES):
            axes = AXES if item == field else item[-1]
            return [_parameter(f'{field}.{a}', item, field, (), AXES.index(a),
                               _vector_value(robot, field, AXES.index(a))) for a in axes]
    pattern, dot, rest = item.rpartition('.')
    field, at, grouping = rest.partition('@')
    if not dot or field not in TENDON_FIELDS or (at and grouping not in GROUPINGS):
        raise FitParameterError(
            f'fit: unknown parameter {item!r}; fittable: {", ".join(FITTABLE)} (TENDONS a '
            'tendon name or pattern; @segment or @tendon: one value per segment or tendon)')
    members = [i for i, name in enumerate(robot.tendon_names) if fnmatchcase(name, pattern)]
    if not members:
        raise FitParameterError(f'fit: {item}: no tendon matches {pattern!r} (tendons: '
                                f'{", ".join(robot.tendon_names)})')
    groups = ([members] if not grouping else segments(robot, members)
              if grouping == 'segment' else [[m] for m in members])
    result = []
    for group in groups:
        values = {_tendon_value(robot, field, t) for t in group}
        if len(values) > 1:
            raise FitParameterError(
                f'fit: {item}: the tied tendons {", ".join(robot.tendon_names[t] for t in group)}'
                f' start from different {field}s ({", ".join(f"{v:g}" for v in sorted(values))})'
                f'; fit them apart (@tendon or @segment)')
        name = '+'.join(robot.tendon_names[t] for t in group) + '.' + field
        result.append(_parameter(name, item, field, tuple(group), -1, values.pop()))
    return result


def _parameter(name: str, spec: str, field: str, tendons, component: int,
               initial: float) -> FitParameter:
    return FitParameter(name=name, spec=spec, field=field, tendons=tuple(tendons),
                        component=component, initial=float(initial), low=math.nan,
                        high=math.nan, log=field in LOG_FIELDS, scale=1.0)


def _with_bounds(robot: Robot, p: FitParameter, given) -> FitParameter:
    """Fill in bounds (given or default) and the scale of a parameter; check them."""
    L = robot.rod.length
    if p.log:
        if p.initial <= 0.0:
            raise FitParameterError(
                f'fit: {p.name} is {p.initial:g} in the robot file; a positive quantity is '
                'fitted from a positive start: set one in the file')
        rim = (robot.disc_radius if p.field == 'offset' and robot.vertebra_positions.size
               else math.inf)      # a hole stays within its discs (the description's rule)
        default, scale = (p.initial / 10.0, min(p.initial * 10.0, rim)), 1.0
    elif p.field == 'angle':
        default, scale = (-ANGLE_BOUND, ANGLE_BOUND), ANGLE_SCALE
    elif p.field == 'base.rotation':
        default, scale = (-ROTATION_BOUND, ROTATION_BOUND), ROTATION_SCALE
    elif p.field in ('base.position', 'tip_marker'):
        default = (p.initial - POSITION_BOUND * L, p.initial + POSITION_BOUND * L)
        scale = POSITION_SCALE * L
    elif p.field == 'gravity':
        limit = max(GRAVITY_BOUND * STANDARD_GRAVITY, abs(p.initial))
        default, scale = (-limit, limit), GRAVITY_SCALE * STANDARD_GRAVITY
    elif p.field == 'pretension':      # negative: slack at zero displacement
        limit = max(robot.tendons[t].max_tension for t in p.tendons)
        default, scale = (min(-limit, p.initial), max(limit, p.initial)), PRETENSION_SCALE
    elif p.field == 'friction':
        default, scale = PHYSICAL_RANGES[FRICTION_LAWS['sliding']][:2], FRICTION_SCALE
    elif p.field == 'bending_friction.tension_arm':
        arm = PHYSICAL_RANGES[FRICTION_LAWS['sliding']][1] * max(
            (t.offset for t in robot.tendons), default=MAX_TENSION_ARM)
        default, scale = (0.0, min(max(arm, p.initial), MAX_TENSION_ARM)), TENSION_ARM_SCALE
    elif p.field == 'bending_friction.moment':
        moment = robot.rod.bending_stiffness / L
        default = (0.0, max(BENDING_MOMENT_BOUND * moment, p.initial))
        scale = BENDING_MOMENT_SCALE * moment
    else:      # motor_distance
        default = (0.0, max(MOTOR_DISTANCE_BOUND * L, p.initial))
        scale = MOTOR_DISTANCE_SCALE * L
    limits, written_as = description_limits(robot, p)
    if given is None:
        low, high = max(default[0], limits[0]), min(default[1], limits[1])
    else:
        low, high = given
        if low < limits[0] or high > limits[1]:
            raise FitParameterError(
                f'bounds: {p.spec}: ({low:g}, {high:g}) reaches beyond what the robot '
                f'description takes for {written_as}, {limits[0]:g} .. {limits[1]:g}')
    if not (math.isfinite(low) and math.isfinite(high) and low < high
            and low <= p.initial <= high) or (p.log and low <= 0.0):
        need = '0 < low' if p.log else 'low'
        raise FitParameterError(f'bounds: {p.spec} needs {need} <= initial ({p.initial:g}) '
                                f'<= high, low < high, got ({low:g}, {high:g})')
    return FitParameter(**{**p.__dict__, 'low': float(low), 'high': float(high),
                           'scale': float(scale), 'limits': limits, 'written_as': written_as})


def description_limits(robot: Robot, p: FitParameter) -> tuple[tuple[float, float], str]:
    """
    Return the values of ``p`` the robot description loader takes, and where it is written.

    From the loader's own table and constants: the physical range of the key the value is
    written under (:data:`~tendon_robot_sim.models.description.PHYSICAL_RANGES`), a damping
    ratio below ``MAX_DAMPING_RATIO``, a rod thinner than long, a reference length within
    ``REFERENCE_LENGTH_FACTORS`` of the path (a pretension; from the file's tendons), a
    tension arm up to ``MAX_TENSION_ARM``. Damping coefficients are fitted as their first
    component, the others in proportion: the largest stays in range. A turn (``angle``,
    ``base.rotation``) has none: the turned angles and axes are written as the loader takes
    them (:func:`robot_with`).
    """
    field = p.field
    if field in ('angle', 'base.rotation'):
        return (-math.inf, math.inf), field
    if field == 'pretension':     # held as reference_length: the longer, the slacker
        shortest, longest = REFERENCE_LENGTH_FACTORS
        tendons = [robot.tendons[t] for t in p.tendons]
        return ((max(pretension_of(t, longest * t.straight_path_length()) for t in tendons),
                 min(pretension_of(t, shortest * t.straight_path_length()) for t in tendons)),
                'tendons.reference_length')
    if field == 'bending_friction.tension_arm':
        return (0.0, MAX_TENSION_ARM), 'rod.' + field
    key = RANGE_KEYS.get(field, field.rpartition('.')[2])
    written_as = WRITTEN_AS.get(field, field if field in VECTOR_FIELDS else
                                f'tendons.{field}' if field in TENDON_FIELDS else 'rod.' + field)
    if field == 'damping':        # the ratio or the rate, whichever the robot gives
        key = 'ratio' if robot.rod.damping.ratio is not None else 'rate'
        written_as += '.' + key
    low, high = PHYSICAL_RANGES[key][:2]
    if written_as == 'rod.damping.ratio':
        high = math.nextafter(MAX_DAMPING_RATIO, 0.0)
    elif field == 'radius':
        high = min(high, math.nextafter(robot.rod.length, 0.0))
    elif field in ('bending_torsion', 'shear_extension', 'drag'):
        old = np.asarray(robot.rod.drag if field == 'drag'
                         else getattr(robot.rod.damping, field), dtype=float)
        if old[0] > 0.0:
            high *= old[0] / old.max()
    return (low, high), written_as


def _segment_moments(robot: Robot) -> list[float]:
    """Return the bending friction moment of each segment [N m] (none: 0)."""
    friction = robot.rod.bending_friction
    moment = 0.0 if friction is None else friction.moment
    return (list(moment) if isinstance(moment, tuple)
            else [float(moment)] * robot.segment_ends.size)


def _scalar_value(robot: Robot, field: str) -> float:
    if field in BENDING_FIELDS:
        friction = robot.rod.bending_friction
        if friction is None:     # from none: no moment, the default stiffness
            return getattr(BendingFriction(0.0), field.partition('.')[2])
        if field == BENDING_FIELDS[0] and isinstance(friction.moment, tuple):
            if len(set(friction.moment)) > 1:
                raise FitParameterError(
                    f'fit: {field}: the segments start from different moments '
                    f'({", ".join(f"{v:g}" for v in friction.moment)}); fit them apart '
                    f'({field}@segment)')
            return friction.moment[0]
        return getattr(friction, field.partition('.')[2])
    if field == 'vertebra_mass':
        if not robot.vertebra_positions.size:
            raise FitParameterError('fit: vertebra_mass: this robot has no vertebrae to weigh')
        return robot.vertebra_mass
    if field == 'damping':
        damping = robot.rod.damping
        if damping.kelvin_voigt:
            raise FitParameterError('fit: damping: this robot has the Kelvin-Voigt form; fit '
                                    'bending_torsion or shear_extension')
        return damping.ratio if damping.ratio is not None else damping.rate
    if field in ('bending_torsion', 'shear_extension', 'drag'):
        values = robot.rod.drag if field == 'drag' else getattr(robot.rod.damping, field)
        if values is None:
            raise FitParameterError(f'fit: {field}: this robot has no Kelvin-Voigt damping '
                                    '(rod.damping: {shear_extension, bending_torsion})')
        return values[0]
    return getattr(robot.rod, field)


def _vector_value(robot: Robot, field: str, axis: int) -> float:
    if field == 'base.position':
        return float(robot.base.position[axis])
    if field == 'tip_marker':
        return float(robot.tip_marker[axis])
    if field == 'gravity':
        return float(robot.gravity[axis])
    return 0.0      # base.rotation: a turn from the file's orientation


def pretension_of(tendon, reference_length: float) -> float:
    """
    Tension [N] of a tendon at zero displacement on the straight robot, from l*.

    The displacement law (:func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`)
    at q = 0 with the straight path l: l + d = (l* + d)(1 + C tau). A negative value is slack:
    l* + d = (l + d)(1 + C |tau|), |tau| C (l + d) of tendon to take up before it pulls, so that
    every value within the bounds is a tendon (l* > 0) and l* moves smoothly through zero.
    """
    ratio = (tendon.straight_path_length() + tendon.motor_distance) / (
        reference_length + tendon.motor_distance)
    if ratio >= 1.0:
        return (ratio - 1.0) / tendon.compliance
    return (1.0 - 1.0 / ratio) / tendon.compliance


def reference_length_for(tendon, pretension: float) -> float:
    """Return l* [m] that gives ``tendon`` the ``pretension`` [N] (:func:`pretension_of`)."""
    straight, d = tendon.straight_path_length(), tendon.motor_distance
    if pretension >= 0.0:
        return (straight + d) / (1.0 + tendon.compliance * pretension) - d
    return (straight + d) * (1.0 - tendon.compliance * pretension) - d


def _tendon_value(robot: Robot, field: str, index: int) -> float:
    tendon = robot.tendons[index]
    if field == 'angle':
        return 0.0      # a turn from the file's angle
    if field == 'friction':
        if tendon.friction is None:
            return 0.0
        if tendon.friction.law != 'sliding':
            raise FitParameterError(
                f'fit: {tendon.name}.friction: its law is {tendon.friction.law}, which has no '
                'static effect; the fit is of the sliding law (Coulomb-capstan nu)')
        return tendon.friction.coefficient
    if field == 'pretension':
        if tendon.compliance <= 0.0:
            raise FitParameterError(
                f'fit: {tendon.name}.pretension needs a compliance > 0 (a stiff tendon has '
                'no tension at a given displacement until the robot takes it up)')
        if tendon.reference_length is None:
            return 0.0
        return round(pretension_of(tendon, tendon.reference_length), 12)
    return float(getattr(tendon, field))


def robot_with(robot: Robot, params: Sequence[FitParameter], values: Sequence[float]) -> Robot:
    """
    Return ``robot`` with the parameters at ``values`` (SI; angles and rotations as turns).

    A tendon's offset moves its hole along its whole length (``end_offset`` too when the
    routing is parallel, which needs them equal); pretensions are set last, from the
    compliance and motor distance the other values give.
    """
    data = robot.to_dict()
    rotation = np.zeros(3)
    pretensions = []
    for p, value in zip(params, values):
        value = float(value)
        if p.field == 'pretension':
            pretensions.append((p, value))
        elif p.tendons:
            for t in p.tendons:
                tendon = data['tendons'][t]
                if p.field == 'angle':
                    # within a full turn, as the loader takes it: the same holes
                    angle = robot.tendons[t].angle + value
                    tendon['angle'] = (angle - math.copysign(2.0 * math.pi, angle)
                                       if abs(angle) > 2.0 * math.pi else angle)
                elif p.field == 'friction':
                    tendon['friction'] = {**tendon.get('friction', {'law': 'sliding'}),
                                          'coefficient': value}
                else:
                    tendon[p.field] = value
                    if p.field == 'offset' and tendon['routing'] == 'parallel':
                        tendon['end_offset'] = value
        elif p.field == 'base.rotation':
            rotation[p.component] = value
        elif p.field == 'base.position':
            data['base']['position'][p.component] = value
        elif p.field == 'tip_marker':
            marker = data.setdefault('tip_marker', [0.0, 0.0, 0.0])
            marker[p.component] = value
        elif p.field == 'gravity':
            data['gravity'][p.component] = value
        elif p.field == BENDING_FIELDS[0] and p.component >= 0:     # one segment's
            friction = data['rod'].setdefault('bending_friction', {'moment': 0.0})
            if not isinstance(friction['moment'], list):
                friction['moment'] = [friction['moment']] * robot.segment_ends.size
            friction['moment'][p.component] = value
        else:
            _set_scalar(data, robot, p.field, value)
    if np.any(rotation):
        turned = Rotation.from_rotvec(rotation).as_matrix() @ robot.base.rotation
        data['base']['normal'] = turned[:, 0].tolist()
        data['base']['direction'] = turned[:, 2].tolist()
    if pretensions:
        changed = robot_from_dict(data)
        for p, value in pretensions:
            for t in p.tendons:
                data['tendons'][t]['reference_length'] = reference_length_for(
                    changed.tendons[t], value)
    return robot_from_dict(data)


def _set_scalar(data: dict, robot: Robot, field: str, value: float) -> None:
    if field in BENDING_FIELDS:
        friction = data['rod'].setdefault('bending_friction', {'moment': 0.0})
        friction[field.partition('.')[2]] = value
    elif field == 'vertebra_mass':
        data['vertebrae']['mass'] = value
    elif field == 'damping':      # the ratio or the rate, whichever the robot gives
        data['rod']['damping'] = {next(iter(data['rod']['damping'])): value}
    elif field in ('bending_torsion', 'shear_extension', 'drag'):
        # the three components together, in their proportions
        old = np.asarray(robot.rod.drag if field == 'drag'
                         else getattr(robot.rod.damping, field), dtype=float)
        new = old * (value / old[0]) if old[0] > 0.0 else np.full(3, value)
        target = data['rod'] if field == 'drag' else data['rod']['damping']
        target[field] = new.tolist()
    else:
        data['rod'][field] = value


def with_parameters(robot: Robot, values: Mapping[str, float]) -> Robot:
    """Return ``robot`` with the named parameters (one value each, :func:`parse_fit`) set."""
    params = [p for item in values for p in _expand(robot, item)]
    if len(params) != len(values):
        raise FitParameterError(f'fit: {list(values)}: a vector or grouped name sets more '
                                'than one value; name its parts')
    return robot_with(robot, params, list(values.values()))
