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

"""Replay of bags: real publishers and a real subscriber over DDS, timing measured on arrival."""

from contextlib import contextmanager
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from bag_files import count_verifications, date_back
from geometry_msgs.msg import PointStamped, PoseStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rclpy.serialization import serialize_message
from ros_helpers import position, spinning, TIMEOUT, wait_for
from rosbags.typesys import get_types_from_msg
from sensor_msgs.msg import JointState
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.commands.replay import DELAYS
from tendon_robot_sim.experiment.bag import BagError, BagWriter, OfferedQos
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.replay import BagPlayer, SIMULATOR_OUTPUTS
from tendon_robot_sim.ros.spinner import BackgroundSpinner
from tf2_msgs.msg import TFMessage
from waiting import COMMAND_TIMEOUT

# Irregular gaps between messages [s], alternating between two topics; 0.99 s in all.
GAPS = [0.03, 0.08, 0.05, 0.12, 0.04, 0.10, 0.06, 0.09, 0.03, 0.11, 0.07, 0.05, 0.08, 0.08]
T0 = 1_700_000_000_000_000_000      # bag stamps are epoch times [ns]
ROOT = Path(__file__).resolve().parents[2]


def _message(i):
    if i % 2 == 0:
        return '/tendon/command/tension', JointState(name=['t0'], effort=[float(i)])
    msg = PointStamped()
    msg.point.x = float(i)
    return '/tip/target', msg


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    path = tmp_path_factory.mktemp('replay') / 'bag'
    stamps = T0 + np.round(np.concatenate(([0.0], np.cumsum(GAPS))) * 1e9).astype(np.int64)
    with BagWriter(path) as writer:
        writer.add_topic('/tendon/command/tension', 'sensor_msgs/msg/JointState',
                         OfferedQos())
        writer.add_topic('/tip/target', 'geometry_msgs/msg/PointStamped', OfferedQos())
        # not in the topics table: replayed with the QoS recorded in the bag
        writer.add_topic('/other/points', 'geometry_msgs/msg/PointStamped',
                         OfferedQos(durability='transient_local', depth=3))
        for i, stamp in enumerate(stamps):
            topic, msg = _message(i)
            writer.write(topic, int(stamp), serialize_message(msg))
    return path


class Listener:
    """A subscriber node in a context of its own, spun in a thread; keeps arrivals."""

    def __init__(self):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node('replay_listener', context=self.context)
        self.arrivals = []      # (monotonic time, index of the message)
        self.node.create_subscription(JointState, topics.TENDON_COMMAND.name,
                                      lambda msg: self._keep(msg.effort[0]),
                                      topics.TENDON_COMMAND.qos)
        self.node.create_subscription(PointStamped, topics.TIP_TARGET.name,
                                      lambda msg: self._keep(msg.point.x),
                                      topics.TIP_TARGET.qos)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.spinner = BackgroundSpinner(self.executor)

    def _keep(self, value):
        self.arrivals.append((time.monotonic(), int(value)))

    def close(self):
        self.spinner.stop()
        self.node.destroy_node()
        self.context.try_shutdown()


@pytest.fixture
def listener():
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture
def player_context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    context.try_shutdown()


