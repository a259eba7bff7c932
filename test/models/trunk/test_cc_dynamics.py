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
CC Lagrange dynamics (models/trunk/dynamics.py, models/trunk/_kernels.py).

References are independent of the kernels: positions come from
constant_curvature.section_pose chained in plain numpy, derivatives from finite
differences of them, energies and equilibria from the description's own numbers.
"""

import copy
import math

import numpy as np
import pytest
from scipy import optimize

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.description import read_yaml, RobotDescriptionError
from tendon_robot_sim.models.geometry import section_pose
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from tendon_robot_sim.models.trunk import _kernels as kernels
from tendon_robot_sim.models.trunk.dynamics import (CCDynamics, CCDynamicsError, DEFAULT_SCHEME,
                                                    DEFAULT_TIME_STEP, load_cc_dynamics)
from tendon_robot_sim.models.trunk.robot import bellows_robot_from_dict

BHA_FILE = share_dir() / 'config' / 'bionic_handling_assistant.yaml'


def bha_data(damping: float = 1.0, inertia: bool = False) -> dict:
    """
    Return the BHA description with all dampers scaled by ``damping``.

    With ``inertia``, each mass gets a rotational inertia (a disc of radius 0.06 m, thickness 0.03
    m).
    """
    data = copy.deepcopy(read_yaml(BHA_FILE))
    for section in data['sections']:
        section['spline_damping'] *= damping
        for bellows in section['bellows']:
            bellows['damping'] *= damping
        if inertia:
            for mass in section['masses']:
                m = mass['mass']
                lateral = m * (3 * 0.06 ** 2 + 0.03 ** 2) / 12
                mass['inertia'] = [lateral, lateral * 1.1, m * 0.06 ** 2 / 2]
    return data


@pytest.fixture(scope='module')
def bha_rotating():
    return CCDynamics.from_bellows_robot(bellows_robot_from_dict(bha_data(inertia=True)))


@pytest.fixture(scope='module')
def bha():
    return load_cc_dynamics(BHA_FILE)


@pytest.fixture(scope='module')
def tendon():
    return load_cc_dynamics(default_robot_file())


# ---------------------------------------------------------------- independent references


def positions(model: CCDynamics, x: np.ndarray) -> np.ndarray:
    """(n, k, 3) world positions of the lumped masses, by section_pose."""
    fractions = model.model[1]
    R, p = model.base_rotation, model.base_position
    out = np.zeros(fractions.shape + (3,))
    for j, (length, ux, uy) in enumerate(np.reshape(x, (-1, 3))):
        theta, phi = math.hypot(ux, uy), math.atan2(uy, ux)
        for k, sigma in enumerate(fractions[j]):
            out[j, k] = p + R @ section_pose(sigma * theta, phi, sigma * length)[1]
        Rl, pl = section_pose(theta, phi, length)
        p, R = p + R @ pl, R @ Rl
    return out


def rotations(model: CCDynamics, x: np.ndarray) -> np.ndarray:
    """(n, k, 3, 3) world rotations of the arc frames at the lumped masses."""
    fractions = model.model[1]
    R = model.base_rotation
    out = np.zeros(fractions.shape + (3, 3))
    for j, (length, ux, uy) in enumerate(np.reshape(x, (-1, 3))):
        theta, phi = math.hypot(ux, uy), math.atan2(uy, ux)
        for k, sigma in enumerate(fractions[j]):
            out[j, k] = R @ section_pose(sigma * theta, phi, sigma * length)[0]
        R = R @ section_pose(theta, phi, length)[0]
    return out


def vee(S):
    """(..., 3) vee of the skew part of (..., 3, 3)."""
    return 0.5 * np.stack((S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0],
                           S[..., 1, 0] - S[..., 0, 1]), axis=-1)


def body_rate(model, x, v, step=1e-6):
    """(n, k, 3) body angular velocities R^T R' by central differences."""
    dR = (rotations(model, x + step * v) - rotations(model, x - step * v)) / (2 * step)
    return vee(np.swapaxes(rotations(model, x), -1, -2) @ dR)


