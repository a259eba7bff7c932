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
Cartesian stiffness of the 6-RUS parallel continuum robot with its motors held.

The equilibrium is a forward kinetostatics solution
(:meth:`~tendon_robot_sim.models.pcr.kinetostatics.PcrSolver.forward`): motor angles q1
fixed, external wrench w = [F, M] at the platform centre p_e (world frame; M about p_e,
as Eq. 3 of Rodrigues et al. 2024 writes it). Its tangent compliance is

    C = d[delta p_e, delta theta] / d[F, M]   (6 x 6, world frame),

delta p_e the displacement of the platform centre [m], delta theta the small rotation of
the platform (rotation vector, world frame) [rad]; the stiffness is K = C^-1 (blocks N/m,
N/rad; N m/m, N m/rad). Without an external wrench K is symmetric (the rods and their
weight are conservative). Two ways to C:

* :func:`stiffness`: the implicit function theorem on the shooting residual,
  dx/dw = -(dE/dx)^-1 dE/dw, with dE/dx exact from the variational equations the
  Newton iteration integrates (:meth:`PcrSolver.jacobians`); one linear solve.
* :func:`stiffness_by_differences`: central differences of 12 forward solves (the check).

The axial stiffness is k_z = 1 / C[2, 2]: the force along z per unit displacement of the
platform centre along z when only F_z changes (the platform free to shift and tilt): what
a compression test measures. K[2, 2] is stiffer: the other five twist components held.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from tendon_robot_sim.models.pcr.kinetostatics import PcrResult, PcrSolver

# Central-difference steps in units of the solver's force (E I / L^2) and moment (E I / L)
# scales: displacements of ~1e-5 m, far above the Newton tolerance (~1e-11 m), and a
# truncation error (h^2) below 1e-6 relative.
DIFFERENCE_STEP = 1e-2


@dataclass(frozen=True)
class CartesianStiffness:
    """
    Tangent stiffness of the platform at one equilibrium, motors held. World frame, SI.

    Whether the equilibrium is stable:
    :func:`tendon_robot_sim.models.pcr.stability.unstable_because`.
    """

    matrix: np.ndarray        # (6, 6) K: [F, M] per [delta p_e, delta theta]
    compliance: np.ndarray    # (6, 6) C = K^-1
    equilibrium: PcrResult    # the forward solution it is taken at
    method: str               # 'variational' | 'differences'

    @property
    def axial(self) -> float:
        """k_z = 1 / C[2, 2] [N/m]: z force per z displacement, the platform otherwise free."""
        return 1.0 / self.compliance[2, 2]

    def to_dict(self) -> dict:
        """Plain JSON-ready data (SI: N/m, N/rad, N m/m, N m/rad)."""
        return {'method': self.method, 'axial_stiffness': self.axial,
                'stiffness': self.matrix.tolist(), 'compliance': self.compliance.tolist(),
                'position': self.equilibrium.position.tolist(),
                'orientation_rpy': self.equilibrium.orientation.tolist(),
                'motor_angles': self.equilibrium.motor_angles.tolist(),
                'force': self.equilibrium.force.tolist(),
                'moment': self.equilibrium.moment.tolist()}


def angular_rate_matrix(orientation) -> np.ndarray:
    """
    Return W (3, 3) with omega = W d(roll, pitch, yaw): world-frame rotation of R_e.

    R_e = Rz(yaw) Ry(pitch) Rx(roll): omega = yaw' e_z + pitch' Rz e_y + roll' Rz Ry e_x.
    """
    _, pitch, yaw = orientation
    cp, sp, cy, sy = math.cos(pitch), math.sin(pitch), math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, -sy, 0.0], [sy * cp, cy, 0.0], [-sp, 0.0, 1.0]])


def _result(compliance, equilibrium, method) -> CartesianStiffness:
    return CartesianStiffness(matrix=np.linalg.inv(compliance), compliance=compliance,
                              equilibrium=equilibrium, method=method)


def stiffness(solver: PcrSolver, motor_angles, force=None, moment=None) -> CartesianStiffness:
    """
    Tangent Cartesian stiffness at the forward solution (q1, wrench), by the variational equations.

    Motor angles (6,) [rad], force [N] and moment [N m] as in :meth:`PcrSolver.forward` (the
    wrench at the equilibrium; default the description's load). Raises ConvergenceError when
    there is no equilibrium, numpy's LinAlgError at a limit point (C or K singular).
    """
    equilibrium = solver.forward(motor_angles, force, moment)
    return _result(tangent_compliance(solver, equilibrium), equilibrium, 'variational')


def tangent_compliance(solver: PcrSolver, equilibrium) -> np.ndarray:
    """
    C (6, 6) at ``equilibrium``, the solver's last solution, with the motors held.

    By the variational equations: the platform's displacement [m] and rotation vector [rad]
    per force [N] and moment [N m]. Raises numpy's LinAlgError at a limit point.
    """
    dEdx, dEdw = solver.jacobians(inverse=False)
    dx = -np.linalg.solve(dEdx, dEdw)
    return np.vstack((dx[36:39] * solver.robot.rods.length,
                      angular_rate_matrix(equilibrium.orientation) @ dx[39:42]))


def stiffness_by_differences(solver: PcrSolver, motor_angles, force=None, moment=None,
                             step: float = DIFFERENCE_STEP) -> CartesianStiffness:
    """
    Return the same stiffness as :func:`stiffness`, by central differences of forward solves.

    Each wrench component is moved by +-h (h = ``step`` x the force or moment scale) from the
    equilibrium's; the platform's displacement and rotation vector (from R(+h) R(-h)^T)
    divided by 2 h give a column of C.
    """
    # here: scipy takes a quarter of a second to import, and only this check needs it
    from scipy.spatial.transform import Rotation
    equilibrium = solver.forward(motor_angles, force, moment)
    wrench = np.concatenate((equilibrium.force, equilibrium.moment))
    wrench[:3] -= solver.robot.platform_mass * solver.robot.gravity   # forward adds it again
    compliance = np.empty((6, 6))
    for column in range(6):
        h = step * solver.scale[0 if column < 3 else 1]
        poses = []
        for sign in (1.0, -1.0):
            moved = wrench.copy()
            moved[column] += sign * h
            poses.append(solver.forward(equilibrium.motor_angles, moved[:3], moved[3:]))
        rotation = Rotation.from_matrix(poses[0].rotation @ poses[1].rotation.T)
        compliance[:3, column] = (poses[0].position - poses[1].position) / (2.0 * h)
        compliance[3:, column] = rotation.as_rotvec() / (2.0 * h)
    solver.forward(equilibrium.motor_angles, wrench[:3], wrench[3:])   # back to the equilibrium
    return _result(compliance, equilibrium, 'differences')
