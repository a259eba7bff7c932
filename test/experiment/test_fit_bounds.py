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
A fit's bounds lie within what the robot description loader accepts, for every --fit option.

The optimiser may end anywhere within its bounds; ``calibrate`` writes the robot there. A
bound the loader refuses (a damping ratio of 1, a compliance of 5 1/N) gave a calibrated file
that cannot be loaded again, or a fit that stopped at the loader's wall without saying so.
The expectations are the loader's refusals themselves (each robot at each bound is written
as YAML and loaded again), never the bounds the code under test computes.
"""

import copy

import pytest

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.experiment.experiment import synth_step_response
from tendon_robot_sim.experiment.fit_parameters import (FitParameterError, parse_fit,
                                                        robot_with)
from tendon_robot_sim.models.modal import mass_proportional_damping
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
import yaml

ALL = [f'tendons__{i}__' for i in range(4)]
# (--fit item, changes to config/robot.yaml): a start from which the default bounds (start
# / 10 .. start x 10, start +- a rod length, ...) reach beyond the loader's range; each start
# itself loads
CASES = [
    ('damping', {}),                                       # ratio 0.1: x 10 is 1, refused
    ('damping', {'rod__damping': {'ratio': 0.5}}),
    ('damping', {'rod__damping': {'rate': 5e5}}),
    ('youngs_modulus', {'rod__youngs_modulus': 5e3}),
    ('youngs_modulus', {'rod__youngs_modulus': 5e13}),
    ('shear_modulus', {'rod__shear_modulus': 5e2}),
    ('density', {'rod__density': 5e4}),
    ('density', {'rod__density': 5.0}),
    ('radius', {'rod__radius': 0.05}),                     # x 10 is longer than the rod
    ('vertebra_mass', {'vertebrae__mass': 500.0}),
    ('*.compliance', {f'{t}compliance': 0.5 for t in ALL}),
    ('*.motor_distance', {'rod__length': 20.0}),
    ('t0.angle', {'tendons__0__angle': 6.2}),
    ('drag', {'rod__drag': [1e4, 1e4, 2e5]}),              # the components in proportion
    ('bending_torsion', {'rod__damping': {'shear_extension': [0.0] * 3,
                                          'bending_torsion': [1e5, 1e5, 2e5]}}),
    ('shear_extension', {'rod__damping': {'shear_extension': [5e8] * 3,
                                          'bending_torsion': [1.0] * 3}}),
    ('base.position.x', {'base__position': [999.9, 0.0, 0.0]}),
    ('tip_marker.z', {'tip_marker': [0.0, 0.0, 9.95]}),
    ('bending_friction.moment', {'rod__youngs_modulus': 1e14}),
    ('bending_friction.stiffness_ratio', {}),
    ('*.friction', {}),
    ('bending_friction.tension_arm', {}),
    ('gravity', {'gravity': [0.0, 0.0, -99.0]}),
    ('*.offset', {}),
    ('*.pretension', {f'{t}compliance': 0.01 for t in ALL}),
]


@pytest.fixture(scope='module')
def data():
    return load_robot(default_robot_file()).to_dict()


def _changed(data: dict, changes: dict):
    data = copy.deepcopy(data)
    for path, value in changes.items():
        *keys, last = path.split('__')
        target = data
        for key in keys:
            target = target[int(key)] if key.isdigit() else target.setdefault(key, {})
        target[last] = value
    return robot_from_dict(data)


def _reloaded(robot, tmp_path):
    """Write ``robot`` as calibrate does (its to_dict as YAML) and load the file again."""
    path = tmp_path / 'calibrated.yaml'
    path.write_text(yaml.safe_dump(robot.to_dict(), sort_keys=False))
    return load_robot(path)


@pytest.mark.parametrize('item, changes', CASES, ids=[f'{item}-{i}' for i, (item, _) in
                                                      enumerate(CASES)])
def test_a_robot_at_each_bound_loads_again(data, tmp_path, item, changes):
    robot = _changed(data, changes)
    params = parse_fit(robot, [item])
    for k, p in enumerate(params):
        for end in (p.low, p.high):
            values = [q.initial for q in params]
            values[k] = p.from_z(p.to_z(end))     # where the optimiser's z bound puts it
            _reloaded(robot_with(robot, params, values), tmp_path)


@pytest.mark.parametrize('item, bounds, key', [
    ('damping', (0.05, 1.5), 'rod.damping.ratio'),
    ('youngs_modulus', (1e2, 1e8), 'youngs_modulus'),
    ('*.compliance', (0.0001, 2.0), 'compliance'),
])
def test_given_bounds_beyond_the_description_are_refused(data, item, bounds, key):
    robot = _changed(data, {f'{t}compliance': 0.01 for t in ALL})
    with pytest.raises(FitParameterError) as error:
        parse_fit(robot, [item], {item: bounds})
    message = str(error.value)
    assert message.startswith(f'bounds: {item}: ') and key in message, message
    assert '\n' not in message


def test_a_damping_fit_beyond_the_loaders_range_ends_at_its_bound_and_says_so(tmp_path,
                                                                              capsys):
    """
    A step response of an overdamped rod: the best damping ratio is beyond the loader's < 1.

    The hidden robot damps with a rate 1.5 times the one of ratio 1 (``rate`` form, which the
    loader takes); fitting the ratio from 0.5 (default bounds 0.05 .. 5) must end at the
    largest ratio the loader takes, say so on one line with the value, and write a file that
    loads again.
    """
    robot = load_robot(default_robot_file()).with_changes(elements=10, damping={'ratio': 0.5})
    critical = mass_proportional_damping(robot.with_changes(damping={'ratio': 1.0 - 1e-12}))
    truth = robot.with_changes(damping={'rate': 1.5 * critical})
    synth_step_response(tmp_path / 'step', truth, noise=2e-4, seed=5, before=0.2, after=0.8)
    start = tmp_path / 'robot.yaml'
    start.write_text(yaml.safe_dump(robot.to_dict(), sort_keys=False))
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(tmp_path / 'step'), '--robot', str(start), '--model',
                     'dynamic', '--fit', 'damping', '--workers', '1', '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    at_bound = [line for line in printed.splitlines() if 'ended at its upper bound' in line]
    assert len(at_bound) == 1, printed
    ratio = load_robot(out).rod.damping.ratio
    assert 0.999 < ratio < 1.0
    assert f'damping ended at its upper bound ({ratio:g})' in at_bound[0]
    assert 'the robot description' in at_bound[0]      # not --bounds: the file's own limit
