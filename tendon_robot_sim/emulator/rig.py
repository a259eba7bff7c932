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

"""The emulated test rig: one plant, the motor driver and the tip sensor on their ports."""

from __future__ import annotations

import dataclasses
import logging

from tendon_robot_sim.emulator.devices import (DeviceThread, Faults, LaserSensorDevice,
                                               MotorDriverDevice)
from tendon_robot_sim.emulator.dynamixel import DynamixelChain
from tendon_robot_sim.emulator.endpoints import Endpoint
from tendon_robot_sim.emulator.keyence import KeyenceController
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.protocol.mounting import SensorMount

logger = logging.getLogger(__name__)


class EmulatedRig:
    """
    Motor driver and tip sensor emulators sharing one plant, each in its own thread.

    Parameters
    ----------
    robot : Robot
        The robot the plant models.
    mount : SensorMount
        Pose of the tip sensor in the base frame (from the URDF).
    motors, sensor : Endpoint or None
        Where each device listens; None leaves that device out.
    status_rate, sensor_rate : float
        Motor status and tip measurement rates [Hz].
    time_constant : float
        First-order lag of the motor tensions [s].
    noise : float
        Tip sensor noise, standard deviation per axis [m].
    dropout : float
        Probability of a "no target" sample.
    seed : int
        Seed of the sensor noise; the fault injectors use ``seed + 1`` and ``seed + 2``.
    faults : Faults or None
        Damage to the frames both devices send (its own seed is replaced as above).
    motor_device : str
        ``tdcr-motor-v1`` (the package's motor driver) or ``dynamixel`` (a chain of
        X-series servos, IDs 1..n; ``status_rate`` is then the rate of its mechanics).
    sensor_device : str
        ``tdcr-laser-v1`` (streams at ``sensor_rate``) or ``keyence-lkg`` (an LK-G
        style controller answering ``M0``; heads on y and z of the sensor frame).

    """

    def __init__(self, robot: Robot, mount: SensorMount, motors: Endpoint | None,
                 sensor: Endpoint | None, status_rate: float = 50.0, sensor_rate: float = 50.0,
                 time_constant: float = 0.05, noise: float = 0.0, dropout: float = 0.0,
                 seed: int = 0, faults: Faults | None = None,
                 motor_device: str = 'tdcr-motor-v1', sensor_device: str = 'tdcr-laser-v1'):
        self.plant = Plant(robot)
        faults = faults or Faults()
        self.motor = (DynamixelChain(self.plant, time_constant=time_constant)
                      if motor_device == 'dynamixel'
                      else MotorDriverDevice(self.plant, time_constant=time_constant))
        self.sensor = (KeyenceController(self.plant, mount, noise=noise * 1e3, seed=seed)
                       if sensor_device == 'keyence-lkg'
                       else LaserSensorDevice(self.plant, mount, noise=noise, dropout=dropout,
                                              seed=seed))
        self.threads: dict[str, DeviceThread] = {}
        if motors is not None:
            self.threads['motors'] = DeviceThread(
                self.motor, motors, status_rate, dataclasses.replace(faults, seed=seed + 1),
                name='motors')
        if sensor is not None:
            self.threads['sensor'] = DeviceThread(
                self.sensor, sensor, sensor_rate, dataclasses.replace(faults, seed=seed + 2),
                name='sensor')

    def path(self, device: str) -> str:
        """Return what the host opens to reach ``device`` ('motors' or 'sensor')."""
        return self.threads[device].endpoint.path

    def start(self) -> 'EmulatedRig':
        for thread in self.threads.values():
            thread.start()
        return self

    def stop(self) -> None:
        for thread in self.threads.values():
            thread.stop()

    def disconnect(self, device: str, down_time: float = 0.0) -> None:
        """Break the link of ``device`` ('motors' or 'sensor') for ``down_time`` [s]."""
        self.threads[device].disconnect(down_time)

    def __enter__(self) -> 'EmulatedRig':
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
