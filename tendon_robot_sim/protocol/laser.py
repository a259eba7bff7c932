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
Laser tip sensor protocol: the measurement message, ``tdcr-laser-v1``, the registry.

The sensor streams one measurement frame per sample and accepts no commands.
A measurement is the tip position in the sensor's own frame (``tip_sensor_link``
in the URDF) with a signal quality and a valid flag; the bridge transforms it to
the base frame. Another sensor is supported by one more class in
:data:`SENSOR_DEVICES` (parameter ``sensor_device``). Wire format:
``docs/hardware.md`` (Serial protocols).
"""

from __future__ import annotations

from dataclasses import dataclass
import logging

import numpy as np

from tendon_robot_sim.protocol.fields import (choice, Field, integer, scaled, Sentence,
                                              SentenceTable)

logger = logging.getLogger(__name__)

COUNT_MAX = 65535


@dataclass(frozen=True)
class TipMeasurement:
    """One sample: tip position in the sensor frame [m]."""

    count: int        # sample counter, wraps after 65535; a gap means lost samples
    x: float          # m
    y: float          # m
    z: float          # m
    quality: float    # signal quality, 0 (none) to 1 (full)
    valid: bool       # False: no target in view; the position is meaningless

    @property
    def position(self) -> np.ndarray:
        """(3,) tip position in the sensor frame [m]."""
        return np.array((self.x, self.y, self.z))


def _coordinate(name: str) -> Field:
    return scaled(name, 1e6, 'um', 'm', f'tip {name} in the sensor frame')


TDCR_LASER_V1_SENTENCES = (
    Sentence('LTP', TipMeasurement, (
        integer('count', 0, COUNT_MAX, 'sample counter, wraps after 65535'),
        _coordinate('x'), _coordinate('y'), _coordinate('z'),
        scaled('quality', 100.0, '%', 'fraction', 'signal quality', low=0, high=100),
        choice('valid', {'V': True, 'N': False}, 'V: valid, N: no target'),
    ), description='tip measurement'),
)


class TdcrLaserV1(SentenceTable):
    """The project's laser tip sensor: ASCII frames, integer micrometres."""

    name = 'tdcr-laser-v1'

    def __init__(self):
        super().__init__(TDCR_LASER_V1_SENTENCES)


#: Tip sensor protocols by the name used in parameter ``sensor_device``.
SENSOR_DEVICES = {TdcrLaserV1.name: TdcrLaserV1}


def sensor_device(name: str) -> SentenceTable:
    """Make the protocol of the tip sensor called ``name``."""
    try:
        return SENSOR_DEVICES[name]()
    except KeyError:
        raise KeyError(f'sensor_device: unknown device {name!r}; known devices: '
                       f'{sorted(SENSOR_DEVICES)}') from None
