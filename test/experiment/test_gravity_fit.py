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
``calibrate --fit gravity``: where the robot's weight pulls, for a mounting nobody recorded.

The measured tips are the statics of the default robot hanging (its weight along +z of its
base frame, tilted), with motion-capture noise; the fit starts from the file, which has the
robot standing (weight along -z): the components must pass through zero to come back.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.experiment.experiment import Hold
from tendon_robot_sim.experiment.fit_parameters import (FitParameterError, parse_fit,
                                                        with_parameters)
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

NOISE = 1e-4        # m per axis: motion capture
HIDDEN = (1.5, -1.0, 9.6)      # m/s^2: hanging, tilted by about 11 degrees
# each tendon alone at these tensions [N], then two together: bends four ways and at rest
TENSIONS = (0.0, 1.0, 2.0, 3.0)


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def pulls(hidden, noise, seed) -> list[Hold]:
    solver = StaticsSolver(hidden, 'cosserat')
    commands = [np.eye(4)[t] * tension for t in range(4) for tension in TENSIONS]
    commands += [np.array([1.5, 1.5, 0.0, 0.0]), np.array([0.0, 2.0, 2.0, 0.0])]
    noise = np.random.default_rng(seed).normal(0.0, noise, (len(commands), 3))
    return [Hold(tensions=command, displacements=None,
                 tip=solver.solve_tensions(command).tip_position + shift, duration=0.0,
                 samples=1) for command, shift in zip(commands, noise)]


def test_the_parameters_bounds(robot):
    x, y, z = parse_fit(robot, ['gravity'])
    assert (x.name, y.name, z.name) == ('gravity.x', 'gravity.y', 'gravity.z')
    # linear from the file's components, within twice standard gravity either way
    assert (z.initial, z.log) == (-9.80665, False)
    assert (z.low, z.high) == pytest.approx((-2 * 9.80665, 2 * 9.80665), rel=1e-12)
    one, = parse_fit(robot, ['gravity.z'])
    assert one.name == 'gravity.z'
    hanging = with_parameters(robot, {'gravity.z': 9.80665})
    assert hanging.gravity.tolist() == [0.0, 0.0, 9.80665]


@pytest.mark.parametrize('item', ['gravity.w', 'gravity.xy', 'gravity.', 'gravity@segment',
                                  'base.position.xz'])
def test_a_component_that_is_not_one_axis_is_refused_in_one_line(robot, item):
    # 'xy' once passed as an axis (a substring of 'xyz') and fitted y alone; 'gravity.' ended
    # in a traceback
    with pytest.raises(FitParameterError) as error:
        parse_fit(robot, [item])
    assert str(error.value).startswith(f"fit: unknown parameter '{item}'")
    assert '\n' not in str(error.value)


def test_a_hidden_mounting_comes_back_within_its_interval(robot):
    hidden = with_parameters(robot, dict(zip(('gravity.x', 'gravity.y', 'gravity.z'), HIDDEN)))
    # without noise the fit is the truth (no bias from the solves' tolerance)
    exact = calibrate(robot, pulls(hidden, 0.0, seed=0), ['gravity'], model='cosserat',
                      workers=1, progress=False)
    assert exact.values == pytest.approx(HIDDEN, abs=1e-4)
    result = calibrate(robot, pulls(hidden, NOISE, seed=8), ['gravity'], model='cosserat',
                       workers=1, progress=False)
    assert result.names == ('gravity.x', 'gravity.y', 'gravity.z')
    for (low, high), value, truth in zip(result.joint_intervals, result.values, HIDDEN):
        assert low < truth < high
        assert value == pytest.approx(truth, abs=0.01 * 9.80665)
    assert result.robot.gravity == pytest.approx(result.values, rel=1e-12)
    # standing and hanging differ by far more than the noise
    assert result.rms_after < 2.5 * NOISE < 10 * NOISE < result.rms_before
