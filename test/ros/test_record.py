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

"""``tendon-robot-sim record``: a real recorder process, a real publisher, the bag read back."""

from contextlib import contextmanager
from pathlib import Path
import re
import signal
import subprocess
import sys
import time

from geometry_msgs.msg import PointStamped
import pytest
import rclpy
from rclpy.duration import Duration
from ros_helpers import TIMEOUT, wait_for
from sensor_msgs.msg import JointState
from tendon_robot_sim.cli import main
from tendon_robot_sim.experiment.bag import bag_topics, read_messages
from tendon_robot_sim.ros import topics
from waiting import COMMAND_TIMEOUT, first_line


@contextmanager
def _node_of_its_own(name, namespace=''):
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node(name, namespace=namespace, context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        context.try_shutdown()


@pytest.fixture
def node():
    with _node_of_its_own('record_test_publisher') as node:
        yield node


def _publishers(node, *stack_topics):
    """Return a publisher of each of ``stack_topics`` (ros.topics entries) by resolved name."""
    made = [node.create_publisher(topic.msg_type, topic.name, topic.qos) for topic in stack_topics]
    return {publisher.topic_name: publisher for publisher in made}


def _start(out, *options):
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'record', str(out), *options],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first_line(process, 'recording ')
    return process


def _publish(node, publishers, count):
    """
    Publish ``count`` messages on each of ``publishers`` once the recorder listens to all of them.

    Return the values sent, per topic. The topics are RELIABLE: the first message, and then
    every few (fewer than a publisher's history keeps, so none is replaced unacknowledged),
    are published once the recorder acknowledged the ones before. What it gets is waited
    for, not given a fixed time; its own side of the match is part of the first wait.
    """
    wait_for(lambda: all(p.get_subscription_count() >= 1 for p in publishers.values()),
             'the recorder to subscribe')
    every = min(p.qos_profile.depth for p in publishers.values()) - 1
    sent = {name: [] for name in publishers}
    for i in range(count):
        for name, publisher in publishers.items():
            if publisher.msg_type is JointState:
                msg = JointState(name=['t0', 't1'], effort=[0.5 * i, 1.0])
                sent[name].append(list(msg.effort))
            else:
                msg = PointStamped()
                msg.point.x, msg.point.z = 0.001 * i, 0.3
                sent[name].append([msg.point.x, msg.point.z])
            publisher.publish(msg)
        if i % every == 0 or i == count - 1:
            for name, publisher in publishers.items():
                assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT)), \
                    f'the recorder did not acknowledge {name} up to message {i}'
    return sent


def _received(bag):
    got = {}
    for topic, _, msg in read_messages(bag):
        values = list(msg.effort) if hasattr(msg, 'effort') else [msg.point.x, msg.point.z]
        got.setdefault(topic, []).append(values)
    return got


def test_records_the_contract_until_ctrl_c(tmp_path, node):
    out = tmp_path / 'bag'
    process = _start(out)
    try:
        # tip_state: the tensions at the anchors of a model with friction (a bag left them out)
        sent = _publish(node, _publishers(node, topics.TENDON_COMMAND, topics.TIP_MEASURED,
                                          topics.TENDON_TIP_STATE), 10)
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=TIMEOUT)[0]
    assert process.returncode == 0, output
    assert 'bag: ' in output and '/tip/measured 10' in output
    assert _received(out) == sent
    recorded = bag_topics(out)
    assert len(recorded) == 16
    for topic in topics.TOPICS + (topics.TIP_MEASURED, topics.TIP_TARGET,
                                  topics.TENDON_DISPLACEMENT_COMMAND, topics.TIP_WRENCH,
                                  topics.TENDON_TIP_STATE,
                                  topics.TF_STATIC) + topics.CONTACT_TOPICS:
        assert recorded['/' + topic.name.lstrip('/')] == topics.type_name(topic.msg_type)
    assert len(list(out.glob('*.mcap'))) == 1


def test_records_chosen_topics_to_sqlite3_until_sigterm(tmp_path, node):
    out = tmp_path / 'bag'
    process = _start(out, '--storage', 'sqlite3', '--topics', 'tip/measured', 'tendon/state')
    try:
        sent = _publish(node, _publishers(node, topics.TIP_MEASURED), 5)
        # not recorded: a topic that was not chosen
        other = node.create_publisher(JointState, topics.TENDON_COMMAND.name,
                                      topics.TENDON_COMMAND.qos)
        other.publish(JointState(name=['t0'], effort=[1.0]))
    finally:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=TIMEOUT)[0]
    assert process.returncode == 0, output
    # a topic chosen by name that nothing published is said, not left to the counts
    assert 'warning: no publisher ever on /tendon/state\n' in output
    assert bag_topics(out) == {'/tip/measured': 'geometry_msgs/msg/PointStamped',
                               '/tendon/state': 'sensor_msgs/msg/JointState'}
    assert _received(out) == sent
    assert len(list(out.glob('*.db3'))) == 1


