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
The class "worker counts": every count of local processes is bounded, and no worker is left.

Enforced in one place, :class:`tendon_robot_sim.parallel.Pool` (at most the cores and the
tasks, refusal beyond MAX_WORKERS, workers that die with their parent and leave Ctrl-C to it),
and for the command line in one argument type, ``commands.worker_count``. The table is built
from the parser: every ``--workers`` of every command, present and future, must use that type
and refuse an absurd count with exit 2, before anything starts. Nothing here forks more than
two processes.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys

from cli_commands import actions
import pytest
from tendon_robot_sim import cli, parallel
from tendon_robot_sim.commands import worker_count
from tendon_robot_sim.parallel import MAX_WORKERS, ParallelError, Pool
from waiting import TIMEOUT, wait_for

ROOT = Path(__file__).resolve().parents[2]


def options_named(option: str):
    """(command words, action) of every option ``option`` of every command."""
    return [(tuple(words.split()), action) for words, action in actions()
            if option in action.option_strings]


WORKER_OPTIONS = options_named('--workers')
# The arguments a command needs besides --workers to get as far as parsing them.
REQUIRED = {
    ('dataset',): ['--robot', str(ROOT / 'config' / 'robot.yaml'), '--model', 'cc'],
    ('validate',): ['holds.csv', '--report', 'report'],
    ('calibrate',): ['holds.csv', '--fit', 'youngs_modulus', '--out', 'out.yaml'],
}


def test_the_commands_with_workers_are_found():
    found = {' '.join(words) for words, _ in WORKER_OPTIONS}
    assert {'dataset', 'pcr workspace', 'validate', 'calibrate'} <= found


@pytest.mark.parametrize('words, action', WORKER_OPTIONS,
                         ids=[' '.join(w) for w, _ in WORKER_OPTIONS])
def test_every_workers_option_uses_the_one_bounded_type(words, action):
    assert action.type is worker_count, (
        f'{" ".join(words)} --workers: use type=commands.worker_count, which bounds the count')


@pytest.mark.parametrize('count', ['100000', str(MAX_WORKERS + 1), '0', '-3', '2.5', 'nan'])
@pytest.mark.parametrize('words', [w for w, _ in WORKER_OPTIONS],
                         ids=[' '.join(w) for w, _ in WORKER_OPTIONS])
def test_an_absurd_worker_count_is_refused_before_anything_starts(
        words, count, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [*words, *REQUIRED.get(words, []), '--workers', count]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'argument --workers' in err, err


@pytest.mark.parametrize('words', [w for w, _ in WORKER_OPTIONS],
                         ids=[' '.join(w) for w, _ in WORKER_OPTIONS])
def test_workers_with_a_scheduler_are_refused_as_read_by_nothing(words, capsys, tmp_path,
                                                                 monkeypatch):
    """The cluster's workers run the tasks: a local count would be ignored (docs/cli.md)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'holds.csv').write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n'
                                        '0,0,0,0,0.25,0,-0.01\n0,2,0,0,0.24,0.02,-0.01\n')
    argv = [*words, *REQUIRED.get(words, []), '--workers', '2',
            '--scheduler', 'tcp://127.0.0.1:1']     # refused before it is reached
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--workers: applies without --scheduler only' in err, err


def test_a_pool_runs_at_most_the_cores_and_the_tasks(monkeypatch):
    monkeypatch.setattr(parallel, 'usable_cores', lambda: 2)
    assert Pool(1000).workers == 2
    assert Pool().workers == 2
    with Pool(2) as pool:            # one task: in this process, no worker at all
        assert pool.map([3], abs) == [3]
        assert pool._pool is None
    with pytest.raises(ParallelError, match='at most 1024'):
        Pool(MAX_WORKERS + 1)


def test_a_batch_of_fewer_tasks_than_workers_starts_fewer_processes(monkeypatch):
    monkeypatch.setattr(parallel, 'usable_cores', lambda: 8)
    with Pool(8) as pool:
        assert pool.map([-1, -2], abs) == [1, 2]
        assert pool._pool._max_workers == 2


PARENT = """
import threading, time
from tendon_robot_sim.parallel import Pool
pool = Pool(2)
def report():
    while pool._pool is None or len(pool._pool._processes) < 2:
        time.sleep(0.01)
    print(' '.join(map(str, pool._pool._processes)), flush=True)
threading.Thread(target=report, daemon=True).start()
pool.map([600, 600], time.sleep)
"""


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ('Z', 'X')


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='PR_SET_PDEATHSIG is Linux')
@pytest.mark.parametrize('ending', [signal.SIGKILL, signal.SIGTERM])
def test_no_worker_outlives_its_parent_whatever_ends_it(ending):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    parent = subprocess.Popen([sys.executable, '-c', PARENT], stdout=subprocess.PIPE, text=True,
                              env=env)
    try:
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
        parent.send_signal(ending)
        parent.wait(timeout=TIMEOUT)
        wait_for(lambda: not any(alive(pid) for pid in workers),
                 what=f'the workers to die with their parent ({ending.name})')
    finally:
        if parent.poll() is None:
            parent.kill()


WARMUP = """
from tendon_robot_sim import cli
from tendon_robot_sim.commands import warmup
warmup.WARM_ONE = 'import time; time.sleep(600)'    # a compile that outlasts the test
cli.main(['warmup', '--jobs', '2'])
"""


def children(pid: int) -> list[int]:
    path = Path(f'/proc/{pid}/task/{pid}/children')
    return [int(child) for child in path.read_text().split()] if path.exists() else []


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='PR_SET_PDEATHSIG is Linux')
def test_no_compile_of_warmup_outlives_it_when_it_is_killed():
    """``make setup`` runs warmup in the background: a kill of it ends its compiles too."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    parent = subprocess.Popen([sys.executable, '-c', WARMUP], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(children(parent.pid)) == 2, what='two compiles to start')
        compiles = children(parent.pid)
        parent.send_signal(signal.SIGTERM)
        parent.wait(timeout=TIMEOUT)
        wait_for(lambda: not any(alive(pid) for pid in compiles),
                 what='the compiles to end with warmup')
    finally:
        if parent.poll() is None:
            parent.kill()
