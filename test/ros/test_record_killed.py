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
A ``record`` process killed with SIGKILL mid-recording loses at most its last second.

A real experiment is played (``replay`` of a synthetic experiment: setpoints and a measured
tip, a hidden Young's modulus) into a real ``record`` process; once a copy of the bag being
written, recovered, holds several holds, the recorder is killed with SIGKILL while the replay
still plays. ``tendon-robot-sim reindex`` recovers the bag, with at least what the copy held
(what was on disk survives the kill), the messages as played, in order; then ``replay``,
``calibrate`` (which finds the hidden modulus again) and ``validate`` read it. For both
storages, MCAP and sqlite3.
"""

import os
from pathlib import Path
import shutil
import signal
import subprocess
import sys

import pytest
from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.experiment.bag import BagError, read_messages
from tendon_robot_sim.experiment.bag_recovery import recover_bag
from tendon_robot_sim.experiment.experiment import synth_experiment
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import first_line, TIMEOUT, wait_for
import yaml

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = 1.3          # the hidden Young's modulus, times the robot file's
HOLD, TRANSITION, RATE = 1.0, 0.25, 2.0   # s, s of the experiment; replayed twice as fast
HOLDS = 6             # holds on disk before the kill
SETPOINTS = int(HOLDS * (HOLD + TRANSITION) * 50)    # their setpoints (50 Hz)


@pytest.fixture(scope='module')
def experiment(tmp_path_factory):
    """Write the played experiment: its bag, its setpoints and tips, the hidden modulus."""
    folder = tmp_path_factory.mktemp('killed_recorder')
    robot = load_robot(default_robot_file())
    hidden = HIDDEN * robot.rod.youngs_modulus
    bag = folder / 'played'
    synth_experiment(bag, robot.with_changes(youngs_modulus=hidden), hold_duration=HOLD,
                     transition=TRANSITION)
    return bag, messages(bag), hidden


def messages(bag) -> dict[str, list]:
    """Return the setpoint efforts and measured tips of ``bag``, in order."""
    found = {'/tendon/setpoint': [], '/tip/measured': []}
    for topic, _, msg in read_messages(bag, found):
        found[topic].append(tuple(msg.effort) if topic == '/tendon/setpoint'
                            else (msg.point.x, msg.point.y, msg.point.z))
    return found


def is_subsequence(part, whole) -> bool:
    rest = iter(whole)
    return all(item in rest for item in part)


def start(*argv) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, '-m', 'tendon_robot_sim.cli', *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def setpoints_on_disk(bag: Path, copy: Path) -> int:
    """Setpoints a recovered copy of the bag being written holds (0: none yet)."""
    shutil.rmtree(copy, ignore_errors=True)
    try:
        shutil.copytree(bag, copy)
        return recover_bag(copy).counts.get('/tendon/setpoint', 0)
    except (BagError, OSError):       # not a bag yet: nothing flushed
        return 0


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_a_killed_recorder_is_recovered_and_its_bag_read_by_every_tool(
        storage, experiment, tmp_path, capsys):
    played, sent, hidden = experiment
    bag = tmp_path / 'recorded'
    recorder = start('record', bag, '--storage', storage, '--topics', 'tendon/setpoint',
                     'tip/measured')
    player = None
    try:
        first_line(recorder, 'recording ')
        player = start('replay', played, '--setpoint-topic', 'tendon/setpoint', '--rate', RATE,
                       '--delay', '1')
        on_disk = wait_for(lambda: (n := setpoints_on_disk(bag, tmp_path / 'copy'))
                           >= SETPOINTS and n, f'{HOLDS} holds on disk',
                           period=0.2)
        assert player.poll() is None, 'the experiment ended before the kill'
        recorder.kill()                  # SIGKILL, mid-recording
        assert recorder.wait(timeout=TIMEOUT) == -signal.SIGKILL
    finally:
        for process in (recorder, player):
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.communicate(timeout=TIMEOUT)
    with pytest.raises(BagError, match='tendon-robot-sim reindex'):
        messages(bag)

    assert cli.main(['reindex', str(bag)]) == 0
    assert 'recovered' in capsys.readouterr().out
    got = messages(bag)
    # what was on disk before the kill is there, as played, in order
    assert len(got['/tendon/setpoint']) >= on_disk
    for topic in got:
        assert is_subsequence(got[topic], sent[topic]), topic

    assert cli.main(['replay', str(bag), '--rate', '1000', '--delay', '0']) == 0
    assert f'/tendon/setpoint {len(got["/tendon/setpoint"])}' in capsys.readouterr().out
    calibrated = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(bag), '--fit', 'youngs_modulus', '--out', str(calibrated),
                     '--hold-time', '0.3', '--workers', '1']) == 0
    found = yaml.safe_load(calibrated.read_text())['rod']['youngs_modulus']
    # the hidden modulus, 30 % from the robot file's, found again within 3 %
    assert abs(found / hidden - 1.0) < 0.03, (found, hidden)
    assert cli.main(['validate', str(bag), '--robot', str(calibrated), '--report',
                     str(tmp_path / 'report'), '--hold-time', '0.3', '--workers', '1']) == 0
    report = (tmp_path / 'report' / 'report.md').read_text()
    assert '## Holds' in report
