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
Datasets of (actuation -> shape) samples, solved on local cores or a Dask cluster.

A generic driver samples a model's actuation box (uniform, Latin hypercube, or rows of a
CSV file), orders the samples along a Morton (Z-order) curve so that consecutive samples
are close, cuts that order into chunks, and solves each chunk on a worker
(:class:`~tendon_robot_sim.parallel.Pool`), each sample warm-started from the one before
it. The model is reached through a small adapter per model (:data:`ADAPTERS`): its
inputs and their box, one solve, its description.

Output ``NAME.parquet`` (one row per sample, in sample order) and ``NAME.json`` (the robot
description, the model and the sampling). While running, each finished chunk is written
to ``NAME.parts/part-NNNNN.parquet`` (renamed into place complete) beside
``NAME.parts/manifest.json``, the run's settings: a killed run started again with the same
settings solves only the chunks without a part. A sample
whose solve fails is kept, flagged ``converged = False`` with NaN outputs, its residual
and the error message.
"""

from __future__ import annotations

from contextlib import contextmanager, ExitStack
import errno
import fcntl
import hashlib
import json
import math
import os
from pathlib import Path
import shutil
import tempfile
import time
from typing import Iterator

import numpy as np

from tendon_robot_sim import produced_by, progress_bar
from tendon_robot_sim.experiment.csv_table import read_table, TableError
from tendon_robot_sim.files.outputs import (make_folder, open_output, remove_unfinished,
                                            write_output)
from tendon_robot_sim.files.yaml_loader import read_yaml_text, yaml_value, YamlFileError
from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.description import short_repr
from tendon_robot_sim.models.geometry import rotation_to_quaternion
from tendon_robot_sim.parallel import ParallelError, Pool

SAMPLERS = ('uniform', 'lhs', 'csv')
# Morton code bits per input: 63 bits shared by up to 12 inputs (>= 5 bits each).
MORTON_BITS = 63
MANIFEST = 'manifest.json'
LOCK = 'lock'     # held by the run that writes the parts folder
JOIN = 'join'     # the parts folder's folder of buckets while the parts are joined
# The join sorts this many bytes of rows at once (its peak about 5.5 times that: Parquet's
# buffers and the sort's copy), with at most JOIN_FILES buckets open.
JOIN_BYTES = 64 * 2**20
JOIN_FILES = 256
# Dictionary pages for the error messages only: a dictionary of the floats (all distinct)
# is never used, and building it took about 30 MB for each file written.
PARQUET = {'use_dictionary': ['error']}
# The sampler draws and orders every sample up front: 10^8 samples of 6 inputs take about
# 5 GB. Larger datasets: several runs with different random states.
MAX_SAMPLES = 100_000_000


class DatasetError(ValueError):
    """A bad dataset setting or output; the message names the field and the problem."""


# --------------------------------------------------------------------------- adapters


class _PcrAdapter:
    """
    6-RUS parallel robot, forward kinetostatics: motor angles q1 [rad] -> platform.

    The forward problem has more than one equilibrium: a warm start from a sample far
    away can land on another branch (a platform folded below the motors) than the cold
    start from the rigid-link robot, which keeps the working mode. Samples further than
    WARM_STEP from the last one start cold; along a dense curve order most are closer.
    """

    WARM_STEP = np.radians(5.0)
    RESIDUAL = 'scaled solver residual (max norm)'

    def __init__(self, path: str):
        from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
        from tendon_robot_sim.models.pcr.robot import load_pcr_robot
        self.robot = load_pcr_robot(path)
        self.solver = PcrSolver(self.robot)
        self.names = tuple(f'q1_{i + 1}' for i in range(6))
        self.low = np.full(6, self.robot.motor_limits[0])
        self.high = np.full(6, self.robot.motor_limits[1])
        self.unit = 'rad'
        self.last = None

    def solve(self, u: np.ndarray):
        """Return tip position, rotation, backbone points (k, 3), residual."""
        if self.last is None or np.max(np.abs(u - self.last)) > self.WARM_STEP:
            self.solver.reset()
        self.last = None
        r = self.solver.forward(u)
        self.last = np.array(u)
        return r.position, r.rotation, r.centerlines.transpose(0, 2, 1).reshape(-1, 3), \
            r.residual

    def reset(self) -> None:
        self.solver.reset()
        self.last = None


class _StaticsAdapter:
    """
    Tendon robot, shooting statics: tendon tensions [N] -> backbone.

    ``statics_model``: one of the solver's models, or ``auto`` (``model_for``: discrete with
    vertebra discs, cosserat without), as the simulator and the controllers choose.
    """

    RESIDUAL = 'scaled solver residual (max norm)'

    def __init__(self, path: str, statics_model: str = 'auto'):
        from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
        from tendon_robot_sim.models.tendon_robot import load_robot
        self.robot = load_robot(path)
        self.solver = StaticsSolver(self.robot, statics_model)
        self.model = self.solver.model
        self.names = tuple(f'tension_{name}' for name in self.robot.tendon_names)
        self.low = np.zeros(len(self.names))
        self.high = np.asarray(self.robot.max_tensions, dtype=float)
        self.unit = 'N'

    def solve(self, u: np.ndarray):
        """Return tip position, rotation, backbone points (k, 3), residual."""
        r = self.solver.solve_tensions(u)
        return r.tip_position, r.tip_rotation, r.centerline.T, r.residual

    def reset(self) -> None:
        self.solver.reset()


class _CCAdapter:
    """
    Tendon robot, constant-curvature kinematics: tendon displacements [m] -> arc.

    One section (Webster & Jones 2010, "Design and Kinematic Modeling of Constant
    Curvature Continuum Robots: A Review"), straight beyond the tendon anchors. The box
    pulls each tendon from 0 to r_i pi / 2 (its displacement at a quarter-turn bend
    towards it); a set of displacements no single arc has is fitted by least squares and
    its misfit [m] is the residual.
    """

    POINTS = 21     # backbone points along the section (and the rod's tip beyond it)
    RESIDUAL = 'misfit [m] of displacements no single arc has (2-norm)'

    def __init__(self, path: str):
        from tendon_robot_sim.models.rod.constant_curvature import load_constant_curvature
        self.model = load_constant_curvature(path)
        self.robot = self.model.robot
        self.names = tuple(f'displacement_{name}' for name in self.robot.tendon_names)
        self.low = np.zeros(len(self.names))
        self.high = np.array([t.offset for t in self.robot.tendons]) * math.pi / 2.0
        self.unit = 'm'

    def solve(self, u: np.ndarray):
        """Return tip position, rotation, backbone points (k, 3), residual."""
        from tendon_robot_sim.models.geometry import section_pose
        state = self.model.forward(u)
        base = self.robot.base
        section = self.model.section_length
        points = [base.position + base.rotation @ section_pose(
            state.theta * f, state.phi, section * f)[1]
            for f in np.linspace(0.0, 1.0, self.POINTS)]
        if self.model.length > section:
            points.append(state.tip_position)
        return state.tip_position, state.tip_rotation, np.vstack(points), state.residual

    def reset(self) -> None:
        """Nothing to forget: the kinematics are closed-form."""


class _SnakeAdapter:
    """
    Rolling-joint snake, kinematics: joint angles [rad] -> link frames.

    The snake's shape is set by its joint angles (each within +-2 alpha, where the contact
    would leave the rolling surfaces); the backbone points are the link frame origins
    from the base, the tip the last link's distal vertex. Closed form: residual 0.
    """

    RESIDUAL = '0 (closed form)'

    def __init__(self, path: str):
        from tendon_robot_sim.models.snake.kinematics import SnakeKinematics
        from tendon_robot_sim.models.snake.robot import load_snake
        self.robot = load_snake(path)
        self.model = SnakeKinematics(self.robot)
        n = self.robot.n_joints
        self.names = tuple(f'theta_{j + 1}' for j in range(n))
        self.low = np.full(n, -self.robot.joint_limit)
        self.high = np.full(n, self.robot.joint_limit)
        self.unit = 'rad'

    def solve(self, u: np.ndarray):
        """Return tip position, rotation, backbone points (k, 3), residual."""
        state = self.model.state(u)
        return state.origins[0, -1], state.rotations[0, -1], state.origins[0], 0.0

    def reset(self) -> None:
        """Nothing to forget: the kinematics are closed-form."""


# model -> (adapter, what it solves)
ADAPTERS = {
    'snake': (_SnakeAdapter, 'rolling-joint snake kinematics (joint angles -> links)'),
    'cc': (_CCAdapter, 'tendon robot constant-curvature kinematics (displacements -> arc)'),
    'statics': (_StaticsAdapter, 'tendon robot shooting statics (tensions -> shape)'),
    'pcr': (_PcrAdapter, '6-RUS parallel robot forward kinetostatics (motor angles -> pose)'),
}
# per worker process: adapters by (model, options, description hash), so a worker builds each
# once
_CACHE: dict = {}


def _adapter(model: str, options: tuple, text: str, path: str | Path | None = None):
    """Return the adapter of ``model`` with keyword ``options`` ((name, value) pairs)."""
    key = (model, options, hashlib.sha256(text.encode()).hexdigest())
    if key not in _CACHE and path is not None:
        _CACHE[key] = ADAPTERS[model][0](str(path), **dict(options))
    if key not in _CACHE:
        # the loaders read files: a worker on another machine gets the description's text
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / 'robot.yaml'
            path.write_text(text)
            _CACHE[key] = ADAPTERS[model][0](str(path), **dict(options))
    return _CACHE[key]


# --------------------------------------------------------------------------- sampling


def sample_inputs(low, high, samples: int, sampler: str, random_state: int = 0,
                  csv_path: str | None = None, names=()) -> np.ndarray:
    """
    Return (samples, d) inputs within [low, high].

    ``uniform``: independent uniform draws; ``lhs``: a Latin hypercube (scipy.stats.qmc);
    ``csv``: the rows of ``csv_path`` (a header naming the inputs, any order; ``samples``
    ignored), each checked against the box.
    """
    low, high = np.asarray(low, float), np.asarray(high, float)
    if sampler == 'csv':
        return _read_csv(csv_path, names, low, high)
    if sampler not in SAMPLERS:
        raise DatasetError(f'sampler: must be one of {list(SAMPLERS)}, got {sampler!r}')
    if not isinstance(samples, int) or samples < 1:
        raise DatasetError(f'samples: must be an integer >= 1, got {samples!r}')
    if samples > MAX_SAMPLES:
        raise DatasetError(f'samples: {samples} is more than the {MAX_SAMPLES:.0e} one run '
                           'draws up front; build larger datasets in several runs with '
                           'different random states')
    if sampler == 'uniform':
        unit = np.random.default_rng(random_state).random((samples, low.size))
    else:
        from scipy.stats import qmc
        unit = qmc.LatinHypercube(d=low.size, rng=np.random.default_rng(random_state)) \
            .random(samples)
    return low + unit * (high - low)


def _read_csv(path, names, low, high) -> np.ndarray:
    if not path:
        raise DatasetError('csv: the csv sampler needs a file (--csv FILE)')
    try:
        table = read_table(path, names)
    except TableError as error:
        raise DatasetError(f'csv: {error}') from None
    u = table.values
    outside = ~((u >= low) & (u <= high))
    if outside.any():
        r, c = np.argwhere(outside)[0]
        raise DatasetError(f'csv: {table.where(r, names[c])}: {u[r, c]:g} is outside '
                           f'[{low[c]:g}, {high[c]:g}]')
    return u


def morton_order(u: np.ndarray, low, high) -> np.ndarray:
    """
    Return the permutation that sorts the samples (n, d) along a Morton (Z-order) curve.

    Each input, scaled to [0, 1] over the box, is quantised to floor(63 / d) bits and the
    bits are interleaved; neighbours along the curve are neighbours in the box (mostly).
    """
    n, d = u.shape
    bits = max(1, MORTON_BITS // d)
    span = np.where(np.asarray(high) > np.asarray(low), np.asarray(high) - low, 1.0)
    q = np.clip((u - low) / span, 0.0, 1.0)
    q = np.minimum((q * (1 << bits)).astype(np.uint64), np.uint64((1 << bits) - 1))
    code = np.zeros(n, dtype=np.uint64)
    for b in range(bits - 1, -1, -1):
        for j in range(d):
            code = (code << np.uint64(1)) | ((q[:, j] >> np.uint64(b)) & np.uint64(1))
    return np.argsort(code, kind='stable')


# --------------------------------------------------------------------------- solving


def solve_chunk(task) -> dict:
    """
    Solve one chunk on a worker: samples in curve order, each from the one before.

    ``task`` = (model, its options, description text, chunk id, sample ids, inputs (m, d)).
    Returns the chunk's columns (plain arrays, picklable).
    """
    model, options, text, chunk, ids, inputs = task
    adapter = _adapter(model, options, text)
    adapter.reset()         # a chunk starts cold: its result never depends on the last chunk
    m = len(ids)
    tip = np.full((m, 7), np.nan)
    residual = np.full(m, np.nan)
    converged = np.zeros(m, dtype=bool)
    errors = [''] * m
    backbone = [None] * m
    times = np.zeros(m)
    for row, u in enumerate(inputs):
        start = time.perf_counter()
        try:
            position, rotation, points, residual[row] = adapter.solve(u)
            tip[row, :3] = position
            tip[row, 3:] = rotation_to_quaternion(rotation)
            backbone[row] = np.asarray(points, dtype=float).ravel()
            converged[row] = True
        except (ConvergenceError, ValueError, ArithmeticError) as error:
            residual[row] = getattr(error, 'residual', math.inf)
            errors[row] = f'{type(error).__name__}: {error}'
            adapter.reset()
        times[row] = time.perf_counter() - start
    return {'chunk': chunk, 'sample': np.asarray(ids), 'inputs': np.asarray(inputs),
            'tip': tip, 'backbone': backbone, 'residual': residual, 'converged': converged,
            'error': errors, 'solve_time': times}


def _table(names, part: dict):
    import pyarrow as pa
    columns = {'sample': pa.array(part['sample'], pa.int64())}
    for j, name in enumerate(names):
        columns[name] = pa.array(part['inputs'][:, j])
    for j, name in enumerate(('tip_x', 'tip_y', 'tip_z', 'tip_qx', 'tip_qy', 'tip_qz',
                              'tip_qw')):
        columns[name] = pa.array(part['tip'][:, j])
    # null where the solve failed
    columns['backbone'] = pa.array(part['backbone'], pa.list_(pa.float64()))
    columns['residual'] = pa.array(part['residual'])
    columns['converged'] = pa.array(part['converged'])
    columns['error'] = pa.array(part['error'], pa.string())
    columns['solve_time_s'] = pa.array(part['solve_time'])
    return pa.table(columns)


def _write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (a killed run never leaves half a manifest)."""
    write_output(path, json.dumps(data, indent=1))


