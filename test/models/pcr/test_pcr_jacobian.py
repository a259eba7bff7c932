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
The parallel robot's Jacobian from the rods' variational equations (models.pcr._kernels).

Checked against central differences of the residual itself, away from any solution (a
perturbed rigid-link start), for both models and both directions; and the per-rod Broyden
update against its secant condition.
"""

import numpy as np
import pytest

from tendon_robot_sim.models.pcr import _kernels as kernels
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot

ROBOT = load_pcr_robot(default_pcr_file())
WRENCH_FORCE = (0.5, -0.3, -5.0)
# Central differences with a 1e-6 step: truncation ~1e-12, round-off ~1e-16 / 1e-6 = 1e-10
# (the residual is O(1) scaled). A missing or wrong term of the variational equations (a
# dropped p_s x dn, a dR term) moves entries by >= 1e-4, and the pose columns of the forward
# problem are one-sided differences (error ~1e-7): 1e-6 separates the two.
TOLERANCE = 1e-6


def _problem(compat, inverse):
    solver = PcrSolver(ROBOT.with_changes(compat=compat))
    target = (np.array([0.03, -0.02, 0.45, 0.05, -0.04, 0.1]) if inverse
              else np.radians([-20.0, -15.0, -25.0, -18.0, -22.0, -16.0]))
    wrench = np.empty(6)
    solver._wrench(WRENCH_FORCE, None, wrench)
    x = np.zeros(42)
    assert solver._cold_guess(inverse, target, wrench, x)
    # away from the rigid-link start: every term of the rods' state is non-trivial
    x += 0.05 * np.random.default_rng(1).standard_normal(42)
    return solver, solver._plans[inverse], target, wrench, x


def _residual(solver, plan, target, wrench, x):
    F = np.zeros(42)
    assert kernels._pcr_residual(plan, x, target, wrench, np.zeros_like(solver._traj),
                                 solver._work, F)
    return F


@pytest.mark.parametrize('compat', ['paper', 'dfki2024'])
@pytest.mark.parametrize('inverse', [True, False])
def test_jacobian_from_the_variational_equations_matches_finite_differences(compat, inverse):
    solver, plan, target, wrench, x = _problem(compat, inverse)
    w = solver._work
    F = _residual(solver, plan, target, wrench, x)
    B = np.zeros((6, 9, 7))
    kernels._pcr_blocks(plan, x, target, w, B)
    J = np.zeros((42, 42))
    kernels._pcr_jacobian(plan, x, target, wrench, F, B, w.out, J, w)
    numeric = np.empty((42, 42))
    for c in range(42):
        h = 1e-6 * max(1.0, abs(x[c]))
        up, down = x.copy(), x.copy()
        up[c] += h
        down[c] -= h
        numeric[:, c] = (_residual(solver, plan, target, wrench, up)
                         - _residual(solver, plan, target, wrench, down)) / (2.0 * h)
    assert np.max(np.abs(J)) > 0.1
    np.testing.assert_allclose(J, numeric, rtol=0.0, atol=TOLERANCE)


def test_block_broyden_update_meets_the_secant_condition():
    solver, plan, target, wrench, x = _problem('paper', True)
    w = solver._work
    B = np.zeros((6, 9, 7))
    kernels._pcr_blocks(plan, x, target, w, B)
    out = w.out.copy()
    step = 1e-3 * np.random.default_rng(2).standard_normal(42)
    _residual(solver, plan, target, wrench, x + step)
    out_new = w.out.copy()
    kernels._block_broyden(B, 7, x, x + step, out, out_new)
    for i in range(6):
        np.testing.assert_allclose(B[i] @ step[7 * i:7 * i + 7], out_new[i] - out[i],
                                   rtol=1e-9, atol=1e-15)
