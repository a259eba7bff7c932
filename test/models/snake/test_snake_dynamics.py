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
Rolling-joint snake dynamics.

Tested: minimum tensions against HiGHS, the balance of every link, the paper's figure 2,
virtual-work statics, and forward dynamics (round trip, energy).
"""

import dataclasses

import numpy as np
from numpy.testing import assert_allclose
import pytest
from scipy.optimize import linprog

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.snake import _kernels as _snake_kernels
from tendon_robot_sim.models.snake.dynamics import (FEASIBILITY_TOLERANCE, SnakeDynamics,
                                                    SnakeDynamicsError, study_trajectory)
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.snake.statics import static_tensions

SNAKE = load_snake(share_dir() / 'config' / 'rolling_joint_snake.yaml')
DYN = SnakeDynamics(SNAKE)
RNG = np.random.default_rng(7)


@pytest.fixture(scope='module')
def study():
    """Return the paper's three simulations (5 ms steps, 12.6 s)."""
    return {which: (study_trajectory(SNAKE, which),
                    DYN.inverse(*study_trajectory(SNAKE, which)))
            for which in ('pan', 'tilt', 'both')}


# ------------------------------------------------------------------ the LP of (37)


def random_problems(dynamics, K):
    """Return LPs of the form of (37) with random contact wrenches and cable directions."""
    C = len(dynamics.snake.cables)
    s0 = RNG.normal(0, 2, (K, 3))
    s0[:, 0] = RNG.uniform(-2, 6, K)
    sg = RNG.normal(0, 0.3, (K, 3, C))
    sg[:, 0] = -RNG.uniform(0.5, 1.0, (K, C))          # cables press the links together
    m0 = RNG.normal(0, 0.03, (K, 3))
    mg = RNG.normal(0, 0.01, (K, 3, C))
    G, h = dynamics.inequality_rows(s0, sg, m0, mg, dynamics.snake.link.contact_offset)
    return mg[:, 2], m0[:, 2], G, h


@pytest.mark.parametrize('cables', [4, 3])
def test_vertex_lp_matches_highs(cables):
    snake = dataclasses.replace(SNAKE, cables=SNAKE.cables[:cables])
    dynamics = SnakeDynamics(snake)
    a, b, G, h = random_problems(dynamics, 300)
    guesses = np.array([tuple(range(8, 8 + cables - 1))])
    T, _ = dynamics.solve_lp(a, b, G, h, guesses)
    solved = 0
    for k in range(len(b)):
        ref = linprog(np.ones(cables), A_ub=G[k], b_ub=h[k], A_eq=a[k][None], b_eq=[b[k]],
                      bounds=(None, None), method='highs')
        assert (ref.status == 0) == (not np.isnan(T[k, 0])), k
        if cables == 4:         # the one-step kernel's LP
            T_kernel, ok = _snake_kernels._vertex_lp(a[k], b[k], G[k], h[k], dynamics.vertices,
                                                     FEASIBILITY_TOLERANCE)
            assert ok == (ref.status == 0), k
        if ref.status == 0:
            solved += 1
            # same optimum (the optimal tensions may tie), and T is feasible
            assert T[k].sum() == pytest.approx(ref.fun, abs=1e-7)
            assert np.all(G[k] @ T[k] <= h[k] + 1e-7 * (1 + np.abs(h[k])))
            assert a[k] @ T[k] == pytest.approx(b[k], abs=1e-9)
            if cables == 4:
                assert T_kernel.sum() == pytest.approx(ref.fun, abs=1e-7)
    assert 30 < solved < 300         # both outcomes occur


# ------------------------------------------------------------------ Newton-Euler


def contact_forces(result, s):
    """World contact forces (K, N, 2, 3) on link n at c1, c2, and the points (K, N, 2, 3)."""
    ex, ez = s.normals, s.axes
    ey = np.cross(ez, ex)
    N, f = result.normal_forces, result.friction_forces
    forces = (N[..., None] * ex[:, :, None] + f[..., 0, None] * ey[:, :, None]
              + f[..., 1, None] * ez[:, :, None])
    w = SNAKE.link.contact_offset
    points = s.contacts[:, :, None] + np.array([1.0, -1.0])[None, None, :, None] * w * \
        ez[:, :, None]
    return forces, points


def test_every_link_is_in_balance(study):
    """Newton's and Euler's equations (24)-(30) of each link, summed here force by force."""
    (t, q, qd, qdd), result = study['both']
    s = DYN.kinematics.state(q, qd, qdd)
    m, g = SNAKE.link.mass, SNAKE.gravity
    forces, points = contact_forces(result, s)
    _, e = s.cable_segments()
    pull = result.tensions[..., None] * e                       # on link n, at its holes
    N = SNAKE.n_joints
    for n in range(N):
        F = m * g + forces[:, n].sum(1) + pull[:, n].sum(1)
        M = (np.cross(points[:, n] - s.centers[:, n, None], forces[:, n]).sum(1)
             + np.cross(s.proximal_holes[:, n] - s.centers[:, n, None], pull[:, n]).sum(1))
        if n + 1 < N:       # reactions of link n+1 and of segment n+1, at link n's holes
            F -= forces[:, n + 1].sum(1) + pull[:, n + 1].sum(1)
            M -= (np.cross(points[:, n + 1] - s.centers[:, n, None], forces[:, n + 1]).sum(1)
                  + np.cross(s.distal_holes[:, n + 1] - s.centers[:, n, None],
                             pull[:, n + 1]).sum(1))
        R = s.rotations[:, n + 1]
        inertia = R @ np.diag(SNAKE.link.inertia) @ np.swapaxes(R, 1, 2)
        w, wd = s.omega[:, n], s.omega_dot[:, n]
        assert_allclose(F, m * s.center_acceleration[:, n], atol=1e-10)
        assert_allclose(M, np.einsum('kij,kj->ki', inertia, wd)
                        + np.cross(w, np.einsum('kij,kj->ki', inertia, w)), atol=1e-12)


