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

"""Holds from recordings and CSV files, and the synthetic experiment bag."""

import math

import numpy as np
import pytest
from rosbags.typesys import get_typestore, Stores

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.experiment.experiment import (ExperimentError, holds_from_messages,
                                                    load_recording, read_holds_csv,
                                                    synth_experiment)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

STORE = get_typestore(Stores.ROS2_KILTED)
JointState = STORE.types['sensor_msgs/msg/JointState']
PointStamped = STORE.types['geometry_msgs/msg/PointStamped']
Point = STORE.types['geometry_msgs/msg/Point']
Header = STORE.types['std_msgs/msg/Header']
Time = STORE.types['builtin_interfaces/msg/Time']


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def _header(stamp_ns):
    return Header(stamp=Time(sec=stamp_ns // 10 ** 9, nanosec=stamp_ns % 10 ** 9),
                  frame_id='base_link')


def _setpoint(stamp_ns, names, effort):
    return JointState(header=_header(stamp_ns), name=list(names), position=np.zeros(0),
                      velocity=np.zeros(0), effort=np.asarray(effort, dtype=float))


def _tip(stamp_ns, p):
    return PointStamped(header=_header(stamp_ns), point=Point(x=p[0], y=p[1], z=p[2]))


def test_hold_excludes_the_settling_transient_and_short_holds(robot):
    """
    A step at t = 2 s; the tip settles exponentially (tau 0.2 s) to a new point.

    The hold starts when the tip is within the tolerance (1 mm) of the settled point,
    and the 0.5 s stretch at the end, shorter than hold_time, is no hold.
    """
    names = robot.tendon_names
    rate, before, after = 100, np.array([0.24, 0.0, -0.07]), np.array([0.2, -0.1, -0.05])
    messages = []
    for i in range(int(5.5 * rate)):
        t = i / rate
        stamp = 10 ** 9 + int(t * 1e9)
        effort = [0, 0, 0, 0] if t < 2.0 else ([0, 3, 0, 0] if t < 5.0 else [1, 3, 0, 0])
        if t < 2.0:
            tip = before
        else:
            tip = after + (before - after) * math.exp(-(t - 2.0) / 0.2)
        setpoint = _setpoint(stamp, names[::-1], effort[::-1])   # names in another order
        messages.append(('/ns/tendon/setpoint', stamp, setpoint))
        messages.append(('/ns/tip/measured', stamp + 1000, _tip(stamp, tip)))
    holds = holds_from_messages(messages, names, hold_time=1.0, tip_tolerance=1e-3)
    assert len(holds) == 2
    np.testing.assert_allclose(holds[0].tensions, [0, 0, 0, 0])
    np.testing.assert_allclose(holds[0].tip, before, atol=1e-12)
    np.testing.assert_allclose(holds[1].tensions, [0, 3, 0, 0])
    # the transient is within 1 mm of the end point after 0.2 ln(|delta| / 1 mm) s
    settle = 0.2 * math.log(np.linalg.norm(before - after) / 1e-3)
    assert holds[1].start == pytest.approx(2.0 + settle, abs=0.02)
    assert holds[1].duration == pytest.approx(3.0 - settle, abs=0.02)
    # mean of the remaining transient: 1 mm x tau / duration
    offset = 1e-3 * 0.2 / holds[1].duration
    assert np.linalg.norm(holds[1].tip - after) == pytest.approx(offset, rel=0.05)


def test_command_missing_a_tendon_is_an_error(robot):
    messages = [('tendon/setpoint', 0, _setpoint(0, ['t0', 't1'], [1.0, 2.0])),
                ('tip/measured', 1, _tip(1, (0.2, 0.0, 0.0)))]
    with pytest.raises(ExperimentError, match=r"rec: tendon/setpoint at 0.000 s: tendon 't2' "
                                              r'missing'):
        holds_from_messages(messages, robot.tendon_names, source='rec')


def test_synthetic_bag_has_the_three_experiments(robot, tmp_path):
    """
    The bag holds the 15 planned holds.

    Each hold tip is the statics solution of the true robot plus the mean of 150 noise samples.
    """
    truth_robot = robot.with_changes(youngs_modulus=2.0e7)
    synth_experiment(tmp_path / 'bag', truth_robot, noise=1e-4, seed=3)
    holds = load_recording(tmp_path / 'bag', robot)
    expected = ([[0, 0, 0, 0]] + [[0, t, 0, 0] for t in (2, 4, 6)] + [[0, 0, 0, 0]]
                + [[0.4 * k, 0.6 * k, 0, 0] for k in range(1, 11)])
    assert len(holds) == len(expected)
    solver = StaticsSolver(truth_robot, 'discrete')
    for hold, tensions in zip(holds, expected):
        np.testing.assert_allclose(hold.tensions, tensions, atol=1e-12)
        assert hold.samples == 150 and hold.duration == pytest.approx(3.0)
        # 5 sigma of a 150-sample mean
        np.testing.assert_allclose(hold.tip, solver.solve_tensions(tensions).tip_position,
                                   atol=5 * 1e-4 / math.sqrt(150))


def test_csv_holds_are_read(robot, tmp_path):
    path = tmp_path / 'holds.csv'
    path.write_text('tip_x,t0,t1,t2,t3,tip_y,tip_z\n'
                    '0.24,0,0,0,0,0.001,-0.07\n'
                    '\n'
                    '0.2, 1.5,2,0,0.25,-0.1,-0.05\n')
    holds = read_holds_csv(path, robot)
    assert len(holds) == 2
    np.testing.assert_allclose(holds[1].tensions, [1.5, 2, 0, 0.25])
    np.testing.assert_allclose(holds[1].tip, [0.2, -0.1, -0.05])
    assert holds[0].displacements is None
    path.write_text('t0_displacement,t1_displacement,t2_displacement,t3_displacement,'
                    'tip_x,tip_y,tip_z\n0.004,0,-0.004,0,0.24,0,0.03\n')
    hold, = load_recording(path, robot)
    assert hold.tensions is None
    np.testing.assert_allclose(hold.displacements, [0.004, 0, -0.004, 0])


def test_csv_holds_are_read_as_a_table_after_blank_lines(robot, tmp_path):
    """
    Blank lines before the header, a quoted cell over two lines: the lines of the file.

    The header is the first line with a cell, as ``import`` reads a table: validate said
    "empty file; expected a header line" of a file of holds that began with a blank line.
    An error names the file's line, not the row's count: a quoted cell over two lines put
    the error after it one line early.
    """
    path = tmp_path / 'holds.csv'
    path.write_text('\n\nt0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2,0,0\n')
    hold, = read_holds_csv(path, robot)
    np.testing.assert_allclose(hold.tip, [0.2, 0, 0])
    path.write_text('\nt0,t1,t2,t3,tip_x,tip_y\n0,0,0,0,0.2,0\n')
    with pytest.raises(ExperimentError, match=r"holds.csv: line 2: column 'tip_z' missing"):
        read_holds_csv(path, robot)
    path.write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n"0\n",0,0,0,0.2,0,0\n0,0,0,x,0.2,0,0\n')
    with pytest.raises(ExperimentError, match=r"holds.csv: line 4, column 't3': 'x' is not"):
        read_holds_csv(path, robot)


@pytest.mark.parametrize('text, message', [
    ('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2,0,0\n0,x,0,0,0.2,0,0\n',
     r"holds.csv: line 3, column 't1': 'x' is not a number"),
    ('t0,t1,t2,t3,tip_x,tip_y\n0,0,0,0,0.2,0\n', r"holds.csv: line 1: column 'tip_z' missing"),
    ('t0,t1,t2,tip_x,tip_y,tip_z\n0,0,0,0.2,0,0\n', r"holds.csv: line 1: column 't3' missing"),
    ('t0,t1,t2,t3,t9,tip_x,tip_y,tip_z\n', r"holds.csv: line 1: unknown column 't9'"),
    ('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2,0\n',
     r'holds.csv: line 2: 6 values, header has 7 columns'),
    ('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,-1,0,0,0.2,0,0\n',
     r"holds.csv: line 2, column 't1': a tension must be >= 0 N, got -1 N$"),
    ('t0,t1,t2,t3,tip_x,tip_y,tip_z\n', r'holds.csv: no data lines'),
    # millimetres read as metres: validate found no equilibrium (exit 1), calibrate wrote E
    ('t0_displacement,t1_displacement,t2_displacement,t3_displacement,tip_x,tip_y,tip_z\n'
     '0,3,0,0,0.2,-0.05,0\n', r"holds.csv: line 2, column 't1_displacement': a displacement "
     r'must be within \[-0.25, 0.25\] m \(the rod length either way\), got 3 m$'),
    ('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,25,0.2,0,0\n',
     r"holds.csv: line 2, column 't3': a tension must be <= max_tension = 20 N of tendon 't3', "
     r'got 25 N$'),
])
def test_bad_csv_names_file_line_and_column(robot, tmp_path, text, message):
    path = tmp_path / 'holds.csv'
    path.write_text(text)
    with pytest.raises(ExperimentError, match=message):
        read_holds_csv(path, robot)


def test_missing_bag_is_a_clear_error(robot, tmp_path):
    with pytest.raises(ExperimentError, match='nothing'):
        load_recording(tmp_path / 'nothing', robot)


def test_holds_from_measured_tensions_average_the_noise(robot):
    """
    Without setpoints the holds come from tendon/state efforts, which are noisy.

    A noise of +-0.01 N stays one hold (STATE_TOLERANCE 0.05 N); its tension is the mean.
    """
    names = robot.tendon_names
    rng = np.random.default_rng(4)
    messages = []
    for i in range(300):
        stamp = i * 10 ** 7
        tension = (1.0 if i < 150 else 2.0) + rng.uniform(-0.01, 0.01)
        messages.append(('tendon/state', stamp, _setpoint(stamp, names, [0, tension, 0, 0])))
        messages.append(('tip/measured', stamp, _tip(stamp, (0.2, -0.01 * (1 + i // 150), 0))))
    holds = holds_from_messages(messages, names, hold_time=1.0)
    assert [h.samples for h in holds] == [150, 150]
    np.testing.assert_allclose([h.tensions[1] for h in holds], [1.0, 2.0], atol=0.003)


@pytest.mark.parametrize('topic, msgtype', [
    ('/tip/measured', 'std_msgs/msg/String'),
    ('/left/tendon/setpoint', 'geometry_msgs/msg/PointStamped'),   # in a namespace too
    ('/tf_static', 'std_msgs/msg/String'),
])
def test_a_recorded_topic_of_another_type_is_refused_naming_it(robot, tmp_path, topic, msgtype):
    """It failed deep in the reading, an internal error (exit 70) of calibrate and validate."""
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos
    from tendon_robot_sim.experiment.experiment import load_points

    path = tmp_path / 'bag'
    with BagWriter(path) as bag:
        messages = BagMessages(bag.typestore)
        wrong = {'std_msgs/msg/String': messages.text('x'),
                 'geometry_msgs/msg/PointStamped': messages.point(1, 'base_link', (0, 0, 0))}
        rows = {'/tendon/setpoint': ('sensor_msgs/msg/JointState',
                                     messages.joint_state(1, robot.tendon_names, effort=[0] * 4)),
                '/tip/measured': ('geometry_msgs/msg/PointStamped',
                                  messages.point(2, 'base_link', (0, 0, 0.2))),
                topic: (msgtype, wrong[msgtype])}
        for name, (kind, _) in rows.items():
            bag.add_topic(name, kind, OfferedQos())
        for stamp, (name, (_, data)) in enumerate(rows.items()):
            bag.write(name, 10 ** 9 + stamp, data)
    expected = 'geometry_msgs/msg/PointStamped' if 'tip' in topic else (
        'sensor_msgs/msg/JointState' if 'setpoint' in topic else 'tf2_msgs/msg/TFMessage')
    with pytest.raises(ExperimentError) as error:
        load_points(path, robot, 'samples')
    assert str(error.value) == f'{path}: {topic} of type {msgtype}, expected {expected}'


def _two_holds_bag(path, names, namespaces=('/',), applied=None, moved=None, tip_unit=1.0,
                   lost=None):
    """
    Write 1 s of 0 N then 1 s of 2 N on the second tendon, in each namespace, as a recording.

    The tip moves from (0.2, 0, 0) to (0.2, -0.01, 0) m with the step; 100 Hz. ``applied``:
    the tensions a stack applies for a setpoint's, reported on tendon/state (default: none).
    ``moved``: {name: namespace} of a topic recorded in that namespace instead; ``tip_unit``:
    the tip's unit [m] (a sensor publishing mm: 1e-3); ``lost``: the index of a tip sample
    whose x is NaN (a motion-capture marker lost from view).
    """
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos

    def topic(namespace, name):
        return (moved or {}).get(name, namespace) + name

    with BagWriter(path) as bag:
        messages = BagMessages(bag.typestore)
        for namespace in namespaces:
            bag.add_topic(topic(namespace, 'tendon/setpoint'), 'sensor_msgs/msg/JointState',
                          OfferedQos())
            bag.add_topic(topic(namespace, 'tip/measured'), 'geometry_msgs/msg/PointStamped',
                          OfferedQos())
            bag.add_topic(topic(namespace, 'tendon/state'), 'sensor_msgs/msg/JointState',
                          OfferedQos())
        for i in range(300):
            stamp = 10 ** 9 + i * 10 ** 7
            step = i >= 150
            effort = [0.0] * len(names)
            effort[1] = 2.0 * step
            for namespace in namespaces:
                bag.write(topic(namespace, 'tendon/setpoint'), stamp,
                          messages.joint_state(stamp, names, effort=effort))
                tip = np.array([math.nan if i == lost else 0.2, -0.01 * step, 0.0])
                bag.write(topic(namespace, 'tip/measured'), stamp + 1000,
                          messages.point(stamp, 'base_link', tip / tip_unit))
                if applied is not None:
                    bag.write(topic(namespace, 'tendon/state'), stamp + 500, messages.joint_state(
                        stamp, names, position=[0.0] * len(names), effort=applied(effort)))


def test_a_recording_of_a_stack_in_a_namespace_is_read(robot, tmp_path):
    """A stack launched with namespace:=left_arm records /left_arm/...: it had no setpoints."""
    _two_holds_bag(tmp_path / 'bag', robot.tendon_names, ['/left_arm/'])
    holds = load_recording(tmp_path / 'bag', robot)
    np.testing.assert_allclose([hold.tensions for hold in holds], [[0, 0, 0, 0], [0, 2, 0, 0]])
    np.testing.assert_allclose([hold.tip for hold in holds], [[0.2, 0, 0], [0.2, -0.01, 0]])


def test_a_recording_of_two_stacks_is_refused_naming_their_topics(robot, tmp_path):
    path = tmp_path / 'bag'
    _two_holds_bag(path, robot.tendon_names, ['/left_arm/', '/right_arm/'])
    with pytest.raises(ExperimentError) as error:
        load_recording(path, robot)
    assert str(error.value) == (f'{path}: holds tendon/setpoint in 2 namespaces '
                                '(/left_arm/tendon/setpoint, /right_arm/tendon/setpoint); '
                                "an experiment is one robot's")


def test_a_second_robots_topic_in_a_sibling_namespace_is_refused(robot, tmp_path):
    """
    /right_arm/tendon/state beside /left_arm's setpoints and tip: another robot's tensions.

    They were read as the tensions the left arm applied: its holds came out at 5 N on t0 and
    t3, where its setpoints were 0 N and 2 N on t1.
    """
    path = tmp_path / 'bag'
    _two_holds_bag(path, robot.tendon_names, ['/left_arm/'],
                   applied=lambda effort: [5.0, 0.0, 0.0, 5.0],
                   moved={'tendon/state': '/right_arm/'})
    with pytest.raises(ExperimentError) as error:
        load_recording(path, robot)
    assert str(error.value) == (f'{path}: holds /left_arm/tip/measured and '
                                '/right_arm/tendon/state, in two namespaces of which neither '
                                "holds the other; an experiment is one robot's")


@pytest.mark.parametrize('moved', [{'tip/measured': '/'},                # a sensor outside
                                   {'tendon/setpoint': '/left_arm/replay/'}])   # a replay's
def test_topics_in_a_namespace_within_the_others_are_one_robots(robot, tmp_path, moved):
    """A tip sensor outside a stack launched in /left_arm; a replay's setpoints within it."""
    _two_holds_bag(tmp_path / 'bag', robot.tendon_names, ['/left_arm/'], moved=moved)
    holds = load_recording(tmp_path / 'bag', robot)
    np.testing.assert_allclose([hold.tensions for hold in holds], [[0, 0, 0, 0], [0, 2, 0, 0]])
    np.testing.assert_allclose([hold.tip for hold in holds], [[0.2, 0, 0], [0.2, -0.01, 0]])


def test_a_tip_in_millimetres_is_refused_naming_where(robot, tmp_path):
    """
    A tip 200 m from the base of a 0.25 m robot: a sensor's millimetres read as metres.

    import refused such a point; calibrate and validate took it from a bag or a CSV of
    holds: E fitted to tips 250 m out, its interval 0 .. inf, and the calibration written.
    """
    path = tmp_path / 'bag'
    _two_holds_bag(path, robot.tendon_names, tip_unit=1e-3)
    with pytest.raises(ExperimentError) as error:
        load_recording(path, robot)
    assert str(error.value) == (f'{path}: tip/measured at 0.000 s: the measured point is 200 m '
                                "from the base, 800 times the robot's length (0.25 m): is its "
                                'unit right (read as m), and the frame?')
    csv = tmp_path / 'holds.csv'
    csv.write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2,0,0\n0,2,0,0,200,-10,0\n')
    with pytest.raises(ExperimentError) as error:
        load_recording(csv, robot)
    assert str(error.value) == (f'{csv}: line 3, columns tip_x, tip_y, tip_z: the measured '
                                "point is 200.25 m from the base, 801 times the robot's "
                                'length (0.25 m): is its unit right (read as m), and the frame?')


@pytest.mark.parametrize('points', ['holds', 'samples'])
def test_a_tip_that_is_not_finite_is_refused_naming_when(robot, tmp_path, points):
    """
    One tip sample of 300 with x NaN, at 2 s: a motion-capture marker lost from view.

    It was taken: its hold's mean tip became NaN, and validate exited 0 with every metric
    null; calibrate counted the hold as one without an equilibrium (a rod length of error)
    and wrote its fit, exit 0; with --points samples validate ended in an internal error.
    """
    path = tmp_path / 'bag'
    _two_holds_bag(path, robot.tendon_names, lost=200)
    with pytest.raises(ExperimentError) as error:
        load_recording(path, robot, points=points)
    assert str(error.value) == (f'{path}: tip/measured at 2.000 s: the measured point is not '
                                'finite: [nan, -0.01, 0.0]')


def test_a_command_of_tendons_the_robot_lacks_is_refused(tmp_path):
    """The planar robot (t0, t1) read a bag of t0 .. t3 as its own: t2 and t3 were dropped."""
    path = tmp_path / 'bag'
    _two_holds_bag(path, ['t0', 't1', 't2', 't3'])
    planar = load_robot(default_robot_file().parent / 'planar_robot.yaml')
    with pytest.raises(ExperimentError) as error:
        load_recording(path, planar)
    assert str(error.value) == (f"{path}: tendon/setpoint at 0.000 s: names ['t2', 't3'], "
                                "which the robot lacks (its tendon names: ['t0', 't1']): is "
                                'its description the robot recorded?')


def test_the_commands_are_the_tensions_the_stack_applied(robot, tmp_path):
    """
    A hardware bridge applies its min_tension (0.5 N) for a setpoint below it: tendon/state.

    The setpoints of 0 N were taken as applied: a recording of the emulated hardware then
    missed by 19 mm, its pulls bent a quarter less than a model of the setpoints.
    """
    _two_holds_bag(tmp_path / 'bag', robot.tendon_names,
                   applied=lambda effort: np.maximum(effort, 0.5))
    holds = load_recording(tmp_path / 'bag', robot)
    np.testing.assert_allclose([hold.tensions for hold in holds],
                               [[0.5, 0.5, 0.5, 0.5], [0.5, 2, 0.5, 0.5]])


def test_displacement_setpoints_stay_the_commands_beside_a_state_of_tensions(robot):
    """A displacement stack reports the tensions its displacements make: not the commands."""
    names = robot.tendon_names
    messages = []
    for i in range(200):
        stamp = i * 10 ** 7
        setpoint = JointState(header=_header(stamp), name=list(names), velocity=np.zeros(0),
                              position=np.array([0.0, 0.002, 0.0, 0.0]), effort=np.zeros(0))
        messages += [('tendon/setpoint', stamp, setpoint),
                     ('tendon/state', stamp, _setpoint(stamp, names, [0.1, 3.0, 0.1, 0.1])),
                     ('tip/measured', stamp, _tip(stamp, (0.2, -0.01, 0)))]
    (hold,) = holds_from_messages(messages, names)
    assert hold.tensions is None
    np.testing.assert_allclose(hold.displacements, [0.0, 0.002, 0.0, 0.0])


def test_measured_applied_tensions_noisier_than_a_step_keep_the_setpoints_holds(
        robot, tmp_path):
    """
    A real robot's tendon/state efforts are measurements (Present Current): noisy by counts.

    Holds segmented on them (a new hold at every change over 0.05 N) fell apart under a
    noise of +-0.15 N: 'no holds'. The holds are the setpoints'; their tensions the state's
    mean over the settled part (150 samples: the mean's standard deviation is 0.007 N, the
    tolerance of 0.03 N four of them), the min_tension the bridge applied for 0 N included.
    A tip sample's tensions are the last state's at or before it, noise and all.
    """
    rng = np.random.default_rng(7)
    noises = []

    def applied(effort):
        noises.append(rng.uniform(-0.15, 0.15, len(effort)))
        return np.maximum(effort, 0.5) + noises[-1]

    _two_holds_bag(tmp_path / 'bag', robot.tendon_names, applied=applied)
    _two_holds_bag(tmp_path / 'setpoints', robot.tendon_names)
    holds = load_recording(tmp_path / 'bag', robot)
    assert [(h.start, h.samples) for h in holds] == [
        (h.start, h.samples) for h in load_recording(tmp_path / 'setpoints', robot)]
    np.testing.assert_allclose([hold.tensions for hold in holds],
                               [[0.5, 0.5, 0.5, 0.5], [0.5, 2, 0.5, 0.5]], atol=0.03)
    assert [hold.tension_topic for hold in holds] == ['tendon/state'] * 2
    samples = load_recording(tmp_path / 'bag', robot, points='samples')
    steps = np.where(np.arange(300)[:, None] >= 150, [0.5, 2, 0.5, 0.5], 0.5)
    np.testing.assert_allclose([sample.tensions for sample in samples],
                               steps + np.array(noises), rtol=0, atol=1e-12)


def test_a_hold_without_a_state_keeps_its_setpoints_and_the_report_says_which(robot, tmp_path):
    """The state reports efforts for the first hold only: the second keeps its setpoints."""
    from tendon_robot_sim.experiment.calibration import validate, write_report

    names = robot.tendon_names
    messages = []
    for i in range(300):
        stamp = i * 10 ** 7
        setpoint = [0.0, 0.0 if i < 150 else 2.0, 0.0, 0.0]
        messages += [('tendon/setpoint', stamp, _setpoint(stamp, names, setpoint)),
                     ('tip/measured', stamp, _tip(stamp, (0.2, -0.01 * (i >= 150), 0)))]
        if i < 150:
            messages.append(('tendon/state', stamp, _setpoint(stamp, names, [0.5] * 4)))
    holds = holds_from_messages(messages, names)
    np.testing.assert_allclose([h.tensions for h in holds], [[0.5] * 4, [0, 2, 0, 0]])
    assert [h.tension_topic for h in holds] == ['tendon/state', 'tendon/setpoint']
    report = write_report(tmp_path / 'report', validate(robot, holds)).read_text()
    assert ('Tensions from `tendon/setpoint` for 1 of 2 holds, `tendon/state` (the mean over '
            'the steady part) for 1 of 2 holds.') in report
