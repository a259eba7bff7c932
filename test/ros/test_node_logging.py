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
The class "a node's logging": every logging path of every node, at every severity, in any order.

rclpy refuses a call site whose severity changes (``ValueError: Logger severity cannot be
changed between calls``): one rejected wrench (WARN) and then a divergence (ERROR), both
through the one call of ``ros.throttle.FaultWarnings``, took the simulator down, and with it
``launch sim``. A node logs in two ways, and both are walked here:

* a direct call of a severity's method (``self.get_logger().info(...)``): one severity per
  call site by construction. The source walk below finds every logging call of every module
  that uses rclpy and allows no other form: no logger method taken as a value (passed on,
  stored, called later with whatever comes), no ``logger.log(text, severity)``, no rclpy
  filter (its throttle is per call site too);
* a severity chosen at run time: ``ros.throttle.log_at``, through which ``FaultWarnings`` logs,
  and the Python loggers of the drivers that the hardware bridge forwards. Every node class of
  ``tendon_robot_sim.nodes`` is built (real rclpy over DDS) and every such path of it gets every
  ordered pair of severities; /rosout must carry each line at its severity.
"""

import ast
import importlib
import inspect
from itertools import product
import logging
import os
import pkgutil
import subprocess
import sys
import time

from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import Log
import rclpy
from rclpy.logging import LoggingSeverity
from rclpy.node import Node
from rclpy.parameter import Parameter
from ros_helpers import Probe, ROOT, spinning, spinning_alone, TIMEOUT, wait_for
from std_msgs.msg import Header
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot
import tendon_robot_sim.nodes
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.throttle import FaultWarnings, log_at

PACKAGE = ROOT / 'tendon_robot_sim'
SEVERITIES = (LoggingSeverity.DEBUG, LoggingSeverity.INFO, LoggingSeverity.WARN,
              LoggingSeverity.ERROR, LoggingSeverity.FATAL)
# Every ordered pair of severities, each pair one after the other: the first severity a call
# site sees, then another (or the same) one.
PAIRS = list(product(SEVERITIES, repeat=2))
LOGGER_METHODS = {'debug', 'info', 'warn', 'warning', 'error', 'fatal', 'log'}
RCLPY_FILTERS = {'throttle_duration_sec', 'throttle_time_source_type', 'skip_first', 'once'}


# ---------------------------------------------------------------- the helper itself

def test_log_at_takes_any_severity_after_any_other(capfd):
    logger = rclpy.logging.get_logger('log_at_walk')
    logger.set_level(LoggingSeverity.DEBUG)
    for first, then in PAIRS:
        log_at(logger, first, f'{first.name} then')
        log_at(logger, then, f'{then.name} after {first.name}')
    err = capfd.readouterr().err
    for first, then in PAIRS:
        assert f'[{then.name}] ' in err and f'{then.name} after {first.name}' in err


def test_a_fault_log_takes_any_severity_after_any_other(capfd):
    logger = rclpy.logging.get_logger('fault_log_walk')
    logger.set_level(LoggingSeverity.DEBUG)
    faults = FaultWarnings(logger, 60.0)
    for index, (first, then) in enumerate(PAIRS):
        assert faults(f'fault {index}', f'fault {index} at {first.name}', first)
        assert faults(f'other fault {index}', f'other fault {index} at {then.name}', then)
        assert not faults(f'fault {index}', 'the same fault again, throttled', then)
    err = capfd.readouterr().err
    assert 'throttled' not in err
    for index, (first, then) in enumerate(PAIRS):
        assert f'fault {index} at {first.name}' in err
        assert f'other fault {index} at {then.name}' in err


# ---------------------------------------------------------------- every call site, from the code

def rclpy_modules():
    """(path, tree) of every module of the package that imports rclpy."""
    for path in sorted(PACKAGE.rglob('*.py')):
        tree = ast.parse(path.read_text(), str(path))
        names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names]
        names += [node.module or '' for node in ast.walk(tree)
                  if isinstance(node, ast.ImportFrom)]
        if any(name == 'rclpy' or name.startswith('rclpy.') for name in names):
            yield path, tree


def _name(expr) -> str:
    return expr.id if isinstance(expr, ast.Name) else (
        expr.attr if isinstance(expr, ast.Attribute) else '')


def _is_logger(expr, loggers: set[str]) -> bool:
    """Return True if ``expr`` is (by its form or its name) a logger."""
    if isinstance(expr, ast.Call):
        return _name(expr.func) in ('get_logger', 'get_child')
    name = _name(expr)
    return name in loggers or 'logger' in name.lower()


def logging_faults(tree) -> list[tuple[int, str]]:
    """(line, what) of every logging call in ``tree`` that is not one severity's direct call."""
    parents = {child: parent for parent in ast.walk(tree)
               for child in ast.iter_child_nodes(parent)}
    loggers = {_name(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and _is_logger(node.value, set()) for target in node.targets}
    faults = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr in LOGGER_METHODS
                and _is_logger(node.value, loggers)):
            continue
        call = parents.get(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            faults.append((node.lineno, f'the logger method {node.attr} taken as a value'))
        elif node.attr == 'log':
            faults.append((node.lineno, 'log(text, severity): one call site, several severities'))
        elif RCLPY_FILTERS & {keyword.arg for keyword in call.keywords}:
            faults.append((node.lineno, 'an rclpy filter (per call site, not per fault)'))
    return faults


def test_the_source_walk_finds_what_crashed_a_node():
    # the form that crashed the simulator (a bound method passed on, called with a severity
    # other than the one its call site saw first), and the other forms of the class
    source = """
class Node:
    def setup(self):
        self.faults = FaultWarnings(self.get_logger().warning, 2.0)
        self.faults('diverged', 'text', log=self.get_logger().error)
        log = self.get_logger()
        say = log.info
        log.log('text', severity)
        self.node_logger.warning('text', throttle_duration_sec=1.0)
        self.get_logger().warning('fine: one severity here')
"""
    assert sorted(line for line, _ in logging_faults(ast.parse(source))) == [4, 5, 7, 8, 9]


def test_every_logging_call_of_every_node_has_one_severity():
    modules = dict(rclpy_modules())
    assert PACKAGE / 'nodes' / 'simulator_node.py' in modules      # the walk finds them
    assert PACKAGE / 'ros' / 'throttle.py' in modules
    faults = [f'{path.relative_to(ROOT)}:{line}: {what}' for path, tree in modules.items()
              for line, what in logging_faults(tree)]
    assert not faults, ('log a severity chosen at run time with ros.throttle.log_at (or a '
                        'FaultWarnings): ' + '; '.join(faults))


# ---------------------------------------------------------------- every node, at run time

def node_classes() -> list[type]:
    """Every rclpy node class of tendon_robot_sim.nodes, found from the package."""
    classes = []
    for module_info in pkgutil.iter_modules(tendon_robot_sim.nodes.__path__):
        module = importlib.import_module(f'tendon_robot_sim.nodes.{module_info.name}')
        classes += [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                    if issubclass(cls, Node) and cls.__module__ == module.__name__]
    return classes


def fault_logs(node) -> list[FaultWarnings]:
    """Return the FaultWarnings of ``node``: its attributes, and theirs (its page, its core)."""
    found, seen = [], set()
    pending = [(node, 0)]
    while pending:
        owner, depth = pending.pop()
        for value in vars(owner).values() if hasattr(owner, '__dict__') else ():
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, FaultWarnings):
                found.append(value)
            elif depth < 2 and type(value).__module__.startswith('tendon_robot_sim.'):
                pending.append((value, depth + 1))
    return found


