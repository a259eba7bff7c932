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
The path-dependent statics driven by displacements (issue 41): its length model and its loop.

* The compiled length errors against the plain-numpy formula (the pieces' tensions of
  :func:`stick_slip`, d / (1 + C T_0) + sum (l_k - l_(k-1)) / (1 + C T_k)), their Jacobian
  against central differences of it.
* The complementarity step against cases solved by hand.
* The pieces' and motors' tensions solved together reach the state the tensions reach, as the
  loop around whole tension-driven solves (the fallback) does.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.rod.tendons.capstan import stick_slip, wrap_angles
from tendon_robot_sim.models.rod.tendons.piece_lengths import (complementary_kernel,
                                                               complementary_step,
                                                               length_errors)
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file()).to_dict()


def friction_robot(mu: float = 0.2, **tendon):
    return robot_from_dict({**DEFAULT, 'tendons': [
        {**t, 'friction': {'law': 'sliding', 'coefficient': mu}, **tendon}
        for t in DEFAULT['tendons']]})


def numpy_errors(statics, motors, theta, T_ref, l_ref, B, available):
    """Length errors [m] by the formula in plain numpy: the pieces' tensions, then lengths."""
    first = statics._first
    tensions = np.concatenate([
        stick_slip(statics._tensions[first[i]:first[i + 1]], motors[i],
                   theta[first[i]:first[i + 1]], statics.mu[i]) for i in range(len(motors))])
    lengths = l_ref + B @ (tensions - T_ref)
    F = []
    for i, tendon in enumerate(statics.robot.tendons):
        p = slice(first[i], first[i + 1])
        C, d = tendon.compliance, tendon.motor_distance
        F.append(d / (1 + C * motors[i]) + np.sum(np.diff(lengths[p], prepend=0.0)
                                                  / (1 + C * tensions[p])) - available[i])
    return np.array(F)


def test_the_compiled_length_errors_follow_the_formula_and_their_jacobian():
    # a stretching tendon (compliance, motor distance) with stuck and sliding pieces: pulled
    # to 3 N and released to 2 N; the length model a made-up B about the last shape
    statics = StickSlipStatics(friction_robot(compliance=2e-3, motor_distance=0.3), 'discrete')
    for tensions in ([3.0, 1.0, 0.0, 0.0], [2.0, 1.5, 0.0, 0.0]):
        statics.solve_tensions(tensions)
    pieces = statics._tensions.size
    T_ref, l_ref, theta = statics._tensions.copy(), statics._ell_ref, statics._theta_ref
    B = np.random.default_rng(4).normal(scale=1e-3, size=(pieces, pieces))
    available = np.array([0.55, 0.56, 0.57, 0.58])

    def compiled(motors):
        out = np.empty(pieces), np.empty(pieces), np.empty(4), np.empty((4, 4))
        length_errors(statics._tensions, motors, theta, statics.mu, statics._first_array,
                      T_ref, l_ref, B, statics._compliance, statics._motor, available, *out)
        return out

    # motors away from the stored ones (1.5 N, 0 N): no piece on a cone's edge, where the
    # slope is the rising side's and central differences would straddle the kink
    for motors in ([2.4, 1.6, 0.3, 0.2], [1.7, 1.4, 0.1, 0.4]):
        motors = np.array(motors)
        tensions, slopes, F, J = compiled(motors)
        expected = numpy_errors(statics, motors, theta, T_ref, l_ref, B, available)
        assert np.allclose(F, expected, rtol=0.0, atol=1e-13)
        # dF/dT_0 (the angles held) by central differences: 1e-7 N is far from any kink
        h = 1e-7
        for j in range(4):
            up, down = motors.copy(), motors.copy()
            up[j] += h
            down[j] -= h
            fd = (compiled(up)[2] - compiled(down)[2]) / (2 * h)
            assert np.allclose(J[:, j], fd, rtol=1e-6, atol=1e-9), j
        assert np.any(slopes == 0.0) and np.any(slopes > 0.0)      # stuck and sliding pieces


@pytest.mark.parametrize('model', ['discrete', 'cosserat'])
def test_the_compiled_wrap_angles_are_those_of_the_built_tendon_paths(model):
    # path_turns reads the pieces' ends off the solver's trajectory; wrap_angles (numpy) takes
    # them from the tendon paths of the built result: the base hole, then each piece's end
    statics = StickSlipStatics(friction_robot(), model)
    statics.solve_tensions([3.0, 1.0, 0.5, 0.0])
    build, theta, _ = statics._shape(statics._tensions)
    paths, first = build().tendon_paths, statics._first
    expected = np.concatenate([
        wrap_angles(np.column_stack([paths[first[i]][:, 0]]
                                    + [paths[k][:, -1] for k in range(first[i], first[i + 1])]),
                    statics.robot.base.direction)
        for i in range(len(statics.robot.tendons))])
    assert np.any(expected > 1e-3)      # the bent rod turns the tendons
    assert np.allclose(theta, expected, rtol=0.0, atol=1e-12)   # round-off of one formula


