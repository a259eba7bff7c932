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
Tendon routing given as functions of arc length, beside the description's own (``Tendon.hole``).

A routing function maps s (k,) [m] to the hole position r, its first and its second derivative
in the cross-section frame ((3, k) each, m, 1, 1/m); the statics solver and its scipy twin take
them per tendon by name (``StaticsSolver(robot, routing={'t0': fn})``).
"""

from typing import Callable, Mapping

import numpy as np

from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.tendon_robot import Robot

# s (k,) [m] -> r, r_s, r_ss, each (3, k), body frame (like Tendon.hole)
RoutingFunction = Callable[[np.ndarray], tuple]


def routing_functions(robot: Robot, routing: Mapping[str, RoutingFunction] | None) -> list:
    """Hole functions per tendon: ``Tendon.hole`` unless ``routing`` overrides it."""
    routing = dict(routing or {})
    functions = []
    for tendon in robot.tendons:
        fn = routing.pop(tendon.name, None)
        if fn is None:
            functions.append(tendon.hole)
            continue
        if not callable(fn):
            raise StaticsInputError(f'routing[{tendon.name}]: must be callable, got {fn!r}')
        functions.append(checked_routing(tendon.name, fn, tendon.end))
    if routing:
        raise StaticsInputError(f'routing: unknown tendon {next(iter(routing))!r}; '
                                f'known tendons: {robot.tendon_names}')
    return functions


def checked_routing(name: str, fn: RoutingFunction, end: float) -> RoutingFunction:
    """
    Wrap a user routing function in checks.

    Shapes and finiteness on every call, and once, that r_s and r_ss are the derivatives of r
    and r_s (central differences).
    """
    field = f'routing[{name}]'

    def evaluate(s: np.ndarray):
        s = np.asarray(s, dtype=float)
        try:
            out = fn(s)
            r, r_s, r_ss = (np.broadcast_to(np.asarray(a, dtype=float), (3, s.size))
                            for a in out)
        except StaticsInputError:
            raise
        except Exception as error:  # the user's function: report what it did
            raise StaticsInputError(
                f'{field}: must map s (k,) to (r, r_s, r_ss), each (3, k): {error}') from None
        for label, a in (('r', r), ('r_s', r_s), ('r_ss', r_ss)):
            if not np.all(np.isfinite(a)):
                raise StaticsInputError(f'{field}: {label} is not finite for some s in [0, {end}]')
        return r, r_s, r_ss

    delta = 1e-6 * end
    s = np.linspace(2 * delta, end - 2 * delta, 9)
    r, r_s, r_ss = evaluate(s)
    r_p, r_s_p, _ = evaluate(s + delta)
    r_m, r_s_m, _ = evaluate(s - delta)
    for label, value, estimate in (('r_s', r_s, (r_p - r_m) / (2 * delta)),
                                   ('r_ss', r_ss, (r_s_p - r_s_m) / (2 * delta))):
        error = np.max(np.abs(value - estimate))
        if error > 1e-5 * (1.0 + np.max(np.abs(value)) + np.max(np.abs(r)) / end ** 2):
            raise StaticsInputError(
                f'{field}: {label} is not the derivative of the function before it '
                f'(off by {error:.3g} from finite differences)')
    return evaluate
