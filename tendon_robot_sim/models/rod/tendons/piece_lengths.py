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
:func:`complementary_step` is Newton's step of the complementarity (numpy) and
:func:`complementary_kernel` the same compiled; :func:`settle_motors` solves the motor
tensions in these models, the wrap angles a linear model as well (semismooth Newton).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from tendon_robot_sim.models._numerics import gauss_solve, kernel
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
    # the paths, and B's rows summed with the slopes over each tendon's pieces: B times the
    # tensions' change, and times the slopes spread into one column per tendon (BLAS: 100
    # pieces make these 100 x 100 products the most of a step)
    change, spread = np.empty(pieces), np.zeros((pieces, n))
    for j in range(n):
        for m in range(first[j], first[j + 1]):
            change[m] = tensions[m] - T_ref[m]
            spread[m, j] = slopes[m]
    lengths = l_ref + np.dot(B, change)
    slopes_of = np.dot(B, spread)
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
                J[i, j] += weight * slopes_of[k, j]
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


@kernel
def _taut_step(motor, F, J, taut, step):
    """Compiled :func:`_step`: write it into ``step``; False where the taut rows are singular."""
    n = motor.size
    m = 0
    for i in range(n):
        step[i] = 0.0 if taut[i] else -motor[i]
        m += 1 if taut[i] else 0
    if m == 0:
        return True
    A, b = np.empty((m, m)), np.empty(m)
    r = 0
    for i in range(n):
        if not taut[i]:
            continue
        b[r], c = -F[i], 0
        for j in range(n):
            if taut[j]:
                A[r, c] = J[i, j]
                c += 1
            else:
                b[r] -= J[i, j] * step[j]
        r += 1
    if not gauss_solve(A, b):
        return False
    r = 0
    for i in range(n):
        if taut[i]:
            step[i] = b[r]
            r += 1
    return True


@kernel
def _meets(motor, F, J, taut, step, tolerance):
    """Tell whether T + step keeps the ``taut`` tendons >= 0 N and the others' errors <= tol."""
    for i in range(motor.size):
        if taut[i]:
            if motor[i] + step[i] < 0.0:
                return False
        else:
            predicted = F[i]
            for j in range(motor.size):
                predicted += J[i, j] * step[j]
            if predicted > tolerance:
                return False
    return True


@kernel
def _mask(taut):
    """Taut set as bits, element 0 the highest (the order of itertools.product)."""
    bits = 0
    for i in range(taut.size):
        bits = 2 * bits + (1 if taut[i] else 0)
    return bits


@kernel
def complementary_kernel(motor, F, J, tolerance, out):
    """
    Compiled :func:`complementary_step`: write the next motor tensions [N] into ``out``.

    The same sets in the same order; False where no set meets the complementarity.
    """
    n = motor.size
    taut, step, new = np.empty(n, np.bool_), np.empty(n), np.empty(n)
    for i in range(n):
        taut[i] = motor[i] > 0.0 or F[i] > tolerance
    start = _mask(taut)
    tried, count = np.empty(n + 1, np.int64), 0
    for _ in range(n + 1):
        tried[count] = _mask(taut)
        count += 1
        if not _taut_step(motor, F, J, taut, step):
            break
        if _meets(motor, F, J, taut, step, tolerance):
            for i in range(n):
                out[i] = motor[i] + step[i]
            return True
        for i in range(n):
            predicted = F[i]
            for j in range(n):
                predicted += J[i, j] * step[j]
            new[i] = motor[i] + step[i]
            taut[i] = (taut[i] and new[i] >= 0.0) or (not taut[i] and predicted > tolerance)
        bits = _mask(taut)
        if np.any(tried[:count] == bits):
            break
    if n > MAX_ENUMERATED:
        return False
    for changes in range(n + 1):        # fewest changes first, then in product order
        for bits in range(2 ** n):
            flipped, b = bits ^ start, 0
            while flipped:
                b += flipped & 1
                flipped >>= 1
            if b != changes or np.any(tried[:count] == bits):
                continue
            for i in range(n):
                taut[i] = (bits >> (n - 1 - i)) & 1 == 1
            if (_taut_step(motor, F, J, taut, step)
                    and _meets(motor, F, J, taut, step, tolerance)):
                for i in range(n):
                    out[i] = motor[i] + step[i]
                return True
    return False


