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
The emulated Dynamixel chain: the manual's packets byte for byte, and ROBOTIS's SDK over a pty.

The example packets below are typed from the ROBOTIS e-Manual, Protocol 2.0 page
(Instruction Details: Ping, Read and Write examples), not produced by any code
of this package, so the emulator and the SDK cannot agree on a shared mistake.
"""

import os
import select
import threading

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.emulator.devices import DeviceThread
from tendon_robot_sim.emulator.dynamixel import (crc16, DynamixelChain, EmulatedServo,
                                                 InstructionDecoder, packet, stuff, unstuff)
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

sdk = pytest.importorskip('dynamixel_sdk')
from waiting import wait_for  # noqa: E402

# Protocol 2.0 page, Ping example: ID 1, an XM430-W210 (model 1030, firmware 0x26) answers.
PING_1 = 'FF FF FD 00 01 03 00 01 19 4E'
PING_1_STATUS = 'FF FF FD 00 01 07 00 55 00 06 04 26 65 5D'
# Read example: 4 bytes of Present Position (132) of ID 1, which reads 166.
READ_1 = 'FF FF FD 00 01 07 00 02 84 00 04 00 1D 15'
READ_1_STATUS = 'FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0'
# Write example: 512 into Goal Position (116) of ID 1.
WRITE_1 = 'FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89'
WRITE_1_STATUS = 'FF FF FD 00 01 04 00 55 00 A1 0C'


def h(text):
    return bytes.fromhex(text)


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


def manual_servo():
    """Return the servo of the manual's examples: ID 1, XM430-W210, firmware 0x26."""
    return EmulatedServo(1, model=1030, firmware=0x26)


def test_the_manuals_ping_read_and_write_examples_byte_for_byte(plant):
    servos = [manual_servo(), *(EmulatedServo(k) for k in (2, 3, 4))]
    chain = DynamixelChain(plant, servos)
    assert chain.receive(h(PING_1)) == [h(PING_1_STATUS)]
    servos[0]._put(dxl.PRESENT_POSITION, 166)
    assert chain.receive(h(READ_1)) == [h(READ_1_STATUS)]
    assert chain.receive(h(WRITE_1)) == [h(WRITE_1_STATUS)]
    assert servos[0].get(dxl.GOAL_POSITION) == 512
    # ... and the emulator's own encoder writes the manual's instruction packets too.
    assert packet(1, bytes([0x01])) == h(PING_1)
    assert packet(1, bytes([0x02, 0x84, 0x00, 0x04, 0x00])) == h(READ_1)


def test_crc_of_the_manual_packets_and_byte_stuffing():
    for text in (PING_1, PING_1_STATUS, READ_1, READ_1_STATUS, WRITE_1, WRITE_1_STATUS):
        raw = h(text)
        assert crc16(raw[:-2]) == int.from_bytes(raw[-2:], 'little'), text
    # The Protocol 2.0 page's stuffing rule: FF FF FD -> FF FF FD FD.
    assert stuff(b'\x03\xff\xff\xfd\x01') == b'\x03\xff\xff\xfd\xfd\x01'
    assert unstuff(stuff(b'\xff\xff\xfd\xff\xff\xfd')) == b'\xff\xff\xfd\xff\xff\xfd'
    # "If FF FF FD already exists, add a 0xFD to change it to FF FF FD FD": the receiver
    # takes that one FD out, not the FD of the data that follows it.
    assert stuff(b'\xff\xff\xfd\xfd') == b'\xff\xff\xfd\xfd\xfd'
    assert unstuff(b'\xff\xff\xfd\xfd\xfd') == b'\xff\xff\xfd\xfd'
    # A stuffed packet decodes to its original parameters.
    decoded = InstructionDecoder().feed(b'\x00\x17' + packet(1, b'\x03\x00\x00\xff\xff\xfd'))
    assert decoded[0].params == b'\x00\x00\xff\xff\xfd'


def test_a_bad_crc_gets_the_crc_error_and_a_hardware_error_sets_the_alert_bit(plant):
    chain = DynamixelChain(plant)
    bad = bytearray(h(PING_1))
    bad[-1] ^= 0x01
    reply = chain.receive(bytes(bad))
    assert reply[0][8] == 0x03   # error byte: CRC error
    chain.set_hardware_error(1, 1 << 5)   # overload
    assert chain.receive(h(PING_1))[0][8] == dxl.ALERT