def forwarded_loggers() -> list[logging.Logger]:
    """Python loggers of the package whose records a handler of the package forwards."""
    manager = logging.Logger.manager
    return [logger for name, logger in sorted(manager.loggerDict.items())
            if name.startswith('tendon_robot_sim') and isinstance(logger, logging.Logger)
            and any(type(h).__module__.startswith('tendon_robot_sim.') for h in logger.handlers)]


def test_every_node_logs_every_severity_after_any_other(robot_file):
    classes = node_classes()
    assert {cls.__name__ for cls in classes} >= {'SimulatorNode', 'TensionControllerNode',
                                                 'DisplacementControllerNode',
                                                 'HardwareBridgeNode', 'ViewNode'}
    context = rclpy.Context()
    rclpy.init(context=context)
    overrides = [Parameter('robot_file', value=str(robot_file)),
                 Parameter('warning_throttle_period', value=0.0),
                 Parameter('port', value=0)]       # the view: any free port
    nodes = []
    try:
        for cls in classes:
            nodes.append(cls(context=context, namespace='logging_walk',
                             parameter_overrides=overrides))
    except BaseException:
        for node in nodes:
            node.destroy_node()
        context.try_shutdown()
        raise
    probe = Probe(namespace='logging_walk', context=context)
    # /rosout lines expire 10 s after they were written (its QoS' lifespan), in a reader's
    # cache too. A probe spun with the nodes takes one line per turn of their executor, and
    # at load 12 the turns (the simulator's steps among them) were so slow that 221 of the
    # walk's 250 lines expired unread: the probe spins in a thread of its own.
    expected = []       # (logger name, level, text) that /rosout must carry
    with spinning(*nodes, context=context), spinning_alone(probe, context=context):
        # /rosout keeps a line 10 s (its QoS' lifespan): a walk logged before the probe
        # matched every node's /rosout writer expired unseen once on a loaded machine. The
        # walk starts when a line of each node has come.
        def ready() -> bool:
            names = {log.name for log in probe.logs if log.msg == 'logging walk: ready'}
            for node in nodes:
                if node.get_logger().name not in names:
                    node.get_logger().info('logging walk: ready')
            return len(names) == len(nodes)
        wait_for(ready, 'a line of every node on /rosout')
        for node in nodes:
            node.get_logger().set_level(LoggingSeverity.DEBUG)
            name = node.get_logger().name
            for number, faults in enumerate(fault_logs(node)):
                for index, pair in enumerate(PAIRS):
                    for order, severity in enumerate(pair):
                        text = f'walk {number}.{index}.{order} at {severity.name}'
                        assert faults(text, text, severity)
                        expected.append((name, severity, text))
        driver = set()       # the drivers' records, which the bridge forwards to its logger
        for python_logger in forwarded_loggers():
            for index, pair in enumerate(product((logging.INFO, logging.WARNING, logging.ERROR,
                                                  logging.CRITICAL), repeat=2)):
                for order, level in enumerate(pair):
                    text = f'{python_logger.name} walk {index}.{order}'
                    python_logger.log(level, text)
                    driver.add(text)
        assert {name for name, _, _ in expected} >= {
            'logging_walk.simulator', 'logging_walk.tension_controller',
            'logging_walk.displacement_controller', 'logging_walk.hardware_bridge'}
        wanted = set(expected)
        try:
            wait_for(lambda: wanted <= {(log.name, log.level, log.msg) for log in probe.logs},
                     'every line on /rosout at its severity')
        except AssertionError as error:
            got = {(log.name, log.level, log.msg) for log in probe.logs}
            missing = sorted(wanted - got)
            texts = {log.msg: (log.name, log.level) for log in probe.logs}
            raise AssertionError(
                f'{error}; {len(missing)} of {len(wanted)} missing, {len(probe.logs)} lines '
                f'got; first missing {missing[:3]}, as got: '
                f'{[texts.get(text) for _, _, text in missing[:3]]}') from None
        wait_for(lambda: driver <= {log.msg for log in probe.logs
                                    if log.name == 'logging_walk.hardware_bridge'},
                 "every driver record through the bridge's logger")


