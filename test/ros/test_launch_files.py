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
``launch/*.launch.py`` start what ``tendon-robot-sim launch`` starts, without ``launch`` here.

``launch`` and ``launch_ros`` are not installed here, so the launch files' code
(:func:`tendon_robot_sim.stack.launch_description`) never ran in this suite: a fault there
reached ROS users only. Here each launch file runs against a stand-in of the few ``launch`` and
``launch_ros`` classes it uses, which records the actions and evaluates their substitutions and
conditions as launch does (``LaunchConfiguration``, ``PythonExpression``, ``IfCondition``, a
``ParameterValue``'s type; a plain string parameter read as YAML, as launch_ros reads it). The
nodes it would start, with their namespace, parameters, parameter files, remappings and
arguments, must be the ones the local launcher plans for the same launch arguments.

The usage lines of the launch files' docstrings and the launch commands of
docs/ros_interface.md name launch arguments: only ones the stack has, and the docstring all
of them.
"""

from pathlib import Path
import re
import runpy
import sys
import types

import pytest
from tendon_robot_sim import share_dir
from tendon_robot_sim.launcher import LaunchError, StackLauncher
from tendon_robot_sim.stack import STACKS
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config'


class Substitution:
    """launch.Substitution: ``perform(context)`` gives its text."""

    def perform(self, context) -> str:
        raise NotImplementedError


def perform(value, context) -> str:
    """Return the text of a substitution, a list of them or a string (perform_substitutions)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Substitution):
        return value.perform(context)
    return ''.join(perform(part, context) for part in value)


class LaunchConfiguration(Substitution):
    def __init__(self, name):
        self.name = name

    def perform(self, context) -> str:
        return context.launch_configurations[self.name]


class PythonExpression(Substitution):
    def __init__(self, expression):
        self.expression = expression

    def perform(self, context) -> str:
        return str(eval(perform(self.expression, context), {}))


class Condition:
    def __init__(self, predicate=None):
        self.predicate = predicate

    def evaluate(self, context) -> bool:
        return self.predicate(context)


class IfCondition(Condition):
    def __init__(self, expression):
        super().__init__(lambda context: self._truth(perform(expression, context)))

    @staticmethod
    def _truth(text: str) -> bool:
        if text.lower() not in ('true', 'false', '1', '0'):
            raise ValueError(f'IfCondition: {text!r} is not a boolean')
        return text.lower() in ('true', '1')


class Action:
    """Any launch action: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.condition = kwargs.get('condition')


class DeclareLaunchArgument(Action):
    def __init__(self, name, default_value=None, description='', choices=None, **kwargs):
        super().__init__(**kwargs)
        self.name, self.default_value = name, default_value
        self.description, self.choices = description, choices


class OpaqueFunction(Action):
    def __init__(self, function, **kwargs):
        super().__init__(**kwargs)
        self.function = function


class Node(Action):
    """launch_ros.actions.Node: the keyword arguments the launch file gives."""


class LifecycleNode(Node):
    pass


class ParameterValue:
    def __init__(self, value, value_type=None):
        self.value, self.value_type = value, value_type

    def evaluate(self, context):
        text = perform(self.value, context)
        if self.value_type is str:
            return text
        value = yaml.safe_load(text)
        assert isinstance(value, self.value_type), (text, self.value_type)
        return value


class LaunchDescription:
    def __init__(self, entities):
        self.entities = list(entities)


class Context:
    def __init__(self, configurations):
        self.launch_configurations = dict(configurations)


def stand_in_modules() -> dict:
    """Return the modules ``launch_description`` imports, as stand-ins."""
    def module(name, **attributes):
        made = types.ModuleType(name)
        made.__dict__.update(attributes)
        return made
    return {
        'launch': module('launch', LaunchDescription=LaunchDescription,
                         Substitution=Substitution, Condition=Condition),
        'launch.actions': module('launch.actions', DeclareLaunchArgument=DeclareLaunchArgument,
                                 OpaqueFunction=OpaqueFunction, EmitEvent=Action,
                                 RegisterEventHandler=Action),
        'launch.conditions': module('launch.conditions', IfCondition=IfCondition),
        'launch.substitutions': module('launch.substitutions',
                                       LaunchConfiguration=LaunchConfiguration,
                                       PythonExpression=PythonExpression),
        'launch.events': module('launch.events', matches_action=lambda action: action),
        'launch_ros': module('launch_ros'),
        'launch_ros.actions': module('launch_ros.actions', Node=Node,
                                     LifecycleNode=LifecycleNode),
        'launch_ros.parameter_descriptions': module('launch_ros.parameter_descriptions',
                                                    ParameterValue=ParameterValue),
        'launch_ros.event_handlers': module('launch_ros.event_handlers',
                                            OnStateTransition=Action),
        'launch_ros.events': module('launch_ros.events'),
        'launch_ros.events.lifecycle': module('launch_ros.events.lifecycle', ChangeState=Action),
        'launch_ros.utilities': module('launch_ros.utilities',
                                       prefix_namespace=lambda base, ns: ns),
    }


@pytest.fixture
def launch_file(monkeypatch):
    """Return ``describe(stack)``: the stand-in LaunchDescription of launch/<stack>.launch.py."""
    for name, module in stand_in_modules().items():
        monkeypatch.setitem(sys.modules, name, module)

    def describe(stack: str) -> LaunchDescription:
        path = share_dir() / 'launch' / f'{stack}.launch.py'
        return runpy.run_path(str(path))['generate_launch_description']()
    return describe


def parameter_value(value, context):
    """Return a node parameter as launch_ros gives it to the node."""
    if isinstance(value, ParameterValue):
        return value.evaluate(context)
    if isinstance(value, str):      # launch_ros reads a plain string as YAML
        parsed = yaml.safe_load(value) if value else None
        return value if parsed is None else parsed
    return value


def ros2_launch(description: LaunchDescription, arguments: dict) -> dict:
    """
    Return {node name: (namespace, files, parameters, remappings, arguments)} it starts.

    Raises what the description's OpaqueFunctions raise (launch ends with that message).
    """
    declared = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
    unknown = set(arguments) - {a.name for a in declared}
    assert not unknown, f'not declared: {unknown}'
    context = Context({a.name: arguments.get(a.name, a.default_value) for a in declared})
    for argument in declared:
        value = context.launch_configurations[argument.name]
        if argument.choices and value not in argument.choices:
            raise ValueError(f'launch argument {argument.name}: {value!r} not in choices')
    for entity in description.entities:
        if isinstance(entity, OpaqueFunction):
            entity.function(context)
    started = {}
    for node in description.entities:
        if not isinstance(node, Node) or (node.condition
                                          and not node.condition.evaluate(context)):
            continue
        options = node.kwargs
        namespace = perform(options['namespace'], context).strip('/')
        files, values = [], {}
        for item in options['parameters']:
            if isinstance(item, str):
                files.append(item)
            else:
                values.update({name: parameter_value(value, context)
                               for name, value in item.items()})
        assert options['name'] not in started, f'two nodes called {options["name"]}'
        started[options['name']] = (
            f'/{namespace}' if namespace else '', files, values,
            [tuple(pair) for pair in options['remappings']],
            [perform(argument, context) for argument in options['arguments']])
    return started


def local_launch(stack: str, arguments: dict) -> dict:
    """Return the same record of what ``tendon-robot-sim launch`` plans, and the absent."""
    launcher = StackLauncher(stack, arguments)
    planned = {}
    for process in launcher.processes:
        command = process.command
        ros_args = command[command.index('--ros-args'):]
        options = dict(zip(ros_args[1::2], ros_args[2::2]))
        namespace = next((ros_args[i + 1].removeprefix('__ns:=') for i, a in
                          enumerate(ros_args) if a == '-r' and ros_args[i + 1].startswith(
                              '__ns:=')), '')
        files = [ros_args[i + 1] for i, a in enumerate(ros_args) if a == '--params-file']
        generated = yaml.safe_load(Path(files[-1]).read_text())['/**']['ros__parameters']
        remappings = [tuple(ros_args[i + 1].split(':=')) for i, a in enumerate(ros_args)
                      if a == '-r' and not ros_args[i + 1].startswith('__')]
        start = 3 if command[1] == '-m' else 1
        planned[process.entry.name] = (namespace, files[:-1], generated, remappings,
                                       command[start:command.index('--ros-args')])
        assert options      # a --ros-args section with its options
    # the nodes of other packages, not installed here, would run under ros2 launch
    absent = [line.split(':')[0] for line in launcher.skipped if 'not found' in line]
    return planned, absent


CASES = [
    ('sim', {}),
    ('sim', {'namespace': 'left_arm', 'use_sim_time': 'true', 'view': 'true'}),
    ('sim', {'namespace': '/robots/arm', 'frame_prefix': 'arm1_', 'mode': 'quasi_static',
             'controller': 'displacement', 'rviz': 'false'}),
    ('sim', {'robot': str(CONFIG / 'bionic_handling_assistant.yaml'), 'view': 'true'}),
    ('sim', {'robot': str(CONFIG / 'pcr_6rus.yaml'), 'namespace': 'pcr'}),
    ('sim', {'robot': str(CONFIG / 'rolling_joint_snake.yaml'), 'use_sim_time': 'true'}),
    ('sim', {'world': str(CONFIG / 'world_post.yaml'), 'mode': 'dynamic'}),
    ('hardware', {}),
    ('hardware', {'namespace': 'rig', 'autostart': 'false', 'view': 'true',
                  'motor_device': 'dynamixel', 'sensor_port': '',
                  'motor_port': 'socket://localhost:4000'}),
    ('hardware', {'controller': 'displacement', 'sensor_device': 'keyence-lkg'}),
]


@pytest.mark.parametrize('stack, arguments', CASES,
                         ids=[f'{s}-{"-".join(a) or "defaults"}' for s, a in CASES])
def test_the_launch_file_starts_the_nodes_the_local_launcher_starts(launch_file, stack,
                                                                    arguments):
    started = ros2_launch(launch_file(stack), arguments)
    planned, absent = local_launch(stack, arguments)
    assert sorted(started) == sorted(list(planned) + absent)
    for name, (namespace, files, parameters, remappings, node_arguments) in planned.items():
        assert started[name][0] == namespace, name
        assert started[name][1] == files, name
        assert started[name][2] == parameters, name
        assert started[name][3] == remappings, name
        assert started[name][4] == node_arguments, name
    expected_namespace = arguments.get('namespace', '').strip('/')
    for name, record in started.items():
        assert record[0] == (f'/{expected_namespace}' if expected_namespace else ''), name


@pytest.mark.parametrize('stack, arguments', [
    ('sim', {'robot': str(CONFIG / 'rolling_joint_snake.yaml'), 'controller': 'displacement'}),
    ('sim', {'namespace': 'bad name'}),
    ('sim', {'frame_prefix': '/left/'}),
    ('hardware', {'robot': str(CONFIG / 'pcr_6rus.yaml'), 'controller': 'displacement'}),
])
def test_the_launch_file_refuses_what_the_local_launcher_refuses(launch_file, stack, arguments):
    with pytest.raises(LaunchError) as refused:
        StackLauncher(stack, arguments)
    with pytest.raises((RuntimeError, ValueError)) as ended:
        ros2_launch(launch_file(stack), arguments)
    assert str(ended.value) == str(refused.value)


def test_the_launch_file_declares_the_stacks_arguments_with_their_defaults(launch_file):
    for stack in STACKS.values():
        declared = [e for e in launch_file(stack.name).entities
                    if isinstance(e, DeclareLaunchArgument)]
        assert [(a.name, a.default_value, a.description, a.choices or ()) for a in declared] \
            == [(a.name, a.default, a.description, list(a.choices) or ()) for a in stack.arguments]


def usage_arguments(text: str) -> list[str]:
    """Return the ``name:=`` of a usage text, in order."""
    return re.findall(r'\b([a-z_]+):=', text)


@pytest.mark.parametrize('stack', STACKS.values(), ids=lambda stack: stack.name)
def test_the_launch_files_usage_names_every_argument_of_its_stack_and_no_other(stack):
    docstring = runpy.run_path(str(share_dir() / 'launch' / f'{stack.name}.launch.py'),
                               run_name='usage')['__doc__']
    usage = docstring.split('\n\n')[1]      # the ros2 launch line after the summary
    assert f'ros2 launch tendon_robot_sim {stack.name}.launch.py' in usage
    assert sorted(usage_arguments(usage)) == sorted(a.name for a in stack.arguments)
    for argument in stack.arguments:        # the choices it lists are the stack's
        listed = re.search(rf'\b{argument.name}:=([^\]\s]+)', usage).group(1)
        if argument.choices:
            assert listed.split('|') == list(argument.choices), argument.name


def test_the_launch_commands_of_the_docs_name_only_arguments_of_their_stack():
    pages = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
    commands = [command for page in pages for command in re.findall(
        r'ros2 launch tendon_robot_sim (\w+)\.launch\.py(.*(?:\\\n.*)*)', page.read_text())]
    assert {stack for stack, _ in commands} == set(STACKS)
    for stack, line in commands:
        declared = {a.name: a for a in STACKS[stack].arguments}
        for name in usage_arguments(line):
            assert name in declared, f'{stack}.launch.py has no launch argument {name}'
            listed = re.search(rf'\b{name}:=([^\s`)]+)', line).group(1).split('|')
            if declared[name].choices:
                assert set(listed) <= set(declared[name].choices), name
