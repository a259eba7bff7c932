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
Import: a measured table and its column map become a bag every command reads.

The excerpt of opencr-mujoco's FTDCR v4 recordings (test/data/opencr_ftdcr_v4, MIT) read with
the shipped map, compared with the CSV read here by hand; another lab's layout (other units,
signs, a rotated and shifted capture frame, tensions) needs only another map; bad tables and
maps are one line naming the column or key, exit 2, and nothing written.
"""

import csv
import errno
import math
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from tendon_robot_sim import cli
from tendon_robot_sim.experiment.bag import bag_topics, BagWriter, offered_qos_of, read_messages
from tendon_robot_sim.experiment.column_map import load_column_map
from tendon_robot_sim.experiment.experiment import (load_points, read_recording,
                                                    samples_from_recording)
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros import recorder, topics

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / 'test' / 'data' / 'opencr_ftdcr_v4'
SESSION = 'tdcr_sysid_20260511-183002'
ROBOT = ROOT / 'config' / 'opencr_ftdcr_v4.yaml'
MAP = ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml'
# The servo of each tendon in robot order, from their pull file's labels (tendon<X>_id<Y>).
SERVOS = (4, 3, 9, 5, 2, 8, 6, 1, 7)


def opencr_rows(name: str) -> list[dict]:
    with open(DATA / f'{SESSION}_{name}.csv', newline='') as handle:
        return list(csv.DictReader(handle))


def test_the_shipped_map_imports_the_opencr_excerpt(tmp_path, capsys):
    bag = tmp_path / 'train_bag'
    assert cli.main(['import', str(DATA / f'{SESSION}_train.csv'), '--columns', str(MAP),
                     '--robot', str(ROBOT), '--out', str(bag)]) == 0
    assert '54 rows' in capsys.readouterr().out
    assert bag_topics(bag) == {'/tendon/state': 'sensor_msgs/msg/JointState',
                               '/tip/measured': 'geometry_msgs/msg/PointStamped',
                               '/experiment/label': 'std_msgs/msg/String',
                               '/tf_static': 'tf2_msgs/msg/TFMessage'}
    # offered as the stack offers them (ros/topics.py, REP 2003: a sensor publishes reliable),
    # so that `ros2 bag play` reaches a subscriber that asks reliable, the default
    offered = offered_qos_of(bag)
    for topic in (topics.TENDON_STATE, topics.TIP_MEASURED):
        assert offered['/' + topic.name] == recorder.offered_qos(topic.qos), topic.name
    rows = opencr_rows('train')
    robot = load_robot(ROBOT)
    recording = read_recording(bag, robot)
    assert recording.kind == 'displacement'
    # every row: the servos in mm as tendon displacements in m (positive pulls), the tip in
    # m, the label, the time from the first row; the marker 8 mm beyond the tip
    expected = np.array([[float(row[f'servo_{s}_mm']) * 1e-3 for s in SERVOS] for row in rows])
    np.testing.assert_allclose(recording.commands, expected, rtol=0, atol=1e-12)
    tips = np.array([[float(row[k]) * 1e-3 for k in ('tip_x', 'tip_y', 'tip_z')]
                     for row in rows])
    np.testing.assert_allclose(recording.tips, tips, rtol=0, atol=1e-12)
    assert list(recording.labels) == [row['pattern_label'] for row in rows]
    times = np.array([float(row['timestamp']) for row in rows])
    # stamps are whole nanoseconds since the epoch: the times to within a microsecond
    np.testing.assert_allclose(recording.tip_times, times - times[0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(recording.tip_marker, [0.0, 0.0, 0.008], rtol=0, atol=1e-15)
    # every sample with its command: the samples calibrate and validate take
    samples = samples_from_recording(recording)
    assert len(samples) == len(rows)
    assert samples[7].label == rows[7]['pattern_label']
    np.testing.assert_allclose(samples[7].displacements, expected[7], rtol=0, atol=1e-12)
    # the robot as measured carries the recording's marker, unless its file gives one
    measured_robot, _ = load_points(bag, robot, 'samples')
    np.testing.assert_allclose(measured_robot.tip_marker, [0.0, 0.0, 0.008], rtol=0, atol=1e-15)


OTHER_LAB = """\
time_ms,motion,a_deg,b_deg,c_deg,d_deg,x_cm,y_cm,z_cm
0,rest,0,0,0,0,1.0,2.0,25.0
100,rest,0,0,0,0,1.0,2.0,25.0
250,bend,10,-5,0,0,3.0,2.5,24.0
"""
OTHER_MAP = """\
time: {column: time_ms, unit: ms}
label: {column: motion}
inputs:
  kind: displacement
  unit: deg
  drum_radius: 0.01
  sign: -1                      # this lab counts paying out positive
  columns: {t0: a_deg, t1: b_deg, t2: {column: c_deg, sign: 1}, t3: d_deg}
