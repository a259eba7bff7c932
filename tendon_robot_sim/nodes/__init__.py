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
The ROS nodes: thin adapters, each ``main()`` on :func:`tendon_robot_sim.ros.runner.run_node`.

Ctrl-C, SIGTERM and SIGHUP end a node with exit code 0 at any moment; also while its
modules load, before ``run_node`` takes the signals (this package is imported first).

This package is imported before a node's module imports rclpy, whose rcl library ends the
process with exit 102 as it loads when RMW_IMPLEMENTATION names no installed middleware:
that variable is checked here (one line, exit 2); the rest of the ROS environment by
``run_node``, before rclpy starts.
"""

from pathlib import Path
import sys

from tendon_robot_sim import exit_quietly_on_interrupt
from tendon_robot_sim.ros.environment import check_middleware, fatal_line, RosEnvironmentError

exit_quietly_on_interrupt(0)


def _program() -> str:
    """Return the name of the node this process runs, from its command line."""
    argv = sys.orig_argv      # python -m tendon_robot_sim.nodes.X, or a script simulator_node
    words = argv[argv.index('-m') + 1:] if '-m' in argv else argv[1:]
    program = Path(words[0] if words else 'node').name.removesuffix('.py')
    return program.rpartition('.')[2].removesuffix('_node')


try:
    check_middleware()
except RosEnvironmentError as error:
    print(fatal_line(_program(), error), file=sys.stderr, flush=True)
    raise SystemExit(2) from None
