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
The emulated servo's control table against the ROBOTIS e-Manual, page by page (issue 28).

Each test names the page it follows. The packets are typed from the Protocol 2.0 page's
examples, not produced by code of this package. Instructions go through
:meth:`DynamixelChain.receive` directly (no port): these are the servo's rules, not the link.
"""

import time

import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.emulator.dynamixel import DynamixelChain, EmulatedServo, packet
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

# Protocol 2.0 page, Reg Write example: ID 1 registers 200 for Goal Velocity (104).
REG_WRITE_1 = 'FF FF FD 00 01 09 00 04 68 00 C8 00 00 00 AE 8E'
# ... the Action example, and the status both get; the Reboot example.
ACTION_1 = 'FF FF FD 00 01 03 00 05 02 CE'
REBOOT_1 = 'FF FF FD 00 01 03 00 08 2F 4E'
STATUS_1_OK = 'FF FF FD 00 01 04 00 55 00 A1 0C'
GOAL_VELOCITY = (104, 4)


def h(text):
    return bytes.fromhex(text)


def position(chain, k, zero=2048) -> int:
    """Present Position [units] of servo ``k`` (0-based) in Normal mode, from its tendon."""
    turned = chain.mechanics.displacements[k] / 0.015 / dxl.POSITION_UNIT
    return zero + round(turned)


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


def chain_with(plant, servo: EmulatedServo) -> DynamixelChain:
    """Return a chain of ``servo`` (ID 1) and three default servos."""
    return DynamixelChain(plant, [servo, *(EmulatedServo(k) for k in (2, 3, 4))])


def current_controlled(plant, servo: EmulatedServo) -> DynamixelChain:
    """Return :func:`chain_with` ``servo``, switched to current control."""
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    return chain


def write(chain, servo_id, item, value) -> int:
    """WRITE ``value`` to ``item`` through a packet; return the status packet's error number."""
    address, size = item
    data = dxl.unsigned(value, size).to_bytes(size, 'little')
    reply = chain.receive(packet(servo_id, bytes([0x03]) + address.to_bytes(2, 'little') + data))
    return reply[0][8] & 0x7F


def read(chain, servo_id, address, length) -> bytes:
    reply = chain.receive(packet(servo_id, bytes([0x02]) + address.to_bytes(2, 'little')
                                 + length.to_bytes(2, 'little')))
    assert reply[0][8] & 0x7F == 0
    return reply[0][9:9 + length]


def test_initial_values_are_those_of_each_models_control_table(plant):
    """XM430-W350, XH430-W350, XM540-W270, XL430-W250 pages: the Initial Value column."""
    servos = [EmulatedServo(1, model=1020), EmulatedServo(2, model=1000),
              EmulatedServo(3, model=1120), EmulatedServo(4, model=1060)]
    DynamixelChain(plant, servos)
    for servo in servos:
        assert servo.get(dxl.RETURN_DELAY_TIME) == 250
        assert servo.get(dxl.DRIVE_MODE) == 0
        assert servo.get(dxl.OPERATING_MODE) == dxl.POSITION_MODE
        assert servo.get(dxl.STATUS_RETURN_LEVEL) == 2
        assert servo.get(dxl.SHUTDOWN) == 52
        assert servo.get(dxl.BUS_WATCHDOG) == 0
        assert servo.get((168, 2)) == 224 and servo.get((632, 2)) == 661
        assert servo.get(dxl.STARTUP_CONFIGURATION) == 0 and servo.get(dxl.BACKUP_READY) == 0
    assert [s.get(dxl.TEMPERATURE_LIMIT) for s in servos] == [80, 80, 80, 72]
    assert [s.get(dxl.CURRENT_LIMIT) for s in servos[:3]] == [1193, 648, 2047]
    # Max/Min Voltage Limit: 160/95 (0.1 V) on the 12 V models, 140/60 on the XL430-W250.
    assert [(s.get(dxl.MAX_VOLTAGE_LIMIT), s.get(dxl.MIN_VOLTAGE_LIMIT)) for s in servos] == \
        [(160, 95)] * 3 + [(140, 60)]


