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
``calibrate --fit bending_friction.moment``: the rod's friction moment from pulls and releases.

The measured tips are the path-dependent statics of the default robot with a hidden friction
moment (the expectation), with motion-capture noise; the fit starts from the file, which has
no bending friction.
"""

import numpy as np
import pytest

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.experiment.experiment import Hold, write_holds_csv
from tendon_robot_sim.experiment.fit_parameters import (FitParameterError, parse_fit,
                                                        robot_with, with_parameters)
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

NOISE = 1e-4        # m per axis: motion capture
# tendons 0 and 1 in turn pulled to 3 N and released, in 0.5 N steps
RAMP = np.concatenate((np.arange(0.0, 3.01, 0.5), np.arange(2.5, -0.01, -0.5)))


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def pull_release(hidden, seed) -> list[Hold]:
    statics = StickSlipStatics(hidden, 'cosserat')
    noise = np.random.default_rng(seed).normal(0.0, NOISE, (2 * RAMP.size, 3))
    holds = []
    for command in (np.eye(4)[t] * tension for t in (0, 1) for tension in RAMP):
        tip = statics.solve_tensions(command).tip_position + noise[len(holds)]
        holds.append(Hold(tensions=command, displacements=None, tip=tip, duration=0.0,
                          samples=1))
    return holds


def test_the_parameters_bounds(robot):
    moment, ratio = parse_fit(robot, ['bending_friction.moment',
                                      'bending_friction.stiffness_ratio'])
    EI, L = robot.rod.bending_stiffness, robot.rod.length
    # from none: no moment, up to the moment that leaves a bend of 1 rad; the ratio 1
    assert (moment.initial, moment.low, moment.log) == (0.0, 0.0, False)
    assert moment.high == pytest.approx(EI / L, rel=1e-12)
    assert (ratio.initial, ratio.low, ratio.high, ratio.log) == (1.0, 0.1, 10.0, True)
    arm, = parse_fit(robot, ['bending_friction.tension_arm'])
    # from none: 0, up to the sliding law's largest nu (2) at the holes' 15 mm
    assert (arm.initial, arm.low, arm.log) == (0.0, 0.0, False)
    assert arm.high == pytest.approx(2.0 * 0.015, rel=1e-12)
    set_ = with_parameters(robot, {'bending_friction.moment': 2e-3})
    assert (set_.rod.bending_friction.moment, set_.rod.bending_friction.stiffness_ratio) == (
        2e-3, 1.0)


def test_a_moment_per_segment_is_fitted_from_the_files_moment(robot):
    data = robot.to_dict()
    data['tendons'][0]['end'] = 0.125     # two segments
    two = with_parameters(robot_from_dict(data), {'bending_friction.moment': 2e-3})
    first, second = parse_fit(two, ['bending_friction.moment@segment'])
    assert (first.name, first.initial, second.name, second.initial) == (
        'bending_friction.moment[0]', 2e-3, 'bending_friction.moment[1]', 2e-3)
    with pytest.raises(FitParameterError, match='both fit bending_friction.moment'):
        parse_fit(two, ['bending_friction.moment', 'bending_friction.moment@segment'])
    apart = robot_with(two, [first, second], [2e-3, 1e-3])
    assert apart.rod.bending_friction.moment == (2e-3, 1e-3)
    with pytest.raises(FitParameterError, match=r'different moments .*; fit them apart'):
        parse_fit(apart, ['bending_friction.moment'])


def test_a_hidden_moment_comes_back_within_its_interval(robot):
    hidden_moment = 0.1 * robot.rod.bending_stiffness / robot.rod.length
    hidden = with_parameters(robot, {'bending_friction.moment': hidden_moment})
    holds = pull_release(hidden, seed=3)
    result = calibrate(robot, holds, ['bending_friction.moment'], model='cosserat', workers=1,
                       progress=False)
    (low, high), = result.intervals
    assert low < hidden_moment < high
    assert result.values[0] == pytest.approx(hidden_moment, rel=0.05)
    assert result.robot.rod.bending_friction.moment == result.values[0]
    # the loops are what determine it: without friction the pull and the release coincide
    assert result.rms_after < 2.5 * NOISE < 10 * NOISE < result.rms_before


def test_hidden_moments_per_segment_come_back_within_their_intervals(robot):
    """Two segments (t0 and t2 anchored at the middle disc) that hold different bends."""
    data = robot.to_dict()
    for tendon in data['tendons']:
        if tendon['name'] in ('t0', 't2'):
            tendon['end'] = 0.125
    two = robot_from_dict(data)
    scale = two.rod.bending_stiffness / two.rod.length
    hidden_moments = (0.12 * scale, 0.05 * scale)
    hidden = robot_from_dict({**data, 'rod': {**data['rod'], 'bending_friction': {
        'moment': list(hidden_moments)}}})
    # t0 bends the first segment alone, t1 both: each segment's loop is seen
    holds = pull_release(hidden, seed=5)
    result = calibrate(two, holds, ['bending_friction.moment@segment'], model='cosserat',
                       workers=1, progress=False)
    assert result.names == ('bending_friction.moment[0]', 'bending_friction.moment[1]')
    for (low, high), value, moment in zip(result.intervals, result.values, hidden_moments):
        assert low < moment < high
        assert value == pytest.approx(moment, rel=0.1)
    assert result.robot.rod.bending_friction.moment == tuple(result.values)
    assert result.rms_after < 2.5 * NOISE < 10 * NOISE < result.rms_before


def test_a_hidden_tension_arm_comes_back_with_its_moment(robot):
    """
    The bound M_0 + lambda sum tau, both from none in the file.

    The pulls to 3 N slide at a larger moment than the releases near 0 N, so the moment and
    the arm are told apart.
    """
    scale = robot.rod.bending_stiffness / robot.rod.length
    hidden_values = {'bending_friction.moment': 0.05 * scale,
                     'bending_friction.tension_arm': 0.05 * scale / 3.0}   # doubles it at 3 N
    hidden = with_parameters(robot, hidden_values)
    holds = pull_release(hidden, seed=6)
    result = calibrate(robot, holds, list(hidden_values), model='cosserat', workers=1,
                       progress=False)
    for (low, high), value, truth in zip(result.joint_intervals, result.values,
                                         hidden_values.values()):
        assert low < truth < high
        assert value == pytest.approx(truth, rel=0.05)
    assert result.robot.rod.bending_friction.tension_arm == result.values[1]
    assert result.rms_after < 2.5 * NOISE < 10 * NOISE < result.rms_before


def test_bad_bounds_exit_2_in_one_line(robot, tmp_path, capsys):
    csv = tmp_path / 'holds.csv'
    write_holds_csv(csv, robot, pull_release(robot, seed=4)[:3])
    assert cli.main(['calibrate', str(csv), '--fit', 'bending_friction.moment', '--bounds',
                     'bending_friction.moment=0.1:0.05', '--out',
                     str(tmp_path / 'out.yaml')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'bending_friction.moment' in err, err
    assert not (tmp_path / 'out.yaml').exists()
