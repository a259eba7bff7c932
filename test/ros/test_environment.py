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
The class "a bad ROS environment": every command and node that starts ROS, each bad variable.

``ROS_DOMAIN_ID=abc`` was an internal error of ``record`` (exit 70), ``ROS_DOMAIN_ID=300``
lines of Fast DDS text, ``RMW_IMPLEMENTATION=rmw_nosuch_cpp`` exit 102. Each must be one line
naming the variable and what it may be, exit 2, before anything starts
(``tendon_robot_sim.ros.environment``). Which commands start ROS is found from the code: every
command whose module reaches rclpy through the package's imports; every node of
``tendon_robot_sim.nodes``. They run here with rclpy's start and every child process refused,
so that one that starts ROS before it checks fails the test; a few run for real as well.
"""

import ast
from functools import cache
import importlib
import os
from pathlib import Path
import pkgutil
import subprocess
import sys

from cli_commands import parsers
import pytest
import rclpy
from ros_helpers import ROOT
from tendon_robot_sim import cli
import tendon_robot_sim.nodes
from tendon_robot_sim.ros.environment import (check_ros_environment, DISCOVERY_RANGES,
                                              installed_rmw_implementations, LOGGING_SWITCHES,
                                              MAX_DOMAIN_ID, RosEnvironmentError)
from waiting import COMMAND_TIMEOUT

PACKAGE = ROOT / 'tendon_robot_sim'
# One bad value of each variable ROS reads when it starts (the issue's, and one of each other)
BAD = [('ROS_DOMAIN_ID', 'abc'), ('ROS_DOMAIN_ID', '300'),
       ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'localhost'),
       ('ROS_STATIC_PEERS', 'no.such.host.invalid'),
       ('RMW_IMPLEMENTATION', 'rmw_nosuch_cpp'), ('RCUTILS_COLORIZED_OUTPUT', 'abc')]
BAD_IDS = [f'{name}={value}' for name, value in BAD]
# Arguments of each command that starts ROS, one list per way it starts it ({tmp}: a folder).
ROS_ARGUMENTS = {
    'launch': [['sim', '--arg', 'rviz:=false'], ['hardware', '--dry-run']],
    'record': [['{tmp}/bag']],
    'replay': [['{tmp}/bag']],
    'demo': [['--out', '{tmp}/demo'], ['--hardware', 'dynamixel', '--out', '{tmp}/demo']],
    'view': [['--port', '0']],
}


# ---------------------------------------------------------------- the values

@pytest.mark.parametrize('name, value', [
    ('ROS_DOMAIN_ID', '0'), ('ROS_DOMAIN_ID', '232'), ('ROS_DOMAIN_ID', ''),
    ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET'), ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'OFF'),
    ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SYSTEM_DEFAULT'),
    ('ROS_STATIC_PEERS', '127.0.0.1;localhost'), ('ROS_STATIC_PEERS', ';192.168.0.1;'),
    ('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp'), ('RCUTILS_LOGGING_USE_STDOUT', '1')])
def test_what_ros_takes_passes(name, value):
    check_ros_environment({name: value})


@pytest.mark.parametrize('environ, allowed', [
    ({'ROS_DOMAIN_ID': 'abc'}, 'from 0 to 232'),
    ({'ROS_DOMAIN_ID': '233'}, 'from 0 to 232'),      # the first whose ports overflow
    ({'ROS_DOMAIN_ID': '-1'}, 'from 0 to 232'),       # rcl: the default domain, silently
    ({'ROS_DOMAIN_ID': '010'}, 'from 0 to 232'),      # rcl: octal, domain 8
    ({'ROS_DOMAIN_ID': '12abc'}, 'from 0 to 232'),    # rcl: 12
    ({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'localhost'}, 'LOCALHOST, SUBNET, OFF, SYSTEM_DEFAULT'),
    ({'ROS_STATIC_PEERS': 'not a host!!'}, 'IPv4 addresses or host names'),
    ({'ROS_STATIC_PEERS': '127.0.0.1;::1'}, "'::1' is neither"),   # Fast DDS takes IPv4 only
    ({'ROS_STATIC_PEERS': ' 127.0.0.1'}, "' 127.0.0.1' is neither"),
    ({'RMW_IMPLEMENTATION': 'rmw_nosuch_cpp'}, 'an installed one: rmw_fastrtps_cpp'),
    ({'RCUTILS_LOGGING_BUFFERED_STREAM': 'yes'}, '0 or 1')])
def test_what_ros_cannot_take_is_named_with_what_it_may_be(environ, allowed):
    ((name, value),) = environ.items()
    with pytest.raises(RosEnvironmentError) as raised:
        check_ros_environment(environ)
    message = str(raised.value)
    assert f'{name}={value!r}' in message and allowed in message and '\n' not in message


def test_static_peers_are_not_looked_up_where_ros_does_not_use_them():
    check_ros_environment({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'OFF', 'ROS_STATIC_PEERS': '::1'})


def test_the_middleware_installed_is_found_from_the_ament_index():
    assert 'rmw_fastrtps_cpp' in installed_rmw_implementations()
    assert 'rmw_implementation' not in installed_rmw_implementations()   # the loader


def test_the_docs_give_what_the_check_allows():
    docs = (ROOT / 'docs' / 'ros_interface.md').read_text()
    table = docs[docs.index('## Environment'):docs.index('## Topics, frames, services')]
    rows = {line.split('|')[1].strip(): line for line in table.splitlines()
            if line.startswith('| `')}
    assert f'0 .. {MAX_DOMAIN_ID}' in rows['`ROS_DOMAIN_ID`']
    assert all(f'`{value}`' in rows['`ROS_AUTOMATIC_DISCOVERY_RANGE`']
               for value in DISCOVERY_RANGES)
    assert set(rows) == {'`ROS_DOMAIN_ID`', '`ROS_AUTOMATIC_DISCOVERY_RANGE`',
                         '`ROS_STATIC_PEERS`', '`RMW_IMPLEMENTATION`',
                         ', '.join(f'`{name}`' for name in LOGGING_SWITCHES)}


# ---------------------------------------------------------------- every command and node

def _module_file(name: str) -> Path | None:
    base = PACKAGE.joinpath(*name.split('.')[1:])
    for path in (base.with_suffix('.py'), base / '__init__.py'):
        if path.is_file():
            return path
    return None


@cache      # the walk meets most modules once per command: each is parsed once
def _imports(path: Path) -> frozenset[str]:
    """Every module ``path`` imports, wherever the import stands (in a function too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module)
            found.update(f'{node.module}.{alias.name}' for alias in node.names)
    return frozenset(found)


