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
The hardware bridge's logic without ROS: the package's motor driver and the emulator on a pty.

The command timer is :meth:`BridgeCore.tick`, called here between the polls of each wait.
"""

from dataclasses import replace
import re
import threading
import time

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.hardware.bridge import (BridgeCore, BridgeSettings, ERROR, OK,
                                              SetpointError, start_device, WARN)
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.drivers import MotorDriver, TipSensorDriver
from tendon_robot_sim.protocol.mounting import sensor_mount
from waiting import TIMEOUT, wait_for

ROBOT = load_robot(default_robot_file())
NAMES = ROBOT.tendon_names
PRETENSION = 0.5   # N
WATCHDOG = 0.3     # s


@pytest.fixture
def core(tmp_path):
    """Yield (a started core on the package's motor driver, the emulated rig behind it)."""
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf')
    with EmulatedRig(ROBOT, mount, PtyEndpoint(str(tmp_path / 'motors')), None,
                     time_constant=0.02) as rig:
        settings = BridgeSettings(
            tuple(NAMES), ROBOT.max_tensions, PRETENSION, -0.01, 0.02, WATCHDOG, 100.0, 10.0,
            0.01, 0.5, 0.5, 0.2, 0.5, 1.2 * ROBOT.rod.length)
        bridge = BridgeCore(settings, mount)
        motors = MotorDriver(rig.path('motors'), len(NAMES), ack_timeout=0.05,
                             resend_on_reconnect=False)
        bridge.attach(motors, None)
        assert start_device(motors, 2.0) == ''
        try:
            yield bridge, rig
        finally:
            bridge.release()


def ticking(bridge, events=None):
    """Return a ``between`` for wait_for that runs the command timer every 10 ms."""
    def tick():
        found = bridge.tick(time.monotonic())
        if events is not None:
            events.extend(found)
        time.sleep(0.01)
    return tick


def following(bridge, rig, effort) -> None:
    """
    Activate ``bridge``, stream ``effort`` [N] to it and wait until the device applied it.

    Streamed, as a controller does: given once, the watchdog (WATCHDOG s) relaxed the motors
    before a loaded machine had ramped the setpoint to the device.
    """
    bridge.activate(time.monotonic())
    tick = ticking(bridge)

    def stream():
        bridge.accept(NAMES, effort, [], time.monotonic())
        tick()
    bridge.accept(NAMES, effort, [], time.monotonic())
    wait_for(lambda: applied(rig) == tuple(effort), what='the setpoint', between=stream)


def applied(rig):
    command = rig.motor.applied[-1] if rig.motor.applied else None
    return command.tensions if isinstance(command, motor.SetTensions) else None


def test_an_out_of_range_setpoint_is_rejected_whole_and_the_last_valid_one_kept(core):
    """Issue 29 item 10: rejected with a reason, never clamped onto the wire."""
    bridge, rig = core
    following(bridge, rig, [2.0, 0.5, 0.5, 0.5])
    for effort, position, message in (
            ([1e12, 0.5, 0.5, 0.5], [], 't0 1e+12 N (limits 0.5 .. 20 N)'),
            ([-1.0, 0.5, 0.5, 0.5], [], 't0 -1 N (limits 0.5 .. 20 N)'),
            ([], [0.5, 0.0, 0.0, 0.0], 't0 0.5 m (limits -0.01 .. 0.02 m)')):
        with pytest.raises(SetpointError, match=re.escape(message)) as error:
            bridge.accept(NAMES, effort, position, time.monotonic())
        assert error.value.kind == 'out of range'
    # A controller streaming bad setpoints between good ones: only the good ones go out.
    for k in range(20):
        fed = time.monotonic()
        bridge.accept(NAMES, [2.0, 0.5, 0.5, 0.5], [], fed)
        with pytest.raises(SetpointError):
            bridge.accept(NAMES, [1e12, 0.5, 0.5, 0.5], [], time.monotonic())
        bridge.tick(time.monotonic())
        time.sleep(0.01)
    assert max(max(c.tensions) for c in rig.motor.received) <= 2.0
    assert bridge.rejected == 23
    # Bad setpoints alone do not feed the watchdog.

    def bad_and_tick():
        with pytest.raises(SetpointError):
            bridge.accept(NAMES, [1e12, 0.5, 0.5, 0.5], [], time.monotonic())
        ticking(bridge)()
    wait_for(lambda: applied(rig) == (PRETENSION,) * 4, what='the safe state',
             between=bad_and_tick)
    assert time.monotonic() - fed >= WATCHDOG
    # A tension between 0 and the pretension means relaxed: the pretension, no rejection.
    bridge.accept(NAMES, [0.2, 0.5, 0.5, 0.5], [], time.monotonic())
    assert bridge.setpoint[1].tolist() == [PRETENSION, 0.5, 0.5, 0.5]


def test_setpoints_are_ramped_from_the_device_and_the_watchdog_relaxes_in_one_step(core):
    bridge, rig = core
    # What the bridge commands, each step (the device's log holds the delivered ones:
    # test_a_stalled_writer_holds_the_ramp_the_device_never_gets_a_jump).
    commanded = []
    command_tensions = bridge.motors.command_tensions
    bridge.motors.command_tensions = lambda values: (commanded.append(values[0]),
                                                     command_tensions(values))[1]
    bridge.activate(time.monotonic())
    wanted = (4.0, 0.5, 0.5, 0.5)
    events, ticks = [], []
    start = time.monotonic()
    bridge.accept(NAMES, list(wanted), [], start)

    fed = [start]

    def feed():   # a controller streaming, and the command timer
        fed[0] = time.monotonic()
        bridge.accept(NAMES, list(wanted), [], fed[0])
        ticking(bridge, events)()
    wait_for(lambda: applied(rig) == wanted, what='the ramp', between=feed)
    rises = np.diff(commanded)
    assert rises.max() <= 10.0 * 2 / 100.0 + 1e-3    # 10 N/s, at most two periods a step
    assert commanded[-1] == wanted[0]
    assert time.monotonic() - start > (4.0 - 0.5) / 10.0 * 0.9

    def tick_timed():   # the command timer; each tick's time and what it found
        now = time.monotonic()
        ticks.append((now, [e.kind for e in bridge.tick(now)]))
        time.sleep(0.01)
    wait_for(lambda: applied(rig) == (PRETENSION,) * 4, what='the safe state',
             between=tick_timed)
    # The watchdog trips at the first tick WATCHDOG s after the last setpoint, not before
    # (times of the ticks: a loaded machine may space them out, not the bridge).
    tripped = next(k for k, (_, kinds) in enumerate(ticks) if 'watchdog' in kinds)
    assert ticks[tripped][0] - fed[0] >= WATCHDOG
    assert tripped == 0 or ticks[tripped - 1][0] - fed[0] < WATCHDOG
    assert 'watchdog' not in [e.kind for e in events]    # fed all along the ramp
    assert [kind for _, kinds in ticks for kind in kinds].count('watchdog') == 1
    assert bridge.safety_diagnostics(time.monotonic()).level == WARN


def test_a_switch_to_displacement_ramps_from_a_tendon_beyond_the_limits_without_a_jump(core):
    """
    The displacement ramp starts where the device is, not where the limits would have it.

    8 N on t0 bends the robot: t0 drawn in 34 mm, beyond max_displacement (20 mm), t2 paid
    out 31 mm, beyond min_displacement (-10 mm). The ramp into displacement mode started
    from the reported displacements clipped to the limits: t2 was drawn in 21 mm in one
    command, and the tensions rose from 8 N and 0.5 N to 17.6 N and 13.9 N within 0.5 s,
    where max_displacement_rate (10 mm/s) takes 2 s. Paying out (t0 to the upper limit) is
    the safe direction and may go in one step, as the safe state does; drawing in is ramped.
    """
    bridge, rig = core
    following(bridge, rig, [8.0, 0.5, 0.5, 0.5])
    tick = ticking(bridge)
    wait_for(lambda: (s := bridge.motors.status()) is not None and s.displacements[2] < -0.02
             and np.all(s.velocities == 0.0), what='t2 paid out beyond -10 mm, at rest',
             between=lambda: (bridge.accept(NAMES, [8.0, 0.5, 0.5, 0.5], [], time.monotonic()),
                              tick()))
    reported = bridge.motors.status().displacements
    assert reported[0] > 0.02   # t0 drawn in beyond max_displacement

    def displacement_sent():
        bridge.accept(NAMES, [], [0.0] * 4, time.monotonic())
        bridge.tick(time.monotonic())
        return bridge.sent[0] == motor.DISPLACEMENT and (bridge.sent[1].copy(),)
    first, = wait_for(displacement_sent, what='the first displacement command')
    # within one ramp step (10 mm/s x 20 ms) and what the resting plant creeps meanwhile
    assert abs(first[2] - reported[2]) < 5e-4, (first, reported)
    assert first[0] <= 0.02    # never a draw-in beyond the limit


def test_after_a_lost_port_the_resumed_ramp_starts_from_the_safe_state(core):
    """
    The ramp after ~/resume starts from the safe state held, not from a lagging report.

    The reconnect restarted the ramp while the bridge held the safe state it had already
    sent; the first setpoint after ~/resume then ramped from the device's report, which still
    said the tensions of before the loss: the command jumped 2.5 N in one step from the safe
    state. (A device that relaxes slowly, time constant 5 s, keeps that report for seconds.)
    """
    bridge, rig = core
    following(bridge, rig, [3.0, 0.5, 0.5, 0.5])
    rig.motor.time_constant = 5.0
    rig.disconnect('motors', down_time=0.3)
    tick = ticking(bridge)
    wait_for(lambda: bridge.stopped, what='the stop latch', between=tick)
    wait_for(lambda: applied(rig) == (PRETENSION,) * 4, what='the safe state', between=tick)
    assert bridge.motors.status().tensions[0] > 2.0   # the report lags
    assert bridge.resume(time.monotonic())[0]
    step = 10.0 * 2 / 100.0   # max_tension_rate over two command periods [N]

    def stream():
        bridge.accept(NAMES, [3.0, 0.5, 0.5, 0.5], [], time.monotonic())
        tick()
    wait_for(lambda: bridge.sent[1][0] > PRETENSION, what='the ramp', between=stream)
    assert bridge.sent[1][0] <= PRETENSION + step + 1e-9


def test_a_stalled_writer_holds_the_ramp_the_device_never_gets_a_jump(core):
    """
    While the device has not acknowledged a ramp step, the ramp waits for it.

    The driver writes only its newest command. A loaded machine held its I/O thread while
    the command timer ran on: the ramp went on in commands the device never got, and the
    device, after the safe state, got the setpoint, 1.5 N up, in one command. Here the
    thread's writes are held for 10 command periods (0.1 s, a ramp of 1 N at 10 N/s).
    """
    bridge, rig = core
    link = bridge.motors.link
    poll, held = link._poll_outgoing, threading.Event()
    link._poll_outgoing = lambda now: [] if held.is_set() else poll(now)
    following(bridge, rig, [PRETENSION] * 4)
    step = 10.0 * 2 / 100.0   # max_tension_rate over two command periods [N]
    wanted = (2.0, PRETENSION, PRETENSION, PRETENSION)
    held.set()
    for _ in range(10):
        bridge.accept(NAMES, list(wanted), [], time.monotonic())
        ticking(bridge)()
    held.clear()

    def stream():
        bridge.accept(NAMES, list(wanted), [], time.monotonic())
        ticking(bridge)()
    wait_for(lambda: applied(rig) == wanted, what='the setpoint', between=stream)
    rises = np.diff([c.tensions[0] for c in rig.motor.applied])
    assert rises.max() <= step + 1e-9


def test_stop_latches_until_resume_and_a_lasting_implausible_reading_latches_a_fault(core):
    bridge, rig = core
    following(bridge, rig, [1.0, 0.5, 0.5, 0.5])
    assert bridge.stop(time.monotonic()).startswith('safe state commanded')
    wait_for(lambda: applied(rig) == (PRETENSION,) * 4, what='the safe state',
             between=ticking(bridge))
    bridge.accept(NAMES, [3.0, 0.5, 0.5, 0.5], [], time.monotonic())   # ignored: stopped
    assert bridge.setpoint is None
    assert bridge.resume(time.monotonic()) == (True, 'resumed: the next setpoint is ramped to')
    # 900 N on a tendon rated 20 N: not a status to publish, and after 0.5 s a fault.
    advance = type(rig.motor).advance
    rig.motor.advance = lambda now: [replace(s, tension=900.0) if s.channel == 0 else s
                                     for s in advance(rig.motor, now)]
    events, published = [], []

    def sample_and_tick():
        status, found = bridge.motor_status(time.monotonic())
        published.append(status)
        events.extend(found)
        ticking(bridge, events)()
    wait_for(lambda: bridge.fault, what='the fault', between=sample_and_tick)
    assert bridge.stopped and 'implausible tension t0 900 N' in bridge.fault
    assert all(s is None or s.tensions[0] < 20.0 for s in published)   # never 900 N
    assert [e.level for e in events].count('error') == 1
    motors = bridge.motor_diagnostics(time.monotonic())
    assert motors.level == ERROR and motors.message.startswith('fault, stopped')
    rig.motor.advance = lambda now: advance(rig.motor, now)
    wait_for(lambda: bridge.motor_status(time.monotonic())[0] is not None,
             what='plausible again', between=ticking(bridge))
    bridge.resume(time.monotonic())
    assert bridge.motor_diagnostics(time.monotonic()).level == OK


def test_an_unacknowledged_command_is_sent_again_and_an_error_after_the_delivery_timeout(core):
    """Delivery tracking: a device that stops acknowledging, then acknowledges again."""
    bridge, rig = core
    following(bridge, rig, [1.0, 0.5, 0.5, 0.5])
    receive = type(rig.motor).receive
    rig.motor.receive = lambda data: []        # hears nothing: no ACK, nothing applied
    events = []
    bridge.accept(NAMES, [1.5, 0.5, 0.5, 0.5], [], time.monotonic())

    def feed_and_tick():
        bridge.accept(NAMES, [1.5, 0.5, 0.5, 0.5], [], time.monotonic())
        ticking(bridge, events)()
    wait_for(lambda: bridge.motor_diagnostics(time.monotonic()).level == ERROR,
             what='the delivery error', between=feed_and_tick)
    assert bridge.motor_diagnostics(time.monotonic()).message.startswith(
        'commands not acknowledged for')
    wait_for(lambda: 'resend' in [e.kind for e in events], what='the command sent again',
             between=feed_and_tick)
    rig.motor.receive = lambda data: receive(rig.motor, data)
    wait_for(lambda: applied(rig) == (1.5, 0.5, 0.5, 0.5), what='the command delivered',
             between=feed_and_tick)
    wait_for(lambda: bridge.motor_diagnostics(time.monotonic()).level == OK,
             what='the delivery error cleared', between=feed_and_tick)


def test_a_blind_streaming_sensor_warns_at_once_errs_after_blind_timeout_and_recovers(tmp_path):
    """Issue 36: samples flagged "no target" (valid N) leave the tip sensor blind, not OK."""
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf')
    with EmulatedRig(ROBOT, mount, None, PtyEndpoint(str(tmp_path / 'sensor'))) as rig:
        settings = BridgeSettings(
            tuple(NAMES), ROBOT.max_tensions, PRETENSION, -0.01, 0.02, WATCHDOG, 100.0, 10.0,
            0.01, 0.5, 0.5, 0.2, 0.5, 1.2 * ROBOT.rod.length, blind_timeout=0.6)
        bridge = BridgeCore(settings, mount)
        sensor = TipSensorDriver(rig.path('sensor'))
        bridge.attach(None, sensor)
        assert start_device(sensor, 2.0) == ''
        events = []

        def level():
            events.extend(bridge.tips(time.monotonic())[1])
            time.sleep(0.01)
            return bridge.sensor_diagnostics(time.monotonic())
        try:
            wait_for(lambda: level().level == OK, what='valid samples')
            rig.sensor.dropout = 1.0
            blind = time.monotonic()
            warn = wait_for(lambda: (s := level()).level != OK and s, what='the WARN')
            # at once: well before blind_timeout, unless this machine stalled that long
            assert warn.level == WARN or time.monotonic() - blind >= 0.6
            assert warn.message.startswith('blind: no valid sample for')
            error = wait_for(lambda: (s := level()).level == ERROR and s, what='the ERROR')
            # counted from the last valid sample, which came before the dropout
            assert float(re.match(r'blind: no valid sample for ([0-9.]+) s', error.message)[1]) \
                >= 0.6, error.message
            assert 'no target (valid N)' in error.message
            rig.sensor.dropout = 0.0
            wait_for(lambda: level().level == OK, what='OK again')
            assert [e.level for e in events] == ['warning', 'error', 'info']
        finally:
            sensor.stop()


def test_a_start_without_setpoints_holds_the_safe_state_without_a_watchdog_warning(core):
    """
    ``launch hardware`` warned "no valid setpoint for 0.5 s" 0.5 s after every normal start.

    Until the first setpoint after an activation (or a resume out of the stop latch) the bridge
    holds the safe state and warns of nothing. The first setpoint arms the watchdog, which then
    trips as before.
    """
    bridge, rig = core
    bridge.activate(time.monotonic())
    start, events = time.monotonic(), []
    wait_for(lambda: time.monotonic() - start > 3 * WATCHDOG, what='three watchdog periods',
             between=ticking(bridge, events))
    # the safe state, as the watchdog commands it, without its warning
    wait_for(lambda: applied(rig) == (PRETENSION,) * 4, what='the safe state',
             between=ticking(bridge, events))
    assert 'watchdog' not in [e.kind for e in events]
    status = bridge.safety_diagnostics(time.monotonic())
    assert status.level == OK and status.message == 'safe state until the first setpoint'
    bridge.accept(NAMES, [1.0, 0.5, 0.5, 0.5], [], time.monotonic())     # armed
    wait_for(lambda: 'watchdog' in [e.kind for e in events], what='the watchdog',
             between=ticking(bridge, events))
    assert bridge.safety_diagnostics(time.monotonic()).level == WARN
    # a resume out of the latch waits for a setpoint again, quietly
    bridge.stop(time.monotonic())
    bridge.resume(time.monotonic())
    events.clear()
    start = time.monotonic()
    wait_for(lambda: time.monotonic() - start > 3 * WATCHDOG, what='three watchdog periods',
             between=ticking(bridge, events))
    assert 'watchdog' not in [e.kind for e in events]


def test_a_device_that_comes_late_is_waited_for_within_the_open_timeout(tmp_path):
    """
    Configure waits up to open_timeout for the device, which retries meanwhile.

    Not only its first attempt: the emulated servos of ``demo --hardware`` missed the first
    PINGs of a loaded machine's bridge now and then, and configure failed though the demo
    gives the ports 10 s. Here the port appears only after the first attempt failed.
    """
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf')
    rig = EmulatedRig(ROBOT, mount, PtyEndpoint(str(tmp_path / 'motors')), None)
    motors = MotorDriver(str(tmp_path / 'motors'), len(NAMES), backoff=(0.01, 0.05))

    def plug_in():
        wait_for(lambda: motors.link.statistics().connect_failures >= 1, what='a failed open')
        rig.start()
    plugger = threading.Thread(target=plug_in)
    plugger.start()
    try:
        assert start_device(motors, TIMEOUT) == ''
    finally:
        plugger.join()
        motors.stop()
        rig.stop()
    # and a port that never comes is named when the time is up
    missing = MotorDriver(str(tmp_path / 'nothing'), len(NAMES), backoff=(0.01, 0.05))
    try:
        assert str(tmp_path / 'nothing') in start_device(missing, 0.3)
        assert missing.link.statistics().connect_failures > 1    # tried again meanwhile
    finally:
        missing.stop()
