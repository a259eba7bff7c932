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
``tendon-robot-sim synth-experiment``: a synthetic recording of validation experiments.

    tendon-robot-sim synth-experiment demo_output/synthetic_bag
    tendon-robot-sim synth-experiment out_bag --youngs-modulus 19e6 --shear-modulus 6.5e6 \
        --noise 0.0002 --seed 1
    tendon-robot-sim synth-experiment step_bag --experiment step --damping-ratio 0.15
    tendon-robot-sim synth-experiment bha_bag --robot config/bionic_handling_assistant.yaml \
        --pressures-csv config/bha_pressure_steps.csv

Simulates experiments 1-3 of Tuzlaci's TendonForces validation (self weight; a
horizontal-plane tendon at 2, 4 and 6 N; ten holds with increasing tensions on a
vertical-plane and a horizontal-plane tendon) on a hidden "true" robot, adds Gaussian noise
to the tip and writes a rosbag2 bag (MCAP) as the hardware stack records it:
``tendon/setpoint`` and ``tip/measured`` at 50 Hz, holds of 3 s, ramps of 0.5 s.

The true robot differs from the file in what a calibration should find (default: E x 1.15
and G x 0.9) and in what no model describes: its discs are twisted about the backbone,
``--disc-twist-deg`` (2 degrees) in all at the tip. It is simulated with a model other than
the statics that validate it: by default the dynamic model (PyElastica Cosserat rod with
the tendons pulling at the discs), driven through the whole experiment in time, so that each
hold shows a real settling swing; ``--truth-model`` picks a statics model instead.

``--experiment step`` instead records a tension step on the vertical-plane tendon of the same
hidden robot, simulated with the dynamic model (rest, then the step at 0.5 s, 3 s of
response), which ``calibrate --model dynamic --fit damping`` identifies the damping (and
vertebra mass) from, as Hadzic & Häseli do for the elephant trunk. The true damping is the
file's own, whatever its form (a ratio or rate, Kelvin-Voigt coefficients, drag), x
``--damping-factor`` (1.5), or a mass-proportional ``--damping-ratio``. A robot without discs
(continuous routing) runs both experiments on the implicit integrator; its tendon routing is
what the twist turns.

