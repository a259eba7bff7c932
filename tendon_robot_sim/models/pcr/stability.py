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
Stability of an equilibrium of the parallel robot with its motors held.

Two conditions, both necessary (the second variation of the potential energy, rods and
platform, positive definite; Till and Rucker, "Elastic Stability of Cosserat Rods and Parallel
Continuum Robots", IEEE T-RO 33(3), 2017):

* each rod with the platform held is stable: no conjugate point inside it. The solutions of the
  rod's equations from its base that keep the base conditions (n(0), m_z, q2, q3 varied) form a
  6-parameter family; where the 6 x 6 map from them to the position and rotation at s turns
  singular (its determinant changes sign) a Jacobi field held at both ends exists, and the rod
  buckles with its ends held there. A load far beyond the rods' Euler loads can still have a
  solution, the rods bent into a higher mode (more and more sign changes): an equilibrium, but
  one no robot holds;
* the platform with the motors held is stable: the tangent stiffness of
  :mod:`tendon_robot_sim.models.pcr.stiffness` positive definite.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.pcr import _kernels as kernels
from tendon_robot_sim.models.pcr.kinetostatics import PcrResult, PcrSolver
from tendon_robot_sim.models.pcr.robot import PcrRobot
from tendon_robot_sim.models.pcr.stiffness import tangent_compliance

# RK4 steps per rod for the conjugate-point test (the solver's own 32 steps resolve the
# determinant's zeros too coarsely for a rod bent into a higher mode)
STEPS = 256


def conjugate_points(robot: PcrRobot, result: PcrResult) -> list[np.ndarray]:
    """
    Arc lengths [m] of the conjugate points of each rod of ``result`` (6 arrays, empty: none).

    A sign change of det d[p(s) / L, theta(s)] / d[n(0), m_z, q2, q3] after the first 2 % of
    the rod (the determinant starts at zero at s = 0), by the variational equations of
    STEPS RK4 steps (:func:`~tendon_robot_sim.models.pcr._kernels.pcr_jacobi_determinants`):
    about 10 ms for the six rods. ``result`` an inverse or forward solution.
    """
    solver = PcrSolver(robot, steps=STEPS)
    plan, work = solver._plans[False], solver._work
    fs, ms = solver.scale[0], solver.scale[1]
    x = np.zeros(42)
    rods = x[:36].reshape(6, 6)
    rods[:, :3] = result.base_forces / fs
    axes = (result.base_rotations[:, :, 2] if robot.compat == 'paper'
            else np.array([0.0, 0.0, 1.0]))
    rods[:, 3] = np.sum(result.base_moments * axes, axis=1) / ms
    rods[:, 4:] = result.joint_angles
    dets = np.empty((STEPS, 6))
    kernels.pcr_jacobi_determinants(plan, x, np.asarray(result.motor_angles, dtype=float),
                                    work.traj, work, np.empty((6, 6)), dets)
    L = robot.rods.length
    s = L / STEPS * np.arange(1, STEPS + 1)
    inside = s > L / 50
    points = []
    for i in range(6):
        d = dets[inside, i]
        flips = np.nonzero(np.sign(d[1:]) != np.sign(d[:-1]))[0]
        points.append(s[inside][flips + 1])
    return points


def held_stiffness(solver: PcrSolver) -> np.ndarray:
    """K (6, 6) with the motors held at the solver's last inverse solution (world frame)."""
    return np.linalg.inv(tangent_compliance(solver, solver.hold_motors()))


def positive_definite(K: np.ndarray) -> bool:
    """
    K's symmetric part is positive definite: every small platform motion is resisted.

    A conservative robot under a dead load is stable where its (symmetric) tangent stiffness
    is positive definite; the paper's base condition m(0) = m_z R0 e3 makes K slightly
    unsymmetric under load (see docs/pcr.md), hence the symmetric part. Independent of the
    units: positive definiteness survives any scaling of the axes.
    """
    return bool(np.linalg.eigvalsh(0.5 * (K + K.T))[0] > 0.0)


def unstable_because(robot: PcrRobot, equilibrium: PcrResult, K: np.ndarray | None) -> str | None:
    """
    Say why ``equilibrium`` with the motors held is unstable; None if stable.

    The one definition of stability for every output (``pcr ik``, ``pcr stiffness``, the
    sweeps' ``stable`` columns): no rod has a conjugate point (:func:`conjugate_points`) and
    K, the platform's tangent stiffness there with the motors held, is positive definite
    (:func:`positive_definite`; None: singular, a limit point).
    """
    load = f'{np.round(equilibrium.force, 4).tolist()} N (platform weight included)'
    points = conjugate_points(robot, equilibrium)
    buckled = [i + 1 for i, p in enumerate(points) if p.size]
    if buckled:
        most = max(p.size for p in points)
        return (f'under the force {load} the rods {buckled} are buckled (up to {most} '
                f'conjugate points along a rod): an equilibrium, unstable, that no robot holds')
    if K is None:
        return f'under the force {load} the pose is at a limit point (stiffness singular)'
    if not positive_definite(K):
        return (f'under the force {load} the platform is unstable with the motors held (its '
                f'tangent stiffness has a negative direction)')
    return None


def instability(solver: PcrSolver, result: PcrResult) -> str | None:
    """
    Say why the last inverse solution ``result`` of ``solver`` is unstable; None if stable.

    ``result`` must be the solver's last inverse solution (its motors are then held).
    """
    try:
        K = held_stiffness(solver)
    except np.linalg.LinAlgError:
        K = None
    return unstable_because(solver.robot, result, K)
