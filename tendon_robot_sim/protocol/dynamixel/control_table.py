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
Both the bus driver (:mod:`tendon_robot_sim.protocol.dynamixel.bus`, on ROBOTIS's
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

# ------------------------------------------------------------------ control table (X-series)

#: (address, size in bytes) of the control-table items this package uses (e-Manual, the
#: control tables of the XM430-W350, XM540-W270, XH430-W350 and XL430-W250 pages).
MODEL_NUMBER = (0, 2)
FIRMWARE_VERSION = (6, 1)
ID = (7, 1)
BAUD_RATE = (8, 1)
RETURN_DELAY_TIME = (9, 1)
DRIVE_MODE = (10, 1)
OPERATING_MODE = (11, 1)
SECONDARY_ID = (12, 1)
TEMPERATURE_LIMIT = (31, 1)
MAX_VOLTAGE_LIMIT = (32, 2)
MIN_VOLTAGE_LIMIT = (34, 2)
PWM_LIMIT = (36, 2)
CURRENT_LIMIT = (38, 2)
STARTUP_CONFIGURATION = (60, 1)   # firmware 45 and later
SHUTDOWN = (63, 1)
TORQUE_ENABLE = (64, 1)
STATUS_RETURN_LEVEL = (68, 1)
REGISTERED_INSTRUCTION = (69, 1)
HARDWARE_ERROR_STATUS = (70, 1)
BUS_WATCHDOG = (98, 1)
GOAL_PWM = (100, 2)
GOAL_CURRENT = (102, 2)
PROFILE_ACCELERATION = (108, 4)
PROFILE_VELOCITY = (112, 4)
GOAL_POSITION = (116, 4)
PRESENT_CURRENT = (126, 2)    # Present Load (0.1 %) on the XL430-W250
PRESENT_VELOCITY = (128, 4)
PRESENT_POSITION = (132, 4)
BACKUP_READY = (147, 1)         # firmware 45 and later
INDIRECT_ADDRESS_1 = (168, 2)   # Indirect Address 1 .. 28: 2 bytes each
INDIRECT_DATA_1 = (224, 1)      # Indirect Data 1 .. 28: 1 byte each
INDIRECT_ADDRESS_29 = (578, 2)  # Indirect Address 29 .. 56 (Protocol 2.0 only)
INDIRECT_DATA_29 = (634, 1)     # Indirect Data 29 .. 56
INDIRECT_COUNT = 28             # in each of the two blocks
#: Largest Secondary ID that is on (253 ~ 255 turn it off; Secondary(Shadow) ID page).
SECONDARY_ID_MAX = 252
#: The Secondary ID configure leaves: off, as from the factory.
SECONDARY_ID_OFF = 255
#: First address of the RAM area; EEPROM items (below) can be written with torque off only.
RAM_START = 64
#: One past the last address (Indirect Data 56 is 661).
TABLE_SIZE = 662

#: Operating Mode values (the X-series Operating Mode page: 0, 1, 3, 4, 5, 16 exist).
CURRENT_MODE = 0
VELOCITY_MODE = 1
POSITION_MODE = 3
EXTENDED_POSITION_MODE = 4
CURRENT_BASED_POSITION_MODE = 5
PWM_MODE = 16
OPERATING_MODES = (CURRENT_MODE, VELOCITY_MODE, POSITION_MODE, EXTENDED_POSITION_MODE,
                   CURRENT_BASED_POSITION_MODE, PWM_MODE)
#: The bus file's ``tension_mode``: the Operating Mode that holds tensions. In current-based
#: position control the Goal Current bounds the current (the tension) while the servo heads
#: for a Goal Position ``travel_limit`` beyond the activation zero: a tendon that snaps or
#: slips off its pulley does not spin the servo on.
TENSION_MODES = {'current': CURRENT_MODE, 'current_based_position': CURRENT_BASED_POSITION_MODE}

#: Drive Mode bits (Drive Mode page): 0 Reverse, 1 slave of a dual joint (X540), 2
#: time-based profile, 3 Torque On by Goal Update (firmware 45 and later).
DRIVE_REVERSE, DRIVE_SLAVE, DRIVE_TIME_PROFILE, DRIVE_TORQUE_ON_BY_GOAL = 0x01, 0x02, 0x04, 0x08
DRIVE_MODE_BITS = {0: 'Reverse', 1: 'dual-joint slave', 2: 'time-based profile',
                   3: 'Torque On by Goal Update'}
#: Firmware from which Drive Mode and Bus Watchdog exist (their pages: "from firmware v38").
DRIVE_MODE_FIRMWARE = BUS_WATCHDOG_FIRMWARE = 38
#: Startup Configuration (60) bits: 0 Startup Torque On (Torque Enable 1 at power-on), 1 RAM
#: Restore (the RAM items of the Control Table Backup restored at power-on).
STARTUP_TORQUE_ON, RAM_RESTORE = 0x01, 0x02
STARTUP_BITS = {0: 'Startup Torque On', 1: 'RAM Restore'}
#: Firmware from which Startup Configuration, Backup Ready and the Control Table Backup
#: instruction exist (Startup Configuration page and Protocol 2.0 page: X430/540 "v45").
STARTUP_FIRMWARE = 45
#: Bus Watchdog unit [s], largest value, and the value it reads once it expired (-1).
BUS_WATCHDOG_UNIT = 0.02
BUS_WATCHDOG_MAX = 127
BUS_WATCHDOG_EXPIRED = 0xFF
#: Range of a USB adapter's latency timer [s] (FTDI: 1 to 255 ms), and the SDK's own
#: allowance (its LATENCY_TIMER, the FTDI default of 16 ms).
LATENCY_TIMER_RANGE = (0.001, 0.255)
SDK_LATENCY_TIMER = 0.016
#: Status Return Level the bus needs: a status for every instruction (0: PING only, 1: PING
#: and READ).
STATUS_RETURN_ALL = 2

#: Units of the control table.
CURRENT_UNIT = 2.69e-3             # A per unit of Goal/Present Current and Current Limit
VELOCITY_UNIT = 0.229 * 2 * math.pi / 60   # rad/s per unit of Present Velocity (0.229 rev/min)
POSITION_UNIT = 2 * math.pi / 4096       # rad per unit of Present/Goal Position
#: Goal Position range of the extended and current-based position modes (+-256 turns).
EXTENDED_POSITION_RANGE = 1048575

#: Baud Rate (address 8) value -> bits per second.
BAUD_RATES = {0: 9600, 1: 57600, 2: 115200, 3: 1000000, 4: 2000000, 5: 3000000, 6: 4000000,
              7: 4500000}
#: Rates the SDK's PortHandler can open (it has no 4.5 Mbps) from 57600 up.
SDK_BAUD_RATES = (57600, 115200, 1000000, 2000000, 3000000, 4000000)

#: Hardware Error Status bits (and of Shutdown, 63, which names those that switch the torque off).
HARDWARE_ERRORS = {0: 'input voltage error', 2: 'overheating error', 3: 'motor encoder error',
                   4: 'electrical shock error', 5: 'overload error'}
#: Shutdown's initial value: overheating, electrical shock and overload errors (Shutdown page).
SHUTDOWN_DEFAULT = 0x34
#: PWM Limit (36) and Goal PWM (100): 885 is 100 % of the supply voltage.
PWM_FULL = 885
#: Status packet error byte: bit 7 is the alert (a Hardware Error Status bit is set), bits
#: 0..6 the error number (Protocol 2.0 page, Status Packet).
ALERT = 0x80
RESULT_FAIL, INSTRUCTION_ERROR, CRC_ERROR, DATA_RANGE_ERROR = 0x01, 0x02, 0x03, 0x04
DATA_LENGTH_ERROR, DATA_LIMIT_ERROR, ACCESS_ERROR = 0x05, 0x06, 0x07
STATUS_ERRORS = {RESULT_FAIL: 'Result Fail', INSTRUCTION_ERROR: 'Instruction Error',
                 CRC_ERROR: 'CRC Error', DATA_RANGE_ERROR: 'Data Range Error',
                 DATA_LENGTH_ERROR: 'Data Length Error', DATA_LIMIT_ERROR: 'Data Limit Error',
                 ACCESS_ERROR: 'Access Error'}


@dataclass(frozen=True)
class Model:
    """
    What differs between the X-series models a tendon channel may meet (their e-Manual pages).

    ``current_limit``: the largest Current Limit (38) [units], also its initial value; None
    for a model without current control (no Current Limit, no Goal Current). ``drive_bits``:
    the Drive Mode bits it has, ``drive_mode_max`` the top of Drive Mode's Range column.
    ``reverse_current``: Reverse (Drive Mode bit 0) inverts the current too, not only the
    position. ``temperature_limit``: initial Temperature Limit (31) [deg C].
    ``voltage_limits``: the Range of Min and Max Voltage Limit (34, 32) [0.1 V], also their
    initial values (Min at the low end, Max at the high end). ``stall_current``: the current
    of the stall torque at 12 V in its Specifications [A], what the motor draws when a
    position mode without a current bound (extended position control) pulls against a
    blocked horn. ``top_speed``: its No Load Speed at the highest voltage of its
    Specifications [rev/min], the fastest it turns under its own power.
    """

    name: str
    current_limit: int | None
    drive_bits: int
    drive_mode_max: int
    reverse_current: bool
    temperature_limit: int
    voltage_limits: tuple[int, int]
    stall_current: float
    top_speed: float

    @property
    def top_speed_units(self) -> float:
        """Return :attr:`top_speed` in Present Position units per second."""
        return self.top_speed / 60.0 * 2.0 * math.pi / POSITION_UNIT


_X430 = DRIVE_REVERSE | DRIVE_TIME_PROFILE
_X540 = _X430 | DRIVE_SLAVE
_XL430 = _X430 | DRIVE_TORQUE_ON_BY_GOAL
_12V = (95, 160)
#: The one table of X-series model limits, by model number: Drive Mode's range is 0 ~ 5
#: (Reverse, dual joint on an X540, time-based profile) except on the XL430-W250, whose page
#: lists 0 ~ 13 (Torque On by Goal Update, bit 3, from firmware v45); stall currents at 12 V:
#: XM430 4.1 N m (W350) and 3.0 N m (W210) at 2.3 A, XH430 3.4 N m and 2.5 N m at 1.3 A,
#: XM540 10.6 N m (W270) and 7.3 N m (W150) at 4.4 A, XL430-W250 1.5 N m at 1.4 A; No Load
#: Speed at 14.8 V (the XL430-W250 at 12 V): XM430 57 (W350) and 95 (W210) rev/min, XH430
#: 37 and 62, XM540 37 (W270) and 66 (W150), XL430-W250 61.
MODELS = {1020: Model('XM430-W350', 1193, _X430, 5, False, 80, _12V, 2.3, 57.0),
          1030: Model('XM430-W210', 1193, _X430, 5, False, 80, _12V, 2.3, 95.0),
          1000: Model('XH430-W350', 648, _X430, 5, False, 80, _12V, 1.3, 37.0),
          1010: Model('XH430-W210', 648, _X430, 5, False, 80, _12V, 1.3, 62.0),
          1120: Model('XM540-W270', 2047, _X540, 5, True, 80, _12V, 4.4, 37.0),
          1130: Model('XM540-W150', 2047, _X540, 5, True, 80, _12V, 4.4, 66.0),
          1060: Model('XL430-W250', None, _XL430, 13, False, 72, (60, 140), 1.4, 61.0)}


#: Half a turn [units]: a Clear (0x10, by another tool) moves Present Position by whole
#: turns, so a change of at least this much that no motion makes is a Clear.
POSITION_JUMP = 2048
#: Factor on a model's top speed (its No Load Speed at 14.8 V) for what it may turn between
#: two reads: a supply up to its Max Voltage Limit (16 V) and the spread between servos.
SPEED_MARGIN = 1.25


def frame_lost(model: Model, jump: int, gap: float) -> str:
    """
    Say why the servo's multi-turn count was cleared ('' if no motion rules it out).

    Clear (0x10, Protocol 2.0 page) brings Present Position "to an absolute value within
    one full rotation" and "can only be applied when DYNAMIXEL is stopped" (Result Fail
    otherwise): at that moment the position changes by whole turns, 4096 units each,
    while the servo rests; whatever it turns before and after is motion. The servo keeps
    its RAM, so the goals it holds stay in the old count, whole turns from its tendon.
    Between two reads ``gap`` [s] apart it turns at most ``reach`` = its model's top
    speed (:attr:`Model.top_speed`, times :data:`SPEED_MARGIN`) times ``gap``; Velocity
    Limit bounds only Goal Velocity (its page), not the current modes the bus uses. So a
    change ``jump`` [units] larger than both ``reach`` and half a turn is a Clear: no
    motion makes it, however long the gap.

    What this cannot see: a Clear in a gap long enough for the servo to turn back most of a
    turn towards the goal it holds (reach above half a turn: 0.42 s for an XM430-W350),
    which may then look like motion. Such a gap is no fault by itself: loaded hosts stall
    the bus that long (0.72 to 0.78 s measured, docs/hardware.md), and the Bus Watchdog
    stops the servos in longer ones.
    """
    reach = model.top_speed_units * SPEED_MARGIN * gap
    if abs(jump) >= max(POSITION_JUMP, reach):
        return (f'its Present Position jumped {jump:+d} units in {gap:.3f} s, more than it '
                f'turns in that time at its top speed ({reach:.0f} units; its multi-turn '
                'count cleared by another tool?): its zero is gone')
    return ''


def drive_mode_names(bits: int) -> list[str]:
    """Return the names of the Drive Mode ``bits``, each with its number."""
    return [f'{DRIVE_MODE_BITS[bit]} (bit {bit})' if bit in DRIVE_MODE_BITS else f'bit {bit}'
            for bit in range(8) if bits >> bit & 1]


def startup_names(bits: int) -> list[str]:
    """Return the names of the Startup Configuration ``bits``."""
    return [STARTUP_BITS.get(bit, f'bit {bit}') for bit in range(8) if bits >> bit & 1]


@dataclass(frozen=True)
class Item:
    """A control-table item a bus file may set: address, size [bytes] and range."""

    address: int
    size: int
    low: int
    high: int

    @property
    def eeprom(self) -> bool:
        """Return True for the EEPROM area (written with torque off, kept over a reboot)."""
        return self.address < RAM_START


#: Control-table items a bus file's ``control_table`` may set, with the ranges of their
#: pages. The bridge writes each at configure (RAM items again after every Operating Mode
#: switch, which resets them) and reads it back.
SETTABLE = {
    'return_delay_time': Item(9, 1, 0, 254),      # 2 us
    'drive_mode': Item(10, 1, 0, 13),
    'temperature_limit': Item(31, 1, 0, 100),     # deg C
    # 0.113 %; from 2: the bridge marks its RAM with a Goal PWM one below it (STATE_ITEMS)
    'pwm_limit': Item(36, 2, 2, 885),
    'velocity_limit': Item(44, 4, 0, 1023),       # 0.229 rev/min
    'velocity_i_gain': Item(76, 2, 0, 16383),
    'velocity_p_gain': Item(78, 2, 0, 16383),
    'position_d_gain': Item(80, 2, 0, 16383),
    'position_i_gain': Item(82, 2, 0, 16383),
    'position_p_gain': Item(84, 2, 0, 16383),
    'feedforward_2nd_gain': Item(88, 2, 0, 16383),
    'feedforward_1st_gain': Item(90, 2, 0, 16383),
    'profile_acceleration': Item(108, 4, 0, 32767),
    'profile_velocity': Item(112, 4, 0, 32767),
}
#: Items the bridge sets itself, and the bus-file key that sets each.
OWNED = {'operating_mode': 'tension_mode', 'current_limit': 'current_limit (per channel)',
         'bus_watchdog': 'bus_watchdog', 'torque_enable': 'the lifecycle',
         'goal_current': 'setpoints', 'goal_position': 'setpoints and travel_limit'}
#: Drive Mode bits a bus file may ask for: Reverse would invert the position (and on an X540
#: the current) behind the channel's ``direction``; a slave follows its master, not the bus;
#: Torque On by Goal Update would switch the torque on before the goal is complete.
DRIVE_MODE_ALLOWED = DRIVE_TIME_PROFILE

#: Block the bridge reads from every servo each cycle, mapped into Indirect Data 1..15: Goal
#: PWM (a mark: the bridge keeps it one below PWM Limit, where neither a power-on nor RAM
#: Restore puts it, and a lost indirect map reads 0), Torque Enable and Bus Watchdog (a servo
#: that lost power or whose watchdog expired), then its state.
STATE_ITEMS = (GOAL_PWM, TORQUE_ENABLE, BUS_WATCHDOG, HARDWARE_ERROR_STATUS,
               PRESENT_CURRENT, PRESENT_VELOCITY, PRESENT_POSITION)
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
    """
    One tendon pulled by one servo.

    ``current_limit`` [A] is written to Current Limit at configure (None: the model's own
    largest); ``control_table`` holds the (name, value) pairs of :data:`SETTABLE` the bus
    file sets for this servo, Drive Mode always among them.
    """

    servo_id: int
    pulley_radius: float            # m
    direction: int = 1              # +1: a positive angle pulls the tendon in
    calibration: CurrentCalibration = CurrentCalibration()
    current_limit: float | None = None    # A
    control_table: tuple[tuple[str, int], ...] = (('drive_mode', 0),)

    @property
    def current_limit_units(self) -> int | None:
        """Return the Current Limit value the bus file asks for (None: the model's largest)."""
        return None if self.current_limit is None else int(self.current_limit / CURRENT_UNIT)

    def tension_limit_units(self, max_tension: float) -> int | None:
        """
        Return the current [units] that holds ``max_tension`` [N], rounded down.

        The calibration is the servo's torque constant over the pulley radius, as measured
        (``calibrate-tension``); None for an unbounded ``max_tension``.
        """
        if not math.isfinite(max_tension):
            return None
        return math.floor(float(self.calibration.current(max_tension)) / CURRENT_UNIT)

    def goal_current(self, tension: float, max_tension: float, limit: int) -> int:
        """
        Goal Current [units] for ``tension`` [N], within max_tension and ``limit`` [units].

        Never a current that pushes: a tendon cannot, and a servo in current control driven
        backwards unwinds it. A tension below the calibration's offset (the tension at no
        current) is the least a pulling servo holds: no current.
        """
        amps = max(0.0, float(self.calibration.current(min(max(tension, 0.0), max_tension))))
        units = round(self.direction * amps / CURRENT_UNIT)
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
    """
    Settings of the whole bus file.

    The tension mode, its travel limit [m], the oldest firmware accepted, the Bus
    Watchdog [s] each servo arms (0: off; then firmware older than v38 is accepted), and
    the latency [s] the USB adapter may add to each answer: a servo that has not answered
    within twice that plus the packet's transfer time and 2 ms has not answered.
    """

    tension_mode: str = 'current'
    travel_limit: float = 0.02    # m of tendon drawn in beyond the activation zero
    # Oldest Firmware Version (control table address 6) configure accepts; 0: any. Pin the
    # version a rig was verified with, so that a replaced servo is not taken unnoticed.
    min_firmware: int = 0
    # What it trades: a dead host leaves the servos on their last goal this long, and a host
    # that stalls this long stops them (a fault). 1 s rides out the 0.78 s stalls seen on a
    # loaded 2-core machine (docs/hardware.md, Faults).
    bus_watchdog: float = 1.0
    latency_timer: float = SDK_LATENCY_TIMER

    @property
    def operating_mode(self) -> int:
        """Return the Operating Mode of tension control."""
        return TENSION_MODES[self.tension_mode]

    @property
    def bus_watchdog_units(self) -> int:
        """Return the Bus Watchdog value [20 ms units] (0: off)."""
        return round(self.bus_watchdog / BUS_WATCHDOG_UNIT)


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float))


