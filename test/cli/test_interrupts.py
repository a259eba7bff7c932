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
The class "signals during start-up": Ctrl-C at any moment of every node and command.

One convention (docs/cli.md): a node, and a command that runs until stopped (launch, record,
replay, emulate), ends with 0 when stopped; a computation (or demo, or any command before it
has started) with 130; never a traceback. Enforced in three places: the package's import
(``tendon_robot_sim.exit_quietly_on_interrupt``: from the first moment our code runs, 130,
and 0 in ``nodes/__init__.py``), ``cli.main`` (Ctrl-C while a command runs; a lost interrupt
delivered again) with ``commands.StopSignals`` (commands that run until stopped), and
``ros.runner.run_node`` (a node once its main() runs).

The moments are not guessed with timers: a test ``sitecustomize`` (only on these processes'
PYTHONPATH) sends the signal when the process reaches an audit event, e.g. the import of rclpy
(a node's modules loading) or the opening of the robot file (its constructor). Python's own
start-up before any of our code runs (about 0.1 s, with the ROS wheels' bootstrap that
re-executes the interpreter) is outside any package's reach.
"""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys

from cli_commands import parsers
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.stack import STACKS
from terminal import as_from_a_terminal
from waiting import COMMAND_TIMEOUT, wait_for

ROOT = Path(__file__).resolve().parents[2]
ROBOT = str(ROOT / 'config' / 'robot.yaml')
NODES = sorted({entry.module for stack in STACKS.values() for entry in stack.nodes
                if entry.module})
# Sends INTERRUPT_WITH (default SIGINT) to this process at the first audit event MOMENT
# ('import:NAME', or 'open:PART' or 'os.rename:PART', PART a part of the file's path): a moment
# of the start-up, or of the command's work, reached whatever the machine's load. The signal
# lands as the hook returns: before the file is opened, or renamed.
SITECUSTOMIZE = """
import os, signal, sys
_kind, _, _target = os.environ['INTERRUPT_AT'].partition(':')
_signal = signal.Signals[os.environ.get('INTERRUPT_WITH', 'SIGINT')]
_group = os.environ.get('INTERRUPT_GROUP')      # every process of its group, as a scheduler
_fired = []

def _hook(event, args):
    if _fired or event != _kind:
        return
    if (event == 'import' and args[0] == _target
            or event != 'import' and _target in str(args[0])):
        _fired.append(True)
        if _group:
            os.killpg(0, _signal)
        else:
            os.kill(os.getpid(), _signal)

sys.addaudithook(_hook)
"""


def interrupted_at(moment: str, argv: list[str], tmp_path: Path,
                   signum: signal.Signals = signal.SIGINT, env: dict | None = None,
                   group: bool = False) -> subprocess.CompletedProcess:
    """
    Run ``python ARGV`` and send it ``signum`` (Ctrl-C) at ``moment`` of its run.

    ``group``: to every process of its group (its workers too), as a cluster's scheduler
    signals a job; the process starts a session of its own.
    """
    (tmp_path / 'sitecustomize.py').write_text(SITECUSTOMIZE)
    env = dict(env or os.environ, INTERRUPT_AT=moment, INTERRUPT_WITH=signum.name,
               PYTHONPATH=os.pathsep.join((str(tmp_path), str(ROOT))))
    if group:
        env['INTERRUPT_GROUP'] = '1'
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, env=env, cwd=tmp_path,
                          start_new_session=group)


@pytest.mark.parametrize('moment', ['import:rclpy', 'open:robot.yaml'],
                         ids=['modules loading', 'constructor'])
@pytest.mark.parametrize('module', NODES, ids=lambda m: m.rpartition('.')[2])
def test_a_node_stopped_during_its_start_exits_0_without_a_traceback(module, moment, tmp_path):
    result = interrupted_at(moment, ['-m', module], tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'Traceback' not in result.stdout + result.stderr, result.stderr


@pytest.mark.parametrize('moment', ['import:numpy', 'open:robot.yaml'],
                         ids=['modules loading', 'robot file'])
def test_a_command_interrupted_during_its_start_exits_130_without_a_traceback(
        moment, tmp_path):
    result = interrupted_at(moment, ['-m', 'tendon_robot_sim.cli', 'statics', '--tensions',
                                     '1,0,0,0'], tmp_path)
    assert result.returncode == 130, result.stderr
    assert result.stderr == '' and 'tip position' not in result.stdout, result.stderr


@pytest.mark.parametrize('moment', ['open', 'os.rename'], ids=['opening', 'written'])
@pytest.mark.parametrize('signum, code', [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=['SIGINT', 'SIGTERM'])
def test_statics_stopped_while_it_writes_its_trajectory_leaves_no_file(
        signum, code, moment, tmp_path):
    """A scheduler's SIGTERM is a Ctrl-C with its own code: the temporary file removed."""
    table = tmp_path / 'tensions.csv'
    table.write_text('t,t0,t1,t2,t3\n0,0,0,0,0\n1,1,0,0,0\n')
    result = interrupted_at(f'{moment}:.loop.csv.', [
        '-m', 'tendon_robot_sim.cli', 'statics', '--tensions-csv', str(table),
        '--trajectory-out', str(tmp_path / 'loop.csv')], tmp_path, signum)
    assert result.returncode == code, result.stderr
    assert result.stderr == '' and result.stdout == '', result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()
                  if 'loop' in path.name) == [], list(tmp_path.iterdir())