def test_errors_of_the_status_packet(plant):
    """Protocol 2.0 page, Status Packet: Access, Data Length, Data Range and Data Limit Errors."""
    servos = [EmulatedServo(1), EmulatedServo(2, model=1000), EmulatedServo(3),
              EmulatedServo(4, model=1060)]
    chain = DynamixelChain(plant, servos)
    # Operating Mode page: 0, 1, 3, 4, 5, 16 exist; 2 is out of range.
    assert write(chain, 1, dxl.OPERATING_MODE, 2) == dxl.DATA_RANGE_ERROR
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    # XH430-W350 page: Current Limit 0 ~ 648.
    assert write(chain, 2, dxl.CURRENT_LIMIT, 649) == dxl.DATA_RANGE_ERROR
    assert write(chain, 2, dxl.CURRENT_LIMIT, 648) == 0
    # XL430-W250 page: no Current Limit (38), no Goal Current (102), no current control.
    assert write(chain, 4, dxl.CURRENT_LIMIT, 100) == dxl.ACCESS_ERROR
    assert write(chain, 4, dxl.GOAL_CURRENT, 10) == dxl.ACCESS_ERROR
    assert write(chain, 4, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == dxl.DATA_RANGE_ERROR
    # Read-only, undefined, a cut item, EEPROM under torque.
    assert write(chain, 1, dxl.PRESENT_POSITION, 5) == dxl.ACCESS_ERROR
    assert write(chain, 1, (14, 1), 5) == dxl.ACCESS_ERROR
    assert write(chain, 1, (38, 1), 5) == dxl.DATA_LENGTH_ERROR
    assert write(chain, 1, dxl.TORQUE_ENABLE, 2) == dxl.DATA_RANGE_ERROR
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    assert write(chain, 1, dxl.RETURN_DELAY_TIME, 0) == dxl.ACCESS_ERROR
    # Goal Current page: within +-Current Limit, else Data Limit Error.
    assert write(chain, 1, dxl.GOAL_CURRENT, -1194) == dxl.DATA_LIMIT_ERROR
    assert write(chain, 1, dxl.GOAL_CURRENT, -1193) == 0


def test_a_current_limit_below_the_goal_current_is_taken_and_bounds_the_current(plant):
    """Current Limit page: it bounds the Goal Current; nothing says a write below it fails."""
    servo = EmulatedServo(1)
    chain = current_controlled(plant, servo)
    assert write(chain, 1, dxl.GOAL_CURRENT, 100) == 0
    assert write(chain, 1, dxl.CURRENT_LIMIT, 20) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    mode, tension = servo.target()
    assert (mode, tension) == (motor.TENSION, pytest.approx(100.0 * 20 * dxl.CURRENT_UNIT))


def test_reg_write_and_action_as_in_the_manuals_examples(plant):
    """Protocol 2.0 page, Reg Write and Action: byte for byte, Registered Instruction (69)."""
    servo = EmulatedServo(1, model=1030, firmware=0x26)
    chain = chain_with(plant, servo)
    assert chain.receive(h(ACTION_1))[0][8] == dxl.INSTRUCTION_ERROR   # nothing registered
    assert chain.receive(h(REG_WRITE_1)) == [h(STATUS_1_OK)]
    assert servo.get(dxl.REGISTERED_INSTRUCTION) == 1 and servo.get(GOAL_VELOCITY) == 0
    assert chain.receive(h(ACTION_1)) == [h(STATUS_1_OK)]
    assert servo.get(dxl.REGISTERED_INSTRUCTION) == 0 and servo.get(GOAL_VELOCITY) == 200


def test_reboot_as_in_the_manuals_example_keeps_the_eeprom_and_resets_the_ram(plant):
    """Protocol 2.0 page, Reboot; control table: EEPROM kept, RAM at its initial values."""
    servo = EmulatedServo(1, model=1030, firmware=0x26)
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.RETURN_DELAY_TIME, 0) == 0
    assert write(chain, 1, dxl.INDIRECT_ADDRESS_1, dxl.PRESENT_POSITION[0]) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    assert chain.receive(h(REBOOT_1)) == [h(STATUS_1_OK)]
    assert servo.get(dxl.RETURN_DELAY_TIME) == 0
    assert servo.get(dxl.TORQUE_ENABLE) == 0
    assert servo.get(dxl.INDIRECT_ADDRESS_1) == dxl.INDIRECT_DATA_1[0]


