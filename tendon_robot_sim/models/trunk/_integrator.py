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
Time integration of the constant-curvature Lagrange dynamics (numba kernels).

The state is y = (x, x'), f(y) = (x', x'') with x'' from
:func:`tendon_robot_sim.models.trunk._kernels.acceleration`. Two one-step implicit
integrators share a simplified Newton iteration on a finite-difference Jacobian, kept
across steps while the iteration converges fast, and the step splitting of ``integrate``:

* ``GAUSS`` (the default): the 2-stage Gauss-Legendre Runge-Kutta method (Butcher 1964;
  Hairer, Lubich & Wanner, Geometric Numerical Integration, 2006), order 4, A-stable and
  symmetric. Without damping the system is reversible and the method adds no damping of
  its own: the energy stays within O(h^4) of its start instead of drifting away
  (benchmarks/bench_cc_dynamics.py measures it), so the damping a user sees is the
  robot's. Modes far above 1/h (the stiff axial ones) keep ringing, as physically.
* ``SDIRK2``: the 2-stage, L-stable, stiffly accurate SDIRK method of order 2 (Alexander
  1977, gamma = 1 - 1/sqrt 2). L-stability damps the stiff modes within a step, and with
  them part of the slow ones: the undamped bionic handling assistant loses 28 % of its
  kinetic-energy swing in 2 s at 5 ms.

