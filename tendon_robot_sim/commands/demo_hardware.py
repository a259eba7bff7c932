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
``tendon-robot-sim demo --hardware DEVICES``: the hardware stack on emulated devices.

The devices are emulated (``tendon-robot-sim emulate``, a process of their own) on
pseudo-terminals, as a bench would have them on serial ports:
``dynamixel`` is a chain of Dynamixel X-series servos (Protocol 2.0, one per tendon, spoken
to through ROBOTIS's ``dynamixel-sdk``) and an LK-G style laser controller; ``tdcr`` the
package's own streaming motor driver and laser. The ``hardware`` stack (bridge, tension
controller, robot_state_publisher) runs through the local launcher on them; the demo pulls
each tendon in turn for ``--hold`` wall-clock seconds, records the stack's topics into a
rosbag2 bag, prints the measured tip at the end of each step and plots the measured tip and
tensions over time. Output folder (``--out``, default ``demo_output/hardware``)::

    bag/                rosbag2 bag (tendon/command/tension, setpoint, state, tip/measured)
    measurements.png    measured tip and tensions over time, the steps marked
    tip_positions.csv   the printed table
    stack.log           output of the stack's nodes
"""

from __future__ import annotations

import csv
from pathlib import Path
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
from tendon_robot_sim import progress_bar
from tendon_robot_sim.commands import CommandError
from tendon_robot_sim.emulator.dynamixel import bus_file
from tendon_robot_sim.files.outputs import make_folder, open_growing, open_output, save_figure
from tendon_robot_sim.launcher import LaunchError, StackLauncher
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.parallel import ends_with_us

# --hardware: (motor_device, sensor_device) of the bridge and the emulator
DEVICES = {'dynamixel': ('dynamixel', 'keyence-lkg'),
           'tdcr': ('tdcr-motor-v1', 'tdcr-laser-v1')}
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0    # s the emulator gets to close its ports
POLL_PERIOD = 0.1      # s
# s: the emulated servos follow their goal with this time constant
TIME_CONSTANT = 0.05
# N: a step's tensions have arrived when tendon/state reads them this closely (the
# emulated servos' current unit is 0.27 N of tension)
TENSION_TOLERANCE = 0.3


def fresh_bag(bag: Path) -> None:
    """
    Make way for the demo's bag at ``bag``: remove the bag of an earlier demo there.

    A link there is removed, never followed (an output never goes through a link). A bag is
    an earlier demo's when that demo's ``stack.log`` lies beside it (every demo writes it
    before it records); any other bag, or anything else than an empty folder, is kept, and
    the demo refuses to start (:func:`check_bag`): a user's own recording is never removed.
    """
    check_bag(bag)
    if bag.is_symlink():
        bag.unlink()
    elif bag.exists():
        shutil.rmtree(bag)


def check_bag(bag: Path) -> None:
    """
    Raise CommandError unless :func:`fresh_bag` may make way at ``bag``; remove nothing.

    A demo asks before it writes anything: a refused run leaves its ``--out`` as it was.
    """
    if bag.exists() and not bag.is_symlink():
        demos = (bag / 'metadata.yaml').exists() and (bag.parent / 'stack.log').is_file()
        if not demos and any(bag.iterdir()):
            raise CommandError(f'{bag}: exists and is not a bag from an earlier demo; '
                               'choose another --out')


def run_hardware(args, robot: Robot, robot_file: Path) -> int:
    """Run the hardware demo of ``robot`` (a tendon robot) on emulated ``args.hardware``."""
    motor_device, sensor_device = DEVICES[args.hardware]
    out = args.out
    bag = out / 'bag'
    check_bag(bag)
    ports = Path(tempfile.mkdtemp(prefix='tendon_robot_sim_demo_'))
    try:
        try:    # the stack checked before anything is written to --out
            launcher = StackLauncher(
                'hardware', {'robot': str(Path(robot_file).resolve()), 'rviz': 'false',
                             'motor_port': str(ports / 'motors'),
                             'sensor_port': str(ports / 'sensor'),
                             'motor_device': motor_device, 'sensor_device': sensor_device},
                _emulator_parameters(motor_device, ports))
        except LaunchError as error:
            raise CommandError(str(error)) from None
        make_folder(out)
        fresh_bag(bag)
        print(f'robot: {robot.name!r} from {robot_file}; emulated {motor_device} on '
              f'{ports / "motors"}, {sensor_device} on {ports / "sensor"}')
        log_path = out / 'stack.log'
        with open_growing(log_path) as log:
            launcher.log_into(log)
            emulator = _start_emulator(robot_file, motor_device, sensor_device, ports, log,
                                       log_path)
            try:
                steps, driver, counts = _drive(launcher, bag, robot, args.tension, args.hold,
                                               log_path, args.settle)
            finally:
                _stop(emulator)
    finally:
        shutil.rmtree(ports, ignore_errors=True)
    rows = [[i, label, round(t, 3), *np.round(tip, 5).tolist(), round(min(spread, 99.0), 5),
             settled] for i, (label, t, tip, spread, settled) in enumerate(steps)]
    print(format_table(rows, 't [s]'))
    with open_output(out / 'tip_positions.csv', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['step', 'phase', 'time_s', 'tip_x_m', 'tip_y_m', 'tip_z_m',
                         'tip_spread_m', 'settled'])
        writer.writerows(rows)
    _plot(driver, steps, robot, out / 'measurements.png')
    print(f'\nbag: {bag} ({sum(counts.values())} messages: '
          + ', '.join(f'{topic} {n}' for topic, n in counts.items()) + ')')
    print(f'plot: {out / "measurements.png"}')
    return 0


def _emulator_parameters(motor_device: str, ports: Path) -> list[str]:
    """
    Return the bridge's parameters for devices emulated in another process.

    A loaded machine can hold that process up: the ports get 10 s to open (a bench's
    default is 2 s), and the servos the latency of the emulator's bus file.
    """
    parameters = ['hardware_bridge:open_timeout:=10.0']
    if motor_device == 'dynamixel':
        parameters.append(f'hardware_bridge:dynamixel_file:={bus_file(ports)}')
    return parameters


def _start_emulator(robot_file: Path, motor_device: str, sensor_device: str, ports: Path,
                    log, log_path: Path) -> subprocess.Popen:
    """
    Start ``tendon-robot-sim emulate`` on ``ports``/motors and /sensor; wait for its ports.

    Its output goes to ``log``, the open file ``log_path`` (named in an error).

    A process of its own, as real devices are: a thread of this process (which also records
    and drives) could answer the bridge late on a loaded machine, and a servo that misses
    its status packets is a fault the bridge latches.
    """
    emulator = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'emulate',
         '--motors', f'{motor_device}:pty:{ports / "motors"}',
         '--sensor', f'{sensor_device}:pty:{ports / "sensor"}',
         '--robot', str(robot_file), '--time-constant', str(TIME_CONSTANT)],
        stdout=log, stderr=subprocess.STDOUT, preexec_fn=ends_with_us(signal.SIGTERM))
    end = time.monotonic() + STARTUP_TIMEOUT
    while not ((ports / 'motors').exists() and (ports / 'sensor').exists()):
        if emulator.poll() is not None or time.monotonic() > end:
            _stop(emulator)
            raise CommandError(f'the emulated devices did not start (exit {emulator.poll()}); '
                               f'see {log_path}')
        time.sleep(POLL_PERIOD)
    return emulator


def _stop(emulator: subprocess.Popen) -> None:
    """End the emulator as Ctrl-C would (its ports and links closed)."""
    if emulator.poll() is None:
        emulator.send_signal(signal.SIGTERM)
    try:
        emulator.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        emulator.kill()
        emulator.wait()


def format_table(rows, time_header: str, targets=frozenset()) -> str:
    """
    Return the demos' table of tips: step, phase, time, tip [mm], whether the tip was at rest.

    ``rows``: (step, phase, time [s], x, y, z [m], spread [m], settled) as in the CSV files.
    ``targets``: the phases of a tip target, which --target-hold holds (not --hold, --settle).
    """
    lines = [f'{"step":>4}  {"phase":<14} {time_header:>9}  {"tip x [mm]":>10} '
             f'{"tip y [mm]":>10} {"tip z [mm]":>10}  tip']
    for step, label, t, x, y, z, spread, settled in rows:
        state = 'at rest' if settled else f'still moving, +-{spread * 1e3:.1f} mm'
        lines.append(f'{step:>4}  {label:<14} {t:>9.2f}  {x * 1e3:>10.1f} {y * 1e3:>10.1f} '
                     f'{z * 1e3:>10.1f}  {state}')
    moving = {label in targets for _, label, *_, settled in rows if not settled}
    if moving:
        options = (['--hold', '--settle'] if False in moving else []) + \
            (['--target-hold'] if True in moving else [])
        lines.append('a row whose tip still moves is no rest position: hold longer '
                     f'({", ".join(options)})')
    return '\n'.join(lines)


def _drive(launcher: StackLauncher, bag: Path, robot: Robot, tension: float, hold: float,
           log_path: Path, settle: float = 0.0):
    """
    Run the stack, pull each tendon in turn and record; (steps, driver, counts).

    A step holds its tensions ``hold`` s from when ``tendon/state`` carries them, then on
    until the measured tip has settled, at most ``settle`` s more; its row is the tip then,
    with its spread (m) over the last SETTLE_WINDOW s of measurements and whether that is at
    rest (those measurements made after the hold began).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from tendon_robot_sim.ros import topics
    from tendon_robot_sim.ros.demo import (demo_phases, HardwareDemoDriver, SETTLED_SPREAD,
                                           shut_down, wait_recorded, wait_until)
    from tendon_robot_sim.ros.recorder import BagRecorder

    def alive() -> None:
        for node in launcher.exited():
            raise CommandError(f'node {node.entry.name} exited with code '
                               f'{node.process.returncode}; see {log_path}')

    phases = demo_phases([t.name for t in robot.tendons], tension)
    # Ctrl-C and SIGTERM are the command's (cli.main: exit 130 or 143, after the clean-up
    # below); rclpy's own handler shut the context down under the executor, which ended as an
    # internal error
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor()
    nodes = []
    try:
        launcher.start()
        recorder = BagRecorder(bag, (topics.TENDON_COMMAND, topics.TENDON_SETPOINT,
                                     topics.TENDON_STATE, topics.TIP_MEASURED))
        driver = HardwareDemoDriver()
        nodes += [recorder, driver]
        for node in nodes:
            executor.add_node(node)
        # Ready: the bridge is active (state and tip flow, to the driver and into the bag:
        # the recorder's subscriptions can match later than the driver's) and the controller
        # and the recorder both listen to commands.
        if not wait_until(executor, lambda: (
                driver.tips and driver.tensions
                and recorder.recorded(topics.TENDON_STATE)
                and recorder.recorded(topics.TIP_MEASURED)
                and driver.command_pub.get_subscription_count() >= 2),
                STARTUP_TIMEOUT, alive):
            raise CommandError(f'the hardware stack did not come up within '
                               f'{STARTUP_TIMEOUT:g} s; see {log_path}')
        steps = []
        # the least tension the bridge commands (its pretension, as this stack gives it)
        floor = launcher.parameters['hardware_bridge']['min_tension']
        for phase in progress_bar(phases, desc='steps', unit='step'):
            driver.command(phase.tensions)
            # A step's hold counts from the state that carries its tensions: on a loaded
            # machine the command, the controller's ramp and the servos can all run late.
            target = np.maximum(list(phase.tensions.values()), floor)
            if not wait_until(executor, lambda: np.allclose(driver.tensions[-1][1:], target,
                                                            atol=TENSION_TOLERANCE),
                              STARTUP_TIMEOUT, alive):
                raise CommandError(f'{phase.label}: the tensions {target.tolist()} N did not '
                                   f'arrive within {STARTUP_TIMEOUT:g} s; see {log_path}')
            end = driver.now() + hold

            def at_rest() -> bool:   # over a window measured after the hold began
                return driver.tips[-1][0] >= end and driver.tip_spread() <= SETTLED_SPREAD
            wait_until(executor, lambda: driver.now() >= end, hold + 1.0, alive)
            wait_until(executor, at_rest, settle, alive)
            t, *tip = driver.tips[-1]
            steps.append((phase.label, t, np.array(tip), driver.tip_spread(), at_rest()))
        # the bag holds the last row's tip: it can still wait in the recorder's queue (demo)
        if not wait_recorded(executor, recorder, topics.TIP_MEASURED, driver.tip_time(),
                             STARTUP_TIMEOUT, alive):
            raise CommandError(f'the bag did not get the last measured tip within '
                               f'{STARTUP_TIMEOUT:g} s; see {log_path}')
        counts = recorder.counts
    finally:
        shut_down(executor, nodes, launcher)
    return steps, driver, counts


