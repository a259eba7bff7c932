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

import dynamixel_sdk as sdk

from tendon_robot_sim.protocol import dynamixel as dxl

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


class ServoAccess:
    """The servos' control tables on an open port (``port``, ``handler``: the SDK's)."""

    def __init__(self, port, handler):
        self.port, self.handler = port, handler

    def configure(self, channel: dxl.ServoChannel, settings: dxl.BusSettings,
                  url: str) -> Configured:
        """Check one servo's model and firmware, then write (and read back) its settings."""
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
        firmware = self.read(servo_id, dxl.FIRMWARE_VERSION)
        if firmware < settings.min_firmware:
            raise BusError(f'servo ID {servo_id} has firmware v{firmware}, older than the '
                           f'min_firmware v{settings.min_firmware} of the bus file')
        if settings.bus_watchdog_units and firmware < dxl.BUS_WATCHDOG_FIRMWARE:
            raise BusError(f'servo ID {servo_id} has firmware v{firmware}, which has no Bus '
                           f'Watchdog (v{dxl.BUS_WATCHDOG_FIRMWARE} and later): it would keep '
                           'pulling if this host died; update its firmware (Dynamixel Wizard '
                           '2.0), or set bus_watchdog: 0 in the bus file to run without it')
        limit = channel.current_limit_units
        limit = model.current_limit if limit is None else limit
        if limit > model.current_limit:
            raise BusError(f'servo ID {servo_id} ({model.name}): current_limit '
                           f'{channel.current_limit:g} A ({limit} units) is above its Current '
                           f'Limit range, at most {model.current_limit} units '
                           f'({model.current_limit * dxl.CURRENT_UNIT:.3f} A)')
        self.write(servo_id, dxl.TORQUE_ENABLE, 0)
        items = dict(channel.control_table)
        if firmware < dxl.DRIVE_MODE_FIRMWARE:
            del items['drive_mode']   # none before v38: nothing can reverse the servo
        else:
            self.write(servo_id, dxl.BUS_WATCHDOG, 0)   # an expired one: goals writable
            drive = self.read(servo_id, dxl.DRIVE_MODE)
            if drive != items['drive_mode']:
                logger.warning('servo ID %d: Drive Mode was %d%s; set to %d as the bus file '
                               'says', servo_id, drive,
                               ' (Reverse)' if drive & dxl.DRIVE_REVERSE else '',
                               items['drive_mode'])
        self.write_checked(servo_id, dxl.OPERATING_MODE, settings.operating_mode,
                           'Operating Mode')
        self.write_checked(servo_id, dxl.CURRENT_LIMIT, limit, 'current_limit')
        for name, value in sorted(items.items()):   # after Operating Mode, which resets some
            item = dxl.SETTABLE[name]
            self.write_checked(servo_id, (item.address, item.size), value,
                               f'control_table.{name}')
        addresses = [a + i for a, size in dxl.STATE_ITEMS for i in range(size)]
        self.write_block(servo_id, dxl.INDIRECT_ADDRESS_1[0],
                         b''.join(a.to_bytes(2, 'little') for a in addresses), 'indirect map')
        if settings.bus_watchdog_units:
            self.write_checked(servo_id, dxl.BUS_WATCHDOG, settings.bus_watchdog_units,
                               'bus_watchdog')
        return Configured(model, firmware, limit)

    def read(self, servo_id: int, item: tuple[int, int]) -> int:
        """Read a control table item (unsigned), retried like a write; BusError names it."""
        address, size = item
        for _ in range(WRITE_ATTEMPTS):   # a status lost to noise is read again
            data, result, error = self.handler.readTxRx(self.port, servo_id, address, size)
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
        read, result, error = self.handler.readTxRx(self.port, servo_id, address, len(data))
        if result != sdk.COMM_SUCCESS or bytes(read) != data:
            raise BusError(f'servo ID {servo_id}: {what}: does not read back as written '
                           f'({self.why(result, error)})')

    def why(self, result: int, error: int) -> str:
        """Name an SDK result or a status packet's error number."""
        if result != sdk.COMM_SUCCESS:
            return self.handler.getTxRxResult(result)
        return dxl.STATUS_ERRORS.get(error & 0x7F, f'error {error & 0x7F}')
