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
The Dynamixel bus on a real bench (issue 28): what the e-Manual says a servo does, handled.

ROBOTIS's SDK against the emulated chain over a pseudo-terminal; the emulated servos follow
the e-Manual pages each test names (test/emulator/test_dynamixel_control_table.py checks
them against it).
"""

from contextlib import contextmanager
import logging
import math
import re
import threading
import time

import numpy as np
import pytest
from tendon_robot_sim.emulator.dynamixel import EmulatedServo, packet
from tendon_robot_sim.protocol.drivers import DELIVERED
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

pytest.importorskip('dynamixel_sdk')
from test_dynamixel_bus import CHANNELS, MAX, run_cycles  # noqa: E402
from waiting import TIMEOUT, wait_for  # noqa: E402


class _Parking:
    """A bus's lock that says whether the bus's own I/O thread waits on it."""

    def __init__(self, bus):
        self.lock, self.thread, self.waiting = bus._lock, bus._thread, False

    def __enter__(self):
        if self.lock.acquire(blocking=False):
            return
        if threading.current_thread() is not self.thread:
            self.lock.acquire()
            return
        self.waiting = True   # written by the I/O thread alone
        self.lock.acquire()
        self.waiting = False

    def __exit__(self, *exc):
        self.lock.release()


class _Clock:
    """The bus module's time, ``ahead`` s later than the machine's monotonic clock."""

    def __init__(self):
        self.ahead = 0.0

    def monotonic(self):
        return time.monotonic() + self.ahead

    def __getattr__(self, name):
        return getattr(time, name)


@contextmanager
def stalled(bus, monkeypatch, seconds):
    """
    Stall the bus's I/O thread for ``seconds`` [s] of its clock, deterministically.

    The thread waits on the bus's lock, its last read recorded and nothing in flight, while
    the test does what happens during the stall; the bus's clock is then set ``seconds``
    after that read before the thread runs again, however long the stall took on this
    machine: its next read comes that much after the last. No owner-side call of the bus
    inside (they take the lock the test holds); the Bus Watchdog off (it counts real time).
    """
    from tendon_robot_sim.protocol.dynamixel import bus as module
    clock = module.time if isinstance(module.time, _Clock) else _Clock()
    monkeypatch.setattr(module, 'time', clock)
    if not isinstance(bus._lock, _Parking):
        bus._lock = _Parking(bus)
    with bus._lock:
        # waiting since an earlier stall, or from now on
        wait_for(lambda: bus._lock.waiting, what='the I/O thread to wait on the lock')
        yield
        clock.ahead = bus._positions_at + seconds - time.monotonic()


def delivered(bus, seq):
    wait_for(lambda: bus.delivery(seq) == DELIVERED, what=f'command {seq} delivered')


def test_at_a_mode_switch_the_torque_never_comes_on_under_a_goal_not_commanded(rig, buses):
    """
    Operating Mode page: a switch resets Goal Current to Current Limit and the profiles to 0.

    Every state a servo holds with its torque on, through tension -> displacement -> tension,
    is one the bus commanded: never Current Limit, never the Goal Position of before the
    switch; displacement mode is current-based position control with the Goal Current of
    max_tension (20 N: 74 units), and Current Limit itself is no more than that.
    """
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([3.0, 0.5, 0.5, 0.5]))
    displacements = [[0.004, 0.0, 0.0, 0.0], [0.006, 0.001, 0.0, 0.0]]
    for d in displacements:
        delivered(bus, bus.command_displacements(d))
    delivered(bus, bus.command_tensions([2.0, 0.5, 0.5, 0.5]))
    zero = bus._zero
    bound = math.floor(MAX[0] / 100.0 / dxl.CURRENT_UNIT)   # 74 units: 19.9 N
    for k, servo in enumerate(chain.servos):
        assert servo.get(dxl.CURRENT_LIMIT) == bound
        currents = {round(t / 100.0 / dxl.CURRENT_UNIT) for t in (0.5, 3.0, 2.0)}
        positions = {CHANNELS[k].goal_position(d[k], int(zero[k])) for d in displacements}
        for mode, current, position in servo.held:
            if mode == dxl.CURRENT_MODE:
                assert current in currents, (k, servo.held)
            else:
                assert (mode, current) == (dxl.CURRENT_BASED_POSITION_MODE, bound) and \
                    position in positions, (k, servo.held)
        assert [m for m, _, _ in servo.held].count(dxl.CURRENT_BASED_POSITION_MODE) >= 1


def test_a_power_cycled_servo_is_a_fault_and_comes_back_only_through_recover(rig, buses):
    """
    Control table (RAM initial values; Present Position within one turn after a power-on).

    A short outage, behind a running bus: the servo is named, every torque goes off and
    stays off, no displacement is reported; recover() takes a new zero. A long one (a
    reconnect) ends the same way.
    """
    servos = [EmulatedServo(1), EmulatedServo(2, zero=2048 + 3 * 4096), EmulatedServo(3),
              EmulatedServo(4)]
    chain, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    wait_for(lambda: (s := bus.status()) and s.displacements[1] > 1e-3, what='t1 drawn in')
    for down_time in (0.0, 1.0):
        chain.power_cycle(2, down_time)
        wait_for(lambda: 'servo ID 2' in bus.fault(), what='the fault')
        assert 'reset' in bus.fault() or 'lost' in bus.fault()
        wait_for(lambda: bus.statistics()[0].state == 'connected' and not any(
            s.get(dxl.TORQUE_ENABLE) for s in servos), what='configured again')
        run_cycles(bus, 20)
        assert not any(s.get(dxl.TORQUE_ENABLE) for s in servos), 'torque came back by itself'
        assert bus.status() is None, 'a displacement from a zero that is gone'
        assert servos[1].get(dxl.INDIRECT_ADDRESS_1) == dxl.STATE_ITEMS[0][0]
        bus.clear_fault()
        bus.recover()
        wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in servos), what='torque on')
        status = wait_for(bus.status, what='a status from the new zero')
        # From the new zero: the few mm 2 N draw in, not whole turns (94 mm each).
        assert abs(status.displacements[1]) < 0.01
        delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
        assert bus.fault() == ''


def test_a_dead_host_leaves_the_tendons_relaxed_by_the_servos_own_watchdog(rig, buses):
    """
    Bus Watchdog page: armed at configure; a host that stops sending stops every servo.

    In current control the stopped servo holds no current: the tendon goes slack.
    """
    chain, thread = rig()
    settings = dxl.BusSettings(bus_watchdog=0.3)
    bus = buses(thread.endpoint.path, CHANNELS, MAX, settings=settings)
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.BUS_WATCHDOG) for s in chain.servos] == [15] * 4
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([3.0, 0.5, 0.5, 0.5]))
    wait_for(lambda: abs(bus.status().tensions[0] - 3.0) < 0.3, what='3 N on t0')
    bus._shutdown = lambda: None   # the host dies: no torque off, no goodbye
    bus.stop()
    wait_for(lambda: all(s.get(dxl.BUS_WATCHDOG, signed=True) == -1 for s in chain.servos),
             what='every watchdog to expire')
    wait_for(lambda: chain.mechanics.tensions[0] < 0.05, what='t0 relaxed')


def test_a_configure_that_fails_at_one_servo_leaves_no_servo_pulling(rig, buses):
    """
    Configure switches every answering servo's torque off before it checks any of them.

    A host died holding 3 N in current-based position control: the expired Bus Watchdog
    stops the servos, which then hold where they were (Bus Watchdog page, as the emulator
    models it). With servo 2 gone from the bus, the next bridge's configure failed at it and
    never reached servos 3 and 4: they went on pulling 3 N while the bridge reported only
    that servo 2 does not answer.
    """
    chain, thread = rig()
    settings = dxl.BusSettings(tension_mode='current_based_position', bus_watchdog=0.3)
    dead = buses(thread.endpoint.path, CHANNELS, MAX, settings=settings)
    wait_for(lambda: dead.connected, what='the bus to connect')
    dead.enable([0.5] * 4)
    delivered(dead, dead.command_tensions([3.0] * 4))
    wait_for(lambda: np.allclose(chain.mechanics.tensions, 3.0, atol=0.3), what='3 N each')
    # the host dies: no torque off, no goodbye; the system closes its port
    dead._shutdown = lambda: dead._port.closePort()
    dead.stop()
    wait_for(lambda: all(s.get(dxl.BUS_WATCHDOG, signed=True) == -1 for s in chain.servos),
             what='every watchdog to expire')
    assert np.allclose(chain.mechanics.tensions, 3.0, atol=0.3)   # held, not relaxed
    chain.silence(2)
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: 'servo ID 2 does not answer' in bus.statistics()[0].last_error,
             what='configure to fail naming servo 2')
    assert [s.get(dxl.TORQUE_ENABLE) for s in chain.servos] == [0, 1, 0, 0]   # 2 unreachable
    wait_for(lambda: np.all(chain.mechanics.tensions[[0, 2, 3]] < 0.05),
             what='the tendons of the servos that answer to go slack')
    assert not bus.connected


def test_a_stalled_host_finds_the_watchdog_expired_and_stops_with_the_servo_named(rig, buses):
    """Bus Watchdog page: -1 after the interval; the bus reports it and the torque stays off."""
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings(bus_watchdog=0.3))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    with bus._lock:   # the I/O thread waits here, sends nothing, until every watchdog expired
        wait_for(lambda: all(s.get(dxl.BUS_WATCHDOG, signed=True) == -1 for s in chain.servos),
                 what='the watchdogs to expire')
    wait_for(lambda: 'Bus Watchdog expired' in bus.fault(), what='the expired watchdog')
    # the fault is told before the bus drops its connection: wait for the re-armed watchdog
    # (cleared and set to 15 x 20 ms again by configure), not for `connected`, still true then
    wait_for(lambda: bus.connected and [s.get(dxl.BUS_WATCHDOG) for s in chain.servos]
             == [15] * 4, what='configured again with the watchdog re-armed')
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)


def test_firmware_without_bus_watchdog_is_refused_unless_the_bus_file_turns_it_off(rig, buses):
    """Bus Watchdog page: 'available from firmware v38'."""
    def servos():
        return [EmulatedServo(1), EmulatedServo(2, firmware=37), EmulatedServo(3),
                EmulatedServo(4)]
    _, thread = rig(servos())
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: 'servo ID 2 has firmware v37, which has no Bus Watchdog'
             in bus.statistics()[0].last_error, what='configure to refuse servo 2')
    assert not bus.connected
    chain, thread = rig(servos())
    bus = buses(thread.endpoint.path, CHANNELS, MAX, settings=dxl.BusSettings(bus_watchdog=0))
    wait_for(lambda: bus.connected, what='the bus to connect without a watchdog')
    assert [s.get(dxl.BUS_WATCHDOG) for s in chain.servos] == [0] * 4


@pytest.mark.parametrize('model, limit, message', [
    (1060, None, 'servo ID 4 is an XL430-W250 (model 1060): it has no current control'),
    (1000, 3.209, 'servo ID 4 (XH430-W350): current_limit 3.209 A (1192 units) is above its '
                  'Current Limit range, at most 648 units (1.743 A)'),
])
def test_a_model_that_cannot_hold_the_tension_is_refused_naming_servo_and_model(
        rig, buses, model, limit, message):
    """XL430-W250 page: no Current Limit (38) nor Goal Current (102); XH430: 0 ~ 648."""
    _, thread = rig([EmulatedServo(1), EmulatedServo(2), EmulatedServo(3),
                     EmulatedServo(4, model=model)])
    channels = [*CHANNELS[:3], dxl.ServoChannel(4, 0.015, current_limit=limit)]
    bus = buses(thread.endpoint.path, channels, MAX)
    wait_for(lambda: message in bus.statistics()[0].last_error, what='configure to refuse')
    assert not bus.connected


def test_an_xh430_without_a_current_limit_in_the_bus_file_gets_its_own_largest(rig, buses):
    """XH430-W350 page: Current Limit 0 ~ 648 (a max_tension of 1 kN does not bound it)."""
    chain, thread = rig([EmulatedServo(k, model=1000) for k in (1, 2, 3, 4)])
    bus = buses(thread.endpoint.path, CHANNELS, [1e3] * 4)
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.CURRENT_LIMIT) for s in chain.servos] == [648] * 4


def test_a_servo_left_in_reverse_is_set_to_the_bus_files_drive_mode(rig, buses):
    """Drive Mode page: Reverse inverts Goal/Present Position; the channel's direction rules."""
    servos = [EmulatedServo(1, drive_mode=dxl.DRIVE_REVERSE), EmulatedServo(2),
              EmulatedServo(3), EmulatedServo(4)]
    chain, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert servos[0].get(dxl.DRIVE_MODE) == 0
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([3.0, 0.5, 0.5, 0.5]))
    status = wait_for(lambda: (s := bus.status()) and s.displacements[0] > 1e-3 and s,
                      what='t0 drawn in, positive as the direction convention says')
    assert np.argmax(status.displacements) == 0


