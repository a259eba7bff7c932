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
One emulated Dynamixel X-series servo: its control table, as the ROBOTIS e-Manual describes it.

What it follows, page by page of the e-Manual:

* the control tables of the XM430-W350, XM540-W270, XH430-W350 and XL430-W250 pages:
  every item from 0 to 661 with its size, access and range, the initial values of the
  EEPROM area (Return Delay Time 250, Temperature Limit 80 or 72, Current Limit of the
  model, Min/Max Voltage Limit 95/160, 60/140 on the XL430 ...) and of the RAM area,
  Indirect Address/Data 1-28 and 29-56; a model without current control (XL430-W250) has
  no Current Limit (38) nor Goal Current (102), and its 126 is Present Load;
* Protocol 2.0, Status Packet: Access Error for an item that is read-only, undefined, or
  in the EEPROM area while the torque is on; Data Length Error for a write that cuts an
  item; Data Range Error for a value outside its item's range; Data Limit Error for a Goal
  Current beyond Current Limit (a Current Limit below the present Goal Current is taken:
  the page describes no refusal, and the current then stays within the new limit);
* Operating Mode: only 0, 1, 3, 4, 5 and 16 exist (XL430: 1, 3, 4, 16); a change resets
  Goal PWM and Goal Current to PWM Limit and Current Limit, the profiles to 0 and the
  gains to their initial values;
* Current Limit: "used in Torque Control Mode and Current-based Position Control Mode"
  only. In current control the current is Goal Current, in current-based position control
  a position loop's current bounded by Goal Current; extended position control has no
  current bound but the motor's own: against a blocked horn it draws the stall current of
  its Specifications (at 12 V), scaled by Goal PWM (a PWM limit in every mode but PWM
  control: Goal PWM page) over 885;
* Drive Mode (firmware 38 and later; before, address 10 is not defined): the Range of its
  model's page (0 ~ 5, the XL430-W250 0 ~ 13) and only the bits the model has; Reverse
  inverts Goal and Present Position (on an X540 the current too); Torque On by Goal
  Update (XL430, firmware 45 and later) switches the torque on when a goal is written
  with the torque off;
* Status Return Level (68): 0 answers PING only, 1 PING and READ (SYNC READ too), 2 every
  instruction; Return Delay Time (9): each status goes out that many 2 us after the
  instruction (:meth:`EmulatedServo.return_delay`);
* Bus Watchdog (firmware 38 and later; before, address 98 is not defined): with the torque
  on, an instruction interval longer than its value (20 ms units) makes it read -1 and the
  servo stop; goal items then refuse writes with Data Range Error until 0 is written to
  it. The page does not say what "stop" is in each mode: here the current stops (current
  control: the tendon goes slack) and the position modes hold where the servo was. The
  interval is judged at each mechanics step, after the instructions waiting on the port
  are read, so an emulator thread that waited for the GIL does not blame the host;
* Reboot, and a power cycle: the RAM (torque, the indirect map) back at its initial
  values, the EEPROM kept, Present Position within one turn again;
