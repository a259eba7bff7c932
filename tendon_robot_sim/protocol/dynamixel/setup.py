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
One servo's control table through ROBOTIS's ``dynamixel_sdk``: configure's checks and writes.

Every read and write is retried (a status packet lost to noise is not a fault) and names
the servo when it fails (:class:`BusError`); :meth:`ServoAccess.write_checked` reads back
what it wrote. :meth:`ServoAccess.configure` is what the bus does to each servo when it
connects, again after a loss and after a reboot.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import math
from typing import Callable, Sequence

import dynamixel_sdk as sdk
from dynamixel_sdk import protocol2_packet_handler as packet

from tendon_robot_sim.protocol.dynamixel import control_table as dxl

logger = logging.getLogger(__name__)

#: Tries of one configuration write or read (a status packet lost to noise is not a fault).
WRITE_ATTEMPTS = 3


class BusError(RuntimeError):
    """The bus cannot be used as configured; the message names the servo."""


@dataclass(frozen=True)
class Configured:
    """What configure found and set on one servo."""

    model: dxl.Model
    firmware: int
    current_limit: int    # Current Limit written [units]
    mark: int             # Goal PWM written, the mark of the bridge's RAM settings [units]
    shutdown: int         # Shutdown (63): the Hardware Error Status bits that turn torque off
    found: str            # what the servo reported before configure cleared it ('' nothing)


