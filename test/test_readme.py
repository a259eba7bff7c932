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

"""The README's tables say what the code does."""

from pathlib import Path

import pytest

from tendon_robot_sim.nodes import (displacement_controller_node, hardware_bridge_node,
                                    simulator_node, tension_controller_node)
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import markdown_table
from tendon_robot_sim.stack import STACKS

README = (Path(__file__).resolve().parent.parent / 'README.md').read_text()


@pytest.mark.parametrize('node', [simulator_node, tension_controller_node,
                                  displacement_controller_node, hardware_bridge_node],
                         ids=lambda module: module.NODE_NAME)
def test_parameter_table_is_the_one_the_code_declares(node):
    assert markdown_table(node.PARAMS) in README, (
        f'README parameter table of {node.NODE_NAME} is out of date; regenerate it with '
        f'markdown_table({node.__name__}.PARAMS)')


@pytest.mark.parametrize('topic', topics.TOPICS + (
    topics.TIP_MEASURED, topics.DIAGNOSTICS, topics.TIP_TARGET,
    topics.TENDON_DISPLACEMENT_COMMAND, topics.TIP_WRENCH),
                         ids=lambda topic: topic.name)
def test_every_topic_is_in_the_topic_table(topic):
    msg_type = topics.type_name(topic.msg_type).replace('/msg/', '/')
    assert f'| `{topic.name}` | {msg_type} |' in README


@pytest.mark.parametrize('stack', STACKS.values(), ids=lambda stack: stack.name)
def test_every_launch_argument_is_documented(stack):
    launch_section = README[README.index('## For ROS users'):README.index('## Topics')]
    for argument in stack.arguments:
        assert f'{argument.name}:=' in launch_section, argument.name