def reaches_rclpy(module: str, seen: set | None = None) -> bool:
    """Return True if importing ``module`` (and its packages) can import rclpy."""
    seen = set() if seen is None else seen
    if module in seen:
        return False
    seen.add(module)
    parts = module.split('.')
    for path in filter(None, (_module_file('.'.join(parts[:n]))
                              for n in range(1, len(parts) + 1))):
        for target in _imports(path):
            if target.split('.')[0] == 'rclpy' or (
                    target.startswith('tendon_robot_sim.') and _module_file(target)
                    and reaches_rclpy(target, seen)):
                return True
    return False


def ros_commands() -> list[str]:
    """Return the commands (as typed) whose code reaches rclpy."""
    return [' '.join(words) for words, _ in parsers()
            if reaches_rclpy(f'tendon_robot_sim.commands.{words[0].replace("-", "_")}')]


def node_modules() -> list[str]:
    """Return every module of tendon_robot_sim.nodes with a main()."""
    names = [f'tendon_robot_sim.nodes.{info.name}'
             for info in pkgutil.iter_modules(tendon_robot_sim.nodes.__path__)]
    return [name for name in names if hasattr(importlib.import_module(name), 'main')]


def test_the_walk_finds_the_commands_and_nodes_that_start_ros():
    assert {'launch', 'record', 'replay', 'demo', 'view'} <= set(ros_commands())
    assert not {'statics', 'simulate', 'validate'} & set(ros_commands())
    assert len(node_modules()) >= 5
    assert set(ros_commands()) <= set(ROS_ARGUMENTS), (
        'a command that starts ROS needs its arguments in ROS_ARGUMENTS')


