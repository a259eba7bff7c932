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

import signal
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from tendon_robot_sim.ros.parameters import ConfigurationError

# Longest wait of the executor between two looks at the Ctrl-C flag [s].
SPIN_PERIOD = 0.05
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_node(make_node: Callable[[], Node], name: str, args=None) -> int:
    """
    Spin the node ``make_node()`` until Ctrl-C, SIGTERM or shutdown; return the exit code.

    A node that cannot start (:class:`ConfigurationError`: a bad parameter or robot
    file) is reported as one fatal log line under ``name`` and gives exit code 1.

    Ctrl-C and SIGTERM are handled here, in the main thread, not by rclpy's signal
    handler: they only set a flag that the spin loop reads, then the node is destroyed
    and the context shut down in that order, by this thread alone. rclpy's handler shuts
    the context down from its own thread at whatever moment the signal lands, which races
    the executor ('RCLError: failed to initialize wait set'), the constructor, and
    ``destroy_node()`` (a bridge leaving the hardware safe); now and then a process did
    not exit at all. Python's KeyboardInterrupt is off while the node lives for the same
    reason. An error out of the constructor or the executor once the context is shut
    down by somebody else (``rclpy.shutdown()``) still counts as a clean exit.
    """
    stop: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: stop.append(signum))
                for signum in STOP_SIGNALS}
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        return _run(make_node, name, stop)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(make_node: Callable[[], Node], name: str, stop: list[int]) -> int:
    try:
        node = make_node()
    except ConfigurationError as error:
        rclpy.logging.get_logger(name).fatal(f'cannot start: {error}')
        rclpy.try_shutdown()
        return 1
    except Exception:
        # The context shut down under the constructor: its next call into rcl fails
        # ('context is invalid').
        shut_down = not rclpy.ok()
        rclpy.try_shutdown()
        if shut_down:
            return 0
        raise
    executor = SingleThreadedExecutor(context=node.context)
    try:
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
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