class VirtualClock:
    """time.monotonic and time.sleep of the player's module: a sleep moves time on at once."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


@pytest.mark.parametrize('rate', [1.0, 2.0])
def test_messages_arrive_in_order_with_the_recorded_spacing(bag, listener, player_context,
                                                            rate, monkeypatch):
    """
    The player's pacing, on a clock of the test's own; the messages over real DDS.

    When each message went out is read from that clock, not from arrival times: a loaded
    machine delays arrivals by any amount, and the spacing measured there was its load as
    much as the player's pacing. (The command's own pacing in real time: the loop test.)
    """
    from tendon_robot_sim.ros import replay
    clock = VirtualClock()
    monkeypatch.setattr(replay, 'time', clock)
    player = BagPlayer(bag, rate=rate, context=player_context)
    sent = []   # (clock time, topic) of every publish
    try:
        wait_for(lambda: all(player.publishers_by_topic[t].get_subscription_count() >= 1
                             for t in ('/tendon/command/tension', '/tip/target')),
                 'the listener to subscribe')
        for topic, publisher in player.publishers_by_topic.items():
            publish = publisher.publish
            publisher.publish = (lambda data, topic=topic, publish=publish:
                                 (sent.append((clock.now, topic)), publish(data)))
        assert player.play() is True
        # RELIABLE topics: the listener's side of the match is part of this wait
        assert player.wait_for_delivery(TIMEOUT) == []
        wait_for(lambda: len(listener.arrivals) == len(GAPS) + 1, 'every message')
    finally:
        player.destroy_node()
    times, published = zip(*sent)
    assert list(published) == [_message(i)[0] for i in range(len(GAPS) + 1)]   # the bag's order
    expected = np.concatenate(([0.0], np.cumsum(GAPS))) / rate
    # the spacing as recorded, scaled by 1/rate (the stamps are whole nanoseconds)
    np.testing.assert_allclose(np.array(times) - times[0], expected, rtol=0.0, atol=1e-6)
    # every message arrives, each topic's in its order (two readers need not keep the order
    # between them)
    indices = [index for _, index in listener.arrivals]
    assert sorted(indices) == list(range(len(GAPS) + 1))
    for parity in (0, 1):
        assert [i for i in indices if i % 2 == parity] == list(range(parity, len(GAPS) + 1, 2))
    assert player.counts == {'/tendon/command/tension': 8, '/tip/target': 7,
                             '/other/points': 0}


def test_publishers_take_the_qos_of_the_table_else_of_the_bag(bag, player_context):
    player = BagPlayer(bag, context=player_context)
    try:
        command = player.publishers_by_topic['/tendon/command/tension'].qos_profile
        assert command == topics.TENDON_COMMAND.qos
        other = player.publishers_by_topic['/other/points'].qos_profile
        assert (other.reliability, other.durability, other.depth) == \
            (ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL, 3)
    finally:
        player.destroy_node()
    with pytest.raises(BagError, match='no topic /tip/nowhere in the bag'):
        BagPlayer(bag, topics=['tip/nowhere'], context=player_context)
    with pytest.raises(BagError, match='rate: must be a finite number > 0'):
        BagPlayer(bag, rate=0.0, context=player_context)


def test_what_the_simulator_publishes_is_left_out_in_any_namespace(tmp_path, player_context):
    """A namespaced stack's recorded tip/pose was replayed beside the simulated one."""
    bag = tmp_path / 'bag'
    recorded = {'/left_arm/tip/pose': PoseStamped(), '/left_arm/tip/measured': PointStamped(),
                '/tf': TFMessage()}
    with BagWriter(bag) as writer:
        for topic, msg in recorded.items():
            writer.add_topic(topic, topics.type_name(type(msg)), OfferedQos())
            writer.write(topic, T0, serialize_message(msg))
    player = BagPlayer(bag, exclude=SIMULATOR_OUTPUTS, context=player_context)
    try:
        assert list(player.publishers_by_topic) == ['/left_arm/tip/measured']
    finally:
        player.destroy_node()


def test_command_loops_until_ctrl_c(bag, listener):
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'replay', str(bag), '--rate', '4',
         '--loop', '--delay', '1.0', '--topics', 'tendon/command/tension', 'tip/target'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # one pass of each topic: the even messages are tensions, the odd ones tip targets
    one_pass = {parity: list(range(parity, len(GAPS) + 1, 2)) for parity in (0, 1)}

    def passes_seen(parity: int) -> list[int]:
        # one topic's messages in their order of arrival; discovery may cost the first pass
        # some: counted from the topic's first message. Between two topics (two DDS
        # readers) arrivals need not keep the bag's order: under load one reader's
        # messages were taken before the other's.
        indices = [index for _, index in listener.arrivals if index % 2 == parity]
        return indices[indices.index(parity):] if parity in indices else []
    try:
        # one pass lasts 0.25 s at rate 4
        wait_for(lambda: all(len(passes_seen(p)) >= 2 * len(one_pass[p]) for p in (0, 1)),
                 'two whole passes')
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=TIMEOUT)[0]
    assert process.returncode == 0, output
    for parity in (0, 1):
        assert passes_seen(parity)[:2 * len(one_pass[parity])] == one_pass[parity] * 2
    assert 'replaying' in output and 'complete pass' in output