@pytest.fixture
def ros_refused(monkeypatch):
    """Fail the test if rclpy starts, or any child process (the launcher's nodes)."""
    def started(*args, **kwargs):
        raise AssertionError('ROS started (or a process) before the environment was checked')
    monkeypatch.setattr(rclpy, 'init', started)
    monkeypatch.setattr(subprocess, 'Popen', started)


@pytest.mark.parametrize('name, value', BAD, ids=BAD_IDS)
@pytest.mark.parametrize('command', sorted(ROS_ARGUMENTS))
def test_every_command_that_starts_ros_refuses_a_bad_variable_in_one_line_with_2(
        command, name, value, ros_refused, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(name, value)
    for arguments in ROS_ARGUMENTS[command]:
        code = cli.main([command, *(word.format(tmp=tmp_path) for word in arguments)])
        err = capsys.readouterr().err
        assert code == 2, f'{command} {arguments}: exit {code}, {err}'
        assert err.startswith(f'tendon-robot-sim {command}: error: environment variable '
                              f'{name}={value!r}: must be ') and err.count('\n') == 1, err
        assert list(tmp_path.iterdir()) == [], 'nothing is made'


@pytest.mark.parametrize('name, value', BAD, ids=BAD_IDS)
@pytest.mark.parametrize('module', node_modules(), ids=lambda m: m.rpartition('.')[2])
def test_every_node_refuses_a_bad_variable_in_one_line_with_2(
        module, name, value, ros_refused, monkeypatch, capsys):
    monkeypatch.setenv(name, value)
    node_name = module.rpartition('.')[2].removesuffix('_node')
    assert importlib.import_module(module).main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith('[FATAL] [') and err.count('\n') == 1, err
    assert (f'[{node_name}]: cannot start: environment variable {name}={value!r}: must be '
            in err), err


# ---------------------------------------------------------------- for real, as the issue ran them

def run(argv: list[str], tmp_path: Path, **environ) -> subprocess.CompletedProcess:
    env = dict(os.environ, **environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, cwd=tmp_path, env=env)


@pytest.mark.parametrize('argv, name, value', [
    (['-m', 'tendon_robot_sim.cli', 'record', 'bag'], 'ROS_DOMAIN_ID', 'abc'),
    (['-m', 'tendon_robot_sim.cli', 'launch', 'sim', '--arg', 'rviz:=false'],
     'ROS_DOMAIN_ID', '300'),
    (['-m', 'tendon_robot_sim.cli', 'view', '--port', '0'], 'RMW_IMPLEMENTATION',
     'rmw_nosuch_cpp'),
    (['-m', 'tendon_robot_sim.nodes.simulator_node'], 'ROS_DOMAIN_ID', 'abc'),
    # rcl ends the process as it loads (exit 102): checked before the node imports rclpy
    (['-m', 'tendon_robot_sim.nodes.tension_controller_node'], 'RMW_IMPLEMENTATION',
     'rmw_nosuch_cpp')],
    ids=['record', 'launch', 'view', 'simulator node', 'controller node'])
def test_a_bad_environment_ends_a_real_process_in_one_line(argv, name, value, tmp_path):
    result = run(argv, tmp_path, **{name: value})
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f'{name}={value!r}' in lines[0], result.stderr
    assert list(tmp_path.iterdir()) == [] and 'started' not in result.stdout, result.stdout


def test_a_command_that_does_not_start_ros_is_not_stopped_by_a_bad_ros_environment(tmp_path):
    # every command loaded rclpy with its parser, and rcl ended statics with exit 102
    result = run(['-m', 'tendon_robot_sim.cli', 'statics', '--tensions', '1,0,0,0'], tmp_path,
                 RMW_IMPLEMENTATION='rmw_nosuch_cpp', ROS_DOMAIN_ID='abc')
    assert result.returncode == 0 and 'tip position' in result.stdout, result.stderr
