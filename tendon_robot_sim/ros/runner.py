"""The body of every node's ``main()``: start, spin, always shut down cleanly."""

from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from tendon_robot_sim.ros.parameters import ConfigurationError


def run_node(make_node: Callable[[], Node], name: str, args=None) -> int:
    """Spin the node ``make_node()`` until Ctrl-C or shutdown; the process exit code.

    A node that cannot start (:class:`ConfigurationError`: a bad parameter or robot
    file) is reported as one fatal log line under ``name`` and gives exit code 1.
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
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
