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
`tendon-robot-sim demo`: the stack runs headless and the bag it writes reads back.

Short holds, a 10-element rod and three times real time keep it quick; the bag is checked with
``rosbags`` (metadata, type definitions, QoS) and every message is
deserialized by both rosbags and rclpy.
"""

import csv
import os
from pathlib import Path
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from rosbags.rosbag2 import Reader
from rosbags.typesys import get_typestore
import tendon_robot_sim
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import build_parser
from tendon_robot_sim.commands.demo import demo_target, paced_parameters, REAL_TIME_FACTORS
from tendon_robot_sim.commands.demo_hardware import format_table
from tendon_robot_sim.experiment.bag import DEFAULT_STORE
from tendon_robot_sim.launcher import file_parameters, parameter_table
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.snake.statics import equilibrium
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.demo import demo_phases
from tendon_robot_sim.stack import SIMULATOR
from waiting import COMMAND_TIMEOUT
import yaml

HOLD = 0.5       # s of simulated time per step (0.2 s: a ramp of 0.15 s left no margin)
TENSION = 2.0    # N
TIP_TOLERANCE = 2e-3    # m, of the tip-target step
FACTOR = 3.0     # --real-time-factor: 13 s of wall time less, the same run in simulated time


def phases_of(robot):
    return demo_phases(robot.tendon_names, TENSION, demo_target(robot, TENSION))


# Links planted where the demo writes (test_output_links.py: outputs never follow a link).
PLANTED = ('robot.yaml', 'stack.log', 'tip_positions.csv', 'overview.png', 'bag')
VICTIM = 'a file of someone else\n'


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp('demo') / 'out'
    victims = out.parent / 'victims'
    victims.mkdir()
    out.mkdir()
    for name in PLANTED:
        (victims / name).write_text(VICTIM)
        (out / name).symlink_to(victims / name)
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    env['TENDON_ROBOT_SIM_PROGRESS'] = '1'    # the bar also into a pipe: it is tested below
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'demo', '--out', str(out),
         '--hold', str(HOLD), '--tension', str(TENSION), '--elements', '10',
         '--real-time-factor', str(FACTOR)],
        env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert result.returncode == 0, result.stderr + (out / 'stack.log').read_text()
    for name in PLANTED:     # replaced, never followed
        assert (victims / name).read_text() == VICTIM and not (out / name).is_symlink(), name
    return out, result.stdout, result.stderr


def test_demo_prints_a_tip_table_and_draws_every_step(demo):
    out, stdout, _ = demo
    robot = load_robot(default_robot_file())
    phases = phases_of(robot)
    with open(out / 'tip_positions.csv') as f:
        rows = list(csv.DictReader(f))
    assert [r['phase'] for r in rows] == [p.label for p in phases]
    for row in rows:
        assert row['phase'] in stdout
    assert len(list(out.glob('step_*.png'))) == len(phases)
    assert (out / 'overview.png').stat().st_size > 10_000
    tip = {r['phase']: np.array([float(r[f'tip_{a}_m']) for a in 'xyz']) for r in rows}
    # pulling t1 (hole on the -y side of the default robot) swings the tip to -y
    assert tip[f't1 {TENSION:g} N'][1] < tip['rest'][1] - 0.01
    assert tip[f't3 {TENSION:g} N'][1] > tip['rest'][1] + 0.01
    assert tip[f't0 {TENSION:g} N'][2] > tip['rest'][2] + 0.01
    # a released rod is read back at rest, not still swinging (once -83.8 mm for -68.3 mm)
    for row in rows:
        if row['phase'].endswith('released'):
            assert row['settled'] == 'True', row
            assert np.linalg.norm(tip[row['phase']] - tip['rest']) < 2e-3, row
    # the tension controller moved the tip to the target in tip-position mode
    assert np.linalg.norm(tip['tip target'] - phases[-1].target) < TIP_TOLERANCE
    assert np.linalg.norm(tip['tip target'] - tip['rest']) > 0.03
    assert 'tip target [mm]' in stdout
    assert yaml.safe_load((out / 'robot.yaml').read_text())['rod']['elements'] == 10


def test_a_tip_still_moving_is_hinted_with_the_options_that_hold_its_step_longer():
    """
    A tip-target row still moving was hinted `hold longer (--hold, --settle)`.

    That step ends after --target-hold (of the controller's periods), and --settle holds
    only tension steps: the hint names what holds each unsettled row's step.
    """
    def row(label, settled):
        return [0, label, 1.0, 0.2, 0.0, 0.0, 0.0 if settled else 2e-3, settled]

    target = format_table([row('t0 2 N', True), row('tip target', False)], 't [s]',
                          targets={'tip target'})
    assert '(--target-hold)' in target.splitlines()[-1], target
    tension = format_table([row('t0 2 N', False), row('tip target', True)], 't [s]',
                           targets={'tip target'})
    assert '(--hold, --settle)' in tension.splitlines()[-1], tension
    both = format_table([row('t0 2 N', False), row('tip target', False)], 't [s]',
                        targets={'tip target'})
    assert '(--hold, --settle, --target-hold)' in both.splitlines()[-1], both
    assert 'hold longer' not in format_table([row('t0 2 N', True)], 't [s]')


def test_the_replay_hint_names_commands_of_the_package_that_play_the_bag(demo):
    """
    The last line once said `ros2 bag play BAG`: no ROS CLI in the venv `make setup` builds.

    Each command of the hint is this package's, and its arguments parse to the bag written.
    """
    out, stdout, _ = demo
    (hint,) = [line for line in stdout.splitlines() if line.startswith('replay:')]
    commands = [shlex.split(part) for part in hint[len('replay:'):].split(';')]
    assert [argv[:2] for argv in commands] == [['tendon-robot-sim', 'replay'],
                                               ['tendon-robot-sim', 'view']], hint
    for argv in commands:
        args = build_parser().parse_args(argv[1:])
        assert Path(args.bag) == out / 'bag', hint


def test_the_progress_bar_ends_at_the_simulated_time_the_steps_took(demo):
    """The bar once ended at 14.00/14.00 s while the run went on to 34.4 s (settling)."""
    out, _, stderr = demo
    done, total = map(float, re.findall(r'\| ([0-9.]+)/([0-9.]+) s', stderr)[-1])
    assert done == pytest.approx(total, abs=0.02)
    with open(out / 'tip_positions.csv') as f:
        times = [float(r['time_s']) for r in csv.DictReader(f)]
    # the steps' time: from the first command (before the first row) to the last row
    assert times[-1] - times[0] <= done <= times[-1] + 0.1


def test_bag_holds_every_topic_with_its_type_and_messages_deserialize(demo):
    out, _, _ = demo
    bag = out / 'bag'
    typestore = get_typestore(DEFAULT_STORE)
    by_name = {t.name: t for t in topics.TOPICS}
    counts = {}
    with Reader(bag) as reader:
        connections = {c.topic: c for c in reader.connections}
        assert set(connections) == {'/' + name.lstrip('/') for name in by_name}
        for topic, connection in connections.items():
            expected = by_name.get(topic) or by_name[topic.lstrip('/')]
            assert connection.msgtype == topics.type_name(expected.msg_type)
            assert connection.ext.serialization_format == 'cdr'
            (qos,) = connection.ext.offered_qos_profiles
            assert qos.reliability.name == expected.qos.reliability.name
            assert qos.depth == expected.qos.depth
            assert connection.digest == typestore.hash_rihs01(connection.msgtype)
        for connection, timestamp, raw in reader.messages():
            typestore.deserialize_cdr(raw, connection.msgtype)
            expected = by_name.get(connection.topic) or by_name[connection.topic.lstrip('/')]
            deserialize_message(raw, expected.msg_type)
            counts[connection.topic] = counts.get(connection.topic, 0) + 1
    assert all(counts.get(topic, 0) > 0 for topic in connections), counts
    metadata = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert metadata['storage_identifier'] == 'mcap'
    assert metadata['version'] == 9
    assert metadata['message_count'] == sum(counts.values())


def test_faster_than_real_time_the_physics_ticks_as_often_per_simulated_second():
    """
    At 3x real time the simulator's physics rate is tripled, its publishing rate kept.

    Per simulated second the physics ticks (and /clock) come as often as at 1, so the
    controller on simulated time runs as at 1; the bag's recorder gets as many messages a
    second of wall time as at 1. Slower than real time the rates stay.
    """
    table = parameter_table(SIMULATOR)
    rate = file_parameters(SIMULATOR).get('physics_rate', table['physics_rate'].default)
    assert paced_parameters(FACTOR) == [f'simulator:real_time_factor:={FACTOR!r}',
                                        f'simulator:physics_rate:={FACTOR * rate!r}']
    assert paced_parameters(0.5)[1] == f'simulator:physics_rate:={float(rate)!r}'
    # the fastest factor's rate is one the node takes
    fastest = paced_parameters(REAL_TIME_FACTORS[1])
    assert table['physics_rate'].check(float(fastest[1].rpartition(':=')[2]))


def test_bag_records_the_commanded_sequence_and_the_tabled_tip_poses(demo):
    out, _, _ = demo
    robot = load_robot(default_robot_file())
    phases = phases_of(robot)
    commands, tips = [], []
    with Reader(out / 'bag') as reader:
        for connection, _, raw in reader.messages():
            if connection.topic == '/tendon/command/tension':
                msg = deserialize_message(raw, topics.TENDON_COMMAND.msg_type)
                commands.append(dict(zip(msg.name, msg.effort)))
            elif connection.topic == '/tip/pose':
                p = deserialize_message(raw, topics.TIP_POSE.msg_type).pose.position
                tips.append([p.x, p.y, p.z])
    assert commands == [p.tensions for p in phases if p.target is None]
    tips = np.array(tips)
    with open(out / 'tip_positions.csv') as f:
        for row in csv.DictReader(f):
            tabled = np.array([float(row[f'tip_{a}_m']) for a in 'xyz'])
            # the table is rounded to 10 micrometres: within half of that, and the doubles'
            # own error (5.0000000000015e-6 m failed a bound of 5e-6 in the hardware demo)
            assert np.min(np.abs(tips - tabled).max(axis=1)) <= 5e-6 + 1e-12, row['phase']


def test_demo_runs_the_rolling_joint_snake_and_pulling_cable_2_lifts_it(tmp_path):
    out = tmp_path / 'snake'
    env = dict(os.environ)
    root = str(Path(tendon_robot_sim.__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'demo', '--out', str(out),
         '--robot', 'config/rolling_joint_snake.yaml', '--hold', str(HOLD), '--tension', '20',
         '--settle', '0',     # the snake still swings after 0.5 s: its rows say so
         '--real-time-factor', str(FACTOR)],
        cwd=root, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert result.returncode == 0, result.stderr + (out / 'stack.log').read_text()
    with open(out / 'tip_positions.csv') as f:
        rows = {r['phase']: r for r in csv.DictReader(f)}
    assert list(rows) == [p.label for p in demo_phases(
        ['cable1', 'cable2', 'cable3', 'cable4'], 20.0)], 'no tip-target step for the snake'
    # Cable 2 runs along the upper side: pulled, it lifts the sagging tip towards the pose
    # 20 N on it holds at rest (the statics' joint balance, 230 mm above the rest row). The
    # undamped snake whips about that pose (measured: -131 to +142 mm within one hold), so
    # the tip at the row's instant is a coin toss; the mean height over the pull is not (37 to
    # 107 mm in six runs, quiet and loaded). A quarter of the lift (-63 mm) fails a pull that
    # leaves the tip hanging: cable 4's pull had means of -100 to -117 mm in those runs.
    rest_z = float(rows['rest']['tip_z_m'])
    snake = load_snake(root + '/config/rolling_joint_snake.yaml')
    tensions = [20.0 if name == 'cable2' else 0.0 for name in snake.cable_names]
    lifted_z = SnakeKinematics(snake).state(equilibrium(snake, tensions).q).tip_position[0, 2]
    pulled = _tip_heights_while_pulled(out / 'bag', 'cable2', 20.0,
                                       float(rows['cable1 released']['time_s']),
                                       float(rows['cable2 20 N']['time_s']))
    assert pulled.size >= 5, 'too few tip poses while cable 2 pulled'
    assert pulled.mean() > rest_z + 0.25 * (lifted_z - rest_z), (pulled.mean(), lifted_z)
    assert (out / 'overview.png').stat().st_size > 0


def _tip_heights_while_pulled(bag: Path, cable: str, tension: float, after: float,
                              until: float) -> np.ndarray:
    """
    Return the tip z [m] of the bag's poses while ``cable`` pulled with ``tension`` [N].

    From the first state with that tension after ``after`` up to ``until`` (simulated times
    [s], as in the tip table).
    """
    def seconds(stamp) -> float:
        return stamp.sec + stamp.nanosec * 1e-9
    states, poses = [], []
    with Reader(bag) as reader:
        for connection, _, raw in reader.messages():
            if connection.topic == '/tendon/state':
                msg = deserialize_message(raw, topics.TENDON_STATE.msg_type)
                states.append((seconds(msg.header.stamp),
                               dict(zip(msg.name, msg.effort)).get(cable, 0.0)))
            elif connection.topic == '/tip/pose':
                msg = deserialize_message(raw, topics.TIP_POSE.msg_type)
                poses.append((seconds(msg.header.stamp), msg.pose.position.z))
    pulled = [t for t, effort in states if after < t <= until and effort >= tension - 1e-6]
    assert pulled, f'no tendon/state with {cable} at {tension} N'
    return np.array([z for t, z in poses if pulled[0] <= t <= until])
