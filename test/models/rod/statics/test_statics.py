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
Statics solver (tendon_robot_sim.models.rod.statics.solver): closed forms, invariants, inputs.

The fast (numba) path against the independent scipy reference is in
test_statics_reference.py, against the dynamic simulator in ../test_statics_simulator.py.
"""

import math
import re

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.cosserat import (ConvergenceError, StaticsInputError,
                                              stiffness_matrices)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())


def make_robot(gravity=(0.0, 0.0, -9.80665), mass=0.002, count=10, tendons=None, **rod):
    data = DEFAULT.to_dict()
    data['gravity'] = list(gravity)
    data['vertebrae'] = {'count': count, 'first': 0.25 / count, 'last': 0.25, 'mass': mass}
    if tendons is not None:
        data['tendons'] = tendons
    data['rod'].update(rod)
    return robot_from_dict(data)


def single_tendon_robot():
    return make_robot(gravity=(0.0, 0.0, 0.0), mass=0.0,
                      tendons=[{'name': 'a', 'offset': 0.015, 'angle_deg': 0.0}])


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize('model, law', [('cosserat', 'linear'), ('cosserat', 'pyelastica'),
                                        ('kirchhoff', 'linear')])
def test_single_tendon_gives_the_exact_circular_arc(model, law):
    """
    One parallel tendon, no gravity: the rod bends into an exact circular arc.

    Every cross-section carries the same wrench, compression -T d3 and bending moment T r d2 (cut
    the robot anywhere: the tendon's pull T at offset r balances the backbone), so curvature and
    strain are uniform: an exact arc of curvature kappa = u2 per unit reference length and stretch
    v3.

    linear: kappa = T r / (E I), v3 = 1 - T / (E A); pyelastica: n3 = E A (v3 - 1) / v3
    = -T gives v3 = E A / (E A + T), m2 = E I kappa / v3^3 = T r; kirchhoff: v3 = 1.

    Shear plays no part (no shear force), so the arc is exact for every model; the test measures
    the RK4 error of the rotations at a half-circle bend.
    """
    robot = single_tendon_robot()
    T, r = 10.0, 0.015
    EA = robot.rod.youngs_modulus * robot.rod.area
    EI = robot.rod.bending_stiffness
    if model == 'kirchhoff':
        v3 = 1.0
    elif law == 'linear':
        v3 = 1.0 - T / EA
    else:
        v3 = EA / (EA + T)
    kappa = T * r / EI * (v3 ** 3 if law == 'pyelastica' else 1.0)
    L = robot.rod.length
    assert kappa * L > 3.0  # a real bend: about half a circle
    d1, d3 = robot.base.normal, robot.base.direction   # bends towards the tendon, d1
    expected = robot.base.position + v3 * (math.sin(kappa * L) / kappa * d3
                                           + (1.0 - math.cos(kappa * L)) / kappa * d1)
    result = StaticsSolver(robot, model, constitutive=law).solve_tensions([T])
    np.testing.assert_allclose(result.tip_position, expected, rtol=0, atol=1e-6)
    # the tip frame is turned by kappa L about d2
    d3_tip = math.cos(kappa * L) * d3 + math.sin(kappa * L) * d1
    np.testing.assert_allclose(result.tip_rotation[:, 2], d3_tip, atol=1e-6)
    # the tendon runs on the inside of the arc, r closer to its centre: its length per unit
    # reference length is |pb| = |u x r + v| = v3 - kappa r
    np.testing.assert_allclose(result.tendon_lengths, [(v3 - kappa * r) * L], rtol=1e-9)
    np.testing.assert_allclose(result.tendon_displacements, [L - (v3 - kappa * r) * L],
                               rtol=1e-9)


def test_stiffness_matrices_use_pyelastica_shear_coefficient():
    Kse, Kbt = stiffness_matrices(DEFAULT.rod)
    rod = DEFAULT.rod
    np.testing.assert_allclose(Kse, [27 / 28 * rod.shear_modulus * rod.area] * 2
                               + [rod.youngs_modulus * rod.area])
    np.testing.assert_allclose(Kbt, [rod.bending_stiffness] * 2
                               + [rod.shear_modulus * rod.polar_moment])


# --------------------------------------------------------------------------- displacement mode


@pytest.mark.parametrize('model', ['cosserat', 'discrete'])
def test_tension_displacement_round_trip_with_compliance(model):
    tendons = [dict(t, compliance=2e-3) for t in DEFAULT.to_dict()['tendons']]
    robot = make_robot(tendons=tendons)
    solver = StaticsSolver(robot, model)
    tensions = np.array([3.0, 1.0, 0.0, 0.5])
    forward = solver.solve_tensions(tensions, tip_force=[0.0, 0.02, 0.0])
    # compliance: the motor's unstretched tendon l* - q, stretched by C tau, spans the path l
    back = StaticsSolver(robot, model).solve_displacements(
        forward.tendon_displacements, tip_force=[0.0, 0.02, 0.0])
    np.testing.assert_allclose(back.tensions, tensions, rtol=1e-6, atol=1e-6 * tensions.max())
    np.testing.assert_allclose(back.tip_position, forward.tip_position, atol=1e-8)
    stiff = StaticsSolver(make_robot(), model).solve_tensions(tensions, [0.0, 0.02, 0.0])
    stretch = 2e-3 * tensions
    np.testing.assert_allclose(forward.tendon_displacements - stiff.tendon_displacements,
                               forward.tendon_lengths * stretch / (1 + stretch), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff', 'discrete'])
def test_pushed_out_tendon_goes_slack(model):
    solver = StaticsSolver(DEFAULT, model)
    result = solver.solve_displacements([0.003, -0.002, -0.004, 0.001])
    assert result.tensions[0] > 0.5 and result.tensions[3] > 0.0
    assert result.tensions[1] == 0.0 and result.tensions[2] == 0.0
    assert result.slack[1] > 0.0 and result.slack[2] > 0.0
    assert result.slack[0] == 0.0 and result.slack[3] == 0.0
    # the same robot under the solved tensions has those displacements
    check = StaticsSolver(DEFAULT, model).solve_tensions(result.tensions)
    np.testing.assert_allclose(check.tip_position, result.tip_position, atol=1e-8)
    np.testing.assert_allclose(check.tendon_displacements[[0, 3]], [0.003, 0.001], atol=1e-8)
    # a slack tendon's path is shorter than its rest length by the slack
    np.testing.assert_allclose(check.tendon_displacements[[1, 2]] - result.slack[[1, 2]],
                               [-0.002, -0.004], atol=1e-8)


# --------------------------------------------------------------------------- routing


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff', 'discrete'])
def test_helical_turn_with_equal_tensions_keeps_the_tip_on_the_axis(model):
    tendons = [{'name': f't{i}', 'offset': 0.015, 'angle_deg': 90.0 * i, 'routing': 'helical',
                'turns': 1.0} for i in range(4)]
    robot = make_robot(gravity=(0.0, 0.0, 0.0), tendons=tendons)
    result = StaticsSolver(robot, model).solve_tensions([4.0] * 4)
    axis = robot.base.direction
    off_axis = result.tip_position - (result.tip_position @ axis) * axis
    assert np.linalg.norm(off_axis) < 1e-6
    # not an unloaded robot: twisted, and compressed unless inextensible (Kirchhoff)
    assert abs(result.tip_rotation[:, 0] @ robot.base.normal) < 0.999
    if model != 'kirchhoff':
        assert result.tip_position @ axis < robot.rod.length - 1e-4


def test_user_routing_function_matches_the_built_in_helix():
    tendons = [{'name': 'h', 'offset': 0.012, 'angle_deg': 30.0, 'routing': 'helical',
                'turns': 0.5},
               {'name': 'p', 'offset': 0.015, 'angle_deg': 200.0}]
    robot = make_robot(tendons=tendons)
    helix = robot.tendons[0]
    calls = []

    def routing(s):
        calls.append(s.size)
        return helix.hole(s)

    plain = make_robot(tendons=[dict(tendons[0], routing='parallel', turns=0.0), tendons[1]])
    built_in = StaticsSolver(robot).solve_tensions([2.0, 1.0])
    user = StaticsSolver(plain, routing={'h': routing}).solve_tensions([2.0, 1.0])
    assert calls
    np.testing.assert_allclose(user.tip_position, built_in.tip_position, atol=1e-12)
    np.testing.assert_allclose(user.tendon_lengths, built_in.tendon_lengths, atol=1e-12)


def test_user_routing_with_a_wrong_derivative_is_rejected():
    def routing(s):
        r = np.stack((0.01 * np.cos(s), 0.01 * np.sin(s), 0 * s))
        return r, 2.0 * np.stack((-0.01 * np.sin(s), 0.01 * np.cos(s), 0 * s)), 0 * r
    with pytest.raises(StaticsInputError, match=r'routing\[t0\]: r_s is not the derivative'):
        StaticsSolver(DEFAULT, routing={'t0': routing})
    with pytest.raises(StaticsInputError, match=r"routing: unknown tendon 'x'"):
        StaticsSolver(DEFAULT, routing={'x': routing})


def test_discrete_model_converges_to_cosserat_as_vertebrae_get_denser():
    """
    The discrete model converges to Cosserat as the vertebrae get denser.

    Same constitutive law and loads; straight tendon segments between holes approach the continuous
    routing with an error O(spacing^2).
    """
    errors = []
    for count in (25, 50):
        robot = make_robot(gravity=(0.0, 0.0, 0.0), mass=0.0, count=count)
        tip_discrete = StaticsSolver(robot, 'discrete', constitutive='linear').solve_tensions(
            [3.0, 1.0, 0.0, 0.0]).tip_position
        tip_cosserat = StaticsSolver(robot, 'cosserat').solve_tensions(
            [3.0, 1.0, 0.0, 0.0]).tip_position
        errors.append(np.linalg.norm(tip_discrete - tip_cosserat))
    assert errors[1] < 1e-4
    assert 3.5 < errors[0] / errors[1] < 4.5


# --------------------------------------------------------------------------- invariants, outputs


def test_discrete_base_wrench_balances_the_loads():
    """
    Whole-robot force balance of the discrete model.

    The backbone force at the base plus the pull of the tendons' first segments (towards the base
    holes) carries all weights and the tip load.
    """
    robot = DEFAULT
    tip_force = np.array([0.01, -0.02, 0.03])
    result = StaticsSolver(robot, 'discrete').solve_tensions([2.0, 0.0, 1.0, 3.0], tip_force)
    pulls = sum(T * (path[:, 1] - path[:, 0]) / np.linalg.norm(path[:, 1] - path[:, 0])
                for T, path in zip(result.tensions, result.tendon_paths))
    weight = (robot.rod.linear_density * robot.rod.length
              + robot.vertebra_mass * robot.vertebra_positions.size) * robot.gravity
    np.testing.assert_allclose(result.base_force + pulls, weight + tip_force, atol=1e-8)


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff', 'discrete'])
def test_result_shapes_frames_and_warm_start(model):
    solver = StaticsSolver(DEFAULT, model)
    first = solver.solve_tensions([1.0, 2.0, 0.0, 0.0])
    k = first.arc_lengths.size
    assert first.centerline.shape == (3, k) and first.rotations.shape == (k, 3, 3)
    assert first.arc_lengths[0] == 0.0 and first.arc_lengths[-1] == pytest.approx(0.25)
    assert first.vertebra_positions.shape == (3, 10)
    assert first.vertebra_rotations.shape == (10, 3, 3)
    assert first.vertebra_orientations.shape == (10, 4)
    assert len(first.tendon_paths) == 4
    assert all(path.shape == (3, 11) for path in first.tendon_paths)
    np.testing.assert_allclose(first.centerline[:, 0], DEFAULT.base.position)
    np.testing.assert_allclose(first.rotations[0], DEFAULT.base.rotation)
    np.testing.assert_allclose(first.tip_position, first.centerline[:, -1])
    # quaternion [qx, qy, qz, qw] of the tip rotation
    x, y, z, w = first.tip_orientation
    rotation = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    np.testing.assert_allclose(rotation, first.tip_rotation, atol=1e-6)  # RK4 drift of R
    # vertebra holes: the tendon paths pass through them
    hole = DEFAULT.tendons[1].hole(0.25)[0]
    np.testing.assert_allclose(first.tendon_paths[1][:, -1],
                               first.tip_position + first.tip_rotation @ hole, atol=1e-12)
    # warm start: a nearby solve needs fewer residual evaluations than a cold one
    warm = solver.solve_tensions([1.05, 2.0, 0.0, 0.0])
    solver.reset()
    cold = solver.solve_tensions([1.05, 2.0, 0.0, 0.0])
    assert warm.evaluations < cold.evaluations
    np.testing.assert_allclose(warm.tip_position, cold.tip_position, atol=1e-8)
    assert warm.converged and warm.residual <= solver.tolerance and warm.solve_time > 0.0


def test_strongly_curled_robot_converges_by_continuation():
    result = StaticsSolver(DEFAULT, 'discrete').solve_tensions([20.0, 0.0, 0.0, 0.0])
    cosserat = StaticsSolver(DEFAULT, 'cosserat').solve_tensions([20.0, 0.0, 0.0, 0.0])
    # about one full turn: the tip is back near the base
    assert np.linalg.norm(result.tip_position) < 0.02
    assert np.linalg.norm(result.tip_position - cosserat.tip_position) < 0.005


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize('tensions, message', [
    ([1.0, 2.0, 3.0], r'tensions: expected 4 values \(one per tendon: t0, t1, t2, t3\), got 3'),
    ([1.0, float('nan'), 0.0, 0.0], r'tensions\[1\]: must be finite, got nan'),
    ([1.0, -0.5, 0.0, 0.0], r'tensions\[1\]: must be >= 0 N \(a tendon cannot push\)'),
    ([1.0, 0.0, 25.0, 0.0], r'tensions\[2\]: must be <= max_tension = 20 N, got 25'),
    ({'t9': 1.0}, r"tensions: unknown tendon 't9'; known tendons"),
    ({'t1': 'a'}, r'tensions\[t1\]: must be a number'),
    ('1,2,3,4', r'tensions: must be a sequence of 4 numbers or a mapping'),
    ([1.0, 0.0, '2', 0.0], r'tensions\[2\]: must be a number'),
])
def test_bad_tensions_are_rejected(tensions, message):
    with pytest.raises(StaticsInputError, match=message):
        StaticsSolver(DEFAULT).solve_tensions(tensions)


def test_bad_arguments_are_rejected():
    solver = StaticsSolver(DEFAULT)
    with pytest.raises(StaticsInputError, match=r'displacements\[0\]: must be finite'):
        solver.solve_displacements([float('inf'), 0.0, 0.0, 0.0])
    with pytest.raises(StaticsInputError, match=r'tip_force: must be 3 numbers, got 2'):
        solver.solve_tensions([0.0] * 4, tip_force=[1.0, 2.0])
    with pytest.raises(StaticsInputError, match=r'tip_moment\[2\]: must be finite'):
        solver.solve_tensions([0.0] * 4, tip_moment=[0.0, 0.0, float('nan')])
    with pytest.raises(StaticsInputError, match=r"model: must be one of \['auto', 'cosserat'"):
        StaticsSolver(DEFAULT, 'euler')
    with pytest.raises(StaticsInputError, match='kirchhoff model is inextensible'):
        StaticsSolver(DEFAULT, 'kirchhoff', constitutive='pyelastica')
    with pytest.raises(StaticsInputError, match=r'step: must be a finite number > 0'):
        StaticsSolver(DEFAULT, step=0.0)
    no_vertebrae = DEFAULT.to_dict()
    no_vertebrae['vertebrae'] = {'count': 0}
    with pytest.raises(StaticsInputError, match='discrete statics needs vertebra discs'):
        StaticsSolver(robot_from_dict(no_vertebrae), 'discrete')


def test_non_convergence_raises_with_the_residual():
    solver = StaticsSolver(DEFAULT, 'discrete', max_iterations=1)
    with pytest.raises(ConvergenceError, match=r'discrete statics (did not converge|failed)'
                                               r'.* scaled residual') as error:
        solver.solve_tensions([20.0, 0.0, 0.0, 0.0])
    assert error.value.residual > solver.tolerance
    assert error.value.iterations > 0
    # the solver is still usable afterwards
    solver.max_iterations = 100
    assert solver.solve_tensions([1.0, 0.0, 0.0, 0.0]).converged


@pytest.mark.parametrize('field, inputs, named', [
    ('tensions', [20.0, 0.0, 0.0, 0.0], 'tensions [20, 0, 0, 0] N'),
    ('displacements', [0.06, 0.0, 0.0, 0.0], 'displacements [0.06, 0, 0, 0] m')])
def test_a_failure_names_the_inputs_asked_for_and_how_far_the_continuation_got(
        field, inputs, named):
    """
    The inputs given, not those of the continuation step where it stopped.

    The message named the tensions of that step: 0.3 N asked for printed [0.0188, 0.0] N.
    Here 10 N sideways at the tip stops the continuation part of the way.
    """
    solver = StaticsSolver(DEFAULT, 'cosserat')
    with pytest.raises(ConvergenceError) as error:
        getattr(solver, f'solve_{field}')(inputs, tip_force=[0.0, -10.0, 0.0])
    found = re.search(rf'inputs may be out of reach \({re.escape(named)}; the continuation '
                      r'solved (\d+) of its 16 equal steps to them\)$', str(error.value))
    assert found, str(error.value)
    assert 0 < int(found.group(1)) < 16


def test_set_tip_load_becomes_the_default_of_later_solves():
    solver = StaticsSolver(DEFAULT, 'discrete')
    force, moment = [0.0, 0.01, 0.05], [0.002, 0.0, 0.0]
    explicit = StaticsSolver(DEFAULT, 'discrete').solve_tensions(
        [1.0, 0.0, 0.0, 0.0], tip_force=force, tip_moment=moment)
    solver.set_tip_load(force, moment)
    np.testing.assert_allclose(solver.solve_tensions([1.0, 0.0, 0.0, 0.0]).tip_position,
                               explicit.tip_position, atol=1e-8)
    # a per-solve load still wins, component by component
    only_force = solver.solve_tensions([1.0, 0.0, 0.0, 0.0], tip_force=[0.0, 0.0, 0.0])
    reference = StaticsSolver(DEFAULT, 'discrete').solve_tensions(
        [1.0, 0.0, 0.0, 0.0], tip_moment=moment)
    np.testing.assert_allclose(only_force.tip_position, reference.tip_position, atol=1e-8)
    with pytest.raises(StaticsInputError, match=r'tip_moment\[1\]: must be finite'):
        solver.set_tip_load(force, [0.0, math.nan, 0.0])


def test_a_vertebra_guessed_upside_down_is_no_answer():
    """
    The discrete model's bays, warm-started with one vertebra guessed half a turn about d3.

    The bay's rotation error once was the axial vector of skew(Q^T Q_integrated), which
    vanishes at a half turn too: the bay converged to its vertebra upside down, its tendons
    pulled towards the holes opposite theirs, and the nitinol robot with 1 N on t0 and t1 came
    out at equilibria 19 to 150 mm from the cold solve's (the dynamics swung to z = -89 mm on
    that equation). Now every such start lands on the cold solve's equilibrium (which is the
    scipy reference's within 10 nm: measured once, the reference takes a minute on this robot;
    test_statics_reference.py compares the discrete model on a smaller one).
    """
    robot = load_robot(share_dir() / 'config' / 'nitinol_robot.yaml')
    tensions = [1.0, 1.0, 0.0]
    solver = StaticsSolver(robot, 'discrete')
    cold = solver.solve_tensions(tensions).tip_position
    for bay in range(1, robot.vertebra_positions.size):
        solver._bays.Q[bay] = solver._bays.Q[bay] @ np.diag([-1.0, -1.0, 1.0])
        # 10 nm: the solver's tolerance on this robot, far below the 19 mm of a wrong answer
        np.testing.assert_allclose(solver.solve_tensions(tensions).tip_position, cold,
                                   rtol=0, atol=1e-8)
