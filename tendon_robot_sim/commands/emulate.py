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
``tendon-robot-sim emulate``: play the motor driver and the tip sensor on serial ports.

Without ports it creates two pseudo-terminals and prints their paths; give those to
the bridge (``motor_port``, ``sensor_port``). Commanded tensions move the emulated
robot (quasi-static model), so the sensor reports where the tip goes.
"""

import contextlib
import os
from pathlib import Path
import stat
import tempfile
import time

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.commands import (command_error, CommandError, input_file, NOISE,
                                       non_negative, non_negative_int, probability, StopSignals,
                                       within)
from tendon_robot_sim.emulator.devices import Faults
from tendon_robot_sim.emulator.dynamixel import ANSWER_LATENCY, bus_text
from tendon_robot_sim.emulator.endpoints import open_endpoint
from tendon_robot_sim.emulator.rig import EmulatedRig
from tendon_robot_sim.files.outputs import write_new_output
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol.mounting import MountingError, sensor_mount

MOTOR_KINDS = ('tdcr-motor-v1', 'dynamixel')
SENSOR_KINDS = ('tdcr-laser-v1', 'keyence-lkg')
# Status and measurement rates: up to what a serial line carries (a 20-byte frame at 1 Mbaud
# every 0.2 ms).
RATES = (0.01, 1e4)     # Hz


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'emulate', help='emulate the motor driver and the tip sensor on serial ports',
        description='Emulate the tendon motor driver and the laser tip sensor '
                    '(docs/hardware.md) on pseudo-terminals, TCP ports or serial '
                    'devices, backed by the quasi-static model of the robot. PORT is pty (a '
                    'new pseudo-terminal, its path is printed), pty:LINK (the same plus a '
                    'symlink LINK that survives --disconnect-every), tcp:[HOST:]PORT (the '
                    'bridge opens socket://HOST:PORT), none, or a serial device to open. A '
                    'prefix picks the device: dynamixel:PORT (X-series servos, Protocol 2.0, '
                    'IDs 1..n) or tdcr-motor-v1:PORT for --motors, keyence-lkg:PORT (LK-G '
                    'style controller, heads on y and z of the sensor frame) or '
                    'tdcr-laser-v1:PORT for --sensor.')
    parser.add_argument('--motors', metavar='PORT', default='pty',
                        help='motor driver port (default: pty)')
    parser.add_argument('--sensor', metavar='PORT', default='pty',
                        help='tip sensor port (default: pty)')
    parser.add_argument('--robot', metavar='FILE', type=input_file,
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--urdf', metavar='FILE', type=input_file,
                        help='URDF placing tip_sensor_link (default: the package '
                             'urdf/tendon_robot.urdf)')
    parser.add_argument('--status-rate', type=within(*RATES, 'Hz'), default=50.0, metavar='HZ',
                        help='motor status rate (default: 50)')
    parser.add_argument('--sensor-rate', type=within(*RATES, 'Hz'), default=50.0, metavar='HZ',
                        help='tip measurement rate (default: 50)')
    parser.add_argument('--time-constant', type=non_negative, default=0.05, metavar='S',
                        help='first-order lag of the motor tensions (default: 0.05)')
    parser.add_argument('--noise', type=within(*NOISE, 'm'), default=0.0002, metavar='M',
                        help='tip sensor noise, standard deviation per axis (default: 0.0002)')
    parser.add_argument('--dropout', type=probability, default=0.0, metavar='P',
                        help='probability of a "no target" sample (default: 0)')
    parser.add_argument('--seed', type=non_negative_int, default=0,
                        help='seed of the noise and the faults (default: 0)')
    parser.add_argument('--duration', type=non_negative, default=0.0, metavar='S',
                        help='stop after S seconds (default: 0, run until Ctrl-C)')
    faults = parser.add_argument_group(
        'fault injection', 'probabilities per frame a device sends (default: 0)')
    faults.add_argument('--drop-byte', type=probability, default=0.0, metavar='P',
                        help='lose one byte of the frame body (a bad checksum)')
    faults.add_argument('--corrupt-checksum', type=probability, default=0.0, metavar='P',
                        help='send a wrong checksum')
    faults.add_argument('--garbage', type=probability, default=0.0, metavar='P',
                        help='send 1-16 bytes of line noise before the frame')
    faults.add_argument('--split', type=probability, default=0.0, metavar='P',
                        help='send the frame in two pieces 2 ms apart')
    faults.add_argument('--disconnect-every', type=non_negative, default=0.0, metavar='S',
                        help='break both links every S seconds (default: 0, never)')
    faults.add_argument('--down-time', type=non_negative, default=0.5, metavar='S',
                        help='how long a broken link stays down (default: 0.5)')
    parser.set_defaults(func=run)


class EmulatedBusFile:
    """
    The bus file of the emulated chain, beside its port (``PORT.yaml``), else in a new folder.

    The shipped bus file's latency timer is a bench's; the emulator, a process on a shared
    machine, may answer later (:data:`~tendon_robot_sim.emulator.dynamixel.ANSWER_LATENCY`).
    A pty:LINK port gets ``LINK.yaml``, so a recipe can name it; a bare pseudo-terminal, TCP
    port or device, a temporary folder's ``dynamixel.yaml`` (the path is printed).

    Written only as a new file: a file already there is refused (FileExistsError), unless it
    holds exactly this text (one an emulator killed before its end left: rewriting it loses
    nothing). Removed at the end of the ``with`` block, its folder too if it made one, unless
    someone changed it meanwhile.
    """

    def __init__(self, endpoint):
        self.text = bus_text().encode()
        self.folder = None
        port = Path(endpoint.path)
        link = getattr(endpoint, 'link', None)    # taken away until the chain answers
        if link is None and port.is_symlink() and os.access(port.parent, os.W_OK):
            link = port
        if link is not None:
            self.path = link.with_name(f'{link.name}.yaml')
        else:
            self.folder = Path(tempfile.mkdtemp(prefix='tendon_robot_sim_emulate_'))
            self.path = self.folder / 'dynamixel.yaml'
        try:
            write_new_output(self.path, self.text)
        except FileExistsError:
            if not self._unchanged():
                raise FileExistsError(f'{self.path} exists and is not a bus file an emulator '
                                      'left there; move it, or give another link') from None
        except BaseException:
            self._remove_folder()
            raise

    def _unchanged(self) -> bool:
        try:
            if not stat.S_ISREG(os.lstat(self.path).st_mode):
                return False
            with open(self.path, 'rb') as handle:
                return handle.read(len(self.text) + 1) == self.text
        except OSError:
            return False

    def _remove_folder(self) -> None:
        if self.folder is not None:
            try:
                self.folder.rmdir()     # only while empty
            except OSError:
                pass

    def __enter__(self) -> 'EmulatedBusFile':
        return self

    def __exit__(self, *_) -> None:
        if self._unchanged():
            self.path.unlink(missing_ok=True)
        self._remove_folder()


def _link_path(spec: str) -> Path | None:
    """Return the link a ``pty:LINK`` port makes (absolute, its folder's links resolved)."""
    if not spec.startswith('pty:'):
        return None
    link = Path(os.path.abspath(spec[4:]))
    return Path(os.path.realpath(link.parent)) / link.name


def run(args) -> int:
    try:
        robot = load_robot(args.robot or default_robot_file())
        mount = sensor_mount(args.urdf or share_dir() / 'urdf' / 'tendon_robot.urdf',
                             robot.base.frame_id)
    except (RobotDescriptionError, MountingError) as error:
        raise command_error(error) from None
    kinds, specs = {}, {}
    for device, spec, known, other in (('motors', args.motors, MOTOR_KINDS, SENSOR_KINDS),
                                       ('sensor', args.sensor, SENSOR_KINDS, MOTOR_KINDS)):
        kind, _, rest = spec.partition(':')
        if kind in other:     # else taken for a serial device named so, which cannot open
            mine, theirs = ('motor', 'sensor') if device == 'motors' else ('sensor', 'motor')
            raise CommandError(f'--{device}: {kind} is a {theirs} kind, not a {mine} kind '
                               f'({mine} kinds: {", ".join(known)})')
        kinds[device], specs[device] = (kind, rest) if kind in known else (known[0], spec)
    links = {device: _link_path(spec) for device, spec in specs.items()}
    for device, link in links.items():
        if link is not None and not link.parent.is_dir():
            # else the link's rename said "[Errno 2] ... '/dev/pts/0' -> 'LINK.new'"
            raise CommandError(f'--{device}: {link.parent} does not exist; the link goes into '
                               'an existing folder')
    if links['motors'] is not None and links['motors'] == links['sensor']:
        raise CommandError(f'--sensor: {args.sensor} is the same link as --motors; give each '
                           'device its own')
    if kinds['motors'] == 'dynamixel' and links['motors'] is not None and links['sensor'] == (
            links['motors'].with_name(f'{links["motors"].name}.yaml')):
        raise CommandError(f'--sensor: {args.sensor} is the bus file of --motors; give another '
                           'link')
    endpoints, bus = {}, None
    try:
        for device, spec in specs.items():
            endpoints[device] = None if spec == 'none' else open_endpoint(spec)
        if kinds['motors'] == 'dynamixel' and endpoints['motors'] is not None:
            device = 'motors'
            bus = EmulatedBusFile(endpoints['motors'])
    except (OSError, ValueError) as error:
        for endpoint in endpoints.values():
            if endpoint is not None:
                endpoint.close()
        raise CommandError(f'--{device}: {error}') from None
    rig = EmulatedRig(
        robot, mount, endpoints['motors'], endpoints['sensor'], status_rate=args.status_rate,
        sensor_rate=args.sensor_rate, time_constant=args.time_constant, noise=args.noise,
        dropout=args.dropout, seed=args.seed,
        faults=Faults(drop_byte=args.drop_byte, corrupt_checksum=args.corrupt_checksum,
                      garbage=args.garbage, split=args.split),
        motor_device=kinds['motors'], sensor_device=kinds['sensor'])
    # Ctrl-C, SIGTERM and SIGHUP end the loop; the ports, links and the bus file are removed.
    with bus or contextlib.nullcontext(), rig, StopSignals() as stop:
        for device in rig.threads:
            print(f'{device}: {rig.path(device)}', flush=True)
        if bus is not None:
            print(f'bus file: {bus.path} (the emulated servos answer within '
                  f'{ANSWER_LATENCY:g} s; removed when this stops); pass the bridge --param '
                  f'hardware_bridge:dynamixel_file:={bus.path}', flush=True)
        print('emulating; Ctrl-C stops', flush=True)
        start = time.monotonic()
        next_disconnect = start + args.disconnect_every
        while not stop and (not args.duration or time.monotonic() - start < args.duration):
            time.sleep(0.05)
            if args.disconnect_every and time.monotonic() >= next_disconnect:
                next_disconnect += args.disconnect_every
                for device in rig.threads:
                    rig.disconnect(device, args.down_time)
                print(f'links broken for {args.down_time:g} s', flush=True)
    counts = rig.motor.counts
    if kinds['motors'] == 'dynamixel':
        print(f'done: {counts["instructions"]} instruction packets, {counts["bad_crc"]} with a '
              f'bad CRC, {counts["replies"]} status packets', flush=True)
    else:
        print(f'done: {counts["received"]} commands received, {counts["applied"]} applied, '
              f'{counts["rejected"]} rejected', flush=True)
    return 0
