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
Node parameters declared from one table per node.

Each node lists its parameters as :class:`Param` entries; :func:`declare` turns them into
``declare_parameter`` calls with a ``ParameterDescriptor`` (description with the unit,
range, read-only flag, allowed choices) and returns the values. The same tables print the
parameter tables of docs/ros_interface.md (:func:`markdown_table`), so documentation and
code cannot drift apart.
"""

from dataclasses import dataclass
import difflib
from types import SimpleNamespace
from typing import Any, Callable, Sequence

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.node import Node
from rclpy.parameter import Parameter

from tendon_robot_sim.ros.names import name_check


class ConfigurationError(ValueError):
    """A node cannot start with the parameters it was given; the message names the parameter."""


_TYPE_NAMES = {bool: 'true or false', int: 'an integer', float: 'a number (double)',
               str: 'a string'}


@dataclass(frozen=True)
class Param:
    """One node parameter."""

    name: str
    default: Any                 # its type is the parameter type
    unit: str                    # SI unit, '' for none
    description: str
    range: tuple | None = None  # inclusive (low, high), numbers only  # noqa: A003
    read_only: bool = True       # False only where a live change is handled
    choices: tuple = ()          # allowed values of a string parameter

    def check(self, value: Any) -> Any:
        """
        Return ``value`` as this parameter takes it, or raise ConfigurationError naming it.

        What rclpy checks when the node declares the parameter (type, range) and what
        :func:`declare` adds (choices), without a node: the local launcher checks every
        value before it starts anything. A double takes an integer (20 is 20.0).
        """
        kind = type(self.default)
        if kind is list:
            return self._check_list(value)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not kind:
            raise ConfigurationError(
                f'parameter {self.name}: must be {_TYPE_NAMES[kind]}, got {type(value).__name__} '
                f'{value!r}')
        if self.range is not None and not self.range[0] <= value <= self.range[1]:
            raise ConfigurationError(f'parameter {self.name}: must be within [{self.range[0]}, '
                                     f'{self.range[1]}] {self.unit}, got {value!r}')
        if self.choices and value not in self.choices:
            raise ConfigurationError(f'parameter {self.name}: must be one of '
                                     f'{list(self.choices)}, got {value!r}')
        _check_name(self.name, value)
        return value

    def _check_list(self, value: Any) -> list:
        """Check an array parameter: a list of its default's item type (a double takes an int)."""
        item = type(self.default[0])
        if isinstance(value, list):
            if item is float:
                value = [float(v) if type(v) is int else v for v in value]
            if all(type(v) is item for v in value):
                return value
        raise ConfigurationError(f'parameter {self.name}: must be a list, each item '
                                 f'{_TYPE_NAMES[item]}, got {value!r}')

    def descriptor(self) -> ParameterDescriptor:
        unit = f' [{self.unit}]' if self.unit else ''
        descriptor = ParameterDescriptor(description=self.description + unit,
                                         read_only=self.read_only)
        if self.choices:
            descriptor.additional_constraints = f'one of: {", ".join(self.choices)}'
        if self.range is not None:
            low, high = self.range
            if isinstance(self.default, int) and not isinstance(self.default, bool):
                descriptor.integer_range = [IntegerRange(from_value=low, to_value=high, step=0)]
            else:
                # step 0.0: any value in the range (rclpy checks the bounds on every set)
                descriptor.floating_point_range = [
                    FloatingPointRange(from_value=float(low), to_value=float(high), step=0.0)]
        return descriptor


def declare(node: Node, params: Sequence[Param]) -> SimpleNamespace:
    """
    Declare ``params`` on ``node`` and return their values as attributes.

    Raises
    ------
    ConfigurationError
        A value (from a parameter file or ``-p``) is out of range or not one of the
        choices; the message names the parameter, the value and what is allowed.

    """
    _integers_for_doubles(node, params)
    values = {}
    for param in params:
        try:
            node.declare_parameter(param.name, param.default, param.descriptor())
        except (InvalidParameterTypeException, InvalidParameterValueException) as error:
            raise ConfigurationError(
                f'parameter {param.name}: {_rclpy_reason(error)}') from None
        value = node.get_parameter(param.name).value
        if param.choices and value not in param.choices:
            raise ConfigurationError(
                f'parameter {param.name}: must be one of {list(param.choices)}, got {value!r}')
        _check_name(param.name, value)
        values[param.name] = value
    _warn_of_unknown_overrides(node)
    return SimpleNamespace(**values)


