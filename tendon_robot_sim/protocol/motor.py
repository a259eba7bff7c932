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
Tendon motor driver protocol: messages, the ``tdcr-motor-v1`` table, the registry.

The messages below are what the rest of the package speaks; a device class turns
them into bytes and back. Supporting another motor driver means writing one more
class with ``encode(message) -> bytes``, ``decoder()`` and ``decode(fields)`` and
adding it to :data:`MOTOR_DEVICES`; the bridge picks it by name (parameter
``motor_device``). The wire format of ``tdcr-motor-v1`` is documented in
``docs/hardware.md`` (Serial protocols).

Units in code: displacement [m] (tendon length pulled in past the base, positive
when pulling), velocity [m/s], tension [N]. Channels are numbered from 0 in the
order of the tendons in the robot description.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging

from tendon_robot_sim.protocol.fields import (choice, Field, hex_flags, integer, optional, scaled,
                                              Sentence, SentenceTable)

logger = logging.getLogger(__name__)

#: Sequence numbers wrap after this value.
SEQ_MAX = 65535
MAX_CHANNELS = 16
#: Highest tension the wire format carries [N] (1 000 000 mN).
MAX_WIRE_TENSION = 1000.0
TENSION = 'tension'
DISPLACEMENT = 'displacement'

# Fault flags of a channel status (bit mask).
FAULT_TENSION_LIMIT = 0x01     # commanded tension above the device limit, clamped
FAULT_TRAVEL_LIMIT = 0x02      # spool at the end of its travel
FAULT_STALL = 0x04             # motor cannot follow the setpoint
FAULT_ENCODER = 0x08           # position sensor fault
FAULT_NAMES = {FAULT_TENSION_LIMIT: 'tension limit', FAULT_TRAVEL_LIMIT: 'travel limit',
               FAULT_STALL: 'stall', FAULT_ENCODER: 'encoder'}

# Reasons a device gives in a NAK.
NAK_CHECKSUM = 'CHK'   # the command frame failed its checksum (sequence number unknown)
NAK_FORMAT = 'FMT'     # unknown sentence or malformed field
NAK_CHANNEL = 'CH'     # channel number or channel count does not match the device
NAK_RANGE = 'RNG'      # value outside what the device accepts
NAK_REASONS = (NAK_CHECKSUM, NAK_FORMAT, NAK_CHANNEL, NAK_RANGE)


def fault_names(faults: int) -> list[str]:
    """Name the flags set in a fault mask (unknown bits as hex)."""
    names = [name for bit, name in FAULT_NAMES.items() if faults & bit]
    unknown = faults & ~sum(FAULT_NAMES)
    return names + ([f'0x{unknown:04X}'] if unknown else [])


# ----------------------------------------------------------------- host -> device


@dataclass(frozen=True)
class SetTension:
    """Drive one channel in tension mode to ``tension`` [N]."""

    seq: int
    channel: int
    tension: float


@dataclass(frozen=True)
class SetTensions:
    """Drive every channel in tension mode; ``tensions`` [N], one per channel."""

    seq: int
    tensions: tuple[float, ...]


@dataclass(frozen=True)
class SetDisplacement:
    """Drive one channel in displacement mode to ``displacement`` [m]."""

    seq: int
    channel: int
    displacement: float


@dataclass(frozen=True)
class SetDisplacements:
    """Drive every channel in displacement mode; ``displacements`` [m], one per channel."""

    seq: int
    displacements: tuple[float, ...]


COMMANDS = (SetTension, SetTensions, SetDisplacement, SetDisplacements)

# ----------------------------------------------------------------- device -> host


@dataclass(frozen=True)
class Ack:
    """The command ``seq`` was accepted (and applied unless it was a repeat)."""

    seq: int


@dataclass(frozen=True)
class Nak:
    """A command was rejected; ``seq`` is None when it could not be read."""

    seq: int | None
    reason: str


@dataclass(frozen=True)
class ChannelStatus:
    """Periodic state of one channel."""

    channel: int
    mode: str              # TENSION or DISPLACEMENT
    displacement: float    # m, positive when pulling
    velocity: float        # m/s, d(displacement)/dt
    tension: float         # N, measured
    faults: int            # bit mask of FAULT_* flags


_SEQ = integer('seq', 0, SEQ_MAX, 'command sequence number, wraps after 65535')
_CHANNEL = integer('channel', 0, MAX_CHANNELS - 1, 'channel number, from 0')


def _tension(name: str) -> Field:
    return scaled(name, 1e3, 'mN', 'N', 'tendon tension', low=0,
                  high=round(MAX_WIRE_TENSION * 1e3))


def _displacement(name: str) -> Field:
    return scaled(name, 1e6, 'um', 'm', 'tendon displacement, positive when pulling')


TDCR_MOTOR_V1_SENTENCES = (
    Sentence('TEN', SetTension, (_SEQ, _CHANNEL, _tension('tension')),
             description='one channel to tension mode at this tension'),
    Sentence('TENA', SetTensions, (_SEQ,), repeated=_tension('tensions'),
             max_repeat=MAX_CHANNELS, description='every channel to tension mode'),
    Sentence('POS', SetDisplacement, (_SEQ, _CHANNEL, _displacement('displacement')),
             description='one channel to displacement mode at this displacement'),
    Sentence('POSA', SetDisplacements, (_SEQ,), repeated=_displacement('displacements'),
             max_repeat=MAX_CHANNELS, description='every channel to displacement mode'),
    Sentence('ACK', Ack, (_SEQ,), description='command accepted'),
    Sentence('NAK', Nak, (
        optional(_SEQ),
        choice('reason', {r: r for r in NAK_REASONS}, 'why the command was rejected'),
    ), description='command rejected'),
    Sentence('MST', ChannelStatus, (
        _CHANNEL,
        choice('mode', {'T': TENSION, 'P': DISPLACEMENT}, 'control mode of the channel'),
        _displacement('displacement'),
        scaled('velocity', 1e6, 'um/s', 'm/s', 'displacement rate'),
        _tension('tension'),
        hex_flags('faults', 4, 'fault flags'),
    ), description='status of one channel'),
)


class TdcrMotorV1(SentenceTable):
    """The project's tendon motor driver: ASCII frames, integer um and mN."""

    name = 'tdcr-motor-v1'

    def __init__(self):
        super().__init__(TDCR_MOTOR_V1_SENTENCES)


#: Motor driver protocols by the name used in parameter ``motor_device``.
MOTOR_DEVICES = {TdcrMotorV1.name: TdcrMotorV1}


def motor_device(name: str) -> SentenceTable:
    """Make the protocol of the motor driver called ``name``."""
    try:
        return MOTOR_DEVICES[name]()
    except KeyError:
        raise KeyError(f'motor_device: unknown device {name!r}; known devices: '
                       f'{sorted(MOTOR_DEVICES)}') from None
