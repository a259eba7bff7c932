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
Local launcher: start a stack of :mod:`tendon_robot_sim.stack` as subprocesses.

For machines without ``ros2 launch``. Each node becomes one process:

* our nodes run as the installed executable (``lib/tendon_robot_sim/<exe>``)
  when the package is in the ament index (a sourced colcon install), otherwise
  as ``python -m <module>`` from this source tree;
* other packages' nodes (``robot_state_publisher``, ``rviz2``) run from their
  ament install; when they are not installed they are skipped with a note.

Every node gets ``--ros-args -r __node:=<name> [-r __ns:=<ns>]``, its parameter
files and one generated parameter file (launch-argument values, file contents
such as ``robot_description``, ``--param`` overrides), in that order, so later
values win as with ``ros2 launch``. The generated files go into a temporary folder
removed when the launcher stops, or into a folder the caller names (``params_dir``),
where they stay: the command lines of :meth:`StackLauncher.describe` then run by hand.

Managed (lifecycle) nodes are brought to active as ``ros2 launch`` does with
``ChangeState`` events: through their ``change_state`` service (configure, then
activate), unless the launch argument ``autostart`` is false.

Children run in their own sessions; on SIGINT, SIGTERM or SIGHUP (the terminal
closing; not under ``nohup``) the launcher sends SIGTERM to them (our nodes take it as
Ctrl-C; unlike SIGINT it also ends a node still starting Python quietly), waits for
them to exit, and escalates to SIGKILL after a timeout. If one node exits on
its own, the others are stopped too. On Linux each child also gets SIGTERM from the
kernel when the launcher dies without a chance to stop them (SIGKILL): no node lives
on as an orphan still driving a port.
"""

from __future__ import annotations

from dataclasses import dataclass
import importlib
import os
from pathlib import Path
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, Mapping, Sequence

import tendon_robot_sim
from tendon_robot_sim.files.outputs import make_folder, write_output
from tendon_robot_sim.files.yaml_loader import (DuplicateKeyError, read_yaml, yaml_value,
                                                YamlFileError)
from tendon_robot_sim.models.contact.world import load_world, WorldError
from tendon_robot_sim.models.description import RobotDescriptionError, TENDON_ROBOT
from tendon_robot_sim.models.registry import (check_mode, load_any_description,
                                              ModelConfigurationError, ModelOptions,
                                              world_refusal)
from tendon_robot_sim.models.sim_model import InputError
from tendon_robot_sim.parallel import ends_with_us
from tendon_robot_sim.stack import (AUTOSTART, FromArguments, get_stack, NodeEntry, ROBOT,
                                    robot_kind, typed_value, WORLD)
import yaml

# Seconds a node gets to exit after SIGTERM, before SIGKILL.
STOP_TIMEOUT = 5.0
POLL_PERIOD = 0.1   # s


class LaunchError(Exception):
    """The stack cannot be started as asked; the message says why."""


@dataclass
class NodeProcess:
    """
    One node to run: its entry, command line and, once started, its process.

    ``parameters``: what its generated parameter file holds (launch-argument values, file
    contents, ``--param``), written to ``parameter_file``; None for a node without one.
    """

    entry: NodeEntry
    command: list[str]
    parameters: dict | None = None
    parameter_file: str | None = None
    process: subprocess.Popen | None = None


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    """Split ``NAME:=VALUE``; LaunchError names ``what`` and the expected form."""
    name, sep, value = text.partition(':=')
    if not sep or not name:
        raise LaunchError(f'{what} {text!r}: expected NAME:=VALUE')
    return name, value


def parameter_table(entry: NodeEntry) -> dict | None:
    """Return {name: Param} of one of our nodes (its module's PARAMS); None for others."""
    if entry.module is None:
        return None
    module = importlib.import_module(entry.module)
    return {param.name: param for param in getattr(module, 'PARAMS', ())}


def _check_together(entry: NodeEntry, values: Mapping) -> None:
    """
    Raise LaunchError for values one of our nodes refuses together (its ``check_parameters``).

    ``values``: every parameter of the node, by name (its defaults included).
    """
    check = getattr(importlib.import_module(entry.module), 'check_parameters', None)
    if check is not None:
        from tendon_robot_sim.ros.parameters import ConfigurationError
        try:
            check(values)
        except ConfigurationError as error:
            raise LaunchError(f'node {entry.name}: {error}') from None


def file_parameters(entry: NodeEntry) -> dict:
    """Return the values the node's parameter files give it (``/**/<node>`` sections)."""
    values = {}
    for shared in entry.parameter_files:
        try:
            data = read_yaml(shared.resolve()) or {}
        except YamlFileError as error:
            raise LaunchError(f'node {entry.name}: parameter file {error}') from None
        for key, section in data.items():
            if key.rpartition('/')[2] in (entry.name, '**') and isinstance(section, dict):
                values.update(section.get('ros__parameters') or {})
    return values


def parameter_yaml(values: Mapping) -> str:
    """Return the text of a generated parameter file: ``values`` for the node given it."""
    return yaml.safe_dump({'/**': {'ros__parameters': dict(values)}})


def _check_robot_and_mode(node: str, values: Mapping) -> None:
    """
    Raise LaunchError unless the robot file loads and the mode suits the robot's kind.

    With a ``world_file``: unless the world loads and the model takes it.
    """
    robot = values.get('robot_file') or ''
    try:
        kind = load_any_description(robot)[0] if robot else TENDON_ROBOT
        mode = check_mode(kind, values['mode']) if 'mode' in values else ''
        if values.get('world_file'):
            description = load_any_description(robot or tendon_robot_sim.default_robot_file())[1]
            options = ModelOptions(statics_model=values.get('statics_model', 'auto'),
                                   integrator=values.get('integrator', 'auto'),
                                   world=load_world(values['world_file']))
            refusal = world_refusal(kind, mode, description, options)
            if refusal:
                raise ModelConfigurationError(f'world_file: {refusal}')
    except (RobotDescriptionError, ModelConfigurationError, WorldError, InputError) as error:
        raise LaunchError(f'node {node}: {error}') from None


def installed_executable(package: str, executable: str) -> Path | None:
    """``<prefix>/lib/<package>/<executable>`` of an ament install (what ``ros2 run`` runs)."""
    try:
        from ament_index_python.packages import get_package_prefix, PackageNotFoundError
    except ImportError:
        return None
    try:
        path = Path(get_package_prefix(package)) / 'lib' / package / executable
    except (PackageNotFoundError, ValueError, LookupError, OSError):
        # OSError: AMENT_PREFIX_PATH unset, i.e. no ROS installation sourced
        return None
    return path if os.access(path, os.X_OK) else None


def _retry(target: str) -> str:
    """How to configure the managed node ``target`` again, with what this machine has."""
    if shutil.which('ros2'):
        return f'retry with `ros2 lifecycle set {target} configure`'
    # the venv of `make setup` (ROS 2 from PyPI wheels) has no ros2 CLI to retry with
    return 'fix what the node logs, then stop this launch (Ctrl-C) and launch again'


class StackLauncher:
    """
    Start, watch and stop the processes of one stack.

    Parameters
    ----------
    stack_name : str
        A key of :data:`tendon_robot_sim.stack.STACKS`.
    arguments : mapping
        Launch argument values (strings, as on the ``ros2 launch`` command line).
    parameters : sequence of str
        ``[NODE:]NAME:=VALUE`` overrides; without ``NODE:`` for every node.
        Values are YAML, as with ``--ros-args -p``.
    stdout, stderr :
        Where the children write (``subprocess`` conventions); default: inherited.
    note : callable
        Receives one-line notes (skipped nodes, exits); default: print to stderr.
    params_dir : path, optional
        Where the generated parameter files are written and kept (created if missing);
        default: a temporary folder, removed by :meth:`stop`.

    """

    def __init__(self, stack_name: str, arguments: Mapping[str, str] | None = None,
                 parameters: Sequence[str] = (), *, stdout=None, stderr=None,
                 note: Callable[[str], None] | None = None,
                 params_dir: str | Path | None = None):
        try:
            self.stack = get_stack(stack_name)
        except KeyError as error:
            raise LaunchError(error.args[0]) from None
        self.stdout, self.stderr = stdout, stderr
        self.note = note or (lambda text: print(f'[launch] {text}', file=sys.stderr))
        self.values = self._argument_values(arguments or {})
        self.overrides = self._parameter_overrides(parameters)
        # {node: {name: value}}: what each of our nodes that runs will have (checked)
        self.parameters: dict[str, dict] = {}
        self._check_parameters()
        self.params_dir = None if params_dir is None else Path(os.path.abspath(params_dir))
        self._tmp = None
        if self.params_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix='tendon_robot_sim_launch_')
        else:
            make_folder(self.params_dir)
        self.processes, self.skipped = self._plan()
        self._stopping = threading.Event()
        self._starters: list[threading.Thread] = []

    # ------------------------------------------------------------------ planning

    def _argument_values(self, arguments: Mapping[str, str]) -> dict:
        values = {a.name: a.default for a in self.stack.arguments}
        for name, text in arguments.items():
            if name not in values:
                raise LaunchError(f'launch argument {name!r}: stack {self.stack.name!r} has '
                                  f'{sorted(values)}')
            values[name] = text
        if values.get(WORLD.name):
            # as the robot file: absolute, and checked before anything starts
            values[WORLD.name] = os.path.abspath(values[WORLD.name])
            try:
                load_world(values[WORLD.name])
            except WorldError as error:
                raise LaunchError(f'launch argument world: {error}') from None
        if values.get(ROBOT.name):
            # the nodes may run elsewhere: a path relative to here, made absolute
            values[ROBOT.name] = os.path.abspath(values[ROBOT.name])
            try:
                load_any_description(values[ROBOT.name])
            except RobotDescriptionError as error:
                raise LaunchError(f'launch argument robot: {error}') from None
        typed = {}
        for argument in self.stack.arguments:
            try:
                typed[argument.name] = typed_value(argument, values[argument.name])
            except ValueError as error:
                raise LaunchError(str(error)) from None
        refusal = self.stack.refusal(typed, arguments)
        if refusal:
            raise LaunchError(refusal)
        return typed

    def _parameter_overrides(self, parameters: Sequence[str]) -> dict[str | None, dict]:
        names = {entry.name for entry in self.stack.nodes}
        overrides: dict[str | None, dict] = {}
        for text in parameters:
            key, value = parse_assignment(text, 'parameter')
            node, sep, name = key.rpartition(':')
            if sep and node not in names:
                raise LaunchError(f'parameter {text!r}: no node {node!r} in stack '
                                  f'{self.stack.name!r} (nodes: {sorted(names)})')
            try:   # YAML as rcl reads it: 1e9 is a number
                parsed = yaml_value(value, f'parameter {text!r}') if value else ''
            except DuplicateKeyError as error:
                raise LaunchError(str(error)) from None
            except YamlFileError:
                parsed = value
            overrides.setdefault(node or None, {})[name] = parsed
        return overrides

    def _check_parameters(self) -> None:
        """
        Check every parameter of every node that will run, before anything starts.

        What each node would refuse when it starts (parameters of its table: names, types,
        ranges, choices; its robot file; the model mode of the robot's kind; what it refuses
        together, its module's ``check_parameters``), from its
        parameter files, the launch arguments and ``--param``, is refused here as one
        LaunchError: a stack never starts half. A double takes an integer (the value
        written for the node is the double).
        """
        # rclpy with the node modules, here: loading rcl ends the process (exit 102) when
        # RMW_IMPLEMENTATION names no installed middleware, and a command that only builds
        # its parser (every one: `launch` is one of them) must not load it
        from tendon_robot_sim.ros.parameters import ConfigurationError

        kind = robot_kind(self.values.get(ROBOT.name, ''))
        given = self.overrides.get(None, {})
        unknown = set(given)
        for entry in self.stack.nodes:
            table = parameter_table(entry)
            if table is None or entry.skip_reason(self.values, kind):
                continue
            unknown -= set(table)
            values = file_parameters(entry)
            values.update(next((s for s in entry.resolved_parameters(self._value)
                                if isinstance(s, dict)), {}))
            own = self.overrides.get(entry.name, {})
            for name in own:
                if name not in table:
                    raise LaunchError(f'parameter {entry.name}:{name}: node {entry.name} has '
                                      f'no such parameter; it has {sorted(table)}')
            values.update({k: v for k, v in given.items() if k in table}, **own)
            for name, value in values.items():
                try:
                    checked = table[name].check(value) if name in table else value
                except ConfigurationError as error:
                    raise LaunchError(f'node {entry.name}: {error}') from None
                for source in (given, own):   # the node gets the checked value
                    if name in source:
                        source[name] = checked
                values[name] = checked
            _check_robot_and_mode(entry.name, values)
            self.parameters[entry.name] = {
                **{name: param.default for name, param in table.items()}, **values}
            _check_together(entry, self.parameters[entry.name])
        if unknown:
            raise LaunchError(f'parameter {sorted(unknown)[0]}: no node of stack '
                              f'{self.stack.name!r} has it')

    def _plan(self) -> tuple[list[NodeProcess], list[str]]:
        processes, skipped = [], []
        kind = robot_kind(self.values.get('robot', ''))
        for entry in self.stack.nodes:
            reason = entry.skip_reason(self.values, kind)
            if reason:
                note = f'{entry.name}: skipped ({reason})'
                if note not in skipped:    # the RViz of each robot kind: one note
                    skipped.append(note)
                continue
            program = self._program(entry)
            if program is None:
                skipped.append(f'{entry.name}: skipped, executable {entry.executable!r} of '
                               f'package {entry.package!r} not found (ROS not sourced or the '
                               'package not installed)')
                continue
            sources = entry.resolved_parameters(self._value)
            values = self._generated_parameters(entry, sources)
            generated = self._parameter_file(entry.name, values) if values else None
            processes.append(NodeProcess(
                entry, program + entry.resolved_arguments(self._value)
                + self._ros_arguments(entry, sources, generated), values or None, generated))
        return processes, skipped

    def _value(self, value: FromArguments):
        return value.of(self.values)

    def _program(self, entry: NodeEntry) -> list[str] | None:
        installed = installed_executable(entry.package, entry.executable)
        if installed is not None:
            return [str(installed)]
        if entry.module is not None:
            return [sys.executable, '-m', entry.module]
        return None

    def _namespace(self) -> str:
        namespace = self.values.get('namespace', '').strip('/')
        return f'/{namespace}' if namespace else ''

    def _generated_parameters(self, entry: NodeEntry, sources: list) -> dict:
        """Return the values of the generated file: launch arguments, file contents, --param."""
        values = dict(next((s for s in sources if isinstance(s, dict)), {}))
        values.update(self.overrides.get(None, {}))
        values.update(self.overrides.get(entry.name, {}))
        return values

    def _ros_arguments(self, entry: NodeEntry, sources: list,
                       generated: str | None) -> list[str]:
        args = ['--ros-args', '-r', f'__node:={entry.name}']
        if self._namespace():
            args += ['-r', f'__ns:={self._namespace()}']
        for path in sources:
            if isinstance(path, str):
                args += ['--params-file', path]
        if generated is not None:
            args += ['--params-file', generated]
        for old, new in entry.remappings:
            args += ['-r', f'{old}:={new}']
        return args

    def _parameter_file(self, node: str, values: dict) -> str:
        folder = self.params_dir or Path(self._tmp.name)
        path = folder / f'{node}.yaml'
        write_output(path, parameter_yaml(values))
        return str(path)

    # ------------------------------------------------------------------ running

    def log_into(self, log) -> None:
        """
        Send the nodes' output and the notes to the open file ``log``, from :meth:`start` on.

        For a command that checks its stack (constructing the launcher) before it writes
        anything, its log included.
        """
        self.stdout, self.stderr = log, subprocess.STDOUT
        self.note = lambda text: print(f'[launch] {text}', file=log, flush=True)

    def start(self) -> None:
        """Start every planned node; notes name the skipped ones."""
        for text in self.skipped:
            self.note(text)
        # `python -m` runs this source tree's modules, wherever the launcher runs from
        source_root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
        from_source = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (source_root, os.environ.get('PYTHONPATH', '')) if p))
        for node in self.processes:
            env = from_source if node.command[0] == sys.executable else None
            node.process = subprocess.Popen(node.command, env=env, stdout=self.stdout,
                                            stderr=self.stderr, start_new_session=True,
                                            preexec_fn=ends_with_us(signal.SIGTERM))
            self.note(f'{node.entry.name}: started (pid {node.process.pid})')
        for node in self._autostarted():
            starter = threading.Thread(target=self._bring_to_active, args=(node.entry,),
                                       daemon=True)
            starter.start()
            self._starters.append(starter)

    def _autostarted(self) -> list[NodeProcess]:
        """Return the managed nodes to bring to active (all of them, unless autostart:=false)."""
        if not self.values.get(AUTOSTART.name, True):
            return []
        return [n for n in self.processes if n.entry.lifecycle]

    def _bring_to_active(self, entry: NodeEntry) -> None:
        from tendon_robot_sim.ros.lifecycle import bring_to_active
        target = f'{self._namespace()}/{entry.name}'
        problem = bring_to_active(target, cancelled=self._stopping.is_set)
        if self._stopping.is_set():
            return
        self.note(f'{entry.name}: ' + (f'not active: {problem}; {_retry(target)}' if problem
                                       else 'active'))

    def running(self) -> list[NodeProcess]:
        return [n for n in self.processes if n.process is not None and n.process.poll() is None]

    def exited(self) -> list[NodeProcess]:
        return [n for n in self.processes
                if n.process is not None and n.process.poll() is not None]

    def stop(self, timeout: float = STOP_TIMEOUT) -> int:
        """
        Stop every node (SIGTERM, then SIGKILL); 0 if all exited cleanly.

        SIGTERM, not SIGINT: every node of ours takes it as it takes Ctrl-C (the bridge
        leaves the hardware safe), and it also ends a node that is still starting Python
        (its site module, the ROS wheels' bootstrap, before any of our code): SIGINT there
        ended in "Fatal Python error" and a traceback when a stack was stopped at once.
        """
        self._stopping.set()
        for starter in self._starters:
            starter.join(timeout)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            alive = self.running()
            if not alive:
                break
            for node in alive:
                node.process.send_signal(sig)
            deadline = time.monotonic() + timeout
            while self.running() and time.monotonic() < deadline:
                time.sleep(POLL_PERIOD)
            for node in alive:
                if node.process.poll() is None and sig != signal.SIGKILL:
                    self.note(f'{node.entry.name}: still running {timeout:g} s after '
                              f'{signal.Signals(sig).name}')
        if self._tmp is not None:
            self._tmp.cleanup()
        # A node stopped by our SIGTERM exits 0, or with -SIGTERM while starting.
        clean = (0, -signal.SIGINT, -signal.SIGTERM)
        failed = [n for n in self.processes
                  if n.process is not None and n.process.wait() not in clean]
        for node in failed:
            self.note(f'{node.entry.name}: stopped with exit code {node.process.returncode}')
        return 1 if failed else 0

    def run(self) -> int:
        """Start, wait for Ctrl-C/SIGTERM or for a node to exit, stop everything."""
        requested = []

        def on_signal(signum, frame):
            requested.append(signum)

        previous = {sig: signal.signal(sig, on_signal)
                    for sig in tendon_robot_sim.stop_signals()}
        failed = False
        try:
            self.start()
            if not self.processes:
                self.note('nothing to run')
                return 1
            while not requested and not self.exited():
                time.sleep(POLL_PERIOD)
            for node in self.exited():
                code = node.process.returncode
                self.note(f'{node.entry.name}: exited with code {code}; stopping the stack')
                failed = failed or code != 0
        finally:
            # also when starting failed half-way: nothing is left running
            code = self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return 1 if failed else code

    def __enter__(self) -> 'StackLauncher':
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def describe(self) -> str:
        """
        Return the planned command lines and skipped nodes, one per line.

        Each line runs by hand. Without ``params_dir`` the generated parameter files are in
        a temporary folder that goes with the launcher: a line names its file by its bare
        name instead, with the file's YAML beneath it as comments.
        """
        lines = []
        for node in self.processes:
            if node.parameter_file is None or self.params_dir is not None:
                lines.append(shlex.join(node.command))
                continue
            name = Path(node.parameter_file).name
            lines.append(shlex.join(name if word == node.parameter_file else word
                                    for word in node.command))
            lines.append(f'# {name}, not written (--params-dir DIR writes it and names it in '
                         'the line):')
            lines += [f'#   {line}' for line in parameter_yaml(node.parameters).splitlines()]
        lines += [f'# {n.entry.name}: managed node, brought to active (configure, activate) '
                  f'through {self._namespace()}/{n.entry.name}/change_state'
                  for n in self._autostarted()]
        return '\n'.join(lines + [f'# {text}' for text in self.skipped])
