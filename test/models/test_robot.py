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

"""Robot description loader: the default file, derived values, and clear errors."""

import math
import re
import time

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import Damping, load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())


def write(tmp_path, text, name='robot.yaml'):
    path = tmp_path / name
    path.write_text(text)
    return path


MINIMAL = """
name: test
rod: {length: 0.2, radius: 0.005, density: 1000, youngs_modulus: 1e6, shear_modulus: 4e5}
vertebrae: {count: 4}
tendons:
  - {name: a, offset: 0.01, angle_deg: 0}
"""


def data(**changes):
    """Return the default robot as plain data with top-level or dotted keys replaced."""
    d = DEFAULT.to_dict()
    for key, value in changes.items():
        target = d
        *parents, last = key.split('__')
        for parent in parents:
            target = target[int(parent)] if parent.isdigit() else target[parent]
        if value is ...:
            del target[last]
        else:
            target[last] = value
    return d


# ------------------------------------------------------------------ the default robot


def test_default_robot_values():
    robot = DEFAULT
    assert robot.name == 'silicone_tdcr'
    assert robot.base.frame_id == 'base_link'
    assert robot.rod.youngs_modulus == 16.6e6 and isinstance(robot.rod.youngs_modulus, float)
    assert robot.rod.shear_modulus == 7.22e6
    assert robot.rod.elements % 10 == 0         # vertebrae every L/10 fall on nodes
    assert_allclose(robot.vertebra_positions, np.arange(1, 11) * 0.025)
    assert robot.vertebra_mass == 0.002
    assert robot.tendon_names == ['t0', 't1', 't2', 't3']
    assert_allclose([t.angle for t in robot.tendons], np.radians([0, 90, 180, 270]))
    assert all(t.end == robot.rod.length for t in robot.tendons)
    assert_allclose(robot.max_tensions, 20.0)
    assert_allclose(robot.gravity, [0.0, 0.0, -9.80665])
    assert_allclose(robot.tip_load.force, 0.0)


def test_angles_are_radians_unless_the_key_says_degrees(tmp_path):
    """REP 103: a bare ``angle`` is radians; degrees only under ``angle_deg``."""
    in_radians = load_robot(write(tmp_path, MINIMAL.replace('angle_deg: 0', 'angle: 1.5'),
                                  'radians.yaml'))
    in_degrees = load_robot(write(tmp_path, MINIMAL.replace('angle_deg: 0', 'angle_deg: 90')))
    assert in_radians.tendons[0].angle == 1.5
    assert in_degrees.tendons[0].angle == pytest.approx(math.pi / 2, abs=1e-15)
    # the description written back is radians under the bare key and loads to the same robot
    written = in_degrees.to_dict()['tendons'][0]
    assert 'angle_deg' not in written
    assert robot_from_dict(in_degrees.to_dict()).tendons[0].angle == in_degrees.tendons[0].angle


def test_base_frame_is_right_handed():
    base = DEFAULT.base
    assert_allclose(base.direction, [1, 0, 0])
    assert_allclose(base.normal, [0, 0, 1])
    assert_allclose(base.binormal, [0, -1, 0])          # d2 = d3 x d1
    assert_allclose(base.rotation, np.column_stack(([0, 0, 1], [0, -1, 0], [1, 0, 0])))
    assert np.linalg.det(base.rotation) == pytest.approx(1.0)


def test_rod_derived_quantities():
    rod = DEFAULT.rod
    r = 0.0055
    assert rod.area == pytest.approx(math.pi * r ** 2)
    assert rod.second_moment == pytest.approx(math.pi * r ** 4 / 4)
    assert rod.polar_moment == pytest.approx(math.pi * r ** 4 / 2)
    assert rod.bending_stiffness == pytest.approx(16.6e6 * math.pi * r ** 4 / 4)
    assert rod.linear_density == pytest.approx(997.7 * math.pi * r ** 2)


