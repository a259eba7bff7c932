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
Reachable workspace of the 6-RUS parallel continuum robot (paper, Sec. 4, Fig. 6).

Platform positions sampled in a cylinder (``cylinder_samples``: a sunflower lattice of
``per_height`` points on the disc at each height, so samples spread evenly and the run
is reproducible), each at one or more platform orientations, each (position, orientation)
solved by a cold inverse kinetostatics solve
(:class:`~tendon_robot_sim.models.pcr.kinetostatics.PcrSolver`: rigid-link start, load
continuation);
a sample is valid when the solve converges and every motor angle is within the motor
limits, and a position is reachable when it is valid at every orientation asked for
(with one orientation, the paper's reachable workspace; with several, the workspace of
all of them). Like the paper, validity ignores whether rods pass through each other; each
sample's rod clearance (:mod:`~tendon_robot_sim.models.pcr.clearance`) is kept beside it
(``rods_clear``, ``rod_clearance_m`` in the CSV; ``valid_rods_clear`` in the summary). The
paper's estimate: 16 heights from 0.40 to 0.70 m x 250 points = 4000 samples. Samples are
solved in chunks on local processes or a Dask cluster (:class:`~tendon_robot_sim.parallel.Pool`),
with a tqdm progress bar.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path
import time

import numpy as np

from tendon_robot_sim import progress_bar
from tendon_robot_sim.files.outputs import open_output, save_figure
from tendon_robot_sim.models.cosserat import ConvergenceError
from tendon_robot_sim.models.pcr.clearance import rod_clearance
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import pcr_robot_from_dict, PcrRobot
from tendon_robot_sim.models.plotting import equal_axes, legend_beside
from tendon_robot_sim.parallel import Pool, Scheduler

# The paper's sampling (Sec. 4): 16 heights x 250 points. Its cylinder radius is not
# given; 0.45 m contains every position the rigid-link robot reaches within the motor
# limits (0.40 m at z = 0.40 m).
HEIGHTS = np.linspace(0.40, 0.70, 16)
PER_HEIGHT = 250
RADIUS = 0.45
# Samples per task: large enough to pay for a worker's solver set-up.
CHUNK = 50


def cylinder_samples(radius: float = RADIUS, heights=HEIGHTS,
                     per_height: int = PER_HEIGHT) -> np.ndarray:
    """
    Return positions (len(heights) * per_height, 3) [m] on sunflower lattices.

    At each height a sunflower lattice (point k at radius R sqrt((k + 1/2) / n), angle k x
    golden angle) on the disc.
    """
    k = np.arange(per_height)
    r = radius * np.sqrt((k + 0.5) / per_height)
    angle = k * math.pi * (3.0 - math.sqrt(5.0))
    disc = np.column_stack((r * np.cos(angle), r * np.sin(angle)))
    return np.array([[x, y, z] for z in heights for x, y in disc])


def _solve_samples(task) -> np.ndarray:
    """Worker: rows [converged, residual, solve time, clearance, q1 (6)] of a chunk."""
    robot_data, positions, orientations, force, moment = task
    robot = pcr_robot_from_dict(robot_data)
    solver = PcrSolver(robot)
    try:   # load the compiled kernels before timing
        solver.inverse(positions[0], orientations[0], force, moment)
    except ConvergenceError:
        pass
    rows = np.full((len(positions), 10), np.nan)
    for i, (position, orientation) in enumerate(zip(positions, orientations)):
        solver.reset()
        start = time.perf_counter()
        try:
            result = solver.inverse(position, orientation, force, moment)
            rows[i, 0:2] = 1.0, result.residual
            rows[i, 4:] = result.motor_angles
        except ConvergenceError as error:
            rows[i, 0:2] = 0.0, error.residual
        rows[i, 2] = time.perf_counter() - start
        if rows[i, 0] == 1.0:    # not timed: the paper's times are solves
            rows[i, 3] = rod_clearance(robot, result).gap
    return rows


