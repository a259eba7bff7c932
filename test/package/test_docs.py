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
The documentation says what the code does: its tables match the code, its links resolve.

The README is the front door and links every page of docs/; the tables generated from the code
(node parameters, topics, launch arguments) live in docs/ros_interface.md.
"""

from pathlib import Path
import re

import numpy as np
import pytest
from rclpy.qos import DurabilityPolicy
from tendon_robot_sim import cli
from tendon_robot_sim.nodes import (displacement_controller_node, hardware_bridge_node,
                                    simulator_node, tension_controller_node, view_node)
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import markdown_table
from tendon_robot_sim.stack import STACKS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / 'README.md').read_text()
ROS_INTERFACE = (ROOT / 'docs' / 'ros_interface.md').read_text()
CLI = (ROOT / 'docs' / 'cli.md').read_text()
# The pages the README must link: one per concern.
PAGES = ('tendon_robot', 'trunk', 'snake', 'pcr', 'ros_interface', 'hardware', 'experiments',
         'performance', 'architecture', 'references', 'development', 'cli', 'viewer')
MARKDOWN = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
LINK = re.compile(r'\]\(([^)\s]+)\)')


@pytest.mark.parametrize('node', [simulator_node, tension_controller_node,
                                  displacement_controller_node, hardware_bridge_node, view_node],
                         ids=lambda module: module.NODE_NAME)
def test_parameter_table_is_the_one_the_code_declares(node):
    assert markdown_table(node.PARAMS) in ROS_INTERFACE, (
        f'docs/ros_interface.md parameter table of {node.NODE_NAME} is out of date; regenerate it '
        'with '
        f'markdown_table({node.__name__}.PARAMS)')


@pytest.mark.parametrize('topic', topics.ALL_TOPICS, ids=lambda topic: topic.name)
def test_every_topic_is_in_the_topic_table(topic):
    msg_type = topics.type_name(topic.msg_type).replace('/msg/', '/')
    row = f'| `{topic.name}` | {msg_type} | '
    assert row in ROS_INTERFACE
    # the QoS column: what the publisher offers, and whether our subscribers take it as sensor
    # data (best effort)
    qos = ROS_INTERFACE.split(row, 1)[1].split(' |', 1)[0]
    offered = (f'{topic.qos.reliability.name.lower().replace("_", " ")}, depth {topic.qos.depth}'
               + (', transient local' if topic.qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
                  else ''))
    assert qos.startswith(offered), f'{topic.name}: the table says {qos!r}, the code {offered!r}'
    assert ('(sensor data)' in qos) == topic.sensor_data, topic.name


def topic_row(name: str) -> str:
    """Return the row of topic ``name`` in the topic table of docs/ros_interface.md."""
    (row,) = [line for line in ROS_INTERFACE.splitlines() if line.startswith(f'| `{name}` |')]
    return row


# Robot files whose models are cheap to build (no rod dynamics, no numba compile of the parallel
# robot's solver): what the simulator publishes for them is checked against the topic table.
CHEAP_ROBOTS = ('bionic_handling_assistant.yaml', 'rolling_joint_snake.yaml')


@pytest.mark.parametrize('robot', CHEAP_ROBOTS)
def test_the_tf_and_marker_rows_name_what_the_simulator_publishes(robot):
    """Each marker namespace with its type, each /tf child frame, as the node builds them."""
    from builtin_interfaces.msg import Time
    from tendon_robot_sim.models.registry import create_model
    from tendon_robot_sim.ros.messages import markers_msg, transforms_msg
    from visualization_msgs.msg import Marker
    kind, mode, model = create_model(ROOT / 'config' / robot)
    state = model.state()
    types = {getattr(Marker, name): name for name in ('LINE_STRIP', 'LINE_LIST', 'CYLINDER')}
    row = topic_row('backbone/markers')
    for marker in markers_msg(state.markers, model.base_frame, Time()).markers:
        assert f'`{marker.ns}` ({types[marker.type]}' in row, (
            f'{robot}: the backbone/markers row does not name namespace {marker.ns!r} '
            f'({types[marker.type]})')
    row = topic_row('/tf')
    tf = transforms_msg(state, model.base_frame, 'tip_link', 'vertebra_', Time())
    assert {t.header.frame_id for t in tf.transforms} == {'base_link'}
    children = [t.child_frame_id for t in tf.transforms]
    assert children[0] == 'tip_link' and '`base_link` -> `tip_link`' in row
    assert children[1:] == [f'vertebra_{i}' for i in range(len(children) - 1)]
    assert '`base_link` -> `vertebra_<i>`' in row
    if kind == 'bellows':     # one frame per section end, named as the row says for the BHA
        assert '`mode:=cc_dynamic`' in row
        assert f'(the BHA: `vertebra_0` .. `{children[-1]}`' in row, children


@pytest.mark.parametrize('stack', STACKS.values(), ids=lambda stack: stack.name)
def test_every_launch_argument_is_documented(stack):
    launch_section = ROS_INTERFACE[ROS_INTERFACE.index('## For ROS users'):
                                   ROS_INTERFACE.index('## Topics')]
    for argument in stack.arguments:
        assert f'{argument.name}:=' in launch_section, argument.name


def test_every_command_is_in_the_command_table():
    table = [line.split('|')[1] for line in CLI.splitlines() if line.startswith('| `')]
    listed = {name for cell in table for name in re.findall(r'`([a-z -]+)`', cell)}
    for action in cli.build_parser()._subparsers._group_actions:
        for name, sub in action.choices.items():
            assert name in listed or any(entry.startswith(f'{name} ') for entry in listed), (
                f'docs/cli.md: command {name!r} is not in the table')


def test_the_readme_is_a_front_door():
    assert len(README.splitlines()) <= 300
    for page in PAGES:
        assert f'](docs/{page}.md' in README, f'README does not link docs/{page}.md'


def slug(heading: str) -> str:
    """Return the anchor GitHub gives a Markdown heading."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def anchors(path: Path) -> set[str]:
    """Return the anchors of the headings of a Markdown file (outside code blocks)."""
    found, fenced = set(), False
    for line in path.read_text().splitlines():
        fenced ^= line.startswith('```')
        if not fenced and line.startswith('#'):
            found.add(slug(line.lstrip('#')))
    return found


