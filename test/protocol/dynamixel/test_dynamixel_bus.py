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

"""The Dynamixel bus driver (ROBOTIS's SDK) against the emulated servo chain over a pty."""

import time

import numpy as np
import pytest
from tendon_robot_sim.emulator.dynamixel import ANSWER_LATENCY, EmulatedServo
from tendon_robot_sim.protocol.devices import DYNAMIXEL, motor_bus
from tendon_robot_sim.protocol.drivers import DELIVERED
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

pytest.importorskip('dynamixel_sdk')
from tendon_robot_sim.protocol.dynamixel.tools import hold_and_measure  # noqa: E402
from waiting import wait_for  # noqa: E402

MAX = [20.0] * 4
# The emulated servos' true calibration: 100 N/A, pulley 15 mm (EmulatedServo defaults).
CHANNELS = [dxl.ServoChannel(k + 1, 0.015, 1, dxl.CurrentCalibration(100.0, 0.0))
            for k in range(4)]


def run_cycles(bus, count: int) -> None:
    """
    Wait for ``count`` more bus cycles that read every servo's state.

    What a check that something does not happen waits for: each cycle is a chance for it,
    and a loaded machine runs fewer of them in a given time.
    """
    end = bus.statistics()[0].frames_ok + count * len(bus.ids)
    wait_for(lambda: bus.statistics()[0].frames_ok >= end, what=f'{count} bus cycles')


def test_configure_enable_and_tension_commands_reach_the_servos(rig, buses):
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, cycle_rate=100.0)
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.OPERATING_MODE) for s in chain.servos] == [dxl.CURRENT_MODE] * 4
    assert not any(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)
    bus.enable([0.5] * 4)
    seq = bus.command_tensions([3.0, 0.5, 0.5, 0.5])
    wait_for(lambda: bus.delivery(seq) == DELIVERED, what='delivery')
    assert all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos)
    # Goal Current from the calibration: 3 N / 100 N/A = 30 mA = 11 units of 2.69 mA.
    assert chain.servos[0].get(dxl.GOAL_CURRENT, signed=True) == round(0.03 / dxl.CURRENT_UNIT)
    status = wait_for(lambda: (s := bus.status()) is not None and abs(s.tensions[0] - 3) < 0.3
                      and s, what='the tension to settle')
    # Tension read back through the calibration, within one current unit (0.27 N).
    np.testing.assert_allclose(status.tensions, [3.0, 0.5, 0.5, 0.5], atol=0.27)
    # Displacement from the zero taken at activation: the pulled tendon was drawn in.
    assert status.displacements[0] > 1e-4 and bus.fault() == ''


def test_a_missing_servo_or_a_wrong_model_refuses_configure_naming_the_id(rig, buses):
    _, thread = rig([EmulatedServo(1), EmulatedServo(2), EmulatedServo(3),
                     EmulatedServo(5, model=350)])
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: 'servo ID 4 does not answer' in bus.statistics()[0].last_error,
             what='configure to fail naming servo 4')
    assert not bus.connected
    _, thread = rig([EmulatedServo(1), EmulatedServo(2), EmulatedServo(3),
                     EmulatedServo(4, model=350)])
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: 'servo ID 4 is model 350' in bus.statistics()[0].last_error,
             what='configure to fail naming servo 4')
    assert not bus.connected


def test_configure_reads_each_firmware_and_refuses_one_older_than_the_bus_file_asks(rig, buses):
    servos = [EmulatedServo(1), EmulatedServo(2, firmware=38), EmulatedServo(3),
              EmulatedServo(4, firmware=52)]
    _, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX)
    wait_for(lambda: bus.connected, what='the bus to connect with firmware 38 and later')
    assert bus.firmware == {1: 46, 2: 38, 3: 46, 4: 52}
    _, thread = rig(servos)
    bus = buses(thread.endpoint.path, CHANNELS, MAX,
                settings=dxl.BusSettings(min_firmware=46))
    wait_for(lambda: 'servo ID 2 has firmware v38, older than the min_firmware v46'
             in bus.statistics()[0].last_error, what='configure to fail naming servo 2')
    assert not bus.connected


