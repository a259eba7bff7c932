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

"""The emulated Dynamixel chain on a pty and the buses opened on it, for the protocol tests."""

from dataclasses import replace

import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.emulator.devices import DeviceThread
from tendon_robot_sim.emulator.dynamixel import ANSWER_LATENCY, DynamixelChain
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.dynamixel import control_table as dxl


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


@pytest.fixture
def rig(plant, tmp_path):
    def make(servos=None):
        chain = DynamixelChain(plant, servos)
        # A link that survives the port vanishing, as a udev name would.
        endpoint = PtyEndpoint(str(tmp_path / f'dynamixel{len(made)}'))
        thread = DeviceThread(chain, endpoint, 200.0, name='dynamixel').start()
        made.append(thread)
        return chain, thread
    made = []
    yield make
    for thread in made:
        thread.stop()


@pytest.fixture
def buses():
    """Start DynamixelBus(*args, **kwargs) on call; stop every one after the test."""
    # Imported here: only the tests that open a bus need ROBOTIS's SDK.
    from tendon_robot_sim.protocol.dynamixel.bus import DynamixelBus

    # The emulated chain is a thread of this process and can wait for the GIL behind other
    # threads on a loaded machine. An answer later than the port's timeout (twice the bus
    # file's latency_timer, 16 ms by default, + 2 ms) would be a servo that did not answer.
    def start(*args, settings=dxl.BusSettings(), **kwargs):
        bus = DynamixelBus(*args, settings=replace(settings, latency_timer=ANSWER_LATENCY),
                           **kwargs)
        made.append(bus.start())
        return bus

    made = []
    yield start
    for bus in made:
        bus.stop()