A bellows robot (``kind: bellows``) runs the pressure profile of ``--pressures-csv`` on a
hidden robot (bellows and bending stiffnesses x ``--stiffness-factor``, dampers x
``--damping-factor``, and the lumped masses' rotary inertia, which its model neglects) and
records pressures, muscle lengths (noise ``--length-noise``) and tip (``--noise``) at
200 Hz: a bag of ``tendon/state`` and ``tip/measured``, or a CSV file when OUT ends in .csv.
"""

import argparse
import math

import numpy as np

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (command_error, CommandError, finite, input_file, NOISE,
                                       non_negative, non_negative_int, OutputPath, positive,
                                       within)
from tendon_robot_sim.experiment.bag import BagError
from tendon_robot_sim.experiment.experiment import (ExperimentError, synth_experiment,
                                                    synth_step_response, with_disc_twist)
from tendon_robot_sim.experiment.fit_parameters import with_parameters
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.solver import MODELS
from tendon_robot_sim.models.sim_model import SimulationDiverged
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.models.trunk.robot import is_bellows_description

# Default hidden moduli relative to the robot file's.
YOUNGS_FACTOR = 1.15
SHEAR_FACTOR = 0.9
# Default hidden damping of --experiment step relative to the robot file's.
DAMPING_FACTOR = 1.5
# Default twist of the discs [deg], all of it at the tip: an effect no model describes.
DISC_TWIST = 2.0
MAX_TWIST = 180.0
TRUTH_MODELS = ('dynamic',) + MODELS
# The robot file's key each option sets on the true robot, for an error the file's bounds raise.
OPTION_KEYS = (('rod.youngs_modulus', 'youngs_modulus'), ('rod.shear_modulus', 'shear_modulus'),
               ('vertebrae.mass', 'vertebra_mass'))


def _as_option(text: str, args) -> str:
    """Name the option given, not the true robot's key it set, in a bound's error."""
    for key, name in OPTION_KEYS:
        if text.startswith(key + ':') and getattr(args, name, None) is not None:
            return '--' + name.replace('_', '-') + text[len(key):]
    return text


# Options of one robot kind only: (dest, option).
# (--damping-factor is both kinds': the dampers of a bellows robot, the damping of a tendon robot)
TENDON_OPTIONS = (('youngs_modulus', '--youngs-modulus'), ('shear_modulus', '--shear-modulus'),
                  ('experiment', '--experiment'), ('truth_model', '--truth-model'),
                  ('disc_twist_deg', '--disc-twist-deg'), ('damping_ratio', '--damping-ratio'),
                  ('vertebra_mass', '--vertebra-mass'), ('tension', '--tension'))
BELLOWS_OPTIONS = (('pressures_csv', '--pressures-csv'), ('length_noise', '--length-noise'),
                   ('stiffness_factor', '--stiffness-factor'))


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'synth-experiment', help='write a synthetic bag of three validation experiments (Tuzlaci)',
        description="Simulate Tuzlaci's three TendonForces validation experiments on a robot "
                    'with hidden moduli and twisted discs, add tip noise and write a rosbag2 '
                    'bag like a hardware recording; or a pressure profile on a bellows robot.')
    parser.add_argument('out', type=OutputPath('new folder', files=('.csv',)),
                        metavar='OUT_BAG',
                        help='bag folder to create (bellows robots: or a .csv file, '
                             'written or overwritten in an existing folder)')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--youngs-modulus', type=positive, default=None, metavar='E',
                        help=f"true Young's modulus in Pa (default: the file's x {YOUNGS_FACTOR})")
    parser.add_argument('--shear-modulus', type=positive, default=None, metavar='G',
                        help=f"true shear modulus in Pa (default: the file's x {SHEAR_FACTOR})")
    parser.add_argument('--experiment', choices=('holds', 'step'), default=None,
                        help="holds: Tuzlaci's three experiments (default); step: a tension "
                             'step response (dynamic model)')
    parser.add_argument('--truth-model', choices=TRUTH_MODELS, default=None,
                        help='holds: the model that simulates the true robot (default dynamic: '
                             'driven through the experiment in time; or a statics model)')
    parser.add_argument('--disc-twist-deg', type=finite, default=None, metavar='DEG',
                        help=f'twist of the true discs about the backbone at the tip, in '
                             f'proportion along it (default {DISC_TWIST:g}; 0: none)')
    parser.add_argument('--damping-ratio', type=positive, default=None, metavar='ZETA',
                        help='true mass-proportional damping ratio of the first mode (step; '
                             'default: the damping the file gives x --damping-factor)')
    parser.add_argument('--vertebra-mass', type=non_negative, default=None, metavar='KG',
                        help="true mass of each vertebra in kg (default: the file's)")
    parser.add_argument('--tension', type=positive, default=None, metavar='N',
                        help='tension of the step in N (step; default 2)')
    parser.add_argument('--noise', type=within(*NOISE, 'm'), default=2e-4, metavar='M',
                        help='tip noise, standard deviation per axis in m (default 0.0002)')
    parser.add_argument('--seed', type=non_negative_int, default=0, metavar='S',
                        help='random seed of the noise (default 0)')
    parser.add_argument('--pressures-csv', default=None, metavar='CSV',
                        help='bellows robots: the pressure profile to run (a column t in s, one '
                             'per bellows in Pa; see cc-dynamics --pressures-csv)')
    parser.add_argument('--length-noise', type=within(*NOISE, 'm'), default=None, metavar='M',
                        help='bellows robots: muscle-length noise, standard deviation in m '
                             '(default 0.0002)')
    parser.add_argument('--stiffness-factor', type=positive, default=None, metavar='F',
                        help='bellows robots: true stiffnesses / described ones (default 1.1)')
    parser.add_argument('--damping-factor', type=positive, default=None, metavar='F',
                        help='true damping / the described: bellows robots their dampers; '
                             'tendon robots (step) every damping the file gives, in its form '
                             f'(ratio or rate, Kelvin-Voigt coefficients, drag) (default '
                             f'{DAMPING_FACTOR})')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    try:
        bellows = is_bellows_description(path)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    own, other = (BELLOWS_OPTIONS, TENDON_OPTIONS) if bellows else (TENDON_OPTIONS,
                                                                    BELLOWS_OPTIONS)
    for dest, option in other:
        if getattr(args, dest) is not None:
            kind = 'a tendon robot' if bellows else 'a bellows robot'
            raise CommandError(f'{option}: only for {kind}; {path} is '
                               f'{"a bellows robot" if bellows else "a tendon robot"}')
    if bellows:
        return run_bellows(args, path)
    return run_tendon(args, path)


def run_tendon(args: argparse.Namespace, path) -> int:
    """Simulate Tuzlaci's experiments, or a step response, on a hidden tendon robot."""
    if args.out.suffix.lower() == '.csv':
        raise CommandError('OUT_BAG: a tendon robot experiment is written as a bag, not CSV')
    try:
        robot = load_robot(path)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    step = args.experiment == 'step'
    if step and args.truth_model not in (None, 'dynamic'):
        raise CommandError('--truth-model: a step response is simulated with the dynamic model')
    for option, value in (('--damping-ratio', args.damping_ratio), ('--tension', args.tension),
                          ('--damping-factor', args.damping_factor)):
        if not step and value is not None:
            raise CommandError(f'{option}: only for --experiment step')
    # one hidden robot for both experiments, so that what the holds calibrate (E, G) is what
    # the step response is simulated with
    youngs = args.youngs_modulus or robot.rod.youngs_modulus * YOUNGS_FACTOR
    shear = args.shear_modulus or robot.rod.shear_modulus * SHEAR_FACTOR
    twist = DISC_TWIST if args.disc_twist_deg is None else args.disc_twist_deg
    if abs(twist) > MAX_TWIST:
        raise CommandError(f'--disc-twist-deg: must be within +-{MAX_TWIST:g} degrees, got '
                           f'{twist:g}')
    for option, value in (('--youngs-modulus', youngs), ('--shear-modulus', shear)):
        if not (math.isfinite(value) and value > 0.0):
            raise CommandError(f'{option}: must be > 0 Pa, got {value}')
    discs = bool(robot.vertebra_positions.size)
    if not discs and args.vertebra_mass is not None:
        raise CommandError(f'--vertebra-mass: {path} has no vertebra discs to weigh')
    mass = robot.vertebra_mass if args.vertebra_mass is None else args.vertebra_mass
    if not (math.isfinite(mass) and mass >= 0.0):
        raise CommandError(f'--vertebra-mass: must be >= 0 kg, got {mass}')
    changes = {'youngs_modulus': youngs, 'shear_modulus': shear}
    if step:
        changes.update(true_damping(robot.rod, args.damping_ratio, args.damping_factor))
    try:
        truth_robot = with_disc_twist(with_parameters(robot.with_changes(**changes),
                                                      {'vertebra_mass': mass} if discs else {}),
                                      twist)
    except RobotDescriptionError as error:
        raise CommandError(_as_option(str(error), args)) from None
    model = 'dynamic' if step else args.truth_model or 'dynamic'
    print(f'hidden true parameters: youngs_modulus {youngs:.6g} Pa, shear_modulus '
          f'{shear:.6g} Pa' + (f', vertebra_mass {mass:.6g} kg' if discs else '')
          + (f', {describe_damping(truth_robot.rod)}' if step else '')
          + f' (robot file: {robot.rod.youngs_modulus:.6g}, {robot.rod.shear_modulus:.6g}'
          + (f', {robot.vertebra_mass:.6g}' if discs else '')
          + (f', {describe_damping(robot.rod)}' if step else '')
          + f'); {"discs" if discs else "tendon routing"} twisted {twist:g} deg at the tip '
          f'(not in the file); simulated with the {model} model; tip noise {args.noise:g} m, '
          f'seed {args.seed}')
    if step:
        try:
            step_tensions, samples = synth_step_response(
                args.out, truth_robot, 2.0 if args.tension is None else args.tension,
                noise=args.noise, seed=args.seed)
        except (BagError, ExperimentError, SimulationDiverged) as error:
            raise command_error(error) from None
        print(f'  step to {step_tensions.tolist()} N at 0.5 s; tip at the end '
              f'{[round(v, 6) for v in samples[-1][2].tolist()]} m')
        print(f'wrote {args.out} ({len(samples)} samples, dynamic model)')
        return 0
    try:
        truth = synth_experiment(args.out, truth_robot, noise=args.noise, seed=args.seed,
                                 model=model)
    except (BagError, ExperimentError, StaticsError, SimulationDiverged) as error:
        raise command_error(error) from None
    for label, tensions, tip in truth:
        print(f'  hold {label:16s} tensions {tensions.tolist()} N -> tip '
              f'{[round(v, 6) for v in tip.tolist()]} m')
    print(f'wrote {args.out} ({len(truth)} holds, model {model})')
    return 0


def true_damping(rod, ratio: float | None, factor: float | None) -> dict:
    """
    Return the rod changes of the hidden damping of a step response (``Robot.with_changes``).

    The file's own damping, whatever its form (a ratio or rate, Kelvin-Voigt coefficients,
    drag), x ``factor`` (default DAMPING_FACTOR); or, given ``ratio``, the mass-proportional
    damping of that ratio (the drag stays the file's).
    """
    if ratio is not None and factor is not None:
        raise CommandError('--damping-ratio: give it or --damping-factor, not both')
    if ratio is not None:
        if rod.damping.kelvin_voigt:
            raise CommandError('--damping-ratio: the robot file gives Kelvin-Voigt damping '
                               '(rod.damping: shear_extension, bending_torsion), not a ratio; '
                               'scale it with --damping-factor')
        if not 0.0 < ratio < 1.0:
            raise CommandError(f'--damping-ratio: must be in (0, 1), got {ratio:g}')
        return {'damping': {'ratio': ratio}}
    factor = DAMPING_FACTOR if factor is None else factor
    damping = {key: (np.asarray(value) * factor).tolist()
               for key, value in rod.damping.to_dict().items()}
    if damping.get('ratio', 0.0) >= 1.0:
        raise CommandError(f"--damping-factor: the file's damping ratio "
                           f'{rod.damping.ratio:g} x {factor:g} must stay < 1 (an oscillating '
                           'first mode)')
    return {'damping': damping, 'drag': (np.asarray(rod.drag) * factor).tolist()}


def describe_damping(rod) -> str:
    """Return the damping (and drag) of ``rod`` in words, with units."""
    damping = rod.damping
    if damping.kelvin_voigt:
        text = (f'Kelvin-Voigt damping shear_extension {_values(damping.shear_extension)} N s, '
                f'bending_torsion {_values(damping.bending_torsion)} N m^2 s')
    elif damping.ratio is not None:
        text = f'damping ratio {damping.ratio:.6g}'
    else:
        text = f'damping rate {damping.rate:.6g} 1/s'
    return text + (f', drag {_values(rod.drag)} kg/m^2' if any(rod.drag) else '')


def _values(values) -> str:
    return '[' + ', '.join(f'{v:.6g}' for v in values) + ']'


def run_bellows(args: argparse.Namespace, path) -> int:
    """Run a pressure profile on a hidden bellows robot; record it as a bag or CSV file."""
    from tendon_robot_sim.experiment.identification import IdentificationError
    from tendon_robot_sim.experiment.input_profile import ProfileError, read_profile
    from tendon_robot_sim.experiment.trunk_validation import (synth_bellows_run, Truth,
                                                              write_run)
    from tendon_robot_sim.models.trunk.dynamics import CCDynamics, CCDynamicsError
    from tendon_robot_sim.models.trunk.robot import load_bellows_robot

    if args.pressures_csv is None:
        raise CommandError(f'--pressures-csv: {path} is a bellows robot; give the pressure '
                           'profile to run (e.g. config/bha_pressure_steps.csv)')
    truth = Truth(stiffness_factor=args.stiffness_factor or Truth.stiffness_factor,
                  damping_factor=args.damping_factor or Truth.damping_factor)
    length_noise = 2e-4 if args.length_noise is None else args.length_noise
    try:
        robot = load_bellows_robot(path)
        model = CCDynamics.from_bellows_robot(robot)
        profile = read_profile(args.pressures_csv, model.input_names, model.input_range,
                               'pressure', 'Pa')
    except (RobotDescriptionError, CCDynamicsError) as error:
        raise command_error(error) from None
    except ProfileError as error:
        raise CommandError(f'--pressures-csv: {error}') from None
    if profile.end <= 0.0:
        raise CommandError(f'--pressures-csv: {profile.source} ends at t = 0 s: nothing to run')
    print(f'hidden true robot: stiffnesses x {truth.stiffness_factor:g}, dampers x '
          f'{truth.damping_factor:g}, rotary inertia of the masses (thin rings '
          f'{truth.ring_radius_factor:g} bellows radii wide; not in the file); noise: lengths '
          f'{length_noise:g} m, tip {args.noise:g} m per axis, seed {args.seed}')
    try:
        run, _, _ = synth_bellows_run(truth.robot(robot), profile, length_noise=length_noise,
                                      tip_noise=args.noise, seed=args.seed, source=args.out)
        write_run(args.out, robot, run)
    except (CCDynamicsError, IdentificationError, BagError) as error:
        raise command_error(error) from None
    print(f'wrote {args.out} ({len(run.times)} samples over {run.times[-1]:.3g} s at '
          f'{1.0 / (run.times[1] - run.times[0]):.0f} Hz)')
    return 0
