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
Unpowered gap of a Dynamixel mode switch, and the longest stall between two bus cycles.

Tension mode ``current`` (current control) and displacement mode (current-based position
control) are different Operating Modes, an EEPROM item written with the torque off: each
switch leaves the tendons unpowered from the Torque Enable 0 to the Torque Enable 1 of
the bus driver (:class:`DynamixelBus`, its ``diagnostic_values``). With tension mode
``current_based_position`` a switch keeps the Operating Mode and the torque. The driver
runs at 100 Hz, 1 Mbps, against ``tendon-robot-sim emulate --motors dynamixel:...`` in
its own process over a pseudo-terminal, switching every 0.2 s.

    python benchmarks/bench_mode_switch.py --json [--switches 40]
"""

from pathlib import Path
import statistics
import tempfile
import time

from bench_dynamixel_bus import ANSWER_AT_ONCE, print_result, running_emulator
from options import Parser, positive_int
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.protocol.drivers import DELIVERED
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.bus import DynamixelBus


def wait(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError('the bus did not get there')
        time.sleep(0.002)


def switches(path: str, tension_mode: str, count: int) -> dict:
    channels = [dxl.ServoChannel(k + 1, 0.015, control_table=ANSWER_AT_ONCE) for k in range(4)]
    bus = DynamixelBus(path, channels, [20.0] * 4, cycle_rate=100.0,
                       settings=dxl.BusSettings(tension_mode, latency_timer=0.1)).start()
    gaps = []
    try:
        wait(lambda: bus.connected)
        bus.enable([0.5] * 4)
        for k in range(count):
            seq = (bus.command_displacements([0.002, 0.0, 0.0, 0.0]) if k % 2 == 0
                   else bus.command_tensions([1.0, 0.5, 0.5, 0.5]))
            wait(lambda: bus.delivery(seq) == DELIVERED)
            values = dict(bus.diagnostic_values())
            if values['mode_switches_unpowered'] > len(gaps):
                gaps.append(float(values['unpowered_last_ms']))
            time.sleep(0.2)
        stall = float(dict(bus.diagnostic_values())['longest_cycle_gap_s'])
    finally:
        bus.stop()
    return {'tension_mode': tension_mode, 'switches': count, 'unpowered': len(gaps),
            'unpowered_ms_median': round(statistics.median(gaps), 2) if gaps else 0.0,
            'unpowered_ms_max': round(max(gaps), 2) if gaps else 0.0,
            'longest_cycle_gap_s': stall}


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--switches', type=positive_int, default=40, help='mode switches per mode')
    parser.add_argument('--json', action='store_true', help='print one JSON object')
    args = parser.parse_args()
    result = {'runs': []}
    with tempfile.TemporaryDirectory() as directory:
        link = Path(directory) / 'dynamixel'
        with running_emulator(Path(default_robot_file()), link):
            for tension_mode in ('current', 'current_based_position'):
                result['runs'].append(switches(str(link), tension_mode, args.switches))
    print_result(result, result['runs'], args.json)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
