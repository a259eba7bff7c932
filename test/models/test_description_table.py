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
The description-key table of docs/tendon_robot.md against the loader (issue 27's keys).

Each row's unit, default and range are the loader's: the default when the key is left out, the
range of ``PHYSICAL_RANGES`` (``models/description.py``) by the key's name, enforced with an
error naming the key.
"""

import math
from pathlib import Path
import re

import pytest
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.description import (DEGREES, PHYSICAL_RANGES,
                                                 RobotDescriptionError)
from tendon_robot_sim.models.tendon_robot import DEFAULT_DAMPING_RATIO, load_robot, robot_from_dict

DOC = (Path(__file__).resolve().parents[2] / 'docs' / 'tendon_robot.md').read_text()
STEEL = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml').to_dict()


def number(value: float) -> str:
    """Write a number as the docs do: 1e9, 100, 0."""
    return f'{value:g}'.replace('e+0', 'e').replace('e+', 'e')


def row(key: str) -> str:
    return next(line for line in DOC.splitlines() if line.startswith(f'| {key} |'))


def test_the_rows_give_the_loaders_units_defaults_and_ranges():
    compliance, motor, drag = (PHYSICAL_RANGES[key]
                               for key in ('compliance', 'motor_distance', 'drag'))
    se, bt = PHYSICAL_RANGES['shear_extension'], PHYSICAL_RANGES['bending_torsion']
    assert (f'({compliance[2]}, default 0, at most {number(compliance[1])})'
            in row('`tendons[i].compliance`'))
    assert row('`tendons[i].motor_distance`').startswith(
        f'| `tendons[i].motor_distance` | {motor[2]} of tendon between the motor and its hole in '
        f'the base (default 0, at most {number(motor[1])})')
    kelvin_voigt = row('`rod.damping` (Kelvin-Voigt)')
    assert (f'`{{shear_extension: [3 values, {se[2]}], bending_torsion: [3 values, {bt[2]}]}}`'
            in kelvin_voigt)
    assert (f'each value in [{number(se[0])}, {number(se[1])}] {se[2]} resp. '
            f'[{number(bt[0])}, {number(bt[1])}] {bt[2]}' in kelvin_voigt)
    text = row('`rod.drag`')
    assert f'`[3 values]` in {drag[2]} (default 0)' in text
    assert f'each in [{number(drag[0])}, {number(drag[1])}]' in text
    assert f'the damping ratio of the first bending mode (default {DEFAULT_DAMPING_RATIO:g},' \
        in row('`rod.damping`')


def test_the_defaults_are_the_loaders():
    robot = robot_from_dict(STEEL)       # the steel file gives none of these keys
    assert all(t.compliance == 0.0 and t.motor_distance == 0.0 for t in robot.tendons)
    assert robot.rod.drag == (0.0, 0.0, 0.0)
    assert robot.rod.damping.ratio == DEFAULT_DAMPING_RATIO


def kelvin_voigt(name):
    def put(data, value):
        other = 'bending_torsion' if name == 'shear_extension' else 'shear_extension'
        data['rod']['damping'] = {name: [value] * 3, other: [0.0] * 3}
        return lambda robot: getattr(robot.rod.damping, name)[0]
    return put


def tendon(name):
    def put(data, value):
        data['tendons'][0][name] = value
        return lambda robot: getattr(robot.tendons[0], name)
    return put


def rod_drag(data, value):
    data['rod']['drag'] = [value] * 3
    return lambda robot: robot.rod.drag[0]


@pytest.mark.parametrize('key, path, put', [
    ('compliance', 'tendons[0].compliance', tendon('compliance')),
    ('motor_distance', 'tendons[0].motor_distance', tendon('motor_distance')),
    ('shear_extension', 'rod.damping.shear_extension', kelvin_voigt('shear_extension')),
    ('bending_torsion', 'rod.damping.bending_torsion', kelvin_voigt('bending_torsion')),
    ('drag', 'rod.drag', rod_drag),
])
def test_the_range_is_enforced_naming_the_key(key, path, put):
    low, high, unit, _ = PHYSICAL_RANGES[key]
    for value in (low, high):
        data = dict(STEEL, tendons=[dict(t) for t in STEEL['tendons']], rod=dict(STEEL['rod']))
        read = put(data, value)
        assert read(robot_from_dict(data)) == value
    for value in (-1e-9, high * 1.01):
        data = dict(STEEL, tendons=[dict(t) for t in STEEL['tendons']], rod=dict(STEEL['rod']))
        put(data, value)
        with pytest.raises(RobotDescriptionError,
                           match=rf'^{re.escape(path)}(\[\d\])?: must be') as error:
            robot_from_dict(data)
        assert value < 0 or f'{high:g}] {unit}' in str(error.value)


def test_the_angle_row_gives_the_ranges_the_loader_enforces():
    """A tendon's angle within a full turn either way: [-2 pi, 2 pi] rad, [-360, 360] deg."""
    low, high, unit, _ = DEGREES
    assert (f'radians from d1 towards d2, within [-2 pi, 2 pi] (or `angle_deg` in degrees, '
            f'within [{number(low)}, {number(high)}] {unit})' in row('`tendons[i].angle`'))
    for key, limit, beyond in (('angle', 2.0 * math.pi, 2.0 * math.pi + 1e-9),
                               ('angle_deg', high, high + 1e-9)):
        for sign in (1.0, -1.0):
            data = dict(STEEL, tendons=[dict(t) for t in STEEL['tendons']])
            data['tendons'][0].pop('angle', None)
            data['tendons'][0][key] = sign * limit
            angle = robot_from_dict(data).tendons[0].angle
            assert angle == pytest.approx(sign * 2.0 * math.pi, abs=1e-12)
            data['tendons'][0][key] = sign * beyond
            with pytest.raises(RobotDescriptionError, match=rf'^tendons\[0\]\.{key}: '):
                robot_from_dict(data)


def with_tendon(description: dict, **changes) -> dict:
    """Return the description with its first tendon changed; discs (if any) around the holes."""
    data = dict(description, tendons=[dict(t) for t in description['tendons']])
    data['tendons'][0].update(changes)
    if 'vertebrae' in data:
        data['vertebrae'] = {k: v for k, v in data['vertebrae'].items() if k != 'radius'}
    return data


@pytest.mark.parametrize('discs', [False, True], ids=['without discs', 'with discs'])
def test_a_hole_farther_out_than_the_rod_is_long_is_refused_as_a_length_in_mm(discs):
    """
    The offset row's bound: up to rod.length, with or without discs, offset or end_offset.

    An offset of 8 (8 mm written as m) on a 0.2 m rod without discs loaded, and then no statics
    converged.
    """
    assert 'no farther out than the rod is long (`rod.length`), with or without discs' in row(
        '`tendons[i].offset`')
    description = (load_robot(share_dir() / 'config' / 'robot.yaml').to_dict() if discs
                   else STEEL)
    length = description['rod']['length']
    robot = robot_from_dict(with_tendon(description, offset=length, end_offset=length))
    assert robot.tendons[0].offset == length
    for changes, key in (({'offset': 8.0, 'end_offset': 8.0}, 'offset'),
                         ({'routing': 'tapered', 'end_offset': 1.01 * length}, 'end_offset')):
        with pytest.raises(RobotDescriptionError,
                           match=rf'^tendons\[0\]\.{key}: a hole \S+ m from the backbone is '
                                 rf'farther out than the rod is long \(rod.length '
                                 rf'{length:g} m\); a length in mm\?$'):
            robot_from_dict(with_tendon(description, **changes))
