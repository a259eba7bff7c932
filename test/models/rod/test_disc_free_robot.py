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
Robots without vertebra discs: tendons routed continuously along the backbone.

The description's ``vertebrae`` key is optional; the cosserat and kirchhoff statics and
what is built on them (calibration, validation, tip control) work without it, and the
models that need discs (dynamic, discrete statics) refuse such a robot with one message
naming the models that work. The closed forms are the circular arc of a tendon anchored
mid-way and the straight continuation beyond its anchor.
"""

import math
import re

import numpy as np
import pytest

from tendon_robot_sim import cli, share_dir
from tendon_robot_sim.control.tip_control import TipController
from tendon_robot_sim.experiment.calibration import CalibrationError, validate
from tendon_robot_sim.experiment.experiment import load_recording, synth_experiment
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics.explicit import InputError, TendonSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

STEEL_FILE = share_dir() / 'config' / 'steel_rod_robot.yaml'
STEEL = load_robot(STEEL_FILE)
WORKING_MODELS = ('without discs use the cosserat or kirchhoff statics (simulator mode '
                  'quasi_static with statics_model cosserat or kirchhoff')


def test_the_shipped_disc_free_robot_loads_and_round_trips():
    assert STEEL.vertebra_positions.shape == (0,)
    data = STEEL.to_dict()
    assert 'vertebrae' not in data
    assert robot_from_dict(data).to_dict() == data
    # an explicit empty set of discs means the same
    assert robot_from_dict(dict(data, vertebrae={'count': 0})).to_dict() == data


def test_a_tendon_anchors_at_any_arc_length_without_discs():
    data = STEEL.to_dict()
    data['tendons'][0]['end'] = 0.1234
    assert robot_from_dict(data).tendons[0].end == 0.1234
    # with discs, the anchor must still be a disc
    data['vertebrae'] = {'count': 5}
    with pytest.raises(RobotDescriptionError, match=r'tendons\[0\].end: a tendon is anchored at '
                                                    r'a vertebra; no vertebra at 0.1234 m'):
        robot_from_dict(data)


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff'])
def test_tendon_anchored_mid_way_bends_an_arc_then_the_rod_runs_straight(model):
    """
    A tendon anchored at s = a bends an arc up to a, then the rod runs straight.

    Without gravity, one parallel tendon anchored at s = a carries the wrench -T d3, T r d2 on
    every cross-section of [0, a) and nothing beyond: an arc of curvature T r / (E I) (stretch v3 =
    1 - T / (E A) in the linear cosserat law, 1 in kirchhoff) up to a, then a straight segment
    along the arc's end tangent.
    """
    data = STEEL.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    anchor, T, r = 0.3, 12.0, STEEL.tendons[0].offset
    data['tendons'] = [dict(data['tendons'][0], end=anchor)]
    robot = robot_from_dict(data)
    rod = robot.rod
    kappa = T * r / rod.bending_stiffness
    v3 = 1.0 if model == 'kirchhoff' else 1.0 - T / (rod.youngs_modulus * rod.area)
    angle = kappa * anchor
    d1, d3 = robot.base.normal, robot.base.direction
    anchor_point = v3 * (math.sin(angle) * d3 + (1.0 - math.cos(angle)) * d1) / kappa
    tangent = math.cos(angle) * d3 + math.sin(angle) * d1
    expected = robot.base.position + anchor_point + (rod.length - anchor) * tangent
    result = StaticsSolver(robot, model).solve_tensions([T])
    np.testing.assert_allclose(result.tip_position, expected, rtol=0.0, atol=1e-6)
    np.testing.assert_allclose(result.tip_rotation[:, 2], tangent, atol=1e-6)


def test_models_that_need_discs_refuse_with_one_message_naming_the_ones_that_work():
    with pytest.raises(StaticsInputError, match=r'^vertebrae: the discrete statics needs '
                                                r'vertebra discs .* this robot has none; '
                                                + re.escape(WORKING_MODELS)):
        StaticsSolver(STEEL, 'discrete')
    with pytest.raises(InputError, match=r'^vertebrae: the explicit dynamic model needs '
                                         r'vertebra discs .* the implicit integrator routes'):
        TendonSimulator(STEEL)


def test_tip_control_runs_on_the_cosserat_model():
    controller = TipController(STEEL, model='cosserat', min_tension=0.5)
    tensions = np.full(4, 0.5)
    tip = StaticsSolver(STEEL, 'cosserat').solve_tensions(tensions).tip_position
    target = tip + 0.01 * STEEL.base.binormal
    step = controller.step(tensions, tip, target, gain=0.5, max_step=0.005)
    assert step.feasible
    assert step.predicted @ STEEL.base.binormal == pytest.approx(0.005, rel=1e-6)


def test_calibration_and_validation_on_the_cosserat_model(tmp_path):
    hidden = STEEL.with_changes(youngs_modulus=STEEL.rod.youngs_modulus * 1.15)
    bag = tmp_path / 'bag'
    synth_experiment(bag, hidden, noise=1e-4, seed=3, hold_duration=1.5, model='cosserat')
    holds = load_recording(bag, STEEL)
    result = calibrate(STEEL, holds, ['youngs_modulus'], model='cosserat', workers=1,
                       progress=False)
    assert result.values[0] == pytest.approx(hidden.rod.youngs_modulus, rel=0.02)
    assert validate(result.robot, holds, 'cosserat', workers=1).rms < 5e-4
    with pytest.raises(CalibrationError, match='vertebra_mass: this robot has no vertebrae'):
        calibrate(STEEL, holds, ['vertebra_mass'], model='cosserat', workers=1, progress=False)


def test_cli_with_the_default_model_says_which_models_work(tmp_path, capsys):
    assert cli.main(['statics', '--robot', str(STEEL_FILE), '--tensions', '2,0,0,0',
                     '--model', 'discrete']) == 2
    err = capsys.readouterr().err
    assert 'needs vertebra discs' in err and 'cosserat or kirchhoff' in err
    assert len(err.strip().splitlines()) == 1
    assert cli.main(['statics', '--robot', str(STEEL_FILE), '--tensions', '2,0,0,0',
                     '--model', 'cosserat', '--json']) == 0
