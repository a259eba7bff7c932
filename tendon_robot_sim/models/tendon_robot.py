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
The tendon robot's description: rod, vertebrae, tendons (``config/robot.yaml``).

Read by the rod models (:mod:`tendon_robot_sim.models.rod`) and by the trunk's
constant-curvature dynamics of a tendon robot (:mod:`tendon_robot_sim.models.trunk`).
The loader's rules (SI units, radians, one-line errors, bounds against hostile files)
are those of :mod:`tendon_robot_sim.models.description`.

Frames
------
``base`` frame (REP 103): origin at ``base.position``; the rod leaves the base
along ``base.direction`` (the material d3 axis at s = 0); ``base.normal`` is d1;
d2 = d3 x d1. Vectors given in the file (``gravity``, ``tip_load``) are expressed
in this frame, which is also the world frame of the simulation. ``tip_marker`` is
the point a tip sensor measures (a motion-capture marker on the tip), in the tip's
frame (d1, d2, d3 at the tip); absent: the tip itself.

Tendon holes are placed in the cross-section frame (d1, d2): a hole at angle
``angle`` (measured from d1 towards d2) and radial ``offset`` sits at
``offset * (cos angle, sin angle, 0)`` in body coordinates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
import math
from pathlib import Path
from typing import Any

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.models.description import (Base, check_kind, check_range, check_reach,
                                                 check_unique_names,
                                                 CircularSection, describe_value,
                                                 DescriptionMapping, load_base, load_description,
                                                 POSITION_TOLERANCE, RobotDescriptionError,
                                                 TENDON_ROBOT)

ROUTINGS = ('parallel', 'helical', 'tapered')
# Tendon friction laws (tendons[i].friction.law) and the range of their coefficient (a key of
# models.description.PHYSICAL_RANGES; 'coefficient' itself bounds every law)
FRICTION_LAWS = {'sliding': 'sliding_coefficient', 'viscous': 'coefficient'}
# Default slip velocity of the sliding law [m/s]: Till's eps in his sliding-friction example
DEFAULT_SLIP_VELOCITY = 1e-3
MAX_ELEMENTS = 1000        # Cosserat elements of the dynamic model
MAX_VERTEBRAE = 1000
MAX_TENDONS = 64
# Hole layouts whose second singular value is below this fraction of the first are
# planar: every hole on one line through the backbone.
PLANAR_TOLERANCE = 1e-9
# Default damping ratio of the first bending mode: silicone rubber has a loss factor of
# about 0.2 (ratio = loss factor / 2); identify it from a step response for a real rod.
DEFAULT_DAMPING_RATIO = 0.1
# A damping ratio (rod.damping.ratio) is below this: an oscillating first mode. The loader
# refuses it and more; a calibration's bounds stop short of it (experiment.fit_parameters).
MAX_DAMPING_RATIO = 1.0
# A tendon's reference length l*_i may differ from its path on the straight rod by at most
# these factors: pulled in or paid out by half its path, a tendon is not a tendon any more,
# and 1000 times is a length in mm given as m.
REFERENCE_LENGTH_FACTORS = (0.5, 2.0)
# Largest tension arm of the bending friction [m] (rod.bending_friction.tension_arm): a
# friction coefficient times a disc's radius is millimetres; 0.1 m keeps a length in mm given
# as m out.
MAX_TENSION_ARM = 0.1
# Default vertebra disc: this far beyond the outermost tendon hole [m], and this thick [m].
DISC_MARGIN = 0.003
DEFAULT_DISC_THICKNESS = 0.002
# Largest Kelvin-Voigt coefficients [N s], [N m^2 s], drag coefficient [kg/m^2] and motor
# distance [m] a description may give: far beyond any rod (steel: ~1e-3 N m^2 s), they keep
# mistyped exponents out of the implicit solver.


def tendon_displacements(rest_lengths, lengths, tensions, compliance, motor_distance):
    """
    Length of tendon each motor has taken in [m], positive when pulling.

    The motor has reeled in q of unstretched tendon, so the unstretched tendon between the motor
    and the anchor is l* + d - q long (l* the rest length from the base hole to the anchor, d the
    ``motor_distance``) and, stretched by the tension tau with compliance C, spans the motor
    distance plus the path l: l + d = (l* + d - q)(1 + C tau), as in Till's displacement-control
    examples (ContinuumRobotExamples). Arrays (n,) or broadcastable; SI units.
    """
    return rest_lengths + motor_distance - (lengths + motor_distance) / (
        1.0 + compliance * tensions)


