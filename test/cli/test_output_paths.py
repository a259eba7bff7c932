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
The class "output paths": every path a command writes is checked before the work starts.

Enforced in one place, the argument type ``commands.OutputPath`` (applied by argparse, and by
``cli.main`` to the values argparse leaves as typed); a path a command computes goes through
``commands.check_output``. The table is built from the parser: every option of every command
whose type is an OutputPath gets the bad paths of its kind, and every option that looks like an
output (its name, its metavar) must have that type, so a new command cannot forget. A refused
path is exit 2 and one line naming the option, and nothing is run: these cases take
milliseconds.
"""

import os
from pathlib import Path

from cli_commands import actions
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.commands import CommandError, OutputPath
from tendon_robot_sim.experiment.bag import BagError, BagMessages, BagWriter, OfferedQos

ROOT = Path(__file__).resolve().parents[2]
ROBOT = str(ROOT / 'config' / 'robot.yaml')
# What a command needs besides its output to get past parsing (inputs need not exist).
REQUIRED = {
    'validate': ['holds.csv'],
    'calibrate': ['holds.csv', '--fit', 'youngs_modulus'],
    'snake inverse': ['--trajectory', 'pan'],
    'cc-dynamics': ['--tensions', 't0=1'],
    'dataset': ['--robot', ROBOT, '--model', 'cc'],
}
OUTPUT_NAMES = ('out', 'output', 'report', 'plot', 'save', 'log')


def looks_like_output(action) -> bool:
    if action.nargs == 0:     # a flag, e.g. --plot of a command that knows where
        return False
    names = [action.dest] + [o.lstrip('-') for o in action.option_strings]
    return (any(n.split('_')[0] in OUTPUT_NAMES for n in names)
            or str(action.metavar or '').startswith('OUT'))


ALL = list(actions())
OUTPUTS = [(command, action) for command, action in ALL if isinstance(action.type, OutputPath)]


def test_the_outputs_of_the_commands_are_found():
    found = {command for command, _ in OUTPUTS}
    assert {'record', 'synth-experiment', 'validate', 'calibrate', 'snake inverse',
            'pcr workspace', 'cc-dynamics', 'dataset', 'demo'} <= found


def default_outputs(action) -> list[str]:
    """Return what a command writes where it runs when the option is not given."""
    if not (isinstance(action.default, str) and action.default):
        return []
    if action.type.kind == 'prefix':      # PATH.parquet, PATH.json: files beside the clone's
        return [f'/{action.default}{suffix}' for suffix in action.type.suffixes]
    return [Path(action.default).parts[0] + '/']


DEFAULTS = sorted({(command, name) for command, action in OUTPUTS
                   for name in default_outputs(action)})


def test_the_default_outputs_are_found():
    assert ('snake inverse', 'snake_output/') in DEFAULTS
    assert ('pcr workspace', 'pcr_workspace/') in DEFAULTS
    assert ('dataset', '/dataset.parquet') in DEFAULTS


@pytest.mark.parametrize('command, name', DEFAULTS)
def test_a_default_output_is_git_ignored_and_a_folder_cleaned(command, name):
    """
    `pcr workspace`, `sweep` and `trajectory` wrote into folders of the clone that git listed.

    Run from the clone as the README does, what a command writes by default is git-ignored, and
    `make clean` removes a default output folder, as it did demo_output/ (not a dataset's
    files, which may have taken hours).
    """
    ignored = (ROOT / '.gitignore').read_text().splitlines()
    assert name in ignored, f'{command}: add {name} to .gitignore'
    if name.endswith('/'):
        clean = (ROOT / 'Makefile').read_text().split('\nclean:\n')[1].split('\n\n')[0]
        assert name.rstrip('/') in clean.split(), f'{command}: make clean should remove {name}'


@pytest.mark.parametrize('command, action', [(c, a) for c, a in ALL if looks_like_output(a)],
                         ids=lambda v: v if isinstance(v, str) else v.dest)
def test_every_output_option_is_checked_before_the_work(command, action):
    assert isinstance(action.type, OutputPath), (
        f'{command} {action.dest}: give it type=commands.OutputPath(kind), so that the path is '
        'checked before the work starts')


BAD = {
    # every kind: a folder nobody may write, even root; a file where a folder must be
    'unwritable': ('/proc/tendon_robot_sim_out', 'cannot write in /proc'),
    'system': ('/sys/tendon_robot_sim_out', 'cannot write in /sys'),
    'under a file': ('{file}/sub', 'is a file, not a folder'),
    'empty': ('', 'an empty path'),
    # neither a file nor a folder: a write fails once the work is done (/dev/full), blocks
    # (a pipe) or lands beside it (/dev/full.png): refused as given, before any suffix
    'a device': ('/dev/full', '/dev/full is a device, not a regular file'),
    'a pipe': ('{pipe}', 'is a pipe, not a regular file'),
}
BAD_OF_KIND = {
    'folder': {'a file': ('{file}', 'is a file, not a folder')},
    'new folder': {'an existing folder': ('{folder}', 'exists already')},
    'file': {'a folder': ('{folder}', 'is a folder'),
             'in a missing folder': ('{folder}/missing/out', 'does not exist')},
    'prefix': {'a folder': ('{folder}', 'is a folder'),
               'a folder by its slash': ('{folder}/new/', 'names a folder (it ends in /)')},
}


def cases():
    for command, action in OUTPUTS:
        kind = action.type.kind
        bad = dict(BAD, **BAD_OF_KIND[kind])
        if kind == 'file' and action.type.suffixes:    # a prefix's suffixes are added
            bad['another format'] = ('plot.xyz', f'must end in {action.type.suffixes[0]}')
        for label, (path, text) in bad.items():
            yield pytest.param(command, action, path, text,
                               id=f'{command} {action.dest}: {label}')


def argv_of(command: str, action, path: str) -> list[str]:
    words = command.split()
    required = REQUIRED.get(command, [])
    if not action.option_strings:       # a positional output comes first
        return [*words, path, *required]
    return [*words, *required, action.option_strings[-1], path]


@pytest.fixture()
def places(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'a_file.txt').write_text('keep me\n')
    (tmp_path / 'a_folder').mkdir()
    os.mkfifo(tmp_path / 'a_folder' / 'a_pipe')
    return {'file': str(tmp_path / 'a_file.txt'), 'folder': str(tmp_path / 'a_folder'),
            'pipe': str(tmp_path / 'a_folder' / 'a_pipe')}


@pytest.mark.parametrize('command, action, path, text', list(cases()))
def test_a_path_that_cannot_be_written_is_refused_naming_the_option(
        command, action, path, text, places, capsys):
    path = path.format(**places)
    assert cli.main(argv_of(command, action, path)) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    name = action.option_strings[-1] if action.option_strings else action.metavar
    assert len(lines) == 1 and f'argument {name}: ' in lines[0] and text in lines[0], (
        f'{err} (a command with other required arguments needs them in REQUIRED)')
    # nothing was lost or left behind
    assert Path(places['file']).read_text() == 'keep me\n'
    assert sorted(p.name for p in Path(places['folder']).parent.iterdir()) == [
        'a_file.txt', 'a_folder']


@pytest.mark.parametrize('argv, text', [
    # outputs a command computes or rewrites: the same check, naming the option
    (['demo'], '--out: cannot write in /proc'),
    (['hardware', 'calibrate-tension', '--port', '/dev/null', '--config', '{folder}'],
     '--config: {folder} is a folder'),
    # the emulator's links: never over a file of the user's, never where none can be made
    (['emulate', '--motors', 'pty:{file}', '--duration', '0.01'], 'exists and is not a link'),
    (['emulate', '--sensor', 'pty:/proc/tendon_robot_sim_link', '--duration', '0.01'],
     '--sensor: port'),
    (['emulate', '--sensor', 'tcp:99999', '--duration', '0.01'], '--sensor: port'),
])
def test_outputs_checked_in_the_command_are_refused_naming_the_option(
        argv, text, places, capsys, monkeypatch):
    if argv == ['demo']:     # its default folder, under a cwd nobody may write
        monkeypatch.chdir('/proc')
    assert cli.main([word.format(**places) for word in argv]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and text.format(**places) in err, err
    assert Path(places['file']).read_text() == 'keep me\n'


NEW_BAGS = [(command, action) for command, action in OUTPUTS if action.type.kind == 'new folder']


def recorded_bag(path: Path, storage: str = 'mcap') -> dict:
    """Write a bag of one message at ``path``; return its files' contents by name."""
    with BagWriter(path, storage=storage) as bag:
        bag.add_topic('/tip/measured', 'geometry_msgs/msg/PointStamped', OfferedQos())
        bag.write('/tip/measured', 10 ** 9,
                  BagMessages(bag.typestore).point(10 ** 9, 'base_link', (0.2, 0.0, 0.25)))
    return {p.name: p.read_bytes() for p in path.iterdir()}