def test_the_complementarity_step_solves_small_cases_by_hand():
    J = -np.array([[1.0, 0.5], [0.5, 1.0]])    # dF/dT: pulling a tendon shortens both paths
    # one tendon too short, the other slack by far: only the first is pulled, by F / 1
    assert np.allclose(complementary_step(np.zeros(2), np.array([1.0, -3.0]), J, 1e-9),
                       [1.0, 0.0])
    # both taut, the first 1 m too long: with both taut it would need -1/3 N, so it goes
    # slack (T_0 = 0, predicted error -0.25 m) and the second takes 0.5 N more
    assert np.allclose(complementary_step(np.ones(2), np.array([-1.0, 0.0]), J, 1e-9),
                       [0.0, 1.5])
    # no set meets it: a tendon that pulling lengthens
    assert complementary_step(np.zeros(1), np.array([1.0]), np.array([[1.0]]), 1e-9) is None


def compiled_step(motor, F, J):
    """Return the compiled complementarity step, None where it finds no set."""
    out = np.empty(motor.size)
    return out if complementary_kernel(motor, F, J, 1e-9, out) else None


def test_the_compiled_complementarity_step_is_the_numpy_one():
    # the cases by hand, then random ones: tendons slack and taut, too short and too long,
    # couplings of either sign (some sets singular or meeting nothing: both then give None)
    cases = [(np.zeros(2), np.array([1.0, -3.0]), -np.array([[1.0, 0.5], [0.5, 1.0]])),
             (np.ones(2), np.array([-1.0, 0.0]), -np.array([[1.0, 0.5], [0.5, 1.0]])),
             (np.zeros(1), np.array([1.0]), np.array([[1.0]]))]
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 4, 5, 7):
        for _ in range(60):
            motor = np.where(rng.random(n) < 0.4, 0.0, rng.random(n) * 3.0)
            J = -np.eye(n) * rng.uniform(0.5, 2.0, n) + rng.normal(scale=0.4, size=(n, n))
            cases.append((motor, rng.normal(size=n), J))
    found = 0
    for motor, F, J in cases:
        expected, got = complementary_step(motor, F, J, 1e-9), compiled_step(motor, F, J)
        assert (expected is None) == (got is None), (motor, F, J)
        if expected is not None:
            found += 1
            assert np.allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert 0 < found < len(cases)


Q = [(0.002, 0.0, -0.002, 0.0), (0.004, 0.0, -0.004, 0.0), (0.006, 0.0, -0.006, 0.0),
     (0.005, 0.0, -0.006, 0.0), (0.0035, 0.0, -0.006, 0.0), (0.001, 0.0, -0.006, 0.0)]


@pytest.fixture(scope='module')
def released():
    """Solve a pull of t0 by displacement and its release (stuck pieces) both ways."""
    joint = StickSlipStatics(friction_robot(), 'discrete')
    fallback = StickSlipStatics(friction_robot(), 'discrete')

    def refuse(available):
        raise ConvergenceError('the test takes the fallback', 0.0, 0)

    fallback._joint_displacements = refuse
    return [(joint.solve_displacements(row), fallback.solve_displacements(row)) for row in Q]


@pytest.mark.parametrize('loop, length_tolerance', [(0, 1e-8), (1, 1e-6)])
def test_each_loop_reaches_the_state_its_tensions_reach(released, loop, length_tolerance):
    """Check that each state is the equilibrium of its motor tensions, at its lengths."""
    by_tension = StickSlipStatics(friction_robot(), 'discrete')
    for row, results in zip(Q, released):
        state = results[loop]
        again = by_tension.solve_tensions(state.tensions)
        # the shape of the tensions (the fixed point's 1e-8 of the largest tension)
        assert np.linalg.norm(state.tip_position - again.tip_position) < 1e-7
        assert np.allclose(state.tip_tensions, again.tip_tensions, rtol=1e-6, atol=1e-7)
        # the taut tendon's displacement, to the loop's tolerance (the joint loop: 1e-8 m,
        # the loop around tension-driven solves: 1e-6 m); the slack ones are no shorter
        assert abs(again.tendon_displacements[0] - row[0]) < length_tolerance * 1.01
        assert np.all(again.tendon_displacements[1:] >= np.array(row[1:]) - length_tolerance)
    assert released[3][loop].tensions[0] < released[2][loop].tensions[0]   # less tension


def test_the_loops_agree_to_the_fallbacks_tolerance(released):
    # its micrometre of tendon moves the released robot's tip by up to about 5 um here
    for ours, theirs in released:
        assert np.linalg.norm(ours.tip_position - theirs.tip_position) < 2e-5