#: The model that takes every friction of a description (``models.rod.statics.stick_slip``).
PATH_DEPENDENT_STATICS = ('the path-dependent statics (statics --tensions-csv or '
                          '--displacements-csv, simulator mode quasi_static)')


def friction_refused(robot: 'Robot', model: str) -> str:
    """
    Why ``model`` refuses ``robot``'s tendon friction, naming the key; '' without friction.

    Tendon friction is modelled by the implicit dynamics and the path-dependent statics,
    bending friction by the path-dependent statics only.
    """
    for i, tendon in enumerate(robot.tendons):
        if tendon.friction is not None:
            return (f'tendons[{i}].friction: the {model} does not model tendon friction; the '
                    'implicit dynamics (mode dynamic, integrator implicit) and '
                    f'{PATH_DEPENDENT_STATICS} do, or remove the key')
    if robot.rod.bending_friction is not None:
        return (f'rod.bending_friction: the {model} does not model it; '
                f'{PATH_DEPENDENT_STATICS} does, or remove the key')
    return ''


def without_friction(robot: 'Robot') -> 'Robot':
    """Return ``robot`` without friction (the models that add friction on top): tendons, rod."""
    return dataclasses.replace(
        robot, rod=dataclasses.replace(robot.rod, bending_friction=None),
        tendons=tuple(dataclasses.replace(t, friction=None) for t in robot.tendons))


def vertebrae_required(model: str) -> str:
    """Why ``model`` refuses a robot without vertebrae, and what works instead."""
    return (f'vertebrae: the {model} needs vertebra discs (its tendons act on the rod only '
            'at the discs) and this robot has none; without discs use the cosserat or '
            'kirchhoff statics (simulator mode quasi_static with statics_model cosserat or '
            'kirchhoff, --model cosserat or kirchhoff)')


@dataclass(frozen=True)
class Damping:
    """
    Damping of the dynamic models, in one of three forms.

    Mass-proportional (``ratio`` or ``rate``): every velocity decays as dv/dt = -c v, which
    gives bending mode i the damping ratio c / (2 omega_i) (see
    :mod:`tendon_robot_sim.models.modal`). Kelvin-Voigt (``shear_extension`` and
    ``bending_torsion``, the implicit integrator only): viscous internal force and moment
    n_v = Bse v_t, m_v = Bbt u_t in the body frame, Bse = diag(shear_extension),
    Bbt = diag(bending_torsion) (Till, Aloi & Rucker, "Real-time dynamics of soft and
    continuum robots based on Cosserat rod models", 2019).
    """

    ratio: float | None = None   # zeta of the first bending mode, dimensionless
    rate: float | None = None    # c, 1/s
    shear_extension: tuple[float, float, float] | None = None   # Bse diagonal, N s
    bending_torsion: tuple[float, float, float] | None = None   # Bbt diagonal, N m^2 s

    @property
    def kelvin_voigt(self) -> bool:
        """Tell whether this is the Kelvin-Voigt form (no mass-proportional part)."""
        return self.shear_extension is not None

    def to_dict(self) -> dict[str, Any]:
        if self.kelvin_voigt:
            return {'shear_extension': list(self.shear_extension),
                    'bending_torsion': list(self.bending_torsion)}
        return {'ratio': self.ratio} if self.ratio is not None else {'rate': self.rate}


@dataclass(frozen=True)
class BendingFriction:
    """
    Friction that holds the backbone's bend: a Jenkins element per segment of the rod's grid.

    A spring of stiffness ``stiffness_ratio`` E I in series with a slider that slips at the
    bending moment ``moment`` [N m], in parallel with the elastic rod (Iwan's elements, one
    per bay: models.rod.statics.bending_friction). ``moment`` is one value for the whole rod,
    or a tuple of one per segment (:attr:`Robot.segment_ends`, base first): a bay takes its
    segment's. ``tension_arm`` [m] adds to a bay's bound the tensions of the tendons that run
    through it times this arm (Coulomb friction whose normal force grows with the tendons'
    pull: models.rod.statics.bending_friction); 0: the bound is ``moment`` alone. None on the
    rod: no such friction.
    """

    moment: float | tuple[float, ...]   # M_f [N m]: the slider's bound on the friction moment
    stiffness_ratio: float = 1.0    # k / (E I) [-]: the element's stiffness while it sticks
    tension_arm: float = 0.0        # lambda [m]: the bound grows by lambda per newton through

    def to_dict(self) -> dict[str, Any]:
        moment = list(self.moment) if isinstance(self.moment, tuple) else self.moment
        out = {'moment': moment, 'stiffness_ratio': self.stiffness_ratio}
        if self.tension_arm:
            out['tension_arm'] = self.tension_arm
        return out


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
    drag: tuple[float, float, float] = (0.0, 0.0, 0.0)   # C, kg/m^2: force per length
    #                                     -C q|q| (body frame, per component; implicit only)
    bending_friction: BendingFriction | None = None   # path-dependent statics only


