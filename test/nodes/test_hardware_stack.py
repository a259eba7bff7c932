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
`tendon-robot-sim launch hardware` against the emulator, as a user runs it from a clone.

The emulator serves pseudo-terminals (in this process), the launcher starts the
bridge and the tension controller as processes on them, and a probe commands a
tension and watches the measured tip come back in the base frame.
"""

from contextlib import contextmanager
import os
from pathlib import Path
import re
import shutil
import signal
import subprocess
import sys

from geometry_msgs.msg import PointStamped
from hostile_view import get, HostileClient, Refused
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
import numpy as np
import pytest
import rclpy
from ros_helpers import call, interrupt, spin_until, spinning, TIMEOUT, wait_for
from sensor_msgs.msg import JointState
import tendon_robot_sim
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.mounting import sensor_mount
from tendon_robot_sim.ros import topics
from terminal import as_from_a_terminal


def start_rig(directory: Path) -> EmulatedRig:
    return EmulatedRig(load_robot(default_robot_file()),
                       sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                       PtyEndpoint(str(directory / 'motors')),
                       PtyEndpoint(str(directory / 'sensor')), time_constant=0.02).start()


def launch_hardware(rig: EmulatedRig, log: Path, *arguments: str) -> subprocess.Popen:
    """``tendon-robot-sim launch hardware`` on the rig's ports, output to ``log``."""
    return launch_hardware_on(rig.path('motors'), rig.path('sensor'), log, *arguments)


def launch_hardware_on(motors: str, sensor: str, log: Path, *arguments: str,
                       path: str | None = None) -> subprocess.Popen:
    """``tendon-robot-sim launch hardware`` on these ports (``path``: its PATH)."""
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    if path is not None:
        env['PATH'] = path
    with open(log, 'w') as out:
        return subprocess.Popen(
            [sys.executable, '-m', 'tendon_robot_sim.cli', 'launch', 'hardware',
             '--arg', f'motor_port:={motors}',
             '--arg', f'sensor_port:={sensor}', '--arg', 'rviz:=false',
             # the emulator runs in this test process, which a loaded machine stalls for
             # seconds: a device silent for the default 0.5 s is lost and latches the stop
             '--param', 'hardware_bridge:stale_timeout:=10.0', *arguments],
            env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=as_from_a_terminal)


@contextmanager
def launched(tmp_path: Path, probe: str, *arguments: str):
    """
    Launch hardware (``arguments`` added) on an emulated rig with a probe node in this process.

    Yields (rig, launch log, probe node). On the way out the probe goes, the launcher is
    interrupted as by Ctrl-C and must exit 0, and the rig stops.
    """
    rig = start_rig(tmp_path)
    log = tmp_path / 'launch.log'
    launcher = launch_hardware(rig, log, *arguments)
    rclpy.init()
    node = rclpy.create_node(probe)
    try:
        yield rig, log, node
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        try:
            code = interrupt(launcher)
        finally:
            rig.stop()
    assert code == 0, log.read_text()


def test_launch_hardware_runs_the_bridge_on_the_emulator_and_relaxes_on_exit(tmp_path):
    robot = load_robot(default_robot_file())
    with launched(tmp_path, 'hardware_probe') as (rig, log, node):
        tips: list[PointStamped] = []
        states: list[JointState] = []
        # Subscribed as a user's node usually is: default QoS (reliable), depth 10 (REP 2003).
        node.create_subscription(PointStamped, topics.TIP_MEASURED.name, tips.append, 10)
        node.create_subscription(JointState, topics.TENDON_STATE.name, states.append, 10)
        command = node.create_publisher(JointState, topics.TENDON_COMMAND.name,
                                        topics.COMMAND_QOS)
        spin_until(node, lambda: tips and states and command.get_subscription_count() >= 1,
                   'the launched stack')
        resting = tips[-1].point.z
        # user -> controller process -> bridge process -> serial -> emulated motors
        command.publish(JointState(name=['t0'], effort=[3.0]))
        spin_until(node, lambda: rig.motor.applied and isinstance(
            rig.motor.applied[-1], motor.SetTensions) and rig.motor.applied[-1].tensions[0] == 3.0,
            'the motors to get 3 N on t0')
        # The controller sends 0 N for the others: the bridge raises them to the pretension.
        assert rig.motor.applied[-1].tensions[1:] == (0.5, 0.5, 0.5)
        spin_until(node, lambda: np.allclose(
            [tips[-1].point.x, tips[-1].point.y, tips[-1].point.z], rig.plant.tip_position,
            atol=3e-6) and rig.motor.tensions[0] == 3.0, 'the measured tip to settle')
        assert tips[-1].header.frame_id == robot.base.frame_id
        assert tips[-1].point.z - resting > 0.05   # pulling t0 (on +z) lifts the tip
    # The launcher brought the managed bridge to active through its change_state service.
    assert '[launch] hardware_bridge: active' in log.read_text()
    # On shutdown the bridge leaves every tendon at the pretension.
    assert rig.motor.applied[-1] == motor.SetTensions(rig.motor.applied[-1].seq, (0.5,) * 4)