def test_control_table_items_of_the_bus_file_are_written_checked_and_kept_over_switches(
        rig, buses):
    """Operating Mode page (the profiles reset at a switch); Return Delay Time, profiles."""
    chain, thread = rig()
    items = (('drive_mode', 0), ('position_p_gain', 900), ('profile_velocity', 50),
             ('return_delay_time', 0))
    channels = [dxl.ServoChannel(c.servo_id, 0.015, control_table=items) for c in CHANNELS]
    bus = buses(thread.endpoint.path, channels, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    for servo in chain.servos:
        assert (servo.get(dxl.RETURN_DELAY_TIME), servo.get((84, 2)),
                servo.get(dxl.PROFILE_VELOCITY)) == (0, 900, 50)
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_displacements([0.002, 0.0, 0.0, 0.0]))
    # The switch reset them; they were written again before the torque came on.
    assert all(s.get(dxl.PROFILE_VELOCITY) == 50 and s.get((84, 2)) == 900
               for s in chain.servos)


class ForgetfulServo(EmulatedServo):
    """A servo that answers a write of Return Delay Time without keeping it."""

    def write(self, address, data):
        return 0 if address == dxl.RETURN_DELAY_TIME[0] else super().write(address, data)


def test_an_item_that_does_not_read_back_as_written_refuses_configure(rig, buses):
    _, thread = rig([ForgetfulServo(1), EmulatedServo(2), EmulatedServo(3), EmulatedServo(4)])
    channels = [dxl.ServoChannel(c.servo_id, 0.015,
                                 control_table=(('drive_mode', 0), ('return_delay_time', 0)))
                for c in CHANNELS]
    bus = buses(thread.endpoint.path, channels, MAX)
    wait_for(lambda: 'servo ID 1: control_table.return_delay_time: wrote 0, reads 250'
             in bus.statistics()[0].last_error, what='configure to refuse')


