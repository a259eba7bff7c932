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
``tendon-robot-sim launch --dry-run`` prints command lines a user can run by hand.

They named ``--params-file`` paths in a temporary folder deleted as the command exited: a
line copied to run one node ended in "file not found". Without ``--params-dir`` the generated
parameters are printed beneath each line (the file the line names by its bare name); with
``--params-dir DIR`` they are written there and the lines name them. Either way they are
what the launcher's own plan passes (:class:`StackLauncher`).
"""

from pathlib import Path
import shlex

import rclpy
from tendon_robot_sim import cli
from tendon_robot_sim.launcher import StackLauncher
import yaml

ROOT = Path(__file__).resolve().parents[2]
PARAM = 'simulator:publish_rate:=20'


def plan() -> dict:
    """{node: the parameters of its generated file} of the real launch of the same stack."""
    launcher = StackLauncher('sim', {}, [PARAM])
    return {p.entry.name: p.parameters for p in launcher.processes}


def dry_run(argv: list[str], capsys) -> list[str]:
    assert cli.main(['launch', 'sim', '--param', PARAM, '--dry-run', *argv]) == 0
    return capsys.readouterr().out.splitlines()


def named_files(line: str) -> list[str]:
    words = shlex.split(line)
    return [words[i + 1] for i, word in enumerate(words) if word == '--params-file']


def node_of(line: str) -> str:
    return next(w.partition(':=')[2] for w in shlex.split(line) if w.startswith('__node:='))


def test_without_params_dir_the_parameters_are_printed_beneath_each_line(
        capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    lines = dry_run([], capsys)
    commands = [i for i, line in enumerate(lines) if not line.startswith('#')]
    expected = plan()
    assert {node_of(lines[i]) for i in commands} == set(expected) == {
        'simulator', 'tension_controller'}
    for i in commands:
        node, (*shared, generated) = node_of(lines[i]), named_files(lines[i])
        assert all(Path(path).is_file() for path in shared), shared   # config/*.yaml
        assert generated == f'{node}.yaml'
        assert lines[i + 1] == f'# {node}.yaml, not written (--params-dir DIR writes it ' \
                               'and names it in the line):'
        block = []
        for line in lines[i + 2:]:
            if not line.startswith('#   '):
                break
            block.append(line[4:])
        assert yaml.safe_load('\n'.join(block)) == {
            '/**': {'ros__parameters': expected[node]}}
    assert expected['simulator']['publish_rate'] == 20.0
    assert list(tmp_path.iterdir()) == []      # a dry run writes nothing


def test_with_params_dir_every_file_a_line_names_exists_after_exit(capsys, tmp_path):
    folder = tmp_path / 'params'
    lines = dry_run(['--params-dir', str(folder)], capsys)
    commands = [line for line in lines if not line.startswith('#')]
    expected = plan()
    assert {node_of(line) for line in commands} == set(expected)
    for line in commands:
        node, files = node_of(line), named_files(line)
        assert files[-1] == str(folder / f'{node}.yaml')
        assert all(Path(path).is_file() for path in files), files
        assert yaml.safe_load(Path(files[-1]).read_text()) == {
            '/**': {'ros__parameters': expected[node]}}
    assert sorted(p.name for p in folder.iterdir()) == ['simulator.yaml',
                                                        'tension_controller.yaml']


def test_a_printed_line_gives_rcl_the_parameters_of_the_launch(capsys, tmp_path):
    """Rcl reads the files a printed line names, after the command exited, as a node would."""
    lines = dry_run(['--params-dir', str(tmp_path)], capsys)
    (line,) = [line for line in lines if not line.startswith('#') and '__node:=simulator' in line]
    words = shlex.split(line)
    context = rclpy.Context()
    rclpy.init(args=['simulator_node', *words[words.index('--ros-args'):]], context=context)
    try:
        node = rclpy.create_node('unnamed', context=context,
                                 automatically_declare_parameters_from_overrides=True)
        try:
            assert node.get_name() == 'simulator'
            expected = StackLauncher('sim', {}, [PARAM]).parameters['simulator']
            given = {name: node.get_parameter(name).value for name in expected
                     if node.has_parameter(name)}
            assert given['publish_rate'] == 20.0             # --param
            assert given == {name: expected[name] for name in given}
            assert set(plan()['simulator']) <= set(given)
        finally:
            node.destroy_node()
    finally:
        context.try_shutdown()