def test_indirect_addresses_29_to_56(plant):
    """Control table: Indirect Address 29-56 (578-632) map Indirect Data 29-56 (634-661)."""
    servo = EmulatedServo(1)
    chain = chain_with(plant, servo)
    for k in range(4):
        assert write(chain, 1, (dxl.INDIRECT_ADDRESS_29[0] + 2 * k, 2),
                     dxl.PRESENT_POSITION[0] + k) == 0
    assert int.from_bytes(read(chain, 1, dxl.INDIRECT_DATA_29[0], 4), 'little') == \
        servo.get(dxl.PRESENT_POSITION)
    assert write(chain, 1, dxl.INDIRECT_ADDRESS_29, 63) == dxl.DATA_RANGE_ERROR   # 64 ~ 661


def test_an_operating_mode_switch_resets_goal_current_and_the_profiles(plant):
    """Operating Mode page: Goal Current back to Current Limit, the profiles back to 0."""
    servo = EmulatedServo(1)
    chain = current_controlled(plant, servo)
    assert write(chain, 1, dxl.CURRENT_LIMIT, 185) == 0
    assert write(chain, 1, dxl.GOAL_CURRENT, 11) == 0
    assert write(chain, 1, dxl.PROFILE_VELOCITY, 50) == 0
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.EXTENDED_POSITION_MODE) == 0
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    assert servo.get(dxl.GOAL_CURRENT) == 185
    assert servo.get(dxl.PROFILE_VELOCITY) == 0


def test_the_bus_watchdog_stops_the_servo_and_makes_the_goals_read_only(plant):
    """Bus Watchdog page: -1 once expired, goals refused with Data Range Error, 0 clears it."""
    servo = EmulatedServo(1)
    chain = current_controlled(plant, servo)
    assert write(chain, 1, dxl.GOAL_CURRENT, 30) == 0
    assert write(chain, 1, dxl.BUS_WATCHDOG, 5) == 0   # 100 ms
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    assert servo.target()[1] > 7.0                      # 30 units x 2.69 mA x 100 N/A
    chain.step(time.monotonic() + 0.05)
    assert servo.get(dxl.BUS_WATCHDOG) == 5             # within its time
    chain.step(time.monotonic() + 0.15)
    assert servo.get(dxl.BUS_WATCHDOG, signed=True) == -1
    assert servo.target() == (motor.TENSION, 0.0)       # current control stopped: slack
    assert write(chain, 1, dxl.GOAL_CURRENT, 20) == dxl.DATA_RANGE_ERROR
    assert write(chain, 1, dxl.BUS_WATCHDOG, 0) == 0
    assert write(chain, 1, dxl.GOAL_CURRENT, 20) == 0