def test_round_trip_and_with_changes():
    again = robot_from_dict(DEFAULT.to_dict())
    assert again.to_dict() == DEFAULT.to_dict()
    finer = DEFAULT.with_changes(elements=100, damping={'rate': 2.5},
                                 end_joint_correction=False)
    assert (finer.rod.elements, finer.rod.damping) == (100, Damping(rate=2.5))
    assert not finer.rod.end_joint_correction
    assert DEFAULT.rod.damping == Damping(ratio=0.1) and DEFAULT.rod.end_joint_correction
    assert (DEFAULT.disc_radius, DEFAULT.disc_thickness) == (0.018, 0.002)
    with pytest.raises(RobotDescriptionError, match=r'^rod.elements: must be >= 2, got 1$'):
        DEFAULT.with_changes(elements=1)


def test_tendon_index():
    assert DEFAULT.tendon_index('t2') == 2
    with pytest.raises(KeyError, match=r"unknown tendon 'x'; known tendons: \['t0', 't1'"):
        DEFAULT.tendon_index('x')


# ------------------------------------------------------------------ holes


def test_parallel_hole_is_constant():
    tendon = DEFAULT.tendons[1]                     # 90 degrees: on d2
    r, r_s, r_ss = tendon.hole(np.array([0.0, 0.1, 0.25]))
    assert_allclose(r, np.array([[0, 0, 0], [0.015] * 3, [0, 0, 0]]), atol=1e-15)
    assert_allclose(r_s, 0.0, atol=1e-15)
    assert_allclose(r_ss, 0.0, atol=1e-15)
    assert tendon.hole(0.1)[0].shape == (3,)


@pytest.mark.parametrize('tendon', [
    {'name': 'h', 'offset': 0.01, 'angle_deg': 30, 'routing': 'helical', 'turns': 1.5},
    {'name': 't', 'offset': 0.01, 'angle_deg': 30, 'routing': 'tapered', 'end_offset': 0.004,
     'end': 0.125},
    {'name': 'b', 'offset': 0.012, 'angle_deg': -45, 'routing': 'helical', 'turns': -0.5,
     'end_offset': 0.006},
])
def test_hole_path_and_derivatives(tendon):
    t = robot_from_dict(data(tendons=[tendon])).tendons[0]
    s = np.linspace(0.0, t.end, 7)
    r, r_s, r_ss = t.hole(s)
    rho = t.offset + (t.end_offset - t.offset) * s / t.end
    theta = t.angle + 2 * math.pi * t.turns * s / t.end
    assert_allclose(r, np.stack((rho * np.cos(theta), rho * np.sin(theta), 0 * s)), atol=1e-15)
    h = 1e-6
    assert_allclose(r_s, (t.hole(s + h)[0] - t.hole(s - h)[0]) / (2 * h), atol=1e-7)
    assert_allclose(r_ss, (t.hole(s + h)[1] - t.hole(s - h)[1]) / (2 * h), atol=1e-5)


# ------------------------------------------------------------------ YAML


def test_exponent_without_dot_reads_as_a_float(tmp_path):
    text = MINIMAL.replace('youngs_modulus: 1e6', 'youngs_modulus: 16.6e6').replace(
        'shear_modulus: 4e5', 'shear_modulus: 7.22E+6')
    robot = load_robot(write(tmp_path, text))
    assert robot.rod.youngs_modulus == 16.6e6
    assert robot.rod.shear_modulus == 7.22e6


def test_minimal_file_gets_defaults(tmp_path):
    robot = load_robot(write(tmp_path, MINIMAL))
    assert robot.rod.elements == 50 and robot.rod.damping == Damping(ratio=0.1)
    assert robot.rod.end_joint_correction
    # discs reach 3 mm beyond the outermost hole
    assert (robot.disc_radius, robot.disc_thickness) == pytest.approx((0.013, 0.002))
    assert_allclose(robot.vertebra_positions, [0.05, 0.1, 0.15, 0.2])
    assert_allclose(robot.gravity, [0, 0, -9.80665])
    assert robot.tendons[0].routing == 'parallel' and robot.tendons[0].end == 0.2
    assert robot.base.frame_id == 'base_link'


