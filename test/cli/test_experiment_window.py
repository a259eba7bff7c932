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
``calibrate`` and ``validate`` on a part of a bag: ``--start``, ``--end``.

The bag (a real rosbag2 bag) starts with a label at 0 s; 1 s later three holds of 1.5 s each
begin (A: no tension, B: 1 N on t1, C: 2 N on t1), each labelled, at 100 Hz. Its tips are the
discrete statics of the robot file, so that a fit of E on any part finds the file's E.
"""

import csv

import numpy as np
import pytest

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos
from tendon_robot_sim.experiment.experiment import Hold, write_holds_csv
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
import yaml

T0_NS = 1_700_000_000 * 10 ** 9
HOLDS = (('A', 0.0), ('B', 1.0), ('C', 2.0))     # label, N on t1
HOLD_S, RATE, LEAD_S = 1.5, 100, 1.0


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    """(robot, the bag, the tips of the holds)."""
    robot = load_robot(default_robot_file())
    solver = StaticsSolver(robot, 'discrete')
    path = tmp_path_factory.mktemp('window') / 'bag'
    tips = []
    with BagWriter(path) as writer:
        messages = BagMessages(writer.typestore)
        for topic, msgtype in (('/tendon/setpoint', 'sensor_msgs/msg/JointState'),
                               ('/tip/measured', 'geometry_msgs/msg/PointStamped'),
                               ('/experiment/label', 'std_msgs/msg/String')):
            writer.add_topic(topic, msgtype, OfferedQos())
        writer.write('/experiment/label', T0_NS, messages.text('A'))
        for k, (label, tension) in enumerate(HOLDS):
            tensions = np.array([0.0, tension, 0.0, 0.0])
            tips.append(solver.solve_tensions(tensions).tip_position)
            begin_ns = T0_NS + int((LEAD_S + k * HOLD_S) * 1e9)
            if k:
                writer.write('/experiment/label', begin_ns, messages.text(label))
            for i in range(int(HOLD_S * RATE)):
                stamp = begin_ns + i * 10 ** 9 // RATE
                writer.write('/tendon/setpoint', stamp,
                             messages.joint_state(stamp, robot.tendon_names, effort=tensions))
                writer.write('/tip/measured', stamp + 1000,
                             messages.point(stamp, 'base_link', tips[-1]))
    return robot, path, tips


def _rows(path):
    with open(path, newline='') as handle:
        return list(csv.DictReader(handle))


def test_validate_takes_the_holds_between_start_and_end_of_the_bag(bag, tmp_path, capsys):
    """
    From 2.45 s to 4.05 s of the bag: hold B whole, 0.05 s of A and C (shorter than a hold).

    The times are the bag's, from its first message (the label, 1 s before the first
    setpoint): read as the recording's they would take 1.05 s of C, a hold of its own.
    """
    _, path, tips = bag
    samples = tmp_path / 'points.csv'
    assert cli.main(['validate', str(path), '--start', '2.45', '--end', '4.05', '--workers',
                     '1', '--report', str(tmp_path / 'report'), '--samples-out',
                     str(samples)]) == 0
    (row,) = _rows(samples)
    assert row['label'] == 'B'
    # the recording's time of the hold: 1.5 s after its first setpoint (the tip 1 us later)
    assert float(row['t']) == pytest.approx(HOLD_S, abs=1e-5)
    np.testing.assert_allclose([float(row[f'measured_{a}']) for a in 'xyz'], tips[1],
                               rtol=0, atol=1e-12)   # the mean of equal values


def test_calibrate_fits_on_the_part_given(bag, tmp_path, capsys):
    """Fit E on holds B and C only (from 2.5 s to the end): the file's E, from 2 holds."""
    robot, path, _ = bag
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(path), '--start', '2.5', '--fit', 'youngs_modulus',
                     '--workers', '1', '--out', str(out)]) == 0
    assert capsys.readouterr().out.startswith(f'2 holds from {path}; fitting youngs_modulus')
    fitted = yaml.safe_load(out.read_text())['rod']['youngs_modulus']
    # the tips are the discrete model's at the file's E: the fit's tolerance only
    assert fitted == pytest.approx(robot.rod.youngs_modulus, rel=1e-4)


@pytest.mark.parametrize('arguments, message', [
    (['--start', '3', '--end', '2'], '--start: must be before the end (2 s), got 3'),
    (['--end', '9'], '--end: must be within [0, 5.490] s, the span of {path} from its first '
                     'message, got 9'),
    (['--start', '-1'], 'argument --start:'),
    (['--end', '0.5'], '{path}: no tip/measured messages between 0 s and 0.5 s '
                       '(--start, --end)'),
])
def test_a_bad_part_is_one_line_and_exit_2(bag, tmp_path, capsys, arguments, message):
    _, path, _ = bag
    for command in (['validate', '--report', str(tmp_path / 'report')],
                    ['calibrate', '--fit', 'youngs_modulus', '--out', str(tmp_path / 'c.yaml')]):
        assert cli.main([command[0], str(path), *command[1:], *arguments]) == 2
        error = capsys.readouterr().err
        assert message.format(path=path) in error and error.count('\n') == 1


def test_a_csv_of_holds_has_no_part_to_take(bag, tmp_path, capsys):
    robot, _, tips = bag
    holds = tmp_path / 'holds.csv'
    write_holds_csv(holds, robot, [Hold(tensions=np.zeros(4), displacements=None, tip=tips[0],
                                        duration=0.0, samples=1)])
    assert cli.main(['validate', str(holds), '--end', '1', '--report',
                     str(tmp_path / 'report')]) == 2
    assert capsys.readouterr().err.endswith(f'--start, --end: apply to a bag (a time series); '
                                            f'{holds} is a CSV file of holds\n')