@dataclass(frozen=True)
class TendonFriction:
    """
    Friction of a tendon on its guides (spacer holes, discs, sheath).

    ``sliding``: Coulomb-capstan friction, the tension falls by the factor e^(-nu theta) over a
    wrap angle theta while the tendon slides (nu = ``coefficient``, dimensionless), and may take
    any value inside the cone [T e^(-nu theta), T e^(nu theta)] while it sticks; the dynamics
    regularise the sign of the sliding speed below ``slip_velocity`` [m/s]. ``viscous``: Till's
    simple law (IJRR 2019), a load per length proportional to the sliding speed and to tension
    times curvature, beta = ``coefficient`` [s/m] (no slip velocity).
    """

    law: str                      # 'sliding' | 'viscous'
    coefficient: float            # sliding: nu [-]; viscous: beta [s/m]
    slip_velocity: float | None = None   # m/s, sliding only

    def to_dict(self) -> dict[str, Any]:
        data = {'law': self.law, 'coefficient': self.coefficient}
        if self.slip_velocity is not None:
            data['slip_velocity'] = self.slip_velocity
        return data


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
    motor_distance: float = 0.0   # m of tendon between the motor and its base hole
    # m, Till's l*_i: the unstretched length above the base plate at zero displacement;
    # None: the tendon's path on the straight rod (each statics model measures its own)
    reference_length: float | None = None
    friction: TendonFriction | None = None   # None: the tendon slides without friction

    def straight_path_length(self, points: int = 201) -> float:
        """Length [m] of the hole path from the base to the anchor on the straight rod."""
        s = np.linspace(0.0, self.end, points)
        r_s = self.hole(s)[1]
        speed = np.sqrt(r_s[0] ** 2 + r_s[1] ** 2 + 1.0)
        return float(np.sum(0.5 * (speed[1:] + speed[:-1]) * np.diff(s)))

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
    # (3,) m: the point a tip sensor measures (a motion-capture marker), in the tip frame
    # (d1, d2, d3 at s = L); zero: the tip itself
    tip_marker: np.ndarray = field(default_factory=lambda: np.zeros(3))
    # m, the contact envelope's radius between discs and at the discs, if the description's
    # ``contact`` gives it (None: rod.radius and disc_radius, see contact_envelope)
    contact_rod_radius: float | None = None
    contact_disc_radius: float | None = None

    @property
    def contact_envelope(self) -> tuple[float, float]:
        """Radius [m] with which the robot touches obstacles: between discs, at the discs."""
        rod = self.rod.radius if self.contact_rod_radius is None else self.contact_rod_radius
        disc = self.disc_radius if self.contact_disc_radius is None else self.contact_disc_radius
        return rod, max(disc, rod) if self.vertebra_positions.size else rod

    @property
    def disc_inertia(self) -> tuple[float, float]:
        """
        Rotary inertia of one disc about a diameter and about its axis [kg m^2].

        Thin cylinder: m (3 r^2 + t^2) / 12 and m r^2 / 2.
        """
        m, r, t = self.vertebra_mass, self.disc_radius, self.disc_thickness
        return m * (3.0 * r * r + t * t) / 12.0, 0.5 * m * r * r

    @property
    def segment_ends(self) -> np.ndarray:
        """Arc lengths [m] where the robot's segments end: its tendons' anchors, base first."""
        return anchors(self.tendons)

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

    def reference_lengths(self, straight: np.ndarray) -> np.ndarray:
        """
        Return each tendon's l*_i [m]: its ``reference_length``, else ``straight``.

        ``straight`` (n,) [m]: the paths on the straight rod as the calling model measures
        them (continuous curve or polyline through the holes).
        """
        return np.array([s if t.reference_length is None else t.reference_length
                         for t, s in zip(self.tendons, straight)], dtype=float)

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
                'drag': list(self.rod.drag),
                **({} if self.rod.bending_friction is None
                   else {'bending_friction': self.rod.bending_friction.to_dict()}),
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
                    'max_tension': t.max_tension, 'motor_distance': t.motor_distance,
                    **({} if t.reference_length is None
                       else {'reference_length': t.reference_length}),
                    **({} if t.friction is None else {'friction': t.friction.to_dict()}),
                }
                for t in self.tendons
            ],
            'tip_load': {
                'force': self.tip_load.force.tolist(),
                'moment': self.tip_load.moment.tolist(),
            },
        }
        if np.any(self.tip_marker):
            data['tip_marker'] = self.tip_marker.tolist()
        if not self.vertebra_positions.size:
            del data['vertebrae']      # optional: a robot without discs
        envelope = {key: value for key, value in (('rod_radius', self.contact_rod_radius),
                                                  ('disc_radius', self.contact_disc_radius))
                    if value is not None}
        if envelope:
            data['contact'] = envelope
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