def build_dataset(robot_path: str | Path, model: str, output: str | Path, samples: int = 1000,
                  sampler: str = 'uniform', random_state: int = 0, csv_path: str | None = None,
                  chunk_size: int = 50, workers: int | None = None, scheduler=None,
                  max_chunks: int | None = None, progress: bool = True,
                  statics_model: str = 'auto') -> dict:
    """
    Sample, solve and write a dataset (see the module docstring); resumes a killed run.

    ``output`` is the path without suffix. ``max_chunks``: solve at most that many chunks in
    this call, then stop (the rest on the next call). ``statics_model``: the model of
    ``model`` 'statics' (``auto``: discrete with vertebra discs, cosserat without). Returns a
    summary: samples, solved in this call, converged, failed, chunks done and total, wall
    time, complete.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:     # optional for a colcon install (docs/ros_interface.md)
        raise DatasetError('output: Parquet files need the pyarrow package '
                           '(pip install pyarrow)') from None
    if model not in ADAPTERS:
        raise DatasetError(f'model: must be one of {sorted(ADAPTERS)}, got {model!r}')
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise DatasetError(f'chunk_size: must be an integer >= 1, got {chunk_size!r}')
    if model != 'statics' and statics_model != 'auto':
        raise DatasetError(f'statics_model: applies to model statics only, not {model}')
    options = (('statics_model', statics_model),) if model == 'statics' else ()
    try:
        text = read_yaml_text(robot_path)   # the workers get the text: as the loaders read it
    except YamlFileError as error:
        raise DatasetError(f'robot: {error}') from None
    adapter = _adapter(model, options, text, robot_path)
    # the model a statics run solves with (auto resolved): a resumed run must use the same
    variant = {'statics_model': adapter.model} if model == 'statics' else {}
    u = sample_inputs(adapter.low, adapter.high, samples, sampler, random_state, csv_path,
                      adapter.names)
    order = morton_order(u, adapter.low, adapter.high)
    chunks = [order[i:i + chunk_size] for i in range(0, order.size, chunk_size)]
    output = Path(output)
    parts = output.parent / (output.name + '.parts')
    # what made the inputs: the file's rows, or the draws
    drawn = {'csv_file': str(csv_path)} if sampler == 'csv' else {'random_state': random_state}
    settings = {'model': model, **variant,
                'robot_sha256': hashlib.sha256(text.encode()).hexdigest(),
                'samples': int(u.shape[0]), 'sampler': sampler, 'random_state': random_state,
                'inputs_sha256': hashlib.sha256(u.tobytes()).hexdigest(),
                'chunk_size': chunk_size}
    manifest_path = parts / MANIFEST
    if parts.exists() and not parts.is_dir():   # before the cluster is reached
        raise DatasetError(f'output: {parts} is a file, where the run keeps its parts (a '
                           'folder); choose another --output or move the file')
    with ExitStack() as held:
        # connected before the parts folder is made: a cluster not reached leaves no
        # manifest, which refused the next run with other settings, though none had solved
        pool = held.enter_context(Pool(workers, scheduler))
        held.enter_context(_only_run(parts))
        done = _chunks_done(parts, settings, len(chunks))
        remove_unfinished(parts)    # of a run killed while it wrote a part or the manifest
        _write_json(manifest_path, {'settings': settings})
        finished = set(done)
        todo = [c for c in range(len(chunks)) if c not in finished][:max_chunks]
        tasks = [(model, options, text, c, chunks[c].tolist(), u[chunks[c]]) for c in todo]
        start = time.perf_counter()
        solved = 0
        # the bar after the pool has connected, and ended before an error is reported: its line
        # is finished, whatever ends the run, not left for the error or redrawn after it
        with progress_bar(total=u.shape[0], initial=sum(chunks[c].size for c in done),
                          unit='sample', desc=f'dataset {model}', shown=progress) as bar:
            try:
                # each part written as its chunk ends, whatever chunk ends first
                for part in pool.imap(tasks, solve_chunk, ordered=False):
                    c = part['chunk']
                    with open_output(parts / f'part-{c:05d}.parquet', 'wb') as handle:
                        pq.write_table(_table(adapter.names, part), handle, **PARQUET)
                    done.append(c)
                    solved += len(part['sample'])
                    bar.update(len(part['sample']))
            except ParallelError as error:      # a worker killed: the parts written stay
                raise DatasetError(f'{error}; the chunks done are kept: run the same command '
                                   'again to go on') from None
        wall = time.perf_counter() - start
        pool.close()    # its workers hold no memory through the join
        complete = len(done) == len(chunks)
        summary = {'samples': int(u.shape[0]), 'solved_now': solved, 'chunks_done': len(done),
                   'chunks': len(chunks), 'wall_time_s': wall, 'complete': complete}
        if complete:
            part_paths = [parts / f'part-{c:05d}.parquet' for c in range(len(chunks))]
            converged = join_parts(part_paths, int(u.shape[0]), parts / JOIN,
                                   output.parent / (output.name + '.parquet'))
            summary.update(converged=converged, failed=int(u.shape[0]) - converged)
            # the validated description in the YAML schema; the file as read for a kind
            # without one (the snake)
            to_dict = getattr(adapter.robot, 'to_dict', None)
            robot = json.loads(json.dumps(to_dict() if to_dict else yaml_value(text, robot_path),
                                          default=_plain))
            # PATH + suffix: with_suffix would turn run.v2 into run.parquet
            _write_json(output.parent / (output.name + '.json'), {
                'produced_by': produced_by(), 'robot': robot, 'robot_file': str(robot_path),
                'model': model, **variant, 'model_description': ADAPTERS[model][1],
                'inputs': list(adapter.names), 'input_unit': adapter.unit,
                'input_low': adapter.low.tolist(), 'input_high': adapter.high.tolist(),
                'sampler': sampler, **drawn, 'samples': int(u.shape[0]),
                'inputs_sha256': settings['inputs_sha256'],
                'order': 'Morton (Z-order) curve, chunks of consecutive samples, each sample '
                         'warm-started from the one before it',
                'chunk_size': chunk_size,
                'columns': {'sample': 'index of the sample', 'tip_x..tip_z': 'm, base frame',
                            'tip_qx..tip_qw': 'tip orientation quaternion',
                            'backbone': 'backbone points x, y, z [m] flattened (parallel '
                                        'robot: the six rods one after the other)',
                            'residual': adapter.RESIDUAL,
                            'converged': 'False: outputs NaN, see error'},
                'converged': summary['converged'], 'failed': summary['failed']})
            for path in part_paths:
                path.unlink()
            manifest_path.unlink()
            # the lock last, still held: a run that opens it from now on finds it gone and
            # starts on a folder of its own (_only_run)
            (parts / LOCK).unlink()
            try:
                parts.rmdir()
            except OSError as error:    # a run started since holds its own lock in it
                if error.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                    raise
    return summary


def join_parts(part_paths: list[Path], samples: int, scratch: Path, destination: Path,
               budget_bytes: int = JOIN_BYTES) -> int:
    """
    Write the parts as one Parquet file sorted by sample; return how many samples converged.

    ``samples`` rows, ``sample`` a permutation of 0 .. samples - 1. An external bucket sort:
    the rows go to buckets of consecutive sample indices in the folder ``scratch`` (removed
    first and after), a part at a time; then each bucket is read, sorted and appended. It
    sorts about ``budget_bytes`` of rows at once (more if JOIN_FILES buckets cannot take the
    dataset at that size) where reading every part at once held the whole dataset twice:
    tens of GB at 10^7 samples with backbones, at the end of a run and of every resume.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    first = pq.read_table(part_paths[0])
    row_bytes = max(1, first.nbytes // max(1, first.num_rows))
    bucket_rows = max(1, budget_bytes // row_bytes, math.ceil(samples / JOIN_FILES))
    buckets = math.ceil(samples / bucket_rows)
    shutil.rmtree(scratch, ignore_errors=True)  # of a run killed while it joined
    make_folder(scratch)
    bucket_paths = [scratch / f'bucket-{b:05d}.parquet' for b in range(buckets)]
    writers = [None] * buckets
    try:
        held, held_rows = [], 0
        for path in part_paths:
            held.append(pq.read_table(path))
            held_rows += held[-1].num_rows
            if held_rows >= bucket_rows or path == part_paths[-1]:
                _spill(pa.concat_tables(held), bucket_rows, bucket_paths, writers)
                held, held_rows = [], 0
    finally:
        for writer in writers:
            if writer is not None:
                writer.close()
    converged = 0
    with open_output(destination, 'wb') as handle:
        with pq.ParquetWriter(handle, first.schema, **PARQUET) as output:
            for path in bucket_paths:
                bucket = pq.read_table(path).sort_by('sample')
                converged += int(np.asarray(bucket.column('converged')).sum())
                output.write_table(bucket)
    shutil.rmtree(scratch)
    return converged


def _spill(table, bucket_rows: int, bucket_paths: list[Path], writers: list) -> None:
    """Append each row of ``table`` to the bucket of its sample index, one write a bucket."""
    import pyarrow.parquet as pq
    bucket = np.asarray(table.column('sample')) // bucket_rows
    order = np.argsort(bucket, kind='stable')
    table, bucket = table.take(order), bucket[order]
    starts = np.flatnonzero(np.diff(bucket, prepend=-1))
    for start, stop in zip(starts, [*starts[1:], bucket.size]):
        b = bucket[start]
        if writers[b] is None:
            writers[b] = pq.ParquetWriter(bucket_paths[b], table.schema, **PARQUET)
        writers[b].write_table(table.slice(start, stop - start))


def _chunks_done(parts: Path, settings: dict, chunks: int) -> list[int]:
    """Return the chunks a run with ``settings`` wrote into ``parts``; refuse another run's."""
    manifest_path = parts / MANIFEST
    if not manifest_path.exists():
        return []
    try:
        there = json.loads(manifest_path.read_text())['settings']
        if not isinstance(there, dict):
            raise TypeError(there)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise DatasetError(f'output: {manifest_path} is not the manifest of a dataset run; '
                           f'choose another --output or delete {parts}') from None
    if there != settings:
        raise DatasetError(f'output: {parts} holds a run with other settings '
                           f'({_differences(there, settings)}); choose another --output or '
                           'delete it')
    # a part is renamed into place complete: the parts there are the chunks done
    present = {path.name for path in parts.iterdir()}
    return [c for c in range(chunks) if f'part-{c:05d}.parquet' in present]


def _differences(there: dict, now: dict) -> str:
    """
    Name each setting that the manifest's settings ``there`` hold otherwise than ``now``.

    By the option that sets it, with both values (a checksum by its first 12 digits); the
    inputs' checksum only when no setting they are drawn from differs (a --csv file edited).
    """
    keys = [key for key in now if there.get(key) != now[key]]
    keys += [key for key in there if key not in now]    # a manifest of another version
    if set(keys) - {'inputs_sha256', 'chunk_size'}:
        keys = [key for key in keys if key != 'inputs_sha256']

    def shown(value: object) -> str:
        return short_repr(value).strip("'")

    def value(settings: dict, key: str) -> str:
        found = settings.get(key, 'none')
        return shown(found[:12] if isinstance(found, str) and key.endswith('_sha256')
                     else found)

    names = {'robot_sha256': '--robot sha256', 'inputs_sha256': "the inputs' sha256"}
    return '; '.join(f'{names.get(key, "--" + shown(key).replace("_", "-"))} '
                     f'{value(there, key)} there, {value(now, key)} now' for key in keys)


@contextmanager
def _only_run(parts: Path) -> Iterator[None]:
    """
    Make and hold the parts folder ``parts`` for this run; refuse another on the same output.

    Two runs of one command (a job started twice) solved every chunk twice, each writing
    the same parts, and the one to finish second failed on the parts the first had joined.
    The lock is the file ``parts/LOCK``, held while it is there: a finishing run removes it
    (held still), then the folder. A run that opened it before, or found the folder made
    before it was removed, takes a new lock in a new folder: it held a lock on no file, or
    was refused, or failed on the folder gone.
    """
    while True:
        make_folder(parts)
        try:
            lock = os.open(parts / LOCK,
                           os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except FileNotFoundError:   # the folder removed by a run that ended since
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            taken = True
        except BlockingIOError:
            taken = False
        try:
            current = os.stat(parts / LOCK, follow_symlinks=False)
        except FileNotFoundError:
            current = None
        if current is not None and os.path.samestat(current, os.fstat(lock)):
            break
        os.close(lock)  # removed by the run that held it as it ended: take a new one
    if not taken:
        os.close(lock)
        raise DatasetError(f'output: {parts} is being written by another run of this '
                           'dataset; let it finish or choose another --output')
    try:
        yield
    finally:
        os.close(lock)


def _plain(value):
    return value.tolist() if isinstance(value, np.ndarray) else str(value)