def test_overload_and_a_lost_servo_are_faults_naming_the_servo(rig, buses):
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: bus.connected, what='the bus to connect')
    bus.enable([0.5] * 4)
    wait_for(lambda: all(s.get(dxl.TORQUE_ENABLE) for s in chain.servos), what='torque on')
    chain.set_hardware_error(3, 1 << 5)
    wait_for(bus.fault, what='the overload')
    assert bus.fault() == 'servo ID 3: overload error'
    assert bus.status().faults.tolist() == [0, 0, 1 << 5, 0]
    # Shutdown switched servo 3 off; the others hold.
    assert [s.get(dxl.TORQUE_ENABLE) for s in chain.servos] == [1, 1, 0, 1]
    assert [s.torque for s in bus.servo_states()] == [True, True, False, True]
    assert bus.servo_states()[2].hardware_error == 1 << 5
    bus.clear_fault()
    chain.silence(2)
    wait_for(lambda: not bus.connected, what='the lost servo')
    # the overload may be reported again before the loss: the loss is the link's last error
    assert bus.statistics()[0].last_error.startswith('servo ID 2 lost'), bus.fault()
    chain.silence(2, False)
    wait_for(lambda: bus.statistics()[0].reconnects == 1, what='the bus to come back')


def test_a_crc_burst_is_counted_and_the_port_vanishing_and_coming_back_reconnects(rig, buses):
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, backoff=(0.05, 0.2))
    wait_for(lambda: bus.connected, what='the bus to connect')
    chain.corrupt_replies(2)
    wait_for(lambda: bus.statistics()[0].bad_checksum >= 1, what='the bad CRC')
    assert bus.connected and bus.fault() == ''
    thread.disconnect(0.5)
    wait_for(lambda: not bus.connected, what='the port loss')
    assert 'port' in bus.statistics()[0].last_error or 'lost' in bus.statistics()[0].last_error
    wait_for(lambda: bus.connected, what='the port to come back')


def test_current_based_position_holds_a_pulled_tendon_at_its_travel_limit(rig, buses):
    """Tension mode current_based_position: the Goal Current bounds, a Goal Position stops."""
    chain, thread = rig()
    travel = 0.005     # m; 3 N would draw tendon t0 in by about 12 mm
    bus = buses(thread.endpoint.path, CHANNELS, MAX,
                settings=dxl.BusSettings('current_based_position', travel))
    wait_for(lambda: bus.connected, what='the bus to connect')
    assert [s.get(dxl.OPERATING_MODE) for s in chain.servos] == [
        dxl.CURRENT_BASED_POSITION_MODE] * 4
    bus.enable([0.5] * 4)
    seq = bus.command_tensions([3.0, 0.5, 0.5, 0.5])
    wait_for(lambda: bus.delivery(seq) == DELIVERED, what='delivery')
    servo = chain.servos[0]
    assert servo.get(dxl.GOAL_CURRENT, signed=True) == round(0.03 / dxl.CURRENT_UNIT)
    status = wait_for(lambda: (s := bus.status()) is not None
                      and abs(s.displacements[0] - travel) < 1e-4 and s,
                      what='t0 to reach its travel limit')
    run_cycles(bus, 30)     # 0.3 s at 100 Hz
    status = bus.status()
    assert abs(status.displacements[0] - travel) < 1e-4        # held there
    # ... at its Goal Position, which the bus set the travel (in units of a 15 mm pulley)
    # beyond the zero it took at activation
    goal = servo.get(dxl.GOAL_POSITION, signed=True)
    assert abs(servo.get(dxl.PRESENT_POSITION, signed=True) - goal) <= 3
    assert status.tensions[0] < 2.5                             # less than the 3 N asked for
    # A bound below what holding there takes: the servo gives way, the tendon pays out.
    seq = bus.command_tensions([0.5] * 4)
    wait_for(lambda: bus.delivery(seq) == DELIVERED, what='delivery')
    wait_for(lambda: bus.status().displacements[0] < travel - 2e-3, what='t0 to pay out')
    assert bus.fault() == ''