def test_reboot_of_a_servo_in_hardware_error_checks_it_again_and_waits_for_recover(rig, buses):
    """Protocol 2.0 page, Reboot; Shutdown: the torque of a servo in error stays off."""
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    assert bus.reboot(TIMEOUT) == (False, 'no servo reports a hardware error: nothing rebooted')
    chain.set_hardware_error(3, 1 << 5)
    wait_for(bus.fault, what='the overload')
    done, message = bus.reboot(TIMEOUT)   # a loaded machine took more than 5 s
    assert done and message.startswith('rebooted servo ID 3'), message
    assert chain.servos[2].get(dxl.HARDWARE_ERROR_STATUS) == 0
    assert chain.servos[2].get(dxl.INDIRECT_ADDRESS_1) == dxl.STATE_ITEMS[0][0]
    run_cycles(bus, 20)
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)
    bus.clear_fault()
    bus.recover()
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    assert bus.fault() == ''


def test_after_a_power_cycle_the_travel_limit_is_taken_from_the_new_zero(rig, buses):
    """
    Tension mode current_based_position: the Goal Position is the travel limit's stop.

    The power-on puts Present Position back within one turn (here from 3 turns up): a
    stop left at the old zero would be whole turns (94 mm of tendon each) away.
    """
    servos = [EmulatedServo(1), EmulatedServo(2, zero=2048 + 3 * 4096), EmulatedServo(3),
              EmulatedServo(4)]
    chain, thread = rig(servos)
    travel = 0.005      # m
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings('current_based_position', travel))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    chain.power_cycle(2, 0.0)
    wait_for(lambda: 'servo ID 2' in bus.fault(), what='the fault')
    wait_for(lambda: bus.statistics()[0].state == 'connected' and not any(
        s.get(dxl.TORQUE_ENABLE) for s in servos), what='configured again')
    bus.clear_fault()
    bus.recover()
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in servos), what='torque on')
    delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    stop = servos[1].get(dxl.GOAL_POSITION, signed=True)
    here = servos[1].get(dxl.PRESENT_POSITION, signed=True)
    # the stop is the travel beyond where the servo stood at recover (units of a 15 mm
    # pulley), not turns away: within the travel (the tendon drew in since) plus a unit
    assert 0 <= stop - here <= travel / (0.015 * dxl.POSITION_UNIT) + 1


