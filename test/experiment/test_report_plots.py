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
The report's ``tips.png``: errors far below the robot's size show, hold labels stay apart.

Errors below 1 mm on a 250 mm plot were invisible, and the numbers of holds that lie on one
another overlapped.
"""

from types import SimpleNamespace

import matplotlib
from matplotlib import pyplot as plt
from matplotlib.quiver import Quiver
import numpy as np
import pytest
from tendon_robot_sim.experiment.calibration import error_scale, tips_figure

matplotlib.use('Agg')


@pytest.mark.parametrize('span, largest, scale', [
    (250.0, 0.5, 50.0), (250.0, 0.9, 20.0), (250.0, 30.0, 1.0), (100.0, 0.0, 1.0),
    (100.0, 0.1, 100.0)])
def test_the_error_scale_is_a_round_factor_that_makes_the_largest_error_show(
        span, largest, scale):
    assert error_scale(span, largest) == scale
    if largest and scale > 1.0:      # about a tenth of the plot, never more
        assert 0.04 * span <= largest * scale <= 0.1 * span


def test_tips_draw_each_models_error_enlarged_and_one_label_per_place():
    rng = np.random.default_rng(3)
    # five holds, two pairs of them 0.3 mm apart: the rest 250 mm across
    measured = np.array([[0.0, 0.0, 250.0], [0.3, 0.0, 250.0], [120.0, 0.0, 200.0],
                         [120.0, 0.3, 200.0], [-120.0, 10.0, 200.0]])
    errors = rng.normal(0.0, 0.3, measured.shape)
    validations = [SimpleNamespace(model='cosserat', predicted=(measured + errors) * 1e-3,
                                   errors=np.linalg.norm(errors, axis=1) * 1e-3)]
    fig = tips_figure(measured, validations)
    top = fig.axes[0]
    arrows = [c for c in top.collections if isinstance(c, Quiver)]
    assert len(arrows) == 1 and arrows[0].scale == pytest.approx(1.0 / 20.0)
    labels = sorted(t.get_text() for t in top.texts)
    assert labels == ['1,2', '3,4', '5']
    assert any('error x 20' in t.get_text() for t in fig.axes[-1].get_legend().texts)
    plt.close(fig)
