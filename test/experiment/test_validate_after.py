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
``validate --after``: a model with memory starts a recording where the one before left it.

The robot (the default one with bending friction) is pulled by t0 and released (the
recording before), then held at rest and pulled a little by t1 (the recording validated).
The "measured" tips are the path-dependent statics run through both in order
(:class:`StickSlipStatics`, one chain), so the model validated with the first recording as
its history must meet them to the solver's tolerance, and without it must miss the bend the
release left.
"""

import json

import numpy as np
import pytest

from tendon_robot_sim import cli, default_robot_file, share_dir
from tendon_robot_sim.experiment.calibration import predict
from tendon_robot_sim.experiment.experiment import Hold, write_holds_csv
from tendon_robot_sim.experiment.fit_parameters import with_parameters
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot
import yaml

PULL = np.concatenate((np.arange(0.0, 4.01, 0.5), np.arange(3.5, -0.01, -0.5)))   # N, t0
AFTER = (0.0, 0.0, 0.5, 1.0, 0.5, 0.0)                                              # N, t1


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    """(robot file, the recording before, the recording validated) as CSV files of holds."""
    folder = tmp_path_factory.mktemp('after')
    robot = with_parameters(load_robot(default_robot_file()),
                            {'bending_friction.moment': 1e-2})
    statics = StickSlipStatics(robot, 'cosserat')

    def holds(commands):
        return [Hold(tensions=c, displacements=None, duration=0.0, samples=1,
                     tip=statics.solve_tensions(c).tip_position) for c in commands]
    before = holds(np.eye(4)[0] * t for t in PULL)
    validated = holds(np.eye(4)[1] * t for t in AFTER)
    robot_file = folder / 'robot.yaml'
    robot_file.write_text(yaml.safe_dump(robot.to_dict()))
    for name, points in (('before.csv', before), ('validated.csv', validated)):
        write_holds_csv(folder / name, robot, points)
    return robot_file, folder / 'before.csv', folder / 'validated.csv'


def validate(recordings, tmp_path, capsys, *after) -> dict:
    robot_file, before, validated = recordings
    assert cli.main(['validate', str(validated), '--robot', str(robot_file), '--model',
                     'cosserat', '--report', str(tmp_path / 'report'), '--json',
                     *(arg.format(before=before) for arg in after)]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_recording_before_puts_the_model_where_the_robot_was(recordings, tmp_path, capsys):
    fresh = validate(recordings, tmp_path, capsys)
    after = validate(recordings, tmp_path, capsys, '--after', '{before}')
    # the release of t0 left a bend that the fresh model does not have (measured 3.7 mm)
    assert fresh['tip_rmse_mm'] > 1.0
    # the same chain of solves: only the solver's tolerance apart
    assert after['tip_rmse_mm'] < 1e-3
    assert (fresh['after'], after['after']) == (None, str(recordings[1]))


def test_the_command_says_which_models_go_through_the_history(recordings, tmp_path, capsys):
    robot_file, before, validated = recordings
    frictionless = tmp_path / 'frictionless.yaml'
    description = yaml.safe_load(robot_file.read_text())
    del description['rod']['bending_friction']
    frictionless.write_text(yaml.safe_dump(description))
    for robot, says in ((robot_file, 'goes through the 17 points'),
                        (frictionless, 'starts fresh')):
        assert cli.main(['validate', str(validated), '--robot', str(robot), '--model',
                         'cosserat', '--report', str(tmp_path / 'report'), '--after',
                         str(before)]) == 0
        out = capsys.readouterr().out
        assert f'model cosserat: {says}' in out and str(before) in out


def test_a_model_without_memory_predicts_the_same_after_a_history():
    """The docs' claim: only friction remembers; without it the history changes nothing."""
    robot = load_robot(default_robot_file())
    statics = StickSlipStatics(robot, 'cosserat')

    def holds(commands):
        return [Hold(tensions=c, displacements=None, duration=0.0, samples=1,
                     tip=statics.solve_tensions(c).tip_position) for c in commands]
    before = holds(np.eye(4)[0] * t for t in (0.0, 2.0, 4.0, 2.0))
    validated = holds(np.eye(4)[1] * t for t in (0.0, 1.0))
    # to the solver's tolerance (1e-9 m): the frictionless statics has one equilibrium
    np.testing.assert_allclose(predict(robot, validated, 'cosserat', history=before),
                               predict(robot, validated, 'cosserat'), rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(predict(robot, validated, 'cosserat'),
                               [h.tip for h in validated], rtol=0.0, atol=1e-9)


def test_a_bad_recording_before_exits_2_in_one_line(recordings, tmp_path, capsys):
    robot_file, _, validated = recordings
    assert cli.main(['validate', str(validated), '--robot', str(robot_file), '--report',
                     str(tmp_path / 'report'), '--after', str(tmp_path / 'none.csv')]) == 2
    err = capsys.readouterr().err.strip()
    assert 'error: --after: ' in err and 'none.csv' in err and len(err.splitlines()) == 1
    assert not (tmp_path / 'report').exists()


def test_a_bellows_robot_refuses_a_history_in_one_line(recordings, tmp_path, capsys):
    _, before, validated = recordings
    bellows = share_dir() / 'config' / 'bionic_handling_assistant.yaml'
    assert cli.main(['validate', str(validated), '--robot', str(bellows), '--report',
                     str(tmp_path / 'report'), '--after', str(before)]) == 2
    err = capsys.readouterr().err.strip()
    assert 'error: --after: not for a bellows robot' in err and len(err.splitlines()) == 1
    assert not (tmp_path / 'report').exists()
