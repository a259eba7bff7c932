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
The discrete statics model is the static twin of the dynamic simulator.

Default robot (at its default resolution) with gravity and two tendons pulled, run to
rest by the PyElastica simulator (tendon_robot_sim.models.rod.dynamics.explicit) and solved by the
discrete shooting model: the tips agree within 1 mm (0.4 % of the length), with
parallel and with helical tendons. The residual difference is the dynamic model's
discretisation (measured, vertebra frames halfway between the elements at their node):
parallel 1.8 mm at 10 elements, 0.50 mm at 20, 0.08 mm at 50; helical 1.1, 0.58 and
0.11 mm. The damping (ratio 0.5 in the first mode) changes how fast the rod settles,
not where.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file()).with_changes(damping={'ratio': 0.5})


def helical():
    data = DEFAULT.to_dict()
    data['tendons'][0].update(routing='helical', turns=0.5)
    return robot_from_dict(data)


@pytest.mark.parametrize('robot', [DEFAULT, helical()], ids=['parallel', 'helical'])
def test_discrete_statics_matches_the_simulator_at_rest(robot):
    tensions = [3.0, 2.0, 0.0, 0.0]
    sim = TendonSimulator(robot)
    sim.set_tensions(tensions)
    # a tip creeping at < 1e-4 m/s is within ~1e-5 m of rest (slowest mode ~15 1/s)
    state = sim.run_until_steady(10.0, speed_tolerance=1e-4)
    assert sim.is_steady(speed_tolerance=1e-4)
    result = StaticsSolver(robot, 'discrete').solve_tensions(tensions)
    length = robot.rod.length
    assert np.linalg.norm(state.tip_position - [length, 0.0, 0.0]) > 0.05   # a real bend
    assert np.linalg.norm(result.tip_position - state.tip_position) < 0.001
    np.testing.assert_allclose(result.vertebra_positions, state.vertebra_positions, atol=0.001)
    np.testing.assert_allclose(result.tendon_displacements, state.tendon_displacements,
                               atol=1e-4)
