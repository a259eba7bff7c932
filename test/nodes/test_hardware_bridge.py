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

"""Hardware bridge node against the emulated devices: real rclpy, real pseudo-terminals."""

from contextlib import contextmanager
import math
import os
from pathlib import Path
import resource
import shutil
import signal
import subprocess
import sys
import time
from typing import Sequence
import warnings

from builtin_interfaces.msg import Time as TimeMsg
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import PointStamped
from lifecycle_msgs.msg import Transition, TransitionEvent
from lifecycle_msgs.srv import ChangeState, GetState
import numpy as np
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_rosout_default
from ros_helpers import call, spin_until, spinning
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
import tendon_robot_sim
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.devices import Faults, SETTLED
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.hardware_bridge_node import HardwareBridgeNode
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.mounting import sensor_mount
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError
from tendon_robot_sim.ros.spinner import BackgroundSpinner
from terminal import as_from_a_terminal
from waiting import TIMEOUT, wait_for
import yaml

ROBOT = load_robot(default_robot_file())
NAMES = ROBOT.tendon_names
MIN_TENSION = 0.5        # N, the bridge's pretension in these tests
WATCHDOG = 0.4           # s
LIMITS = (-0.01, 0.02)   # m, displacement limits


class Probe(Node):
    """Plays the controller (a setpoint stream at 20 Hz) and records what the bridge says."""

    def __init__(self, context, namespace: str = ''):
        super().__init__('probe', context=context, namespace=namespace)
        self.setpoint: JointState | None = None   # streamed while not None
        self.published: list[tuple[float, JointState]] = []
        self.states: list[JointState] = []
        self.tips: list[PointStamped] = []
        self.diagnostics: list[DiagnosticArray] = []
        self.pub = self.create_publisher(JointState, topics.TENDON_SETPOINT.name,
                                         topics.TENDON_SETPOINT.qos)
        self.create_subscription(JointState, topics.TENDON_STATE.name, self.states.append,
                                 topics.TENDON_STATE.qos)
        self.create_subscription(PointStamped, topics.TIP_MEASURED.name, self.tips.append,
                                 topics.TIP_MEASURED.qos)
        self.create_subscription(DiagnosticArray, topics.DIAGNOSTICS.name, self.diagnostics.append,
                                 topics.DIAGNOSTICS.qos)
        self.stop = self.create_client(Trigger, 'hardware_bridge/stop')
        self.resume = self.create_client(Trigger, 'hardware_bridge/resume')
        self.create_timer(0.05, self._stream)

    def _stream(self):
        if self.setpoint is not None:
            self.publish(self.setpoint)

    def publish(self, msg: JointState):
        self.published.append((time.monotonic(), msg))
        self.pub.publish(msg)

    def call(self, client) -> Trigger.Response:
        assert client.wait_for_service(timeout_sec=TIMEOUT)
        future = client.call_async(Trigger.Request())
        return wait_for(lambda: future.result(), what=f'{client.srv_name} to answer')

    def diagnostic(self, name: str, after: float = 0.0) -> dict:
        """Values of the newest status called ``name`` published after ``after`` (ROS s)."""
        for array in reversed(self.diagnostics):
            stamp = array.header.stamp.sec + array.header.stamp.nanosec * 1e-9
            for status in array.status:
                if status.name.endswith(name) and stamp > after:
                    return {'level': status.level, 'message': status.message,
                            **{kv.key: kv.value for kv in status.values}}
        return {}


def tensions(**by_name) -> JointState:
    return JointState(name=list(by_name), effort=[float(v) for v in by_name.values()])


@pytest.fixture
def rig(tmp_path):
    with EmulatedRig(ROBOT, sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                     PtyEndpoint(str(tmp_path / 'motors')), PtyEndpoint(str(tmp_path / 'sensor')),
                     time_constant=0.02) as rig:
        yield rig


def bridge_on(rig, context, watchdog=WATCHDOG, active=True,
              namespace: str = '') -> HardwareBridgeNode:
    """
    Return the bridge on the emulator's ports, with the limits of these tests.

    ``active``: configured and activated (through its own calls, before anything spins it).
    """
    bridge = HardwareBridgeNode(context=context, namespace=namespace, parameter_overrides=[
        Parameter('motor_port', value=rig.path('motors')),
        Parameter('sensor_port', value=rig.path('sensor')),
        Parameter('min_tension', value=MIN_TENSION),
        Parameter('min_displacement', value=LIMITS[0]),
        Parameter('max_displacement', value=LIMITS[1]),
        Parameter('watchdog_timeout', value=watchdog),
        Parameter('diagnostics_rate', value=5.0),
        Parameter('ack_timeout', value=0.05),
        Parameter('warning_throttle_period', value=0.0)])
    if active:
        assert bridge.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert bridge.trigger_activate() == TransitionCallbackReturn.SUCCESS
    return bridge