def test_bad_arguments_are_refused(bag, tmp_path, capsys):
    assert main(['replay', str(bag), '--rate', '0']) == 2
    assert '--rate: must be a number within [0.001, 1000], got 0' in capsys.readouterr().err
    assert main(['replay', str(tmp_path / 'nothing')]) == 2
    assert f'{tmp_path / "nothing"}: no such bag' in capsys.readouterr().err


@contextmanager
def spinning_node(name, setup):
    """
    Spin a node called ``name``, in a context of its own, in a background thread.

    The node is set up by ``setup(node)`` and spins while the block runs.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(name, context=context)
    setup(node)
    with spinning(node, context=context):
        yield node


def _simulation_bag(path):
    """
    Write an experiment: setpoints of 0 N then 2 N on t0, the measured tip, a recorded tip/pose.

    The recorded tip/pose (x = 99 m) is what a replay into simulation must not publish.
    """
    names = load_robot(default_robot_file()).tendon_names
    measured = PointStamped()
    measured.point.x = 0.123
    recorded_pose = PoseStamped()
    recorded_pose.pose.position.x = 99.0
    with BagWriter(path) as writer:
        for topic in (topics.TENDON_SETPOINT, topics.TIP_MEASURED, topics.TIP_POSE):
            writer.add_topic('/' + topic.name, topics.type_name(topic.msg_type), OfferedQos())
        for seconds, topic, msg in (
                (0.0, topics.TENDON_SETPOINT, JointState(name=names, effort=[0.0] * 4)),
                (0.1, topics.TIP_MEASURED, measured),
                (0.2, topics.TENDON_SETPOINT, JointState(name=names, effort=[2.0, 0, 0, 0])),
                (0.25, topics.TIP_POSE, recorded_pose),
                (0.6, topics.TIP_MEASURED, measured)):
            writer.write('/' + topic.name, T0 + int(seconds * 1e9), serialize_message(msg))


def test_replay_into_simulation_publishes_the_simulated_tip_next_to_the_measured_one(
        tmp_path, capsys):
    bag = tmp_path / 'bag'
    _simulation_bag(bag)
    poses, measured = [], []

    def subscribe(node):
        node.create_subscription(PoseStamped, topics.TIP_POSE.name, poses.append,
                                 topics.TIP_POSE.qos)
        node.create_subscription(PointStamped, topics.TIP_MEASURED.name, measured.append,
                                 topics.TIP_MEASURED.qos)
    # the last simulated tip: the statics of the last setpoint (independent solver instance;
    # warm starts differ, both within the solver tolerance)
    reference = StaticsSolver(load_robot(default_robot_file()), 'discrete')
    expected = reference.solve_tensions([2.0, 0.0, 0.0, 0.0]).tip_position
    with spinning_node('simulation_listener', subscribe):
        assert main(['replay', str(bag), '--simulate', '--delay', '1.0']) == 0
        # what the replay published reaches this listener after it returned, on a loaded
        # host well after
        wait_for(lambda: len(measured) >= 2 and poses
                 and np.linalg.norm(position(poses[-1]) - expected) < 5e-8,
                 'both measured tips and the simulated tip of the last setpoint')
    output = capsys.readouterr().out
    assert 'simulated: tendon/state, tip/pose' in output
    assert '/tip/measured 2' in output and '/tip/pose' not in output.split('simulated')[0]
    assert [m.point.x for m in measured] == [0.123, 0.123]
    assert all(abs(p.pose.position.x) < 1.0 for p in poses)   # never the recorded


def test_a_replay_into_simulation_verifies_the_bag_once(tmp_path, monkeypatch, capsys):
    """It opens the bag four times: topics, QoS, the setpoints' forms, the playback."""
    bag = tmp_path / 'bag'
    _simulation_bag(bag)
    date_back(bag)
    verified = count_verifications(monkeypatch)
    assert main(['replay', str(bag), '--simulate', '--delay', '0']) == 0
    assert 'published 4 messages' in capsys.readouterr().out
    assert verified == [storage.resolve() for storage in bag.glob('*.mcap')]


