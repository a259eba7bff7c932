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
A model's tip against the measured one, point by point: the metrics, the files, the report.

For held-out recordings (``validate --json --samples-out FILE.csv --report DIR``):

* ``tip_rmse_mm``: the plain Euclidean RMSE sqrt(mean |p_model - p_measured|^2);
* ``tip_rmse_aligned_mm``: the same after removing the mean offset mean(p_model -
  p_measured) over all points: opencr-mujoco's metric (its sysid README, "Metric
  convention"), which forgives a registration offset of the measurement frame;
* both per label (the motion a point belongs to; the aligned one with the same, overall,
  offset, so that the labels split the total) and in % of the robot's length;
* the hysteresis a model without memory cannot show: per label, the tip's change from the
  first to the last point of the motion, measured and modelled (a pull released to where it
  started ends where it started in such a model), and the loop width: the widest measured
  distance between a point of the motion and the place on another stretch of it (between
  two points, interpolated, at least :data:`SAME_STATE_GAP` points away) where the model is
  in the same place (within :data:`SAME_STATE`), such as a pull on the way in and on the
  way out.

A point whose solve fails has no prediction (NaN): it is counted and left out. No ROS
imports.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from tendon_robot_sim.experiment.calibration import CalibrationError, no_equilibrium, predict
from tendon_robot_sim.experiment.experiment import Hold
from tendon_robot_sim.files.outputs import make_folder, open_output, save_figure, write_output
from tendon_robot_sim.models.plotting import legend_beside
from tendon_robot_sim.models.tendon_robot import Robot
from tendon_robot_sim.parallel import Scheduler

SAMPLE_COLUMNS = ('t', 'label', 'measured_x', 'measured_y', 'measured_z', 'model_x', 'model_y',
                  'model_z')
# Two points of a motion are in the same state when the model puts them within this [m] of
# each other (the commands of a slack tendon may differ), and at least this many points apart.
SAME_STATE = 1e-3
SAME_STATE_GAP = 2
# Motions shown in the report's worst-motion figure.
WORST_SHOWN = 4


@dataclass(frozen=True)
class SampleValidation:
    """Measured and predicted points of one model. Times in s, lengths in m, base frame."""

    model: str
    robot: Robot
    holds: tuple[Hold, ...]
    predicted: np.ndarray      # (m, 3); NaN: no equilibrium

    @property
    def times(self) -> np.ndarray:
        return np.array([h.start for h in self.holds])

    @property
    def labels(self) -> list[str]:
        return [h.label for h in self.holds]

    @property
    def measured(self) -> np.ndarray:
        return np.array([h.tip for h in self.holds])

    @property
    def solved(self) -> np.ndarray:
        """(m,) bool: the points with a prediction."""
        return ~np.isnan(self.predicted[:, 0])

    @property
    def offset(self) -> np.ndarray:
        """Mean of model - measured over the solved points (3,) [m]."""
        ok = self.solved
        return (self.predicted[ok] - self.measured[ok]).mean(axis=0)

    def errors(self, aligned: bool = False) -> np.ndarray:
        """|model - measured| per point (m,) [m], NaN where unsolved; aligned: less offset."""
        shift = self.offset if aligned else 0.0
        return np.linalg.norm(self.predicted - shift - self.measured, axis=1)

    def rmse(self, aligned: bool = False, mask: np.ndarray | None = None) -> float:
        errors = self.errors(aligned)
        keep = self.solved if mask is None else self.solved & mask
        return float(np.sqrt(np.mean(errors[keep] ** 2))) if keep.any() else math.nan

    def per_label(self) -> dict[str, dict]:
        """{label: samples, both RMSEs in mm and % of length, hysteresis} in label order."""
        labels = np.array(self.labels)
        result = {}
        for label in dict.fromkeys(self.labels):
            mask = labels == label
            result[label] = {'samples': int(mask.sum()), **self._metrics(mask),
                             **self.hysteresis(np.flatnonzero(mask))}
        return result

    def _metrics(self, mask: np.ndarray | None = None) -> dict:
        length = self.robot.rod.length
        plain, aligned = self.rmse(False, mask), self.rmse(True, mask)
        return {'tip_rmse_mm': plain * 1e3, 'tip_rmse_aligned_mm': aligned * 1e3,
                'tip_rmse_percent': 100.0 * plain / length,
                'tip_rmse_aligned_percent': 100.0 * aligned / length}

    def hysteresis(self, index: np.ndarray) -> dict:
        """Return offset and loop width of the motion of points ``index`` (mm, time order)."""
        index = index[self.solved[index]]
        if index.size < 2:
            return {}
        measured, model = self.measured[index], self.predicted[index]
        # each point against each stretch (j, j + 1) of the path far enough from it
        start, step = model[:-1], np.diff(model, axis=0)
        along = np.einsum('ijk,jk->ij', model[:, None, :] - start[None], step)
        along = np.clip(along / np.maximum(np.sum(step ** 2, axis=1), 1e-30), 0.0, 1.0)
        near = np.linalg.norm(model[:, None, :] - (start + along[..., None] * step), axis=2)
        j = np.arange(index.size - 1)
        apart = np.minimum(np.abs(np.arange(index.size)[:, None] - j),
                           np.abs(np.arange(index.size)[:, None] - (j + 1)))
        pairs = np.argwhere((near <= SAME_STATE) & (apart >= SAME_STATE_GAP))
        there = measured[:-1][pairs[:, 1]] + along[pairs[:, 0], pairs[:, 1], None] * np.diff(
            measured, axis=0)[pairs[:, 1]]
        width = (np.linalg.norm(measured[pairs[:, 0]] - there, axis=1) if pairs.size
                 else np.array([math.nan]))
        return {'return_offset_mm': float(np.linalg.norm(measured[-1] - measured[0])) * 1e3,
                'model_return_offset_mm': float(np.linalg.norm(model[-1] - model[0])) * 1e3,
                'return_error_mm': float(np.linalg.norm((model[-1] - model[0])
                                                        - (measured[-1] - measured[0]))) * 1e3,
                'loop_width_mm': float(np.max(width)) * 1e3, 'loop_pairs': int(len(pairs))}

    def to_dict(self) -> dict:
        """Return the JSON summary: both metrics overall and per label (mm, % of length)."""
        return {'model': self.model, 'robot': self.robot.name,
                'length_m': self.robot.rod.length, 'samples': len(self.holds),
                'failed': int((~self.solved).sum()), **self._metrics(),
                'offset_mm': (self.offset * 1e3).tolist(), 'labels': self.per_label()}

    def summary(self) -> str:
        d = self.to_dict()
        return (f'{d["samples"]} points, model {self.model}: tip RMSE {d["tip_rmse_mm"]:.2f} mm '
                f'({d["tip_rmse_percent"]:.2f} % of L), after removing the mean offset '
                f'{d["tip_rmse_aligned_mm"]:.2f} mm ({d["tip_rmse_aligned_percent"]:.2f} %)'
                + (f'; {d["failed"]} without an equilibrium (left out)' if d['failed'] else ''))


