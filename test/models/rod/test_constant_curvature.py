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
Constant-curvature kinematics (tendon_robot_sim.models.rod.constant_curvature).

References: the elephant-trunk transform ^wH_h as written in
Hadzic & Häseli's kinematic model, the arc-length formula
q_i = r_i theta cos(phi - a_i) evaluated by hand, and the Kirchhoff statics solver.
"""

import json
import math
import os
from pathlib import Path
import subprocess
import sys

from constant_curvature_helpers import falkenhahn_transform
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.rod.constant_curvature import (ConstantCurvature,
                                                            ConstantCurvatureError,
                                                            UnreachableError)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from waiting import COMMAND_TIMEOUT
import yaml

DEFAULT = load_robot(default_robot_file())
ROOT = Path(__file__).resolve().parents[3]


def make_robot(angles, offsets=None, base=None, gravity=(0.0, 0.0, 0.0), end=None):
    data = DEFAULT.to_dict()
    offsets = offsets or [0.015] * len(angles)
    data['tendons'] = [{'name': f't{i}', 'offset': r, 'angle_deg': a}
                       for i, (a, r) in enumerate(zip(angles, offsets))]
    data['vertebrae'].pop('radius', None)   # discs that hold the holes: the default radius
    if end is not None:
        for tendon in data['tendons']:
            tendon['end'] = end
    if base is not None:
        data['base'] = base
    data['gravity'] = list(gravity)
    return robot_from_dict(data)


TILTED_BASE = {'frame_id': 'base_link', 'position': [0.1, -0.2, 0.3],
               'direction': [0.0, 0.6, 0.8], 'normal': [1.0, 0.0, 0.0]}


@pytest.mark.parametrize('angles, offsets', [
    ([0.0, 120.0, 240.0], None),
    ([0.0, 90.0, 180.0, 270.0], None),
    ([10.0, 75.0, 200.0, 300.0, 330.0], [0.01, 0.02, 0.015, 0.012, 0.018]),
])
def test_inverse_of_forward_returns_the_displacements(angles, offsets):
    cc = ConstantCurvature(make_robot(angles, offsets, base=TILTED_BASE))
    rng = np.random.default_rng(5)
    for _ in range(20):
        theta, phi = rng.uniform(0.0, 2.5), rng.uniform(-math.pi, math.pi)
        # consistent displacements by hand: q_i = r_i theta cos(phi - a_i)
        q = np.array([t.offset * theta * math.cos(phi - t.angle) for t in cc.robot.tendons])
        state = cc.forward(q)
        assert state.theta == pytest.approx(theta, abs=1e-12)
        assert math.cos(state.phi - phi) == pytest.approx(1.0, abs=1e-12)
        assert state.residual < 1e-14
        np.testing.assert_allclose(cc.inverse(state.theta, state.phi), q, atol=1e-15)
        # and back from the tip position alone
        tip = cc.inverse_tip(state.tip_position)
        np.testing.assert_allclose(tip.displacements, q, atol=1e-9)
        np.testing.assert_allclose(tip.tip_position, state.tip_position, atol=1e-9)


def test_three_tendons_match_the_published_matrix_form():
    robot = make_robot([0.0, 120.0, 240.0])   # base: x along the rod, d1 = z (default)
    cc = ConstantCurvature(robot)
    frame = robot.base.rotation
    for theta, phi in ((0.3, 0.2), (1.7, -2.0), (3.0, 2.5)):
        state = cc.from_angles(theta, phi)
        H = falkenhahn_transform(theta, phi, theta / robot.rod.length)
        np.testing.assert_allclose(frame.T @ state.tip_rotation, H[:3, :3], atol=1e-14)
        np.testing.assert_allclose(frame.T @ (state.tip_position - robot.base.position),
                                   H[:3, 3], atol=1e-14)
        q = cc.forward(state.displacements)
        assert (q.theta, q.phi) == pytest.approx((theta, phi), abs=1e-12)


def test_zero_displacements_give_the_straight_rod():
    robot = make_robot([0.0, 90.0, 180.0, 270.0], base=TILTED_BASE)
    state = ConstantCurvature(robot).forward([0.0] * 4)
    assert (state.theta, state.kappa) == (0.0, 0.0)
    np.testing.assert_allclose(state.tip_position,
                               robot.base.position + robot.rod.length * robot.base.direction,
                               atol=1e-15)
    np.testing.assert_allclose(state.tip_rotation, robot.base.rotation, atol=1e-15)
    quaternion = Rotation.from_matrix(robot.base.rotation).as_quat()
    np.testing.assert_allclose(state.tip_orientation, quaternion * np.sign(quaternion[3]),
                               atol=1e-12)


def test_small_curvature_is_continuous_through_zero():
    cc = ConstantCurvature(make_robot([0.0, 120.0, 240.0]))
    L = cc.length
    for theta in (1e-9, 1e-5):
        tip = cc.robot.base.rotation.T @ cc.from_angles(theta, 0.0).tip_position
        # (1 - cos t) / kappa = L (t / 2 - t^3 / 24), sin t / kappa = L (1 - t^2 / 6 + ...)
        np.testing.assert_allclose(
            tip, [L * (theta / 2 - theta ** 3 / 24), 0.0, L * (1 - theta ** 2 / 6)],
            rtol=1e-14, atol=1e-20)


@pytest.mark.parametrize('angles', [[0.0, 120.0, 240.0], [0.0, 90.0, 180.0, 270.0]])
def test_matches_the_kirchhoff_statics_for_one_pulled_tendon(angles):
    """
    One parallel tendon, no gravity, rigid tendons: CC gives the Kirchhoff solver's tip.

    The Kirchhoff rod bends into an exact arc, so CC from the solver's own tendon displacements
    gives the solver's tip.
    """
    robot = make_robot(angles, base=TILTED_BASE)
    tensions = [0.0] * len(angles)
    tensions[1] = 0.8
    result = StaticsSolver(robot, 'kirchhoff').solve_tensions(tensions)
    state = ConstantCurvature(robot).forward(result.tendon_displacements)
    assert state.theta > 0.1   # a visible bend
    assert state.residual < 1e-9
    assert state.phi == pytest.approx(robot.tendons[1].angle, abs=1e-9)
    np.testing.assert_allclose(state.tip_position, result.tip_position, atol=1e-6)
    np.testing.assert_allclose(state.tip_rotation, result.tip_rotation, atol=1e-6)


def test_section_shorter_than_the_rod_continues_straight():
    robot = make_robot([0.0, 120.0, 240.0], end=0.15)
    cc = ConstantCurvature(robot)
    state = cc.from_angles(1.0, 0.4)
    section = robot.base.rotation @ falkenhahn_transform(1.0, 0.4, 1.0 / 0.15)[:3, 3]
    np.testing.assert_allclose(state.tip_position,
                               section + 0.10 * state.tip_rotation[:, 2], atol=1e-14)
    assert state.kappa == pytest.approx(1.0 / 0.15)
    np.testing.assert_allclose(cc.inverse_tip(state.tip_position).displacements,
                               state.displacements, atol=1e-9)


def test_unreachable_tip_reports_the_closest():
    cc = ConstantCurvature(make_robot([0.0, 120.0, 240.0]))
    with pytest.raises(UnreachableError, match='not reachable') as info:
        cc.inverse_tip([0.5, 0.0, 0.0])   # beyond the rod length along the axis
    assert info.value.distance == pytest.approx(0.25, abs=1e-9)
    # the straight rod (the distance is flat in theta there: theta ~ 1e-4 is as close)
    np.testing.assert_allclose(info.value.closest.tip_position, [0.25, 0.0, 0.0], atol=1e-6)


@pytest.mark.parametrize('change, message', [
    ({'routing': 'helical', 'turns': 0.5}, 'parallel tendon routing'),
    ({'end': 0.125}, 'same arc length'),
])
def test_robots_outside_the_model_are_rejected(change, message):
    data = make_robot([0.0, 120.0, 240.0]).to_dict()
    data['tendons'][0].update(change)
    with pytest.raises(ConstantCurvatureError, match=message):
        ConstantCurvature(robot_from_dict(data))


# --------------------------------------------------------------------------- planar robots


def planar_arc_tip(robot, signed_theta):
    """
    Return the closed-form tip of the planar robot bent into an arc by ``signed_theta``.

    The arc bends towards d1 (the first hole, at angle 0): a circle of radius L / theta in the (d1,
    d3) plane.
    """
    L = robot.rod.length
    d1, d3 = robot.base.normal, robot.base.direction
    return robot.base.position + (L / signed_theta) * (
        math.sin(signed_theta) * d3 + (1.0 - math.cos(signed_theta)) * d1)


@pytest.mark.parametrize('signed_theta', [0.6, -1.3, 2.5])
def test_planar_robot_forward_and_inverse_follow_the_arc_in_its_plane(signed_theta):
    """Two antagonistic tendons (0 and 180 degrees): q_0 = r theta, q_1 = -r theta."""
    robot = make_robot([0.0, 180.0], gravity=(0.0, 0.0, -9.8), base=TILTED_BASE)
    cc = ConstantCurvature(robot)
    assert cc.plane == 0.0
    r = 0.015
    state = cc.forward({'t0': r * signed_theta, 't1': -r * signed_theta})
    assert state.theta == pytest.approx(abs(signed_theta), abs=1e-12)
    assert math.sin(state.phi) == pytest.approx(0.0, abs=1e-12)   # in the plane: 0 or pi
    assert state.residual == pytest.approx(0.0, abs=1e-15)
    tip = planar_arc_tip(robot, signed_theta)
    np.testing.assert_allclose(state.tip_position, tip, rtol=0.0, atol=1e-12)
    # the least-squares theta of inconsistent displacements: the mean of the two
    assert cc.forward([r * 0.5, -r * 0.3]).theta == pytest.approx(0.4, abs=1e-12)
    back = cc.inverse_tip(tip)
    np.testing.assert_allclose(back.displacements, [r * signed_theta, -r * signed_theta],
                               atol=1e-9)
    np.testing.assert_allclose(back.tip_position, tip, atol=1e-9)


def test_planar_robot_target_off_its_plane_names_the_closest_tip_in_the_plane():
    robot = make_robot([90.0, 270.0])          # holes on d2: bends in the (d2, d3) plane
    cc = ConstantCurvature(robot)
    assert cc.plane == pytest.approx(math.pi / 2)
    in_plane = cc.from_angles(0.8, math.pi / 2).tip_position
    off = 0.01 * robot.base.normal             # d1: out of the bending plane
    with pytest.raises(UnreachableError, match=r'closest tip .* at 0.01 m') as info:
        cc.inverse_tip(in_plane + off)
    assert info.value.distance == pytest.approx(0.01, abs=1e-9)
    np.testing.assert_allclose(info.value.closest.tip_position, in_plane, atol=1e-9)
    with pytest.raises(ConstantCurvatureError, match='phi: this planar robot bends only in '
                                                     'its plane, phi = 90 or 270 degrees'):
        cc.inverse(0.5, 0.0)
    # a single tendon is planar too
    assert ConstantCurvature(make_robot([30.0])).plane == pytest.approx(math.radians(30.0))


def test_bad_inputs_are_rejected():
    cc = ConstantCurvature(make_robot([0.0, 120.0, 240.0]))
    with pytest.raises(ConstantCurvatureError, match='one value per tendon'):
        cc.forward([0.0, 0.0])
    with pytest.raises(ConstantCurvatureError, match="non-finite value for \\['t1'\\]"):
        cc.forward([0.0, math.nan, 0.0])
    with pytest.raises(ConstantCurvatureError, match='unknown tendon'):
        cc.forward({'x': 0.01})
    # a tendon path L - q shorter than nothing: its hole past the centre of curvature
    length = cc.section_length
    with pytest.raises(ConstantCurvatureError, match='t1 = .* more than the section length'):
        cc.forward([0.0, 1.01 * length, 0.0])
    with pytest.raises(ConstantCurvatureError, match='t0 = .* more than the section length'):
        cc.forward({'t0': -1.01 * length})
    with pytest.raises(ConstantCurvatureError, match='tip_position'):
        cc.inverse_tip([0.0, 0.0])


# --------------------------------------------------------------------------- command line


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'cc', *args],
                          capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)


def test_cli_forward_then_inverse_round_trip(tmp_path):
    robot = make_robot([0.0, 120.0, 240.0], base=TILTED_BASE)
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(robot.to_dict()))
    theta, phi = 0.9, 2.0
    q = [t.offset * theta * math.cos(phi - t.angle) for t in robot.tendons]
    proc = run_cli('--robot', str(path), '--displacements=' + ','.join(map(repr, q)), '--json')
    assert proc.returncode == 0, proc.stderr
    forward = json.loads(proc.stdout.strip().splitlines()[-1])
    assert forward['theta'] == pytest.approx(theta, abs=1e-12)
    assert forward['phi'] == pytest.approx(phi, abs=1e-12)
    assert forward['kappa'] == pytest.approx(theta / robot.rod.length, abs=1e-12)
    H = falkenhahn_transform(theta, phi, theta / robot.rod.length)
    frame = robot.base.rotation
    np.testing.assert_allclose(forward['tip_position'],
                               robot.base.position + frame @ H[:3, 3], atol=1e-12)
    quaternion = Rotation.from_matrix(frame @ H[:3, :3]).as_quat()
    np.testing.assert_allclose(forward['tip_orientation'],
                               quaternion * np.sign(quaternion[3]), atol=1e-12)
    proc = run_cli('--robot', str(path), '--tip=' + ','.join(map(repr, forward['tip_position'])),
                   '--json')
    assert proc.returncode == 0, proc.stderr
    inverse = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(inverse['displacements'], q, atol=1e-9)


def test_cli_runs_the_planar_robot_file():
    proc = run_cli('--robot', str(ROOT / 'config' / 'planar_robot.yaml'),
                   '--displacements', 't0=0.003,t1=-0.003', '--json')
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout.strip().splitlines()[-1])
    robot = load_robot(ROOT / 'config' / 'planar_robot.yaml')
    np.testing.assert_allclose(state['tip_position'], planar_arc_tip(robot, 0.2), atol=1e-12)


@pytest.mark.parametrize('args, status, message', [
    # An unreachable tip is valid input without a result (exit 1); the rest is bad input (2).
    (('--tip', '0.5,0,0'), 1, 'not reachable'),
    (('--tip', '0.1,0'), 2, '--tip: must be 3 numbers'),
    (('--displacements', 'x=0.1'), 2, "unknown tendon 'x'"),
    (('--displacements', '0.1,0'), 2, 'one value per tendon'),
])
def test_cli_errors_are_one_line(args, status, message, capsys):
    assert main(['cc', *args]) == status
    stderr = capsys.readouterr().err
    assert message in stderr and len(stderr.strip().splitlines()) == 1


@pytest.mark.parametrize('length, radius', [(0.25, 0.001), (0.1, 0.004)])
def test_the_bend_of_self_contact_brings_the_arcs_end_a_diameter_from_its_base(length, radius):
    """
    At self_contact_bend the arc's end is one rod diameter from its base along its circle.

    Measured on the pose of the arc's end: the chord to the base, on the circle of radius
    length / theta, spans the arc R 2 asin(chord / 2 R). With a little less bend, farther.
    """
    from tendon_robot_sim.models.geometry import section_pose, self_contact_bend
    theta = self_contact_bend(length, radius)
    circle = length / theta
    chord = np.linalg.norm(section_pose(theta, 0.3, length)[1])
    assert circle * 2.0 * math.asin(chord / (2.0 * circle)) == pytest.approx(2.0 * radius,
                                                                             rel=1e-9)
    assert np.linalg.norm(section_pose(0.99 * theta, 0.3, length)[1]) > chord