@pytest.mark.parametrize('page', MARKDOWN, ids=lambda path: path.name)
def test_every_relative_link_resolves(page):
    for target in LINK.findall(page.read_text()):
        if '://' in target or target.startswith('mailto:'):
            continue
        path, _, anchor = target.partition('#')
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), f'{page.name}: link to missing {path}'
        if anchor and file.suffix == '.md':
            assert anchor in anchors(file), f'{page.name}: no heading #{anchor} in {file.name}'


# docs/trunk.md, Pressure and tension profiles: the shipped BHA profiles, hold by hold
# (start of the hold [s], end [s], the bellows pressurised [Pa]; every other bellows at 0).
BHA_PROFILES = {
    'bha_pressure_steps.csv': (
        'steps to 0.8 bar on p1, adds 0.6 bar on p5, then lets p1 go and adds 0.4 bar on p3 '
        'and 0.6 bar on p9, then all 0, each held 8 s',
        [(0, 2, {}), (2, 10, {'p1': 8e4}), (10, 18, {'p1': 8e4, 'p5': 6e4}),
         (18, 26, {'p3': 4e4, 'p5': 6e4, 'p9': 6e4}), (26, 34, {})]),
    'bha_pressure_ramps.csv': (
        'goes to 0.8 bar on p1, adds 0.6 bar on p5 and p9, then holds 0.4 bar on p3 alone, '
        'then all 0, each reached in 3 s and held 6 s',
        [(0, 2, {}), (5, 11, {'p1': 8e4}), (14, 20, {'p1': 8e4, 'p5': 6e4, 'p9': 6e4}),
         (23, 29, {'p3': 4e4}), (32, 38, {})]),
}


@pytest.mark.parametrize('name', BHA_PROFILES)
def test_the_bha_profiles_are_the_ones_docs_trunk_describes(name):
    from tendon_robot_sim.experiment.input_profile import read_profile
    said, holds = BHA_PROFILES[name]
    trunk = ' '.join((ROOT / 'docs' / 'trunk.md').read_text().split())
    assert f'`{name}` {said}' in trunk, f'docs/trunk.md no longer describes {name} so'
    bellows = [f'p{i}' for i in range(1, 10)]
    profile = read_profile(ROOT / 'config' / name, bellows, np.array([[0.0, 1e6]] * 9),
                           'pressure', 'Pa')
    assert profile.end == holds[-1][1]
    for start, end, pressures in holds:
        wanted = [pressures.get(b, 0.0) for b in bellows]
        for t in np.linspace(start, end, 7)[1:-1]:     # a step at either end
            # Pa: the files hold whole pascals; 1 Pa is far below any level the text names
            np.testing.assert_allclose(profile.at(t), wanted, atol=1.0, err_msg=f'{name} at {t} s')


def test_the_bus_timing_tables_give_the_wire_time_of_todays_state_block():
    """
    docs/hardware.md, Bus timing: the bytes of one cycle on a real bus, from the packet sizes.

    Protocol 2.0 (e-Manual): an instruction packet is 10 bytes around its parameters (header
    4, ID, length 2, instruction, CRC 2), a status packet 11 around its data (and the error
    byte). One cycle: a Sync Write of each servo's Goal Current (start address and length, then
    per servo its ID and the data) and a Sync Read of the state block (start address, length,
    the IDs), answered by one status per servo. 10 bits a byte (8N1).
    """
    from tendon_robot_sim.protocol.dynamixel import control_table as dxl

    def wire_ms(servos: int, baud: int) -> float:
        write = 10 + 4 + servos * (1 + dxl.GOAL_CURRENT[1])
        read = 10 + 4 + servos + servos * (11 + dxl.STATE_LENGTH)
        return (write + read) * 10 / baud * 1e3

    hardware = (ROOT / 'docs' / 'hardware.md').read_text()
    block = f'{dxl.STATE_LENGTH}-byte state block'
    one, four, eight = wire_ms(4, 1_000_000), wire_ms(4, 4_000_000), wire_ms(8, 1_000_000)
    assert (f'| bytes of one cycle on a real bus (10 bits/byte; {block}) | {one:.2f} ms | '
            f'{four:.2f} ms |') in hardware
    assert (f"| bus time of the cycle's bytes ({block}) | {one:.2f} ms | {eight:.2f} ms |"
            in hardware)