def _plot(driver, steps, robot: Robot, path: Path) -> None:
    """Write the measurements' figure (:func:`measurements_figure`) to ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig = measurements_figure(np.array(driver.tips), np.array(driver.tensions), steps,
                              [t.name for t in robot.tendons])
    save_figure(fig, path, dpi=90)
    plt.close(fig)


def broken_at_gaps(samples: np.ndarray, factor: float = 5.0) -> np.ndarray:
    """
    Return ``samples`` (k, 1 + n; time first, s) with a NaN row in every gap.

    A gap is a step in time over ``factor`` times the median one: a line drawn through it
    would claim measurements the sensor never sent (a gap from 8.1 to 9.3 s was bridged).
    """
    if len(samples) < 3:
        return samples
    steps = np.diff(samples[:, 0])
    gaps = np.flatnonzero(steps > factor * np.median(steps)) + 1
    return np.insert(samples.astype(float), gaps, np.nan, axis=0)


def measurements_figure(tips: np.ndarray, tensions: np.ndarray, steps, names):
    """
    Return the figure of the measured tip (from its first sample) and tensions over time.

    ``tips`` (k, 4): t [s], x, y, z [m]; ``tensions`` (j, 1 + n): t, N per tendon; ``steps``:
    (label, time of the row, ...) per step. Each step's row is a grey line numbered above the
    plot, the numbers named beside it: labels written along the lines overlapped each other and
    the data.
    """
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 6), sharex=True, layout='constrained')
    shown = broken_at_gaps(tips)
    for k, axis in enumerate('xyz'):     # from the first sample: the moves, not the offsets
        top.plot(shown[:, 0], (shown[:, 1 + k] - tips[0, 1 + k]) * 1e3, label=f'tip {axis}')
    shown = broken_at_gaps(tensions)
    for k, name in enumerate(names):
        bottom.plot(shown[:, 0], shown[:, 1 + k], label=name)
    for i, (label, t, *_) in enumerate(steps):
        for ax in (top, bottom):
            ax.axvline(t, color='0.8', lw=0.8)
        top.annotate(str(i), (t, 1.0), xycoords=('data', 'axes fraction'), xytext=(0, 2),
                     textcoords='offset points', ha='center', va='bottom', fontsize=8)
    top.set_ylabel('measured tip - first sample [mm]')
    bottom.set_ylabel('measured tension [N]')
    bottom.set_xlabel('time [s]')
    for ax in (top, bottom):
        ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    key = '\n'.join(f'{i} {label}' for i, (label, *_) in enumerate(steps))
    top.text(1.01, 0.0, 'rows (grey):\n' + key, transform=top.transAxes, fontsize=7,
             va='bottom')
    fig.suptitle('hardware demo on emulated devices: tip/measured and tendon/state')
    return fig