@pytest.mark.parametrize('text, message', [
    ('name: [unclosed', r'robot.yaml: not valid YAML'),
    ('- just\n- a list', r'robot.yaml: robot description: must be a mapping, got list'),
    ('', r'robot.yaml: robot description: must be a mapping, got nothing'),
    (MINIMAL + 'colour: red\n', r'robot.yaml: colour: unknown key \(known keys: \['),
    (MINIMAL.replace('length:', 'lenght:'), r'robot.yaml: rod.length: required key is missing'),
    (MINIMAL.replace('name: test\n', ''), r'robot.yaml: name: required key is missing'),
    (MINIMAL.replace('offset: 0.01', 'offset: -0.01'),
     r'robot.yaml: tendons\[0\].offset: must be > 0, got -0.01$'),
    (MINIMAL.replace('density: 1000', 'density: abc'),
     r"robot.yaml: rod.density: must be a number, got str 'abc'"),
    (MINIMAL.replace('density: 1000', 'density: .nan'), r'rod.density: must be finite, got nan'),
])
def test_bad_files(tmp_path, text, message):
    with pytest.raises(RobotDescriptionError, match=message):
        load_robot(write(tmp_path, text))


def test_missing_file_names_it(tmp_path):
    with pytest.raises(RobotDescriptionError, match=r'nope.yaml: cannot read: No such file'):
        load_robot(tmp_path / 'nope.yaml')


