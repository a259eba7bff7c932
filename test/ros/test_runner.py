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

"""run_node: the main() of every node, and how it ends."""

import importlib.util
import inspect
import os
import signal
import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from tendon_robot_sim.ros import runner
from tendon_robot_sim.ros.runner import events_executor, run_node, timer_callback
from waiting import TIMEOUT, wait_for


@pytest.fixture(autouse=True)
def no_forced_stop_in_the_test_process(monkeypatch):
    """
    Give the spin loop as long as a loaded machine needs to see the signals these tests send.

    Their nodes run in the pytest process and signal it. When the spin loop has not seen a
    signal ``INTERRUPT_AFTER`` (0.2 s) later, run_node interrupts the main thread and ends
    the process with ``os._exit``; ``FORCED_EXIT_AFTER`` (1 s) later the watchdog does. At
    load 6 on two cores a callback took that long now and then, and the pytest-xdist worker
    was gone ('node down: Not properly terminated'). The forced stop is tested in node
    processes of their own (test/nodes/test_first_start_signals.py).
    """
    monkeypatch.setattr(runner, 'INTERRUPT_AFTER', TIMEOUT)
    monkeypatch.setattr(runner, 'FORCED_EXIT_AFTER', TIMEOUT)


class FailingNode(Node):
    """
    A node that raises ``error`` from a timer callback, after shutting its context down if asked.

    This is what rclpy's executor does when Ctrl-C lands while it builds a wait set or takes a
    message.
    """

    def __init__(self, error: Exception, shut_down_first: bool):
        super().__init__('failing')
        self.error, self.shut_down_first = error, shut_down_first
        self.create_timer(0.01, self._fail)

    def _fail(self):
        if self.shut_down_first:
            rclpy.shutdown(context=self.context)
        raise self.error


@pytest.mark.parametrize('error', [RuntimeError('Unable to convert call argument'),
                                   ValueError('failed to initialize wait set')])
def test_an_error_after_shutdown_is_a_clean_exit(error):
    assert run_node(lambda: FailingNode(error, shut_down_first=True), 'failing', []) == 0
    assert not rclpy.ok()


def test_an_error_while_running_is_raised():
    with pytest.raises(RuntimeError, match='a real bug'):
        run_node(lambda: FailingNode(RuntimeError('a real bug'), shut_down_first=False),
                 'failing', [])
    assert not rclpy.ok()            # shut down all the same


class InterruptedConstruction(Node):
    """
    Shut its context down half-way through its constructor.

    As Ctrl-C does when it lands between rclpy.init() and the first spin: the next entity
    the constructor creates fails.
    """

    def __init__(self):
        super().__init__('interrupted')
        rclpy.shutdown(context=self.context)
        self.create_publisher(String, 'after_ctrl_c', 10)


class BrokenConstruction(Node):
    def __init__(self):
        super().__init__('broken')
        raise RuntimeError('a real bug in a constructor')


def test_ctrl_c_during_construction_is_a_clean_exit():
    assert run_node(InterruptedConstruction, 'interrupted', []) == 0
    assert not rclpy.ok()


HALF_BUILT = """
import sys
from tendon_robot_sim.ros.runner import run_node


class HalfBuilt:
    def __init__(self):
        raise KeyboardInterrupt        # a Ctrl-C that landed in its construction

    def __del__(self):
        del self._as_parameter_        # never set: AttributeError, as llvmlite's ObjectRef


def make_node():
    HalfBuilt()


sys.exit(run_node(make_node, 'interrupted', []))
"""


