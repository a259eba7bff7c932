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
The implicit dynamics at small time steps: the default (silicone) robot, dt down to 62.5 us.

A smaller step is an easier one: once the discrete model kept its 20 RK4 steps at every dt,
and the time step's waves, whose rates along the rod grow as dt shrinks, outran them (at
dt = 0.125 ms the steps stopped converging at t = 1.5 ms, the message blaming the inputs).
The reference is the integrator itself at successive halvings of dt (an order check).
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator, StepFailed
from tendon_robot_sim.models.tendon_robot import load_robot

ROBOT = load_robot(default_robot_file())
# dt [s] from 1 ms down by halvings
DTS = [0.001 / 2 ** k for k in range(5)]


def tip_at(dt: float, duration: float, smooth: bool, steps: int | None = None) -> np.ndarray:
    """
    Tip [m] at ``duration`` s of t0 pulled to 2 N from rest at time steps of ``dt`` s.

    ``smooth``: tension 2 sin^2(pi t / (2 duration)) N; else a step to 2 N at t = 0 (as
    ``simulate --tensions 2,0,0,0``).
    """
    sim = ImplicitSimulator(ROBOT, dt=dt, steps=steps)
    n = round(duration / dt)
    tensions = np.zeros((n, len(ROBOT.tendons)))
    t = dt * np.arange(1, n + 1)
    tensions[:, 0] = 2.0 * np.sin(0.5 * np.pi * t / duration) ** 2 if smooth else 2.0
    return sim.follow(tensions, 'tension', step=not smooth)[-1, 0:3]


def test_a_tension_step_runs_at_small_dt_and_converges_towards_it():
    """
    The issue's 2 N step on t0 at dt = 0.125 and 0.0625 ms, past where both once failed.

    Over 3 ms (the 0.125 ms run failed at 1.5 ms, the 0.0625 ms one at 1.3 ms) and at 1, 0.5
    and 0.25 ms. Each halving of dt shrinks the change of the tip: a step input makes BDF2
    first order (its two-step formula straddles the jump at t = 0: the first step's velocity
    is 2/3 of the exact one), so each change is about half the one before (0.13 mm from 1 to
    0.5 ms, then measured 0.52, 0.54, 0.53 of it). A solver landing on other solutions of the
    step equations would not shrink them so.
    """
    tips = [tip_at(dt, 0.003, smooth=False) for dt in DTS]
    changes = np.linalg.norm(np.diff(tips, axis=0), axis=1)
    assert np.all(changes[1:] < 0.7 * changes[:-1])
    assert np.all(changes[1:] > 0.3 * changes[:-1])        # first order: not a stall at 0


def test_a_smooth_pull_converges_at_second_order_and_agrees_with_dt_1_ms():
    """
    t0 pulled smoothly to 2 N over 4 ms: the tip there at dt = 1 ms down to 62.5 us.

    BDF2 is second order: each halving of dt shrinks the change of the tip about fourfold
    (measured 4.7, 5.2, 4.5 on the norms; 3 to 6.5 allowed: not yet quite asymptotic). The
    1 ms run is then within its own error of the dt -> 0 tip (Richardson-extrapolated from
    the finest two), the sum of the changes after it: at second order 4/3 of the first change
    (0.047 mm; measured 0.045 mm); allowed 1.5 times that.
    """
    tips = [tip_at(dt, 0.004, smooth=True) for dt in DTS]
    changes = np.linalg.norm(np.diff(tips, axis=0), axis=1)
    ratios = changes[:-1] / changes[1:]
    assert np.all((ratios > 3.0) & (ratios < 6.5)), ratios
    # Richardson: the finest run plus the change still to come at second order
    limit = tips[-1] + (tips[-1] - tips[-2]) / 3.0
    assert np.linalg.norm(tips[0] - limit) < 1.5 * 4.0 / 3.0 * changes[0]


def test_a_step_the_solver_cannot_take_does_not_blame_the_inputs():
    """
    The old grid (20 RK4 steps) at dt = 0.125 ms fails at t = 1.5 ms: its message says how.

    The inputs (2 N on t0) have a static equilibrium, so the message says what failed (the
    Newton iteration's residual and tolerance, the homotopy's progress) and that the inputs
    are within reach; 500 N across the tip, whose equilibrium the statics does not find
    either, keeps the old words.
    """
    with pytest.raises(StepFailed) as failed:
        tip_at(0.000125, 0.003, smooth=False, steps=20)
    message = str(failed.value)
    assert message.startswith('the implicit step from t = 0.0015 s did not converge with '
                              'dt = 0.000125 s; the Newton iteration from the predicted start ')
    assert 'at a scaled residual of ' in message and '(tolerance 1e-05)' in message
    assert 'homotopy from the last step got ' in message
    assert message.endswith('the static equilibrium of these inputs is found, so a numerical '
                            'failure of the step, not inputs out of reach')
    sim = ImplicitSimulator(ROBOT, dt=0.001)
    sim.set_tip_load([500.0, 0.0, 0.0])
    with pytest.raises(StepFailed, match='the inputs may be out of reach$'):
        sim.advance(0.002)
