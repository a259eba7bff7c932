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
The lengths of tendons cut into pieces of their own tension, for displacement inputs.

A tendon i of the path-dependent statics (:mod:`~tendon_robot_sim.models.rod.statics.
stick_slip`) has its motor tension T_0 over its motor distance d and the tension T_k over
its piece k, whose path runs from the base hole to l_k (l_0 = 0 before the first). With
compliance C it needs the unstretched length

    N_i = d / (1 + C T_0) + sum_k (l_k - l_(k-1)) / (1 + C T_k),

and with the motor's displacement q the error F_i = N_i - (l* + d - q) is 0 while it is taut
and at most 0 while it is slack (T_0 = 0): a complementarity in the motor tensions.
:func:`length_errors` gives F and dF/dT_0 where the pieces' tensions follow the motors' by
the stick-slip sweep (:func:`~tendon_robot_sim.models.rod.tendons.capstan.stick_slip_sweep`,
its slopes) and their paths a linear model, l = l_ref + B (T - T_ref);
:func:`complementary_step` is Newton's step of the complementarity.
"""

from __future__ import annotations

import itertools

import numpy as np

from tendon_robot_sim.models._numerics import kernel
from tendon_robot_sim.models.rod.tendons.capstan import stick_slip_sweep

# Tendons up to which every taut set is tried (complementary_step): 2^6 small solves at most.
MAX_ENUMERATED = 6


@kernel
def length_errors(previous, motors, theta, mu, first, T_ref, l_ref, B, compliance, distance,
                  available, tensions, slopes, F, J):
    """
    Write the pieces' tensions and slopes, the length errors F [m] and J = dF/dT_0 [m/N].

    ``previous``, ``motors``, ``theta``, ``mu``, ``first``: the sweep's (the pieces of tendon
    i are ``first[i]:first[i + 1]``); the paths l = ``l_ref`` + ``B`` (T - ``T_ref``) [m];
    per tendon its ``compliance`` C [1/N], motor ``distance`` d and ``available`` length
    l* + d - q [m]. Out: ``tensions``, ``slopes`` (pieces,), ``F`` (n,), ``J`` (n, n), at
    the wrap angles ``theta`` held (module docstring).
    """
    stick_slip_sweep(previous, motors, theta, mu, first, tensions, slopes)
    pieces, n = tensions.size, motors.size
    dT = tensions - T_ref
    lengths = l_ref.copy()
    for a in range(pieces):
        for b in range(pieces):
            lengths[a] += B[a, b] * dT[b]
    for i in range(n):
        C, stretch = compliance[i], 1.0 + compliance[i] * motors[i]
        F[i] = distance[i] / stretch - available[i]
        J[i, :] = 0.0
        J[i, i] = -distance[i] * C / stretch ** 2
        before = 0.0
        for k in range(first[i], first[i + 1]):
            inverse = 1.0 / (1.0 + C * tensions[k])
            F[i] += (lengths[k] - before) * inverse
            # its path: w_k = 1 / (1 + C T_k) - 1 / (1 + C T_(k+1)) of l_k (the last: no T_(k+1))
            weight = inverse - (1.0 / (1.0 + C * tensions[k + 1]) if k + 1 < first[i + 1]
                                else 0.0)
            for j in range(n):
                for m in range(first[j], first[j + 1]):
                    J[i, j] += weight * B[k, m] * slopes[m]
            # its stretch
            J[i, i] -= (lengths[k] - before) * C * inverse ** 2 * slopes[k]
            before = lengths[k]


def complementary_step(motor: np.ndarray, F: np.ndarray, J: np.ndarray,
                       tolerance: float) -> np.ndarray | None:
    """
    Newton step of the tendons' complementarity, linearised: the next motor tensions [N].

    T' = T + d with T' >= 0, the length errors F + J d <= ``tolerance`` [m] (J = dF/dT [m/N]),
    equal to 0 where T' > 0: the taut set of ``T > 0 or F > tolerance`` first, then those of
    its tendons pushed below 0 N released and those too short taken in (up to n times), then
    every other set, fewest changes first (up to 2^MAX_ENUMERATED). None: no set meets it.
    """
    taut, tried = (motor > 0.0) | (F > tolerance), set()
    for _ in range(motor.size + 1):
        tried.add(taut.tobytes())
        step = _step(motor, F, J, taut)
        if step is None:
            break
        new, predicted = motor + step, F + J @ step
        if np.all(new[taut] >= 0.0) and np.all(predicted[~taut] <= tolerance):
            return new
        taut = (taut & (new >= 0.0)) | (~taut & (predicted > tolerance))
        if taut.tobytes() in tried:
            break
    if motor.size > MAX_ENUMERATED:
        return None
    start = (motor > 0.0) | (F > tolerance)
    every = sorted((np.array(s) for s in itertools.product((False, True), repeat=motor.size)),
                   key=lambda s: np.sum(s != start))
    for taut in every:
        step = None if taut.tobytes() in tried else _step(motor, F, J, taut)
        if step is not None and np.all(motor[taut] + step[taut] >= 0.0) and np.all(
                (F + J @ step)[~taut] <= tolerance):
            return motor + step
    return None


def _step(motor: np.ndarray, F: np.ndarray, J: np.ndarray, taut: np.ndarray):
    """Return the step that slackens the others to 0 N and meets the ``taut`` ones' lengths."""
    step = -motor.copy()
    step[taut] = 0.0
    if taut.any():
        rows = J[taut]
        try:
            step[taut] = np.linalg.solve(rows[:, taut], -F[taut] - rows[:, ~taut] @ step[~taut])
        except np.linalg.LinAlgError:     # singular: no step with this set
            return None
    return step
