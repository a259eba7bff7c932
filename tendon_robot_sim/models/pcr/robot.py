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
Description of a 6-RUS parallel continuum robot (``kind: pcr_6rus``).

Loaded from YAML (see ``config/pcr_6rus.yaml``) into frozen, validated dataclasses with
the YAML reading and checking helpers of :mod:`tendon_robot_sim.models.tendon_robot`; a bad file
raises :class:`~tendon_robot_sim.models.description.RobotDescriptionError` naming the key, e.g.
``rods.poisson_ratio: must be < 0.5, got 0.7``. SI units; angles in radians
(REP 103), or in degrees under keys ending in ``_deg`` (``pair_angles_deg``, ``limits_deg``).

Frames
------
World: z up (gravity -z), origin at the centre of the motor triangle. Motor frame M_i:
origin ``motor_positions[i]``, orientation ``motor_rotations[i]`` (Rz of its pair
angle); the crank turns about its x axis, crank tip at [0, l1 cos q1, l1 sin q1]. Platform
frame: origin p_e (platform centre), orientation R_e = Rz(yaw) Ry(pitch) Rx(roll); joint
C_i at ``joint_positions[i]`` in it. Rod i joins the crank tip of motor i to joint C_i.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.description import (check_kind, check_number, CircularSection,
                                                 describe_value, DescriptionMapping,
                                                 load_description, RobotDescriptionError)

KIND = 'pcr_6rus'
# The motors' names in setpoints and tendon/state, in the order of motor_positions.
MOTOR_NAMES = tuple(f'motor_{i + 1}' for i in range(6))
COMPAT = ('paper', 'dfki2024')
# The authors' code hard-codes the precurvature radius (issue 15).
DFKI2024_PRECURVATURE_RADIUS = 0.3


@dataclass(frozen=True)
class PcrRods(CircularSection):
    """The six identical elastic rods: pre-curved, uniform, circular."""

    length: float                # L, m
    radius: float                # m
    youngs_modulus: float        # E, Pa
    poisson_ratio: float         # nu
    density: float               # rho, kg/m^3
    precurvature_radius: float   # r, m: rest curvature u* = [1/r, 0, 0] (body frame)

    @property
    def shear_modulus(self) -> float:
        """G = E / (2 (1 + nu)) [Pa]."""
        return self.youngs_modulus / (2.0 * (1.0 + self.poisson_ratio))


@dataclass(frozen=True)
class PcrRobot:
    """A 6-RUS parallel continuum robot."""

    name: str
    compat: str                      # 'paper' | 'dfki2024'
    gravity: np.ndarray              # (3,) m/s^2, world
    rods: PcrRods
    motor_positions: np.ndarray      # (6, 3) m, world
    motor_rotations: np.ndarray      # (6, 3, 3) motor frame -> world
    crank_length: float              # l1, m
    motor_limits: np.ndarray         # (2,) rad, lower and upper bound of q1
    joint_positions: np.ndarray      # (6, 3) m, platform frame
    platform_mass: float             # kg
    load_force: np.ndarray           # (3,) N, world, at the platform centre
    load_moment: np.ndarray          # (3,) N m, world

    @property
    def precurvature(self) -> float:
        """Rest curvature 1/r [1/m] of the model in use (``compat``)."""
        r = (DFKI2024_PRECURVATURE_RADIUS if self.compat == 'dfki2024'
             else self.rods.precurvature_radius)
        return 1.0 / r

    @property
    def reach(self) -> float:
        """
        Farthest any platform centre can be from the world origin [m].

        A motor, its crank, the rod (straight) and the platform's joint in a line: no pose
        beyond it exists, whatever the solver does.
        """
        return float(np.linalg.norm(self.motor_positions, axis=1).max() + self.crank_length
                     + self.rods.length + np.linalg.norm(self.joint_positions, axis=1).max())

    def with_changes(self, **changes: Any) -> 'PcrRobot':
        """
        Return a copy with top-level or rod fields replaced; validated again.

        Top-level fields are ``compat``, ``gravity``, ...; rod fields ``youngs_modulus``,
        ``precurvature_radius``, ...
        """
        data = self.to_dict()
        for key, value in changes.items():
            target = data['rods'] if key in data['rods'] else data
            if key not in target:
                raise KeyError(f'unknown field {key!r}')
            target[key] = value.tolist() if isinstance(value, np.ndarray) else value
        return pcr_robot_from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """Return the description as plain data in the YAML schema (angles in radians)."""
        rods = self.rods
        return {
            'kind': KIND, 'name': self.name, 'compat': self.compat,
            'gravity': self.gravity.tolist(),
            'rods': {'length': rods.length, 'radius': rods.radius,
                     'youngs_modulus': rods.youngs_modulus, 'poisson_ratio': rods.poisson_ratio,
                     'density': rods.density, 'precurvature_radius': rods.precurvature_radius},
            'motors': {'pair': self.motor_positions[:2].tolist(),
                       'pair_angles': self._pair_angles(),
                       'crank_length': self.crank_length,
                       'limits': self.motor_limits.tolist()},
            'platform': {'pair': self.joint_positions[:2].tolist(),
                         'mass': self.platform_mass},
            'load': {'force': self.load_force.tolist(), 'moment': self.load_moment.tolist()},
        }

    def _pair_angles(self) -> list[float]:
        R = self.motor_rotations[0::2]
        return [math.atan2(r[1, 0], r[0, 0]) for r in R]


def default_pcr_file() -> Path:
    """Return the package's parallel robot description, ``config/pcr_6rus.yaml``."""
    return share_dir() / 'config' / 'pcr_6rus.yaml'


