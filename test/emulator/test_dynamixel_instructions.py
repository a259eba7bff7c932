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
Instructions the bridge never sends and a user's tool can, as the e-Manual describes them.

Factory Reset, Clear, Bulk Read, Bulk Write and a broadcast Reboot (ROBOTIS e-Manual,
Protocol 2.0 page, Instruction Details). The example packets are typed from the page; the
rest goes through ROBOTIS's SDK over a pseudo-terminal to the emulated chain, as such a tool
would.
"""

import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.emulator.dynamixel import DynamixelChain, EmulatedServo
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

sdk = pytest.importorskip('dynamixel_sdk')
from test_dynamixel_emulator import served  # noqa: E402
from waiting import wait_for  # noqa: E402

# Factory Reset example: ID 1, every item but the ID (0x01); Clear example: ID 1, the
# multi-turn count; both answered by the status without error.
FACTORY_RESET_1 = 'FF FF FD 00 01 04 00 06 01 A1 E6'
CLEAR_1 = 'FF FF FD 00 01 08 00 10 01 44 58 4C 22 B1 DC'
STATUS_1_OK = 'FF FF FD 00 01 04 00 55 00 A1 0C'
OK = sdk.COMM_SUCCESS
BROADCAST = 0xFE


def h(text):
    return bytes.fromhex(text)


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


@pytest.fixture
def bus(plant, monkeypatch):
    """Servos 1 and 2 (XM430, firmware 46; 1 six turns and a half from 0), 3 (firmware 41), 4."""
    monkeypatch.setattr(sdk.port_handler, 'LATENCY_TIMER', 1000)   # a loaded machine
    servos = [EmulatedServo(1, zero=6 * 4096 + 2048), EmulatedServo(2),
              EmulatedServo(3, firmware=41), EmulatedServo(4)]
    yield from served(DynamixelChain(plant, servos))


def read(port, handler, servo_id, item) -> int:
    """Read ``item`` of ``servo_id`` through the SDK (asked again after a late answer)."""
    def once():
        data, result, error = handler.readTxRx(port, servo_id, *item)
        if result != OK:
            port.clearPort()
            return None
        return (dxl.signed(int.from_bytes(bytes(data), 'little'), item[1]),)
    return wait_for(once, what=f'servo {servo_id} answering a read')[0]


def write(port, handler, servo_id, item, value) -> int:
    """Write ``item`` of ``servo_id``; return the status's error byte."""
    data = list(dxl.unsigned(value, item[1]).to_bytes(item[1], 'little'))
    result, error = handler.writeTxRx(port, servo_id, item[0], item[1], data)
    assert result == OK
    return error


def test_the_manuals_factory_reset_and_clear_examples_byte_for_byte(plant):
    chain = DynamixelChain(plant)
    assert chain.receive(h(FACTORY_RESET_1)) == [h(STATUS_1_OK)]
    assert chain.receive(h(CLEAR_1)) == [h(STATUS_1_OK)]


def test_clear_is_refused_with_result_fail_while_the_servo_moves(plant):
    """
    Protocol 2.0 page, Clear: "can only be applied when DYNAMIXEL is stopped".

    Sent while the servo is in motion: Result Fail (0x01) in the status, Present Position as
    it was.
    """
    servo = EmulatedServo(1, zero=2 * 4096 + 100)
    # no thread steps the chain: the test sets the motion
    chain = DynamixelChain(plant, [servo] + [EmulatedServo(i) for i in (2, 3, 4)])
    servo.set_position(0.0, velocity=0.01)   # 10 mm/s of tendon: 6 rev/min, 27 units
    assert servo.get(dxl.PRESENT_VELOCITY, signed=True) != 0
    [status] = chain.receive(h(CLEAR_1))
    assert status[8] == dxl.RESULT_FAIL
    assert servo.get(dxl.PRESENT_POSITION, signed=True) == 2 * 4096 + 100
    servo.set_position(0.0)   # stopped: the same packet clears the count
    assert chain.receive(h(CLEAR_1)) == [h(STATUS_1_OK)]
    assert servo.get(dxl.PRESENT_POSITION, signed=True) == 100