def test_a_tip_marker_latched_before_the_recording_reaches_calibration(tmp_path, node):
    """
    /tf_static could not be recorded: a rig's tip marker (a static transform) was lost.

    The marker is published, latched, before the recorder starts, as a static transform
    publisher does; the recorder must ask for it transient local to get it at all. The bag is
    then read as an experiment, as ``calibrate`` and ``validate`` read it.
    """
    from geometry_msgs.msg import TransformStamped
    from tendon_robot_sim.experiment.experiment import read_recording
    from tendon_robot_sim.models.tendon_robot import load_robot
    from tf2_msgs.msg import TFMessage
    marker = TransformStamped()
    marker.header.frame_id, marker.child_frame_id = 'tip_link', 'tip_marker'
    marker.transform.translation.x, marker.transform.translation.z = 0.002, 0.004
    marker.transform.rotation.w = 1.0
    static = node.create_publisher(TFMessage, topics.TF_STATIC.name, topics.TF_STATIC.qos)
    static.publish(TFMessage(transforms=[marker]))
    out = tmp_path / 'bag'
    process = _start(out, '--topics', 'tendon/setpoint', 'tip/measured', '/tf_static')
    try:
        wait_for(lambda: static.get_subscription_count() >= 1, 'the recorder to match /tf_static')
        assert static.wait_for_all_acked(Duration(seconds=TIMEOUT)), \
            'the recorder did not acknowledge the latched /tf_static'
        publishers = _publishers(node, topics.TENDON_SETPOINT, topics.TIP_MEASURED)
        wait_for(lambda: all(p.get_subscription_count() >= 1 for p in publishers.values()),
                 'the recorder to subscribe')
        for i in range(3):
            tip = PointStamped()
            tip.point.z = 0.3
            publishers['/tendon/setpoint'].publish(
                JointState(name=['t0', 't1', 't2', 't3'], effort=[float(i), 0.0, 0.0, 0.0]))
            publishers['/tip/measured'].publish(tip)
        for name, publisher in publishers.items():
            assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT)), name
    finally:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=TIMEOUT)[0]
    assert process.returncode == 0, output
    assert '/tf_static 1' in output
    robot = load_robot(Path(__file__).parents[2] / 'config' / 'robot.yaml')
    recording = read_recording(out, robot)
    assert recording.tip_marker == pytest.approx([0.002, 0.0, 0.004], abs=1e-12)


def test_records_a_stack_in_a_namespace(tmp_path):
    """A stack launched with namespace:=left_arm: record had no way to record its topics."""
    out = tmp_path / 'bag'
    with _node_of_its_own('stack', 'left_arm') as stack:
        process = _start(out, '--namespace', 'left_arm', '--topics', 'tendon/setpoint',
                         'tip/measured', '/tf')
        try:
            sent = _publish(stack, _publishers(stack, topics.TENDON_SETPOINT,
                                               topics.TIP_MEASURED), 5)
        finally:
            process.send_signal(signal.SIGINT)
            output = process.communicate(timeout=TIMEOUT)[0]
    assert process.returncode == 0, output
    assert bag_topics(out) == {'/left_arm/tendon/setpoint': 'sensor_msgs/msg/JointState',
                               '/left_arm/tip/measured': 'geometry_msgs/msg/PointStamped',
                               '/tf': 'tf2_msgs/msg/TFMessage'}
    assert _received(out) == sent


def test_a_stop_records_what_dds_had_delivered(tmp_path, node):
    """Acknowledged messages not yet taken when the stop comes are recorded before the close."""
    from rclpy.executors import SingleThreadedExecutor
    from tendon_robot_sim.commands.record import _drain
    from tendon_robot_sim.ros.recorder import BagRecorder
    recorder = BagRecorder(tmp_path / 'bag', [topics.TIP_MEASURED], context=node.context)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(recorder)      # not spun: the stop comes before it takes anything
    try:
        publisher = node.create_publisher(PointStamped, topics.TIP_MEASURED.name,
                                          topics.TIP_MEASURED.qos)
        wait_for(lambda: publisher.get_subscription_count() >= 1, 'the recorder to subscribe')
        for _ in range(3):
            publisher.publish(PointStamped())
        assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT))
        assert recorder.counts == {'/tip/measured': 0}
        _drain(executor, recorder)
        assert recorder.counts == {'/tip/measured': 3}
    finally:
        executor.shutdown()
        recorder.close()
        recorder.destroy_node()


