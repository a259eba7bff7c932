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
A message updated in place (``reuse``) is the message built afresh for the same state.

The simulator publishes ``tip/pose``, ``/tf`` and ``backbone/markers`` by changing the ones it
published last. Every field the fresh build sets must be set again: a field left from the
earlier state would publish a stale pose, point or colour. The states here are made by hand
(no physics): each field differs between them, and the second has another layout of markers
(a disc fewer, a line list where a cylinder was) and another number of frames and points.
"""

import numpy as np
from tendon_robot_sim.models.sim_model import Cylinder, LineList, ModelState, Polyline, Pose
from tendon_robot_sim.ros.messages import markers_msg, time_msg, tip_pose_msg, transforms_msg


def pose(rng) -> Pose:
    q = rng.normal(size=4)
    return Pose(rng.normal(size=3), q / np.linalg.norm(q))


def state(rng, discs: int, points: int, disc_color) -> ModelState:
    """Make up a state: ``discs`` cylinders after a backbone of ``points`` points, then tendons."""
    paths = [rng.normal(size=(3, points // 2 + 1)) for _ in range(3)]
    markers = (Polyline('backbone', rng.normal(size=(3, points)), rng.uniform(0.001, 0.01),
                        tuple(rng.uniform(size=4))),
               *(Cylinder('vertebrae', pose(rng), rng.uniform(0.01, 0.03),
                          rng.uniform(0.001, 0.003), disc_color) for _ in range(discs)),
               LineList.of_paths('tendons', paths, rng.uniform(0.0005, 0.002)))
    return ModelState(time=0.0, position=np.zeros(3), effort=np.zeros(3), tip=pose(rng),
                      frames=tuple(pose(rng) for _ in range(discs)), markers=markers)


def test_messages_updated_in_place_equal_the_fresh_ones():
    rng = np.random.default_rng(7)
    first, second = (state(rng, 4, 9, (0.9, 0.9, 0.9, 0.8)),
                     state(rng, 4, 9, (0.2, 0.3, 0.4, 1.0)))
    # another layout: a disc fewer (the tendons' line list where the last disc was), more points
    other = state(rng, 3, 13, (0.5, 0.5, 0.5, 1.0))
    stamps = time_msg(1.0), time_msg(2.5), time_msg(4.0)
    markers = markers_msg(first.markers, 'a', stamps[0])
    transforms = transforms_msg(first, 'a', 'tip', 'v_', stamps[0])
    tip = tip_pose_msg(first.tip, 'a', stamps[0])
    for s, stamp, frame in ((second, stamps[1], 'b'), (other, stamps[2], 'c')):
        fresh = (markers_msg(s.markers, frame, stamp),
                 transforms_msg(s, frame, 'tip', 'v_', stamp),
                 tip_pose_msg(s.tip, frame, stamp))
        reused = (markers_msg(s.markers, frame, stamp, markers),
                  transforms_msg(s, frame, 'tip', 'v_', stamp, transforms),
                  tip_pose_msg(s.tip, frame, stamp, tip))
        assert reused[0] is markers and reused[2] is tip
        assert reused == fresh
        # the fresh messages of the state before differ: the comparison sees a stale field
        assert markers_msg(first.markers, frame, stamp) != reused[0]
        transforms = reused[1]
    assert [m.type for m in markers.markers] == [4, 3, 3, 3, 5]    # strip, 3 discs, list
    assert len(transforms.transforms) == 4