def _warn_of_unknown_overrides(node: Node) -> None:
    """
    Warn once of the values given at start (parameter file, ``-p``) that name no parameter.

    rclpy drops them without a word, so a misspelt ``publish_rat:=20`` ran the node on the
    default. A warning, not a refusal: a ``/**`` section of a file shared by several nodes
    may carry another node's parameters. Called once every parameter is declared. The
    warning says what was meant (:func:`unknown_parameters`), without a ROS CLI: the venv
    of the wheels has no ``ros2 param list``.
    """
    overrides = getattr(node, '_parameter_overrides', None)
    if not isinstance(overrides, dict):
        return
    known = node.list_parameters([], 0).names
    unknown = [name for name in overrides if not node.has_parameter(name)]
    if unknown:
        node.get_logger().warning(f'ignoring {unknown_parameters(unknown, known)}')


def unknown_parameters(unknown: Sequence[str], known: Sequence[str]) -> str:
    """
    Say that the names ``unknown`` are no parameters of a node that has ``known``.

    Each is followed by the known name closest to it, where one is close (difflib:
    ``publish_rat (did you mean publish_rate?)``); when one is close to none, the known
    names follow, so that the line alone says what may be given.
    """
    unknown, known = sorted(unknown), sorted(known)
    meant = {name: difflib.get_close_matches(name, known, n=1) for name in unknown}
    if len(unknown) == 1:
        (name,) = unknown
        text = f'{name}: not a parameter of this node'
        if meant[name]:
            return f'{text}; did you mean {meant[name][0]}?'
    else:
        text = ', '.join(name + (f' (did you mean {meant[name][0]}?)' if meant[name] else '')
                         for name in unknown) + ': not parameters of this node'
    if all(meant.values()):
        return text
    return f'{text}; its parameters: {", ".join(known)}'


def _check_name(name: str, value: Any) -> None:
    """
    Raise ConfigurationError unless a topic or frame parameter's value follows the ROS rules.

    By the parameter's name (:func:`tendon_robot_sim.ros.names.name_check`): a topic name
    against them ended in rclpy's InvalidTopicNameException traceback from the node.
    """
    check = name_check(name)
    if check is not None and isinstance(value, str):
        try:
            check(value)
        except ValueError as error:
            raise ConfigurationError(f'parameter {name}: {error}') from None


def _integers_for_doubles(node: Node, params: Sequence[Param]) -> None:
    """
    Let a double parameter take an integer (``publish_rate:=20``), as ``ros2 param`` users expect.

    rclpy refuses 20 for a double ('expecting type DOUBLE'), from a parameter file, ``-p``
    or ``ros2 param set`` alike. The values given at start are read from the node's
    overrides (``_parameter_overrides``, rclpy's own, since Humble) before the parameters
    are declared; a live set goes through a pre-set callback (from Iron on).
    """
    doubles = {p.name for p in params if isinstance(p.default, float)}

    def as_double(parameter: Parameter) -> Parameter:
        if parameter.name in doubles and parameter.type_ == Parameter.Type.INTEGER:
            return Parameter(parameter.name, Parameter.Type.DOUBLE, float(parameter.value))
        return parameter

    overrides = getattr(node, '_parameter_overrides', None)
    if isinstance(overrides, dict):
        for name in doubles & set(overrides):
            overrides[name] = as_double(overrides[name])
    if hasattr(node, 'add_pre_set_parameters_callback'):
        node.add_pre_set_parameters_callback(lambda given: [as_double(p) for p in given])


