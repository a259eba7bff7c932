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
The explicit model's Kelvin-Voigt damping C = beta K (docs/tendon_robot.md, "Strain-rate damping").

Its forces and torques are minus the gradient of the dissipation function written from its
definition in plain numpy (Phi is quadratic in the rates, so central differences are exact to
rounding); a rigid motion is not damped; and a free axial vibration of the bare rod decays at
beta omega^2 / 2, omega from an independent model (the clamped-free chain of the rod's node
masses and axial springs E A / l0).
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics._explicit_kernels import strain_rate_damping
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.dynamics.simulation import strain_rate_viscosity
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())


def moving_bent_rod():
    """Return the default robot 30 ms after a step to 20 N on two tendons, with noisy rates."""
    sim = TendonSimulator(DEFAULT)
    sim.set_tensions([20.0, 20.0, 0.0, 0.0])
    sim.advance(0.03)
    rod = sim._rod
    rng = np.random.default_rng(7)
    # generic rates: the simulated ones plus noise of their own size
    velocity = rod.velocity_collection + rng.normal(scale=1.0, size=rod.velocity_collection.shape)
    omega = rod.omega_collection + rng.normal(scale=100.0, size=rod.omega_collection.shape)
    return rod, velocity, omega


def damping_of(rod, velocity, omega, beta):
    forces = np.zeros_like(rod.position_collection)
    torques = np.zeros_like(rod.omega_collection)
    strain_rate_damping(rod.position_collection, rod.director_collection, velocity, omega,
                        rod.rest_lengths, rod.rest_voronoi_lengths, rod.shear_matrix,
                        rod.bend_matrix, beta, forces, torques)
    return forces, torques


def dissipation(rod, velocity, omega, beta):
    """
    Phi = beta / 2 (sum l0 sigma_t.S sigma_t + sum D0 kappa_t.B kappa_t), from the definitions.

    sigma_t is the time derivative of sigma = Q (x_(i+1) - x_i) / l0 - d3 with
    dQ/dt = -[omega]x Q (omega in the local frame); kappa_t the rate of turn of element k + 1
    relative to element k, in the frame of k + 1, over D0.
    """
    q, l0, d0 = rod.director_collection, rod.rest_lengths, rod.rest_voronoi_lengths
    b = np.einsum('abe,be->ae', q, np.diff(rod.position_collection, axis=1)) / l0
    sigma_t = (np.einsum('abe,be->ae', q, np.diff(velocity, axis=1)) / l0
               - np.cross(omega, b, axis=0))
    turn = np.einsum('abk,cbk->ack', q[:, :, 1:], q[:, :, :-1])       # Q_(k+1) Q_k.T
    kappa_t = (omega[:, 1:] - np.einsum('abk,bk->ak', turn, omega[:, :-1])) / d0
    return 0.5 * beta * (
        np.einsum('e,ae,abe,be->', l0, sigma_t, rod.shear_matrix, sigma_t)
        + np.einsum('k,ak,abk,bk->', d0, kappa_t, rod.bend_matrix, kappa_t))


def test_the_damping_is_minus_the_gradient_of_its_dissipation_function():
    rod, velocity, omega = moving_bent_rod()
    beta = strain_rate_viscosity(DEFAULT)
    forces, torques = damping_of(rod, velocity, omega, beta)
    step = 1.0          # exact for a quadratic at any step; a large one keeps rounding small
    gradient_v = np.zeros_like(velocity)
    gradient_w = np.zeros_like(omega)
    for rates, gradient in ((velocity, gradient_v), (omega, gradient_w)):
        for index in np.ndindex(rates.shape):
            saved = rates[index]
            rates[index] = saved + step
            up = dissipation(rod, velocity, omega, beta)
            rates[index] = saved - step
            down = dissipation(rod, velocity, omega, beta)
            rates[index] = saved
            gradient[index] = (up - down) / (2.0 * step)
    scale = np.abs(forces).max()
    assert scale > 0.1                                       # a real test: N-sized forces
    np.testing.assert_allclose(forces, -gradient_v, atol=1e-9 * scale)
    np.testing.assert_allclose(torques, -gradient_w, atol=1e-9 * np.abs(torques).max())
    # so the power is -2 Phi: it only ever takes energy out
    power = np.sum(forces * velocity) + np.sum(torques * omega)
    assert power == pytest.approx(-2.0 * dissipation(rod, velocity, omega, beta), rel=1e-9)


