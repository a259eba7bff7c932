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
What the view's sliders command, and the check every value passes before it is sent.

A *drive* says where the sliders go: ``tension`` (the tension controller's
``tendon/command/tension``, effort in N), ``displacement`` (the displacement controller's
``tendon/command/displacement``, position in m), ``setpoint`` (straight to the simulator's
``tendon/setpoint``, in the robot's own input: the parallel robot's motor angles, a bellows
robot's pressures, for stacks that run no controller for the robot) or ``none`` (watch
only). The bounds come from the robot description (``max_tension``, pressure and motor
limits, :func:`tendon_robot_sim.models.registry.input_limits`) or, for displacements, from
the running displacement controller; a value outside them is never sent.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from tendon_robot_sim.models.registry import InputLimits

DRIVES = ('tension', 'displacement', 'setpoint', 'none')
# SI units the sliders show in another unit: (shown unit, shown value per SI value). The PCR's
# motor sliders read "-0.349066 / 1.570796" while the CLI and the docs say -20 and 90 deg.
SHOWN = {'rad': ('deg', 180.0 / math.pi)}


def shown(unit: str) -> tuple[str, float]:
    """Return the unit a page shows values of the SI ``unit`` in, and its value per SI value."""
    return SHOWN.get(unit, (unit, 1.0))


# Slider positions across a range: the step is the 1-2-5 value nearest range / STEPS.
STEPS = 1000


@dataclass(frozen=True)
class Command:
    """The inputs the sliders set: JointState ``field``, per input name its [low, high]."""

    drive: str
    field: str             # 'effort' | 'position'
    quantity: str          # 'tension', 'displacement', 'pressure', 'motor angle'
    unit: str              # SI: N, m, Pa, rad
    names: tuple[str, ...]
    low: np.ndarray        # (n,)
    high: np.ndarray       # (n,)

    def checked(self, name: str, value: float) -> float:
        """
        Return ``value`` for input ``name`` if it may be sent.

        A slider's float steps may end a rounding error past a bound: within 1e-9 of the
        range it is moved onto the bound.

        Raises
        ------
        ValueError
            An unknown name, a non-finite value or one outside [low, high]; the message
            names the input, the value and the bounds.

        """
        if name not in self.names:
            raise ValueError(f'{name!r} is not an input of this robot ({list(self.names)})')
        i = self.names.index(name)
        low, high = float(self.low[i]), float(self.high[i])
        value = float(value)
        tolerance = 1e-9 * max(1.0, high - low)
        if not math.isfinite(value) or not low - tolerance <= value <= high + tolerance:
            raise ValueError(f'{self.quantity} of {name}: {value:g} {self.unit} is outside '
                             f'[{low:g}, {high:g}] {self.unit}')
        return min(max(value, low), high)

    @property
    def shown_unit(self) -> str:
        """Return the unit the sliders show: degrees for angles (as the CLI and docs say)."""
        return shown(self.unit)[0]

    @property
    def scale(self) -> float:
        """Return the shown value per SI value (180 / pi for angles, else 1)."""
        return shown(self.unit)[1]

    def step(self, name: str) -> float:
        """Return the slider step of input ``name`` (shown unit): 1, 2 or 5 times 10^k."""
        i = self.names.index(name)
        return nice_step((float(self.high[i]) - float(self.low[i])) * self.scale / STEPS)

    def label(self, name: str) -> str:
        return f'{name} [{self.shown_unit}]'


def nice_step(raw: float) -> float:
    """Return the 1-2-5 value nearest ``raw`` > 0 (1e-3 for a zero range)."""
    if not raw > 0.0:
        return 1e-3
    power = 10.0 ** math.floor(math.log10(raw))
    return min((m * power for m in (1.0, 2.0, 5.0, 10.0)), key=lambda s: abs(s - raw))


def command_of(drive: str, limits: InputLimits,
               displacement: tuple[float, float] | None = None) -> Command | None:
    """
    Return what the sliders of ``drive`` command for a robot of ``limits``.

    ``displacement``: (min, max) [m] the displacement controller allows; the displacement
    drive has no sliders until it is known. None for the ``none`` drive.

    Raises
    ------
    ValueError
        An unknown drive, or a tension drive for a robot that takes no tensions.

    """
    if drive not in DRIVES:
        raise ValueError(f'drive: must be one of {list(DRIVES)}, got {drive!r}')
    names, n = limits.names, len(limits.names)
    if drive == 'none':
        return None
    if drive == 'setpoint':
        return Command(drive, limits.field, limits.quantity, limits.unit, names, limits.low,
                       limits.high)
    if limits.quantity != 'tension':
        raise ValueError(f'drive: {drive} needs a robot pulled by tendons or cables; this '
                         f'one takes {limits.quantity}s (use drive setpoint)')
    if drive == 'tension':
        return Command(drive, 'effort', 'tension', 'N', names, limits.low, limits.high)
    if displacement is None:
        return None
    low, high = displacement
    return Command(drive, 'position', 'displacement', 'm', names, np.full(n, float(low)),
                   np.full(n, float(high)))
