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
Figures of the parallel robot's studies (:mod:`tendon_robot_sim.models.pcr.studies`), as PNG.

Geometry is drawn with equal axes; legends sit outside the plotting area, below the panels.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tendon_robot_sim.files.outputs import save_figure
from tendon_robot_sim.models.pcr.kinetostatics import crank_tips, PcrResult
from tendon_robot_sim.models.pcr.robot import PcrRobot
from tendon_robot_sim.models.pcr.studies import CompressionStudy, HelixStudy, Sweep

PAPER_AXIAL_STIFFNESS = 989.75     # N/m, Rodrigues et al. 2024, Sec. 4
PAPER_FK_ERROR = 1e-7              # m, the order of the paper's Fig. 5b


def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def equal_axes_3d(ax, points: np.ndarray) -> None:
    """Give a 3-D axes one scale on x, y and z around ``points`` (k, 3) [m]."""
    low, high = np.nanmin(points, axis=0), np.nanmax(points, axis=0)
    centre, half = 0.5 * (low + high), 0.5 * np.max(high - low) * 1.05
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.set_zlabel('z [m]')


def draw_robot(ax, robot: PcrRobot, result: PcrResult) -> np.ndarray:
    """Draw the rods, cranks, motors and platform of one solution; return the points drawn."""
    tips = crank_tips(robot, result.motor_angles)
    joints = result.position + robot.joint_positions @ result.rotation.T
    for i, line in enumerate(result.centerlines):
        ax.plot(*line, color=f'C{i}', lw=1.5)
        ax.plot(*np.column_stack((robot.motor_positions[i], tips[i])), color='0.3', lw=2.5)
    ax.scatter(*robot.motor_positions.T, color='k', s=12)
    ring = np.vstack((joints, joints[:1]))
    ax.plot(*ring.T, color='k', lw=2.0)
    return np.vstack((robot.motor_positions, tips, joints,
                      np.concatenate(result.centerlines, axis=1).T))


def _shade(ax, values, mask, color, label):
    """Shade the spans of ``values`` where ``mask`` holds (sample spacing wide)."""
    step = np.median(np.diff(values)) if values.size > 1 else 1.0
    labelled = False
    for v, m in zip(values, mask):
        if m:
            ax.axvspan(v - step / 2, v + step / 2, color=color, alpha=0.25, lw=0,
                       label=None if labelled else label)
            labelled = True


def _by_branch(ax, x, y, sweep: Sweep, color, label=None, width=1.5):
    """Plot y over x per branch of the sweep (solid, dashed, dotted, ...)."""
    styles = ('-', '--', ':', '-.')
    for b in sweep.branches:
        on = sweep.branch == b.index
        if on.any():
            ax.plot(x[on], y[on], styles[b.index % 4], marker='.', ms=3, color=color, lw=width,
                    label=label if b.index == 0 else None)


def _branch_ends(ax, sweep: Sweep, scale: float = 1.0) -> None:
    """Mark where branches end (located by bisection; not the sweep's bounds)."""
    for b in sweep.branches:
        for value, end in ((b.low, b.low_end), (b.high, b.high_end)):
            if end:
                ax.axvline(value * scale, color='tab:purple', ls='--', lw=0.8,
                           label='end of a branch (located)')


def _legend_below(fig, axes) -> None:
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    if labels:
        fig.legend([handles[lab] for lab in labels], labels, loc='outside lower center',
                   ncol=min(5, len(labels)), fontsize=8)


def _panels(plt):
    """Return a figure with four 2-D panels (left) and a column for the robot (right)."""
    fig = plt.figure(figsize=(15, 8.5), layout='constrained')
    grid = fig.add_gridspec(2, 3)
    return fig, grid, [fig.add_subplot(grid[r, c]) for r, c in ((0, 0), (0, 1), (1, 0), (1, 1))]


def _finish(plt, fig, grid, axes, robot, results, values, shown, caption, title, path):
    """Draw the robot at the solved sample closest to ``shown``, add the legend, save."""
    ax3d = fig.add_subplot(grid[:, 2], projection='3d')
    done = [i for i, r in enumerate(results) if r is not None]
    if done:
        i = min(done, key=lambda k: abs(values[k] - shown))
        equal_axes_3d(ax3d, draw_robot(ax3d, robot, results[i]))
        ax3d.set_title(caption.format(values[i]))
    _legend_below(fig, axes)
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)


def _angles(results, pick) -> np.ndarray:
    """(n, 6) deg of ``pick(result)`` (rad), NaN where there is no result."""
    return np.array([np.degrees(pick(r)) if r is not None else np.full(6, np.nan)
                     for r in results])


