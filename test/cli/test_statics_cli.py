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
``tendon-robot-sim statics`` command line: its exit code from a real subprocess, the rest here.

In this process (:class:`Run`) a solve is the same ``main()`` as the console script's, without
an interpreter start and the kernels' load per run.
"""

import json
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.contact.report import total_force
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import COMMAND_TIMEOUT
import yaml

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    return subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'statics', *args],
                          capture_output=True, text=True, env=env, timeout=COMMAND_TIMEOUT)


class Run:
    """``statics`` run in this process, read as a finished subprocess (its code and output)."""

    def __init__(self, capsys, *args):
        self.returncode = main(['statics', *args])
        self.stdout, self.stderr = capsys.readouterr()


def test_json_line_matches_the_solver(capsys):
    proc = Run(capsys, '--model', 'discrete', '--tensions', '1.5,0,0,2', '--tip-force',
               '0,0,-0.02', '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    for key in ('tip_position', 'tip_orientation', 'tensions', 'displacements', 'converged',
                'residual', 'solve_time_ms'):
        assert key in summary
    expected = StaticsSolver(load_robot(default_robot_file()), 'discrete').solve_tensions(
        [1.5, 0.0, 0.0, 2.0], tip_force=[0.0, 0.0, -0.02])
    np.testing.assert_allclose(summary['tip_position'], expected.tip_position, atol=1e-9)
    np.testing.assert_allclose(summary['tip_orientation'], expected.tip_orientation, atol=1e-9)
    np.testing.assert_allclose(summary['displacements'], expected.tendon_displacements,
                               atol=1e-12)
    assert summary['converged'] is True and summary['model'] == 'discrete'


def test_displacements_by_name(capsys):
    proc = Run(capsys, '--displacements', 't0=0.004,t2=-0.004', '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary['displacements'] == [0.004, 0.0, -0.004, 0.0]
    assert summary['tensions'][0] > 1.0 and summary['tensions'][2] == 0.0


def test_bad_input_exits_non_zero_with_one_line():
    proc = run_cli('--tensions', '1,2')
    assert proc.returncode != 0
    assert proc.stderr.strip() == ('tendon-robot-sim statics: error: tensions: expected 4 '
                                   'values (one per tendon: t0, t1, t2, t3), got 2')


@pytest.mark.parametrize('args, message', [
    (['--tensions', '1,-2,0,0'], r'tensions[1]: must be >= 0 N'),
    (['--tensions', '1,x,0,0'], "--tensions: item 1 ('x') is not a number"),
    (['--displacements', '0,0,0,nan'], "--displacements: item 3 ('nan') must be finite"),
    (['--tensions', '0,0,0,0', '--tip-force', '1,2'], '--tip-force: must be 3 numbers'),
    (['--tensions', '0,0,0,0', '--robot', '/nonexistent.yaml'], 'cannot read'),
    # millimetres given as metres: refused as in --displacements-csv, not solved to exit 1
    (['--displacements', 't0=4,t2=-4'], '--displacements: t0: a displacement must be within '
     '[-0.25, 0.25] m (the rod length either way), got 4 m'),
    (['--displacements', '0,0,-0.3,0', '--robot', str(ROOT / 'config' / 'robot_friction.yaml')],
     '--displacements: t2: a displacement must be within [-0.25, 0.25] m'),
])
def test_bad_input_messages(args, message, capsys):
    # in-process: the same main() as the console script, without a Python start per case
    assert main(['statics', *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize('text, message', [
    # Excel's trailing comma: "column '': '' is not a number", of a column nobody named
    ('t,t0,\n0,1,\n', 'line 1: column 3 has no name'),
    # another separator: "column 't;t0': '0;1' is not a number", as if a cell were wrong
    ('t;t0\n0;1\n', "line 1: unknown column 't;t0'; expected 't' (s)"),
    ('t\tt0\n0\t1\n', "line 1: unknown column 't\\tt0'; expected 't' (s)"),
    # Python's float() reads '1_0' as 10 and an Arabic-Indic digit as its value: 10 N from a
    # typo, where a spreadsheet or numpy sees no number
    ('t,t0\n0,1_0\n', "line 2, column 't0': '1_0' is not a number"),
    ('t,t0\n0,\u0661\n', "line 2, column 't0': '\u0661' is not a number"),
])
def test_a_sequence_file_is_refused_naming_its_header_or_its_cell(
        tmp_path, text, message, capsys):
    rows = tmp_path / 'rows.csv'
    rows.write_text(text)
    assert main(['statics', '--tensions-csv', str(rows)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f'--tensions-csv: {rows}: {message}' in err[0], err


def test_json_carries_the_contacts_of_a_world(tmp_path, capsys):
    world = tmp_path / 'prop.yaml'
    world.write_text('obstacles:\n'
                     '  - {name: prop, shape: cylinder, radius: 0.01, length: 0.05,\n'
                     '     position: [0.5, 0.0, -0.011],\n'
                     '     orientation: [-0.7071068, 0, 0, 0.7071068]}\n')
    steel = str(ROOT / 'config' / 'steel_rod_robot.yaml')
    proc = Run(capsys, '--robot', steel, '--world', str(world), '--tensions', '0,0,0,0',
               '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    (contact,) = summary['contacts']
    assert sorted(contact) == ['force', 'normal', 'obstacle', 'penetration', 'point', 's']
    assert contact['obstacle'] == 'prop' and 'contact prop at s = ' in proc.stdout
    # the prop carries 3/8 of the rod's weight (test_contact_statics.py: within 2 %)
    robot = load_robot(steel)
    weight = robot.rod.linear_density * robot.rod.length * 9.81
    assert contact['force'][2] == pytest.approx(3 * weight / 8, rel=0.02)
    assert summary['max_penetration'] == contact['penetration'] > 0.0


def test_the_discrete_statics_presses_the_post_with_its_discs(capsys):
    """
    ``--model discrete --world``: the silicone robot pulled by 2 N on t3 towards the post.

    Once refused (a cold solve could curl the rod away from t3, touching nothing); the shape
    itself is checked against the explicit dynamics in test_contact_cross_solver.py. Here: the
    tip on t3's side (+y), a disc pressing the post and the tip disc the plate.
    """
    proc = Run(capsys, '--model', 'discrete', '--world',
               str(ROOT / 'config' / 'world_post.yaml'), '--tensions', '0,0,0,2', '--json')
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary['tip_position'][1] > 0.015
    touched = {contact['obstacle']: contact for contact in summary['contacts']}
    assert sorted(touched) == ['plate', 'post']
    assert touched['post']['force'][1] < -0.1 and touched['plate']['force'][2] > 0.1


def test_a_sequence_against_a_world_presses_the_post_and_comes_back(tmp_path, capsys):
    """
    ``--world`` with ``--tensions-csv``: pressed onto the post and the plate, then released.

    The default robot pulled by t3 in 0.25 N steps to 1.75 N (world_post.yaml), each state from
    the last, and released the same way. The statics has no contact friction, so the path
    leaves no trace: the pull ends where one cold solve at 1.75 N lands (1e-7 m, the solver's
    tolerance; the wrong branch, under the plate, is 50 mm away), and the release where the
    robot started, on the plate.
    """
    world = ROOT / 'config' / 'world_post.yaml'
    out = tmp_path / 'press.csv'
    proc = Run(capsys, '--world', str(world), '--tensions-csv',
               str(ROOT / 'config' / 'post_press_tensions.csv'), '--trajectory-out', str(out),
               '--json')
    assert proc.returncode == 0, proc.stderr
    table = np.genfromtxt(out, delimiter=',', names=True)
    tip = np.column_stack([table['x'], table['y'], table['z']])
    pressed = int(np.argmax(table['tension_t3']))
    assert table['tension_t3'][pressed] == 1.75 and table['tension_t3'][-1] == 0.0
    np.testing.assert_array_equal(table['tip_tension_t3'], table['tension_t3'])
    robot = load_robot(default_robot_file())
    cold = StaticsSolver(robot, 'cosserat', world=load_world(world)).solve_tensions({'t3': 1.75})
    assert {c.obstacle for c in cold.contacts} == {'post', 'plate'}
    np.testing.assert_allclose(tip[pressed], cold.tip_position, atol=1e-7)
    np.testing.assert_allclose(tip[-1], tip[0], atol=1e-7)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [c['obstacle'] for c in summary['contacts']] == ['plate']
    assert 'contact plate at s = ' in proc.stdout
    # the total contact force of each row, as simulate's: pressed, the cold solve's (within
    # 1e-6 N of its 0.14 N: the two shapes agree to the solver's tolerance); at rest, the plate's
    force = np.column_stack([table['contact_fx'], table['contact_fy'], table['contact_fz']])
    np.testing.assert_allclose(force[pressed], total_force(cold.contacts), rtol=0, atol=1e-6)
    np.testing.assert_allclose(force[-1], summary['contacts'][0]['force'], rtol=1e-9)


def test_an_unstable_equilibrium_is_reported_with_one_warning_line(tmp_path, capsys):
    """
    Straight under 0.6 N, the default robot pointing up is an unstable equilibrium, exit 0.

    It buckles below 0.47 N, its bare rod's Euler load (less under its weight); the
    equilibrium is still a result, with one warning line.
    """
    data = load_robot(default_robot_file()).to_dict()
    data['base']['direction'], data['base']['normal'] = [0, 0, 1], [1, 0, 0]
    robot = tmp_path / 'upright.yaml'
    robot.write_text(yaml.safe_dump(data))
    proc = Run(capsys, '--robot', str(robot), '--tensions', '0,0,0,0', '--tip-force',
               '0,0,-0.6', '--json')
    assert proc.returncode == 0, proc.stderr
    stability = json.loads(proc.stdout.strip().splitlines()[-1])['stability']
    assert stability['stable'] is False and stability['negative_modes'] == 2
    assert stability['min_eigenvalue'] < 0.0 and stability['reason'] is None
    (warning,) = proc.stderr.strip().splitlines()
    assert warning.startswith('warning: unstable equilibrium')
    proc = Run(capsys, '--robot', str(robot), '--tensions', '0,0,0,0', '--tip-force',
               '0,0,-0.6', '--json', '--no-stability')
    assert proc.returncode == 0 and proc.stderr == ''
    assert 'stability' not in json.loads(proc.stdout.strip().splitlines()[-1])


def test_displacement_inputs_are_checked_for_stability(capsys, tmp_path):
    """
    Solved for displacements, the equilibrium's stability is reported as for tensions.

    The default robot pulled by 4 mm of t0 is stable. Pointing up under 0.6 N down (beyond its
    buckling load) it has two negative modes with its tendons slack, one with t0 and t2 held
    taut: they keep the tip from turning in their plane
    (test/models/rod/statics/test_stability.py); ``--no-stability`` skips the check.
    """
    assert main(['statics', '--displacements', 't0=0.004', '--json']) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    stability = json.loads(lines[-1])['stability']
    assert set(stability) == {'stable', 'min_eigenvalue', 'negative_modes', 'neutral_modes',
                              'reason'}
    assert stability['stable'] is True and stability['negative_modes'] == 0
    assert stability['min_eigenvalue'] > 0.0 and stability['reason'] is None
    assert any(line.startswith('stability:            stable, smallest eigenvalue ')
               for line in lines)
    data = load_robot(default_robot_file()).to_dict()
    data['base']['direction'], data['base']['normal'] = [0, 0, 1], [1, 0, 0]
    robot = tmp_path / 'upright.yaml'
    robot.write_text(yaml.safe_dump(data))
    for inputs, modes in (('--tensions', 2), ('--displacements', 1)):
        values = '0,0,0,0' if inputs == '--tensions' else '0.002,0,0.002,0'
        assert main(['statics', '--robot', str(robot), inputs, values,
                     '--tip-force', '0,0,-0.6', '--json']) == 0
        out, err = capsys.readouterr()
        stability = json.loads(out.strip().splitlines()[-1])['stability']
        assert stability['stable'] is False and stability['negative_modes'] == modes
        assert err.startswith('warning: unstable equilibrium')
    assert main(['statics', '--displacements', 't0=0.004', '--json', '--no-stability']) == 0
    assert 'stability' not in json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_a_sequence_row_beyond_a_max_tension_is_no_result(tmp_path, capsys):
    """
    A displacement row whose equilibrium needs more than max_tension ends the sequence, exit 1.

    12 mm of t0 on the default robot is refused on its own (exit 1: above its 20 N); in the
    middle of a sequence the command only checked the last row and exited 0 with that row in
    the trajectory, and went on from it. It now stops there and names the row, the rows so
    far written.
    """
    robot = str(default_robot_file())
    assert main(['statics', '--robot', robot, '--model', 'discrete', '--no-stability',
                 '--displacements', 't0=0.012']) == 1
    alone = capsys.readouterr().err
    assert 'above max_tension = 20 N' in alone, alone
    rows, out = tmp_path / 'rows.csv', tmp_path / 'out.csv'
    rows.write_text('t,t0\n0,0\n1,0.012\n2,0.002\n')
    assert main(['statics', '--robot', robot, '--model', 'discrete', '--displacements-csv',
                 str(rows), '--trajectory-out', str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err, err
    assert err.startswith('tendon-robot-sim statics: error: --displacements-csv[t0]: the '
                          'equilibrium needs ') and 'in row 2 (t = 1 s)' in err, err
    assert err.endswith(f'; the rows solved are in {out}\n'), err
    table = np.genfromtxt(out, delimiter=',', names=True)
    assert list(table['t']) == [0.0, 1.0] and table['tension_t0'][1] > 20.0


def test_a_sequence_row_without_a_state_exits_1_as_a_single_solve_does(tmp_path, capsys):
    """
    A row the solver finds no state for exits 1, a valid input without a result.

    ``kirchhoff``, 2 mm of t0 with the antagonists held: no equilibrium (the rod neither
    stretches nor shears). One solve says so with exit 1; the same row of a sequence said it
    with exit 2, the code of bad input.
    """
    robot = str(default_robot_file())
    assert main(['statics', '--robot', robot, '--model', 'kirchhoff', '--no-stability',
                 '--displacements', 't0=0.002']) == 1
    capsys.readouterr()
    rows, out = tmp_path / 'rows.csv', tmp_path / 'out.csv'
    rows.write_text('t,t0\n0,0\n1,0.002\n')
    assert main(['statics', '--robot', robot, '--model', 'kirchhoff', '--displacements-csv',
                 str(rows), '--trajectory-out', str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith(
        'tendon-robot-sim statics: error: --displacements-csv: row 2 (t = 1 s): '), err
    assert err.endswith(f'; the rows solved are in {out}\n'), err
    assert list(np.genfromtxt(out, delimiter=',', names=True, ndmin=1)['t']) == [0.0]


def test_a_plot_of_one_row_is_refused_not_left_unwritten(tmp_path, capsys):
    """``--plot`` with a sequence of one row exited 0 and wrote no plot; now exit 2, no solve."""
    rows, plot = tmp_path / 'one.csv', tmp_path / 'loop.png'
    rows.write_text('t,t0\n0,2\n')
    assert main(['statics', '--robot', str(ROOT / 'config' / 'robot_friction.yaml'),
                 '--tensions-csv', str(rows), '--plot', str(plot)]) == 2
    captured = capsys.readouterr()
    assert captured.err == ('tendon-robot-sim statics: error: --plot: draws the states against '
                            'their input, and --tensions-csv has one row; give two or more, or '
                            'leave --plot out\n')
    assert not plot.exists() and not captured.out


def test_a_sequence_that_fails_at_its_first_row_leaves_the_trajectory_file_alone(
        tmp_path, capsys):
    """
    No row solved: an older ``--trajectory-out`` is kept, as ``simulate`` keeps it.

    ``kirchhoff`` finds no state for 2 mm of t0 (above); as the first row the command wrote
    the header alone over the file, without a line end, and exited 1.
    """
    rows, older = tmp_path / 'rows.csv', tmp_path / 'out.csv'
    rows.write_text('t,t0\n0,0.002\n')
    older.write_text('t,x\n0,1\n')
    assert main(['statics', '--model', 'kirchhoff', '--displacements-csv', str(rows),
                 '--trajectory-out', str(older)]) == 1
    err = capsys.readouterr().err
    assert err.startswith('tendon-robot-sim statics: error: --displacements-csv: row 1 '), err
    assert older.read_text() == 't,x\n0,1\n'


def test_the_stability_line_of_a_robot_with_bending_friction_names_it(tmp_path, capsys):
    """
    Bending friction alone makes the statics path-dependent, and the check is skipped.

    The reason said 'a sequence or tendon friction', neither of which the run had.
    """
    description = yaml.safe_load(Path(default_robot_file()).read_text())
    description['rod']['bending_friction'] = {'moment': 0.01}
    robot = tmp_path / 'bending.yaml'
    robot.write_text(yaml.safe_dump(description))
    assert main(['statics', '--robot', str(robot), '--model', 'discrete', '--tensions',
                 '1,0,0,0', '--json']) == 0
    reason = json.loads(capsys.readouterr().out.splitlines()[-1])['stability']['reason']
    assert 'bending friction' in reason, reason
