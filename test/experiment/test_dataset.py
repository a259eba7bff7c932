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
Datasets of (actuation -> shape) samples (tendon_robot_sim.experiment.dataset).

Small runs in this process, on 2 local processes and on a 2-worker Dask cluster over TCP,
each stopped part-way and resumed; rows checked against direct solves of the models.
"""

import fcntl
import hashlib
import json
import math
import os
from pathlib import Path
import re
import signal
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tendon_robot_sim import __version__, parallel
from tendon_robot_sim.experiment import dataset
from tendon_robot_sim.experiment.dataset import (build_dataset, DatasetError, morton_order,
                                                 sample_inputs, solve_chunk)
from tendon_robot_sim.files import outputs
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.rod.constant_curvature import ConstantCurvature
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
from tendon_robot_sim.models.snake.robot import load_snake
from tendon_robot_sim.models.tendon_robot import load_robot
from waiting import wait_for

PCR = default_pcr_file()
CONFIG = default_pcr_file().parent
ROBOT = CONFIG / 'robot.yaml'
# the platform pose of a solve warm-started along the chunk and of a cold one differ by
# what the 1e-10 scaled residual leaves: ~1e-10 rod lengths; 1e-8 m protects against a
# row holding another sample's solution (they differ by millimetres)
POSITION = 1e-8


def _rows(path):
    return pq.read_table(path).to_pylist()


def _check_complete(path, samples):
    rows = _rows(path)
    assert [r['sample'] for r in rows] == list(range(samples))
    return rows


def _check_row_against_a_direct_solve(row):
    q1 = np.array([row[f'q1_{i + 1}'] for i in range(6)])
    solver = PcrSolver(load_pcr_robot(PCR))
    if not row['converged']:
        assert math.isnan(row['tip_x']) and row['backbone'] is None and row['error']
        return
    direct = solver.forward(q1)
    np.testing.assert_allclose([row['tip_x'], row['tip_y'], row['tip_z']], direct.position,
                               rtol=0.0, atol=POSITION)
    points = np.array(row['backbone']).reshape(6, -1, 3)
    np.testing.assert_allclose(points[:, -1], direct.centerlines[:, :, -1], atol=POSITION)


def _partial_then_resume(tmp_path, **pool):
    out = tmp_path / 'pcr'
    # the whole motor box: some samples converge, the rest are out of reach (kept, flagged)
    first = build_dataset(PCR, 'pcr', out, samples=12, sampler='lhs', chunk_size=4,
                          max_chunks=1, progress=False, **pool)
    assert first['solved_now'] == 4 and not first['complete']
    assert not out.with_suffix('.parquet').exists()
    second = build_dataset(PCR, 'pcr', out, samples=12, sampler='lhs', chunk_size=4,
                           progress=False, **pool)
    # nothing solved twice, nothing lost
    assert second['solved_now'] == 8 and second['complete']
    assert second['converged'] + second['failed'] == 12
    rows = _check_complete(out.with_suffix('.parquet'), 12)
    assert not (tmp_path / 'pcr.parts').exists()
    return rows


@pytest.fixture(scope='module')
def in_process(tmp_path_factory):
    return _partial_then_resume(tmp_path_factory.mktemp('local'), workers=1)


def test_in_process_run_resumes_and_matches_direct_solves(in_process):
    converged = [r for r in in_process if r['converged']]
    failed = [r for r in in_process if not r['converged']]
    assert converged and failed     # the motor box holds both
    _check_row_against_a_direct_solve(converged[0])
    _check_row_against_a_direct_solve(failed[0])


def _same_results(a, b):
    for ra, rb in zip(a, b):
        assert ra['converged'] == rb['converged']
        if ra['converged']:
            np.testing.assert_allclose(ra['backbone'], rb['backbone'], rtol=0.0, atol=1e-9)


def test_two_local_workers_give_the_same_rows(in_process, tmp_path):
    _same_results(in_process, _partial_then_resume(tmp_path, workers=2))


def test_two_worker_tcp_cluster_gives_the_same_rows(in_process, tmp_path):
    distributed = pytest.importorskip('distributed')
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host='127.0.0.1', dashboard_address=None) as cluster:
        rows = _partial_then_resume(tmp_path, scheduler=cluster.scheduler_address)
    _same_results(in_process, rows)


def test_a_cluster_worker_killed_mid_run_loses_and_repeats_no_row(in_process, tmp_path):
    """Dask moves the chunk of a worker killed as it worked to another: every row once."""
    distributed = pytest.importorskip('distributed')
    import threading
    out = tmp_path / 'pcr'
    killed = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host='127.0.0.1', dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        pids = client.run(os.getpid)

        def kill_a_busy_worker():
            # as the first part lands, the other chunks are on the workers
            wait_for(lambda: list(tmp_path.glob('pcr.parts/part-*')), 'a part')
            busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
            if busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])

        killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
        killer.start()
        summary = build_dataset(PCR, 'pcr', out, samples=12, sampler='lhs', chunk_size=4,
                                progress=False, scheduler=cluster.scheduler_address)
        killer.join()
    assert killed, 'no worker was busy as the first part landed'
    assert summary['complete'] and summary['solved_now'] == 12
    _same_results(in_process, _check_complete(out.with_suffix('.parquet'), 12))


def test_sidecar_describes_robot_and_model(tmp_path):
    out = tmp_path / 'one'
    build_dataset(PCR, 'pcr', out, samples=2, chunk_size=2, workers=1, progress=False)
    sidecar = json.loads(out.with_suffix('.json').read_text())
    assert sidecar['model'] == 'pcr' and sidecar['robot']['kind'] == 'pcr_6rus'
    assert sidecar['inputs'] == [f'q1_{i + 1}' for i in range(6)]
    assert sidecar['converged'] + sidecar['failed'] == 2


def test_sidecar_names_the_inputs_file_and_what_the_residual_is(tmp_path):
    """Enough to reproduce a run from a CSV of inputs, and to read its residual column."""
    inputs = tmp_path / 'u.csv'
    inputs.write_text('displacement_t0,displacement_t1,displacement_t2,displacement_t3\n'
                      '0.0075,0,0,0\n')
    build_dataset(ROBOT, 'cc', tmp_path / 'cc', sampler='csv', csv_path=str(inputs),
                  workers=1, progress=False)
    sidecar = json.loads((tmp_path / 'cc.json').read_text())
    assert sidecar['csv_file'] == str(inputs) and 'random_state' not in sidecar
    expected = hashlib.sha256(np.array([[0.0075, 0, 0, 0]]).tobytes()).hexdigest()
    assert sidecar['inputs_sha256'] == expected
    assert sidecar['columns']['residual'].startswith('misfit [m]')
    assert sidecar['produced_by'] == f'tendon_robot_sim {__version__}'


def test_the_version_recorded_is_the_release():
    """``__version__``, which result files record, is package.xml's (and setup.py's)."""
    root = Path(__file__).resolve().parents[2]
    for name, pattern in (('package.xml', r'<version>([^<]+)</version>'),
                          ('setup.py', r"version='([^']+)'")):
        assert re.search(pattern, (root / name).read_text()).group(1) == __version__, name


def test_statics_rows_match_a_direct_solve(tmp_path):
    out = tmp_path / 'statics'
    build_dataset(ROBOT, 'statics', out, samples=3, chunk_size=3, workers=1,
                  progress=False)
    rows = _check_complete(out.with_suffix('.parquet'), 3)
    # auto: the robot has discs
    assert json.loads(out.with_suffix('.json').read_text())['statics_model'] == 'discrete'
    robot = load_robot(ROBOT)
    names = [f'tension_{n}' for n in robot.tendon_names]
    for row in rows:
        if row['converged']:
            direct = StaticsSolver(robot, 'discrete').solve_tensions([row[n] for n in names])
            np.testing.assert_allclose([row['tip_x'], row['tip_y'], row['tip_z']],
                                       direct.tip_position, rtol=0.0, atol=1e-6)
            break
    else:
        pytest.fail('no statics sample converged')


@pytest.mark.parametrize('asked, model', [('auto', 'cosserat'), ('kirchhoff', 'kirchhoff')])
def test_statics_without_discs_takes_the_model_the_simulator_takes(tmp_path, asked, model):
    """A robot without discs: auto is cosserat (``model_for``), a named model is that one."""
    steel = CONFIG / 'steel_rod_robot.yaml'
    out = tmp_path / 'steel'
    summary = build_dataset(steel, 'statics', out, samples=2, chunk_size=2, workers=1,
                            progress=False, statics_model=asked)
    assert summary['converged'] == 2
    sidecar = json.loads(out.with_suffix('.json').read_text())
    assert sidecar['statics_model'] == model
    robot = load_robot(steel)
    row = _rows(out.with_suffix('.parquet'))[0]
    direct = StaticsSolver(robot, model).solve_tensions(
        [row[f'tension_{n}'] for n in robot.tendon_names])
    np.testing.assert_allclose([row['tip_x'], row['tip_y'], row['tip_z']], direct.tip_position,
                               rtol=0.0, atol=1e-6)


def test_a_statics_model_is_refused_for_another_model(tmp_path):
    with pytest.raises(DatasetError, match='^statics_model: applies to model statics only'):
        build_dataset(ROBOT, 'cc', tmp_path / 'cc', samples=1, workers=1, progress=False,
                      statics_model='cosserat')


def test_cc_rows_match_the_kinematics(tmp_path):
    out = tmp_path / 'cc'
    build_dataset(ROBOT, 'cc', out, samples=5, sampler='lhs', chunk_size=2, workers=1,
                  progress=False)
    rows = _check_complete(out.with_suffix('.parquet'), 5)
    robot = load_robot(ROBOT)
    kinematics = ConstantCurvature(robot)
    for row in rows:
        state = kinematics.forward([row[f'displacement_{n}'] for n in robot.tendon_names])
        assert row['converged'] and row['residual'] == pytest.approx(state.residual)
        np.testing.assert_allclose([row['tip_x'], row['tip_y'], row['tip_z']],
                                   state.tip_position, rtol=0.0, atol=1e-12)
        points = np.array(row['backbone']).reshape(-1, 3)
        # the arc starts at the base and ends at the tip
        np.testing.assert_allclose(points[0], robot.base.position, atol=1e-12)
        np.testing.assert_allclose(points[-1], state.tip_position, atol=1e-12)


def test_snake_rows_match_the_kinematics(tmp_path):
    path = CONFIG / 'rolling_joint_snake.yaml'
    out = tmp_path / 'snake'
    build_dataset(path, 'snake', out, samples=4, chunk_size=2, workers=1, progress=False)
    rows = _check_complete(out.with_suffix('.parquet'), 4)
    snake = load_snake(path)
    kinematics = SnakeKinematics(snake)
    for row in rows:
        q = [row[f'theta_{j + 1}'] for j in range(snake.n_joints)]
        assert all(abs(v) <= snake.joint_limit for v in q)
        state = kinematics.state(q)
        np.testing.assert_allclose([row['tip_x'], row['tip_y'], row['tip_z']],
                                   state.tip_position[0], rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(np.reshape(row['backbone'], (-1, 3)), state.origins[0],
                                   atol=1e-12)


@pytest.mark.parametrize('changes, differences', [
    # the inputs' checksum follows from the samples: the setting named is the one given
    ({'samples': 6}, '--samples 4 there, 6 now'),
    ({'chunk_size': 3, 'random_state': 1},
     '--random-state 0 there, 1 now; --chunk-size 2 there, 3 now'),
    ({'robot_path': 'edited'}, '--robot sha256 {there} there, {now} now'),
], ids=['samples', 'two settings', 'robot text'])
def test_a_changed_setting_does_not_mix_into_a_started_run(tmp_path, changes, differences):
    """The refusal names each setting that differs and both values (it named none)."""
    out = tmp_path / 'pcr'
    build_dataset(PCR, 'pcr', out, samples=4, chunk_size=2, max_chunks=1, workers=1,
                  progress=False)
    settings = {'robot_path': PCR, 'samples': 4, 'chunk_size': 2, **changes}
    if settings['robot_path'] == 'edited':      # one comment more: another text
        settings['robot_path'] = tmp_path / 'pcr.yaml'
        settings['robot_path'].write_text(PCR.read_text() + '# edited\n')
    there, now = (hashlib.sha256(path.read_bytes()).hexdigest()[:12]
                  for path in (PCR, Path(settings['robot_path'])))
    manifest = (tmp_path / 'pcr.parts' / 'manifest.json').read_text()
    with pytest.raises(DatasetError) as error:
        build_dataset(model='pcr', output=out, workers=1, progress=False, **settings)
    assert str(error.value) == (
        f'output: {tmp_path / "pcr.parts"} holds a run with other settings '
        f'({differences.format(there=there, now=now)}); choose another --output or delete it')
    assert (tmp_path / 'pcr.parts' / 'manifest.json').read_text() == manifest


def test_a_part_left_half_written_by_a_kill_does_not_stop_the_resumed_run(tmp_path):
    """A run killed (SIGTERM, SIGKILL) while it wrote a part leaves that part's temporary file."""
    out = tmp_path / 'cc'
    settings = {'samples': 6, 'chunk_size': 2, 'workers': 1, 'progress': False}
    build_dataset(ROBOT, 'cc', out, max_chunks=1, **settings)
    descriptor, _ = outputs._temporary_beside(tmp_path / 'cc.parts' / 'part-00001.parquet')
    os.close(descriptor)    # never renamed into place: what a kill leaves behind
    summary = build_dataset(ROBOT, 'cc', out, **settings)
    assert summary['complete'] and summary['solved_now'] == 4
    _check_complete(out.with_suffix('.parquet'), 6)
    assert not (tmp_path / 'cc.parts').exists()


