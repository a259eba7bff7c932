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

import pytest

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


@pytest.mark.parametrize('topic', topics.TOPICS + (
    topics.TIP_MEASURED, topics.DIAGNOSTICS, topics.TENDON_SERVOS, topics.TIP_TARGET,
    topics.TENDON_DISPLACEMENT_COMMAND, topics.TIP_WRENCH) + topics.CONTACT_TOPICS,
                         ids=lambda topic: topic.name)
def test_every_topic_is_in_the_topic_table(topic):
    msg_type = topics.type_name(topic.msg_type).replace('/msg/', '/')
    assert f'| `{topic.name}` | {msg_type} |' in ROS_INTERFACE


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
