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
The stack definition, launch files, parameter files and RViz config agree.

Nothing is started here: the running stack is tested in test_ros_launcher.py.
"""

import ast
import importlib
from pathlib import Path

import pytest
from tendon_robot_sim import PACKAGE_NAME, share_dir
from tendon_robot_sim.launcher import LaunchError, StackLauncher
from tendon_robot_sim.nodes.simulator_node import PARAMS as SIMULATOR_PARAMS
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.names import (check_frame_prefix, check_namespace,
                                        MAX_NAMESPACE_LENGTH)
from tendon_robot_sim.stack import Arg, FramePrefix, RvizView, ShareFile, STACKS
import yaml

ROOT = Path(__file__).resolve().parents[2]
OUR_NODES = [(stack, entry) for stack in STACKS.values() for entry in stack.nodes
             if entry.package == PACKAGE_NAME]


def console_scripts() -> dict[str, str]:
    """``name -> module:function`` of setup.py's console_scripts, read without running it."""
    tree = ast.parse((ROOT / 'setup.py').read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == 'console_scripts':
                    lines = ast.literal_eval(value)
                    return {name.strip(): target.strip()
                            for name, target in (line.split('=') for line in lines)}
    raise AssertionError('setup.py has no console_scripts entry points')


def params_of(entry):
    return importlib.import_module(entry.module).PARAMS


@pytest.mark.parametrize('stack, entry', OUR_NODES, ids=lambda x: getattr(x, 'name', ''))
def test_each_of_our_executables_is_a_console_entry_point_to_the_module_main(stack, entry):
    scripts = console_scripts()
    assert entry.executable in scripts, f'{entry.executable} missing from setup.py'
    assert scripts[entry.executable] == f'{entry.module}:main'
    assert callable(importlib.import_module(entry.module).main)


def test_every_file_a_stack_names_exists_and_every_stack_has_its_launch_file():
    for stack in STACKS.values():
        for entry in stack.nodes:
            shared = (list(entry.parameter_files) + list(entry.file_parameters.values())
                      + [a for a in entry.arguments if isinstance(a, ShareFile)]
                      + [a.view for a in entry.arguments if isinstance(a, RvizView)])
            for item in shared:
                assert item.resolve().is_file(), f'{stack.name}/{entry.name}: {item.path}'
        launch_file = share_dir() / 'launch' / f'{stack.name}.launch.py'
        assert launch_file.is_file()
        assert f"launch_description('{stack.name}')" in launch_file.read_text()


def test_launch_arguments_used_by_nodes_are_declared_and_conditions_are_booleans():
    for stack in STACKS.values():
        declared = {a.name: a for a in stack.arguments}
        for a in declared.values():
            assert not a.choices or a.default in a.choices, a.name
        for entry in stack.nodes:
            for value in entry.parameters.values():
                if isinstance(value, Arg):
                    assert value.name in declared, f'{entry.name}: {value.name}'
            if entry.condition:
                assert declared[entry.condition].kind is bool


@pytest.mark.parametrize('stack, entry', [(s, e) for s, e in OUR_NODES if e.parameter_files],
                         ids=lambda x: getattr(x, 'name', ''))
def test_parameter_files_set_only_declared_parameters_with_valid_values(stack, entry):
    node_names = {e.name for s in STACKS.values() for e in s.nodes}
    for item in entry.parameter_files:
        sections = yaml.safe_load(item.resolve().read_text())
        for key, section in sections.items():
            # a /**/ prefix makes a section match the node in any namespace
            assert key == '/**' or (key.startswith('/**/') and key[4:] in node_names), key
            if key != f'/**/{entry.name}':
                continue
            declared = {p.name: p for p in params_of(entry)}
            for name, value in section['ros__parameters'].items():
                assert name in declared, f'{item.path} {key}: {name} is not a parameter'
                param = declared[name]
                assert type(value) is type(param.default), f'{name}: {value!r}'
                if param.range:
                    assert param.range[0] <= value <= param.range[1], f'{name}: {value}'
                if param.choices:
                    assert value in param.choices, f'{name}: {value}'


def test_local_launcher_plans_our_nodes_with_files_then_overrides(monkeypatch):
    monkeypatch.chdir(ROOT)     # a robot file relative to here reaches the nodes absolute
    launcher = StackLauncher('sim', {'namespace': 'ns', 'rviz': 'false',
                                     'robot': 'config/robot.yaml'},
                             ['simulator:publish_rate:=25', 'warning_throttle_period:=0.5'])
    planned = {p.entry.name: p.command for p in launcher.processes}
    assert {'simulator', 'tension_controller'} <= set(planned)
    # one note for the four RViz entries (one per robot kind)
    assert launcher.skipped.count('rviz2: skipped (rviz:=false)') == 1
    generated = {}
    for name, command in planned.items():
        args = command[command.index('--ros-args'):]
        assert args[1:5] == ['-r', f'__node:={name}', '-r', '__ns:=/ns']
        files = [args[i + 1] for i, a in enumerate(args) if a == '--params-file']
        (entry,) = [e for e in STACKS['sim'].nodes if e.name == name]
        assert files[:-1] == [str(f.resolve()) for f in entry.parameter_files]
        generated[name] = yaml.safe_load(Path(files[-1]).read_text())['/**']['ros__parameters']
        assert generated[name]['robot_file'] == str(ROOT / 'config' / 'robot.yaml')
        assert generated[name]['warning_throttle_period'] == 0.5
        assert ('publish_rate' in generated[name]) == (name == 'simulator')
    # an integer for a double parameter reaches the node as a double, which rclpy takes
    assert isinstance(generated['simulator']['publish_rate'], float)
    # the simulator is the clock source; use_sim_time:=false means no /clock
    assert generated['simulator']['publish_clock'] is False
    assert generated['tension_controller']['use_sim_time'] is False


@pytest.mark.parametrize('arguments, parameters, message', [
    ({'rviz': 'yes'}, [], "rviz: must be one of ['true', 'false']"),
    ({'speed': '2'}, [], "launch argument 'speed'"),
    ({}, ['nobody:rate:=1'], "no node 'nobody'"),
    ({}, ['rate=1'], 'expected NAME:=VALUE'),
])
def test_local_launcher_refuses_bad_arguments(arguments, parameters, message):
    with pytest.raises(LaunchError, match=message.replace('[', r'\[').replace(']', r'\]')):
        StackLauncher('sim', arguments, parameters)


# Names against the ROS naming rules, judged by rclpy's own validators (rmw/rcl) and ours.
NAMES = ['left_arm', 'a/b_2', '_x', 'A', 'bad name', '1abc', 'a/1b', 'a//b', 'a-b', 'a.b',
         'ä', 'a~b', '{a}', 'a' * 200, 'a' * 201]


@pytest.mark.parametrize('name', NAMES, ids=lambda n: n if len(n) < 20 else f'{len(n)} chars')
def test_namespace_and_frame_prefix_follow_the_ros_naming_rules(name):
    from rclpy.exceptions import NameValidationException
    from rclpy.validate_full_topic_name import validate_full_topic_name
    from rclpy.validate_namespace import validate_namespace
    try:
        ros_says = bool(validate_namespace('/' + name))
    except NameValidationException:
        ros_says = False
    try:
        check_namespace(name)
        check_namespace('/' + name)      # written with its leading slash, or without
        ours = True
    except ValueError:
        ours = False
    # ours leaves room for the node and topic names under the namespace (247 characters)
    assert ours == (ros_says and len(name) <= MAX_NAMESPACE_LENGTH), name
    try:    # a frame id: a relative name (tf2 strips no slash); the prefix ends in / or not
        ros_says = bool(validate_full_topic_name(f'/{name}/base_link'))
    except NameValidationException:
        ros_says = False
    for prefix in (name + '/', name + '_'):
        try:
            check_frame_prefix(prefix)
            ours = True
        except ValueError:
            ours = False
        assert ours == ros_says, prefix


@pytest.mark.parametrize('argument, value, message', [
    ('namespace', 'bad name', "launch argument namespace: not a ROS namespace: ' ' is not "
                              "allowed (letters, digits, _ and / only), got 'bad name'"),
    ('namespace', '/1abc', "the name '1abc' starts with a digit, got '/1abc'"),
    ('frame_prefix', 'a b', 'launch argument frame_prefix: not a prefix of tf2 frame ids'),
    ('frame_prefix', '/left/', "a tf2 frame id does not start with '/'"),
])
def test_the_launcher_refuses_a_name_no_node_could_take(argument, value, message):
    for stack in STACKS.values():
        with pytest.raises(LaunchError) as error:
            StackLauncher(stack.name, {argument: value})
        assert message in str(error.value) and '\n' not in str(error.value)


def test_robot_state_publisher_gets_the_urdf_text():
    (entry,) = [e for e in STACKS['sim'].nodes if e.executable == 'robot_state_publisher']
    files_and_values = entry.resolved_parameters(
        lambda value: f'<{value.name}>' if isinstance(value, Arg) else value)
    values = files_and_values[-1]
    assert values['robot_description'] == (share_dir() / 'urdf/tendon_robot.urdf').read_text()
    assert values['use_sim_time'] == '<use_sim_time>'
    assert values['frame_prefix'] == FramePrefix()


def test_rviz_config_shows_the_topics_the_simulator_publishes():
    config = yaml.safe_load((share_dir() / 'rviz' / 'sim.rviz').read_text())
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'base_link'
    displays = {d['Class'].split('/')[-1]: d for d in manager['Displays']}
    assert {'RobotModel', 'TF', 'MarkerArray', 'Pose'} <= set(displays)
    by_topic = {d['Topic']['Value']: d for d in manager['Displays'] if 'Topic' in d
                and isinstance(d['Topic'], dict)}
    defaults = {p.name: p.default for p in SIMULATOR_PARAMS}
    for parameter, topic in (('markers_topic', topics.BACKBONE_MARKERS),
                             ('tip_pose_topic', topics.TIP_POSE)):
        assert defaults[parameter] == topic.name
    for topic in (topics.BACKBONE_MARKERS, topics.TIP_POSE, topics.WORLD_MARKERS,
                  topics.CONTACT_MARKERS):
        subscription = by_topic[topic.name]['Topic']
        # RViz only connects when its reliability is compatible with the publisher's, and
        # gets the latched world only when it asks for transient local too
        assert subscription['Reliability Policy'].replace(' ', '_').upper() == \
            topic.subscription_qos.reliability.name, topic.name
        assert subscription['Durability Policy'].replace(' ', '_').upper() == \
            topic.qos.durability.name, topic.name
    assert displays['RobotModel']['Description Topic']['Value'] == 'robot_description'


def test_launch_file_loads_with_ros_launch():
    pytest.importorskip('launch_ros', reason='launch_ros is not installed here (no ROS 2 '
                        'launch); the local launcher test covers the same stack definition')
    from launch.actions import DeclareLaunchArgument
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch_ros.actions import Node

    for stack in STACKS.values():
        description = get_launch_description_from_python_launch_file(
            str(share_dir() / 'launch' / f'{stack.name}.launch.py'))
        arguments = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
        nodes = [e for e in description.entities if isinstance(e, Node)]
        assert [a.name for a in arguments] == [a.name for a in stack.arguments]
        assert len(nodes) == len(stack.nodes)


def test_a_parallel_robot_file_runs_the_simulator_and_its_own_rviz_view_only():
    from tendon_robot_sim.models.pcr.robot import default_pcr_file
    launcher = StackLauncher('sim', {'robot': str(default_pcr_file())})
    assert [p.entry.name for p in launcher.processes if p.entry.name != 'rviz2'] == ['simulator']
    for name in ('tension_controller', 'robot_state_publisher'):
        assert any(line.startswith(f'{name}: skipped (for ') and line.endswith(
            'robots; this one is a pcr_6rus)') for line in launcher.skipped), launcher.skipped
    # a file that cannot be read is refused before anything starts
    with pytest.raises(LaunchError, match='launch argument robot: .*missing.yaml: cannot read'):
        StackLauncher('sim', {'robot': 'missing.yaml'})


@pytest.mark.parametrize('robot, controller, message', [
    ('rolling_joint_snake.yaml', 'displacement',
     'launch argument controller:=displacement: displacement_controller is for tendon_robot '
     'robots; this one is a rolling_joint_snake (controller:=tension serves it)'),
    ('pcr_6rus.yaml', 'displacement',
     'launch argument controller:=displacement: displacement_controller is for tendon_robot '
     'robots; this one is a pcr_6rus (no value of controller serves it: leave it out)'),
    ('pcr_6rus.yaml', 'tension',
     'launch argument controller:=tension: tension_controller is for tendon_robot or '
     'rolling_joint_snake robots; this one is a pcr_6rus (no value of controller serves it: '
     'leave it out)'),
    ('bionic_handling_assistant.yaml', 'tension',
     'launch argument controller:=tension: tension_controller is for tendon_robot or '
     'rolling_joint_snake robots; this one is a bellows (no value of controller serves it: '
     'leave it out)'),
])
def test_a_controller_that_serves_not_the_robots_kind_is_refused(robot, controller, message):
    """It ran no controller at all, and the view drove the simulator's setpoints instead."""
    for stack in STACKS.values():
        with pytest.raises(LaunchError) as error:
            StackLauncher(stack.name, {'robot': str(ROOT / 'config' / robot),
                                       'controller': controller})
        assert str(error.value) == message
    # left out, the default runs what serves the kind (nothing, for these two)
    assert StackLauncher('sim', {'robot': str(ROOT / 'config' / robot)})


def test_ros_launch_refuses_a_controller_that_serves_not_the_robots_kind():
    """
    ``ros2 launch`` skipped the node silently: a snake with controller:=displacement ran none.

    The launch file asks what the local launcher asks; launch cannot tell a value given from
    its default, so the default (tension) on a parallel robot, which serves none, runs on.
    """
    # launch.launch_description: the package's own launch/ folder imports as 'launch'
    pytest.importorskip('launch.launch_description',
                        reason='launch is not installed here (no ROS 2 launch); '
                        'test_a_controller_that_serves_not_the_robots_kind_is_refused covers '
                        'the same rule in the local launcher')
    from launch import LaunchDescription, LaunchService
    from launch.actions import DeclareLaunchArgument, SetLaunchConfiguration
    from tendon_robot_sim.stack import _refuse_unserved

    def launch(robot: str, **arguments) -> int:
        stack = STACKS['sim']
        service = LaunchService()
        service.include_launch_description(LaunchDescription(
            [DeclareLaunchArgument(a.name, default_value=a.default) for a in stack.arguments]
            + [SetLaunchConfiguration(name, value) for name, value in
               {'robot': str(ROOT / 'config' / robot), **arguments}.items()]
            + [_refuse_unserved(stack)]))
        return service.run()

    assert launch('rolling_joint_snake.yaml', controller='displacement') != 0
    assert launch('rolling_joint_snake.yaml') == 0
    assert launch('pcr_6rus.yaml') == 0


def test_a_default_that_serves_not_the_robots_kind_is_no_request():
    stack = STACKS['sim']
    values = {a.name: a.default for a in stack.arguments}
    snake = {**values, 'robot': str(ROOT / 'config' / 'rolling_joint_snake.yaml'),
             'controller': 'displacement'}
    assert stack.refusal(snake, ['controller']).startswith(
        'launch argument controller:=displacement: displacement_controller is for')
    pcr = {**values, 'robot': str(ROOT / 'config' / 'pcr_6rus.yaml')}
    assert stack.refusal(pcr, []) is None
    assert stack.refusal(pcr, ['controller']).startswith('launch argument controller:=tension')


def test_a_controller_that_serves_the_robots_kind_runs():
    for robot, controller in (('rolling_joint_snake.yaml', 'tension'),
                              ('robot.yaml', 'displacement'), ('robot.yaml', 'tension')):
        launcher = StackLauncher('sim', {'robot': str(ROOT / 'config' / robot),
                                         'controller': controller})
        assert f'{controller}_controller' in [p.entry.name for p in launcher.processes]


@pytest.mark.parametrize('robot, view', [('pcr_6rus.yaml', 'pcr.rviz'),
                                         ('rolling_joint_snake.yaml', 'snake.rviz'),
                                         ('bionic_handling_assistant.yaml', 'cc.rviz')])
def test_rviz_config_of_another_kind_shows_the_markers_its_model_publishes(robot, view):
    from tendon_robot_sim.models.registry import create_model, file_kind
    path = share_dir() / 'config' / robot
    (entry,) = [e for e in STACKS['sim'].nodes
                if e.executable == 'rviz2' and e.serves(file_kind(path))]
    assert entry.arguments == ('-d', RvizView(ShareFile(f'rviz/{view}')))
    config = yaml.safe_load((share_dir() / 'rviz' / view).read_text())
    manager = config['Visualization Manager']
    _, _, model = create_model(path)
    assert manager['Global Options']['Fixed Frame'] == model.base_frame
    displays = {d['Class'].split('/')[-1]: d for d in manager['Displays']}
    assert 'RobotModel' not in displays, 'no URDF for this kind'
    markers = displays['MarkerArray']
    assert set(markers['Namespaces']) == {m.ns for m in model.state().markers}
    for kind, topic in (('MarkerArray', topics.BACKBONE_MARKERS), ('Pose', topics.TIP_POSE)):
        subscription = displays[kind]['Topic']
        assert subscription['Value'] == topic.name
        assert subscription['Reliability Policy'].replace(' ', '_').upper() == \
            topic.subscription_qos.reliability.name


def test_the_hardware_bridge_is_managed_and_autostart_false_leaves_it_to_the_user():
    (bridge,) = [e for e in STACKS['hardware'].nodes if e.name == 'hardware_bridge']
    assert bridge.lifecycle
    assert not any(e.lifecycle for e in STACKS['hardware'].nodes if e is not bridge)
    activated = '# hardware_bridge: managed node, brought to active (configure, activate) ' \
        'through /arm/hardware_bridge/change_state'
    assert activated in StackLauncher('hardware', {'namespace': 'arm'}).describe().splitlines()
    assert 'change_state' not in StackLauncher('hardware', {'autostart': 'false'}).describe()


def test_the_launcher_tells_each_nodes_parameters_as_it_will_have_them():
    """Defaults of its table, then its parameter files, then --param (the demo reads them)."""
    launcher = StackLauncher('hardware', {'rviz': 'false'}, ['hardware_bridge:min_tension:=0.7'])
    bridge = launcher.parameters['hardware_bridge']
    assert bridge['min_tension'] == 0.7                     # --param
    assert bridge['max_displacement'] == 0.02               # config/hardware.yaml
    assert bridge['open_timeout'] == 2.0                    # the table's default
    assert 'view' not in launcher.parameters                # skipped: view:=false


def test_the_launcher_refuses_a_bad_dynamixel_bus_file_before_anything_starts(tmp_path):
    """
    A bus file the bridge would refuse at configure: the stack started half.

    The tension controller ran and the bridge stayed unconfigured, one error in the log.
    """
    bad = tmp_path / 'dynamixel.yaml'
    bad.write_text((share_dir() / 'config' / 'dynamixel.yaml').read_text().replace(
        'tension_mode: current', 'tension_mode: torque'))
    with pytest.raises(LaunchError) as error:
        StackLauncher('hardware', {'rviz': 'false', 'motor_device': 'dynamixel'},
                      [f'hardware_bridge:dynamixel_file:={bad}'])
    assert str(error.value) == (
        f'node hardware_bridge: parameter dynamixel_file: {bad}.tension_mode: must be one of '
        "['current', 'current_based_position'], got 'torque'")
    # the same file with the package's own motor driver: not read
    StackLauncher('hardware', {'rviz': 'false'}, [f'hardware_bridge:dynamixel_file:={bad}'])


@pytest.mark.parametrize('parameter, message', [
    ('keyence_axes:=[5,9]', 'keyence_axes: two different axes of 0, 1, 2, got (5, 9)'),
    ('keyence_signs:=[0,3]', 'keyence_signs: each +1 or -1, got (0, 3)'),
    ('keyence_axes:=[1]', 'keyence_axes: two values (one per head), got [1]'),
    # YAML reads nan as a string: no number (.nan is one, refused by the bridge's check)
    ('keyence_offsets:=[nan,0.0]',
     "keyence_offsets: must be a list, each item a number (double), got ['nan', 0.0]"),
    ('keyence_offsets:=[.nan,0.0]', 'keyence_offsets: finite numbers [m], got [nan, 0.0]'),
    # an array parameter given another type was an internal error (KeyError in the check)
    ('keyence_axes:=[[1],[2]]', 'keyence_axes: must be a list, each item an integer, got '
                                '[[1], [2]]'),
    ('keyence_axes:=5', 'keyence_axes: must be a list, each item an integer, got 5'),
    ('keyence_offsets:={a: 1}', 'keyence_offsets: must be a list, each item a number (double), '
                                "got {'a': 1}"),
])
def test_the_launcher_refuses_a_keyence_geometry_the_bridge_refuses(parameter, message):
    """Before anything starts, whatever the sensor: the bridge's own check_parameters."""
    with pytest.raises(LaunchError) as error:
        StackLauncher('hardware', {'rviz': 'false'}, [f'hardware_bridge:{parameter}'])
    assert str(error.value) == f'node hardware_bridge: parameter {message}'


def test_the_launcher_refuses_a_baud_rate_the_lkg_cannot_talk_at():
    """The port opened at any rate, and an LK-G set to 9600 .. 115200 never answered."""
    with pytest.raises(LaunchError) as error:
        StackLauncher('hardware', {'rviz': 'false', 'sensor_device': 'keyence-lkg'},
                      ['hardware_bridge:sensor_baudrate:=250000'])
    assert str(error.value) == ('node hardware_bridge: parameter sensor_baudrate: the LK-G '
                                'talks at 9600, 19200, 38400, 57600 or 115200 baud, got 250000')
    StackLauncher('hardware', {'rviz': 'false', 'sensor_device': 'keyence-lkg'},
                  ['hardware_bridge:sensor_baudrate:=9600'])


@pytest.mark.parametrize('parameters, message', [
    (['simulator:integrator:=explicit', 'simulator:alpha:=-0.5'],
     'alpha: applies to the implicit integrator only; the integrator is explicit (asked for)'),
    (['simulator:integrator:=explicit', 'simulator:tip_tolerance:=0.001'],
     'tip_tolerance: applies to the implicit integrator only; the integrator is explicit '
     '(asked for)'),
    # the default robot's auto integrator is the explicit one (docs/tendon_robot.md)
    (['simulator:alpha:=-0.5'], 'alpha: applies to the implicit integrator only; the '
     'integrator is explicit (stable step'),
])
def test_the_launcher_refuses_what_only_the_implicit_integrator_reads(parameters, message):
    """They did nothing on the explicit integrator, and the stack started as if they had."""
    with pytest.raises(LaunchError) as error:
        StackLauncher('sim', {'rviz': 'false'}, parameters)
    assert str(error.value).startswith(f'node simulator: parameter {message}'), error.value


@pytest.mark.parametrize('arguments, parameters, message', [
    ({'mode': 'dynamic'}, ['simulator:integrator:=explicit'],
     'tendons[0].friction: the explicit integrator does not model tendon friction'),
    ({'mode': 'cc_dynamic'}, [],
     'tendons[0].friction: the constant-curvature dynamics does not model tendon friction'),
])
def test_the_launcher_refuses_friction_where_the_model_does_not_take_it(arguments, parameters,
                                                                        message):
    """The stack started, then the simulator died at its start and stopped it."""
    robot = str(ROOT / 'config' / 'robot_friction.yaml')
    with pytest.raises(LaunchError) as error:
        StackLauncher('sim', {'rviz': 'false', 'robot': robot, **arguments}, parameters)
    assert message in str(error.value), error.value
    assert str(error.value).startswith('node simulator: '), error.value
    # the models that take it start: the implicit dynamics, the path-dependent statics
    for mode, integrator in (('dynamic', 'implicit'), ('dynamic', 'auto'),
                             ('quasi_static', 'auto')):
        StackLauncher('sim', {'rviz': 'false', 'robot': robot, 'mode': mode},
                      [f'simulator:integrator:={integrator}'])


def test_the_implicit_integrator_takes_alpha_and_tip_tolerance():
    StackLauncher('sim', {'rviz': 'false'}, ['simulator:integrator:=implicit',
                                             'simulator:alpha:=-0.5',
                                             'simulator:tip_tolerance:=0.001'])


def test_the_launcher_refuses_a_bus_file_with_a_channel_count_other_than_the_tendons(tmp_path):
    """Three servos for four tendons: the stack started, then configure failed."""
    bus = tmp_path / 'dynamixel.yaml'
    bus.write_text(''.join(line for line in (share_dir() / 'config' / 'dynamixel.yaml')
                           .read_text().splitlines(keepends=True) if 'id: 4' not in line))
    robot = share_dir() / 'config' / 'robot.yaml'
    with pytest.raises(LaunchError) as error:
        StackLauncher('hardware', {'rviz': 'false', 'motor_device': 'dynamixel',
                                   'robot': str(robot)},
                      [f'hardware_bridge:dynamixel_file:={bus}'])
    assert str(error.value) == (
        f'node hardware_bridge: parameter dynamixel_file: {bus} has 3 channels, the robot '
        f'{robot} has 4 tendons (one channel per tendon, in its order)')
