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
The continuous statics against the equilibrium of the cut-off rod, and closed forms.

Cut the robot at s: the part beyond (rod and tendon pieces) feels the rod's internal wrench,
each tendon's pull back along its tangent t_i at its hole, and the external loads beyond s.
Without gravity and tip load that gives, in the body frame,
n = -sum tau_i t_i, m = -sum r_i x tau_i t_i, with t_i = pb_i / |pb_i|,
pb_i = u x r_i + r_i' + v: at each s an algebraic equation for the strains (v, u) alone
(n = Kse (v - e3), m = Kbt u), solved here pointwise, then p' = R v, R' = R u^ integrated. No
distributed tendon load, no termination load: the statics' Rucker & Webster formulation is not
used. The two gave tips 1 mm apart on a multi-section robot with a helical tendon until the
statics loaded the tendons that run on through a termination at the corner the jump of u puts
in their path.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.cosserat import PYELASTICA_SHEAR_COEFFICIENT, stiffness_matrices
from tendon_robot_sim.models.geometry import hat
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics.reference import solve_reference
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

E3 = np.array([0.0, 0.0, 1.0])
STEEL = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml')


def weightless_steel_rod(tendons, damping_ratio=0.1):
    data = STEEL.to_dict()
    data['rod']['damping'] = {'ratio': damping_ratio}
    return robot_from_dict(dict(data, gravity=[0.0, 0.0, 0.0], tendons=tendons))


def multi_section_with_a_helix(damping_ratio=0.1):
    """Return the robot whose running tendon turns a corner where the helical one ends."""
    return weightless_steel_rod([
        {'name': 'on', 'offset': 0.015, 'angle_deg': 90.0},
        {'name': 'helix', 'offset': 0.012, 'angle_deg': 180.0, 'end': 0.375,
         'routing': 'helical', 'turns': -0.5}], damping_ratio)


def cut_strains(robot, model, tensions, s, guess):
    """Strains (v, u) at s from the equilibrium of the part beyond the cut (no loads)."""
    Kse, Kbt = stiffness_matrices(robot.rod, PYELASTICA_SHEAR_COEFFICIENT)
    running = [(tau, *(a[:, 0] for a in tendon.hole(np.array([s]))[:2]))
               for tau, tendon in zip(tensions, robot.tendons) if s < tendon.end]

    def imbalance(x):
        v, u = (E3, x[3:]) if model == 'kirchhoff' else (x[:3], x[3:])
        n, m = np.zeros(3), np.zeros(3)
        for tau, r, r_s in running:
            pb = np.cross(u, r) + r_s + v
            pull = tau * pb / np.linalg.norm(pb)
            n -= pull
            m -= np.cross(r, pull)
        force = np.zeros(3) if model == 'kirchhoff' else Kse * (v - E3) - n
        return np.concatenate((force, Kbt * u - m))

    # full output: at round-off fsolve would warn that it makes no progress
    return fsolve(imbalance, guess, xtol=1e-13, full_output=True)[0]


def cut_tip(robot, model, tensions):
    """Tip position of the pointwise cut equilibrium, integrated segment by segment."""
    y = np.concatenate((robot.base.position, robot.base.rotation.ravel()))
    breaks = sorted({0.0, robot.rod.length, *(t.end for t in robot.tendons)})
    guess = np.concatenate((E3, np.zeros(3)))
    for start, end in zip(breaks[:-1], breaks[1:]):
        def rhs(s, y, start=start, end=end):
            # the strains of the open segment: its tendons, also at its ends
            x = cut_strains(robot, model, tensions, min(max(s, start), end - 1e-12), guess)
            guess[:] = x
            v = E3 if model == 'kirchhoff' else x[:3]
            R = y[3:].reshape(3, 3)
            return np.concatenate((R @ v, (R @ hat(x[3:])).ravel()))
        y = solve_ivp(rhs, (start, end), y, rtol=1e-10, atol=1e-12).y[:, -1]
    return y[:3]


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff'])
def test_a_helical_tendon_ending_mid_rod_beside_one_running_on(model):
    """
    The tendon that runs on turns where the other ends: 1 mm at the tip without its load.

    Measured before the fix: 0.97 mm (kirchhoff and cosserat, the statics and its scipy twin
    alike); after it 4e-11 m.
    """
    robot = multi_section_with_a_helix()
    tensions = [8.0, 5.0]
    expected = cut_tip(robot, model, tensions)
    fast = StaticsSolver(robot, model).solve_tensions(tensions)
    np.testing.assert_allclose(fast.tip_position, expected, rtol=0, atol=1e-7)
    twin = solve_reference(robot, model, tensions=tensions, rtol=1e-10)
    np.testing.assert_allclose(twin.tip_position, expected, rtol=0, atol=1e-7)


