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
Till's reference tendon length l*_i as a description key (``tendons[i].reference_length``).

Checked against closed forms: four equal tendons shorter than the straight rod, with a
compliance, squeeze it straight; the tendons' length balance l = l* (1 + C tau) and the
rod's axial law give the tension by hand, for each constitutive law.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.reference import solve_reference
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

BASE = load_robot(default_robot_file()).to_dict()
L = BASE['rod']['length']
C = 2e-3              # 1/N: a soft tendon, so the tension is well defined
SHORTER = 1e-3        # m: every l*_i this much shorter than the straight rod


def robot_with(reference_lengths, compliance=C, gravity=(0.0, 0.0, 0.0)):
    data = dict(BASE, gravity=list(gravity))
    data['tendons'] = [dict(t, compliance=compliance,
                            **({} if length is None else {'reference_length': length}))
                       for t, length in zip(BASE['tendons'], reference_lengths)]
    return robot_from_dict(data)


def squeezing_tension(model: str, EA: float) -> float:
    """Return tau with four tendons of l* = L - SHORTER at q = 0: l (1) = l* (1 + C tau)."""
    if model == 'kirchhoff':             # inextensible: l = L
        return SHORTER / ((L - SHORTER) * C)
    if model == 'cosserat':              # linear law: n3 = EA (v3 - 1) = -4 tau, l = L v3
        return SHORTER / ((L - SHORTER) * C + 4.0 * L / EA)

    def balance(tau):                    # PyElastica's law: n3 = EA (v3 - 1) / v3
        return L / (1.0 + 4.0 * tau / EA) - (L - SHORTER) * (1.0 + C * tau)
    return brentq(balance, 0.0, 10.0, xtol=1e-14)


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff', 'discrete'])
def test_shorter_tendons_squeeze_the_rod_with_the_tension_of_the_length_balance(model):
    robot = robot_with([L - SHORTER] * 4)
    solver = StaticsSolver(robot, model)
    np.testing.assert_allclose(solver.rest_lengths, L - SHORTER, rtol=0, atol=1e-15)
    result = solver.solve_displacements([0.0] * 4)
    tau = squeezing_tension(model, robot.rod.youngs_modulus * robot.rod.area)
    # 1e-6 relative: the Newton tolerance on the scaled length residual
    np.testing.assert_allclose(result.tensions, tau, rtol=1e-5)
    assert tau > 0.1                     # a real load, not a round-off
    # the rod stays straight, shortened by the squeeze (not at all if inextensible)
    np.testing.assert_allclose(result.tip_position[1:], 0.0, atol=1e-9)


def test_a_longer_tendon_hangs_slack_by_the_difference():
    robot = robot_with([L + 2e-3, None, None, None], compliance=0.0)
    result = StaticsSolver(robot, 'cosserat').solve_displacements([5e-4, 0.0, 0.0, 0.0])
    # pulled in by 0.5 mm, 2 mm too long: 1.5 mm of slack, no tension, a straight rod
    assert result.slack[0] == pytest.approx(1.5e-3, abs=1e-9)
    np.testing.assert_allclose(result.tensions, 0.0, atol=1e-9)
    np.testing.assert_allclose(result.tip_position, [L, 0.0, 0.0], atol=1e-12)


def test_the_default_is_the_straight_path_as_before():
    robot = load_robot(default_robot_file())
    assert all(t.reference_length is None for t in robot.tendons)
    assert 'reference_length' not in robot.to_dict()['tendons'][0]
    for model in ('cosserat', 'discrete'):
        np.testing.assert_allclose(StaticsSolver(robot, model).rest_lengths, L, rtol=1e-12)


def test_fast_and_reference_statics_agree_with_a_given_reference_length():
    """One tendon 1 mm longer and pulled by 6 mm, bending the rod: the scipy formulation."""
    robot = robot_with([L + 1e-3, None, None, None], compliance=1e-3)
    q = [6e-3, 0.0, 0.0, 0.0]
    fast = StaticsSolver(robot, 'cosserat').solve_displacements(q)
    reference = solve_reference(robot, 'cosserat', displacements=q, rtol=1e-9)
    np.testing.assert_allclose(reference.rest_lengths[0], L + 1e-3, rtol=1e-12)
    np.testing.assert_allclose(fast.tip_position, reference.tip_position, rtol=0, atol=1e-7)
    np.testing.assert_allclose(fast.tensions, reference.tensions, rtol=1e-6, atol=1e-6)
    assert fast.tensions[0] > 0.5


def test_the_key_survives_a_round_trip():
    robot = robot_with([L - SHORTER, None, L, None])
    again = robot_from_dict(robot.to_dict())
    assert [t.reference_length for t in again.tendons] == [L - SHORTER, None, L, None]


@pytest.mark.parametrize('value, message', [
    (-0.25, 'must be > 0'),
    (0.0, 'must be > 0'),
    (math.nan, 'must be'),
    ('long', 'must be a number'),
    (250.0, "within 0.5 to 2 times the tendon's path on the straight rod (0.25 m)"),
    (0.1, 'got 0.1 m'),
])
def test_bad_values_are_refused_naming_the_key(value, message):
    data = dict(BASE)
    data['tendons'] = [dict(BASE['tendons'][0], reference_length=value)] + BASE['tendons'][1:]
    with pytest.raises(RobotDescriptionError) as error:
        robot_from_dict(data)
    assert str(error.value).startswith('tendons[0].reference_length: ')
    assert message in str(error.value), str(error.value)


def test_a_helical_tendon_is_bounded_by_its_helix():
    """The bound follows the hole path: a helix is longer than the rod."""
    data = dict(BASE)
    tendon = dict(BASE['tendons'][0], routing='helical', turns=2.0)
    helix = math.hypot(L, 2.0 * math.pi * 2.0 * tendon['offset'])
    data['tendons'] = [dict(tendon, reference_length=2.01 * helix)] + BASE['tendons'][1:]
    with pytest.raises(RobotDescriptionError, match=f'{helix:.6g} m'):
        robot_from_dict(data)
    data['tendons'][0]['reference_length'] = 1.99 * helix
    assert robot_from_dict(data).tendons[0].reference_length == 1.99 * helix