def test_replay_into_simulation_needs_setpoints(bag, capsys):
    assert main(['replay', str(bag), '--simulate', '--topics', 'tip/target']) == 2
    assert (f'--simulate: {bag} has no tendon/setpoint (in any namespace) for the simulator to '
            'follow') in capsys.readouterr().err
    assert main(['replay', str(bag), '--model', 'cosserat']) == 2
    assert '--robot and --model apply to --simulate only' in capsys.readouterr().err


def test_simulating_an_imported_table_says_what_is_missing_and_what_to_do(tmp_path, capsys):
    """
    A bag of `import` holds the inputs as measured (tendon/state), no tendon/setpoint.

    The refusal names the missing topic, the one the bag has instead, and the commands that
    take such a bag; before the player is built, so a bag of tendon/state alone (nothing left
    to publish beside the simulator) gets the same line.
    """
    data = ROOT / 'test' / 'data' / 'opencr_ftdcr_v4'
    robot = ROOT / 'config' / 'opencr_ftdcr_v4.yaml'
    bag = tmp_path / 'train_bag'
    assert main(['import', str(data / 'tdcr_sysid_20260511-183002_val.csv'), '--columns',
                 str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml'), '--robot', str(robot),
                 '--out', str(bag)]) == 0
    capsys.readouterr()
    for topics_given in ([], ['--topics', 'tendon/state']):
        assert main(['replay', str(bag), '--simulate', '--robot', str(robot), '--delay', '0',
                     *topics_given]) == 2
        out, err = capsys.readouterr()
        assert out == '' and err.count('\n') == 1, (out, err)
        assert (f'--simulate: {bag} has no tendon/setpoint (in any namespace) for the simulator '
                'to follow; it holds /tendon/state, the inputs as measured (a bag of `import` '
                'holds these)' in err), err
        assert f'validate {bag} --points samples' in err and 'without --simulate' in err, err


def test_simulating_setpoints_left_out_by_topics_says_so(tmp_path, capsys):
    bag = tmp_path / 'bag'
    _simulation_bag(bag)
    assert main(['replay', str(bag), '--simulate', '--topics', 'tip/measured']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert '--topics: leaves out /tendon/setpoint, which --simulate follows; add it' in err, err


def test_a_bag_cannot_choose_which_python_module_is_imported(tmp_path):
    bag = tmp_path / 'bag'
    marker = tmp_path / 'ran'
    with BagWriter(bag) as writer:
        writer.typestore.register(get_types_from_msg('int32 x', 'evil/msg/Foo'))
        writer.add_topic('/evil', 'evil/msg/Foo', OfferedQos())
        writer.add_topic('/tip/target', 'geometry_msgs/msg/PointStamped', OfferedQos())
        writer.write('/evil', T0, b'\x00\x01\x00\x00')
        writer.write('/tip/target', T0 + 1000, serialize_message(PointStamped()))
    # The bag folder ships the module its type names; replay is run inside the folder,
    # where `python -m` puts the working folder first on sys.path.
    (bag / 'evil.py').write_text(f'open({str(marker)!r}, "w").close()\n')
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'replay', '.', '--delay', '0'],
        cwd=bag, capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
        env={**os.environ, 'PYTHONPATH': str(ROOT)})
    assert not marker.exists(), 'the bag ran its own code'
    assert result.returncode == 0, result.stderr
    assert 'not replaying /evil: message type evil/msg/Foo: no installed ROS interface ' \
        'package declares it' in result.stdout
    assert 'published 1 messages' in result.stdout


def _setpoint_bag(path, names=None, namespace='/'):
    """Write five setpoints of 3 N on every tendon; ``names`` default: the default robot's."""
    names = load_robot(default_robot_file()).tendon_names if names is None else names
    topic = namespace + topics.TENDON_SETPOINT.name
    with BagWriter(path) as writer:
        writer.add_topic(topic, 'sensor_msgs/msg/JointState', OfferedQos())
        for i in range(5):
            writer.write(topic, T0 + i * 10_000_000,
                         serialize_message(JointState(name=names, effort=[3.0] * 4)))