def processes_with(marker: str) -> list[int]:
    """Return the processes whose environment holds ``marker``: a run's workers, in /proc."""
    found = []
    for environ in Path('/proc').glob('[0-9]*/environ'):
        try:
            if marker.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:     # gone, or not ours
            pass
    return found


@pytest.mark.parametrize('group', [False, True], ids=['the command', 'its process group'])
def test_a_dataset_stopped_by_sigterm_ends_its_workers_and_goes_on_when_run_again(
        group, tmp_path):
    """
    SIGTERM as chunk 2's part, written, is renamed into place: removed, those before kept.

    Parts are written as their chunks end, in any order: one or more are there before it.

    A scheduler signals every process of the job: the workers, which are forks of the
    command, died quietly, not each with a KeyboardInterrupt traceback.
    """
    marker = f'DATASET_RUN={tmp_path}'
    argv = ['-m', 'tendon_robot_sim.cli', 'dataset', '--robot', ROBOT, '--model', 'cc',
            '--samples', '40', '--chunk-size', '5', '--workers', '2', '--output',
            str(tmp_path / 'cc'), '--json']
    env = dict(os.environ, DATASET_RUN=str(tmp_path))
    result = interrupted_at('os.rename:.part-00002.parquet.', argv, tmp_path, signal.SIGTERM, env,
                            group)
    assert result.returncode == 143, result.stderr
    assert result.stderr == '', result.stderr
    assert not (tmp_path / 'cc.parquet').exists()
    names = sorted(path.name for path in (tmp_path / 'cc.parts').iterdir())
    kept = [name for name in names if name.startswith('part-')]
    assert names == ['lock', 'manifest.json', *kept], names
    assert kept and 'part-00002.parquet' not in kept, names
    wait_for(lambda: processes_with(marker) == [], 'the workers to end')
    again = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                           timeout=COMMAND_TIMEOUT, cwd=tmp_path,
                           env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout.splitlines()[-1])
    assert summary['complete'] and summary['solved_now'] == 40 - 5 * len(kept), summary


COMMANDS = [' '.join(words) for words, _ in parsers()]
REQUIRED = {
    'launch': ['sim'], 'record': ['{tmp}/bag'], 'replay': ['{tmp}/bag'],
    'reindex': ['{tmp}/bag'],
    'synth-experiment': ['{tmp}/synth'], 'validate': ['x.csv', '--report', '{tmp}/r'],
    'calibrate': ['x.csv', '--fit', 'youngs_modulus', '--out', '{tmp}/c.yaml'],
    'import': ['x.csv', '--columns', 'x.yaml', '--out', '{tmp}/i'],
    'pcr ik': ['--position', '0,0,0.5'], 'pcr fk': ['--motor-angles-deg', '1,1,1,1,1,1'],
    'pcr sweep': ['--yaw', '0:10:2', '--out', '{tmp}/sw'],
    'snake inverse': ['--trajectory', 'pan', '--out', '{tmp}/s'],
    'snake forward': ['--tensions', '1,1,1,1'], 'statics': ['--tensions', '1,0,0,0'],
    'cc': ['--tip', '0.2,0,0.1'], 'cc-dynamics': ['--tensions', 't0=1'],
    'dataset': ['--robot', ROBOT, '--model', 'cc', '--output', '{tmp}/d'],
    'hardware scan': ['--port', '/dev/null'],
    'hardware calibrate-tension': ['--port', '/dev/null'],
}


