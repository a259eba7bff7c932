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
``synth-experiment``: both experiments simulate one hidden robot (issue 29, item 7).

The calibration chain of docs/experiments.md calibrates E and G on the holds, then damping and
vertebra mass on a step response starting from that calibration: the step must be simulated on
the robot the holds were, or the chain fits a biased mass. The simulations are replaced by
recorders of the robot they are given (no simulation runs).
"""

import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.commands import synth_experiment as command
from tendon_robot_sim.models.tendon_robot import load_robot


@pytest.fixture
def simulated(monkeypatch):
    """Record (experiment, robot, model) instead of simulating."""
    seen = []

    def holds(path, robot, noise, seed, model):
        seen.append(('holds', robot, model))
        return []

    def step(path, robot, tension, noise, seed):
        seen.append(('step', robot, 'dynamic'))
        return robot.max_tensions * 0.0, [(0.0, None, robot.base.position)]
    monkeypatch.setattr(command, 'synth_experiment', holds)
    monkeypatch.setattr(command, 'synth_step_response', step)
    return seen


def test_holds_and_step_simulate_the_same_hidden_robot(simulated, tmp_path, capsys):
    common = ['--vertebra-mass', '0.003']
    assert main(['synth-experiment', str(tmp_path / 'holds'), *common]) == 0
    assert main(['synth-experiment', str(tmp_path / 'step'), '--experiment', 'step',
                 '--damping-ratio', '0.15', *common]) == 0
    (_, holds, model), (_, step, _) = simulated
    assert model == 'dynamic'                  # not the statics that validate it
    robot = load_robot(default_robot_file())
    for hidden in (holds, step):
        assert hidden.rod.youngs_modulus == pytest.approx(1.15 * robot.rod.youngs_modulus)
        assert hidden.rod.shear_modulus == pytest.approx(0.9 * robot.rod.shear_modulus)
        assert hidden.vertebra_mass == 0.003
    assert step.rod.damping.ratio == 0.15
    assert holds.tendons == step.tendons
    # the discs' twist, 2 degrees at the tip, which the file does not describe
    assert holds.tendons[0].routing == 'helical'
    assert holds.tendons[0].turns * 360.0 == pytest.approx(2.0)
    assert 'discs twisted 2 deg at the tip' in capsys.readouterr().out


def test_no_twist_and_a_statics_truth_on_request(simulated, tmp_path):
    assert main(['synth-experiment', str(tmp_path / 'holds'), '--disc-twist-deg', '0',
                 '--truth-model', 'discrete']) == 0
    (_, hidden, model), = simulated
    assert model == 'discrete' and hidden.tendons[0].routing == 'parallel'