@pytest.fixture
def bus(plant, monkeypatch):
    """Serve an emulated chain on a pty; yield it with the SDK's port on the other side."""
    # A real servo answers within its Return Delay Time; the emulated chain is a thread of
    # this process and can wait for the GIL behind other threads on a loaded machine. An
    # answer later than the SDK's timeout (2 x 16 ms latency allowance + 2 ms) would be
    # read as the answer to the next instruction to the same servo, or a sync read fail with
    # COMM_RX_TIMEOUT (-3001, seen at load 6 with 100 ms): allow 1 s (a timeout of about 2 s,
    # waited out once, by the silent servo's ping).
    monkeypatch.setattr(sdk.port_handler, 'LATENCY_TIMER', 1000)
    yield from served(DynamixelChain(plant))


def served(chain):
    """Serve ``chain`` on a pty; yield it, the SDK's port on the other side and a handler."""
    thread = DeviceThread(chain, PtyEndpoint(), 200.0, name='dynamixel').start()
    port = sdk.PortHandler(thread.endpoint.path)
    assert port.openPort() and port.setBaudRate(1000000)
    try:
        yield chain, port, sdk.PacketHandler(2.0)
    finally:
        port.closePort()
        thread.stop()


def test_the_sdk_pings_reads_and_writes_the_emulated_servos(bus):
    chain, port, handler = bus
    model, result, error = handler.ping(port, 3)
    assert (model, result, error) == (1020, sdk.COMM_SUCCESS, 0)
    ids, result = handler.broadcastPing(port)
    assert result == sdk.COMM_SUCCESS and sorted(ids) == [1, 2, 3, 4]
    assert ids[2] == [1020, 46]
    # Operating Mode is EEPROM: refused with torque on, accepted with torque off.
    # (communication result, error byte): a timeout would read as error 0.
    ok = sdk.COMM_SUCCESS
    assert handler.write1ByteTxRx(port, 2, dxl.TORQUE_ENABLE[0], 1) == (ok, 0)
    assert handler.write1ByteTxRx(port, 2, dxl.OPERATING_MODE[0], 0) == (ok, 0x07)
    assert handler.write1ByteTxRx(port, 2, dxl.TORQUE_ENABLE[0], 0) == (ok, 0)
    assert handler.write1ByteTxRx(port, 2, dxl.OPERATING_MODE[0], 0) == (ok, 0)
    assert handler.read1ByteTxRx(port, 2, dxl.OPERATING_MODE[0]) == (0, ok, 0)
    # A Goal Current above the Current Limit is refused (Data Limit Error).
    assert handler.write2ByteTxRx(port, 2, dxl.GOAL_CURRENT[0], 1194) == (ok, 0x06)


def test_sync_write_of_goal_currents_pulls_the_tendons_and_sync_read_reports_them(bus):
    chain, port, handler = bus
    ids = [1, 2, 3, 4]

    def answered(result) -> bool:
        # An emulator thread held up past the SDK's timeout on a loaded machine answers
        # late: drop what came late (it would be taken for the next answer) and ask again.
        return result == sdk.COMM_SUCCESS or port.clearPort()
    for servo_id in ids:
        for item, value in ((dxl.OPERATING_MODE, dxl.CURRENT_MODE), (dxl.TORQUE_ENABLE, 1)):
            wait_for(lambda: answered(handler.write1ByteTxRx(port, servo_id, item[0], value)[0]),
                     what='the write answered')
    write = sdk.GroupSyncWrite(port, handler, *dxl.GOAL_CURRENT)
    goal = round(0.03 / dxl.CURRENT_UNIT)   # 30 mA: 3 N with the servo's 100 N/A
    for servo_id in ids:
        write.addParam(servo_id, list(dxl.unsigned(goal if servo_id == 1 else 2, 2).to_bytes(
            2, 'little')))
    assert write.txPacket() == sdk.COMM_SUCCESS
    read = sdk.GroupSyncRead(port, handler, dxl.PRESENT_CURRENT[0], 10)
    for servo_id in ids:
        read.addParam(servo_id)

    def settled():
        """Sync-read the servos until they report the goals (the tensions follow a lag)."""
        if not answered(read.txRxPacket()):
            return False
        currents = [dxl.signed(read.getData(i, *dxl.PRESENT_CURRENT), 2) for i in ids]
        return currents == [goal, 2, 2, 2]
    # (The torque came on under the Goal Current a mode switch resets to Current Limit, as
    # the Operating Mode page says; the emulator's plant takes a while to solve that pull.)
    wait_for(settled, what='the currents of the goals')
    wait_for(lambda: np.all(np.abs(chain.mechanics.velocities) < 1e-4), what='the tendons at rest')

    def pulley_units() -> int:
        """Present Position the plant's pulled tendon asks for now (0.015 m pulley)."""
        return round(chain.mechanics.displacements[0] / 0.015 / dxl.POSITION_UNIT)

    def read_between_equal_units():
        # A tendon at rest still creeps by well under a unit a read; on a loaded machine a
        # read can take long enough for it to cross into the next one: such a read is asked
        # again, and the check below stays exact.
        before = pulley_units()
        if not answered(read.txRxPacket()):
            return None
        return (before,) if pulley_units() == before else None
    units, = wait_for(read_between_equal_units, what='a sync read at rest')
    positions = [dxl.signed(read.getData(i, *dxl.PRESENT_POSITION), 4) for i in ids]
    # The pulled tendon was drawn in (the plant bends towards it): its pulley turned most.
    assert np.argmax(chain.mechanics.displacements) == 0
    assert positions[0] - 2048 == units


