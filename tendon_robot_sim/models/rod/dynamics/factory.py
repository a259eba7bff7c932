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
The dynamic simulator a robot takes, explicit or implicit, built above both.

Both simulators implement the front of :mod:`~tendon_robot_sim.models.rod.dynamics.simulation`
(a :class:`~tendon_robot_sim.models.rod.dynamics.simulation.SimState`, settling, tensions in,
advance); this module imports down to them, and nothing below imports it, so the front never
imports a simulator back.
"""

from __future__ import annotations

from tendon_robot_sim.models.rod.dynamics.simulation import choose_integrator
from tendon_robot_sim.models.tendon_robot import Robot


def dynamic_simulator(robot: Robot, integrator: str = 'auto', dt: float | None = None):
    """
    Return the simulator :func:`choose_integrator` picks for ``robot``, at rest at t = 0.

    A :class:`~tendon_robot_sim.models.rod.dynamics.explicit.TendonSimulator` or an
    :class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator`; both take
    tensions, advance, settle and report a
    :class:`~tendon_robot_sim.models.rod.dynamics.simulation.SimState`.
    """
    kind, _ = choose_integrator(robot, integrator)
    # Imported here, not at the top: PyElastica takes 0.3 s to import (2 s on a loaded core),
    # and the implicit simulator does not need it.
    if kind == 'implicit':
        from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
        return ImplicitSimulator(robot, dt=dt)
    from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
    return TendonSimulator(robot, dt=dt)
