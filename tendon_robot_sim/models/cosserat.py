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
The Cosserat rod pieces shared by the tendon robot's statics and the parallel robot.

The stiffness of a circular rod, the shear coefficient both use, the statics errors and
the argument checks. The compiled rod itself is :mod:`tendon_robot_sim.models._cosserat_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from tendon_robot_sim.models.description import CircularSection


# PyElastica 1.0 shear coefficient (elastica/rod/factory_function.py, alpha_c).
PYELASTICA_SHEAR_COEFFICIENT = 27.0 / 28.0


class StaticsError(Exception):
    """Base class of the statics solver's errors."""


class StaticsInputError(StaticsError, ValueError):
    """A bad argument; the message names it and the problem."""


class ConvergenceError(StaticsError):
    """
    The shooting method did not converge.

    Attributes
    ----------
    residual : float
        Scaled residual (max norm) of the last iterate.
    iterations : int
        Newton iterations of all attempts (warm, cold, continuation).

    """

    def __init__(self, message: str, residual: float, iterations: int):
        super().__init__(message)
        self.residual = residual
        self.iterations = iterations


def stiffness_matrices(rod: CircularSection,
                       shear_coefficient: float = PYELASTICA_SHEAR_COEFFICIENT,
                       ) -> tuple[np.ndarray, np.ndarray]:
    """
    Return the diagonals of Kse and Kbt.

    Kse = diag(alpha G A, alpha G A, E A) [N] and Kbt = diag(E I, E I, G J) [N m^2] of a
    circular rod (``rod`` also has ``shear_modulus`` [Pa]).
    """
    area, inertia = rod.area, rod.second_moment
    Kse = np.array([shear_coefficient * rod.shear_modulus * area,
                    shear_coefficient * rod.shear_modulus * area,
                    rod.youngs_modulus * area])
    Kbt = np.array([rod.youngs_modulus * inertia, rod.youngs_modulus * inertia,
                    rod.shear_modulus * rod.polar_moment])
    return Kse, Kbt


def finite_number(value, field: str) -> float:
    """Return ``value`` as a finite float, or raise StaticsInputError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise StaticsInputError(f'{field}: must be a number, got {type(value).__name__} {value!r}')
    value = float(value)
    if not math.isfinite(value):
        raise StaticsInputError(f'{field}: must be finite, got {value}')
    return value


def vector3(value, field: str) -> np.ndarray:
    """Return ``value`` as 3 finite floats, or raise StaticsInputError naming ``field``."""
    # fast path (warm solves are ~0.1 ms): a float array or 3 plain numbers, all finite
    if type(value) is np.ndarray:
        fast = value.shape == (3,) and value.dtype.kind == 'f'
    else:
        fast = (type(value) in (tuple, list) and len(value) == 3
                and all(type(v) in (float, int) for v in value))
    if fast:
        out = np.array(value, dtype=float)
        if math.isfinite(out[0] + out[1] + out[2]):
            return out
    try:
        items = list(value)
    except TypeError:
        raise StaticsInputError(f'{field}: must be 3 numbers, got {value!r}') from None
    if len(items) != 3:
        raise StaticsInputError(f'{field}: must be 3 numbers, got {len(items)}')
    return np.array([finite_number(v, f'{field}[{i}]') for i, v in enumerate(items)])
