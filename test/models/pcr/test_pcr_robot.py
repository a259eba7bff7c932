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

"""Parallel continuum robot description (config/pcr_6rus.yaml): geometry and clear errors."""

import math

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot, pcr_robot_from_dict
from tendon_robot_sim.models.tendon_robot import load_robot

ROBOT = load_pcr_robot(default_pcr_file())


def test_geometry_is_the_issue_list():
    # issue 15: M1,2 = (+-0.0675, 0.1261, 0), M3,4 = Rz(120) M1,2, M5,6 = Rz(-120) M1,2
    c, s = math.cos(math.radians(120)), math.sin(math.radians(120))
    Rz = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    m12 = np.array([[0.0675, 0.1261, 0.0], [-0.0675, 0.1261, 0.0]])
    assert_allclose(ROBOT.motor_positions, np.vstack((m12, m12 @ Rz.T, m12 @ Rz)), atol=1e-12)
    # platform joints C1..C6 as the issue lists them (given to 5 decimals)
    joints = [(0.12169, 0.13231), (-0.12169, 0.13231), (-0.17542, 0.03923),
              (-0.05374, -0.17154), (0.05374, -0.17154), (0.17542, 0.03923)]
    assert_allclose(ROBOT.joint_positions[:, :2], joints, atol=1e-5)
    assert_allclose(ROBOT.motor_rotations[2] @ [1, 0, 0], Rz @ [1, 0, 0], atol=1e-12)
    rods = ROBOT.rods
    assert rods.shear_modulus == pytest.approx(110.3e9 / (2 * 1.31))
    assert ROBOT.precurvature == pytest.approx(1 / 0.3005)
    assert_allclose(np.degrees(ROBOT.motor_limits), [-20, 90])
    assert ROBOT.with_changes(compat='dfki2024').precurvature == pytest.approx(1 / 0.3)


def test_round_trip_through_plain_data():
    again = pcr_robot_from_dict(ROBOT.to_dict())
    assert_allclose(again.motor_positions, ROBOT.motor_positions, atol=1e-15)
    assert_allclose(again.joint_positions, ROBOT.joint_positions, atol=1e-15)
    assert again.rods == ROBOT.rods


@pytest.mark.parametrize('change, message', [
    (('kind', 'tdcr'), "kind: must be one of ['bellows', 'pcr_6rus', 'rolling_joint_snake', "
                       "'tendon_robot'], got str 'tdcr'"),
    (('kind', 'tendon_robot'), 'kind: tendon_robot is a tendon-driven continuum robot; this '
                               'takes a 6-RUS parallel continuum robot, kind pcr_6rus'),
    (('compat', 'dfki'), "compat: must be one of ['paper', 'dfki2024']"),
    (('rods', 'poisson_ratio', 0.7), 'rods.poisson_ratio: must be within [0, 0.5]'),
    (('rods', 'length', -1), 'rods.length: must be > 0, got -1'),
    (('rods', 'stiffness', 3), 'rods.stiffness: unknown key'),
    (('motors', 'limits', [1.5, -0.3]), 'motors.limits: lower limit must be below the upper'),
    (('motors', 'limits', [-20, 90]), 'motors.limits: [-20, 90] rad is more than a full turn; '
                                      'angles are radians (REP 103): for degrees write '
                                      'limits_deg: [-20, 90]'),
    (('motors', 'pair', [[0, 0, 0]]), 'motors.pair: must be a list of 2 points'),
    (('platform', 'pair', [[0, 0], [1, 1, 0]]), 'platform.pair[0]: must be a list of 3 numbers'),
    (('platform', 'mass', 'heavy'), 'platform.mass: must be a number'),
    # two rods cannot start or end in one place: motors or platform joints closer than a rod's
    # diameter (2 x 2 mm) would put two rods inside each other; all six joints at the centre
    # leave the platform free to turn about it. Before, these loaded, and fk reported the
    # motor angles "out of reach of the rigid-link robot"
    (('motors', 'pair', [[0.0675, 0.1261, 0.0], [0.0675, 0.1261, 0.0]]),
     'motors.pair: motors M1 and M2 are 0 m apart'),
    (('motors', 'pair', [[0.0675, 0.1261, 0.0], [0.0640, 0.1261, 0.0]]),
     'motors.pair: motors M1 and M2 are 0.0035 m apart'),
    (('motors', 'pair_angles', [0.0, 2.0944, 2.0944]),
     'motors.pair_angles: motors M3 and M5 are 0 m apart'),
    (('platform', 'pair', [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
     'platform.pair: joints C1 and C2 are 0 m apart'),
    (('platform', 'pair', [[0.0, 0.0, 0.01], [0.1, 0.0, 0.0]]),
     'platform.pair: joints C1 and C3 are 0 m apart'),
])
def test_bad_values_name_the_key(change, message):
    data = ROBOT.to_dict()
    *path, value = change
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(RobotDescriptionError) as info:
        pcr_robot_from_dict(data)
    assert message in str(info.value)


def test_missing_key_and_file_name_in_message(tmp_path):
    data = ROBOT.to_dict()
    del data['rods']['density']
    with pytest.raises(RobotDescriptionError, match='rods.density: required key is missing'):
        pcr_robot_from_dict(data)
    path = tmp_path / 'bad.yaml'
    path.write_text('kind: pcr_6rus\nname: x\n')
    with pytest.raises(RobotDescriptionError, match=r'bad.yaml: rods: required key'):
        load_pcr_robot(path)


def test_tendon_loader_refuses_a_parallel_robot_file():
    # one clear error naming both kinds, no traceback from deep inside
    with pytest.raises(RobotDescriptionError, match=r'pcr_6rus.yaml: kind: pcr_6rus is a 6-RUS '
                       r'parallel continuum robot; this takes a tendon-driven continuum robot, '
                       r'kind tendon_robot \(or no kind\)$'):
        load_robot(default_pcr_file())