def test_drive_mode_and_bus_watchdog_exist_from_firmware_38(plant):
    """
    XM430-W350 page: "Drive Mode(10, Available from Firmware v38)", "Bus Watchdog(98, ...)".

    Before v38 neither address is defined: a write gets the Access Error (Protocol 2.0
    page), and no watchdog stops a servo whose host went quiet.
    """
    old, new = EmulatedServo(1, firmware=37), EmulatedServo(2, firmware=38)
    chain = DynamixelChain(plant, [old, new, EmulatedServo(3), EmulatedServo(4)])
    for servo_id in (1, 2):
        assert write(chain, servo_id, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    assert write(chain, 1, dxl.DRIVE_MODE, 0) == dxl.ACCESS_ERROR
    assert write(chain, 2, dxl.DRIVE_MODE, 0) == 0
    assert write(chain, 1, dxl.BUS_WATCHDOG, 1) == dxl.ACCESS_ERROR
    assert write(chain, 2, dxl.BUS_WATCHDOG, 1) == 0   # 20 ms
    for servo_id in (1, 2):
        assert write(chain, servo_id, dxl.GOAL_CURRENT, 30) == 0
        assert write(chain, servo_id, dxl.TORQUE_ENABLE, 1) == 0
    chain.step(time.monotonic() + 0.1)
    assert old.target()[1] > 7.0 and new.target() == (motor.TENSION, 0.0)


def test_secondary_id_as_in_the_pages_example(plant):
    """
    Secondary(Shadow) ID page, its example with the chain's four servos (IDs 1 to 4).

    A servo obeys a write to its Secondary ID (0 ~ 252) as to its ID, RAM only, and sends
    no status for it; 255 (the default) turns the function off.
    """
    servos = [EmulatedServo(k) for k in (1, 2, 3, 4)]
    chain = DynamixelChain(plant, servos)
    led = (65, 1)
    for servo_id in (1, 2, 3, 4):
        assert write(chain, servo_id, dxl.SECONDARY_ID, 4) == 0
    assert write(chain, 1, led, 1) == 0                        # ID 1's LED only, a status
    assert [s.get(led) for s in servos] == [1, 0, 0, 0]
    reply = chain.receive(packet(4, bytes([0x03]) + (65).to_bytes(2, 'little') + b'\x01'))
    assert [s.get(led) for s in servos] == [1, 1, 1, 1]        # every LED ...
    assert [r[4] for r in reply] == [4]                        # ... one status, of ID 4
    chain.receive(packet(4, bytes([0x03]) + (9).to_bytes(2, 'little') + b'\x00'))
    assert [s.get(dxl.RETURN_DELAY_TIME) for s in servos] == [250, 250, 250, 0]   # no EEPROM
    for servo_id in (1, 2, 3, 4):
        assert write(chain, servo_id, dxl.SECONDARY_ID, 100) == 0
    assert chain.receive(packet(100, bytes([0x03]) + (65).to_bytes(2, 'little') + b'\x00')) == []
    assert [s.get(led) for s in servos] == [0, 0, 0, 0]        # no ID 100: no status


def test_drive_mode_reverse_and_torque_on_by_goal_update(plant):
    """
    Drive Mode page: Reverse inverts the position (X540: the current too); bit 3.

    The ranges of the model pages: XM430/XH430/XM540 0 ~ 5 (bit 3, Torque On by Goal
    Update, is not theirs), XL430-W250 0 ~ 13 (bit 3 from firmware v45).
    """
    x430, x540 = EmulatedServo(1, drive_mode=1), EmulatedServo(2, model=1120, drive_mode=1)
    xl430 = EmulatedServo(3, model=1060)
    chain = DynamixelChain(plant, [x430, x540, xl430, EmulatedServo(4)])
    assert x430.get(dxl.PRESENT_POSITION, signed=True) == -position(chain, 0)
    for servo_id in (1, 2):
        assert write(chain, servo_id, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
        assert write(chain, servo_id, dxl.GOAL_CURRENT, 30) == 0
        assert write(chain, servo_id, dxl.TORQUE_ENABLE, 1) == 0
    assert x430.target()[1] > 7.0 and x540.target()[1] == 0.0   # X540: current reversed too
    assert write(chain, 1, dxl.TORQUE_ENABLE, 0) == 0
    assert write(chain, 2, dxl.TORQUE_ENABLE, 0) == 0
    assert write(chain, 1, dxl.DRIVE_MODE, 2) == dxl.DATA_RANGE_ERROR   # no dual mode on X430
    assert write(chain, 2, dxl.DRIVE_MODE, 2) == 0                      # ... on an X540
    for servo_id in (1, 2):
        assert write(chain, servo_id, dxl.DRIVE_MODE, 5) == 0
        assert write(chain, servo_id, dxl.DRIVE_MODE, dxl.DRIVE_TORQUE_ON_BY_GOAL) == \
            dxl.DATA_RANGE_ERROR
    assert write(chain, 3, dxl.DRIVE_MODE, 13) == 0
    assert write(chain, 3, dxl.DRIVE_MODE, dxl.DRIVE_TORQUE_ON_BY_GOAL) == 0
    assert write(chain, 3, dxl.GOAL_POSITION, xl430.get(dxl.PRESENT_POSITION) + 10) == 0
    assert xl430.get(dxl.TORQUE_ENABLE) == 1


def test_a_power_cycle_resets_the_ram_and_present_position_restarts_within_one_turn(plant):
    """Control table (RAM initial values) and Present Position page: within one turn again."""
    servo = EmulatedServo(1, zero=2048 + 3 * 4096)   # it has turned three times since power-on
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.INDIRECT_ADDRESS_1, dxl.TORQUE_ENABLE[0]) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    assert servo.get(dxl.PRESENT_POSITION) == position(chain, 0, zero=2048 + 3 * 4096)
    chain.power_cycle(1)
    assert not chain.receive(packet(1, bytes([0x01])))   # off: silent
    chain.step(time.monotonic())
    assert servo.get(dxl.PRESENT_POSITION) == position(chain, 0)
    assert servo.get(dxl.TORQUE_ENABLE) == 0
    assert servo.get(dxl.INDIRECT_ADDRESS_1) == dxl.INDIRECT_DATA_1[0]
    assert read(chain, 1, dxl.INDIRECT_DATA_1[0], 1) == b'\x00'


def test_voltage_limits_have_the_range_of_each_models_page(plant):
    """XM430-W350 and XM540-W270 pages: Min/Max Voltage Limit 95 ~ 160; XL430-W250: 60 ~ 140."""
    servos = [EmulatedServo(1), EmulatedServo(2, model=1120), EmulatedServo(3, model=1060),
              EmulatedServo(4)]
    chain = DynamixelChain(plant, servos)
    for servo_id, (low, high) in ((1, (95, 160)), (2, (95, 160)), (3, (60, 140))):
        for item in (dxl.MAX_VOLTAGE_LIMIT, dxl.MIN_VOLTAGE_LIMIT):
            assert write(chain, servo_id, item, low) == 0
            assert write(chain, servo_id, item, high) == 0
            assert write(chain, servo_id, item, low - 1) == dxl.DATA_RANGE_ERROR
            assert write(chain, servo_id, item, high + 1) == dxl.DATA_RANGE_ERROR


def blocked_current(chain, servo) -> int:
    """Present Current [units] of ``servo`` pulling its caught tendon, after a few steps."""
    for _ in range(3):
        chain.step(time.monotonic())
    return servo.get(dxl.PRESENT_CURRENT, signed=True)


def test_current_limit_bounds_current_control_and_current_based_position_control_only(plant):
    """
    Current Limit page: "used in Torque Control Mode and Current-based Position Control Mode".

    Goal Current page: it "sets a limit to current in Current-based Position Control mode".
    Against a caught tendon, extended position control draws the stall current of the
    XM430-W350's Specifications (4.1 N m at 12 V, 2.3 A: 855 units) whatever Current Limit
    says; current-based position control stops at Goal Current; current control holds it.
    """
    servo = EmulatedServo(1)
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.CURRENT_LIMIT, 74) == 0
    chain.block(1)
    beyond = servo.get(dxl.PRESENT_POSITION, signed=True) + 200   # 4.6 mm further in
    for mode, goal_current, pulled in ((dxl.EXTENDED_POSITION_MODE, None, 855),
                                       (dxl.CURRENT_BASED_POSITION_MODE, 50, 50),
                                       (dxl.CURRENT_MODE, 60, 60)):
        assert write(chain, 1, dxl.TORQUE_ENABLE, 0) == 0
        assert write(chain, 1, dxl.OPERATING_MODE, mode) == 0
        if goal_current is not None:
            assert write(chain, 1, dxl.GOAL_CURRENT, goal_current) == 0
        assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
        assert write(chain, 1, dxl.GOAL_POSITION, beyond) == 0
        assert blocked_current(chain, servo) == pulled, mode
    # A goal behind the snag: the position modes let their side go slack.
    assert write(chain, 1, dxl.TORQUE_ENABLE, 0) == 0
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.EXTENDED_POSITION_MODE) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    assert write(chain, 1, dxl.GOAL_POSITION, beyond - 400) == 0
    assert blocked_current(chain, servo) == 0