@dataclass(frozen=True)
class Workspace:
    """
    Inverse solves over sampled platform positions and orientations at one load.

    Sample k is position k % p at orientation k // p (p positions, o orientations).
    """

    positions: np.ndarray      # (n, 3) m
    orientations: np.ndarray   # (n, 3) rad, roll, pitch, yaw
    n_orientations: int        # o
    converged: np.ndarray      # (n,) bool
    motor_angles: np.ndarray   # (n, 6) rad, NaN where the solve failed
    residuals: np.ndarray      # (n,) scaled residual (inf: not even the rigid links reach)
    clearances: np.ndarray     # (n,) m, rod clearance (< 0: two rods intersect; NaN: failed)
    solve_times: np.ndarray    # (n,) s per solve, warm-up and queueing not included
    limits: np.ndarray         # (2,) rad, motor limits
    wall_time: float           # s, the whole run

    @property
    def valid(self) -> np.ndarray:
        """(n,) converged with every motor angle within the limits."""
        with np.errstate(invalid='ignore'):
            inside = np.all((self.motor_angles >= self.limits[0])
                            & (self.motor_angles <= self.limits[1]), axis=1)
        return self.converged & inside

    @property
    def rods_clear(self) -> np.ndarray:
        """(n,) converged with no two rods passing through each other."""
        with np.errstate(invalid='ignore'):
            return self.converged & (self.clearances >= 0.0)

    @property
    def reachable(self) -> np.ndarray:
        """(p,) the position is valid at every orientation."""
        return self.valid.reshape(self.n_orientations, -1).all(axis=0)

    def summary(self) -> dict:
        """
        Return counts and solve-time statistics as plain data.

        Times in ms; over all samples, and over the converged ones.
        """
        times = self.solve_times * 1e3
        ok = times[self.converged] if self.converged.any() else np.full(1, np.nan)
        return {'samples': int(self.positions.shape[0]), 'valid': int(self.valid.sum()),
                'valid_rods_clear': int((self.valid & self.rods_clear).sum()),
                'converged': int(self.converged.sum()),
                'positions': int(self.reachable.size),
                'reachable_positions': int(self.reachable.sum()),
                'solve_ms_mean': float(times.mean()), 'solve_ms_sd': float(times.std()),
                'converged_solve_ms_mean': float(ok.mean()),
                'converged_solve_ms_sd': float(ok.std()),
                'converged_solve_ms_median': float(np.median(ok)),
                'wall_time_s': self.wall_time}

    def write_csv(self, path: str | Path) -> None:
        """
        Write one CSV row per sample.

        Position [m], orientation [rad], valid, converged, motor angles [deg], residual, solve
        time [ms], rods clear, rod clearance [m] (empty where the solve failed).
        """
        with open_output(path, newline='') as handle:
            writer = csv.writer(handle)
            writer.writerow(['x', 'y', 'z', 'roll', 'pitch', 'yaw', 'valid', 'converged']
                            + [f'q1_{i + 1}_deg' for i in range(6)]
                            + ['residual', 'solve_ms', 'rods_clear', 'rod_clearance_m'])
            for p, o, ok, conv, q, res, t, clear, gap in zip(
                    self.positions, self.orientations, self.valid, self.converged,
                    np.degrees(self.motor_angles), self.residuals, self.solve_times,
                    self.rods_clear, self.clearances):
                writer.writerow([f'{v:.9g}' for v in p] + [f'{v:.9g}' for v in o]
                                + [int(ok), int(conv)] + [f'{v:.9g}' for v in q]
                                + [f'{res:.3g}', f'{t * 1e3:.4g}', int(clear),
                                   '' if np.isnan(gap) else f'{gap:.6g}'])

    def plot(self, path: str | Path, title: str = '') -> None:
        """
        Plot a PNG like the paper's Fig. 6.

        (a) reachable positions in 3D, (b) the range of the motor angles over the valid samples
        at each height, per motor.
        """
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
        reach = self.reachable
        fig = plt.figure(figsize=(13, 5.5))
        ax = fig.add_subplot(1, 2, 1, projection='3d')
        points = self.positions[:reach.size]
        ax.scatter(*points[reach].T, s=5, c='tab:green', label=f'reachable ({reach.sum()})')
        ax.scatter(*points[~reach].T, s=9, c='tab:red', marker='x', linewidths=0.6, alpha=0.6,
                   label=f'not reachable ({(~reach).sum()})')
        equal_axes(ax, points)      # one scale: the cylinder is as tall as it is wide
        ax.set_xlabel('x [m]')
        ax.set_ylabel('y [m]')
        ax.set_zlabel('z [m]')
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):     # ticks that do not run into each other
            axis.set_major_locator(MaxNLocator(nbins=4))
        ax.set_title('(a) reachable workspace')
        ax.legend(loc='upper left', fontsize=8)
        ax = fig.add_subplot(1, 2, 2)
        p, valid = self.positions, self.valid
        heights = np.unique(np.round(p[:, 2], 9))
        q = np.degrees(self.motor_angles)
        width = 0.8 * (heights[1] - heights[0]) / 6 if heights.size > 1 else 0.005
        for motor in range(6):
            for j, z in enumerate(heights):
                rows = valid & (np.abs(p[:, 2] - z) < 1e-9)
                if rows.any():
                    low, high = q[rows, motor].min(), q[rows, motor].max()
                    ax.bar(z + (motor - 2.5) * width, high - low, width, bottom=low,
                           color=f'C{motor}', label=f'M{motor + 1}' if j == 0 else None)
        for limit, side in zip(self.limits, ('top', 'bottom')):
            # the motor limits, labelled on the line itself
            degrees = math.degrees(limit)
            ax.axhline(degrees, color='k', ls=':', lw=0.8)
            ax.annotate(f'motor limit {degrees:g} deg', (0.01, degrees),
                        xycoords=('axes fraction', 'data'), va=side, fontsize=8,
                        xytext=(0, 2 if side == 'bottom' else -2), textcoords='offset points')
        ax.set_xlabel('platform height z [m]')
        ax.set_ylabel('motor angle q_i [deg]')
        ax.set_title('(b) motor angle range per height (valid samples)')
        legend_beside(ax, fontsize=8)
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        save_figure(fig, path, dpi=110)
        plt.close(fig)


