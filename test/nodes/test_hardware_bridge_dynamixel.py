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
The hardware bridge on emulated real devices: real rclpy, ROBOTIS's SDK, pseudo-terminals.

The motors are a Dynamixel X-series chain (Protocol 2.0), the tip sensor an LK-G
style laser controller (RS-232C command/response).
"""

from dataclasses import replace
import signal
from types import SimpleNamespace

from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from ros_helpers import call
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from tendon_robot_sim import share_dir
from tendon_robot_sim.emulator.dynamixel import bus_file, packet
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.nodes.hardware_bridge_node import HardwareBridgeNode
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.mounting import sensor_mount
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.spinner import BackgroundSpinner
from test_hardware_bridge import (MIN_TENSION, Probe, ROBOT, start_bridge_process, tensions,
                                  TIMEOUT, wait_for)

pytest.importorskip('dynamixel_sdk')

OVERLOAD = 1 << 5


@pytest.fixture
def rig(tmp_path):
    with EmulatedRig(ROBOT, sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                     PtyEndpoint(str(tmp_path / 'motors')), PtyEndpoint(str(tmp_path / 'sensor')),
                     status_rate=200.0, time_constant=0.02, motor_device='dynamixel',
                     sensor_device='keyence-lkg') as rig:
        yield rig


def dynamixel_bridge(rig, context, tmp_path, more=()) -> HardwareBridgeNode:
    """Return the bridge on the rig's Dynamixel chain and laser, unconfigured; ``more`` wins."""
    # rclpy keeps the last override of a name: ``more`` goes last
    return HardwareBridgeNode(context=context, parameter_overrides=[
        Parameter('motor_device', value='dynamixel'),
        # The emulated chain answers from a thread of this process, behind the GIL.
        Parameter('dynamixel_file', value=str(bus_file(tmp_path))),
        Parameter('motor_baudrate', value=1000000),
        Parameter('motor_port', value=rig.path('motors')),
        Parameter('sensor_port', value=rig.path('sensor')),
        Parameter('sensor_device', value='keyence-lkg'),
        Parameter('min_tension', value=MIN_TENSION),
        Parameter('watchdog_timeout', value=0.5),
        Parameter('diagnostics_rate', value=5.0),
        Parameter('reconnect_backoff', value=0.2),
        # configure talks to every servo (some 28 round trips each) through an emulator
        # thread that a loaded machine holds up: more than the 2 s a real bus needs
        Parameter('open_timeout', value=10.0),
        Parameter('warning_throttle_period', value=0.0)] + list(more))


@pytest.fixture
def ros(rig, tmp_path, request):
    """Yield the bridge on the rig, active, and a probe; ``request.param``: more parameters."""
    context = rclpy.Context()
    rclpy.init(context=context)
    more = [Parameter(name, value=value)
            for name, value in getattr(request, 'param', {}).items()]
    bridge = dynamixel_bridge(rig, context, tmp_path, more)
    assert bridge.trigger_configure() == TransitionCallbackReturn.SUCCESS
    chain = rig.motor
    # configure: current control, Current Limit that of max_tension (20 N / 100 N/A: 0.2 A)
    # within the bus file's 0.5 A, torque still off.
    assert [s.get(dxl.OPERATING_MODE) for s in chain.servos] == [dxl.CURRENT_MODE] * 4
    assert [s.get(dxl.CURRENT_LIMIT) for s in chain.servos] == [int(0.2 / dxl.CURRENT_UNIT)] * 4
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)
    assert bridge.trigger_activate() == TransitionCallbackReturn.SUCCESS
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


