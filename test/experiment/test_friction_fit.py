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
``calibrate --fit TENDONS.friction``: the capstan coefficient from a pull and release.

The measured tips are the path-dependent statics of the default robot with a hidden
coefficient (the expectation), with motion-capture noise; the fit starts from the file,
which has no friction.
"""

import numpy as np
import pytest

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.experiment.calibration import CalibrationError
from tendon_robot_sim.experiment.experiment import Hold, write_holds_csv
from tendon_robot_sim.experiment.fit_parameters import parse_fit, with_parameters
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot

NOISE = 1e-4        # m per axis: motion capture
# each tendon in turn pulled to 3 N and released, in 0.5 N steps: the loop of each
RAMP = np.concatenate((np.arange(0.0, 3.01, 0.5), np.arange(2.5, -0.01, -0.5)))


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def pull_release(hidden, tendons, seed) -> list[Hold]:
    statics = StickSlipStatics(hidden, 'discrete')
    noise = np.random.default_rng(seed).normal(0.0, NOISE, (len(tendons) * RAMP.size, 3))
    holds = []
    for command in (np.eye(4)[t] * tension for t in tendons for tension in RAMP):
        tip = statics.solve_tensions(command).tip_position + noise[len(holds)]
        holds.append(Hold(tensions=command, displacements=None, tip=tip, duration=0.0,
                          samples=1))
    return holds


def test_the_friction_parameter_bounds_and_ties(robot):
    one, = parse_fit(robot, ['t0.friction'])
    assert (one.initial, one.low, one.high, one.log) == (0.0, 0.0, 2.0, False)
    assert [p.name for p in parse_fit(robot, ['*.friction@tendon'])] == [
        f't{i}.friction' for i in range(4)]
    tied, = parse_fit(robot, ['*.friction'])
    assert tied.tendons == (0, 1, 2, 3)
    set_ = with_parameters(robot, {'t1.friction': 0.3})
    assert set_.tendons[1].friction.law == 'sliding'
    assert set_.tendons[1].friction.coefficient == 0.3 and set_.tendons[0].friction is None


def test_the_viscous_law_is_not_fitted_to_holds(robot):
    viscous = with_parameters(robot, {'t0.friction': 0.3}).to_dict()
    viscous['tendons'][0]['friction'] = {'law': 'viscous', 'coefficient': 4.0}
    from tendon_robot_sim.models.tendon_robot import robot_from_dict
    with pytest.raises(CalibrationError, match=r'^fit: t0.friction: its law is viscous'):
        calibrate(robot_from_dict(viscous), [], ['t0.friction'], progress=False)


def test_the_coefficient_of_one_tendon_comes_back(robot):
    hidden = with_parameters(robot, {'t0.friction': 0.25})
    holds = pull_release(hidden, [0], seed=1)
    result = calibrate(robot, holds, ['t0.friction'], model='discrete', workers=1,
                       progress=False)
    (low, high), = result.intervals
    assert low < 0.25 < high and result.values[0] == pytest.approx(0.25, abs=0.02)
    assert result.robot.tendons[0].friction.coefficient == result.values[0]
    # the loop is what determines it: without friction the pull and the release coincide
    assert result.rms_after < 2.5 * NOISE < 10 * NOISE < result.rms_before


def test_one_coefficient_for_the_robot_from_the_command_line(robot, tmp_path, capsys):
    hidden = with_parameters(robot, {'*.friction': 0.15})
    csv = tmp_path / 'pull_release.csv'
    write_holds_csv(csv, robot, pull_release(hidden, [0, 1], seed=2))
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(csv), '--fit', '*.friction', '--model', 'discrete',
                     '--workers', '1', '--out', str(out)]) == 0
    calibrated = load_robot(out)
    values = {t.friction.coefficient for t in calibrated.tendons}
    assert len(values) == 1 and values.pop() == pytest.approx(0.15, abs=0.02)
    assert 't0+t1+t2+t3.friction' in capsys.readouterr().out


def test_every_nth_point_fits_the_shorter_sequence(robot, tmp_path, capsys):
    """``--every 2``: the path-dependent fit on every other point, in order, still finds nu."""
    hidden = with_parameters(robot, {'*.friction': 0.15})
    holds = pull_release(hidden, [0], seed=3)
    csv = tmp_path / 'pull_release.csv'
    write_holds_csv(csv, robot, holds)
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(csv), '--fit', '*.friction', '--model', 'discrete',
                     '--workers', '1', '--every', '2', '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    assert f'{(len(holds) + 1) // 2} holds (every 2) from' in printed
    assert f'({(len(holds) + 1) // 2} points' in printed
    values = {t.friction.coefficient for t in load_robot(out).tendons}
    assert len(values) == 1 and values.pop() == pytest.approx(0.15, abs=0.03)


@pytest.mark.parametrize('every', ['0', '1.5', '1001'])
def test_a_bad_every_exits_2_in_one_line(every, tmp_path, capsys):
    assert cli.main(['calibrate', str(tmp_path / 'x.csv'), '--fit', '*.friction', '--every',
                     every, '--out', str(tmp_path / 'out.yaml')]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and '--every' in error[0]


@pytest.mark.parametrize('item', ['t0.friction', 'bending_friction.moment'])
def test_the_dynamic_model_refuses_a_friction_fit_to_holds(item, tmp_path, capsys):
    """
    ``--model dynamic`` settles each hold from rest, where friction has no effect: refused.

    It fitted t0.friction to a pull and release with nu = 0.25 hidden in it as 0.0025 +- 0.35
    (an interval reaching below 0, the error unchanged by it), exit 0, and stopped on an
    internal error with the rod's bending friction.
    """
    robot = load_robot(default_robot_file())
    csv = tmp_path / 'pull_release.csv'
    write_holds_csv(csv, robot, pull_release(with_parameters(robot, {'t0.friction': 0.25}),
                                             [0], seed=4))
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(csv), '--fit', item, '--model', 'dynamic',
                     '--workers', '1', '--out', str(out)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error == [f'tendon-robot-sim calibrate: error: --fit: {item}: the dynamic model '
                     'settles each hold from rest, where friction has no effect; fit it with a '
                     'statics model (discrete, cosserat or kirchhoff: each hold from the last)']
    assert not out.exists()