def test_tensions_and_contacts_keep_the_constraints(study):
    mu = SNAKE.friction_coefficient
    for _, result in study.values():
        assert result.feasible
        T, N, f = result.tensions, result.normal_forces, result.friction_forces
        assert T.min() >= SNAKE.pretension - 1e-9 and T.max() <= SNAKE.max_tension
        assert N.min() >= SNAKE.min_contact_force - 1e-9                         # (34)
        assert np.all(np.abs(f) <= mu * N[..., None] + 1e-9)                      # (35), (36)
        assert result.active['pretension'].any()


def test_figure_2_of_the_paper(study):
    pan, tilt, both = (study[w][1].base_tensions for w in ('pan', 'tilt', 'both'))
    # pan only: cable 2, the one holding the weight, carries the largest tension throughout
    assert np.all(pan.argmax(axis=1) == 1)
    # tilt only: cables 1 and 3 are equal
    assert_allclose(tilt[:, 0], tilt[:, 2], atol=1e-9)
    # both: the peak of cable 2 is higher than in the tilt-only motion (D'Antuono et al.: by
    # almost 43 %)
    assert both[:, 1].max() > 1.05 * tilt[:, 1].max()


@pytest.mark.parametrize('q', [[0.1, -0.15, -0.05, 0.2, 0.12, -0.1],
                               [0.3, -0.8, -0.2, -0.8, 0.2, -0.8],
                               [0.0] * 6])
def test_virtual_work_statics_gives_the_same_tensions(q):
    zero = np.zeros((1, SNAKE.n_joints))
    result = DYN.inverse([0.0], np.array([q]), zero, zero)
    free = ~(result.active['contact'][0] | result.active['friction'][0])
    assert free.sum() >= 4
    for n, statics in enumerate(static_tensions(SNAKE, q)):
        assert statics.feasible
        if free[n]:
            assert_allclose(result.tensions[0, n], statics.tensions, atol=1e-6)
        else:
            # where a contact limit binds, virtual work (which cannot see it) needs less
            assert result.tensions[0, n].sum() > statics.tensions.sum() + 1e-3


def test_one_step_kernel_matches_the_trajectory_solver(study):
    for which in ('pan', 'both'):
        (t, q, qd, qdd), result = study[which]
        for k in range(0, t.size, 97):
            step = DYN.inverse_step(t[k], q[k], qd[k], qdd[k])
            assert step.feasible
            assert_allclose(step.tensions[0], result.tensions[k], atol=1e-9)
            assert_allclose(step.normal_forces[0], result.normal_forces[k], atol=1e-9)
            assert_allclose(step.friction_forces[0], result.friction_forces[k], atol=1e-9)
            for group in result.active:
                assert np.array_equal(step.active[group][0], result.active[group][k]), group


def test_infeasible_steps_are_reported_with_time_and_constraint():
    slippery = SnakeDynamics(dataclasses.replace(SNAKE, friction_coefficient=0.01,
                                                 max_tension=10.0))
    t, q, qd, qdd = study_trajectory(SNAKE, 'tilt', duration=1.0, dt=0.1)
    result = slippery.inverse(t, q, qd, qdd)
    assert not result.feasible
    assert {p.constraint for p in result.infeasible} == {'friction'}
    assert [p.time for p in result.infeasible] == sorted(p.time for p in result.infeasible)
    assert 'friction constraint broken' in str(result.infeasible[0])
    one = slippery.inverse_step(t[3], q[3], qd[3], qdd[3])
    assert [(p.time, p.constraint) for p in one.infeasible] == [
        (p.time, p.constraint) for p in result.infeasible if p.time == t[3]]


def test_joint_beyond_the_rolling_surface_is_an_error():
    q = np.full((1, SNAKE.n_joints), 0.0)
    q[0, 3] = SNAKE.joint_limit + 0.01
    with pytest.raises(SnakeDynamicsError, match='joint 4 reaches'):
        DYN.inverse([0.0], q, q * 0, q * 0)