def test_faults_seen_by_the_sdk_silent_servo_crc_burst_and_alert(bus):
    chain, port, handler = bus
    chain.silence(2)
    assert handler.ping(port, 2)[1] == sdk.COMM_RX_TIMEOUT
    chain.silence(2, False)
    chain.corrupt_replies(3)
    assert [handler.ping(port, 1)[1] for _ in range(4)] == [sdk.COMM_RX_CORRUPT] * 3 + [
        sdk.COMM_SUCCESS]
    chain.set_hardware_error(3, 1 << 5)
    value, result, error = handler.read1ByteTxRx(port, 3, dxl.HARDWARE_ERROR_STATUS[0])
    assert (value, result, error & dxl.ALERT) == (1 << 5, sdk.COMM_SUCCESS, dxl.ALERT)
    assert handler.reboot(port, 3)[0] == sdk.COMM_SUCCESS
    assert handler.read1ByteTxRx(port, 3, dxl.HARDWARE_ERROR_STATUS[0])[:3] == (
        0, sdk.COMM_SUCCESS, 0)


class SlowMechanics:
    """A device whose answers are instant and whose step is held until the test lets it go."""

    def __init__(self):
        self.received = threading.Event()   # an instruction came in this round
        self.go_on = threading.Event()

    def receive(self, data: bytes) -> list[bytes]:
        self.received.set()
        return [b'answer']

    def step(self, now: float) -> list[bytes]:
        if self.received.is_set():    # the round of the instruction: its step takes long
            self.go_on.wait()
        return []


def test_an_answer_goes_out_before_the_step_of_its_round(tmp_path):
    """
    The mechanics' step (a plant solve, stretched by a loaded machine) never holds an answer.

    The demo's servos answered later than their bus file's 0.1 s under load 15 to 25: the
    answer waited in the device thread behind the plant's step of the same round.
    """
    device = SlowMechanics()
    thread = DeviceThread(device, PtyEndpoint(str(tmp_path / 'slow')), 1e6, name='slow').start()
    host = os.open(tmp_path / 'slow', os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        os.write(host, b'ping')
        got = bytearray()

        def answered():
            ready, _, _ = select.select([host], [], [], 0.01)
            if ready:
                got.extend(os.read(host, 64))
            return bytes(got) == b'answer'
        wait_for(answered, what='the answer while the step is held')
    finally:
        device.go_on.set()
        os.close(host)
        thread.stop()


def test_the_link_appears_once_the_device_answers(tmp_path, plant, monkeypatch):
    """
    A host that finds the port finds a device that reads it: no terminal nobody reads yet.

    ``demo --hardware`` waited for the emulator's links, which appeared before its devices
    served: the bridge's first PING went unanswered under load.
    """
    monkeypatch.setattr(sdk.port_handler, 'LATENCY_TIMER', 1000)   # as in bus(): any load
    link = tmp_path / 'dynamixel'
    link.symlink_to('/dev/null')    # an earlier run's, left behind
    thread = DeviceThread(DynamixelChain(plant), PtyEndpoint(str(link)), 200.0,
                          name='dynamixel')
    try:
        assert not link.exists() and not link.is_symlink()
        thread.start()
        assert link.is_symlink()
        port = sdk.PortHandler(str(link))
        assert port.openPort() and port.setBaudRate(1000000)
        try:
            assert sdk.PacketHandler(2.0).ping(port, 1)[1] == sdk.COMM_SUCCESS
        finally:
            port.closePort()
    finally:
        thread.stop()
    assert not link.is_symlink()
