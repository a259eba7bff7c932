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

"""Tip-position control step iterated on the quasi-static model (no ROS)."""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.control.tip_control import TipController
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from tendon_robot_sim.models.tension_distribution import DistributionError

MIN_TENSION = 0.2   # N


@pytest.fixture(scope='module')
def robot():
    data = load_robot(default_robot_file()).to_dict()
    data['vertebrae'] = {'positions': [0.05, 0.10, 0.15, 0.20, 0.25], 'mass': 0.002}
    for tendon in data['tendons']:
        tendon['max_tension'] = 5.0
    return robot_from_dict(data)


def run(robot, target, steps):
    plant = StaticsSolver(robot, model='discrete')
    controller = TipController(robot, model='discrete', min_tension=MIN_TENSION)
    tensions = np.full(len(robot.tendons), MIN_TENSION)
    history = []
    for _ in range(steps):
        tip = plant.solve_tensions(tensions).tip_position
        step = controller.step(tensions, tip, target, gain=0.5, max_step=0.01)
        assert np.all(step.tensions >= MIN_TENSION) and np.all(step.tensions <= robot.max_tensions)
        history.append((tip, step))
        tensions = step.tensions
    return plant.solve_tensions(tensions).tip_position, tensions, history


def test_jacobian_matches_central_differences(robot):
    controller = TipController(robot, min_tension=MIN_TENSION)
    tensions = np.array([1.0, 0.5, 0.3, 2.0])
    _, J = controller.jacobian(tensions)
    plant = StaticsSolver(robot, model='discrete')
    for i in range(4):
        h = np.eye(4)[i] * 1e-3
        column = (plant.solve_tensions(tensions + h).tip_position
                  - plant.solve_tensions(tensions - h).tip_position) / 2e-3
        assert np.allclose(J[:, i], column, atol=1e-2 * np.abs(column).max())


def test_reachable_target_is_reached_with_least_tensions(robot):
    # A target made by tensions within the bounds (so inside the workspace).
    target = StaticsSolver(robot, model='discrete').solve_tensions(
        [1.5, 0.2, 0.2, 2.5]).tip_position
    tip, tensions, _ = run(robot, target, 30)
    perpendicular = np.vstack((robot.base.normal, robot.base.binormal))
    assert np.linalg.norm(perpendicular @ (tip - target)) < 1e-4
    assert np.linalg.norm(tip - target) < 2e-3
    # Antagonists t1 (90 deg) and t2 (180 deg) are not needed: left at the pretension.
    assert tensions[1] == pytest.approx(MIN_TENSION) and tensions[2] == pytest.approx(MIN_TENSION)


def test_unreachable_target_stops_at_the_boundary_within_limits(robot):
    target = robot.base.position + np.array([0.2, -0.2, 0.2])
    tip, tensions, history = run(robot, target, 40)
    start_error = np.linalg.norm(history[0][0] - target)
    assert not history[-1][1].feasible
    assert np.isclose(tensions.max(), robot.max_tensions.max())      # at the tension limit
    assert np.linalg.norm(tip - target) < start_error - 0.1
    # Stopped: the last tips stay within a millimetre of each other.
    last = np.array([h[0] for h in history[-5:]])
    assert np.ptp(last, axis=0).max() < 1e-3


def test_min_tension_must_fit_below_max_tension(robot):
    with pytest.raises(DistributionError, match='min_tension'):
        TipController(robot, min_tension=6.0)


def test_unreachable_target_with_min_tension_at_a_smaller_max_tension(robot):
    """
    A pretension equal to one tendon's smaller max_tension pins that tendon; the rest move.

    The step raised (scipy: lower bound not strictly below upper) on every unreachable
    target, so the node skipped each step instead of going to the closest reachable tip.
    """
    data = robot.to_dict()
    data['tendons'][3]['max_tension'] = 2.0
    weak = robot_from_dict(data)
    controller = TipController(weak, model='discrete', min_tension=2.0)
    tensions = np.full(4, 2.0)
    plant = StaticsSolver(weak, model='discrete')
    tip = plant.solve_tensions(tensions).tip_position
    # Towards t3's side: only more t3, or less of its antagonist t1, both at their bounds.
    towards_t3 = StaticsSolver(robot, model='discrete').solve_tensions(
        tensions + [0.0, 0.0, 0.0, 1.0]).tip_position - tip
    target = tip + 0.01 * towards_t3 / np.linalg.norm(towards_t3)
    step = controller.step(tensions, tip, target, gain=0.5, max_step=0.01)
    assert not step.feasible
    assert step.tensions[3] == pytest.approx(2.0)
    assert np.all(step.tensions >= 2.0) and np.all(step.tensions <= weak.max_tensions)
    # The closest reachable step: not pulling t1 (away from the target), and no farther
    # from the desired step than not moving at all, which the bounds allow.
    assert step.tensions[1] == pytest.approx(2.0)
    perpendicular = np.vstack((weak.base.normal, weak.base.binormal))
    assert (np.linalg.norm(perpendicular @ (step.predicted - step.desired))
            <= np.linalg.norm(perpendicular @ step.desired) + 1e-9)


def test_planar_robot_controls_its_one_in_plane_direction():
    """
    Two antagonistic tendons bend the rod only in the (d3, d1) plane.

    The controller controls the one in-plane direction d1 and ignores the target's off-plane part,
    which no tension can reach, instead of reporting every step infeasible.
    """
    data = load_robot(default_robot_file()).to_dict()
    data['vertebrae'] = {'positions': [0.05, 0.10, 0.15, 0.20, 0.25], 'mass': 0.002}
    data['tendons'] = [{'name': 'up', 'offset': 0.015, 'angle_deg': 0.0, 'max_tension': 5.0},
                       {'name': 'down', 'offset': 0.015, 'angle_deg': 180.0, 'max_tension': 5.0}]
    robot = robot_from_dict(data)
    controller = TipController(robot, model='discrete', min_tension=MIN_TENSION)
    np.testing.assert_allclose(controller.projection, [robot.base.normal], atol=1e-15)
    reachable = StaticsSolver(robot, model='discrete').solve_tensions([2.0, 0.2]).tip_position
    off_plane = 0.02 * robot.base.binormal
    tip, tensions, history = run(robot, reachable + off_plane, 25)
    assert all(step.feasible for _, step in history)
    assert abs(robot.base.normal @ (tip - reachable)) < 1e-4
    assert tensions[1] == pytest.approx(MIN_TENSION)     # the antagonist stays relaxed