@pytest.fixture
def ros(rig):
    """Spin the bridge on the emulator's ports and a probe in a background thread."""
    context = rclpy.Context()
    rclpy.init(context=context)
    bridge = bridge_on(rig, context)
    probe = Probe(context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(bridge)
    executor.add_node(probe)
    spinner = BackgroundSpinner(executor)
    yield bridge, probe
    spinner.stop()
    probe.destroy_node()
    bridge.destroy_node()
    rclpy.try_shutdown(context=context)


def last_applied(rig):
    return rig.motor.applied[-1] if rig.motor.applied else None


def applied_tensions(rig):
    """Tensions of the last command the device applied, if it was a tension command."""
    command = last_applied(rig)
    return command.tensions if isinstance(command, motor.SetTensions) else None


def test_setpoint_goes_to_the_device_and_state_and_tip_come_back(rig, ros):
    bridge, probe = ros
    # Names in another order than the robot's: the bridge sorts them into channels.
    probe.setpoint = tensions(t3=0.5, t2=0.75, t1=0.5, t0=2.0)
    wanted = (2.0, 0.5, 0.75, 0.5)
    wait_for(lambda: applied_tensions(rig) == wanted, what='the device to apply the setpoint')

    def settled_state():
        # The device's lag snaps to the target within SETTLED; before that the tensions (and
        # the tip) may still be off by 2 mN (5 um of tip), and under load the next tip could be
        # measured before the snap (a fresh clone's suite beside two busy loops)
        return probe.states and np.allclose(probe.states[-1].effort, wanted, atol=2e-3) \
            and np.allclose(probe.states[-1].velocity, 0.0, atol=1e-4) \
            and np.allclose(rig.motor.tensions, wanted, rtol=0.0, atol=SETTLED)
    wait_for(settled_state, what='tendon/state to settle')
    state = probe.states[-1]
    assert list(state.name) == NAMES
    # The device's state, through the wire (1 um, 1 mN) and back in SI units.
    np.testing.assert_allclose(state.position, rig.motor.displacements, atol=1.5e-6)
    # Independently: the statics of the robot under the commanded tensions.
    reference = StaticsSolver(ROBOT).solve_tensions(wanted)
    np.testing.assert_allclose(state.position, reference.tendon_displacements, atol=2e-6)

    # A tip measured after the settled state was (a stamp later than now): on a loaded
    # machine the newest tip can be older than any fixed wait. Stamped by the bridge's clock
    # when measured, so never before this instant nor after the next.
    settled = bridge.get_clock().now().nanoseconds * 1e-9

    def stamp(msg) -> float:
        return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    tip = wait_for(lambda: [t for t in probe.tips if stamp(t) > settled],
                   what='a tip measured after the state settled')[0]
    assert stamp(tip) <= bridge.get_clock().now().nanoseconds * 1e-9
    assert tip.header.frame_id == ROBOT.base.frame_id
    np.testing.assert_allclose([tip.point.x, tip.point.y, tip.point.z],
                               reference.tip_position, atol=3e-6)

    # Displacement mode (position instead of effort): what [1, 0.6, 0, 0] N produce, with
    # t2 and t3 paid out 0.5 mm further, so that they hang slack.
    targets = StaticsSolver(ROBOT).solve_tensions([1.0, 0.6, 0.0, 0.0]).tendon_displacements \
        - [0.0, 0.0, 5e-4, 5e-4]
    probe.setpoint = JointState(name=NAMES, position=targets.tolist())
    # Ramped from where the device was: the last command is the setpoint.
    wait_for(lambda: isinstance(last_applied(rig), motor.SetDisplacements)
             and np.allclose(last_applied(rig).displacements, targets, atol=5e-7),
             what='the displacement command')
    wait_for(lambda: np.allclose(probe.states[-1].position, targets, atol=1e-6)
             and np.allclose(probe.states[-1].effort, [1.0, 0.6, 0.0, 0.0], atol=1e-3),
             what='the displacements to settle')

    # A motor fault turns the motor diagnostics to ERROR, naming the tendon and the fault.
    rig.motor.inject_fault(1, motor.FAULT_ENCODER)
    after = bridge.get_clock().now().nanoseconds * 1e-9 + 0.1
    motors = wait_for(lambda: probe.diagnostic('motor driver', after), what='diagnostics')
    assert motors['level'] == b'\x02' and motors['faults t1'] == 'encoder'


def test_bad_setpoints_never_reach_the_wire(rig, ros):
    bridge, probe = ros
    good = tensions(t0=1.0, t1=1.0, t2=1.0, t3=1.0)
    probe.setpoint = good
    wait_for(lambda: applied_tensions(rig) == (1.0,) * 4, what='the first setpoint')
    bad = [
        tensions(t0=math.nan, t1=1.0, t2=1.0, t3=1.0),
        tensions(t0=1.0, t1=math.inf, t2=1.0, t3=1.0),
        tensions(t0=1.0, t1=1.0, t2=1.0, t9=1.0),                       # unknown name
        tensions(t0=1.0, t1=1.0, t2=1.0),                               # a tendon missing
        JointState(name=NAMES, effort=[1.0, 1.0, 1.0]),                 # wrong length
        JointState(name=NAMES, effort=[1.0] * 4, position=[0.0] * 4),   # both modes
        JointState(name=NAMES),                                         # neither
        JointState(name=NAMES, position=[0.0, math.nan, 0.0, 0.0]),
    ]
    # The good setpoint keeps streaming (so the watchdog stays quiet). The bad ones come in
    # between: whatever the device gets meanwhile (a command re-sent after an ACK lost under
    # load, say) must be the good setpoint.
    applied, rejected = rig.motor.counts['applied'], rig.motor.counts['rejected']
    refused = bridge.core.rejected
    for msg in bad:
        probe.publish(msg)
    # Each bad one taken and refused by the bridge (a count: a loaded machine takes longer),
    # then what the device got meanwhile is checked.
    wait_for(lambda: bridge.core.rejected >= refused + len(bad), what='every bad setpoint refused')
    assert bridge.core.rejected == refused + len(bad)
    assert rig.motor.counts['rejected'] == rejected, 'the device rejected a command'
    since = rig.motor.counts['applied'] - applied
    for command in list(rig.motor.applied)[len(rig.motor.applied) - since:]:
        assert isinstance(command, motor.SetTensions) and command.tensions == (1.0,) * 4, \
            f'a rejected setpoint reached the wire: {command}'

    # Out of range: rejected whole (issue 29 item 10), the last valid setpoint is kept.
    probe.setpoint = None
    refused = bridge.core.rejected
    out_of_range = (tensions(t0=1e12, t1=1.0, t2=1.0, t3=1.0),
                    tensions(t0=50.0, t1=-1.0, t2=0.2, t3=3.0),
                    JointState(name=NAMES, position=[0.5, -0.5, 0.001, 0.0]))
    for msg in out_of_range:
        probe.publish(good)
        probe.publish(msg)
    probe.setpoint = good
    wait_for(lambda: bridge.core.rejected >= refused + len(out_of_range),
             what='every out-of-range setpoint refused')
    for command in rig.motor.received:   # the ramp to 1 N, then 1 N: nothing else
        assert isinstance(command, motor.SetTensions) and all(
            MIN_TENSION <= t <= 1.0 for t in command.tensions), \
            f'an out-of-range setpoint reached the wire: {command}'
    assert not rig.motor.rejected
    after = bridge.get_clock().now().nanoseconds * 1e-9
    safety = wait_for(lambda: probe.diagnostic('safety', after), what='diagnostics')
    assert safety['rejected_setpoints'] == str(len(bad) + 3)


class Said(list):
    """A logger that keeps the warnings it is given: what the bridge logs, without /rosout."""

    def warning(self, text: str) -> None:
        self.append(text)


def test_a_flood_of_one_malformed_setpoint_hides_no_other_fault(rig, ros):
    bridge, probe = ros
    said = Said()
    bridge._warned.logger = said               # what it logs, without /rosout's delays
    bridge._warned.period = lambda: 60.0       # a flood is said once in the whole test
    probe.setpoint = tensions(t0=1.0, t1=1.0, t2=1.0, t9=1.0)   # wrong names at 20 Hz
    wait_for(lambda: any('name: must list every tendon' in s for s in said),
             what='the wrong names rejected')
    for msg in (tensions(t0=math.nan, t1=1.0, t2=1.0, t3=1.0),
                JointState(name=NAMES, effort=[1.0] * 4, position=[0.0] * 4)):
        probe.publish(msg)
    # within the 60 s of the flood: each other fault is said at once
    wait_for(lambda: any('effort: not finite' in s for s in said), what='the NaN rejected')
    wait_for(lambda: any('exactly one of effort' in s for s in said),
             what='both effort and position rejected')
    refused = bridge.core.rejected
    wait_for(lambda: bridge.core.rejected > refused, what='the flood going on')
    assert sum('name: must list every tendon' in s for s in said) == 1, said


def test_damaged_frames_and_a_disconnect_are_survived(rig, ros):
    bridge, probe = ros
    for thread in rig.threads.values():
        thread.output.faults = Faults(drop_byte=0.1, corrupt_checksum=0.1, garbage=0.1,
                                      split=0.2, seed=thread.output.faults.seed)
    probe.setpoint = tensions(t0=1.5, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (1.5, 1.0, 1.0, 1.0), what='setpoint A')
    rig.disconnect('motors', down_time=0.5)
    rig.disconnect('sensor', down_time=0.5)
    wait_for(lambda: not bridge.motors.connected, what='the bridge to notice')
    probe.setpoint = tensions(t0=2.5, t1=1.0, t2=1.0, t3=1.0)   # issued while unplugged
    wait_for(lambda: bridge.motors.connected and bridge.sensor.connected,
             what='both links back')
    # The lost motor port latched the stop (test_a_motor_port_lost...): the safe state, then
    # setpoint B once ~/resume releases it
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    assert probe.call(probe.resume).success
    wait_for(lambda: applied_tensions(rig) == (2.5, 1.0, 1.0, 1.0), what='setpoint B')
    commands = list(rig.motor.applied)
    # what the device applied, and what the bridge saw, if it fails
    history = (f'applied: {[(m.seq, getattr(m, "tensions", None)) for m in commands]}; '
               f'resends {bridge.core.resends}, watchdog {bridge.core.watchdog_tripped}, '
               f'stopped {bridge.core.stopped}, link {bridge.motors.link.statistics()}')
    assert len({m.seq for m in commands}) == len(commands), f'applied twice; {history}'
    tensions_applied = [getattr(m, 'tensions', None) for m in commands]
    # B only after the safe state: never sent while the stop was latched. It may be applied
    # twice at the end: the ramp's last step but one can land within the wire's 1 mN of it
    # (2.4 + 0.0999 N when a timer period came short), and the step to B itself follows.
    safe = max(i for i, t in enumerate(tensions_applied) if t == (MIN_TENSION,) * 4)
    first_b = tensions_applied.index((2.5, 1.0, 1.0, 1.0))
    assert first_b > safe, history
    assert all(t == (2.5, 1.0, 1.0, 1.0) for t in tensions_applied[first_b:]), history

    states, tips = len(probe.states), len(probe.tips)
    wait_for(lambda: np.allclose(probe.states[-1].effort, (2.5, 1, 1, 1), atol=2e-3),
             what='tendon/state after the reconnect')
    wait_for(lambda: len(probe.tips) > tips + 10 and len(probe.states) > states + 10,
             what='the streams to resume')
    after = bridge.get_clock().now().nanoseconds * 1e-9
    motors = wait_for(lambda: probe.diagnostic('motor driver', after), what='diagnostics')
    sensor = probe.diagnostic('tip sensor', after)
    assert motors['state'] == sensor['state'] == 'connected'
    assert motors['reconnects'] == sensor['reconnects'] == '1'
    assert int(motors['bad_checksum']) > 0 and int(sensor['bad_checksum']) > 0
    assert int(sensor['bytes_dropped']) > 0
    # The setpoint issued while unplugged was ramped to from what the device held.
    rise, _ = largest_steps(rig)
    assert rise <= MAX_RISE


def test_watchdog_commands_the_safe_state(rig, ros):
    bridge, probe = ros
    probe.setpoint = tensions(t0=3.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (3.0, 1.0, 1.0, 1.0), what='the setpoint')
    probe.setpoint = None
    last_sent = probe.published[-1][0]
    safe = (MIN_TENSION,) * 4
    wait_for(lambda: applied_tensions(rig) == safe, what='the safe state')
    # Not before the watchdog's time; how soon after is the machine's load (the first tick
    # after it trips: test_bridge_core, on the ticks' own times).
    assert time.monotonic() - last_sent >= WATCHDOG
    after = bridge.get_clock().now().nanoseconds * 1e-9
    safety = wait_for(lambda: probe.diagnostic('safety', after), what='diagnostics')
    assert safety['watchdog_tripped'] == 'True' and safety['level'] == b'\x01'
    # Setpoints re-arm it.
    probe.setpoint = tensions(t0=2.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (2.0, 1.0, 1.0, 1.0), what='control again')


def test_stop_relaxes_every_tendon_until_resume(rig, ros):
    bridge, probe = ros
    probe.setpoint = tensions(t0=3.0, t1=2.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (3.0, 2.0, 1.0, 1.0), what='the setpoint')
    response = probe.call(probe.stop)
    assert response.success
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    count = rig.motor.counts['applied']
    probe.setpoint = tensions(t0=4.0, t1=2.0, t2=1.0, t3=1.0)
    streamed = len(probe.published)   # six setpoints streamed (0.3 s at 20 Hz), counted
    wait_for(lambda: len(probe.published) >= streamed + 6, what='setpoints while stopped')
    assert rig.motor.counts['applied'] == count, 'a setpoint went through while stopped'
    wait_for(lambda: np.allclose(probe.states[-1].effort, MIN_TENSION, atol=2e-3),
             what='the tendons to relax')
    assert probe.call(probe.resume).success
    wait_for(lambda: applied_tensions(rig) == (4.0, 2.0, 1.0, 1.0), what='control again')


def test_a_motor_fault_flag_latches_the_safe_state_naming_the_tendon_and_the_fault(rig, ros):
    """
    A fault flag in the device's status (here the encoder's) is a device fault, as a servo's.

    It latched nothing before: the motor diagnostics said ERROR while the bridge went on
    pulling with the setpoints of a motor whose position sensor had failed. (Tension limit,
    the device's clamp at work, stops nothing: the ramp test pulls a tendon into it.)
    """
    bridge, probe = ros
    probe.setpoint = tensions(t0=3.0, t1=2.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (3.0, 2.0, 1.0, 1.0), what='the setpoint')
    rig.motor.inject_fault(1, motor.FAULT_ENCODER)
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True'
                      and d, what='the stop latch')
    assert safety['message'].startswith('stopped by a fault: channel 1: encoder')
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and
                      d['message'].startswith('fault, stopped') and d, what='the motor ERROR')
    assert motors['level'] == b'\x02' and 'channel 1: encoder' in motors['message']
    # A flag that persists latches again at once; cleared, ~/resume hands control back.
    assert probe.call(probe.resume).success
    resumed = bridge.get_clock().now().nanoseconds * 1e-9
    wait_for(lambda: probe.diagnostic('safety', resumed).get('stopped') == 'True',
             what='the stop latched again')
    rig.motor.inject_fault(1, 0)
    wait_for(lambda: probe.diagnostic('motor driver').get('faults t1') is None,
             what='the flag cleared')
    assert probe.call(probe.resume).success
    wait_for(lambda: applied_tensions(rig) == (3.0, 2.0, 1.0, 1.0), what='control again')


