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
Constant-curvature (CC) kinematics: the fast model of a single-section robot.

Assumptions: every tendon is routed parallel to the backbone at radius ``r_i``
and angle ``a_i`` (robot description), all tendons are anchored at the same arc
length ``end`` (one section, [0, end]), the rod is inextensible and the tendons
are stiff. The section then bends into a circular arc of curvature ``kappa`` in
the plane at angle ``phi`` from d1 (towards d2, like the tendon angles), with
bending angle ``theta = kappa * end``. The displacement of tendon i (pulled in
past the base, positive when pulling) is

    q_i = r_i * theta * cos(phi - a_i)

so q = A u with the rows of A = r_i (cos a_i, sin a_i) and
u = theta (cos phi, sin phi). The forward map solves this by least squares
(exact for consistent displacements). When every hole lies on one line through
the backbone (a planar robot, e.g. two antagonistic tendons) only the component
of u along that line is defined: the bending plane is fixed, phi is the line's
direction (or its opposite) and theta follows from the displacements; targets out
of that plane are unreachable. The pose of the section end in the base body frame is the
homogeneous transform of the elephant-trunk model (Falkenhahn 2017): rotation by
theta about (-sin phi, cos phi, 0) and position
((1 - cos theta) cos phi, (1 - cos theta) sin phi, sin theta) / kappa, written
with sinc so that kappa -> 0 needs no special case. A rod longer than ``end``
continues straight along the section's end tangent (no moment acts there).

This is exact for the Kirchhoff rod with parallel tendons, no gravity, no tip
load and rigid tendons; with gravity, compliance or non-parallel routing use
:class:`tendon_robot_sim.models.rod.statics.solver.StaticsSolver`. No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from tendon_robot_sim.models.geometry import rotation_to_quaternion, section_pose
from tendon_robot_sim.models.tendon_robot import friction_refused, load_robot, Robot

# Default distance [m] between a target tip and the closest CC tip for it to count
# as reachable.
TIP_TOLERANCE = 1e-6
# Bending angles [rad] scanned for the closest tip before the local refinement:
# theta >= 0 with phi free, or signed theta in the fixed plane of a planar robot.
_SCAN = np.linspace(0.0, 2.0 * math.pi, 721)
_SIGNED_SCAN = np.linspace(-2.0 * math.pi, 2.0 * math.pi, 1441)
# |sin(phi - plane)| above which a bending direction leaves a planar robot's plane.
_PLANE_TOLERANCE = 1e-9


class ConstantCurvatureError(ValueError):
    """The robot or the input does not fit the constant-curvature model."""


class UnreachableError(ConstantCurvatureError):
    """A tip target that no CC arc reaches; ``closest`` is the nearest CC state."""

    def __init__(self, message: str, closest: 'CCState', distance: float):
        super().__init__(message)
        self.closest = closest
        self.distance = distance


@dataclass(frozen=True)
class CCState:
    """One constant-curvature configuration."""

    theta: float                 # rad, bending angle of the section, >= 0
    phi: float                   # rad, bending direction from d1 towards d2, (-pi, pi]
    kappa: float                 # 1/m, curvature of the section
    tip_position: np.ndarray     # (3,) m, world (base) frame
    tip_rotation: np.ndarray     # (3, 3) tip frame (d1, d2, d3) -> world
    displacements: np.ndarray    # (n,) m, q_i = r_i theta cos(phi - a_i)
    residual: float              # m, norm of (given - consistent) displacements; 0 for inverse

    @property
    def tip_orientation(self) -> np.ndarray:
        """Return the unit quaternion [qx, qy, qz, qw] of ``tip_rotation``."""
        return rotation_to_quaternion(self.tip_rotation)

    def to_dict(self) -> dict:
        return {'theta': self.theta, 'phi': self.phi, 'kappa': self.kappa,
                'tip_position': self.tip_position.tolist(),
                'tip_orientation': self.tip_orientation.tolist(),
                'displacements': self.displacements.tolist(), 'residual': self.residual}


