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
Numba kernel of the statics' sensitivities (:mod:`.sensitivity`).

The derivative of a solution's tip by a parameter of the robot without a solve of the changed
robot: at a converged solution x of F(x, p) = 0 the implicit function theorem gives
dx/dp = -(dF/dx)^-1 dF/dp, so one residual evaluation of the changed robot at x and a linear
step replace its whole solve.
"""

import math

from tendon_robot_sim.models._cosserat_kernels import fd_step
from tendon_robot_sim.models._numerics import invert, kernel
from tendon_robot_sim.models.rod.statics._kernels import _residual
from tendon_robot_sim.models.rod.statics._tendon_kernels import tendon_residuals, tensions


@kernel
def _marker_point(traj, marker, out):
    """Write the point ``marker`` (tip frame) of a solution's tip into out (3,) [m]."""
    y = traj[traj.shape[0] - 1]
    for i in range(3):
        out[i] = (y[i] + y[3 + 3 * i] * marker[0] + y[4 + 3 * i] * marker[1]
                  + y[5 + 3 * i] * marker[2])


@kernel
def linear_points(pl, modes, tau_in, q, tip, X, marker, build, algebraic, JX, D, P0, F0, L0,
                  P, DX, ok, traj, tau, lengths, bays, w):
    """
    Write the point ``marker`` of the tip, to first order, of solutions under a changed plan.

    Row i of X (m, n) is the converged unknowns of one solve (tau_in[i], q[i]; NaN: none).
    ``build``: linearise at each row under ``pl`` (the solved robot): JX[i] the inverse of
    the shooting Jacobian dF/dx, D[i] (3, n) the derivative of the point by x (forward
    differences of both), P0[i] the point, F0[i] the residual and L0[i] the tendons' path
    lengths there. Else ``pl`` is a changed robot (another parameter value, the same grid and
    scales) and P[i] its point after one Newton step from the solution, linearised: with
    F = F(X[i]) under ``pl``, the step DX[i] = -JX[i] (F - F0[i]) and
    P[i] = point(X[i]) + D[i] DX[i]
    (implicit function theorem: the point's derivative by the parameter is (P[i] - point of
    the solved robot) / change, without a solve of the changed robot). ``algebraic``: ``pl``
    differs from the solved robot's plan in the tendons' law alone (rest length, compliance,
    motor distance), which leaves the integration as it was: F[0:6], the path lengths and
    the point are those of the solved robot, and no integration is needed. ok[i]: the row is
    done (False: no solution, a failed integration or a singular Jacobian).
    """
    m, n = X.shape
    F, Fd, xp = w.vec[0], w.vec[2], w.vec[3]
    point, probe = w.vec[1][0:3], w.vec[4][0:3]      # n >= 6
    for i in range(m):
        ok[i] = False
        if not math.isfinite(X[i, 0]):
            continue
        for r in range(n):
            xp[r] = X[i, r]
        good = True
        if algebraic:
            tensions(pl, modes, tau_in[i], xp, tau)
            for r in range(6):
                F[r] = F0[i, r]
            for t in range(pl.nt):
                lengths[t] = L0[i, t]
            good = tendon_residuals(pl, modes, q[i], xp, F, tau, lengths)
            for a in range(3):
                point[a] = P0[i, a]
        # c = -1: the row's own point; c >= 0: a probe of unknown c (build only)
        for c in range(-1, n if build else 0):
            if algebraic:
                break
            step = 0.0
            if c >= 0:
                step = fd_step(X[i, c])
                xp[c] = X[i, c] + step
            Fc = F if c < 0 else Fd
            # one call site: numba compiles the whole shooting code into each
            if not _residual(pl, modes, tau_in[i], q[i], tip, xp, Fc, traj, tau, lengths, bays,
                             w, -1):
                good = False
                break
            if c < 0:
                _marker_point(traj, marker, point)
                if build:
                    for r in range(n):
                        F0[i, r] = F[r]
                    for t in range(pl.nt):
                        L0[i, t] = lengths[t]
                continue
            xp[c] = X[i, c]
            _marker_point(traj, marker, probe)
            for r in range(n):
                JX[i, r, c] = (Fd[r] - F[r]) / step
            for a in range(3):
                D[i, a, c] = (probe[a] - point[a]) / step
        if not good:
            continue
        if build:
            if not invert(JX[i], w.Jc):
                continue
            for a in range(3):
                P0[i, a] = point[a]
            ok[i] = True
            continue
        # the change of the residual: the solution's own (within the solver's tolerance) would
        # otherwise count as a change of the parameter, divided by a small one
        for c in range(n):
            dx = 0.0
            for r in range(n):
                dx -= JX[i, c, r] * (F[r] - F0[i, r])
            DX[i, c] = dx
            for a in range(3):
                point[a] += D[i, a, c] * dx
        for a in range(3):
            P[i, a] = point[a]
        ok[i] = True