@kernel
def settle_motors(previous, motor, theta_ref, A, T_ref, l_ref, B, mu, first, compliance,
                  distance, available, tolerances, max_halvings, max_iterations, tensions,
                  slopes, F, J):
    """
    Solve in place the motor tensions ``motor`` [N] meeting ``available`` in the linear models.

    theta = ``theta_ref`` + ``A`` (T - ``T_ref``) (at least 0) and the paths of
    :func:`length_errors`, T the pieces' stick-slip tensions (exact, with their kinks):
    semismooth Newton on the taut tendons' length errors with the sweep's slopes, a tendon
    taut where its tension is above 0 or its error above the length tolerance, the taut set
    by :func:`complementary_kernel`. A step that makes the largest error worse (past a kink)
    is halved back, up to ``max_halvings`` times in a row. A tendon whose first piece sticks
    and that does not stretch has no slope: it steps to the edge of that piece's cone its
    error points to. ``tolerances``: (slack length [m], length [m], tension [N]), the errors
    settled at a tenth of the second, the angles where their change moves no tension by a
    tenth of the third. Writes ``tensions``, ``slopes``, ``F``, ``J``; False where it does not
    settle in ``max_iterations`` (or no taut set meets the complementarity).
    """
    slack_tolerance, length_tolerance, tension_tolerance = tolerances[0], tolerances[1], \
        tolerances[2]
    n, pieces = motor.size, previous.size
    theta, best_motor, change = theta_ref.copy(), motor.copy(), np.empty(pieces)
    taut, free = np.empty(n, np.bool_), np.empty(n, np.int64)
    best, halved, largest = math.inf, 0, 0.0
    for i in range(n):
        largest = max(largest, mu[i])
    for _ in range(max_iterations):
        length_errors(previous, motor, theta, mu, first, T_ref, l_ref, B, compliance, distance,
                      available, tensions, slopes, F, J)
        moved = 0.0
        for a in range(pieces):
            change[a] = tensions[a] - T_ref[a]
        turns = np.dot(A, change)
        for a in range(pieces):
            angle = max(theta_ref[a] + turns[a], 0.0)
            moved = max(moved, abs(angle - theta[a]))
            theta[a] = angle
        merit = 0.0
        for i in range(n):
            taut[i] = motor[i] > 0.0 or F[i] > slack_tolerance
            if taut[i]:
                merit = max(merit, abs(F[i]))
        if merit <= 0.1 * length_tolerance:
            if moved * largest <= 0.1 * tension_tolerance:
                return True
            continue
        if merit > best * (1.0 + 1e-6) and merit > length_tolerance and halved < max_halvings:
            for i in range(n):      # Newton went over a kink of the sweep: back halfway
                motor[i] = 0.5 * (motor[i] + best_motor[i])
            halved += 1
            continue
        best, halved, m = merit, 0, 0
        for i in range(n):
            best_motor[i] = motor[i]
            k = first[i]
            if taut[i] and slopes[k] == 0.0 and abs(J[i, i]) <= 1e-12:      # held
                if abs(F[i]) > 0.1 * length_tolerance:
                    factor = math.exp(mu[i] * theta[k])
                    motor[i] = previous[k] * factor if F[i] > 0.0 else previous[k] / factor
            else:
                free[m] = i
                m += 1
        index = free[:m]
        sub_J = np.empty((m, m))
        for r in range(m):
            for c in range(m):
                sub_J[r, c] = J[index[r], index[c]]
        step = np.empty(m)
        if not complementary_kernel(motor[index], F[index], sub_J, slack_tolerance, step):
            return False
        for r in range(m):
            motor[index[r]] = step[r]
    return False
