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

"""on_parameters_set works on Iron and newer (post-set) and on Humble (on-set only)."""

import pytest
import rclpy
from rclpy.parameter import Parameter

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros.parameters import (check_displacement_range, check_pretension,
                                             ConfigurationError, declare, on_parameters_set, Param)

PARAMS = (Param('gain', 1.0, '1/s', 'a live gain', range=(0.0, 10.0), read_only=False),)


class HumbleNode:
    """A real node seen through the parameter API Humble has: no post-set callbacks."""

    def __init__(self, node):
        self.add_on_set_parameters_callback = node.add_on_set_parameters_callback


@pytest.fixture
def node():
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('parameters_probe', context=context)
    declare(node, PARAMS)
    yield node
    node.destroy_node()
    context.try_shutdown()


@pytest.mark.parametrize('api', [lambda node: node, HumbleNode], ids=['post_set', 'humble'])
def test_callback_sees_accepted_values_only(node, api):
    seen = []
    on_parameters_set(api(node), lambda parameters: seen.extend(
        (p.name, p.value) for p in parameters))
    assert node.set_parameters([Parameter('gain', value=2.5)])[0].successful
    assert not node.set_parameters([Parameter('gain', value=11.0)])[0].successful  # range
    assert seen == [('gain', 2.5)]
    assert node.get_parameter('gain').value == 2.5


def test_pretension_above_a_max_tension_is_refused():
    robot = load_robot(default_robot_file())          # max_tension 20 N on every tendon
    check_pretension(20.0, robot)
    with pytest.raises(ConfigurationError,
                       match=r'min_tension: 20.5 N exceeds the smallest max_tension 20 N'):
        check_pretension(20.5, robot)


def test_empty_displacement_range_is_refused():
    check_displacement_range(-0.01, 0.02)
    with pytest.raises(ConfigurationError,
                       match=r'min_displacement: 0.02 m must be below max_displacement 0.02 m'):
        check_displacement_range(0.02, 0.02)


def test_a_double_takes_an_integer_at_start_and_live():
    """``publish_rate:=20`` is 20.0, from a file or -p and from ``ros2 param set``."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('integer_probe', context=context,
                             parameter_overrides=[Parameter('gain', value=3)])
    try:
        config = declare(node, PARAMS)
        assert config.gain == 3.0 and isinstance(config.gain, float)
        assert node.set_parameters([Parameter('gain', value=4)])[0].successful
        assert node.get_parameter('gain').value == 4.0
        assert not node.set_parameters([Parameter('gain', value=11)])[0].successful  # range
        assert not node.set_parameters([Parameter('gain', value='x')])[0].successful  # type
    finally:
        node.destroy_node()
        context.try_shutdown()


NEIGHBOURS = (Param('publish_rate', 50.0, 'Hz', 'how often', range=(0.1, 1000.0)),
              Param('max_tension', 20.0, 'N', 'a clamp', range=(0.0, 50.0)))


@pytest.mark.parametrize('given, text', [
    # a near miss: the parameter it is closest to, the node's own and rclpy's alike
    (['gian:=2.0'], 'ignoring gian: not a parameter of this node; did you mean gain?'),
    (['publish_rat:=20'],
     'ignoring publish_rat: not a parameter of this node; did you mean publish_rate?'),
    (['use_sim_tim:=false'],
     'ignoring use_sim_tim: not a parameter of this node; did you mean use_sim_time?'),
    # nothing near: the node's parameters by name (rclpy's own of this distribution too),
    # without a ROS CLI the venv does not have
    (['speed:=2'], 'ignoring speed: not a parameter of this node; its parameters: {listed}'),
    (['speed:=2', 'publish_rat:=20'],
     'ignoring publish_rat (did you mean publish_rate?), speed: not parameters of this node; '
     'its parameters: {listed}'),
])
def test_a_value_given_for_no_parameter_is_named_in_a_warning(given, text, capfd):
    """A misspelt ``-p gian:=2.0`` (rclpy drops it) is named, with what was meant."""
    context = rclpy.Context()
    rclpy.init(context=context)
    arguments = [word for value in given for word in ('-p', value)]
    node = rclpy.create_node('misspelt_probe', context=context, cli_args=[
        '--ros-args', *arguments, '-p', 'use_sim_time:=false', '-p', 'gain:=3.0'])
    try:
        assert declare(node, PARAMS + NEIGHBOURS).gain == 3.0
        listed = sorted(node.list_parameters([], 0).names)
        assert {'gain', 'max_tension', 'publish_rate', 'use_sim_time'} <= set(listed)
        text = text.format(listed=', '.join(listed))
        warnings = [line for line in capfd.readouterr().err.splitlines() if 'WARN' in line]
        assert len(warnings) == 1 and warnings[0].endswith(f'[misspelt_probe]: {text}'), \
            warnings
        assert 'ros2' not in warnings[0]
    finally:
        node.destroy_node()
        context.try_shutdown()


@pytest.mark.parametrize('value, result', [(5, 5.0), (2.5, 2.5), (True, 'a number'),
                                           ('5', 'a number'), (11, 'within')])
def test_the_launcher_checks_a_value_as_the_node_would(value, result):
    if isinstance(result, float):
        assert PARAMS[0].check(value) == result and isinstance(PARAMS[0].check(value), float)
    else:
        with pytest.raises(ConfigurationError, match=f'parameter gain: must be {result}'):
            PARAMS[0].check(value)


NAMED = (Param('state_topic', 'tendon/state', '', 'a topic'),
         Param('tip_frame', 'tip_link', '', 'a frame id'),
         Param('frame_prefix', '', '', 'a prefix of frame ids'))


@pytest.mark.parametrize('name, value, problem', [
    ('state_topic', 'bad name', "not a ROS topic name: ' ' is not allowed"),
    ('state_topic', '', 'not a ROS topic name: an empty name'),
    ('tip_frame', '/tip_link', "a tf2 frame id does not start with '/'"),
    ('frame_prefix', '1arm/', "not a prefix of tf2 frame ids: the name '1arm' starts with a"),
])
def test_a_topic_or_frame_against_the_ros_naming_rules_is_refused_by_its_name(
        name, value, problem):
    """By the parameter's name, before (launcher) and when (node) it is declared."""
    (param,) = [p for p in NAMED if p.name == name]
    with pytest.raises(ConfigurationError, match=f'parameter {name}: {problem}'):
        param.check(value)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('name_probe', context=context,
                             parameter_overrides=[Parameter(name, value=value)])
    try:    # what ended in rclpy's InvalidTopicNameException from create_subscription
        with pytest.raises(ConfigurationError, match=f'parameter {name}: {problem}'):
            declare(node, NAMED)
    finally:
        node.destroy_node()
        context.try_shutdown()
    for good in ('/tendon/state', '~/state', 'left_arm/tendon/state'):
        assert NAMED[0].check(good) == good