def test_tendon_servos_has_a_publisher_while_configured_only(rig, tmp_path):
    """
    ``tendon/servos`` exists from configure to cleanup (or shutdown), not before or after.

    It existed from the bridge's start on, also with motors other than Dynamixel (none:
    test_hardware_bridge.py), a topic in the ROS graph with a publisher and no messages. The
    bridge's own graph holds its publishers from their creation on: no wait.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    bridge = dynamixel_bridge(rig, context, tmp_path)
    try:
        def servos_publishers() -> int:
            return bridge.count_publishers(topics.TENDON_SERVOS.name)

        assert servos_publishers() == 0
        for leave in (bridge.trigger_cleanup, bridge.trigger_shutdown):   # configured twice
            assert bridge.trigger_configure() == TransitionCallbackReturn.SUCCESS
            assert servos_publishers() == 1
            assert leave() == TransitionCallbackReturn.SUCCESS
            assert servos_publishers() == 0
    finally:
        bridge.destroy_node()
        rclpy.try_shutdown(context=context)


def bus_cycles(bridge, count: int) -> None:
    """
    Wait for ``count`` more bus cycles that read every servo.

    What a check that nothing happens on the bus waits for: each cycle is a chance for it,
    and a loaded machine runs fewer of them in a given time.
    """
    end = bridge.motors.statistics()[0].frames_ok + count * len(bridge.motors.ids)
    wait_for(lambda: bridge.motors.statistics()[0].frames_ok >= end, what=f'{count} bus cycles')


def goal_tensions(chain) -> np.ndarray:
    """Tensions the servos' Goal Currents ask for, by the emulated servos' true calibration."""
    return np.array([s.gain * s.get(dxl.GOAL_CURRENT, signed=True) * dxl.CURRENT_UNIT
                     for s in chain.servos])


def test_tension_setpoints_drive_the_servos_and_an_overload_stops_until_reboot_and_resume(
        rig, ros):
    bridge, probe = ros
    chain = rig.motor
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    probe.setpoint = tensions(t0=3.0, t1=0.5, t2=1.0, t3=0.5)
    wanted = [3.0, 0.5, 1.0, 0.5]
    # One current unit (2.69 mA) is 0.27 N through the 100 N/A calibration.
    wait_for(lambda: np.allclose(goal_tensions(chain), wanted, atol=0.14),
             what='the goal currents')
    wait_for(lambda: probe.states and np.allclose(probe.states[-1].effort, wanted, atol=0.3),
             what='tendon/state to follow')
    assert np.argmax(probe.states[-1].position) == 0   # the pulled tendon was drawn in
    # The laser's two heads see the tip's lateral coordinates (y, z of the sensor frame).
    wait_for(lambda: probe.tips, what='the tip')
    wait_for(lambda: np.allclose(probe.states[-1].velocity, 0.0, atol=1e-4), what='rest')
    # A tip measured after the rest (stamped later): the newest one at any fixed wait may be
    # older on a loaded machine. Compared in the sensor frame: the unmeasured coordinate is a
    # constant (keyence_third).
    # The plant still creeps by microns after the tendons' rest: the newest tip measured
    # since must come to agree with the plant's, within the heads' 0.1 um digits and the wire.
    rest = bridge.get_clock().now().nanoseconds * 1e-9

    def measured_as_the_plant() -> bool:
        tips = [t.point for t in probe.tips
                if t.header.stamp.sec + 1e-9 * t.header.stamp.nanosec > rest]
        if not tips:
            return False
        measured = bridge.mount.to_sensor(np.array([tips[-1].x, tips[-1].y, tips[-1].z]))
        plant = bridge.mount.to_sensor(rig.plant.tip_position)
        return bool(np.all(np.abs(measured[1:] - plant[1:]) <= 2e-6))
    wait_for(measured_as_the_plant, what="a tip measured at rest as the plant's, within 2 um")
    # A head out of range: invalid samples, counted on the sensor's diagnostics.
    rig.sensor.blind(0)
    wait_for(lambda: int(probe.diagnostic('tip sensor').get('invalid', 0)) > 3,
             what='invalid samples counted')
    rig.sensor.blind(0, False)

    chain.set_hardware_error(3, OVERLOAD)
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and d['level'] == b'\x02'
                      and d, what='the motor ERROR')
    assert 'servo ID 3: overload error' in motors['message']
    assert motors['faults t2'] == 'overload error'
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True' and d,
                      what='the stop latch')
    assert safety['level'] == b'\x01'
    # The safety status says what stopped it (issue 36), not "stopped by ~/stop".
    assert safety['message'].startswith('stopped by a fault: servo ID 3: overload error')
    # Safe state: pretension on the servos that still hold torque; the overloaded one is off.
    wait_for(lambda: np.allclose(goal_tensions(chain)[[0, 1, 3]], MIN_TENSION, atol=0.14),
             what='the safe state')
    assert not chain.servos[2].get(dxl.TORQUE_ENABLE)
    # Shutdown page: only a reboot brings its torque back. ~/resume refuses, naming the
    # servo and ~/reboot; nothing on the bus changes (no torque flicker, no reconnect).
    held = [len(s.held) for s in chain.servos]
    reconnects = bridge.motors.statistics()[0].reconnects
    response = probe.call(probe.resume)
    assert not response.success
    assert 'servo ID 3 reports overload error, a shutdown error' in response.message
    assert '~/reboot' in response.message
    bus_cycles(bridge, 15)
    assert [len(s.held) for s in chain.servos] == held
    assert bridge.motors.statistics()[0].reconnects == reconnects
    assert probe.diagnostic('safety')['stopped'] == 'True'
    reboot = probe.create_client(Trigger, 'hardware_bridge/reboot')
    assert probe.call(reboot).success
    assert probe.call(probe.resume).success
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque back')


@pytest.mark.parametrize('ros', [{'sensor_blind_timeout': 2.0}], indirect=True)
def test_a_blind_tip_sensor_warns_at_once_is_an_error_after_its_time_and_ok_when_it_sees(
        rig, ros):
    """
    LK-G manual, page 5-6: XXXXXXXX (alarm) and +FFFFFFF / -FFFFFFF are no measurement.

    Every sample invalid: WARN from the first diagnostics after it, ERROR once nothing valid
    came for sensor_blind_timeout, OK again with the first valid sample.
    """
    bridge, probe = ros
    wait_for(lambda: probe.diagnostic('tip sensor').get('level') == b'\x00', what='sensor OK')
    rig.sensor.alarm(0)
    rig.sensor.blind(1)
    levels = []

    def sensor_level():
        status = probe.diagnostic('tip sensor')
        if status and (not levels or levels[-1][0] != status['level']):
            levels.append((status['level'], status['message']))
        return status.get('level') == b'\x02'
    wait_for(sensor_level, what='the sensor ERROR')
    assert [level for level, _ in levels] == [b'\x00', b'\x01', b'\x02'], levels
    assert levels[1][1].startswith('blind: no valid sample for')
    error = levels[2][1]
    assert error.startswith('blind: no valid sample for') and 'head 1 alarm' in error
    assert 'head 2 out of range' in error
    rig.sensor.alarm(0, False)
    rig.sensor.blind(1, False)
    wait_for(lambda: probe.diagnostic('tip sensor').get('level') == b'\x00',
             what='the sensor OK again')


def test_a_second_bridge_on_the_bus_fails_configure_and_leaves_the_first_driving(
        rig, ros, tmp_path):
    """
    A second bridge started on a bus a bridge drives is refused at configure, naming the port.

    Both opened the port: the second one's configure took the first one's answers (a lost
    port and a fault, the robot stopped), read the servos' garbled answers as model numbers,
    and, once through, would have switched the first one's servos off and driven them too.
    The port is now locked by whoever opens it first.
    """
    bridge, probe = ros
    chain = rig.motor
    probe.setpoint = tensions(t0=3.0, t1=0.5, t2=1.0, t3=0.5)
    wanted = [3.0, 0.5, 1.0, 0.5]
    wait_for(lambda: np.allclose(goal_tensions(chain), wanted, atol=0.14),
             what='the goal currents')
    reconnects = bridge.motors.statistics()[0].reconnects
    # The second bridge in a process of its own, as ``ros2 run`` starts it: built in this
    # one, its node's creation stalled the first bridge's bus thread (the GIL) past the
    # servos' 1 s Bus Watchdog on a loaded machine, which no second process can do.
    log = tmp_path / 'second_bridge.log'
    second = start_bridge_process('second_bridge', rig.path('motors'), log, [
        'motor_device:=dynamixel', f'dynamixel_file:={bus_file(tmp_path)}',
        'motor_baudrate:=1000000', 'open_timeout:=0.5'])
    try:
        # a request sent before the node matched is lost: get_state, a query, until it
        # answers; then the transition, once (as ros.lifecycle.bring_to_active)
        call(probe, GetState, 'second_bridge/get_state', GetState.Request(), again_after=1.0)
        assert not call(probe, ChangeState, 'second_bridge/change_state', ChangeState.Request(
            transition=Transition(id=Transition.TRANSITION_CONFIGURE))).success
    finally:
        second.send_signal(signal.SIGINT)
        assert second.wait(timeout=TIMEOUT) == 0, log.read_text()
    assert 'in use by another process' in log.read_text(), log.read_text()
    bus_cycles(bridge, 20)
    assert bridge.motors.statistics()[0].reconnects == reconnects
    assert bridge.core.fault == '' and not bridge.core.stopped
    assert all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)
    assert np.allclose(goal_tensions(chain), wanted, atol=0.14)


def test_a_lost_servo_is_a_fault_and_the_bridge_recovers_after_resume(rig, ros):
    bridge, probe = ros
    chain = rig.motor
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    probe.setpoint = tensions(t0=2.0, t1=0.5, t2=0.5, t3=0.5)
    wait_for(lambda: np.allclose(goal_tensions(chain), [2, .5, .5, .5], atol=0.14),
             what='the goal currents')
    chain.silence(2)
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and 'lost' in d['message']
                      and d, what='the lost servo')
    assert motors['level'] == b'\x02' and 'servo ID 2 lost' in motors['message']
    chain.silence(2, False)
    # Back: the bus configures the servos again, and their torque stays off until ~/resume.
    back_only_on_resume(bridge, probe, chain)


def pull(bridge, probe, chain, mode: str, k: int) -> None:
    """Once every torque is on, pull tendon ``k``: 2 N, or 2 mm in (``mode``); wait for it."""
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    if mode == 'tension':
        target = ('tension', [2.0 if j == k else 0.5 for j in range(4)])
        probe.setpoint = tensions(**{f't{j}': v for j, v in enumerate(target[1])})
    else:
        target = ('displacement', [0.002 if j == k else 0.0 for j in range(4)])
        probe.setpoint = JointState(name=ROBOT.tendon_names, position=target[1])
    wait_for(lambda: bridge.core.sent and bridge.core.sent[0] == target[0]
             and np.allclose(bridge.core.sent[1], target[1]), what='the setpoint commanded')


@pytest.mark.parametrize('mode', ['tension', 'displacement'])
@pytest.mark.parametrize('fault, said', [
    ('overload', 'servo ID 2: overload error'), ('silent', 'servo ID 2 lost'),
    ('port lost', 'port ')])
def test_every_servo_fault_latches_the_safe_state_with_a_diagnostic_in_either_mode(
        rig, ros, mode, fault, said):
    """A hardware error, a silent servo and a vanished port: stopped, ERROR naming it."""
    bridge, probe = ros
    chain = rig.motor
    pull(bridge, probe, chain, mode, 0)
    if fault == 'overload':
        chain.set_hardware_error(2, OVERLOAD)
    elif fault == 'silent':
        chain.silence(2)
    else:
        rig.disconnect('motors', down_time=1.0)
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True'
                      and d, what='the stop latch')
    assert safety['message'].startswith(f'stopped by a fault: {said}')
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and d['level'] == b'\x02'
                      and d['message'].startswith(f'fault, stopped: {said}') and d,
                      what='the motor ERROR')
    assert motors
    assert bridge.core.sent[0] == 'tension' and np.allclose(bridge.core.sent[1], MIN_TENSION)


@pytest.fixture
def turned(rig):
    """Return the rig with servo 2 three turns up from its power-on count (before the bridge)."""
    rig.motor.servos[1].zero = 2048 + 3 * 4096
    return rig


@pytest.mark.parametrize('mode', ['tension', 'displacement'])
def test_a_clear_from_another_tool_latches_the_safe_state_with_a_diagnostic(turned, ros, mode):
    """
    Protocol 2.0 page, Clear (0x10): another tool clears servo 2's multi-turn count.

    The servo keeps its RAM: the goals the bridge sends stay in the old count, 3 turns (283 mm
    of tendon) away, and displacement mode pulled tendon 2 to its Current Limit with nothing
    on /diagnostics. Now: stopped, ERROR naming the servo, the safe state commanded.
    """
    bridge, probe = ros
    chain = turned.motor
    pull(bridge, probe, chain, mode, 1)
    clear = packet(2, bytes([0x10]) + b'\x01DXL"')   # the page's Clear, to ID 2
    # Result Fail while the servo moves: the tool asks again
    wait_for(lambda: chain.receive(clear)[0][8] == 0, what='the Clear taken')
    said = 'servo ID 2: its Present Position jumped'
    safety = wait_for(lambda: (d := probe.diagnostic('safety')) and d['stopped'] == 'True'
                      and d, what='the stop latch')
    assert safety['message'].startswith(f'stopped by a fault: {said}')
    assert wait_for(lambda: (d := probe.diagnostic('motor driver')) and d['level'] == b'\x02'
                    and d['message'].startswith(f'fault, stopped: {said}') and d,
                    what='the motor ERROR')
    assert bridge.core.sent[0] == 'tension' and np.allclose(bridge.core.sent[1], MIN_TENSION)
    wait_for(lambda: not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos),
             what='every torque off')


def back_only_on_resume(bridge, probe, chain) -> None:
    """Once the bus is configured again, the torque stays off until ~/resume; then it follows."""
    wait_for(lambda: bridge.motors.connected, what='the bus to come back')
    bus_cycles(bridge, 15)
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), 'on before ~/resume'
    assert probe.call(probe.resume).success
    wait_for(lambda: np.allclose(goal_tensions(chain), [2, .5, .5, .5], atol=0.14),
             what='setpoints followed again')


def servo_status(probe, tendon: str) -> dict:
    """Values of the newest status of ``tendon``'s servo on tendon/servos."""
    for array in reversed(probe.servos):
        for status in array.status:
            if status.name.endswith(f'servo {tendon}'):
                return {'level': status.level, 'message': status.message,
                        'hardware_id': status.hardware_id,
                        **{kv.key: kv.value for kv in status.values}}
    return {}


