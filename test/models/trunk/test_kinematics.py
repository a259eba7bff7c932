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
Bellows kinematics from muscle lengths against arcs built by hand.

The hand arc: for three bellows at 0, 120 and 240 degrees and radius d, the closed forms of
Webster & Jones' review (2010, Sec. 3.1.3) in this package's angle convention,

    l = (q1 + q2 + q3) / 3,
    theta = 2 sqrt(q1^2 + q2^2 + q3^2 - q1 q2 - q2 q3 - q1 q3) / (3 d),
    phi = atan2(sqrt(3) (q3 - q2), q2 + q3 - 2 q1),

and the homogeneous transform ^wH_h of Hadzic & Häseli's slides written out entry by entry,
chained section after section.
"""

import math
from pathlib import Path

from constant_curvature_helpers import falkenhahn_transform
import numpy as np
import pytest
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.kinematics import BellowsKinematics, BellowsKinematicsError
from tendon_robot_sim.models.trunk.robot import bellows_robot_from_dict, load_bellows_robot

ROOT = Path(__file__).resolve().parents[3]
BHA = load_bellows_robot(ROOT / 'config' / 'bionic_handling_assistant.yaml')


def slides_transform(q1: float, q2: float, q3: float, d: float) -> np.ndarray:
    """^wH_h (4 x 4) of one section from its three muscle lengths, as on the slides."""
    length = (q1 + q2 + q3) / 3.0
    theta = 2.0 * math.sqrt(q1 * q1 + q2 * q2 + q3 * q3 - q1 * q2 - q2 * q3 - q1 * q3) / (3 * d)
    phi = math.atan2(math.sqrt(3.0) * (q3 - q2), q2 + q3 - 2.0 * q1)
    return falkenhahn_transform(theta, phi, theta / length)


def base_transform(robot) -> np.ndarray:
    H = np.eye(4)
    H[:3, 0] = robot.base.normal
    H[:3, 2] = robot.base.direction
    H[:3, 1] = np.cross(robot.base.direction, robot.base.normal)
    H[:3, 3] = robot.base.position
    return H


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_three_sections_match_the_slides_transform_chained_by_hand(seed):
    rng = np.random.default_rng(seed)
    rest = np.repeat([s.length for s in BHA.sections], 3)
    q = rest + rng.uniform(-0.04, 0.04, rest.size)       # up to 4 cm on 20-25 cm bellows
    pose = BellowsKinematics(BHA).forward(q)
    H = base_transform(BHA)
    for j, section in enumerate(BHA.sections):
        assert [b.angle for b in section.bellows] == pytest.approx(
            [0.0, 2 * math.pi / 3, 4 * math.pi / 3])
        q1, q2, q3 = q[3 * j:3 * j + 3]
        d = section.bellows[0].offset
        H = H @ slides_transform(q1, q2, q3, d)
        arc = pose.sections[j]
        assert arc.length == pytest.approx((q1 + q2 + q3) / 3.0, abs=1e-14)
        assert arc.phi == pytest.approx(math.atan2(math.sqrt(3) * (q3 - q2), q2 + q3 - 2 * q1),
                                        abs=1e-12)
        np.testing.assert_allclose(pose.frames[j][0], H[:3, :3], atol=1e-12)
        np.testing.assert_allclose(pose.frames[j][1], H[:3, 3], atol=1e-12)   # m
    assert pose.residual < 1e-12
    np.testing.assert_allclose(pose.muscle_lengths, q, atol=1e-14)


def test_the_straight_robot_and_lengths_given_by_name():
    kinematics = BellowsKinematics(BHA)
    straight = kinematics.forward({})
    total = sum(s.length for s in BHA.sections)
    np.testing.assert_allclose(straight.tip_position, BHA.base.position
                               + total * BHA.base.direction, atol=1e-15)
    # p1 shorter than its partners bends section 1 towards p1 (phi = 0, its angle)
    bent = kinematics.forward({'p1': 0.24})
    assert bent.sections[0].phi == pytest.approx(0.0, abs=1e-12)
    assert bent.sections[0].theta == pytest.approx(2 * 0.01 / (3 * 0.05), rel=1e-12)
    assert bent.sections[1].theta == 0.0


def test_lengths_of_a_dynamic_state_give_back_its_coordinates():
    model = CCDynamics.from_bellows_robot(BHA)
    x = model.equilibrium(np.array([1e5, 0, 0, 0, 6e4, 0, 0, 0, 3e4]))
    kinematics = BellowsKinematics(BHA)
    np.testing.assert_allclose(kinematics.coordinates(model.lengths @ x), x, atol=1e-12)
    np.testing.assert_allclose(kinematics.tip_positions(model.lengths @ x)[0],
                               model.frames(x)[-1][1], atol=1e-12)


def test_four_bellows_are_fitted_and_the_misfit_reported():
    """At 0, 90, 180, 270 degrees only q1 + q3 = q2 + q4 is an arc; the misfit by hand."""
    data = BHA.to_dict()
    section = data['sections'][0]
    template = section['bellows'][0]
    section['bellows'] = [dict(template, name=f'b{i}', angle=i * math.pi / 2) for i in range(4)]
    data['sections'] = [section]
    robot = bellows_robot_from_dict(data)
    q = np.array([0.24, 0.25, 0.27, 0.255])
    pose = BellowsKinematics(robot).forward(q)
    gap = q[0] + q[2] - q[1] - q[3]
    assert pose.residual == pytest.approx(abs(gap) / 2.0, rel=1e-12)
    assert pose.sections[0].length == pytest.approx(q.mean(), abs=1e-14)
    # bending: (q3 - q1) / (2 r) towards d1's opposite, (q4 - q2) / (2 r) along d2
    r = template['offset']
    u = np.array([(q[2] - q[0]) / (2 * r), (q[3] - q[1]) / (2 * r)])
    assert pose.sections[0].theta == pytest.approx(np.linalg.norm(u), rel=1e-12)


@pytest.mark.parametrize('values, message', [
    ([0.25, 0.25], 'need one value per bellows'),
    ({'p10': 0.2}, "unknown bellows 'p10'"),
    ({'p2': -0.1}, 'p2 = -0.1 m'),
    ({'p2': math.nan}, 'p2 = nan m'),
])
def test_bad_lengths_are_refused_naming_the_bellows(values, message):
    with pytest.raises(BellowsKinematicsError, match=message):
        BellowsKinematics(BHA).forward(values)


@pytest.mark.parametrize('c', [0.99, 1.01])
def test_a_bend_inside_the_ring_of_bellows_is_no_shape(c):
    """
    The BHA's first section bent to kappa r = c (bellows at 0, 120, 240 deg, r = 50 mm).

    Bent away from bellows p1: l_1 = l (1 + c), l_2 = l_3 = l (1 - c / 2); at c >= 1 a line
    of the section on the inside of the bend (at r) would be shorter than nothing.
    """
    length = BHA.sections[0].length
    lengths = {'p1': length * (1 + c), 'p2': length * (1 - c / 2), 'p3': length * (1 - c / 2)}
    if c < 1.0:
        arc = BellowsKinematics(BHA).forward(lengths).sections[0]
        assert arc.kappa * 0.05 == pytest.approx(c, rel=1e-12)
    else:
        with pytest.raises(BellowsKinematicsError,
                           match=rf'bend section 0 to a radius of {50 / c:.3g} mm, inside '
                                 r'its bellows \(50 mm from the centre spline\)'):
            BellowsKinematics(BHA).forward(lengths)