# ------------------------------------------------------------------ issue 36


@pytest.mark.parametrize('mode', sorted(dxl.TENSION_MODES))
def test_a_tension_below_the_calibrations_offset_never_pushes(rig, buses, mode):
    """
    A tendon cannot push: no tension maps to a Goal Current that drives the servo backwards.

    A calibration whose offset exceeds the pretension (1 N at no current, a load cell not
    tared at calibrate-tension) made the safe state's 0.5 N a Goal Current of -2 units: in
    current control the servo drives backwards, unwinding its slack tendon off the pulley;
    in current-based position control the magnitude bounded a pull of 1.5 N. The least a
    pulling servo holds, by that calibration, is the offset: Goal Current 0.
    """
    chain, thread = rig()
    channels = [dxl.ServoChannel(k + 1, 0.015, 1, dxl.CurrentCalibration(100.0, 1.0))
                for k in range(4)]
    bus = buses(thread.endpoint.path, channels, MAX,
                settings=dxl.BusSettings(tension_mode=mode))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)    # the safe state, below the offset
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    assert [s.get(dxl.GOAL_CURRENT, signed=True) for s in chain.servos] == [0] * 4
    delivered(bus, bus.command_tensions([3.0, 0.5, 1.0, 0.9]))
    # (3 N - 1 N) / 100 N/A = 20 mA: 7 units of 2.69 mA; 1 N and below: none
    assert [s.get(dxl.GOAL_CURRENT, signed=True) for s in chain.servos] == [7, 0, 0, 0]


