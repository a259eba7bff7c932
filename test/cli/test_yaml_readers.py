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
The class "YAML readers": every YAML the package reads refuses a key given twice.

PyYAML keeps the last of two equal keys without a word: ``youngs_modulus`` written twice
moved the tip from -0.0722 to -0.0131 m. One loader reads every file
(``files.yaml_loader``). The walk is in two parts: no module parses YAML any other way (every
call into PyYAML's or ruamel's loaders is found in the sources), and every function that calls
the one loader (found in the sources too) has its row below, which feeds it a file with a key
given twice: one line naming the key and both lines, exit 2 at the command line.
"""

import ast
import functools
from pathlib import Path
import re
import shutil

import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from tendon_robot_sim import cli
from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos
from tendon_robot_sim.files.yaml_loader import YamlFileError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / 'tendon_robot_sim'
LOADER = PACKAGE / 'files' / 'yaml_loader.py'
# What parses YAML in PyYAML and ruamel.yaml (rosbags' reader): only the one loader calls them.
PARSERS = {'load', 'safe_load', 'full_load', 'unsafe_load', 'load_all', 'safe_load_all',
           'full_load_all', 'unsafe_load_all', 'compose', 'compose_all', 'parse', 'YAML'}
ENTRY_POINTS = {'read_yaml', 'yaml_value'}


@functools.cache
def modules() -> list:
    """(path, syntax tree) of every module of the package."""
    return [(path, ast.parse(path.read_text(), str(path)))
            for path in sorted(PACKAGE.rglob('*.py'))]


def _called(node) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, 'id', '')


def _owner(func) -> str:
    return func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value,
                                                                           ast.Name) else ''


def test_no_module_parses_yaml_but_the_one_loader():
    found = []
    for path, tree in modules():
        if path == LOADER:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in PARSERS \
                    and _owner(node.func) in ('yaml', 'ruamel', ''):
                if _called(node) in ('parse', 'compose', 'load') and _owner(node.func) == '':
                    continue     # a function of our own of that name
                found.append(f'{path.relative_to(ROOT)}:{node.lineno} {_called(node)}')
            if isinstance(node, ast.ClassDef) and any(
                    'Loader' in ast.unparse(base) for base in node.bases):
                found.append(f'{path.relative_to(ROOT)}:{node.lineno} class {node.name}')
    assert found == [], ('parse YAML with tendon_robot_sim.files.yaml_loader (read_yaml, '
                         f'yaml_value), not directly: {found}')


def loader_names(tree) -> tuple[set[str], set[str]]:
    """Names a module binds to the loader's entry points, and to the loader module itself."""
    functions, loaders = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.module == 'tendon_robot_sim.files.yaml_loader':
            functions |= {a.asname or a.name for a in node.names if a.name in ENTRY_POINTS}
        elif node.module == 'tendon_robot_sim.files':
            loaders |= {a.asname or a.name for a in node.names if a.name == 'yaml_loader'}
    return functions, loaders


def readers() -> set[str]:
    """'module:function' of every function of the package that calls the one loader."""
    found = set()
    for path, tree in modules():
        if path == LOADER:
            continue
        module = '.'.join(path.relative_to(PACKAGE).with_suffix('').parts)
        functions, loaders = loader_names(tree)
        for scope in ast.walk(tree):
            if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(scope):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                if (isinstance(func, ast.Name) and func.id in functions) or (
                        isinstance(func, ast.Attribute) and func.attr in ENTRY_POINTS
                        and _owner(func) in loaders):
                    found.add(f'{module}:{scope.name}')
    return found


# ------------------------------------------------------------------ files with a key twice


def twice(text: str, key: str) -> tuple[str, int, int]:
    """``text`` with the first line giving ``key`` written again below it; (text, both lines)."""
    lines = text.splitlines(keepends=True)
    index = next(i for i, line in enumerate(lines) if re.match(rf'\s*{key}:', line))
    lines.insert(index + 1, lines[index])
    return ''.join(lines), index + 1, index + 2