def plot_rotation(sweep: Sweep, robot: PcrRobot, path: str | Path, title: str = '',
                  shown_deg: float = 60.0) -> None:
    """
    Plot the rotation sweep: motor and universal-joint angles, rcond, axial stiffness, robot.

    The robot is drawn at the converged yaw closest to ``shown_deg`` (the paper's Fig. 4b:
    60 deg).
    """
    plt = _pyplot()
    yaw = np.degrees(sweep.values)
    fig, grid, axes = _panels(plt)
    q1 = _angles(sweep.results, lambda r: r.motor_angles)
    q3 = _angles(sweep.results, lambda r: r.joint_angles[:, 1])
    for i in range(6):     # wide to narrow: the robot's symmetry makes curves coincide
        _by_branch(axes[0], yaw, q1[:, i], sweep, f'C{i}', f'rod {i + 1}', 3.5 - 0.5 * i)
        _by_branch(axes[1], yaw, q3[:, i], sweep, f'C{i}', None, 3.5 - 0.5 * i)
    for limit in np.degrees(robot.motor_limits):
        axes[0].axhline(limit, color='k', ls=':', lw=0.8)
    axes[0].set_ylabel('motor angle q1 [deg]')
    axes[1].set_ylabel('universal joint q3 [deg]')
    axes[2].semilogy(yaw, sweep.data['rcond'], 'k.', ms=4)
    axes[2].set_ylabel('rcond of the inverse Jacobian dE/dx')
    axes[3].plot(yaw, sweep.data['axial_stiffness'], 'k.', ms=4)
    axes[3].axhline(0.0, color='k', lw=0.6)
    axes[3].set_ylabel('axial stiffness, motors held [N/m]')
    unstable = sweep.data['stable'] == 0.0
    for ax in axes:
        _shade(ax, yaw, ~sweep.converged, 'tab:red', 'no solution found')
        _shade(ax, yaw, unstable, '0.6', 'unstable with the motors held')
        _branch_ends(ax, sweep, 180.0 / math.pi)
        ax.set_xlabel('platform yaw [deg]')
    _finish(plt, fig, grid, axes, robot, sweep.results, yaw, shown_deg, 'yaw {:.1f} deg',
            title, path)


def plot_compression(study: CompressionStudy, robot: PcrRobot, path: str | Path,
                     title: str = '', shown_force: float = 150.0) -> None:
    """
    Plot the compression study.

    (a) motor angles that hold the platform, (b) force against height drop with the motors
    held and the fitted slope, (c) tangent axial stiffness, (d) the robot at the converged
    force closest to ``shown_force`` (the paper's Fig. 4a: 150 N).
    """
    plt = _pyplot()
    inverse, held = study.inverse, study.held
    force = inverse.values
    fig, grid, axes = _panels(plt)
    q1 = _angles(inverse.results, lambda r: r.motor_angles)
    _by_branch(axes[0], force, q1.mean(axis=1), inverse, 'C0',
               'motor angle q1 (all six equal on the axis)')
    _branch_ends(axes[0], inverse)
    axes[0].set_title(f'largest force with a solution: {study.largest_force:.2f} N')
    axes[0].set_xlabel('downward force [N]')
    axes[0].set_ylabel('motor angle q1 [deg]')
    drop = study.height_drop * 1e3
    axes[1].plot(drop, held.values, 'ko', ms=4, label='motors held: height drop')
    top = np.nanmax(drop) if np.isfinite(drop).any() else 1.0
    line = np.array([0.0, top])
    axes[1].plot(line, study.fitted_stiffness * line * 1e-3, 'C1-',
                 label=f'least squares through 0: {study.fitted_stiffness:.1f} N/m')
    axes[1].plot(line, PAPER_AXIAL_STIFFNESS * line * 1e-3, 'C2--',
                 label=f'paper: {PAPER_AXIAL_STIFFNESS} N/m')
    axes[1].set_xlabel('height drop, motors held [mm]')
    axes[1].set_ylabel('downward force [N]')
    axes[2].plot(held.values, held.data.get('axial_stiffness', np.full(force.size, np.nan)),
                 'ko', ms=4, label='tangent, motors held at the unloaded angles')
    axes[2].plot(force, inverse.data.get('axial_stiffness', np.full(force.size, np.nan)),
                 'C0s', ms=4, label='tangent at the held pose, motors at their angles there')
    axes[2].set_xlabel('downward force [N]')
    axes[2].set_ylabel('axial stiffness [N/m]')
    for ax in (axes[0], axes[2]):
        _shade(ax, force, ~inverse.converged, 'tab:red', 'no inverse solution found')
    _shade(axes[2], force, inverse.data.get('stable', np.ones(force.size)) == 0.0, '0.6',
           'unstable with the motors held')
    axes[3].semilogy(force, inverse.data.get('rcond', np.full(force.size, np.nan)), 'C0s',
                     ms=4)
    axes[3].set_xlabel('downward force [N]')
    axes[3].set_ylabel('rcond of the inverse Jacobian dE/dx')
    _finish(plt, fig, grid, axes, robot, inverse.results, force, shown_force,
            '{:g} N, platform held at z = ' + f'{study.position[2]:g} m', title, path)


def plot_helix(study: HelixStudy, path: str | Path, title: str = '') -> None:
    """Plot the helix: (a) reference and forward solutions in 3-D, (b) FK(IK) error per point."""
    plt = _pyplot()
    fig = plt.figure(figsize=(13, 6), layout='constrained')
    ax = fig.add_subplot(1, 2, 1, projection='3d')
    ax.plot(*study.targets.T, 'g-', lw=1.5, label='reference trajectory')
    reached = np.array([f.position for f in study.forward if f is not None]).reshape(-1, 3)
    ax.scatter(*reached[::5].T, facecolors='none', edgecolors='k', s=18,
               label='forward solution (every 5th)')
    equal_axes_3d(ax, study.targets)
    ax2 = fig.add_subplot(1, 2, 2)
    errors = study.errors
    ax2.semilogy(np.arange(errors.size), np.where(errors > 0, errors, np.nan), '.', ms=4,
                 label='|FK(IK(p)) - p|')
    ax2.axhline(PAPER_FK_ERROR, color='C1', ls='--', label='the paper: order 1e-7 m')
    ax2.set_xlabel('sample index')
    ax2.set_ylabel('position error [m]')
    _legend_below(fig, [ax, ax2])
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
