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
Rolling-joint snake: description loader and kinematics.

Both are checked against closed forms and finite differences of the poses.
"""

import math

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.description import read_yaml, RobotDescriptionError
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.robot import load_snake, snake_from_dict

SNAKE_FILE = share_dir() / 'config' / 'rolling_joint_snake.yaml'
SNAKE = load_snake(SNAKE_FILE)
KIN = SnakeKinematics(SNAKE)
RNG = np.random.default_rng(12)
# random poses within the joint limits
Q = RNG.uniform(-0.8, 0.8, (5, SNAKE.n_joints)) * SNAKE.joint_limit


# ------------------------------------------------------------------ description


def test_default_snake_file():
    assert SNAKE.joints == ('pan', 'tilt') * 3
    assert SNAKE.cable_names == ['cable1', 'cable2', 'cable3', 'cable4']
    assert SNAKE.link.contact_angle == pytest.approx(math.radians(42.0))
    # cable 2 is the upper one (it holds the weight), cable 4 the lower one
    assert SNAKE.cables[1].lateral[2] > 0 > SNAKE.cables[3].lateral[2]
    assert_allclose(SNAKE.gravity, [0, 0, -9.80665])
    # the mass and inertia written in the file are those of the tube its comments derive
    ro, ri, H, rho = 0.020, 0.012, SNAKE.link.height, 930.0
    m = rho * math.pi * (ro ** 2 - ri ** 2) * H
    assert SNAKE.link.mass == pytest.approx(m, rel=1e-3)
    assert_allclose(SNAKE.link.inertia, [m * (ro ** 2 + ri ** 2) / 2,
                                         m * (3 * (ro ** 2 + ri ** 2) + H ** 2) / 12,
                                         m * (3 * (ro ** 2 + ri ** 2) + H ** 2) / 12], rtol=1e-3)


def without(key):
    return lambda data: data.pop(key)


def setting(section, key, value):
    return lambda data: data[section].__setitem__(key, value)


@pytest.mark.parametrize('change, message', [
    (lambda d: d.update(kind='tendon_continuum'), "kind: must be one of ['bellows', "),
    (lambda d: d.update(kind='pcr_6rus'), 'kind: pcr_6rus is a 6-RUS parallel continuum robot; '
                                          'this takes a rolling-joint snake robot'),
    # config/robot.yaml given to a snake command: the line names both kinds
    (without('kind'), 'kind: none given, so a tendon-driven continuum robot (tendon_robot); '
                      'this takes a rolling-joint snake robot, kind: rolling_joint_snake'),
    (lambda d: d.update(joints=['pan', 'roll']), 'joints[1]: must be one of'),
    (lambda d: d.update(joints=[]), 'joints: must be a list of 1 to 1000'),
    (lambda d: d.update(joints=['pan'] * 1001), 'joints: must be a list of 1 to 1000 of '
                                                "['pan', 'tilt'], got ['pan', 'pan',"),
    (lambda d: d.update(cables=d['cables'] * 2), 'cables: must be a list of 2 to 6 cables'),
    (setting('link', 'height', -0.03), 'link.height: must be > 0'),
    # the link must fit its rolling surfaces: a contact point on the link (R sin alpha =
    # 30 mm x sin 42 deg = 20.07 mm off the axis at most) ...
    (setting('link', 'contact_offset', 0.5), 'link.contact_offset: the contact points'),
    (setting('link', 'contact_offset', 0.0201), 'link.contact_offset: the contact points'),
    # ... and a link taller than the depth of a surface, R (1 - cos alpha) = 7.71 mm
    (setting('link', 'height', 0.0077), 'link.height: 0.0077 m is less than'),
    (setting('link', 'contact_angle_deg', 95.0),
     'link.contact_angle: must be in (0, 90) deg, got 95 deg'),
    (setting('link', 'inertia', [1e-5, 1e-6, 1e-6]), 'link.inertia[0]: 1e-05 exceeds the sum'),
    (setting('link', 'colour', 'red'), 'link.colour: unknown key'),
    (lambda d: d['cables'][1].update(offset=0.03), 'cables[1].offset: the hole'),
    (lambda d: d['cables'][2].update(name='cable1'),
     "cables[2].name: duplicate cable name 'cable1'"),
    # two cables through one hole pull alike: the tension distribution is degenerate
    # (0 and 360 deg are one angle)
    (lambda d: d['cables'][3].update(angle_deg=90.0, offset=d['cables'][1]['offset']),
     'cables[3]: through the hole of cables[1] (0.016 m at 90 deg); two cables through one '
     'hole pull alike'),
    (lambda d: d['cables'][2].update(angle_deg=360.0, offset=d['cables'][0]['offset']),
     'cables[2]: through the hole of cables[0] (0.016 m at 0 deg); two cables through one hole'),
    (lambda d: d.update(friction_coefficient=0.0), 'friction_coefficient: must be > 0'),
    (lambda d: d.update(pretension=200.0), 'pretension: must be < max_tension'),
    (without('min_contact_force'), 'min_contact_force: required key is missing'),
    # The link lies within its rolling surfaces: R sin(alpha) = 20.07 mm off its axis and
    # H = 30 mm along it, a cylinder of 38 cm^3. A mass in grams (22.44 for 0.02244 kg) is
    # 590 000 kg/m^3 there, beyond the 2e5 of any description; an inertia in kg cm^2 (x 1e4)
    # puts the mass farther from the centre than the link reaches: I_xx <= m (R sin alpha)^2
    # = 9.0e-6 and I_yy, I_zz <= m ((H/2)^2 + (R sin alpha)^2) = 1.41e-5 kg m^2 in it.
    (setting('link', 'mass', 22.44), 'link.mass: 22.44 kg in the link'),
    (setting('link', 'inertia', [6.103e-2, 4.735e-2, 4.735e-2]),
     'link.inertia[0]: 0.06103 kg m^2 needs mass farther from the centre'),
    (setting('link', 'inertia', [6.103e-6, 1.5e-5, 1.5e-5]),
     'link.inertia[1]: 1.5e-05 kg m^2 needs mass farther from the centre'),
])
def test_bad_descriptions_name_the_key(change, message):
    data = read_yaml(SNAKE_FILE)
    change(data)
    with pytest.raises(RobotDescriptionError) as error:
        snake_from_dict(data)
    assert message in str(error.value)


def test_two_cables_at_one_angle_through_two_holes_load():
    """At one angle but other offsets the holes' depths, not linear in the offset, part them."""
    data = read_yaml(SNAKE_FILE)
    data['cables'][3].update(angle_deg=90.0, offset=0.01)
    snake = snake_from_dict(data)
    assert [c.offset for c in snake.cables] == pytest.approx([0.016, 0.016, 0.016, 0.01])