(The implicit midpoint rule, symmetric too, kept the energy within 3.7 % of that swing
at 5 ms: order 2 is not enough for 1 % at the default step.)
"""

import math

from numba import njit
import numpy as np

from tendon_robot_sim.models.trunk._kernels import (acceleration, add_matvec, FD_STEP,
                                                    make_work)

GAMMA = 1.0 - 1.0 / math.sqrt(2.0)
# Gauss-Legendre, 2 stages: the Butcher matrix A, the nodes c, and d = b^T A^-1.
_ROOT3 = math.sqrt(3.0)
GAUSS_A = np.array([[0.25, 0.25 - _ROOT3 / 6.0], [0.25 + _ROOT3 / 6.0, 0.25]])
GAUSS_C = (0.5 - _ROOT3 / 6.0, 0.5 + _ROOT3 / 6.0)
GAUSS_D = (-_ROOT3, _ROOT3)


def _gauss_predictor():
    # P[i, j]: weight of the last step's Z_j in the next step's Z_i, from the collocation
    # polynomial w through w(0) = 0, w(c_j) = Z_j, continued: Z_i = w(1 + c_i) - w(1).
    c1, c2 = GAUSS_C
    lagrange = (lambda t: t * (t - c2) / (c1 * (c1 - c2)),
                lambda t: t * (t - c1) / (c2 * (c2 - c1)))
    return np.array([[L(1.0 + c) - L(1.0) for L in lagrange] for c in GAUSS_C])


GAUSS_P = _gauss_predictor()
# The integrators (``integrate``'s ``scheme``).
GAUSS, SDIRK2 = 0, 1
# Substep halvings tried when the Newton iteration of a step does not converge.
MAX_HALVINGS = 5
# Newton iterations per stage above which the Jacobian is renewed for the next step.
FAST_NEWTON = 5


@njit(cache=True, error_model='numpy', _nrt=False)
def _rhs(y, inputs, model, work, out):
    """Write f(y) = (x', x'') for the state y = (x, x') into out."""
    N = y.size // 2
    for i in range(N):
        out[i] = y[N + i]
    acceleration(y[:N], y[N:], inputs, model, work, out[N:])


@njit(cache=True, error_model='numpy')
def _jacobian(y, inputs, model, work, f0, J):
    """Write J = df/dy by forward differences (3n + 1 evaluations) and f(y) into f0."""
    n = y.size
    _rhs(y, inputs, model, work, f0)
    z, fz = work.vectors[4], work.vectors[5]
    z[:] = y
    for col in range(n):
        step = FD_STEP * max(1.0, abs(y[col]))
        z[col] = y[col] + step
        _rhs(z, inputs, model, work, fz)
        for i in range(n):
            J[i, col] = (fz[i] - f0[i]) / step
        z[col] = y[col]


@njit(cache=True, error_model='numpy')
def _invert_into(A, W):
    """W = A^-1; W = NaN (which fails the step) when A is not finite."""
    if np.all(np.isfinite(A)):
        W[:, :] = np.linalg.inv(A)
    else:
        W[:, :] = np.nan


@njit(cache=True, error_model='numpy')
def _iteration_matrix(y, hg, inputs, model, work, f0, W):
    """Write W = (I - hg J)^-1, J = df/dy, and f(y) into f0."""
    A = work.A
    _jacobian(y, inputs, model, work, f0, A)
    A *= -hg
    for i in range(y.size):
        A[i, i] += 1.0
    _invert_into(A, W)


@njit(cache=True, error_model='numpy')
def _solve_stage(Y, base, hg, W, inputs, model, atol, rtol, max_iterations, work):
    """Simplified Newton on Y = base + hg f(Y), in place; iterations used, -1 if failed."""
    f, residual = work.vectors[4], work.vectors[5]
    for iteration in range(1, max_iterations + 1):
        _rhs(Y, inputs, model, work, f)
        for i in range(Y.size):
            residual[i] = Y[i] - base[i] - hg * f[i]
        size = 0.0                        # max of |dY| / (atol + rtol |Y|)
        for i in range(Y.size):
            dY = 0.0
            for k in range(Y.size):
                dY -= W[i, k] * residual[k]
            Y[i] += dY
            scaled = abs(dY) / (atol + rtol * abs(Y[i]))
            if not scaled <= size:        # (written so that a NaN propagates; max() drops it)
                size = scaled
        if not math.isfinite(size):
            return -1
        if size <= 1.0:
            return iteration
    return -1


@njit(cache=True, error_model='numpy')
def sdirk_step(y, h, inputs, model, W, f_y, atol, rtol, max_iterations, work):
    """
    Take one SDIRK2 step of h [s] on y = (x, x'), in place, with W = (I - h GAMMA J)^-1.

    ``f_y``: f(y) under ``inputs``; overwritten with f at the new y (the last stage's).
    Returns the larger Newton iteration count of the two stages, or -1 on failure.
    """
    hg = h * GAMMA
    Y1, Y2, base, F1 = work.vectors[0], work.vectors[1], work.vectors[2], work.vectors[3]
    # predictors: one linearly implicit (Rosenbrock) step, i.e. the first Newton
    # iteration from y, with the f(y) known from the step before
    Y1[:] = y
    add_matvec(W, f_y, hg, Y1)
    first = _solve_stage(Y1, y, hg, W, inputs, model, atol, rtol, max_iterations, work)
    if first < 0:
        return -1
    for i in range(y.size):
        F1[i] = (Y1[i] - y[i]) / hg       # f(Y1), exact at the stage solution
        base[i] = y[i] + (h - hg) * F1[i]
    Y2[:] = base
    add_matvec(W, F1, hg, Y2)
    second = _solve_stage(Y2, base, hg, W, inputs, model, atol, rtol, max_iterations, work)
    if second < 0:
        return -1
    for i in range(y.size):
        f_y[i] = (Y2[i] - base[i]) / hg   # f(Y2), exact at the stage solution
        y[i] = Y2[i]                      # stiffly accurate: y_n+1 is the last stage
    return max(first, second)


@njit(cache=True, error_model='numpy')
def _gauss_matrix(y, h, inputs, model, work, f0, W):
    """Write W = (I - h A (x) J)^-1 (2 stages), J = df/dy, and f(y) into f0."""
    n = y.size
    J = work.A
    _jacobian(y, inputs, model, work, f0, J)
    I_hAJ = np.empty((2 * n, 2 * n))
    for a in range(2):
        for b in range(2):
            for i in range(n):
                for k in range(n):
                    I_hAJ[a * n + i, b * n + k] = ((1.0 if a == b and i == k else 0.0)
                                                   - h * GAUSS_A[a, b] * J[i, k])
    _invert_into(I_hAJ, W)


@njit(cache=True, error_model='numpy')
def gauss_step(y, h, inputs, model, W, f_y, atol, rtol, max_iterations, work, stages,
               warm):
    """
    Take one 2-stage Gauss-Legendre step of h [s] on y = (x, x'), in place.

    Z_i = h sum_j a_ij f(y + Z_j) by simplified Newton with W = (I - h A (x) J)^-1, then
    y_n+1 = y + h sum_j b_j f(y + Z_j) = y + sum_j d_j Z_j (d = b^T A^-1, exact at the
    stage solution). The predictor: with ``warm``, the collocation polynomial of the last
    step of the same h, continued (its Z_j are in ``stages``); otherwise Z_i = c_i h f(y)
    from ``f_y`` (f(y) under ``inputs``). ``f_y`` is overwritten with f extrapolated to the
    new y. ``stages``: (7, n) scratch; rows 0 and 1 keep the Z_j for the next step.
    Returns the Newton iteration count, or -1 on failure.

    (The stiff modes ring undamped, so f(y) extrapolates badly to the stages: the first
    predictor took more than 5 Newton iterations and a new Jacobian at nearly every step.)
    """
    n = y.size
    Z1, Z2, F1, F2, Y, r1, r2 = (stages[0], stages[1], stages[2], stages[3], stages[4],
                                 stages[5], stages[6])
    for i in range(n):
        if warm:
            r1[i] = GAUSS_P[0, 0] * Z1[i] + GAUSS_P[0, 1] * Z2[i]
            Z2[i] = GAUSS_P[1, 0] * Z1[i] + GAUSS_P[1, 1] * Z2[i]
            Z1[i] = r1[i]
        else:
            Z1[i] = GAUSS_C[0] * h * f_y[i]
            Z2[i] = GAUSS_C[1] * h * f_y[i]
    for iteration in range(1, max_iterations + 1):
        for i in range(n):
            Y[i] = y[i] + Z1[i]
        _rhs(Y, inputs, model, work, F1)
        for i in range(n):
            Y[i] = y[i] + Z2[i]
        _rhs(Y, inputs, model, work, F2)
        for i in range(n):
            r1[i] = Z1[i] - h * (GAUSS_A[0, 0] * F1[i] + GAUSS_A[0, 1] * F2[i])
            r2[i] = Z2[i] - h * (GAUSS_A[1, 0] * F1[i] + GAUSS_A[1, 1] * F2[i])
        size = 0.0                        # max of |dZ| / (atol + rtol |y + Z|)
        for row in range(2 * n):
            dZ = 0.0
            for k in range(n):
                dZ -= W[row, k] * r1[k] + W[row, n + k] * r2[k]
            Z, i = (Z1, row) if row < n else (Z2, row - n)
            Z[i] += dZ
            scaled = abs(dZ) / (atol + rtol * abs(y[i] + Z[i]))
            if not scaled <= size:        # (written so that a NaN propagates; max() drops it)
                size = scaled
        if not math.isfinite(size):
            return -1
        if size <= 1.0:
            break
    else:
        return -1
    # f at the stages, extrapolated linearly from c_1, c_2 to 1: the next predictor
    ahead = (1.0 - GAUSS_C[0]) / (GAUSS_C[1] - GAUSS_C[0])
    for i in range(n):
        y[i] += GAUSS_D[0] * Z1[i] + GAUSS_D[1] * Z2[i]
        f_y[i] = F1[i] + ahead * (F2[i] - F1[i])
    return iteration


@njit(cache=True, error_model='numpy')
def integrate(y0, h, inputs, model, record_every, atol, rtol, max_iterations, scheme):
    """
    Integrate len(inputs) steps of h [s], inputs held per step (zero-order hold).

    ``scheme``: GAUSS or SDIRK2.

    The Jacobian (and W) is kept while the Newton iterations converge fast (at most
    FAST_NEWTON iterations); it is renewed when they slow down or fail. A step that
    fails with a fresh Jacobian is retried as 2, 4, ... 2^MAX_HALVINGS substeps; if
    that fails too, integration stops.

    Returns (states (len(inputs) // record_every + 1, 2 * 3n), steps done, Jacobians
    computed, steps split into substeps).
    """
    n_steps = inputs.shape[0]
    states = np.full((n_steps // record_every + 1, y0.size), np.nan)
    work = make_work(y0.size // 2)
    y = y0.copy()
    f_y = np.empty_like(y)                # f(y) under the step's inputs
    z = np.empty_like(y)                  # trial step from y
    f_z = np.empty_like(y)                # f(z)
    states[0] = y
    W = np.eye(2 * y.size if scheme == GAUSS else y.size)
    stages = np.empty((7, y.size))        # gauss_step's scratch
    W_step = 0.0                          # substep length W was made for; 0: none
    known = False                         # f_y holds f(y) under inputs[i]
    warm = False                          # stages hold the last step's, of length h
    jacobians = 0
    split = 0
    for i in range(n_steps):
        if known and i > 0:
            for k in range(inputs.shape[1]):
                known = known and inputs[i, k] == inputs[i - 1, k]
        substeps = 1
        fresh = False
        while True:
            hs = h / substeps
            if W_step != hs:
                if scheme == GAUSS:
                    _gauss_matrix(y, hs, inputs[i], model, work, f_y, W)
                else:
                    _iteration_matrix(y, hs * GAMMA, inputs[i], model, work, f_y, W)
                W_step = hs
                fresh = True
                known = True
                jacobians += 1
            elif not known:
                _rhs(y, inputs[i], model, work, f_y)
                known = True
            z[:] = y
            f_z[:] = f_y
            worst = 0
            warm = warm and substeps == 1
            for _ in range(substeps):
                if scheme == GAUSS:
                    worst = gauss_step(z, hs, inputs[i], model, W, f_z, atol, rtol,
                                       max_iterations, work, stages, warm)
                    warm = True
                else:
                    worst = sdirk_step(z, hs, inputs[i], model, W, f_z, atol, rtol,
                                       max_iterations, work)
                if worst < 0:
                    break
            if worst >= 0:
                y[:] = z
                f_y[:] = f_z
                warm = substeps == 1
                if worst > FAST_NEWTON:
                    W_step = 0.0
                break
            W_step = 0.0
            warm = False                  # the failed step left its stages behind
            if fresh:
                substeps *= 2
                if substeps > 2 ** MAX_HALVINGS:
                    return states, i, jacobians, split
        if substeps > 1:
            split += 1
        if (i + 1) % record_every == 0:
            states[(i + 1) // record_every] = y
    return states, n_steps, jacobians, split
