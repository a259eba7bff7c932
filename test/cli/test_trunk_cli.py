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
Bellows robots from the command line: cc from muscle lengths, cc-dynamics profiles, validate.

In-process through main(); expectations from hand-built arcs, the static equilibrium
(Newton on the static force) and the injected noise.
"""

import json
import math
from pathlib import Path

from constant_curvature_helpers import falkenhahn_transform
import numpy as np
import pytest
from tendon_robot_sim.cli import main
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import load_bellows_robot

ROOT = Path(__file__).resolve().parents[2]
BHA = str(ROOT / 'config' / 'bionic_handling_assistant.yaml')


def last_json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_cc_from_muscle_lengths_is_the_arc_built_by_hand(capsys):
    """p1 (on d1, 5 cm out) 1 cm shorter than p2, p3: section 1 bends by 2 cm / (3 x 5 cm)."""
    assert main(['cc', '--robot', BHA, '--muscle-lengths', 'p1=0.24', '--json']) == 0
    result = last_json(capsys)
    theta = 2 * 0.01 / (3 * 0.05)
    first = result['sections'][0]
    assert first['theta'] == pytest.approx(theta, rel=1e-12)
    assert first['phi'] == pytest.approx(0.0, abs=1e-12)
    assert first['length'] == pytest.approx((0.24 + 0.25 + 0.25) / 3, rel=1e-12)
    assert [s['theta'] for s in result['sections'][1:]] == [0.0, 0.0]
    # base: d1 = z (normal), d3 = x (direction), d2 = d3 x d1 = -y
    base = np.eye(4)
    base[:3, :3] = np.column_stack(([0, 0, 1], [0, -1, 0], [1, 0, 0]))
    straight = np.eye(4)
    straight[2, 3] = 0.22 + 0.2                    # sections 2 and 3, straight
    H = base @ falkenhahn_transform(theta, 0.0, theta / first['length']) @ straight
    np.testing.assert_allclose(result['tip_position'], H[:3, 3], atol=1e-12)
    assert result['residual'] < 1e-12


@pytest.mark.parametrize('theta, code', [(4.6, 1), (4.3, 0)])
def test_cc_from_muscle_lengths_past_self_contact_is_no_result(theta, code, capsys):
    """
    Section 1 (0.25 m, bellows 5 cm out) meets itself past 2 pi L / (L + 2 x 5 cm) = 4.49 rad.

    p1 on d1 is d theta shorter than the centre, p2 and p3 (120 deg on) d theta / 2 longer:
    at 4.6 rad the arc runs through its base (cc refused such a bend of a tendon robot
    only), at 4.3 rad it does not.
    """
    lengths = f'p1={0.25 - 0.05 * theta:.6f},p2={0.25 + 0.025 * theta:.6f},' \
              f'p3={0.25 + 0.025 * theta:.6f}'
    assert main(['cc', '--robot', BHA, '--muscle-lengths', lengths]) == code
    err = capsys.readouterr().err
    if code:
        assert err.splitlines() == [
            f'tendon-robot-sim cc: error: --muscle-lengths: section 0: a bend of {theta:.4g} rad '
            "passes through itself: the arc of a full turn less the section's diameter (4.488 "
            "rad) brings the section's end onto its base"]
    else:
        assert err == ''


def test_cc_dynamics_after_a_slow_ramp_rests_at_the_static_equilibrium(tmp_path, capsys):
    """A 20 s ramp to 0.8 bar on p1 and 0.6 bar on p5, held 10 s: quasi-static."""
    profile = tmp_path / 'ramp.csv'
    profile.write_text('t,p1,p5\n0,0,0\n20,80000,60000\n30,80000,60000\n')
    assert main(['cc-dynamics', '--robot', BHA, '--pressures-csv', str(profile),
                 '--json']) == 0
    result = last_json(capsys)
    assert result['duration'] == pytest.approx(30.0) and result['profile'] == str(profile)
    assert result['inputs']['p1'] == 8e4 and result['inputs']['p5'] == 6e4
    model = CCDynamics.from_bellows_robot(load_bellows_robot(BHA))
    inputs = np.zeros(9)
    inputs[[0, 4]] = 8e4, 6e4
    x = model.equilibrium(inputs)
    # 1 mm: what is left of the ramp's swing after 10 s of the BHA's light damping
    np.testing.assert_allclose(result['tip_position'], model.frames(x)[-1][1], atol=1e-3)


def test_a_tension_step_in_a_profile_is_the_step_response(tmp_path, capsys):
    """At rest for 0.2 s, then 2 N: the constant-tension run (a step from rest) delayed."""
    profile = tmp_path / 'step.csv'
    profile.write_text('t,t1\n0,0\n0.2,0\n0.2,2\n0.6,2\n')
    assert main(['cc-dynamics', '--tensions-csv', str(profile), '--json']) == 0
    from_profile = last_json(capsys)
    assert main(['cc-dynamics', '--tensions', 't1=2', '--duration', '0.4', '--json']) == 0
    constant = last_json(capsys)
    # 1e-9 m: the rest state is a Newton solution to 1e-12, integrated for 0.2 s
    np.testing.assert_allclose(from_profile['tip_position'], constant['tip_position'],
                               atol=1e-9)
    assert from_profile['duration'] == pytest.approx(0.6)


def test_synthetic_bellows_run_validates_with_the_slides_metrics(tmp_path, capsys):
    """Hidden robot = the file's, only noise: the dynamic length error is the noise's."""
    profile = tmp_path / 'profile.csv'
    profile.write_text('t,p1,p5\n0,0,0\n0.5,0,0\n0.5,80000,0\n2,80000,60000\n3,80000,60000\n')
    run = tmp_path / 'run.csv'
    assert main(['synth-experiment', str(run), '--robot', BHA, '--pressures-csv',
                 str(profile), '--stiffness-factor', '1', '--damping-factor', '1',
                 '--length-noise', '0.001', '--noise', '0']) == 0
    assert 'wrote' in capsys.readouterr().out
    # a CSV file is a file to write: a second run overwrites it (it was refused as a bag
    # folder that exists already)
    written = run.read_text()
    assert main(['synth-experiment', str(run), '--robot', BHA, '--pressures-csv',
                 str(profile), '--stiffness-factor', '1', '--damping-factor', '1',
                 '--length-noise', '0.001', '--noise', '0']) == 0, capsys.readouterr().err
    assert run.read_text() == written and 'wrote' in capsys.readouterr().out
    assert main(['validate', str(run), '--robot', BHA, '--report',
                 str(tmp_path / 'report')]) == 0
    out = capsys.readouterr().out
    assert 'kinematic model' in out and 'muscle-length error' in out
    report = (tmp_path / 'report' / 'report.md').read_text()
    # the rotary inertia stays hidden, so the lengths differ a little beyond the noise:
    # mean |error| of the noise alone is 1 mm sqrt(2 / pi) = 0.80 mm
    row = next(line for line in report.splitlines() if 'dynamic: muscle length' in line)
    mean = float(row.split('|')[2])
    assert 0.8 * math.sqrt(2 / math.pi) < mean < 1.2 * math.sqrt(2 / math.pi)
    for name in ('lengths.png', 'tip.png'):
        assert (tmp_path / 'report' / name).stat().st_size > 10_000