def robot_from_dict(data: Any) -> Robot:
    """Build a validated :class:`Robot` from plain data in the YAML schema."""
    check_kind(data, TENDON_ROBOT)
    top = DescriptionMapping(data, '', required=('name', 'rod', 'tendons'),
                             optional=('kind', 'base', 'gravity', 'vertebrae', 'tip_load',
                                       'tip_marker', 'contact'))
    top.get('kind')
    name = top.string('name')
    base = load_base(top.mapping('base', default={}))
    gravity = top.vector('gravity', default=(0.0, 0.0, -9.80665))
    rod = _load_rod(top.mapping('rod'))
    vertebrae = top.mapping('vertebrae', default={'count': 0})
    positions, mass = _load_vertebrae(vertebrae, rod.length)
    tendons = _load_tendons(top.get('tendons'), rod.length, positions)
    disc_radius, disc_thickness = _load_discs(vertebrae, tendons, positions.size > 0)
    tip = top.mapping('tip_load', default={})
    tip_load = TipLoad(force=tip.vector('force', default=(0.0, 0.0, 0.0)),
                       moment=tip.vector('moment', default=(0.0, 0.0, 0.0)))
    tip.finish()
    tip_marker = top.vector('tip_marker', default=(0.0, 0.0, 0.0))
    contact = top.mapping('contact', default={})
    envelope = {key: contact.number(key, positive=True) if key in contact else None
                for key in ('rod_radius', 'disc_radius')}
    contact.finish()
    top.finish()
    _check_segment_moments(rod.bending_friction, tendons)
    return Robot(name=name, base=base, gravity=gravity, rod=rod,
                 vertebra_positions=positions, vertebra_mass=mass,
                 tendons=tendons, tip_load=tip_load, tip_marker=tip_marker,
                 disc_radius=disc_radius, disc_thickness=disc_thickness,
                 contact_rod_radius=envelope['rod_radius'],
                 contact_disc_radius=envelope['disc_radius'])


def _load_rod(m: 'DescriptionMapping') -> Rod:
    rod = Rod(
        length=m.number('length', positive=True),     # sizes: PHYSICAL_RANGES
        radius=m.number('radius', positive=True),
        density=m.number('density', positive=True),
        youngs_modulus=m.number('youngs_modulus', positive=True),
        shear_modulus=m.number('shear_modulus', positive=True),
        elements=m.integer('elements', default=50, minimum=2, maximum=MAX_ELEMENTS),
        damping=_load_damping(m.mapping('damping', default={'ratio': DEFAULT_DAMPING_RATIO})),
        end_joint_correction=m.boolean('end_joint_correction', default=True),
        drag=_non_negative_vector(m, 'drag'),
        bending_friction=_load_bending_friction(m.get('bending_friction')),
    )
    m.finish()
    if rod.radius >= rod.length:
        raise RobotDescriptionError(
            f'rod.radius: must be smaller than rod.length ({rod.length}), got {rod.radius}')
    return rod


