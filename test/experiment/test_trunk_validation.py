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
Bellows validation (Hadzic & Häseli's metrics), input profiles and synthetic runs.

The metrics are checked against hand computations on tiny runs, and against the statistics
of the noise a synthetic run of the model itself carries (the mean of |N(0, s^2)| is
s sqrt(2 / pi); the length of a 3-D N(0, s^2 I) vector has the Maxwell mean
2 s sqrt(2 / pi) and standard deviation s sqrt(3 - 8 / pi)).
"""

import math
from pathlib import Path

import numpy as np
import pytest

from tendon_robot_sim.experiment.identification import (IdentificationError, read_run,
                                                        read_run_csv, Run)
from tendon_robot_sim.experiment.input_profile import InputProfile, ProfileError, read_profile
from tendon_robot_sim.experiment.trunk_validation import (synth_bellows_run, Truth,
                                                          validate_bellows, write_bellows_report,
                                                          write_run)
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import bellows_robot_from_dict, load_bellows_robot

ROOT = Path(__file__).resolve().parents[2]
BHA = load_bellows_robot(ROOT / 'config' / 'bionic_handling_assistant.yaml')
NAMES = BHA.actuator_names
LIMITS = CCDynamics.from_bellows_robot(BHA).input_range
WEIGHTLESS = bellows_robot_from_dict(dict(BHA.to_dict(), gravity=[0.0, 0.0, 0.0]))
STRAIGHT = np.repeat([s.length for s in BHA.sections], 3)         # m, every bellows
STRAIGHT_TIP = BHA.base.position + STRAIGHT[::3].sum() * BHA.base.direction


def tiny_run(lengths, tips, pressures=None):
    times = np.arange(len(lengths)) * 0.005
    return Run('tiny', times, np.zeros((len(times), 9)) if pressures is None else pressures,
               np.asarray(lengths, float), times.copy(), np.asarray(tips, float))


def test_kinematic_tip_error_by_hand():
    """Straight lengths; tips measured 5, 1 and 0 mm away: mean 2 mm, std sqrt(14 / 3) mm."""
    tips = STRAIGHT_TIP + np.array([[3e-3, 4e-3, 0.0], [0.0, 0.0, 1e-3], [0.0, 0.0, 0.0]])
    result = validate_bellows(WEIGHTLESS, tiny_run([STRAIGHT] * 3, tips))
    assert result.kinematic_tip.mean == pytest.approx(2e-3, abs=1e-12)
    assert result.kinematic_tip.std == pytest.approx(math.sqrt(14.0 / 3.0) * 1e-3, abs=1e-12)
    assert result.kinematic_tip.max == pytest.approx(5e-3, abs=1e-12)
    # no pressure, no gravity: the dynamic model stays straight, so its tip errors are these
    assert result.dynamic_tip.mean == pytest.approx(2e-3, abs=1e-12)


def test_dynamic_length_error_by_hand():
    """The model rests straight; measured: p1 2 mm longer at one sample, p5 1 mm shorter."""
    lengths = np.array([STRAIGHT] * 3)
    lengths[1, 0] += 2e-3
    lengths[2, 4] -= 1e-3
    result = validate_bellows(WEIGHTLESS, tiny_run(lengths, [STRAIGHT_TIP] * 3))
    errors = np.zeros(27)
    errors[:2] = [2e-3, 1e-3]                     # 27 values: 3 samples x 9 bellows
    assert result.dynamic_length.mean == pytest.approx(errors.mean(), abs=1e-13)
    assert result.dynamic_length.std == pytest.approx(
        math.sqrt(np.mean(errors ** 2) - errors.mean() ** 2), abs=1e-13)
    assert result.dynamic_length.count == 27
    assert result.dynamic_tip.mean == pytest.approx(0.0, abs=1e-12)


def short_profile(end=4.0):
    """p1 ramps to 0.8 bar over 1 s, p5 steps to 0.6 bar at 2 s."""
    values = np.zeros((5, 9))
    values[1:, 0] = 8e4
    values[3:, 4] = 6e4
    return InputProfile('short', tuple(NAMES), np.array([0.0, 1.0, 2.0, 2.0, end]), values)


def test_metrics_of_a_run_of_the_model_itself_are_the_noise():
    sigma_length, sigma_tip = 5e-4, 1e-3
    run, lengths, tips = synth_bellows_run(
        Truth(1.0, 1.0, 0.0).robot(BHA), short_profile(), length_noise=sigma_length,
        tip_noise=sigma_tip, seed=3)
    result = validate_bellows(BHA, run)
    # 801 samples x 9 bellows: 1 % is more than 3 standard errors of the mean
    assert result.dynamic_length.mean == pytest.approx(sigma_length * math.sqrt(2 / math.pi),
                                                       rel=0.02)
    # 801 tips: within 5 % (3.5 standard errors)
    maxwell_mean = 2 * sigma_tip * math.sqrt(2 / math.pi)
    assert result.dynamic_tip.mean == pytest.approx(maxwell_mean, rel=0.05)
    assert result.dynamic_tip.std == pytest.approx(sigma_tip * math.sqrt(3 - 8 / math.pi),
                                                   rel=0.08)
    # the noiseless truth is the model's own trajectory
    np.testing.assert_allclose(result.simulated_lengths, lengths, atol=1e-12)
    np.testing.assert_allclose(result.simulated_tips, tips, atol=1e-12)
    # the kinematic model sees the length noise too: a tip error above the tip noise alone
    assert result.kinematic_tip.mean > maxwell_mean


def test_a_hidden_robot_shows_a_model_error_and_a_report(tmp_path):
    run, _, _ = synth_bellows_run(Truth().robot(BHA), short_profile(), length_noise=0.0,
                                  tip_noise=0.0)
    result = validate_bellows(BHA, run)
    assert result.kinematic_tip.max < 1e-9      # lengths give the tip exactly (CC truth)
    assert result.dynamic_length.mean > 5e-4    # stiffer, more damped, rotary inertia
    path = write_bellows_report(tmp_path / 'report', result)
    text = path.read_text()
    assert '6.3 +- 3.6' in text and 'not public' in text
    assert (path.parent / 'lengths.png').stat().st_size > 10_000
    assert (path.parent / 'tip.png').stat().st_size > 10_000


@pytest.mark.parametrize('name', ['run.csv', 'run_bag'])
def test_a_written_run_reads_back(tmp_path, name):
    run, _, _ = synth_bellows_run(BHA, short_profile(1.0), rate=100.0, seed=1)
    write_run(tmp_path / name, BHA, run)
    back = (read_run_csv if name.endswith('.csv') else read_run)(tmp_path / name, BHA)
    for field in ('times', 'pressures', 'lengths', 'tip_times', 'tips'):
        # 1e-9 of the value: the CSV's 10 digits; bag stamps in ns
        np.testing.assert_allclose(getattr(back, field), getattr(run, field), rtol=1e-9,
                                   atol=1e-9)


def test_a_tip_that_is_not_finite_is_refused_naming_when(tmp_path):
    """A marker lost from view (NaN) at the 11th sample: the tip errors were NaN, exit 0."""
    run, _, _ = synth_bellows_run(BHA, short_profile(1.0), rate=100.0, seed=1)
    run.tips[10, 1] = math.nan
    write_run(tmp_path / 'run_bag', BHA, run)
    with pytest.raises(IdentificationError) as error:
        read_run(tmp_path / 'run_bag', BHA)
    stamp = 1_700_000_000 * 10 ** 9 + round(run.tip_times[10] * 1e9)   # write_run's
    assert str(error.value) == (f'{tmp_path / "run_bag"}: /tip/measured stamped '
                                f'{stamp * 1e-9:.9f} s: the measured point is not finite: '
                                f'{run.tips[10].tolist()}')


def test_a_run_without_a_tip_is_refused(tmp_path):
    run, _, _ = synth_bellows_run(BHA, short_profile(1.0), rate=100.0)
    with pytest.raises(IdentificationError, match='no measured tip'):
        validate_bellows(BHA, Run('x', run.times, run.pressures, run.lengths))


# --------------------------------------------------------------------------- profiles


def write(tmp_path, text, name='profile.csv'):
    path = tmp_path / name
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def test_a_profile_steps_and_ramps_as_written(tmp_path):
    path = write(tmp_path, 't,p5,p1\n0,0,0\n1,0,0\n1,60000,0\n3,60000,80000\n')
    profile = read_profile(path, NAMES, LIMITS, 'pressure', 'Pa')
    assert profile.end == 3.0
    at = {t: profile.at(t) for t in (-1.0, 0.5, 1.0 - 1e-9, 1.0, 2.0, 3.0, 9.0)}
    np.testing.assert_allclose(at[0.5], 0.0)
    assert at[1.0 - 1e-9][4] == pytest.approx(0.0, abs=1e-3)     # before the step
    assert at[1.0][4] == 6e4 and at[1.0][0] == 0.0                # the step, at its time
    assert at[2.0][0] == pytest.approx(4e4) and at[2.0][4] == 6e4  # half way up the ramp
    np.testing.assert_allclose(at[9.0], at[3.0])
    np.testing.assert_allclose(at[-1.0], at[0.5])
    assert np.count_nonzero(at[3.0]) == 2                        # unnamed bellows stay at 0


def test_a_profiles_mean_over_a_step_keeps_its_ramps_and_steps(tmp_path):
    """
    The mean a time step takes, by hand: p5 ramps 0 -> 2e4 Pa over [1, 2] s, steps to 5e4 at 2 s.

    [1.5, 2.5]: the ramp's last half (mean 1.5e4) for 0.5 s, then 5e4 for 0.5 s: 3.25e4. A step
    at the end of the interval has not acted in it; the first row holds before it, the last
    after it.
    """
    path = write(tmp_path, 't,p5\n1,0\n2,20000\n2,50000\n3,50000\n')
    profile = read_profile(path, NAMES, LIMITS, 'pressure', 'Pa')
    for (start, end), mean in {(1.5, 2.5): 3.25e4, (1.0, 2.0): 1e4, (0.0, 1.0): 0.0,
                               (0.5, 1.5): 2500.0, (2.0, 2.25): 5e4, (2.75, 4.0): 5e4}.items():
        assert profile.mean(start, end)[4] == pytest.approx(mean, abs=1e-9), (start, end)
    assert np.count_nonzero(profile.mean(0.0, 9.0)) == 1


@pytest.mark.parametrize('text, message', [
    ('', 'empty'),
    (b'\x00\xff\xfe' * 50, 'not UTF-8'),
    ('p1\n0\n', "column 't' (time, s) missing"),
    ('t\n0\n', 'no actuator column'),
    ('t,p1,p1\n0,0,0\n', 'given twice'),
    ('t,q1\n0,0\n', "unknown column 'q1'"),
    ('t,p1\n', 'no rows'),
    ('t,p1\n0,0\n1\n', 'line 3: 1 value, the header has 2 columns'),
    ('t,p1\n0,zero\n', "line 2, column 'p1': 'zero' is not a number"),
    ('t,p1\n0,nan\n', "line 2, column 'p1': must be finite"),
    ('t,p1\n0,0\n2,0\n1,0\n', "line 4, column 't': times must be >= 0 s and not decrease"),
    ('t,p1\n-1,0\n', 'got -1 s'),
    ('t,p1\n0,2e5\n', '200000 Pa is outside the pressure range [0, 120000] Pa'),
])
def test_bad_profiles_name_file_line_and_column(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as error:
        read_profile(path, NAMES, LIMITS, 'pressure', 'Pa')
    assert str(error.value).startswith(str(path)) and message in str(error.value)


def test_a_missing_profile_is_refused(tmp_path):
    with pytest.raises(ProfileError, match='cannot read'):
        read_profile(tmp_path / 'missing.csv', NAMES, LIMITS)


def test_the_shipped_profiles_read():
    for name, end in (('steps', 34.0), ('ramps', 38.0)):
        profile = read_profile(ROOT / 'config' / f'bha_pressure_{name}.csv', NAMES, LIMITS,
                               'pressure', 'Pa')
        assert profile.end == end and profile.values.max() == 8e4
