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
How the dynamic model moves: natural frequencies, damping, the stock-rod option.

The simulator's free vibrations about the sagged rest shape of the default robot are
compared with an independent modal model (models/modal.py: a bar chain linearised about
its own rest shape), which is itself checked against Euler-Bernoulli closed forms.
"""

import math

import elastica as ea
import numpy as np
from numpy.testing import assert_allclose, assert_array_equal
import pytest
from scipy.optimize import brentq
from scipy.signal import argrelextrema

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.modal import bending_frequencies, mass_proportional_damping
from tendon_robot_sim.models.rod.dynamics.explicit import build_rod_system, TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from vibration import two_modes

DEFAULT = load_robot(default_robot_file())
SAMPLE = 0.002      # s between tip samples


def variant(gravity=(0.0, 0.0, -9.80665), mass=None, **rod):
    data = DEFAULT.to_dict()
    data['gravity'] = list(gravity)
    if mass is not None:
        data['vertebrae']['mass'] = mass
    data['rod'].update(rod)
    return robot_from_dict(data)


def released_tip(sim, duration):
    """
    Tip z [m] every SAMPLE s for ``duration`` after the load set on ``sim`` is removed.

    At rest first: a tip slower than 0.1 mm/s swings by micrometres, against
    tens of millimetres after the release.
    """
    sim.run_until_steady(20.0, speed_tolerance=1e-4)
    assert sim.is_steady(1e-4)
    sim.set_tensions([0.0] * len(sim.tendon_names))
    sim.set_tip_load((0.0, 0.0, 0.0))
    steps = round(duration / SAMPLE)
    return SAMPLE * np.arange(1, steps + 1), np.array(
        [sim.advance(SAMPLE).tip_position[2] for _ in range(steps)])


# ------------------------------------------------------------------ the modal model


def test_modal_model_matches_euler_bernoulli_cantilevers():
    """No gravity: a bare cantilever, then one with only a tip mass (no other discs)."""
    rod = DEFAULT.rod
    scale = math.sqrt(rod.bending_stiffness / (rod.linear_density * rod.length ** 4))
    bare = bending_frequencies(variant(gravity=(0, 0, 0), mass=0.0))
    # beta L = 1.8751, 4.6941; the rod's rotary inertia lowers them by < 0.3 %
    assert_allclose(bare, np.array([1.8751, 4.6941]) ** 2 * scale, rtol=3e-3)
    ratio = 0.5                                # tip mass / rod mass

    def tip_mass_equation(b):
        return 1 + math.cos(b) * math.cosh(b) + ratio * b * (
            math.cos(b) * math.sinh(b) - math.sin(b) * math.cosh(b))
    beta = brentq(tip_mass_equation, 0.5, 1.8)
    data = variant(gravity=(0, 0, 0)).to_dict()
    data['vertebrae'] = {'positions': [rod.length], 'mass': ratio * rod.linear_density
                         * rod.length, 'radius': 0.015, 'thickness': 1e-6}
    tip_only = robot_from_dict(data)
    expected = beta ** 2 * scale
    # the closed form has a point mass: the disc's rotary inertia lowers it by about 0.1 %
    assert bending_frequencies(tip_only, 1)[0] == pytest.approx(expected, rel=0.01)
    assert bending_frequencies(tip_only, 1)[0] < expected


def test_modal_model_sees_the_sag_stiffen_the_first_mode():
    hanging = bending_frequencies(DEFAULT)
    straight = bending_frequencies(variant(gravity=(0, 0, 0)))
    assert 1.03 < hanging[0] / straight[0] < 1.10
    # gravity along the rod: no sag; hanging from the base it stiffens every mode,
    # standing on it (a column under its own weight) softens them
    hanging_down = bending_frequencies(variant(gravity=(9.80665, 0, 0)))
    standing_up = bending_frequencies(variant(gravity=(-9.80665, 0, 0)))
    assert np.all(hanging_down > straight) and np.all(standing_up < straight)


# ------------------------------------------------------------------ the simulator


def test_free_vibration_matches_the_modal_model():
    """
    First two frequencies of the default robot within 2 % of the modal model.

    Released from a 0.3 N pull on t0 (a bend of nearly constant curvature, which
    excites the second mode too); damping ratio 0.2 so that it settles quickly; the
    fit of two damped modes gives omega = sqrt(omega_d^2 + sigma^2).
    """
    robot = DEFAULT.with_changes(damping={'ratio': 0.2})
    sim = TendonSimulator(robot)
    sim.set_tensions({'t0': 0.3})
    t, z = released_tip(sim, 1.5)
    expected = bending_frequencies(robot)
    measured, misfit = two_modes(t, z)
    assert misfit < 0.02                                        # the two modes are all of it
    assert_allclose(measured, expected, rtol=0.02)


def test_log_decrement_gives_the_configured_damping_ratio():
    """Default robot (ratio 0.1), released from a small upward tip force."""
    sim = TendonSimulator(DEFAULT)
    sim.set_tip_load((0.0, 0.0, 0.05))
    _, z = released_tip(sim, 2.0)
    # extrema over +-0.1 s (a quarter of a period): not the ripple of faster modes
    peaks = z[argrelextrema(z, np.greater, order=50)[0]]
    troughs = z[argrelextrema(z, np.less, order=50)[0]]
    swings = peaks[:4] - troughs[:4]                       # peak to following trough
    delta = math.log(swings[0] / swings[-1]) / (len(swings) - 1)
    ratio = delta / math.sqrt(4 * math.pi ** 2 + delta ** 2)
    assert ratio == pytest.approx(DEFAULT.rod.damping.ratio, rel=0.1)


def test_damping_rate_is_per_second_and_ratio_uses_the_first_mode():
    assert mass_proportional_damping(DEFAULT.with_changes(damping={'rate': 3.5})) == 3.5
    omega = bending_frequencies(DEFAULT, 1)[0]
    assert mass_proportional_damping(DEFAULT) == pytest.approx(2 * 0.1 * omega)


def test_end_joint_correction_off_is_stock_pyelastica():
    """Off: the rod's stiffness is PyElastica's own; on: the end joints are 2/3 of it."""
    robot = variant(mass=0.0, end_joint_correction=False, elements=10)
    _, rod = build_rod_system(robot, 1e-5, np.zeros(4))
    spec = robot.rod
    stock = ea.CosseratRod.straight_rod(
        spec.elements, robot.base.position.copy(), robot.base.direction.copy(),
        robot.base.normal.copy(), spec.length, spec.radius, spec.density,
        youngs_modulus=spec.youngs_modulus, shear_modulus=spec.shear_modulus)
    for name in ('bend_matrix', 'shear_matrix', 'mass', 'mass_second_moment_of_inertia'):
        assert_array_equal(getattr(rod, name), getattr(stock, name), err_msg=name)
    _, softened = build_rod_system(variant(mass=0.0, elements=10), 1e-5, np.zeros(4))
    assert_allclose(softened.bend_matrix[..., [0, -1]], stock.bend_matrix[..., [0, -1]] * 2 / 3)
    assert_array_equal(softened.bend_matrix[..., 1:-1], stock.bend_matrix[..., 1:-1])


def test_discs_add_their_mass_and_inertia_to_the_rod():
    robot = variant(elements=20)
    _, rod = build_rod_system(robot, 1e-5, np.zeros(4))
    _, bare = build_rod_system(variant(elements=20, mass=0.0), 1e-5, np.zeros(4))
    added = rod.mass - bare.mass
    assert_allclose(added[2::2], robot.vertebra_mass, rtol=1e-12)   # vertebrae every 2 nodes
    assert_allclose(added[1::2], 0.0, atol=0.0)
    inertia = (rod.mass_second_moment_of_inertia - bare.mass_second_moment_of_inertia)
    # total rotary inertia of the discs about d1, d2 and about d3 (thin cylinders)
    m, r, t = robot.vertebra_mass, robot.disc_radius, robot.disc_thickness
    count = robot.vertebra_positions.size
    assert_allclose(np.einsum('iie->i', inertia),
                    count * np.array([m * (3 * r * r + t * t) / 12] * 2 + [m * r * r / 2]))
    assert_array_equal(inertia[..., 0], 0.0)                    # not in the clamped element
    assert_allclose(np.einsum('ije,jke->ike', rod.inv_mass_second_moment_of_inertia,
                              rod.mass_second_moment_of_inertia),
                    np.broadcast_to(np.eye(3)[..., None], inertia.shape), atol=1e-12)