* Startup Configuration (60, firmware 45 and later): bit 0 switches the torque on at
  power-on, bit 1 (RAM Restore) restores the RAM items of the Control Table Backup
  (Protocol 2.0 page, instruction 0x20: "Velocity P.I Gains, Position P.I.D Gains,
  Feedforward 1st & 2nd Gains, Profile Acceleration, Profile Velocity, Indirect
  Addresses"); Backup Ready (147) says whether a backup exists;
* Shutdown (63): the Hardware Error Status bits it holds (52 from the factory) switch the
  torque off until a reboot.
"""

from __future__ import annotations

from collections import deque
import time

from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

# N/m: gain of the emulated position loop of the position modes (per mechanics step; a
# tendon of the default robot draws in about 5 mm per N, so the loop halves the position
# error each step)
POSITION_GAIN = 100.0
#: Items of the Control Table Backup a RAM Restore puts back (Protocol 2.0 page): the
#: gains, the profiles and the Indirect Addresses.
BACKED_UP_RAM = ((76, 16), (108, 8), (168, 56), (578, 56))
#: Parameters of the Control Table Backup instruction: store the table, restore the EEPROM;
#: both followed by the fixed "CTRL".
BACKUP_STORE, BACKUP_RESTORE, BACKUP_KEY = 0x01, 0x02, b'CTRL'
#: Parameter of Factory Reset: every item, every item but the ID, but the ID and Baud Rate.
RESET_ALL, RESET_KEEP_ID, RESET_KEEP_ID_AND_BAUD = 0xFF, 0x01, 0x02
#: Parameters of Clear: 0x01 (the multi-turn count), then the fixed 0x44 0x58 0x4C 0x22.
CLEAR_MULTI_TURN = b'\x01DXL"'
#: Firmware from which the X series takes Clear and ignores a broadcast Factory Reset 0xFF.
CLEAR_FIRMWARE = 42
#: Entries kept in a servo's log of what it held with the torque on.
LOG_LENGTH = 10000

# The items of the X-series control table: (address, size, writable, low, high); a range of
# None is checked elsewhere (it depends on another item) or not at all (read-only).
_ITEMS = [
    (0, 2, False, None, None), (2, 4, False, None, None), (6, 1, False, None, None),
    (7, 1, True, 0, 252), (8, 1, True, 0, 7), (9, 1, True, 0, 254),
    (11, 1, True, None, None), (12, 1, True, 0, 255),
    (13, 1, True, 1, 2), (20, 4, True, -1044479, 1044479), (24, 4, True, 0, 1023),
    (31, 1, True, 0, 100), (32, 2, True, None, None), (34, 2, True, None, None),
    (36, 2, True, 0, 885), (38, 2, True, None, None), (44, 4, True, 0, 1023),
    (48, 4, True, 0, 4095), (52, 4, True, 0, 4095), (63, 1, True, 0, 255),
    (64, 1, True, 0, 1), (65, 1, True, 0, 1), (68, 1, True, 0, 2), (69, 1, False, None, None),
    (70, 1, False, None, None), (76, 2, True, 0, 16383), (78, 2, True, 0, 16383),
    (80, 2, True, 0, 16383), (82, 2, True, 0, 16383), (84, 2, True, 0, 16383),
    (88, 2, True, 0, 16383), (90, 2, True, 0, 16383),
    (100, 2, True, None, None), (102, 2, True, None, None), (104, 4, True, None, None),
    (108, 4, True, 0, 32767), (112, 4, True, 0, 32767), (116, 4, True, None, None),
    (120, 2, False, None, None), (122, 1, False, None, None), (123, 1, False, None, None),
    (124, 2, False, None, None), (126, 2, False, None, None), (128, 4, False, None, None),
    (132, 4, False, None, None), (136, 4, False, None, None), (140, 4, False, None, None),
    (144, 2, False, None, None), (146, 1, False, None, None),
    *((a, 2, True, 64, dxl.TABLE_SIZE - 1) for a in range(168, 224, 2)),
    *((a, 1, True, 0, 255) for a in range(224, 252)),
    *((a, 2, True, 64, dxl.TABLE_SIZE - 1) for a in range(578, 634, 2)),
    *((a, 1, True, 0, 255) for a in range(634, 662)),
]
#: Goal items, read-only while the Bus Watchdog reads -1.
_GOALS = (dxl.GOAL_PWM[0], dxl.GOAL_CURRENT[0], 104, dxl.GOAL_POSITION[0])
#: The Operating Modes a model without current control has.
_NO_CURRENT_MODES = (dxl.VELOCITY_MODE, dxl.POSITION_MODE, dxl.EXTENDED_POSITION_MODE,
                     dxl.PWM_MODE)
#: RAM values an Operating Mode switch sets back (its page: the gains to their initial values).
_GAINS = {76: 1920, 78: 100, 80: 0, 82: 0, 84: 800, 88: 0, 90: 0}
#: Items that exist from firmware 38 (their pages): Drive Mode and Bus Watchdog.
_V38_ITEMS = [(10, 1, True, None, None), (98, 1, True, 0, dxl.BUS_WATCHDOG_MAX)]
#: Items that exist from firmware 45: Startup Configuration (0 ~ 3) and Backup Ready.
_STARTUP_ITEMS = [(60, 1, True, 0, 3), (147, 1, False, None, None)]


class EmulatedServo:
    """
    One X-series servo: its control table and the tendon it pulls.

    ``model`` is a model number of :data:`~tendon_robot_sim.protocol.dynamixel.MODELS`
    (another answers pings as that number, with the XM430-W350's table); ``gain`` [N/A]
    and ``offset`` [N] are the true current -> tension relation, ``pulley_radius`` [m] and
    ``direction`` the tendon's winding, ``zero`` the Present Position [units] of the
    unloaded tendon at the first power-on, ``drive_mode`` and ``startup`` its Drive Mode
    and Startup Configuration from the factory (or from whoever used it last).

    ``held`` logs, after every instruction that leaves the torque on, what the servo then
    holds: (Operating Mode, Goal Current, Goal Position), when it changed. ``blocked``: the
    tendon is caught (:meth:`block`).
    """

    def __init__(self, servo_id: int, model: int = 1020, firmware: int = 46,
                 pulley_radius: float = 0.015, direction: int = 1, gain: float = 100.0,
                 offset: float = 0.0, zero: int = 2048, drive_mode: int = 0, startup: int = 0):
        self.model, self.firmware = model, firmware
        self.spec = dxl.MODELS.get(model, dxl.MODELS[1020])
        self.pulley_radius, self.direction = pulley_radius, direction
        self.gain, self.offset, self.zero = gain, offset, zero
        self._displacement = self._tension = 0.0    # of the tendon, last step [m], [N]
        self._turns_lost = 0      # Present Position units a restart forgot (whole turns)
        self._stopped_at = 0.0    # displacement where an expired Bus Watchdog stopped it [m]
        self._last_instruction = time.monotonic()
        self._registered: tuple[int, bytes] | None = None   # REG_WRITE waiting for ACTION
        self._backup: bytes | None = None   # Control Table Backup: the table when stored
        self.blocked: float | None = None   # displacement [m] where the tendon is caught
        current_items = (dxl.CURRENT_LIMIT[0], dxl.GOAL_CURRENT[0])
        low, high = self.spec.voltage_limits
        items = _ITEMS + [(32, 2, True, low, high), (34, 2, True, low, high)] + (
            _V38_ITEMS if firmware >= dxl.DRIVE_MODE_FIRMWARE else []) + (
            _STARTUP_ITEMS if firmware >= dxl.STARTUP_FIRMWARE else [])
        self.items = {a: (size, writable, low, high) for a, size, writable, low, high in items
                      if self.spec.current_limit or a not in current_items}
        self._byte_item = {a + i: a for a, (size, *_) in self.items.items() for i in range(size)}
        self.held: deque[tuple[int, int, int]] = deque(maxlen=LOG_LENGTH)
        self.table = bytearray(dxl.TABLE_SIZE)
        self.silent = False
        self.off_until: float | None = None   # powered off until then (time.monotonic() s)
        self._id = servo_id
        self._factory(drive_mode, startup)
        self.reset()

    def _factory(self, drive_mode: int, startup: int) -> None:
        """Fill the EEPROM area as it leaves the factory (the Initial Value column)."""
        low, high = self.spec.voltage_limits
        for item, value in ((dxl.ID, self._id), (dxl.BAUD_RATE, 1), (dxl.RETURN_DELAY_TIME, 250),
                            (dxl.OPERATING_MODE, 3), ((12, 1), 255),
                            ((13, 1), 2), ((24, 4), 10),
                            (dxl.TEMPERATURE_LIMIT, self.spec.temperature_limit),
                            (dxl.MAX_VOLTAGE_LIMIT, high), (dxl.MIN_VOLTAGE_LIMIT, low),
                            (dxl.PWM_LIMIT, dxl.PWM_FULL), ((44, 4), 200), ((48, 4), 4095),
                            (dxl.SHUTDOWN, dxl.SHUTDOWN_DEFAULT)):
            self._put(item, value)
        if self.spec.current_limit:
            self._put(dxl.CURRENT_LIMIT, self.spec.current_limit)
        if self.firmware >= dxl.DRIVE_MODE_FIRMWARE:
            self._put(dxl.DRIVE_MODE, drive_mode)
        if self.firmware >= dxl.STARTUP_FIRMWARE:
            self._put(dxl.STARTUP_CONFIGURATION, startup)

    def reset(self) -> None:
        """Set the RAM area as at power-on (REBOOT too); the EEPROM area keeps its values."""
        self.table[dxl.RAM_START:] = bytes(dxl.TABLE_SIZE - dxl.RAM_START)
        self._put(dxl.MODEL_NUMBER, self.model)
        self._put(dxl.FIRMWARE_VERSION, self.firmware)
        self._put(dxl.STATUS_RETURN_LEVEL, dxl.STATUS_RETURN_ALL)
        for address, value in _GAINS.items():
            self._put((address, 2), value)
        self._put(dxl.GOAL_PWM, self.get(dxl.PWM_LIMIT))
        if self.spec.current_limit:
            self._put(dxl.GOAL_CURRENT, self.get(dxl.CURRENT_LIMIT))
        for k in range(dxl.INDIRECT_COUNT):   # Indirect Address n = its own Indirect Data
            self._put((dxl.INDIRECT_ADDRESS_1[0] + 2 * k, 2), dxl.INDIRECT_DATA_1[0] + k)
            self._put((dxl.INDIRECT_ADDRESS_29[0] + 2 * k, 2), dxl.INDIRECT_DATA_29[0] + k)
        self._registered = None
        self.set_position(self._displacement)
        self._put(dxl.GOAL_POSITION, self.get(dxl.PRESENT_POSITION, signed=True))
        if self.firmware >= dxl.STARTUP_FIRMWARE:
            self._put(dxl.BACKUP_READY, self._backup is not None)

    def restart(self) -> None:
        """
        Power on again (after REBOOT or a power cycle): the multi-turn count is lost.

        Startup Configuration then restores the backed-up RAM items (RAM Restore, with a
        backup) and switches the torque on (Startup Torque On), under the power-on goals.
        """
        absolute = self.get(dxl.PRESENT_POSITION, signed=True) * self._reverse() \
            + self._turns_lost
        self._turns_lost = absolute // 4096 * 4096   # Present Position back within one turn
        self.table[dxl.HARDWARE_ERROR_STATUS[0]] = 0
        self.reset()
        startup = self.get(dxl.STARTUP_CONFIGURATION) \
            if self.firmware >= dxl.STARTUP_FIRMWARE else 0
        if startup & dxl.RAM_RESTORE and self._backup is not None:
            for address, length in BACKED_UP_RAM:
                self.table[address:address + length] = self._backup[address:address + length]
        if startup & dxl.STARTUP_TORQUE_ON:
            self._put(dxl.TORQUE_ENABLE, 1)
            self.log_held()

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
        for data, table in ((dxl.INDIRECT_DATA_1[0], dxl.INDIRECT_ADDRESS_1[0]),
                            (dxl.INDIRECT_DATA_29[0], dxl.INDIRECT_ADDRESS_29[0])):
            if 0 <= address - data < dxl.INDIRECT_COUNT:
                return self.get((table + 2 * (address - data), 2))
        return address

    def _reverse(self, current: bool = False) -> int:
        """-1 in Reverse mode (for the current only on a model whose current it inverts)."""
        reverse = self.get(dxl.DRIVE_MODE) & dxl.DRIVE_REVERSE and (
            not current or self.spec.reverse_current)
        return -1 if reverse else 1

    # ------------------------------------------------------------------ instructions

    def instruction(self, now: float) -> None:
        """Note an instruction to this servo at ``now`` [s]: the Bus Watchdog restarts."""
        # Not judged here: an emulator thread that waited for the GIL reads late what the
        # host sent in time. check_watchdog runs at each step, after the port is read.
        self._last_instruction = now

    def answers(self, read: bool) -> bool:
        """Return whether a status goes back (Status Return Level): for a READ, or any other."""
        return self.get(dxl.STATUS_RETURN_LEVEL) >= (1 if read else dxl.STATUS_RETURN_ALL)

    def return_delay(self) -> float:
        """Return how long after an instruction its status goes out (Return Delay Time) [s]."""
        return 2e-6 * self.get(dxl.RETURN_DELAY_TIME)

    def read(self, address: int, length: int) -> tuple[int, bytes]:
        """(error number, data) of a READ of ``length`` bytes from ``address``."""
        if length < 1 or address + length > dxl.TABLE_SIZE:
            return dxl.ACCESS_ERROR, b''
        return 0, bytes(self.table[self._resolve(a)] for a in range(address, address + length))

    def write(self, address: int, data: bytes) -> int:
        """WRITE ``data`` at ``address``; returns the error number (0: written)."""
        if not data or address + len(data) > dxl.TABLE_SIZE:
            return dxl.DATA_LENGTH_ERROR
        targets = [self._resolve(a) for a in range(address, address + len(data))]
        if any(t not in self._byte_item for t in targets):
            return dxl.ACCESS_ERROR   # an address the model does not define
        touched = {self._byte_item[t] for t in targets}
        torque = self.table[dxl.TORQUE_ENABLE[0]]
        if any(not self.items[a][1] or (a < dxl.RAM_START and torque) for a in touched):
            return dxl.ACCESS_ERROR
        indirect = targets != list(range(address, address + len(data)))
        if not indirect and (address != self._byte_item[address]
                             or sum(self.items[a][0] for a in touched) != len(data)):
            return dxl.DATA_LENGTH_ERROR   # a write that cuts an item
        new = bytearray(self.table)
        for t, byte in zip(targets, data):
            new[t] = byte
        error = self._check(new, touched)
        if error:
            return error
        self._commit(new, touched)
        return 0

    def _check(self, new: bytearray, touched: set[int]) -> int:
        """Return the error number of the table ``new`` after writing the items ``touched``."""
        def value(address: int, signed: bool = False) -> int:
            size = self.items[address][0]
            raw = int.from_bytes(new[address:address + size], 'little')
            return dxl.signed(raw, size) if signed else raw
        for address in sorted(touched):
            size, _, low, high = self.items[address]
            if low is not None and not low <= value(address, signed=low < 0) <= high:
                return dxl.DATA_RANGE_ERROR
        if self.get(dxl.BUS_WATCHDOG) == dxl.BUS_WATCHDOG_EXPIRED and touched & set(_GOALS):
            return dxl.DATA_RANGE_ERROR   # goals are read-only until the watchdog is cleared
        modes = dxl.OPERATING_MODES if self.spec.current_limit else _NO_CURRENT_MODES
        if value(dxl.OPERATING_MODE[0]) not in modes:
            return dxl.DATA_RANGE_ERROR
        if dxl.DRIVE_MODE[0] in touched:
            drive = value(dxl.DRIVE_MODE[0])
            if drive > self.spec.drive_mode_max or drive & ~self.spec.drive_bits:
                return dxl.DATA_RANGE_ERROR
        if self.spec.current_limit:
            if value(dxl.CURRENT_LIMIT[0]) > self.spec.current_limit:
                return dxl.DATA_RANGE_ERROR
            if dxl.GOAL_CURRENT[0] in touched and \
                    abs(value(dxl.GOAL_CURRENT[0], True)) > value(dxl.CURRENT_LIMIT[0]):
                return dxl.DATA_LIMIT_ERROR
        if dxl.GOAL_PWM[0] in touched and \
                abs(value(dxl.GOAL_PWM[0], True)) > value(dxl.PWM_LIMIT[0]):
            return dxl.DATA_LIMIT_ERROR
        if dxl.GOAL_POSITION[0] in touched:
            goal, mode = value(dxl.GOAL_POSITION[0], True), value(dxl.OPERATING_MODE[0])
            if mode == dxl.POSITION_MODE and not value(52) <= goal <= value(48):
                return dxl.DATA_LIMIT_ERROR
            if abs(goal) > dxl.EXTENDED_POSITION_RANGE:
                return dxl.DATA_RANGE_ERROR
        if new[dxl.TORQUE_ENABLE[0]] and self.shutdown_error():
            return dxl.RESULT_FAIL   # torque stays off until REBOOT
        return 0

    def _commit(self, new: bytearray, touched: set[int]) -> None:
        mode_changed = new[dxl.OPERATING_MODE[0]] != self.table[dxl.OPERATING_MODE[0]]
        self.table[:] = new
        if mode_changed:   # Operating Mode page: goals, profiles and gains are reset
            self._put(dxl.GOAL_PWM, self.get(dxl.PWM_LIMIT))
            if self.spec.current_limit:
                self._put(dxl.GOAL_CURRENT, self.get(dxl.CURRENT_LIMIT))
            self._put(dxl.PROFILE_ACCELERATION, 0)
            self._put(dxl.PROFILE_VELOCITY, 0)
            for address, gain in _GAINS.items():
                self._put((address, 2), gain)
        if (touched & set(_GOALS) and not self.get(dxl.TORQUE_ENABLE)
                and self.get(dxl.DRIVE_MODE) & dxl.DRIVE_TORQUE_ON_BY_GOAL
                and self.firmware >= dxl.STARTUP_FIRMWARE):
            self._put(dxl.TORQUE_ENABLE, 1)   # Drive Mode: Torque On by Goal Update
        self.log_held()

    def register(self, address: int, data: bytes) -> int:
        """Keep a write for ACTION (REG WRITE); returns the error number."""
        if not data or address + len(data) > dxl.TABLE_SIZE:
            return dxl.DATA_LENGTH_ERROR
        self._registered = (address, bytes(data))
        self._put(dxl.REGISTERED_INSTRUCTION, 1)
        return 0

    def action(self) -> int:
        """Do the registered write (ACTION); Instruction Error if none was registered."""
        if self._registered is None:
            return dxl.INSTRUCTION_ERROR
        (address, data), self._registered = self._registered, None
        self._put(dxl.REGISTERED_INSTRUCTION, 0)
        return self.write(address, data)

    def backup(self, params: bytes) -> tuple[int, bool]:
        """
        Control Table Backup (Protocol 2.0 page): (error number, whether the servo reboots).

        ``params``: 0x01 (store the table) or 0x02 (restore the EEPROM, then reboot), then
        "CTRL". Result Fail with the torque on; from firmware 45 only.
        """
        if self.firmware < dxl.STARTUP_FIRMWARE:
            return dxl.INSTRUCTION_ERROR, False
        if len(params) != 5 or params[1:] != BACKUP_KEY or params[0] not in (
                BACKUP_STORE, BACKUP_RESTORE):
            return dxl.DATA_RANGE_ERROR, False
        if self.get(dxl.TORQUE_ENABLE):
            return dxl.RESULT_FAIL, False
        if params[0] == BACKUP_STORE:
            self._backup = bytes(self.table)
            self._put(dxl.BACKUP_READY, 1)
            return 0, False
        if self._backup is None:
            return dxl.RESULT_FAIL, False
        self.table[:dxl.RAM_START] = self._backup[:dxl.RAM_START]
        return 0, True

    @staticmethod
    def factory_reset_error(params: bytes) -> int:
        """Return the error number of Factory Reset with ``params`` (0xFF, 0x01 or 0x02)."""
        if len(params) != 1 or params[0] not in (RESET_ALL, RESET_KEEP_ID, RESET_KEEP_ID_AND_BAUD):
            return dxl.DATA_RANGE_ERROR
        return 0

    def factory_reset(self, option: int) -> None:
        """
        Put the EEPROM area back to its factory values (Factory Reset), then restart.

        ``option`` (Protocol 2.0 page): 0xFF every item (ID 1), 0x01 all but the ID, 0x02
        all but the ID and Baud Rate. The servo restarts: its RAM at power-on values.
        """
        servo_id, baud = self.servo_id, self.get(dxl.BAUD_RATE)
        self.table[:dxl.RAM_START] = bytes(dxl.RAM_START)
        self._id = 1 if option == RESET_ALL else servo_id
        self._factory(drive_mode=0, startup=0)
        if option == RESET_KEEP_ID_AND_BAUD:
            self._put(dxl.BAUD_RATE, baud)
        self.restart()

    def clear(self, params: bytes) -> int:
        """
        Clear (Protocol 2.0 page): Present Position back within one turn; the error number.

        From firmware 42 (before: Instruction Error); only ``CLEAR_MULTI_TURN`` (else Data
        Range Error); Result Fail while the servo moves.
        """
        if self.firmware < CLEAR_FIRMWARE:
            return dxl.INSTRUCTION_ERROR
        if params != CLEAR_MULTI_TURN:
            return dxl.DATA_RANGE_ERROR
        if self.get(dxl.PRESENT_VELOCITY, signed=True) != 0:
            return dxl.RESULT_FAIL
        absolute = self.get(dxl.PRESENT_POSITION, signed=True) * self._reverse() \
            + self._turns_lost
        self._turns_lost = absolute // 4096 * 4096
        self.set_position(self._displacement)
        return 0

    def error_byte(self, error: int) -> int:
        return error | (dxl.ALERT if self.get(dxl.HARDWARE_ERROR_STATUS) else 0)

    def shutdown_error(self) -> int:
        """Return the Hardware Error Status bits its Shutdown (63) turns the torque off for."""
        return self.get(dxl.HARDWARE_ERROR_STATUS) & self.get(dxl.SHUTDOWN)

    def log_held(self) -> None:
        """Log what the servo holds if its torque is on (and it changed)."""
        if self.get(dxl.TORQUE_ENABLE):
            held = (self.get(dxl.OPERATING_MODE), self.get(dxl.GOAL_CURRENT, signed=True),
                    self.get(dxl.GOAL_POSITION, signed=True))
            if not self.held or self.held[-1] != held:
                self.held.append(held)

    # ------------------------------------------------------------------ the motor

    def check_watchdog(self, now: float) -> None:
        """Expire the Bus Watchdog if the torque is on and no instruction came for its time."""
        armed = self.get(dxl.BUS_WATCHDOG)
        if (self.get(dxl.TORQUE_ENABLE) and 0 < armed <= dxl.BUS_WATCHDOG_MAX
                and now - self._last_instruction > armed * dxl.BUS_WATCHDOG_UNIT):
            self._put(dxl.BUS_WATCHDOG, dxl.BUS_WATCHDOG_EXPIRED)
            self._stopped_at = self._displacement

    def set_position(self, displacement: float, velocity: float = 0.0) -> None:
        """Present Position/Velocity from the tendon's displacement [m] and velocity [m/s]."""
        self._displacement = displacement
        angle = self.direction * displacement / self.pulley_radius
        absolute = self.zero + round(angle / dxl.POSITION_UNIT)
        self._put(dxl.PRESENT_POSITION, self._reverse() * (absolute - self._turns_lost))
        rate = self.direction * velocity / self.pulley_radius
        self._put(dxl.PRESENT_VELOCITY, self._reverse() * round(rate / dxl.VELOCITY_UNIT))

    def set_hardware_error(self, bits: int) -> None:
        self._put(dxl.HARDWARE_ERROR_STATUS, bits)
        if self.shutdown_error():
            self._put(dxl.TORQUE_ENABLE, 0)

    def block(self, blocked: bool = True) -> None:
        """Catch the tendon where it is (a snag), or free it: the horn cannot turn further."""
        self.blocked = self._displacement if blocked else None

    def _goal_displacement(self) -> float:
        """Return the displacement [m] Goal Position asks for."""
        absolute = self._reverse() * self.get(dxl.GOAL_POSITION, signed=True) + self._turns_lost
        return self.direction * (absolute - self.zero) * dxl.POSITION_UNIT * self.pulley_radius

    def _tension_of(self, current: float) -> float:
        """Tension [N] the true calibration gives for ``current`` [A] (a tendon cannot push)."""
        return max(0.0, self.gain * current + self.offset)

    def stall_tension(self) -> float:
        """
        Return the tension [N] of the motor's stall current, at its PWM limit.

        The stall current of the Specifications (at 12 V), scaled by |Goal PWM| (itself
        within PWM Limit) over 885: what any mode draws against a horn that cannot turn.
        """
        pwm = min(abs(self.get(dxl.GOAL_PWM, signed=True)), self.get(dxl.PWM_LIMIT))
        return self._tension_of(self.spec.stall_current * pwm / dxl.PWM_FULL)

    def _pull(self) -> tuple[int | None, float, float]:
        """(Operating Mode or None when it holds nothing, bound [N], aim [m] or tension [N])."""
        if not self.get(dxl.TORQUE_ENABLE) or self.off_until is not None:
            return None, 0.0, 0.0   # back-drivable: the tendon goes slack
        mode = self.get(dxl.OPERATING_MODE)
        stopped = self.get(dxl.BUS_WATCHDOG) == dxl.BUS_WATCHDOG_EXPIRED
        stall = self.stall_tension()
        aim = self._stopped_at if stopped else self._goal_displacement()
        if mode == dxl.EXTENDED_POSITION_MODE:
            return mode, stall, aim   # Current Limit does not apply: only the stall current
        if not self.spec.current_limit or mode not in (dxl.CURRENT_MODE,
                                                       dxl.CURRENT_BASED_POSITION_MODE):
            return None, 0.0, 0.0   # the modes a tendon servo does not use hold no tension
        limit = self.get(dxl.CURRENT_LIMIT)
        goal = max(-limit, min(limit, self.get(dxl.GOAL_CURRENT, signed=True)))
        if mode == dxl.CURRENT_MODE:
            if stopped:
                return None, 0.0, 0.0   # no current: the tendon goes slack
            current = self.direction * self._reverse(current=True) * goal * dxl.CURRENT_UNIT
            return mode, stall, min(stall, self._tension_of(current))
        # Goal Current "sets a limit to current in Current-based Position Control mode"
        return mode, min(stall, self._tension_of(abs(goal) * dxl.CURRENT_UNIT)), aim

    def target(self) -> tuple[str, float]:
        """(mode, target) the servo drives its tendon to: a tension [N] (see :meth:`_pull`)."""
        mode, bound, aim = self._pull()
        if mode is None:
            return motor.TENSION, 0.0
        if mode == dxl.CURRENT_MODE:
            return motor.TENSION, aim
        # A position loop whose current is bounded: it pulls harder while the tendon is
        # short of the Goal Position and eases off beyond it, never above the bound, so the
        # tendon stops at the goal when holding it there takes less than the bound, and pays
        # out when the bound drops below the load.
        wanted = self._tension + POSITION_GAIN * (aim - self._displacement)
        return motor.TENSION, min(bound, max(0.0, wanted))

    def blocked_tension(self) -> float:
        """
        Tension [N] on the servo's side of a caught tendon (:meth:`block`).

        The horn cannot turn on: a position mode whose goal lies beyond pulls with all its
        bound (extended position control: the stall current), one whose goal lies behind
        lets its side go slack; current control pulls with its Goal Current.
        """
        mode, bound, aim = self._pull()
        if mode is None:
            return 0.0
        if mode == dxl.CURRENT_MODE:
            return aim
        unit = self.pulley_radius * dxl.POSITION_UNIT
        if aim > self.blocked + unit:
            return bound
        return 0.0 if aim < self.blocked - unit else min(bound, self._tension)

    def spool(self, displacement: float) -> float:
        """
        Displacement [m] the horn reports for the tendon at ``displacement`` [m].

        A position mode paying a slack tendon out turns on to its Goal Position: the spool,
        not the tendon, sets Present Position then. A caught tendon holds the horn.
        """
        if self.blocked is not None:
            return self.blocked
        mode, _, aim = self._pull()
        if mode in (dxl.EXTENDED_POSITION_MODE, dxl.CURRENT_BASED_POSITION_MODE) \
                and self._tension == 0.0 and aim < displacement:
            return aim
        return displacement

    def set_current(self, tension: float) -> None:
        """Present Current [units] that holds ``tension`` [N] (0 with torque off)."""
        self._tension = tension
        if not self.get(dxl.TORQUE_ENABLE) or not self.spec.current_limit:
            self._put(dxl.PRESENT_CURRENT, 0)
            return
        amps = (tension - self.offset) / self.gain
        sign = self.direction * self._reverse(current=True)
        self._put(dxl.PRESENT_CURRENT, round(sign * amps / dxl.CURRENT_UNIT))