def workspace(robot: PcrRobot, positions: np.ndarray, orientations=((0.0, 0.0, 0.0),),
              force=None, moment=None, workers: int | None = None,
              scheduler: Scheduler | str | None = None, chunk: int = CHUNK,
              progress: bool = True) -> Workspace:
    """
    Solve the inverse kinetostatics at each position and platform orientation.

    Positions (p, 3) [m], orientations (o, 3) (roll, pitch, yaw) [rad], under a wrench
    (default: the description's load), on ``workers`` local processes (None: all cores; 1: this
    process) or a Dask cluster (``scheduler`` address). ``progress`` shows a tqdm bar over the
    samples on stderr.
    """
    positions = np.asarray(positions, dtype=float).reshape(-1, 3)
    orientations = np.asarray(orientations, dtype=float).reshape(-1, 3)
    n_orientations = len(orientations)
    positions = np.tile(positions, (n_orientations, 1))
    orientations = np.repeat(orientations, len(positions) // n_orientations, axis=0)
    start = time.perf_counter()
    data = robot.to_dict()
    bounds = list(range(0, len(positions), chunk)) + [len(positions)]
    tasks = [(data, positions[a:b], orientations[a:b], force, moment)
             for a, b in zip(bounds[:-1], bounds[1:])]
    rows = []
    with Pool(workers, scheduler) as pool, \
            progress_bar(total=len(positions), desc='pcr workspace', unit='sample',
                         shown=progress) as bar:
        for block in pool.imap(tasks, _solve_samples):
            rows.append(block)
            bar.update(len(block))
    rows = np.vstack(rows)
    return Workspace(positions=positions, orientations=orientations,
                     n_orientations=n_orientations,
                     converged=rows[:, 0] == 1.0, motor_angles=rows[:, 4:],
                     residuals=rows[:, 1], solve_times=rows[:, 2], clearances=rows[:, 3],
                     limits=robot.motor_limits,
                     wall_time=time.perf_counter() - start)