def follow(rig, probe, mode: str) -> None:
    """Stream a setpoint in ``mode`` ('tension' or 'displacement') until the device applies it."""
    if mode == 'tension':
        probe.setpoint = tensions(t0=3.0, t1=2.0, t2=1.0, t3=1.0)
        wait_for(lambda: applied_tensions(rig) == (3.0, 2.0, 1.0, 1.0), what='the setpoint')
    else:
        probe.setpoint = JointState(name=NAMES, position=[0.004, -0.002, 0.0, 0.0])
        wait_for(lambda: isinstance(last_applied(rig), motor.SetDisplacements)
                 and last_applied(rig).displacements == (0.004, -0.002, 0.0, 0.0),
                 what='the setpoint')


@pytest.mark.parametrize('mode', ['tension', 'displacement'])
def test_a_motor_port_lost_while_active_latches_the_safe_state_with_a_diagnostic(
        rig, ros, mode):
    """
    The motor driver's port vanishing (the terminal's other end closed) is a device fault.

    It latched nothing before: the bridge waited for the port, then went on ramping to the
    setpoints as if the device had done nothing meanwhile, with no fault on /diagnostics.
    Now, as a Dynamixel bus that vanished, it ends stopped until ~/resume, the safe state
    the first thing the device gets when it is back, and the fault named.
    """
    bridge, probe = ros
    follow(rig, probe, mode)
    rig.disconnect('motors', down_time=1.0)
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True'
                      and d, what='the stop latch')
    port = rig.path('motors')
    assert safety['message'].startswith(f'stopped by a fault: port {port}: ')
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and
                      d['message'].startswith('fault, stopped') and d, what='the motor ERROR')
    assert motors['level'] == b'\x02' and f'port {port}' in motors['message']
    # Back: the safe state goes out, and nothing else while the stream goes on.
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    count = rig.motor.counts['applied']
    streamed = len(probe.published)
    wait_for(lambda: len(probe.published) >= streamed + 6, what='setpoints while stopped')
    assert rig.motor.counts['applied'] == count, 'a setpoint went through while stopped'
    # The link is back: ~/resume hands control back, ramped.
    assert probe.call(probe.resume).success
    probe.setpoint = tensions(t0=2.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (2.0, 1.0, 1.0, 1.0), what='control again')
    assert largest_steps(rig)[0] <= MAX_RISE