def test_shutdown_is_the_mask_of_the_errors_that_switch_the_torque_off(plant):
    """Shutdown page: with 0x05, input voltage and overheating errors turn the torque off."""
    servo = EmulatedServo(1)
    chain = current_controlled(plant, servo)
    assert write(chain, 1, dxl.SHUTDOWN, 0x05) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == 0
    chain.set_hardware_error(1, 1 << 5)                    # overload: not in 0x05
    assert servo.get(dxl.TORQUE_ENABLE) == 1
    chain.set_hardware_error(1, 1 << 2)                    # overheating: in 0x05
    assert servo.get(dxl.TORQUE_ENABLE) == 0
    assert write(chain, 1, dxl.TORQUE_ENABLE, 1) == dxl.RESULT_FAIL   # until a REBOOT


def test_status_return_level_0_and_1(plant):
    """Status Return Level page: 0 answers PING only, 1 PING and READ, 2 every instruction."""
    servo = EmulatedServo(1)
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.STATUS_RETURN_LEVEL, 1) == 0
    write_led = packet(1, bytes([0x03]) + (65).to_bytes(2, 'little') + b'\x01')
    assert chain.receive(write_led) == [] and servo.get((65, 1)) == 1   # done, no status
    assert read(chain, 1, dxl.STATUS_RETURN_LEVEL[0], 1) == b'\x01'
    chain.receive(packet(1, bytes([0x03]) + (68).to_bytes(2, 'little') + b'\x00'))
    assert servo.get(dxl.STATUS_RETURN_LEVEL) == 0
    assert chain.receive(packet(1, bytes([0x02]) + (68).to_bytes(2, 'little')
                                + (1).to_bytes(2, 'little'))) == []
    assert len(chain.receive(packet(1, bytes([0x01])))) == 1   # a PING is always answered


