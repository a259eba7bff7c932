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
"""The body of every node's ``main()``: start, spin, always shut down cleanly."""

import faulthandler
import inspect
import os
import signal
import sys
import threading
from typing import Callable

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
import rclpy.logging
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from tendon_robot_sim import quiet_lost_interrupts, stop_signals, StopWatchdog
from tendon_robot_sim.ros.environment import (check_ros_environment, fatal_line,
                                              RosEnvironmentError)
from tendon_robot_sim.ros.parameters import ConfigurationError

# Longest wait of the executor between two looks at the Ctrl-C flag [s].
SPIN_PERIOD = 0.05
# Ctrl-C, `kill`, and the terminal closing (an SSH link dropping) all stop a node the same way
# (tendon_robot_sim.stop_signals). Time the main thread gets to come back to the spin loop
# after a stop signal before the signal is raised as KeyboardInterrupt wherever it is (a numba
# compile of 20-30 s) [s].
INTERRUPT_AFTER = 0.2
# Time after a stop signal that the spin loop has not seen by then (every interrupt raised in
# the main thread lost: swallowed by a library, cleared by C code) when the process ends
# without destroying the node (StopWatchdog) [s]. The reminders land well before.
FORCED_EXIT_AFTER = 1.0
# Longest the clean-up after a stop signal may take in a node that is its own process (the
# node destroyed: a bridge's safe state sent and its ports closed; the context shut down) [s].
# Past it the process writes every thread's stack to its log and ends with
# EXIT_CLEANUP_HUNG: a stopped node never stays alive (a bridge, configured and inactive, was
# once found running 120 s after its SIGHUP, its log saying nothing). Under load 25 the
# clean-up takes a few seconds.
CLEANUP_LIMIT = 30.0
EXIT_CLEANUP_HUNG = 1
# Past CLEANUP_LIMIT by this much [s], faulthandler's own thread, which needs no GIL, writes the
# stacks and ends the process (exit code 1) where the clean-up hangs in C holding the GIL and
# the limit's Python timer cannot run: a simulator node was once found spinning in rclpy's
# destroy_node 15 minutes after its SIGTERM, its parent gone.
CLEANUP_BACKSTOP = 1.0
RCLError = _rclpy.RCLError
# Exit code of a node whose ROS environment is bad (a variable, as a bad argument of a command).
EXIT_BAD_ENVIRONMENT = 2


def events_executor(context: Context) -> Executor:
    """
    Return rclpy's EventsExecutor where the ROS distribution has it, else the single-threaded one.

    The EventsExecutor (``rclpy.experimental``, from Kilted) waits and dispatches in C++;
    the single-threaded executor rebuilds its wait set of every subscription, timer and
    service in Python at each message. For a node that takes many small messages (the
    view: three 50 Hz topics) that is most of its time (docs/viewer.md, Speed).
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


class StopInterrupt(KeyboardInterrupt):
    """The KeyboardInterrupt a stop signal raises in a node's busy main thread (_StopRequest)."""


def timer_callback(callback: Callable[[], None]) -> Callable[[], None]:
    """
    Return ``callback`` as a function whose signature ``inspect.signature`` reads at once.

    rclpy's executors look at a timer's callback at every call (for a ``TimerInfo``
    parameter): ``inspect.signature`` of a bound method took 38 us, of a function that carries
    its ``__signature__`` 4 us (2 vCPUs at load 12). For a timer at tens of hertz in a node
    that counts its CPU time (the simulator's physics tick).

    A stop signal that interrupts the callback (:class:`StopInterrupt`: the first physics
    tick compiling numba kernels) ends it quietly: the spin loop then sees the stop. Raised
    on, rclpy's EventsExecutor logged it as a FATAL callback exception with 60 lines of
    traceback, although the node stopped cleanly.
    """
    def call() -> None:
        try:
            callback()
        except StopInterrupt:
            return
    call.__signature__ = inspect.Signature()
    return call


