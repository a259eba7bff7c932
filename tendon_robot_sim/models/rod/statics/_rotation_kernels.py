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
The shooting's rotations: their error from the identity and their drift back onto SO(3).

And the error of a discrete model's bay: the pose of its end vertebra against its guess.

Kernels of :mod:`tendon_robot_sim.models.rod.statics._kernels` (the bay fixed point and the
multiple-shooting defects of the discrete and continuous models).
"""

import math

from tendon_robot_sim.models._numerics import kernel


@kernel
def _rotation_error(s01, s10, s02, s20, s12, s21, trace, e):
    """
    Write the error of a rotation S (its off-diagonal entries s_ij and trace) into e (3,).

    e = 2 tan(theta / 2) a for S a turn by theta about the unit axis a: theta a to first order,
    zero at the identity only. The axial vector of skew(S) alone, sin(theta) a, vanishes at
    theta = pi too, and a Newton iteration converges to that turn as well: a vertebra guessed
    upside down, its tendons pulled towards the holes opposite theirs (the nitinol robot's tip
    then swung to the far side of its equilibrium). Near pi the error is unbounded, at pi
    and beyond (round-off) infinite.
    """
    d = 1.0 + trace      # 2 (1 + cos(theta))
    if not d > 0.0:
        for i in range(3):
            e[i] = math.inf
        return
    c = 2.0 / d          # 2 tan(theta / 2) / (2 sin(theta)) of skew(S) = sin(theta) [a]x
    e[0] = c * (s21 - s12)
    e[1] = c * (s02 - s20)
    e[2] = c * (s10 - s01)


@kernel
def _orthonormalize(y, row):
    """
    Replace R = y[3:12] (row-major) by its nearest rotation and copy it to row.

    One Newton-Schulz step, R <- R (3 I - R^T R) / 2, is exact to round-off for the ~1e-8
    drift of RK4.
    """
    R = y[3:12]
    S = row[3:12]   # scratch for R^T R, then the result
    for a in range(3):
        for b in range(3):
            S[3 * a + b] = R[a] * R[b] + R[3 + a] * R[3 + b] + R[6 + a] * R[6 + b]
    for i in range(3):
        r0, r1, r2 = R[3 * i], R[3 * i + 1], R[3 * i + 2]
        for b in range(3):
            acc = 3.0 * R[3 * i + b] - (r0 * S[b] + r1 * S[3 + b] + r2 * S[6 + b])
            y[3 + 3 * i + b] = 0.5 * acc
    for i in range(9):
        row[3 + i] = y[3 + i]


@kernel
def _bay_error(ys, yend, P, Q, e, ds):
    """
    Write the fixed-point error of a bay into e and return its max norm.

    The error is the integrated minus the guessed pose of vertebra j + 1 in the frame of
    vertebra j: position / ds, and :func:`_rotation_error` of Q^T Q_integrated.
    """
    # P_int = R_j^T (p_end - p_j)
    for i in range(3):
        acc = 0.0
        for col in range(3):
            acc += ys[3 + 3 * col + i] * (yend[col] - ys[col])
        e[i] = (acc - P[i]) / ds
    # S = Q^T Q_int with Q_int[a, b] = sum_l R_j[l, a] R_end[l, b]: its skew part and trace
    s01 = s10 = s02 = s20 = s12 = s21 = trace = 0.0
    for a in range(3):
        qi0 = qi1 = qi2 = 0.0
        for col in range(3):
            rl = ys[3 + 3 * col + a]
            qi0 += rl * yend[3 + 3 * col]
            qi1 += rl * yend[4 + 3 * col]
            qi2 += rl * yend[5 + 3 * col]
        s01 += Q[a, 0] * qi1
        s10 += Q[a, 1] * qi0
        s02 += Q[a, 0] * qi2
        s20 += Q[a, 2] * qi0
        s12 += Q[a, 1] * qi2
        s21 += Q[a, 2] * qi1
        trace += Q[a, 0] * qi0 + Q[a, 1] * qi1 + Q[a, 2] * qi2
    _rotation_error(s01, s10, s02, s20, s12, s21, trace, e[3:6])
    m = 0.0
    for i in range(6):
        m = max(m, abs(e[i]))
    return m if math.isfinite(m) else math.inf