def test_a_stop_records_what_dds_had_delivered_while_its_publishers_came_and_went(
        tmp_path, node):
    """
    The last messages of a stack stopped with the recorder are recorded.

    A stack and its recorder stopped together (one Ctrl-C for both): each recorded topic's
    publisher leaves as its last messages arrive. The executor runs the recorder's event
    callbacks (publisher matched or gone) before its subscriptions; the drain stopped after
    three callbacks that recorded nothing and closed the bag without the delivered messages.
    Here the recorder is not spun: the matches of four topics wait beside two messages each.
    """
    from rclpy.executors import SingleThreadedExecutor
    from tendon_robot_sim.commands.record import _drain
    from tendon_robot_sim.ros.recorder import BagRecorder
    chosen = (topics.TIP_MEASURED, topics.TENDON_STATE, topics.TENDON_COMMAND,
              topics.TENDON_SETPOINT)
    recorder = BagRecorder(tmp_path / 'bag', chosen, context=node.context)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(recorder)      # not spun: the stop comes before it takes anything
    try:
        publishers = _publishers(node, *chosen)
        wait_for(lambda: all(p.get_subscription_count() >= 1 for p in publishers.values()),
                 'the recorder to subscribe')
        for publisher in publishers.values():
            for _ in range(2):
                publisher.publish(publisher.msg_type())
        for name, publisher in publishers.items():
            assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT)), name
        _drain(executor, recorder)
        assert recorder.counts == dict.fromkeys(publishers, 2)
    finally:
        executor.shutdown()
        recorder.close()
        recorder.destroy_node()


def test_a_burst_waits_in_the_recorder_while_it_is_busy(tmp_path, node):
    """
    A burst of states is recorded whole though the recorder takes none of it meanwhile.

    Its subscriptions kept the topics' own history (5): a recorder whose thread was busy
    writing, or held up by a loaded machine, for more than 5 messages of a topic (25 ms of
    200 Hz states) recorded the last 5 of them.
    """
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import HistoryPolicy, QoSProfile
    from tendon_robot_sim.commands.record import _drain
    from tendon_robot_sim.ros.recorder import BagRecorder
    recorder = BagRecorder(tmp_path / 'bag', [topics.TENDON_STATE], context=node.context)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(recorder)      # not spun while the burst comes
    try:
        # the publisher keeps them all until acknowledged: only the recorder's side is tested
        publisher = node.create_publisher(JointState, topics.TENDON_STATE.name, QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=200,
            reliability=topics.TENDON_STATE.qos.reliability))
        wait_for(lambda: publisher.get_subscription_count() >= 1, 'the recorder to subscribe')
        for i in range(100):
            publisher.publish(JointState(name=['t0'], effort=[0.01 * i]))
        assert publisher.wait_for_all_acked(Duration(seconds=TIMEOUT))
        _drain(executor, recorder)
        assert recorder.counts == {'/tendon/state': 100}
    finally:
        executor.shutdown()
        recorder.close()
        recorder.destroy_node()
    assert [values[0] for values in _received(tmp_path / 'bag')['/tendon/state']] == \
        pytest.approx([0.01 * i for i in range(100)])


def test_a_run_ends_once_the_bag_holds_the_tip_its_driver_saw_last(tmp_path, node):
    """
    The demo's bag holds the last tip pose it tabled: it waits for the recorder to record it.

    The recorder and the demo's driver take each tip pose in two callbacks of one executor;
    on a loaded machine (CI beside other work) the run ended with the last pose taken by the
    driver, tabled, and still queued for the recorder: the bag lacked the tip target's row.
    Here the driver is spun alone first, so the recorder has taken none when the wait starts.
    """
    from geometry_msgs.msg import PoseStamped
    from rclpy.executors import SingleThreadedExecutor
    from tendon_robot_sim.ros.demo import wait_recorded
    from tendon_robot_sim.ros.recorder import BagRecorder
    recorder = BagRecorder(tmp_path / 'bag', [topics.TIP_POSE], context=node.context)
    driver = rclpy.create_node('demo_driver_stand_in', context=node.context)
    seen = []
    driver.create_subscription(PoseStamped, topics.TIP_POSE.name, seen.append,
                               topics.TIP_POSE.qos)
    spun_alone = SingleThreadedExecutor(context=node.context)
    spun_alone.add_node(driver)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(recorder)
    try:
        publisher = node.create_publisher(PoseStamped, topics.TIP_POSE.name, topics.TIP_POSE.qos)
        wait_for(lambda: publisher.get_subscription_count() >= 2, 'both to subscribe')
        for second in (1, 2, 3):
            pose = PoseStamped()
            pose.header.stamp.sec, pose.pose.position.x = second, 0.01 * second
            publisher.publish(pose)
        deadline = time.monotonic() + TIMEOUT
        while len(seen) < 3 and time.monotonic() < deadline:
            spun_alone.spin_once(timeout_sec=0.05)
        assert [msg.header.stamp.sec for msg in seen] == [1, 2, 3]
        assert recorder.last(topics.TIP_POSE) is None     # what a run ended now had lost
        assert wait_recorded(executor, recorder, topics.TIP_POSE, 3.0, TIMEOUT, lambda: None)
        assert recorder.last(topics.TIP_POSE).pose.position.x == pytest.approx(0.03)
    finally:
        for each in (spun_alone, executor):
            each.shutdown()
        recorder.close()
        recorder.destroy_node()
        driver.destroy_node()
    assert [msg.pose.position.x for _, _, msg in read_messages(tmp_path / 'bag')] == \
        pytest.approx([0.01, 0.02, 0.03])


