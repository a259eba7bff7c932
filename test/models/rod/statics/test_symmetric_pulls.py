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
Equal pulls on all four stiff tendons of the default robot, displacement control.

Opposed tendon pairs have path lengths with l0 + l2 = l1 + l3 to first order for any bending
and extension, so equal pulls make all four taut at once and the co-contraction
(1, -1, 1, -1) of the tensions moves no length: the taut branch of the tendon law is singular
there (_tendon_kernels.slack_branches). Checked against the same model in tension mode at the
tensions found (an independent solve without the tendon law's kink) and against ``cosserat``.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot

DEFAULT = load_robot(default_robot_file())
L = DEFAULT.rod.length
# displacement a tension-mode solve reproduces: the shooting tolerance (1e-7 of the length
# residual's scale, ~1e-3 m) is 1e-10 m
Q_TOLERANCE = 1e-9
# discrete vs cosserat: tendons as chords between discs vs continuous curves, and the
# pyelastica vs linear law (docs/tendon_robot.md: up to 0.5 % of the length)
MODELS_APART = 0.005 * L


def check_against_tension_mode(result, q, check):
    """Check that the tensions found, given as tensions, give back the pulls and the shape."""
    assert np.all(result.tensions >= 0.0) and np.all(result.slack >= 0.0)
    assert np.all((result.tensions == 0.0) | (result.slack == 0.0))
    forward = check.solve_tensions(result.tensions)
    # l + slack = l* - q: the slack is the pull a tension-mode solve misses
    np.testing.assert_allclose(forward.tendon_displacements - result.slack, q,
                               atol=Q_TOLERANCE)
    np.testing.assert_allclose(forward.tip_position, result.tip_position, atol=1e-8)


@pytest.mark.parametrize('pull', [0.0003, 0.001])
def test_discrete_solves_equal_pulls_as_cosserat_does(pull):
    q = np.full(4, pull)
    result = StaticsSolver(DEFAULT, 'discrete').solve_displacements(q)
    check_against_tension_mode(result, q, StaticsSolver(DEFAULT, 'discrete'))
    # past 0.25 mm all four are taut (below it the gravity sag leaves 1 to 3 slack):
    # l0 + l2 = l1 + l3 leaves no room for a slack one beyond round-off
    assert np.all(result.slack < Q_TOLERANCE)
    other = StaticsSolver(DEFAULT, 'cosserat').solve_displacements(q)
    assert np.linalg.norm(result.tip_position - other.tip_position) < MODELS_APART
    # the tensions are fixed up to the co-contraction, which moves nothing: compare what the
    # rod sees. The opposed pairs' differences (bending moments): within 1 %, the models'
    # difference in the gravity sag they hold up
    tau, other_tau = result.tensions, other.tensions
    np.testing.assert_allclose([tau[0] - tau[2], tau[1] - tau[3]],
                               [other_tau[0] - other_tau[2], other_tau[1] - other_tau[3]],
                               atol=0.01 * other_tau[0])
    # the sum (compression, ~6.3 N/mm of pull in both once all are taut): the pulls at which
    # the four are all taut differ by ~12 um between the models (their rest lengths: chords
    # between discs vs curves), 0.08 N
    assert abs(tau.sum() - other_tau.sum()) < 0.1


def test_discrete_follows_a_ramp_of_equal_pulls():
    solver, check = StaticsSolver(DEFAULT, 'discrete'), StaticsSolver(DEFAULT, 'discrete')
    for pull in np.linspace(0.0, 0.001, 21)[1:]:
        q = np.full(4, pull)
        check_against_tension_mode(solver.solve_displacements(q), q, check)