class ConstantCurvature:
    """
    CC forward and inverse kinematics of ``robot``.

    A planar robot (every hole on one line through the backbone,
    :attr:`Robot.bending_directions`) bends only in the plane of that line and the
    base axis: ``plane`` is then its phi (rad), otherwise None.

    Raises
    ------
    ConstantCurvatureError
        A tendon is not routed parallel, or the tendons end at different arc lengths.

    """

    def __init__(self, robot: Robot):
        refused = friction_refused(robot, 'constant-curvature model')
        if refused:
            raise ConstantCurvatureError(refused)
        bad = [t.name for t in robot.tendons if t.routing != 'parallel']
        if bad:
            raise ConstantCurvatureError(
                f'tendons {bad}: constant curvature needs parallel tendon routing')
        ends = {t.end for t in robot.tendons}
        if max(ends) - min(ends) > 1e-9:
            raise ConstantCurvatureError(
                'tendons[].end: constant curvature handles one section; all tendons must be '
                f'anchored at the same arc length, got {sorted(ends)} m')
        self.robot = robot
        self.names = robot.tendon_names
        self.section_length = robot.tendons[0].end   # m
        self.length = robot.rod.length               # m
        angles = np.array([t.angle for t in robot.tendons])
        offsets = np.array([t.offset for t in robot.tendons])
        self.matrix = offsets[:, None] * np.column_stack((np.cos(angles), np.sin(angles)))
        # u = D^T w over the bending directions D: least squares in the reachable directions
        directions = robot.bending_directions
        self._pinv = directions.T @ np.linalg.pinv(self.matrix @ directions.T)
        self.plane = (float(math.atan2(directions[0, 1], directions[0, 0]))
                      if len(directions) == 1 else None)

    # ------------------------------------------------------------------ forward

    def forward(self, displacements: Sequence[float] | Mapping[str, float],
                field: str = 'displacements') -> CCState:
        """
        Displacements (m, one per tendon or a mapping, others 0) -> CC state.

        Least squares over the tendons; ``residual`` says how far the input is from
        a consistent (CC) set of displacements. ``field`` names the input in errors (a
        command's option).
        """
        q = self._vector(displacements, field)
        u = self._pinv @ q
        theta = float(math.hypot(u[0], u[1]))
        phi = float(math.atan2(u[1], u[0])) if theta > 0.0 else 0.0
        state = self.from_angles(theta, phi)
        residual = float(np.linalg.norm(q - state.displacements))
        return CCState(state.theta, state.phi, state.kappa, state.tip_position,
                       state.tip_rotation, state.displacements, residual)

    def from_angles(self, theta: float, phi: float) -> CCState:
        """
        Return the CC state with bending angle ``theta`` (rad, any sign) and direction ``phi``.

        A planar robot takes only phi in its plane (``plane`` or ``plane + pi``).
        """
        theta, phi = float(theta), float(phi)
        for name, value in (('theta', theta), ('phi', phi)):
            if not math.isfinite(value):
                raise ConstantCurvatureError(f'{name}: must be finite, got {value}')
        if (self.plane is not None and theta != 0.0
                and abs(math.sin(phi - self.plane)) > _PLANE_TOLERANCE):
            raise ConstantCurvatureError(
                f'phi: this planar robot bends only in its plane, phi = '
                f'{math.degrees(self.plane):.6g} or {math.degrees(self.plane) + 180.0:.6g} '
                f'degrees; got {math.degrees(phi):.6g} degrees')
        if theta < 0.0:
            theta, phi = -theta, phi + math.pi
        phi = math.atan2(math.sin(phi), math.cos(phi))
        rotation, position = self._tip_body(theta, phi)
        base = self.robot.base
        frame = base.rotation
        displacements = self.matrix @ (theta * np.array([math.cos(phi), math.sin(phi)]))
        return CCState(theta=theta, phi=phi, kappa=theta / self.section_length,
                       tip_position=base.position + frame @ position,
                       tip_rotation=frame @ rotation, displacements=displacements,
                       residual=0.0)

    def _tip_body(self, theta: float, phi: float) -> tuple[np.ndarray, np.ndarray]:
        rotation, position = section_pose(theta, phi, self.section_length)
        position = position + (self.length - self.section_length) * rotation[:, 2]
        return rotation, position

    # ------------------------------------------------------------------ inverse

    def inverse(self, theta: float, phi: float) -> np.ndarray:
        """Displacements (m) that bend the section by ``theta`` towards ``phi``."""
        return self.from_angles(theta, phi).displacements

    def inverse_tip(self, tip_position: Sequence[float], tolerance: float = TIP_TOLERANCE,
                    field: str = 'tip_position') -> CCState:
        """
        Return the CC state whose tip is at ``tip_position`` (m, world frame).

        The tip of a CC robot lies in the plane through the base axis at angle phi,
        so phi is the direction of the target around the axis; theta is the bending
        angle in [0, 2 pi) whose tip is closest to the target in that plane. A planar
        robot keeps phi = ``plane``: theta in (-2 pi, 2 pi) is the closest in its plane,
        and a target off the plane is unreachable (the error names the closest tip).
        ``field`` names the target in errors (a command's option).

        Raises
        ------
        UnreachableError
            The closest CC tip is farther than ``tolerance`` (m) from the target;
            the error carries that closest state.

        """
        target = np.asarray(tip_position, dtype=float)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise ConstantCurvatureError(
                f'{field}: must be 3 finite numbers, got {list(np.ravel(target))}')
        base = self.robot.base
        local = base.rotation.T @ (target - base.position)
        if self.plane is None:
            radial = math.hypot(local[0], local[1])
            phi = math.atan2(local[1], local[0]) if radial > 0.0 else 0.0
            thetas = _SCAN
        else:   # the target's component in the plane, signed
            phi = self.plane
            radial = local[0] * math.cos(phi) + local[1] * math.sin(phi)
            thetas = _SIGNED_SCAN
        direction = np.array([math.cos(phi), math.sin(phi)])

        def distance(theta: float) -> float:
            position = self._tip_body(theta, phi)[1]
            return math.hypot(position[:2] @ direction - radial, position[2] - local[2])

        scan = [distance(t) for t in thetas]
        best = int(np.argmin(scan))
        step = thetas[1] - thetas[0]
        theta = _golden_section(distance, max(thetas[best] - step, thetas[0]),
                                thetas[best] + step)
        state = self.from_angles(theta, phi)
        gap = float(np.linalg.norm(state.tip_position - target))
        if gap > tolerance:
            raise UnreachableError(
                f'{field}: {target.tolist()} is not reachable with constant curvature '
                f'(section {self.section_length} m, rod {self.length} m); closest tip '
                f'{np.round(state.tip_position, 6).tolist()} at {gap:.3g} m', state, gap)
        return state

    # ------------------------------------------------------------------ helpers

    def _vector(self, values, field: str) -> np.ndarray:
        if isinstance(values, Mapping):
            q = np.zeros(len(self.names))
            for name, value in values.items():
                try:
                    q[self.robot.tendon_index(name)] = value
                except KeyError as error:
                    raise ConstantCurvatureError(f'{field}: {error.args[0]}') from None
        else:
            q = np.asarray(values, dtype=float)
            if q.shape != (len(self.names),):
                raise ConstantCurvatureError(
                    f'{field}: need one value per tendon {self.names}, got {q.size}')
        bad = [n for n, v in zip(self.names, q) if not math.isfinite(v)]
        if bad:
            raise ConstantCurvatureError(f'{field}: non-finite value for {bad}')
        # A tendon's path is L - q long: pulled by more than L, its hole would have crossed
        # the centre of curvature (kappa r > 1), which no arc allows; let out by as much,
        # the tendon opposite would have.
        too_far = [(n, v) for n, v in zip(self.names, q) if abs(v) > self.section_length]
        if too_far:
            name, value = too_far[0]
            raise ConstantCurvatureError(
                f'{field}: {name} = {value:g} m is more than the section length '
                f'{self.section_length:g} m a tendon can be pulled or let out')
        return q


def _golden_section(f, low: float, high: float, tolerance: float = 1e-13) -> float:
    """Minimiser of the unimodal ``f`` on [low, high]."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tolerance:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def load_constant_curvature(path: str | Path) -> ConstantCurvature:
    """
    Load the tendon robot in ``path`` and its constant-curvature model.

    A robot the model does not take (friction, helical or tapered routing, several sections)
    is refused naming the file, as every other error of a robot file
    (``robot_friction.yaml: tendons[0].friction: ...``).
    """
    robot = load_robot(path)
    try:
        return ConstantCurvature(robot)
    except ConstantCurvatureError as error:
        raise ConstantCurvatureError(f'{path}: {error}') from None