def interrupt_first(parser) -> None:
    """Make every command of ``parser`` press Ctrl-C as the first thing it does."""
    run = parser._defaults.get('func')
    if run is not None:
        parser.set_defaults(func=lambda args: (os.kill(os.getpid(), signal.SIGINT),
                                               run(args))[1])
    for action in parser._actions:
        if action.__class__.__name__ == '_SubParsersAction':
            for sub in action.choices.values():
                interrupt_first(sub)


@pytest.mark.parametrize('command', COMMANDS)
def test_every_command_interrupted_as_it_starts_exits_130_without_a_traceback(
        command, tmp_path, capsys, monkeypatch):
    """Ctrl-C lands as the command's own code starts: before it has made anything."""
    parser = cli.build_parser()
    interrupt_first(parser)
    monkeypatch.setattr(cli, 'build_parser', lambda *commands: parser)

    def interrupted(code):      # cli.main leaves with os._exit(130): not in this process
        raise SystemExit(code)
    monkeypatch.setattr(cli, '_interrupted', interrupted)
    argv = [*command.split(), *REQUIRED.get(command, [])]
    try:
        code = cli.main([word.format(tmp=tmp_path) for word in argv])
    except SystemExit as done:
        code = done.code
    err = capsys.readouterr().err
    assert code == 130, (f'{command}: exit {code}, {err}; a command with required arguments '
                         'needs them in REQUIRED')
    assert 'Traceback' not in err and 'error' not in err, err
    assert list(tmp_path.iterdir()) == []      # nothing made


LOSE_AND_GO_ON = """
import ctypes, os, signal, sys, time
from tendon_robot_sim import cli
from tendon_robot_sim.commands import statics

def compile_on(args):
    # Ctrl-C lands while C calls back into Python (numba's compiler does) and is lost there;
    # then the compile goes on, in Python, for 60 s: the interrupt must come again.
    ctypes.CFUNCTYPE(None)(lambda: os.kill(os.getpid(), signal.SIGINT))()
    for _ in range(1200):
        time.sleep(0.05)
    print('compiled to the end')
    return 0
statics.run = compile_on
sys.exit(cli.main(['statics', '--tensions', '0,2,0,0']))
"""