@pytest.mark.parametrize('field', ['q', 'qd', 'qdd'])
def test_a_non_finite_joint_vector_is_refused_naming_it(field):
    """The API refuses NaN and infinity itself, rather than returning NaN tensions."""
    vectors = {name: np.zeros(SNAKE.n_joints) for name in ('q', 'qd', 'qdd')}
    vectors[field][2] = np.nan
    with pytest.raises(SnakeDynamicsError,
                       match=fr'^{field}: must be finite, got nan at index \(2,\)'):
        DYN.inverse_step(0.0, vectors['q'], vectors['qd'], vectors['qdd'])
    vectors[field][2] = np.inf
    with pytest.raises(SnakeDynamicsError, match=f'^{field}: must be finite, got inf'):
        DYN.inverse([0.0], *(v[None] for v in vectors.values()))
    with pytest.raises(SnakeDynamicsError, match='tensions: must be finite'):
        DYN.simulate([0.0, 0.01], np.full((2, len(SNAKE.cables)), np.nan),
                     np.zeros(SNAKE.n_joints), np.zeros(SNAKE.n_joints))


# ------------------------------------------------------------------ forward dynamics


def test_forward_dynamics_inverts_the_inverse(study):
    (t, q, qd, qdd), result = study['both']
    acc = DYN.accelerations(q[::50], qd[::50], result.tensions[::50])
    assert_allclose(acc, qdd[::50], atol=1e-9)


def test_numba_kernel_matches_numpy():
    q = RNG.uniform(-1, 1, (20, SNAKE.n_joints)) * SNAKE.joint_limit
    qd = RNG.uniform(-2, 2, q.shape)
    T = RNG.uniform(1, 20, (20, SNAKE.n_joints, 4))
    reference = DYN.accelerations(q, qd, T)
    kernel = np.array([DYN.acceleration(*args) for args in zip(q, qd, T)])
    # the same equations in a different order of operations: round-off only
    assert_allclose(kernel, reference, rtol=1e-9, atol=1e-9 * np.abs(reference).max())


@pytest.mark.parametrize('which', ['pan', 'tilt', 'both'])
def test_feeding_the_tensions_back_reproduces_the_trajectory(study, which):
    (t, q, qd, qdd), result = study[which]
    q_sim, _ = DYN.simulate(t, result.tensions, q[0], qd[0])
    assert t[-1] >= 12.6 - 1e-9
    assert np.abs(q_sim[:, 0] - q).max() < 1e-3


def test_contact_check_of_a_simulated_motion(study):
    """Given tensions: the contact forces of the simulated motion, and what they break."""
    (t, q, qd, qdd), result = study['both']
    q_sim, qd_sim = (x[:, 0] for x in DYN.simulate(t, result.tensions, q[0], qd[0]))
    qdd_sim = DYN.accelerations(q_sim, qd_sim, result.tensions)
    check = DYN.inverse(t, q_sim, qd_sim, qdd_sim, tensions=result.tensions)
    assert check.feasible
    assert_allclose(check.normal_forces, result.normal_forces, atol=1e-4)
    # pretension alone cannot hold the straight snake: it falls, and the contacts open
    slack = np.full((t[:40].size, SNAKE.n_joints, 4), SNAKE.pretension)
    q_sag, qd_sag = (x[:, 0] for x in DYN.simulate(t[:40], slack, q[0], qd[0]))
    sag = DYN.inverse(t[:40], q_sag, qd_sag, DYN.accelerations(q_sag, qd_sag, slack),
                      tensions=slack)
    assert not sag.feasible
    assert sag.infeasible[0].constraint == 'contact' and sag.infeasible[0].joint == 1


def test_energy_is_conserved_without_gravity_and_input():
    free = SnakeDynamics(dataclasses.replace(SNAKE, gravity=np.zeros(3)))
    t = np.arange(0.0, 2.0 + 1e-9, 0.002)
    q0 = RNG.uniform(-0.5, 0.5, (2, SNAKE.n_joints))
    qd0 = RNG.uniform(-2, 2, (2, SNAKE.n_joints))
    q, qd = free.simulate(t, np.zeros((t.size, 4)), q0, qd0)
    for b in range(2):
        energy = free.energy(q[:, b], qd[:, b])
        drift_per_second = np.abs(energy - energy[0]).max() / energy[0] / t[-1]
        assert drift_per_second < 1e-6
        assert np.ptp(q[:, b]) > 0.1       # it did move


def test_energy_balance_with_gravity_and_constant_tensions():
    """Gravity is in the energy; constant whole-cable tensions do work -T dl."""
    t = np.arange(0.0, 0.5 + 1e-9, 0.001)
    tensions = np.array([2.0, 4.0, 1.0, 1.5])      # unbalanced: the snake whips about
    q0, qd0 = np.zeros(SNAKE.n_joints), np.zeros(SNAKE.n_joints)
    # RK4 at 0.25 ms: its error (1e-9 J here, 4th order) stays below the tolerance
    q, qd = DYN.simulate(t, np.tile(tensions, (t.size, 1)), q0, qd0, substeps=4)
    lengths, _ = DYN.kinematics.state(q[:, 0]).cable_segments()
    cable_work = -(lengths - lengths[0]).sum(axis=1) @ tensions
    energy = DYN.energy(q[:, 0], qd[:, 0])
    assert_allclose(energy - energy[0], cable_work, atol=1e-8)
    assert np.abs(cable_work).max() > 1e-3