def test_the_status_waits_the_return_delay_time(plant):
    """Return Delay Time page: "set to 10, the Status Packet will be returned after 20 us"."""
    servo = EmulatedServo(1)
    chain = chain_with(plant, servo)
    assert write(chain, 1, dxl.RETURN_DELAY_TIME, 254) == 0   # 508 us, its largest
    ping = packet(1, bytes([0x01]))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        assert chain.receive(ping)
        times.append(time.perf_counter() - start)
    assert min(times) >= 508e-6   # a delay can only come out longer on a loaded machine


# Protocol 2.0 page, Control Table Backup example 1: ID 1 stores its control table.
BACKUP_1 = 'FF FF FD 00 01 08 00 20 01 43 54 52 4C 16 F5'


def test_startup_configuration_and_ram_restore_after_a_power_cycle(plant):
    """
    Startup Configuration page (firmware 45 and later) and the Control Table Backup.

    Bit 0 switches the torque on at power-on, under the power-on Goal Current (Current
    Limit); bit 1 restores the gains, profiles and Indirect Addresses of the backup, not the
    rest of the RAM (the Bus Watchdog, Goal PWM).
    """
    servo, old = EmulatedServo(1), EmulatedServo(2, firmware=44)
    chain = DynamixelChain(plant, [servo, old, EmulatedServo(3), EmulatedServo(4)])
    assert write(chain, 2, dxl.STARTUP_CONFIGURATION, 0) == dxl.ACCESS_ERROR   # before v45
    assert write(chain, 1, dxl.STARTUP_CONFIGURATION, 4) == dxl.DATA_RANGE_ERROR
    assert write(chain, 1, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    assert write(chain, 1, dxl.INDIRECT_ADDRESS_1, dxl.PRESENT_POSITION[0]) == 0
    assert write(chain, 1, dxl.PROFILE_VELOCITY, 50) == 0
    assert write(chain, 1, dxl.BUS_WATCHDOG, 25) == 0
    assert write(chain, 1, dxl.GOAL_PWM, 800) == 0
    assert chain.receive(h(BACKUP_1)) == [h(STATUS_1_OK)]
    assert servo.get(dxl.BACKUP_READY) == 1
    assert write(chain, 1, dxl.STARTUP_CONFIGURATION,
                 dxl.STARTUP_TORQUE_ON | dxl.RAM_RESTORE) == 0
    chain.power_cycle(1)
    chain.step(time.monotonic())
    assert servo.get(dxl.TORQUE_ENABLE) == 1
    assert servo.held[-1][:2] == (dxl.CURRENT_MODE, 1193)   # pulling at Current Limit
    assert servo.get(dxl.INDIRECT_ADDRESS_1) == dxl.PRESENT_POSITION[0]
    assert servo.get(dxl.PROFILE_VELOCITY) == 50
    assert servo.get(dxl.BUS_WATCHDOG) == 0 and servo.get(dxl.GOAL_PWM) == 885
    assert chain.receive(h(BACKUP_1))[0][8] == dxl.RESULT_FAIL   # torque on: refused
    assert write(chain, 1, dxl.TORQUE_ENABLE, 0) == 0
    assert write(chain, 1, dxl.STARTUP_CONFIGURATION, 0) == 0
    chain.power_cycle(1)
    chain.step(time.monotonic())
    assert servo.get(dxl.TORQUE_ENABLE) == 0
    assert servo.get(dxl.INDIRECT_ADDRESS_1) == dxl.INDIRECT_DATA_1[0]
