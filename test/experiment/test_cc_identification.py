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

"""Identification of the bellows robot's CC dynamics from synthetic experiments."""

from dataclasses import replace

import numpy as np
import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.cli import main
from tendon_robot_sim.experiment.identification import (IdentificationError, identify_damping,
                                                        identify_stiffness, read_samples, Run)
from tendon_robot_sim.experiment.trunk_validation import write_run
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import load_bellows_robot
import yaml

BHA = load_bellows_robot(share_dir() / 'config' / 'bionic_handling_assistant.yaml')


def with_stiffness(robot, factor):
    """
    Return the hidden truth: bellows stiffnesses scaled unevenly, bending stiffness by 1.2 factor.

    The spline stiffness is known (see identify_stiffness).
    """
    return replace(robot, sections=tuple(
        replace(s, bending_stiffness=s.bending_stiffness * factor * 1.2,
                bellows=tuple(replace(b, stiffness=b.stiffness * factor * (0.9 + 0.1 * i))
                              for i, b in enumerate(s.bellows)))
        for s in robot.sections))


def with_damping(robot, factor):
    """Hidden truth: every damper scaled by ``factor``."""
    return replace(robot, sections=tuple(
        replace(s, spline_damping=s.spline_damping * factor,
                bellows=tuple(replace(b, damping=b.damping * factor) for b in s.bellows))
        for s in robot.sections))