def validate_samples(robot: Robot, holds: Sequence[Hold], model: str = 'cosserat',
                     workers: int | None = 1, scheduler: Scheduler | str | None = None,
                     step: float | None = None, piece_length: float | None = None,
                     history: Sequence[Hold] = ()) -> SampleValidation:
    """Predict every point (after ``history``: :func:`predict`) beside the measured one."""
    if not holds:
        raise CalibrationError('holds: none to validate')
    predicted = predict(robot, holds, model, workers, scheduler, step, piece_length, history)
    if np.isnan(predicted[:, 0]).all():
        raise no_equilibrium(model, len(holds))
    return SampleValidation(model=model, robot=robot, holds=tuple(holds), predicted=predicted)


def write_samples_csv(path: str | Path, validation: SampleValidation) -> None:
    """Write one row per point: :data:`SAMPLE_COLUMNS` (m, base frame; NaN: unsolved)."""
    with open_output(path, newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(SAMPLE_COLUMNS)
        for t, label, measured, model in zip(validation.times, validation.labels,
                                             validation.measured, validation.predicted):
            writer.writerow([repr(float(t)), label] + [repr(float(v)) for v in measured]
                            + [repr(float(v)) for v in model])


def worst_labels(validation: SampleValidation, count: int = WORST_SHOWN) -> list[str]:
    """Return the labels of the ``count`` motions of largest aligned RMSE, worst first."""
    per_label = validation.per_label()
    ranked = sorted(per_label, key=lambda k: -np.nan_to_num(per_label[k]['tip_rmse_aligned_mm']))
    return ranked[:count]


def write_samples_report(directory: str | Path, validations: Sequence[SampleValidation],
                         source: str = '') -> Path:
    """
    Write ``report.md``, ``paths.png``, ``error_time.png`` and ``worst.png`` into ``directory``.

    ``paths.png``: the measured and predicted tip paths in 3-D with equal axes (each model
    aligned by its mean offset, as the aligned metric compares them); ``error_time.png``: the
    error over time of each model; ``worst.png``: the motions of largest error of the best
    model (by aligned RMSE), measured and predicted. The report tabulates both metrics per
    model and per label.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    directory = make_folder(directory)
    best = min(validations, key=lambda v: v.rmse(True))
    measured = best.measured * 1e3

    fig = plt.figure(figsize=(9, 8))
    axis = fig.add_subplot(projection='3d')
    axis.plot(*measured.T, '.', ms=2, color='k', label='measured')
    for v in validations:
        axis.plot(*((v.predicted - v.offset) * 1e3).T, '.', ms=2,
                  label=f'{v.model} (less its mean offset)')
    _equal_axes(axis, measured)
    axis.set_xlabel('x [mm]')
    axis.set_ylabel('y [mm]')
    axis.set_zlabel('z [mm]')
    axis.legend(fontsize=8, loc='upper left')
    axis.set_title('tip paths, base frame')
    fig.tight_layout()
    save_figure(fig, directory / 'paths.png', dpi=110)
    plt.close(fig)

    fig, axis = plt.subplots(figsize=(11, 4))
    for v in validations:
        axis.plot(v.times, v.errors(aligned=True) * 1e3, '-', lw=0.8,
                  label=f'{v.model}: RMSE {v.rmse(True) * 1e3:.2f} mm (aligned)')
    axis.set_xlabel('time [s]')
    axis.set_ylabel('tip error after the mean offset [mm]')
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, directory / 'error_time.png', dpi=110)
    plt.close(fig)

    worst = worst_labels(best)
    fig, axes = plt.subplots(1, len(worst), figsize=(4 * len(worst), 4.2), squeeze=False)
    labels = np.array(best.labels)
    predicted = (best.predicted - best.offset) * 1e3
    for axis, label in zip(axes[0], worst):
        mask = labels == label
        for points, style, name in ((measured, 'o-', 'measured'), (predicted, 'x--', best.model)):
            axis.plot(points[mask, 0], points[mask, 1], style, ms=3, lw=0.8, label=name)
        axis.plot(*measured[mask][0, :2], 'g*', ms=10, label='start')
        axis.set_aspect('equal', adjustable='datalim')
        axis.set_title(f'{label}\n{best.per_label()[label]["tip_rmse_aligned_mm"]:.1f} mm',
                       fontsize=8)
        axis.set_xlabel('x [mm]')
        axis.grid(True, alpha=0.3)
    axes[0][0].set_ylabel('y [mm]')
    legend_beside(axes[0][-1], fontsize=8)
    fig.suptitle(f'worst motions of {best.model} (top view)')
    fig.tight_layout()
    save_figure(fig, directory / 'worst.png', dpi=110)
    plt.close(fig)

    text = [f'# Validation report: {best.robot.name}', '']
    if source:
        text += [f'Recording: `{source}`', '']
    text += ['| model | points | tip RMSE [mm] | [% of L] | aligned RMSE [mm] | [% of L] | '
             'failed |', '|---|---|---|---|---|---|---|']
    for v in validations:
        d = v.to_dict()
        text.append(f'| `{v.model}` | {d["samples"]} | {d["tip_rmse_mm"]:.2f} | '
                    f'{d["tip_rmse_percent"]:.2f} | {d["tip_rmse_aligned_mm"]:.2f} | '
                    f'{d["tip_rmse_aligned_percent"]:.2f} | {d["failed"]} |')
    text += ['', 'Aligned: after removing the mean offset between model and measurement '
             "(opencr-mujoco's metric).", '',
             f'## Per motion, `{best.model}` (worst first)', '',
             '| label | points | RMSE [mm] | aligned [mm] | return offset measured / model '
             '[mm] | loop width [mm] |', '|---|---|---|---|---|---|']
    per_label = best.per_label()
    for label in worst_labels(best, len(per_label)):
        d = per_label[label]
        text.append(f'| {label} | {d["samples"]} | {d["tip_rmse_mm"]:.2f} | '
                    f'{d["tip_rmse_aligned_mm"]:.2f} | '
                    f'{d.get("return_offset_mm", math.nan):.1f} / '
                    f'{d.get("model_return_offset_mm", math.nan):.1f} | '
                    f'{d.get("loop_width_mm", math.nan):.1f} |')
    text += ['', '![tip paths](paths.png)', '', '![error over time](error_time.png)', '',
             '![worst motions](worst.png)', '']
    path = directory / 'report.md'
    write_output(path, '\n'.join(text))
    return path


def _equal_axes(axis, points: np.ndarray) -> None:
    """Give a 3-D axis the same scale on x, y and z around ``points``."""
    centre = (points.max(axis=0) + points.min(axis=0)) / 2.0
    half = float(np.max(points.max(axis=0) - points.min(axis=0))) / 2.0 or 1.0
    for setter, c in zip((axis.set_xlim, axis.set_ylim, axis.set_zlim), centre):
        setter(c - half, c + half)
    axis.set_box_aspect((1.0, 1.0, 1.0))
