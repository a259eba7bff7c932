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
The broad phase of the shooting grid: the first arc length at which a clamped rod can touch.

Against distances worked by hand: the base's distance to the obstacle's surface, less the
envelope and the penalty's reach (20 distance scales), over the stretch allowed (1.1).
"""

import numpy as np
import pytest
from tendon_robot_sim.models.contact.reach import first_reach, STRETCH
from tendon_robot_sim.models.contact.world import world_from_dict

ENVELOPE = (0.001, 0.002)          # rod, disc radius [m]
CUTOFF = 20 * 1e-5                 # the penalty's reach at the default distance scale [m]


def reach_of(obstacles, base=(0.0, 0.0, 0.0)):
    world = world_from_dict({'obstacles': obstacles})
    return first_reach(world, world.contact(ENVELOPE), np.array(base))


def test_a_sphere_is_reached_no_sooner_than_its_distance_allows():
    s = reach_of([{'name': 'ball', 'shape': 'sphere', 'radius': 0.01,
                   'position': [0.1, 0.0, 0.0]}])
    assert s == pytest.approx((0.1 - 0.01 - 0.002 - CUTOFF) / 1.1, rel=1e-12)
    # a straight rod aimed at the ball's centre touches it at 0.088 m, after the bound
    assert s * (1 + STRETCH) < 0.1 - 0.01 - 0.002


def test_the_nearest_obstacle_decides_and_a_plane_counts_its_normal_distance():
    s = reach_of([{'name': 'floor', 'shape': 'plane', 'position': [5.0, 3.0, -0.05]},
                  {'name': 'box', 'shape': 'box', 'size': [0.02, 0.02, 0.02],
                   'position': [0.3, 0.0, 0.0]}])
    assert s == pytest.approx((0.05 - 0.002 - CUTOFF) / 1.1, rel=1e-12)


def test_a_mesh_counts_its_faces_not_its_bounding_sphere(tmp_path):
    import trimesh

    trimesh.creation.box(extents=[0.02, 0.02, 0.2]).export(tmp_path / 'bar.stl')
    world = world_from_dict({'obstacles': [{'name': 'bar', 'shape': 'mesh', 'file': 'bar.stl',
                                            'position': [0.05, 0.0, 0.0]}]}, tmp_path)
    s = first_reach(world, world.contact(ENVELOPE), np.zeros(3))
    assert s == pytest.approx((0.04 - 0.002 - CUTOFF) / 1.1, rel=1e-6)   # STL: float32


def test_an_obstacle_at_the_base_is_reached_at_once_and_none_never():
    assert reach_of([{'name': 'ball', 'shape': 'sphere', 'radius': 0.01,
                      'position': [0.0, 0.0, 0.0105]}]) == 0.0
    world = world_from_dict({'obstacles': []})
    assert first_reach(world, world.contact(ENVELOPE), np.zeros(3)) == float('inf')