# (shipped file, key, its path in the file) per robot kind
ROBOTS = {
    'tendon_robot': ('robot.yaml', 'youngs_modulus', 'rod.youngs_modulus'),
    'bellows': ('bionic_handling_assistant.yaml', 'gravity', 'gravity'),
    'rolling_joint_snake': ('rolling_joint_snake.yaml', '  mass', 'link.mass'),
    'pcr_6rus': ('pcr_6rus.yaml', '  youngs_modulus', 'rods.youngs_modulus'),
}


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp('yaml_twice')
    made = {'tmp': str(folder), 'holds': str(folder / 'holds.csv'), 'bag': str(folder / 'bag')}
    (folder / 'holds.csv').write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.25,0,-0.01\n')
    with BagWriter(folder / 'bag') as bag:     # a setpoint to replay into a simulation
        bag.add_topic('/tendon/setpoint', 'sensor_msgs/msg/JointState', OfferedQos())
        bag.write('/tendon/setpoint', 10**9, serialize_message(JointState(
            name=['t0', 't1', 't2', 't3'], position=[0.0] * 4, velocity=[0.0] * 4,
            effort=[0.0] * 4)))
    for kind, (name, key, _) in ROBOTS.items():
        text, first, second = twice((ROOT / 'config' / name).read_text(), key)
        (folder / name).write_text(text)
        made[kind] = str(folder / name)
        made[f'{kind} lines'] = f'lines {first} and {second}'
    text, first, second = twice((ROOT / 'config' / 'dynamixel.yaml').read_text(),
                                'tension_mode')
    (folder / 'bus.yaml').write_text(text)
    made.update(bus=str(folder / 'bus.yaml'), bus_lines=f'lines {first} and {second}')
    return made


def check_one_line(code: int, err: str, key: str, lines: str) -> None:
    assert code == 2 and err.count('\n') == 1, err
    assert f'key {key} is given twice, on {lines}' in err, err
    assert 'Traceback' not in err and 'internal error' not in err, err


# Every command that reads a robot description (its --robot), with a file of its kind.
ROBOT_COMMANDS = {
    'simulate': ('tendon_robot', []),
    'statics': ('tendon_robot', ['--tensions', '1,0,0,0']),
    'cc': ('bellows', ['--muscle-lengths', '0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25']),
    'cc-dynamics': ('bellows', ['--pressures', 'p1=1000']),
    'launch': ('tendon_robot', ['sim', '--dry-run']),
    'demo': ('tendon_robot', []),
    'emulate': ('tendon_robot', ['--duration', '0.01']),
    'replay': ('tendon_robot', ['{bag}', '--simulate', '--delay', '0']),
    'synth-experiment': ('tendon_robot', ['{tmp}/synth']),
    'validate': ('tendon_robot', ['{holds}', '--report', '{tmp}/report']),
    'calibrate': ('tendon_robot', ['{holds}', '--fit', 'youngs_modulus', '--out',
                                   '{tmp}/c.yaml']),
    'pcr ik': ('pcr_6rus', ['--position', '0,0,0.5']),
    'pcr fk': ('pcr_6rus', ['--motor-angles-deg', '1,1,1,1,1,1']),
    'pcr workspace': ('pcr_6rus', ['--out', '{tmp}/ws']),
    'pcr stiffness': ('pcr_6rus', []),
    'pcr sweep': ('pcr_6rus', ['--yaw', '0:10:2', '--out', '{tmp}/sweep']),
    'pcr trajectory': ('pcr_6rus', ['--out', '{tmp}/helix']),
    'snake inverse': ('rolling_joint_snake', ['--trajectory', 'pan', '--out', '{tmp}/snake']),
    'snake forward': ('rolling_joint_snake', ['--tensions', '1,1,1,1']),
    'dataset': ('rolling_joint_snake', ['--model', 'snake', '--output', '{tmp}/data']),
    'view': ('tendon_robot', ['--port', '0']),
    'import': ('tendon_robot', [str(ROOT / 'test' / 'data' / 'opencr_ftdcr_v4' /
                                    'tdcr_sysid_20260511-183002_val.csv'),
                                '--columns', str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml'),
                                '--out', '{tmp}/imported']),
}


def robot_commands():
    """Every command with a --robot option, from the parser."""
    from cli_commands import actions
    return sorted({command for command, action in actions() if '--robot' in
                   action.option_strings})


def test_every_command_reading_a_robot_has_a_row():
    assert robot_commands() == sorted(ROBOT_COMMANDS), 'give the command its ROBOT_COMMANDS row'