def test_factory_reset_puts_the_eeprom_back_and_the_servo_restarts(bus):
    chain, port, handler = bus
    assert write(port, handler, 2, dxl.OPERATING_MODE, dxl.CURRENT_MODE) == 0
    assert write(port, handler, 2, dxl.CURRENT_LIMIT, 200) == 0
    assert write(port, handler, 2, dxl.TORQUE_ENABLE, 1) == 0
    # 0x01: every item but the ID; the status goes out, the servo resets and restarts
    assert handler.factoryReset(port, 2, 0x01) == (OK, 0)
    assert read(port, handler, 2, dxl.CURRENT_LIMIT) == 1193   # the XM430-W350's
    assert read(port, handler, 2, dxl.OPERATING_MODE) == dxl.POSITION_MODE
    assert read(port, handler, 2, dxl.TORQUE_ENABLE) == 0
    # an option the page does not list changes nothing
    assert write(port, handler, 2, dxl.CURRENT_LIMIT, 300) == 0
    assert handler.factoryReset(port, 2, 0x03) == (OK, dxl.DATA_RANGE_ERROR)
    assert read(port, handler, 2, dxl.CURRENT_LIMIT) == 300


def test_a_broadcast_factory_reset_skips_0xff_from_firmware_42(bus):
    chain, port, handler = bus
    for servo_id in (2, 3):
        assert write(port, handler, servo_id, dxl.CURRENT_LIMIT, 300) == 0
    # "will NOT be activated" for 0xFF on X-series firmware 42 and later: servo 2 keeps its
    # items; servo 3 (firmware 41) resets all, its ID too (to 1, as servo 1)
    assert handler.factoryReset(port, BROADCAST, 0xFF) == (OK, 0)
    assert read(port, handler, 2, dxl.CURRENT_LIMIT) == 300
    assert [s.servo_id for s in chain.servos] == [1, 2, 1, 4]
    # 0x02 keeps the ID and the baud rate, on every servo
    assert write(port, handler, 4, dxl.CURRENT_LIMIT, 300) == 0
    assert handler.factoryReset(port, BROADCAST, 0x02) == (OK, 0)
    assert read(port, handler, 4, dxl.CURRENT_LIMIT) == 1193
    assert read(port, handler, 2, dxl.CURRENT_LIMIT) == 1193


def test_a_broadcast_reboot_restarts_every_servo(bus):
    chain, port, handler = bus
    for servo_id in (1, 2, 3, 4):
        assert write(port, handler, servo_id, dxl.TORQUE_ENABLE, 1) == 0
    chain.set_hardware_error(2, 1 << 5)   # overload: the torque goes off (Shutdown)
    assert handler.reboot(port, BROADCAST) == (OK, 0)   # no status to a broadcast
    assert [read(port, handler, i, dxl.TORQUE_ENABLE) for i in (1, 2, 3, 4)] == [0] * 4
    assert read(port, handler, 2, dxl.HARDWARE_ERROR_STATUS) == 0


def test_clear_brings_present_position_within_one_turn_from_firmware_42(bus):
    chain, port, handler = bus
    wait_for(lambda: read(port, handler, 1, dxl.PRESENT_VELOCITY) == 0, what='servo 1 at rest')
    turns = read(port, handler, 1, dxl.PRESENT_POSITION)
    assert turns > 5 * 4096
    assert handler.clearMultiTurn(port, 1) == (OK, 0)
    assert read(port, handler, 1, dxl.PRESENT_POSITION) == turns % 4096
    assert handler.clearMultiTurn(port, 3) == (OK, dxl.INSTRUCTION_ERROR)   # firmware 41
    result, error = handler.txRxPacket(port, [0, 0, 0, 0, 4, 8, 0, 0x10, 0x01, 1, 2, 3, 4,
                                              0, 0])[1:]
    assert (result, error) == (OK, dxl.DATA_RANGE_ERROR)   # not the fixed 44 58 4C 22


def test_bulk_read_and_bulk_write(bus):
    chain, port, handler = bus
    write_ = sdk.GroupBulkWrite(port, handler)
    assert write_.addParam(2, *dxl.CURRENT_LIMIT, [44, 1])      # 300
    assert write_.addParam(4, *dxl.RETURN_DELAY_TIME, [0])
    assert write_.txPacket() == OK
    assert read(port, handler, 2, dxl.CURRENT_LIMIT) == 300
    assert read(port, handler, 4, dxl.RETURN_DELAY_TIME) == 0
    bulk = sdk.GroupBulkRead(port, handler)
    assert bulk.addParam(2, *dxl.CURRENT_LIMIT) and bulk.addParam(4, *dxl.MODEL_NUMBER)
    wait_for(lambda: bulk.txRxPacket() == OK or port.clearPort(), what='the bulk read')
    assert bulk.getData(2, *dxl.CURRENT_LIMIT) == 300
    assert bulk.getData(4, *dxl.MODEL_NUMBER) == 1020