def reference_terms(model: CCDynamics, x, v, step=1e-5):
    """M, c and the gravity force by finite differences of section_pose poses."""
    masses, inertias = model.model[2], model.model[9]
    N = x.size
    J = np.zeros(masses.shape + (3, N))
    J_w = np.zeros(masses.shape + (3, N))
    for col in range(N):
        dx = np.zeros(N)
        dx[col] = step
        J[..., col] = (positions(model, x + dx) - positions(model, x - dx)) / (2 * step)
        J_w[..., col] = body_rate(model, x, dx / step, step)
    big = step * 100
    h = (positions(model, x + big * v) - 2 * positions(model, x)
         + positions(model, x - big * v)) / big ** 2
    R = rotations(model, x)
    R_h = (rotations(model, x + big * v) - 2 * R + rotations(model, x - big * v)) / big ** 2
    w_dot = vee(np.swapaxes(R, -1, -2) @ R_h)
    w = np.einsum('jkia,a->jki', J_w, v)
    torque = inertias * w_dot + np.cross(w, inertias * w)
    M = (np.einsum('jk,jkia,jkib->ab', masses, J, J)
         + np.einsum('jki,jkia,jkib->ab', inertias, J_w, J_w))
    c = (np.einsum('jk,jkia,jki->a', masses, J, h) + np.einsum('jkia,jki->a', J_w, torque))
    q_gravity = np.einsum('jk,jkia,i->a', masses, J, model.model[3])
    return M, c, q_gravity


def bellows_potential(data: dict, x: np.ndarray, pressures: np.ndarray) -> float:
    """Springs + bending - work of the pressures, from the description's numbers."""
    energy, i = 0.0, 0
    for section, (length, ux, uy) in zip(data['sections'], np.reshape(x, (-1, 3))):
        theta, phi = math.hypot(ux, uy), math.atan2(uy, ux)
        energy += 0.5 * section['spline_stiffness'] * (length - section['length']) ** 2
        energy += 0.5 * section['bending_stiffness'] * theta ** 2
        for bellows in section['bellows']:
            angle = math.radians(bellows['angle_deg'])
            q = length - bellows['offset'] * theta * math.cos(phi - angle)
            rest = bellows.get('rest_length', section['length'])
            energy += 0.5 * bellows['stiffness'] * (q - rest) ** 2
            energy -= pressures[i] * bellows['area'] * q
            i += 1
    return energy


def gravity_potential(model: CCDynamics, x) -> float:
    return -float(np.einsum('jk,jki,i->', model.model[2], positions(model, x), model.model[3]))


def kinetic(model: CCDynamics, x, v, step=1e-6) -> float:
    """Return the translational and rotational kinetic energy by central differences."""
    rates = (positions(model, x + step * v) - positions(model, x - step * v)) / (2 * step)
    w = body_rate(model, x, v, step)
    return 0.5 * float(np.einsum('jk,jki,jki->', model.model[2], rates, rates)
                       + np.einsum('jki,jki,jki->', model.model[9], w, w))


# ---------------------------------------------------------------- theta -> 0


def closed_forms(t):
    th = math.sqrt(t)
    return math.sin(th) / th, (1 - math.cos(th)) / t


def test_sinc_functions_are_exact_at_zero():
    assert kernels.sinc_functions(0.0) == pytest.approx(
        (1.0, -1 / 6, 1 / 60, 0.5, -1 / 24, 1 / 360), rel=1e-15)
    # theta = 1e-8: t = 1e-16, the first-order Taylor terms are below round-off
    assert kernels.sinc_functions(1e-16) == pytest.approx(
        (1.0, -1 / 6, 1 / 60, 0.5, -1 / 24, 1 / 360), rel=1e-14)


@pytest.mark.parametrize('t', [1e-3, 0.5, 3.9, 4.1, 9.0, 30.0])
def test_sinc_functions_match_closed_forms_and_their_derivatives(t):
    f, f1, f2, g, g1, g2 = kernels.sinc_functions(t)
    assert (f, g) == pytest.approx(closed_forms(t), rel=1e-12, abs=1e-15)
    # derivatives by central differences of the closed forms (error ~1e-8)
    h = 1e-4 * t
    (fp, gp), (fm, gm) = closed_forms(t + h), closed_forms(t - h)
    assert f1 == pytest.approx((fp - fm) / (2 * h), rel=1e-6, abs=1e-9)
    assert g1 == pytest.approx((gp - gm) / (2 * h), rel=1e-6, abs=1e-9)
    (f1p, _, _, g1p, _, _), (f1m, _, _, g1m, _, _) = [
        [kernels.sinc_functions(t + s)[i] for i in (1, 0, 0, 4, 0, 0)] for s in (h, -h)]
    assert f2 == pytest.approx((f1p - f1m) / (2 * h), rel=1e-5, abs=1e-9)
    assert g2 == pytest.approx((g1p - g1m) / (2 * h), rel=1e-5, abs=1e-9)


