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
The explicit model simulates every tension its description allows, to rest (issue 37).

Every shipped tendon-robot description that the explicit integrator serves (``auto`` picks it)
is stepped from the straight rod at rest to each corner of its tension box (each tendon at 0
or at its ``max_tension``: single tendons, pairs, all), the harshest input an operator can
give, and run until the tip rests. Before the strain-rate damping of the highest modes
(docs/tendon_robot.md, "Strain-rate damping") 25 of the default robot's 30 steps from the
straight and the hanging rod diverged. The rest pose is checked against the discrete statics
(an independent formulation of the same robot at rest), followed from zero tension along the
corner's direction so that it stays on the branch the rod swings to, where the rod resolves
the curl (50 elements or more: the default robot). Tolerance: 1 % of the rod length, which
holds the explicit model's own discretisation (measured at 50 elements: 2.0 mm with all four
tendons at 20 N, the rod 5 % shorter, 0.5 mm at 100 elements; up to 1.6 mm for the curls of
more than a turn). The planar robot's 10 elements (25 mm each) bend by 0.6 rad each in its
full-turn curl, 17 mm off the statics: it is checked for rest only.
"""

import itertools
from pathlib import Path

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.dynamics.simulation import choose_integrator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

CONFIG = Path(default_robot_file()).parent
# Descriptions this fine are compared with the statics at rest.
RESOLVED_ELEMENTS = 50
# a tip creeping at < 1e-4 m/s is within ~1e-5 m of rest (slowest mode ~15 1/s)
REST_SPEED = 1e-4


def explicit_descriptions():
    """Every shipped tendon-robot description whose dynamic model is the explicit one."""
    found = []
    for path in sorted(CONFIG.glob('*.yaml')):
        try:
            robot = load_robot(path)
        except RobotDescriptionError:       # another robot kind, or not a description
            continue
        if choose_integrator(robot)[0] == 'explicit':
            found.append(path)
    return found


DESCRIPTIONS = explicit_descriptions()
CASES = [(path, corner) for path in DESCRIPTIONS
         for corner in itertools.product((0, 1), repeat=len(load_robot(path).tendons))
         if any(corner)]


def test_the_walk_covers_the_default_robot():
    assert Path(default_robot_file()) in DESCRIPTIONS
    assert len(CASES) >= 15


def statics_along(robot, tensions, steps=20):
    """Discrete statics at ``tensions``, followed from zero in ``steps`` equal increments."""
    solver = StaticsSolver(robot, 'discrete')
    for fraction in np.linspace(1.0 / steps, 1.0, steps):
        result = solver.solve_tensions(fraction * tensions)
    return result


@pytest.mark.parametrize('path, corner', CASES, ids=[
    f'{path.stem}-{"".join(map(str, corner))}' for path, corner in CASES])
def test_a_step_to_each_corner_of_the_tension_box_comes_to_rest(path, corner):
    robot = load_robot(path)
    tensions = np.array(corner) * robot.max_tensions
    sim = TendonSimulator(robot)
    sim.set_tensions(tensions)
    state = sim.run_until_steady(15.0, speed_tolerance=REST_SPEED)
    assert sim.is_steady(speed_tolerance=REST_SPEED)
    if robot.rod.elements < RESOLVED_ELEMENTS:
        return
    result = statics_along(robot, tensions)
    tolerance = 0.01 * robot.rod.length
    assert np.linalg.norm(state.tip_position - result.tip_position) < tolerance
    np.testing.assert_allclose(state.vertebra_positions, result.vertebra_positions,
                               atol=tolerance)


def test_curling_one_way_then_the_other_way_at_full_tension_comes_to_rest():
    """From two neighbouring tendons at max to the opposite two: the most violent swing."""
    robot = load_robot(default_robot_file())
    top = robot.max_tensions
    sim = TendonSimulator(robot)
    sim.set_tensions(top * [1, 1, 0, 0])
    sim.run_until_steady(15.0, speed_tolerance=REST_SPEED)
    sim.set_tensions(top * [0, 0, 1, 1])
    state = sim.run_until_steady(15.0, speed_tolerance=REST_SPEED)
    assert sim.is_steady(speed_tolerance=REST_SPEED)
    result = statics_along(robot, top * [0, 0, 1, 1])
    assert np.linalg.norm(state.tip_position - result.tip_position) < 0.01 * robot.rod.length


def test_a_slow_ramp_through_a_former_flutter_window_comes_to_rest():
    """
    6 N on two neighbouring tendons, ramped over 1 s: a slowly growing kHz mode, 3.8 s later.

    Without the strain-rate damping the rod at rest under [6, 6, 0, 0] N had a pair of
    coalesced 2.7 kHz modes growing at 5.1 1/s, against the 1.5 1/s that the
    mass-proportional damper takes from them (the explicit model's linearisation there), and
    diverged 3.8 s into the run.
    """
    robot = load_robot(default_robot_file())
    tensions = np.array([6.0, 6.0, 0.0, 0.0])
    sim = TendonSimulator(robot)
    while sim.time < 1.0:
        sim.set_tensions(tensions * min(1.0, sim.time + 0.01))
        sim.advance(0.01)
    sim.run_until_steady(10.0, speed_tolerance=REST_SPEED)
    sim.advance(2.0)                    # and stays there
    assert sim.is_steady(speed_tolerance=REST_SPEED)
    result = statics_along(robot, tensions)
    assert np.linalg.norm(sim.state().tip_position - result.tip_position) < 0.001