def _load_damping(m: 'DescriptionMapping') -> Damping:
    given = [key for key in ('ratio', 'rate') if key in m]
    viscous = [key for key in ('shear_extension', 'bending_torsion') if key in m]
    if len(given) + bool(viscous) != 1:
        raise RobotDescriptionError(
            f'rod.damping: give exactly one of ratio (damping ratio of the first bending '
            f'mode), rate (1/s) or the Kelvin-Voigt coefficients shear_extension (N s) and '
            f'bending_torsion (N m^2 s), got {sorted(m.data) or "none"}')
    if viscous:
        damping = Damping(
            shear_extension=_non_negative_vector(m, 'shear_extension'),
            bending_torsion=_non_negative_vector(m, 'bending_torsion'))
    elif given[0] == 'ratio':
        damping = Damping(ratio=m.number('ratio', minimum=0.0))
        if damping.ratio >= MAX_DAMPING_RATIO:
            raise RobotDescriptionError(
                f'rod.damping.ratio: must be < {MAX_DAMPING_RATIO:g} (an oscillating first '
                f'mode), got '
                f'{damping.ratio:g}')
    else:
        damping = Damping(rate=m.number('rate', minimum=0.0))
    m.finish()
    return damping


def _non_negative_vector(m: 'DescriptionMapping', name: str) -> tuple:
    """Read 3 numbers within their physical range under ``name`` (default zeros)."""
    return tuple(float(v) for v in m.vector(name, default=(0.0, 0.0, 0.0)))


def _load_discs(m: 'DescriptionMapping', tendons: tuple[Tendon, ...],
                discs: bool) -> tuple[float, float]:
    """
    Disc radius (default: outermost tendon hole + DISC_MARGIN) and thickness [m].

    With ``discs`` (vertebrae) every hole of every tendon, wherever its routing takes it
    (a tapered or converging hole is farthest out at one of its ends), is within the discs
    (at the rim at most: a notch in the edge).
    Without discs the tendons run continuously along the rod (Rucker & Webster, "Statics and
    dynamics of continuum robots with general tendon routing", 2011), their spacers smeared
    over it, so a hole far outside the rod is what such a robot is (Till's example: 15 mm on
    a 0.7 mm rod): no bound but the rod's length (:func:`_check_hole_distance`).
    """
    outermost = max(max(t.offset, t.end_offset) for t in tendons)
    radius = m.number('radius', default=outermost + DISC_MARGIN, positive=True)
    thickness = m.number('thickness', default=DEFAULT_DISC_THICKNESS, positive=True)
    m.finish()
    for i, tendon in enumerate(tendons if discs else ()):
        key, hole = _outermost_hole(tendon)
        if hole > radius:     # at the rim at most: a notch in the disc's edge
            raise RobotDescriptionError(
                f'tendons[{i}].{key}: a hole at {hole:g} m is outside the discs (vertebrae.radius '
                f'{radius:g} m); a tendon runs through holes inside its discs')
    return radius, thickness


def _outermost_hole(tendon: Tendon) -> tuple[str, float]:
    """Return the key and the radius [m] of a tendon's outermost hole (base or anchor)."""
    key = 'end_offset' if tendon.end_offset > tendon.offset else 'offset'
    return key, getattr(tendon, key)


