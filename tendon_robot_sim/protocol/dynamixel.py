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
ROBOTIS Dynamixel X-series servos (Protocol 2.0): control table, units and tendon channels.

Addresses, sizes and units are those of the XM430-W350 control table in the
ROBOTIS e-Manual (the other X-series models share the addresses used here).
Both the bus driver (:mod:`tendon_robot_sim.protocol.dynamixel_bus`, on ROBOTIS's
``dynamixel_sdk``) and the emulated servos (:mod:`tendon_robot_sim.emulator.dynamixel`)
read them from this module.

A tendon channel is one servo pulling one tendon over a pulley of radius ``r``
[m]: displacement = direction * r * (angle - angle at activation), and the
tension [N] the servo holds follows from its current through a calibration
(:class:`CurrentCalibration`).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Mapping

import numpy as np

# ------------------------------------------------------------------ control table (XM430-W350)

#: (address, size in bytes) of the control-table items this package uses.
MODEL_NUMBER = (0, 2)
FIRMWARE_VERSION = (6, 1)
ID = (7, 1)
BAUD_RATE = (8, 1)
OPERATING_MODE = (11, 1)
CURRENT_LIMIT = (38, 2)
TORQUE_ENABLE = (64, 1)
HARDWARE_ERROR_STATUS = (70, 1)
GOAL_CURRENT = (102, 2)
GOAL_POSITION = (116, 4)
PRESENT_CURRENT = (126, 2)
PRESENT_VELOCITY = (128, 4)
PRESENT_POSITION = (132, 4)
INDIRECT_ADDRESS_1 = (168, 2)   # Indirect Address 1 .. 28: 2 bytes each
INDIRECT_DATA_1 = (224, 1)      # Indirect Data 1 .. 28: 1 byte each
INDIRECT_COUNT = 28
#: First address of the RAM area; EEPROM items (below) can be written with torque off only.
RAM_START = 64
TABLE_SIZE = 265

#: Operating Mode values.
CURRENT_MODE = 0
EXTENDED_POSITION_MODE = 4
CURRENT_BASED_POSITION_MODE = 5
#: The bus file's ``tension_mode``: the Operating Mode that holds tensions. In current-based
#: position control the Goal Current bounds the current (the tension) while the servo heads
#: for a Goal Position ``travel_limit`` beyond the activation zero: a tendon that snaps or
#: slips off its pulley does not spin the servo on.
TENSION_MODES = {'current': CURRENT_MODE, 'current_based_position': CURRENT_BASED_POSITION_MODE}

#: Units of the control table.
CURRENT_UNIT = 2.69e-3             # A per unit of Goal/Present Current and Current Limit
VELOCITY_UNIT = 0.229 * 2 * math.pi / 60   # rad/s per unit of Present Velocity (0.229 rev/min)
POSITION_UNIT = 2 * math.pi / 4096       # rad per unit of Present/Goal Position

#: Baud Rate (address 8) value -> bits per second.
BAUD_RATES = {0: 9600, 1: 57600, 2: 115200, 3: 1000000, 4: 2000000, 5: 3000000, 6: 4000000,
              7: 4500000}
#: Rates the SDK's PortHandler can open (it has no 4.5 Mbps) from 57600 up.
SDK_BAUD_RATES = (57600, 115200, 1000000, 2000000, 3000000, 4000000)

#: Hardware Error Status bits.
HARDWARE_ERRORS = {0: 'input voltage error', 2: 'overheating error', 3: 'motor encoder error',
                   4: 'electrical shock error', 5: 'overload error'}
#: Status packet error byte: bit 7 is the alert (a Hardware Error Status bit is set).
ALERT = 0x80

#: Model numbers of the X-series servos a tendon channel accepts.
MODELS = {1020: 'XM430-W350', 1030: 'XM430-W210', 1120: 'XM540-W270', 1130: 'XM540-W150',
          1000: 'XH430-W350', 1010: 'XH430-W210', 1060: 'XL430-W250'}

#: Block the bridge reads from every servo each cycle, mapped into Indirect Data 1..11.
STATE_ITEMS = (HARDWARE_ERROR_STATUS, PRESENT_CURRENT, PRESENT_VELOCITY, PRESENT_POSITION)
STATE_LENGTH = sum(size for _, size in STATE_ITEMS)


def hardware_error_names(bits: int) -> list[str]:
    """Return the names of the Hardware Error Status bits set in ``bits``."""
    return [name for bit, name in HARDWARE_ERRORS.items() if bits >> bit & 1] or (
        [f'bits 0x{bits:02X}'] if bits else [])


def signed(value: int, size: int) -> int:
    """Return the two's complement of an unsigned ``size``-byte control-table value."""
    bits = 8 * size
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def unsigned(value: int, size: int) -> int:
    """Return the unsigned ``size``-byte representation of a signed value."""
    return value & ((1 << (8 * size)) - 1)