def test_displacement_mode_never_pulls_a_caught_tendon_harder_than_max_tension(rig, buses):
    """
    Current Limit page: it bounds current control and current-based position control only.

    A tendon caught behind its servo while it follows a displacement: in extended position
    control the servo would pull it with its stall current (2.3 A, 230 N through the
    emulated 100 N/A); the bus drives displacements in current-based position control with
    the Goal Current of max_tension (20 N), so the tendon never sees more.
    """
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_displacements([0.002, 0.0, 0.0, 0.0]))
    servo = chain.servos[0]
    assert servo.get(dxl.OPERATING_MODE) == dxl.CURRENT_BASED_POSITION_MODE
    chain.block(1)
    delivered(bus, bus.command_displacements([0.006, 0.0, 0.0, 0.0]))
    wait_for(lambda: bus.status().tensions[0] > 15.0, what='the caught tendon pulled')
    pulls = []

    def pulled_for(cycles: int) -> bool:   # 30 cycles: 0.3 s at 100 Hz, however loaded
        status = bus.status()
        if not pulls or status is not pulls[-1]:
            pulls.append(status)
        return len(pulls) > cycles
    wait_for(lambda: pulled_for(30), what='30 states of the caught tendon')
    pulls = [status.tensions[0] for status in pulls]
    # 74 units of 2.69 mA through 100 N/A: 19.9 N, within one unit (0.27 N)
    assert max(pulls) <= MAX[0] + 0.27, max(pulls)
    assert servo.get(dxl.GOAL_CURRENT, signed=True) == math.floor(0.2 / dxl.CURRENT_UNIT)


def test_mode_switches_in_current_based_position_control_never_switch_the_torque_off(
        rig, buses):
    """
    Operating Mode is in the EEPROM area (written with the torque off).

    A switch from tension to displacement in current-based position tension mode changes
    goals only: the tendons are never unpowered. In current control a switch is, and the
    bus reports for how long.
    """
    for tension_mode, unpowered in (('current_based_position', 0), ('current', 2)):
        chain, thread = rig()
        offs = []
        for servo in chain.servos:
            write = servo.write

            def logged(address, data, write=write, servo=servo):
                if address == dxl.TORQUE_ENABLE[0] and data == b'\x00' and \
                        servo.get(dxl.TORQUE_ENABLE):
                    offs.append(servo.servo_id)
                return write(address, data)
            servo.write = logged
        # A servo taken for lost (its state late for 0.1 s, as a loaded machine makes the
        # emulator's) is configured again with its torque off: not a mode switch's doing,
        # and not what this test asks (loss: test_dynamixel_bus).
        bus = buses(thread.endpoint.path, CHANNELS, MAX, lost_after=TIMEOUT,
                    settings=dxl.BusSettings(tension_mode, 0.02))
        wait_for(lambda: bus.connected, what='the bus to connect')
        bus.enable([0.5] * 4)
        delivered(bus, bus.command_tensions([2.0, 0.5, 0.5, 0.5]))
        delivered(bus, bus.command_displacements([0.003, 0.0, 0.0, 0.0]))
        delivered(bus, bus.command_tensions([2.0, 0.5, 0.5, 0.5]))
        assert len(offs) == 4 * unpowered, (tension_mode, offs)
        values = dict(bus.diagnostic_values())
        assert values['mode_switches_unpowered'] == unpowered
        assert (float(values['unpowered_longest_ms']) > 0.0) == (unpowered > 0)


def test_startup_configuration_is_written_0_and_a_power_cycle_never_pulls(rig, buses):
    """
    Startup Configuration page: bit 0 turns the torque on at power-on.

    ... under the power-on Goal Current. Configure writes 0 and reads it back; a
    power-cycled servo stays limp.
    """
    servos = [EmulatedServo(1, startup=dxl.STARTUP_TORQUE_ON), EmulatedServo(2, startup=3),
              EmulatedServo(3), EmulatedServo(4, firmware=44)]
    chain, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.STARTUP_CONFIGURATION) for s in servos[:3]] == [0, 0, 0]
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    held = len(servos[1].held)
    chain.power_cycle(2)
    wait_for(lambda: 'servo ID 2' in bus.fault(), what='the fault')
    wait_for(lambda: bus.statistics()[0].state == 'connected' and not any(
        s.get(dxl.TORQUE_ENABLE) for s in servos), what='configured again')
    assert len(servos[1].held) == held, 'the power-cycled servo pulled by itself'


