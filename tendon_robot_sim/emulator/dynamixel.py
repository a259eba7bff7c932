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
Emulated Dynamixel X-series servos on one Protocol 2.0 bus (the device side).

Packets as the ROBOTIS e-Manual's Protocol 2.0 page specifies them: header
``FF FF FD 00``, ID, a 2-byte little-endian length (instruction or status byte,
parameters and CRC, after byte stuffing), the CRC-16 of everything before it
(polynomial 0x8005, initial value 0, not reflected), and byte stuffing: an
``FD`` is added after every ``FF FF FD`` between the instruction and the CRC.
Instructions: PING (broadcast too), READ, WRITE, SYNC READ, SYNC WRITE and
REBOOT; anything else is answered with the Instruction Error. Status packets
carry the error byte, its bit 7 (alert) set while Hardware Error Status is not 0.

The control table is the XM430-W350's (:mod:`tendon_robot_sim.protocol.dynamixel`),
Indirect Address/Data included. Each servo pulls one tendon of the shared
:class:`~tendon_robot_sim.emulator.plant.Plant` through the mechanics of
:class:`~tendon_robot_sim.emulator.devices.MotorDriverDevice`: in current control
the tendon tension is ``gain * current + offset`` (its true calibration), in
extended position control the pulley angle sets the tendon displacement.

Fault injection for tests: :meth:`DynamixelChain.set_hardware_error`,
:meth:`~DynamixelChain.silence` and :meth:`~DynamixelChain.corrupt_replies`.
"""

from __future__ import annotations

from dataclasses import dataclass
import threading

import numpy as np

from tendon_robot_sim.emulator.devices import MotorDriverDevice
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.protocol import dynamixel as dxl
from tendon_robot_sim.protocol import motor

HEADER = b'\xff\xff\xfd\x00'
BROADCAST = 0xFE
PING, READ, WRITE, REBOOT, STATUS = 0x01, 0x02, 0x03, 0x08, 0x55
SYNC_READ, SYNC_WRITE = 0x82, 0x83
#: Status packet error numbers (bits 0..6 of the error byte).
RESULT_FAIL, INSTRUCTION_ERROR, CRC_ERROR = 0x01, 0x02, 0x03
DATA_LENGTH_ERROR, DATA_LIMIT_ERROR, ACCESS_ERROR = 0x05, 0x06, 0x07
#: Longest packet the decoder waits for [bytes after the length field].
MAX_LENGTH = 1024
#: Control-table items the host cannot write.
READ_ONLY = {*range(0, 7), dxl.HARDWARE_ERROR_STATUS[0], *range(120, 148)}
#: Hardware Error Status bits that switch the torque off (Shutdown, address 63, default).
SHUTDOWN = 0x34
# N/m: gain of the emulated position loop of current-based position control (per mechanics
# step; a tendon of the default robot draws in about 5 mm per N, so the loop halves the
# position error each step)
POSITION_GAIN = 100.0


def crc16(data: bytes) -> int:
    """CRC-16 of Protocol 2.0 (polynomial x^16 + x^15 + x^2 + 1, initial 0, MSB first)."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def stuff(field: bytes) -> bytes:
    """Add ``FD`` after every ``FF FF FD`` of the instruction/status and parameter field."""
    out = bytearray()
    for byte in field:
        out.append(byte)
        if out[-3:] == b'\xff\xff\xfd':
            out.append(0xFD)
    return bytes(out)


def unstuff(field: bytes) -> bytes:
    """Remove the ``FD`` that stuffing added after every ``FF FF FD``."""
    out = bytearray()
    for byte in field:
        if byte == 0xFD and out[-3:] == b'\xff\xff\xfd':
            continue
        out.append(byte)
    return bytes(out)


def packet(servo_id: int, field: bytes) -> bytes:
    """Build a packet: header, ID, length, stuffed ``field`` (instruction, parameters), CRC."""
    body = stuff(field)
    head = HEADER + bytes([servo_id]) + (len(body) + 2).to_bytes(2, 'little') + body
    return head + crc16(head).to_bytes(2, 'little')


def status_packet(servo_id: int, error: int, params: bytes = b'') -> bytes:
    """Build the status packet of ``servo_id`` with error byte ``error``."""
    return packet(servo_id, bytes([STATUS, error]) + params)


@dataclass(frozen=True)
class Instruction:
    """A decoded instruction packet (parameters unstuffed)."""

    servo_id: int
    instruction: int
    params: bytes


@dataclass(frozen=True)
class BadCrc:
    """A packet whose CRC does not match; ``servo_id`` as it arrived."""

    servo_id: int


