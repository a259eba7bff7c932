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
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from tendon_robot_sim.ros.parameters import ConfigurationError


def run_node(make_node: Callable[[], Node], name: str, args=None) -> int:
    """
    Spin the node ``make_node()`` until Ctrl-C or shutdown; return the process exit code.

    A node that cannot start (:class:`ConfigurationError`: a bad parameter or robot
    file) is reported as one fatal log line under ``name`` and gives exit code 1.
    An error out of the constructor or the executor once the context is shut down
    (Ctrl-C) is rclpy's shutdown race, not a failure: exit code 0.

    Ctrl-C is left to rclpy's signal handler, which shuts the context down and so ends
    the spin. Python's own KeyboardInterrupt is switched off while the node lives: raised
    at whatever line runs when the signal lands, it could cut ``destroy_node()`` short
    (before a bridge has left the hardware safe) or escape every handler (exit code -2).
    """
    interrupted: list[int] = []
    # Before rclpy.init(): rclpy's handler calls the Python handler it finds installed.
    previous = signal.signal(signal.SIGINT, lambda signum, frame: interrupted.append(signum))
    try:
        rclpy.init(args=args)
        if interrupted:   # Ctrl-C before rclpy's handler was there to shut the context down
            rclpy.try_shutdown()
            return 0
        return _run(make_node, name)
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(make_node: Callable[[], Node], name: str) -> int:
    try:
        node = make_node()
    except ConfigurationError as error:
        rclpy.logging.get_logger(name).fatal(f'cannot start: {error}')
        rclpy.try_shutdown()
        return 1
    except Exception:
        # Ctrl-C while the node is being built: the signal handler shuts the context down
        # under the constructor, whose next call into rcl fails ('context is invalid').
        interrupted = not rclpy.ok()
        rclpy.try_shutdown()
        if interrupted:
            return 0
        raise
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # Ctrl-C shuts the context down from the signal handler while the executor may be
        # building its wait set ('RCLError: failed to initialize wait set') or taking a
        # message ('RuntimeError: Unable to convert call argument'): a clean shutdown that
        # lost the race. With the context still up, the error is real.
        if node.context.ok():
            raise
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