@pytest.mark.parametrize('command', sorted(ROBOT_COMMANDS))
def test_a_robot_description_with_a_key_twice_is_refused(command, files, capsys):
    kind, extra = ROBOT_COMMANDS[command]
    argv = [*command.split(), *extra, '--robot', files[kind]]
    code = cli.main([word.format(**files) for word in argv])
    check_one_line(code, capsys.readouterr().err, ROBOTS[kind][2], files[f'{kind} lines'])


def test_the_youngs_modulus_of_the_issue_written_twice(files, capsys):
    """The file of the report: E twice, the last one silently taken."""
    text = (ROOT / 'config' / 'robot.yaml').read_text()
    text = re.sub(r'(?m)^(\s*)youngs_modulus: .*$', r'\g<0>\n\1youngs_modulus: 1.0e+10', text,
                  count=1)
    path = Path(files['tmp']) / 'e_twice.yaml'
    path.write_text(text)
    assert cli.main(['statics', '--tensions', '1,0,0,0', '--robot', str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and f'{path}: not valid YAML: key rod.youngs_modulus is ' \
        'given twice, on lines' in err, err


# ------------------------------------------------------------------ the other readers


def bus_file_of_the_hardware_tools(files, capsys, monkeypatch):
    code = cli.main(['hardware', 'calibrate-tension', '--port', '/dev/null', '--config',
                     files['bus']])
    check_one_line(code, capsys.readouterr().err, 'tension_mode', files['bus_lines'])


def bus_file_of_the_bridge(files, capsys, monkeypatch):
    from tendon_robot_sim.protocol.devices import load_dynamixel_bus
    from tendon_robot_sim.protocol.dynamixel.control_table import ChannelError
    with pytest.raises(ChannelError, match=f'dynamixel_file: {files["bus"]}: not valid YAML: '
                       f'key tension_mode is given twice, on {files["bus_lines"]}$'):
        load_dynamixel_bus(files['bus'])


def share_copy(files, monkeypatch, name, key):
    """Serve a copy of the share folder, ``name`` with ``key`` twice; return the lines."""
    share = Path(files['tmp']) / f'share_{key}'
    if not share.exists():
        for part in ('config', 'urdf', 'rviz'):
            shutil.copytree(ROOT / part, share / part)
    text, first, second = twice((ROOT / name).read_text(), key)
    (share / name).write_text(text)
    import tendon_robot_sim
    from tendon_robot_sim import stack
    from tendon_robot_sim.emulator import dynamixel
    for module in (tendon_robot_sim, stack, dynamixel):
        monkeypatch.setattr(module, 'share_dir', lambda: share)
    return f'lines {first} and {second}'


def launch_parameter_file(files, capsys, monkeypatch):
    lines = share_copy(files, monkeypatch, 'config/sim.yaml', '    dt')
    code = cli.main(['launch', 'sim', '--dry-run'])
    check_one_line(code, capsys.readouterr().err, '/**/simulator.ros__parameters.dt', lines)


def launch_parameter_value(files, capsys, monkeypatch):
    code = cli.main(['launch', 'sim', '--dry-run', '--param', 'simulator:dt:={a: 1, a: 2}'])
    check_one_line(code, capsys.readouterr().err, 'a', 'lines 1 and 1')


def shipped_bus_file_of_the_emulator(files, capsys, monkeypatch):
    from tendon_robot_sim.emulator.dynamixel import bus_text
    lines = share_copy(files, monkeypatch, 'config/dynamixel.yaml', 'bus_watchdog')
    with pytest.raises(YamlFileError, match=f'key bus_watchdog is given twice, on {lines}$'):
        bus_text()


def rviz_view(files, capsys, monkeypatch):
    from tendon_robot_sim.rviz_views import prefixed_view
    text, first, second = twice((ROOT / 'rviz' / 'sim.rviz').read_text(), '    Fixed Frame')
    with pytest.raises(YamlFileError, match='key Visualization Manager.Global Options.Fixed '
                       f'Frame is given twice, on lines {first} and {second}$'):
        prefixed_view(text, 'robot1/')


def dataset_robot(files, capsys, monkeypatch):
    code = cli.main(['dataset', '--robot', files['rolling_joint_snake'], '--model', 'snake',
                     '--output', f'{files["tmp"]}/d'])
    check_one_line(code, capsys.readouterr().err, 'link.mass', files['rolling_joint_snake lines'])


def bag_metadata(files, capsys, monkeypatch):
    bag = Path(files['tmp']) / 'bag_twice'
    shutil.copytree(files['bag'], bag)
    text, first, second = twice((bag / 'metadata.yaml').read_text(), '  version')
    (bag / 'metadata.yaml').write_text(text)
    code = cli.main(['replay', str(bag), '--delay', '0'])
    check_one_line(code, capsys.readouterr().err, 'rosbag2_bagfile_information.version',
                   f'lines {first} and {second}')


def bag_metadata_recovered(files, capsys, monkeypatch):
    # reindex takes a metadata.yaml with a key given twice for a broken one: written again
    bag = Path(files['tmp']) / 'bag_twice_reindexed'
    shutil.copytree(files['bag'], bag)
    text, _, _ = twice((bag / 'metadata.yaml').read_text(), '  version')
    (bag / 'metadata.yaml').write_text(text)
    code = cli.main(['reindex', str(bag)])
    out = capsys.readouterr().out
    assert code == 0 and 'metadata.yaml was not valid YAML: written again' in out, out
    assert cli.main(['replay', str(bag), '--delay', '0', '--rate', '100']) == 0


def robot_descriptions(files, capsys, monkeypatch):
    """Every kind's loader: the rows of ROBOT_COMMANDS above cover each command."""
    from tendon_robot_sim.models.registry import load_any_description
    from tendon_robot_sim.models.description import RobotDescriptionError
    for kind, (_, _, key) in ROBOTS.items():
        with pytest.raises(RobotDescriptionError, match=f'{key} is given twice'):
            load_any_description(files[kind])


# Every function that calls the one loader ('module:function'), and its check.
READERS = {
    'models.description:read_yaml': robot_descriptions,
    'protocol.devices:load_dynamixel_bus': bus_file_of_the_bridge,
    'commands.hardware:run_calibrate': bus_file_of_the_hardware_tools,
    'launcher:file_parameters': launch_parameter_file,
    'launcher:_parameter_overrides': launch_parameter_value,
    'emulator.dynamixel:bus_text': shipped_bus_file_of_the_emulator,
    'rviz_views:prefixed_view': rviz_view,
    'experiment.dataset:build_dataset': dataset_robot,
    'experiment.bag:_open_bag': bag_metadata,
    'experiment.bag_recovery:_metadata_problem': bag_metadata_recovered,
}


def test_every_yaml_reader_has_a_row():
    assert sorted(readers()) == sorted(READERS), (
        'a new reader of YAML: give it its row in READERS')


@pytest.mark.parametrize('reader', sorted(READERS))
def test_every_yaml_reader_refuses_a_key_given_twice(reader, files, capsys, monkeypatch):
    READERS[reader](files, capsys, monkeypatch)


# ------------------------------------------------------------------ a description from a pipe


def pipe_of(text: str) -> str:
    """Return a /dev/fd path of a pipe holding ``text`` (closed for writing), as ``<(...)``."""
    import os
    read, write = os.pipe()
    os.write(write, text.encode())
    os.close(write)
    return f'/dev/fd/{read}'


def test_a_pipe_is_read_once_and_its_text_kept():
    """A command reads its robot file more than once (its kind, then the model)."""
    from tendon_robot_sim.files.yaml_loader import read_yaml
    text = (ROOT / 'config' / 'robot.yaml').read_text()
    path = pipe_of(text)
    first = read_yaml(path)
    assert first['tendons'][0]['name'] == 't0'
    assert read_yaml(path) == first


def test_a_robot_description_through_process_substitution(capsys):
    """``cc --robot <(sed ... config/robot.yaml)`` said the description was empty."""
    robot = ROOT / 'config' / 'robot.yaml'
    argv = ['cc', '--displacements', '0.001,0,0,0', '--json']
    assert cli.main([*argv, '--robot', str(robot)]) == 0
    from_file = capsys.readouterr().out
    assert cli.main([*argv, '--robot', pipe_of(robot.read_text())]) == 0, \
        capsys.readouterr().err
    assert capsys.readouterr().out == from_file