def test_series_and_closed_forms_agree_at_the_switch():
    below = np.array(kernels.sinc_functions(kernels.SERIES_LIMIT * (1 - 1e-15)))
    above = np.array(kernels.sinc_functions(kernels.SERIES_LIMIT))
    np.testing.assert_allclose(below, above, rtol=1e-11)


@pytest.mark.parametrize('theta', [0.0, 1e-8, 0.3, 2.5, 5.0])
@pytest.mark.parametrize('sigma', [1.0, 0.4])
def test_arc_point_and_rotation_match_section_pose(theta, sigma):
    phi, length = 0.7, 0.21
    xs = np.array([length, theta * math.cos(phi), theta * math.sin(phi)])
    vs = np.array([0.03, -0.8, 1.3])
    p, p_g, p_h = np.zeros(3), np.zeros((3, 3)), np.zeros(3)
    kernels.arc_point(xs, vs, sigma, p, p_g, p_h)
    R, R_g, R_h = np.zeros((3, 3)), np.zeros((3, 3, 3)), np.zeros((3, 3))
    kernels.arc_rotation(xs, vs, R, R_g, R_h)

    def pose(x):
        th, ph = math.hypot(x[1], x[2]), math.atan2(x[2], x[1])
        return section_pose(th, ph, x[0])[0], section_pose(sigma * th, ph, sigma * x[0])[1]

    R_ref, p_ref = pose(xs)
    np.testing.assert_allclose(p, p_ref, atol=1e-15)
    np.testing.assert_allclose(R, R_ref, atol=1e-15)
    step = 1e-6
    for a in range(3):
        dx = np.zeros(3)
        dx[a] = step
        (Rp, pp), (Rm, pm) = pose(xs + dx), pose(xs - dx)
        np.testing.assert_allclose(p_g[a], (pp - pm) / (2 * step), atol=1e-9)
        np.testing.assert_allclose(R_g[a], (Rp - Rm) / (2 * step), atol=1e-8)
    step = 1e-4
    (Rp, pp), (Rm, pm) = pose(xs + step * vs), pose(xs - step * vs)
    np.testing.assert_allclose(p_h, (pp - 2 * p_ref + pm) / step ** 2, atol=2e-6)
    np.testing.assert_allclose(R_h, (Rp - 2 * R_ref + Rm) / step ** 2, atol=2e-5)


# ---------------------------------------------------------------- Lagrange terms


@pytest.mark.parametrize('bend', [0.0, 1e-8, 0.6])
@pytest.mark.parametrize('rotating', [False, True])
def test_lagrange_terms_match_finite_differences_of_poses(bha, bha_rotating, bend, rotating):
    model = bha_rotating if rotating else bha
    rng = np.random.default_rng(3)
    x = model.rest_state + np.tile([0.02, bend, -0.5 * bend], 3)
    v = rng.normal(size=x.size) * np.tile([0.05, 1.0, 1.0], 3)
    M, c, q_gravity, _ = model.lagrange_terms(x, v)
    M_ref, c_ref, q_ref = reference_terms(model, x, v)
    np.testing.assert_allclose(M, M_ref, atol=1e-8 * np.abs(M_ref).max())
    np.testing.assert_allclose(c, c_ref, atol=1e-5 * np.abs(c_ref).max() + 1e-9)
    np.testing.assert_allclose(q_gravity, q_ref, atol=1e-8 * np.abs(q_ref).max())
    assert np.all(np.linalg.eigvalsh(M) > 0.0)


