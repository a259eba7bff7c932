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
Capstan friction of a tendon on its guides: wrap angles and the stick-slip cone.

A tendon pulled over a guide through the angle theta (the turn of its direction there) may
hold different tensions on the guide's two sides: T_(k+1) within the capstan cone

    T_k e^(-mu theta_k)  <=  T_(k+1)  <=  T_k e^(mu theta_k)

(Shen, Browne, Ha & Chen, "friction of tendon-driven continuum robots", RA-L 2026: the
complementarity at the spacer discs). Strictly inside, the tendon sticks on the guide; on an
edge it slides, towards the side of the larger tension. For continuous routing the wrap angle
is the integral of the tendon's curvature: the pieces' turning angles sum to it, and on a
circular arc exactly.

:func:`stick_slip` is the quasi-static rule of one step of a sequence: walking from the motor
to the anchor, each piece keeps the tension it had (it sticks: the tendon does not move over
its guides) unless that tension left the cone of the piece before it, where it slides and its
tension is the cone's edge. Pulled from rest, every piece slides towards the motor and the
tension falls as T_0 e^(-mu theta(s)); released, it slides back and the tension rises
towards the anchor; in between it sticks, which is the hysteresis of real tendon robots.
"""

from __future__ import annotations

import math

import numpy as np

from tendon_robot_sim.models._numerics import kernel
from tendon_robot_sim.models.rod.tendons._friction_kernels import turn_angle


def turn_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the angles [rad] between the columns of ``a`` and ``b`` (3, k), each in [0, pi]."""
    # atan2 of |a x b| and a . b: accurate for small and for large angles alike (the cross
    # product by components: np.cross costs more than the rest for the few columns here)
    cross = (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    return np.arctan2(np.sqrt(cross[0] ** 2 + cross[1] ** 2 + cross[2] ** 2),
                      a[0] * b[0] + a[1] * b[1] + a[2] * b[2])


def wrap_angles(points: np.ndarray, incoming: np.ndarray) -> np.ndarray:
    """
    Return the turning angles [rad] of a tendon polyline, from the motor to its anchor.

    Parameters
    ----------
    points : array (3, K + 1)
        The tendon's base hole and the K points where its tension may change, in order [m].
    incoming : array (3,)
        Direction in which the tendon reaches its base hole from the motor (the base axis).

    Returns
    -------
    theta : array (K,)
        theta[0] the turn at the base hole (incoming to the first chord), theta[k] the turn
        at points[:, k] (chord k to chord k + 1), each in [0, pi].

    """
    chords = np.diff(points, axis=1)
    directions = np.column_stack((incoming, chords))
    return turn_angles(directions[:, :-1], directions[:, 1:])


@kernel
def path_turns(traj, rows, holes, start, before, incoming, out):
    """
    Write into ``out`` the turning angles [rad] of tendon pieces, from a solver's trajectory.

    Point j is p + R h at ``traj`` row ``rows[j]`` (rows of p, then R row-major, as the statics
    solver's), h = ``holes[j]`` (body frame) [m]; piece k's chord runs from point
    ``start[k]`` to point k, and its angle is the turn from chord ``before[k]`` to it (a
    column past the last chord: ``incoming``, the direction at the base hole):
    :func:`wrap_angles` for the pieces of all tendons at once.
    """
    pieces = start.size
    points, chords = np.empty((3, rows.size)), np.empty((3, pieces + 1))
    for j in range(rows.size):
        y, h = traj[rows[j]], holes[j]
        for i in range(3):
            points[i, j] = y[i] + y[3 + 3 * i] * h[0] + y[4 + 3 * i] * h[1] + y[5 + 3 * i] * h[2]
    for i in range(3):
        for k in range(pieces):
            chords[i, k] = points[i, k] - points[i, start[k]]
        chords[i, pieces] = incoming[i]
    for k in range(pieces):
        b = before[k]
        out[k] = turn_angle(chords[0, b], chords[1, b], chords[2, b], chords[0, k], chords[1, k],
                            chords[2, k])


@kernel
def stick_slip_sweep(previous, motors, theta, mu, first, out, slopes):
    """
    Write into ``out`` the pieces' tensions [N] of all tendons after one quasi-static step.

    The pieces of tendon i are ``first[i]:first[i + 1]`` of ``previous``, ``theta`` and
    ``out``, motor end first; ``motors`` (n,) and ``mu`` (n,) its motor tension and
    coefficient (:func:`stick_slip`, of which this is the compiled loop). ``slopes`` gets
    dT_k / dT_0 at fixed wrap angles: 0 where a piece sticks, the product of the cone factors
    (e^(-mu theta) sliding towards the motor, e^(mu theta) away from it) where the pieces up
    to it slide; on an edge, the slope of a rising motor tension.
    """
    for i in range(motors.size):
        before, slope = motors[i], 1.0
        for k in range(first[i], first[i + 1]):
            factor = math.exp(mu[i] * theta[k])
            low, high = before / factor, before * factor
            before = min(max(previous[k], low), high)
            if previous[k] <= low:
                slope /= factor
            elif previous[k] >= high:
                slope *= factor
            else:
                slope = 0.0
            out[k] = before
            slopes[k] = slope


def stick_slip(previous: np.ndarray, motor: float, theta: np.ndarray, mu: float) -> np.ndarray:
    """
    Tensions [N] of a tendon's K pieces after one quasi-static step (motor end first).

    ``previous`` (K,): the pieces' tensions before the step; ``motor``: the tension the motor
    now holds; ``theta`` (K,): the wrap angle before each piece (:func:`wrap_angles`); ``mu``:
    the Coulomb-capstan coefficient. Each piece keeps its tension within the cone of the piece
    before it and is clamped to the cone's edge outside it.
    """
    previous = np.asarray(previous, dtype=float)
    tensions = np.empty_like(previous)
    stick_slip_sweep(previous, np.array([float(motor)]), np.asarray(theta, dtype=float),
                     np.array([float(mu)]), np.array([0, previous.size]), tensions,
                     np.empty_like(previous))
    return tensions