def test_a_power_cycle_and_a_reboot_are_faults_shown_per_servo_until_resume(rig, ros):
    """
    Issue 28 items 2 and 8: each is an ERROR naming the servo, and no torque until ~/resume.

    A power-cycled servo (control table: RAM initial values) latches the stop; an overloaded
    one is rebooted on ~/reboot (Protocol 2.0 page, Reboot), checked as at configure. The
    servo's state shows on tendon/servos all along.
    """
    bridge, probe = ros
    chain = rig.motor
    probe.servos = []
    probe.create_subscription(DiagnosticArray, topics.TENDON_SERVOS.name, probe.servos.append,
                              topics.TENDON_SERVOS.qos)
    reboot = probe.create_client(Trigger, 'hardware_bridge/reboot')
    probe.setpoint = tensions(t0=2.0, t1=0.5, t2=0.5, t3=0.5)
    wait_for(lambda: np.allclose(goal_tensions(chain), [2, .5, .5, .5], atol=0.14),
             what='the goal currents')
    t0 = wait_for(lambda: servo_status(probe, 't0'), what='tendon/servos')
    assert (t0['torque'], t0['level'], t0['servo_id']) == ('True', b'\x00', '1')
    assert t0['hardware_id'] == 'XM430-W350 ID 1 firmware v46'

    chain.power_cycle(2)
    motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and 'reset' in d['message']
                      and d, what='the reset servo')
    assert motors['level'] == b'\x02' and 'servo ID 2: reset' in motors['message']
    wait_for(lambda: servo_status(probe, 't1').get('level') == b'\x02', what='t1 in ERROR')
    back_only_on_resume(bridge, probe, chain)

    assert not probe.call(reboot).success   # no servo in hardware error: nothing to reboot
    chain.set_hardware_error(3, OVERLOAD)
    wait_for(lambda: servo_status(probe, 't2').get('hardware_error') == 'overload error',
             what='the overload on tendon/servos')
    response = probe.call(reboot)
    assert response.success and response.message.startswith('rebooted servo ID 3')
    assert chain.servos[2].get(dxl.HARDWARE_ERROR_STATUS) == 0
    back_only_on_resume(bridge, probe, chain)