def test_autostart_false_leaves_the_bridge_unconfigured_until_asked(tmp_path):
    # A namespace of its own: no service of an earlier bridge of this name answers instead.
    bridge = f'/autostart_{os.getpid()}/hardware_bridge'
    with launched(tmp_path, 'lifecycle_probe', '--arg', 'autostart:=false',
                  '--namespace', bridge.split('/')[1]) as (rig, log, node):
        setpoints = []   # the controller streams them all along, to the unconfigured bridge
        node.create_subscription(JointState, f'/{bridge.split("/")[1]}/tendon/setpoint',
                                 setpoints.append, topics.TENDON_SETPOINT.qos)
        with spinning(node):
            state = call(node, GetState, f'{bridge}/get_state', GetState.Request(),
                         timeout=TIMEOUT, again_after=1.0)
            assert state.current_state.label == 'unconfigured'
            # 25 setpoints (half a second at 50 Hz), counted: a loaded machine streams fewer
            # a second, and each is a chance for a command to reach the motors
            wait_for(lambda: len(setpoints) >= 25, 'setpoints streamed')
            assert rig.motor.counts['received'] == 0, 'a command reached unconfigured motors'
            for transition in (Transition.TRANSITION_CONFIGURE, Transition.TRANSITION_ACTIVATE):
                assert call(node, ChangeState, f'{bridge}/change_state',
                            ChangeState.Request(transition=Transition(id=transition))).success
            # active: the controller's setpoints (the pretension, nothing commanded) go out
            wait_for(lambda: rig.motor.applied, 'the motors to receive the setpoints')
    assert 'hardware_bridge: active' not in log.read_text()


def without_ros2(path: str) -> str:
    """``path`` (a PATH) without the folders that hold a ``ros2`` command."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if not shutil.which('ros2', path=d))


@pytest.mark.parametrize('ros2_cli', [False, True], ids=['no ros2 CLI', 'ros2 CLI'])
def test_a_bridge_that_fails_configure_is_noted_with_a_retry_that_can_run(tmp_path, ros2_cli):
    """
    The note said `retry with ros2 lifecycle set ...` also where there is no `ros2` CLI.

    The venv `make setup` builds from PyPI wheels has none: the note then says to launch again
    once the ports are there; with the CLI (a stand-in on PATH) it names its command.
    """
    path = without_ros2(os.environ['PATH'])
    assert shutil.which('ros2', path=path) is None
    if ros2_cli:
        (tmp_path / 'bin').mkdir()
        (tmp_path / 'bin' / 'ros2').write_text('#!/bin/sh\nexit 0\n')
        (tmp_path / 'bin' / 'ros2').chmod(0o755)
        path = os.pathsep.join((str(tmp_path / 'bin'), path))
    namespace = f'no_ports_{os.getpid()}'
    log = tmp_path / 'launch.log'
    launcher = launch_hardware_on(str(tmp_path / 'no_motors'), str(tmp_path / 'no_sensor'),
                                  log, '--namespace', namespace, path=path)
    try:
        notes = wait_for(lambda: [line for line in log.read_text().splitlines()
                                  if 'hardware_bridge: not active' in line],
                         'the launcher to note the bridge not active')
    finally:
        code = interrupt(launcher)
    assert code == 0, log.read_text()
    (note,) = notes
    assert 'configure failed' in note, note
    if ros2_cli:
        assert f'retry with `ros2 lifecycle set /{namespace}/hardware_bridge configure`' \
            in note, note
    else:
        assert 'ros2' not in note, note
        assert 'launch again' in note, note


def started_pids(log: Path) -> dict[str, int]:
    """``{node: pid}`` from the launcher's 'NAME: started (pid N)' notes."""
    found = re.findall(r'\[launch\] (\w+): started \(pid (\d+)\)', log.read_text())
    return {name: int(pid) for name, pid in found}


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited one nobody reaped yet does not)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rpartition(')')[2].split()[0]
    except FileNotFoundError:
        return False
    return state not in ('Z', 'X')