class InstructionDecoder:
    """Cut a byte stream into instruction packets; garbage before a header is dropped."""

    def __init__(self):
        self.buffer = bytearray()
        self.bytes_dropped = 0

    def feed(self, data: bytes) -> list[Instruction | BadCrc]:
        self.buffer += data
        out = []
        while True:
            start = self.buffer.find(HEADER)
            if start < 0:
                keep = next((k for k in (3, 2, 1) if self.buffer.endswith(HEADER[:k])), 0)
                self.bytes_dropped += len(self.buffer) - keep
                del self.buffer[:len(self.buffer) - keep]
                return out
            self.bytes_dropped += start
            del self.buffer[:start]
            if len(self.buffer) < 7:
                return out
            length = int.from_bytes(self.buffer[5:7], 'little')
            if not 3 <= length <= MAX_LENGTH:
                self.bytes_dropped += 1
                del self.buffer[:1]
                continue
            if len(self.buffer) < 7 + length:
                return out
            raw, self.buffer = bytes(self.buffer[:7 + length]), self.buffer[7 + length:]
            if crc16(raw[:-2]) != int.from_bytes(raw[-2:], 'little'):
                out.append(BadCrc(raw[4]))
                continue
            field = unstuff(raw[7:-2])
            out.append(Instruction(raw[4], field[0], field[1:]))