@pytest.mark.parametrize('mode', ['tension', 'displacement'])
@pytest.mark.parametrize('fault', ['silent', 'stall flag'])
def test_a_silent_or_stalled_motor_driver_latches_the_safe_state_in_either_mode(
        rig, ros, mode, fault):
    """
    A device that says nothing valid for stale_timeout (0.5 s) is a fault, as a silent servo.

    Every frame it sends spoilt (here for 1.5 s, its commands spoilt too) is silence to the
    host: nothing to read, no ACK. Before, that was a WARN ("stale") and an ERROR ("commands
    not acknowledged") while the bridge went on following setpoints, and on the first valid
    frame it ramped on. A fault flag in displacement mode latches as in tension mode.
    """
    bridge, probe = ros
    follow(rig, probe, mode)
    if fault == 'silent':
        rig.threads['motors'].noise_burst(1.5, replies=True)
        said = 'the device is silent, nothing valid received for'
    else:
        rig.motor.inject_fault(2, motor.FAULT_STALL)
        said = 'channel 2: stall'
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True'
                      and d, what='the stop latch')
    assert said in safety['message']
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and
                      d['message'].startswith('fault, stopped') and d, what='the motor ERROR')
    assert motors['level'] == b'\x02' and said in motors['message']
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    rig.motor.inject_fault(2, 0)
    wait_for(lambda: probe.diagnostic('motor driver').get('faults t2') is None,
             what='the flag cleared')
    assert probe.call(probe.resume).success
    follow(rig, probe, mode)


@pytest.mark.parametrize('mode', ['tension', 'displacement'])
@pytest.mark.parametrize('fault', ['no target', 'silent'])
def test_a_blind_tip_sensor_is_an_error_and_stops_no_motor_in_either_mode(rig, ros, mode, fault):
    """
    A laser that sees no target, or says nothing: ERROR on its status, the motors follow on.

    As designed (docs/hardware.md, A blind tip sensor): the tip is not in the motors' safety
    loop, and the controllers pause their tip feedback on a stale tip.
    """
    bridge, probe = ros
    follow(rig, probe, mode)
    if fault == 'no target':
        rig.sensor.dropout = 1.0
    else:
        rig.disconnect('sensor', down_time=3.0)
    sensor = wait_for(lambda: (d := probe.diagnostic('tip sensor')) and d['level'] == b'\x02'
                      and d, what='the tip sensor ERROR')
    assert sensor['message'].startswith('blind: ' if fault == 'no target' else 'disconnected')
    safety = probe.diagnostic('safety')
    assert safety['stopped'] == 'False' and safety['message'] == 'following setpoints'
    tips = len(probe.tips)
    count = rig.motor.counts['applied']
    probe.setpoint = tensions(t0=2.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (2.0, 1.0, 1.0, 1.0), what='the motors to follow')
    assert rig.motor.counts['applied'] > count
    if fault == 'no target':
        assert len(probe.tips) == tips, 'a tip published from samples without a target'


def largest_steps(rig) -> tuple[float, float]:
    """
    Return the largest rise of a tension [N] and change of a displacement [m] per command.

    Steps are from one applied command to the next of the same mode (falling tensions are the safe
    direction), divided by the commands the bridge queued from one to the other: under load the
    driver replaces a command not yet written by the newer one (its sequence number counts
    both), so the device may see two ramp steps at once, never more than the ramp made.
    """
    rise = move = 0.0
    commands = list(rig.motor.applied)
    for a, b in zip(commands, commands[1:]):
        queued = max(1, (b.seq - a.seq) % (motor.SEQ_MAX + 1))
        if isinstance(a, motor.SetTensions) and isinstance(b, motor.SetTensions):
            rise = max(rise, max(np.subtract(b.tensions, a.tensions)) / queued)
        elif isinstance(a, motor.SetDisplacements) and isinstance(b, motor.SetDisplacements):
            move = max(move, max(abs(np.subtract(b.displacements, a.displacements))) / queued)
    return rise, move


# Defaults of max_tension_rate and max_displacement_rate over two command periods (the
# bridge's ramp step after a late timer tick is capped there), plus the wire's resolution.
MAX_RISE = 10.0 * 2 / 100.0 + 1e-3
MAX_MOVE = 0.01 * 2 / 100.0 + 1e-6


def test_setpoints_are_ramped_after_start_resume_watchdog_and_mode_change(rig, ros):
    bridge, probe = ros
    high = tensions(t0=4.0, t1=0.5, t2=0.5, t3=0.5)
    probe.setpoint = high
    wait_for(lambda: applied_tensions(rig) == (4.0, 0.5, 0.5, 0.5), what='the first ramp')
    assert probe.call(probe.stop).success
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
    assert probe.call(probe.resume).success
    wait_for(lambda: applied_tensions(rig) == (4.0, 0.5, 0.5, 0.5), what='the ramp after resume')
    probe.setpoint = None
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the watchdog')
    probe.setpoint = high
    wait_for(lambda: applied_tensions(rig) == (4.0, 0.5, 0.5, 0.5),
             what='the ramp after the watchdog')
    probe.setpoint = JointState(name=NAMES, position=[0.015, -0.005, 0.0, 0.0])
    wait_for(lambda: isinstance(last_applied(rig), motor.SetDisplacements)
             and last_applied(rig).displacements == (0.015, -0.005, 0.0, 0.0),
             what='the displacement ramp')
    rise, move = largest_steps(rig)
    assert rise <= MAX_RISE and move <= MAX_MOVE
    # From 0.5 N to 4 N at 10 N/s: about 35 commands each time.
    assert len(rig.motor.applied) > 3 * 30


def test_the_safe_state_outlasts_noise_longer_than_the_retries(rig, ros):
    bridge, probe = ros
    probe.setpoint = tensions(t0=3.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (3.0, 1.0, 1.0, 1.0), what='the setpoint')
    # Twelve spoilt frames: three times what one command's retries (1 + max_retries) cover.
    rig.threads['motors'].corrupt_next_input(12)
    probe.setpoint = None
    after = bridge.get_clock().now().nanoseconds * 1e-9
    motors = wait_for(lambda: probe.diagnostic('motor driver', after).get('level') == b'\x02'
                      and probe.diagnostic('motor driver', after),
                      what='the motor diagnostics to report the link that cannot deliver')
    assert 'not acknowledged' in motors['message']
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4,
             what='the safe state')
    assert bridge.motors.statistics()[1].ack_timeouts >= 2 and bridge.core.resends >= 2
    after = bridge.get_clock().now().nanoseconds * 1e-9
    wait_for(lambda: probe.diagnostic('motor driver', after).get('level') == b'\x00',
             what='the motor diagnostics to recover')


def test_use_sim_time_does_not_switch_the_watchdog_off(rig, ros):
    bridge, probe = ros
    probe.setpoint = tensions(t0=3.0, t1=1.0, t2=1.0, t3=1.0)
    wait_for(lambda: applied_tensions(rig) == (3.0, 1.0, 1.0, 1.0), what='the setpoint')
    # Simulated time with no /clock: the ROS clock stands still from now on.
    assert bridge.set_parameters([Parameter('use_sim_time', value=True)])[0].successful
    probe.setpoint = None
    wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')


