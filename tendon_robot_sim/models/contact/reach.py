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
Where along a clamped rod the world can be touched at all: the broad phase of the shooting grid.

A rod clamped at its base point p0 has its point of arc length s within |p(s) - p0| <= s |v|max
of the base whatever its shape (|v| the stretch of its centreline). So the rod's envelope can
touch obstacle j only from the arc length (d_j - a - CUTOFF delta_j) / (1 + STRETCH) on, d_j the
distance of the base to the obstacle, ``a`` the largest envelope radius and CUTOFF delta_j the
penalty's reach (:mod:`~tendon_robot_sim.models.contact._kernels`). Before the first such arc
length the shooting needs no contact step (``statics/solver.py``: CONTACT_STEP): whatever the
rod does there, no obstacle loads it. The distances are those of the numpy reference
(:mod:`~tendon_robot_sim.models.contact.reference`), exact for every shape.
"""

import numpy as np

from tendon_robot_sim.models.contact import _kernels as kernels
from tendon_robot_sim.models.contact.reference import signed_distance
from tendon_robot_sim.models.contact.world import World

# The largest stretch of the centreline the bound allows for, |v| <= 1 + STRETCH: the models'
# linear laws hold for strains of a few per mille (a steel or nitinol rod yields below 1 %); a
# silicone rod pulled 10 % longer has left them long before.
STRETCH = 0.1


def first_reach(world: World, contact: kernels.Contact, base: np.ndarray) -> float:
    """
    Return the smallest arc length [m] at which the rod clamped at ``base`` [m] can touch.

    ``contact``: ``world`` as the kernels see it (its envelope radii included). The distances
    of the base to the obstacles are exact (a mesh's to all its faces: this runs once per
    solver). 0 if an obstacle is within reach of the base; inf without obstacles.
    """
    if not world.obstacles:
        return float('inf')
    base = np.asarray(base, dtype=float)[None]
    first = float('inf')
    for j, obstacle in enumerate(world.obstacles):
        distance = signed_distance(contact.shape[j], contact.pose[j], contact.dims[j], base,
                                   obstacle.triangles)[0][0]
        reach = contact.radius.max() + kernels.CUTOFF * contact.law[j, kernels.LAW_DELTA]
        first = min(first, max(0.0, (distance - reach) / (1.0 + STRETCH)))
    return float(first)


def reach_zones(world: World, contact: kernels.Contact, base: np.ndarray,
                length: float) -> list[tuple[float, float]]:
    """Return the arc lengths [m] of a rod ``length`` [m] long that can touch: [(a, length)]."""
    first = first_reach(world, contact, base)
    return [(first, length)] if first < length else []