def load_pcr_robot(path: str | Path) -> PcrRobot:
    """
    Load and validate a ``kind: pcr_6rus`` description file.

    Raises
    ------
    RobotDescriptionError
        With one message naming the file, the key and the problem.

    """
    return load_description(path, pcr_robot_from_dict)


def pcr_robot_from_dict(data: Any) -> PcrRobot:
    """Build a validated :class:`PcrRobot` from plain data in the YAML schema."""
    check_kind(data, KIND)
    top = DescriptionMapping(data, '', required=('kind', 'name', 'rods', 'motors', 'platform'),
                             optional=('compat', 'gravity', 'load'))
    top.get('kind')
    name = top.string('name')
    compat = top.choice('compat', COMPAT, default='paper')
    gravity = top.vector('gravity', default=(0.0, 0.0, -9.80665))
    rods = _load_rods(DescriptionMapping(top.get('rods'), 'rods', required=(
        'length', 'radius', 'youngs_modulus', 'poisson_ratio', 'density',
        'precurvature_radius')))
    motors = DescriptionMapping(top.get('motors'), 'motors',
                                required=('pair', 'crank_length'))
    rotations = np.array([_rotation_z(a) for a in motors.angle_list('pair_angles', 3)])
    motor_pair = _points(motors, 'pair')
    crank = motors.number('crank_length', positive=True)
    limits = motors.angle_list('limits', 2)
    if not limits[0] < limits[1]:
        raise RobotDescriptionError(
            f'motors.limits: lower limit must be below the upper, got {np.degrees(limits)} deg')
    motors.finish()
    platform = DescriptionMapping(top.get('platform'), 'platform', required=('pair',),
                                  optional=('mass',))
    joint_pair = _points(platform, 'pair')
    mass = platform.number('mass', default=0.0, minimum=0.0)
    platform.finish()
    load = DescriptionMapping(top.get('load', {}), 'load', optional=('force', 'moment'))
    force = load.vector('force', default=(0.0, 0.0, 0.0))
    moment = load.vector('moment', default=(0.0, 0.0, 0.0))
    load.finish()
    top.finish()
    motor_positions = np.array([R @ p for R in rotations for p in motor_pair])
    joint_positions = np.array([R @ c for R in rotations for c in joint_pair])
    # name the key the file gives the angles under
    angles_key = 'motors.' + next(k for k in ('pair_angles_deg', 'pair_angles')
                                  if k in motors.data)
    _check_apart(motor_positions, rotations, angles_key, 'motors', 'motors M', rods.radius)
    _check_apart(joint_positions, rotations, angles_key, 'platform', 'joints C', rods.radius)
    return PcrRobot(
        name=name, compat=compat, gravity=gravity, rods=rods,
        motor_positions=motor_positions,
        motor_rotations=np.repeat(rotations, 2, axis=0), crank_length=crank,
        motor_limits=limits, joint_positions=joint_positions,
        platform_mass=mass, load_force=force, load_moment=moment)


def _check_apart(points: np.ndarray, rotations: np.ndarray, angles_key: str, section: str,
                 what: str, rod_radius: float) -> None:
    # A rod ends at each platform joint: two joints closer than a rod's diameter put two rods
    # inside each other (all six at one point leave the platform free to turn about it); two
    # motors there leave no room for their cranks, which start the rods. The solvers cannot
    # tell either from a pose out of reach. Two pairs turned by one angle meet through
    # `angles_key`, else through `pair` (a point on the z axis, or one turned onto another).
    for i in range(len(points)):
        for j in range(i + 1, len(points)):
            distance = float(np.linalg.norm(points[i] - points[j]))
            if distance < 2.0 * rod_radius:
                same_turn = np.allclose(rotations[i // 2], rotations[j // 2], atol=1e-12)
                key = angles_key if i // 2 != j // 2 and same_turn else f'{section}.pair'
                raise RobotDescriptionError(
                    f'{key}: {what}{i + 1} and {what[-1]}{j + 1} are {distance:.3g} m '
                    f"apart, closer than a rod's diameter (2 x rods.radius = "
                    f'{2.0 * rod_radius:g} m): no two can share that room')


def _load_rods(m: DescriptionMapping) -> PcrRods:
    rods = PcrRods(
        length=m.number('length', positive=True),
        radius=m.number('radius', positive=True),
        youngs_modulus=m.number('youngs_modulus', positive=True),
        poisson_ratio=m.number('poisson_ratio', minimum=0.0),
        density=m.number('density', minimum=0.0),
        precurvature_radius=m.number('precurvature_radius', positive=True),
    )
    m.finish()
    if rods.poisson_ratio >= 0.5:
        raise RobotDescriptionError(
            f'rods.poisson_ratio: must be < 0.5, got {rods.poisson_ratio:g}')
    if rods.radius >= rods.length:
        raise RobotDescriptionError(
            f'rods.radius: must be smaller than rods.length ({rods.length}), got {rods.radius}')
    return rods


def _points(m: DescriptionMapping, name: str) -> np.ndarray:
    """Return the two points (2, 3) of a pair [m]."""
    value = m.get(name)
    path = m._path(name)
    if not isinstance(value, list) or len(value) != 2:
        raise RobotDescriptionError(
            f'{path}: must be a list of 2 points, got {describe_value(value)}')
    points = np.zeros((2, 3))
    for i, point in enumerate(value):
        if not isinstance(point, list) or len(point) != 3:
            raise RobotDescriptionError(
                f'{path}[{i}]: must be a list of 3 numbers, got {describe_value(point)}')
        points[i] = [check_number(v, f'{path}[{i}][{j}]', False, None)
                     for j, v in enumerate(point)]
    return points


def _rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