# ------------------------------------------------------------------ issue 22, item 14
# (on the package's own devices: their wire carries any value, so they can lie freely)


@pytest.fixture
def lying_rig(tmp_path):
    with EmulatedRig(ROBOT, sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf'),
                     PtyEndpoint(str(tmp_path / 'motors')), PtyEndpoint(str(tmp_path / 'sensor')),
                     time_constant=0.02) as rig:
        yield rig


def test_implausible_readings_are_not_published_warn_and_when_sustained_stop(lying_rig):
    rig = lying_rig
    context = rclpy.Context()
    rclpy.init(context=context)
    bridge = HardwareBridgeNode(context=context, parameter_overrides=[
        Parameter('motor_port', value=rig.path('motors')),
        Parameter('sensor_port', value=rig.path('sensor')),
        Parameter('min_tension', value=MIN_TENSION),
        Parameter('diagnostics_rate', value=5.0),
        Parameter('implausible_timeout', value=1.0),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe(context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(bridge)
    executor.add_node(probe)
    spinner = None
    try:
        # 900 N on a tendon rated 20 N, well-formed and without a fault flag.
        advance = type(rig.motor).advance
        rig.motor.advance = lambda now: [replace(s, tension=900.0) if s.channel == 0 else s
                                         for s in advance(rig.motor, now)]
        assert bridge.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert bridge.trigger_activate() == TransitionCallbackReturn.SUCCESS
        spinner = BackgroundSpinner(executor)
        probe.setpoint = tensions(t0=2.0, t1=0.5, t2=0.5, t3=0.5)
        # (a loaded machine may first show the link's own WARN: nothing received yet)
        motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and
                          d['level'] == b'\x01' and 'implausible' in d['message'] and d,
                          what='the WARN')
        assert 'implausible tension t0 900 N' in motors['message']
        # never published (a truthful status the port held from before the lie may be)
        assert all(state.effort[0] < 20.0 for state in probe.states)
        assert not rig.motor.applied   # and no ramp starts from 900 N
        motors = wait_for(lambda: (d := probe.diagnostic('motor driver')) and
                          d['level'] == b'\x02' and d, what='the ERROR')
        assert 'for more than 1 s' in motors['message']
        assert probe.diagnostic('safety')['stopped'] == 'True'
        # The device tells the truth again: after ~/resume the ramp starts from it.
        rig.motor.advance = lambda now: advance(rig.motor, now)
        wait_for(lambda: probe.states, what='plausible states')
        assert probe.call(probe.resume).success
        safe = (MIN_TENSION,) * 4

        def ramped():
            return [c.tensions for c in rig.motor.applied if c.tensions != safe]
        wait_for(ramped, what='a ramped command')
        # from the device's 0.5 N, not from 900 N capped at 19.9; a step at a time even if a
        # loaded machine held the driver's writes up (test_bridge_core.py)
        assert ramped()[0][0] < 1.0
        # A tip 2147 m away: not published, a WARN on the sensor.
        rig.sensor.plant = SimpleNamespace(tip_position=np.array([2147.0, 0.0, 0.0]))
        sensor = wait_for(lambda: (d := probe.diagnostic('tip sensor')) and
                          d['level'] == b'\x01' and d, what='the sensor WARN')
        assert 'implausible tip' in sensor['message']
        count = len(probe.tips)
        samples = bridge.sensor.statistics()[1].samples    # 15 more readings of the laser
        wait_for(lambda: bridge.sensor.statistics()[1].samples >= samples + 15,
                 what='readings of the implausible tip')
        assert all(abs(t.point.x) < 1.0 for t in probe.tips[max(count - 1, 0):])
    finally:
        if spinner is not None:   # its command timer must not tick a destroyed bridge
            spinner.stop()
        probe.destroy_node()
        bridge.destroy_node()
        rclpy.try_shutdown(context=context)