def test_a_solid_link_within_its_surfaces_loads():
    # a solid cylinder filling the bounding one at 2e4 kg/m^3 (a tungsten alloy): every bound
    # is met with room, so the check does not refuse a dense but real link
    data = read_yaml(SNAKE_FILE)
    a, H = SNAKE.link.half_width, SNAKE.link.height
    m = 2e4 * math.pi * a ** 2 * H
    data['link']['mass'] = m
    data['link']['inertia'] = [m * a ** 2 / 2, m * (3 * a ** 2 + H ** 2) / 12,
                               m * (3 * a ** 2 + H ** 2) / 12]
    assert snake_from_dict(data).link.mass == m


@pytest.mark.parametrize('key, value', [('contact_offset', 0.0200), ('height', 0.0078)])
def test_a_link_just_within_its_rolling_surfaces_loads(key, value):
    data = read_yaml(SNAKE_FILE)
    data['link'][key] = value
    assert getattr(snake_from_dict(data).link, key) == value


def test_load_errors_name_the_file(tmp_path):
    path = tmp_path / 'snake.yaml'
    path.write_text('kind: rolling_joint_snake\nname: x\n')
    with pytest.raises(RobotDescriptionError, match=f'{path}: joints: required key'):
        load_snake(path)


# ------------------------------------------------------------------ kinematics


def test_straight_snake():
    state = KIN.state(np.zeros(SNAKE.n_joints))
    H = SNAKE.link.height
    assert_allclose(state.tip_position[0], [SNAKE.n_joints * H, 0, 0], atol=1e-15)
    assert_allclose(state.centers[0, :, 0], (np.arange(SNAKE.n_joints) + 0.5) * H)
    assert_allclose(state.contacts[0, :, 0], np.arange(SNAKE.n_joints) * H, atol=1e-15)


