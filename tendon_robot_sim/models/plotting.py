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
What every plot of the package shares: equal axes for shapes, legends beside the data.

A robot's shape drawn on unequal axes looks bent where it is straight (the workspace of the
parallel robot looked like a flat disc); a legend inside the axes covered the curves of the
snake's and the trunk's plots. matplotlib is imported by the caller.
"""

import numpy as np


def equal_axes(ax, points: np.ndarray, margin: float = 0.05) -> None:
    """
    Give ``ax`` (2-D or 3-D) one scale on every axis, around ``points`` (k, 2 or 3).

    A 3-D axes gets a cube of limits and a cubic box; a 2-D one an equal aspect.
    """
    points = np.asarray(points, dtype=float)
    points = points[np.all(np.isfinite(points), axis=1)]
    if not points.size:
        return
    low, high = points.min(axis=0), points.max(axis=0)
    centre = (low + high) / 2.0
    half = max(float((high - low).max()) / 2.0, 1e-9) * (1.0 + margin)
    setters = [ax.set_xlim, ax.set_ylim] + ([ax.set_zlim] if points.shape[1] == 3 else [])
    for set_limits, c in zip(setters, centre):
        set_limits(c - half, c + half)
    if points.shape[1] == 3:
        ax.set_box_aspect((1.0, 1.0, 1.0))
    else:
        ax.set_aspect('equal', adjustable='box')


def legend_beside(ax, **kwargs) -> None:
    """
    Put the legend of ``ax`` to its right, outside the data (tight_layout makes room).

    An axis with nothing labelled (a workspace of no reachable point) gets none, rather than
    matplotlib's warning on the command's standard error.
    """
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc='upper left', bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kwargs)
