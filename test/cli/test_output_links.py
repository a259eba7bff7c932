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
The class "outputs follow links": no link planted in a shared folder redirects an output.

``cc-dynamics --plot LINK.png``, LINK.png pointing at another file, overwrote that file; run as
root in a shared /tmp, a planted link could overwrite a system file. Every output goes through
``files.outputs``: a file is written beside its target and renamed onto it (a link there is
replaced, never followed), and a link on the way that someone else owns (the output folder,
a folder above it) is refused. The table runs every output of every command, found in the
parser (every option of type ``OutputPath``, every flag that adds a file), for real: links
are planted at every file the run writes (the table lists them, and a run that writes a file
the table does not list fails, so a new output cannot be forgotten), and each link's target
must come through unchanged. ``demo`` (a minute of ROS stack) plants its links in
test_demo.py.
"""

import os
from pathlib import Path

from cli_commands import actions
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.commands import OutputPath

ROOT = Path(__file__).resolve().parents[2]
HOLDS = 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2499,0,-0.0085\n0,2,0,0,0.2387,0.0596,-0.0088\n'
BHA = str(ROOT / 'config' / 'bionic_handling_assistant.yaml')
PRESSURES = 't,p1\n0,0\n0.2,1000\n'      # Pa over s: a short run of the bellows robot
NOBODY = 65534
VICTIM = 'a file of someone else\n'

# One run per row, keyed by the outputs it covers: the command line ({out}: the output,
# {holds}: a CSV of holds), the output, and the files the run writes (relative to the folder
# that holds the output).
RUNS = {
    ('simulate --trajectory-out',): (
        ['simulate', '--duration', '0.01', '--trajectory-out', '{out}'], 'run.csv', ['run.csv']),
    ('statics --trajectory-out', 'statics --plot'): (
        ['statics', '--robot', str(ROOT / 'config' / 'robot_friction.yaml'), '--model',
         'discrete', '--tensions-csv', str(ROOT / 'config' / 'pull_release_tensions.csv'),
         '--trajectory-out', '{out}', '--plot', '{out}.png'], 'loop.csv',
        ['loop.csv', 'loop.csv.png']),
    ('cc-dynamics --plot',): (
        ['cc-dynamics', '--tensions', 't0=1', '--duration', '0.05', '--plot', '{out}'],
        'plot.png', ['plot.png']),
    ('calibrate --out',): (
        ['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '{out}'], 'robot.yaml',
        ['robot.yaml']),
    ('import --out',): (
        ['import', str(ROOT / 'test' / 'data' / 'opencr_ftdcr_v4' /
                       'tdcr_sysid_20260511-183002_val.csv'),
         '--columns', str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml'),
         '--robot', str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml'), '--out', '{out}'], 'bag',
        ['bag/bag.mcap', 'bag/metadata.yaml']),
    ('validate --report', 'validate --samples-out'): (
        ['validate', '{holds}', '--report', '{out}', '--samples-out', '{out}/samples.csv'],
        'report', ['report/error_vs_tension.png', 'report/report.md', 'report/samples.csv',
                   'report/tips.png']),
    ('pcr workspace --out',): (
        ['pcr', 'workspace', '--heights', '0.45:0.5:2', '--per-height', '3', '--workers', '1',
         '--out', '{out}'], 'ws', ['ws/workspace.csv', 'ws/workspace.png']),
    ('pcr sweep --out',): (
        ['pcr', 'sweep', '--yaw', '0:1:2', '--out', '{out}'], 'sweep',
        ['sweep/rotation.csv', 'sweep/rotation.png']),
    ('pcr trajectory --out',): (
        ['pcr', 'trajectory', '--points', '10', '--out', '{out}'], 'helix',
        ['helix/helix.csv', 'helix/helix.png']),
    ('snake inverse --out', 'snake inverse --plot'): (
        ['snake', 'inverse', '--trajectory', 'pan', '--duration', '0.5', '--out', '{out}',
         '--plot'], 'snake', ['snake/tensions.png', 'snake/tensions_pan.csv']),
    ('dataset --output',): (
        ['dataset', '--robot', str(ROOT / 'config' / 'robot.yaml'), '--model', 'cc',
         '--samples', '5', '--output', '{out}'], 'data',
        ['data.json', 'data.parquet']),
    ('synth-experiment OUT_BAG',): (
        ['synth-experiment', '{out}', '--robot', BHA, '--pressures-csv', '{pressures}'], 'bag',
        ['bag/bag.mcap', 'bag/metadata.yaml']),
    ('record OUT_BAG',): (['record', '{out}', '--duration', '0.01'], 'bag',
                          ['bag/bag.mcap', 'bag/metadata.yaml']),
    ('launch --params-dir',): (
        ['launch', 'sim', '--dry-run', '--params-dir', '{out}'], 'params',
        ['params/simulator.yaml', 'params/tension_controller.yaml']),
}
# Rows whose run has no result, yet writes its outputs: nothing publishes here, so `record`
# records no message (exit 1, test/ros/test_record.py) and keeps its bag.
NO_RESULT = {('record OUT_BAG',)}
# Files a run writes and removes before it ends (a dataset's parts): planted too.
TRANSIENT = {('dataset --output',): ['data.parts/part-00000.parquet']}
# Outputs whose runs plant their links elsewhere (a minute of ROS stack): where.
ELSEWHERE = {'demo --out': 'test/cli/test_demo.py'}
# Flags that make a command write a file more.
OUTPUT_FLAGS = ('plot', 'save', 'write')


def outputs():
    """'command option' of every output of every command, and of every flag adding one."""
    found = set()
    for command, action in actions():
        name = action.option_strings[-1] if action.option_strings else action.metavar
        if isinstance(action.type, OutputPath):
            found.add(f'{command} {name}')
        elif action.nargs == 0 and any(word in action.dest for word in OUTPUT_FLAGS):
            found.add(f'{command} {name}')
    return found


def test_every_output_of_every_command_has_a_row():
    covered = {output for row in RUNS for output in row} | set(ELSEWHERE)
    assert sorted(outputs() - covered) == [], 'give these outputs a row in RUNS'


ROWS = sorted(RUNS)
IDS = [', '.join(row) for row in ROWS]


@pytest.fixture()
def shared(tmp_path, monkeypatch):
    """Make a shared folder (the outputs go there), a folder of victims, a CSV of holds."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'holds.csv').write_text(HOLDS)
    (tmp_path / 'pressures.csv').write_text(PRESSURES)
    (tmp_path / 'victims').mkdir()
    (tmp_path / 'shared').mkdir()
    return tmp_path