def test_a_rigid_motion_is_not_damped():
    rod, velocity, omega = moving_bent_rod()
    beta = strain_rate_viscosity(DEFAULT)
    deforming, _ = damping_of(rod, velocity, omega, beta)
    # v = V + W x r at every node, and every element turning at W (in its own frame: Q W)
    translation, turn = np.array([0.3, -1.2, 0.7]), np.array([40.0, -25.0, 60.0])
    rigid_v = translation[:, None] + np.cross(turn, rod.position_collection, axis=0)
    rigid_w = np.einsum('abe,b->ae', rod.director_collection, turn)
    forces, torques = damping_of(rod, rigid_v, rigid_w, beta)
    assert np.abs(forces).max() < 1e-9 * np.abs(deforming).max()
    assert np.abs(torques).max() < 1e-9 * np.abs(deforming).max()


def test_a_free_axial_vibration_decays_at_beta_omega_squared_over_two():
    """
    The bare rod (massless discs, no gravity, no mass-proportional damping) rings axially.

    Four equal tensions compress the straight rod at once; it rings about its compressed
    length in its axial modes, the higher ones damped faster (beta omega^2 / 2), so the first
    one is left. Its amplitude must decay at beta omega_1^2 / 2 (1.0 1/s here), omega_1 of
    the chain of the rod's node masses and springs E A / l0 (within 0.5 % of the continuum
    pi / (2 L) sqrt(E / rho)). Without the damping it would not decay at all.
    """
    robot = DEFAULT.with_changes(damping={'ratio': 0.0})
    data = robot.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    data['vertebrae']['mass'] = 0.0
    robot = robot_from_dict(data)
    sim = TendonSimulator(robot)
    rod = sim._rod
    # the chain: node masses m_1..m_n, springs k = E A / l0 between them, node 0 clamped
    k = robot.rod.youngs_modulus * robot.rod.area / rod.rest_lengths
    n = rod.n_elems
    stiffness = np.zeros((n, n))
    for e in range(n):
        stiffness[e, e] += k[e]
        if e > 0:
            stiffness[e - 1, e - 1] += k[e]
            stiffness[e - 1, e] -= k[e]
            stiffness[e, e - 1] -= k[e]
    mass = rod.mass[1:]
    omega = np.sqrt(np.linalg.eigvalsh(stiffness / np.sqrt(np.outer(mass, mass)))[0])
    continuum = np.pi / (2.0 * robot.rod.length) * np.sqrt(
        robot.rod.youngs_modulus / robot.rod.density)
    assert omega == pytest.approx(continuum, rel=5e-3)
    sim.set_tensions([1.0, 1.0, 1.0, 1.0])
    sim.advance(0.2)                                 # the higher modes die out first
    period = 2.0 * np.pi / omega
    times, tips = [], []
    while sim.time < 1.2:
        sim.advance(sim.dt * 10)
        times.append(sim.time)
        tips.append(sim._rod.position_collection[0, -1])
    times, tips = np.array(times), np.array(tips)
    # amplitude per period: half the range of the tip's axial position
    windows = np.floor((times - times[0]) / period).astype(int)
    centres, amplitudes = [], []
    for w in range(windows.max()):
        inside = windows == w
        centres.append(times[inside].mean())
        amplitudes.append(0.5 * np.ptp(tips[inside]))
    rate = -np.polyfit(centres, np.log(amplitudes), 1)[0]
    beta = strain_rate_viscosity(robot)
    assert rate == pytest.approx(beta * omega ** 2 / 2.0, rel=0.05)