class ServoAccess:
    """The servos' control tables on an open port (``port``, ``handler``: the SDK's)."""

    def __init__(self, port, handler):
        self.port, self.handler = port, handler

    def read_data(self, servo_id: int, address: int, size: int) -> tuple[list | None, int, int]:
        """
        READ ``size`` bytes from ``address``: (data, SDK result, status error).

        data is None when no status of this READ came. Protocol 2.0's status packets carry no
        number of the instruction they answer, and the SDK's ``readTxRx`` slices the data out of
        any status of the servo: a WRITE's status that came late (its first try timed out on a
        loaded machine) gave its CRC as the item ('drive_mode: wrote 0, reads 82'). A READ's own
        status is ``size`` + 4 long (instruction, error, data, CRC); another is refused, as a
        corrupt status (``COMM_RX_CORRUPT``).
        """
        instruction = [0] * 14
        instruction[packet.PKT_ID] = servo_id
        instruction[packet.PKT_LENGTH_L] = 7
        instruction[packet.PKT_INSTRUCTION] = sdk.INST_READ
        instruction[packet.PKT_PARAMETER0:packet.PKT_PARAMETER0 + 4] = [
            *address.to_bytes(2, 'little'), *size.to_bytes(2, 'little')]
        status, result, error = self.handler.txRxPacket(self.port, instruction)
        if result != sdk.COMM_SUCCESS:
            return None, result, error
        if status[packet.PKT_LENGTH_L] | status[packet.PKT_LENGTH_H] << 8 != size + 4:
            return None, sdk.COMM_RX_CORRUPT, error
        start = packet.PKT_PARAMETER0 + 1   # after the error byte
        return status[start:start + size], result, error

    def let_go(self, servo_id: int) -> None:
        """
        Switch a servo's torque off if it answers as a model of the table; nothing else.

        What the bus does to every servo before configure checks any: a configure that fails
        at one servo (silent, refused) never reaches the ones after it, which went on with
        whatever a dead host left them (current-based position control holds its pull
        through an expired Bus Watchdog). A servo that does not answer, or answers as another
        device (its address 64 may be something else), is left alone: configure names it.
        """
        if self._of_the_table(servo_id):
            try:
                self.write(servo_id, dxl.TORQUE_ENABLE, 0)
            except BusError:
                pass   # not answered (Status Return Level below 2: the write is done)

    def _of_the_table(self, servo_id: int) -> bool:
        """Return True if the servo answers a PING as a model of the table."""
        number, result, _ = self.handler.ping(self.port, servo_id)
        return result == sdk.COMM_SUCCESS and number in dxl.MODELS

    def ungroup(self, servo_id: int) -> None:
        """
        Switch a servo's Secondary ID (12) off, 255, if it is on (0 ~ 252); nothing else.

        Secondary(Shadow) ID page: a servo also does the RAM writes sent to its Secondary ID
        and sends no status for them, so a unicast write meant for the servo whose ID that is
        (configure's RAM items, a tool's Goal Current) drives this one too, unseen. The bus
        sends nothing to a group: like Drive Mode and Startup Configuration the setting is
        the bridge's, set with a warning naming the servo and the old value (the torque off
        first: an EEPROM item). A servo that does not answer as a model of the table is left
        alone, as :meth:`let_go` leaves it (configure names it).
        """
        if not self._of_the_table(servo_id):
            return
        self._answer_everything(servo_id)
        secondary = self.read(servo_id, dxl.SECONDARY_ID)
        if secondary > dxl.SECONDARY_ID_MAX:
            return
        logger.warning('servo ID %d: Secondary ID was %d: it also took the writes sent to ID '
                       '%d; set to 255 (off)', servo_id, secondary, secondary)
        self.write(servo_id, dxl.TORQUE_ENABLE, 0)
        self.write_checked(servo_id, dxl.SECONDARY_ID, dxl.SECONDARY_ID_OFF, 'Secondary ID')

    def configure(self, channel: dxl.ServoChannel, settings: dxl.BusSettings, url: str,
                  max_tension: float = math.inf) -> Configured:
        """
        Check one servo's model and firmware, then write (and read back) its settings.

        Its Current Limit is the bus file's (or the model's largest), and never more than
        holds ``max_tension`` [N] through the channel's calibration: in current control and
        current-based position control no Goal Current, not even the one a power-on or an
        Operating Mode switch resets to Current Limit, pulls harder than the description
        allows.
        """
        servo_id = channel.servo_id
        for _ in range(WRITE_ATTEMPTS):
            number, result, error = self.handler.ping(self.port, servo_id)
            if result == sdk.COMM_SUCCESS:
                break
        if result != sdk.COMM_SUCCESS:
            raise BusError(f'servo ID {servo_id} does not answer on {url} '
                           f'({self.handler.getTxRxResult(result)})')
        model = dxl.MODELS.get(number)
        if model is None:
            raise BusError(f'servo ID {servo_id} is model {number}, not an X-series tendon '
                           f'servo ({sorted(dxl.MODELS)})')
        if model.current_limit is None:
            raise BusError(f'servo ID {servo_id} is an {model.name} (model {number}): it has '
                           'no current control (no Current Limit, no Goal Current), so it '
                           'cannot hold a tension; use an XM430, XH430 or XM540')
        self._answer_everything(servo_id)
        firmware = self.read(servo_id, dxl.FIRMWARE_VERSION)
        if firmware < settings.min_firmware:
            raise BusError(f'servo ID {servo_id} has firmware v{firmware}, older than the '
                           f'min_firmware v{settings.min_firmware} of the bus file')
        if settings.bus_watchdog_units and firmware < dxl.BUS_WATCHDOG_FIRMWARE:
            raise BusError(f'servo ID {servo_id} has firmware v{firmware}, which has no Bus '
                           f'Watchdog (v{dxl.BUS_WATCHDOG_FIRMWARE} and later): it would keep '
                           'pulling if this host died; update its firmware (Dynamixel Wizard '
                           '2.0), or set bus_watchdog: 0 in the bus file to run without it')
        limit = self._current_limit(channel, model, max_tension)
        found = self.found(servo_id, firmware)   # before anything clears it
        if found:
            logger.warning('servo ID %d: %s', servo_id, found)
        self.write(servo_id, dxl.TORQUE_ENABLE, 0)
        items = dict(channel.control_table)
        if firmware < dxl.DRIVE_MODE_FIRMWARE:
            del items['drive_mode']   # none before v38: nothing can reverse the servo
        else:
            drive = self.read(servo_id, dxl.DRIVE_MODE)
            wanted = items['drive_mode']
            if drive != wanted:
                changes = [f'set {name}' for name in dxl.drive_mode_names(wanted & ~drive)] \
                    + [f'cleared {name}' for name in dxl.drive_mode_names(drive & ~wanted)]
                logger.warning('servo ID %d: Drive Mode was %d; set to %d as the bus file '
                               'says: %s', servo_id, drive, wanted, ', '.join(changes))
        # The EEPROM items first (Return Delay Time 0 answers every later instruction at
        # once), the RAM ones after Operating Mode, which resets them.
        eeprom = {name: value for name, value in items.items() if dxl.SETTABLE[name].eeprom}
        self._write_items(servo_id, eeprom)
        if firmware >= dxl.STARTUP_FIRMWARE:
            startup = self.read(servo_id, dxl.STARTUP_CONFIGURATION)
            if startup:
                logger.warning('servo ID %d: Startup Configuration was %d (%s); set to 0: '
                               'torque off and the RAM at its initial values after a '
                               'power-on', servo_id, startup,
                               ', '.join(dxl.startup_names(startup)))
            self.write_checked(servo_id, dxl.STARTUP_CONFIGURATION, 0,
                               'Startup Configuration')
        if firmware >= dxl.BUS_WATCHDOG_FIRMWARE:
            self.write(servo_id, dxl.BUS_WATCHDOG, 0)   # an expired one: goals writable
        self.write_checked(servo_id, dxl.OPERATING_MODE, settings.operating_mode,
                           'Operating Mode')
        self.write_checked(servo_id, dxl.CURRENT_LIMIT, limit, 'current_limit')
        self._write_items(servo_id, {name: value for name, value in items.items()
                                     if name not in eeprom})
        mark = self.mark(servo_id)
        shutdown = self.read(servo_id, dxl.SHUTDOWN)
        addresses = [a + i for a, size in dxl.STATE_ITEMS for i in range(size)]
        self.write_block(servo_id, dxl.INDIRECT_ADDRESS_1[0],
                         b''.join(a.to_bytes(2, 'little') for a in addresses), 'indirect map')
        if settings.bus_watchdog_units:
            self.write_checked(servo_id, dxl.BUS_WATCHDOG, settings.bus_watchdog_units,
                               'bus_watchdog')
        return Configured(model, firmware, limit, mark, shutdown, found)

    def _write_items(self, servo_id: int, items: dict[str, int]) -> None:
        """Write the bus file's control-table ``items`` (name -> value), each read back."""
        for name, value in sorted(items.items()):
            item = dxl.SETTABLE[name]
            self.write_checked(servo_id, (item.address, item.size), value,
                               f'control_table.{name}')

    def _current_limit(self, channel: dxl.ServoChannel, model: dxl.Model,
                       max_tension: float) -> int:
        """Return the Current Limit [units]: the bus file's or the model's, within max_tension."""
        servo_id = channel.servo_id
        limit = channel.current_limit_units
        limit = model.current_limit if limit is None else limit
        if limit > model.current_limit:
            raise BusError(f'servo ID {servo_id} ({model.name}): current_limit '
                           f'{channel.current_limit:g} A ({limit} units) is above its Current '
                           f'Limit range, at most {model.current_limit} units '
                           f'({model.current_limit * dxl.CURRENT_UNIT:.3f} A)')
        bound = channel.tension_limit_units(max_tension)
        if bound is not None and bound < 1:
            raise BusError(f'servo ID {servo_id}: max_tension {max_tension:g} N needs less than '
                           'one current unit through its calibration: it could hold no '
                           'tension; check the calibration')
        return limit if bound is None else min(limit, bound)

    def _answer_everything(self, servo_id: int) -> None:
        """Set Status Return Level 2 if it is not: configure's writes must be answered."""
        for _ in range(WRITE_ATTEMPTS):   # a status lost to noise (or late) is not level 0
            data, result, error = self.read_data(servo_id, *dxl.STATUS_RETURN_LEVEL)
            if result == sdk.COMM_SUCCESS:
                break
        level = data[0] if result == sdk.COMM_SUCCESS and not error & 0x7F and data else None
        if level == dxl.STATUS_RETURN_ALL:
            return
        # Level 0 answers a PING only (the READ above got nothing), level 1 a READ too.
        logger.warning('servo ID %d: Status Return Level was %s; set to 2 (a status for every '
                       'instruction)', servo_id,
                       '0 (no status but for a PING)' if level is None else level)
        for _ in range(WRITE_ATTEMPTS):
            self.handler.write1ByteTxOnly(self.port, servo_id, dxl.STATUS_RETURN_LEVEL[0],
                                          dxl.STATUS_RETURN_ALL)
            data, result, error = self.read_data(servo_id, *dxl.STATUS_RETURN_LEVEL)
            if result == sdk.COMM_SUCCESS and list(data) == [dxl.STATUS_RETURN_ALL]:
                return
        raise BusError(f'servo ID {servo_id}: its Status Return Level is not 2 and a write of '
                       f'2 does not take ({self.why(result, error)})')

    def mark(self, servo_id: int) -> int:
        """Write Goal PWM one below PWM Limit and read it back: the mark of the bridge's RAM."""
        pwm = self.read(servo_id, dxl.PWM_LIMIT)
        if pwm < 2:
            raise BusError(f'servo ID {servo_id}: PWM Limit {pwm} leaves no room for the mark '
                           'of its settings (Goal PWM one below it) and no drive to speak of; '
                           'set pwm_limit in the bus file')
        self.write_checked(servo_id, dxl.GOAL_PWM, pwm - 1, 'Goal PWM (the mark)')
        return pwm - 1

    def survey(self, servo_id: int,
               attempts: int = WRITE_ATTEMPTS) -> tuple[int, int, int] | None:
        """
        Read a servo's Hardware Error Status, Bus Watchdog and Goal PWM in one READ.

        None if it does not answer. The Bus Watchdog reads -1 once it expired.
        """
        address, end = dxl.HARDWARE_ERROR_STATUS[0], dxl.GOAL_PWM[0] + dxl.GOAL_PWM[1]
        for _ in range(attempts):
            data, result, error = self.read_data(servo_id, address, end - address)
            if result == sdk.COMM_SUCCESS and not error & 0x7F:
                goal_pwm = int.from_bytes(bytes(data[-2:]), 'little')
                return (data[0], dxl.signed(data[dxl.BUS_WATCHDOG[0] - address], 1),
                        dxl.signed(goal_pwm, 2))
        return None

    def found(self, servo_id: int, firmware: int) -> str:
        """Say what a servo reports: its hardware error, an expired Bus Watchdog ('' nothing)."""
        state = self.survey(servo_id)
        if state is None:
            raise BusError(f'servo ID {servo_id}: reading its Hardware Error Status failed')
        return state_report(*state[:2], firmware >= dxl.BUS_WATCHDOG_FIRMWARE)

    def read(self, servo_id: int, item: tuple[int, int]) -> int:
        """Read a control table item (unsigned), retried like a write; BusError names it."""
        address, size = item
        for _ in range(WRITE_ATTEMPTS):   # a status lost to noise is read again
            data, result, error = self.read_data(servo_id, address, size)
            if result == sdk.COMM_SUCCESS and not error & 0x7F:
                return int.from_bytes(bytes(data), 'little')
        raise BusError(f'servo ID {servo_id}: reading address {address} failed '
                       f'({self.why(result, error)})')

    def write(self, servo_id: int, item: tuple[int, int], value: int) -> None:
        """Write ``value`` (signed or not) to ``item``; BusError if the servo refuses it."""
        address, size = item
        self.write_bytes(servo_id, address, dxl.unsigned(value, size).to_bytes(size, 'little'),
                         f'{value} at address {address}')

    def write_bytes(self, servo_id: int, address: int, data: bytes, what: str) -> None:
        for _ in range(WRITE_ATTEMPTS):
            result, error = self.handler.writeTxRx(self.port, servo_id, address, len(data),
                                                   list(data))
            if result == sdk.COMM_SUCCESS:
                break
        if result != sdk.COMM_SUCCESS or error & 0x7F:
            raise BusError(f'servo ID {servo_id}: writing {what} failed '
                           f'({self.why(result, error)})')

    def write_checked(self, servo_id: int, item: tuple[int, int], value: int,
                      what: str) -> None:
        """Write ``value`` and read it back; BusError names ``what`` if it did not take."""
        self.write(servo_id, item, value)
        read = self.read(servo_id, item)
        if read != dxl.unsigned(value, item[1]):
            raise BusError(f'servo ID {servo_id}: {what}: wrote {value}, reads '
                           f'{dxl.signed(read, item[1]) if value < 0 else read}')

    def write_block(self, servo_id: int, address: int, data: bytes, what: str) -> None:
        """Write ``data`` from ``address`` and read it back; BusError names ``what``."""
        self.write_bytes(servo_id, address, data, what)
        read, result, error = self.read_data(servo_id, address, len(data))
        if result != sdk.COMM_SUCCESS or bytes(read) != data:
            raise BusError(f'servo ID {servo_id}: {what}: does not read back as written '
                           f'({self.why(result, error)})')

    def sync_checked(self, ids: Sequence[int], write: Callable[[], None],
                     wanted: dict[tuple[int, int], Sequence[int]], what: str) -> None:
        """
        Call ``write`` (sync writes, which have no status), then read ``wanted`` back.

        ``wanted``: item -> value of each of ``ids``. One sync read spans the items;
        ``write`` is called again (at most ``WRITE_ATTEMPTS`` times) while a servo reads
        otherwise, then BusError names it.
        """
        start = min(address for address, _ in wanted)
        end = max(address + size for address, size in wanted)
        read = sdk.GroupSyncRead(self.port, self.handler, start, end - start)
        for servo_id in ids:
            read.addParam(servo_id)
        wrong = [f'ID {", ".join(map(str, ids))} (no answer to the sync read)']
        for _ in range(WRITE_ATTEMPTS):
            write()
            if sync_read(read, ids) != sdk.COMM_SUCCESS:   # a late status is no answer
                continue
            wrong = [f'ID {i} reads {dxl.signed(read.getData(i, *item), item[1])} for '
                     f'{dxl.signed(dxl.unsigned(int(units[k]), item[1]), item[1])} at '
                     f'{item[0]}'
                     for item, units in wanted.items() for k, i in enumerate(ids)
                     if read.getData(i, *item) != dxl.unsigned(int(units[k]), item[1])]
            if not wrong:
                return
        raise BusError(f'servo {"; ".join(wrong)}: {what} does not read back as written; '
                       'torque left off')

    def refused_by_shutdown(self, ids: Sequence[int], masks: Sequence[int]) -> bool:
        """
        Return True if every servo of ``ids`` whose torque is off has a shutdown error.

        ``masks``: each one's Shutdown (63). Such a servo refuses Torque Enable until a
        reboot (Shutdown page): its hardware error is the fault to name, not the torque
        that did not come on.
        """
        start, end = dxl.TORQUE_ENABLE[0], dxl.HARDWARE_ERROR_STATUS[0] + 1
        read = sdk.GroupSyncRead(self.port, self.handler, start, end - start)
        for servo_id in ids:
            read.addParam(servo_id)
        if sync_read(read, ids) != sdk.COMM_SUCCESS:
            return False
        off = [(read.getData(i, *dxl.HARDWARE_ERROR_STATUS), mask)
               for i, mask in zip(ids, masks) if not read.getData(i, *dxl.TORQUE_ENABLE)]
        return all(errors & mask for errors, mask in off)

    def silence_report(self, ids: Sequence[int], marks: Sequence[int],
                       firmware: dict[int, int], cycles: str) -> tuple[str, dict[int, str]]:
        """
        Ask each servo once what it reports, after bus cycles without a full state.

        The SDK's sync read stops at the first servo that does not answer, so it cannot tell
        one silent servo from a silent bus. ``marks``: the Goal PWM each was given (a
        restarted servo reads otherwise). Returns the message and {ID: what it said}.
        """
        states = {i: self.survey(i, attempts=1) for i in ids}
        silent = [i for i, state in states.items() if state is None]
        answering = {}
        for mark, (i, state) in zip(marks, states.items()):
            if state is not None:
                errors, watchdog, goal_pwm = state
                reset = (f'reset (a power cycle?): Goal PWM reads {goal_pwm}, not the mark '
                         f'{mark}' if goal_pwm != mark else '')
                report = state_report(errors, watchdog,
                                      firmware.get(i, 0) >= dxl.BUS_WATCHDOG_FIRMWARE)
                answering[i] = '; '.join(w for w in (reset, report) if w)
        faults = {i: f'lost: silent, {cycles}' for i in silent}
        faults.update({i: report for i, report in answering.items() if report})
        if len(silent) == len(ids):
            return (f'every servo silent (servo ID {", ".join(map(str, silent))}): {cycles}; '
                    'the bus, its power or the adapter'), faults
        said = [f'servo ID {i} lost: silent, {cycles}' for i in silent] + [
            f'servo ID {i} answers: {report or "no hardware error, Bus Watchdog running"}'
            for i, report in answering.items()]
        return ('; '.join(said) if silent else
                f'no servo silent when asked: {cycles}; ' + '; '.join(said)), faults

    def why(self, result: int, error: int) -> str:
        """Name an SDK result or a status packet's error number."""
        if result != sdk.COMM_SUCCESS:
            return self.handler.getTxRxResult(result)
        return dxl.STATUS_ERRORS.get(error & 0x7F, f'error {error & 0x7F}')


