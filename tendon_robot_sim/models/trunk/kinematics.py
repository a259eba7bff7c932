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
Constant-curvature kinematics of a bellows robot from its muscle lengths.

Hadzic & Häseli's kinematic model ("Implementation of Kinematics and Dynamics of an
Elephant Trunk like Robotic Arm", after Falkenhahn 2017): each section bends into a circular
arc with bending angle theta, direction phi and curvature kappa, set by its muscle
(bellows) lengths q_i. Bellows i sits at radius r_i and angle a_i (from the section's d1
towards d2), parallel to the centre spline of length l, so

    q_i = l - r_i theta cos(phi - a_i) = l - r_i (cos a_i u_x + sin a_i u_y),

q = B x with x = (l, u_x, u_y) and u = theta (cos phi, sin phi): linear in x. Three
bellows determine x (B is invertible when they do not lie on one line through the spline,
which the description loader checks); more are fitted by least squares and ``residual``
says by how much the lengths miss a constant-curvature set. The pose of the section end in
its base frame is the slides' homogeneous transform ^wH_h
(:func:`tendon_robot_sim.models.geometry.section_pose`); sections are chained from the base.
No gravity, no loads: the lengths alone give the shape. No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Mapping, Sequence

import numpy as np

from tendon_robot_sim.models.description import PHYSICAL_RANGES
from tendon_robot_sim.models.geometry import rotation_to_quaternion, section_pose
from tendon_robot_sim.models.trunk.robot import BellowsRobot


# Bending angles below this [rad] are round-off of the least squares: the section is straight.
STRAIGHT = 1e-12


class BellowsKinematicsError(ValueError):
    """Muscle lengths the kinematic model cannot take; the message names the bellows."""


def section_matrix(offsets: Sequence[float], angles: Sequence[float]) -> np.ndarray:
    """
    Return B (m, 3) of q = B (l, u_x, u_y) for actuators at ``offsets`` [m] and ``angles`` [rad].

    Row i is (1, -r_i cos a_i, -r_i sin a_i): an actuator on the inside of the bend is
    shorter than the centre spline.
    """
    offsets, angles = np.asarray(offsets, float), np.asarray(angles, float)
    return np.column_stack((np.ones_like(offsets), -offsets * np.cos(angles),
                            -offsets * np.sin(angles)))


def chain_frames(base_rotation: np.ndarray, base_position: np.ndarray, x: np.ndarray
                 ) -> list[tuple[np.ndarray, np.ndarray]]:
    """
    Return the world pose (R (3, 3), p (3,)) of the end of every section, base outwards.

    ``x`` (3n,): (l [m], u_x [rad], u_y [rad]) per section.
    """
    R, p = np.asarray(base_rotation, float), np.asarray(base_position, float)
    out = []
    for length, ux, uy in np.asarray(x, float).reshape(-1, 3):
        Rl, pl = section_pose(math.hypot(ux, uy), math.atan2(uy, ux), length)
        p = p + R @ pl
        R = R @ Rl
        out.append((R, p))
    return out


@dataclass(frozen=True)
class SectionArc:
    """One section's arc: centre-spline length, bending angle and direction, curvature."""

    length: float     # m, centre spline l
    theta: float      # rad, bending angle, >= 0
    phi: float        # rad, bending direction from the section's d1 towards d2, (-pi, pi]
    kappa: float      # 1/m, theta / l

    def to_dict(self) -> dict[str, float]:
        return {'length': self.length, 'theta': self.theta, 'phi': self.phi,
                'kappa': self.kappa}


def section_arcs(x: np.ndarray) -> list[SectionArc]:
    """Return the arcs of the coordinates x (3n,) = (l, u_x, u_y) per section."""
    arcs = []
    for length, ux, uy in np.asarray(x, float).reshape(-1, 3):
        theta = math.hypot(ux, uy)
        if theta < STRAIGHT:
            theta, ux, uy = 0.0, 1.0, 0.0
        arcs.append(SectionArc(float(length), theta, math.atan2(uy, ux), theta / length))
    return arcs