def test_the_bridge_builds_the_bus_with_the_tension_mode_of_its_file(tmp_path):
    path = tmp_path / 'bus.yaml'
    path.write_text('tension_mode: current_based_position\ntravel_limit: 0.01\nchannels:\n'
                    + ''.join(f'  - {{id: {k + 1}, pulley_radius: 0.015, calibration: '
                              f'{{gain: 100.0, offset: 0.0}}}}\n' for k in range(4)))
    bus = motor_bus(DYNAMIXEL, '/dev/null', MAX, 1000000, ack_timeout=0.1, max_retries=3,
                    cycle_rate=100.0, dynamixel_file=path, torque_off_when_safe=False,
                    lost_after=0.1, backoff=(0.05, 2.0), read_timeout=0.1)
    assert bus.settings == dxl.BusSettings('current_based_position', 0.01)


@pytest.mark.parametrize('latency_timer', [dxl.SDK_LATENCY_TIMER, 0.1])
def test_an_answer_counts_when_it_comes_within_the_bus_files_latency_timer(rig, latency_timer):
    """
    The port waits the bus file's latency timer for an answer (twice it, the transfer, 2 ms).

    A chain held up 50 ms (as a loaded machine holds up the emulator) is silent at the
    SDK's 16 ms: a hold only grows under load. Whether an answer makes the 0.1 s the
    emulator's bus file allows depends on the machine's load, not on the port: every bus
    test here answers within it. So the port's timeout is read where the SDK sets it, in
    its own PING, instead of timing an answer against it.
    """
    import dynamixel_sdk as sdk
    from tendon_robot_sim.protocol.dynamixel.port import open_port
    chain, thread = rig()
    receive = chain.receive
    chain.receive = lambda data: time.sleep(0.05) or receive(data)
    port = open_port(thread.endpoint.path, 1000000, latency_timer)
    timeouts = []
    set_timeout = port.setPacketTimeout

    def kept(length):
        set_timeout(length)
        timeouts.append(port.packet_timeout)
    port.setPacketTimeout = kept
    try:
        model, result, _ = sdk.PacketHandler(2.0).ping(port, 1)
    finally:
        port.closePort()
    # the SDK waits for a status packet's 11 bytes, 10 bits each at 1 Mbaud [ms]
    assert timeouts == [pytest.approx(11 * 10 / 1000.0 + 2 * 1000.0 * latency_timer + 2.0)]
    if latency_timer == dxl.SDK_LATENCY_TIMER:   # 34 ms: the 50 ms hold is too long
        assert result == sdk.COMM_RX_TIMEOUT and model == 0


def test_waiting_for_an_answer_does_not_spin_a_core(rig):
    """
    The SDK's wait for a status packet (a loop until the packet or the timeout) sleeps.

    On its non-blocking port the loop read without pause: a silent servo's 0.2 s cost 0.2 s of
    CPU, taken from a loaded machine's other processes and, behind the GIL, from an emulator
    in the same process. Judged by the reads of the port per millisecond waited: a sleeping
    wait reads about once a millisecond, a spinning one tens of times (its CPU share, once
    judged, depends on the machine's wake-up cost and load: 5 % sleeping in a quiet CI, 15 %
    spinning at load 25).
    """
    import dynamixel_sdk as sdk
    from tendon_robot_sim.protocol.dynamixel.port import open_port
    chain, thread = rig()
    chain.silence(1)
    port = open_port(thread.endpoint.path, 1000000, 0.1)    # waits about 0.2 s per PING
    reads = [0]
    read_port = port.readPort

    def counted(length):
        reads[0] += 1
        return read_port(length)
    port.readPort = counted
    try:
        start = time.monotonic()
        for _ in range(3):
            assert sdk.PacketHandler(2.0).ping(port, 1)[1] == sdk.COMM_RX_TIMEOUT
        waited = time.monotonic() - start
    finally:
        port.closePort()
    assert waited >= 0.6 and reads[0] <= 2 * waited / 1e-3, (reads[0], waited)