def test_replayed_setpoints_never_reach_a_hardware_bridge_unless_allowed(tmp_path):
    bag = tmp_path / 'bag'
    _setpoint_bag(bag)
    received = []

    def subscribe(node):
        node.create_subscription(JointState, topics.TENDON_SETPOINT.name, received.append,
                                 topics.TENDON_SETPOINT.qos)
    # The replay runs as users run it, a process of its own (whose graph is fresh). The
    # check, and the delivery, need the bridge discovered: 6 s of --delay, since 2 s were
    # too few on a loaded machine (for each run that goes near the bridge's topic).
    command = [sys.executable, '-m', 'tendon_robot_sim.cli', 'replay', str(bag), '--delay',
               '6.0']
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    # Stands for the bridge: what the replay can see of it is its name and subscription.
    with spinning_node('hardware_bridge', subscribe):
        # By default the setpoints go to replay/tendon/setpoint, bridge or not.
        result = subprocess.run(command[:-1] + ['0.5'], capture_output=True, text=True,
                                env=env, timeout=COMMAND_TIMEOUT)
        assert result.returncode == 0 and 'published 5 messages' in result.stdout
        # Onto the bridge's topic: refused while it is there, as soon as the bridge is seen:
        # within the longest --delay, not after it (a user waited out the whole delay)
        onto_bridge = ['--setpoint-topic', topics.TENDON_SETPOINT.name]
        started = time.monotonic()
        result = subprocess.run(command[:-1] + [str(DELAYS[1])] + onto_bridge,
                                capture_output=True, text=True, env=env,
                                timeout=COMMAND_TIMEOUT)
        assert result.returncode == 2
        assert '/hardware_bridge subscribes to /tendon/setpoint' in result.stderr
        assert time.monotonic() - started < DELAYS[1], 'refused only after the whole --delay'
        time.sleep(0.3)
        assert received == []
        # Allowed, the replay publishes after its --delay whether or not it has matched the
        # bridge yet (as ros2 bag play does).
        allowed = command + onto_bridge + ['--allow-hardware']
        result = subprocess.run(allowed, capture_output=True, text=True, env=env,
                                timeout=COMMAND_TIMEOUT)
        assert result.returncode == 0, result.stderr
        # the replay waited for the bridge's acknowledgements before it ended
        assert 'acknowledged' not in result.stderr, result.stderr
        try:
            wait_for(lambda: len(received) == 5, 'the allowed setpoints')
        except AssertionError as error:   # none: not matched within the delay; some: lost
            raise AssertionError(f'{error}: {len(received)} of 5 arrived; the replay said '
                                 f'{result.stdout!r}') from None


def test_setpoints_recorded_in_a_namespace_stay_away_from_its_hardware_bridge(tmp_path):
    """
    A stack launched in a namespace records /left_arm/tendon/setpoint; its bridge listens there.

    The replay published them on that recorded name, unguarded: the real robot moved.
    """
    bag = tmp_path / 'bag'
    _setpoint_bag(bag, namespace='/left_arm/')
    received, replayed = [], []
    context = rclpy.Context()
    rclpy.init(context=context)
    bridge = rclpy.create_node('hardware_bridge', namespace='left_arm', context=context)
    bridge.create_subscription(JointState, topics.TENDON_SETPOINT.name, received.append,
                               topics.TENDON_SETPOINT.qos)
    listener = rclpy.create_node('listener', namespace='left_arm', context=context)
    listener.create_subscription(JointState, 'replay/' + topics.TENDON_SETPOINT.name,
                                 replayed.append, topics.TENDON_SETPOINT.qos)
    command = [sys.executable, '-m', 'tendon_robot_sim.cli', 'replay', str(bag), '--delay',
               '6.0']
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    with spinning(bridge, listener, context=context):
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                timeout=COMMAND_TIMEOUT)
        assert result.returncode == 0 and 'published 5 messages' in result.stdout
        # in the recorded namespace, under replay/ as for a bag without a namespace
        wait_for(lambda: len(replayed) == 5, 'the setpoints on left_arm/replay/tendon/setpoint')
        assert received == []
        result = subprocess.run(command + ['--setpoint-topic', topics.TENDON_SETPOINT.name],
                                capture_output=True, text=True, env=env,
                                timeout=COMMAND_TIMEOUT)
        assert result.returncode == 2
        assert '/left_arm/hardware_bridge subscribes to /left_arm/tendon/setpoint' \
            in result.stderr
    assert received == []