tip: {columns: [x_cm, y_cm, z_cm], unit: cm}
frame: {rpy_deg: [0, 90, 0], translation: [0, 0, 10], unit: mm}
"""


def test_another_lab_needs_only_another_map(tmp_path):
    """Other units, signs, a motor angle on a drum, a turned and shifted capture frame."""
    (tmp_path / 'run.csv').write_text(OTHER_LAB)
    (tmp_path / 'map.yaml').write_text(OTHER_MAP)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(tmp_path / 'run.csv'), '--columns', str(tmp_path / 'map.yaml'),
                     '--out', str(bag)]) == 0
    robot = load_robot(ROOT / 'config' / 'robot.yaml')
    recording = read_recording(bag, robot)
    # 10 degrees of a 10 mm drum, paid out: -1.745 mm; t2 counts pulling positive
    drum = math.radians(1.0) * 0.01
    np.testing.assert_allclose(recording.commands[2], [-10 * drum, 5 * drum, 0.0, 0.0],
                               rtol=0, atol=1e-15)
    turn = Rotation.from_euler('xyz', [0, 90, 0], degrees=True).as_matrix()
    expected = turn @ np.array([0.03, 0.025, 0.24]) + [0.0, 0.0, 0.01]
    np.testing.assert_allclose(recording.tips[2], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(recording.tip_times, [0.0, 0.1, 0.25], rtol=0, atol=1e-9)
    assert recording.labels == ('rest', 'rest', 'bend')
    assert recording.tip_marker is None      # the map gives none
    stamps = [msg.header.stamp for _, _, msg in read_messages(bag, ['tip/measured'])]
    assert [(s.sec, s.nanosec) for s in stamps] == [(0, 0), (0, 100_000_000), (0, 250_000_000)]


TENSIONS = 't,f0,f1,f2,f3,x,y,z\n0,1,0,0,0,0.25,0,0\n1,2,0,0,500,0.24,0.01,0\n'
TENSION_MAP = ('time: {column: t}\ninputs: {kind: tension, unit: N, columns: {t0: f0, t1: f1, '
               't2: f2, t3: {column: f3, unit: mN}}}\ntip: {columns: [x, y, z]}\n')


def test_tensions_import_as_efforts(tmp_path):
    (tmp_path / 'run.csv').write_text(TENSIONS)
    (tmp_path / 'map.yaml').write_text(TENSION_MAP)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(tmp_path / 'run.csv'), '--columns',
                     str(tmp_path / 'map.yaml'), '--out', str(bag)]) == 0
    recording = read_recording(bag, load_robot(ROOT / 'config' / 'robot.yaml'))
    assert recording.kind == 'tension'
    np.testing.assert_allclose(recording.commands[1], [2.0, 0.0, 0.0, 0.5], rtol=0, atol=1e-15)
    assert recording.labels == ()


@pytest.mark.parametrize('table, column_map, text', [
    # a map naming a column the table lacks
    (OTHER_LAB, OTHER_MAP.replace('d_deg}', 'e_deg}'), "no column 'e_deg'"),
    # a unit the importer does not know
    (OTHER_LAB, OTHER_MAP.replace('unit: cm', 'unit: inch'),
     "tip.unit: unknown unit 'inch'"),
    (OTHER_LAB, OTHER_MAP.replace('unit: ms', 'unit: min'), "time.unit: unknown unit 'min'"),
    # time stamps that go back, or repeat
    (OTHER_LAB.replace('250,bend', '50,bend'), OTHER_MAP,
     "line 4, column 'time_ms': the time stamp is before the one of line 3"),
    (OTHER_LAB.replace('250,bend', '100,bend'), OTHER_MAP,
     "line 4, column 'time_ms': the time stamp repeats the one of line 3"),
    # time stamps a bag cannot hold: before 1970 (a time that starts below 0), and Unix
    # milliseconds read as seconds (year 58000); they ended in an internal error, exit 70
    (OTHER_LAB.replace('0,rest,0,0,0,0,1.0,2.0,25.0\n100', '-5,rest,0,0,0,0,1.0,2.0,25.0\n100'),
     OTHER_MAP, "line 2, column 'time_ms': the time stamp -0.005 s is outside what a ROS "
     'time holds (0 to 2147483647 s since 1970): is time.unit right?'),
    (OTHER_LAB.replace('\n250,', '\n1778523002250,'), OTHER_MAP.replace('unit: ms}', 'unit: s}'),
     "line 4, column 'time_ms': the time stamp 1.77852e+12 s is outside what a ROS time holds "
     '(0 to 2147483647 s since 1970): is time.unit right?'),
    # seconds read as nanoseconds: 0.1 ns after the row before, where a bag's stamps are
    # whole nanoseconds; every row was written at 0 ns, silently
    (OTHER_LAB.replace('\n100,', '\n0.1,').replace('\n250,', '\n0.25,'),
     OTHER_MAP.replace('unit: ms}', 'unit: ns}'),
     "line 3, column 'time_ms': the time stamp is 1e-10 s after the one of line 2, where a "
     "bag's stamps are whole nanoseconds: is time.unit right?"),
    # a NaN row, an empty cell
    (OTHER_LAB.replace('3.0,2.5', 'nan,2.5'), OTHER_MAP, "line 4, column 'x_cm': must be finite"),
    (OTHER_LAB.replace('10,-5,0,0', '10,,0,0'), OTHER_MAP,
     "line 4, column 'b_deg': '' is not a number"),
    # a tendon the robot does not have, a tendon of the robot the map leaves out
    (OTHER_LAB, OTHER_MAP.replace('t3: d_deg', 't9: d_deg'),
     "inputs.columns.t9: the robot has no tendon 't9'"),
    (OTHER_LAB, OTHER_MAP.replace(', t3: d_deg', ''), "no column for tendon 't3'"),
    # two tendons on one column: a mapping mistake
    (OTHER_LAB, OTHER_MAP.replace('t1: b_deg', 't1: a_deg'),
     "map.yaml: inputs.columns.t1: column 'a_deg' is also the column of tendon 't0'"),
    # one column read as two values, a copied entry not edited: the tip's y was its x, the
    # tip's x a tendon's input, the time a coordinate, a marker the tip
    (OTHER_LAB, OTHER_MAP.replace('[x_cm, y_cm, z_cm]', '[x_cm, x_cm, z_cm]'),
     "map.yaml: tip.columns[1]: column 'x_cm' is also tip.columns[0]; each value needs its "
     'own column'),
    (OTHER_LAB, OTHER_MAP.replace('[x_cm, y_cm, z_cm]', '[a_deg, y_cm, z_cm]'),
     "map.yaml: tip.columns[0]: column 'a_deg' is also inputs.columns.t0; each value needs "
     'its own column'),
    (OTHER_LAB, OTHER_MAP.replace('{column: time_ms', '{column: z_cm'),
     "map.yaml: tip.columns[2]: column 'z_cm' is also time.column; each value needs its own "
     'column'),
    (OTHER_LAB, OTHER_MAP + 'markers: {base: {columns: [x_cm, y_cm, z_cm], unit: cm}}\n',
     "map.yaml: markers.base.columns[0]: column 'x_cm' is also tip.columns[0]; each value "
     'needs its own column'),
    # a table with no tip column, a map with no tip
    (OTHER_LAB.replace('z_cm', 'w_cm'), OTHER_MAP, "no column 'z_cm'"),
    (OTHER_LAB, OTHER_MAP.replace('tip: {columns: [x_cm, y_cm, z_cm], unit: cm}\n', ''),
     'tip: required key is missing'),
    # a motor angle without a drum, a sign that is not one, a frame that is not a rotation
    (OTHER_LAB, OTHER_MAP.replace('  drum_radius: 0.01\n', ''),
     'inputs.columns.t0: a motor angle (deg) needs inputs.drum_radius'),
    (OTHER_LAB, OTHER_MAP.replace('sign: -1 ', 'sign: 2 '), 'inputs.sign: must be 1 or -1'),
    (OTHER_LAB, OTHER_MAP.replace('rpy_deg: [0, 90, 0]', 'rotation: [[1, 0, 0], [0, 2, 0], '
                                  '[0, 0, 1]]'), 'frame.rotation: not a rotation matrix'),
    (OTHER_LAB, OTHER_MAP + 'colour: blue\n', 'colour: unknown key'),
    # a map that is no mapping: it said "robot description", which the file is not
    (OTHER_LAB, '', 'map.yaml: a column map must be a mapping (time, inputs, tip, ...), got '
     'nothing'),
    (OTHER_LAB, '- time\n- tip\n', 'map.yaml: a column map must be a mapping (time, inputs, '
     "tip, ...), got list ['time', 'tip']"),
    # a column named by a number, unquoted: it said "must be a mapping"
    (OTHER_LAB, OTHER_MAP.replace('t0: a_deg', 't0: 7'),
     'map.yaml: inputs.columns.t0: must be a column name or {column, unit, sign}, got int 7 '
     "(quote a name that YAML reads as a number: '7')"),
    # a tension that pushes, a tension beyond the robot's max_tension (config/robot.yaml: 20 N)
    (TENSIONS.replace('1,2,0,0,500', '1,2,-3,0,500'), TENSION_MAP,
     "line 3, column 'f1': a tension must be >= 0 N, got -3 N"),
    (TENSIONS.replace('1,2,0,0,500', '1,1e9,0,0,500'), TENSION_MAP,
     "line 3, column 'f0': a tension must be <= max_tension = 20 N of tendon 't0', got 1e+09 N"),
    (TENSIONS.replace('1,2,0,0,500', '1,2,0,0,20001'), TENSION_MAP,
     "line 3, column 'f3': a tension must be <= max_tension = 20 N of tendon 't3', got 20.001 N"),
    # a tip in cm read as m (the default unit): 100 robot lengths from the base
    (OTHER_LAB, OTHER_MAP.replace('z_cm], unit: cm}', 'z_cm]}'),
     "line 2, column 'x_cm': the measured point is 25.0994 m from the base, 100 times the "
     "robot's length (0.25 m): is its unit right (a table unit read as 1 m), and the frame?"),
    # a marker offset whose unit was left out: 8 mm read as 8 m beyond the tip, taken
    (OTHER_LAB, OTHER_MAP + 'marker: {translation: [0, 0, 8]}\n',
     "map.yaml: marker.translation: the marker is 8 m from the tip, 32 times the robot's "
     'length (0.25 m): is marker.unit right (read as 1 m)?'),
    # a drum radius on inputs no angle is among: it had no effect, silently
    (OTHER_LAB, OTHER_MAP.replace('unit: deg', 'unit: um'),
     'map.yaml: inputs.drum_radius: only for a motor angle (rad, deg); no input column is one'),
    # a displacement longer than the rod (0.25 m), here paid out (the map's sign -1)
    (OTHER_LAB.replace('250,bend,10,', '250,bend,1e5,'), OTHER_MAP,
     "line 4, column 'a_deg': a displacement must be within [-0.25, 0.25] m (the rod length "
     'either way), got -17.4533 m'),
])
def test_bad_tables_and_maps_are_one_line_and_write_nothing(table, column_map, text, tmp_path,
                                                            capsys):
    (tmp_path / 'run.csv').write_text(table)
    (tmp_path / 'map.yaml').write_text(column_map)
    bag = tmp_path / 'bag'
    code = cli.main(['import', str(tmp_path / 'run.csv'), '--columns', str(tmp_path / 'map.yaml'),
                     '--out', str(bag)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and 'Traceback' not in err, err
    assert text in err, err
    assert not bag.exists()


def test_a_bag_that_fails_half_way_is_not_left_to_look_complete(tmp_path, capsys, monkeypatch):
    """A disk that fills while the bag is written: no bag, rather than one closed half-full."""
    real = BagWriter.write

    def fills_after_two(bag, *args):
        if sum(bag.counts.values()) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(bag, *args)

    monkeypatch.setattr(BagWriter, 'write', fills_after_two)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(DATA / f'{SESSION}_train.csv'), '--columns', str(MAP),
                     '--robot', str(ROBOT), '--out', str(bag)]) == 2
    assert capsys.readouterr().err.endswith(f'{bag}: cannot write: No space left on device\n')
    assert not bag.exists()


def test_the_map_loader_reads_quaternions_and_rotation_matrices(tmp_path):
    path = tmp_path / 'map.yaml'
    half = math.sqrt(0.5)
    path.write_text(OTHER_MAP.replace('rpy_deg: [0, 90, 0]',
                                      f'quaternion: [0, {half}, 0, {half}]'))
    by_quaternion = load_column_map(path).rotation
    path.write_text(OTHER_MAP.replace('rpy_deg: [0, 90, 0]',
                                      'rotation: [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]'))
    np.testing.assert_allclose(load_column_map(path).rotation, by_quaternion, rtol=0, atol=1e-12)
    np.testing.assert_allclose(by_quaternion @ [1.0, 0.0, 0.0], [0.0, 0.0, -1.0], rtol=0,
                               atol=1e-12)


def test_the_empty_columns_a_spreadsheet_adds_are_not_two_columns_of_one_name(tmp_path):
    """A spreadsheet's export ends every line with ',,': two unnamed columns, not read."""
    (tmp_path / 'run.csv').write_text(OTHER_LAB.replace('\n', ',,\n'))
    (tmp_path / 'map.yaml').write_text(OTHER_MAP)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(tmp_path / 'run.csv'), '--columns', str(tmp_path / 'map.yaml'),
                     '--out', str(bag)]) == 0
    assert read_recording(bag, load_robot(ROOT / 'config' / 'robot.yaml')).labels == (
        'rest', 'rest', 'bend')