def stamp_of(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def test_use_sim_time_without_a_clock_is_warned_of_and_a_clock_stamps_the_measurements(
        rig, ros):
    """
    On use_sim_time the bridge stamps on /clock, as a ROS driver does; before one, 0: a warning.

    Measured data stamped 0 with nothing said looked like a bridge fault.
    """
    bridge, probe = ros
    said = Said()
    bridge._warned.logger = said               # what it logs, without /rosout's delays
    bridge._warned.period = lambda: 60.0       # said once in the whole test
    assert bridge.set_parameters([Parameter('use_sim_time', value=True)])[0].successful
    wait_for(lambda: any('no /clock has arrived' in s for s in said), what='the warning')
    assert 'tendon/state, tip/measured and /diagnostics are stamped 0' in said[-1]
    before = len(probe.states)
    assert stamp_of(wait_for(lambda: probe.states[before:] and probe.states[-1],
                             what='a state on the clock that has no time')) == 0.0
    clock = probe.create_publisher(Clock, '/clock', 10)
    before = len(probe.states), len(probe.tips)

    def clock_at_42_s():     # as a simulator paused there publishes it
        clock.publish(Clock(clock=TimeMsg(sec=42)))
        time.sleep(0.02)
    wait_for(lambda: len(probe.states) > before[0] and len(probe.tips) > before[1]
             and 41.0 < stamp_of(probe.states[-1]) <= 42.0
             and 41.0 < stamp_of(probe.tips[-1]) <= 42.0,
             what='the measurements stamped on /clock', between=clock_at_42_s)
    assert sum('no /clock has arrived' in s for s in said) == 1, said


def test_noise_bursts_around_the_watchdog_delay_the_safe_state_by_no_more_than_a_resend(
        rig, ros):
    """
    A burst of noise as the watchdog trips costs the safe state a re-send, not a give-up.

    Judged by what was sent, not by the delay in wall time (once < 0.5 s: a loaded machine
    stretches it by its load): the safe command the bridge sent at the trip is the one the
    device applies, re-sent by the driver's back-off (its schedule: test_driver), never given
    up and sent again by the bridge. The driver may re-send it more often here than its
    default (a loaded machine's late ACKs must not add up to a give-up).
    """
    bridge, probe = ros
    bridge.motors.max_retries = 8
    rng = np.random.default_rng(16)
    delays = []
    # six trials, and on until a burst has hit a command (on a loaded machine the bursts,
    # timed by sleeps, can all miss): up to 30
    trial = -1
    while trial < 5 or (rig.motor.counts['rejected'] == 0 and trial < 29):
        trial += 1
        wanted = (float(np.round(rng.uniform(1.0, 3.0), 3)), 1.0, 1.0, 1.0)
        probe.setpoint = tensions(**dict(zip(NAMES, wanted)))
        wait_for(lambda: applied_tensions(rig) == wanted, what='the setpoint')
        resends = bridge.core.resends
        probe.setpoint = None
        time.sleep(0.06)   # a publish already under way lands
        trip = probe.published[-1][0] + WATCHDOG
        # A burst of 5-40 ms of noise on the host's line (and, every other time, on the
        # device's), starting up to 10 ms before the trip (the timing of the trial, not
        # what is judged).
        time.sleep(max(0.0, trip - rng.uniform(0.0, 0.01) - time.monotonic()))
        rig.threads['motors'].noise_burst(rng.uniform(0.005, 0.04), replies=bool(trial % 2))
        wait_for(lambda: applied_tensions(rig) == (MIN_TENSION,) * 4, what='the safe state')
        delays.append(time.monotonic() - trip)
        # the command the device applied is the last the bridge sent: waited for, as the device
        # may apply it before the bridge's thread has noted its number (11890 against 11889
        # once, at load 9)
        wait_for(lambda: rig.motor.applied[-1].seq == bridge.core._sent_seq,
                 what='the bridge noting the safe command the device applied')
        assert bridge.core.resends == resends, f'trial {trial}: the bridge had to send again'
    print(f'safe-state delays after the trip [s]: {np.round(delays, 3).tolist()}')
    assert rig.motor.counts['rejected'] > 0, 'no burst hit a command'


def test_a_robot_whose_limits_the_wire_cannot_carry_is_refused(tmp_path):
    description = yaml.safe_load((share_dir() / 'config' / 'robot.yaml').read_text())
    description['tendons'][1]['max_tension'] = 2000.0
    robot_file = tmp_path / 'robot.yaml'
    robot_file.write_text(yaml.safe_dump(description))
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigurationError, match=r"max_tension \{'t1': 2000.0\} N exceeds"):
            HardwareBridgeNode(context=context, parameter_overrides=[
                Parameter('robot_file', value=str(robot_file)),
                Parameter('motor_port', value=str(tmp_path / 'none'))])
    finally:
        rclpy.try_shutdown(context=context)


def test_a_destroyed_bridge_leaves_the_graph_at_once(tmp_path):
    """
    Its lifecycle services and its node go with ``destroy_node``, not with the collector.

    rclpy's LifecycleNode left its state machine, which holds both, to the garbage
    collector; collected after the context had shut down, it hung the process in Fast DDS.
    Here the test holds the bridge, so only ``destroy_node`` can take them from the graph.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    namespace = own_namespace('destroyed')
    observer = Node('observer', context=context, namespace=namespace)
    bridge = HardwareBridgeNode(context=context, namespace=namespace, parameter_overrides=[
        Parameter('motor_port', value=str(tmp_path / 'none'))])
    service = f'/{namespace}/hardware_bridge/change_state'

    def listed() -> bool:
        return any(name == service for name, _ in observer.get_service_names_and_types())

    try:
        wait_for(listed, f'{service} in the graph')
        bridge.destroy_node()
        wait_for(lambda: not listed(), f'{service} gone from the graph')
        assert 'hardware_bridge' not in observer.get_node_names()
    finally:
        observer.destroy_node()
        rclpy.try_shutdown(context=context)
    assert bridge is not None   # held to here: the collector took nothing


# Whatever the sensor (the default is tdcr-laser-v1): a bad head geometry is a bad value.
@pytest.mark.parametrize('name, value, message', [
    ('keyence_axes', [5, 9], 'keyence_axes: two different axes of 0, 1, 2, got (5, 9)'),
    ('keyence_axes', [1], 'keyence_axes: two values (one per head), got [1]'),
    ('keyence_signs', [0, 3], 'keyence_signs: each +1 or -1, got (0, 3)'),
    ('keyence_offsets', [math.nan, 0.0], 'keyence_offsets: finite numbers [m], got [nan, 0.0]'),
    ('keyence_third', math.inf, 'keyence_third: a finite number [m], got inf'),
])
def test_a_bad_keyence_geometry_is_refused_at_the_start(tmp_path, name, value, message):
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigurationError) as error:
            HardwareBridgeNode(context=context, parameter_overrides=[
                Parameter(name, value=value),
                Parameter('motor_port', value=str(tmp_path / 'none'))])
        assert str(error.value) == f'parameter {message}'
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize('device, ok', [('keyence-lkg', False), ('tdcr-laser-v1', True)])
def test_a_baud_rate_the_lkg_cannot_talk_at_is_refused_at_the_start(tmp_path, device, ok):
    """
    The LK-G's RS-232C runs at 9600 .. 115200 baud only (five rates).

    The port opened at 250000 and the controller never answered: a blind sensor, not the
    one-line refusal naming the parameter. The streaming sensor is not the LK-G.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        overrides = [Parameter('sensor_device', value=device),
                     Parameter('sensor_baudrate', value=250000),
                     Parameter('motor_port', value=str(tmp_path / 'none'))]
        if ok:
            HardwareBridgeNode(context=context, parameter_overrides=overrides).destroy_node()
            return
        with pytest.raises(ConfigurationError) as error:
            HardwareBridgeNode(context=context, parameter_overrides=overrides)
        assert str(error.value) == ('parameter sensor_baudrate: the LK-G talks at 9600, 19200, '
                                    '38400, 57600 or 115200 baud, got 250000')
    finally:
        rclpy.try_shutdown(context=context)


CALIBRATED = ', calibration: {gain: 119.0, offset: 0.0}'


@pytest.mark.parametrize('channel, said', [
    ('pulley_radius: -0.015' + CALIBRATED, 'pulley_radius: must be > 0 m, got -0.015'),
    # the servo's Current Limit, max_tension's bound, comes through the calibration: a
    # missing one was the emulator's 100 N/A, 16 % under an XM430-W350's 119 N/A on 15 mm
    ('pulley_radius: 0.015', 'calibration: missing: gain and offset, or table '
     '(tendon-robot-sim hardware calibrate-tension measures them)'),
    ('pulley_radius: 0.015, calibration: {gain: 119.0}',
     'calibration: missing: offset (tendon-robot-sim hardware calibrate-tension measures '
     'it)')])