class _StopRequest:
    """
    The stop signals of one run: a flag the spin loop reads, and a forced interrupt.

    The handler only records the signal. If the main thread has not come back to the spin
    loop ``INTERRUPT_AFTER`` seconds later (it is inside the node's constructor or a
    callback, e.g. compiling a numba kernel on the first start), a timer sends the signal
    to the main thread again, and this time the handler raises KeyboardInterrupt there, so
    the compile is abandoned and the node is destroyed (a bridge leaves the hardware safe).
    Once the loop has seen the flag nothing is raised: the clean-up runs undisturbed.
    After such a forced interrupt :func:`run_node` ends the process itself, once the node
    is destroyed and the context shut down.
    """

    def __init__(self, name: str = '', cleanup_limit: float | None = None):
        self.signals: list[int] = []
        self.seen = False
        self.forced = False
        self._main = threading.get_ident()
        self._timer = None
        self._name, self._cleanup_limit = name, cleanup_limit
        self._cleanup_timer = None

    def __bool__(self) -> bool:
        return bool(self.signals)

    def handle(self, signum, frame) -> None:
        if self.seen:
            return
        if self.forced:
            raise StopInterrupt   # the timer's reminder: the main thread is busy
        self.signals.append(signum)
        if self._timer is None:
            self._timer = threading.Timer(INTERRUPT_AFTER, self._remind, args=(signum,))
            self._timer.daemon = True
            self._timer.start()

    def _remind(self, signum: int) -> None:
        if not self.seen:
            self.forced = True
            signal.pthread_kill(self._main, signum)
            # again until it lands: one raised in a callback from C (numba's compiler) is lost
            self._timer = threading.Timer(INTERRUPT_AFTER, self._remind, args=(signum,))
            self._timer.daemon = True
            self._timer.start()

    def acknowledge(self) -> None:
        """
        Mark that the main thread stops now: from here on no signal interrupts it.

        After a stop signal, with a ``cleanup_limit``, the clean-up that follows has that long
        (:meth:`cleaned_up` when it is done).
        """
        self.seen = True
        if self._timer is not None:
            self._timer.cancel()
        if self.signals and self._cleanup_limit is not None and self._cleanup_timer is None:
            self._cleanup_timer = threading.Timer(self._cleanup_limit, self._cleanup_hung)
            self._cleanup_timer.daemon = True
            self._cleanup_timer.start()
            try:
                faulthandler.dump_traceback_later(self._cleanup_limit + CLEANUP_BACKSTOP,
                                                  exit=True, file=sys.stderr)
            except (RuntimeError, ValueError, OSError):    # standard error closed: no backstop
                pass

    def cleaned_up(self) -> None:
        """Stop the clean-up's clock: the clean-up after the stop is done."""
        if self._cleanup_timer is not None:
            self._cleanup_timer.cancel()
            faulthandler.cancel_dump_traceback_later()

    def _cleanup_hung(self) -> None:
        print(f'[FATAL] [{self._name}]: the clean-up after the stop signal did not end within '
              f"{self._cleanup_limit:g} s; exiting (every thread's stack follows)",
              file=sys.stderr, flush=True)
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        sys.stderr.flush()
        os._exit(EXIT_CLEANUP_HUNG)


