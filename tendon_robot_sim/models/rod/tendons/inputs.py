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

"""Per-tendon inputs of the statics solvers, checked: one value per tendon, by order or name."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.models.cosserat import finite_number, StaticsInputError


def tendon_values(values, field: str, names: Sequence[str],
                  max_tensions: np.ndarray | None = None) -> np.ndarray:
    """
    Return per-tendon ``values`` (a sequence, or a mapping by name: others 0) as (n,).

    ``names``: the tendons in order. With ``max_tensions`` (N, per tendon) the values are
    tensions, each within [0, max_tension]. StaticsInputError names ``field`` and the entry.
    """
    n = len(names)
    if isinstance(values, Mapping):
        out = np.zeros(n)
        for name, value in values.items():
            if name not in names:
                raise StaticsInputError(
                    f'{field}: unknown tendon {name!r}; known tendons: {names}')
            out[names.index(name)] = finite_number(value, f'{field}[{name}]')
        labels = names
    else:
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
            raise StaticsInputError(
                f'{field}: must be a sequence of {n} numbers or a mapping '
                f'{{tendon name: value}}, got {type(values).__name__}')
        if len(values) != n:
            raise StaticsInputError(
                f'{field}: expected {counted(n, "value")} (one per tendon: '
                f'{", ".join(names)}), got {len(values)}')
        try:   # fast path for a sequence of plain numbers
            out = np.asarray(values)
            valid = (out.shape == (n,) and out.dtype.kind in 'iuf'
                     and bool(np.all(np.isfinite(out))))
        except (TypeError, ValueError):
            valid = False
        if valid:
            out = out.astype(float)
        else:   # find the culprit for the message
            out = np.array([finite_number(v, f'{field}[{i}]') for i, v in enumerate(values)])
        labels = list(range(n))
    if max_tensions is not None and not (np.all(out >= 0.0) and np.all(out <= max_tensions)):
        for label, value, limit in zip(labels, out, max_tensions):
            if value < 0.0:
                raise StaticsInputError(
                    f'{field}[{label}]: must be >= 0 N (a tendon cannot push), got {value:g}')
            if value > limit:
                raise StaticsInputError(
                    f'{field}[{label}]: must be <= max_tension = {limit:g} N, got {value:g}')
    return out