V4 = load_robot(share_dir() / 'config' / 'opencr_ftdcr_v4.yaml')
V4_AT_50_N = [50.0 if t.name in ('s1_t0', 's2_t1', 's3_t2') else 0.0 for t in V4.tendons]


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff'])
def test_the_ftdcr_v4_corners_at_its_largest_tensions(model):
    """
    Two 50 N tendons run on through the first corner, where the plain fixed point diverged.

    It contracts by about -sum tau r^2 / (E I) per pass, 0.8 here on the straight rod. Before
    Newton's method the statics failed on the robot as configured (with gravity) and its scipy
    twin also without gravity. The tips agree with the cut within 1e-7 m: at a 1 mm step the
    statics' RK4 is 1.4e-8 m off (2.8e-7 at 2 mm, 2.6e-6 at its default 5 mm: fourth order),
    the twin 3e-12 m; the cut's own tolerances (fsolve 1e-13, solve_ivp 1e-10) are far below.
    """
    assert StaticsSolver(V4, model).solve_tensions(V4_AT_50_N).converged
    robot = robot_from_dict(dict(V4.to_dict(), gravity=[0.0, 0.0, 0.0]))
    expected = cut_tip(robot, model, V4_AT_50_N)
    fast = StaticsSolver(robot, model, step=0.001).solve_tensions(V4_AT_50_N)
    np.testing.assert_allclose(fast.tip_position, expected, rtol=0, atol=1e-7)
    twin = solve_reference(robot, model, tensions=V4_AT_50_N, rtol=1e-10)
    np.testing.assert_allclose(twin.tip_position, expected, rtol=0, atol=1e-7)


def test_the_implicit_dynamics_comes_to_rest_there():
    """
    The implicit dynamics shares the corner loads: damped, it settles on the same tip.

    Within its coarser default grid (2 um measured); without the corner loads 1 mm away.
    """
    robot = multi_section_with_a_helix(damping_ratio=0.9)
    sim = ImplicitSimulator(robot, dt=0.005)
    sim.set_tensions({'on': 8.0, 'helix': 5.0})
    state = sim.advance(1.0)
    expected = cut_tip(robot, 'cosserat', [8.0, 5.0])
    np.testing.assert_allclose(state.tip_position, expected, rtol=0, atol=1e-5)


def test_parallel_tendons_ending_at_three_arc_lengths():
    """Three sections, parallel tendons: their kinks come from the twist alone (um here)."""
    robot = weightless_steel_rod([
        {'name': 'a', 'offset': 0.015, 'angle_deg': 0.0, 'end': 0.2},
        {'name': 'b', 'offset': 0.015, 'angle_deg': 100.0, 'end': 0.35},
        {'name': 'c', 'offset': 0.01, 'angle_deg': 230.0}])
    tensions = [12.0, 9.0, 6.0]
    expected = cut_tip(robot, 'kirchhoff', tensions)
    fast = StaticsSolver(robot, 'kirchhoff').solve_tensions(tensions)
    np.testing.assert_allclose(fast.tip_position, expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize('model', ['cosserat', 'kirchhoff'])
def test_a_tip_moment_bends_a_circle_past_a_full_half_turn(model):
    """A pure tip moment M: an arc of curvature M / (E I), here 5 rad (286 degrees) of bend."""
    robot = weightless_steel_rod(STEEL.to_dict()['tendons'])
    EI, L = robot.rod.bending_stiffness, robot.rod.length
    angle = 5.0
    # d2 = d3 x d1 = x x (-z) = +y: a moment about +y turns d3 (x) towards -z
    result = StaticsSolver(robot, model).solve_tensions([0.0] * 4, [0.0, 0.0, 0.0],
                                                        [0.0, angle * EI / L, 0.0])
    radius = L / angle
    arc = [radius * np.sin(angle), 0.0, -radius * (1.0 - np.cos(angle))]
    np.testing.assert_allclose(result.tip_position, arc, rtol=0, atol=1e-7)


def test_cosserat_adds_the_shear_deflection_to_the_kirchhoff_cantilever():
    """
    A small tip force F: Kirchhoff sags F L^3 / (3 E I), Cosserat F L / (a G A) more.

    Timoshenko's cantilever; the shear part is 2e-9 m here, 1e-5 of the bending part, so the
    tolerance (1 % of it) sees whether the two models differ by the right term.
    """
    robot = weightless_steel_rod(STEEL.to_dict()['tendons'])
    rod, force = robot.rod, 1e-3
    Kse, Kbt = stiffness_matrices(rod, PYELASTICA_SHEAR_COEFFICIENT)
    bending = force * rod.length ** 3 / (3.0 * Kbt[0])
    shear = force * rod.length / Kse[0]
    sag = {model: -StaticsSolver(robot, model).solve_tensions(
        [0.0] * 4, [0.0, 0.0, -force]).tip_position[2] for model in ('cosserat', 'kirchhoff')}
    assert sag['kirchhoff'] == pytest.approx(bending, rel=1e-6)
    assert sag['cosserat'] - sag['kirchhoff'] == pytest.approx(shear, rel=0.01)
