"""Tension controller: ``tendon/command/tension`` -> ``tendon/setpoint``.

For now a passthrough: it keeps the latest commanded tension of every tendon
(a command naming some tendons leaves the others as they were; all start at
0 N), clamps it to [0, max_tension] of the robot description and publishes the
full vector as the setpoint (``effort``, N) at ``rate``. Publishing on a timer
rather than per command gives the actuators a steady stream to hold.

A command with unknown names, non-finite values, or a wrong number of values
is rejected as a whole with a throttled warning.
"""

import numpy as np
from rclpy.node import Node
from std_msgs.msg import Header

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.core.robot import load_robot, RobotDescriptionError
from tendon_robot_sim.core.simulator import InputError
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import tensions_from_joint_state
from tendon_robot_sim.ros.parameters import ConfigurationError, declare, Param
from tendon_robot_sim.ros.runner import run_node

NODE_NAME = 'tension_controller'

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (tendon names and max_tension); '
          'empty: the package default config/robot.yaml'),
    Param('rate', 50.0, 'Hz', 'rate at which the setpoint is published', range=(1.0, 1000.0)),
    Param('command_topic', topics.TENDON_COMMAND.name, '', 'desired tensions (effort, N)'),
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'tensions the actuators must '
          'apply (effort, N)'),
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings about '
          'rejected or clamped commands', range=(0.0, 60.0)),
)


class TensionControllerNode(Node):
    """Clamping passthrough from tension commands to setpoints."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self.config = declare(self, PARAMS)
            self.robot = load_robot(self.config.robot_file or default_robot_file())
        except RobotDescriptionError as error:
            self.destroy_node()
            raise ConfigurationError(str(error)) from None
        except ConfigurationError:
            self.destroy_node()
            raise
        self.names = self.robot.tendon_names
        self.max_tensions = self.robot.max_tensions
        self.command = np.zeros(len(self.names))   # N, clamped
        self.setpoint_pub = self.create_publisher(
            topics.TENDON_SETPOINT.msg_type, self.config.setpoint_topic,
            topics.TENDON_SETPOINT.qos)
        self.command_sub = self.create_subscription(
            topics.TENDON_COMMAND.msg_type, self.config.command_topic, self._on_command,
            topics.TENDON_COMMAND.qos)
        self.timer = self.create_timer(1.0 / self.config.rate, self._on_timer)

    def _on_command(self, msg) -> None:
        try:
            command = self._merge(tensions_from_joint_state(msg))
        except InputError as error:
            self._warn(f'rejected tension command: {error}')
            return
        clamped = np.clip(command, 0.0, self.max_tensions)
        changed = [f'{n} {c:g} -> {k:g} N'
                   for n, c, k in zip(self.names, command, clamped) if c != k]
        if changed:
            self._warn(f'tension command clamped to [0, max_tension]: {", ".join(changed)}')
        self.command = clamped

    def _merge(self, tensions) -> np.ndarray:
        """The latest command updated with ``tensions`` (mapping or full sequence), N."""
        command = self.command.copy()
        if isinstance(tensions, dict):
            for name, value in tensions.items():
                try:
                    command[self.robot.tendon_index(name)] = value
                except KeyError as error:
                    raise InputError(f'name: {error.args[0]}') from None
        elif len(tensions) != len(self.names):
            raise InputError(f'effort: has {len(tensions)} values without names; give one per '
                             f'tendon {self.names} or name them')
        else:
            command[:] = tensions
        bad = [n for n, c in zip(self.names, command) if not np.isfinite(c)]
        if bad:
            raise InputError(f'effort: non-finite tension for {bad}')
        return command

    def _warn(self, message: str) -> None:
        self.get_logger().warning(message,
                                  throttle_duration_sec=self.config.warning_throttle_period)

    def _on_timer(self) -> None:
        self.setpoint_pub.publish(topics.TENDON_SETPOINT.msg_type(
            header=Header(stamp=self.get_clock().now().to_msg()),
            name=self.names, effort=self.command.tolist()))


def main(args=None) -> int:
    return run_node(TensionControllerNode, NODE_NAME, args)


if __name__ == '__main__':
    raise SystemExit(main())
