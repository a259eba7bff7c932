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
The class "physical extremes of every description key": refused by the loader, or usable.

Enforced in one place, ``models.description.check_number``, which every number of every
kind's description passes and which applies ``PHYSICAL_RANGES`` by the key's name. The table
is built from the shipped descriptions of the four kinds, and from those with the optional
keys they leave out: every numeric key (the first item of a list of mappings stands for the
others) is set to 1e-30, 1e30, -1e30 and 0 (the loader must load it or refuse it with one
line naming the key), and to the two ends of its range, where every model of the kind
(``models.registry.create_model``, what the simulator node and the commands build on) must
start, step and take an input, or refuse with one of the documented errors (a bad
description, an input it cannot take, a diverging run), never another exception: a Young's
modulus of 1e-30 Pa once reached PyElastica and ended in an internal error. A new key in a
shipped file needs its range.
"""

import copy
from pathlib import Path
import re

import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.models.description import (DEGREES, key_of, PHYSICAL_RANGES,
                                                 RobotDescriptionError)
from tendon_robot_sim.models.registry import (create_model, LOADERS, ModelConfigurationError,
                                              MODELS)
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
import yaml

ROOT = Path(__file__).resolve().parents[2]
DESCRIPTIONS = ('robot.yaml', 'rolling_joint_snake.yaml', 'pcr_6rus.yaml',
                'bionic_handling_assistant.yaml')
# integers, bounded by their loaders (rod.elements, vertebrae.count)
INTEGER_KEYS = ('elements', 'count')
ABSURD = (1e-30, 1e30, -1e30, 0.0)


def numeric_leaves(data, path=''):
    """Yield the path of every number of a description (first items of lists of mappings)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from numeric_leaves(value, f'{path}.{key}' if path else key)
    elif isinstance(data, list):
        items = data[:1] if data and isinstance(data[0], dict) else data
        for i, value in enumerate(items):
            yield from numeric_leaves(value, f'{path}[{i}]')
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield path


def with_value(data, path: str, value):
    """Return a copy of ``data`` with the number at ``path`` replaced."""
    data = copy.deepcopy(data)
    parts = re.findall(r'[^.\[\]]+|\[\d+\]', path)
    node = data
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith('[') else node[part]
    last = parts[-1]
    node[int(last[1:-1]) if last.startswith('[') else last] = value
    return data


def bounds_of(path: str):
    key = key_of(path)
    return DEGREES if key.endswith('_deg') else PHYSICAL_RANGES.get(key, 'missing')


SHIPPED = {name: yaml.safe_load((ROOT / 'config' / name).read_text()) for name in DESCRIPTIONS}


def with_optional_keys() -> dict:
    """Return the shipped descriptions with the optional keys they leave out, each given."""
    robot = copy.deepcopy(SHIPPED['robot.yaml'])
    robot['rod']['damping'] = {'rate': 5.0}
    robot['tendons'][0].update(routing='helical', turns=0.5, end_offset=0.012, compliance=1e-3,
                               end=0.25)
    bellows = copy.deepcopy(SHIPPED['bionic_handling_assistant.yaml'])
    bellows['sections'][0]['masses'][0]['inertia'] = [1e-4, 1e-4, 1e-4]
    bellows['sections'][0]['bellows'][0].update(rest_length=0.25, min_pressure=-5e4)
    return {'robot.yaml+optional': robot, 'bionic_handling_assistant.yaml+optional': bellows}


SHIPPED.update(with_optional_keys())
LEAVES = [(name, path) for name, data in SHIPPED.items() for path in numeric_leaves(data)]


@pytest.mark.parametrize('name, path', LEAVES, ids=[f'{n}:{p}' for n, p in LEAVES])
def test_every_numeric_key_has_a_physical_range(name, path):
    if key_of(path) in INTEGER_KEYS:
        return
    assert bounds_of(path) != 'missing', (
        f'{name}: {path}: add key {key_of(path)!r} to models.description.PHYSICAL_RANGES')


def kind_of(data) -> str:
    return data.get('kind', 'tendon_robot')


def write(tmp_path, data) -> Path:
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize('name, path', LEAVES, ids=[f'{n}:{p}' for n, p in LEAVES])
def test_an_absurd_value_is_loaded_or_refused_naming_its_key(name, path, tmp_path):
    loader = LOADERS[kind_of(SHIPPED[name])]
    for value in ABSURD:
        file = write(tmp_path, with_value(SHIPPED[name], path, value))
        try:
            loader(file)
        except RobotDescriptionError as error:
            message = str(error)
            assert '\n' not in message
            named = (path.split('[')[0] if path.endswith(']') else path).replace('_deg', '')
            assert named in message or 'must be within' in message, (
                f'{path} = {value:g}: {message}')


# Where the base stands and points only places the robot: loaded and checked, not simulated.
PLACEMENT = ('position', 'direction', 'normal')


def model_cases():
    """(file, key path, value) at both ends of each range; vectors by their first component."""
    for name, path in LEAVES:
        bounds = bounds_of(path)
        if (not isinstance(bounds, tuple) or re.search(r'\[[1-9]\]$', path)
                or key_of(path) in PLACEMENT):
            continue
        for value in bounds[:2]:
            yield pytest.param(name, path, value, id=f'{name}:{path}={value:g}')


DOCUMENTED = (ModelConfigurationError, InputError, SimulationDiverged)


@pytest.mark.parametrize('name, path, value', list(model_cases()))
def test_every_model_takes_a_key_at_the_ends_of_its_range_or_refuses_it(
        name, path, value, tmp_path):
    data = with_value(SHIPPED[name], path, value)
    file = write(tmp_path, data)
    for mode in MODELS[kind_of(data)]:
        try:
            _, _, model = create_model(file, mode)
            field = next(iter(model.inputs.fields))
            model.apply(field, [0.0] * len(model.inputs.names))
            if model.timed:
                model.advance(3 * model.dt)
        except DOCUMENTED as error:
            assert '\n' not in str(error), error


@pytest.mark.parametrize('argv, text', [
    # the audit's cases: the loader refuses them, naming the key
    (['simulate', '--duration', '0.01'], 'rod.youngs_modulus: must be within [1000, 1e+14] Pa'),
    (['cc-dynamics', '--tensions', 't0=1', '--duration', '0.01'], 'rod.youngs_modulus'),
])
def test_a_modulus_of_1e_30_is_bad_input_naming_the_key(argv, text, tmp_path, capsys):
    file = write(tmp_path, with_value(SHIPPED['robot.yaml'], 'rod.youngs_modulus', 1e-30))
    assert cli.main([*argv, '--robot', str(file)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and text in err, err


def test_a_rod_that_cannot_hold_its_weight_says_which_key_to_change(tmp_path, capsys):
    data = with_value(SHIPPED['robot.yaml'], 'vertebrae.mass', 1000.0)
    argv = ['cc-dynamics', '--tensions', 't0=1', '--duration', '0.01', '--robot',
            str(write(tmp_path, data))]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'give rod.damping.rate' in err, err


def test_the_key_the_user_wrote_is_named(tmp_path):
    data = with_value(SHIPPED['robot.yaml'], 'vertebrae.last', 0.5)
    with pytest.raises(RobotDescriptionError, match=r'vertebrae\.last: must be <= rod\.length'):
        LOADERS['tendon_robot'](write(tmp_path, data))
    data = with_value(SHIPPED['robot.yaml'], 'rod.length', 0.3)
    with pytest.raises(RobotDescriptionError, match=r'tendons\[0\]\.end \(default: rod\.length\)'):
        LOADERS['tendon_robot'](write(tmp_path, data))