@pytest.mark.parametrize('signum, code', [(signal.SIGHUP, 0), (signal.SIGKILL, -signal.SIGKILL)],
                         ids=['SIGHUP', 'SIGKILL'])
def test_the_stack_dies_with_the_launcher_and_the_robot_relaxed(tmp_path, signum, code):
    # SIGHUP: the terminal of `tendon-robot-sim launch hardware` closes (an SSH link drops);
    # the launcher stops its nodes. SIGKILL: it has no say; the kernel sends them SIGTERM.
    rig = start_rig(tmp_path)
    log = tmp_path / 'launch.log'
    launcher = launch_hardware(rig, log)
    try:
        wait_for(lambda: '[launch] hardware_bridge: active' in log.read_text(),
                 'the bridge to become active')
        wait_for(lambda: rig.motor.applied, 'the motors to receive the setpoints')
        children = started_pids(log)
        assert {'hardware_bridge', 'tension_controller'} <= set(children), log.read_text()
        launcher.send_signal(signum)
        assert launcher.wait(timeout=TIMEOUT) == code, log.read_text()
        gone = wait_for(lambda: not [n for n, pid in children.items() if alive(pid)],
                        'every node to exit')
    finally:
        if launcher.poll() is None:
            launcher.kill()
        rig.stop()
    assert gone
    assert rig.motor.applied[-1] == motor.SetTensions(rig.motor.applied[-1].seq, (0.5,) * 4)


def test_launch_hardware_with_the_view_serves_the_page_and_draws_the_model_of_the_state(
        tmp_path):
    """``view:=true``: the view, and the quasi-static model of the measured tensions it draws."""
    from geometry_msgs.msg import PoseStamped
    from urllib.request import urlopen
    from visualization_msgs.msg import MarkerArray

    with launched(tmp_path, 'hardware_view_probe', '--arg', 'view:=true', '--param',
                  'view:port:=0') as (rig, log, node):
        markers, model_tips = [], []
        node.create_subscription(MarkerArray, topics.BACKBONE_MARKERS.name, markers.append,
                                 topics.BACKBONE_MARKERS.subscription_qos)
        node.create_subscription(PoseStamped, 'model/tip/pose', model_tips.append, 10)
        command = node.create_publisher(JointState, topics.TENDON_COMMAND.name,
                                        topics.COMMAND_QOS)
        spin_until(node, lambda: markers and model_tips and command.get_subscription_count()
                   and re.search(r'view of / on (http://\S+)', log.read_text()),
                   'the stack with its view and model')
        url = re.search(r'view of / on (http://\S+)', log.read_text()).group(1)
        with urlopen(url, timeout=TIMEOUT) as page:
            assert page.status == 200 and b'<html' in page.read().lower()
        # real servos: the page only with its token (issue 37: a foreign page pressed Stop,
        # Resume, and moved t0 to 19 N), and never for another site's page
        port = int(re.search(r':(\d+)/', url).group(1))
        token = url.partition('?token=')[2]
        assert token and get(port, '/')[0] == 403
        for headers in ({}, {'Origin': 'https://attacker.example'}):
            with pytest.raises(Refused):
                HostileClient(port, headers=headers)
        with pytest.raises(Refused):
            HostileClient(port, f'/?token={token}', {'Origin': 'https://attacker.example'})
        resting = model_tips[-1].pose.position.z
        # the model follows the bridge's measured tensions: pulling t0 (on +z) lifts its tip.
        # Sent until then: the view listens to commands too, and may have been the one
        # subscriber matched when the first was sent.

        def lifted():
            command.publish(JointState(name=['t0'], effort=[3.0]))
            return model_tips[-1].pose.position.z - resting > 0.05
        spin_until(node, lifted, 'the model to lift its tip')
