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
One small interface per device role, so the bridge drives every device the same way.

``motor_device`` picks the tendon motors: ``tdcr-motor-v1`` (the package's
streaming protocol, :class:`~tendon_robot_sim.protocol.drivers.MotorDriver`) or
``dynamixel`` (X-series servos through ROBOTIS's SDK,
:class:`~tendon_robot_sim.protocol.dynamixel.bus.DynamixelBus`). Both satisfy
:class:`MotorBus`. ``sensor_device`` picks the tip sensor: ``tdcr-laser-v1``
(streaming, :class:`~tendon_robot_sim.protocol.drivers.TipSensorDriver`) or
``keyence-lkg`` (polled, :class:`~tendon_robot_sim.protocol.keyence.KeyenceSensor`),
both :class:`TipSensor`. The watchdog, ramps, safe state, delivery tracking and
diagnostics stay above it, in :mod:`tendon_robot_sim.hardware.bridge`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, Sequence

from tendon_robot_sim.files.yaml_loader import read_yaml, YamlFileError
from tendon_robot_sim.protocol import keyence
from tendon_robot_sim.protocol.drivers import (CommandStatistics, MotorDriver, MotorStatus,
                                               SensorStatistics, ServoState, TipSensorDriver)
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.bus import DynamixelBus
from tendon_robot_sim.protocol.laser import TdcrLaserV1, TipMeasurement
from tendon_robot_sim.protocol.link import LinkStatistics

DYNAMIXEL = 'dynamixel'
TDCR_MOTOR_V1 = 'tdcr-motor-v1'
MOTOR_DEVICES = (TDCR_MOTOR_V1, DYNAMIXEL)
SENSOR_DEVICES = (TdcrLaserV1.name, keyence.NAME)


class MotorBus(Protocol):
    """
    The tendon motors as the bridge sees them.

    configure = ``start`` (opens the port, checks the devices; its link reports
    CONNECTED or the reason it is not), enable/safe state = ``enable`` /
    ``disable``, command = ``command_tensions`` / ``command_displacements``
    (with ``delivery`` of each), read = ``status``, close = ``stop``.
    """

    link: Any   # has statistics() -> LinkStatistics

    connected: bool

    def start(self) -> Any:
        """Open the port and check the devices in the background."""

    def stop(self, final_tensions: Sequence[float] | None = None,
             timeout: float = 0.3) -> None:
        """Leave the motors safe and close the port; also on a bus never started."""

    def enable(self, safe_tensions: Sequence[float]) -> None:
        """Activate (torque on holding ``safe_tensions`` [N] until commanded)."""

    def disable(self) -> None:
        """Deactivate."""

    def command_tensions(self, tensions: Sequence[float]) -> int:
        """Queue tensions [N]; return the command's sequence number."""

    def command_displacements(self, displacements: Sequence[float]) -> int:
        """Queue displacements [m]; return the command's sequence number."""

    def check_command(self, mode: str, values: Sequence[float]) -> None:
        """Raise a ProtocolError if the command cannot go to the device."""

    def delivery(self, seq: int) -> str:
        """Return what became of command ``seq`` (drivers.PENDING ...)."""

    def status(self) -> MotorStatus | None:
        """Return the newest state of every channel."""

    def statistics(self) -> tuple[LinkStatistics, CommandStatistics]:
        """Return the link and command counters."""

    def fault(self) -> str:
        """Return why the motors must be stopped ('' if nothing)."""

    def clear_fault(self) -> None:
        """Forget the fault (the next reading raises it again if it persists)."""

    def recover(self) -> None:
        """Bring back motors a fault took down (re-taking their zero), once enabled."""

    def reboot(self, timeout: float) -> tuple[bool, str]:
        """Reboot the motors in hardware error, check them as configure does: (done, what)."""

    def resume_refusal(self) -> str:
        """Return why the motors must not take torque again ('' if they may)."""

    def diagnostic_values(self) -> list[tuple[str, object]]:
        """Return the device's own key-value pairs for the motor diagnostics."""

    def servo_states(self) -> list[ServoState]:
        """Return each servo's own state (torque, hardware error); [] if it has none."""

    def fault_names(self, bits: int) -> list[str]:
        """Return the names of the fault ``bits`` of a status."""