def static_points(robot, count=14, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    model = CCDynamics.from_bellows_robot(robot)
    pressures = rng.uniform(0.0, 1e5, (count, 9)) * (rng.random((count, 9)) < 0.6)
    lengths = np.array([model.lengths @ model.equilibrium(p) for p in pressures])
    return pressures, lengths + rng.normal(0.0, noise, lengths.shape)


def truth_values(robot):
    return np.array([v for s in robot.sections
                     for v in [b.stiffness for b in s.bellows] + [s.bending_stiffness]])


def sampled_run(model, pressures, dt):
    """
    Simulate a run from rest, pressures[k] held over [k dt, (k + 1) dt), sampled every dt.

    Integrated at the simulator's 5 ms step, the step the damping fit integrates with.
    """
    steps = int(round(dt / 0.005))
    return model.simulate(lambda t: pressures[min(int(t / dt + 1e-9), len(pressures) - 1)],
                          dt * (len(pressures) - 1), dt=dt / steps,
                          x0=model.equilibrium(np.zeros(9)), record_every=steps)


def test_stiffnesses_from_exact_static_points_are_exact():
    truth = with_stiffness(BHA, 1.3)
    estimate = identify_stiffness(BHA, *static_points(truth))
    np.testing.assert_allclose(estimate.values, truth_values(truth), rtol=1e-6)
    assert estimate.rms_after < 1e-6 * estimate.rms_before


def test_stiffness_intervals_cover_the_truth_with_noisy_lengths():
    truth = with_stiffness(BHA, 0.8)
    estimate = identify_stiffness(BHA, *static_points(truth, count=30, noise=2e-4, seed=4))
    low, high = estimate.intervals.T
    inside = (low <= truth_values(truth)) & (truth_values(truth) <= high)
    assert inside.mean() >= 0.75           # 95 % intervals: most of the 12 cover
    assert np.all(high - low > 0.0)
    assert 'section1.p1.stiffness' in estimate.summary()


def test_too_few_points_are_rejected():
    with pytest.raises(IdentificationError, match='do not determine'):
        identify_stiffness(BHA, *static_points(BHA, count=1))


def test_dampers_from_a_step_response():
    truth = with_damping(BHA, 1.6)
    model = CCDynamics.from_bellows_robot(truth)
    dt, count = 0.01, 80
    step = np.where(np.arange(9) % 4 == 0, 8e4, 0.0)
    pressures = np.array([np.zeros(9)] * 5 + [step] * (count - 5))
    run = sampled_run(model, pressures, dt)
    estimate = identify_damping(BHA, run.times, pressures, run.actuator_lengths)
    expected = np.array([v for s in truth.sections
                         for v in (s.bellows[0].damping, s.spline_damping)])
    np.testing.assert_allclose(estimate.values, expected, rtol=0.02)
    assert estimate.rms_after < 0.01 * estimate.rms_before


def test_samples_csv(tmp_path):
    pressures, lengths = static_points(BHA, count=3)
    names = BHA.actuator_names
    rows = [','.join(names + [n + '_length' for n in names])]
    rows += [','.join(f'{v:.17g}' for v in np.concatenate((p, q)))
             for p, q in zip(pressures, lengths)]
    path = tmp_path / 'points.csv'
    path.write_text('\n'.join(rows) + '\n')
    times, read_p, read_q = read_samples(path, BHA)
    assert times is None
    np.testing.assert_array_equal(read_p, pressures)
    np.testing.assert_array_equal(read_q, lengths)
    path.write_text('p1,p2\n1,2\n')
    with pytest.raises(IdentificationError, match='missing columns'):
        read_samples(path, BHA)


def write_csv(path, pressures, lengths, times=None):
    names = BHA.actuator_names
    header = names + [n + '_length' for n in names] + (['time'] if times is not None else [])
    rows = [','.join(header)]
    for i, (p, q) in enumerate(zip(pressures, lengths)):
        extra = [times[i]] if times is not None else []
        rows.append(','.join(f'{v:.17g}' for v in np.concatenate((p, q, extra))))
    path.write_text('\n'.join(rows) + '\n')


def test_calibrate_command_identifies_a_bellows_robot(tmp_path, capsys):
    truth = with_damping(with_stiffness(BHA, 1.2), 1.5)
    write_csv(tmp_path / 'points.csv', *static_points(truth, count=12))
    model = CCDynamics.from_bellows_robot(truth)
    dt, count = 0.01, 60
    pressures = np.array([np.zeros(9)] * 3 + [np.full(9, 3e4) * (np.arange(9) % 2)] * (count - 3))
    run = sampled_run(model, pressures, dt)
    write_csv(tmp_path / 'step.csv', pressures, run.actuator_lengths, run.times)
    out = tmp_path / 'calibrated.yaml'
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    assert main(['calibrate', str(tmp_path / 'points.csv'), '--robot', path,
                 '--fit', 'stiffness,damping', '--step-response', str(tmp_path / 'step.csv'),
                 '--out', str(out)]) == 0
    assert 'section1.p1.stiffness' in capsys.readouterr().out
    calibrated = load_bellows_robot(out)
    np.testing.assert_allclose(truth_values(calibrated), truth_values(truth), rtol=1e-5)
    for got, want in zip(calibrated.sections, truth.sections):
        assert got.bellows[0].damping == pytest.approx(want.bellows[0].damping, rel=0.02)
        assert got.spline_damping == pytest.approx(want.spline_damping, rel=0.05)
    assert main(['calibrate', str(tmp_path / 'points.csv'), '--robot', path,
                 '--fit', 'damping', '--out', str(out)]) == 2
    assert '--step-response' in capsys.readouterr().err


def test_a_bag_without_tendon_state_is_refused_naming_the_topic(tmp_path, capsys):
    # A real rosbag2 bag of the commanded pressures only: what a recording of the setpoint
    # topic alone gives; identification needs the measured state.
    from rosbags.typesys import get_typestore
    from tendon_robot_sim.experiment.bag import BagWriter, DEFAULT_STORE, OfferedQos

    store = get_typestore(DEFAULT_STORE)
    types = store.types
    stamp = types['builtin_interfaces/msg/Time'](sec=1, nanosec=0)
    msg = types['sensor_msgs/msg/JointState'](
        header=types['std_msgs/msg/Header'](stamp=stamp, frame_id=''),
        name=BHA.actuator_names, position=np.zeros(0), velocity=np.zeros(0),
        effort=np.full(9, 5e4))
    bag = tmp_path / 'setpoints_only'
    with BagWriter(bag) as writer:
        writer.add_topic('/tendon/setpoint', 'sensor_msgs/msg/JointState', OfferedQos())
        writer.write('/tendon/setpoint', 10**9,
                     bytes(store.serialize_cdr(msg, 'sensor_msgs/msg/JointState')))
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    assert main(['calibrate', str(bag), '--robot', path, '--fit', 'stiffness',
                 '--out', str(tmp_path / 'out.yaml')]) == 2
    error = capsys.readouterr().err
    assert 'needs one tendon/state topic' in error and "'/tendon/setpoint'" in error


def test_the_hold_options_find_the_static_points_of_a_bag(tmp_path, capsys):
    """A bag at rest for 3 s, lengths wobbling by 0.3 mm: the options decide its static point."""
    times = np.arange(151) * 0.02
    wobble = 1e-4 * (np.arange(len(times)) % 2)       # per bellows, every other sample
    lengths = CCDynamics.from_bellows_robot(BHA).straight_lengths + wobble[:, None]
    bag = tmp_path / 'rest'
    write_run(bag, BHA, Run('rest', times, np.zeros((len(times), 9)), lengths, times,
                            np.zeros((len(times), 3))))
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    argv = ['calibrate', str(bag), '--robot', path, '--out', str(tmp_path / 'out.yaml')]
    for options, says in (
            # the defaults (1 s, 2 mm) find the rest, and a step after it is looked for
            (['--fit', 'damping'], 'no pressure step after the first static point'),
            (['--fit', 'damping', '--tip-tolerance', '1e-4'], 'within 0.1 mm for 1 s'),
            (['--fit', 'stiffness', '--hold-time', '99'], 'within 2 mm for 99 s')):
        assert main(argv + options) == 2
        err = capsys.readouterr().err
        assert f'{bag}: no ' in err and says in err, err


def test_a_run_whose_state_is_of_another_type_is_refused_naming_it(tmp_path):
    """It failed deep in the reading (no ``header`` on the message): an internal error."""
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, OfferedQos
    from tendon_robot_sim.experiment.identification import read_run

    path = tmp_path / 'bag'
    with BagWriter(path) as bag:
        bag.add_topic('/tendon/state', 'std_msgs/msg/String', OfferedQos())
        bag.write('/tendon/state', 10 ** 9, BagMessages(bag.typestore).text('x'))
    with pytest.raises(IdentificationError) as error:
        read_run(path, BHA)
    assert str(error.value) == (f'{path}: /tendon/state of type std_msgs/msg/String, '
                                'expected sensor_msgs/msg/JointState')


def calibrate_dampers(tmp_path, capsys, name, pressures, lengths, times):
    """Run ``calibrate --fit damping`` of the BHA on a CSV step response; (exit code, stderr)."""
    write_csv(tmp_path / name, pressures, lengths, times)
    write_csv(tmp_path / 'points.csv', *static_points(BHA, count=12))
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    code = main(['calibrate', str(tmp_path / 'points.csv'), '--robot', path, '--fit',
                 'damping', '--step-response', str(tmp_path / name),
                 '--out', str(tmp_path / 'out.yaml')])
    assert not (tmp_path / 'out.yaml').exists()
    return code, capsys.readouterr().err


def test_a_step_response_without_a_pressure_step_is_refused(tmp_path, capsys):
    # The robot at rest under steady pressures: nothing in the run depends on the dampers.
    # Before, the fit returned the dampers it started from with intervals 0 .. inf, exit 0.
    model = CCDynamics.from_bellows_robot(BHA)
    pressures = np.array([np.full(9, 2e4)] * 20)
    rest = model.lengths @ model.equilibrium(pressures[0])
    code, err = calibrate_dampers(tmp_path, capsys, 'still.csv', pressures,
                                  np.tile(rest, (20, 1)), np.arange(20) * 0.005)
    assert code == 2
    assert 'still.csv: no pressure step' in err and 'Traceback' not in err


@pytest.mark.parametrize('label, times, line, what', [
    ('a time repeated', [0.0, 0.005, 0.01, 0.01, 0.02, 0.025], 5, 'repeats'),
    ('a time going back', [0.0, 0.005, 0.01, 0.015, 0.002, 0.025], 6, 'is before'),
])
def test_a_step_response_whose_times_do_not_increase_is_refused_naming_the_line(
        label, times, line, what, tmp_path, capsys):
    """
    A time that repeats or goes back in a ``--step-response`` CSV, named by line and column.

    It was refused as ``times: need at least 3 increasing samples``: no file, no option, no
    line, and untrue of a run of thousands of samples with one bad time.
    """
    model = CCDynamics.from_bellows_robot(BHA)
    pressures = np.array([np.zeros(9)] * 2 + [np.full(9, 3e4)] * 4)
    rest = model.lengths @ model.equilibrium(pressures[0])
    code, err = calibrate_dampers(tmp_path, capsys, 'step.csv', pressures,
                                  np.tile(rest, (6, 1)), times)
    assert code == 2 and err.count('\n') == 1, err
    assert (f"--step-response: {tmp_path / 'step.csv'}: line {line}, column 'time': the time "
            f'{what}') in err, err
    # validate reads the same run, the same way
    write_csv(tmp_path / 'run.csv', pressures, np.tile(rest, (6, 1)), times)
    assert main(['validate', str(tmp_path / 'run.csv'), '--robot',
                 str(share_dir() / 'config' / 'bionic_handling_assistant.yaml'), '--report',
                 str(tmp_path / 'report')]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert f"{tmp_path / 'run.csv'}: line {line}, column 'time': the time {what}" in err, err


def test_a_damping_fit_that_goes_astray_says_so(tmp_path, capsys):
    # A robot twice as stiff as described, its dampers fitted without its stiffnesses: the
    # unbounded fit pulled a damper to where the model cannot be integrated (beyond the
    # loader's 1e6 N s/m). Before that, the message was the integrator's, 'try a dt below
    # 0.000156 s', an option calibrate does not have. Within the loader's range the spline
    # dampers fall to nothing, and each says so, naming the cure.
    model = CCDynamics.from_bellows_robot(with_stiffness(BHA, 2.0))
    step = np.where(np.arange(9) % 4 == 0, 8e4, 0.0)
    pressures = np.array([np.zeros(9)] * 3 + [step] * 97)
    run = sampled_run(model, pressures, 0.01)
    write_csv(tmp_path / 'step.csv', pressures, run.actuator_lengths, run.times)
    write_csv(tmp_path / 'points.csv', *static_points(BHA, count=12))
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    out = tmp_path / 'out.yaml'
    assert main(['calibrate', str(tmp_path / 'points.csv'), '--robot', path, '--fit',
                 'damping', '--step-response', str(tmp_path / 'step.csv'),
                 '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    calibrated = load_bellows_robot(out)
    for section in calibrated.sections:
        described = next(s for s in BHA.sections if s.name == section.name).spline_damping
        assert section.spline_damping == pytest.approx(1e-6 * described)
        assert (f'warning: {section.name}.spline_damping ended at its lower bound '
                f'({section.spline_damping:g}): the data want it beyond; as good as none; '
                'check the model and the data (--fit stiffness,damping)') in printed, printed


def test_a_stiffness_fit_beyond_the_loaders_range_ends_at_its_bound_and_says_so(
        tmp_path, capsys):
    """
    Static points of a section that bends further than its bellows alone allow.

    The hidden section 1 has a negative bending stiffness (-3 N m/rad: made with replace, which
    the loader would refuse), so the unbounded least squares fitted one, calibrate wrote it and
    the file could not be loaded again. The fit stops at the loader's lower limit (0), says so
    in one line with the value, and the file loads.
    """
    truth = replace(BHA, sections=(replace(BHA.sections[0], bending_stiffness=-3.0),
                                   *BHA.sections[1:]))
    write_csv(tmp_path / 'points.csv', *static_points(truth, count=14))
    out = tmp_path / 'calibrated.yaml'
    path = str(share_dir() / 'config' / 'bionic_handling_assistant.yaml')
    assert main(['calibrate', str(tmp_path / 'points.csv'), '--robot', path,
                 '--fit', 'stiffness', '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    calibrated = load_bellows_robot(out)
    assert calibrated.sections[0].bending_stiffness == 0.0
    at_bound = [line for line in printed.splitlines() if 'ended at its' in line]
    assert at_bound == [
        'warning: section1.bending_stiffness ended at its lower bound (0): the data want it '
        "beyond; the robot description's limit of bending_stiffness; check the model and the "
        'data'], printed


def test_a_damper_fit_beyond_the_loaders_range_ends_at_its_bound_and_says_so(tmp_path, capsys):
    """
    A step response of a section whose bellows dampers (2e6 N s/m) exceed the loader's 1e6.

    The unbounded fit (log-scaled, from 3e5) wrote 1.87e6 N s/m, a file the loader refuses; it
    stops at 1e6 and says so in one line with the value.
    """
    def with_bellows_damping(value):
        first = BHA.sections[0]
        return replace(BHA, sections=(replace(first, bellows=tuple(
            replace(b, damping=value) for b in first.bellows)), *BHA.sections[1:]))

    step = np.where(np.arange(9) % 4 == 0, 8e4, 0.0)
    pressures = np.array([np.zeros(9)] * 5 + [step] * 20)
    run = sampled_run(CCDynamics.from_bellows_robot(with_bellows_damping(2e6)), pressures, 0.01)
    write_csv(tmp_path / 'step.csv', pressures, run.actuator_lengths, run.times)
    write_csv(tmp_path / 'points.csv', *static_points(BHA, count=12))
    start = tmp_path / 'robot.yaml'
    start.write_text(yaml.safe_dump(with_bellows_damping(3e5).to_dict(), sort_keys=False))
    out = tmp_path / 'calibrated.yaml'
    assert main(['calibrate', str(tmp_path / 'points.csv'), '--robot', str(start), '--fit',
                 'damping', '--step-response', str(tmp_path / 'step.csv'),
                 '--out', str(out)]) == 0
    printed = capsys.readouterr().out
    calibrated = load_bellows_robot(out)
    assert [b.damping for b in calibrated.sections[0].bellows] == [1e6] * 3
    at_bound = [line for line in printed.splitlines() if 'ended at its' in line]
    assert at_bound[0] == (
        'warning: section1.bellows_damping ended at its upper bound (1e+06): the data want it '
        "beyond; the robot description's limit of damping; check the model and the data"), printed
    # the other sections' dampers are as described: none of them at a bound
    assert all(line.startswith('warning: section1.') for line in at_bound), printed
