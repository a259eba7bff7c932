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


def compliant(compliance, robot=None):
    """Return ``robot`` (default: the weightless one) with tendons of ``compliance`` [1/N]."""
    data = (robot or weightless()).to_dict()
    for tendon in data['tendons']:
        tendon['compliance'] = compliance
    return robot_from_dict(data)


@pytest.mark.parametrize('model', ('cosserat', 'discrete'))
def test_stiff_tendons_held_taut_guide_the_tip(model):
    """
    Two opposite stiff tendons held by displacement inputs keep the tip from turning: 4 P_cr.

    To first order a tendon's length on the straight rod changes by d(p . d3) + (dtheta x r) . d3
    at its anchor (the changes of its chords telescope), so t0 and t2, taut at +-r along d1
    (world z) to the tip, fix the tip's axial displacement and its rotation about d2: bending
    in the x-z plane is that of a column clamped at the base and guided at the tip (it sways,
    it does not turn), P = pi^2 E I / L^2 = 4 P_cr, bending in the x-y plane the cantilever's.
    So between P_cr and 4 P_cr the held rod has one negative mode, under tension inputs two;
    beyond 4 P_cr both have two. At 0.95 and 1.05 x 4 P_cr: the crossing measured within 2.5 %
    (shear, the rod's compression, ``discrete``'s chords between discs). Inextensible
    ``kirchhoff`` cannot be pulled straight by stiff tendons.
    """
    robot = weightless()
    solver = StaticsSolver(robot, model)
    for factor, held_modes in ((0.9, 0), (3.8, 1), (4.2, 2)):
        force = [-factor * euler_load(robot), 0.0, 0.0]
        result = solver.solve_displacements([1e-3, 0.0, 1e-3, 0.0], force, [0.0, 0.0, 0.0])
        # straight (0.1 um: the discrete bays' Newton), t0 and t2 taut, t1 and t3 slack
        assert lateral(result) < 1e-7
        assert np.all(result.tensions[[0, 2]] > 1.0) and np.all(result.tensions[[1, 3]] == 0.0)
        held = check_stability(solver, result, force, [0.0, 0.0, 0.0], displacements=True)
        pulled = check_stability(solver, result, force, [0.0, 0.0, 0.0])
        assert held.stable is (held_modes == 0) and held.negative_modes == held_modes
        assert pulled.negative_modes == (0 if factor < 1.0 else 2)


@pytest.mark.parametrize('model', MODELS)
def test_compliant_tendons_tend_to_tension_inputs(model):
    """
    A taut tendon of compliance C is a spring k = 1 / (C lam): as C grows, tension inputs.

    Four tendons at 0.3 N hold the straight rod under 2 P_cr, unstable in both planes under
    tension inputs. The same equilibrium under displacement inputs: the tension solve's
    displacements, solved for (the same tensions). The buckling modes turn the tip, so
    stretch the tendons: the smallest eigenvalue rises, by k (g . v)^2 to first order in k
    (g: a tendon length's gradient, v: the mode), so the rise times C lam (lam = l* - q, the
    unstretched length) tends to a constant: within 5 % at C = 0.3 and 1 1/N (2 % measured),
    and the rise falls tenfold from C = 0.03 1/N (20-fold measured).
    """
    force = [-2.0 * euler_load(DEFAULT), 0.0, 0.0]
    rise, scaled = [], []
    for C in (0.03, 0.3, 1.0):
        solver = StaticsSolver(compliant(C), model)
        pulled = solver.solve_tensions([0.3] * 4, force, [0.0, 0.0, 0.0])
        result = solver.solve_displacements(pulled.tendon_displacements, force, [0.0, 0.0, 0.0])
        # the same equilibrium (1 uN: the solver's tolerance)
        np.testing.assert_allclose(result.tensions, 0.3, rtol=0.0, atol=1e-6)
        if C == 0.03:   # the tension inputs' check does not depend on C
            tensions = check_stability(solver, result, force, [0.0, 0.0, 0.0])
            assert tensions.negative_modes == 2
        held = check_stability(solver, result, force, [0.0, 0.0, 0.0], displacements=True)
        lam = solver.rest_lengths[0] - result.tendon_displacements[0]
        rise.append(held.min_eigenvalue - tensions.min_eigenvalue)
        scaled.append(rise[-1] * C * lam)
    assert rise[0] > 10.0 * rise[2] > 0.0
    assert scaled[1] == pytest.approx(scaled[2], rel=0.05)


