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
The one definition of the ROS stacks: which nodes run, with what.

Both ``launch/*.launch.py`` (through :func:`launch_description`, for ``ros2
launch``) and the local launcher (``tendon-robot-sim launch``, see
:mod:`tendon_robot_sim.launcher`) build their processes from :data:`STACKS`, so
the two cannot disagree. Adding a stack is a data entry: a :class:`Stack` with
its launch arguments and :class:`NodeEntry` items, plus a two-line launch file.

This module imports without ROS; ``launch``/``launch_ros`` are imported only
inside :func:`launch_description`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from tendon_robot_sim import PACKAGE_NAME, share_dir
from tendon_robot_sim.models.description import (description_kind, read_yaml,
                                                 RobotDescriptionError, TENDON_ROBOT)
from tendon_robot_sim.models.pcr.robot import KIND as PCR
from tendon_robot_sim.models.snake.robot import KIND as SNAKE
from tendon_robot_sim.models.trunk.robot import KIND as BELLOWS
from tendon_robot_sim.ros.names import check_frame_prefix, check_namespace
from tendon_robot_sim.rviz_views import prefixed_view_file, urdf_without_links


class FromArguments:
    """
    A parameter value or command-line argument given by the launch arguments.

    :meth:`of` computes it from the argument values (the local launcher's typed
    values, or the strings ``ros2 launch`` holds: the rules read string arguments only).
    """

    def of(self, values: Mapping[str, Any]) -> Any:
        """Return the value for the launch argument ``values``."""
        raise NotImplementedError


@dataclass(frozen=True)
class Arg(FromArguments):
    """A parameter value taken from the launch argument ``name``."""

    name: str

    def of(self, values: Mapping[str, Any]) -> Any:
        """Return the value of the launch argument ``name``."""
        return values[self.name]


@dataclass(frozen=True)
class ShareFile:
    """A file of the package share folder (``config/``, ``urdf/``, ``rviz/``)."""

    path: str

    def resolve(self) -> Path:
        return share_dir() / self.path

    def text(self) -> str:
        """Return the contents of the file, as a ``file_parameters`` value."""
        return self.resolve().read_text()


@dataclass(frozen=True)
class UrdfWithout(ShareFile):
    """A URDF of the share folder whose text leaves some links out."""

    links: tuple[str, ...] = ()

    def text(self) -> str:
        """Return the URDF text without ``links`` and their joints."""
        return urdf_without_links(super().text(), self.links)


@dataclass(frozen=True)
class LaunchArgument:
    """
    A launch argument of a stack; values are strings, as in ``ros2 launch``.

    ``check`` raises ValueError for a value no node could use (a name against the ROS naming
    rules), so that the launcher refuses it before anything starts.
    """

    name: str
    default: str
    description: str
    kind: type = str               # str or bool: how a parameter reads the value
    choices: tuple[str, ...] = ()
    check: Callable[[str], None] | None = None

    def __post_init__(self):
        if self.kind is bool and not self.choices:
            object.__setattr__(self, 'choices', ('true', 'false'))


@dataclass(frozen=True)
class NodeEntry:
    """
    One node of a stack.

    ``parameters`` come after the files (later wins); a value may be an
    :class:`Arg`. ``file_parameters`` maps a parameter to a :class:`ShareFile`
    whose text is the value (``robot_description``). ``arguments`` are
    command-line arguments; :class:`ShareFile` items become absolute paths.
    ``condition`` names a bool launch argument that must be true; ``equals`` =
    (argument, value): the node runs only when that launch argument has that value.
    ``kinds``: the robot kinds (the ``kind`` of the ``robot`` file) the node serves;
    empty: every kind. ``lifecycle``: a managed node, configured and activated
    when the launch argument ``autostart`` is true (and left unconfigured when false).
    """

    name: str
    package: str
    executable: str
    module: str | None = None     # our nodes: module with main(), run as `python -m`
    parameter_files: tuple[ShareFile, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    file_parameters: Mapping[str, ShareFile] = field(default_factory=dict)
    remappings: tuple[tuple[str, str], ...] = ()
    arguments: tuple[str | ShareFile, ...] = ()
    condition: str | None = None
    equals: tuple[str, str] | None = None
    kinds: tuple[str, ...] = ()
    lifecycle: bool = False

    def __post_init__(self):
        if self.condition and self.equals:
            raise ValueError(f'node {self.name}: give condition or equals, not both')

    def skip_reason(self, values: Mapping[str, Any], kind: str | None = None) -> str | None:
        """
        Tell why the node does not run with the launch argument ``values``; None: it runs.

        ``kind`` is the robot's kind (None: not known).
        """
        if self.condition and not values[self.condition]:
            return f'{self.condition}:=false'
        if self.equals and values[self.equals[0]] != self.equals[1]:
            return f'{self.equals[0]}:={values[self.equals[0]]}'
        if not self.serves(kind):
            return f'for {" or ".join(self.kinds)} robots; this one is a {kind}'
        return None

    def serves(self, kind: str | None) -> bool:
        """Whether the node runs for a robot of ``kind`` (None: not known, it runs)."""
        return not self.kinds or kind is None or kind in self.kinds

    def resolved_parameters(self, value_of: Callable[[FromArguments], Any]) -> list:
        """
        Return the parameter files (absolute paths), then one dict of the other parameters.

        ``value_of`` turns a :class:`FromArguments` (an :class:`Arg`, the frame
        prefix) into the value the consumer needs: a typed value for the local
        launcher, a substitution for ``ros2 launch``.
        """
        values = {name: value_of(value) if isinstance(value, FromArguments) else value
                  for name, value in self.parameters.items()}
        values.update({name: shared.text() for name, shared in self.file_parameters.items()})
        files: list = [str(f.resolve()) for f in self.parameter_files]
        return files + ([values] if values else [])

    def resolved_arguments(self, value_of: Callable[[FromArguments], Any]) -> list:
        """Command-line arguments: share files as absolute paths, ``value_of`` the rest."""
        return [str(a.resolve()) if isinstance(a, ShareFile)
                else value_of(a) if isinstance(a, FromArguments) else a
                for a in self.arguments]


@dataclass(frozen=True)
class Stack:
    """A set of nodes started together."""

    name: str
    description: str
    arguments: tuple[LaunchArgument, ...]
    nodes: tuple[NodeEntry, ...]

    def argument(self, name: str) -> LaunchArgument:
        for argument in self.arguments:
            if argument.name == name:
                return argument
        raise KeyError(f'stack {self.name!r} has no launch argument {name!r}; it has '
                       f'{[a.name for a in self.arguments]}')

    def unserved_choice(self, name: str, values: Mapping[str, Any],
                        kind: str | None) -> str | None:
        """
        Say why the launch argument ``name`` chooses no node for a robot of ``kind``.

        Its value chooses nodes (their ``equals``) and none of them serves the kind:
        ``controller:=displacement`` for a rolling-joint snake ran no controller at all.
        None: the value chooses no node, or one that serves the kind.
        """
        value = values[name]
        chosen = self._chosen(name, value)
        if not chosen or any(entry.serves(kind) for entry in chosen):
            return None
        serving = [choice for choice in self.argument(name).choices
                   if any(entry.serves(kind) for entry in self._chosen(name, choice))]
        instead = (' or '.join(f'{name}:={choice}' for choice in serving) + ' serves it'
                   if serving else f'no value of {name} serves it: leave it out')
        return (f'launch argument {name}:={value}: {chosen[0].name} is '
                f'{chosen[0].skip_reason(values, kind)} ({instead})')

    def refusal(self, values: Mapping[str, Any], requested: Iterable[str]) -> str | None:
        """
        Say why the launch arguments ``requested`` ask for what the robot cannot run.

        ``values`` are the typed values of every argument; a default the user did not ask
        for chooses nothing for a kind it does not serve and is no request. None: nothing
        to refuse. The local launcher and ``ros2 launch`` both ask this.
        """
        kind = robot_kind(values.get(ROBOT.name, ''))
        for name in requested:
            refusal = self.unserved_choice(name, values, kind)
            if refusal:
                return refusal
        return None

    def _chosen(self, name: str, value: str) -> list[NodeEntry]:
        """Return the nodes that run only with the launch argument ``name`` at ``value``."""
        return [entry for entry in self.nodes if entry.equals == (name, value)]


ROBOT = LaunchArgument(
    'robot', '', 'robot description YAML file; empty: the package config/robot.yaml')
NAMESPACE = LaunchArgument(
    'namespace', '', 'namespace of every node and of their relative topics; empty: none',
    check=check_namespace)
USE_SIM_TIME = LaunchArgument(
    'use_sim_time', 'false', 'true: the simulator publishes /clock and every other node runs '
    'on simulated time (use it when the simulation is slower than real time)', kind=bool)
WORLD = LaunchArgument(
    'world', '', 'world description YAML file: obstacles the simulated robot touches, drawn '
    'on world/markers, its contacts on contact/markers and contact/wrench (docs/'
    'tendon_robot.md, Contact with the world); empty: none')
MODE = LaunchArgument(
    'mode', '', "simulator model; empty: the robot kind's default. Tendon robot: dynamic "
    '(PyElastica rod dynamics, the default), quasi_static (statics solver: equilibrium on '
    'each setpoint, also accepts displacement setpoints) or cc_dynamic (constant-curvature '
    'Lagrange dynamics); pcr_6rus: quasi_static; rolling_joint_snake: dynamic; bellows: '
    'cc_dynamic')
RVIZ = LaunchArgument('rviz', 'true', 'start RViz with rviz/sim.rviz (rviz/pcr.rviz, '
                      'rviz/snake.rviz, rviz/cc.rviz for a pcr_6rus, rolling_joint_snake, '
                      'bellows robot; the hardware stack: rviz/hardware.rviz), its fixed '
                      'frame under the frame prefix', kind=bool)
FRAME_PREFIX = LaunchArgument(
    'frame_prefix', '', 'prepended to every frame id of the stack (our nodes, '
    "robot_state_publisher's frame_prefix, the RViz view), e.g. left_arm/ for "
    "left_arm/base_link; empty: '<namespace>/' when a namespace is given, none without one",
    check=check_frame_prefix)


def frame_prefix(values: Mapping[str, Any]) -> str:
    """
    Return the frame prefix of a stack started with the launch argument ``values``.

    An explicit ``frame_prefix`` wins. Otherwise a namespace gives ``'<namespace>/'``
    (the usual ROS convention: ``left_arm/base_link`` for ``namespace:=left_arm``), so
    that stacks in different namespaces never share a frame name on ``/tf``; without a
    namespace there is no prefix and the frames keep their plain names.
    """
    given = values.get(FRAME_PREFIX.name, '')
    if given:
        return given
    namespace = values.get(NAMESPACE.name, '').strip('/')
    return f'{namespace}/' if namespace else ''


@dataclass(frozen=True)
class FramePrefix(FromArguments):
    """The frame prefix (:func:`frame_prefix`) as a parameter value."""

    def of(self, values: Mapping[str, Any]) -> str:
        """Return :func:`frame_prefix` of ``values``."""
        return frame_prefix(values)


@dataclass(frozen=True)
class RvizView(FromArguments):
    """An RViz config of the share folder with its frames under the frame prefix."""

    view: ShareFile

    def of(self, values: Mapping[str, Any]) -> str:
        """Return the path of the view for the frame prefix of ``values``."""
        return str(prefixed_view_file(self.view.resolve(), frame_prefix(values)))


def robot_kind(robot: str) -> str | None:
    """
    Return the kind of the robot file a ``robot`` launch argument names.

    '': the default tendon robot; None when the file cannot be read (the nodes report that
    themselves).
    """
    if not robot:
        return TENDON_ROBOT
    try:
        return description_kind(read_yaml(robot))
    except RobotDescriptionError:
        return None


ROBOT_STATE_PUBLISHER = NodeEntry(
    name='robot_state_publisher', package='robot_state_publisher',
    executable='robot_state_publisher',
    # Publishes the fixed frames of the URDF on /tf_static; tip_link hangs on a
    # floating joint, which it ignores, so the simulator's /tf owns that frame.
    file_parameters={'robot_description': ShareFile('urdf/tendon_robot.urdf')},
    parameters={'use_sim_time': Arg('use_sim_time'), 'frame_prefix': FramePrefix()},
    kinds=(TENDON_ROBOT,))

RVIZ_NODE = NodeEntry(
    name='rviz2', package='rviz2', executable='rviz2',
    arguments=('-d', RvizView(ShareFile('rviz/sim.rviz'))),
    parameters={'use_sim_time': Arg('use_sim_time')}, condition='rviz', kinds=(TENDON_ROBOT,))
# the views of the other kinds: everything from the markers and /tf, no URDF
PCR_RVIZ_NODE = replace(RVIZ_NODE, arguments=('-d', RvizView(ShareFile('rviz/pcr.rviz'))),
                        kinds=(PCR,))
SNAKE_RVIZ_NODE = replace(RVIZ_NODE, arguments=('-d', RvizView(ShareFile('rviz/snake.rviz'))),
                          kinds=(SNAKE,))
CC_RVIZ_NODE = replace(RVIZ_NODE, arguments=('-d', RvizView(ShareFile('rviz/cc.rviz'))),
                       kinds=(BELLOWS,))

SIMULATOR = NodeEntry(
    name='simulator', package=PACKAGE_NAME, executable='simulator_node',
    module='tendon_robot_sim.nodes.simulator_node',
    parameter_files=(ShareFile('config/sim.yaml'),),
    # The simulator is the clock source: it never runs on sim time itself.
    parameters={'robot_file': Arg('robot'), 'world_file': Arg('world'), 'mode': Arg('mode'),
                'publish_clock': Arg('use_sim_time'), 'frame_prefix': FramePrefix()})

TENSION_CONTROLLER = NodeEntry(
    name='tension_controller', package=PACKAGE_NAME, executable='tension_controller_node',
    module='tendon_robot_sim.nodes.tension_controller_node',
    parameter_files=(ShareFile('config/controller.yaml'),),
    parameters={'robot_file': Arg('robot'), 'use_sim_time': Arg('use_sim_time'),
                'frame_prefix': FramePrefix()},
    kinds=(TENDON_ROBOT, SNAKE))

CONTROLLER = LaunchArgument(
    'controller', 'tension', 'the controller that publishes tendon/setpoint: tension '
    '(tendon/command/tension and tip/target) or displacement (tendon/command/displacement)',
    choices=('tension', 'displacement'))

DISPLACEMENT_CONTROLLER = NodeEntry(
    name='displacement_controller', package=PACKAGE_NAME,
    executable='displacement_controller_node',
    module='tendon_robot_sim.nodes.displacement_controller_node',
    parameter_files=(ShareFile('config/displacement_controller.yaml'),),
    # simulation: tensions from statics feed-forward and feedback on tendon/state
    parameters={'robot_file': Arg('robot'), 'use_sim_time': Arg('use_sim_time'),
                'frame_prefix': FramePrefix(), 'output': 'tension'},
    equals=(CONTROLLER.name, 'displacement'), kinds=(TENDON_ROBOT,))

VIEW = LaunchArgument(
    'view', 'false', 'true: start the browser view (tendon-robot-sim view, viser) with the stack: '
    'a page on http://127.0.0.1:8080 that draws the robot and steers it with sliders and a tip '
    'target (docs/viewer.md)', kind=bool)


def view_drive(values: Mapping[str, Any]) -> str:
    """
    Return what the view's sliders command in a stack started with the launch ``values``.

    The controller the stack runs for the robot's kind (``controller``: tension or
    displacement), else ``setpoint``: the simulator's own input, for the kinds no controller
    serves (the parallel robot's motor angles, a bellows robot's pressures).
    """
    kind = robot_kind(values.get(ROBOT.name, ''))
    controller = values.get(CONTROLLER.name, 'tension')
    entry = TENSION_CONTROLLER if controller == 'tension' else DISPLACEMENT_CONTROLLER
    return controller if entry.serves(kind) else 'setpoint'


@dataclass(frozen=True)
class ViewDrive(FromArguments):
    """The view's ``drive`` parameter (:func:`view_drive`)."""

    def of(self, values: Mapping[str, Any]) -> str:
        return view_drive(values)


VIEW_NODE = NodeEntry(
    name='view', package=PACKAGE_NAME, executable='view_node',
    module='tendon_robot_sim.nodes.view_node',
    parameters={'robot_file': Arg('robot'), 'drive': ViewDrive(),
                'use_sim_time': Arg('use_sim_time')},
    condition=VIEW.name)

MOTOR_PORT = LaunchArgument(
    'motor_port', '/dev/ttyUSB0', 'motor driver port: device path, socket://host:port, or the '
    'path tendon-robot-sim emulate printed')
SENSOR_PORT = LaunchArgument(
    'sensor_port', '/dev/ttyUSB1', 'tip sensor port; empty: no tip sensor')
MOTOR_DEVICE = LaunchArgument(
    'motor_device', 'tdcr-motor-v1', "motors: tdcr-motor-v1 (the package's protocol) or "
    'dynamixel (X-series servos on a U2D2, config/dynamixel.yaml)',
    choices=('tdcr-motor-v1', 'dynamixel'))
SENSOR_DEVICE = LaunchArgument(
    'sensor_device', 'tdcr-laser-v1', "tip sensor: tdcr-laser-v1 (the package's protocol) or "
    'keyence-lkg (LK-G style controller, RS-232C)', choices=('tdcr-laser-v1', 'keyence-lkg'))
AUTOSTART = LaunchArgument(
    'autostart', 'true', 'true: bring the managed (lifecycle) nodes to active (configure opens '
    'the ports, activate follows setpoints); false: leave them unconfigured, for `ros2 '
    'lifecycle set`', kind=bool)

HARDWARE_BRIDGE = NodeEntry(
    name='hardware_bridge', package=PACKAGE_NAME, executable='hardware_bridge_node',
    module='tendon_robot_sim.nodes.hardware_bridge_node',
    parameter_files=(ShareFile('config/hardware.yaml'),),
    parameters={'robot_file': Arg('robot'), 'motor_port': Arg('motor_port'),
                'sensor_port': Arg('sensor_port'), 'motor_device': Arg('motor_device'),
                'sensor_device': Arg('sensor_device'), 'frame_prefix': FramePrefix()},
    lifecycle=True)

# Nothing in the hardware stack publishes tip_link (the laser measures a position only,
# on tip/measured): its robot description leaves the link out and its view shows the point.
HARDWARE_ROBOT_STATE_PUBLISHER = replace(
    ROBOT_STATE_PUBLISHER,
    file_parameters={'robot_description': UrdfWithout('urdf/tendon_robot.urdf',
                                                      links=('tip_link',))})
HARDWARE_RVIZ_NODE = replace(RVIZ_NODE, arguments=('-d', RvizView(ShareFile(
    'rviz/hardware.rviz'))))


# The view's robot on hardware: nothing there draws the backbone, so with view:=true a
# quasi-static simulator solves the shape of the measured tensions (tendon/state effort, 50 Hz
# from the bridge; 0.43 ms a warm discrete solve, docs/performance.md) and draws it on
# backbone/markers. Its own state, tip and (a robot with tendon friction) anchor tensions go
# under model/ and its frames are model_*, so nothing it says passes for a measurement.
HARDWARE_MODEL = replace(
    SIMULATOR, name='model', parameter_files=(),
    parameters={**SIMULATOR.parameters, 'world_file': '', 'mode': 'quasi_static',
                'publish_clock': False,
                'setpoint_topic': 'tendon/state', 'state_topic': 'model/tendon/state',
                'tip_state_topic': 'model/tendon/tip_state', 'tip_pose_topic': 'model/tip/pose',
                'tip_frame': 'model_tip_link',
                'vertebra_frame_prefix': 'model_vertebra_'},
    condition=VIEW.name)


def _on_wall_clock(entry: NodeEntry) -> NodeEntry:
    """``entry`` with use_sim_time fixed to false: real hardware has no simulated clock."""
    return _with_parameters(entry, use_sim_time=False)


def _with_parameters(entry: NodeEntry, **values: Any) -> NodeEntry:
    """``entry`` with some parameters set to fixed values."""
    return replace(entry, parameters={**entry.parameters, **values})


def _tension_controller_chosen(entry: NodeEntry) -> NodeEntry:
    """``entry`` (the tension controller) running only with controller:=tension."""
    return replace(entry, equals=(CONTROLLER.name, 'tension'))


STACKS: dict[str, Stack] = {
    'sim': Stack(
        name='sim',
        description='simulated robot: simulator, tension or displacement controller, '
                    'robot_state_publisher, RViz',
        arguments=(ROBOT, WORLD, MODE, CONTROLLER, RVIZ, USE_SIM_TIME, NAMESPACE, FRAME_PREFIX,
                   VIEW),
        nodes=(SIMULATOR, _tension_controller_chosen(TENSION_CONTROLLER),
               DISPLACEMENT_CONTROLLER, ROBOT_STATE_PUBLISHER, RVIZ_NODE, PCR_RVIZ_NODE,
               SNAKE_RVIZ_NODE, CC_RVIZ_NODE, VIEW_NODE),
    ),
    'hardware': Stack(
        name='hardware',
        description='real robot: hardware bridge (serial motor driver and tip sensor), tension '
                    'or displacement controller, robot_state_publisher, RViz',
        arguments=(ROBOT, MOTOR_PORT, SENSOR_PORT, MOTOR_DEVICE, SENSOR_DEVICE, CONTROLLER,
                   RVIZ, NAMESPACE, FRAME_PREFIX, AUTOSTART, VIEW),
        # the tip is measured by the laser (tip/measured), not simulated (tip/pose)
        nodes=(HARDWARE_BRIDGE, _with_parameters(
                   _on_wall_clock(_tension_controller_chosen(TENSION_CONTROLLER)),
                   tip_feedback='point'),
               # position-controlled motors: the displacements go to the motors as they are
               _with_parameters(_on_wall_clock(DISPLACEMENT_CONTROLLER), output='position'),
               _on_wall_clock(HARDWARE_ROBOT_STATE_PUBLISHER),
               _on_wall_clock(HARDWARE_RVIZ_NODE),
               # the page commands real servos: its token from the start (docs/viewer.md)
               _with_parameters(_on_wall_clock(VIEW_NODE), hardware=True), HARDWARE_MODEL),
    ),
}


def get_stack(name: str) -> Stack:
    """Return the stack called ``name``; KeyError names the known ones."""
    try:
        return STACKS[name]
    except KeyError:
        raise KeyError(f'unknown stack {name!r}; known stacks: {sorted(STACKS)}') from None


def typed_value(argument: LaunchArgument, text: str) -> Any:
    """
    Return the value of a launch argument as a parameter of type ``argument.kind``.

    Raises
    ------
    ValueError
        ``text`` is not one of the argument's choices, or its ``check`` refuses it.

    """
    if argument.choices and text not in argument.choices:
        raise ValueError(f'launch argument {argument.name}: must be one of '
                         f'{list(argument.choices)}, got {text!r}')
    if argument.check is not None:
        try:
            argument.check(text)
        except ValueError as error:
            raise ValueError(f'launch argument {argument.name}: {error}') from None
    return text == 'true' if argument.kind is bool else text


def launch_description(stack_name: str):
    """Return a ``launch.LaunchDescription`` of the stack, for ``launch/<stack>.launch.py``."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration, PythonExpression
    from launch_ros.actions import LifecycleNode, Node
    from launch_ros.parameter_descriptions import ParameterValue

    stack = get_stack(stack_name)

    def substitution_of(value: FromArguments):
        if isinstance(value, Arg):
            return LaunchConfiguration(value.name)
        return _computed(value, stack)

    def value_of(value: FromArguments) -> ParameterValue:
        kind = stack.argument(value.name).kind if isinstance(value, Arg) else str
        return ParameterValue(substitution_of(value), value_type=kind)

    actions: list = [
        DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                              **({'choices': list(a.choices)} if a.choices else {}))
        for a in stack.arguments]
    actions.append(_refuse_unserved(stack))
    namespaced = any(a.name == NAMESPACE.name for a in stack.arguments)
    for entry in stack.nodes:
        condition = IfCondition(LaunchConfiguration(entry.condition)) if entry.condition else None
        if entry.equals:
            name, value = entry.equals
            # PythonExpression, not EqualsSubstitution: the latter needs Iron or newer
            condition = IfCondition(PythonExpression(
                ["'", LaunchConfiguration(name), f"' == '{value}'"]))
        if entry.kinds:
            condition = _serving(entry, condition)
        parameters = entry.resolved_parameters(value_of)
        for name in entry.file_parameters:
            # a file's text stays a string (launch would otherwise parse it as YAML)
            parameters[-1][name] = ParameterValue(parameters[-1][name], value_type=str)
        node = (LifecycleNode if entry.lifecycle else Node)(
            package=entry.package, executable=entry.executable, name=entry.name,
            namespace=LaunchConfiguration(NAMESPACE.name) if namespaced else None,
            parameters=parameters,
            remappings=list(entry.remappings),
            arguments=entry.resolved_arguments(substitution_of),
            condition=condition, output='screen')
        actions.append(node)
        if entry.lifecycle:
            actions += _autostart(node)
    return LaunchDescription(actions)


def _refuse_unserved(stack: Stack):
    """
    Return a launch action that ends the launch when a choice serves not the robot's kind.

    As the local launcher does: ``controller:=displacement`` for a rolling-joint snake
    would otherwise run no controller at all and say nothing. launch cannot tell a value
    given from its default, so a value other than the default counts as asked for; launch
    reports the exception as one line and exits non-zero.
    """
    from launch.actions import OpaqueFunction
    from launch.substitutions import LaunchConfiguration

    def check(context) -> list:
        texts = {a.name: LaunchConfiguration(a.name).perform(context) for a in stack.arguments}
        values = {a.name: typed_value(a, texts[a.name]) for a in stack.arguments}
        refusal = stack.refusal(values, [a.name for a in stack.arguments
                                         if texts[a.name] != a.default])
        if refusal:
            raise RuntimeError(refusal)
        return []
    return OpaqueFunction(function=check)


def _autostart(node) -> list:
    """
    Return the launch actions that bring the LifecycleNode ``node`` to active.

    With ``autostart:=true``: request configure at start and activate once configure
    has succeeded (configuring -> inactive; not after a deactivate).
    """
    from launch.actions import EmitEvent, RegisterEventHandler
    from launch.conditions import IfCondition
    from launch.events import matches_action
    from launch.substitutions import LaunchConfiguration
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState
    from lifecycle_msgs.msg import Transition

    def change_state(transition: int, **kwargs):
        return EmitEvent(event=ChangeState(lifecycle_node_matcher=matches_action(node),
                                           transition_id=transition), **kwargs)

    autostart = IfCondition(LaunchConfiguration(AUTOSTART.name))
    return [RegisterEventHandler(OnStateTransition(
                target_lifecycle_node=node, start_state='configuring', goal_state='inactive',
                entities=[change_state(Transition.TRANSITION_ACTIVATE)]), condition=autostart),
            change_state(Transition.TRANSITION_CONFIGURE, condition=autostart)]


def _computed(value: FromArguments, stack: Stack):
    """Return a launch substitution performing ``value.of`` on the stack's argument strings."""
    from launch import Substitution
    from launch.substitutions import LaunchConfiguration

    class Computed(Substitution):
        def describe(self) -> str:
            return f'{type(value).__name__} of the launch arguments'

        def perform(self, context) -> str:
            return value.of(_with_pushed_namespace(
                {a.name: LaunchConfiguration(a.name).perform(context) for a in stack.arguments},
                context))
    return Computed()


def _with_pushed_namespace(values: Mapping[str, str], context) -> Mapping[str, str]:
    """
    Return the launch argument ``values`` with the namespace the nodes run in.

    A launch file that includes ours inside ``PushRosNamespace('left')`` puts the nodes in
    ``/left`` without our ``namespace`` argument: launch_ros joins the two as it does here,
    so that the frame prefix follows the namespace the nodes really have.
    """
    from launch_ros.utilities import prefix_namespace

    pushed = context.launch_configurations.get('ros_namespace')
    if not pushed or NAMESPACE.name not in values:
        return values
    return {**values, NAMESPACE.name: prefix_namespace(pushed, values[NAMESPACE.name])}


def _serving(entry: NodeEntry, condition):
    """Return a launch condition: ``condition`` (None: true) and the robot file's kind served."""
    from launch import Condition
    from launch.substitutions import LaunchConfiguration

    def holds(context) -> bool:
        robot = LaunchConfiguration(ROBOT.name).perform(context)
        return ((condition is None or condition.evaluate(context))
                and entry.serves(robot_kind(robot)))
    return Condition(predicate=holds)