@pytest.mark.parametrize('separator', [';', '\t'])
def test_a_table_not_separated_by_commas_is_named_so(separator, tmp_path, capsys):
    """A spreadsheet set to another locale writes ';': the header read as one column."""
    (tmp_path / 'run.csv').write_text(OTHER_LAB.replace(',', separator))
    (tmp_path / 'map.yaml').write_text(OTHER_MAP)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(tmp_path / 'run.csv'), '--columns', str(tmp_path / 'map.yaml'),
                     '--out', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert err.endswith("line 1: no column 'time_ms': the header is one column with "
                        f'{separator!r} in it; columns must be separated by commas\n'), err
    assert not bag.exists()


def test_a_long_table_shows_its_progress(tmp_path, capsys, monkeypatch):
    """200 000 rows took 25 s with nothing on the screen; a bar counts the rows written."""
    monkeypatch.setenv('TENDON_ROBOT_SIM_PROGRESS', '1')     # drawn also into a pipe
    monkeypatch.delenv('TQDM_DISABLE', raising=False)
    (tmp_path / 'run.csv').write_text(OTHER_LAB)
    (tmp_path / 'map.yaml').write_text(OTHER_MAP)
    assert cli.main(['import', str(tmp_path / 'run.csv'), '--columns', str(tmp_path / 'map.yaml'),
                     '--out', str(tmp_path / 'bag')]) == 0
    assert 'import: 100%' in capsys.readouterr().err