def test_a_power_cycle_is_detected_even_when_ram_restore_brings_the_map_back(rig, buses):
    """
    Startup Configuration page, RAM Restore: a restart is still told.

    At power-on the backup's gains, profiles and Indirect Addresses come back, and Startup
    Torque On switches the torque on. Goal PWM is not among them: the bus's mark (one below
    PWM Limit) tells the restarted servo, also with the Bus Watchdog off.
    """
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings(bus_watchdog=0))
    wait_for(lambda: bus.connected, what='the bus to connect')
    servo = chain.servos[1]
    with chain._lock:   # someone with Dynamixel Wizard, after configure: backup, bits 0 and 1
        assert servo.backup(bytes([0x01]) + b'CTRL') == (0, False)
        servo._put(dxl.STARTUP_CONFIGURATION, dxl.STARTUP_TORQUE_ON | dxl.RAM_RESTORE)
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    chain.power_cycle(2)
    wait_for(lambda: 'servo ID 2: reset' in bus.fault(), what='the reset servo')
    assert 'Goal PWM reads 885, not the mark 884' in bus.fault()


def test_a_silent_bus_names_every_servo_and_what_each_had_when_it_answers_again(rig, buses):
    """
    A silent bus is not "servo ID 1 lost": every servo is asked.

    At reconnect each one's Hardware Error Status and Bus Watchdog are read before configure
    clears them.
    """
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings(bus_watchdog=0.3))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([2.0, 0.5, 0.5, 0.5]))
    chain.silence((1, 2, 3, 4))   # at once: between two cycles the bus meets one silent servo
    wait_for(lambda: bus.fault(), what='the fault')
    assert bus.fault().startswith('every servo silent (servo ID 1, 2, 3, 4)'), bus.fault()
    wait_for(lambda: all(s.get(dxl.BUS_WATCHDOG, signed=True) == -1 for s in chain.servos),
             what='every watchdog to expire')
    chain.silence((1, 2, 3, 4), False)
    # by the reconnect itself: a bus thread held up (a loaded machine) between saying it lost
    # the servos and closing its port still read as connected here, before it came back
    wait_for(lambda: bus.statistics()[0].reconnects >= 1, what='the bus to come back')
    for servo_id in (1, 2, 3, 4):
        assert f'servo ID {servo_id}: its Bus Watchdog had expired' in bus.fault(), bus.fault()
    assert 'Bus Watchdog had expired' in bus.servo_states()[0].fault


def test_one_silent_servo_is_named_and_the_others_say_they_answer(rig, buses):
    chain, thread = rig()
    chain.set_hardware_error(3, 1 << 2)   # overheating: the survey reports it
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: bus.connected, what='the bus to connect')
    chain.silence(2)
    wait_for(lambda: 'lost' in bus.statistics()[0].last_error, what='the lost servo')
    fault = bus.statistics()[0].last_error
    assert fault.startswith('servo ID 2 lost: silent'), fault
    assert 'servo ID 1 answers: no hardware error' in fault
    assert 'servo ID 3 answers: it reports overheating error' in fault


def test_the_drive_mode_warning_names_every_bit_it_changed(rig, buses, caplog):
    """Drive Mode page (XM540-W270: 0 ~ 5): Reverse and time-based profile, both cleared."""
    servos = [EmulatedServo(1, model=1120, drive_mode=dxl.DRIVE_REVERSE | dxl.DRIVE_TIME_PROFILE),
              EmulatedServo(2), EmulatedServo(3), EmulatedServo(4)]
    _, thread = rig(servos)
    with caplog.at_level(logging.WARNING, logger='tendon_robot_sim.protocol'):
        bus = buses(thread.endpoint.path, CHANNELS, MAX)
        wait_for(lambda: bus.connected, what='the bus to connect')
    said = [r.getMessage() for r in caplog.records if 'Drive Mode' in r.getMessage()]
    assert said == ['servo ID 1: Drive Mode was 5; set to 0 as the bus file says: cleared '
                    'Reverse (bit 0), cleared time-based profile (bit 2)'], said
    assert servos[0].get(dxl.DRIVE_MODE) == 0


