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
A heavy, soft rod's rest shape: the statics against the heavy cantilever solved here.

A rod 0.1 m long, 5 mm in radius, 1000 kg/m^3, clamped horizontally (along y, gravity along
-z): w = rho A g = 0.77 N/m, and w L^3 / E I from 31 (E = 5e4 Pa) to 320 (4.9e3 Pa). From the
straight guess its rest shape is out of Newton's reach (the cold start and the equal load steps
at full weight failed from about 20); the continuation that scales gravity from the unloaded
rod finds it. Worse, the discrete model's cold start from the straight guess converged at
w L^3 / E I from 45 to 140 on an unstable equilibrium, the rod curled up over its base (at
E = 3e4 Pa, 52: the tip at y = -33 mm, z = -34 mm where the rod hangs to 23 mm, -94 mm): a
rod this heavy starts from the unloaded rod (continuation.HEAVY).

Reference, solved with scipy's solve_bvp (continued in the load from 1e-3 of it): the planar
Cosserat rod. phi(s) is the angle of the tangent d3 below the horizontal, d1 (the base normal,
up at the clamp) is turned with it. Cut at s, the rod beyond carries its weight, so the
internal force is n = -w (L - s) e_z, in the body frame n1 = -w (L - s) cos phi,
n3 = w (L - s) sin phi. The strain v = (v1, 0, v3) follows from the constitutive law: linear
(cosserat) v1 = n1 / (a G A), v3 = 1 + n3 / (E A); PyElastica's (discrete) the same with n
times the dilatation e = |v|, and the bending moment E I u / e^3; inextensible (kirchhoff)
v = e3. Then p' = v1 d1 + v3 d3 and, with M the bending moment about x (M = -E I phi' / e^k,
k = 3 for PyElastica's law, else 0), M' = w (L - s) y' (the moment balance m' + p' x n = 0),
M(L) = the tip moment, phi(0) = 0, p(0) = 0. Inextensible, it is the elastica under its own
weight, E I phi'' = -w (L - s) cos phi.

The extension and shear are part of the reference, not of the tolerance: in the cosserat model
they move the tip 1.5 mm (E = 5e4) to 12 mm (4.9e3) from the inextensible shape, about half the
bound the strains alone give, integral of |n| / (a G A) ds = w L^2 / (2 a G A) (3.1 and 31 mm),
a tolerance too loose to tell a wrong shape near the right one. What is left is the RK4 error of
the model's steps (cosserat, 5 mm: 0.003 mm at w L^3 / E I = 31, 0.07 mm at 157, 0.5 mm at 320,
where the clamp's curvature concentrates; kirchhoff 0.08 and discrete 0.04 mm at 320; the 1 mm
step the cases at 320 take here brings it to 0.001 mm).