def test_a_ctrl_c_lost_while_a_compile_goes_on_is_delivered_again():
    result = subprocess.run([sys.executable, '-c', LOSE_AND_GO_ON], capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 130, result.stderr
    assert 'compiled to the end' not in result.stdout and result.stderr == '', result.stderr


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    """Write a bag of a synthetic experiment, to replay."""
    path = tmp_path_factory.mktemp('interrupts') / 'bag'
    # (a statics model for the hidden robot: the same 52 s of holds in a second)
    assert cli.main(['synth-experiment', str(path), '--robot', ROBOT,
                     '--truth-model', 'cosserat']) == 0
    return path


# Commands that run until stopped, as they say they are ready: stopping them is their end.
# Each stop signal (Ctrl-C, kill, the terminal closing) on some of them.
UNTIL_STOPPED = {
    'record SIGINT': (['record', '{tmp}/new_bag'], 'Ctrl-C stops', signal.SIGINT),
    'record --duration SIGTERM': (['record', '{tmp}/new_bag', '--duration', '600'],
                                  'Ctrl-C stops (else 600 s)', signal.SIGTERM),
    'replay --loop SIGINT': (['replay', '{bag}', '--loop', '--delay', '0'], 'Ctrl-C stops',
                             signal.SIGINT),
    'replay SIGHUP': (['replay', '{bag}', '--delay', '0'], 'Ctrl-C stops', signal.SIGHUP),
    'emulate SIGHUP': (['emulate'], 'Ctrl-C stops', signal.SIGHUP),
    'emulate --duration SIGINT': (['emulate', '--duration', '600'], 'Ctrl-C stops',
                                  signal.SIGINT),
    'launch SIGINT': (['launch', 'sim', '--arg', 'rviz:=false'], 'tension_controller: started',
                      signal.SIGINT),
    'launch SIGTERM': (['launch', 'sim', '--arg', 'rviz:=false'], 'simulator: started',
                       signal.SIGTERM),
}


# Nothing publishes here: a recording stopped without a message is no result (exit 1, one
# line; test/ros/test_record.py), through the same clean stop.
NO_RESULT = {'record SIGINT', 'record --duration SIGTERM'}


@pytest.mark.parametrize('name', UNTIL_STOPPED)
def test_a_command_that_runs_until_stopped_ends_with_0_when_stopped(name, bag, tmp_path):
    argv, ready, signum = UNTIL_STOPPED[name]
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli',
         *[word.format(tmp=tmp_path, bag=bag) for word in argv]],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)), preexec_fn=as_from_a_terminal)
    try:
        seen = []
        for line in process.stdout:
            seen.append(line)
            if ready in line:
                break
        assert ready in ''.join(seen), ''.join(seen)
        process.send_signal(signum)
        rest, _ = process.communicate(timeout=COMMAND_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    output = ''.join(seen) + rest
    if name in NO_RESULT:
        assert process.returncode == 1 and 'error: no message recorded: ' in output, output
    else:
        assert process.returncode == 0, output
    assert 'Traceback' not in output, output


def test_a_launch_whose_simulator_fails_at_once_stops_the_rest_without_a_traceback(tmp_path):
    """The controller, still loading its modules, gets Ctrl-C from the launcher: quietly."""
    heavy = tmp_path / 'heavy.yaml'      # loads, but the dynamic model refuses it at once
    heavy.write_text(Path(ROBOT).read_text().replace('mass: 0.002', 'mass: 1000.0'))
    result = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'launch', 'sim',
                             '--arg', 'rviz:=false', '--robot', str(heavy)],
                            capture_output=True, text=True, timeout=COMMAND_TIMEOUT, cwd=tmp_path,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert 'cannot start: rod.damping.ratio' in output and 'Traceback' not in output, output


CTRL_C_IN_TRIMESH = """
import importlib.abc, os, signal, sys, time

class CtrlCAtPillow(importlib.abc.MetaPathFinder):
    # Ctrl-C lands while trimesh imports Pillow, inside its `except BaseException` guard
    def find_spec(self, name, path=None, target=None):
        if name == 'PIL':
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCAtPillow())
import tendon_robot_sim.view.scene
print('imported', flush=True)
time.sleep(60)
print('ran on after Ctrl-C')
"""


def test_a_ctrl_c_while_trimesh_imports_is_not_swallowed():
    # the view (and so every launch, which reads the view node's parameters) imports trimesh
    result = subprocess.run([sys.executable, '-c', CTRL_C_IN_TRIMESH], capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    # the package's quiet exit on Ctrl-C, before 'imported' (without the deferral: 60 s on)
    assert result.returncode == 130 and result.stdout == '', result.stdout
    assert result.stderr == '', result.stderr


@pytest.mark.parametrize('signum, code', [(signal.SIGINT, 130), (signal.SIGTERM, 143)],
                         ids=['SIGINT', 'SIGTERM'])
def test_demo_stopped_while_it_drives_the_stack_ends_without_an_internal_error(
        signum, code, tmp_path):
    # rclpy's own handler (SIGINT and SIGTERM) shut the context down under the demo's
    # executor: exit 70. Ctrl-C is the command's (130); SIGTERM ends it as any computation
    # (143).
    process = subprocess.Popen(
        [sys.executable, '-m', 'tendon_robot_sim.cli', 'demo', '--out', str(tmp_path / 'demo')],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT), TENDON_ROBOT_SIM_PROGRESS='1'))
    try:
        seen = []
        for line in process.stdout:      # tqdm's '\r' ends a line in text mode
            seen.append(line)
            if line.startswith('simulated:') and ', t0' in line:   # the first step is on
                break
        process.send_signal(signum)
        rest, _ = process.communicate(timeout=COMMAND_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    output = ''.join(seen) + rest
    assert process.returncode == code, output
    assert 'Traceback' not in output and 'internal error' not in output, output
