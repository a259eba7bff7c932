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
Instructions: PING (broadcast too), READ, WRITE, REG WRITE and ACTION (ACTION
without a registered write: Instruction Error), SYNC READ, SYNC WRITE, BULK READ, BULK
WRITE, REBOOT (broadcast too: every servo restarts, none answers), FACTORY RESET (0xFF,
0x01 or 0x02; broadcast too, but from firmware 42 not with 0xFF), CLEAR (the multi-turn
count, firmware 42 and later; broadcast too) and Control Table Backup (0x20, firmware 45
and later); anything else is answered with the Instruction Error. A servo whose
Secondary ID (12) is an instruction's ID also does a WRITE, REG WRITE (RAM area) or ACTION
sent there, and answers nothing. Status packets
carry the error byte, its bit 7 (alert) set while Hardware Error Status is not 0; a servo
sends one as its Status Return Level says, and its Return Delay Time after the
instruction (the emulator sends a reply's statuses
together, after the sum of their delays). Every instruction a servo takes restarts its
Bus Watchdog.

Each servo's control table is :class:`~tendon_robot_sim.emulator.dynamixel_servo.EmulatedServo`.
Each servo pulls one tendon of the shared
:class:`~tendon_robot_sim.emulator.plant.Plant` through the mechanics of
:class:`~tendon_robot_sim.emulator.devices.MotorDriverDevice`: the tendon tension is
``gain * current + offset`` (its true calibration) of the current its mode drives. The
model robot takes at most its max_tension (the domain of its statics); a servo that pulls
harder reports its own pull in Present Current while the robot stays at that tension.

Fault injection for tests: :meth:`DynamixelChain.set_hardware_error`,
:meth:`~DynamixelChain.silence`, :meth:`~DynamixelChain.power_cycle`,
:meth:`~DynamixelChain.block` and :meth:`~DynamixelChain.corrupt_replies`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import threading
import time
from typing import Collection

import numpy as np
from tendon_robot_sim import share_dir
from tendon_robot_sim.emulator.devices import MotorDriverDevice
from tendon_robot_sim.emulator.dynamixel_servo import CLEAR_FIRMWARE, EmulatedServo, RESET_ALL
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.files.outputs import write_output
from tendon_robot_sim.files.yaml_loader import read_yaml
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.stuffing import stuff, unstuff
import yaml

__all__ = ['ANSWER_LATENCY', 'bus_file', 'bus_text', 'crc16', 'DynamixelChain', 'EmulatedServo',
           'InstructionDecoder', 'packet', 'status_packet', 'stuff', 'unstuff']

HEADER = b'\xff\xff\xfd\x00'
BROADCAST = 0xFE
PING, READ, WRITE, REG_WRITE, ACTION, REBOOT, STATUS = 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x55
BACKUP, FACTORY_RESET, CLEAR = 0x20, 0x06, 0x10
SYNC_READ, SYNC_WRITE, BULK_READ, BULK_WRITE = 0x82, 0x83, 0x92, 0x93
#: Longest packet the decoder waits for [bytes after the length field].
MAX_LENGTH = 1024
#: Latency [s] a bus file allows the emulated chain (its latency_timer). A real servo
#: answers within its Return Delay Time; the emulator answers from a thread or process
#: that a loaded machine can hold up for longer than a USB adapter's 16 ms.
ANSWER_LATENCY = 0.1


def bus_text() -> str:
    """Return the shipped bus file with the emulator's latency (:data:`ANSWER_LATENCY`)."""
    bus = read_yaml(share_dir() / 'config' / 'dynamixel.yaml')
    bus['latency_timer'] = ANSWER_LATENCY
    return yaml.safe_dump(bus, sort_keys=False)


def bus_file(folder: str | Path, name: str = 'dynamixel.yaml') -> Path:
    """Write :func:`bus_text` to ``folder``/``name``."""
    path = Path(folder) / name
    write_output(path, bus_text())
    return path


