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
slipping), so a virtual change dq of the joint angles balances the work of the cables
against the change of potential energy V(q) = -sum_j m g . p_Cj:

    sum_k T_nk (-dl_nk/dq_n) = dV/dq_n,      n = 1..N,

each segment length l_nk depending on its own joint only. Both gradients are taken here by
central differences of the kinematics (no lever arms, no force balance), and the tensions
are the minimum-sum set of :func:`~tendon_robot_sim.models.tension_distribution.distribute`
within [pretension, max_tension]. Contact (34) and friction (35)-(36) limits are invisible
to virtual work: where they are inactive, the Newton-Euler minimum tensions equal these.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.robot import RollingJointSnake
from tendon_robot_sim.models.tension_distribution import distribute, Distribution

# Step of the central differences [rad]: truncation ~1e-12, round-off ~1e-11 relative.
STEP = 1e-6


def potential_energy(snake: RollingJointSnake, kinematics: SnakeKinematics, q) -> np.ndarray:
    """V (K,) [J] of the links under gravity, zero at the base."""
    centers = kinematics.state(q).centers
    return -snake.link.mass * np.einsum('knj,j->k', centers, snake.gravity)


def static_tensions(snake: RollingJointSnake, q) -> list[Distribution]:
    """
    Minimum tensions holding the snake still at joint angles q (N,), per segment.

    Returns
    -------
    list of N :class:`~tendon_robot_sim.models.tension_distribution.Distribution`
        Segment n's tensions (C,) [N] and whether the bounds allow them.

    """
    kinematics = SnakeKinematics(snake)
    q = np.asarray(q, dtype=float)
    N = snake.n_joints
    steps = np.concatenate((q + STEP * np.eye(N), q - STEP * np.eye(N)))
    energy = potential_energy(snake, kinematics, steps)
    lengths, _ = kinematics.state(steps).cable_segments()
    gravity_torque = (energy[:N] - energy[N:]) / (2 * STEP)                 # dV/dq_n
    levers = -(lengths[:N] - lengths[N:]) / (2 * STEP)                      # (n, segment, C)
    return [distribute(levers[n, n][None], [gravity_torque[n]], snake.pretension,
                       snake.max_tension) for n in range(N)]