def _check_hole_distance(tendon: Tendon, key: str, length: float) -> None:
    """
    Refuse a hole farther from the backbone than the rod is long (a length in mm given as m).

    No robot holds its tendons that far out (the shipped files: at most a tenth of the rod's
    length, Till's example 2 %); with or without discs, where only the offset's physical
    range (10 m) bounded it, a 0.2 m rod took an offset of 8 m (8 mm) and no statics converged.
    """
    name, hole = _outermost_hole(tendon)
    check_reach(f'{key}.{name}', f'a hole {hole:g} m from the backbone', hole, 'rod',
                'rod.length', length)


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
            if last > length + POSITION_TOLERANCE:
                raise RobotDescriptionError(
                    f'vertebrae.last: must be <= rod.length ({length}), got {last}')
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
                                         'max_tension', 'motor_distance',
                                         'reference_length', 'friction'))
        name = m.string('name')
        offset = m.number('offset', positive=True)
        angle = m.angle('angle')
        end = m.number('end', default=length, positive=True)
        routing = m.choice('routing', ROUTINGS, default='parallel')
        turns = m.number('turns', default=0.0)
        end_offset = m.number('end_offset', default=offset, minimum=0.0)
        compliance = m.number('compliance', default=0.0, minimum=0.0)
        max_tension = m.number('max_tension', default=20.0, positive=True)
        motor_distance = m.number('motor_distance', default=0.0, minimum=0.0)
        reference_length = (m.number('reference_length', positive=True)
                            if 'reference_length' in m else None)
        friction = _load_friction(m.get('friction'), f'{key}.friction')
        m.finish()
        if end > length + POSITION_TOLERANCE:
            raise RobotDescriptionError(
                f'{key}.end: must be <= rod.length ({length}), got {end}')
        if vertebrae.size and np.min(np.abs(vertebrae - end)) > 1e-6:
            given = '' if 'end' in m else ' (default: rod.length)'
            raise RobotDescriptionError(
                f'{key}.end{given}: a tendon is anchored at a vertebra; no vertebra at {end} m '
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
        tendon = Tendon(name=name, offset=offset, angle=angle, end=min(end, length),
                        routing=routing, turns=turns, end_offset=end_offset,
                        compliance=compliance, max_tension=max_tension,
                        motor_distance=motor_distance, reference_length=reference_length,
                        friction=friction)
        _check_hole_distance(tendon, key, length)
        if reference_length is not None:
            _check_reference_length(tendon, key)
        tendons.append(tendon)
    check_unique_names([t.name for t in tendons], 'tendons', 'tendon')
    return tuple(tendons)


def _load_bending_friction(data: Any) -> BendingFriction | None:
    """Read ``rod.bending_friction`` (absent or null: none)."""
    if data is None:
        return None
    m = DescriptionMapping(data, 'rod.bending_friction', required=('moment',),
                           optional=('stiffness_ratio', 'tension_arm'))
    if isinstance(m.get('moment'), list):      # one per segment
        moments = m.number_list('moment')
        if np.any(moments < 0.0):
            first = int(np.argmax(moments < 0.0))
            raise RobotDescriptionError(f'rod.bending_friction.moment[{first}]: must be >= 0, '
                                        f'got {moments[first]:g}')
        moment = tuple(float(v) for v in moments)
    else:
        moment = m.number('moment', minimum=0.0)
    friction = BendingFriction(moment=moment,
                               stiffness_ratio=m.number('stiffness_ratio', default=1.0,
                                                        positive=True),
                               tension_arm=m.number('tension_arm', default=0.0, minimum=0.0,
                                                    maximum=MAX_TENSION_ARM))
    m.finish()
    return friction


def anchors(tendons) -> np.ndarray:
    """Return the distinct arc lengths [m] where ``tendons`` end (rounded to 1e-9 m), ascending."""
    return np.unique(np.round([t.end for t in tendons], 9))


def _check_segment_moments(friction: BendingFriction | None, tendons) -> None:
    """Refuse a list of bending friction moments that is not one per segment."""
    if friction is None or not isinstance(friction.moment, tuple):
        return
    ends = anchors(tendons)
    if len(friction.moment) != ends.size:
        raise RobotDescriptionError(
            f'rod.bending_friction.moment: one value per segment ({ends.size}: the tendons '
            f'anchored at {", ".join(f"{s:g}" for s in ends)} m) or one number, got '
            f'{counted(len(friction.moment), "value")}')


def _load_friction(data: Any, key: str) -> TendonFriction | None:
    """Read ``tendons[i].friction`` (absent or null: no friction)."""
    if data is None:
        return None
    m = DescriptionMapping(data, key, required=('law', 'coefficient'),
                           optional=('slip_velocity',))
    law = m.choice('law', tuple(FRICTION_LAWS), default=None)
    coefficient = m.number('coefficient', minimum=0.0)
    check_range(coefficient, f'{key}.coefficient', FRICTION_LAWS[law])
    if law == 'sliding':
        slip_velocity = m.number('slip_velocity', default=DEFAULT_SLIP_VELOCITY, positive=True)
    elif 'slip_velocity' in m:
        raise RobotDescriptionError(
            f'{key}.slip_velocity: only the sliding law has a slip velocity (viscous friction '
            'is proportional to the sliding speed itself)')
    else:
        slip_velocity = None
    m.finish()
    return TendonFriction(law=law, coefficient=coefficient, slip_velocity=slip_velocity)


def _check_reference_length(tendon: Tendon, key: str) -> None:
    """Refuse an l*_i no tendon of this path can have (a unit mistake: mm for m)."""
    straight = tendon.straight_path_length()
    low, high = REFERENCE_LENGTH_FACTORS
    if not low * straight <= tendon.reference_length <= high * straight:
        raise RobotDescriptionError(
            f"{key}.reference_length: must be within {low:g} to {high:g} times the tendon's "
            f'path on the straight rod ({straight:.6g} m), got {tendon.reference_length:g} m')
