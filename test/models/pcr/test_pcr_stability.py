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
Stability of an inverse solution: a load far beyond the rods' Euler loads is refused.

The platform held at its rest height under 1000 N (a 102 kg platform): the inverse solver finds
motor angles within the limits, the rods nearly straight and bent into a second mode. It is an
equilibrium (checked here with scipy), but each rod has a conjugate point (checked here with
scipy, independently of the package): it buckles with its ends held, and no robot holds it.
"""

import os
from pathlib import Path
import subprocess
import sys

import numpy as np
from scipy.integrate import solve_ivp

from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.stability import conjugate_points
from tendon_robot_sim.models.pcr.studies import rotation_sweep
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[3]
ROBOT = load_pcr_robot(default_pcr_file())
REST = [0.0, 0.0, 0.4]


def _hat(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def scipy_rod(result, i, points=400, h=1e-6, jacobi=True):
    """
    Rod i of ``result`` by solve_ivp from its base: (s, det of the Jacobi map, the solution).

    ``jacobi`` False: the shape alone (det None).

    The Jacobi map: d[p(s) / L, theta(s)] / d[n(0) L^2 / EI, m_z L / EI, q2, q3], by central
    differences; theta the rotation in the body frame. Where its determinant changes sign
    inside the rod, a variation held at both ends leaves the energy stationary: a conjugate
    point, the rod is unstable (Jacobi's condition).
    """
    rods = ROBOT.rods
    L, r, E = rods.length, rods.radius, rods.youngs_modulus
    G = E / (2 * (1 + rods.poisson_ratio))
    A, inertia = np.pi * r ** 2, np.pi * r ** 4 / 4
    kse = np.array([G * A, G * A, E * A])
    kbt = np.array([E * inertia, E * inertia, 2 * G * inertia])
    ustar = np.array([1.0 / rods.precurvature_radius, 0, 0])
    f = rods.density * A * np.asarray(ROBOT.gravity)
    EI = E * inertia

    def rhs(s, y):
        R = y[3:12].reshape(3, 3)
        n, m = y[12:15], y[15:18]
        ps = R @ (R.T @ n / kse + [0, 0, 1])
        u = R.T @ m / kbt + ustar
        return np.concatenate((ps, (R @ _hat(u)).ravel(), -f, -np.cross(ps, n)))

    R0, q3 = result.base_rotations[i], result.joint_angles[i, 1]
    mz = result.base_moments[i] @ R0[:, 2]
    grid = np.linspace(0, L, points)

    def run(x):
        Rb = R0 @ _rx(-q3) @ _ry(x[4]) @ _rx(q3) @ _rx(x[5])
        y0 = np.concatenate((result.base_positions[i], Rb.ravel(),
                             result.base_forces[i] + x[:3] * EI / L ** 2,
                             (mz + x[3] * EI / L) * Rb[:, 2]))
        return solve_ivp(rhs, (0, L), y0, method='DOP853', t_eval=grid, rtol=1e-11,
                         atol=1e-13).y

    base = run(np.zeros(6))
    if not jacobi:
        return grid, None, base
    J = np.zeros((points, 6, 6))
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        yp, ym = run(e), run(-e)
        J[:, :3, k] = (yp[0:3] - ym[0:3]).T / (2 * h * L)
        for j in range(points):
            D = base[3:12, j].reshape(3, 3).T @ (yp[3:12, j] - ym[3:12, j]).reshape(3, 3)
            J[j, 3:, k] = np.array([D[2, 1], D[0, 2], D[1, 0]]) / (2 * h)
    return grid, np.linalg.det(J), base


def scipy_conjugate_points(result, i):
    s, det, _ = scipy_rod(result, i)
    keep = s > s[-1] / 50           # det starts at 0 at s = 0
    s, det = s[keep], det[keep]
    return s[1:][np.sign(det[1:]) != np.sign(det[:-1])]


def check_equilibrium(result):
    """Check that the rods from their bases (scipy) meet the joints and balance the platform."""
    joints = result.position + ROBOT.joint_positions @ result.rotation.T
    force = np.zeros(3)
    moment = np.zeros(3)
    for i in range(6):
        y = scipy_rod(result, i, points=2)[2][:, -1]
        p, n, m = y[0:3], y[12:15], y[15:18]
        # 2e-6 m: the solver's RK4 with 32 steps (6.2e-7 m measured here); a rod that misses
        # its joint by a thousandth of its length would be no equilibrium
        assert np.linalg.norm(p - joints[i]) < 2e-6
        # spherical joint: no moment; 1e-3 N m (of E I / L = 2.6 N m), RK4 again
        assert np.linalg.norm(m) < 1e-3
        force += n
        moment += np.cross(p, n) + m
    np.testing.assert_allclose(force, result.force, atol=1e-6 * np.linalg.norm(result.force))
    np.testing.assert_allclose(moment, result.moment + np.cross(result.position, result.force),
                               atol=1e-3)


def test_a_load_beyond_the_rods_has_a_buckled_equilibrium():
    """1000 N down at rest height: an equilibrium whose rods have one conjugate point each."""
    result = PcrSolver(ROBOT).inverse(REST, force=[0, 0, -1000.0])
    assert result.within_limits
    check_equilibrium(result)
    for i, points in enumerate(conjugate_points(ROBOT, result)):
        expected = scipy_conjugate_points(result, i)
        assert expected.size == 1
        # 0.01 m: the grids (1.3 mm and 2.1 mm) and RK4's error near a zero of the det
        np.testing.assert_allclose(points, expected, atol=0.01)


def test_no_conjugate_point_at_rest_and_under_a_light_load():
    for force in (0.0, 50.0):
        result = PcrSolver(ROBOT).inverse(REST, force=[0, 0, -force])
        points = conjugate_points(ROBOT, result)
        for i in range(6):
            assert scipy_conjugate_points(result, i).size == 0
            assert points[i].size == 0


def test_a_sweep_calls_a_pose_with_a_buckled_rod_unstable():
    """
    A sweep's stable column judges the rods too, not only the platform's stiffness.

    Yaw 98 deg at rest height, on the branch followed back from 104 deg: the platform's
    stiffness with the motors held is positive definite, but rods have a conjugate point
    (scipy). The sweep's stable column said 1 there (only the platform was judged).
    """
    sweep = rotation_sweep(ROBOT, np.radians([98.0, 104.0]), progress=False)
    assert sweep.branch[0] >= 0, 'no solution at 98 deg'
    result = sweep.results[0]
    assert any(scipy_conjugate_points(result, i).size for i in (1, 0))
    assert sweep.data['stable'][0] == 0.0


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'pcr', *args],
                          capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)


def test_ik_refuses_a_buckled_solution_naming_the_load():
    """It was printed as the motor angles that hold 1000 N (exit 0)."""
    proc = run_cli('ik', '--position', '0,0,0.4', '--force', '0,0,-1000', '--json')
    assert proc.returncode == 1, proc.stderr
    assert 'UNSTABLE' in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith('{')
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('tendon-robot-sim pcr ik: error: ')
    assert '[0.0, 0.0, -1000.0] N' in lines[0] and 'buckled' in lines[0]
