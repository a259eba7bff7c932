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

from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from tendon_robot_sim.ros.parameters import ConfigurationError


def run_node(make_node: Callable[[], Node], name: str, args=None) -> int:
    """
    Spin the node ``make_node()`` until Ctrl-C or shutdown; the process exit code.

    A node that cannot start (:class:`ConfigurationError`: a bad parameter or robot
    file) is reported as one fatal log line under ``name`` and gives exit code 1.
    An error out of the executor once the context is shut down (Ctrl-C) is rclpy's
    shutdown race, not a failure: exit code 0.
    """
    rclpy.init(args=args)
    try:
        node = make_node()
    except ConfigurationError as error:
        rclpy.logging.get_logger(name).fatal(f'cannot start: {error}')
        rclpy.try_shutdown()
        return 1
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
