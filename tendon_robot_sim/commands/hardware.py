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
``tendon-robot-sim hardware``: tools for the real tendon servos (Dynamixel X-series).

``scan`` broadcast-pings a port at the usual baud rates and lists every servo's
ID, model and firmware (as Dynamixel Wizard's scan does). ``calibrate-tension``
fits the current -> tension calibration of each channel from load-cell readings
and writes it, with the fit's RMS residual, into the Dynamixel bus file.
"""

import math
import os
from pathlib import Path
import select
import sys

import numpy as np

from tendon_robot_sim import counted, share_dir
from tendon_robot_sim.commands import check_output, CommandError, parse_values
from tendon_robot_sim.experiment.csv_table import MAX_LINE
from tendon_robot_sim.files.outputs import write_output
from tendon_robot_sim.files.yaml_loader import read_yaml
from tendon_robot_sim.models.description import check_range, RobotDescriptionError
from tendon_robot_sim.protocol.devices import load_dynamixel_bus
from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.bus import BusError
from tendon_robot_sim.protocol.dynamixel.tools import hold_and_measure, scan
import yaml


def register(subparsers) -> None:
    parser = subparsers.add_parser('hardware', help='scan for and calibrate the tendon servos',
                                   description='Tools for Dynamixel X-series tendon servos '
                                               '(Protocol 2.0) on a U2D2 or another port.')
    tools = parser.add_subparsers(dest='tool', required=True, metavar='TOOL')
    found = tools.add_parser('scan', help='list the servos on a port',
                             description='Broadcast-ping PORT at each baud rate and list the '
                                         'servos that answer: ID, model, firmware.')
    found.add_argument('--port', required=True, help='serial port (/dev/ttyUSB0)')
    found.add_argument('--baud', default=','.join(str(b) for b in dxl.SDK_BAUD_RATES),
                       help='comma-separated baud rates to try (default: %(default)s)')
    found.set_defaults(func=run_scan)
    fit = tools.add_parser(
        'calibrate-tension', help='fit current -> tension per channel from a load cell',
        description='For each channel: drive the servo at each --currents value (current '
                    'control) with the tendon tied to a load cell, ask for the load cell '
                    'reading [N] (one answer per line on stdin, or from --answers FILE), fit '
                    'tension = gain * current + offset, and write gain, offset and the RMS '
                    'residual into the Dynamixel bus file.')
    fit.add_argument('--port', required=True, help='serial port (/dev/ttyUSB0)')
    fit.add_argument('--baud', default='1000000',
                     help='baud rate (default: 1000000)')
    fit.add_argument('--config', type=Path, default=None, metavar='FILE',
                     help='Dynamixel bus file to update (default: the package '
                          'config/dynamixel.yaml; give your own copy)')
    fit.add_argument('--currents', default='0.02,0.05,0.1,0.15', metavar='A,A,...',
                     help='goal currents of the steps [A] (default: %(default)s)')
    fit.add_argument('--answers', type=Path, default=None, metavar='FILE',
                     help='load cell readings [N], one per line, in the order asked '
                          '(default: stdin)')
    fit.set_defaults(func=run_calibrate)


def _positive_numbers(text: str, option: str) -> list[float]:
    """Return the comma-separated numbers of ``option``, each > 0, or raise CommandError."""
    values = parse_values(text, option)
    if isinstance(values, dict):
        raise CommandError(f'{option}: numbers, not name=value pairs, got {text!r}')
    if not all(v > 0 for v in values):
        raise CommandError(f'{option}: numbers > 0, got {text!r}')
    return values


def _baud_rates(text: str) -> list[int]:
    """Return the baud rates of ``--baud``, each one the SDK opens, or raise CommandError."""
    numbers = _positive_numbers(text, '--baud')
    fractional = [v for v in numbers if v != int(v)]
    if fractional:
        raise CommandError(f'--baud: {text!r} is not a whole number of baud')
    bauds = [int(b) for b in numbers]
    unknown = [b for b in bauds if b not in dxl.SDK_BAUD_RATES]
    if unknown:
        raise CommandError(f'--baud: {unknown} not among the rates the SDK opens '
                           f'{list(dxl.SDK_BAUD_RATES)}')
    return bauds


def run_scan(args) -> int:
    bauds = _baud_rates(args.baud)
    try:
        found = scan(args.port, bauds)
    except BusError as error:
        raise CommandError(f'--port: {error}') from None
    if not found:
        raise CommandError(f'no Dynamixel answered on {args.port} at {bauds} baud '
                           '(power, wiring, Protocol 2.0?)')
    for baud, servos in found.items():
        for servo_id, (model, firmware) in sorted(servos.items()):
            known = dxl.MODELS.get(model)
            print(f'{baud} baud: ID {servo_id:3d}  {known.name if known else "unknown model"} '
                  f'(model number {model})  firmware {firmware}')
    return 0


def run_calibrate(args) -> int:
    bauds = _baud_rates(args.baud)
    if len(bauds) != 1:
        raise CommandError(f'--baud: one rate, got {args.baud!r}')
    args.baud = bauds[0]
    currents = _positive_numbers(args.currents, '--currents')
    if len(currents) < 2:
        raise CommandError('--currents: at least two steps to fit a line')
    _check_goal_currents(currents)
    config = args.config or share_dir() / 'config' / 'dynamixel.yaml'
    # written at the end: writable now; and not the answers file, whose lines are readings
    check_output(config, '--config', 'file', inputs=(('--answers', args.answers),))
    try:
        channels, settings = load_dynamixel_bus(config)
        data = read_yaml(config)     # as checked just above
    except dxl.ChannelError as error:
        raise CommandError(f'--config: {error}') from None
    limits = [ch.current_limit for ch in channels if ch.current_limit is not None]
    too_high = [c for c in currents if limits and c > min(limits)]
    if too_high:
        raise CommandError(f'--currents: {too_high} A above the current_limit of a channel')
    if args.answers is not None:    # a file is counted first: stdin is answered as asked
        _check_enough_answers(args.answers, len(channels), len(currents))
    with _Readings(args.answers) as readings:
        calibrations = [_calibrate(args, k, channel, channels, settings, currents, readings)
                        for k, channel in enumerate(channels)]
    for k, calibration in enumerate(calibrations):
        data['channels'][k]['calibration'] = calibration
    write_output(config, yaml.safe_dump(data, sort_keys=False))
    print(f'written to {config}')
    return 0


def _calibrate(args, k, channel, channels, settings, currents, readings) -> dict:
    """Drive ``channel`` at each of ``currents``, read the load cell; return its fit."""
    measured, loads = [], []
    for amps in currents:
        readings.ask(f'channel {k} (servo ID {channel.servo_id}) at {amps:g} A: load cell '
                     'reading [N]? ')
        try:    # the reading is asked, and taken, while the servo holds the current
            measured.append(hold_and_measure(args.port, args.baud, channel,
                                             round(channel.direction * amps
                                                   / dxl.CURRENT_UNIT),
                                             settings=settings,
                                             others=[c.servo_id for c in channels],
                                             until=readings.arrived))
        except BusError as error:
            raise CommandError(f'--port: {error}') from None
        loads.append(_answer(readings.line, k, amps))
        if not readings.typed:   # a terminal echoed the line typed
            print(f'{loads[-1]:g}')
    gain, offset = np.polyfit(measured, loads, 1)
    residual = float(np.sqrt(np.mean((np.polyval([gain, offset], measured) - loads) ** 2)))
    # The rise over the steps must stand above the scatter about the line: equal readings
    # fit a gain of numpy's rounding error, which the bridge divides by.
    rise = gain * (max(measured) - min(measured))
    if not (gain > 0.0 and max(loads) > min(loads) and rise > residual):
        raise CommandError(f'channel {k}: the tension does not rise with the current '
                           f'(gain {gain:g} N/A): check the load cell and direction')
    print(f'channel {k}: tension = {gain:.4g} N/A x current + {offset:.4g} N, '
          f'RMS residual {residual:.3g} N')
    return {'gain': round(float(gain), 6), 'offset': round(float(offset), 6),
            'residual': round(residual, 6)}


def _check_enough_answers(path: Path, channels: int, steps: int) -> None:
    """Refuse an answers file with fewer readings (non-blank lines) than the run asks."""
    try:
        with open(path, 'rb') as file:
            given = sum(1 for line in file if line.strip())
    except OSError as error:
        raise CommandError(f'--answers: cannot read: {error}') from None
    if given < channels * steps:
        raise CommandError(f'--answers: {path} holds {counted(given, "reading")}; '
                           f'{counted(channels, "channel")} at {counted(steps, "current")} '
                           f'need {channels * steps}')


def _check_goal_currents(currents: list[float]) -> None:
    """Refuse steps that round to no Goal Current or to one another's (2.69 mA units)."""
    units = [round(amps / dxl.CURRENT_UNIT) for amps in currents]
    if 0 in units:
        raise CommandError(f'--currents: {currents[units.index(0)]:g} A is below half a Goal '
                           f'Current unit ({dxl.CURRENT_UNIT * 1e3:g} mA): no current')
    for k, unit in enumerate(units):
        first = units.index(unit)
        if first != k:
            raise CommandError(f'--currents: {currents[first]:g} A and {currents[k]:g} A are '
                               f'one Goal Current ({unit} units of '
                               f'{dxl.CURRENT_UNIT * 1e3:g} mA): a line needs two')


class _Readings:
    """
    The load cell readings, one a line, from ``--answers`` FILE or stdin, read as they come.

    A user at a terminal answers each question as it is asked: nothing is read ahead, and
    the servo holds its current meanwhile (:meth:`arrived` waits at most 50 ms a call).
    """

    def __init__(self, path: Path | None):
        self._where = '--answers' if path else 'stdin'
        try:
            self._file = open(path, 'rb') if path else None
            self._fd = self._file.fileno() if path else sys.stdin.fileno()
        except (OSError, ValueError, AttributeError) as error:
            raise CommandError(f'{self._where}: cannot read: {error}') from None
        self._buffer, self._ended, self._prompt = b'', False, ''
        self.typed = os.isatty(self._fd)   # at a terminal
        self.line = None     # the last reading's line, None: none left

    def __enter__(self) -> '_Readings':
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            self._file.close()

    def ask(self, prompt: str) -> None:
        """Print ``prompt`` when the next reading is waited for."""
        self._prompt, self.line = prompt, None

    def arrived(self) -> bool:
        """Return True once the next non-blank line (:attr:`line`) or the end has come."""
        if self._prompt:
            print(self._prompt, end='', flush=True)
            self._prompt = ''
        while True:
            head, newline, rest = self._buffer.partition(b'\n')
            if newline or self._ended:
                self._buffer = rest
                if head.strip() or not newline:
                    self.line = self._text(head) if head.strip() else None
                    return True
                continue
            if len(self._buffer) > MAX_LINE:
                raise CommandError(f'{self._where}: a line longer than {MAX_LINE} characters')
            if not select.select([self._fd], [], [], 0.05)[0]:
                return False
            try:
                chunk = os.read(self._fd, 65536)
            except OSError as error:
                raise CommandError(f'{self._where}: cannot read: {error}') from None
            self._buffer += chunk
            self._ended = not chunk

    def _text(self, line: bytes) -> str:
        try:
            return line.decode('utf-8-sig')
        except UnicodeDecodeError:
            raise CommandError(f'{self._where}: a line is not UTF-8 text: '
                               f'{line[:40]!r}') from None


def _answer(line, channel: int, amps: float) -> float:
    if line is None:
        raise CommandError(f'answers: none left for channel {channel} at {amps:g} A')
    try:
        value = float(line)
    except ValueError:
        raise CommandError(f'answers: channel {channel} at {amps:g} A: {line.strip()!r} is '
                           'not a number of newtons') from None
    if not math.isfinite(value) or value < 0.0:
        raise CommandError(f'answers: channel {channel} at {amps:g} A: {value} is not a '
                           'tension >= 0 N')
    try:    # a tension: within the range of a description's tensions
        check_range(value, f'answers: channel {channel} at {amps:g} A', 'max_tension')
    except RobotDescriptionError as error:
        raise CommandError(str(error)) from None
    return value