def test_tendon_robot_terms_are_finite_when_straight(tendon):
    M, c, q_gravity, _ = tendon.lagrange_terms(tendon.rest_state,
                                               np.array([0.0, 1.0, -2.0]))
    M_ref, c_ref, _ = reference_terms(tendon, tendon.rest_state, np.array([0.0, 1.0, -2.0]))
    np.testing.assert_allclose(M, M_ref, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(c, c_ref, atol=1e-5 * np.abs(c_ref).max())


# ---------------------------------------------------------------- energy and statics


def test_energy_is_conserved_without_damping():
    data = bha_data(damping=0.0, inertia=True)
    model = CCDynamics.from_bellows_robot(bellows_robot_from_dict(data))
    pressures = np.array([6e4, 0, 0, 0, 4e4, 0, 0, 0, 8e4])

    def energy(x, v):
        return (kinetic(model, x, v) + gravity_potential(model, x)
                + bellows_potential(data, x, pressures))

    run = model.simulate(pressures, 0.6, dt=2e-4, record_every=300)
    energies = np.array([energy(x, v) for x, v in zip(run.x, run.v)])
    swing = max(kinetic(model, x, v) for x, v in zip(run.x, run.v))
    assert swing > 0.05                              # it really moves (J)
    assert np.max(np.abs(energies - energies[0])) < 1e-3 * swing


def test_default_integration_adds_no_damping_of_its_own():
    """Issue 22: without damping, < 1 % energy drift over 10 s at the default step."""
    data = bha_data(damping=0.0, inertia=True)
    model = CCDynamics.from_bellows_robot(bellows_robot_from_dict(data))
    pressures = np.array([6e4, 0, 0, 0, 4e4, 0, 0, 0, 8e4])

    def drift(scheme, duration):
        run = model.simulate(pressures, duration, record_every=4, scheme=scheme)
        energies = np.array([kinetic(model, x, v) + gravity_potential(model, x)
                             + bellows_potential(data, x, pressures)
                             for x, v in zip(run.x, run.v)])
        swing = max(kinetic(model, x, v) for x, v in zip(run.x, run.v))
        assert swing > 1.0                           # J: a large motion
        return np.max(np.abs(energies - energies[0])) / swing

    assert DEFAULT_TIME_STEP == 5e-3
    assert drift(DEFAULT_SCHEME, 10.0) < 0.01        # measured 0.25 %
    # the L-stable scheme at the same step loses energy: what the default avoids
    assert drift('sdirk2', 2.0) > 0.1                # measured 28 %


def test_the_undamped_tendon_robot_keeps_its_energy_at_the_default_step():
    """
    The issue's own case: 12 % of the swing lost in 2 s by the L-stable scheme.

    The energy is 1/2 x'^T M x' plus the potential of the model's static forces (their line
    integral from the start, 8-point Gauss-Legendre): what the integrator must conserve.
    """
    data = load_robot(default_robot_file()).to_dict()
    data['rod']['damping'] = {'ratio': 0.0}
    model = CCDynamics.from_tendon_robot(robot_from_dict(data))
    tensions = np.array([3.0, 2.0, 0.0, 0.0])
    nodes, weights = np.polynomial.legendre.leggauss(8)

    def drift(scheme, duration):
        run = model.simulate(tensions, duration, record_every=4, scheme=scheme)
        x0 = run.x[0]
        potential = [-sum(0.5 * w * model.static_force(x0 + 0.5 * (s + 1) * (x - x0), tensions)
                          @ (x - x0) for s, w in zip(nodes, weights)) for x in run.x]
        kinetic = np.array([0.5 * v @ model.lagrange_terms(x, v)[0] @ v
                            for x, v in zip(run.x, run.v)])
        energies = kinetic + np.array(potential)
        return np.max(np.abs(energies - energies[0])) / kinetic.max()

    assert drift(DEFAULT_SCHEME, 10.0) < 0.01        # measured 0.58 %
    assert drift('sdirk2', 2.0) > 0.08               # measured 11.8 %


def test_an_unknown_scheme_is_refused():
    model = CCDynamics.from_bellows_robot(bellows_robot_from_dict(bha_data()))
    with pytest.raises(CCDynamicsError, match="scheme: 'rk4' is not one of"):
        model.simulate(np.zeros(9), 0.1, scheme='rk4')


def test_damped_motion_settles_at_the_minimum_of_the_potential_energy():
    data = bha_data(damping=10.0)    # settles in a few seconds
    model = CCDynamics.from_bellows_robot(bellows_robot_from_dict(data))
    pressures = np.array([8e4, 2e4, 0, 0, 0, 5e4, 3e4, 0, 0])
    minimum = optimize.minimize(
        lambda x: gravity_potential(model, x) + bellows_potential(data, x, pressures),
        model.rest_state + 1e-3, method='BFGS', options={'gtol': 1e-10})
    static = model.equilibrium(pressures)
    np.testing.assert_allclose(static, minimum.x, atol=2e-6)
    settled = model.simulate(pressures, 6.0, dt=5e-3).x[-1]
    np.testing.assert_allclose(settled, static, atol=1e-4)   # m, rad: still ringing below that
    assert np.linalg.norm(model.frames(settled)[-1][1] - model.frames(static)[-1][1]) < 1e-4


def test_tendon_statics_without_gravity_is_the_bent_kirchhoff_rod():
    robot = load_robot(default_robot_file())
    data = robot.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    model = CCDynamics.from_tendon_robot(robot_from_dict(data))
    tension, tendon = 3.0, robot.tendons[1]
    x = model.equilibrium(model.input_vector({tendon.name: tension}))
    rod = robot.rod
    theta = tension * tendon.offset * rod.length / rod.bending_stiffness
    shortened = rod.length - tension * rod.length / (rod.youngs_modulus * rod.area)
    np.testing.assert_allclose(x, [shortened, theta * math.cos(tendon.angle),
                                   theta * math.sin(tendon.angle)], atol=1e-9)


# ---------------------------------------------------------------- integrator


def test_five_millisecond_steps_are_stable_and_close_to_fine_steps(bha):
    def pressures(t):
        return np.where(np.arange(9) % 4 == 0, 1e5, 0.0) * (t >= 0.05)

    coarse = bha.simulate(pressures, 1.5, dt=5e-3, record_every=10)
    fine = bha.simulate(pressures, 1.5, dt=5e-4, record_every=100)
    assert np.all(np.isfinite(coarse.x))
    tips = coarse.tip_positions() - fine.tip_positions()
    # 5 ms against 0.5 ms: the L-stable method damps only the fast axial modes
    assert np.max(np.linalg.norm(tips, axis=1)) < 5e-3


@pytest.mark.parametrize('dt', [0.1, 0.2, 0.5])
def test_steps_too_long_to_converge_are_split_or_refused_never_nan(bha, dt):
    # A diverged Newton stage once slipped through the convergence test as NaN (max()
    # drops a NaN) and the trajectory went on as NaN.
    pressures = np.where(np.arange(9) % 4 == 0, 1e5, 0.0)
    try:
        trajectory = bha.simulate(pressures, 20.0, dt=dt)
    except CCDynamicsError as error:
        assert 'did not converge' in str(error)
        return
    assert np.all(np.isfinite(trajectory.x))
    # long steps still end at the static equilibrium (to 1 mm of actuator length)
    assert np.max(np.abs(trajectory.x[-1] - bha.equilibrium(pressures))) < 1e-3


def test_inputs_are_range_checked(bha, tendon):
    with pytest.raises(CCDynamicsError, match=r'p2 = 2e\+06 Pa is outside \[0, 120000\]'):
        bha.input_vector({'p2': 2e6})
    with pytest.raises(CCDynamicsError, match='t1 = -1 N'):
        tendon.input_vector([0, -1, 0, 0])
    with pytest.raises(CCDynamicsError, match='unknown actuator'):
        tendon.input_vector({'p1': 1.0})
    with pytest.raises(CCDynamicsError, match='dt: must be > 0'):
        tendon.simulate([0, 0, 0, 0], 1.0, dt=0.0)


@pytest.mark.parametrize('change, message', [
    (lambda d: d['sections'][0]['bellows'][1].update(area=-1.0),
     r'sections\[0\]\.bellows\[1\]\.area: must be > 0'),
    (lambda d: d['sections'][1].pop('bending_stiffness'),
     r'sections\[1\]\.bending_stiffness: required key is missing'),
    (lambda d: d['sections'][2]['masses'][0].update(fraction=1.5),
     r'sections\[2\]\.masses\[0\]\.fraction: must be within \[0, 1\]'),
    (lambda d: d.update(kind='tendon'), r"kind: must be one of \['bellows', "),
    (lambda d: d.update(kind='tendon_robot'), r'kind: tendon_robot is a tendon-driven continuum '
                                              r'robot; this takes a bellows-actuated'),
    (lambda d: d['sections'][0]['bellows'].pop(), r'sections\[0\]\.bellows: must be a list'),
    # 5 m on a 0.25 m section: a length in mm given as m (bending the section at all made the
    # bellows shorter than nothing)
    (lambda d: d['sections'][0]['bellows'][2].update(offset=5.0),
     r'^sections\[0\]\.bellows\[2\]\.offset: a bellows 5 m from the centre spline is '
     r'farther out than the section is long \(sections\[0\]\.length 0\.25 m\); '
     r'a length in mm\?$'),
    # no bending spring at all: no shape holds the section (it had no static equilibrium,
    # exit 1 'continuation stalled', as if the inputs were the fault)
    (lambda d: unbend(d['sections'][1], stiff=()),
     r'sections\[1\]\.bending_stiffness: the section needs a bending spring'),
    # one stiff bellows resists bending about one axis only
    (lambda d: unbend(d['sections'][2], stiff=(0,)),
     r'sections\[2\]\.bending_stiffness: the section needs a bending spring'),
])
def test_bad_bellows_descriptions_name_the_key(change, message):
    data = bha_data()
    change(data)
    with pytest.raises(RobotDescriptionError, match=message):
        bellows_robot_from_dict(data)


def unbend(section, stiff):
    """Take away a section's bending stiffness and the springs of its bellows but ``stiff``."""
    section['bending_stiffness'] = 0.0
    for i, bellows in enumerate(section['bellows']):
        bellows['stiffness'] = bellows['stiffness'] if i in stiff else 0.0


def test_bellows_springs_around_the_spline_are_a_bending_spring():
    # k_b = 0, but two bellows 120 deg apart resist bending in every direction: sum k r^2 of
    # their (cos a, sin a) outer products is of rank 2
    data = bha_data()
    unbend(data['sections'][0], stiff=(0, 1))
    assert bellows_robot_from_dict(data).sections[0].bending_stiffness == 0.0


def test_tendons_anchored_at_different_sections_bend_only_the_sections_they_cross():
    robot = load_robot(default_robot_file())
    data = robot.to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    data['tendons'] = [{'name': 'inner', 'offset': 0.015, 'angle_deg': 0.0, 'end': 0.1},
                       {'name': 'outer', 'offset': 0.012, 'angle_deg': 90.0, 'end': 0.25}]
    model = CCDynamics.from_tendon_robot(robot_from_dict(data))
    assert model.n_sections == 2
    np.testing.assert_allclose(model.rest_lengths, [0.1, 0.15])
    x = model.equilibrium(model.input_vector({'inner': 2.0, 'outer': 1.5}))
    EI = robot.rod.bending_stiffness
    # inner: moment 2 * 0.015 about the first section only; outer: 1.5 * 0.012 on both
    np.testing.assert_allclose(x[[1, 2, 4, 5]], [2.0 * 0.015 * 0.1 / EI, 1.5 * 0.012 * 0.1 / EI,
                                                 0.0, 1.5 * 0.012 * 0.15 / EI], atol=1e-9)
    with pytest.raises(CCDynamicsError, match='continues'):
        data['tendons'] = [data['tendons'][0]]
        CCDynamics.from_tendon_robot(robot_from_dict(data))


@pytest.mark.parametrize('tensions', [{'t2': 1.0}, {'t0': 1.0}, {'t1': 8.0}])
def test_tendon_equilibrium_under_gravity_is_the_minimum_of_the_potential_energy(
        tendon, tensions):
    robot = load_robot(default_robot_file())
    rod = robot.rod
    T = tendon.input_vector(tensions)

    def potential(x):
        length, ux, uy = x
        theta, phi = math.hypot(ux, uy), math.atan2(uy, ux)
        # a pulled tendon stores T q: its length q shortens as the rod bends towards it
        q = [length - t.offset * theta * math.cos(phi - t.angle) for t in robot.tendons]
        return (gravity_potential(tendon, x) + 0.5 * rod.bending_stiffness / rod.length
                * theta ** 2 + 0.5 * rod.youngs_modulus * rod.area / rod.length
                * (length - rod.length) ** 2 + float(T @ q))

    scale = np.array([1e-4, 1.0, 1.0])         # l moves by micrometres: balance the steps
    minimum = optimize.minimize(lambda z: potential(tendon.rest_state + scale * z),
                                np.zeros(3), method='BFGS', options={'gtol': 1e-12})
    # BFGS stops within a few 1e-6 rad; a wrong equilibrium is off by 1e-2 rad and more
    np.testing.assert_allclose(tendon.equilibrium(T), tendon.rest_state + scale * minimum.x,
                               atol=2e-5)


def test_spin_dampers_dissipate_the_power_of_the_mass_rotations(tendon):
    x = tendon.rest_state + np.array([-1e-4, 0.4, -0.7])
    v = np.array([0.01, 2.0, 1.5])
    q_spin = tendon.lagrange_terms(x, v)[3]
    w = body_rate(tendon, x, v)
    spin_damping = tendon.model[10]
    discs = load_robot(default_robot_file()).vertebra_positions.size
    assert np.count_nonzero(spin_damping) == 4 + discs    # the rod's 4 masses and the discs
    power = np.einsum('jk,jki,jki->', spin_damping, w, w)
    assert -(v @ q_spin) == pytest.approx(power, rel=1e-7)
    assert power > 0.0
