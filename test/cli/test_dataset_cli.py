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

"""``tendon-robot-sim dataset``: a stopped run resumed, and bad input (one-line errors)."""

import errno
import json
import multiprocessing
import os
from pathlib import Path
import signal

import pyarrow.parquet as pq
import pytest

from tendon_robot_sim import parallel
from tendon_robot_sim.cli import main
from tendon_robot_sim.experiment import dataset
from waiting import wait_for

CONFIG = Path(__file__).resolve().parents[2] / 'config'
ROBOT = str(CONFIG / 'robot.yaml')


def test_stopped_run_goes_on_with_the_same_command(tmp_path, capsys):
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '7', '--chunk-size',
            '3', '--workers', '1', '--output', str(tmp_path / 'cc'), '--json']
    assert main(argv + ['--max-chunks', '1']) == 0
    assert 'stopped after 1 of 3 chunks' in capsys.readouterr().out
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary['solved_now'] == 4 and summary['complete']
    assert pq.read_table(tmp_path / 'cc.parquet').column('sample').to_pylist() == list(range(7))


def test_statics_of_a_robot_without_discs_and_its_model_named(tmp_path, capsys):
    """The statics model as the simulator picks it (cosserat here), or the one named."""
    argv = ['dataset', '--robot', str(CONFIG / 'steel_rod_robot.yaml'), '--model', 'statics',
            '--samples', '2', '--workers', '1', '--json']
    for named, model in ((), 'cosserat'), (('--statics-model', 'kirchhoff'), 'kirchhoff'):
        out = tmp_path / model
        assert main(argv + ['--output', str(out), *named]) == 0
        assert json.loads(capsys.readouterr().out.splitlines()[-1])['converged'] == 2
        assert json.loads(out.with_suffix('.json').read_text())['statics_model'] == model


def test_a_disk_that_fills_part_way_ends_the_bar_then_says_so(tmp_path, capsys, monkeypatch):
    """The error is a line after the progress bar, names the output; the run goes on later."""
    from tendon_robot_sim.experiment import dataset
    real = dataset.open_output
    written = []

    def fills_after_one_part(path, *args, **kwargs):
        if path.name.startswith('part-') and written:
            # as a write to a full disk through a file object: no file name
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(dataset, 'open_output', fills_after_one_part)
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '6', '--chunk-size',
            '2', '--workers', '1', '--output', str(tmp_path / 'cc')]
    assert main(argv) == 2
    last = capsys.readouterr().err.split('\n')[-2]
    assert last == f'tendon-robot-sim dataset: error: --output: {tmp_path / "cc"}: No space ' \
        'left on device', last
    monkeypatch.setattr(dataset, 'open_output', real)
    assert main(argv) == 0
    assert pq.read_table(tmp_path / 'cc.parquet').column('sample').to_pylist() == list(range(6))


def test_a_folder_where_a_file_of_the_output_goes_is_refused_before_any_solve(tmp_path, capsys):
    """
    A folder at PATH.parquet (a Parquet dataset written by Dask or Spark) or PATH.json.

    Every sample was solved first, and the join then failed naming a hidden temporary file.
    """
    for taken in ('cc.parquet', 'cc.json'):
        (tmp_path / taken).mkdir()
        argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '2', '--workers',
                '1', '--output', str(tmp_path / 'cc')]
        assert main(argv) == 2
        assert capsys.readouterr().err == (
            f'tendon-robot-sim dataset: error: argument --output: {tmp_path / taken} is a '
            'folder; the output writes a file there (see --help)\n')
        assert not (tmp_path / 'cc.parts').exists()     # nothing solved
        (tmp_path / taken).rmdir()


def _killed_at_chunk_1(task):
    """solve_chunk, but the worker given chunk 1 is killed, as the out-of-memory killer does."""
    if task[3] == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return _SOLVE_CHUNK(task)


_SOLVE_CHUNK = dataset.solve_chunk


def test_a_worker_killed_is_one_line_and_the_run_goes_on_later(tmp_path, capsys, monkeypatch):
    """Not an internal error ("a bug: please report it"): the parts written are kept."""
    if parallel.usable_cores() < 2:
        pytest.skip('needs two cores for two workers')
    # the workers are forked: they find the patched function by its name, as the parent does
    monkeypatch.setattr(dataset, 'solve_chunk', _killed_at_chunk_1)
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '6', '--chunk-size',
            '2', '--workers', '2', '--output', str(tmp_path / 'cc'), '--json']
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        'tendon-robot-sim dataset: error: workers: a worker process was killed as it worked '
        '(out of memory, or a signal to it alone); the chunks done are kept: run the same '
        'command again to go on')
    monkeypatch.setattr(dataset, 'solve_chunk', _SOLVE_CHUNK)
    # the command's process ends and its workers with it (PR_SET_PDEATHSIG); here, in one
    # process, the other worker ends its chunk first, holding the run's lock until then
    wait_for(lambda: not multiprocessing.active_children(), 'the other worker to end')
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out.splitlines()[-1])['complete']


