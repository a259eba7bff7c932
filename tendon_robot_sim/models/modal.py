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
Small bending vibrations of the robot about its rest shape under gravity.

An independent (not PyElastica) model of the planar elastica: a Hencky bar chain of
N rigid links of length h = L / N joined by rotational springs E I / h (2 E I / h at
the clamp, whose curvature domain is h / 2). Link i makes the angle theta_i with the
base direction in the plane of that direction and gravity; node k (the end of link k)
is at p_k = sum_{i <= k} h (cos theta_i, sin theta_i). The rod's mass rho A h is
lumped at the link ends, each vertebra's mass at its node, and the rotary inertia of
a thin disc about a diameter, J = m (3 r^2 + t^2) / 12, turns with the mean angle of
the two links at its node (the tip disc with the last link); each link also carries
the rod's own rotary inertia rho I h.

Potential V = sum k_i (theta_i - theta_(i-1))^2 / 2 - sum_k m_k g . p_k and kinetic
energy T = theta_dot.T M(theta) theta_dot / 2 with
M_ij = h^2 cos(theta_i - theta_j) sum_(k >= max(i, j)) m_k (+ the rotary inertias).
The rest shape solves grad V = 0 (Newton's method); the natural frequencies solve
Hess V phi = omega^2 M phi at it (``scipy.linalg.eigh``). With gravity across the rod
the sag stiffens it: the default robot's first mode is about 5 % faster than on a
straight beam. Shear and extension are ignored (below 0.1 % for this slender rod).

Tests compare the simulator's free vibration with it, and
:func:`mass_proportional_damping` uses its first frequency to turn a damping ratio
into the rate of the simulator's mass-proportional damper.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import Robot

# Links of the chain: the first two frequencies converge to about 1e-5 relative.
LINKS = 200


def bending_frequencies(robot: Robot, count: int = 2) -> np.ndarray:
    """
    Return the ``count`` lowest in-plane bending natural frequencies omega [rad/s].

    Small vibrations about the rest shape under ``robot.gravity`` (no tendon
    tension, no tip load), in the plane of the base direction and gravity (any
    plane when gravity is along the rod or zero: the rod is round).
    """
    rod = robot.rod
    n, h = LINKS, rod.length / LINKS
    # gravity in (axial, up) coordinates of the bending plane
    axial = float(robot.gravity @ robot.base.direction)
    across = float(np.linalg.norm(robot.gravity - axial * robot.base.direction))
    g = np.array([axial, -across])
    # node masses (node k ends link k) and their outboard sums
    mass = np.full(n, rod.linear_density * h)
    mass[-1] *= 0.5
    nodes = np.clip(np.rint(robot.vertebra_positions / h).astype(int) - 1, 0, n - 1)
    np.add.at(mass, nodes, robot.vertebra_mass)
    outboard = np.cumsum(mass[::-1])[::-1]
    spring = np.full(n, rod.bending_stiffness / h)
    spring[0] *= 2.0
    stiffness = np.diag(spring + np.append(spring[1:], 0.0)) \
        - np.diag(spring[1:], 1) - np.diag(spring[1:], -1)

    def gradient_hessian(theta, load=1.0):
        # d/dtheta_i of -sum_k m_k g . p_k = -h M_i g . (-sin, cos), gravity times load
        sin, cos = np.sin(theta), np.cos(theta)
        gradient = stiffness @ theta - load * h * outboard * (-g[0] * sin + g[1] * cos)
        hessian = stiffness + np.diag(load * h * outboard * (g[0] * cos + g[1] * sin))
        return gradient, hessian

    # Newton from the straight rod; a heavy or soft rod that sags far is reached by raising
    # gravity in steps from the rest shape of the step before.
    theta = _rest_shape(gradient_hessian, np.zeros(n), 1.0)
    for load in (np.linspace(0.05, 1.0, 20) if theta is None else ()):
        theta = _rest_shape(gradient_hessian, np.zeros(n) if theta is None else theta, load)
        if theta is None:
            raise RobotDescriptionError(
                'rod.damping.ratio: the damping comes from the first bending mode about the '
                'rest shape under gravity, and no rest shape was found (the rod does not hold '
                'its own weight); give rod.damping.rate [1/s] instead')
    _, hessian = gradient_hessian(theta)

    inertia = h * h * np.cos(theta[:, None] - theta[None, :]) \
        * outboard[np.maximum.outer(np.arange(n), np.arange(n))]
    inertia += np.eye(n) * rod.density * rod.second_moment * h
    disc = robot.disc_inertia[0]
    for k in nodes:
        links = [k, k + 1] if k + 1 < n else [k]
        for i in links:
            for j in links:
                inertia[i, j] += disc / len(links) ** 2
    from scipy.linalg import eigh   # here: scipy takes 0.25 s to import, most robots need none
    omega2 = eigh(hessian, inertia, eigvals_only=True, subset_by_index=(0, count - 1))
    if not omega2[0] > 0.0:
        raise RobotDescriptionError(
            'rod.damping.ratio: the damping comes from the first bending mode about the rest '
            'shape under gravity, and that shape is unstable (the rod buckles under its own '
            'weight): no mode to damp; give rod.damping.rate [1/s] instead')
    return np.sqrt(omega2)


def _rest_shape(gradient_hessian, theta: np.ndarray, load: float) -> np.ndarray | None:
    """Newton's method on grad V = 0 from ``theta`` under ``load`` x gravity; None: no root."""
    from scipy.linalg import LinAlgError, solve
    theta = theta.copy()
    for _ in range(50):
        gradient, hessian = gradient_hessian(theta, load)
        try:
            step = solve(hessian, -gradient, assume_a='sym')
        except (LinAlgError, ValueError):    # singular, or not finite
            return None
        theta += step
        if np.abs(step).max() < 1e-13:
            return theta
    return None


def mass_proportional_damping(robot: Robot) -> float:
    """
    Rate c [1/s] of the damper that damps every velocity as dv/dt = -c v.

    Mass-proportional (Rayleigh) damping gives mode i the damping ratio
    zeta_i = c / (2 omega_i), so ``rod.damping: {ratio: zeta}`` is
    c = 2 zeta omega_1 with omega_1 from :func:`bending_frequencies`, and
    ``{rate: c}`` is c itself; the Kelvin-Voigt form has no mass-proportional part (0).
    """
    damping = robot.rod.damping
    if damping.kelvin_voigt:
        return 0.0          # material damping instead (implicit dynamics)
    if damping.rate is not None:
        return damping.rate
    return 2.0 * damping.ratio * float(bending_frequencies(robot, 1)[0])