def crc16(data: bytes) -> int:
    """CRC-16 of Protocol 2.0 (polynomial x^16 + x^15 + x^2 + 1, initial 0, MSB first)."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


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
        return next((s for s in self.servos if s.servo_id == servo_id and not s.silent
                     and s.off_until is None), None)

    # ------------------------------------------------------------------ host -> servos

    def receive(self, data: bytes) -> list[bytes]:
        """Handle bytes from the host; returns the status packets to send, in order."""
        replies: list[tuple[EmulatedServo, bytes]] = []
        now = time.monotonic()
        with self._lock:
            for item in self.decoder.feed(data):
                if isinstance(item, BadCrc):
                    self.counts['bad_crc'] += 1
                    servo = self._by_id(item.servo_id)
                    if servo is not None:
                        replies.append((servo, status_packet(
                            servo.servo_id, servo.error_byte(dxl.CRC_ERROR))))
                    continue
                self.counts['instructions'] += 1
                replies += self._execute(item, now)
            delay = sum(servo.return_delay() for servo, _ in replies)
            replies = [self._maybe_corrupt(r) for _, r in replies]
            self.counts['replies'] += len(replies)
        # Return Delay Time: the statuses go out that much later. A wait of a few hundred
        # microseconds, spun: a sleep on a loaded machine gives the core away for milliseconds.
        deadline = time.perf_counter() + delay
        while time.perf_counter() < deadline:
            pass
        return replies

    def _execute(self, ins: Instruction, now: float) -> list[tuple[EmulatedServo, bytes]]:
        if ins.servo_id == BROADCAST:
            return self._broadcast(ins, now)
        for other in self._secondary(ins.servo_id):
            other.instruction(now)
            self._obey(other, ins)
        servo = self._by_id(ins.servo_id)
        if servo is None:
            return []
        servo.instruction(now)
        answer = ins.instruction == PING or servo.answers(read=ins.instruction == READ)
        if ins.instruction == REBOOT:   # the status goes out before the servo restarts
            reply = status_packet(servo.servo_id, servo.error_byte(0))
            servo.restart()
            return [(servo, reply)] if answer else []
        if ins.instruction == FACTORY_RESET:   # the status goes out, then the reset
            error = servo.factory_reset_error(ins.params)
            reply = status_packet(servo.servo_id, servo.error_byte(error))
            if not error:
                servo.factory_reset(ins.params[0])
            return [(servo, reply)] if answer else []
        if ins.instruction == BACKUP:
            error, reboot = servo.backup(ins.params)
            reply = status_packet(servo.servo_id, servo.error_byte(error))
            if reboot:   # "After processing packets, DYNAMIXEL reboots itself"
                servo.restart()
            return [(servo, reply)] if answer else []
        error, data = self._unicast(servo, ins)
        if ins.instruction == PING and not error:
            data = servo.model.to_bytes(2, 'little') + bytes([servo.firmware])
        servo.log_held()
        return [(servo, status_packet(servo.servo_id, servo.error_byte(error), data))] \
            if answer else []

    def _broadcast(self, ins: Instruction, now: float) -> list[tuple[EmulatedServo, bytes]]:
        """Broadcast instructions: PING answers from each servo; the others answer nothing."""
        p = ins.params
        live = [s for s in sorted(self.servos, key=lambda s: s.servo_id)
                if not s.silent and s.off_until is None]
        if ins.instruction in (SYNC_READ, SYNC_WRITE):
            if len(p) < 4:
                return []
            address, size = int.from_bytes(p[0:2], 'little'), int.from_bytes(p[2:4], 'little')
            if ins.instruction == SYNC_READ:
                targets = [self._by_id(i) for i in p[4:]]
            else:
                targets = [self._by_id(p[k]) for k in range(4, len(p) - size, size + 1)]
            replies = []
            for k, servo in enumerate(targets):
                if servo is None:
                    continue
                servo.instruction(now)
                if ins.instruction == SYNC_READ:
                    error, data = servo.read(address, size)
                    if servo.answers(read=True):
                        replies.append((servo, status_packet(servo.servo_id,
                                                             servo.error_byte(error), data)))
                else:
                    start = 4 + k * (size + 1) + 1
                    servo.write(address, p[start:start + size])
            return replies
        if ins.instruction == BULK_READ:
            return self._bulk_read(p, now)
        for servo in live:
            servo.instruction(now)
        if ins.instruction == BULK_WRITE:
            k = 0
            while k + 5 <= len(p):   # ID, address, length, data: no status
                size = int.from_bytes(p[k + 3:k + 5], 'little')
                servo = self._by_id(p[k])
                if servo is not None and k + 5 + size <= len(p):
                    servo.write(int.from_bytes(p[k + 1:k + 3], 'little'), p[k + 5:k + 5 + size])
                k += 5 + size
            return []
        if ins.instruction == REBOOT:   # every servo restarts; none answers a broadcast
            for servo in live:
                servo.restart()
            return []
        if ins.instruction == FACTORY_RESET:
            if not EmulatedServo.factory_reset_error(p):
                for servo in live:   # "will NOT be activated" with 0xFF, from firmware 42
                    if p[0] != RESET_ALL or servo.firmware < CLEAR_FIRMWARE:
                        servo.factory_reset(p[0])
            return []
        if ins.instruction == CLEAR:
            for servo in live:
                servo.clear(p)
            return []
        if ins.instruction == PING:
            return [(s, status_packet(s.servo_id, s.error_byte(0), s.model.to_bytes(2, 'little')
                                      + bytes([s.firmware]))) for s in live]
        for servo in live:   # no status for a broadcast WRITE, REG WRITE or ACTION
            if ins.instruction in (WRITE, REG_WRITE) and len(p) > 2:
                do = servo.write if ins.instruction == WRITE else servo.register
                do(int.from_bytes(p[0:2], 'little'), p[2:])
            elif ins.instruction == ACTION:
                servo.action()
        return []

    def _bulk_read(self, p: bytes, now: float) -> list[tuple[EmulatedServo, bytes]]:
        """BULK READ: (ID, address, length) per servo; each answers its own, in order."""
        replies = []
        for k in range(0, len(p) - 4, 5):
            servo = self._by_id(p[k])
            if servo is None:
                continue
            servo.instruction(now)
            error, data = servo.read(int.from_bytes(p[k + 1:k + 3], 'little'),
                                     int.from_bytes(p[k + 3:k + 5], 'little'))
            if servo.answers(read=True):
                replies.append((servo, status_packet(servo.servo_id, servo.error_byte(error),
                                                     data)))
        return replies

    def _secondary(self, servo_id: int) -> list[EmulatedServo]:
        """Return the live servos whose Secondary ID (not their ID) is ``servo_id``."""
        if servo_id > dxl.SECONDARY_ID_MAX:
            return []
        return [s for s in self.servos if not s.silent and s.off_until is None
                and s.servo_id != servo_id and s.get(dxl.SECONDARY_ID) == servo_id]

    @staticmethod
    def _obey(servo: EmulatedServo, ins: Instruction) -> None:
        """
        Do an instruction sent to ``servo``'s Secondary ID: no status, the RAM area only.

        Secondary(Shadow) ID page: "The EEPROM area of the Control Table cannot be modified
        with Secondary ID", "the Status Packet will not be returned".
        """
        p = ins.params
        if ins.instruction in (WRITE, REG_WRITE) and len(p) > 2 \
                and int.from_bytes(p[0:2], 'little') >= dxl.RAM_START:
            do = servo.write if ins.instruction == WRITE else servo.register
            do(int.from_bytes(p[0:2], 'little'), p[2:])
        elif ins.instruction == ACTION:
            servo.action()

    def _unicast(self, servo: EmulatedServo, ins: Instruction) -> tuple[int, bytes]:
        p = ins.params
        if ins.instruction == PING:
            return 0, b''
        if ins.instruction == READ:
            if len(p) != 4:
                return dxl.DATA_LENGTH_ERROR, b''
            return servo.read(int.from_bytes(p[0:2], 'little'), int.from_bytes(p[2:4], 'little'))
        if ins.instruction in (WRITE, REG_WRITE):
            if len(p) < 3:
                return dxl.DATA_LENGTH_ERROR, b''
            do = servo.write if ins.instruction == WRITE else servo.register
            return do(int.from_bytes(p[0:2], 'little'), p[2:]), b''
        if ins.instruction == ACTION:
            return servo.action(), b''
        if ins.instruction == CLEAR:
            return servo.clear(p), b''
        return dxl.INSTRUCTION_ERROR, b''

    def _maybe_corrupt(self, reply: bytes) -> bytes:
        if self._corrupt <= 0:
            return reply
        self._corrupt -= 1
        return reply[:-1] + bytes([reply[-1] ^ 0xFF])

    # ------------------------------------------------------------------ time

    def step(self, now: float) -> list[bytes]:
        """Move the tendons to ``now`` [s] from the servos' goals; a servo sends nothing."""
        with self._lock:
            for servo in self.servos:
                if servo.off_until is not None and now >= servo.off_until:
                    servo.off_until = None
                    servo.restart()   # power is back: RAM at its initial values
                servo.check_watchdog(now)
            modes, targets = zip(*(s.target() for s in self.servos))
            # A caught tendon: the snag holds the robot's side at the tension it had.
            targets = [self.mechanics.tensions[k] if s.blocked is not None else t
                       for k, (s, t) in enumerate(zip(self.servos, targets))]
        self.mechanics.set_targets(list(modes), np.array(targets))
        statuses = self.mechanics.advance(now)
        with self._lock:
            for servo, status, target, limit in zip(self.servos, statuses, targets,
                                                    self.mechanics.max_tensions):
                if servo.blocked is not None:
                    servo.set_position(servo.blocked, 0.0)
                    servo.set_current(servo.blocked_tension())
                    continue
                spool = servo.spool(status.displacement)
                servo.set_position(spool, status.velocity if spool == status.displacement
                                   else 0.0)
                servo.set_current(target if target > limit else status.tension)
        return []

    # ------------------------------------------------------------------ faults

    def set_hardware_error(self, servo_id: int, bits: int) -> None:
        """Raise Hardware Error Status ``bits`` on ``servo_id`` (overload: 1 << 5)."""
        with self._lock:
            next(s for s in self.servos if s.servo_id == servo_id).set_hardware_error(bits)

    def power_cycle(self, servo_id: int, down_time: float = 0.0) -> None:
        """
        Cut ``servo_id``'s power for ``down_time`` [s]: silent and limp, then restarted.

        Restarted (at the first step after ``down_time``), its RAM (the torque, the indirect
        map, the Bus Watchdog) is back at its initial values and its Present Position
        within one turn, as after a power-on.
        """
        with self._lock:
            servo = next(s for s in self.servos if s.servo_id == servo_id)
            servo.off_until = time.monotonic() + down_time

    def block(self, servo_id: int, blocked: bool = True) -> None:
        """Catch ``servo_id``'s tendon where it is (a snag), or free it again."""
        with self._lock:
            next(s for s in self.servos if s.servo_id == servo_id).block(blocked)

    def silence(self, servo_id: int | Collection[int], silent: bool = True) -> None:
        """Make ``servo_id`` stop answering (a cut cable), or answer again; several at once."""
        chosen = {servo_id} if isinstance(servo_id, int) else set(servo_id)
        with self._lock:
            for servo in self.servos:
                if servo.servo_id in chosen:
                    servo.silent = silent

    def corrupt_replies(self, count: int) -> None:
        """Spoil the CRC of the next ``count`` status packets (a burst of line noise)."""
        with self._lock:
            self._corrupt = count