def test_the_wait_for_acknowledgements_docs_state_is_the_codes():
    from tendon_robot_sim.commands.replay import DELIVERY_TIMEOUT

    text = ' '.join((ROOT / 'docs' / 'experiments.md').read_text().split())
    assert f'replay waits up to {DELIVERY_TIMEOUT:g} s for every reliable subscriber' in text


def _robot_copy(tmp_path, changes):
    """Write the default robot file with its text changed ({old: new}); return its path."""
    text = default_robot_file().read_text()
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / 'robot.yaml'
    path.write_text(text)
    return path


TENDONS = 't0, t1, t2, t3'
RENAMED = {f'name: t{i}': f'name: {new}' for i, new in enumerate('abcd')}


@pytest.mark.parametrize('robot, unnamed, problem', [
    pytest.param('config/pcr_6rus.yaml', False,
                 f"name: {TENDONS} not among the robot's motors (motor_1, ", id='another kind'),
    pytest.param(RENAMED, False, f"name: {TENDONS} not among the robot's tendons (a, b, c, d)",
                 id='other names'),
    pytest.param('config/planar_robot.yaml', False,
                 'name: has 4 entries; the robot has 2 tendons (t0, t1)', id='fewer tendons'),
    pytest.param('config/planar_robot.yaml', True,
                 'effort: has 4 values without names; the robot has 2 tendons: one each',
                 id='unnamed, fewer tendons'),
    pytest.param('config/pcr_6rus.yaml', True,
                 'effort: the robot takes position (motor angle',
                 id='unnamed, other field'),
])
def test_replay_into_simulation_refuses_a_robot_the_recorded_setpoints_do_not_fit(
        tmp_path, capsys, robot, unnamed, problem):
    """
    Another kind, other tendon names, fewer tendons: refused before anything is replayed.

    The simulator would reject every setpoint: the replay moved nothing, with exit 0.
    """
    bag = tmp_path / 'bag'
    _setpoint_bag(bag, names=[] if unnamed else None)
    robot = _robot_copy(tmp_path, robot) if isinstance(robot, dict) else ROOT / robot
    assert main(['replay', str(bag), '--simulate', '--robot', str(robot), '--delay', '0']) == 2
    output = capsys.readouterr()
    assert 'replaying' not in output.out
    assert output.err.startswith(
        f'tendon-robot-sim replay: error: --robot: {robot} does not fit 5 of the 5 recorded '
        f'/tendon/setpoint messages: {problem}')
    assert output.err.count('\n') == 1


def test_replay_into_simulation_refuses_a_robot_the_quasi_static_simulator_cannot_run(
        tmp_path, capsys):
    """
    A bellows robot: refused naming --robot and the simulator's mode, before anything is replayed.

    It said ``--simulate: mode: must be one of ['cc_dynamic'] ..., got 'quasi_static'``: a
    mode the command sets itself and no option changes, with no word of --robot.
    """
    bag = tmp_path / 'bag'
    _setpoint_bag(bag)
    robot = ROOT / 'config' / 'bionic_handling_assistant.yaml'
    assert main(['replay', str(bag), '--simulate', '--robot', str(robot), '--delay', '0']) == 2
    output = capsys.readouterr()
    assert 'replaying' not in output.out and output.err.count('\n') == 1, output.err
    assert output.err.startswith(
        f'tendon-robot-sim replay: error: --robot: {robot}: replay --simulate runs the '
        'quasi-static simulator (mode quasi_static), which this robot does not take: a '
        'bellows-actuated continuum robot is simulated in mode cc_dynamic'), output.err
    # a file no model takes is the option's too
    (tmp_path / 'kind.yaml').write_text('kind: nothing\n')
    assert main(['replay', str(bag), '--simulate', '--robot', str(tmp_path / 'kind.yaml'),
                 '--delay', '0']) == 2
    assert capsys.readouterr().err.startswith(
        f"tendon-robot-sim replay: error: --robot: {tmp_path / 'kind.yaml'}: kind: must be one "
        'of')


