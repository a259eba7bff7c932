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
The stability check of a statics equilibrium against known results.

models/rod/statics/analysis/stability.py.

Euler's cantilever (P_cr = pi^2 E I / (4 L^2)): straight and stable below P_cr, straight and
unstable above it (in both bending planes of the round rod), the buckled elastica stable; a
tendon along the rod at constant tension does not buckle it however hard it pulls.
"""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ellipk

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.analysis.stability import check_stability
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file())
MODELS = ('cosserat', 'kirchhoff', 'discrete')


def weightless():
    """Return the default robot without gravity or vertebra mass, pointing along +x."""
    data = DEFAULT.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    data['vertebrae']['mass'] = 0.0
    return robot_from_dict(data)


def euler_load(robot):
    """Buckling load [N] of the clamped-free rod under a dead axial tip load."""
    return math.pi ** 2 * robot.rod.bending_stiffness / (4.0 * robot.rod.length ** 2)


def lateral(result):
    """Largest distance [m] of the backbone from the x axis (the unloaded rod's)."""
    return np.max(np.linalg.norm(result.centerline[1:3], axis=0))


@pytest.mark.parametrize('model', MODELS)
@pytest.mark.parametrize('factor, stable', [(0.9, True), (1.1, False)])
def test_straight_cantilever_is_stable_only_below_the_euler_load(model, factor, stable):
    robot = weightless()
    force = [-factor * euler_load(robot), 0.0, 0.0]
    solver = StaticsSolver(robot, model)
    result = solver.solve_tensions([0.0] * 4, force, [0.0, 0.0, 0.0])
    # the straight shape is what the solver returns on both sides of P_cr (1 nm: round-off)
    assert lateral(result) < 1e-9
    check = check_stability(solver, result, force, [0.0, 0.0, 0.0])
    assert check.stable is stable
    assert check.min_eigenvalue > 0.0 if stable else check.min_eigenvalue < 0.0
    # a round rod buckles in both bending planes at once
    assert check.negative_modes == (0 if stable else 2)


@pytest.mark.parametrize('model', ('cosserat', 'discrete'))
def test_buckled_elastica_is_stable(model):
    """
    At 1.5 P_cr the rod is led onto the buckled branch: loaded sideways, compressed, let go.

    Its tip deflection is the elastica's, 2 k / lambda with lambda = sqrt(P / E I) and
    K(k) = lambda L (k = sin(alpha / 2), alpha the tip's angle; Timoshenko & Gere 2.7), within
    1 % (the rod's shear and extension, the grid). One eigenvalue is zero: the buckled round rod
    turned about the load's line is an equilibrium as well.
    """
    robot = weightless()
    P, push = 1.5 * euler_load(robot), 0.2 * euler_load(robot)
    solver = StaticsSolver(robot, model)
    for k in range(1, 11):
        solver.solve_tensions([0.0] * 4, [-P * k / 10, 0.0, push], [0.0, 0.0, 0.0])
    for k in range(9, -1, -1):
        result = solver.solve_tensions([0.0] * 4, [-P, 0.0, push * k / 10], [0.0, 0.0, 0.0])
    lam = math.sqrt(P / robot.rod.bending_stiffness)
    # K(m = k^2) = lambda L, solved for k by bisection
    low, high = 0.0, 1.0 - 1e-12
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if ellipk(mid) < lam * robot.rod.length else (low, mid)
    deflection = 2.0 * math.sqrt(low) / lam
    assert result.tip_position[2] == pytest.approx(deflection, rel=0.01)
    check = check_stability(solver, result, [-P, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert check.stable is True
    assert check.negative_modes == 0 and check.neutral_modes == 1


@pytest.mark.parametrize('model', MODELS)
def test_tendon_compression_does_not_buckle_the_rod(model):
    """
    Two opposite tendons at 5 P_cr each compress the rod by 10 P_cr: it stays straight, stable.

    A tendon routed along the rod follows it when it bends, so its constant tension is no dead
    load: the potential T l has a second variation that cancels the compression's (for the
    continuous tendons of an inextensible rod exactly: the smallest eigenvalue is the unloaded
    rod's, within 1 % for the extensible one).
    """
    robot = weightless()
    T = 5.0 * euler_load(robot)
    solver = StaticsSolver(robot, model)
    unloaded = check_stability(solver, solver.solve_tensions([0.0] * 4), None, None)
    result = solver.solve_tensions([T, 0.0, T, 0.0])
    assert lateral(result) < 1e-9
    check = check_stability(solver, result)
    assert check.stable is True and check.negative_modes == 0
    if model != 'discrete':     # its tendons are chords between discs 25 mm apart
        assert check.min_eigenvalue == pytest.approx(unloaded.min_eigenvalue, rel=0.01)


def turned(direction, normal):
    data = DEFAULT.to_dict()
    data['base']['direction'], data['base']['normal'] = direction, normal
    return robot_from_dict(data)


@pytest.mark.parametrize('model', ('cosserat', 'discrete'))
@pytest.mark.parametrize('robot, tensions', [
    (DEFAULT, [2.0, 0.0, 0.0, 0.0]), (DEFAULT, [5.0, 3.0, 0.0, 0.0]),
    (turned([0, 0, -1], [1, 0, 0]), [0.0, 3.0, 0.0, 0.0])])
def test_tendon_actuated_robot_bent_or_hanging_is_stable(model, robot, tensions):
    solver = StaticsSolver(robot, model)
    check = check_stability(solver, solver.solve_tensions(tensions))
    assert check.stable is True and check.negative_modes == 0


@pytest.mark.parametrize('model', ('cosserat', 'discrete'))
def test_default_robot_pointing_up_is_unstable_above_its_buckling_load(model):
    """Up under gravity it buckles below its bare rod's 0.47 N: 0.6 N is beyond, 0.1 N not."""
    robot = turned([0, 0, 1], [1, 0, 0])
    solver = StaticsSolver(robot, model)
    for load, stable in ((0.6, False), (0.1, True)):
        force = [0.0, 0.0, -load]
        result = solver.solve_tensions([0.0] * 4, force, [0.0, 0.0, 0.0])
        assert check_stability(solver, result, force, [0.0, 0.0, 0.0]).stable is stable


def test_non_conservative_loads_are_not_checked():
    solver = StaticsSolver(weightless(), 'cosserat')
    moment = [0.0, 0.0, 1e-3]
    result = solver.solve_tensions([1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0], moment)
    check = check_stability(solver, result, [0.0, 0.0, 0.0], moment)
    assert check.stable is None and 'tip moment' in check.reason
    world = load_world(Path(default_robot_file()).parent / 'world_post.yaml')
    solver = StaticsSolver(weightless(), 'cosserat', world=world)
    check = check_stability(solver, solver.solve_tensions([1.0, 0.0, 0.0, 0.0]))
    assert check.stable is None and 'obstacles' in check.reason


def test_steel_rod_bent_against_a_sideways_load_is_unstable():
    """
    At 2 P_cr with 0.05 N down at the tip, Newton reaches the shape bent up, against it.

    Beyond P_cr with a small sideways load the cantilever has a stable shape bent with that load
    and an unstable one bent against it (the other branch of the imperfect bifurcation).
    """
    robot = load_robot(Path(default_robot_file()).parent / 'steel_rod_robot.yaml')
    P = 2.0 * euler_load(robot)
    solver = StaticsSolver(robot, 'cosserat')
    force = [-P, 0.0, -0.05]
    result = solver.solve_tensions([0.0] * 4, force, [0.0, 0.0, 0.0])
    assert result.tip_position[2] > 0.0     # what the solver returns from the straight guess
    assert check_stability(solver, result, force, [0.0, 0.0, 0.0]).stable is False
    for k in range(1, 11):      # compressed while pressed down: the branch that bends with it
        result = solver.solve_tensions([0.0] * 4, [-P * k / 10, 0.0, -0.05], [0.0, 0.0, 0.0])
    assert result.tip_position[2] < -0.1 * robot.rod.length
    assert check_stability(solver, result, force, [0.0, 0.0, 0.0]).stable is True
