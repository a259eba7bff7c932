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

"""Helpers of the ROS node tests: a probe node that records every topic, waits, service calls."""

from contextlib import contextmanager
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import Log
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import qos_profile_rosout_default
from sensor_msgs.msg import JointState
import tendon_robot_sim
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.spinner import BackgroundSpinner
import waiting
from waiting import TIMEOUT
import yaml

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent   # the source tree
MAX_TENSION = 5.0       # N, of the tendons of small_robot_dict()


def small_robot_dict() -> dict:
    """Return the default robot with 5 vertebrae, 10 elements and 5 N tendons: fast to simulate."""
    data = load_robot(default_robot_file()).to_dict()
    data['rod']['elements'] = 10
    data['vertebrae'] = {'positions': [0.05, 0.10, 0.15, 0.20, 0.25], 'mass': 0.002}
    for tendon in data['tendons']:
        tendon['max_tension'] = MAX_TENSION
    return data


def write_small_robot(directory: Path) -> Path:
    """small_robot_dict() as a robot file in ``directory``."""
    path = directory / 'small_robot.yaml'
    path.write_text(yaml.safe_dump(small_robot_dict()))
    return path


def stamp_seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class Probe(Node):
    """Publishes commands and setpoints; keeps everything it receives, with receive times."""

    def __init__(self, namespace: str = '', **kwargs):
        super().__init__('probe', namespace=namespace, **kwargs)
        self.received = {t.name: [] for t in topics.TOPICS}
        for topic in topics.TOPICS:
            self.create_subscription(topic.msg_type, topic.name, self._keeper(topic.name),
                                     topic.qos)
        self.logs = []
        self.create_subscription(Log, '/rosout', self.logs.append, qos_profile_rosout_default)
        self.command_pub = self.create_publisher(
            JointState, topics.TENDON_COMMAND.name, topics.COMMAND_QOS)
        self.setpoint_pub = self.create_publisher(
            JointState, topics.TENDON_SETPOINT.name, topics.COMMAND_QOS)

    def _keeper(self, name):
        def keep(msg):
            self.received[name].append((time.monotonic(), msg))
        return keep

    def latest(self, name):
        return self.received[name][-1][1] if self.received[name] else None

    def since(self, name, wall_time):
        return [msg for t, msg in self.received[name] if t > wall_time]

    def sim_time(self) -> float:
        """Latest simulated time seen on /clock [s]."""
        clock = self.latest('/clock')
        return stamp_seconds(clock.clock) if clock is not None else 0.0


def call(node: Node, srv_type, name: str, request, timeout: float = TIMEOUT,
         again_after: float | None = None):
    """
    Call the service ``name`` from ``node`` (which another thread spins); its response.

    ``again_after`` [s]: send the request again when no answer came for that long. Only for
    a query (get_state): a request sent before the server has matched this client is lost,
    as ``ros.lifecycle.bring_to_active`` knows too.
    """
    client = node.create_client(srv_type, name)
    try:
        assert client.wait_for_service(timeout_sec=timeout), f'service {name} not available'
        sent = [time.monotonic(), client.call_async(request)]

        def pause() -> None:
            if again_after is not None and time.monotonic() - sent[0] > again_after:
                client.remove_pending_request(sent[1])
                sent[:] = [time.monotonic(), client.call_async(request)]
            time.sleep(0.02)
        waiting.wait_for(lambda: sent[1].done(), f'response of {name}', timeout, between=pause)
        return sent[1].result()
    finally:
        node.destroy_client(client)


def logs_containing(probe: Probe, logger: str, text: str, level=Log.WARN) -> list:
    """Return what ``probe`` got on /rosout from ``logger`` at ``level`` containing ``text``."""
    return [log for log in probe.logs
            if log.name == logger and log.level == level and text in log.msg]


def wait_for(condition, what: str, timeout: float = TIMEOUT):
    """
    waiting.wait_for, polling every 20 ms.

    The condition runs in the test's thread and takes the GIL from the executor thread that
    spins the nodes, so the node tests poll four times less often than the device tests.
    """
    return waiting.wait_for(condition, what, timeout, period=0.02)


def wait_in_simulated_time(condition, what: str, sim_time, bound: float, detail=None):
    """
    wait_for ``condition`` within ``bound`` seconds of simulated time, read by ``sim_time()``.

    A settling or a loop promises its result in simulated time; beside other work a
    simulation runs many times slower than the wall clock (the friction robot's dynamics: 0.44x
    real time quiet), so the wall clock only guards against a hang (COMMAND_TIMEOUT). A
    failure says the simulated time spent and ``detail()``.
    """
    start = sim_time()

    def failure(why: str) -> AssertionError:
        return AssertionError(f'{what}: {why}, {sim_time() - start:.3f} s simulated'
                              + (f'; {detail()}' if detail is not None else ''))

    def check():
        value = condition()
        if not value and sim_time() - start > bound:
            raise failure(f'not within {bound:g} simulated s')
        return value
    try:
        return wait_for(check, what, timeout=waiting.COMMAND_TIMEOUT)
    except AssertionError as error:
        if not str(error).startswith('timed out'):
            raise
        raise failure(f'not within {waiting.COMMAND_TIMEOUT:g} s of wall clock') from None


