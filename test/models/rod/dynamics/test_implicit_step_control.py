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
The implicit dynamics' step control: its error estimate, the steps it refuses, adaptive dt.

The estimate is checked against the exact local error of BDF-alpha on a cubic; the refused
steps on the trapezoidal runs of issue 42 (undamped robots, where steps jumped to another
solution), against a finer BDF2 run of the same inputs; adaptive dt against a fine fixed run.
"""

import json

import numpy as np
import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.rod.dynamics._implicit_kernels import bdf_coefficients
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.dynamics.implicit_step_control import (error_constant,
                                                                        StepRejected,
                                                                        tip_error_estimates)
from tendon_robot_sim.models.sim_model import InputError
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
import yaml

CONFIG = share_dir() / 'config'


def undamped(name: str, gravity: bool = True):
    """Return a robot of config/ without discs and damping (and gravity), as issue 42 ran them."""
    data = load_robot(CONFIG / name).to_dict()
    data.pop('vertebrae', None)
    data['rod'].pop('damping', None)
    if not gravity:
        data['gravity'] = [0.0, 0.0, 0.0]
    return robot_from_dict(data)


@pytest.mark.parametrize('alpha', [0.0, -0.25, -0.5])
@pytest.mark.parametrize('spacing', [(1.0, 1.0), (0.5, 2.0)])
def test_the_estimate_is_the_local_error_of_a_cubic(alpha, spacing):
    """
    Y' = 3 t^2 (y = t^3): one BDF-alpha step from the exact history; the estimate is its error.

    For a cubic both the corrector's error C h^3 y''' and the predictor's are exact, so the
    estimate from the three tips before (at any spacing) equals the true error.
    """
    h, t = 0.01, 0.3
    c0, c1, c2, d1 = bdf_coefficients(h, alpha)
    y_h = c1 * (t - h) ** 3 + c2 * (t - 2 * h) ** 3 + d1 * 3 * (t - h) ** 2
    y_num = (3 * t ** 2 - y_h) / c0                         # c0 y + x_h = y'(t)
    times = np.array([t - h - spacing[0] * h - spacing[1] * h, t - h - spacing[0] * h,
                      t - h, t])
    tips = np.zeros((4, 3))
    tips[:, 1] = times ** 3
    tips[3, 1] = y_num
    estimate = tip_error_estimates(times, tips, alpha)[0]
    assert estimate == pytest.approx(abs(t ** 3 - y_num), rel=1e-6)
    assert abs(t ** 3 - y_num) == pytest.approx(abs(error_constant(alpha)) * 6 * h ** 3,
                                                rel=1e-6)


def _run(sim, tensions, duration, chunk=0.02):
    """Run in chunks; return the tips of the steps taken [m], their times and the error."""
    steps = round(chunk / sim.dt)
    tips, times, error = [sim.state().tip_position], [0.0], None
    sim.set_tensions(tensions)
    try:
        while sim.time < duration - 1e-9:
            record = sim.follow(np.tile(tensions, (steps, 1)), 'tension')
            tips.extend(record[:, 0:3])
            times.extend(sim.time - sim.dt * np.arange(steps - 1, -1, -1))
    except StepRejected as rejected:
        error = rejected
    return np.array(tips), np.array(times), error


def _speed(tips, times):
    return np.linalg.norm(np.diff(tips, axis=0), axis=1) / np.diff(times)


@pytest.mark.parametrize('name, gravity, tensions, duration', [
    ('nitinol_robot.yaml', True, [2.0, 0.0, 0.0], 0.16),
    ('steel_rod_robot.yaml', False, [2.0, 0.0, 0.0, 0.0], 0.5)])
def test_trapezoidal_steps_that_leave_the_motion_are_refused(name, gravity, tensions, duration):
    """
    Issue 42's trapezoidal runs at the default dt: no step moves the tip faster than the motion.

    Before: the disc-free nitinol tip jumped 150 mm in one 2 ms step at 0.032 and 0.098 s
    (about 100 m/s); the steel tip curled up from 0.47 s and alternated between 500 and 167 mm
    from the base. The physical figure: the largest tip speed of the same inputs under BDF2
    at a quarter of the step (9.1 and 1.16 m/s), with half again for the trapezoidal rule's
    missing damping. The run ends, or stops with a one-line StepRejected at a time it names.
    """
    robot = undamped(name, gravity)
    fine = ImplicitSimulator(robot, dt=0.0005)
    tips, times, _ = _run(fine, tensions, duration)
    bound = 1.5 * _speed(tips, times).max()
    sim = ImplicitSimulator(robot, alpha=-0.5)
    tips, times, error = _run(sim, tensions, duration)
    assert _speed(tips, times).max() < bound
    if error is not None:
        message = str(error)
        assert '\n' not in message
        assert message.startswith(f'the step from t = {sim.time:.6g} s was not accepted: ')
        assert 'try --alpha 0' in message
    else:
        assert sim.time == pytest.approx(duration)


def test_simulate_stops_a_runaway_with_one_line(tmp_path, capsys):
    """`simulate` on the steel rod without gravity, trapezoidal: exit 1, the time and why."""
    path = tmp_path / 'steel.yaml'
    path.write_text(yaml.safe_dump(undamped('steel_rod_robot.yaml', gravity=False).to_dict()))
    assert main(['simulate', '--robot', str(path), '--integrator', 'implicit', '--alpha', '-0.5',
                 '--tensions', '2,0,0,0', '--duration', '1']) == 1
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1, error
    assert 'Traceback' not in error
    assert 'its energy grew by' in error and 'was not accepted' in error


def test_default_bdf2_runs_take_every_step_at_dt():
    """BDF2 without a tolerance keeps its steps: the nitinol robot's 8 N whip, no retries."""
    sim = ImplicitSimulator(load_robot(CONFIG / 'nitinol_robot.yaml'))
    sim.set_tensions([8.0, 0.0, 0.0])
    sim.advance(0.2)
    assert sim.steps_taken == 100 and sim.smallest_dt == sim.dt
    assert 0.0 < sim.max_estimate < 0.02 * 0.2        # and it reports its estimate