def sync_read(read: sdk.GroupSyncRead, ids: Sequence[int]) -> int:
    """
    Run a sync READ of ``ids``; its SDK result, COMM_RX_CORRUPT if a block is another length.

    A status that came late for an earlier instruction (a WRITE's, without data) is taken by
    the SDK for a servo's answer; its bytes are not the block (:meth:`ServoAccess.read_data`).
    """
    result = read.txRxPacket()
    if result == sdk.COMM_SUCCESS and any(len(read.data_dict[i]) != read.data_length
                                          for i in ids):
        return sdk.COMM_RX_CORRUPT
    return result


def state_report(errors: int, watchdog: int, has_watchdog: bool = True) -> str:
    """Say what a servo's Hardware Error Status and Bus Watchdog tell ('' nothing wrong)."""
    said = []
    if errors:
        said.append(f'it reports {", ".join(dxl.hardware_error_names(errors))}')
    if has_watchdog and watchdog == -1:
        said.append('its Bus Watchdog had expired (no instruction for longer than its time): '
                    'it had stopped')
    return '; '.join(said)


def reboot_needed(ids: Sequence[int], errors: Sequence[int], masks: Sequence[int]) -> str:
    """
    Say which servos need a reboot before their torque may come on again ('' none).

    ``errors``: each one's Hardware Error Status, ``masks`` its Shutdown (63). The bits of
    Shutdown switched the torque off, and "REBOOT is the only method to reset Torque
    Enable" (Shutdown page); the other bits stay in Hardware Error Status until a reboot
    too, and would stop the bridge again at once.
    """
    said = [f'servo ID {servo_id} reports {", ".join(dxl.hardware_error_names(int(bits)))}'
            + (', a shutdown error: its torque stays off until it is rebooted'
               if bits & mask else '')
            for servo_id, bits, mask in zip(ids, errors, masks) if bits]
    return '; '.join(said) + ('; call ~/reboot first' if said else '')