class EmulatedServo:
    """
    One X-series servo: its control table and the tendon it pulls.

    ``gain`` [N/A] and ``offset`` [N] are the true current -> tension relation,
    ``pulley_radius`` [m] and ``direction`` the tendon's winding, ``zero`` the
    Present Position [units] of the unloaded tendon.
    """

    def __init__(self, servo_id: int, model: int = 1020, firmware: int = 46,
                 pulley_radius: float = 0.015, direction: int = 1, gain: float = 100.0,
                 offset: float = 0.0, zero: int = 2048):
        self.model, self.firmware = model, firmware
        self.pulley_radius, self.direction = pulley_radius, direction
        self.gain, self.offset, self.zero = gain, offset, zero
        self._displacement = self._tension = 0.0    # of the tendon, last step [m], [N]
        self.table = bytearray(dxl.TABLE_SIZE)
        self.silent = False
        self._id = servo_id
        self.reset()

    def reset(self) -> None:
        """Power-on values (what REBOOT restores; the EEPROM area keeps its values)."""
        eeprom = bytes(self.table[:dxl.RAM_START])
        self.table[:] = bytes(dxl.TABLE_SIZE)
        if any(eeprom):
            self.table[:dxl.RAM_START] = eeprom
        else:
            self._put(dxl.ID, self._id)
            self._put(dxl.BAUD_RATE, 1)
            self._put(dxl.OPERATING_MODE, 3)
            self._put(dxl.CURRENT_LIMIT, 1193)
            self._put((63, 1), SHUTDOWN)
        self._put(dxl.MODEL_NUMBER, self.model)
        self._put(dxl.FIRMWARE_VERSION, self.firmware)
        self._put((68, 1), 2)   # Status Return Level: answer every instruction
        for k in range(dxl.INDIRECT_COUNT):   # default Indirect Address n = 224 + n - 1
            self._put((dxl.INDIRECT_ADDRESS_1[0] + 2 * k, 2), dxl.INDIRECT_DATA_1[0] + k)
        self.set_position(0.0)

    @property
    def servo_id(self) -> int:
        """Return the ID in the control table (address 7)."""
        return self.table[dxl.ID[0]]

    def get(self, item: tuple[int, int], signed: bool = False) -> int:
        address, size = item
        value = int.from_bytes(self.table[address:address + size], 'little')
        return dxl.signed(value, size) if signed else value

    def _put(self, item: tuple[int, int], value: int) -> None:
        address, size = item
        self.table[address:address + size] = dxl.unsigned(int(value), size).to_bytes(
            size, 'little')

    def _resolve(self, address: int) -> int:
        """Return the address an access to ``address`` reaches (Indirect Data -> its target)."""
        k = address - dxl.INDIRECT_DATA_1[0]
        if 0 <= k < dxl.INDIRECT_COUNT:
            return self.get((dxl.INDIRECT_ADDRESS_1[0] + 2 * k, 2))
        return address

    def read(self, address: int, length: int) -> tuple[int, bytes]:
        """(error number, data) of a READ of ``length`` bytes from ``address``."""
        if length < 1 or address + length > dxl.TABLE_SIZE:
            return ACCESS_ERROR, b''
        return 0, bytes(self.table[self._resolve(a)] for a in range(address, address + length))

    def write(self, address: int, data: bytes) -> int:
        """WRITE ``data`` at ``address``; returns the error number (0: written)."""
        if address + len(data) > dxl.TABLE_SIZE or not data:
            return DATA_LENGTH_ERROR
        targets = [self._resolve(a) for a in range(address, address + len(data))]
        torque = self.table[dxl.TORQUE_ENABLE[0]]
        if any(t in READ_ONLY or (t < dxl.RAM_START and torque) for t in targets):
            return ACCESS_ERROR
        new = bytearray(self.table)
        for t, byte in zip(targets, data):
            new[t] = byte
        limit = int.from_bytes(new[38:40], 'little')
        goal = dxl.signed(int.from_bytes(new[102:104], 'little'), 2)
        if abs(goal) > limit:
            return DATA_LIMIT_ERROR
        if new[dxl.TORQUE_ENABLE[0]] and self.get(dxl.HARDWARE_ERROR_STATUS) & SHUTDOWN:
            return RESULT_FAIL   # torque stays off until REBOOT
        self.table[:] = new
        return 0

    def error_byte(self, error: int) -> int:
        return error | (dxl.ALERT if self.get(dxl.HARDWARE_ERROR_STATUS) else 0)

    def set_position(self, displacement: float, velocity: float = 0.0) -> None:
        """Present Position/Velocity from the tendon's displacement [m] and velocity [m/s]."""
        self._displacement = displacement
        angle = self.direction * displacement / self.pulley_radius
        self._put(dxl.PRESENT_POSITION, self.zero + round(angle / dxl.POSITION_UNIT))
        rate = self.direction * velocity / self.pulley_radius
        self._put(dxl.PRESENT_VELOCITY, round(rate / dxl.VELOCITY_UNIT))

    def set_hardware_error(self, bits: int) -> None:
        self._put(dxl.HARDWARE_ERROR_STATUS, bits)
        if bits & SHUTDOWN:
            self._put(dxl.TORQUE_ENABLE, 0)

    def target(self) -> tuple[str, float]:
        """(mode, target) the servo drives its tendon to: tension [N] or displacement [m]."""
        if not self.get(dxl.TORQUE_ENABLE):
            return motor.TENSION, 0.0   # back-drivable: the tendon goes slack
        mode = self.get(dxl.OPERATING_MODE)
        if mode == dxl.EXTENDED_POSITION_MODE:
            angle = (self.get(dxl.GOAL_POSITION, signed=True) - self.zero) * dxl.POSITION_UNIT
            return motor.DISPLACEMENT, self.direction * angle * self.pulley_radius
        if mode == dxl.CURRENT_MODE:
            current = self.direction * self.get(dxl.GOAL_CURRENT, signed=True) * dxl.CURRENT_UNIT
            return motor.TENSION, max(0.0, self.gain * current + self.offset)
        if mode == dxl.CURRENT_BASED_POSITION_MODE:
            # A position loop whose current is bounded by |Goal Current|: it pulls harder
            # while the tendon is short of the Goal Position and eases off beyond it, never
            # above the bound, so the tendon stops at the goal when holding it there takes
            # less than the bound, and pays out when the bound drops below the load.
            current = abs(self.get(dxl.GOAL_CURRENT, signed=True)) * dxl.CURRENT_UNIT
            bound = max(0.0, self.gain * current + self.offset)
            angle = (self.get(dxl.GOAL_POSITION, signed=True) - self.zero) * dxl.POSITION_UNIT
            goal = self.direction * angle * self.pulley_radius
            wanted = self._tension + POSITION_GAIN * (goal - self._displacement)
            return motor.TENSION, min(bound, max(0.0, wanted))
        return motor.TENSION, 0.0   # the modes a tendon servo does not use hold no tension

    def set_current(self, tension: float) -> None:
        """Present Current [units] that holds ``tension`` [N] (0 with torque off)."""
        self._tension = tension
        if not self.get(dxl.TORQUE_ENABLE):
            self._put(dxl.PRESENT_CURRENT, 0)
            return
        amps = (tension - self.offset) / self.gain
        self._put(dxl.PRESENT_CURRENT, round(self.direction * amps / dxl.CURRENT_UNIT))


