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
Bus cycle of the Dynamixel tendon servos, ROBOTIS's SDK against the emulated chain on a pty.

1. Full cycles per second (GroupSyncWrite of 4 Goal Currents + GroupSyncRead of the 4
   servos' 15-byte state block) at 1 Mbps and 4 Mbps, and the host CPU time per cycle
   (``time.thread_time`` of the polling thread: the SDK polls the port, so this is the
   time Python spends, waiting included).
2. The bridge's bus driver (:class:`DynamixelBus`) at its 100 Hz command rate with 4 and
   with 8 servos at 1 Mbps: cycles achieved per second and the wall time per cycle.

A pseudo-terminal moves bytes at memory speed whatever the baud rate, so these are the
host's figures; ``wire_ms`` is what the same bytes take on a real bus at that rate (10
bits per byte, Return Delay Time 0). On real hardware a cycle lasts about the larger of
the two, plus each servo's Return Delay Time (XM430 default 250 = 0.5 ms per servo).
The emulator runs in its own process (``tendon-robot-sim emulate``, its mechanics
stepped at 5 Hz here, so the plant's solves rarely delay an answer), as it would beside
a bridge.

    python benchmarks/bench_dynamixel_bus.py --json
"""

from contextlib import contextmanager
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

import dynamixel_sdk as sdk
from machine import machine_info
from options import Parser, positive
import tendon_robot_sim
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.bus import DynamixelBus
import yaml


def robot_with(tendons: int, directory: Path) -> Path:
    """Write the default robot with ``tendons`` tendons evenly around the rod (one per servo)."""
    data = yaml.safe_load(Path(default_robot_file()).read_text())
    template = data['tendons'][0]
    data['tendons'] = [dict(template, name=f't{k}', angle_deg=360.0 * k / tendons)
                       for k in range(tendons)]
    path = directory / f'robot_{tendons}.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


@contextmanager
def running_emulator(robot: Path, link: Path):
    """Run ``tendon-robot-sim emulate`` with a Dynamixel chain at ``link`` meanwhile."""
    process = emulator(robot, link)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(10)


def print_result(result: dict, rows: list[dict], as_json: bool) -> None:
    """Add the machine to ``result``, print ``rows`` unless ``as_json``, then the JSON."""
    result['machine'] = machine_info('numpy', 'dynamixel-sdk')
    if not as_json:
        for row in rows:
            print(row, file=sys.stderr)
    print(json.dumps(result))


def emulator(robot: Path, link: Path) -> subprocess.Popen:
    """Start ``tendon-robot-sim emulate`` with a Dynamixel chain at ``link``."""
    env = dict(os.environ, PYTHONPATH=str(Path(tendon_robot_sim.__file__).parents[1]))
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'emulate', '--robot', str(robot),
         '--motors', f'dynamixel:pty:{link}', '--sensor', 'none', '--status-rate', '5'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    for line in process.stdout:
        if line.startswith('emulating'):
            return process
    raise RuntimeError('the emulator did not start')


def wire_ms(servos: int, baud: int) -> float:
    """Milliseconds the bytes of one cycle take on a bus at ``baud`` (10 bits per byte)."""
    write = 14 + servos * (1 + dxl.GOAL_CURRENT[1])
    read = 14 + servos + servos * (11 + dxl.STATE_LENGTH)
    return (write + read) * 10 / baud * 1e3


def sdk_cycles(path: str, baud: int, servos: int, duration: float) -> dict:
    port = sdk.PortHandler(path)
    assert port.openPort() and port.setBaudRate(baud)
    handler = sdk.PacketHandler(2.0)
    ids = list(range(1, servos + 1))
    for servo_id in ids:   # the state block in Indirect Data, as the bus driver maps it
        handler.write1ByteTxRx(port, servo_id, dxl.RETURN_DELAY_TIME[0], 0)
        address = dxl.INDIRECT_ADDRESS_1[0]
        for item, size in dxl.STATE_ITEMS:
            for k in range(size):
                handler.write2ByteTxRx(port, servo_id, address, item + k)
                address += 2
    write = sdk.GroupSyncWrite(port, handler, *dxl.GOAL_CURRENT)
    read = sdk.GroupSyncRead(port, handler, dxl.INDIRECT_DATA_1[0], dxl.STATE_LENGTH)
    for servo_id in ids:
        read.addParam(servo_id)
    cycles = failures = 0
    cpu, wall = time.thread_time(), time.perf_counter()
    while time.perf_counter() - wall < duration:
        write.clearParam()
        for servo_id in ids:
            write.addParam(servo_id, [10, 0])
        write.txPacket()
        if read.txRxPacket() == sdk.COMM_SUCCESS:
            cycles += 1
        else:
            failures += 1
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    port.closePort()
    return {'baud': baud, 'servos': servos, 'cycles_per_s': round(cycles / wall, 1),
            'failed_cycles': failures, 'python_ms_per_cycle': round(cpu / cycles * 1e3, 3),
            'wire_ms_per_cycle': round(wire_ms(servos, baud), 3)}


#: What the package's bus file sets: the servos answer at once.
ANSWER_AT_ONCE = (('drive_mode', 0), ('return_delay_time', 0))


def bridge_rate(path: str, servos: int, duration: float) -> dict:
    channels = [dxl.ServoChannel(k + 1, 0.015, control_table=ANSWER_AT_ONCE)
                for k in range(servos)]
    bus = DynamixelBus(path, channels, [20.0] * servos, baudrate=1000000,
                       cycle_rate=100.0).start()
    deadline = time.monotonic() + 10.0
    while not bus.connected and time.monotonic() < deadline:
        time.sleep(0.01)
    bus.enable([0.5] * servos)
    times = []
    start_ok = bus.statistics()[0].frames_ok
    start = time.monotonic()
    while time.monotonic() - start < duration:
        bus.command_tensions([1.0] * servos)
        times.append(bus.cycle_time)
        time.sleep(0.01)
    cycles = (bus.statistics()[0].frames_ok - start_ok) / servos
    elapsed = time.monotonic() - start
    bus.stop()
    return {'servos': servos, 'baud': 1000000, 'target_hz': 100.0,
            'achieved_hz': round(cycles / elapsed, 1),
            'cycle_ms_median': round(statistics.median(times) * 1e3, 3),
            'cycle_ms_max': round(max(times) * 1e3, 3),
            'wire_ms_per_cycle': round(wire_ms(servos, 1000000), 3)}


def main() -> int:
    parser = Parser(description=__doc__.splitlines()[1])
    parser.add_argument('--duration', type=positive, default=3.0, help='seconds per figure')
    parser.add_argument('--json', action='store_true', help='print one JSON object')
    args = parser.parse_args()
    result = {'sdk_cycles': [], 'bridge': []}
    with tempfile.TemporaryDirectory() as directory:
        for servos in (4, 8):
            link = Path(directory) / f'dynamixel{servos}'
            with running_emulator(robot_with(servos, Path(directory)), link):
                if servos == 4:
                    for baud in (1000000, 4000000):
                        result['sdk_cycles'].append(
                            sdk_cycles(str(link), baud, servos, args.duration))
                result['bridge'].append(bridge_rate(str(link), servos, args.duration))
    print_result(result, result['sdk_cycles'] + result['bridge'], args.json)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