def warning_containing(probe: Probe, logger: str, text: str, level=Log.WARN):
    return wait_for(lambda: logs_containing(probe, logger, text, level),
                    f'a log from {logger} containing {text!r}')


def spin_until(spinner, condition, what: str, timeout: float = TIMEOUT):
    """
    Spin ``spinner`` (an executor, or a node) in this thread until ``condition()`` is true.

    Returns the condition's value. Nodes a test adds for itself are spun this way, not by a
    fixture's executor thread: destroying a node while another thread's executor waits on
    it can kill that thread.
    """
    if hasattr(spinner, 'spin_once'):
        return waiting.wait_for(condition, what, timeout,
                                between=lambda: spinner.spin_once(timeout_sec=0.02))
    # an executor of the node's own context: rclpy.spin_once's global executor is the
    # default context's, which a test with a context of its own need not have initialised
    executor = SingleThreadedExecutor(context=spinner.context)
    executor.add_node(spinner)
    try:
        return waiting.wait_for(condition, what, timeout,
                                between=lambda: executor.spin_once(timeout_sec=0.02))
    finally:
        executor.remove_node(spinner)
        executor.shutdown()


def launch_stack(log: Path, stack: str, *arguments: str) -> subprocess.Popen:
    """
    Start ``tendon-robot-sim launch STACK ARGUMENTS`` from the source tree, output to ``log``.

    As a user types it in the source tree: relative files resolve against it.
    """
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    with open(log, 'w') as out:
        return subprocess.Popen(
            [sys.executable, '-m', 'tendon_robot_sim.cli', 'launch', stack, *arguments],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def interrupt(process, timeout: float = TIMEOUT) -> int:
    """
    Ctrl-C ``process`` (a subprocess.Popen) as a user would; its exit code.

    A process still running after ``timeout`` seconds is killed and the timeout raised.
    """
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


def spin_for(executor, seconds: float) -> None:
    """Spin ``executor`` in this thread for ``seconds`` of wall time."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.02)


def hole_direction(robot, name: str) -> np.ndarray:
    """Return the unit vector from the axis to the tendon's hole at the base, base frame."""
    tendon = robot.tendons[robot.tendon_index(name)]
    return robot.base.rotation @ np.array([math.cos(tendon.angle), math.sin(tendon.angle), 0.0])


def position(msg) -> np.ndarray:
    p = msg.pose.position
    return np.array([p.x, p.y, p.z])


def construct_alone(make_node):
    """
    ``make_node(context)`` in a context of its own, shut down afterwards.

    For nodes expected to fail in their constructor: their entities are created and
    destroyed away from the context that the tests' executor thread is spinning.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        return make_node(context)
    finally:
        context.try_shutdown()


@contextmanager
def feeding(publish, period: float = 0.02):
    """
    Call ``publish()`` every ``period`` s in a thread of its own while the returned event is set.

    A sensor for the tests of stale feedback: clear the event and it goes silent, set it and
    it speaks again. The thread ends with the block.
    """
    sensing, stopped = threading.Event(), threading.Event()

    def sensor():
        while not stopped.is_set():
            if sensing.is_set():
                publish()
            time.sleep(period)

    feeder = threading.Thread(target=sensor, daemon=True)
    feeder.start()
    try:
        yield sensing
    finally:
        stopped.set()
        feeder.join()


@contextmanager
def spinning(*nodes: Node, context: rclpy.Context | None = None):
    """
    Spin ``nodes`` in a thread of their own while the block runs.

    Then stop the thread, destroy the nodes and shut their context down (the default one: for
    module fixtures that called rclpy.init()).
    """
    executor = SingleThreadedExecutor(context=context)
    for node in nodes:
        executor.add_node(node)
    spinner = BackgroundSpinner(executor)
    try:
        yield executor
    finally:
        spinner.stop()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)


@contextmanager
def spinning_alone(node: Node, context: rclpy.Context | None = None):
    """
    Spin ``node`` in an executor and a thread of its own while the block runs (in another's).

    Then stop the thread and destroy the node, in that order: a node destroyed while an
    executor waits on its entities raised InvalidHandle in that executor's thread. Its own
    thread also serves a probe when the others' callbacks are slow (/rosout lines expire
    unread after 10 s).
    """
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    spinner = BackgroundSpinner(executor)
    try:
        yield node
    finally:
        spinner.stop()
        node.destroy_node()
