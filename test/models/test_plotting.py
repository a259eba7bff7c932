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
"""Shapes are drawn on one scale, unreachable points show, legends stand beside the data."""

import matplotlib
from matplotlib import pyplot as plt
import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.workspace import cylinder_samples, workspace
from tendon_robot_sim.models.plotting import equal_axes
from tendon_robot_sim.models.trunk.dynamics import load_cc_dynamics, plot_trajectory

matplotlib.use('Agg')


@pytest.fixture
def figures(monkeypatch):
    """Keep the figures a plot function saves, instead of closing them."""
    kept = []
    monkeypatch.setattr(plt, 'close', kept.append)
    yield kept
    for figure in kept:
        figure.clf()


def spans(ax) -> list[float]:
    limits = [ax.get_xlim(), ax.get_ylim()] + ([ax.get_zlim()] if hasattr(ax, 'get_zlim') else [])
    return [high - low for low, high in limits]


def test_equal_axes_give_every_axis_one_scale():
    fig = plt.figure()
    ax3 = fig.add_subplot(1, 2, 1, projection='3d')
    equal_axes(ax3, np.array([[0.0, 0.0, 0.4], [0.3, 0.1, 0.7]]))
    assert np.ptp(spans(ax3)) == pytest.approx(0.0, abs=1e-12)
    ax2 = fig.add_subplot(1, 2, 2)
    equal_axes(ax2, np.array([[0.0, -75.0], [200.0, 0.0]]))
    assert ax2.get_aspect() == 1.0
    plt.close(fig)


def test_the_parallel_robots_workspace_is_drawn_on_one_scale_with_its_unreachable_points(
        figures, tmp_path):
    robot = load_pcr_robot(default_pcr_file())
    result = workspace(robot, cylinder_samples(0.3, np.array([0.45, 0.6]), 6), workers=1,
                       progress=False)
    result.plot(tmp_path / 'workspace.png')
    space = figures[0].axes[0]
    assert np.ptp(spans(space)) == pytest.approx(0.0, abs=1e-9)
    shown = [c.get_offsets().shape[0] if hasattr(c, 'get_offsets') else 0
             for c in space.collections]
    assert sum(shown) == result.positions.shape[0]      # reachable and not, all drawn
    assert 'not reachable' in [t.get_text().split(' (')[0] for t in space.get_legend().texts]


def test_a_cc_run_shows_both_projections_on_one_scale_and_legends_beside(figures, tmp_path):
    model = load_cc_dynamics(default_robot_file())
    inputs = model.input_vector({'t0': 3.0, 't1': 2.0}, '--tensions')
    run = model.simulate(inputs, 0.3, x0=model.equilibrium(np.zeros_like(inputs)))
    plot_trajectory(run, tmp_path / 'cc.png')
    time_axes, side, top = figures[0].axes
    assert [side.get_ylabel(), top.get_ylabel()] == ['z [mm]', 'y [mm]']
    assert side.get_aspect() == top.get_aspect() == 1.0
    for ax in (time_axes, top):      # the legend is outside the data
        box = ax.get_legend().get_bbox_to_anchor().transformed(ax.transAxes.inverted())
        assert box.x0 >= 1.0


def test_the_workspace_labels_its_motor_limits_and_keeps_its_ticks_apart(figures, tmp_path):
    robot = load_pcr_robot(default_pcr_file())
    result = workspace(robot, cylinder_samples(0.3, np.array([0.45, 0.6]), 6), workers=1,
                       progress=False)
    result.plot(tmp_path / 'workspace.png')
    space, ranges = figures[0].axes
    texts = [t.get_text() for t in ranges.texts]
    assert texts == [f'motor limit {np.degrees(limit):g} deg' for limit in robot.motor_limits]
    figures[0].canvas.draw()
    for axis in (space.xaxis, space.yaxis, space.zaxis):   # 0.1 m steps over 0.9 m ran together
        assert len(axis.get_ticklocs()) <= 6


def test_the_snakes_cables_at_one_floor_are_told_apart_with_one_legend(figures, tmp_path):
    from tendon_robot_sim.commands.snake import default_snake_file, plot
    from tendon_robot_sim.models.snake.dynamics import SnakeDynamics, study_trajectory
    from tendon_robot_sim.models.snake.robot import load_snake

    snake = load_snake(default_snake_file())
    dynamics = SnakeDynamics(snake)
    results = {name: dynamics.inverse(*study_trajectory(snake, name, 1.0, 0.05))
               for name in ('pan', 'tilt', 'both')}
    plot(tmp_path / 'tensions.png', snake, results)
    axes = figures[0].axes
    assert [ax.get_legend() is not None for ax in axes] == [True, False, False]
    assert [ax.get_title() for ax in axes] == [
        'pan joints moving', 'tilt joints moving', 'pan and tilt joints moving']
    lines = axes[1].get_lines()[:len(snake.cable_names)]
    styles = {(line.get_linestyle(), line.get_marker()) for line in lines}
    assert len(styles) == len(lines)          # no two cables drawn alike
    widths = [line.get_linewidth() for line in lines]
    assert widths == sorted(widths, reverse=True)     # the later ones show over the earlier
