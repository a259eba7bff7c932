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
Validate a bellows robot's models against a recorded run, with Hadzic & Häseli's metrics.

Hadzic & Häseli ("Implementation of Kinematics and Dynamics of an Elephant Trunk like
Robotic Arm", ETH Zurich) validate two models on the Bionic Handling Assistant:

* the **kinematic** model: the tip computed from the measured muscle lengths
  (:class:`~tendon_robot_sim.models.trunk.kinematics.BellowsKinematics`) against the
  measured tip: tip error mean and standard deviation (their 6.3 +- 3.6 mm);
* the **dynamic** model: the Lagrange dynamics
  (:class:`~tendon_robot_sim.models.trunk.dynamics.CCDynamics`) driven by the measured
  pressures, from rest under the first of them: the muscle-length error (their 5.6 +- 3 mm
  for pressure steps, 5.9 +- 3 mm for linear pressure ramps) and the tip error (25.3 +-
  13.2 mm and 25.7 +- 23.4 mm), mean and standard deviation.

Definitions (theirs are not spelled out on the slides): a tip error is the Euclidean
distance between computed and measured tip at one tip sample; a muscle-length error is
|computed - measured| of one bellows at one sample, over every bellows and sample; mean and
standard deviation (population, ddof 0) over those values.

A run is a :class:`~tendon_robot_sim.experiment.identification.Run` with the measured tip
(a bag of ``tendon/state`` and ``tip/measured``, or a CSV file; see
:mod:`~tendon_robot_sim.experiment.identification`). :func:`synth_bellows_run` writes a
synthetic one. No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tendon_robot_sim import produced_by
from tendon_robot_sim.experiment.experiment import (STATE_TOPIC, TIP_COLUMNS, TIP_TOPIC)
from tendon_robot_sim.experiment.identification import (IdentificationError, LENGTH_SUFFIX,
                                                        Run, simulate_samples, TIME_COLUMNS)
from tendon_robot_sim.experiment.input_profile import InputProfile
from tendon_robot_sim.files.outputs import make_folder, open_output, save_figure, write_output
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.kinematics import BellowsKinematics
from tendon_robot_sim.models.trunk.robot import BellowsRobot

# Hadzic & Häseli's figures on the Bionic Handling Assistant (mean, standard deviation, mm):
# their measured data are not public, so these are quoted, not reproduced.
SLIDES = {'kinematic tip': (6.3, 3.6),
          'dynamic muscle length, steps': (5.6, 3.0),
          'dynamic muscle length, linear pressure': (5.9, 3.0),
          'dynamic tip, steps': (25.3, 13.2),
          'dynamic tip, linear pressure': (25.7, 23.4)}


@dataclass(frozen=True)
class ErrorStatistics:
    """Mean, standard deviation (ddof 0) and largest of a set of errors [m]."""

    mean: float
    std: float
    max: float     # noqa: A003 (next to mean and std)
    count: int

    @classmethod
    def of(cls, errors: np.ndarray) -> 'ErrorStatistics':
        errors = np.ravel(errors)
        return cls(float(errors.mean()), float(errors.std()), float(errors.max()), errors.size)

    def mm(self) -> str:
        return f'{self.mean * 1e3:.2f} +- {self.std * 1e3:.2f} mm'


@dataclass(frozen=True)
class BellowsValidation:
    """A bellows robot's kinematic and dynamic models against one recorded run."""

    robot: BellowsRobot
    run: Run
    kinematic_tips: np.ndarray      # (j, 3) m, from the measured muscle lengths
    simulated_lengths: np.ndarray   # (k, m) m, dynamic model at the state samples
    simulated_tips: np.ndarray      # (j, 3) m, dynamic model at the tip samples
    kinematic_tip: ErrorStatistics
    dynamic_length: ErrorStatistics
    dynamic_tip: ErrorStatistics

    def summary(self) -> str:
        run = self.run
        return '\n'.join([
            f'{run.source}: {len(run.times)} state samples and {len(run.tip_times)} tip samples '
            f'over {run.times[-1] - run.times[0]:.3g} s, robot {self.robot.name}',
            f'kinematic model (tip from the measured muscle lengths): tip error '
            f'{self.kinematic_tip.mm()} (max {self.kinematic_tip.max * 1e3:.2f} mm)',
            f'dynamic model (driven by the measured pressures): muscle-length error '
            f'{self.dynamic_length.mm()} (max {self.dynamic_length.max * 1e3:.2f} mm), tip '
            f'error {self.dynamic_tip.mm()} (max {self.dynamic_tip.max * 1e3:.2f} mm)'])


def validate_bellows(robot: BellowsRobot, run: Run, dt: float | None = None
                     ) -> BellowsValidation:
    """
    Compare both models of ``robot`` with a recorded ``run`` (see the module docstring).

    Tip samples outside the state samples' time span are left out; the measured lengths are
    interpolated linearly at the tip times. ``dt``: integration step, see
    :func:`~tendon_robot_sim.experiment.identification.simulate_samples`.
    """
    if run.tips is None:
        raise IdentificationError(f'{run.source}: no measured tip ({TIP_TOPIC} in a bag, '
                                  f'{", ".join(TIP_COLUMNS)} in a CSV file): the metrics '
                                  'compare tips')
    inside = (run.tip_times >= run.times[0]) & (run.tip_times <= run.times[-1])
    if not np.any(inside):
        raise IdentificationError(f'{run.source}: no tip sample within the '
                                  f'{run.times[-1] - run.times[0]:.3g} s of {STATE_TOPIC}')
    run = replace(run, tip_times=run.tip_times[inside], tips=run.tips[inside])
    kinematics = BellowsKinematics(robot)
    if run.lengths.shape[1] != len(kinematics.names):
        raise IdentificationError(f'{run.source}: {run.lengths.shape[1]} bellows, the robot '
                                  f'has {len(kinematics.names)}')
    if np.any(run.lengths <= 0.0):
        raise IdentificationError(f'{run.source}: a measured muscle length is <= 0 m')
    kinematic = kinematics.tip_positions(_at(run.tip_times, run.times, run.lengths))
    model = CCDynamics.from_bellows_robot(robot)
    low, high = model.input_range.T
    outside = (run.pressures < low) | (run.pressures > high)
    if np.any(outside):
        k, i = np.argwhere(outside)[0]
        raise IdentificationError(
            f'{run.source}: at {run.times[k]:.4g} s {kinematics.names[i]} = '
            f'{run.pressures[k, i]:g} Pa is outside its range [{low[i]:g}, {high[i]:g}] Pa')
    x = simulate_samples(model, run.times, run.pressures, model.equilibrium(run.pressures[0]),
                         dt)
    simulated_lengths = x @ model.lengths.T
    simulated_tips = np.array([model.frames(xi)[-1][1]
                               for xi in _at(run.tip_times, run.times, x)])
    return BellowsValidation(
        robot=robot, run=run, kinematic_tips=kinematic, simulated_lengths=simulated_lengths,
        simulated_tips=simulated_tips,
        kinematic_tip=ErrorStatistics.of(np.linalg.norm(kinematic - run.tips, axis=1)),
        dynamic_length=ErrorStatistics.of(np.abs(simulated_lengths - run.lengths)),
        dynamic_tip=ErrorStatistics.of(np.linalg.norm(simulated_tips - run.tips, axis=1)))


def _at(t: np.ndarray, times: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Return ``values`` (k, d) sampled at ``times`` interpolated linearly at ``t`` (j,)."""
    return np.column_stack([np.interp(t, times, values[:, i]) for i in range(values.shape[1])])


# --------------------------------------------------------------------------- report


def write_bellows_report(directory: str | Path, validation: BellowsValidation) -> Path:
    """Write ``report.md``, ``lengths.png`` and ``tip.png`` into ``directory``; return the .md."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    directory = Path(directory)
    make_folder(directory)
    run, robot = validation.run, validation.robot
    names = robot.actuator_names

    sections = len(robot.sections)
    fig, axes = plt.subplots(sections, 1, figsize=(10, 2.6 * sections), sharex=True,
                             squeeze=False)
    row = 0
    for j, section in enumerate(robot.sections):
        axis = axes[j, 0]
        for i in range(row, row + len(section.bellows)):
            line, = axis.plot(run.times, run.lengths[:, i] * 1e3, '.', ms=1.5,
                              label=f'{names[i]} measured')
            axis.plot(run.times, validation.simulated_lengths[:, i] * 1e3, '-', lw=1,
                      color=line.get_color(), label=f'{names[i]} dynamic model')
        row += len(section.bellows)
        axis.set_ylabel(f'{section.name}\nmuscle length [mm]')
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, ncol=3, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    axes[-1, 0].set_xlabel('time [s]')
    fig.suptitle(f'muscle lengths: measured and dynamic model '
                 f'({validation.dynamic_length.mm()})', fontsize=10)
    fig.tight_layout()
    save_figure(fig, directory / 'lengths.png', dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(4, 1, figsize=(10, 9), sharex=True)
    for k, axis in enumerate(axes[:3]):
        axis.plot(run.tip_times, run.tips[:, k] * 1e3, '.', ms=1.5, color='0.3',
                  label='measured')
        axis.plot(run.tip_times, validation.kinematic_tips[:, k] * 1e3, '-', lw=1,
                  label='kinematic model (measured lengths)')
        axis.plot(run.tip_times, validation.simulated_tips[:, k] * 1e3, '-', lw=1,
                  label='dynamic model (measured pressures)')
        axis.set_ylabel(f'tip {"xyz"[k]} [mm]')
        axis.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    axes[3].plot(run.tip_times, np.linalg.norm(validation.kinematic_tips - run.tips, axis=1)
                 * 1e3, lw=1, label='kinematic')
    axes[3].plot(run.tip_times, np.linalg.norm(validation.simulated_tips - run.tips, axis=1)
                 * 1e3, lw=1, label='dynamic')
    axes[3].set_ylabel('tip error [mm]')
    axes[3].set_xlabel('time [s]')
    axes[3].grid(True, alpha=0.3)
    axes[3].legend(fontsize=8, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    fig.suptitle('tip, world frame', fontsize=10)
    fig.tight_layout()
    save_figure(fig, directory / 'tip.png', dpi=110)
    plt.close(fig)

    def row_of(label, stats, slides):
        quoted = ' or '.join(f'{SLIDES[key][0]:g} +- {SLIDES[key][1]:g}' for key in slides)
        return (f'| {label} | {stats.mean * 1e3:.2f} | {stats.std * 1e3:.2f} | '
                f'{stats.max * 1e3:.2f} | {stats.count} | {quoted} |')

    text = [f'# Validation report: {robot.name} (bellows)', '', f'Written by {produced_by()}.', '',
            f'Recording: `{run.source}`: {len(run.times)} state samples, '
            f'{len(run.tip_times)} tip samples over {run.times[-1] - run.times[0]:.3g} s.', '',
            '| model: error | mean [mm] | std [mm] | max [mm] | values | Hadzic & Häseli '
            '(their BHA), mean +- std [mm] |', '|---|---|---|---|---|---|',
            row_of('kinematic: tip', validation.kinematic_tip, ['kinematic tip']),
            row_of('dynamic: muscle length', validation.dynamic_length,
                   ['dynamic muscle length, steps', 'dynamic muscle length, linear pressure']),
            row_of('dynamic: tip', validation.dynamic_tip,
                   ['dynamic tip, steps', 'dynamic tip, linear pressure']), '',
            "The last column quotes Hadzic & Häseli's slides (steps or linear pressure); "
            'their measured data are not public, so their figures cannot be reproduced here.',
            '', 'Kinematic model: the tip from the measured muscle lengths (constant '
            'curvature per section). Dynamic model: the Lagrange dynamics driven by the '
            'measured pressures from rest under the first of them. Errors: Euclidean tip '
            'distance per tip sample; |simulated - measured| per bellows and state sample; '
            'standard deviation with ddof 0.', '',
            '![muscle lengths](lengths.png)', '', '![tip](tip.png)', '']
    path = directory / 'report.md'
    write_output(path, '\n'.join(text))
    return path


# --------------------------------------------------------------------------- synthetic run


@dataclass(frozen=True)
class Truth:
    """How a synthetic bellows run differs from the robot file (the hidden truth)."""

    stiffness_factor: float = 1.1     # bellows springs and bending stiffness
    damping_factor: float = 1.5       # bellows and spline dampers
    # Rotary inertia of the lumped masses, which the described model (like Hadzic &
    # Häseli's) neglects: each mass a thin ring this many bellows radii wide.
    ring_radius_factor: float = 1.5

    def robot(self, robot: BellowsRobot) -> BellowsRobot:
        """Return the true robot: the file's, scaled, with ring inertia where it has none."""
        sections = []
        for section in robot.sections:
            radius = self.ring_radius_factor * section.ring
            ring = np.array([0.5, 0.5, 1.0]) * radius ** 2    # m R^2 (1/2, 1/2, 1) per kg
            inertias = np.where(np.all(section.inertias == 0.0, axis=1)[:, None],
                                section.masses[:, None] * ring, section.inertias)
            sections.append(replace(
                section, bending_stiffness=section.bending_stiffness * self.stiffness_factor,
                spline_damping=section.spline_damping * self.damping_factor, inertias=inertias,
                bellows=tuple(replace(b, stiffness=b.stiffness * self.stiffness_factor,
                                      damping=b.damping * self.damping_factor)
                              for b in section.bellows)))
        return replace(robot, sections=tuple(sections))


def synth_bellows_run(robot_true: BellowsRobot, profile: InputProfile, rate: float = 200.0,
                      length_noise: float = 2e-4, tip_noise: float = 1e-3, seed: int = 0,
                      source: str = 'synthetic') -> tuple[Run, np.ndarray, np.ndarray]:
    """
    Simulate ``robot_true`` under ``profile`` and sample it as a bellows rig would.

    The robot starts at rest under the profile's inputs at t = 0 and runs until the
    profile's end; every 1 / ``rate`` s the pressures (exact), the muscle lengths (Gaussian
    noise of standard deviation ``length_noise`` [m]) and the tip (``tip_noise`` [m] per axis)
    are sampled. Integration at the simulator's step, or the sample period if shorter.

    Returns
    -------
    run : Run
        What a recording holds.
    lengths, tips : arrays (k, m), (k, 3)
        The noiseless truth behind it [m].

    """
    from tendon_robot_sim.models.trunk.dynamics import DEFAULT_TIME_STEP

    model = CCDynamics.from_bellows_robot(robot_true)
    period = 1.0 / rate
    samples = int(round(profile.end * rate)) + 1
    times = np.arange(samples) * period
    dt = period / max(1, int(np.ceil(period / DEFAULT_TIME_STEP - 1e-9)))
    every = int(round(period / dt))
    trajectory = model.simulate(profile.at, times[-1] + period, dt=dt,
                                x0=model.equilibrium(profile.at(0.0)), record_every=every)
    x = trajectory.x[:samples]
    lengths = x @ model.lengths.T
    tips = np.array([model.frames(xi)[-1][1] for xi in x])
    rng = np.random.default_rng(seed)
    pressures = np.array([profile.at(t) for t in times])
    run = Run(source, times, pressures, lengths + rng.normal(0.0, length_noise, lengths.shape),
              times.copy(), tips + rng.normal(0.0, tip_noise, tips.shape))
    return run, lengths, tips


def write_run(path: str | Path, robot: BellowsRobot, run: Run) -> None:
    """
    Write a run as a CSV file (suffix ``.csv``) or a rosbag2 bag (anything else).

    CSV: ``t`` [s], one pressure column per bellows [Pa], ``<name>_length`` [m] and
    ``tip_x, tip_y, tip_z`` [m]. Bag: ``tendon/state`` (sensor_msgs/JointState, ``effort`` =
    pressure [Pa], ``position`` = contraction [m] from the straight length) and
    ``tip/measured`` (geometry_msgs/PointStamped in the base frame), header stamps = sample
    times, as :func:`~tendon_robot_sim.experiment.identification.read_run` reads them.
    """
    names = robot.actuator_names
    if Path(path).suffix.lower() == '.csv':
        make_folder(Path(path).parent)
        header = [TIME_COLUMNS[0]] + names + [n + LENGTH_SUFFIX for n in names] + \
            list(TIP_COLUMNS)
        table = np.column_stack((run.times, run.pressures, run.lengths, run.tips))
        with open_output(path) as handle:
            np.savetxt(handle, table, delimiter=',', header=','.join(header), comments='',
                       fmt='%.10g')
        return
    from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos

    straight = BellowsKinematics(robot).straight_lengths
    t0_ns = 1_700_000_000 * 10 ** 9
    with BagWriter(path) as bag:
        store = bag.typestore
        types = store.types
        Header, Time = types['std_msgs/msg/Header'], types['builtin_interfaces/msg/Time']
        bag.add_topic('/' + STATE_TOPIC, 'sensor_msgs/msg/JointState', OfferedQos())
        bag.add_topic('/' + TIP_TOPIC, 'geometry_msgs/msg/PointStamped', OfferedQos(depth=5))
        for k, t in enumerate(run.times):
            stamp_ns = t0_ns + int(round(t * 1e9))
            stamp = Time(sec=stamp_ns // 10 ** 9, nanosec=stamp_ns % 10 ** 9)
            state = types['sensor_msgs/msg/JointState'](
                header=Header(stamp=stamp, frame_id=''), name=names,
                position=straight - run.lengths[k], velocity=np.zeros(0),
                effort=run.pressures[k].astype(float))
            bag.write('/' + STATE_TOPIC, stamp_ns,
                      store.serialize_cdr(state, 'sensor_msgs/msg/JointState'))
            x, y, z = map(float, run.tips[k])
            measured = types['geometry_msgs/msg/PointStamped'](
                header=Header(stamp=stamp, frame_id=robot.base.frame_id),
                point=types['geometry_msgs/msg/Point'](x=x, y=y, z=z))
            bag.write('/' + TIP_TOPIC, stamp_ns,
                      store.serialize_cdr(measured, 'geometry_msgs/msg/PointStamped'))
