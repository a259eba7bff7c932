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

"""urdf/tendon_robot.urdf: a consistent tree whose frames match the simulator's."""

from pathlib import Path
import xml.etree.ElementTree as ET

import numpy as np
from scipy.spatial.transform import Rotation

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import PARAMS as SIMULATOR_PARAMS

URDF = share_dir() / 'urdf' / 'tendon_robot.urdf'


def parse(path: Path):
    robot = ET.parse(path).getroot()
    links = [link.get('name') for link in robot.findall('link')]
    joints = {j.get('name'): j for j in robot.findall('joint')}
    return robot, links, joints


def origin(joint) -> tuple[np.ndarray, np.ndarray]:
    """Position (3,) and rotation (3, 3) of the child in the parent frame."""
    element = joint.find('origin')
    xyz = np.array([float(v) for v in element.get('xyz', '0 0 0').split()])
    rpy = [float(v) for v in element.get('rpy', '0 0 0').split()]
    return xyz, Rotation.from_euler('xyz', rpy).as_matrix()


def test_links_and_joints_form_one_tree_rooted_at_the_robot_base_frame():
    robot, links, joints = parse(URDF)
    assert len(links) == len(set(links)), 'duplicate link names'
    children = {}
    for name, joint in joints.items():
        parent, child = joint.find('parent').get('link'), joint.find('child').get('link')
        assert parent in links, f'joint {name}: parent {parent} is not a link'
        assert child in links, f'joint {name}: child {child} is not a link'
        assert child not in children, f'link {child} has two parent joints'
        children[child] = parent
    roots = [link for link in links if link not in children]
    assert roots == [load_robot(default_robot_file()).base.frame_id]
    for link in links:          # every link reaches the root without a cycle
        seen = set()
        while link in children:
            assert link not in seen, f'cycle through {link}'
            seen.add(link)
            link = children[link]
        assert link == roots[0]
    used = {m.get('name') for m in robot.iter('material') if m.find('color') is None}
    defined = {m.get('name') for m in robot.findall('material')}
    assert used <= defined


def test_tip_link_hangs_on_a_floating_joint_so_only_the_simulator_publishes_it():
    _, _, joints = parse(URDF)
    tip_frame = {p.name: p.default for p in SIMULATOR_PARAMS}['tip_frame']
    (joint,) = [j for j in joints.values() if j.find('child').get('link') == tip_frame]
    assert joint.get('type') == 'floating'
    assert joint.find('parent').get('link') == load_robot(default_robot_file()).base.frame_id


def test_tip_sensor_looks_at_the_tip_from_beyond_it():
    _, _, joints = parse(URDF)
    (joint,) = [j for j in joints.values() if j.find('child').get('link') == 'tip_sensor_link']
    assert joint.get('type') == 'fixed'
    robot = load_robot(default_robot_file())
    tip = robot.base.position + robot.rod.length * robot.base.direction
    position, rotation = origin(joint)
    to_tip = tip - position
    assert np.linalg.norm(to_tip) > 0.05, 'the sensor must clear the straight tip'
    beam = rotation[:, 0]      # REP 103: a range sensor looks along its x axis
    assert beam @ to_tip / np.linalg.norm(to_tip) > 0.99
