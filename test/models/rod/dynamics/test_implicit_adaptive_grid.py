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
Halved time steps on a grid valid for them (``ContactZones._grid_for``).

The default (silicone) robot's grid at dt = 2 ms has 20 RK4 steps; from 0.125 ms on its
time step's waves outrun them (implicit.WAVE_STEP). Once the adaptive steps halved dt on that
grid, so ``simulate --dt 0.002 --tip-tolerance 1e-7 --dt-min 1e-5 --tensions 2,0,0,0`` failed
at its first step, the message advising a lower dt_min.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.rod.dynamics import implicit_step_control
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.dynamics.implicit_step_control import StepRejected
from tendon_robot_sim.models.tendon_robot import load_robot

ROBOT = load_robot(default_robot_file())
DURATION = 0.004      # s
TOLERANCE = 1e-7      # m


def ramp(dt: float) -> np.ndarray:
    """Tensions [N] at steps of ``dt`` s: t0 pulled linearly from 0 to 2 N over DURATION."""
    n = round(DURATION / dt)
    tensions = np.zeros((n, len(ROBOT.tendons)))
    tensions[:, 0] = 2.0 * dt * np.arange(1, n + 1) / DURATION
    return tensions


def test_adaptive_halvings_run_on_finer_grids_and_agree_with_small_fixed_steps():
    """
    A tension ramp over 4 ms, adaptive from dt = 2 ms: halved to 0.125 ms, on finer grids.

    Each row's halves ramp the tension linearly, as the fixed-dt runs do. The reference is
    Richardson-extrapolated from fixed runs at 0.125 and 0.0625 ms (BDF2, second order; their
    changes 1.9 then 0.55 um). The adaptive run accepts local errors up to the tolerance per
    step: it may be off by at most their sum (measured 0.72 um, bound 3.2 um).
    """
    sim = ImplicitSimulator(ROBOT, dt=0.002, tip_tolerance=TOLERANCE, dt_min=1e-5)
    tip = sim.follow(ramp(0.002), 'tension')[-1, 0:3]
    assert sim.smallest_dt < 0.5e-3          # halved past where 20 RK4 steps hold
    coarse, fine = (ImplicitSimulator(ROBOT, dt=dt).follow(ramp(dt), 'tension')[-1, 0:3]
                    for dt in (1.25e-4, 6.25e-5))
    reference = fine + (fine - coarse) / 3.0
    assert np.linalg.norm(tip - reference) < sim.steps_taken * TOLERANCE


def test_the_cli_command_that_failed_runs(capsys):
    """The issue's command, over 4 ms (it failed at its first step)."""
    code = main(['simulate', '--integrator', 'implicit', '--dt', '0.002', '--tip-tolerance',
                 '1e-7', '--dt-min', '1e-5', '--tensions', '2,0,0,0', '--duration', '0.004'])
    assert code == 0, capsys.readouterr().err
    assert 'tip position' in capsys.readouterr().out


def test_halvings_stop_where_the_grid_would_be_too_fine_and_the_message_says_so(monkeypatch):
    """
    Where MAX_GRID_STEPS holds dt_min, a step it cannot accept is not told to lower dt_min.

    MAX_GRID_STEPS monkeypatched to 40: the default robot's grid at 0.125 ms has 38 RK4 steps,
    at 62.5 us 72, so dt_min = 10 us is held at 0.125 ms; a tolerance no step meets is then
    refused with advice that can help.
    """
    monkeypatch.setattr(implicit_step_control, 'MAX_GRID_STEPS', 40)
    sim = ImplicitSimulator(ROBOT, dt=0.002, tip_tolerance=1e-13, dt_min=1e-5)
    assert sim.dt_min == pytest.approx(1.25e-4)
    with pytest.raises(StepRejected) as error:
        sim.follow(ramp(0.002), 'tension')
    message = str(error.value)
    assert 'halved down to 0.000125 s' in message
    assert ('(0.000125 s is the smallest step: a smaller one would need more than 40 RK4 '
            'steps along the rod); raise tip_tolerance') in message
    assert 'lower dt_min' not in message


def test_a_smallest_step_that_does_not_converge_is_not_told_to_lower_dt_min():
    """
    The 2 N step on t0 at a tolerance that needs dt_min = 31.25 us, where it does not converge.

    The default robot's steps of 31.25 us and less do not converge on any grid valid for them
    (docs/tendon_robot.md, "Spatial resolution": its bays' shear waves grow by e^14), so a
    smaller dt_min cannot help; a larger tolerance can (at 1e-7 m the run is accepted at 62.5
    us: test_the_cli_command_that_failed_runs).
    """
    sim = ImplicitSimulator(ROBOT, dt=0.002, tip_tolerance=1e-9, dt_min=3e-5)
    sim.set_tensions([2.0, 0.0, 0.0, 0.0])
    with pytest.raises(StepRejected) as error:
        sim.advance(0.002)
    message = str(error.value)
    assert 'halved down to 3.13e-05 s, it did not converge' in message
    assert message.endswith('; raise tip_tolerance; the state stays at t = 0 s')


def test_more_grids_of_halved_steps_than_the_cache_keeps_are_built_again(monkeypatch):
    """
    The grid cache holds KEPT_LAYOUTS layouts; the grids of halved steps have no contact zones.

    Its eviction looked for a layout with contact zones only, so a run whose halvings needed
    more zone-free grids than the cache keeps (a large dt over a small dt_min) ended with
    StopIteration. KEPT_LAYOUTS 2: the ramp's halvings need 20, 30 and 40 RK4 steps.
    """
    from tendon_robot_sim.models.rod.dynamics import implicit_grid
    monkeypatch.setattr(implicit_grid, 'KEPT_LAYOUTS', 2)
    sim = ImplicitSimulator(ROBOT, dt=0.002, tip_tolerance=TOLERANCE, dt_min=1e-5)
    tip = sim.follow(ramp(0.002), 'tension')[-1, 0:3]
    assert sim.smallest_dt < 0.25e-3           # three grids at least
    kept = ImplicitSimulator(ROBOT, dt=0.002, tip_tolerance=TOLERANCE, dt_min=1e-5)
    monkeypatch.setattr(implicit_grid, 'KEPT_LAYOUTS', 8)
    # the same run with every grid kept: a grid built again is the same grid (its warm
    # starts may differ by the solver's round-off, far below the tolerance)
    assert np.linalg.norm(kept.follow(ramp(0.002), 'tension')[-1, 0:3] - tip) < TOLERANCE / 100
