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
End to end on emulated real devices: `launch hardware` on a Dynamixel chain and an LK-G laser.

A tension command moves the emulated robot through the controller, the bridge,
ROBOTIS's SDK and the emulated servos; the laser controller sees the tip move; the
topics are recorded into a rosbag2 bag with `tendon-robot-sim record`.
"""

import os
from pathlib import Path
import subprocess
import sys

from geometry_msgs.msg import PointStamped
import pytest
import rclpy
from ros_helpers import interrupt, spin_until, TIMEOUT
from rosbags.highlevel import AnyReader
from sensor_msgs.msg import JointState
import tendon_robot_sim
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.dynamixel import bus_file
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.mounting import sensor_mount
from tendon_robot_sim.ros import topics

pytest.importorskip('dynamixel_sdk')


def cli(*arguments: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    with open(log, 'w') as out:
        return subprocess.Popen([sys.executable, '-m', 'tendon_robot_sim.cli', *arguments],
                                env=env, stdout=out, stderr=subprocess.STDOUT)


def test_launch_hardware_on_dynamixel_and_keyence_moves_the_robot_and_records_a_bag(tmp_path):
    robot = load_robot(default_robot_file())
    rig = EmulatedRig(robot, sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                      PtyEndpoint(str(tmp_path / 'motors')), PtyEndpoint(str(tmp_path / 'lkg')),
                      status_rate=50.0, time_constant=0.02, motor_device='dynamixel',
                      sensor_device='keyence-lkg').start()
    launcher = cli('launch', 'hardware', '--arg', f'motor_port:={rig.path("motors")}',
                   '--arg', f'sensor_port:={rig.path("sensor")}', '--arg', 'rviz:=false',
                   '--arg', 'motor_device:=dynamixel', '--arg', 'sensor_device:=keyence-lkg',
                   '--param', f'hardware_bridge:dynamixel_file:={bus_file(tmp_path)}',
                   # configure's round trips to an emulator a loaded machine holds up, and a
                   # servo silent while it is held up must not count as lost
                   '--param', 'hardware_bridge:open_timeout:=10.0',
                   '--param', 'hardware_bridge:stale_timeout:=10.0',
                   log=tmp_path / 'launch.log')
    bag = tmp_path / 'bag'
    rclpy.init()
    node = rclpy.create_node('hardware_probe')
    recorder = None
    try:
        tips, states = [], []
        node.create_subscription(PointStamped, topics.TIP_MEASURED.name, tips.append, 10)
        node.create_subscription(JointState, topics.TENDON_STATE.name, states.append, 10)
        command = node.create_publisher(JointState, topics.TENDON_COMMAND.name,
                                        topics.COMMAND_QOS)
        spin_until(node, lambda: tips and states and command.get_subscription_count() >= 1,
                   'the launched stack')
        recorder = cli('record', str(bag), '--topics', topics.TENDON_STATE.name,
                       topics.TIP_MEASURED.name, topics.TENDON_SETPOINT.name, '--duration', '8',
                       log=tmp_path / 'record.log')
        spin_until(node, lambda: False if not bag.exists() else True, 'the recorder')
        resting = tips[-1].point.z
        command.publish(JointState(name=['t0'], effort=[3.0]))
        servo = rig.motor.servos[0]
        # 3 N through the servo's 100 N/A calibration: 30 mA, 11 units of 2.69 mA.
        spin_until(node, lambda: servo.get(dxl.GOAL_CURRENT, signed=True) == 11,
                   'the servo to get 3 N')
        spin_until(node, lambda: states[-1].effort[0] > 2.7, 'tendon/state to follow')
        spin_until(node, lambda: tips[-1].point.z - resting > 0.05, 'the tip to rise')
        assert recorder.wait(TIMEOUT) == 0, (tmp_path / 'record.log').read_text()
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        try:
            code = interrupt(launcher)
        finally:
            rig.stop()
            if recorder is not None and recorder.poll() is None:
                recorder.kill()
    assert code == 0, (tmp_path / 'launch.log').read_text()
    # On shutdown the bridge switched the servos' torque off (cleanup).
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in rig.motor.servos)
    with AnyReader([bag]) as reader:
        counts = {c.topic.lstrip('/'): c.msgcount for c in reader.connections}
    # 8 s at the bridge's 50 Hz state rate, the controller's setpoints beside them.
    assert counts[topics.TENDON_STATE.name.lstrip('/')] > 100, counts
    assert counts[topics.TIP_MEASURED.name.lstrip('/')] > 100, counts
    assert counts[topics.TENDON_SETPOINT.name.lstrip('/')] > 10, counts