def _first_chunk_ends_once_the_second_is_on_disk(task):
    """solve_chunk, but chunk 0 returns only when chunk 1's part has been written."""
    if task[3] == 0:
        parts = Path(os.environ['TEST_DATASET_PARTS'])
        wait_for(lambda: (parts / 'part-00001.parquet').exists(),
                 'chunk 1, solved while chunk 0 still ran, written to disk', timeout=60.0)
    return solve_chunk(task)


def test_a_chunk_is_written_when_it_ends_not_after_the_chunks_before_it(tmp_path, monkeypatch):
    """
    A chunk is on disk when it ends, not when the slower chunks before it have.

    A chunk whose samples fail (each through every continuation) is slower than the ones after
    it; their parts were held in memory behind it, and lost to a kill then (a time limit).
    """
    if parallel.usable_cores() < 2:
        pytest.skip('needs two cores for two workers')
    monkeypatch.setenv('TEST_DATASET_PARTS', str(tmp_path / 'cc.parts'))
    # the workers are forked: they find the patched function by its name, as the parent does
    monkeypatch.setattr(dataset, 'solve_chunk', _first_chunk_ends_once_the_second_is_on_disk)
    summary = build_dataset(ROBOT, 'cc', tmp_path / 'cc', samples=4, chunk_size=2, workers=2,
                            progress=False)
    assert summary['complete']
    _check_complete(tmp_path / 'cc.parquet', 4)