def test_adaptive_dt_takes_a_tension_step_as_a_step_not_a_ramp(capsys):
    """
    The halves of a step refused at dt hold the new tension, as the fixed runs do.

    The steel robot under gravity, 2 N stepped onto t0 from rest (``advance``: tensions apply
    from the first step; `simulate --tensions` likewise), rows of 4 ms, tip_tolerance
    0.01 mm. The reference is the
    Richardson extrapolation of fixed runs at dt / 16 and dt / 32 (they differ by 0.03 mm at
    4 ms). Ramping the tension over the first row in its halves made the adaptive run
    converge to the response to a 4 ms ramp: 0.9 mm off at 4 ms whatever the tolerance
    (1.0 to 1.2 mm over 20 ms), where it is now 0.1 mm (0.34 mm at worst).
    """
    robot, row, rows = load_robot(CONFIG / 'steel_rod_robot.yaml'), 0.004, 5

    def tips(**kwargs):
        sim = ImplicitSimulator(robot, **kwargs)
        sim.set_tensions({'t0': 2.0})
        return np.array([sim.advance(row).tip_position for _ in range(rows)]), sim
    coarse, fine = tips(dt=row / 16)[0], tips(dt=row / 32)[0]
    reference = fine + (fine - coarse) / 3.0
    adaptive, sim = tips(dt=row, tip_tolerance=1e-5)
    assert sim.smallest_dt < row                       # it did refuse steps at dt
    error = np.linalg.norm(adaptive - reference, axis=1)
    assert error[0] < 0.3e-3 and error.max() < 0.6e-3   # the ramp's: 0.9 and 1.2 mm
    assert main(['simulate', '--robot', str(CONFIG / 'steel_rod_robot.yaml'), '--tensions',
                 '2,0,0,0', '--duration', str(row), '--dt', str(row), '--tip-tolerance', '1e-5',
                 '--json']) == 0
    tip = json.loads(capsys.readouterr().out.splitlines()[-1])['tip_position']
    assert np.linalg.norm(tip - reference[0]) < 0.3e-3


@pytest.mark.parametrize('kwargs, message', [
    ({'tip_tolerance': 0.0}, r'^tip_tolerance: must be a finite number > 0 m'),
    ({'tip_tolerance': float('nan')}, r'^tip_tolerance: must be a finite number > 0 m'),
    ({'dt_min': 1e-4}, r'^dt_min: applies with a tip_tolerance only'),
    ({'tip_tolerance': 1e-3, 'dt_min': 0.01}, r'^dt_min: must be a number in \(0, dt')])
def test_bad_step_control_arguments_are_refused(kwargs, message):
    with pytest.raises(InputError, match=message):
        ImplicitSimulator(load_robot(CONFIG / 'steel_rod_robot.yaml'), **kwargs)
