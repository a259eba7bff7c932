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
The ROS naming rules, for every name a user gives: namespaces, topics, frame ids.

ROS names (REP 144; rmw_validate_namespace, rcl_validate_topic_name): tokens of letters, digits
and '_', not starting with a digit, separated by single '/'. A name against them reached rcl in
a node and ended in an RCLError traceback ('Couldn't parse remap rule'); checked here, it is
one line naming the argument or parameter, before anything starts. tf2 frame ids follow the
same rules without a leading '/' (REP 105).

Imports without ROS: the stack definition (launch files, the local launcher) uses it too.
:func:`name_check` gives the check of a node parameter by its name, as
``PHYSICAL_RANGES`` gives a description key's range: ``*_topic``, ``*_frame``,
``*frame_prefix``.
"""

from __future__ import annotations

import re
from typing import Callable

_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
# What goes under a namespace (node and topic names, at most 247 characters in all) needs room.
MAX_NAMESPACE_LENGTH = 200


def ros_name_problem(name: str) -> str | None:
    """Say what makes ``name`` (relative, '/'-separated) no ROS name; None: it is one."""
    bad = re.search(r'[^A-Za-z0-9_/]', name)
    if bad:
        return f'{bad.group()!r} is not allowed (letters, digits, _ and / only)'
    for token in name.split('/'):
        if not token:
            return "an empty name between two '/'" if name else 'an empty name'
        if not _TOKEN.fullmatch(token):
            return f'the name {token!r} starts with a digit'
    return None


def check_namespace(text: str) -> None:
    """Raise ValueError unless ``text`` is a ROS namespace ('' or '/': none)."""
    namespace = text.strip('/')
    if namespace:
        problem = ros_name_problem(namespace)
        if problem:
            raise ValueError(f'not a ROS namespace: {problem}, got {text!r}')
        if len(namespace) > MAX_NAMESPACE_LENGTH:
            raise ValueError(f'at most {MAX_NAMESPACE_LENGTH} characters, got {len(namespace)}')


def check_topic_name(text: str) -> None:
    """Raise ValueError unless ``text`` is a topic name: relative, absolute or private (~/)."""
    name = text[2:] if text.startswith('~/') else text[1:] if text.startswith('/') else text
    problem = ros_name_problem(name)
    if problem:
        raise ValueError(f'not a ROS topic name: {problem}, got {text!r}')


def check_frame_id(text: str) -> None:
    """Raise ValueError unless ``text`` is a tf2 frame id."""
    _check_frame(text, text, 'a tf2 frame id')


def check_frame_prefix(text: str) -> None:
    """Raise ValueError unless ``text`` + a frame name is a tf2 frame id ('': no prefix)."""
    if text:
        _check_frame(text, text + 'base_link', 'a prefix of tf2 frame ids')


def _check_frame(text: str, frame: str, what: str) -> None:
    if text.startswith('/'):
        raise ValueError(f"a tf2 frame id does not start with '/' (REP 105), got {text!r}")
    problem = ros_name_problem(frame)
    if problem:
        raise ValueError(f'not {what}: {problem}, got {text!r}')


def name_check(parameter: str) -> Callable[[str], None] | None:
    """Return the check of a parameter by its name (``setpoint_topic``); None: not a name."""
    if parameter.endswith('frame_prefix'):
        return check_frame_prefix
    if parameter.endswith('_topic'):
        return check_topic_name
    if parameter.endswith('_frame'):
        return check_frame_id
    return None