def test_a_recording_without_a_message_is_no_result_and_names_the_silent_topics(tmp_path):
    """
    No publisher on the recorded topic: the bag was empty and the exit 0, as of a recording.

    --duration ends it by itself (a recorder that ignored it runs into COMMAND_TIMEOUT), and
    not before its time; how much later is the machine's load. The bag is kept, complete.
    """
    out = tmp_path / 'bag'
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'record', str(out), '--duration', '0.5',
         '--topics', 'tendon/state'], capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert time.monotonic() - start >= 0.5
    assert result.stderr.splitlines() == [
        f'tendon-robot-sim record: error: no message recorded: no publisher ever on '
        f'/tendon/state (the bag {out} is kept, empty)'], result.stderr
    assert bag_topics(out) == {'/tendon/state': 'sensor_msgs/msg/JointState'}
    assert _received(out) == {}


def test_no_message_names_the_topics_whose_publisher_sent_nothing(tmp_path, node):
    """
    A publisher that sent nothing: the line said 'their publishers sent nothing', no topic.

    In the recorder's own process, so that its side of the match is waited for, not guessed.
    """
    from rclpy.executors import SingleThreadedExecutor
    from tendon_robot_sim.ros.recorder import BagRecorder
    recorder = BagRecorder(tmp_path / 'bag', [topics.TENDON_STATE, topics.TIP_MEASURED],
                           context=node.context)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(recorder)
    try:
        node.create_publisher(JointState, topics.TENDON_STATE.name, topics.TENDON_STATE.qos)
        wait_for(lambda: executor.spin_once(timeout_sec=0.02) or '/tendon/state' in
                 recorder.silence(), 'the recorder to see the publisher')
        assert recorder.silence() == ('no publisher ever on /tip/measured; a publisher but no '
                                      'message on /tendon/state')
        node.create_publisher(PointStamped, topics.TIP_MEASURED.name, topics.TIP_MEASURED.qos)
        wait_for(lambda: executor.spin_once(timeout_sec=0.02) or 'no publisher' not in
                 recorder.silence(), 'the recorder to see the second publisher')
        assert recorder.silence() == ('a publisher but no message on /tendon/state, '
                                      '/tip/measured')
    finally:
        executor.shutdown()
        recorder.close()
        recorder.destroy_node()


def test_bad_arguments_are_refused(tmp_path, capsys):
    assert main(['record', str(tmp_path / 'a'), '--topics', 'tip/nowhere']) == 2
    assert "--topics: 'tip/nowhere' is not a topic of the stack" in capsys.readouterr().err
    assert main(['record', str(tmp_path), '--duration', '1']) == 2
    assert 'exists already' in capsys.readouterr().err
    assert main(['record', str(tmp_path / 'b'), '--duration', '-1']) == 2
    assert 'argument --duration: must be a finite number >= 0, got -1' in capsys.readouterr().err
    assert main(['record', str(tmp_path / 'c'), '--namespace', 'left arm']) == 2
    assert '--namespace: not a ROS namespace' in capsys.readouterr().err


def test_the_absolute_topics_the_help_names_can_be_recorded(capsys):
    """
    --namespace's help once said /tf and /tf_static are recorded as they are: /tf_static was not.

    Every topic the help names must be one ``--topics`` takes.
    """
    assert main(['record', '--help']) == 0
    text = ' '.join(capsys.readouterr().out.split())
    named = re.findall(r'(?<![\w/])(/[a-z_]+)\b', text)
    assert '/tf' in named and '/tf_static' in named
    for name in named:
        assert topics.find_topic(name) is not None, f'record --help names {name}'
