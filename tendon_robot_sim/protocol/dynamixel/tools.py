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
Bench tools for the tendon servos (``tendon-robot-sim hardware``): scan a port, drive one servo.

Both speak through ROBOTIS's ``dynamixel_sdk`` and the bus driver
(:mod:`tendon_robot_sim.protocol.dynamixel.bus`), so a servo is configured here exactly
as the bridge configures it.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import dynamixel_sdk as sdk
import numpy as np

from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.bus import DynamixelBus
from tendon_robot_sim.protocol.dynamixel.port import open_port, packet_handler
from tendon_robot_sim.protocol.dynamixel.setup import BusError


def scan(url: str, baudrates: Sequence[int]) -> dict[int, dict[int, tuple[int, int]]]:
    """
    Broadcast-ping ``url`` at each rate: {baud: {ID: (model number, firmware)}}.

    Raises BusError when the port cannot be opened (naming it).
    """
    found = {}
    handler = packet_handler()
    for baud in baudrates:
        port = open_port(url, baud)
        try:
            answers, result = handler.broadcastPing(port)
        finally:
            port.closePort()
        if result == sdk.COMM_SUCCESS and answers:
            found[baud] = {i: (model, firmware) for i, (model, firmware) in answers.items()}
    return found


def hold_and_measure(url: str, baudrate: int, channel: dxl.ServoChannel, goal_current: int,
                     samples: int = 20, settle: float = 0.3,
                     settings: dxl.BusSettings = dxl.BusSettings(),
                     others: Sequence[int] = (),
                     until: Callable[[], bool] | None = None) -> float:
    """
    Drive ``channel`` at ``goal_current`` [units]; return the mean Present Current [A].

    The servo is configured as the bridge does (its Bus Watchdog armed: a dead tool leaves
    it relaxed), driven in current control, and read until ``settle`` [s] has passed (the
    reads keep the watchdog fed); the mean is over ``samples`` reads after that, with the
    channel's direction applied. The torque is switched off again before returning.
    ``settings``: the bus file's (its Bus Watchdog and latency timer). ``others``: the IDs
    of the bus file's other servos, whose Secondary ID is switched off first, so that the
    Goal Current, a unicast write, drives this servo alone (Secondary(Shadow) ID page).
    ``until``: after the samples the servo goes on holding, its Present Current read (the
    watchdog fed), until this returns True (a load cell read meanwhile; it should wait
    briefly for what it waits for, not block). BusError names what failed.
    """
    bus = DynamixelBus(url, [channel], [np.inf], baudrate=baudrate, settings=settings,
                       others=others)
    try:
        bus._connect()
        if abs(goal_current) > bus._limits[0]:
            raise BusError(f'servo ID {channel.servo_id}: {abs(goal_current)} units of current '
                           f'above its Current Limit {bus._limits[0]}')
        bus._servos.write(channel.servo_id, dxl.GOAL_CURRENT, goal_current)
        bus._set_torque(True)
        currents = []
        settled = time.monotonic() + settle
        while len(currents) < samples:
            value = bus._servos.read(channel.servo_id, dxl.PRESENT_CURRENT)
            if time.monotonic() >= settled:
                currents.append(channel.direction * dxl.signed(value, 2) * dxl.CURRENT_UNIT)
        while until is not None and not until():
            bus._servos.read(channel.servo_id, dxl.PRESENT_CURRENT)
        return float(np.mean(currents))
    finally:
        bus._shutdown()
