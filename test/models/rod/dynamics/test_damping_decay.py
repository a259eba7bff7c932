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
The table "Damping forms and measured decay" of docs/tendon_robot.md against a simulated decay.

The steel robot (no discs) is held bent by 2 N on t0 in its static equilibrium, released, and
its tip swings in the plane of gravity; the decay of the swing is measured from its extrema
half a cycle apart, as a user measures one, and compared with the table's formula, whose
numbers come from the beam's analytic first mode, not from the simulator.
"""

from pathlib import Path
import re

import numpy as np
import pytest
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.modal import bending_frequencies
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.tendon_robot import load_robot

DOC = (Path(__file__).resolve().parents[4] / 'docs' / 'tendon_robot.md').read_text()
STEEL = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml')
DT = 0.002     # s: 90 steps a cycle of the first mode (5.6 Hz)


def released_swing(bending_torsion: float, drag: float, duration: float) -> np.ndarray:
    """Return the robot and the extrema |z - z_rest| [m] of its tip, half a cycle apart."""
    robot = STEEL.with_changes(damping={'shear_extension': [0.0] * 3,
                                        'bending_torsion': [bending_torsion] * 3},
                               drag=[drag] * 3)
    rest = ImplicitSimulator(robot, dt=DT).state().tip_position
    sim = ImplicitSimulator(robot, dt=DT)
    sim.set_tensions({'t0': 2.0})
    sim.place_at_rest()
    sim.set_tensions({'t0': 0.0})
    z = sim.follow(np.zeros((round(duration / DT), 4)), 'tension')[:, 2] - rest[2]
    # the largest |z| between crossings of the rest, at least a quarter period apart (the
    # second mode's ripple may cross it twice in a row)
    quarter = np.pi / 2 / bending_frequencies(robot, 1)[0] / DT
    crossings = np.flatnonzero(np.diff(np.sign(z)))
    crossings = crossings[np.append(True, np.diff(crossings) > quarter)]
    return robot, np.array([np.abs(z[a + 1:b + 1]).max()
                            for a, b in zip(crossings[:-1], crossings[1:])])


def ratio(decrement: float) -> float:
    """Return the damping ratio of a logarithmic decrement per cycle."""
    return decrement / np.sqrt(4 * np.pi ** 2 + decrement ** 2)


def row(form: str) -> str:
    return next(line for line in DOC.splitlines() if line.startswith(f'| {form} |'))


def test_kelvin_voigt_decay_is_the_tables():
    """
    The measured zeta_1 is omega_1 Bbt / (2 E I): 0.112 at Bbt = 1e-3 N m^2 s.

    Within 2 %: the formula is exact for the modes of a uniform beam; the rod hangs under
    gravity and BDF2 damps a little of its own (measured: 0.6 % apart at most). A form that damped
    mass-proportionally, or a Bbt off by a factor, would miss by far more.
    """
    assert 'zeta_i = omega_i Bbt / (2 E I)' in row('Kelvin-Voigt (stiffness-proportional)')
    robot, peaks = released_swing(1e-3, 0.0, 1.0)
    omega = bending_frequencies(robot, 1)[0]
    rod = robot.rod
    expected = omega * 1e-3 / (2 * rod.youngs_modulus * rod.second_moment)
    measured = [ratio(2 * np.log(a / b)) for a, b in zip(peaks[:8], peaks[1:9])]
    assert expected == pytest.approx(0.112, abs=0.002)
    np.testing.assert_allclose(measured, expected, rtol=0.02)


def test_square_law_drag_decay_is_the_tables():
    """
    The measured zeta is (4 / 3 pi) X C k / (rho A) at the swing's amplitude X, C = 1 kg/m^2.

    k from the analytic first mode of a cantilever; the decay per full cycle (the half cycles
    up and down differ: gravity) against the formula at the cycle's mean amplitude, as the
    swing shrinks from 11 to 3 mm. Within 10 %: the formula is harmonic balance on the first
    mode alone (measured: 6 % apart at most); a linear damper would keep one ratio throughout.
    """
    text = row('square-law drag')
    assert 'zeta = (4 / 3 pi) X C k / (rho A)' in text
    beta = 1.8751040687     # beta L of the first mode
    sigma = (np.cosh(beta) + np.cos(beta)) / (np.sinh(beta) + np.sin(beta))
    x = np.linspace(0.0, 1.0, 20001)
    shape = np.cosh(beta * x) - np.cos(beta * x) - sigma * (np.sinh(beta * x) - np.sin(beta * x))
    shape /= shape[-1]
    k = np.trapezoid(np.abs(shape) ** 3, x) / np.trapezoid(shape ** 2, x)
    assert float(re.search(r'k = ([\d.]+) for the first mode', text).group(1)) == pytest.approx(
        k, abs=0.005)
    robot, peaks = released_swing(0.0, 1.0, 0.8)
    a, b = peaks[:5], peaks[2:7]
    measured = ratio(np.log(a / b))
    expected = 4 / (3 * np.pi) * np.sqrt(a * b) * 1.0 * k / robot.rod.linear_density
    np.testing.assert_allclose(measured, expected, rtol=0.1)
    assert measured[0] > 1.5 * measured[-1]          # not a linear damper