@pytest.mark.parametrize('command, action', NEW_BAGS, ids=lambda v: v if isinstance(v, str)
                         else v.dest)
@pytest.mark.parametrize('inner', ['new', 'missing/new'])
def test_a_new_bag_inside_a_bag_folder_is_refused(command, action, inner, tmp_path, capsys):
    """
    ``synth-experiment BAG/new`` simulated, then wrote a second bag into the first one's folder.

    A bag folder is one recording: its files are what its metadata lists (a killed recorder's
    folder: its storage file). Refused as the path is parsed, before any work, the bag kept.
    """
    assert {'record', 'import', 'synth-experiment'} <= {c for c, _ in NEW_BAGS}
    bag = tmp_path / 'recorded'
    files = recorded_bag(bag)
    if command == 'synth-experiment':     # a killed recording, without its metadata yet
        (bag / 'metadata.yaml').unlink()
        del files['metadata.yaml']
    assert cli.main(argv_of(command, action, str(bag / inner))) == 2
    err = capsys.readouterr().err
    name = action.option_strings[-1] if action.option_strings else action.metavar
    assert err.count('\n') == 1 and (
        f'argument {name}: {bag / inner} is inside the bag {bag}; a bag is written into a new '
        f'folder outside any other bag' in err), err
    assert {p.name: p.read_bytes() for p in bag.iterdir()} == files


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_a_bag_writer_refuses_a_folder_inside_a_bag(storage, tmp_path):
    bag = tmp_path / 'recorded'
    files = recorded_bag(bag, storage)
    with pytest.raises(BagError, match=rf'^{bag / "new"} is inside the bag {bag}; '):
        BagWriter(bag / 'new', storage=storage)
    assert {p.name: p.read_bytes() for p in bag.iterdir()} == files
    # beside it, and in a new folder beside it, a bag is written
    for path in (tmp_path / 'beside', tmp_path / 'more' / 'inner'):
        recorded_bag(path, storage)


