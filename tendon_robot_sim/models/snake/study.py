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
The trends of figure 2 of D'Antuono et al. 2023, paper against package.

The paper's study applies theta = (pi/18) sin(t/2) to the pan joints, the tilt joints and all
joints of one six-joint section (5 ms steps, about 12.6 s) and plots the cable tensions at the
base. It gives no numbers for the link, the friction, the pretension or the minimum contact
force, so only its trends can be compared: :func:`figure_2` states each one as the paper
reports it and as this package computes it, with the numbers. Cables are named as in the
description (``cable1`` .. ``cable4``: the paper's cables 1 to 4, cable 2 the one holding the
weight; see docs/snake.md for the numbering).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The paper's "almost 43 %": a 3-D peak of cable 2 within this of +43 % shows the trend.
RATIO_TOLERANCE = 0.05
# The last seconds of the tilt motion, where the paper has cable 4 at its maximum [s].
LAST_SECONDS = 3.0
# A cable "rises" when it moves by more than this [N].
RISE = 1e-3


@dataclass(frozen=True)
class Trend:
    """A trend of the figure: as the paper reports it, as computed here, whether they agree."""

    name: str
    paper: str
    here: str
    agrees: bool


def figure_2(time: np.ndarray, base: dict, names) -> list[Trend]:
    """
    Compare the base tensions of the three motions with the paper's figure 2.

    Parameters
    ----------
    time : (K,) s
        The sample times, shared by the three motions.
    base : dict
        ``'pan'``, ``'tilt'``, ``'both'`` -> base tensions (K, 4) [N] (segment 1).
    names : sequence of str
        The four cable names, the paper's cables 1 to 4 in order.

    """
    pan, tilt = base['pan'], base['tilt']
    one, two, three, four = names
    others = np.delete(pan, 1, axis=1)
    pan_top = bool(np.all(pan.argmax(axis=1) == 1))
    largest = (f'{two} at every step' if pan_top
               else f'{names[int(np.bincount(pan.argmax(axis=1)).argmax())]} at most steps')
    asymmetry = float(np.abs(tilt[:, 0] - tilt[:, 2]).max())
    last = time >= time[-1] - LAST_SECONDS
    cable4 = tilt[:, 3]
    rises = bool(np.ptp(cable4) > RISE and cable4[last].max() >= cable4.max() - 1e-9
                 and np.all(cable4[last] < tilt[last, 1]))
    peak = {name: float(tensions[:, 1].max()) for name, tensions in base.items()}
    over_tilt = peak['both'] / peak['tilt'] - 1.0
    over_pan = peak['both'] / peak['pan'] - 1.0
    return [
        Trend('pan only: the largest base tension', f'{two}, throughout',
              f'{largest} ({pan[:, 1].min():.2f} to {pan[:, 1].max():.2f} N; {one} and '
              f'{three} at most {others[:, :2].max():.2f} N)', pan_top),
        Trend(f'tilt only: {one} and {three}', 'coincide',
              f'equal within {max(asymmetry, 1e-15):.0e} N', asymmetry < 1e-9),
        Trend(f'tilt only: {four} in the last {LAST_SECONDS:g} s', f'at its maximum, below {two}',
              f'{cable4[last].min():.3f} to {cable4[last].max():.3f} N (over the whole motion '
              f'{cable4.min():.3f} to {cable4.max():.3f} N)', rises),
        Trend(f'3-D: {two} peak over the tilt-only peak', '+43 % ("almost 43 %")',
              f'{100 * over_tilt:+.1f} % ({peak["both"]:.3f} vs {peak["tilt"]:.3f} N)',
              abs(over_tilt - 0.43) <= RATIO_TOLERANCE),
        Trend(f'3-D: {two} peak over the pan-only peak', 'above it (higher than both motions)',
              f'{100 * over_pan:+.1f} % ({peak["both"]:.3f} vs {peak["pan"]:.3f} N)',
              over_pan > 0.0),
    ]
