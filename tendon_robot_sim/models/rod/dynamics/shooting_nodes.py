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
Where the implicit step restarts its integration along the rod (multiple shooting).

J. Till, V. Aloi, D. C. Rucker, "Real-time dynamics of soft and continuum robots based on
Cosserat rod models" (IJRR 2019) shoot each time step's boundary value problem from the base;
at the small steps a stiff rod needs, that loses Newton's basin (see NODE_SPACING), so
:class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator` restarts the
integration from unknowns at these arc lengths.
"""

import math

import numpy as np

from tendon_robot_sim.models.rod.dynamics import _implicit_kernels as stepper
from tendon_robot_sim.models.tendon_robot import Robot

# Multiple shooting: a time step's BVP grows and decays like exp(+-lambda s), lambda =
# (rho A c0^2 / (E I))^(1/4) / sqrt(2) for bending, so one shooting over the whole rod loses
# exp(lambda L) in accuracy and, far sooner, Newton's method its basin: the nitinol robot at
# dt = 2 ms has lambda L ~ 7. The integration restarts from unknowns at nodes no more than
# NODE_SPACING / lambda apart.
NODE_SPACING = 3.0


def shooting_nodes(robot: Robot, model: str, dt: float, alpha: float) -> list[float]:
    """
    Arc lengths [m] where the implicit step restarts its integration (multiple shooting).

    Intervals of at most NODE_SPACING / lambda (see NODE_SPACING), with the discs' mass
    spread over the rod; the discrete model puts its nodes on discs (whose bays its tendons
    span), continuous models anywhere.
    """
    rod = robot.rod
    c0 = stepper.bdf_coefficients(dt, alpha)[0]
    mass = rod.linear_density + robot.vertebra_mass * robot.vertebra_positions.size / rod.length
    lam = (mass * c0 * c0 / rod.bending_stiffness) ** 0.25 / math.sqrt(2.0)
    intervals = math.ceil(lam * rod.length / NODE_SPACING)
    targets = rod.length * np.arange(1, intervals) / intervals
    if model != 'discrete':
        return targets.tolist()
    # the vertebra at which each bay starts (not the last, at the tip)
    discs = robot.vertebra_positions[robot.vertebra_positions < rod.length - 1e-9]
    if not discs.size:
        return []
    return sorted({float(discs[np.argmin(np.abs(discs - s))]) for s in targets})