def load_dynamixel_bus(path: str | Path, calibrated: bool = False
                       ) -> tuple[list[dxl.ServoChannel], dxl.BusSettings]:
    """
    Read a Dynamixel bus file: ``channels`` and settings; ChannelError names what is wrong.

    ``calibrated``: every channel must give its calibration
    (:func:`~tendon_robot_sim.protocol.dynamixel.control_table.parse_channels`).
    """
    try:
        data = read_yaml(path)
    except YamlFileError as error:
        raise dxl.ChannelError(f'dynamixel_file: {error}') from None
    if not isinstance(data, dict) or 'channels' not in data:
        raise dxl.ChannelError(f'dynamixel_file: {path} must be a mapping with channels')
    unknown = set(data) - {'channels', 'tension_mode', 'travel_limit', 'min_firmware',
                           'bus_watchdog', 'latency_timer', 'control_table'}
    if unknown:
        raise dxl.ChannelError(f'dynamixel_file: {path}: unknown keys {sorted(unknown)}')
    items = dxl.parse_control_table(data.get('control_table', {}), f'{path}: control_table')
    channels = dxl.parse_channels(data['channels'], f'{path}: channels', items, calibrated)
    return channels, dxl.parse_bus_settings(data, f'{path}')


def load_dynamixel_channels(path: str | Path) -> list[dxl.ServoChannel]:
    """Read the ``channels`` of a Dynamixel bus file; ChannelError names what is wrong."""
    return load_dynamixel_bus(path)[0]


def check_channel_count(channels: Sequence, tendons: int, bus: str | Path,
                        robot: str = 'the robot description') -> None:
    """
    Raise ChannelError unless the bus file ``bus`` has one channel per tendon of ``robot``.

    The bridge when it builds the bus, and before (its ``check_parameters``: the local
    launcher, before a stack starts) with ``robot`` naming the robot file.
    """
    if len(channels) != tendons:
        raise dxl.ChannelError(f'dynamixel_file: {bus} has {len(channels)} channels, {robot} '
                               f'has {tendons} tendons (one channel per tendon, in its order)')


def motor_bus(device: str, port: str, max_tensions: Sequence[float], baudrate: int,
              ack_timeout: float, max_retries: int, cycle_rate: float,
              dynamixel_file: str | Path, torque_off_when_safe: bool, lost_after: float,
              backoff: tuple[float, float], read_timeout: float) -> MotorBus:
    """Build the motor device ``device`` (not started); ValueError names a bad setting."""
    if device == DYNAMIXEL:
        channels, settings = load_dynamixel_bus(dynamixel_file, calibrated=True)
        check_channel_count(channels, len(max_tensions), dynamixel_file)
        return DynamixelBus(port, channels, max_tensions, baudrate=baudrate,
                            cycle_rate=cycle_rate, torque_off_when_safe=torque_off_when_safe,
                            backoff=backoff, lost_after=lost_after, settings=settings)
    # No blind re-send after a reconnect: the bridge ramps from what the device reports.
    return MotorDriver(port, len(max_tensions), device, ack_timeout=ack_timeout,
                       max_retries=max_retries, resend_on_reconnect=False, baudrate=baudrate,
                       read_timeout=read_timeout, backoff=backoff, lost_after=lost_after)


class TipSensor(Protocol):
    """
    The tip sensor as the bridge sees it.

    configure = ``start``, read = ``measurements`` (tip in the sensor frame, each
    with its receive time), close = ``stop``.
    """

    link: Any   # has statistics() -> LinkStatistics
    connected: bool

    def start(self) -> Any:
        """Open the port in the background."""

    def stop(self) -> None:
        """Close the port; also on a sensor never started."""

    def measurements(self) -> list[tuple[TipMeasurement, float]]:
        """Return the samples since the last call (invalid ones too), oldest first."""

    def statistics(self) -> tuple[LinkStatistics, SensorStatistics]:
        """Return the link and sample counters."""


def tip_sensor(device: str, port: str, baudrate: int, rate: float, timeout: float,
               heads: keyence.Heads, backoff: tuple[float, float],
               read_timeout: float) -> TipSensor:
    """Build the tip sensor ``device`` (not started); ValueError names a bad setting."""
    if device == keyence.NAME:
        return keyence.KeyenceSensor(port, heads, rate=rate, timeout=timeout,
                                     baudrate=baudrate, backoff=backoff)
    return TipSensorDriver(port, device, baudrate=baudrate, backoff=backoff,
                           read_timeout=read_timeout)
