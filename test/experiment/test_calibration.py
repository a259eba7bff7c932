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
Calibration and validation against synthetic experiments with hidden parameters.

The expectations are the hidden moduli the bag was made with and the injected
noise level, never numbers computed by the code under test.
"""

import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest

from tendon_robot_sim import __version__, cli, default_robot_file
from tendon_robot_sim.experiment.calibration import (CalibrationError, replay_dynamic, validate,
                                                     write_report)
from tendon_robot_sim.experiment.experiment import (load_recording, read_recording, Recording,
                                                    synth_experiment, synth_step_response,
                                                    write_holds_csv)
from tendon_robot_sim.experiment.fit_parameters import with_parameters
from tendon_robot_sim.experiment.fitting import calibrate
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.tendon_robot import load_robot

NOISE = 2e-4          # m, per axis and sample
SAMPLES = 150         # tip samples per hold: 3 s at 50 Hz
E_FACTOR, G_FACTOR = 1.15, 0.9


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


@pytest.fixture(scope='module')
def hidden(robot):
    return robot.with_changes(youngs_modulus=robot.rod.youngs_modulus * E_FACTOR,
                              shear_modulus=robot.rod.shear_modulus * G_FACTOR)


@pytest.fixture(scope='module')
def bag(hidden, tmp_path_factory):
    path = tmp_path_factory.mktemp('experiment') / 'bag'
    synth_experiment(path, hidden, noise=NOISE, seed=11)
    return path


@pytest.fixture(scope='module')
def holds(bag, robot):
    return load_recording(bag, robot)


def _check_recovered(values, intervals, hidden):
    for value, (low, high), true in zip(values, intervals,
                                        (hidden.rod.youngs_modulus, hidden.rod.shear_modulus)):
        assert value == pytest.approx(true, rel=0.02)
        assert low < true < high


def test_calibration_recovers_hidden_moduli_on_local_processes(robot, hidden, holds):
    result = calibrate(robot, holds, ['youngs_modulus', 'shear_modulus'], workers=2)
    _check_recovered(result.values, result.intervals, hidden)
    assert result.robot.rod.youngs_modulus == result.values[0]
    assert result.robot.rod.shear_modulus == result.values[1]
    # the hold means carry noise NOISE / sqrt(SAMPLES) per axis: the fit gets down to it
    assert result.rms_after < 3 * NOISE / math.sqrt(SAMPLES) * math.sqrt(3)
    assert result.rms_before > 50 * result.rms_after


def test_calibration_on_a_dask_cluster(robot, hidden, holds):
    distributed = pytest.importorskip('distributed')
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        result = calibrate(robot, holds, ['youngs_modulus', 'shear_modulus'],
                           scheduler=cluster.scheduler_address, progress=False)
    _check_recovered(result.values, result.intervals, hidden)


def test_calibration_of_a_tendon_offset_and_the_vertebra_mass(robot, tmp_path):
    hidden = with_parameters(robot, {'t1.offset': 0.0165, 'vertebra_mass': 0.0023})
    synth_experiment(tmp_path / 'bag', hidden, noise=NOISE, seed=12)
    holds = load_recording(tmp_path / 'bag', robot)
    result = calibrate(robot, holds, ['t1.offset', 'vertebra_mass'], workers=1,
                       progress=False)
    for value, (low, high), true in zip(result.values, result.intervals, (0.0165, 0.0023)):
        assert value == pytest.approx(true, rel=0.02)
        assert low < true < high
    assert result.robot.tendons[1].offset == result.robot.tendons[1].end_offset == \
        result.values[0]
    assert result.robot.vertebra_mass == result.values[1]


def test_a_fitted_offset_stays_within_the_discs(robot, tmp_path):
    """Holes at the rim: the fit's trials stop there, where the loader's rule refuses more."""
    rim = robot.disc_radius
    hidden = with_parameters(robot, {'t1.offset': rim})
    synth_experiment(tmp_path / 'bag', hidden, noise=NOISE, seed=12)
    holds = load_recording(tmp_path / 'bag', robot)
    result = calibrate(robot, holds, ['t1.offset'], workers=1, progress=False)
    assert result.values[0] <= rim and result.values[0] == pytest.approx(rim, rel=0.02)


def test_validation_error_matches_the_injected_noise(robot, hidden, holds):
    """
    With the true robot the error is the noise of a hold mean; with E x 1.3 it is far larger.

    The noise of a hold mean is |N(0, s^2 I3)| with s = NOISE / sqrt(SAMPLES), whose mean is s
    sqrt(8 / pi).
    """
    expected = NOISE / math.sqrt(SAMPLES) * math.sqrt(8.0 / math.pi)
    result = validate(hidden, holds)
    assert 0.6 * expected < result.mean < 1.6 * expected
    assert result.max >= result.rms >= result.mean
    wrong = validate(hidden.with_changes(youngs_modulus=hidden.rod.youngs_modulus * 1.3),
                     holds)
    assert wrong.mean > 50 * expected
    np.testing.assert_allclose(wrong.errors_percent, 100 * wrong.errors / 0.25)


def test_calibrate_and_validate_commands(robot, hidden, bag, holds, tmp_path, capsys,
                                         monkeypatch):
    monkeypatch.setenv('TENDON_ROBOT_SIM_PROGRESS', '1')    # the bar into capsys's stderr
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(bag), '--fit', 'youngs_modulus,shear_modulus',
                     '--out', str(out), '--workers', '1']) == 0
    calibrated = load_robot(out)
    # what produced it, for a rerun: a comment (a key would not load)
    assert out.read_text().splitlines()[0] == f'# calibrated by tendon_robot_sim {__version__}'
    assert calibrated.rod.youngs_modulus == pytest.approx(hidden.rod.youngs_modulus, rel=0.02)
    assert calibrated.rod.shear_modulus == pytest.approx(hidden.rod.shear_modulus, rel=0.02)
    printed = capsys.readouterr()
    assert '95 % interval' in printed.out
    # the bar has a total and the time left of the step under way ("18set" had neither)
    solved = int(re.search(r'(\d+) parameter sets solved', printed.out).group(1))
    bars = re.findall(r'(\d+)/(\d+) sets so far \|[^|]*\| \[[0-9:]+<([0-9:?]+) this step',
                      printed.err)
    assert bars and bars[-1][:2] == (str(solved), str(solved))
    assert any(left != '?' for *_, left in bars)

    csv = tmp_path / 'holds.csv'
    write_holds_csv(csv, robot, holds)
    report = tmp_path / 'report'
    assert cli.main(['validate', str(csv), '--robot', str(out), '--report', str(report),
                     '--workers', '1']) == 0
    text = (report / 'report.md').read_text()
    assert f'Written by tendon_robot_sim {__version__}.' in text.splitlines()[:4], text
    assert text.count('\n| ') >= len(holds) + 3   # the summary table and one row per hold
    for png in ('tips.png', 'error_vs_tension.png'):
        assert (report / png).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_the_hold_options_find_the_points_of_a_bag(bag, holds, tmp_path, capsys):
    """Given, as they are where they apply, the options reach the search for holds."""
    argv = ['validate', str(bag), '--report', str(tmp_path / 'report'), '--workers', '1']

    def points(*options):
        assert cli.main(argv + ['--json', *options]) == 0
        return json.loads(capsys.readouterr().out.strip().splitlines()[-1])['samples']
    # the documented defaults, given, find the holds they find when left out
    assert points('--hold-time', '1', '--tip-tolerance', '0.002', '--points', 'holds') == \
        len(holds)
    assert points('--points', 'samples') > 10 * len(holds)
    for options, says in ((['--hold-time', '99'], 'within 2 mm for 99 s'),
                          (['--tip-tolerance', '1e-9'], 'within 1e-06 mm for 1 s')):
        assert cli.main(argv + options) == 2
        assert f'{bag}: no holds (commands constant and tip {says})' in capsys.readouterr().err
    assert cli.main(['calibrate', str(bag), '--fit', 'youngs_modulus', '--out',
                     str(tmp_path / 'c.yaml'), '--hold-time', '99']) == 2
    assert 'within 2 mm for 99 s' in capsys.readouterr().err


def test_bad_inputs_are_one_line_errors(robot, holds, tmp_path, capsys):
    csv = tmp_path / 'bad.csv'
    csv.write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.2,zero,0\n')
    assert cli.main(['validate', str(csv), '--report', str(tmp_path / 'r')]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tendon-robot-sim validate: error: {csv}: line 2, column 'tip_y': 'zero' is not "
        'a number')
    with pytest.raises(CalibrationError, match="fit: unknown parameter 'stiffness'"):
        calibrate(robot, holds, ['stiffness'], workers=1)
    assert cli.main(['synth-experiment', str(tmp_path / 'b'), '--experiment', 'step',
                     '--damping-ratio', '1.5']) == 2
    assert capsys.readouterr().err.strip() == (
        'tendon-robot-sim synth-experiment: error: --damping-ratio: must be in (0, 1), '
        'got 1.5')
    assert cli.main(['calibrate', str(csv), '--model', 'dynamic', '--fit', 'damping',
                     '--out', str(tmp_path / 'c.yaml')]) == 2
    assert 'fitting the damping needs a recorded trajectory' in capsys.readouterr().err
    with pytest.raises(CalibrationError, match='bounds: youngs_modulus needs'):
        calibrate(robot, holds, ['youngs_modulus'], bounds={'youngs_modulus': (1e3, 1e4)},
                  workers=1)


@pytest.mark.parametrize('model, fit', [('cosserat', 'youngs_modulus,t0.motor_distance'),
                                        ('discrete', 't0.motor_distance')])
def test_a_parameter_with_no_effect_is_refused(bag, tmp_path, capsys, model, fit):
    """
    A stiff tendon's motor_distance moves no tip under tension setpoints.

    The fit never moved it: calibrate wrote it at its start, 2.5 mm where the file has 0,
    +- inf, said it "ended at its lower bound (0)" and exited 0.
    """
    out = tmp_path / 'calibrated.yaml'
    assert cli.main(['calibrate', str(bag), '--fit', fit, '--model', model, '--out', str(out),
                     '--workers', '1']) == 2
    assert capsys.readouterr().err.strip() == (
        'tendon-robot-sim calibrate: error: fit: t0.motor_distance: no effect on the fitted '
        "points at the robot file's values (a change moves no tip, so the fit cannot place "
        'it); leave it out of --fit')
    assert not out.exists()


@pytest.mark.parametrize('extra, message', [
    (['--scheduler', 'foo'], "--scheduler: 'foo' is not tcp://HOST:PORT or tls://HOST:PORT"),
    (['--scheduler', 'http://x:1'], "--scheduler: 'http://x:1' is not tcp://HOST:PORT"),
    (['--scheduler', 'tcp://localhost:8786', '--tls-ca-file', 'ca.pem', '--tls-cert', 'c.pem',
      '--tls-key', 'k.pem'], '--scheduler: TLS files need a tls:// address'),
    (['--tls-ca-file', 'ca.pem'], '--tls-ca-file, --tls-cert and --tls-key need --scheduler'),
])
def test_bad_scheduler_options_are_one_line_errors(tmp_path, capsys, extra, message):
    csv = tmp_path / 'holds.csv'
    csv.write_text('t0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.25,0,0\n')
    assert cli.main(['validate', str(csv), '--report', str(tmp_path / 'r'), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith('tendon-robot-sim validate: error: ') and message in err
    assert err.count('\n') == 1


def test_a_binary_file_given_as_csv_is_a_one_line_error(tmp_path, capsys):
    binary = tmp_path / 'holds.csv'
    binary.write_bytes(bytes(range(256)) * 64)
    assert cli.main(['validate', str(binary), '--report', str(tmp_path / 'r')]) == 2
    err = capsys.readouterr().err
    assert f'{binary}: not UTF-8 text' in err and err.count('\n') == 1


@pytest.mark.skipif(shutil.which('openssl') is None, reason='needs openssl for certificates')
def test_validation_on_a_tls_dask_cluster(robot, hidden, holds, tmp_path, capsys):
    distributed = pytest.importorskip('distributed')
    from distributed.security import Security
    # The cluster's self-signed certificate is its authority and every party's certificate;
    # a stranger has another one.

    def certificate(name):
        cert, key = tmp_path / f'{name}.pem', tmp_path / f'{name}.key'
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days',
                        '1', '-subj', '/CN=localhost', '-keyout', str(key), '-out', str(cert)],
                       check=True, capture_output=True)
        return cert, key
    cert, key = certificate('cluster')
    stranger, stranger_key = certificate('stranger')
    security = Security(tls_ca_file=str(cert), tls_scheduler_cert=str(cert),
                        tls_scheduler_key=str(key), tls_worker_cert=str(cert),
                        tls_worker_key=str(key), tls_client_cert=str(cert),
                        tls_client_key=str(key), require_encryption=True)
    csv = tmp_path / 'holds.csv'
    write_holds_csv(csv, robot, holds[:3])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  protocol='tls://', security=security,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith('tls://')
        argv = ['validate', str(csv), '--report', str(tmp_path / 'r'), '--scheduler', address]
        # A client whose certificate the cluster's authority did not sign is not let in.
        assert cli.main(argv + ['--tls-ca-file', str(cert), '--tls-cert', str(stranger),
                                '--tls-key', str(stranger_key)]) == 2
        assert 'cannot connect' in capsys.readouterr().err
        assert cli.main(argv + ['--tls-ca-file', str(cert), '--tls-cert', str(cert),
                                '--tls-key', str(key)]) == 0
    assert '3 holds, model discrete' in capsys.readouterr().out


def test_dynamic_replay_follows_the_recorded_commands(robot, holds, tmp_path):
    """
    A replay follows 0.5 s at rest, then 2 N on t1 from t = 0.5 s for 2 s (50 Hz).

    The tips at rest come from a separate simulator run each. The replay matches the rest tip
    before the step, has barely moved 20 ms after it, and has settled on the 2 N tip at the end
    (damping ratio 0.5, so that 2 s are enough).
    """
    robot = robot.with_changes(damping={'ratio': 0.5})
    steady = []
    for tensions in ([0, 0, 0, 0], [0, 2, 0, 0]):
        simulator = TendonSimulator(robot)
        simulator.set_tensions(tensions)
        steady.append(simulator.run_until_steady(20.0).tip_position)
    times = np.arange(0, 2.5, 0.02)
    commands = np.where((times >= 0.5 - 1e-9)[:, None], [0, 2, 0, 0], [0, 0, 0, 0])
    tips = np.where((times >= 0.5 - 1e-9)[:, None], steady[1], steady[0])
    recording = Recording(kind='tension', source='test', command_topic='tendon/setpoint',
                          command_times=times, commands=commands.astype(float),
                          tip_times=times + 0.001, tips=tips)
    trajectory = replay_dynamic(robot, recording)
    step = int(np.searchsorted(times, 0.5))
    np.testing.assert_allclose(trajectory.simulated[step - 1], steady[0], atol=5e-5)
    moved = np.linalg.norm(trajectory.simulated[step] - steady[0])
    assert moved < 0.2 * np.linalg.norm(steady[1] - steady[0])
    np.testing.assert_allclose(trajectory.simulated[-1], steady[1], atol=1e-4)
    assert trajectory.errors[step] > 0.8 * np.linalg.norm(steady[1] - steady[0])
    path = write_report(tmp_path / 'report', validate(robot, holds), trajectory=trajectory)
    assert 'Dynamic replay' in path.read_text()
    assert (path.parent / 'trajectory.png').stat().st_size > 0


def test_damping_is_identified_from_a_step_response(tmp_path):
    """
    The damping ratio fitted to a 2 N step response is the hidden one, within the noise.

    A 2 N step on t0 is simulated on a 10-element robot with a hidden damping ratio of 0.15:
    fitting the damping alone (from the file's 0.1) to the replayed trajectory brings the true
    value inside a narrow 95 % interval and the error down to the noise.
    """
    robot = load_robot(default_robot_file()).with_changes(elements=10)
    truth = robot.with_changes(damping={'ratio': 0.15})
    step, samples = synth_step_response(tmp_path / 'step', truth, noise=2e-4, seed=5,
                                        after=1.5)
    assert step.tolist() == [2.0, 0.0, 0.0, 0.0]
    assert [s[1][0] for s in samples[24:27]] == [0.0, 2.0, 2.0]          # at 0.5 s
    recording = read_recording(tmp_path / 'step', robot)
    assert len(recording.tips) == len(samples) == 100
    result = calibrate(robot, [], ['damping'], model='dynamic', workers=1, progress=False,
                       recording=recording)
    (low, high), = result.intervals
    assert low <= 0.15 <= high and high - low < 0.01, result.summary()
    assert result.rms_after < 0.5e-3 < 2e-3 < result.rms_before
    assert result.robot.rod.damping.ratio == result.values[0]            # still a ratio
    with pytest.raises(CalibrationError, match='damping has no static effect'):
        calibrate(robot, [], ['damping'], model='dynamic', workers=1, progress=False)
    with pytest.raises(CalibrationError, match='needs model dynamic'):
        calibrate(robot, [], ['damping'], workers=1, progress=False, recording=recording)


def test_kelvin_voigt_damping_is_identified_from_a_step_response(tmp_path):
    """
    The Kelvin-Voigt bending/torsion coefficient fitted to a step response is the hidden one.

    The steel robot (no discs: the implicit integrator records and replays it) with a hidden
    Bbt = 2e-3 N m^2 s (a first-mode damping ratio of about 0.2) steps to 2 N on t0; the fit
    starts from the file's 1e-3.
    """
    from tendon_robot_sim import share_dir
    steel = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml')
    robot = steel.with_changes(damping={'shear_extension': [0.0] * 3,
                                        'bending_torsion': [1e-3] * 3})
    truth = robot.with_changes(damping={'shear_extension': [0.0] * 3,
                                        'bending_torsion': [2e-3] * 3})
    synth_step_response(tmp_path / 'step', truth, noise=2e-4, seed=7, before=0.2, after=0.8)
    recording = read_recording(tmp_path / 'step', robot)
    result = calibrate(robot, [], ['bending_torsion'], model='dynamic', workers=1,
                       progress=False, recording=recording)
    (low, high), = result.intervals
    assert low <= 2e-3 <= high and high - low < 0.2e-3, result.summary()
    assert result.rms_after < 0.5e-3 < result.rms_before
    assert result.robot.rod.damping.bending_torsion == (result.values[0],) * 3
    with pytest.raises(CalibrationError, match='bending_torsion has no static effect'):
        calibrate(robot, [], ['bending_torsion'], model='dynamic', workers=1, progress=False)
    with pytest.raises(CalibrationError, match='damping: this robot has the Kelvin-Voigt form'):
        calibrate(robot, [], ['damping'], model='dynamic', workers=1, progress=False,
                  recording=recording)


def _fit_step(tmp_path, robot, truth, name, tension=2.0):
    """Record a step of ``truth`` (0.2 mm noise); fit ``name`` to it, starting from ``robot``."""
    samples = synth_step_response(tmp_path / 'step', truth, tension=tension, noise=2e-4, seed=7,
                                  before=0.2, after=0.8)[1]
    recording = read_recording(tmp_path / 'step', robot)
    # the replay at the truth takes the recording's steps: its noiseless tips exactly (a tie
    # of half a step, the tip stamped 1 ms after its setpoint, once put some 1.5 mm off)
    truth_tips = replay_dynamic(truth, recording, settle_time=0.0).simulated
    np.testing.assert_allclose(truth_tips, [tip for _, _, tip in samples], atol=1e-12)
    return calibrate(robot, [], [name], model='dynamic', workers=1, progress=False,
                     recording=recording)


def test_drag_is_identified_from_a_step_response(tmp_path):
    """
    The square-law drag fitted to a step response of the steel robot is the hidden one.

    Hidden C = 0.2 kg/m^2 (a swing of 40 mm loses about what a damping ratio of 0.1 would,
    docs/tendon_robot.md), little material damping; the fit starts from 0.1.
    """
    from tendon_robot_sim import share_dir
    steel = load_robot(share_dir() / 'config' / 'steel_rod_robot.yaml')
    kelvin_voigt = {'shear_extension': [0.0] * 3, 'bending_torsion': [2e-4] * 3}
    result = _fit_step(tmp_path, steel.with_changes(damping=kelvin_voigt, drag=[0.1] * 3),
                       steel.with_changes(damping=kelvin_voigt, drag=[0.2] * 3), 'drag')
    (low, high), = result.intervals
    assert low <= 0.2 <= high and high - low < 0.03, result.summary()
    assert result.rms_after < 0.5e-3 < result.rms_before
    assert result.robot.rod.drag == (result.values[0],) * 3


def test_shear_extension_damping_is_identified_from_a_step_response(tmp_path):
    """
    The Kelvin-Voigt shear/extension coefficient fitted to a step response is the hidden one.

    It damps the rod's stretch, so the robot is one whose stretch shows: the silicone rod
    without discs (EA = 1.6 kN), its tendons 1 mm from the axis, stepped to 20 N: 3 mm of
    compression that creeps in over Bse / EA = 0.25 s with the hidden Bse = 400 N s. The
    fit starts from 200 N s.
    """
    from tendon_robot_sim.models.tendon_robot import robot_from_dict
    data = load_robot(default_robot_file()).to_dict()
    del data['vertebrae']
    for tendon in data['tendons']:
        tendon['offset'] = tendon['end_offset'] = 0.001
    silicone = robot_from_dict(data)

    def robot(bse):
        return silicone.with_changes(damping={'shear_extension': [bse] * 3,
                                              'bending_torsion': [1.6e-4] * 3})
    result = _fit_step(tmp_path, robot(200.0), robot(400.0), 'shear_extension', tension=20.0)
    # within 10 %: three standard deviations of the fit under this noise (its 95 % interval
    # is +-6 %); 200 N s is 50 % off
    assert result.values[0] == pytest.approx(400.0, rel=0.1), result.summary()
    assert result.rms_after < 0.4e-3 < result.rms_before
    assert result.robot.rod.damping.shear_extension == (result.values[0],) * 3


def test_dynamic_replay_follows_the_applied_tensions(robot):
    """
    Setpoints of 0 N the stack applied as 2 N on t1 (tendon/state): the replay follows those.

    A hardware bridge applies its min_tension for a setpoint below it; the replay of the
    setpoints would rest where the robot was pulled.
    """
    robot = robot.with_changes(damping={'ratio': 0.5})
    simulator = TendonSimulator(robot)
    simulator.set_tensions([0, 2, 0, 0])
    pulled = simulator.run_until_steady(20.0).tip_position
    times = np.arange(0, 2.0, 0.02)
    recording = Recording(kind='tension', source='test', command_topic='tendon/setpoint',
                          command_times=times, commands=np.zeros((times.size, 4)),
                          tip_times=times + 0.001, tips=np.tile(pulled, (times.size, 1)),
                          applied_times=times + 0.0005,
                          applied=np.tile([0.0, 2.0, 0.0, 0.0], (times.size, 1)))
    trajectory = replay_dynamic(robot, recording)
    np.testing.assert_allclose(trajectory.simulated, recording.tips, atol=1e-4)