def on_parameters_set(node: Node, callback: Callable[[list], None]) -> None:
    """
    Call ``callback(parameters)`` after live parameters were set (ranges already checked).

    Post-set callbacks exist from Iron on; Humble has only the on-set callback, which
    runs before the values are stored: there ``callback`` runs in it and accepts them.
    """
    if hasattr(node, 'add_post_set_parameters_callback'):
        node.add_post_set_parameters_callback(callback)
        return

    def accept(parameters):
        callback(parameters)
        return SetParametersResult(successful=True)
    node.add_on_set_parameters_callback(accept)


#: Shared by every node that names frames: the launch argument frame_prefix sets it on all of
#: them at once, so the frames they publish and the frames they accept agree.
FRAME_PREFIX = Param(
    'frame_prefix', '', '', 'prepended to every frame id of the robot (left_arm/ gives '
    'left_arm/base_link), in /tf and in message headers alike, so that several robots share '
    '/tf; the same prefix robot_state_publisher gets; empty: none')


#: Shared by every node that takes tip/wrench (the simulator and both controllers), so that they
#: take the same wrenches: one definition, and the local launcher's ``--param
#: max_tip_force:=...`` without a node name sets all of them. The defaults are far above what the
#: default robot meets on a bench and below where its models, and those of the other robot
#: kinds, stop solving (docs/ros_interface.md, Tip wrench bound, says how they were chosen).
TIP_WRENCH_BOUND = (
    Param('max_tip_force', 10.0, 'N', 'largest force (norm) a tip/wrench may carry; a larger '
          'one is rejected with a throttled warning and the last accepted wrench kept '
          '(docs/ros_interface.md, Tip wrench bound)', range=(0.0, 1e6)),
    Param('max_tip_torque', 0.1, 'N m', 'largest torque (norm) a tip/wrench may carry; a '
          'larger one is rejected with a throttled warning and the last accepted wrench kept '
          '(docs/ros_interface.md, Tip wrench bound)', range=(0.0, 1e6)),
)


def check_frame_prefix(prefix: str) -> None:
    """
    Raise ConfigurationError unless ``prefix`` can start a tf2 frame id.

    The ROS naming rules (:mod:`tendon_robot_sim.ros.names`), which :func:`declare` applies
    to every ``*frame_prefix`` parameter already.
    """
    _check_name('frame_prefix', prefix)


def check_pretension(min_tension: float, robot) -> None:
    """Raise ConfigurationError unless ``min_tension`` [N] is at most every max_tension."""
    lowest = float(robot.max_tensions.min())
    if min_tension > lowest:
        raise ConfigurationError(
            f'parameter min_tension: {min_tension:g} N exceeds the smallest max_tension '
            f'{lowest:g} N of the robot')


def check_displacement_range(min_displacement: float, max_displacement: float) -> None:
    """Raise ConfigurationError unless ``min_displacement`` [m] is below ``max_displacement``."""
    if min_displacement >= max_displacement:
        raise ConfigurationError(
            f'parameter min_displacement: {min_displacement:g} m must be below '
            f'max_displacement {max_displacement:g} m')


def _rclpy_reason(error: Exception) -> str:
    # rclpy's message carries the type or range check; keep it on one line.
    return ' '.join(str(error).split())


def markdown_table(params: Sequence[Param]) -> str:
    """Return the parameters as a Markdown table for docs/ros_interface.md."""
    lines = ['| name | type | default | unit | range | live | description |',
             '| --- | --- | --- | --- | --- | --- | --- |']
    for p in params:
        kind = type(p.default).__name__.replace('str', 'string').replace('float', 'double')
        allowed = (f'{p.range[0]} .. {p.range[1]}' if p.range
                   else ', '.join(p.choices) if p.choices else '')
        lines.append(f'| `{p.name}` | {kind} | `{p.default!r}` | {p.unit} | {allowed} | '
                     f'{"no" if p.read_only else "yes"} | {p.description} |')
    return '\n'.join(lines)