# ------------------------------------------------------------------ calibration and channels


class ChannelError(ValueError):
    """A Dynamixel channel or bus setting that cannot be used; the message names the field."""


@dataclass(frozen=True)
class CurrentCalibration:
    """
    Tension [N] from the servo's current [A]: ``tension = gain * current + offset``.

    With ``table`` (pairs of current [A], tension [N], increasing current) the
    tension is interpolated in it instead (and extrapolated along its end slopes).
    ``residual`` is the RMS residual of the fit that produced it [N].
    """

    gain: float = 100.0      # N/A
    offset: float = 0.0      # N
    table: tuple[tuple[float, float], ...] = ()
    residual: float | None = None

    def tension(self, current: np.ndarray | float) -> np.ndarray:
        """Return the tension [N] for ``current`` [A]."""
        current = np.asarray(current, dtype=float)
        if not self.table:
            return self.gain * current + self.offset
        i, t = np.array(self.table).T
        low = t[0] + (current - i[0]) * (t[1] - t[0]) / (i[1] - i[0])
        high = t[-1] + (current - i[-1]) * (t[-1] - t[-2]) / (i[-1] - i[-2])
        return np.where(current < i[0], low, np.where(current > i[-1], high,
                                                      np.interp(current, i, t)))

    def current(self, tension: np.ndarray | float) -> np.ndarray:
        """Return the current [A] that holds ``tension`` [N] (the inverse of :meth:`tension`)."""
        tension = np.asarray(tension, dtype=float)
        if not self.table:
            return (tension - self.offset) / self.gain
        i, t = np.array(self.table).T
        low = i[0] + (tension - t[0]) * (i[1] - i[0]) / (t[1] - t[0])
        high = i[-1] + (tension - t[-1]) * (i[-1] - i[-2]) / (t[-1] - t[-2])
        return np.where(tension < t[0], low, np.where(tension > t[-1], high,
                                                      np.interp(tension, t, i)))

    def check(self, where: str) -> None:
        """Raise ChannelError unless the calibration is finite and increasing."""
        if self.table:
            pairs = np.array(self.table, dtype=float)
            if pairs.ndim != 2 or pairs.shape[1] != 2 or len(pairs) < 2:
                raise ChannelError(f'{where}.table: needs at least two [current A, tension N] '
                                   'pairs')
            if not np.all(np.isfinite(pairs)) or np.any(np.diff(pairs, axis=0) <= 0.0):
                raise ChannelError(f'{where}.table: currents and tensions must be finite and '
                                   'strictly increasing')
        elif not (math.isfinite(self.gain) and self.gain > 0.0 and math.isfinite(self.offset)):
            raise ChannelError(f'{where}: gain must be finite and > 0 N/A and offset finite, '
                               f'got gain {self.gain}, offset {self.offset}')


@dataclass(frozen=True)
class ServoChannel:
    """One tendon pulled by one servo."""

    servo_id: int
    pulley_radius: float            # m
    direction: int = 1              # +1: a positive angle pulls the tendon in
    calibration: CurrentCalibration = CurrentCalibration()
    current_limit: float = 3.209    # A, written to Current Limit (XM430-W350 default 1193)

    @property
    def current_limit_units(self) -> int:
        """Return the Current Limit value of the control table."""
        return int(self.current_limit / CURRENT_UNIT)

    def goal_current(self, tension: float, max_tension: float) -> int:
        """Goal Current [units] for ``tension`` [N], clamped to max_tension and the limit."""
        amps = float(self.calibration.current(min(max(tension, 0.0), max_tension)))
        units = round(self.direction * amps / CURRENT_UNIT)
        limit = self.current_limit_units
        return max(-limit, min(limit, units))

    def tension(self, present_current: int) -> float:
        """Tension [N] from Present Current [units]."""
        return float(self.calibration.tension(self.direction * present_current * CURRENT_UNIT))

    def displacement(self, position: int, zero: int) -> float:
        """Tendon displacement [m] from Present Position and the zero taken at activation."""
        return self.direction * self.pulley_radius * (position - zero) * POSITION_UNIT

    def goal_position(self, displacement: float, zero: int) -> int:
        """Goal Position [units] for a tendon ``displacement`` [m]."""
        return zero + round(self.direction * displacement / self.pulley_radius / POSITION_UNIT)

    def velocity(self, present_velocity: int) -> float:
        """Tendon velocity [m/s] from Present Velocity [units]."""
        return self.direction * self.pulley_radius * present_velocity * VELOCITY_UNIT


