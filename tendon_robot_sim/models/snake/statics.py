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
Statics of the rolling-joint snake by virtual work: an energy view of the chain.

At rest the rolling joints do no work and the contact forces none either (rolling without
slipping), so a virtual change dq of the joint angles balances the work of the cables and of
the external loads against the change of potential energy V(q) = -sum_j m g . p_Cj:

    sum_k T_nk (-dl_nk/dq_n) + Q_n = dV/dq_n,      n = 1..N,

each segment length l_nk depending on its own joint only, and Q_n = F . dp/dq_n + M . w_n the
virtual work of a load (force F at the point p, moment M; w_n the link's rotation per unit
dq_n). All gradients are taken here by central differences of the kinematics (no lever arms,
no force balance). :func:`static_tensions` gives the minimum-sum tensions per segment that
hold a pose (:func:`~tendon_robot_sim.models.tension_distribution.distribute` within
[pretension, max_tension]); :func:`equilibrium` the pose that given whole-cable tensions hold.
Contact (34) and friction (35)-(36) limits are invisible to virtual work: where they are
inactive, the Newton-Euler minimum tensions equal these; whether a pose can be held with the
links rolling is the Newton-Euler check (:meth:`~tendon_robot_sim.models.snake.dynamics.
SnakeDynamics.inverse` with ``tensions``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import root

from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.loads import check, world_wrench
from tendon_robot_sim.models.snake.robot import RollingJointSnake
from tendon_robot_sim.models.tension_distribution import distribute, Distribution

# Step of the central differences [rad]: truncation ~1e-12, round-off ~1e-11 relative.
STEP = 1e-6
# Step of the stiffness (differences of the differences above) [rad].
STIFFNESS_STEP = 1e-4
# Residual of the joint balance below which an equilibrium counts as found, relative to the
# largest moment in play (all tensions, loads and the weight at the rolling radius R): the
# central differences leave ~1e-10 of it.
RESIDUAL = 1e-8


def potential_energy(snake: RollingJointSnake, kinematics: SnakeKinematics, q) -> np.ndarray:
    """V (K,) [J] of the links under gravity, zero at the base."""
    centers = kinematics.state(q).centers
    return -snake.link.mass * np.einsum('knj,j->k', centers, snake.gravity)


def _vee(skew: np.ndarray) -> np.ndarray:
    """(..., 3) the vector w of the skew-symmetric part of (..., 3, 3) matrices, [w]x."""
    return 0.5 * np.stack((skew[..., 2, 1] - skew[..., 1, 2], skew[..., 0, 2] - skew[..., 2, 0],
                           skew[..., 1, 0] - skew[..., 0, 1]), axis=-1)


def _gradients(snake: RollingJointSnake, kinematics: SnakeKinematics, q, loads):
    """
    Return dV/dq (N,), the cable levers -dl/dq (N, C) and the loads' Q (N,) at q (N,).

    Each a central difference of the kinematics at q +- STEP along every joint.
    """
    N = snake.n_joints
    steps = np.concatenate((q + STEP * np.eye(N), q - STEP * np.eye(N), q[None]))
    state = kinematics.state(steps)
    energy = -snake.link.mass * np.einsum('knj,j->k', state.centers, snake.gravity)
    lengths, _ = state.cable_segments()
    gravity_torque = (energy[:N] - energy[N:2 * N]) / (2 * STEP)
    levers = -np.einsum('nnc->nc', lengths[:N] - lengths[N:2 * N]) / (2 * STEP)
    work = np.zeros(N)
    for load in loads:
        n = load.link
        force, moment, point = world_wrench(load, state.rotations[:, n], state.origins[:, n])
        dp = (point[:N] - point[N:2 * N]) / (2 * STEP)                          # (N, 3)
        dR = (state.rotations[:N, n] - state.rotations[N:2 * N, n]) / (2 * STEP)
        w = _vee(dR @ state.rotations[2 * N, n].T)                               # (N, 3)
        work += dp @ force[2 * N] + w @ moment[2 * N]
    return gravity_torque, levers, work


def static_tensions(snake: RollingJointSnake, q, loads=()) -> list[Distribution]:
    """
    Minimum tensions holding the snake still at joint angles q (N,), per segment.

    ``loads``: :class:`~tendon_robot_sim.models.snake.loads.LinkWrench` on the links.

    Returns
    -------
    list of N :class:`~tendon_robot_sim.models.tension_distribution.Distribution`
        Segment n's tensions (C,) [N] and whether the bounds allow them.

    """
    q = np.asarray(q, dtype=float)
    gravity_torque, levers, work = _gradients(snake, SnakeKinematics(snake), q,
                                              check(snake, loads))
    return [distribute(levers[n][None], [gravity_torque[n] - work[n]], snake.pretension,
                       snake.max_tension) for n in range(snake.n_joints)]


@dataclass(frozen=True)
class Equilibrium:
    """A pose whole-cable tensions hold, found by :func:`equilibrium`."""

    q: np.ndarray            # (N,) rad
    found: bool              # the joint balance holds (relative residual below RESIDUAL) ...
    within: bool             # ... with every joint on its rolling surfaces (|q| <= 2 alpha)
    stiffness: np.ndarray    # (N,) eigenvalues [N m/rad] of the symmetric part of -dQ/dq

    @property
    def stable(self) -> bool:
        """Say whether the pose is found, on the surfaces, and pushes back every small move."""
        return self.found and self.within and bool(np.all(self.stiffness > 0.0))


def equilibrium(snake: RollingJointSnake, tensions, loads=(), q0=None) -> Equilibrium:
    """
    Find the pose (N,) that cable tensions (C,) [N], one per whole cable, hold at rest.

    Solves sum_k T_k (-dl_nk/dq_n) + Q_n - dV/dq_n = 0 for q from ``q0`` (default straight)
    with scipy's hybrid Newton method, the Jacobian (minus the stiffness) a central difference
    of that balance.
    """
    kinematics = SnakeKinematics(snake)
    loads = check(snake, loads)
    tensions = np.asarray(tensions, dtype=float)

    def balance(q):
        gravity_torque, levers, work = _gradients(snake, kinematics, q, loads)
        return levers @ tensions + work - gravity_torque

    def jacobian(q):
        return np.array([balance(q + STIFFNESS_STEP * e) - balance(q - STIFFNESS_STEP * e)
                         for e in np.eye(snake.n_joints)]).T / (2 * STIFFNESS_STEP)

    weight = snake.n_joints * snake.link.mass * np.linalg.norm(snake.gravity)
    scale = (np.abs(tensions).sum() + weight + sum(np.linalg.norm(w.force) for w in loads)
             ) * snake.link.radius_of_curvature + sum(np.linalg.norm(w.moment) for w in loads)
    tolerance = RESIDUAL * scale
    start = np.zeros(snake.n_joints) if q0 is None else np.asarray(q0, dtype=float)
    q = root(balance, start, jac=jacobian, method='hybr', options={'xtol': 1e-13}).x
    for _ in range(3):      # Newton steps polish what the trust region left
        residual = balance(q)
        if np.abs(residual).max() < tolerance:
            break
        q = q - np.linalg.solve(jacobian(q), residual)
    found = bool(np.abs(balance(q)).max() < tolerance)
    stiffness = -jacobian(q)
    return Equilibrium(q, found, bool(np.abs(q).max() <= snake.joint_limit),
                       np.linalg.eigvalsh(0.5 * (stiffness + stiffness.T)))