def parse_bus_settings(data: Mapping, where: str) -> BusSettings:
    """Read the bus file's top-level settings; ChannelError names a bad one."""
    mode = data.get('tension_mode', BusSettings.tension_mode)
    if mode not in TENSION_MODES:
        raise ChannelError(f'{where}.tension_mode: must be one of {sorted(TENSION_MODES)}, '
                           f'got {mode!r}')
    travel = data.get('travel_limit', BusSettings.travel_limit)
    if not _number(travel) or not (math.isfinite(travel) and travel > 0.0):
        raise ChannelError(f'{where}.travel_limit: must be > 0 m, got {travel!r}')
    firmware = data.get('min_firmware', BusSettings.min_firmware)
    if isinstance(firmware, bool) or not isinstance(firmware, int) or not 0 <= firmware <= 255:
        raise ChannelError(f'{where}.min_firmware: must be an integer in [0, 255], got '
                           f'{firmware!r}')
    watchdog = data.get('bus_watchdog', BusSettings.bus_watchdog)
    longest = BUS_WATCHDOG_MAX * BUS_WATCHDOG_UNIT
    if not _number(watchdog) or not (watchdog == 0 or BUS_WATCHDOG_UNIT <= watchdog <= longest):
        raise ChannelError(f'{where}.bus_watchdog: must be 0 (off) or {BUS_WATCHDOG_UNIT:g} .. '
                           f'{longest:g} s, got {watchdog!r}')
    latency = data.get('latency_timer', BusSettings.latency_timer)
    low, high = LATENCY_TIMER_RANGE
    if not _number(latency) or not low <= latency <= high:
        raise ChannelError(f'{where}.latency_timer: must be {low:g} .. {high:g} s, got '
                           f'{latency!r}')
    return BusSettings(mode, float(travel), firmware, float(watchdog), float(latency))