def test_planar_bend_turns_the_tip_by_the_sum_of_the_angles():
    theta = 0.1
    q = np.array([theta if j == 'pan' else 0.0 for j in SNAKE.joints])
    state = KIN.state(q)
    turn = theta * q.astype(bool).sum()
    assert_allclose(state.rotations[0, -1] @ [1, 0, 0], [math.cos(turn), math.sin(turn), 0],
                    atol=1e-14)
    assert abs(state.tip_position[0, 2]) < 1e-15
    # one rolling joint alone: link 1's origin from the two arcs (centres 2R apart)
    R, H = SNAKE.link.radius_of_curvature, SNAKE.link.height
    one = KIN.state(np.r_[theta, np.zeros(SNAKE.n_joints - 1)])
    expected = (np.array([-R, 0, 0]) + 2 * R * np.array([math.cos(theta / 2),
                                                        math.sin(theta / 2), 0])
                + (H - R) * np.array([math.cos(theta), math.sin(theta), 0]))
    assert_allclose(one.origins[0, 1], expected, atol=1e-15)


def test_cable_lengths_follow_the_rolling_joint_formula():
    R = SNAKE.link.radius_of_curvature
    lateral = np.array([c.lateral for c in SNAKE.cables])
    beta = KIN.b @ lateral.T                      # in-plane offset per joint and cable
    rho = np.sqrt(R ** 2 - beta ** 2)
    state = KIN.state(Q)
    length, e = state.cable_segments()
    half = Q[:, :, None] / 2
    assert_allclose(length, 2 * R - 2 * rho * np.cos(half) - 2 * beta * np.sin(half),
                    atol=1e-15)
    # the straight path between the holes is that long and points that way
    span = state.distal_holes - state.proximal_holes
    assert_allclose(span, length[..., None] * e, atol=1e-15)


def test_cable_levers_are_minus_the_length_gradient():
    h = 1e-6
    levers = KIN.state(Q).cable_levers()
    for n in range(SNAKE.n_joints):
        step = np.zeros(SNAKE.n_joints)
        step[n] = h
        up, _ = KIN.state(Q + step).cable_segments()
        down, _ = KIN.state(Q - step).cable_segments()
        gradient = (up - down) / (2 * h)
        assert_allclose(levers[:, n], -gradient[:, n], atol=1e-9)
        others = np.delete(gradient, n, axis=1)   # a segment spans one joint only
        assert np.abs(others).max() < 1e-9


def test_velocities_and_accelerations_match_finite_differences():
    q0, qd, qdd = Q[0], RNG.uniform(-1, 1, SNAKE.n_joints), RNG.uniform(-2, 2, SNAKE.n_joints)
    h = 1e-4
    poses = KIN.state(np.array([q0 + qd * t + 0.5 * qdd * t ** 2 for t in (-h, 0.0, h)]))
    moving = KIN.state(q0, qd, qdd)
    c = poses.centers
    assert_allclose(moving.center_velocity[0], (c[2] - c[0]) / (2 * h), atol=1e-8)
    assert_allclose(moving.center_acceleration[0], (c[2] - 2 * c[1] + c[0]) / h ** 2,
                    atol=1e-6)
    # angular velocity: the axial vector of Rdot R^T
    Rdot = (poses.rotations[2, 1:] - poses.rotations[0, 1:]) / (2 * h)
    W = Rdot @ np.swapaxes(poses.rotations[1, 1:], -1, -2)
    assert_allclose(moving.omega[0], np.stack((W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]), -1),
                    atol=1e-7)


def test_links_roll_without_slipping():
    """At each contact the material points of both links have the same velocity."""
    qd = RNG.uniform(-1, 1, Q.shape)
    s = KIN.state(Q, qd)
    point = s.contacts
    v_link = s.center_velocity + np.cross(s.omega, point - s.centers)        # link n
    v_prev = np.zeros_like(v_link)                                           # link n-1
    v_prev[:, 1:] = (s.center_velocity[:, :-1]
                     + np.cross(s.omega[:, :-1], point[:, 1:] - s.centers[:, :-1]))
    assert_allclose(v_link, v_prev, atol=1e-15)
