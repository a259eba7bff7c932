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
The discrete statics of a robot near buckling under its own weight: the FTDCR v4, curled.

``config/opencr_ftdcr_v4.yaml`` stands upright with a gravity load of 7.2 (continuation.
gravity_load; a free-standing column buckles at 7.84), so it is very soft sideways: 1/4096 of
the tensions below moves its tip 1.9 mm, more than the 1 % of the length (1.87 mm) a first
continuation step from the upright rod was allowed. Every step was refused as a jump and the
``dataset`` of this robot's default statics converged on none of its uniform samples (these
tensions are its sample 4) where ``cosserat`` solved them all. A first step now stands when the
step twice as long moved the tip at most JUMP times as far (continuation._follow).

Reference: the cosserat model (continuous tendons). The discrete model's tendons are chords
between the discs (6 mm apart, the tendons bent to some 80 1/m here), so the two models differ by
some 18 mm at these tensions; halving the discs' spacing (each bay split in two) brings the
discrete tip to within 1.6 mm of the cosserat one (0.27 mm at a quarter, measured). The test
checks that convergence: the half-spacing discrete tip within 0.15 of the v4 difference from
the cosserat one, and the step from the v4 tip to it within 15 % of the v4 difference (0.97 of
it, measured): a discrete solve on another equilibrium (a curl the other way, a buckled branch)
would not lie on that path.
"""

import numpy as np

from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

V4 = load_robot(share_dir() / 'config' / 'opencr_ftdcr_v4.yaml')
TENSIONS = [24.29, 44.47, 46.70, 17.89, 28.58, 16.09, 29.72, 16.90, 19.58]     # N


def half_spacing(robot):
    """Return ``robot`` with a disc also midway in each bay, each of half the mass."""
    data = robot.to_dict()
    ends = np.concatenate(([0.0], robot.vertebra_positions))
    middles = 0.5 * (ends[:-1] + ends[1:])
    data['vertebrae'] = dict(data['vertebrae'],
                             positions=np.sort(np.concatenate((middles, ends[1:]))).tolist(),
                             mass=robot.vertebra_mass / 2.0)
    data['rod'] = dict(data['rod'], elements=2 * robot.rod.elements)
    return robot_from_dict(data)


def test_discrete_curls_the_robot_near_buckling_as_cosserat_does():
    solver = StaticsSolver(V4, 'discrete')
    discrete = solver.solve_tensions(TENSIONS)
    assert discrete.converged and discrete.residual <= solver.tolerance
    cosserat = StaticsSolver(V4, 'cosserat').solve_tensions(TENSIONS).tip_position
    finer = half_spacing(V4)
    finer_tip = StaticsSolver(finer, 'discrete').solve_tensions(TENSIONS).tip_position
    finer_cosserat = StaticsSolver(finer, 'cosserat').solve_tensions(TENSIONS).tip_position
    difference = np.linalg.norm(discrete.tip_position - cosserat)
    assert np.linalg.norm(finer_tip - finer_cosserat) < 0.15 * difference
    assert abs(np.linalg.norm(discrete.tip_position - finer_tip) / difference - 1.0) < 0.15