A tendon on top (angle 0, offset d, in the bending plane) with tension T: cut the inextensible
rod anywhere and the tendon crosses the cut parallel to the backbone (a constant offset in the
plane keeps its tangent the rod's), at the offset, so it adds the uniform moment T d: the same
problem with M(L) = T d.
"""

import math

import numpy as np
import pytest
from scipy.integrate import solve_bvp

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.cosserat import PYELASTICA_SHEAR_COEFFICIENT
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.model import TendonStatics
from tendon_robot_sim.models.rod.statics.continuation import gravity_load, HEAVY
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

LENGTH, RADIUS, DENSITY, GRAVITY = 0.1, 0.005, 1000.0, 9.81
AREA = math.pi * RADIUS ** 2
SECOND_MOMENT = math.pi * RADIUS ** 4 / 4
WEIGHT = DENSITY * AREA * GRAVITY      # w [N/m]
OFFSET = 0.004
TOLERANCE = 1e-4     # m: the RK4 error (module docstring) and then some


def soft_rod(youngs_modulus, discs=False, angle_deg=-30.0, damping=None):
    rod = {'length': LENGTH, 'radius': RADIUS, 'density': DENSITY,
           'youngs_modulus': youngs_modulus, 'shear_modulus': youngs_modulus / 3.0}
    if damping is not None:
        rod['damping'] = {'ratio': damping}
    data = {'name': 'soft', 'gravity': [0.0, 0.0, -GRAVITY],
            'base': {'position': [0.0, 0.0, 0.0], 'direction': [0.0, 1.0, 0.0],
                     'normal': [0.0, 0.0, 1.0]},
            'rod': rod,
            'tendons': [{'name': 't0', 'offset': OFFSET, 'angle_deg': angle_deg,
                         'max_tension': 1.0}]}
    if discs:
        data['vertebrae'] = {'count': 10, 'mass': 0.0}
    return robot_from_dict(data)


def heavy_cantilever_tip(youngs_modulus, law='linear', tip_moment=0.0):
    """
    Return the tip (y, z) [m] of the planar heavy cantilever of the module docstring.

    ``law``: 'linear', 'pyelastica' or 'inextensible'; ``tip_moment`` [N m] about x.
    """
    EI = youngs_modulus * SECOND_MOMENT
    shear = PYELASTICA_SHEAR_COEFFICIENT * youngs_modulus / 3.0 * AREA
    axial = youngs_modulus * AREA
    extensible = law != 'inextensible'

    def derivatives(s, y, load):
        phi, moment = y[0], y[1]
        carried = load * WEIGHT * (LENGTH - s)
        a = -carried * np.cos(phi) / shear if extensible else 0.0 * s      # n1 / (a G A)
        b = carried * np.sin(phi) / axial if extensible else 0.0 * s       # n3 / (E A)
        # v = (a e, 0, 1 + b e) with e = |v| (PyElastica) or 1 (linear, inextensible)
        e = ((b + np.sqrt(1.0 - a * a)) / (1.0 - a * a - b * b) if law == 'pyelastica'
             else np.ones_like(s))
        v1, v3 = a * e, 1.0 + b * e
        dy = v1 * np.sin(phi) + v3 * np.cos(phi)
        dz = v1 * np.cos(phi) - v3 * np.sin(phi)
        bend = e ** 3 if law == 'pyelastica' else 1.0
        return np.vstack((-bend * moment / EI, carried * dy, dy, dz))

    s = np.linspace(0.0, LENGTH, 101)
    y = np.vstack((0.0 * s, 0.0 * s, s, 0.0 * s))
    for load in np.geomspace(1e-3, 1.0, 25):
        solution = solve_bvp(
            lambda s, y: derivatives(s, y, load),
            lambda start, end: np.array([start[0], start[2], start[3],
                                         end[1] - load * tip_moment]),
            s, y, tol=1e-8, max_nodes=100000)
        assert solution.success, solution.message
        s, y = solution.x, solution.y
    return y[2:, -1]


def w_l3_ei(youngs_modulus):
    return WEIGHT * LENGTH ** 3 / (youngs_modulus * SECOND_MOMENT)


@pytest.mark.parametrize('model, youngs_modulus, law', [
    ('kirchhoff', 5e4, 'inextensible'), ('kirchhoff', 1e4, 'inextensible'),
    ('kirchhoff', 4.9e3, 'inextensible'),
    ('cosserat', 5e4, 'linear'), ('cosserat', 1e4, 'linear'), ('cosserat', 4.9e3, 'linear'),
    ('discrete', 5e4, 'pyelastica'), ('discrete', 4.9e3, 'pyelastica'),
    # where the straight guess led it to the rod curled over its base (module docstring)
    ('discrete', 3.5e4, 'pyelastica'), ('discrete', 3e4, 'pyelastica'),
    ('discrete', 1.75e4, 'pyelastica')])
def test_heavy_soft_rod_hangs_as_the_heavy_cantilever(model, youngs_modulus, law):
    # w L^3 / E I = 31, 157, 320 (and 45, 52, 90); the default step but at 320 (module docstring)
    assert 30.0 < w_l3_ei(youngs_modulus) < 321.0
    step = 0.001 if youngs_modulus < 5e3 else None
    robot = soft_rod(youngs_modulus, discs=model == 'discrete')
    result = StaticsSolver(robot, model, step=step).solve_tensions([0.0])
    reference = heavy_cantilever_tip(youngs_modulus, law)
    assert result.tip_position[0] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(result.tip_position[1:], reference, rtol=0.0, atol=TOLERANCE)


def test_gravity_load_of_a_bare_rod_and_of_the_shipped_robots():
    """
    A bare rod's gravity load is w L^3 / E I; every shipped robot's is far below HEAVY.

    So their cold solves start from the straight guess, as they did before HEAVY.
    """
    assert gravity_load(soft_rod(3e4)) == pytest.approx(w_l3_ei(3e4), rel=1e-12)
    loads = {}
    for path in sorted((share_dir() / 'config').glob('*.yaml')):
        try:
            loads[path.name] = gravity_load(load_robot(path))
        except RobotDescriptionError:       # another robot kind, or not a description
            continue
    # the default robot: its ten 2 g discs weigh as much as the rod
    assert loads['robot.yaml'] == pytest.approx(2.35, abs=0.01)
    assert len(loads) >= 10 and max(loads.values()) < HEAVY / 2


def test_reference_is_the_textbook_elastica():
    """
    The inextensible reference against E I phi'' = -w (L - s) cos phi, phi(0) = phi'(L) = 0.

    That second-order form in s / L, solved on its own from the straight rod, and the linear
    cantilever's tip deflection w L^4 / (8 E I) at small loads.
    """
    youngs_modulus = 5e4
    alpha = w_l3_ei(youngs_modulus)
    s = np.linspace(0.0, 1.0, 201)
    solution = solve_bvp(lambda s, y: np.vstack((y[1], -alpha * (1.0 - s) * np.cos(y[0]))),
                         lambda start, end: np.array([start[0], end[1]]), s,
                         np.zeros((2, s.size)), tol=1e-10, max_nodes=100000)
    assert solution.success, solution.message
    fine = np.linspace(0.0, 1.0, 20001)
    phi = solution.sol(fine)[0]
    textbook = LENGTH * np.array([np.trapezoid(np.cos(phi), fine),
                                  -np.trapezoid(np.sin(phi), fine)])
    np.testing.assert_allclose(heavy_cantilever_tip(youngs_modulus, 'inextensible'), textbook,
                               rtol=0.0, atol=1e-7)
    # the QA round's own solve of it: 33.3 mm out, 87.7 mm down
    np.testing.assert_allclose(textbook, [0.0333, -0.0877], atol=1e-4)
    stiff = 1e9
    assert -heavy_cantilever_tip(stiff, 'inextensible')[1] == pytest.approx(
        WEIGHT * LENGTH ** 4 / (8.0 * stiff * SECOND_MOMENT), rel=1e-3)


def test_heavy_soft_rod_with_a_tendon_on_top():
    """Hang with 0.02 N on a tendon in the bending plane (a tip moment T d), w L^3 / E I 78."""
    youngs_modulus, tension = 2e4, 0.02
    result = StaticsSolver(soft_rod(youngs_modulus, angle_deg=0.0), 'kirchhoff').solve_tensions(
        [tension])
    reference = heavy_cantilever_tip(youngs_modulus, 'inextensible', tension * OFFSET)
    np.testing.assert_allclose(result.tip_position[1:], reference, rtol=0.0, atol=TOLERANCE)
    # the tendon holds it out: 5.7 mm further than without it
    assert reference[0] - heavy_cantilever_tip(youngs_modulus, 'inextensible')[0] > 0.005


@pytest.mark.parametrize('model', ['cosserat', 'discrete'])
def test_heavy_soft_rod_with_a_slack_tendon_in_displacement_mode(model):
    """Let out 20 mm, the tendon stays slack and the rod hangs as without it."""
    robot = soft_rod(5e4, discs=model == 'discrete')
    result = StaticsSolver(robot, model).solve_displacements([-0.02])
    assert result.tensions[0] == 0.0 and result.slack[0] > 0.0
    reference = heavy_cantilever_tip(5e4, 'linear' if model == 'cosserat' else 'pyelastica')
    np.testing.assert_allclose(result.tip_position[1:], reference, rtol=0.0, atol=TOLERANCE)


def test_quasi_static_simulator_model_starts_from_the_rest_shape():
    """The simulator's quasi_static model (auto: discrete with discs) starts hanging."""
    model = TendonStatics(soft_rod(5e4, discs=True), 'auto')
    reference = heavy_cantilever_tip(5e4, 'pyelastica')
    np.testing.assert_allclose(model.state().tip.position[1:], reference, rtol=0.0,
                               atol=TOLERANCE)


def test_the_explicit_dynamics_settles_on_the_heavy_cantilever():
    """
    The PyElastica simulator, from the straight rod, rests where the reference hangs.

    Within 1 mm, as the discrete statics and the simulator agree on the default robot
    (../../test_statics_simulator.py: the simulator's 50 elements); here 0.2 mm.
    """
    sim = TendonSimulator(soft_rod(5e4, discs=True, damping=0.9))
    sim.set_tensions([0.0])
    state = sim.run_until_steady(10.0, speed_tolerance=1e-4)
    assert sim.is_steady(speed_tolerance=1e-4)
    reference = heavy_cantilever_tip(5e4, 'pyelastica')
    np.testing.assert_allclose(state.tip_position[1:], reference, rtol=0.0, atol=1e-3)
