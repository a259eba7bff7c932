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
Fast statics path (numba kernels) against the independent scipy reference.

The reference (tendon_robot_sim.models.rod.statics.reference) shares only the robot
description and stiffness matrices: adaptive integration, scipy root finding, hat-matrix
algebra, complex-step constitutive derivatives, multiple shooting over the vertebra poses
for the discrete model and a Fischer-Burmeister tension/slack condition. Agreement to
1e-7 m (fixed-step RK4 error of the fast path included) shows both solve the same
equations. Each case runs the reference once (seconds), so the cases are chosen to
cover the variants together.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.statics.reference import solve_reference
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

BASE = load_robot(default_robot_file()).to_dict()


def robot_with(vertebrae, tendons=None, **changes):
    data = dict(BASE, vertebrae=vertebrae, **changes)
    if tendons is not None:
        data['tendons'] = tendons
    return robot_from_dict(data)


def compare(robot, model, constitutive=None, tip_force=None, **inputs):
    reference = solve_reference(robot, model, constitutive=constitutive, tip_force=tip_force,
                                rtol=1e-9, **inputs)
    solver = StaticsSolver(robot, model, constitutive=constitutive)
    if 'tensions' in inputs:
        fast = solver.solve_tensions(inputs['tensions'], tip_force)
    else:
        fast = solver.solve_displacements(inputs['displacements'], tip_force)
    np.testing.assert_allclose(fast.tip_position, reference.tip_position, rtol=0, atol=1e-7)
    np.testing.assert_allclose(fast.tip_rotation, reference.tip_rotation, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fast.tensions, reference.tensions, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fast.tendon_displacements, reference.displacements,
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(solver.rest_lengths, reference.rest_lengths, rtol=1e-12)
    np.testing.assert_allclose(fast.base_force, reference.base_force, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fast.base_moment, reference.base_moment, rtol=0, atol=1e-7)
    return fast


@pytest.mark.parametrize('model, constitutive', [('cosserat', 'pyelastica'),
                                                 ('kirchhoff', 'linear')])
def test_parallel_tendons_with_gravity_and_tip_force(model, constitutive):
    # vertebrae without mass: one integration segment keeps the reference quick
    robot = robot_with({'count': 10, 'first': 0.025, 'last': 0.25, 'mass': 0.0})
    fast = compare(robot, model, constitutive, tip_force=[0.0, 0.05, 0.02],
                   tensions=[3.0, 2.0, 0.0, 0.5])
    assert np.linalg.norm(fast.tip_position - [0.25, 0.0, 0.0]) > 0.05   # a real bend


def test_helical_tapered_multi_section_tendons_by_displacement_with_compliance():
    tendons = [
        {'name': 'a', 'offset': 0.015, 'angle_deg': 0.0, 'routing': 'helical', 'turns': 0.5,
         'compliance': 1e-3},
        {'name': 'b', 'offset': 0.015, 'angle_deg': 180.0, 'routing': 'helical', 'turns': 0.5,
         'compliance': 1e-3},
        # ends at mid-length: its termination load splits the robot in two sections
        {'name': 'c', 'offset': 0.012, 'angle_deg': 90.0, 'end': 0.125, 'routing': 'tapered',
         'end_offset': 0.006},
    ]
    robot = robot_with({'count': 4, 'first': 0.0625, 'last': 0.25, 'mass': 0.0}, tendons)
    fast = compare(robot, 'cosserat', displacements=[0.003, -0.001, 0.002])
    assert np.all(fast.tensions > 0.5)


def test_discrete_model_with_vertebra_weights_and_a_short_tendon():
    tendons = [{'name': 'a', 'offset': 0.015, 'angle_deg': 0.0},
               {'name': 'b', 'offset': 0.015, 'angle_deg': 90.0, 'end': 0.125}]
    robot = robot_with({'count': 4, 'first': 0.0625, 'last': 0.25, 'mass': 0.004}, tendons)
    compare(robot, 'discrete', tensions=[2.0, 1.0])