def late_statuses(chain, instruction: int, count: int) -> list[int]:
    """
    Send a WRITE's late status before each answer to the next ``count`` of ``instruction``.

    The status (servo 1's, without data) goes out first, as a status that came late. Returns
    the count left, in a list the chain counts down.
    """
    from tendon_robot_sim.emulator.dynamixel import status_packet
    execute, late = chain._execute, [count]

    def after_a_late_status(ins, now):
        replies = execute(ins, now)
        if ins.instruction == instruction and late[0]:
            late[0] -= 1
            replies.insert(0, (chain.servos[0], status_packet(1, 0)))
        return replies
    chain._execute = after_a_late_status
    return late


def test_a_writes_late_status_is_not_taken_for_a_reads_answer(rig):
    """
    A status that comes before a READ's own (a WRITE's, late) is not the READ's answer.

    Protocol 2.0's status packets do not say which instruction they answer. The SDK's
    readTxRx took a WRITE's status, which has no data, and gave its CRC as the item: the
    project's CI once failed configure with 'drive_mode: wrote 0, reads 82'. Here the chain
    sends a WRITE's status just before the answer to each of the first two READs; every read
    must still give the control table's value.
    """
    import dynamixel_sdk as sdk
    from tendon_robot_sim.protocol.dynamixel.port import open_port
    from tendon_robot_sim.protocol.dynamixel.setup import ServoAccess
    chain, thread = rig()
    late = late_statuses(chain, sdk.INST_READ, 2)
    port = open_port(thread.endpoint.path, 1000000, 0.1)
    try:
        access = ServoAccess(port, sdk.PacketHandler(2.0))
        assert access.read(1, dxl.DRIVE_MODE) == chain.servos[0].get(dxl.DRIVE_MODE)
        assert access.read(1, dxl.PWM_LIMIT) == chain.servos[0].get(dxl.PWM_LIMIT)
    finally:
        port.closePort()
    assert late == [0]


def test_ff_ff_fd_in_the_data_is_stuffed_both_ways_and_arrives_whole(rig):
    """
    Protocol 2.0 page, Packet Process: FF FF FD in the data travels as FF FF FD FD, both ways.

    dynamixel-sdk 4.1.0 sent an instruction's FF FF FD unstuffed (txPacket drops the stuffed
    copy addStuffing returns): the servo took the FD after FF FF FD FD for stuffing, and a
    write of these 7 bytes reached it as 6. Reading, its removeStuffing dropped the FD of
    every FF FD FD after a stuffed FF FF FD, and the sync read's block kept its length: the
    bytes after it read shifted. Indirect Data 1..7 (RW bytes 0 ~ 255, pointing at
    themselves from the factory) take any bytes.
    """
    import dynamixel_sdk as sdk
    from tendon_robot_sim.protocol.dynamixel.port import open_port, packet_handler
    from tendon_robot_sim.protocol.dynamixel.setup import ServoAccess, sync_read
    data = bytes.fromhex('FF FF FD FD FF FD FD')
    chain, thread = rig()
    port = open_port(thread.endpoint.path, 1000000, 0.1)
    try:
        handler = packet_handler()
        ServoAccess(port, handler).write_block(1, dxl.INDIRECT_DATA_1[0], data, 'the bytes')
        assert chain.servos[0].table[224:231] == data
        read = sdk.GroupSyncRead(port, handler, dxl.INDIRECT_DATA_1[0], len(data))
        read.addParam(1)
        assert sync_read(read, [1]) == sdk.COMM_SUCCESS
        assert bytes(read.data_dict[1]) == data
    finally:
        port.closePort()