def parse_control_table(entry: Any, where: str) -> dict[str, int]:
    """Read a ``control_table`` mapping of :data:`SETTABLE` items; ChannelError names a bad one."""
    if not isinstance(entry, Mapping):
        raise ChannelError(f'{where}: must be a mapping of control-table items')
    items = {}
    for name, value in entry.items():
        if name in OWNED:
            raise ChannelError(f'{where}.{name}: set by {OWNED[name]}, not here')
        if name not in SETTABLE:
            raise ChannelError(f'{where}.{name}: not an item the bus file sets; settable: '
                               f'{sorted(SETTABLE)}')
        item = SETTABLE[name]
        if isinstance(value, bool) or not isinstance(value, int) \
                or not item.low <= value <= item.high:
            raise ChannelError(f'{where}.{name}: must be an integer in [{item.low}, '
                               f'{item.high}], got {value!r}')
        if name == 'drive_mode' and value & ~DRIVE_MODE_ALLOWED:
            raise ChannelError(f'{where}.drive_mode: only bit 2 (4, time-based profile) may be '
                               f'set, got {value}: Reverse (1) would invert the servo behind '
                               "the channel's direction, a dual-joint slave (2) ignores the "
                               'bus, Torque On by Goal Update (8) would switch the torque on '
                               'before the goal is written')
        items[name] = value
    return items