def test_a_status_lost_once_is_read_again_not_taken_for_status_return_level_0(
        rig, buses, caplog):
    """
    The one READ whose silence means level 0 is asked again before it is believed.

    A loaded machine's late answer (or line noise) had the bridge warn that a servo at
    level 2 was at 0, and write it.
    """
    chain, thread = rig()
    receive, lost = chain.receive, []

    def lossy(data: bytes) -> list[bytes]:
        replies = receive(data)
        reads_level = data[7:8] == b'\x02' and \
            int.from_bytes(data[8:10], 'little') == dxl.STATUS_RETURN_LEVEL[0]
        if reads_level and not lost:
            lost.append(data)
            return []     # the status packet is lost on the line
        return replies
    chain.receive = lossy
    with caplog.at_level(logging.WARNING):
        bus = buses(thread.endpoint.path, CHANNELS, MAX)
        wait_for(lambda: bus.connected, what='the bus to connect')
    assert lost
    assert not [r for r in caplog.records if 'Status Return Level' in r.getMessage()]


def test_a_servo_left_at_status_return_level_1_is_set_to_2(rig, buses):
    """Status Return Level page: at 1 a WRITE gets no status; configure sets 2 first."""
    servos = [EmulatedServo(1), EmulatedServo(2), EmulatedServo(3), EmulatedServo(4)]
    servos[2]._put(dxl.STATUS_RETURN_LEVEL, 1)
    servos[3]._put(dxl.STATUS_RETURN_LEVEL, 0)
    _, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.STATUS_RETURN_LEVEL) for s in servos] == [2] * 4


def test_a_servo_grouped_under_another_servos_id_gets_none_of_its_writes(rig, buses, caplog):
    """
    Secondary(Shadow) ID page: a servo also does the RAM writes sent to its Secondary ID.

    Servo 2 left with Secondary ID 1 took configure's unicast RAM writes meant for servo 1
    (here tendon 0's Position P Gain, 900; its own 800 from the factory), unseen: the writes
    get servo 1's status only. Configure switches it off (255) before writing anything else,
    naming the servo and the old value, as it does Drive Mode and Startup Configuration.
    """
    servos = [EmulatedServo(k) for k in (1, 2, 3, 4)]
    servos[1]._put(dxl.SECONDARY_ID, 1)
    for servo in servos:   # a bench the bridge ran before: no Operating Mode switch resets gains
        servo._put(dxl.OPERATING_MODE, dxl.CURRENT_MODE)
    _, thread = rig(servos)
    channels = [dxl.ServoChannel(1, 0.015, control_table=(('drive_mode', 0),
                                                          ('position_p_gain', 900))),
                *CHANNELS[1:]]
    with caplog.at_level(logging.WARNING, logger='tendon_robot_sim.protocol'):
        bus = buses(thread.endpoint.path, channels, MAX)
        wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_tensions([3.0, 0.5, 0.5, 0.5]))
    assert [s.get((84, 2)) for s in servos] == [900, 800, 800, 800]
    assert servos[1].get(dxl.SECONDARY_ID) == 255
    said = [r.getMessage() for r in caplog.records if 'Secondary ID' in r.getMessage()]
    assert len(said) == 1 and said[0].startswith('servo ID 2: Secondary ID was 1'), said


@pytest.mark.parametrize('tension_mode', [None, 'current_based_position'])
def test_a_clear_from_another_tool_is_a_fault_and_nothing_pulls_from_the_old_zero(
        rig, buses, tension_mode):
    """
    Protocol 2.0 page, Clear (0x10): Present Position back within one turn, RAM kept.

    A tool on the same bus (or a script) clears servo 2's multi-turn count while the bus holds
    it, 3 turns up: the Goal Position the bus sends stays in the old count, 3 turns (283 mm of
    tendon) beyond the tendon. Unnoticed, displacement mode pulled tendon 2 to its Current
    Limit (19.9 N of 20) and the bus reported -0.27 m with no fault. The jump is a fault
    naming the servo: every torque off, the zero forgotten until recover().
    """
    servos = [EmulatedServo(1), EmulatedServo(2, zero=2048 + 3 * 4096), EmulatedServo(3),
              EmulatedServo(4)]
    chain, thread = rig(servos)
    settings = {} if tension_mode is None else {
        'settings': dxl.BusSettings(tension_mode, 0.005)}
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2), **settings)
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    if tension_mode is None:
        delivered(bus, bus.command_displacements([0.0, 0.002, 0.0, 0.0]))
    else:
        delivered(bus, bus.command_tensions([0.5, 2.0, 0.5, 0.5]))
    wait_for(lambda: servos[1].get(dxl.PRESENT_VELOCITY) == 0, what='servo 2 at rest')
    # the tool's Clear, as it reaches the servos (the manual's packet, for ID 2)
    assert chain.receive(packet(2, bytes([0x10]) + b'\x01DXL"'))[0][8] == 0
    assert servos[1].get(dxl.PRESENT_POSITION, signed=True) < 4096
    wait_for(lambda: 'servo ID 2' in bus.fault(), what='the fault')
    assert 'Present Position jumped' in bus.fault()
    wait_for(lambda: not any(s.get(dxl.TORQUE_ENABLE) for s in servos), what='torque off')
    run_cycles(bus, 20)
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in servos), 'torque came back by itself'
    assert bus.status() is None, 'a displacement from a zero that is gone'
    bus.clear_fault()
    bus.recover()
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in servos), what='torque on')
    status = wait_for(bus.status, what='a status from the new zero')
    assert abs(status.displacements[1]) < 0.01


