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

"""What a statics solve gives: one equilibrium (:class:`StaticsResult`), poses (:class:`Shape`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tendon_robot_sim.models.contact.report import ContactPoint, largest_penetration
from tendon_robot_sim.models.tendon_robot import Robot


@dataclass(frozen=True)
class Shape:
    """Poses along a solution (base frame, SI units), as in :class:`StaticsResult`."""

    centerline: np.ndarray             # (3, k) m
    rotations: np.ndarray              # (k, 3, 3)
    tip_orientation: np.ndarray        # (4,) quaternion [qx, qy, qz, qw]
    vertebra_positions: np.ndarray     # (3, j) m
    vertebra_rotations: np.ndarray     # (j, 3, 3)
    vertebra_orientations: np.ndarray  # (j, 4)
    tendon_paths: tuple                # per tendon (3, i) m


@dataclass(frozen=True)
class Stability:
    """
    Stability of one equilibrium (:mod:`.stability`); ``stable`` None: not checked, see ``reason``.

    ``min_eigenvalue``: smallest eigenvalue of the total potential energy's Hessian per unit of
    the variation's L2 norm, int (|delta p|^2 / L^2 + |delta theta|^2) ds / L, in units of
    E I / L (E I of the rod, L its length). ``negative_modes``: directions that lower the
    energy (the Morse index), none when stable; ``neutral_modes``: eigenvalues within
    ``stability.NEUTRAL`` of zero (a symmetry, or a critical load).
    """

    stable: bool | None
    min_eigenvalue: float | None = None
    negative_modes: int | None = None
    neutral_modes: int | None = None
    reason: str | None = None

    def to_dict(self) -> dict:
        """Return JSON-ready data."""
        return {'stable': self.stable, 'min_eigenvalue': self.min_eigenvalue,
                'negative_modes': self.negative_modes, 'neutral_modes': self.neutral_modes,
                'reason': self.reason}

    def warning(self) -> str | None:
        """Return a one-line warning if the equilibrium is unstable, else None."""
        if self.stable is not False:
            return None
        return (f'warning: unstable equilibrium ({self.negative_modes} mode(s) lower the '
                f'energy, smallest eigenvalue {self.min_eigenvalue:.3g} E I / L): a small '
                'disturbance moves the robot away from it')


@dataclass(frozen=True)
class StaticsResult:
    """
    One static equilibrium. Frames: world = base frame of the robot; SI units.

    Field names follow :class:`tendon_robot_sim.models.rod.dynamics.simulation.SimState` where they
    mean the same thing, so a quasi-static node can publish the same content.
    """

    model: str
    arc_lengths: np.ndarray            # (k,) m, reference arc length of each backbone point
    centerline: np.ndarray             # (3, k) m, backbone positions p(s)
    rotations: np.ndarray              # (k, 3, 3) R(s): columns d1 d2 d3
    tip_position: np.ndarray           # (3,) m
    tip_rotation: np.ndarray           # (3, 3)
    tip_orientation: np.ndarray        # (4,) quaternion [qx, qy, qz, qw]
    vertebra_positions: np.ndarray     # (3, j) m, vertebra centres
    vertebra_rotations: np.ndarray     # (j, 3, 3)
    vertebra_orientations: np.ndarray  # (j, 4) quaternions [qx, qy, qz, qw]
    tendon_paths: tuple                # per tendon (3, i) m: base hole, vertebra holes
    #                                    up to the anchor (polyline, also for cosserat)
    base_force: np.ndarray             # (3,) N, backbone internal force n(0+), world frame:
    #                                    what the backbone exerts on the base (tendons not
    #                                    included; cut the robot just above the base)
    base_moment: np.ndarray            # (3,) N m, backbone internal moment m(0+) about p(0)
    tensions: np.ndarray               # (n,) N
    tendon_lengths: np.ndarray         # (n,) m, path length from base hole to anchor
    tendon_displacements: np.ndarray   # (n,) m, pulled in past the base (positive = pulling)
    slack: np.ndarray                  # (n,) m, tendon length not taken up (displacement mode)
    converged: bool
    residual: float                    # scaled residual (max norm), see StaticsSolver
    iterations: int                    # Newton iterations
    evaluations: int                   # shooting residual evaluations (integrations)
    solve_time: float                  # s, wall time of the solve call
    contacts: tuple[ContactPoint, ...] | None = None   # with a world: its contact patches
    # (n,) N, tension at each tendon's anchor where friction makes it differ from the motor's
    # (models.rod.statics.stick_slip); None: frictionless, the same as ``tensions``
    tip_tensions: np.ndarray | None = None
    # second-order check of the equilibrium (stability.check_stability); None: not asked for
    stability: Stability | None = None

    @property
    def max_penetration(self) -> float:
        """Return the largest penetration of the robot's envelope into an obstacle [m]."""
        return largest_penetration(self.contacts or [])

    def beyond_limits(self, robot: Robot) -> str | None:
        """
        Say which tendon (``[t0]: ...``) this equilibrium pulls beyond its ``max_tension``.

        None: none does.
        Solved for displacements, the tensions are an output: 0.2 m of tendon t0 once
        needed 326 N of a 20 N tendon. Such an equilibrium is no result for the robot.
        """
        over = np.flatnonzero(self.tensions > robot.max_tensions)
        if not over.size:
            return None
        i = over[0]
        return (f'[{robot.tendons[i].name}]: the equilibrium needs {self.tensions[i]:.4g} N, '
                f'above max_tension = {robot.max_tensions[i]:g} N')

    def to_dict(self) -> dict:
        """Summary as plain JSON-ready data (lists and numbers)."""
        return {
            'model': self.model,
            'tip_position': self.tip_position.tolist(),
            'tip_orientation': self.tip_orientation.tolist(),
            'tensions': self.tensions.tolist(),
            'displacements': self.tendon_displacements.tolist(),
            'tendon_lengths': self.tendon_lengths.tolist(),
            'slack': self.slack.tolist(),
            'base_force': self.base_force.tolist(),
            'base_moment': self.base_moment.tolist(),
            'converged': self.converged,
            'residual': self.residual,
            'iterations': self.iterations,
            'evaluations': self.evaluations,
            'solve_time_ms': self.solve_time * 1e3,
            **({} if self.contacts is None else {
                'contacts': [c.to_dict() for c in self.contacts],
                'max_penetration': self.max_penetration}),
            **({} if self.tip_tensions is None else {'tip_tensions': self.tip_tensions.tolist()}),
            **({} if self.stability is None else {'stability': self.stability.to_dict()}),
        }
