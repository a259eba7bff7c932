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
Tendon friction in the implicit dynamics: which models take it, and its kernel table.

The laws (Till's viscous and sliding friction) and their equations are in
:mod:`tendon_robot_sim.models.rod.tendons._friction_kernels`; this module turns the description's
``tendons[i].friction`` into the kernels' table and keeps :func:`sliding_rates_nested`, the
nested solve of the sliding law's coupling in Till's own form (guess v_s and u_s, solve the
balance for them at every point, as his ``Cpp_sliding_friction`` does with Levenberg-Marquardt),
which tests compare the kernels' closed form with.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.rod.tendons._friction_kernels import (
    FR_COEF, FR_COMPLIANCE, FR_LAW, FR_MOTOR, FR_SIZE, FR_SLIDING, FR_SLIP, FR_VISCOUS)
from tendon_robot_sim.models.tendon_robot import (DEFAULT_SLIP_VELOCITY, PATH_DEPENDENT_STATICS,
                                                  Robot)

#: Models of the implicit dynamics that take tendon friction: continuous routing (cosserat) and
#: discs (discrete: the capstan jump at each hole, rod/tendons/_friction_kernels.py)
FRICTION_MODELS = ('cosserat', 'discrete')


def friction_unsupported(robot: Robot, model: str) -> str:
    """Why the implicit dynamics' ``model`` cannot take ``robot``'s friction; '' when it can."""
    for i, tendon in enumerate(robot.tendons):
        if tendon.friction is not None and model not in FRICTION_MODELS:
            return (f'tendons[{i}].friction: the implicit dynamics models tendon friction with '
                    f'models cosserat and discrete, not {model}; use model cosserat (or discrete '
                    'with discs), the path-dependent statics, or remove the key')
    if robot.rod.bending_friction is not None:
        return ('rod.bending_friction: the implicit dynamics does not model it; '
                f'{PATH_DEPENDENT_STATICS} does, or remove the key')
    return ''


def friction_table(robot: Robot) -> np.ndarray:
    """
    Return the kernels' friction table (FR_SIZE, n_tendons), or (FR_SIZE, 0) without friction.

    Rows FR_*: law (FR_VISCOUS, FR_SLIDING, 0 for a frictionless tendon), coefficient, slip
    velocity [m/s], compliance [1/N], motor distance [m].
    """
    if all(t.friction is None for t in robot.tendons):
        return np.zeros((FR_SIZE, 0))
    table = np.zeros((FR_SIZE, len(robot.tendons)))
    for i, tendon in enumerate(robot.tendons):
        table[FR_COMPLIANCE, i] = tendon.compliance
        table[FR_MOTOR, i] = tendon.motor_distance
        table[FR_SLIP, i] = DEFAULT_SLIP_VELOCITY
        friction = tendon.friction
        if friction is None:
            continue
        table[FR_LAW, i] = FR_SLIDING if friction.law == 'sliding' else FR_VISCOUS
        table[FR_COEF, i] = friction.coefficient
        if friction.slip_velocity is not None:
            table[FR_SLIP, i] = friction.slip_velocity
    return table


def sliding_rates_nested(K: np.ndarray, rhs: np.ndarray, tendons) -> tuple[np.ndarray,
                                                                           np.ndarray]:
    """
    Solve Eq. (16) with the sliding law's loads by a nested solve, in Till's form.

    K (6, 6) and rhs (6,): R&W Eq. (16) without friction, K (v_s, u_s) = rhs. ``tendons``:
    per sliding tendon (r, pb, w, tau, k), body frame: hole, tangent pb = u x r + r_s + v,
    w = u x (pb + r_s) + r_ss, tension [N] and k = nu sat(s_t) s_s. Unknowns (v_s, u_s):
    pb_s = w + v_s + u_s x r, the normal force f_n = tau (I - t t^T) pb_s / |pb|,
    tau_s = -k |f_n|, and the balance K (v_s, u_s) = rhs - tau_s (t, r x t) is solved for
    them (scipy's fsolve, from the frictionless strains).
    Returns (v_s, u_s) (6,) and tau_s per tendon.
    """
    from scipy.optimize import fsolve   # tests only: the simulator does not import scipy

    def rates(x):
        taus, load = [], np.zeros(6)
        for r, pb, w, tau, k in tendons:
            t = pb / np.linalg.norm(pb)
            pb_s = w + x[:3] + np.cross(x[3:], r)
            f_n = tau * (pb_s - t * (t @ pb_s)) / np.linalg.norm(pb)
            tau_s = -k * np.linalg.norm(f_n)
            taus.append(tau_s)
            load -= tau_s * np.concatenate((t, np.cross(r, t)))
        return np.array(taus), load

    def balance(x):
        return K @ x - rhs - rates(x)[1]

    x = fsolve(balance, np.linalg.solve(K, rhs), xtol=1e-13)
    return x, rates(x)[0]