def shared_files(shared: Path) -> dict:
    return {'holds': shared / 'holds.csv', 'pressures': shared / 'pressures.csv'}


def plant(shared: Path, name: str) -> Path:
    """Plant a link at shared/``name`` to a victim file of its own; return the victim."""
    victim = shared / 'victims' / name.replace('/', '_')
    victim.write_text(VICTIM)
    link = shared / 'shared' / name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)
    return victim


def written(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob('*') if not p.is_dir())


@pytest.mark.parametrize('row', ROWS, ids=IDS)
def test_a_link_at_an_output_is_replaced_never_followed(row, shared, capsys):
    argv, output, files = RUNS[row]
    new_folder = output.endswith('bag')      # a bag is a new folder: nothing to plant inside
    victims = [] if new_folder else [plant(shared, name)
                                     for name in files + TRANSIENT.get(row, [])]
    out = shared / 'shared' / output
    code = cli.main([w.format(out=out, **shared_files(shared)) for w in argv])
    err = capsys.readouterr().err
    assert code == (1 if row in NO_RESULT else 0), err
    for victim in victims:
        assert victim.read_text() == VICTIM, f'{row} wrote through the link to {victim.name}'
    assert written(shared / 'shared') == sorted(files), (
        f'{row}: the files it writes are not those of its row (a new output? add it)')
    for name in files:
        path = shared / 'shared' / name
        assert not path.is_symlink() and path.stat().st_size > 0, name


@pytest.mark.skipif(os.geteuid() != 0, reason='planting a link of another user takes root')
@pytest.mark.parametrize('row', ROWS, ids=IDS)
def test_a_folder_link_someone_else_planted_is_refused(row, shared, capsys):
    """The output folder (or the folder of an output file) is another user's link."""
    argv, output, files = RUNS[row]
    link = shared / 'shared' / 'planted'
    link.symlink_to(shared / 'victims')
    os.lchown(link, NOBODY, NOBODY)
    folder_output = '/' in files[0] and not output.endswith('bag')
    out = link if folder_output else link / output
    code = cli.main([w.format(out=out, **shared_files(shared)) for w in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count('\n') == 1, err
    assert f'{link} is a link owned by nobody (uid {NOBODY})' in err, err
    assert list((shared / 'victims').iterdir()) == []


def test_the_link_of_the_report_overwrote_nothing(shared, capsys):
    """The report's case: ``cc-dynamics --plot LINK.png``, LINK.png a link to another file."""
    victim = shared / 'victims' / 'other.png'
    victim.write_bytes(b'not a plot')
    (shared / 'LINK.png').symlink_to(victim)
    assert cli.main(['cc-dynamics', '--tensions', 't0=1', '--duration', '0.1', '--plot',
                     'LINK.png']) == 0
    assert victim.read_bytes() == b'not a plot'
    assert (shared / 'LINK.png').read_bytes()[:4] == b'\x89PNG'


def test_a_link_at_the_resume_state_of_a_dataset_is_read_and_refused(shared, capsys):
    """A dataset reads its manifest first (to resume): a planted one is refused, untouched."""
    victim = plant(shared, 'data.parts/manifest.json')
    code = cli.main(['dataset', '--robot', str(ROOT / 'config' / 'robot.yaml'), '--model', 'cc',
                     '--samples', '5', '--output', str(shared / 'shared' / 'data')])
    err = capsys.readouterr().err
    assert code == 2 and 'is not the manifest of a dataset run' in err, err
    assert victim.read_text() == VICTIM


@pytest.mark.parametrize('row', [row for row in ROWS if RUNS[row][1] == 'bag'], ids=str)
def test_a_link_at_a_new_bag_is_refused(row, shared, capsys):
    """A bag goes into a new folder: a link there (to a folder or not) is refused as it is."""
    argv, output, _ = RUNS[row]
    victim = plant(shared, output)
    code = cli.main([w.format(out=shared / 'shared' / output, **shared_files(shared))
                     for w in argv])
    err = capsys.readouterr().err
    assert code == 2 and 'exists already' in err, err
    assert victim.read_text() == VICTIM