def test_a_late_status_before_a_read_back_sync_read_is_a_retry_not_a_lost_port(rig):
    """
    The sync reads that check what was written take a WRITE's late status for no answer.

    The read-back of sync writes (the goals of a mode switch, ``sync_checked``) ran the SDK's
    sync READ without the length check of the bus's cycle: a late status without data, taken
    for servo 1's block, was indexed for its items and raised IndexError; the bus took it for
    a vanished port and went down (the project's suite once failed a mode-switch test so, on a
    loaded machine).
    """
    import dynamixel_sdk as sdk
    from tendon_robot_sim.protocol.dynamixel.port import open_port
    from tendon_robot_sim.protocol.dynamixel.setup import ServoAccess
    chain, thread = rig()
    ids = [servo.servo_id for servo in chain.servos]
    port = open_port(thread.endpoint.path, 1000000, 0.1)
    try:
        access = ServoAccess(port, sdk.PacketHandler(2.0))
        # two items: the second starts past the two bytes a status without data leaves
        wanted = {item: [servo.get(item) for servo in chain.servos]
                  for item in (dxl.GOAL_PWM, dxl.GOAL_CURRENT)}
        late = late_statuses(chain, sdk.INST_SYNC_READ, 1)
        writes = []
        access.sync_checked(ids, lambda: writes.append(1), wanted, 'the goals')
        assert late == [0] and len(writes) == 2, 'the read with the late status is tried again'
    finally:
        port.closePort()


def test_a_late_status_in_a_sync_read_is_a_failed_cycle_not_a_servo_state(rig, buses):
    """
    A WRITE's late status before a sync READ's answers costs a cycle, not a false fault.

    The SDK took it for servo 1's state block: its CRC read as the Hardware Error Status.
    """
    import dynamixel_sdk as sdk
    chain, thread = rig()
    bus = buses(thread.endpoint.path, CHANNELS, MAX, cycle_rate=100.0)
    wait_for(lambda: bus.connected, what='the bus to connect')
    failed = bus.statistics()[0].parse_errors + bus.statistics()[0].bad_checksum
    late = late_statuses(chain, sdk.INST_SYNC_READ, 3)
    wait_for(lambda: late == [0], what='three sync reads with a late status first')
    run_cycles(bus, 5)
    assert bus.fault() == ''
    assert bus.statistics()[0].parse_errors + bus.statistics()[0].bad_checksum >= failed + 3


def test_hold_and_measure_drives_its_servo_alone_when_another_is_grouped_under_its_id(rig):
    """
    ``hardware calibrate-tension`` on tendon 0 while servo 2 has Secondary ID 1.

    The tool's unicast Goal Current to servo 1 was also servo 2's (Secondary(Shadow) ID
    page): the other tendon's servo held tendon 0's goal, its current unbounded by what
    the tool commanded it (nothing). The tool now switches the Secondary ID of the bus
    file's other servos off before it writes anything.
    """
    servos = [EmulatedServo(k) for k in (1, 2, 3, 4)]
    servos[1]._put(dxl.SECONDARY_ID, 1)
    _, thread = rig(servos)
    before = [s.get(dxl.GOAL_CURRENT) for s in servos[1:]]   # Current Limit, at power-on
    settings = dxl.BusSettings(latency_timer=ANSWER_LATENCY)
    hold_and_measure(thread.endpoint.path, 1000000, CHANNELS[0], 20, samples=1, settle=0.0,
                     settings=settings, others=[2, 3, 4])
    assert [s.get(dxl.GOAL_CURRENT) for s in servos] == [20, *before]
    assert servos[1].get(dxl.SECONDARY_ID) == 255