@dataclass(frozen=True)
class BellowsPose:
    """The shape a set of muscle lengths gives. World frame, SI units."""

    sections: tuple[SectionArc, ...]
    coordinates: np.ndarray        # (3n,) (l, u_x, u_y) per section
    frames: tuple                  # ((R (3, 3), p (3,)), ...) end of each section
    muscle_lengths: np.ndarray     # (m,) m, the constant-curvature lengths (fitted)
    residual: float                # m, norm of (given - fitted) lengths; 0 for 3 per section

    @property
    def tip_position(self) -> np.ndarray:
        return self.frames[-1][1]

    @property
    def tip_rotation(self) -> np.ndarray:
        return self.frames[-1][0]

    def to_dict(self, names: Sequence[str]) -> dict:
        return {'sections': [s.to_dict() for s in self.sections],
                'tip_position': self.tip_position.tolist(),
                'tip_orientation': rotation_to_quaternion(self.tip_rotation).tolist(),
                'muscle_lengths': dict(zip(names, self.muscle_lengths.tolist())),
                'residual': self.residual}


class BellowsKinematics:
    """Forward kinematics of a bellows robot: muscle lengths -> arcs and tip pose."""

    def __init__(self, robot: BellowsRobot):
        self.robot = robot
        self.names = robot.actuator_names
        n = len(robot.sections)
        self.lengths = np.zeros((len(self.names), 3 * n))    # q = lengths @ x
        row = 0
        for j, section in enumerate(robot.sections):
            B = section_matrix([b.offset for b in section.bellows],
                               [b.angle for b in section.bellows])
            self.lengths[row:row + len(B), 3 * j:3 * j + 3] = B
            row += len(B)
        self._pinv = np.linalg.pinv(self.lengths)
        # the straight robot: every bellows as long as its section's centre spline
        self.straight_lengths = np.concatenate([[s.length] * len(s.bellows)
                                                for s in robot.sections])

    def coordinates(self, muscle_lengths: np.ndarray) -> np.ndarray:
        """Return x (..., 3n) of muscle lengths (..., m) [m], least squares per section."""
        return np.asarray(muscle_lengths, float) @ self._pinv.T

    def forward(self, muscle_lengths: Sequence[float] | Mapping[str, float],
                field: str = 'muscle_lengths') -> BellowsPose:
        """
        Return the shape of muscle lengths [m]: one per bellows, or a mapping by name.

        A mapping leaves the bellows it does not name at their straight length (their
        section's rest length). Errors begin with ``field``.
        """
        q = self._vector(muscle_lengths, field)
        x = self.coordinates(q)
        self._check_bend(x, field)
        fitted = self.lengths @ x
        base = self.robot.base
        return BellowsPose(sections=tuple(section_arcs(x)), coordinates=x,
                           frames=tuple(chain_frames(base.rotation, base.position, x)),
                           muscle_lengths=fitted, residual=float(np.linalg.norm(q - fitted)))

    def tip_positions(self, muscle_lengths: np.ndarray) -> np.ndarray:
        """Return the tip (k, 3) [m, world] of each row of muscle lengths (k, m) [m]."""
        base = self.robot.base
        return np.array([chain_frames(base.rotation, base.position, x)[-1][1]
                         for x in self.coordinates(np.atleast_2d(muscle_lengths))])

    def _check_bend(self, x: np.ndarray, field: str) -> None:
        """
        Refuse arcs whose radius of curvature lies inside a section's ring of bellows.

        The bellows on the inside of such a bend would be shorter than nothing: lengths that
        far apart are no shape of the robot (a typo or a unit off, not a bend).
        """
        for j, (section, arc) in enumerate(zip(self.robot.sections, section_arcs(x))):
            ring = section.ring
            if arc.kappa * ring >= 1.0:
                raise BellowsKinematicsError(
                    f'{field}: the lengths bend section {j} to a radius of '
                    f'{1e3 / arc.kappa:.3g} mm, inside its bellows ({1e3 * ring:g} mm from '
                    'the centre spline): no shape of the robot')

    def _vector(self, values, field: str) -> np.ndarray:
        if isinstance(values, Mapping):
            q = self.straight_lengths.copy()
            for name, value in values.items():
                if name not in self.names:
                    raise BellowsKinematicsError(
                        f'{field}: unknown bellows {name!r}; known: {self.names}')
                q[self.names.index(name)] = value
        else:
            q = np.asarray(values, dtype=float)
            if q.shape != (len(self.names),):
                raise BellowsKinematicsError(
                    f'{field}: need one value per bellows {self.names}, got {q.size}')
        # the physical range of a length in a description: millimetres typed for metres (a
        # trunk 670 m long) or 1e300 (Infinity and NaN in the results) are no lengths
        low, high, unit, why = PHYSICAL_RANGES['length']
        for name, value in zip(self.names, q):
            if not (math.isfinite(value) and low <= value <= high):
                raise BellowsKinematicsError(
                    f'{field}: {name} = {value:g} m; a length must be within '
                    f'[{low:g}, {high:g}] {unit} ({why})')
        return q