def test_a_plot_without_a_suffix_is_written_where_the_command_says(places):
    assert OutputPath('file', ('.png',))('myplot') == Path('myplot.png')


@pytest.mark.parametrize('kind, suffixes', [('file', ('.png',)), ('file', ()), ('prefix', ()),
                                            ('folder', ()), ('new folder', ())])
def test_a_device_is_not_written_beside_either(kind, suffixes, places, tmp_path):
    # /dev/full.png, /dev/full.parquet: a suffix added to a device (or a link to one)
    (tmp_path / 'link').symlink_to('/dev/null')
    for device in ('/dev/null', str(tmp_path / 'link')):
        with pytest.raises(CommandError, match='is a device, not a regular file'):
            OutputPath(kind, suffixes).check(device)
    assert not Path('/dev/null.png').exists()


HOLDS = 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2411,0,-0.0617\n0,2,0,0,0.2287,-0.0641,-0.0622\n'
PROFILE = 't,p1\n0,0\n1,1000\n'


@pytest.mark.parametrize('argv, option, reader', [
    # a recording calibrated or validated onto itself: a CSV of holds, a file of a bag folder
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '{holds}'], '--out',
     'BAG_OR_CSV'),
    (['calibrate', '{bag}', '--fit', 'youngs_modulus', '--out', '{bag}/bag.mcap'], '--out',
     'BAG_OR_CSV'),
    (['validate', '{holds}', '--report', '{folder}', '--samples-out', '{holds}'],
     '--samples-out', 'BAG_OR_CSV'),
    (['validate', '{holds}', '--report', '{folder}', '--after', '{after}', '--samples-out',
      '{after}'], '--samples-out', '--after'),
    (['calibrate', '{holds}', '--robot', str(ROOT / 'config' / 'bionic_handling_assistant.yaml'),
      '--fit', 'damping', '--step-response', '{after}', '--out', '{after}'], '--out',
     '--step-response'),
    # the input profile of a run, written over by its own trajectory
    (['synth-experiment', '{profile}', '--robot',
      str(ROOT / 'config' / 'bionic_handling_assistant.yaml'), '--pressures-csv', '{profile}'],
     'OUT_BAG', '--pressures-csv'),
    (['simulate', '--tensions-csv', '{profile}', '--trajectory-out', '{profile}'],
     '--trajectory-out', '--tensions-csv'),
])
def test_an_output_onto_a_file_the_command_reads_is_refused(argv, option, reader, tmp_path,
                                                            capsys):
    """
    The recording a calibration reads is not its calibrated file: refused, the file kept.

    ``calibrate holds.csv --out holds.csv`` fitted the holds, then wrote the robot file over
    them, exit 0: the user's measurements were gone; so did ``--out BAG/BAG.mcap`` with a
    bag's recording and ``validate --samples-out`` with its CSV of holds.
    """
    (tmp_path / 'holds.csv').write_text(HOLDS)
    (tmp_path / 'after.csv').write_text(HOLDS)
    (tmp_path / 'profile.csv').write_text(PROFILE)
    (tmp_path / 'bag').mkdir()
    (tmp_path / 'bag' / 'bag.mcap').write_text('a recording\n')
    (tmp_path / 'report').mkdir()
    places = {'holds': str(tmp_path / 'holds.csv'), 'after': str(tmp_path / 'after.csv'),
              'profile': str(tmp_path / 'profile.csv'), 'bag': str(tmp_path / 'bag'),
              'folder': str(tmp_path / 'report')}
    before = {path: path.read_bytes() for path in tmp_path.rglob('*') if path.is_file()}
    assert cli.main([word.format(**places) for word in argv]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and f'argument {option}: ' in err, err
    assert f'what {reader} reads' in err and 'give another file' in err, err
    assert {path: path.read_bytes() for path in tmp_path.rglob('*') if path.is_file()} == before


def test_a_calibration_may_replace_the_robot_file_it_starts_from(tmp_path, capsys):
    """``calibrate --robot calibrated.yaml --out calibrated.yaml`` (docs/experiments.md)."""
    robot = tmp_path / 'calibrated.yaml'
    robot.write_text(Path(ROBOT).read_text())
    (tmp_path / 'holds.csv').write_text(HOLDS)
    assert cli.main(['calibrate', str(tmp_path / 'holds.csv'), '--robot', str(robot), '--fit',
                     'youngs_modulus', '--workers', '1', '--out', str(robot)]) == 0, (
        capsys.readouterr().err)
    assert robot.read_text().startswith('# calibrated by')
