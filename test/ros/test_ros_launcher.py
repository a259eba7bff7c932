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
`tendon-robot-sim launch sim` starts the stack as processes and stops it on SIGINT.

Runs the default robot (config/robot.yaml, 50 elements) in a namespace, through
the command-line tool, exactly as a user would.
"""

import os
import re

import rclpy
from rclpy.parameter_client import AsyncParameterClient
from ros_helpers import interrupt, launch_stack, spin_until, TIMEOUT
from sensor_msgs.msg import JointState
from tendon_robot_sim.ros import topics

NAMESPACE = 'launched'
PUBLISH_RATE = 20.0   # Hz, given with --param to check that overrides reach the node


def launch(log, *arguments: str):
    """``tendon-robot-sim launch sim ARGUMENTS`` from the source tree, output to ``log``."""
    return launch_stack(log, 'sim', *arguments)


def stamp_seconds(msg) -> float:
    """Return a message's header stamp in seconds."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def fastest_second(stamps, ticks: int) -> float:
    """Return the shortest span of ``ticks`` successive intervals of ``stamps`` [s] (inf: none)."""
    spans = [stamps[k + ticks] - stamps[k] for k in range(len(stamps) - ticks)]
    return min(spans, default=float('inf'))


def test_launch_command_runs_the_sim_stack_and_stops_it_on_sigint(tmp_path):
    log = tmp_path / 'launch.log'
    launcher = launch(log, '--namespace', NAMESPACE, '--arg', 'rviz:=false',
                      '--param', f'simulator:publish_rate:={PUBLISH_RATE}')
    rclpy.init()
    node = rclpy.create_node('launch_probe', namespace=NAMESPACE)
    try:
        states, tips, markers = [], [], []
        # Subscribed as a user's node usually is: default QoS (reliable), depth 10 (REP 2003:
        # the stack's publishers must offer reliable for these to match).
        node.create_subscription(JointState, topics.TENDON_STATE.name, states.append, 10)
        node.create_subscription(topics.TIP_POSE.msg_type, topics.TIP_POSE.name,
                                 lambda msg: tips.append(stamp_seconds(msg)), 10)
        node.create_subscription(topics.BACKBONE_MARKERS.msg_type, topics.BACKBONE_MARKERS.name,
                                 markers.append, 10)
        command = node.create_publisher(JointState, topics.TENDON_COMMAND.name,
                                        topics.COMMAND_QOS)
        launched = {('simulator', f'/{NAMESPACE}'), ('tension_controller', f'/{NAMESPACE}')}
        # Node names reach the graph cache later than the first messages: wait for both.
        spin_until(node, lambda: states and tips and markers
                   and command.get_subscription_count() >= 1
                   and launched <= set(node.get_node_names_and_namespaces()),
                   'the launched stack, its nodes named in the namespace')

        # controller process -> simulator process: the tension arrives as the applied one
        command.publish(JointState(name=['t0'], effort=[2.0]))
        spin_until(node, lambda: states[-1].effort.tolist() == [2.0, 0.0, 0.0, 0.0],
                   'tendon/state reporting 2 N on t0')

        client = AsyncParameterClient(node, f'/{NAMESPACE}/simulator')
        assert client.wait_for_services(timeout_sec=TIMEOUT)
        future = client.get_parameters(['publish_rate', 'robot_file'])
        rclpy.spin_until_future_complete(node, future, timeout_sec=TIMEOUT)
        publish_rate, robot_file = future.result().values
        assert publish_rate.double_value == PUBLISH_RATE
        assert robot_file.string_value == ''   # the default robot
        # The rate is read from the messages' stamps, not their arrival. A timer never fires
        # ahead of its period, so no second of stamps holds more than the rate (the default,
        # 50 Hz, would); a machine that holds the node up only thins them out, so the test
        # waits for one second that has them all (within 0.6 to 1.4 of the rate).
        start = len(tips)
        ticks = int(PUBLISH_RATE)
        spin_until(node, lambda: fastest_second(tips[start:], ticks) < 1 / 0.6,
                   f'a second of tip poses at {PUBLISH_RATE} Hz of their stamps')
        assert fastest_second(tips[start:], ticks) > 1 / 1.4
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        code = interrupt(launcher)
    text = log.read_text()
    assert code == 0, text
    assert 'robot_state_publisher: skipped' in text or 'robot_state_publisher: started' in text
    assert 'rviz2: skipped (rviz:=false)' in text
    pids = [int(p) for p in re.findall(r': started \(pid (\d+)\)', text)]
    assert len(pids) >= 2
    for pid in pids:   # the launcher waited for every node: none is left running
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f'node process {pid} still running after the launcher exited')


def test_launch_command_brings_up_the_parallel_robot_from_a_relative_robot_file(tmp_path):
    log = tmp_path / 'launch.log'
    # as a user types it in the source tree: the robot file relative to it
    launcher = launch(log, '--namespace', 'pcr', '--arg', 'robot:=config/pcr_6rus.yaml',
                      '--arg', 'rviz:=false')
    rclpy.init()
    node = rclpy.create_node('launch_probe', namespace='pcr')
    try:
        states, tips = [], []
        node.create_subscription(JointState, topics.TENDON_STATE.name, states.append, 10)
        node.create_subscription(topics.TIP_POSE.msg_type, topics.TIP_POSE.name, tips.append, 10)
        setpoint = node.create_publisher(JointState, topics.TENDON_SETPOINT.name,
                                         topics.COMMAND_QOS)
        spin_until(node, lambda: states and tips and setpoint.get_subscription_count() >= 1,
                   'the launched parallel robot')
        # in a namespace the frames carry it as their prefix
        assert tips[-1].header.frame_id == 'pcr/base_link'
        setpoint.publish(JointState(name=['motor_3'], position=[0.2]))
        spin_until(node, lambda: states[-1].position.tolist() == [0.0, 0.0, 0.2, 0.0, 0.0, 0.0],
                   'tendon/state reporting motor 3 at 0.2 rad')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        code = interrupt(launcher)
    text = log.read_text()
    assert code == 0, text
    assert ('tension_controller: skipped (for tendon_robot or rolling_joint_snake robots; '
            'this one is a pcr_6rus)') in text