def test_a_bad_dynamixel_bus_file_is_refused_at_the_start(tmp_path, channel, said):
    """It failed configure only: the node ran on, unconfigured, the rest of the stack too."""
    bad = tmp_path / 'dynamixel.yaml'
    bad.write_text(f'channels: [{{id: 1, {channel}}}]\n')
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        with pytest.raises(ConfigurationError) as error:
            HardwareBridgeNode(context=context, parameter_overrides=[
                Parameter('motor_device', value='dynamixel'),
                Parameter('dynamixel_file', value=str(bad)),
                Parameter('motor_port', value=str(tmp_path / 'none'))])
        assert str(error.value) == f'parameter dynamixel_file: {bad}: channels[0].{said}'
    finally:
        rclpy.try_shutdown(context=context)


def test_a_bad_keyence_geometry_ends_the_bridge_in_one_fatal_line(tmp_path):
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    # an unconfigured bridge that waits forever is the bug: it runs into the timeout
    done = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.nodes.hardware_bridge_node', '--ros-args',
         '-p', 'keyence_axes:=[5,9]', '-p', f'motor_port:={tmp_path / "none"}'],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, lines
    assert '[FATAL]' in lines[0] and lines[0].endswith(
        'parameter keyence_axes: two different axes of 0, 1, 2, got (5, 9)'), lines