@pytest.mark.parametrize('turns, stall', [(3, 0.3), (1, 0.4)])
def test_a_clear_during_a_stall_of_the_bus_is_a_fault_whatever_the_stall_lasts(
        rig, buses, monkeypatch, turns, stall):
    """
    Protocol 2.0 page, Clear: Present Position back within one turn, only while stopped.

    The bus thread stalls (a loaded host) while a tool clears servo 2's count, ``turns`` up.
    Compared only across reads at most 0.1 s apart, the jump went unnoticed after a longer
    stall: the servo then held its goal in the old count, whole turns from the tendon. After
    0.3 s the XM430-W350 turns at most 1459 units (57 rev/min at 14.8 V, 1.25 times), after
    0.4 s 1946: jumps of 3 turns and of one turn are Clears. Both: every torque off, the
    servo named, no status from the old zero until recover().
    """
    servos = [EmulatedServo(1), EmulatedServo(2, zero=2048 + turns * 4096), EmulatedServo(3),
              EmulatedServo(4)]
    chain, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings(bus_watchdog=0.0))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_displacements([0.0, 0.002, 0.0, 0.0]))
    wait_for(lambda: servos[1].get(dxl.PRESENT_VELOCITY) == 0, what='servo 2 at rest')
    with stalled(bus, monkeypatch, stall):
        # the tool's Clear, as it reaches the servos (the manual's packet, for ID 2), sent
        # again while the servo answers Result Fail (the plant's noise: not quite stopped)
        wait_for(lambda: chain.receive(packet(2, bytes([0x10]) + b'\x01DXL"'))[0][8] == 0,
                 what='the Clear taken')
    wait_for(lambda: 'servo ID 2' in bus.fault(), what='the fault')
    found = re.search(r'Present Position jumped (-\d+) units in ([\d.]+) s, more than it '
                      r'turns in that time at its top speed \((\d+) units', bus.fault())
    assert found, bus.fault()
    jump, gap, reach = int(found[1]), float(found[2]), int(found[3])
    # the Clear's whole turns down, less what the servo drove back towards its old goal
    # before the read (beside two busy loops: 1664 units of 3 turns); the rule that found it
    assert -turns * 4096 - 64 <= jump <= -dxl.POSITION_JUMP and -jump >= reach, bus.fault()
    assert gap >= stall, bus.fault()
    wait_for(lambda: not any(s.get(dxl.TORQUE_ENABLE) for s in servos), what='torque off')
    run_cycles(bus, 10)
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in servos), 'torque came back by itself'
    assert bus.status() is None, 'a displacement from a zero that is gone'


def test_a_fast_move_across_a_short_stall_of_the_bus_is_no_fault(rig, buses, monkeypatch):
    """
    A real move across a stall is not taken for a Clear.

    Servo 2 pulls its tendon in by
    12 mm (521 units on its 15 mm pulley, about 0.1 s at the emulator's pace) while the bus
    thread stalls 0.3 s, in which an XM430-W350 turns up to 1459 units; nor is a stall of
    1 s without a move (loaded hosts stall the bus 0.72 to 0.78 s: docs/hardware.md).
    """
    chain, thread = rig()
    servo = chain.servos[1]
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2),
                settings=dxl.BusSettings(bus_watchdog=0.0))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    delivered(bus, bus.command_displacements([0.0, 0.0, 0.0, 0.0]))
    start = servo.get(dxl.PRESENT_POSITION, signed=True)
    delivered(bus, bus.command_displacements([0.0, 0.012, 0.0, 0.0]))
    with stalled(bus, monkeypatch, 0.3):
        wait_for(lambda: abs(servo.get(dxl.PRESENT_POSITION, signed=True) - start) > 450,
                 what='servo 2 near its goal')
    with stalled(bus, monkeypatch, 1.0):
        pass
    run_cycles(bus, 10)
    assert bus.fault() == '' and bus.connected
    assert abs(bus.status().displacements[1] - 0.012) < 0.002