@dataclass(frozen=True)
class BusSettings:
    """Settings of the whole bus file: the tension mode, its travel limit [m], min firmware."""

    tension_mode: str = 'current'
    travel_limit: float = 0.02    # m of tendon drawn in beyond the activation zero
    # Oldest Firmware Version (control table address 6) configure accepts; 0: any. Pin the
    # version a rig was verified with, so that a replaced servo is not taken unnoticed.
    min_firmware: int = 0

    @property
    def operating_mode(self) -> int:
        """Return the Operating Mode of tension control."""
        return TENSION_MODES[self.tension_mode]


def parse_bus_settings(data: Mapping, where: str) -> BusSettings:
    """Read ``tension_mode``, ``travel_limit``, ``min_firmware``; ChannelError names a bad one."""
    mode = data.get('tension_mode', BusSettings.tension_mode)
    if mode not in TENSION_MODES:
        raise ChannelError(f'{where}.tension_mode: must be one of {sorted(TENSION_MODES)}, '
                           f'got {mode!r}')
    travel = data.get('travel_limit', BusSettings.travel_limit)
    if (isinstance(travel, bool) or not isinstance(travel, (int, float))
            or not (math.isfinite(travel) and travel > 0.0)):
        raise ChannelError(f'{where}.travel_limit: must be > 0 m, got {travel!r}')
    firmware = data.get('min_firmware', BusSettings.min_firmware)
    if isinstance(firmware, bool) or not isinstance(firmware, int) or not 0 <= firmware <= 255:
        raise ChannelError(f'{where}.min_firmware: must be an integer in [0, 255], got '
                           f'{firmware!r}')
    return BusSettings(mode, float(travel), firmware)


def parse_channels(entries: Any, where: str = 'dynamixel.channels') -> list[ServoChannel]:
    """
    Read the channels from a YAML list of mappings, in tendon order.

    ChannelError names a bad field. Each entry: ``id`` (0..252), ``pulley_radius``
    [m] > 0, ``direction`` (+1/-1), ``current_limit`` [A] > 0, and ``calibration``:
    ``{gain: N/A, offset: N}`` or ``{table: [[A, N], ...]}`` (optional ``residual`` [N]).
    """
    if not isinstance(entries, list) or not entries:
        raise ChannelError(f'{where}: must be a non-empty list of channel mappings')
    channels = []
    for k, entry in enumerate(entries):
        at = f'{where}[{k}]'
        if not isinstance(entry, Mapping):
            raise ChannelError(f'{at}: must be a mapping')
        unknown = set(entry) - {'id', 'pulley_radius', 'direction', 'calibration',
                                'current_limit'}
        if unknown:
            raise ChannelError(f'{at}: unknown keys {sorted(unknown)}')
        try:
            servo_id = entry['id']
            radius = float(entry['pulley_radius'])
        except KeyError as missing:
            raise ChannelError(f'{at}.{missing.args[0]}: missing') from None
        except (TypeError, ValueError):
            raise ChannelError(f'{at}.pulley_radius: must be a number') from None
        if not isinstance(servo_id, int) or not 0 <= servo_id <= 252:
            raise ChannelError(f'{at}.id: must be an integer in [0, 252], got {servo_id!r}')
        if not (math.isfinite(radius) and radius > 0.0):
            raise ChannelError(f'{at}.pulley_radius: must be > 0 m, got {radius}')
        direction = entry.get('direction', 1)
        if direction not in (1, -1):
            raise ChannelError(f'{at}.direction: must be 1 or -1, got {direction!r}')
        limit = entry.get('current_limit', ServoChannel.current_limit)
        if not isinstance(limit, (int, float)) or not (math.isfinite(limit) and limit > 0.0):
            raise ChannelError(f'{at}.current_limit: must be > 0 A, got {limit!r}')
        calibration = _calibration(entry.get('calibration', {}), f'{at}.calibration')
        channels.append(ServoChannel(servo_id, radius, direction, calibration, float(limit)))
    ids = [c.servo_id for c in channels]
    if len(set(ids)) != len(ids):
        raise ChannelError(f'{where}: servo IDs must be distinct, got {ids}')
    return channels


def _calibration(entry: Any, where: str) -> CurrentCalibration:
    if not isinstance(entry, Mapping):
        raise ChannelError(f'{where}: must be a mapping')
    unknown = set(entry) - {'gain', 'offset', 'table', 'residual'}
    if unknown:
        raise ChannelError(f'{where}: unknown keys {sorted(unknown)}')
    try:
        table = tuple((float(i), float(t)) for i, t in entry.get('table', ()))
        calibration = CurrentCalibration(
            gain=float(entry.get('gain', CurrentCalibration.gain)),
            offset=float(entry.get('offset', CurrentCalibration.offset)), table=table,
            residual=None if entry.get('residual') is None else float(entry['residual']))
    except (TypeError, ValueError):
        raise ChannelError(f'{where}: gain, offset and table must be numbers') from None
    calibration.check(where)
    return calibration