@pytest.mark.parametrize('changes, message', [
    ({'tendons__2__offset': -0.01}, r'^tendons\[2\].offset: must be > 0, got -0.01$'),
    ({'tendons__1__colour': 'red'}, r'^tendons\[1\].colour: unknown key'),
    ({'tendons__0__angle': ...}, r'^tendons\[0\].angle: required key is missing \(radians; '
                                 r"or 'angle_deg' in degrees\)$"),
    ({'tendons__0__angle_deg': 90.0}, r'^tendons\[0\].angle: give the angle once, in radians '
                                      r"under 'angle' or in degrees under 'angle_deg', not both$"),
    ({'tendons__1__angle': 90.0}, r'^tendons\[1\].angle: 90 rad is more than a full turn; angles '
                                  r'are radians \(REP 103\): for degrees write angle_deg: 90$'),
    ({'tendons__0__routing': 'zigzag'},
     r"^tendons\[0\].routing: must be one of \['parallel', 'helical', 'tapered'\], "
     r"got str 'zigzag'$"),
    ({'tendons__0__turns': 1.0}, r'^tendons\[0\].routing: parallel routing needs turns = 0'),
    ({'tendons__0__routing': 'helical'}, r'^tendons\[0\].turns: helical routing needs turns'),
    ({'tendons__0__routing': 'tapered'}, r'^tendons\[0\].end_offset: tapered routing needs'),
    ({'tendons__3__name': 't0'}, r"^tendons\[3\].name: duplicate tendon name 't0'$"),
    ({'tendons__0__end': 0.11}, r'^tendons\[0\].end: a tendon is anchored at a vertebra; '
                                r'no vertebra at 0.11 m'),
    ({'tendons__0__end': 0.3}, r'^tendons\[0\].end: must be <= rod.length \(0.25\), got 0.3$'),
    ({'tendons__0__max_tension': 0}, r'^tendons\[0\].max_tension: must be > 0, got 0$'),
    ({'tendons__0__compliance': -1e-3}, r'^tendons\[0\].compliance: must be >= 0, got -0.001$'),
    ({'tendons': []}, r'^tendons: must be a non-empty list, got list \[\]$'),
    ({'rod__elements': 50.0}, r'^rod.elements: must be an integer, got float 50.0$'),
    ({'rod__elements': True}, r'^rod.elements: must be an integer, got bool True$'),
    ({'rod__radius': 0.3}, r'^rod.radius: must be smaller than rod.length \(0.25\), got 0.3$'),
    ({'rod__damping': 0.1}, r'^rod.damping: must be a mapping, got float 0.1$'),
    ({'rod__damping': {'ratio': -0.1}}, r'^rod.damping.ratio: must be >= 0, got -0.1$'),
    ({'rod__damping': {'ratio': 1.0}}, r'^rod.damping.ratio: must be < 1 '),
    ({'rod__damping': {'ratio': 0.1, 'rate': 2.0}},
     r'^rod.damping: give exactly one of ratio .*, rate \(1/s\) or the Kelvin-Voigt '
     r"coefficients .*, got \['rate', 'ratio'\]$"),
    # the Kelvin-Voigt form (implicit dynamics), drag and the tendons' motor side
    ({'rod__damping': {'ratio': 0.1, 'bending_torsion': [1e-3] * 3}},
     r"^rod.damping: give exactly one of .*, got \['bending_torsion', 'ratio'\]$"),
    ({'rod__damping': {'bending_torsion': [1e-3, -1e-3, 0.0]}},
     r'^rod.damping.bending_torsion\[1\]: must be within \[0, 1e\+06\] N m\^2 s .*, got -0.001$'),
    ({'rod__damping': {'shear_extension': [float('nan'), 0.0, 0.0]}},
     r'^rod.damping.shear_extension\[0\]: must be finite, got nan$'),
    ({'rod__damping': {'bending_torsion': [1e-3, 1e-3]}},
     r'^rod.damping.bending_torsion: must be a list of 3 numbers'),
    ({'rod__drag': [0.0, 0.0, -1.0]},
     r'^rod.drag\[2\]: must be within \[0, 1e\+06\] kg/m\^2 .*, got -1$'),
    ({'rod__drag': [0.0, float('nan'), 0.0]}, r'^rod.drag\[1\]: must be finite, got nan$'),
    ({'rod__drag': [0.0, 1e300, 0.0]}, r'^rod.drag\[1\]: must be within \[0, 1e\+06\]'),
    ({'tendons__0__motor_distance': -0.1},
     r'^tendons\[0\].motor_distance: must be >= 0, got -0.1$'),
    ({'tendons__1__compliance': float('nan')},
     r'^tendons\[1\].compliance: must be finite, got nan$'),
    ({'tendons__1__compliance': 5.0},
     r'^tendons\[1\].compliance: must be within \[0, 1\] 1/N .*, got 5$'),
    ({'rod__damping': {'zeta': 0.1}}, r'^rod.damping: give exactly one of ratio'),
    ({'rod__damping': {'rate': -1}}, r'^rod.damping.rate: must be >= 0, got -1$'),
    ({'rod__end_joint_correction': 'yes'},
     r"^rod.end_joint_correction: must be true or false, got str 'yes'$"),
    ({'vertebrae__radius': 0}, r'^vertebrae.radius: must be > 0, got 0$'),
    ({'vertebrae__thickness': 0}, r'^vertebrae.thickness: must be > 0, got 0$'),
    ({'rod__youngs_modulus': 0}, r'^rod.youngs_modulus: must be > 0, got 0$'),
    ({'gravity': [0, -9.8]}, r'^gravity: must be a list of 3 numbers, got list \[0, -9.8\]$'),
    ({'gravity': [0, 'x', 0]}, r"^gravity\[1\]: must be a number, got str 'x'$"),
    ({'base__normal': [1, 0, 0]}, r'^base.normal: must be perpendicular to base.direction, '
                                  r'got dot product 1$'),
    ({'base__direction': [0, 0, 0]}, r'^base.direction: must be a non-zero vector$'),
    ({'base__frame_id': ''}, r"^base.frame_id: must be a non-empty string, got str ''$"),
    ({'vertebrae__positions': [0.1, 0.05, 0.25]},
     r'^vertebrae.positions: must be strictly increasing$'),
    ({'vertebrae__positions': [0.0, 0.25]},
     r'^vertebrae.positions\[0\]: must be in \(0, rod.length = 0.25\], got 0.0$'),
    ({'vertebrae__count': 3}, r'^vertebrae.count: give either positions or count/first/last'),
    ({'vertebrae__mass': -1}, r'^vertebrae.mass: must be >= 0, got -1$'),
    ({'tip_load__torque': [0, 0, 0]}, r'^tip_load.torque: unknown key'),
    ({'rod': ...}, r'^rod: required key is missing$'),
])
def test_bad_descriptions(changes, message):
    with pytest.raises(RobotDescriptionError, match=message):
        robot_from_dict(data(**changes))


def test_vertebrae_from_count_first_last():
    robot = robot_from_dict(data(vertebrae={'count': 4, 'first': 0.1, 'last': 0.25}))
    assert_allclose(robot.vertebra_positions, [0.1, 0.15, 0.2, 0.25])
    robot = robot_from_dict(data(vertebrae={'count': 1}))
    assert_allclose(robot.vertebra_positions, [0.25])
    with pytest.raises(RobotDescriptionError, match=r'^vertebrae.first: must be < '):
        robot_from_dict(data(vertebrae={'count': 3, 'first': 0.25}))


