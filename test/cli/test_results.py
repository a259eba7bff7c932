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
The classes "results that are not results" and "closed pipes", for every command.

Exit 0 only with a result that exists, and a result where the command says it is. Enforced in
``commands.check_steps`` (a run of no step; every command with --dt and --duration, found in
the parser, must refuse one), ``StaticsResult.beyond_limits`` (an equilibrium beyond a
tendon's limit), ``commands.OutputPath`` (a plot written where the command says) and the
commands' own rows below. A reader that closes the pipe early (``| head -1``) loses nothing:
``cli.ClosedPipeTolerant`` lets every command finish its work and files and exit with its own
code; the table runs every command, sub-command included, with a standard output whose reader
is gone, and a new command must add its row.
"""

import io
import os
from pathlib import Path
import subprocess
import sys

from cli_commands import parsers
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.commands import time_step
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
ROBOT = str(ROOT / 'config' / 'robot.yaml')
# A measured table and its column map: opencr-mujoco's FTDCR v4 (test/data, MIT).
V4_CSV = str(ROOT / 'test' / 'data' / 'opencr_ftdcr_v4' / 'tdcr_sysid_20260511-183002_val.csv')
V4_COLUMNS = str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml')
V4_ROBOT = str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
HOLDS = 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2499,0,-0.0085\n0,2,0,0,0.2387,0.0596,-0.0088\n'


@pytest.fixture(scope='module')
def places(tmp_path_factory):
    """Make a folder for outputs, a CSV of holds, a bag with messages and one without."""
    folder = tmp_path_factory.mktemp('results')
    (folder / 'holds.csv').write_text(HOLDS)
    # (a statics model for the hidden robot: the bag's messages are what counts here, not
    # how they were made)
    assert cli.main(['synth-experiment', str(folder / 'bag'), '--robot', ROBOT,
                     '--truth-model', 'cosserat']) == 0
    # nothing publishes here: no message recorded is no result (exit 1), the bag is kept
    assert cli.main(['record', str(folder / 'empty_bag'), '--duration', '0.01']) == 1
    return {'tmp': str(folder), 'holds': str(folder / 'holds.csv'), 'bag': str(folder / 'bag'),
            'empty_bag': str(folder / 'empty_bag')}


def run(argv, places, capsys):
    code = cli.main([word.format(**places) for word in argv])
    out, err = capsys.readouterr()
    assert 'Traceback' not in err and 'internal error' not in err, err
    return code, out, err


# ------------------------------------------------------------------ not results

STEP_OPTIONS = ('--dt', '--duration')
# What a command with --dt and --duration needs besides them to run.
STEPPED = {
    'simulate': [],
    'cc-dynamics': ['--tensions', 't0=1'],
    'snake forward': ['--tensions', '1.5,3.5,1,1'],
    'snake inverse': ['--trajectory', 'pan', '--out', '{tmp}/snake_steps'],
}


def stepped_commands():
    found = []
    for words, parser in parsers():
        options = {o for action in parser._actions for o in action.option_strings}
        if set(STEP_OPTIONS) <= options:
            found.append(' '.join(words))
    return found


def test_every_command_with_a_time_step_is_in_the_table():
    assert sorted(stepped_commands()) == sorted(STEPPED), (
        'add the new command with --dt and --duration to STEPPED')


@pytest.mark.parametrize('command', stepped_commands())
def test_a_step_longer_than_the_run_is_refused_not_reported_as_a_result(command, places,
                                                                        capsys):
    argv = [*command.split(), *STEPPED.get(command, []), '--dt', '10', '--duration', '2']
    code, out, err = run(argv, places, capsys)
    assert code == 2 and '--dt: 10 s is longer than --duration 2 s' in err, err


@pytest.mark.parametrize('command', stepped_commands())
def test_every_time_step_has_the_one_bounded_type(command):
    (parser,) = [p for words, p in parsers() if ' '.join(words) == command]
    (dt,) = [a for a in parser._actions if '--dt' in a.option_strings]
    assert dt.type is time_step, f'{command} --dt: use type=commands.time_step'


@pytest.mark.parametrize('argv, code, text', [
    # a step of 1e-300 s overflowed a step count; 1 ns .. 1 h
    (['simulate', '--dt', '1e-300'], 2, 'argument --dt: must be a time step within'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--dt', '1e9'], 2, 'argument --dt'),
    # more steps than any run takes, even one that keeps none
    (['simulate', '--dt', '1e-9', '--duration', '1e6'], 2, 'more than any run takes'),
    # a load or position beyond the physical range of its description key: bad input, not a
    # solve that does not converge
    (['statics', '--tensions', '1,0,0,0', '--tip-force', '1e300,0,0'], 2,
     '--tip-force[0]: must be within [-100000, 100000] N'),
    (['pcr', 'ik', '--position', '0,0,0.5', '--force', '0,0,1e300'], 2, '--force[2]'),
    (['cc', '--tip', '1e300,0,0'], 2, '--tip[0]: must be within [-1000, 1000] m'),
    # 326 N of a 20 N tendon, the rod coiled: no equilibrium within the limits
    (['statics', '--displacements', 't0=0.2'], 1,
     '--displacements[t0]: the equilibrium needs 326 N, above max_tension = 20 N'),
    # its own stable step: a run of 1 ns is not one step
    (['simulate', '--duration', '1e-9'], 2, 'not one step would run'),
    # a bag without messages replays nothing
    (['replay', '{empty_bag}', '--delay', '0'], 2, 'holds no messages'),
    # nor plays in the page: the same check (experiment.bag.check_messages), before serving
    (['view', '--bag', '{empty_bag}', '--port', '0'], 2, 'holds no messages on '),
])
def test_a_result_that_does_not_exist_is_not_exit_0(argv, code, text, places, capsys):
    exit_code, out, err = run(argv, places, capsys)
    assert exit_code == code and err.count('\n') == 1 and text in err, err


def test_a_plot_is_written_where_the_command_says(places, capsys, monkeypatch):
    monkeypatch.chdir(places['tmp'])
    code, out, err = run(['cc-dynamics', '--tensions', 't0=1', '--duration', '0.05', '--plot',
                          'myplot'], places, capsys)
    assert code == 0 and 'wrote myplot.png' in out
    assert Path(places['tmp'], 'myplot.png').is_file()
    assert not Path(places['tmp'], 'myplot').exists()


# ------------------------------------------------------------------ closed pipes

# One run of every command; --help where a run takes minutes or a device (the same
# mechanism serves every command: what it prints goes through cli.main's streams).
QUICK = {
    'simulate': ['--duration', '0.01'],
    'launch': ['sim', '--dry-run'],
    'demo': ['--help'],
    'emulate': ['--duration', '0.05'],
    'statics': ['--tensions', '0,1,0,0'],
    'cc': ['--tip', '0.247048,0,0.033136'],
    'cc-dynamics': ['--tensions', 't0=1', '--duration', '0.05', '--plot', '{tmp}/pipe_cc.png'],
    'record': ['{tmp}/pipe_bag', '--duration', '0.01'],
    'replay': ['{bag}', '--delay', '0', '--rate', '1000', '--topics', 'tip/measured'],
    'reindex': ['{bag}'],
    'synth-experiment': ['{tmp}/pipe_synth', '--experiment', 'holds', '--truth-model', 'cosserat'],
    'validate': ['{holds}', '--report', '{tmp}/pipe_report'],
    'calibrate': ['{holds}', '--fit', 'youngs_modulus', '--out', '{tmp}/pipe_cal.yaml'],
    'import': [V4_CSV, '--columns', V4_COLUMNS, '--robot', V4_ROBOT, '--out', '{tmp}/pipe_import'],
    'pcr ik': ['--position', '0,0,0.5'],
    'pcr fk': ['--motor-angles-deg', '10,10,12,12,8,8'],
    'pcr workspace': ['--heights', '0.45:0.5:2', '--per-height', '3', '--workers', '1', '--out',
                      '{tmp}/pipe_ws'],
    'pcr stiffness': [],
    'pcr sweep': ['--yaw', '0:10:2', '--out', '{tmp}/pipe_sweep'],
    'pcr trajectory': ['--points', '10', '--out', '{tmp}/pipe_helix'],
    'snake inverse': ['--trajectory', 'pan', '--duration', '0.5', '--out', '{tmp}/pipe_snake',
                      '--plot'],
    'snake forward': ['--from', '1.5,3.5,1,1', '--tensions', '1.5,4.5,1,1', '--ramp', '0.05',
                      '--duration', '0.05'],
    'dataset': ['--robot', ROBOT, '--model', 'cc', '--samples', '5', '--output',
                '{tmp}/pipe_data'],
    'warmup': ['--help'],
    'hardware scan': ['--help'],
    'hardware calibrate-tension': ['--help'],
    'view': ['--help'],
}
# What each run must have written in spite of the closed pipe.
WRITTEN = {'cc-dynamics': 'pipe_cc.png', 'record': 'pipe_bag', 'synth-experiment': 'pipe_synth',
           'validate': 'pipe_report/report.md', 'calibrate': 'pipe_cal.yaml',
           'import': 'pipe_import',
           'pcr workspace': 'pipe_ws/workspace.png', 'snake inverse': 'pipe_snake/tensions.png',
           'pcr sweep': 'pipe_sweep/rotation.png', 'pcr trajectory': 'pipe_helix/helix.png',
           'dataset': 'pipe_data.parquet'}
# Runs of QUICK without a result, yet with their output written: nothing publishes here, so
# `record` records no message (exit 1, test/ros/test_record.py) and keeps its bag.
NO_RESULT = {'record'}
COMMANDS = [' '.join(words) for words, _ in parsers()]


class ClosedPipe(io.TextIOBase):
    """A standard output whose reader is gone: every write fails as a closed pipe does."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, 'Broken pipe')


def test_every_command_has_a_closed_pipe_row():
    assert sorted(QUICK) == sorted(COMMANDS), 'give the new command its row in QUICK'


@pytest.mark.parametrize('command', COMMANDS)
def test_a_closed_pipe_loses_nothing(command, places, capsys, monkeypatch):
    argv = [*command.split(), *QUICK[command]]
    monkeypatch.setattr(sys, 'stdout', ClosedPipe())
    code = cli.main([word.format(**places) for word in argv])
    err = capsys.readouterr().err
    assert code == (1 if command in NO_RESULT else 0), err
    assert 'Traceback' not in err and 'internal error' not in err and 'Broken' not in err, err
    if command in WRITTEN:
        assert Path(places['tmp'], WRITTEN[command]).exists()


class FullDevice(io.TextIOBase):
    """A standard output on a full disk (``> /dev/full``): every write fails."""

    def write(self, text: str) -> int:
        raise OSError(28, 'No space left on device')


@pytest.mark.parametrize('command', COMMANDS)
def test_a_full_standard_output_is_an_error_in_one_line(
        command, places, capsys, monkeypatch, tmp_path):
    """What a command prints is its result (or part of it): lost, it is no result."""
    argv = [*command.split(), *QUICK[command]]
    monkeypatch.setattr(sys, 'stdout', FullDevice())
    own = {**places, 'tmp': str(tmp_path)}      # outputs of their own: new folders
    code = cli.main([word.format(**own) for word in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    # one line (after the progress bars, on stderr) and nothing else
    assert err.endswith(': error: standard output: cannot write (No space left on '
                        'device)\n'), err
    assert 'Traceback' not in err and 'internal error' not in err, err


def test_a_real_closed_pipe_ends_quietly():
    """``tendon-robot-sim cc ... | head -0``: the reader is gone before the first line."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'cc', '--tip',
                                 '0.247048,0,0.033136', '--json'], stdout=write,
                                stderr=subprocess.PIPE, text=True, timeout=COMMAND_TIMEOUT,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        os.close(write)
    assert result.returncode == 0 and result.stderr == '', result.stderr


FILLED = {
    'statics': ['statics', '--tensions-csv', str(ROOT / 'config' / 'pull_release_tensions.csv'),
                '--trajectory-out', '{tmp}/full/loop.csv'],
    'pcr sweep': ['pcr', 'sweep', '--yaw', '0:10:2', '--out', '{tmp}/full'],
    'cc-dynamics': ['cc-dynamics', '--tensions', 't0=1', '--duration', '0.05', '--plot',
                    '{tmp}/full/run.png'],
}


@pytest.mark.parametrize('command', FILLED)
def test_a_file_on_a_full_disk_is_an_error_in_one_line(command, places, capsys, monkeypatch):
    """A full disk is no bug (exit 70) but an output that cannot be written: exit 2, named."""
    from tendon_robot_sim.files import outputs
    folder = Path(places['tmp']) / 'full'
    folder.mkdir(exist_ok=True)
    real = os.fdopen

    def on_a_full_disk(descriptor, mode, **options):    # writes fail as on a full disk
        os.close(descriptor)
        return real(os.open('/dev/full', os.O_WRONLY), mode, **options)

    monkeypatch.setattr(outputs.os, 'fdopen', on_a_full_disk)
    assert cli.main([word.format(**places) for word in FILLED[command]]) == 2
    err = capsys.readouterr().err.strip().split('\n')[-1]
    assert err.startswith(f'tendon-robot-sim {command}: error: {folder}/') and \
        err.endswith(': cannot write: No space left on device'), err
    assert list(folder.iterdir()) == []     # no temporary file left
