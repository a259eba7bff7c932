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
``tendon-robot-sim launch`` with a bad argument: one line naming it, exit 2, no node started.

Run as a user runs it (no ``--dry-run``): a refusal must come before the first process, so
the test counts the processes the launcher starts.
"""

from pathlib import Path

import pytest
from tendon_robot_sim import cli, launcher

ROOT = Path(__file__).resolve().parents[2]
BAD = 2


@pytest.mark.parametrize('argv, text', [
    (['sim', '--arg', 'speed:=2'], "launch argument 'speed': stack 'sim' has"),
    (['sim', '--arg', 'rviz:=yes'], "launch argument rviz: must be one of ['true', 'false']"),
    (['sim', '--arg', 'controller:=position'], 'launch argument controller: must be one of'),
    (['hardware', '--arg', 'use_sim_time:=true'], "launch argument 'use_sim_time': stack"),
    (['hardware', '--world', 'x.yaml'], "launch argument 'world': stack 'hardware' has"),
    # the robot file: the option and the --arg spelling name the same launch argument
    (['sim', '--robot', 'no/such/robot.yaml'],
     'launch argument robot: no/such/robot.yaml: cannot read'),
    (['sim', '--arg', 'robot:=no/such/robot.yaml'], 'launch argument robot: '),
    (['hardware', '--robot', 'config'], 'launch argument robot: config: cannot read'),
    (['sim', '--world', 'no/such/world.yaml'], 'launch argument world: '),
    (['sim', '--namespace', 'bad name'], 'launch argument namespace: not a ROS namespace: '),
    (['hardware', '--namespace', '1abc'], 'launch argument namespace: not a ROS namespace: '
                                          "the name '1abc' starts with a digit"),
    (['sim', '--arg', 'namespace:=a//b'], 'launch argument namespace: '),
    (['sim', '--frame-prefix', '/left/'], 'launch argument frame_prefix: '),
    (['sim', '--arg', 'mode:=warp'], 'node simulator: mode: must be one of'),
])
def test_a_bad_launch_argument_is_one_line_exit_2_and_starts_nothing(argv, text, capsys,
                                                                     monkeypatch):
    assert text in refusal(['launch', *argv], capsys, monkeypatch)


def refusal(argv: list[str], capsys, monkeypatch) -> str:
    """Return the one-line refusal of the command ``argv`` (exit 2, no process started)."""
    monkeypatch.chdir(ROOT)
    started = []
    monkeypatch.setattr(launcher.subprocess, 'Popen',
                        lambda *args, **kwargs: started.append(args) or pytest.fail(
                            f'started {args[0]}'))
    code = cli.main(argv)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code == BAD and len(lines) == 1, lines
    assert 'Traceback' not in lines[0]
    assert started == []
    return lines[0]


# obstacles the robot of config/robot.yaml (base at the origin, the rod along +x) starts in
WORLDS = {
    'table': ('obstacles: [{name: table, shape: plane}]\n',
              "obstacles[0] (table): intersects the robot's base"),
    'post': ('obstacles: [{name: post, shape: cylinder, radius: 0.01, length: 0.2, '
             'position: [0.15, 0.0, 0.0]}]\n',
             'obstacles[0] (post): intersects the unloaded straight robot every solve starts '
             'from'),
}


@pytest.mark.parametrize('world', sorted(WORLDS))
@pytest.mark.parametrize('argv', [['launch', 'sim', '--world'],
                                  ['launch', 'sim', '--arg', 'mode:=quasi_static', '--world'],
                                  ['demo', '--pull', 't0', '--world']])
def test_a_world_the_robot_starts_in_is_refused_before_any_node_starts(argv, world, tmp_path,
                                                                       capsys, monkeypatch):
    """The stack started, then the simulator died building its model (a WorldError)."""
    text, said = WORLDS[world]
    path = tmp_path / f'{world}.yaml'
    path.write_text(text)
    out = users_folder(tmp_path)
    line = refusal([*argv, str(path), *(['--out', str(out)] if argv[0] == 'demo' else [])],
                   capsys, monkeypatch)
    assert f'error: node simulator: world_file: {said}' in line, line
    assert_untouched(out)


# a folder of the user's with the files a demo writes
USERS = {'robot.yaml': 'name: my own robot\n', 'stack.log': 'my own log\n',
         'bag/notes.txt': 'my own notes\n'}


def users_folder(tmp_path: Path) -> Path:
    out = tmp_path / 'users'
    for name, text in USERS.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    return out


def assert_untouched(out: Path) -> None:
    files = {str(p.relative_to(out)): p.read_text() for p in out.rglob('*') if p.is_file()}
    assert files == USERS


def test_a_refused_demo_leaves_the_users_files_as_they_were(tmp_path, capsys, monkeypatch):
    """Refused for the user's own bag there: its robot.yaml was overwritten first."""
    out = users_folder(tmp_path)
    line = refusal(['demo', '--out', str(out)], capsys, monkeypatch)
    assert f'{out / "bag"}: exists and is not a bag from an earlier demo' in line, line
    assert_untouched(out)