def test_samples_of_which_none_has_an_equilibrium_are_no_result(tmp_path, capsys):
    """
    Every tendon pulled in 150 mm of the 186.5 mm robot: no sample has an equilibrium.

    A valid input (within the rod's length) without a result: exit 1, as for holds, and no
    calibrated file. ``calibrate`` wrote one, exit 0 (every point a rod length of error
    before and after, the parameters where they started); ``validate`` said bad input.
    """
    rows = opencr_rows('train')[:5]
    for row in rows:
        row.update({f'servo_{s}_mm': '150' for s in SERVOS})
    table = tmp_path / 'pulled.csv'
    with open(table, 'w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(table), '--columns', str(MAP), '--robot', str(ROBOT),
                     '--out', str(bag)]) == 0
    capsys.readouterr()
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(bag), '--robot', str(ROBOT), '--points', 'samples',
                     '--fit', 'base.position', '--out', str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'none of the 5 points has an equilibrium' in err, err
    assert not out.exists()
    # validating such points predicts nothing either: no result, as docs/cli.md says (it was
    # exit 2, bad input)
    samples = tmp_path / 'samples.csv'
    assert cli.main(['validate', str(bag), '--robot', str(ROBOT), '--points', 'samples',
                     '--report', str(tmp_path / 'report'), '--samples-out', str(samples)]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'none of the 5 points has an equilibrium' in err, err
    assert not samples.exists() and not (tmp_path / 'report').exists()


def test_a_table_of_one_row_is_counted_in_the_singular(tmp_path, capsys):
    """
    One row, one label: ``1 row ... 1 label``; a fit of it too few points in the singular.

    It said ``1 rows`` and ``1 labels``, and the fit of its samples ``holds: 1 points give
    3 residuals`` (the points were samples).
    """
    (row,) = opencr_rows('train')[:1]
    table = tmp_path / 'one.csv'
    with open(table, 'w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        writer.writeheader()
        writer.writerow(row)
    bag = tmp_path / 'bag'
    assert cli.main(['import', str(table), '--columns', str(MAP), '--robot', str(ROBOT),
                     '--out', str(bag)]) == 0
    assert capsys.readouterr().out.startswith(
        '1 row over 0.0 s (displacements of 9 tendons, 1 label) from ')
    assert cli.main(['calibrate', str(bag), '--robot', str(ROBOT), '--points', 'samples',
                     '--fit', 'base.position', '--out', str(tmp_path / 'c.yaml')]) == 2
    assert capsys.readouterr().err.endswith(
        'error: points: 1 point gives 3 residuals, too few for 3 parameters\n')
