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
The rod's bending friction (``rod.bending_friction``): Jenkins elements per bay.

Physics against closed forms: a rest curvature bends an unloaded rod into a circular arc, and a
cycled pure tip moment (uniform along the rod, so every bay alike) draws the Jenkins element's
loop, whose branches are written here from the element's definition (loading, unloading while
it sticks, sliding back), not from the solver's fixed point.
"""

import math

import numpy as np
import pytest

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.bending_friction import (bay_curvatures,
                                                                  segment_ends,
                                                                  set_rest_curvature)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

# the default robot standing up: its base axis z, its holes' angles from x
DEFAULT = {**load_robot(default_robot_file()).to_dict(),
           'base': {'direction': [0.0, 0.0, 1.0], 'normal': [1.0, 0.0, 0.0]}}
WEIGHTLESS = {**DEFAULT, 'gravity': [0.0, 0.0, 0.0]}


def with_bending_friction(data: dict, **friction) -> dict:
    return {**data, 'rod': {**data['rod'], 'bending_friction': friction}}


def arc_tip(kappa: float, length: float) -> np.ndarray:
    """Tip of a rod of ``length`` bent about the base x axis with curvature ``kappa``."""
    if kappa == 0.0:
        return np.array([0.0, 0.0, length])
    return np.array([0.0, -(1.0 - math.cos(kappa * length)) / kappa,
                     math.sin(kappa * length) / kappa])


# --------------------------------------------------------------------------- description


@pytest.mark.parametrize('friction, message', [
    ({'moment': -1e-3}, 'rod.bending_friction.moment: must be >= 0, got -0.001'),
    ({'moment': 2e4}, 'rod.bending_friction.moment: must be within [-10000, 10000] N m'),
    ({'moment': 1e-3, 'stiffness_ratio': 0}, 'rod.bending_friction.stiffness_ratio: must be > 0'),
    ({'moment': 1e-3, 'stiffness_ratio': 1e4},
     'rod.bending_friction.stiffness_ratio: must be within [0.001, 1000]'),
    ({'stiffness_ratio': 1}, 'rod.bending_friction.moment: required key is missing'),
    ({'moment': 1e-3, 'slip': 1}, 'rod.bending_friction.slip: unknown key'),
    # one per segment: the default robot has one (its four tendons end at the tip)
    ({'moment': [1e-3, 2e-3]}, 'rod.bending_friction.moment: one value per segment (1: the '
     'tendons anchored at 0.25 m) or one number, got 2 values'),
    ({'moment': [-1e-3]}, 'rod.bending_friction.moment[0]: must be >= 0, got -0.001'),
    ({'moment': []}, 'rod.bending_friction.moment: must be a non-empty list of numbers'),
    ({'moment': ['a']}, 'rod.bending_friction.moment[0]: must be a number'),
    ({'moment': 1e-3, 'tension_arm': -1e-4},
     'rod.bending_friction.tension_arm: must be >= 0, got -0.0001'),
    ({'moment': 1e-3, 'tension_arm': 0.5},
     'rod.bending_friction.tension_arm: must be <= 0.1, got 0.5'),
])
def test_a_bad_bending_friction_is_one_line_naming_the_key(friction, message):
    with pytest.raises(RobotDescriptionError) as error:
        robot_from_dict(with_bending_friction(DEFAULT, **friction))
    assert str(error.value).startswith(message) and '\n' not in str(error.value), error.value


def test_the_keys_load_with_their_default_and_round_trip():
    robot = robot_from_dict(with_bending_friction(DEFAULT, moment=2e-3))
    assert (robot.rod.bending_friction.moment, robot.rod.bending_friction.stiffness_ratio) == (
        2e-3, 1.0)
    assert robot_from_dict(robot.to_dict()).rod == robot.rod
    assert load_robot(default_robot_file()).rod.bending_friction is None     # default: none
    assert robot.rod.bending_friction.tension_arm == 0.0
    armed = robot_from_dict(with_bending_friction(DEFAULT, moment=2e-3, tension_arm=5e-4))
    assert armed.rod.bending_friction.tension_arm == 5e-4
    assert robot_from_dict(armed.to_dict()).rod == armed.rod


def two_segments(data: dict) -> dict:
    """Return the robot with t0 and t2 anchored at its middle disc (0.125 m): two segments."""
    tendons = [{**t, 'end': 0.125} if t['name'] in ('t0', 't2') else t
               for t in data['tendons']]
    return {**data, 'tendons': tendons}


def test_a_moment_per_segment_loads_and_round_trips():
    robot = robot_from_dict(with_bending_friction(two_segments(DEFAULT), moment=[1e-3, 2e-3],
                                                  stiffness_ratio=2.0))
    assert robot.segment_ends.tolist() == [0.125, 0.25]
    assert robot.rod.bending_friction.moment == (1e-3, 2e-3)
    assert robot_from_dict(robot.to_dict()).rod == robot.rod


def test_a_single_solve_refuses_it_in_one_line():
    robot = robot_from_dict(with_bending_friction(DEFAULT, moment=1e-3))
    with pytest.raises(StaticsInputError, match=r'^rod.bending_friction: the single statics'):
        StaticsSolver(robot, 'cosserat')


@pytest.mark.parametrize('argv', [
    # auto, the default: it looked the explicit integrator's refusal up in EXPLICIT_LACKS,
    # which lacked the key (an internal error, KeyError 'rod.bending_friction')
    ['simulate', '--duration', '0.01'],
    ['simulate', '--integrator', 'explicit', '--duration', '0.01'],
    ['simulate', '--integrator', 'implicit', '--duration', '0.01'],
    ['cc-dynamics', '--tensions', 't0=1', '--duration', '0.01'],
])
def test_a_model_without_it_refuses_it_in_one_line(argv, tmp_path, capsys):
    import yaml
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(with_bending_friction(DEFAULT, moment=1e-3)))
    assert cli.main([*argv, '--robot', str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'rod.bending_friction: the ' in err, err


# --------------------------------------------------------------------------- closed forms


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff', 'discrete'])
def test_a_rest_curvature_bends_the_unloaded_rod_into_an_arc(model):
    robot = robot_from_dict(WEIGHTLESS)
    solver = StaticsSolver(robot, model)
    ends = segment_ends(solver)
    assert ends[0, 0] == 0.0 and np.all(ends[1:, 0] == ends[:-1, 1])
    assert ends[-1, 1] == pytest.approx(robot.rod.length, abs=1e-12)
    ustar = np.zeros((len(ends), 3))
    ustar[:, 0] = 4.0       # 1/m about d1 (the base x axis)
    set_rest_curvature(solver, ustar)
    tip = solver.solve_tensions(np.zeros(len(robot.tendons))).tip_position
    # tolerance: the RK4 grid integrates the arc to ~1e-11 m; Newton's tolerance ~1e-8 m
    assert np.max(np.abs(tip - arc_tip(4.0, robot.rod.length))) < 1e-8
    with pytest.raises(StaticsInputError, match='^rest curvature: must be'):
        set_rest_curvature(solver, ustar[1:])


def jenkins_loop(EI: float, k: float, Mf: float) -> tuple[list[float], list[float]]:
    """
    Tip moments and the curvature of the closed form, branch by branch.

    The element m = EI kappa + f, f = k (kappa - kappa_p), |f| <= Mf, yields at the moment
    My = Mf (EI + k) / k from rest; a reversal sticks for a change of 2 My.
    """
    My = Mf * (EI + k) / k
    moments, kappas = [], []

    def state(m, kappa):
        moments.append(m)
        kappas.append(kappa)
    state(0.5 * My, 0.5 * My / (EI + k))                   # sticks: stiffer by k
    peak = (3.0 * My - Mf) / EI
    state(3.0 * My, peak)                                  # slides: the rod alone, offset
    state(2.0 * My, peak - My / (EI + k))                  # unloaded by My < 2 My: sticks
    state(0.0, Mf / EI)                                    # by 3 My: slides back, keeps Mf/EI
    state(-3.0 * My, (-3.0 * My + Mf) / EI)                # on sliding the other way
    state(0.0, -Mf / EI)                                   # and keeps the other bend
    return moments, kappas


@pytest.mark.parametrize('model, ratio', [('cosserat', 1.0), ('discrete', 1.0),
                                          ('cosserat', 20.0)])
def test_a_cycled_tip_moment_draws_the_jenkins_loop(model, ratio):
    Mf = 2e-3
    robot = robot_from_dict(with_bending_friction(WEIGHTLESS, moment=Mf, stiffness_ratio=ratio))
    EI, L = robot.rod.bending_stiffness, robot.rod.length
    statics = StickSlipStatics(robot, model)
    moments, kappas = jenkins_loop(EI, ratio * EI, Mf)
    for m, kappa in zip(moments, kappas):
        statics.set_tip_load(np.zeros(3), np.array([m, 0.0, 0.0]))
        result = statics.solve_tensions(np.zeros(len(robot.tendons)))
        # tolerance: the fixed point stops within 1e-4 Mf of its moments, which moves the
        # 0.25 m rod's tip by ~1e-7 m; the arc itself is exact to ~1e-11 m
        assert np.max(np.abs(result.tip_position - arc_tip(kappa, L))) < 1e-6, (m, kappa)
    # the loop: at zero moment the tip ends on either side by the closed form's 2 Mf / EI
    width = np.linalg.norm(arc_tip(Mf / EI, L) - arc_tip(-Mf / EI, L))
    assert width > 1e-3


def two_arcs(kappas, lengths) -> np.ndarray:
    """Tip of arcs of curvature ``kappas`` about the base x axis, one after the other."""
    tip, turn = np.zeros(3), 0.0
    for kappa, length in zip(kappas, lengths):
        c, s = math.cos(turn), math.sin(turn)
        tip += np.array([[1, 0, 0], [0, c, -s], [0, s, c]]) @ arc_tip(kappa, length)
        turn += kappa * length
    return tip


@pytest.mark.parametrize('model', ['cosserat', 'discrete'])
def test_each_segment_keeps_the_bend_of_its_own_moment(model):
    """A uniform tip moment slides every bay; each keeps M_f of its segment / E I unloaded."""
    moments, ratio = (1e-3, 3e-3), 1.0
    robot = robot_from_dict(with_bending_friction(two_segments(WEIGHTLESS), moment=list(moments),
                                                  stiffness_ratio=ratio))
    EI, L = robot.rod.bending_stiffness, robot.rod.length
    statics = StickSlipStatics(robot, model)
    peak = 3.0 * max(moments) * (1.0 + ratio) / ratio     # 3 M_y of the stronger segment
    for m, kappas in ((peak, [(peak - Mf) / EI for Mf in moments]),
                      (0.0, [Mf / EI for Mf in moments])):
        statics.set_tip_load(np.zeros(3), np.array([m, 0.0, 0.0]))
        result = statics.solve_tensions(np.zeros(len(robot.tendons)))
        # tolerance: as in the loop above (1e-4 M_f of the fixed point: ~1e-7 m)
        expected = two_arcs(kappas, (0.125, L - 0.125))
        assert np.max(np.abs(result.tip_position - expected)) < 1e-6, m
    # the two segments' bends differ by more than the tolerance: one moment would fail
    assert np.linalg.norm(two_arcs([moments[0] / EI] * 2, (0.125, L - 0.125)) - expected) > 1e-3


def test_equal_moments_per_segment_are_the_one_moment():
    one, each = (StickSlipStatics(robot_from_dict(with_bending_friction(
        two_segments(DEFAULT), moment=moment)), 'cosserat') for moment in (2e-3, [2e-3, 2e-3]))
    for q in ([0.004, 0.0, 0.0, 0.0], [0.0, 0.006, 0.0, -0.006], [0.0, 0.0, 0.0, 0.0]):
        a, b = one.solve_displacements(q), each.solve_displacements(q)
        # the same arithmetic: equal to round-off
        assert np.max(np.abs(a.tip_position - b.tip_position)) < 1e-12


@pytest.mark.parametrize('model', ['cosserat', 'discrete'])
def test_a_tension_arm_adds_the_tensions_through_each_bay_to_its_moment(model):
    """
    Tensions held, a tip moment cycled: each bay slides where its moment per segment would.

    The bound M_0 + lambda sum tau of each bay is the same as the moments per segment that sum
    gives (the constant bound of the Jenkins loop above). t0 and t2 end at the middle disc: the
    first segment's bays carry all four tendons, the second's t1 and t3 alone.
    """
    M0, arm, ratio = 1e-3, 4e-4, 1.0
    tensions = np.array([1.0, 0.5, 2.0, 0.7])
    armed = robot_from_dict(with_bending_friction(two_segments(WEIGHTLESS), moment=M0,
                                                  tension_arm=arm, stiffness_ratio=ratio))
    each = [M0 + arm * tensions.sum(), M0 + arm * (tensions[1] + tensions[3])]
    fixed = robot_from_dict(with_bending_friction(two_segments(WEIGHTLESS), moment=each,
                                                  stiffness_ratio=ratio))
    sequences = [StickSlipStatics(robot, model) for robot in (armed, fixed)]
    My = max(each) * (1.0 + ratio) / ratio
    for m in (0.5 * My, 3.0 * My, 2.0 * My, 0.0, -3.0 * My, 0.0):
        tips = []
        for statics in sequences:
            statics.set_tip_load(np.zeros(3), np.array([m, 0.0, 0.0]))
            tips.append(statics.solve_tensions(tensions).tip_position)
        # tolerance: each fixed point stops within 1e-4 M_f of its moments (~1e-7 m)
        assert np.max(np.abs(tips[0] - tips[1])) < 1e-6, m
    # each bay's bound is its segment's sum, to round-off
    assert sequences[0].bending.bound.min() == pytest.approx(each[1], rel=1e-12)
    assert sequences[0].bending.bound.max() == pytest.approx(each[0], rel=1e-12)


def test_without_friction_moment_it_is_frictionless_to_round_off():
    robot = robot_from_dict(with_bending_friction(DEFAULT, moment=0.0))
    statics = StickSlipStatics(robot, 'cosserat')
    reference = StaticsSolver(robot_from_dict(DEFAULT), 'cosserat')
    for q in ([0.004, 0.0, -0.004, 0.0], [0.0, 0.006, 0.0, -0.006], [0.0, 0.0, 0.0, 0.0]):
        ours, theirs = statics.solve_displacements(q), reference.solve_displacements(q)
        assert np.array_equal(ours.tip_position, theirs.tip_position)
        assert np.array_equal(ours.tensions, theirs.tensions)


def test_a_pull_leaves_a_bend_that_a_pull_elsewhere_replaces():
    """The memory the opencr-mujoco FTDCR v4 shows: of the last pull, not of all of them."""
    robot = robot_from_dict(with_bending_friction(DEFAULT, moment=3e-3))
    statics = StickSlipStatics(robot, 'cosserat')
    rest = statics.solve_displacements(np.zeros(4)).tip_position.copy()
    ends = []
    for t in (0, 1):
        pull = np.zeros(4)
        pull[t] = 0.008
        statics.solve_displacements(pull)
        ends.append(statics.solve_displacements(np.zeros(4)).tip_position - rest)
    # after each release the tip stays off towards the tendon pulled last (its hole's
    # direction in the base xy plane), more than towards the one before: the slider turns
    # towards the new bend (radial return)
    holes = np.array([[math.cos(t.angle), math.sin(t.angle)] for t in robot.tendons[:2]])
    assert holes[0] @ ends[0][:2] > 0.9 * np.linalg.norm(ends[0][:2]) > 1e-4
    assert holes[1] @ ends[1][:2] > max(holes[0] @ ends[1][:2], 0.5 * np.linalg.norm(
        ends[1][:2])) > 1e-4
    result = statics.solve_displacements(np.zeros(4))
    ends = segment_ends(statics.frictionless)
    assert bay_curvatures(result, ends).shape == (len(ends), 2)


def test_sliding_tendons_with_it_settle_and_match_the_tension_driven_sequence(monkeypatch):
    """
    Capstan friction and bending friction together, displacements given (a real robot's fit).

    Each fixed point of the friction moments solves the tendons again from the stored state
    with another rest curvature: the tendons' linear models must take the new shape as their
    reference, not as a secant of the tensions (that corrupted them into NaN tensions). The
    joint solve settles without the slow fallback, and the motor tensions it finds drive the
    tension-driven sequence (another solver) through the same tips.
    """
    data = with_bending_friction(DEFAULT, moment=3e-3)
    data['tendons'] = [{**t, 'friction': {'law': 'sliding', 'coefficient': 0.2}}
                       for t in data['tendons']]
    robot = robot_from_dict(data)
    by_displacement, by_tension = (StickSlipStatics(robot, 'cosserat') for _ in range(2))

    def no_fallback(*args):
        raise AssertionError('the joint solve fell back to the tension-driven Newton')
    monkeypatch.setattr(by_displacement, '_by_lengths', no_fallback)
    ramp = np.concatenate((np.linspace(0.0, 0.008, 4), np.linspace(0.004, 0.0, 2)))
    for q in ramp:
        command = np.array([q, 0.5 * q, 0.0, 0.0])
        ours = by_displacement.solve_displacements(command)
        theirs = by_tension.solve_tensions(ours.tensions)
        # tolerance: the moments' fixed points (1e-4 M_f) and the lengths (1e-6 m)
        assert np.max(np.abs(ours.tip_position - theirs.tip_position)) < 1e-5, q
        assert np.max(ours.tensions) > 0.0 or q == 0.0
