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

"""Sensor mounting read from the URDF, and the documented protocol examples."""

import math
from pathlib import Path
import re

import numpy as np
import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.protocol import laser, motor
from tendon_robot_sim.protocol.framing import parse_frame
from tendon_robot_sim.protocol.mounting import MountingError, rpy_matrix, sensor_mount

URDF = """<robot name="r">
  <link name="base_link"/><link name="arm"/><link name="tip_sensor_link"/>
  <joint name="a" type="fixed"><parent link="base_link"/><child link="arm"/>
    <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/></joint>
  <joint name="b" type="fixed"><parent link="arm"/><child link="tip_sensor_link"/>
    <origin xyz="0 2 0" rpy="{rpy}"/></joint>
</robot>"""


def test_rpy_is_fixed_axes_roll_then_pitch_then_yaw():
    # A quarter turn of yaw maps x to y; of pitch, z to x; of roll, y to z (right hand).
    np.testing.assert_allclose(rpy_matrix(0, 0, math.pi / 2) @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(rpy_matrix(0, math.pi / 2, 0) @ [0, 0, 1], [1, 0, 0], atol=1e-12)
    np.testing.assert_allclose(rpy_matrix(math.pi / 2, 0, 0) @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    # Roll first, then yaw: x stays x under roll, then yaw takes it to y.
    r = rpy_matrix(math.pi / 2, 0, math.pi / 2)
    np.testing.assert_allclose(r @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(r @ [0, 1, 0], [0, 0, 1], atol=1e-12)


def test_a_chain_of_fixed_joints_is_composed_from_the_base():
    mount = sensor_mount(URDF.format(rpy='0 0 0'))
    # Joint a: 1 m along x, then turned 90 deg about z, so b's "2 m along y" is -x in base.
    np.testing.assert_allclose(mount.translation, [-1.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(mount.to_base([1.0, 0.0, 0.0]), [-1.0, 1.0, 0.0], atol=1e-12)
    point = np.array([0.3, -0.2, 0.1])
    np.testing.assert_allclose(mount.to_sensor(mount.to_base(point)), point, atol=1e-12)


def test_the_package_urdf_puts_the_sensor_beyond_the_tip_looking_back():
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf')
    # Straight rod tip (0.25, 0, 0) is 0.10 m in front of the sensor, on its x axis.
    np.testing.assert_allclose(mount.to_sensor([0.25, 0.0, 0.0]), [0.10, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(mount.to_sensor([0.25, 0.01, 0.02]), [0.10, -0.01, 0.02],
                               atol=1e-7)


@pytest.mark.parametrize('text, message', [
    (URDF.format(rpy='0 0'), "joint 'b' origin rpy: must be 3 numbers, got '0 0'"),
    (URDF.format(rpy='0 0 0').replace('type="fixed"><parent link="arm"',
                                      'type="revolute"><parent link="arm"'),
     "joint 'b' on the way from 'base_link' to 'tip_sensor_link' must be fixed"),
    (URDF.format(rpy='0 0 0').replace('<parent link="base_link"/>', '<parent link="world"/>'),
     "no joint has child link 'world'"),
    ('<robot', 'not valid XML'),
])
def test_a_urdf_that_does_not_place_the_sensor_is_refused(text, message):
    with pytest.raises(MountingError, match=re.escape(message)):
        sensor_mount(text)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(MountingError, match=f'{tmp_path}/none.urdf: cannot read'):
        sensor_mount(tmp_path / 'none.urdf')


def test_documented_frames_are_valid_and_every_sentence_is_documented():
    doc = (Path(__file__).resolve().parents[2] / 'docs' / 'hardware.md').read_text()
    examples = re.findall(r'\$[A-Z0-9]+,[^*\s]*\*[0-9A-F]{2}', doc)
    assert len(examples) >= 4
    for frame in examples:   # all of them motor driver frames
        motor.TdcrMotorV1().decode(parse_frame(frame.encode() + b'\r\n'))
    for table in (motor.TdcrMotorV1(), laser.TdcrLaserV1()):
        for sentence in table.sentences:
            assert f'`{sentence.name}`' in doc
            for field in sentence.fields + ((sentence.repeated,) if sentence.repeated else ()):
                assert f'`{field.name}`' in doc, f'{sentence.name}.{field.name} undocumented'