def test_a_run_writes_its_manifest_once_not_once_a_chunk(tmp_path, monkeypatch):
    """
    Keep what a run writes besides its parts from growing with the square of its chunks.

    A manifest listing the chunks done, rewritten after each, wrote over 100 GB in a run of 10^7
    samples in chunks of 50: the part files are the record of what is done.
    """
    written = []
    real = dataset._write_json
    monkeypatch.setattr(dataset, '_write_json',
                        lambda path, data: (written.append(path.name), real(path, data)))
    out = tmp_path / 'cc'
    settings = {'samples': 8, 'chunk_size': 2, 'workers': 1, 'progress': False}
    build_dataset(ROBOT, 'cc', out, max_chunks=3, **settings)
    assert written.count(dataset.MANIFEST) == 1
    summary = build_dataset(ROBOT, 'cc', out, **settings)
    assert written.count(dataset.MANIFEST) == 2 and summary['solved_now'] == 2
    _check_complete(out.with_suffix('.parquet'), 8)


def test_a_second_run_on_the_same_output_is_refused_while_the_first_runs(tmp_path):
    """A job started twice: the second would solve every chunk again and fail at the join."""
    out = tmp_path / 'cc'
    settings = {'samples': 4, 'chunk_size': 2, 'workers': 1, 'progress': False}
    build_dataset(ROBOT, 'cc', out, max_chunks=1, **settings)
    running = os.open(tmp_path / 'cc.parts' / 'lock', os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(running, fcntl.LOCK_EX)     # as the first run holds it
        with pytest.raises(DatasetError, match='being written by another run'):
            build_dataset(ROBOT, 'cc', out, **settings)
    finally:
        os.close(running)
    assert build_dataset(ROBOT, 'cc', out, **settings)['solved_now'] == 2


RUN = {'samples': 4, 'chunk_size': 2, 'workers': 1, 'progress': False}


def _hook(monkeypatch, owner, name, step, on=lambda *args: True):
    """
    Run ``step(real, *args)`` in place of the first call ``owner.name(*args)`` that is ``on``.

    The step is where another run does what the test interleaves; the calls before and after
    it go to the real ``name``.
    """
    real, done = getattr(owner, name), []

    def hooked(*args):
        if done or not on(*args):
            return real(*args)
        done.append(args)
        return step(real, *args)
    monkeypatch.setattr(owner, name, hooked)


def _finishing_run(out):
    """Run the dataset ``out`` to its end (joined, its parts folder removed)."""
    assert build_dataset(ROBOT, 'cc', out, **RUN)['complete']


@pytest.mark.parametrize('chunks', [1, None], ids=['stopped', 'finished'])
def test_a_run_started_as_another_removes_its_lock_keeps_its_folder(tmp_path, monkeypatch,
                                                                    chunks):
    """
    The second run takes a fresh lock in the folder the first is about to remove.

    The first run, at its end, removed its lock file, then the folder: a run that started
    between the two made its own lock file there and went on; the first then failed on the
    folder no longer empty (or gone, when the second had ended first), its dataset written.
    """
    out = tmp_path / 'cc'
    lock = tmp_path / 'cc.parts' / dataset.LOCK
    second = []

    def then_the_second_run(real, path, *args):
        real(path, *args)
        second.append(build_dataset(ROBOT, 'cc', out, max_chunks=chunks, **RUN))
    build_dataset(ROBOT, 'cc', out, max_chunks=1, **RUN)
    _hook(monkeypatch, Path, 'unlink', then_the_second_run, on=lambda path, *args: path == lock)
    assert build_dataset(ROBOT, 'cc', out, **RUN)['complete']
    _check_complete(out.with_suffix('.parquet'), 4)
    assert second[0]['solved_now'] == (2 if chunks else 4)
    if chunks:  # the second run's chunk is kept, and resumed
        assert build_dataset(ROBOT, 'cc', out, **RUN)['solved_now'] == 2
    _check_complete(out.with_suffix('.parquet'), 4)
    assert not (tmp_path / 'cc.parts').exists()


def test_a_run_whose_folder_is_removed_before_it_takes_the_lock_starts_anew(
        tmp_path, monkeypatch):
    """The first run removes the parts folder the second has just found there."""
    out = tmp_path / 'cc'
    _hook(monkeypatch, dataset, 'make_folder',
          lambda real, path: (real(path), _finishing_run(out))[0])
    summary = build_dataset(ROBOT, 'cc', out, **RUN)
    assert summary['complete'] and summary['solved_now'] == 4
    _check_complete(out.with_suffix('.parquet'), 4)
    assert not (tmp_path / 'cc.parts').exists()


@pytest.mark.parametrize('when', ['removing', 'removed'])
def test_a_run_that_opened_the_lock_of_a_finishing_run_starts_anew(tmp_path, monkeypatch, when):
    """
    The second run opened the lock file the first then removed with its folder.

    ``removed``: the second took that lock once the first had ended, a lock on no file, and
    failed to write its manifest into the folder gone (a third run would have run beside
    it). ``removing``: it tried while the first held it, its lock file removed, and was
    refused though the first was ending.
    """
    out = tmp_path / 'cc'
    lock = tmp_path / 'cc.parts' / dataset.LOCK
    tried = []

    def flock_at_the_end_of_the_first_run(real, descriptor, operation):
        def take_it_now(real_unlink, path, *args):
            real_unlink(path, *args)
            try:
                tried.append(real(descriptor, operation))
            except BlockingIOError as error:
                tried.append(error)
        if when == 'removing':
            _hook(monkeypatch, Path, 'unlink', take_it_now, on=lambda path, *args: path == lock)
        _finishing_run(out)
        if when == 'removed':
            return real(descriptor, operation)
        assert isinstance(tried[0], BlockingIOError)    # the first run held it still
        raise tried[0]
    # the second run's first flock, after it made the folder and opened the lock file there
    _hook(monkeypatch, dataset.fcntl, 'flock', flock_at_the_end_of_the_first_run)
    summary = build_dataset(ROBOT, 'cc', out, **RUN)
    assert summary['complete'] and summary['solved_now'] == 4
    _check_complete(out.with_suffix('.parquet'), 4)
    assert not (tmp_path / 'cc.parts').exists()


def _write_parts(folder, samples, chunk_size, floats, seed=0):
    """Parts as a run writes them: chunks of shuffled samples, some failed (null backbone)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(samples)
    paths = []
    for c, start in enumerate(range(0, samples, chunk_size)):
        ids = order[start:start + chunk_size]
        converged = rng.random(ids.size) > 0.1
        part = {'sample': ids, 'inputs': rng.random((ids.size, 2)),
                'tip': rng.random((ids.size, 7)),
                'backbone': [rng.random(floats).tolist() if ok else None for ok in converged],
                'residual': rng.random(ids.size), 'converged': converged,
                'error': [None if ok else 'did not converge' for ok in converged],
                'solve_time': rng.random(ids.size)}
        paths.append(folder / f'part-{c:05d}.parquet')
        pq.write_table(dataset._table(('t0', 't1'), part), paths[-1])
    return paths


def test_parts_are_joined_in_sample_order_through_several_buckets(tmp_path):
    paths = _write_parts(tmp_path, samples=103, chunk_size=7, floats=30)
    expected = pa.concat_tables([pq.read_table(path) for path in paths]).sort_by('sample')
    # a budget of about 10 rows: 11 buckets, each filled from several spills
    budget = 10 * expected.nbytes // expected.num_rows
    converged = dataset.join_parts(paths, 103, tmp_path / 'join', tmp_path / 'out.parquet',
                                   budget_bytes=budget)
    joined = pq.read_table(tmp_path / 'out.parquet')
    assert joined.equals(expected)
    assert converged == sum(expected.column('converged').to_pylist())
    assert not (tmp_path / 'join').exists()


def test_the_join_holds_a_budget_of_rows_not_the_dataset(tmp_path):
    """
    Keep the final join of a large dataset within memory.

    Reading every part at once held the whole dataset (tens of GB at 10^7 samples with
    backbones), at the end of the run and of every resume. 37 MB of parts joined with a
    budget of 1 MB: the Arrow allocations' peak (the process's, measured by pyarrow; about
    10 MB here, Parquet's buffers and the sort's copy beside the budget) stays below half
    the dataset, where the in-memory join peaked at 3.5 times the dataset (128 MB).
    """
    _write_parts(tmp_path, samples=4000, chunk_size=50, floats=1250)
    script = ('import sys, pyarrow as pa; from pathlib import Path; '
              'from tendon_robot_sim.experiment import dataset; '
              'paths = sorted(Path(sys.argv[1]).glob("part-*.parquet")); '
              'dataset.join_parts(paths, 4000, Path(sys.argv[1]) / "join", '
              'Path(sys.argv[1]) / "out.parquet", budget_bytes=2**20); '
              'print(pa.default_memory_pool().max_memory())')
    done = subprocess.run([sys.executable, '-c', script, str(tmp_path)], capture_output=True,
                          text=True, check=True)
    size = pq.read_table(tmp_path / 'out.parquet').nbytes
    assert size > 35e6
    assert int(done.stdout) < size / 2


def test_a_count_of_one_is_said_in_the_singular(tmp_path):
    """'1 values', '1 columns': a count of one reads as one (tendon_robot_sim.counted)."""
    from tendon_robot_sim.experiment.csv_table import read_table, TableError
    path = tmp_path / 'one.csv'
    path.write_text('a\n0.5,0.5\n')
    with pytest.raises(TableError, match='line 2: 2 values, the header has 1 column$'):
        read_table(path)


def test_latin_hypercube_has_one_sample_per_stratum():
    u = sample_inputs(np.zeros(3), np.full(3, 2.0), 10, 'lhs', 3)
    for column in u.T:
        assert sorted(np.floor(column / 0.2).astype(int)) == list(range(10))


def test_morton_order_keeps_neighbours_close():
    u = sample_inputs(np.zeros(2), np.ones(2), 400, 'uniform', 1)
    ordered = u[morton_order(u, np.zeros(2), np.ones(2))]
    step = np.linalg.norm(np.diff(ordered, axis=0), axis=1).mean()
    assert step < 0.3 * np.linalg.norm(np.diff(u, axis=0), axis=1).mean()


def test_csv_inputs_are_checked_against_the_box(tmp_path):
    path = tmp_path / 'u.csv'
    path.write_text('b,a\n1.0,0.5\n0.2,0.1\n')
    u = sample_inputs([0, 0], [1, 1], 0, 'csv', csv_path=str(path), names=('a', 'b'))
    np.testing.assert_array_equal(u, [[0.5, 1.0], [0.1, 0.2]])
    path.write_text('a,b\n0.5,3.0\n')
    with pytest.raises(DatasetError, match=r"line 2, column 'b': 3 is outside \[0, 1\]"):
        sample_inputs([0, 0], [1, 1], 0, 'csv', csv_path=str(path), names=('a', 'b'))


@pytest.mark.parametrize('text, error', [
    ('', 'empty'),
    ('a,b\n', 'no rows'),
    ('a,b,a\n0.5,0.5,0.1\n', 'a column is given twice'),
    ('a,b\n0.5,nan\n', "line 2, column 'b': must be finite"),
    ('a,b\n0.5\n', 'line 2: 1 value, the header has 2 columns'),
])
def test_a_csv_that_is_not_a_table_of_inputs_is_refused(tmp_path, text, error):
    """
    Refuse the file as every CSV of the package is refused (experiment.csv_table).

    A repeated column was read from its first place; an empty file passed numpy's warning
    on to stderr.
    """
    path = tmp_path / 'u.csv'
    path.write_text(text)
    with pytest.raises(DatasetError, match=error):
        sample_inputs([0, 0], [1, 1], 0, 'csv', csv_path=str(path), names=('a', 'b'))


def test_csv_inputs_may_be_quoted_and_come_beside_other_columns(tmp_path):
    path = tmp_path / 'u.csv'
    path.write_text('"a","label","b"\r\n0.5,left,1.0\r\n')
    u = sample_inputs([0, 0], [1, 1], 0, 'csv', csv_path=str(path), names=('a', 'b'))
    np.testing.assert_array_equal(u, [[0.5, 1.0]])