def test_replay_into_simulation_takes_a_robot_with_more_tendons_than_the_setpoints_name(
        tmp_path, capsys):
    """The fifth tendon, which no setpoint names, holds (at zero tension)."""
    bag = tmp_path / 'bag'
    _simulation_bag(bag)
    t3 = '  - {name: t3, offset: 0.015, angle_deg: 270.0, routing: parallel, max_tension: 20.0}'
    robot = _robot_copy(tmp_path, {t3: t3 + '\n' + t3.replace('t3', 't4').replace('270', '45')})
    assert main(['replay', str(bag), '--simulate', '--robot', str(robot), '--delay', '0']) == 0
    output = capsys.readouterr()
    assert 'published 4 messages' in output.out and 'rejected' not in output.err


def test_replay_into_simulation_fails_when_the_simulator_rejects_every_setpoint(
        tmp_path, capsys):
    """What only the values show (3 N on a robot of 1 N) is found as the simulator runs."""
    bag = tmp_path / 'bag'
    _setpoint_bag(bag)
    robot = _robot_copy(tmp_path, {'max_tension: 20.0': 'max_tension: 1.0'})
    assert main(['replay', str(bag), '--simulate', '--robot', str(robot), '--delay', '0']) == 2
    error = capsys.readouterr().err
    assert error.startswith('tendon-robot-sim replay: error: --simulate: the simulator rejected '
                            'every setpoint it took (')
    assert 'so nothing moved; the first: tensions[t0]: must be <= max_tension = 1 N, got 3' \
        in error


def test_replay_into_simulation_refuses_setpoints_of_another_type(tmp_path, capsys):
    bag = tmp_path / 'bag'
    with BagWriter(bag) as writer:
        writer.add_topic('/' + topics.TENDON_SETPOINT.name, 'geometry_msgs/msg/PointStamped',
                         OfferedQos())
        writer.write('/' + topics.TENDON_SETPOINT.name, T0, serialize_message(PointStamped()))
    assert main(['replay', str(bag), '--simulate', '--delay', '0']) == 2
    assert capsys.readouterr().err == (
        f'tendon-robot-sim replay: error: --simulate: /tendon/setpoint of {bag} is '
        'geometry_msgs/msg/PointStamped; the simulator takes sensor_msgs/msg/JointState\n')


def test_a_replay_into_simulation_ends_once_the_simulator_took_the_last_setpoint(monkeypatch):
    """
    The simulator judges, and its outputs end with, the last setpoint the replay delivered.

    The replay waited for the simulator to take one setpoint, then stopped it: a simulator
    held up (a loaded machine, a first solve) took the bag's 0 N and not its last, 2 N, whose
    tip a replay into simulation ends on. Here the simulator is spun by the test alone: it
    has taken the first when the last is delivered, and none after.
    """
    from rclpy.duration import Duration
    import tendon_robot_sim.ros.spinner as spinner
    from tendon_robot_sim.commands.replay import _Simulation

    class NotSpinning:
        def __init__(self, executor):
            self.executor = executor

        def stop(self, timeout=10.0, drain=None):
            if drain is not None:
                drain()
            self.executor.shutdown()
    monkeypatch.setattr(spinner, 'BackgroundSpinner', NotSpinning)
    names = load_robot(default_robot_file()).tendon_names
    rclpy.init()
    try:
        simulation = _Simulation(default_robot_file(), 'discrete', '/tendon/setpoint')
        node, executor = simulation.node, simulation.executor
        player = rclpy.create_node('setpoint_player')
        publisher = player.create_publisher(JointState, topics.TENDON_SETPOINT.name,
                                            topics.TENDON_SETPOINT.qos)
        wait_for(lambda: publisher.get_subscription_count() >= 1, 'the simulator to subscribe')
        publisher.publish(JointState(name=names, effort=[0.0] * 4))
        deadline = time.monotonic() + TIMEOUT
        while node.setpoints_applied < 1 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        publisher.publish(JointState(name=names, effort=[2.0, 0.0, 0.0, 0.0]))
        assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT))
        assert node.setpoints_applied == 1      # the last waits: a run stopped now lost it
        simulation.finish(published=2)
        assert node.setpoints_applied == 2
        player.destroy_node()
        simulation.close()
    finally:
        rclpy.try_shutdown()