@pytest.mark.parametrize('model', MODELS)
def test_stiff_springs_tend_to_the_constraint_of_stiff_tendons(model):
    """
    As C -> 0 the springs k g g^T stiffen the modes that stretch a tendon out of the spectrum.

    What remains is the Hessian on the constraints' tangent space, the check of stiff tendons
    (C = 0). Four tendons at 0.3 N on the straight rod under 2 P_cr (its tension inputs: two
    negative modes), the displacements their equilibrium needs (the tension solve's): held by
    stiff tendons, the tip can neither turn nor move along the rod, and the rod is stable
    below the guided column's 4 P_cr; at C = 1e-4 1/N the same smallest eigenvalue (1e-6
    E I / L: round-off of the springs' k = 4e4 N/m), at C = 1e-2 1/N a lower one.
    """
    force = [-2.0 * euler_load(DEFAULT), 0.0, 0.0]
    smallest = []
    for C in (0.0, 1e-4, 1e-2):
        solver = StaticsSolver(compliant(C), model)
        result = solver.solve_tensions([0.3] * 4, force, [0.0, 0.0, 0.0])
        held = check_stability(solver, result, force, [0.0, 0.0, 0.0], displacements=True)
        assert held.stable is True
        smallest.append(held.min_eigenvalue)
    assert smallest[1] == pytest.approx(smallest[0], abs=1e-6)
    assert smallest[2] < smallest[0] - 0.1


@pytest.mark.parametrize('model, robot, q, force', [
    ('cosserat', DEFAULT, [0.004, 0.0, 0.0, 0.0], None),
    ('discrete', DEFAULT, [0.004, 0.002, 0.0, 0.0], None),
    ('kirchhoff', compliant(0.01, DEFAULT), [0.004, 0.0, 0.0, 0.0], None),
    ('cosserat', turned([0, 0, 1], [1, 0, 0]), [0.002, 0.0, 0.002, 0.0], [0.0, 0.0, -0.6])])
def test_displacement_inputs_only_add_stiffness(model, robot, q, force):
    """
    Held by motors, taut tendons add a spring (positive semidefinite) or a constraint.

    Either raises no eigenvalue of the tension inputs' Hessian at the same tensions (Weyl;
    Cauchy's interlacing on the constraints' tangent space): the smallest is no lower (1e-7
    E I / L: round-off), nor are there more negative modes. The default robot pulled on one
    and two tendons, pointing up and held by t0 and t2 under 0.6 N down, beyond its buckling
    load (one plane guided: one negative mode where tension inputs have two).
    """
    solver = StaticsSolver(robot, model)
    result = solver.solve_displacements(q, force, None if force is None else [0.0, 0.0, 0.0])
    held = check_stability(solver, result, force, None if force is None else [0.0] * 3,
                           displacements=True)
    pulled = check_stability(solver, result, force, None if force is None else [0.0] * 3)
    assert held.min_eigenvalue >= pulled.min_eigenvalue - 1e-7
    assert held.negative_modes <= pulled.negative_modes
    if force is not None:
        assert (held.negative_modes, pulled.negative_modes) == (1, 2)


@pytest.mark.parametrize('model', MODELS)
@pytest.mark.parametrize('q', [0.0, -1e-3])
def test_slack_tendons_leave_the_buckled_cantilever_unstable(model, q):
    """
    At 1.1 P_cr the straight rod shortens: tendons held at q = 0 or let out go slack.

    A slack tendon holds nothing: the check is the tension inputs' (all tensions 0), two
    negative modes. The inextensible ``kirchhoff`` rod does not shorten: at q = 0 its tendons
    are at the edge, taut at zero tension (3e-14 N), which counts as slack (the choice on the
    safe side: two opposite stiff tendons there would each block the other's slack direction).
    """
    robot = weightless()
    force = [-1.1 * euler_load(robot), 0.0, 0.0]
    solver = StaticsSolver(robot, model)
    result = solver.solve_displacements([q] * 4, force, [0.0, 0.0, 0.0])
    if model == 'kirchhoff' and q == 0.0:
        assert np.all(result.tensions < 1e-12) and np.all(result.slack == 0.0)
    else:
        assert np.all(result.tensions == 0.0) and np.all(result.slack > 0.0)
    held = check_stability(solver, result, force, [0.0, 0.0, 0.0], displacements=True)
    pulled = check_stability(solver, result, force, [0.0, 0.0, 0.0])
    assert held.stable is False and held.negative_modes == 2
    assert held.min_eigenvalue == pulled.min_eigenvalue