def test_a_restarted_bridge_is_obeyed_by_the_device_that_kept_its_state(rig):
    """
    The emulator outlives a bridge that died without its shutdown command (a crash).

    The next bridge's first setpoint must not be taken for a repeat of the last one.
    """
    for session, wanted in enumerate(((2.0, 0.5, 0.5, 0.5), (3.0, 0.5, 0.5, 0.5))):
        context = rclpy.Context()
        rclpy.init(context=context)
        # A long watchdog: the only command of a session is its setpoint.
        bridge = bridge_on(rig, context, watchdog=10.0)
        probe = Probe(context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(bridge)
        executor.add_node(probe)
        probe.setpoint = tensions(**dict(zip(NAMES, wanted)))
        try:
            spin_until(executor, lambda: applied_tensions(rig) == wanted,
                       f'session {session}: the setpoint')
        finally:
            if session == 0:
                bridge.motors.link.stop()   # dies: no safe state on the way out
            executor.shutdown()
            probe.destroy_node()
            bridge.destroy_node()
            rclpy.try_shutdown(context=context)


# ---------------------------------------------------------------- lifecycle (managed node)

def openers(path: str) -> int:
    """
    Count the descriptors of this process open on the terminal behind ``path``.

    1 is the emulator's own; each further one is a port the bridge holds open.
    """
    device = os.path.realpath(path)
    count = 0
    for fd in os.listdir('/proc/self/fd'):
        try:
            count += os.readlink(f'/proc/self/fd/{fd}') == device
        except OSError:
            pass   # closed meanwhile
    return count


def own_namespace(test: str) -> str:
    """
    Return a namespace for the nodes of one test.

    The graph may still list the services of a bridge of an earlier test (or run); a
    request must reach the bridge of this one.
    """
    return f'{test}_{os.getpid()}'


def change_state(node: Node, transition: int, bridge: str) -> bool:
    request = ChangeState.Request(transition=Transition(id=transition))
    return call(node, ChangeState, f'{bridge}/change_state', request).success


def lifecycle_state(node: Node, bridge: str) -> str:
    response = call(node, GetState, f'{bridge}/get_state', GetState.Request(), again_after=1.0)
    return response.current_state.label


def quiet_for(rig, probe, setpoints: int = 6) -> bool:
    """
    Whether the motors receive nothing while the probe streams ``setpoints`` more setpoints.

    Counted, not timed (6: 0.3 s at 20 Hz): a loaded machine streams fewer a second, and each
    one is a chance for the bridge to pass one on.
    """
    received = rig.motor.counts['received']
    streamed = len(probe.published)
    wait_for(lambda: len(probe.published) >= streamed + setpoints,
             what=f'{setpoints} setpoints streamed')
    return rig.motor.counts['received'] == received


def test_lifecycle_transitions_open_drive_hold_and_close_the_ports(rig):
    context = rclpy.Context()
    rclpy.init(context=context)
    namespace = own_namespace('lifecycle')
    bridge_node = bridge_on(rig, context, active=False, namespace=namespace)
    bridge = bridge_node.get_fully_qualified_name()
    probe = Probe(context, namespace)
    ports = [rig.path('motors'), rig.path('sensor')]
    wanted = (2.0, 0.5, 0.5, 0.5)
    safe = (MIN_TENSION,) * 4
    # What launch_ros's OnStateTransition matches on (hardware.launch.py activates on
    # configuring -> inactive, which a deactivate must not produce).
    transitions: list[tuple[str, str]] = []
    probe.create_subscription(TransitionEvent, f'{bridge}/transition_event', lambda e:
                              transitions.append((e.start_state.label, e.goal_state.label)), 10)
    with spinning(bridge_node, probe, context=context):
        probe.setpoint = tensions(**dict(zip(NAMES, wanted)))   # streamed from now on
        assert lifecycle_state(probe, bridge) == 'unconfigured'
        assert [openers(p) for p in ports] == [1, 1] and quiet_for(rig, probe)

        assert change_state(probe, Transition.TRANSITION_CONFIGURE, bridge)
        assert lifecycle_state(probe, bridge) == 'inactive'
        assert [openers(p) for p in ports] == [2, 2]
        assert quiet_for(rig, probe), 'a setpoint went out while inactive'
        assert not probe.states and not probe.tips, 'published while inactive'
        # no servo reports its state on this driver: no tendon/servos (with: the dynamixel tests)
        assert probe.count_publishers(topics.TENDON_SERVOS.name) == 0
        assert wait_for(lambda: probe.diagnostic('safety'), what='diagnostics while inactive')[
            'message'].startswith('inactive')

        assert change_state(probe, Transition.TRANSITION_ACTIVATE, bridge)
        wait_for(lambda: applied_tensions(rig) == wanted, what='the setpoint once active')
        wait_for(lambda: probe.states and probe.tips, what='state and tip once active')

        # ~/stop latches across deactivate/activate: only ~/resume releases it.
        assert probe.call(probe.stop).success
        wait_for(lambda: applied_tensions(rig) == safe, what='the safe state on ~/stop')
        assert change_state(probe, Transition.TRANSITION_DEACTIVATE, bridge)
        assert change_state(probe, Transition.TRANSITION_ACTIVATE, bridge)
        assert quiet_for(rig, probe) and applied_tensions(rig) == safe, 'activate undid ~/stop'
        assert probe.call(probe.resume).success
        wait_for(lambda: applied_tensions(rig) == wanted, what='the setpoint after ~/resume')

        assert change_state(probe, Transition.TRANSITION_DEACTIVATE, bridge)
        assert lifecycle_state(probe, bridge) == 'inactive'
        wait_for(lambda: applied_tensions(rig) == safe, what='the safe state on deactivate')
        states = len(probe.states)
        assert quiet_for(rig, probe), 'a setpoint went out after deactivate'
        assert len(probe.states) <= states + 1, 'still publishing after deactivate'

        assert change_state(probe, Transition.TRANSITION_CLEANUP, bridge)
        assert lifecycle_state(probe, bridge) == 'unconfigured'
        assert [openers(p) for p in ports] == [1, 1]
        probe.setpoint = None
        wait_for(lambda: transitions[-1:] == [('cleaningup', 'unconfigured')],
                 what='the transition events')
    assert transitions.count(('configuring', 'inactive')) == 1, transitions
    assert transitions.count(('deactivating', 'inactive')) == 2, transitions


def test_shutdown_from_active_relaxes_and_closes(rig):
    context = rclpy.Context()
    rclpy.init(context=context)
    namespace = own_namespace('shutdown')
    bridge_node = bridge_on(rig, context, watchdog=10.0, namespace=namespace)   # active
    bridge = bridge_node.get_fully_qualified_name()
    probe = Probe(context, namespace)
    wanted = (3.0, 0.5, 0.5, 0.5)
    with spinning(bridge_node, probe, context=context):
        probe.setpoint = tensions(**dict(zip(NAMES, wanted)))
        wait_for(lambda: applied_tensions(rig) == wanted, what='the setpoint')
        assert change_state(probe, Transition.TRANSITION_ACTIVE_SHUTDOWN, bridge)
        assert lifecycle_state(probe, bridge) == 'finalized'
        assert applied_tensions(rig) == (MIN_TENSION,) * 4
        assert openers(rig.path('motors')) == openers(rig.path('sensor')) == 1
        probe.setpoint = None


@contextmanager
def configure_refused(test: str, parameters: list[Parameter]):
    """
    Start a bridge in a namespace of its own, ask it to configure and expect a refusal.

    Yields (a listener node, the bridge's name, the bridge's error log messages) while both
    spin; the bridge is unconfigured.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    bridge_node = HardwareBridgeNode(context=context, namespace=own_namespace(test),
                                     parameter_overrides=parameters)
    logs: list[Log] = []
    listener = Node('log_listener', context=context)
    listener.create_subscription(Log, '/rosout', logs.append, qos_profile_rosout_default)
    bridge = bridge_node.get_fully_qualified_name()
    logger = bridge.lstrip('/').replace('/', '.')
    with spinning(bridge_node, listener, context=context):
        assert not change_state(listener, Transition.TRANSITION_CONFIGURE, bridge)
        assert lifecycle_state(listener, bridge) == 'unconfigured'
        errors = wait_for(lambda: [log.msg for log in logs
                                   if log.level == Log.ERROR and log.name == logger],
                          what='the error log')
        yield listener, bridge, errors


def test_a_port_that_cannot_be_opened_fails_configure_and_configure_can_be_retried(
        rig, tmp_path):
    late = tmp_path / 'sensor_later'   # the tip sensor is not plugged in yet
    with configure_refused('retry', [Parameter('motor_port', value=rig.path('motors')),
                                     Parameter('sensor_port', value=str(late))]) as (
            listener, bridge, errors):
        assert f"cannot open the tip sensor port '{late}'" in errors[0]
        assert 'check the device and sensor_port, then configure again' in errors[0]
        # the motor port, opened first, was closed again
        assert openers(rig.path('motors')) == 1
        # and /diagnostics says it until a configure succeeds (it said nothing unconfigured)
        arrays: list[DiagnosticArray] = []
        listener.create_subscription(DiagnosticArray, topics.DIAGNOSTICS.name, arrays.append,
                                     topics.DIAGNOSTICS.qos)

        def sensor_status():
            return [s for a in arrays for s in a.status if s.name == f'{bridge}: tip sensor']
        failure = wait_for(sensor_status, what='the configure failure on /diagnostics')[-1]
        assert failure.level == DiagnosticStatus.ERROR and failure.message == errors[0]
        assert failure.hardware_id == f'tdcr-laser-v1 on {late}'
        late.symlink_to(os.path.realpath(rig.path('sensor')))
        assert change_state(listener, Transition.TRANSITION_CONFIGURE, bridge)
        assert lifecycle_state(listener, bridge) == 'inactive'
        assert openers(rig.path('motors')) == openers(rig.path('sensor')) == 2
        seen = len(arrays)
        wait_for(lambda: any(s.name == f'{bridge}: safety' for a in arrays[seen:]
                             for s in a.status), what='the diagnostics of a configured bridge')
        assert not [s for s in sensor_status()[-1:] if 'configure failed' in s.message]


@pytest.mark.parametrize('motor_device, sensor_device', [
    ('tdcr-motor-v1', 'keyence-lkg'), ('dynamixel', 'tdcr-laser-v1'),
    ('dynamixel', 'keyence-lkg')])
def test_a_missing_motor_port_is_named_whatever_the_devices(tmp_path, motor_device,
                                                            sensor_device):
    """
    The motor port is opened first; when it fails, the tip sensor was never started.

    Closing that never-started sensor (or bus) raised, and rclpy turned the exception into
    a silent ERROR: the launcher said "configure failed (the node logs why)" and nothing
    was logged. Now the missing port is named, for every pair of devices.
    """
    missing = tmp_path / 'motors'
    # a namespace per device pair: a late /rosout line of the pair before is not this one's
    pair = f'missing_{motor_device}_{sensor_device}'.replace('-', '_')
    # the port never appears: configure retries it for open_timeout whatever its length (the
    # default's 2 s per pair for the same refusal; a late port: the test above)
    with configure_refused(pair, [
            Parameter('open_timeout', value=0.1),
            Parameter('motor_port', value=str(missing)),
            Parameter('motor_device', value=motor_device),
            Parameter('sensor_port', value=str(tmp_path / 'sensor')),
            Parameter('sensor_device', value=sensor_device)]) as (_, _, errors):
        assert len(errors) == 1
        assert errors[0].startswith(
            f"configure failed: cannot open the motor driver port '{missing}' (")


def test_an_unexpected_error_in_a_transition_is_logged_not_swallowed(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError('the device factory broke')

    monkeypatch.setattr('tendon_robot_sim.nodes.hardware_bridge_node.motor_bus', broken)
    with configure_refused('broken', [Parameter('motor_port', value='/dev/null')]) as (
            _, _, errors):
        assert errors == ['configure failed: internal error, RuntimeError: the device factory '
                          'broke (please report it)']


# ---------------------------------------------------------------- Ctrl-C

SIGINT_RUNS = 20
SIGINT_BATCH = 10   # bridge processes alive at once


def start_bridge_process(name: str, motor_port: str, log: Path,
                         parameters: Sequence[str] = ()) -> subprocess.Popen:
    """
    Start the bridge as ``ros2 run`` does: its own process, from this source tree.

    It runs in a folder of its own next to ``log``, where a crash leaves its core dump
    (:func:`native_stacks`). ``parameters``: more ``NAME:=VALUE``, after the defaults here.
    """
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    env['PYTHONFAULTHANDLER'] = '1'     # a hung bridge's stacks, to its log (exit_code)
    folder = log.with_suffix('')
    folder.mkdir(exist_ok=True)
    with open(log, 'w') as out:
        return subprocess.Popen(
            [sys.executable, '-m', 'tendon_robot_sim.nodes.hardware_bridge_node', '--ros-args',
             '-r', f'__node:={name}', '-p', f'motor_port:={motor_port}', '-p', 'sensor_port:=""',
             '-p', f'min_tension:={MIN_TENSION}',
             *(word for parameter in parameters for word in ('-p', parameter))],
            env=env, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=dumping_core_from_a_terminal)


def dumping_core_from_a_terminal() -> None:
    """``preexec_fn``: as from a terminal, with core dumps as large as the hard limit allows."""
    as_from_a_terminal()
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def native_stacks(folder: Path) -> str:
    """
    Return every thread's C stack of a bridge that crashed in ``folder`` (its core dump, gdb).

    Python's fault handler writes only the Python threads: a crash in a thread of the DDS
    library shows in its output as no thread at all.
    """
    cores = sorted(folder.glob('core*'))
    if not cores or shutil.which('gdb') is None:
        return "no native stacks (no core dump in the bridge's folder, or no gdb)"
    try:
        return subprocess.run(['gdb', '-batch', '-ex', 'thread apply all bt 15', sys.executable,
                               str(cores[-1])], capture_output=True, text=True,
                              timeout=TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        return 'no native stacks (gdb timed out)'
    finally:
        for core in cores:
            core.unlink()


def crash_report(i: int, bridge: subprocess.Popen, log: Path) -> str:
    """Tell what the log and the core dump of bridge ``i``, which has exited, say of its end."""
    return (f'bridge {i} exited with {bridge.returncode} before it came up:\n{log.read_text()}'
            + native_stacks(log.with_suffix('')))


def bridge_log(logs: Path, i: int, started_again: set) -> Path:
    """Return the log of bridge ``i``'s process: its first, or the one started again."""
    return logs / (f'bridge_{i}_again.log' if i in started_again else f'bridge_{i}.log')


def come_up(bridges: dict, clients: dict, name: dict, started_again: set, probe, rigs: dict,
            logs: Path) -> bool:
    """
    Tell whether every bridge's lifecycle services are ready; start again one that crashed.

    A bridge killed by a signal before its services came up has done nothing this test checks:
    it is started once more under a new name, and the crash, with its native stacks, is
    reported as a warning. Ten Fast DDS participants starting at once on a loaded machine
    crashed one of them, twice, in a thread that is not Python's (docs/development.md). A
    second crash, or an exit with a code, fails the test.
    """
    for i, bridge in bridges.items():
        if bridge.poll() is None:
            continue
        report = crash_report(i, bridge, bridge_log(logs, i, started_again))
        if bridge.returncode >= 0 or i in started_again:
            raise AssertionError(report)
        warnings.warn(f'started again: {report}')
        started_again.add(i)
        name[i] = f'{name[i]}_again'
        probe.destroy_client(clients[i])
        clients[i] = probe.create_client(ChangeState, f'/{name[i]}/change_state')
        bridges[i] = start_bridge_process(name[i], rigs[i].path('motors'),
                                          bridge_log(logs, i, started_again))
    return all(client.service_is_ready() for client in clients.values())


def exit_code(bridge: subprocess.Popen) -> int | str:
    """Wait for a stopped bridge's exit code; a hung one is aborted, its stacks in its log."""
    try:
        return bridge.wait(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        bridge.send_signal(signal.SIGABRT)    # faulthandler writes every thread's stack
        bridge.wait(timeout=TIMEOUT)
        return f'none: still running {TIMEOUT:.0f} s after its stop signal'


def applies(rig, tensions) -> bool:
    """Whether the rig applies ``tensions`` within TIMEOUT s (it may read late, not never)."""
    try:
        wait_for(lambda: applied_tensions(rig) == tensions, what='the safe state')
    except AssertionError:
        return False
    return True


# A transition not done after this long is requested again [s]: its request or its answer
# was lost to a DDS match still in progress (ten processes starting at once, under load).
TRANSITION_AGAIN = 10.0


def drive(probe: Node, clients: dict, name: dict, transition: int, start: str,
          reached: str) -> None:
    """
    Bring the bridges of ``clients`` from state ``start`` to ``reached`` by ``transition``.

    What counts is the state each bridge reports (get_state, asked again until it answers),
    not the answer to change_state: on a loaded machine a request or its answer may be lost
    while the graph is still matching, and the transition was requested only once; one
    still at ``start`` TRANSITION_AGAIN s after its request is asked again.
    """
    asked: dict[int, float] = {}
    # every call within the wait's 120 s: a call has its own deadline (120 s for the service,
    # 120 s for the answer), and ten bridges that never answered held the test for 20 minutes
    deadline = time.monotonic() + 120.0

    def all_reached() -> bool:
        for i in [i for i in clients if i not in done]:
            state = call(probe, GetState, f'/{name[i]}/get_state', GetState.Request(),
                         timeout=max(1.0, deadline - time.monotonic()),
                         again_after=1.0).current_state.label
            if state == reached:
                done.add(i)
            elif state == start and time.monotonic() - asked.get(i, -math.inf) > \
                    TRANSITION_AGAIN:
                clients[i].call_async(ChangeState.Request(transition=Transition(id=transition)))
                asked[i] = time.monotonic()
        return len(done) == len(clients)
    done: set[int] = set()
    wait_for(all_reached, timeout=deadline - time.monotonic(),
             what=f'the bridges to reach {reached}')


def test_ctrl_c_exits_cleanly_and_leaves_the_robot_relaxed_every_time(tmp_path):
    """
    Stop 20 bridge processes: unconfigured, inactive, or active following setpoints.

    Stopped with Ctrl-C, SIGTERM or SIGHUP (the terminal closing), every combination of
    state and signal among them. Every one must exit 0. The states are reached through
    :func:`drive`, which reads them back rather than trusting a change_state answer that a
    loaded machine may lose (it did at load 3: 'timed out after 60 s waiting for transition
    1'); passes beside two busy loops (load 9). The device of a configured one
    must have applied the safe state last; an unconfigured one never opened its port, so
    its device received nothing.
    """
    rng = np.random.default_rng(6)
    wanted = (2.0, 0.5, 0.5, 0.5)
    states = ('unconfigured', 'inactive', 'active')
    goal = {i: states[i % 3] for i in range(SIGINT_RUNS)}
    stop_signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    stop_signal = {i: stop_signals[i // 3 % 3] for i in range(SIGINT_RUNS)}
    name = {i: f'bridge_{os.getpid()}_{i}' for i in range(SIGINT_RUNS)}   # no stale graph
    context = rclpy.Context()
    rclpy.init(context=context)
    probe = Probe(context)
    probe.setpoint = tensions(**dict(zip(NAMES, wanted)))   # every bridge listens to it
    failures = []
    started_again = set()
    with spinning(probe, context=context):
        for first in range(0, SIGINT_RUNS, SIGINT_BATCH):
            runs = range(first, min(first + SIGINT_BATCH, SIGINT_RUNS))
            rigs = {i: EmulatedRig(ROBOT, sensor_mount(share_dir() / 'urdf/tendon_robot.urdf'),
                                   PtyEndpoint(str(tmp_path / f'motors{i}')), None,
                                   time_constant=0.02).start() for i in runs}
            bridges = {i: start_bridge_process(name[i], rigs[i].path('motors'),
                                               tmp_path / f'bridge_{i}.log') for i in runs}
            clients = {i: probe.create_client(ChangeState, f'/{name[i]}/change_state')
                       for i in runs}
            try:
                # Ten processes starting at once on a loaded machine: a generous deadline.
                wait_for(lambda: come_up(bridges, clients, name, started_again, probe, rigs,
                                         tmp_path),
                         timeout=120.0, what='the bridges to come up')
                for transition, start, reached in (
                        (Transition.TRANSITION_CONFIGURE, 'unconfigured', 'inactive'),
                        (Transition.TRANSITION_ACTIVATE, 'inactive', 'active')):
                    drive(probe, {i: clients[i] for i in runs
                                  if states.index(goal[i]) >= states.index(reached)},
                          name, transition, start, reached)
                for i in runs:
                    if goal[i] == 'active':
                        wait_for(lambda: applied_tensions(rigs[i]) == wanted,
                                 what=f'bridge {i} to follow the setpoints')
                for i in runs:
                    time.sleep(rng.uniform(0.0, 0.03))   # at different phases of the timers
                    bridges[i].send_signal(stop_signal[i])
                codes = {i: exit_code(bridges[i]) for i in runs}
                # The emulated devices of this (loaded) process may read the bridge's last
                # command after the bridge has gone: what they apply last is what counts.
                left_safe = {i: goal[i] == 'unconfigured' or applies(
                    rigs[i], (MIN_TENSION,) * 4) for i in runs}
            finally:
                for client in clients.values():
                    probe.destroy_client(client)
                for i in runs:
                    if bridges[i].poll() is None:
                        bridges[i].kill()
                    rigs[i].stop()
            for i in runs:
                if goal[i] == 'unconfigured':     # never opened its port: received nothing
                    left_safe[i] = rigs[i].motor.counts['received'] == 0
                if codes[i] != 0 or not left_safe[i]:
                    failures.append(f'run {i} ({goal[i]}, {stop_signal[i].name}): exit code '
                                    f'{codes[i]}, last command {last_applied(rigs[i])}\n'
                                    + bridge_log(tmp_path, i, started_again).read_text())
        probe.setpoint = None
    assert not failures, '\n'.join(failures)