class _NoScheduler:
    """
    A TCP port where no Dask scheduler answers.

    ``silent`` takes connections and never answers (a scheduler stalled, a firewall that holds
    the connection); ``web`` answers as a web server does (the dashboard's port, 8787, given
    for the scheduler's, 8786).
    """

    def __init__(self, kind: str):
        import socket
        import threading
        self.server = socket.socket()
        self.server.bind(('127.0.0.1', 0))
        self.server.listen(8)
        self.address = 'tcp://127.0.0.1:%d' % self.server.getsockname()[1]
        self.clients = []
        if kind == 'web':
            threading.Thread(target=self._answer, daemon=True).start()

    def _answer(self):
        try:
            while True:
                client, _ = self.server.accept()
                self.clients.append(client)
                client.recv(4096)
                client.sendall(b'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')
        except OSError:     # closed
            pass

    def close(self):
        for client in self.clients:
            client.close()
        self.server.close()


@pytest.mark.parametrize('kind', ['silent', 'web'])
def test_a_scheduler_that_does_not_answer_is_one_line_within_the_connect_timeout(
        tmp_path, capsys, monkeypatch, kind):
    """
    One line, exit 2, within the timeout; no parts folder.

    Dask's connect timeout ends at the TCP connection: its handshake then waited for ever on a
    port that took the connection and said nothing, and read a web server's answer as the
    length of a message (3 EiB: "out of memory").
    """
    import threading
    monkeypatch.setattr(parallel, 'CONNECT_TIMEOUT', 1.0, raising=False)
    server = _NoScheduler(kind)
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '2', '--output',
            str(tmp_path / 'cc'), '--scheduler', server.address]
    codes = []
    run = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    try:
        run.start()
        # far beyond the 1 s: a hang fails the test, the command does not wait for ever
        wait_for(lambda: not run.is_alive(), 'the command to end', timeout=20.0)
    finally:
        server.close()
    assert codes == [2]
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith(
        'tendon-robot-sim dataset: error: --scheduler: cannot connect to '
        f'{server.address!r}: ')
    assert 'Dask scheduler' in err, err
    assert not (tmp_path / 'cc.parts').exists()


def test_a_scheduler_not_reached_leaves_no_run_that_refuses_other_settings(
        tmp_path, capsys, monkeypatch):
    """A run that solved nothing wrote the manifest: the next run, other samples, refused."""
    import socket
    monkeypatch.setattr(parallel, 'CONNECT_TIMEOUT', 1.0, raising=False)
    closed = socket.socket()
    closed.bind(('127.0.0.1', 0))
    port = closed.getsockname()[1]
    closed.close()      # nothing listens there: refused
    argv = ['dataset', '--robot', ROBOT, '--model', 'cc', '--output', str(tmp_path / 'cc')]
    assert main(argv + ['--samples', '2', '--scheduler', f'tcp://127.0.0.1:{port}']) == 2
    assert 'cannot connect' in capsys.readouterr().err
    assert not (tmp_path / 'cc.parts').exists()
    assert main(argv + ['--samples', '3', '--workers', '1']) == 0, capsys.readouterr().err


@pytest.mark.parametrize('robot, problem', [('{tmp}', 'Is a directory'),
                                            ('/dev/null', 'got nothing')])
def test_a_robot_that_is_no_description_file_is_named_for_what_it_is(tmp_path, capsys, robot,
                                                                     problem):
    """A folder or an empty device was refused as "no such file", which it is not."""
    robot = robot.format(tmp=tmp_path)
    assert main(['dataset', '--robot', robot, '--model', 'cc', '--samples', '2', '--workers',
                 '1', '--output', str(tmp_path / 'cc')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and robot in err and problem in err, err
    assert 'no such file' not in err


def test_a_file_where_the_parts_folder_goes_is_named_as_such(tmp_path, capsys):
    """It said "o/x.parts: File exists", as though the folder were the trouble."""
    (tmp_path / 'cc.parts').write_text('mine\n')
    assert main(['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '2', '--workers',
                 '1', '--output', str(tmp_path / 'cc')]) == 2
    assert capsys.readouterr().err == (
        f'tendon-robot-sim dataset: error: --output: {tmp_path / "cc.parts"} is a file, where '
        'the run keeps its parts (a folder); choose another --output or move the file\n')
    assert (tmp_path / 'cc.parts').read_text() == 'mine\n'


def test_a_second_process_is_refused_and_a_killed_one_leaves_no_stale_lock(tmp_path, capsys):
    """Two jobs on one output: one line naming the folder; SIGKILL of the first frees it."""
    import subprocess
    import sys
    argv = ['dataset', '--robot', ROBOT, '--model', 'statics', '--samples', '400',
            '--chunk-size', '1', '--workers', '1', '--output', str(tmp_path / 's')]
    command = [sys.executable, '-m', 'tendon_robot_sim.cli', *argv]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: list(tmp_path.glob('s.parts/part-*')) or first.poll() is not None,
                 'the first run to write a part')
        assert first.poll() is None     # still running: it holds the lock
        second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2
        assert second.stderr == (
            f'tendon-robot-sim dataset: error: --output: {tmp_path / "s.parts"} is being '
            'written by another run of this dataset; let it finish or choose another '
            '--output\n')
    finally:
        first.kill()
        first.wait()
    assert (tmp_path / 's.parts' / 'lock').exists()     # left by the kill, but not held
    assert main(argv + ['--max-chunks', '1']) == 0, capsys.readouterr().err
    assert 'stopped after' in capsys.readouterr().out
