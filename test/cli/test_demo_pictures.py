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
The demo's pictures, drawn from snapshots of arcs (no stack): what each panel holds.

The overview once was one 3-D view in which five of ten curves lay on one another, and the
step pictures had a small 3-D panel whose z label ran into the side view's, and no legend of
the tendons' colours.
"""

import matplotlib
from matplotlib import pyplot as plt
from matplotlib.colors import to_rgb
import numpy as np
import pytest
from tendon_robot_sim.commands.demo import _draw, _limits, overview_figure, step_figure
from tendon_robot_sim.models.sim_model import INPUT_COLORS
from tendon_robot_sim.ros.demo import demo_phases, Snapshot

matplotlib.use('Agg')
NAMES = ['t1', 't2', 't3', 't4']
LENGTH = 0.25    # m


def arc(kappa: float, angle: float, n: int = 20) -> np.ndarray:
    """Backbone (3, n) of a constant-curvature arc bending by ``kappa`` [1/m] towards ``angle``."""
    s = np.linspace(0.0, LENGTH, n)
    if abs(kappa) < 1e-12:
        r, z = np.zeros(n), s
    else:
        r, z = (1.0 - np.cos(kappa * s)) / kappa, np.sin(kappa * s) / kappa
    return np.vstack((r * np.cos(angle), r * np.sin(angle), z))


def snapshot(phase, time: float) -> Snapshot:
    pulled = [k for k, name in enumerate(NAMES) if phase.tensions.get(name, 0.0) > 0.0]
    kappa, angle = (3.0, pulled[0] * np.pi / 2) if pulled else (0.0, 0.0)
    if phase.target is not None:
        kappa, angle = 2.0, np.pi / 4
    line = arc(kappa, angle)
    segments = np.array([[line[:, j] + 0.01 * np.array([np.cos(a), np.sin(a), 0.0]),
                          line[:, j + 1] + 0.01 * np.array([np.cos(a), np.sin(a), 0.0])]
                         for a in np.arange(4) * np.pi / 2 for j in range(line.shape[1] - 1)])
    colours = np.repeat(np.array([c[:3] for c in INPUT_COLORS[:4]]), line.shape[1] - 1, axis=0)
    return Snapshot(phase=phase, time=time, tip_position=line[:, -1], centerline=line,
                    disc_centers=line[:, ::5], disc_normals=np.tile([[0.0], [0.0], [1.0]], 4),
                    disc_radius=0.015, tendon_segments=segments, tendon_colors=colours)


@pytest.fixture(scope='module')
def snapshots():
    phases = demo_phases(NAMES, 2.0, (0.05, 0.05, 0.24))
    return [snapshot(phase, float(i)) for i, phase in enumerate(phases)]


def test_the_overview_has_a_side_and_a_top_view_with_a_colour_per_tendon(snapshots):
    fig = overview_figure(snapshots, _limits(snapshots))
    side, top = fig.axes
    assert [side.get_ylabel(), top.get_ylabel()] == ['z [m]', 'y [m]']
    labels = [t.get_text() for t in top.get_legend().texts]
    for k, name in enumerate(NAMES):       # each pull in its tendon's colour, named
        label = next(label for label in labels if f'{name} 2 N' in label)
        line = next(line for line in top.get_lines() if line.get_label() == label)
        assert to_rgb(line.get_color()) == pytest.approx(INPUT_COLORS[k][:3])
    # the five steps whose backbones coincide (rest, releases) are one legend entry
    assert 'steps 0, 2, 4, 6, 8: rest and released' in labels
    assert sum('released' in label for label in labels) == 1
    assert any('tip target' in label for label in labels)
    plt.close(fig)


def test_a_step_picture_has_a_large_3d_panel_clear_labels_and_a_tendon_legend(snapshots):
    fig = step_figure(1, snapshots[1], _limits(snapshots), NAMES)
    fig.canvas.draw()
    view3d, side, top = fig.axes
    boxes = [ax.get_tightbbox(fig.canvas.get_renderer()) for ax in fig.axes]
    assert boxes[0].x1 <= boxes[1].x0 + 1.0      # the 3-D panel's labels end before the side's
    assert view3d.get_position().width >= side.get_position().width
    assert [t.get_text() for t in top.get_legend().texts] == NAMES
    assert fig.get_size_inches()[0] * 100 >= 1200      # drawn at 100 dpi: 1400 px wide
    plt.close(fig)


def test_the_demo_writes_a_picture_per_step_and_the_overview(snapshots, tmp_path):
    paths = _draw(snapshots, tmp_path)
    assert [p.name for p in paths][-1] == 'overview.png'
    assert len(paths) == len(snapshots) + 1 and all(p.stat().st_size > 10_000 for p in paths)


def test_the_hardware_plot_breaks_its_lines_at_gaps_and_numbers_its_rows():
    from tendon_robot_sim.commands.demo_hardware import broken_at_gaps, measurements_figure

    t = np.concatenate((np.arange(0.0, 8.1, 0.02), np.arange(9.3, 12.0, 0.02)))
    tips = np.column_stack((t, 0.01 * np.sin(t), np.zeros_like(t), 0.2 + 0.0 * t))
    tensions = np.column_stack((t, np.ones_like(t), 2.0 * np.ones_like(t)))
    steps = [('rest', 1.0), ('t1 2 N', 1.4), ('t1 released', 1.8), ('t2 2 N', 11.0)]
    shown = broken_at_gaps(tips)
    assert np.isnan(shown[:, 0]).sum() == 1       # one gap, 8.1 to 9.3 s, not bridged
    fig = measurements_figure(tips, tensions, steps, ['t1', 't2'])
    top = fig.axes[0]
    x = top.get_lines()[0].get_xdata()
    assert np.isnan(x).sum() == 1 and np.nanmax(np.diff(x)) < 0.1
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    numbers = [a for a in top.texts if a.get_text().isdigit()]
    assert [a.get_text() for a in numbers] == ['0', '1', '2', '3']
    boxes = [a.get_window_extent(renderer) for a in numbers]
    for a, b in zip(boxes, boxes[1:]):         # steps 0.4 s apart: their numbers still apart
        assert not a.overlaps(b)
    data = top.get_window_extent(renderer)
    assert all(box.y0 >= data.y1 for box in boxes)      # above the data, not over it
    plt.close(fig)
