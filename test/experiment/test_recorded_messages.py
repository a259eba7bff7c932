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
What a recording's messages say, read as the stack took them: duplicates, partial setpoints.

Real rosbag2 bags, written with the project's BagWriter.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos
from tendon_robot_sim.experiment.experiment import ExperimentError, load_recording
from tendon_robot_sim.models.sim_model import Inputs
from tendon_robot_sim.models.tendon_robot import load_robot

SETPOINT, STATE, TIP = '/tendon/setpoint', '/tendon/state', '/tip/measured'
START_NS = 10 ** 9
PERIOD_NS = 10 ** 7     # 100 Hz


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def _bag(path, rows):
    """Write ``rows`` of (topic, receive stamp ns, serialize(messages) -> bytes) as a bag."""
    with BagWriter(path) as bag:
        messages = BagMessages(bag.typestore)
        bag.add_topic(SETPOINT, 'sensor_msgs/msg/JointState', OfferedQos())
        bag.add_topic(STATE, 'sensor_msgs/msg/JointState', OfferedQos())
        bag.add_topic(TIP, 'geometry_msgs/msg/PointStamped', OfferedQos())
        for topic, stamp, serialize in sorted(rows, key=lambda row: row[1]):
            bag.write(topic, stamp, serialize(messages))


def _tip_row(i, step):
    stamp = START_NS + i * PERIOD_NS
    return (TIP, stamp + 1000,
            lambda m: m.point(stamp, 'base_link', (0.2, -0.01 * step, 0.0)))


def test_exact_duplicates_count_once_in_a_holds_averages(robot, tmp_path):
    """
    1.5 s at 0 N, then 1.5 s at 2 N on t1; the state's efforts alternate +-0.1 N about 0.5 N.

    Every other state message (the +0.1 N ones) and every third tip are recorded twice (a
    second recorder: the same header stamp and data, received 300 ns later). Counted twice,
    they pulled the first hold's mean to 0.5 + 0.1 / 3 N. Once each, the 150 states of
    each hold (stamped with its tips: all inside the steady part) average exactly the
    setpoint's 0.5 N and 2 N, and the hold has its 150 tip samples.
    """
    names = robot.tendon_names
    rows = []
    for i in range(300):
        stamp = START_NS + i * PERIOD_NS
        step = i >= 150
        effort = np.where(np.arange(len(names)) == 1, 2.0 * step, 0.0)
        applied = np.maximum(effort, 0.5) + 0.1 * (-1) ** i

        def state(m, stamp=stamp, applied=applied):
            return m.joint_state(stamp, names, position=[0.0] * len(names), effort=applied)
        rows.append((SETPOINT, stamp,
                     lambda m, s=stamp, e=effort: m.joint_state(s, names, effort=e)))
        rows += [(STATE, stamp + 1000, state), _tip_row(i, step)]
        if i % 2 == 0:
            rows.append((STATE, stamp + 1300, state))
        if i % 3 == 0:
            topic, received, tip = _tip_row(i, step)
            rows.append((topic, received + 300, tip))
    _bag(tmp_path / 'bag', rows)
    holds = load_recording(tmp_path / 'bag', robot)
    # sums of 150 numbers near 1: rounding far below 1e-12 N
    np.testing.assert_allclose([hold.tensions for hold in holds],
                               [[0.5, 0.5, 0.5, 0.5], [0.5, 2.0, 0.5, 0.5]], rtol=0, atol=1e-12)
    assert [hold.samples for hold in holds] == [150, 150]