def test_ctrl_c_during_construction_prints_no_finalizer_traceback():
    """
    A Ctrl-C that cut an object's construction short leaves no traceback from its finalizer.

    CI, beside two busy loops: a view node stopped in its constructor exited 0, but printed
    "Exception ignored in: ObjectRef.__del__ ... Traceback": the interrupt had landed inside
    llvmlite's construction of an object whose finalizer then failed. A process of its own:
    pytest catches what a finalizer raises.
    """
    result = subprocess.run([sys.executable, '-c', HALF_BUILT], capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert 'Traceback' not in result.stderr and 'Exception ignored' not in result.stderr, \
        result.stderr


def test_an_error_in_a_constructor_with_the_context_up_is_raised():
    with pytest.raises(RuntimeError, match='a real bug in a constructor'):
        run_node(BrokenConstruction, 'broken', [])
    assert not rclpy.ok()


@pytest.mark.parametrize('ros_args, reason', [
    (['-r', '__ns:=/bad name'], "cannot start: Couldn't parse remap rule: '-r __ns:=/bad name'"),
    (['--params-file', '/no/such/params.yaml'], "cannot start: Couldn't parse params file"),
])
def test_ros_arguments_rcl_cannot_parse_end_in_one_fatal_line(ros_args, reason, capfd):
    def never_built():
        raise AssertionError('the node is not built with arguments rcl refuses')
    assert run_node(never_built, 'by_hand', ['node', '--ros-args', *ros_args]) == 1
    err = capfd.readouterr().err
    assert 'Traceback' not in err and not rclpy.ok()
    # rcl says what it could not parse, then the node's one line, the last
    assert reason in err.strip().splitlines()[-1] and '[by_hand]' in err.splitlines()[-1], err
    assert 'lexeme' not in err.splitlines()[-1] and '.c:' not in err.splitlines()[-1]


class CtrlCWhileRelaxing(Node):
    """
    Get Ctrl-C while it cleans up, after the context is already shut down.

    Where Python's KeyboardInterrupt for a Ctrl-C lands when it comes after rclpy's
    handler has ended the spin (or when Ctrl-C is pressed twice).
    """

    relaxed = False

    def __init__(self):
        super().__init__('ctrl_c_while_relaxing')
        self.create_timer(0.01, lambda: rclpy.shutdown(context=self.context))

    def destroy_node(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)   # the signal is handled in here
        CtrlCWhileRelaxing.relaxed = True   # e.g. the safe state sent
        super().destroy_node()


def test_ctrl_c_during_destroy_node_does_not_cut_it_short():
    try:
        code = run_node(CtrlCWhileRelaxing, 'ctrl_c_while_relaxing', [])
    except KeyboardInterrupt:
        pytest.fail('a KeyboardInterrupt cut destroy_node() short')
    assert code == 0 and CtrlCWhileRelaxing.relaxed
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler   # restored


class SignalledWhileSpinning(Node):
    """Send itself ``signum`` from a timer callback; record the context at destroy_node()."""

    context_ok_at_destroy = None

    def __init__(self, signum: int):
        super().__init__('signalled_while_spinning')
        self.create_timer(0.01, lambda: os.kill(os.getpid(), signum))

    def destroy_node(self):
        SignalledWhileSpinning.context_ok_at_destroy = self.context.ok()
        super().destroy_node()


@pytest.mark.parametrize('make_executor', [SingleThreadedExecutor, events_executor])
@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_ends_the_spin_and_the_node_is_destroyed_before_the_context(
        signum, make_executor):
    # With rclpy's own handler the context was shut down from another thread at the
    # moment of the signal, racing the executor and destroy_node().
    SignalledWhileSpinning.context_ok_at_destroy = None
    before = signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT
                           else signal.SIG_DFL)   # as from a terminal, not under nohup
    try:
        assert run_node(lambda: SignalledWhileSpinning(signum), 'signalled', [],
                        make_executor) == 0
        assert SignalledWhileSpinning.context_ok_at_destroy is True
        assert not rclpy.ok()
        assert signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL)
    finally:
        signal.signal(signum, before)


class HungUpThenInterrupted(Node):
    """
    Send itself SIGHUP, and SIGINT at the 30th callback after it; count the callbacks.

    Counted, not timed (once 0.3 s): a loaded machine runs fewer callbacks in a given time,
    and the test asks how many the node ran after the hangup (all, if the hangup ended none).
    """

    ticks_after_hangup = 0

    def __init__(self):
        super().__init__('hung_up_then_interrupted')
        os.kill(os.getpid(), signal.SIGHUP)
        self.create_timer(0.01, self.tick)

    def tick(self):
        HungUpThenInterrupted.ticks_after_hangup += 1
        if HungUpThenInterrupted.ticks_after_hangup == 30:
            os.kill(os.getpid(), signal.SIGINT)


def test_a_node_started_under_nohup_outlives_the_hangup():
    """SIGHUP ignored when the node starts (nohup): it spins on, and stops on Ctrl-C."""
    HungUpThenInterrupted.ticks_after_hangup = 0
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert run_node(HungUpThenInterrupted, 'hung_up_then_interrupted', []) == 0
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
    assert HungUpThenInterrupted.ticks_after_hangup >= 30


def test_the_events_executor_where_rclpy_has_it_else_the_single_threaded_one(monkeypatch):
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        executor = events_executor(context)
        has_it = importlib.util.find_spec('rclpy.experimental') is not None   # from Kilted
        assert (type(executor).__name__ == 'EventsExecutor') == has_it
        executor.shutdown()
        monkeypatch.setitem(sys.modules, 'rclpy.experimental', None)   # Humble, Jazzy
        assert isinstance(events_executor(context), SingleThreadedExecutor)
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize('make_executor', [
    events_executor, lambda context: SingleThreadedExecutor(context=context)],
    ids=['events', 'single_threaded'])
def test_a_timer_callback_fires_on_either_executor_without_a_timer_info(make_executor):
    """
    timer_callback: the executor reads a signature without parameters and calls the method.

    (rclpy passes a TimerInfo to a callback whose signature asks for one: none may come.)
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node('timer_callback', context=context)
    executor = make_executor(context)

    class Ticker:
        def __init__(self):
            self.calls = []

        def tick(self, *args):
            self.calls.append(args)
    ticker = Ticker()
    callback = timer_callback(ticker.tick)
    assert inspect.signature(callback).parameters == {}
    try:
        node.create_timer(0.01, callback)
        executor.add_node(node)
        wait_for(lambda: len(ticker.calls) >= 3, 'three ticks',
                 between=lambda: executor.spin_once(timeout_sec=0.05))
        assert ticker.calls[:3] == [(), (), ()]
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