def run_node(make_node: Callable[[], Node], name: str, args=None,
             make_executor: Callable[[Context], Executor] = SingleThreadedExecutor,
             exit_on_stop: bool = False) -> int:
    """
    Spin the node ``make_node()`` until a stop signal or shutdown; return the exit code.

    ``make_executor(context=...)`` gives the executor (:func:`events_executor` for a node
    that takes many small messages). ``exit_on_stop``: the node is the process (its
    ``main()``), which a stop signal ends as soon as the node is destroyed and the context
    shut down, with ``os._exit``: nothing is left to clean up, and the interpreter's own
    teardown (numba, LLVM, Fast DDS) took 2.5-3 s of a 2 s promise under load 17. Such a
    node's clean-up after a stop signal has ``CLEANUP_LIMIT`` s; one that hangs ends the
    process with ``EXIT_CLEANUP_HUNG`` and every thread's stack on stderr.

    A node that cannot start (:class:`ConfigurationError`: a bad parameter or robot
    file; ROS arguments rcl cannot parse) is reported as one fatal log line under ``name``
    and gives exit code 1; a bad ROS environment variable (``ROS_DOMAIN_ID=abc``), checked
    before rclpy starts, gives one such line and exit code 2.

    Ctrl-C, SIGTERM and SIGHUP are handled here, in the main thread, not by rclpy's
    signal handler: they only set a flag that the spin loop reads, then the node is
    destroyed and the context shut down in that order, by this thread alone. rclpy's
    handler shuts the context down from its own thread at whatever moment the signal
    lands, which races the executor ('RCLError: failed to initialize wait set'), the
    constructor, and ``destroy_node()`` (a bridge leaving the hardware safe); now and then
    a process did not exit at all. Python's KeyboardInterrupt is off while the node spins
    for the same reason; only a constructor or callback that keeps the main thread away
    from the spin loop for longer than ``INTERRUPT_AFTER`` is interrupted (see
    :class:`_StopRequest`). An error out of the constructor or the executor once the
    context is shut down by somebody else (``rclpy.shutdown()``) still counts as a clean
    exit.
    """
    try:
        check_ros_environment()
    except RosEnvironmentError as error:
        print(fatal_line(name, error), file=sys.stderr, flush=True)
        return EXIT_BAD_ENVIRONMENT
    stop = _StopRequest(name, CLEANUP_LIMIT if exit_on_stop else None)
    previous = {signum: signal.signal(signum, stop.handle) for signum in stop_signals()}
    quiet_lost_interrupts()
    try:
        with StopWatchdog(0, FORCED_EXIT_AFTER, lambda signum: not stop.seen):
            try:
                rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
            except RCLError as error:
                # --ros-args rcl cannot parse (a namespace against the naming rules, a missing
                # parameter file): one line after rcl's own, not a traceback
                rclpy.logging.get_logger(name).fatal(f'cannot start: {_rcl_reason(error)}')
                return 1
            code = _run(make_node, name, stop, make_executor)
    finally:
        stop.acknowledge()
        stop.cleaned_up()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if stop.forced or (stop and exit_on_stop):
        # The node is destroyed and the context shut down; what is left is the interpreter's
        # teardown, with an abandoned numba compile after a forced interrupt (1.5-2 s under
        # load).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _ignore(unraisable) -> None:
    """Print nothing of an exception raised where nobody can take it (a finalizer's)."""


def _rcl_reason(error: Exception) -> str:
    """Return the part of an rcl error a user can act on: no source locations, no lexer state."""
    text = str(error).removeprefix('failed to initialize rcl: ').split(', at /')[0]
    return text.split('. Error: Expected lexeme')[0]


def _run(make_node: Callable[[], Node], name: str, stop: _StopRequest,
         make_executor: Callable[[Context], Executor]) -> int:
    try:
        node = make_node()
    except KeyboardInterrupt:
        # the interrupt may have cut an object's construction short (llvmlite's, loading a
        # kernel), whose finalizer then fails when the traceback lets go of it: the process
        # stops, and says nothing of that
        sys.unraisablehook = _ignore
        stop.acknowledge()
        rclpy.try_shutdown()
        return 0
    except ConfigurationError as error:
        rclpy.logging.get_logger(name).fatal(f'cannot start: {error}')
        rclpy.try_shutdown()
        return 1
    except Exception:
        # The context shut down under the constructor: its next call into rcl fails
        # ('context is invalid'). Or a stop signal's KeyboardInterrupt landed in a callback
        # from C (numba compiling) that lost it, and the compile failed instead.
        shut_down = not rclpy.ok() or bool(stop)
        stop.acknowledge()
        rclpy.try_shutdown()
        if shut_down:
            sys.unraisablehook = _ignore     # as above: what the stop cut short
            return 0
        raise
    executor = None
    try:
        executor = make_executor(context=node.context)
        executor.add_node(node)
        while not stop and node.context.ok():
            executor.spin_once(timeout_sec=SPIN_PERIOD)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # Shut down by somebody else while the executor built its wait set ('failed to
        # initialize wait set') or took a message ('Unable to convert call argument'):
        # a clean shutdown that lost the race. With the context still up, the error is real.
        if node.context.ok():
            raise
    finally:
        stop.acknowledge()
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