def parse_channels(entries: Any, where: str = 'dynamixel.channels',
                   control_table: Mapping[str, int] | None = None,
                   calibrated: bool = False) -> list[ServoChannel]:
    """
    Read the channels from a YAML list of mappings, in tendon order.

    ChannelError names a bad field. Each entry: ``id`` (0..252), ``pulley_radius``
    [m] > 0, ``direction`` (+1/-1), ``current_limit`` [A] > 0 (default: the model's
    largest), ``calibration``: ``{gain: N/A, offset: N}`` or ``{table: [[A, N], ...]}``
    (optional ``residual`` [N]), and ``control_table`` (items of :data:`SETTABLE`, over
    the bus file's own ``control_table``, given here as ``control_table``). ``calibrated``:
    every channel must give its calibration (gain and offset, or a table), as the bridge
    needs: its tension bound, the servo's Current Limit, comes through it; without it the
    defaults stand in (``calibrate-tension``, which measures it, reads such a file).
    """
    if not isinstance(entries, list) or not entries:
        raise ChannelError(f'{where}: must be a non-empty list of channel mappings')
    channels = []
    for k, entry in enumerate(entries):
        at = f'{where}[{k}]'
        if not isinstance(entry, Mapping):
            raise ChannelError(f'{at}: must be a mapping')
        unknown = set(entry) - {'id', 'pulley_radius', 'direction', 'calibration',
                                'current_limit', 'control_table'}
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
        limit = entry.get('current_limit')
        if limit is not None and not (_number(limit) and math.isfinite(limit) and limit > 0):
            raise ChannelError(f'{at}.current_limit: must be > 0 A, got {limit!r}')
        calibration = _calibration(entry.get('calibration', {}), f'{at}.calibration',
                                   calibrated)
        items = {'drive_mode': 0, **(control_table or {}),
                 **parse_control_table(entry.get('control_table', {}), f'{at}.control_table')}
        channels.append(ServoChannel(servo_id, radius, direction, calibration,
                                     None if limit is None else float(limit),
                                     tuple(sorted(items.items()))))
    ids = [c.servo_id for c in channels]
    if len(set(ids)) != len(ids):
        raise ChannelError(f'{where}: servo IDs must be distinct, got {ids}')
    return channels


def _calibration(entry: Any, where: str, required: bool) -> CurrentCalibration:
    if not isinstance(entry, Mapping):
        raise ChannelError(f'{where}: must be a mapping')
    unknown = set(entry) - {'gain', 'offset', 'table', 'residual'}
    if unknown:
        raise ChannelError(f'{where}: unknown keys {sorted(unknown)}')
    missing = [] if not required or 'table' in entry else [
        key for key in ('gain', 'offset') if key not in entry]
    if missing:
        what = ('gain and offset, or table', 'them') if len(missing) == 2 else (missing[0], 'it')
        raise ChannelError(f'{where}: missing: {what[0]} (tendon-robot-sim hardware '
                           f'calibrate-tension measures {what[1]})')
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
