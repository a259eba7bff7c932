"""The discrete statics model is the static twin of the dynamic simulator.

Default robot with gravity and two tendons pulled, run to rest by the PyElastica
simulator (tendon_robot_sim.core.simulator) and solved by the discrete shooting model:
the tips agree within 0.5 % of the robot length. The residual difference is the dynamic
model's discretisation: 0.4 % at 20 elements, 0.23 % at 30 and 0.12 % at 50 (measured;
vertebrae on nodes, orientation of the element before the node). 30 elements keep the
run short. The damping (ratio 0.5 in the first mode) changes how fast the rod settles,
not where.
"""

import numpy as np

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.core.robot import load_robot
from tendon_robot_sim.core.simulator import TendonSimulator
from tendon_robot_sim.core.statics import StaticsSolver


def test_discrete_statics_matches_the_simulator_at_rest():
    robot = load_robot(default_robot_file()).with_changes(elements=30, damping={'ratio': 0.5})
    tensions = [3.0, 2.0, 0.0, 0.0]
    sim = TendonSimulator(robot)
    sim.set_tensions(tensions)
    # a tip creeping at < 1e-4 m/s is within ~1e-5 m of rest (slowest mode ~15 1/s)
    state = sim.run_until_steady(10.0, speed_tolerance=1e-4)
    assert sim.is_steady(speed_tolerance=1e-4)
    result = StaticsSolver(robot, 'discrete').solve_tensions(tensions)
    length = robot.rod.length
    assert np.linalg.norm(state.tip_position - [length, 0.0, 0.0]) > 0.05   # a real bend
    assert np.linalg.norm(result.tip_position - state.tip_position) < 0.005 * length
    np.testing.assert_allclose(result.vertebra_positions, state.vertebra_positions,
                               atol=0.005 * length)
    np.testing.assert_allclose(result.tendon_displacements, state.tendon_displacements,
                               atol=2e-4)