def test_a_rejected_wrench_and_a_divergence_in_any_order_leave_the_simulator_running(
        robot_file, tmp_path):
    """The issue's case on a node process, as ``launch sim`` runs it: WARN, ERROR, WARN, ..."""
    # A step 10 times the stable one: the rod diverges, the node logs an ERROR and resets,
    # again and again; a wrench in an unknown frame is a WARN each time (no throttle).
    unstable_dt = 10.0 * TendonSimulator(load_robot(robot_file)).stable_dt
    log = tmp_path / 'simulator.log'
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    with open(log, 'w') as out:
        process = subprocess.Popen(
            [sys.executable, '-m', 'tendon_robot_sim.nodes.simulator_node', '--ros-args',
             '-r', '__ns:=/any_order', '-p', f'robot_file:={robot_file}', '-p',
             f'dt:={unstable_dt!r}', '-p', 'warning_throttle_period:=0.0'],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        context = rclpy.Context()
        rclpy.init(context=context)
        probe = Probe(namespace='any_order', context=context)
        wrench_pub = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                            topics.TIP_WRENCH.qos)
        with spinning(probe, context=context):
            def levels() -> list[int]:
                """Return the levels of the simulator's rejections and divergences, in order."""
                assert process.poll() is None, log.read_text()
                return [entry.level for entry in probe.logs if entry.name == 'any_order.simulator'
                        and entry.level in (Log.WARN, Log.ERROR)]

            def both_orders() -> bool:
                wrench_pub.publish(WrenchStamped(header=Header(frame_id='nope')))
                time.sleep(0.05)
                seen = levels()
                return {(Log.WARN, Log.ERROR), (Log.ERROR, Log.WARN)} <= set(zip(seen, seen[1:]))
            wait_for(both_orders, 'a rejection after a divergence and a divergence after a '
                     'rejection')
            since = time.monotonic()
            wait_for(lambda: len(probe.since('tip/pose', since)) >= 3 and process.poll() is None,
                     'the simulator publishing on')
    finally:
        process.terminate()
        try:
            process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    output = log.read_text()
    assert 'Traceback' not in output and 'cannot be changed' not in output, output