class DynamixelChain:
    """
    Servos on one bus, one per tendon of ``plant`` (in tendon order).

    A device for :class:`~tendon_robot_sim.emulator.devices.DeviceThread`:
    :meth:`receive` answers instruction packets, :meth:`step` moves the tendons
    (and sends nothing: a Dynamixel only answers).
    """

    def __init__(self, plant: Plant, servos: list[EmulatedServo] | None = None,
                 time_constant: float = 0.02):
        self.mechanics = MotorDriverDevice(plant, time_constant=time_constant)
        self.servos = servos or [EmulatedServo(k + 1) for k in range(plant.n_tendons)]
        if len(self.servos) != plant.n_tendons:
            raise ValueError(f'servos: one per tendon ({plant.n_tendons}), got '
                             f'{len(self.servos)}')
        self.decoder = InstructionDecoder()
        self.counts = {'instructions': 0, 'bad_crc': 0, 'replies': 0}
        self._corrupt = 0
        self._lock = threading.Lock()
        self.step(0.0)

    def _by_id(self, servo_id: int) -> EmulatedServo | None:
        return next((s for s in self.servos if s.servo_id == servo_id and not s.silent), None)

    # ------------------------------------------------------------------ host -> servos

    def receive(self, data: bytes) -> list[bytes]:
        """Handle bytes from the host; returns the status packets to send, in order."""
        replies = []
        with self._lock:
            for item in self.decoder.feed(data):
                if isinstance(item, BadCrc):
                    self.counts['bad_crc'] += 1
                    servo = self._by_id(item.servo_id)
                    if servo is not None:
                        replies.append(status_packet(servo.servo_id, servo.error_byte(CRC_ERROR)))
                    continue
                self.counts['instructions'] += 1
                replies += self._execute(item)
            replies = [self._maybe_corrupt(r) for r in replies]
            self.counts['replies'] += len(replies)
        return replies

    def _execute(self, ins: Instruction) -> list[bytes]:
        p = ins.params
        if ins.instruction == PING:
            servos = ([s for s in sorted(self.servos, key=lambda s: s.servo_id) if not s.silent]
                      if ins.servo_id == BROADCAST else [self._by_id(ins.servo_id)])
            return [status_packet(s.servo_id, s.error_byte(0), s.model.to_bytes(2, 'little')
                                  + bytes([s.firmware])) for s in servos if s is not None]
        if ins.instruction == SYNC_WRITE and ins.servo_id == BROADCAST and len(p) >= 4:
            address, size = int.from_bytes(p[0:2], 'little'), int.from_bytes(p[2:4], 'little')
            for k in range(4, len(p) - size, size + 1):
                servo = self._by_id(p[k])
                if servo is not None:
                    servo.write(address, p[k + 1:k + 1 + size])
            return []
        if ins.instruction == SYNC_READ and ins.servo_id == BROADCAST and len(p) >= 4:
            address, size = int.from_bytes(p[0:2], 'little'), int.from_bytes(p[2:4], 'little')
            replies = []
            for servo_id in p[4:]:
                servo = self._by_id(servo_id)
                if servo is not None:
                    error, data = servo.read(address, size)
                    replies.append(status_packet(servo.servo_id, servo.error_byte(error), data))
            return replies
        if ins.servo_id == BROADCAST and ins.instruction == WRITE and len(p) > 2:
            for servo in self.servos:
                servo.write(int.from_bytes(p[0:2], 'little'), p[2:])
            return []
        servo = self._by_id(ins.servo_id)
        if servo is None:
            return []
        error, data = self._unicast(servo, ins)
        return [status_packet(servo.servo_id, servo.error_byte(error), data)]

    def _unicast(self, servo: EmulatedServo, ins: Instruction) -> tuple[int, bytes]:
        p = ins.params
        if ins.instruction == READ:
            if len(p) != 4:
                return DATA_LENGTH_ERROR, b''
            return servo.read(int.from_bytes(p[0:2], 'little'), int.from_bytes(p[2:4], 'little'))
        if ins.instruction == WRITE:
            if len(p) < 3:
                return DATA_LENGTH_ERROR, b''
            return servo.write(int.from_bytes(p[0:2], 'little'), p[2:]), b''
        if ins.instruction == REBOOT:
            servo.reset()
            return 0, b''
        return INSTRUCTION_ERROR, b''

    def _maybe_corrupt(self, reply: bytes) -> bytes:
        if self._corrupt <= 0:
            return reply
        self._corrupt -= 1
        return reply[:-1] + bytes([reply[-1] ^ 0xFF])

    # ------------------------------------------------------------------ time

    def step(self, now: float) -> list[bytes]:
        """Move the tendons to ``now`` [s] from the servos' goals; a servo sends nothing."""
        with self._lock:
            modes, targets = zip(*(s.target() for s in self.servos))
        self.mechanics.set_targets(list(modes), np.array(targets))
        statuses = self.mechanics.advance(now)
        with self._lock:
            for servo, status in zip(self.servos, statuses):
                servo.set_position(status.displacement, status.velocity)
                servo.set_current(status.tension)
        return []

    # ------------------------------------------------------------------ faults

    def set_hardware_error(self, servo_id: int, bits: int) -> None:
        """Raise Hardware Error Status ``bits`` on ``servo_id`` (overload: 1 << 5)."""
        with self._lock:
            next(s for s in self.servos if s.servo_id == servo_id).set_hardware_error(bits)

    def silence(self, servo_id: int, silent: bool = True) -> None:
        """Make ``servo_id`` stop answering (a cut cable), or answer again."""
        with self._lock:
            next(s for s in self.servos if s.servo_id == servo_id).silent = silent

    def corrupt_replies(self, count: int) -> None:
        """Spoil the CRC of the next ``count`` status packets (a burst of line noise)."""
        with self._lock:
            self._corrupt = count
