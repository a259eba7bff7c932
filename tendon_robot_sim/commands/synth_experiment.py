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

``--experiment step`` instead records a tension step on the vertical-plane tendon,
simulated with the dynamic model (rest, then the step at 0.5 s, 3 s of response), which
``calibrate --model dynamic --fit damping`` identifies the damping (and vertebra mass)
from, as Hadzic & Häseli do for the elephant trunk. Default true damping ratio: the file's x 1.5.

Simulates experiments 1-3 of Tuzlaci's TendonForces validation (self weight; a
horizontal-plane tendon at 2, 4 and 6 N; ten holds with increasing tensions on a
vertical-plane and a horizontal-plane tendon) on the robot with hidden "true" moduli, with
the ``discrete`` statics model, adds Gaussian noise to the tip and writes a rosbag2 bag
(MCAP) as the hardware stack records it: ``tendon/setpoint`` and ``tip/measured`` at 50 Hz,
holds of 3 s, ramps of 0.5 s. Default true moduli: the robot file's E x 1.15 and G x 0.9
(printed).
"""

import argparse
import math

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (command_error, CommandError, non_negative, non_negative_int,
                                       OutputPath, positive)
from tendon_robot_sim.experiment.bag import BagError
from tendon_robot_sim.experiment.calibration import with_parameters
from tendon_robot_sim.experiment.experiment import (ExperimentError, synth_experiment,
                                                    synth_step_response)
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.dynamics import SimulationDiverged
from tendon_robot_sim.models.tendon_robot import load_robot

# Default hidden moduli relative to the robot file's.
YOUNGS_FACTOR = 1.15
SHEAR_FACTOR = 0.9
# Default hidden damping of --experiment step relative to the robot file's.
DAMPING_FACTOR = 1.5


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'synth-experiment', help='write a synthetic bag of three validation experiments (Tuzlaci)',
        description="Simulate Tuzlaci's three TendonForces validation experiments on a robot "
                    'with hidden '
                    'moduli, add tip noise and write a rosbag2 bag like a hardware recording.')
    parser.add_argument('out', type=OutputPath('new folder'), metavar='OUT_BAG',
                        help='bag folder to create')
    parser.add_argument('--robot', default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--youngs-modulus', type=positive, default=None, metavar='E',
                        help=f"true Young's modulus in Pa (default: the file's x {YOUNGS_FACTOR})")
    parser.add_argument('--shear-modulus', type=positive, default=None, metavar='G',
                        help=f"true shear modulus in Pa (default: the file's x {SHEAR_FACTOR})")
    parser.add_argument('--experiment', choices=('holds', 'step'), default='holds',
                        help="holds: Tuzlaci's three experiments (statics); step: a tension "
                             'step response (dynamic model)')
    parser.add_argument('--damping-ratio', type=positive, default=None, metavar='ZETA',
                        help=f'true damping ratio of the first mode (step; default: the '
                             f"file's x {DAMPING_FACTOR})")
    parser.add_argument('--vertebra-mass', type=non_negative, default=None, metavar='KG',
                        help="true mass of each vertebra in kg (default: the file's)")
    parser.add_argument('--tension', type=positive, default=2.0, metavar='N',
                        help='tension of the step in N (step; default 2)')
    parser.add_argument('--noise', type=non_negative, default=2e-4, metavar='M',
                        help='tip noise, standard deviation per axis in m (default 0.0002)')
    parser.add_argument('--seed', type=non_negative_int, default=0, metavar='S',
                        help='random seed of the noise (default 0)')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        robot = load_robot(args.robot or default_robot_file())
    except RobotDescriptionError as error:
        raise command_error(error) from None
    # a step response keeps the file's moduli unless told (they are what the holds identify)
    holds = args.experiment == 'holds'
    youngs = args.youngs_modulus or robot.rod.youngs_modulus * (YOUNGS_FACTOR if holds else 1.0)
    shear = args.shear_modulus or robot.rod.shear_modulus * (SHEAR_FACTOR if holds else 1.0)
    for option, value in (('--youngs-modulus', youngs), ('--shear-modulus', shear)):
        if not (math.isfinite(value) and value > 0.0):
            raise CommandError(f'{option}: must be > 0 Pa, got {value}')
    mass = robot.vertebra_mass if args.vertebra_mass is None else args.vertebra_mass
    if not (math.isfinite(mass) and mass >= 0.0):
        raise CommandError(f'--vertebra-mass: must be >= 0 kg, got {mass}')
    changes = {'youngs_modulus': youngs, 'shear_modulus': shear}
    if args.experiment == 'step':
        if robot.rod.damping.ratio is None and args.damping_ratio is None:
            raise CommandError('--damping-ratio: the robot file gives a damping rate; give '
                               'the true damping ratio')
        ratio = args.damping_ratio or robot.rod.damping.ratio * DAMPING_FACTOR
        if not (math.isfinite(ratio) and 0.0 < ratio < 1.0):
            raise CommandError(f'--damping-ratio: must be in (0, 1), got {ratio}')
        changes['damping'] = {'ratio': ratio}
    try:
        truth_robot = with_parameters(robot.with_changes(**changes),
                                      {'vertebra_mass': mass})
    except RobotDescriptionError as error:
        raise command_error(error) from None
    print(f'hidden true parameters: youngs_modulus {youngs:.6g} Pa, shear_modulus '
          f'{shear:.6g} Pa, vertebra_mass {mass:.6g} kg'
          + (f', damping ratio {changes["damping"]["ratio"]:.6g}'
             if args.experiment == 'step' else '')
          + f' (robot file: {robot.rod.youngs_modulus:.6g}, {robot.rod.shear_modulus:.6g}, '
          f'{robot.vertebra_mass:.6g}); tip noise {args.noise:g} m, seed {args.seed}')
    if args.experiment == 'step':
        try:
            step, samples = synth_step_response(args.out, truth_robot, args.tension,
                                                noise=args.noise, seed=args.seed)
        except (BagError, ExperimentError, SimulationDiverged) as error:
            raise command_error(error) from None
        print(f'  step to {step.tolist()} N at 0.5 s; tip at the end '
              f'{[round(v, 6) for v in samples[-1][2].tolist()]} m')
        print(f'wrote {args.out} ({len(samples)} samples, dynamic model)')
        return 0
    try:
        truth = synth_experiment(args.out, truth_robot, noise=args.noise, seed=args.seed)
    except (BagError, ExperimentError, StaticsError) as error:
        raise command_error(error) from None
    for label, tensions, tip in truth:
        print(f'  hold {label:16s} tensions {tensions.tolist()} N -> tip '
              f'{[round(v, 6) for v in tip.tolist()]} m')
    print(f'wrote {args.out} ({len(truth)} holds, model discrete)')
    return 0