def test_base_vectors_are_normalised():
    robot = robot_from_dict(data(base={'direction': [0, 0, 2], 'normal': [3, 0, 0]}))
    assert_allclose(robot.base.direction, [0, 0, 1])
    assert_allclose(robot.base.normal, [1, 0, 0])
    assert_allclose(robot.base.binormal, [0, 1, 0])


def _variant(text: str, pattern: str, replacement: str) -> str:
    """
    Return ``text`` with the one match of the regular expression ``pattern`` replaced.

    A default file that no longer matches fails here, instead of leaving a harmless file to test.
    """
    changed, count = re.subn(pattern, replacement, text)
    assert count == 1, f'{pattern!r} matches {count} times in the default robot file'
    return changed


def _hostile(text_of_default):
    """Variants of the default robot file, as bytes, that an attacker or a slip could write."""
    return {
        'a 401-digit integer': (
            _variant(text_of_default, r'elements: \d+', 'elements: ' + '9' * 401),
            'rod.elements: must be <= 1000, got an integer of about 401'),
        'not UTF-8': (_variant(text_of_default, r'(?m)^name: ', 'name: \xff').encode('latin-1'),
                      'not UTF-8 text'),
        '5000 nested brackets': ('[' * 5000 + ']' * 5000, 'nested deeper than 20 levels'),
        'a huge count': (_variant(text_of_default, r'count: \d+', 'count: 100000000000'),
                         'vertebrae.count: must be <= 1000'),
        'an alias bomb': ('a: &a [x, x, x, x, x, x, x, x, x]\n' + ''.join(
            f'{b}: &{b} [*{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}, *{a}]\n'
            for a, b in zip('abcdefgh', 'bcdefghi')), 'aliases (*name) are not allowed'),
        'three million elements': (_variant(text_of_default, r'elements: \d+',
                                            'elements: 3000000'),
                                   'rod.elements: must be <= 1000'),
        'a 1e-300 m rod': (_variant(text_of_default, r'length: [\d.]+', 'length: 1.0e-300'),
                           'rod.length: must be within [0.001, 100] m'),
        'a 2 MB file': (text_of_default + '#' * 2_000_000, 'larger than 1000000 bytes'),
        'a 5000-digit integer': (
            _variant(text_of_default, r'elements: \d+', 'elements: ' + '9' * 5000),
            'cannot parse: ValueError'),
    }


@pytest.mark.parametrize('case', list(_hostile(default_robot_file().read_text())))
def test_hostile_files_fail_fast_with_one_line(tmp_path, case):
    content, message = _hostile(default_robot_file().read_text())[case]
    path = tmp_path / 'robot.yaml'
    if isinstance(content, str):
        path.write_text(content)
    else:
        path.write_bytes(content)
    # Fast: CPU time of this thread (a YAML bomb or a huge array burns seconds of it; wall
    # time would measure the machine's load too).
    start = time.thread_time()
    with pytest.raises(RobotDescriptionError) as error:
        load_robot(path)
    assert time.thread_time() - start < 2.0
    text = str(error.value)
    assert text.startswith(f'{path}: ') and message in text and '\n' not in text
    assert len(text) < 800


def test_a_node_main_exits_with_the_line_not_a_traceback(tmp_path, capfd):
    from tendon_robot_sim.nodes.tension_controller_node import main
    path = tmp_path / 'robot.yaml'
    path.write_text('[' * 5000 + ']' * 5000)
    assert main(['--ros-args', '-p', f'robot_file:={path}']) == 1
    err = capfd.readouterr().err
    assert 'cannot start' in err and 'nested deeper than 20 levels' in err
    assert 'Traceback' not in err


def test_kind_is_optional_for_a_tendon_robot_and_checked_when_given():
    assert robot_from_dict(data(kind='tendon_robot')).to_dict() == DEFAULT.to_dict()
    with pytest.raises(RobotDescriptionError, match=r"^kind: must be one of \['bellows', "
                                                    r"'pcr_6rus', 'rolling_joint_snake', "
                                                    r"'tendon_robot'\], got str 'tdcr'$"):
        robot_from_dict(data(kind='tdcr'))
    with pytest.raises(RobotDescriptionError, match=r'^kind: bellows is a bellows-actuated '
                                                    r'continuum robot; this takes a tendon'):
        robot_from_dict(data(kind='bellows'))
