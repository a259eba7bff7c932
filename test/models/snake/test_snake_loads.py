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
External loads on the rolling-joint snake, checked against independent computations.

Static holding tensions under a tip load against a virtual-work linear programme written
here (finite differences of the tip's position and orientation, HiGHS), an axial pull against
the contact balance by hand, the forward dynamics against a power balance that includes the
load's power, and the equilibrium the cables hold against the Newton-Euler accelerations.
"""

import dataclasses

import numpy as np
from numpy.testing import assert_allclose
import pytest
from scipy.optimize import linprog

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.snake.dynamics import SnakeDynamics, SnakeDynamicsError
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.loads import LinkWrench
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.snake.statics import equilibrium, static_tensions

SNAKE = load_snake(share_dir() / 'config' / 'rolling_joint_snake.yaml')
DYN = SnakeDynamics(SNAKE)
N = SNAKE.n_joints
POSE = np.array([0.1, -0.15, -0.05, 0.2, 0.12, -0.1])
# A payload under the tip (world frame) and a tool reaction turning with link 4, off its axis.
PAYLOAD = LinkWrench(N, np.array([0.05, -0.1, -0.6]), np.array([0.004, 0.01, -0.002]))
TOOL = LinkWrench(4, np.array([0.2, 0.3, -0.1]), np.array([0.003, 0.0, 0.005]), 'link',
                  np.array([-0.01, 0.005, 0.008]))


def virtual_work_lp(snake, q, loads):
    """
    Minimum tensions (N, C) holding q by virtual work, each joint one HiGHS LP.

    The loads' generalised forces come from the motion of their points and links under a
    small change of each joint angle (central differences of the poses), the gravity torque
    from the potential energy, the cable levers from the segment lengths.
    """
    kinematics = SnakeKinematics(snake)
    h = 1e-6
    plus, minus = (kinematics.state(q + s * h * np.eye(N)) for s in (1.0, -1.0))
    here = kinematics.state(q)

    def potential(state):
        return -snake.link.mass * np.einsum('knj,j->k', state.centers, snake.gravity)

    generalised = (potential(plus) - potential(minus)) / (2 * h)     # dV/dq, to be supplied
    for load in loads:
        R = here.rotations[0, load.link]
        force = R @ load.force if load.frame == 'link' else load.force
        moment = R @ load.moment if load.frame == 'link' else load.moment
        for n in range(N):
            point = [s.origins[n, load.link] + s.rotations[n, load.link] @ load.point
                     for s in (plus, minus)]
            # the small rotation of the loaded link: skew part of dR R^T
            dR = (plus.rotations[n, load.link] - minus.rotations[n, load.link]) / (2 * h)
            w = dR @ R.T
            turn = np.array([w[2, 1], w[0, 2], w[1, 0]])
            generalised[n] -= force @ (point[0] - point[1]) / (2 * h) + moment @ turn
    lengths = [s.cable_segments()[0] for s in (plus, minus)]
    tensions = np.empty((N, len(snake.cables)))
    for n in range(N):
        lever = -(lengths[0][n, n] - lengths[1][n, n]) / (2 * h)
        result = linprog(np.ones(len(snake.cables)), A_eq=lever[None], b_eq=[generalised[n]],
                         bounds=(snake.pretension, snake.max_tension), method='highs')
        assert result.status == 0, n
        tensions[n] = result.x
    return tensions


@pytest.mark.parametrize('loads', [(PAYLOAD,), (PAYLOAD, TOOL)], ids=['payload', 'two loads'])
def test_static_tensions_under_loads_match_a_virtual_work_lp(loads):
    zero = np.zeros((1, N))
    reference = virtual_work_lp(SNAKE, POSE, loads)
    result = DYN.inverse([0.0], POSE[None], zero, zero, loads=loads)
    statics = static_tensions(SNAKE, POSE, loads)
    free = ~(result.active['contact'][0] | result.active['friction'][0])
    assert free.sum() >= 3, 'premise: most joints are held by the cables alone'
    unloaded = virtual_work_lp(SNAKE, POSE, ())
    assert np.abs(reference - unloaded).max() > 1.0, 'premise: the load changes the tensions'
    for n in range(N):
        # the module's virtual work (distribute) equals the LP written here
        assert_allclose(statics[n].tensions.sum(), reference[n].sum(), atol=1e-6)
        if free[n]:
            assert_allclose(result.tensions[0, n], reference[n], atol=1e-5)
        else:
            # a contact or friction limit binds, which virtual work cannot see: more tension
            assert result.tensions[0, n].sum() > reference[n].sum() + 1e-3


def test_an_axial_pull_at_the_tip_is_carried_by_the_contacts():
    """Straight, no gravity, a pull P along x: the contacts carry sum(T) - P, each at least f_c."""
    free = SnakeDynamics(dataclasses.replace(SNAKE, gravity=np.zeros(3)))
    zero = np.zeros((1, N))
    f_c, pre = SNAKE.min_contact_force, SNAKE.pretension
    for pull in (2.0, 10.0, -5.0):
        load = LinkWrench.at_tip(SNAKE, [pull, 0.0, 0.0], [0.0, 0.0, 0.0])
        result = free.inverse([0.0], zero, zero, zero, loads=[load])
        total = max(len(SNAKE.cables) * pre, pull + 2 * f_c)
        assert_allclose(result.tensions[0].sum(axis=1), total, atol=1e-9)
        assert_allclose(result.normal_forces[0], (total - pull) / 2, atol=1e-9)
        assert_allclose(result.friction_forces[0], 0.0, atol=1e-9)


def test_a_load_on_any_link_and_in_either_frame_reaches_the_joints_below_it_only():
    zero = np.zeros((1, N))
    bare = DYN.joint_torques(POSE[None], zero, zero)
    loaded = DYN.joint_torques(POSE[None], zero, zero, loads=[TOOL])
    assert_allclose(loaded[0, 4:], bare[0, 4:], atol=1e-15)        # joints 5, 6: beyond link 4
    assert np.all(np.abs(loaded[0, :4] - bare[0, :4]) > 1e-4)


def test_numba_kernels_take_the_loads_as_numpy_does():
    rng = np.random.default_rng(3)
    loads = (PAYLOAD, TOOL)
    q = rng.uniform(-1, 1, (10, N)) * SNAKE.joint_limit
    qd = rng.uniform(-2, 2, q.shape)
    T = rng.uniform(1, 20, (10, N, 4))
    reference = DYN.accelerations(q, qd, T, loads)
    kernel = np.array([DYN.acceleration(*args, loads=loads) for args in zip(q, qd, T)])
    # the same equations in another order of operations: round-off only
    assert_allclose(kernel, reference, rtol=1e-9, atol=1e-9 * np.abs(reference).max())
    qdd = 0.1 * rng.uniform(-1, 1, N)
    step = DYN.inverse_step(0.0, POSE, 0.1 * qd[0], qdd, loads=loads)
    whole = DYN.inverse([0.0], POSE[None], 0.1 * qd[:1], qdd[None], loads=loads)
    assert step.feasible
    assert_allclose(step.tensions, whole.tensions, atol=1e-9)
    assert_allclose(step.normal_forces, whole.normal_forces, atol=1e-9)


def test_power_balance_of_the_forward_dynamics_with_loads():
    """d(kinetic + gravity energy)/dt = power of the cables + power of the loads."""
    dt = 2e-4
    t = np.arange(0.0, 0.2 + dt / 2, dt)
    tensions = np.array([2.0, 4.0, 1.0, 1.5])
    loads = (PAYLOAD, TOOL)
    q, qd = (x[:, 0] for x in DYN.simulate(t, np.tile(tensions, (t.size, 1)), np.zeros(N),
                                           np.zeros(N), loads=loads))
    state = DYN.kinematics.state(q, qd)
    lengths, _ = state.cable_segments()
    cable_work = -(lengths - lengths[0]).sum(axis=1) @ tensions
    power = np.zeros(t.size)
    for load in loads:
        n = load.link - 1
        R = state.rotations[:, load.link]
        force = R @ load.force if load.frame == 'link' else np.tile(load.force, (t.size, 1))
        moment = R @ load.moment if load.frame == 'link' else np.tile(load.moment, (t.size, 1))
        point = state.origins[:, load.link] + R @ load.point
        arm = point - state.centers[:, n]
        velocity = state.center_velocity[:, n] + np.cross(state.omega[:, n], arm)
        power += (np.einsum('ki,ki->k', force, velocity)
                  + np.einsum('ki,ki->k', moment, state.omega[:, n]))
    load_work = np.concatenate(([0.0], np.cumsum((power[1:] + power[:-1]) / 2) * dt))
    energy = DYN.energy(q, qd)
    assert np.abs(load_work).max() > 1e-3 and np.abs(cable_work).max() > 1e-3, 'premise'
    # the trapezoid rule's error over 0.2 s at 0.2 ms (second order) is below 1e-6 J here
    assert_allclose(energy - energy[0], cable_work + load_work, atol=2e-6)
    # a force of fixed direction is conservative: its work is F . (displacement of its point)
    weight = LinkWrench(N, PAYLOAD.force, np.zeros(3))
    q, qd = (x[:, 0] for x in DYN.simulate(t, np.tile(tensions, (t.size, 1)), np.zeros(N),
                                           np.zeros(N), loads=(weight,)))
    state = DYN.kinematics.state(q)
    work = (state.tip_position - state.tip_position[0]) @ weight.force
    lengths, _ = state.cable_segments()
    cable_work = -(lengths - lengths[0]).sum(axis=1) @ tensions
    energy = DYN.energy(q, qd)
    # RK4's error at 0.2 ms (fourth order) is far below this
    assert_allclose(energy - energy[0], cable_work + work, atol=1e-9)


def test_the_pose_cables_hold_is_at_rest_in_the_newton_euler_dynamics():
    for tensions, loads in (([1.5, 3.5, 1.0, 1.0], ()), ([1.5, 3.5, 1.0, 1.0], (PAYLOAD,)),
                            ([1.0, 6.0, 2.0, 1.0], (PAYLOAD, TOOL))):
        rest = equilibrium(SNAKE, tensions, loads)
        assert rest.stable
        segments = np.broadcast_to(tensions, (1, N, 4))
        acc = DYN.accelerations(rest.q[None], np.zeros((1, N)), segments, loads)
        # the equilibrium's residual (1e-9 N m) over link inertias of ~1e-5 kg m^2
        assert np.abs(acc).max() < 1e-3
        bare = DYN.accelerations(rest.q[None], np.zeros((1, N)), segments)
        assert not loads or np.abs(bare).max() > 1.0, 'premise: the load matters'


def test_bad_loads_are_refused_naming_the_field():
    zero = np.zeros((1, N))
    for load, text in (
            (LinkWrench(0, np.zeros(3), np.zeros(3)), 'link: must be a link number 1 to 6'),
            (LinkWrench(N, np.array([0.0, np.nan, 0.0]), np.zeros(3)), 'force: must be 3 finite'),
            (LinkWrench(N, np.zeros(3), np.zeros(3), 'tool'), 'frame: must be one of'),
            (LinkWrench(N, np.array([0.0, 0.0, -1e4]), np.zeros(3)),
             r'force: 1e\+04 N is more than the 4 cables can hold together'),
            (LinkWrench(N, np.zeros(3), np.array([50.0, 0.0, 0.0])), 'moment: 50 N m')):
        with pytest.raises(SnakeDynamicsError, match=f'^loads: {text}'):
            DYN.inverse([0.0], zero, zero, zero, loads=[load])