def test_repeats_without_a_header_stamp_all_count(robot, tmp_path):
    """An unstamped message (stamp 0) cannot be told from a repeat of itself: each counts."""
    names = robot.tendon_names
    rows = []
    for i in range(200):
        stamp = START_NS + i * PERIOD_NS
        applied = [0.5 + 0.3 * (i < 50)] * len(names)
        rows += [(SETPOINT, stamp, lambda m, s=stamp: m.joint_state(s, names, effort=[0.0] * 4)),
                 (STATE, stamp + 1000, lambda m, a=applied: m.joint_state(0, names, effort=a)),
                 _tip_row(i, False)]
    _bag(tmp_path / 'bag', rows)
    (hold,) = load_recording(tmp_path / 'bag', robot)
    # 50 of 0.8 N and 150 of 0.5 N, all in the steady part
    np.testing.assert_allclose(hold.tensions, [0.575] * 4, rtol=0, atol=1e-12)


def _partial_bag(path, names, first):
    """1.5 s at rest, then 1.5 s with t1 at 2 N; after the first setpoint only t1 is named."""
    rows = []
    for i in range(300):
        stamp = START_NS + i * PERIOD_NS
        step = i >= 150
        named = first if i == 0 else ['t1']
        effort = [2.0 * step if name == 't1' else 0.0 for name in named]
        rows += [(SETPOINT, stamp, lambda m, s=stamp, n=named, e=effort: m.joint_state(
            s, n, effort=e)), _tip_row(i, step)]
    _bag(path, rows)


def test_a_tendon_a_setpoint_leaves_out_holds_its_last_setpoint(robot, tmp_path):
    """
    The simulator holds an unnamed tendon's last value; the experiment tools read it so.

    The stack's rule (Inputs.check, which the simulator node applies to every setpoint)
    takes a setpoint naming t1 alone: such a bag was refused ('tendon t0 missing').
    """
    assert Inputs(tuple(robot.tendon_names), {'effort': 'tension [N]'},
                  'tendons').check(['t1'], {'effort': 1}) == 'effort'
    _partial_bag(tmp_path / 'bag', robot.tendon_names, robot.tendon_names)
    holds = load_recording(tmp_path / 'bag', robot)
    np.testing.assert_allclose([hold.tensions for hold in holds], [[0, 0, 0, 0], [0, 2, 0, 0]])


def test_a_tendon_without_any_setpoint_yet_is_refused_by_name(robot, tmp_path):
    path = tmp_path / 'bag'
    _partial_bag(path, robot.tendon_names, ['t1', 't2', 't3'])
    with pytest.raises(ExperimentError) as error:
        load_recording(path, robot)
    assert str(error.value) == (f"{path}: tendon/setpoint at 0.000 s: tendon 't0' missing, "
                                "and no setpoint before gives it (names: ['t1', 't2', 't3'])")


def test_a_part_of_a_bag_starts_under_the_command_in_force(robot, tmp_path):
    """
    A controller that publishes on change: one setpoint at 0 s (rest), one at 1.5 s (t1 2 N).

    The part from 2 s to 2.9 s of the bag holds no setpoint: its tips follow the one of
    1.5 s, the last before the part, as the robot did.
    """
    rows = [(SETPOINT, START_NS + int(t * 1e9), lambda m, t=t, e=e: m.joint_state(
        START_NS + int(t * 1e9), robot.tendon_names, effort=e))
        for t, e in ((0.0, [0.0] * 4), (1.5, [0.0, 2.0, 0.0, 0.0]))]
    rows += [_tip_row(i, i >= 150) for i in range(300)]
    _bag(tmp_path / 'bag', rows)
    (hold,) = load_recording(tmp_path / 'bag', robot, hold_time=0.5, window=(2.0, 2.9))
    np.testing.assert_allclose(hold.tensions, [0, 2, 0, 0])
    # the tips from 2 s to 2.9 s of the bag (its first message at 0 s), 10 ms apart
    assert (hold.start, hold.samples) == (pytest.approx(2.0, abs=1e-5), 90)
    samples = load_recording(tmp_path / 'bag', robot, points='samples', window=(2.0, 2.9))
    np.testing.assert_allclose([s.tensions for s in samples], [[0, 2, 0, 0]] * 90)
