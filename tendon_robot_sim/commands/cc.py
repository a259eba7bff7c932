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
``tendon-robot-sim cc``: constant-curvature kinematics, forward or inverse.

    tendon-robot-sim cc --displacements t0=0.004,t2=-0.004
    tendon-robot-sim cc --tip 0.2,0,0.12 --json
    tendon-robot-sim cc --robot config/bionic_handling_assistant.yaml \
        --muscle-lengths p1=0.23,p5=0.25 --json

Forward: tendon displacements (m) -> bending angle theta, direction phi, curvature
kappa and tip pose. Inverse: a tip position (m, base frame) -> the CC arc through it
and the displacements that bend the robot into it. With ``--json`` the last line on
stdout is one JSON object with ``theta`` (rad), ``phi`` (rad), ``kappa`` (1/m),
``tip_position`` [x, y, z] (m), ``tip_orientation`` [qx, qy, qz, qw],
``displacements`` (m) and ``residual`` (m, forward only: how far the given
displacements are from a constant-curvature set).

A bellows robot (``kind: bellows``) takes ``--muscle-lengths`` (m): Hadzic & Häseli's
kinematic model gives each section's arc (centre-spline ``length`` m, ``theta``, ``phi``
rad, ``kappa`` 1/m) and the tip; its JSON has ``sections``, ``tip_position``,
``tip_orientation``, ``muscle_lengths`` (the constant-curvature lengths, by name) and
``residual`` (m).
"""

import argparse
import json

import numpy as np

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (command_error, CommandError, input_file,
                                       NoResultError, parse_values, parse_vector)
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.geometry import rotation_to_quaternion, self_contact
from tendon_robot_sim.models.rod.constant_curvature import (ConstantCurvatureError,
                                                            load_constant_curvature)
from tendon_robot_sim.models.trunk.kinematics import BellowsKinematics, BellowsKinematicsError
from tendon_robot_sim.models.trunk.robot import is_bellows_description, load_bellows_robot


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'cc', help='constant-curvature kinematics: displacements <-> tip pose',
        description='Constant-curvature kinematics (no gravity, no loads): of a '
                    'single-section robot with parallel rigid tendons, forward from tendon '
                    'displacements or inverse from a tip position; of a bellows robot '
                    '(kind: bellows), forward from its muscle lengths.')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--displacements', metavar='Q',
                        help='tendon displacements in m, positive when pulling: one per tendon '
                             "('0.004,0,-0.004,0') or by name ('t0=0.004', others 0)")
    inputs.add_argument('--tip', metavar='X,Y,Z',
                        help='desired tip position in m, base frame')
    inputs.add_argument('--muscle-lengths', metavar='Q',
                        help='bellows robots: muscle (bellows) lengths in m, one per bellows '
                             "('0.24,0.25,...') or by name ('p1=0.24', others at their "
                             "section's rest length)")
    parser.add_argument('--json', action='store_true', help='end the output with one JSON line')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    try:
        bellows = is_bellows_description(path)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    if bellows:
        return run_bellows(args, path)
    if args.muscle_lengths is not None:
        raise CommandError(f'--muscle-lengths: {path} is a tendon robot; give --displacements '
                           'or --tip (muscle lengths are for kind: bellows robots)')
    tip = parse_vector(args.tip, '--tip')
    try:
        cc = load_constant_curvature(path)
        robot = cc.robot
        if tip is not None:
            state = cc.inverse_tip(tip, field='--tip')
        else:
            state = cc.forward(parse_values(args.displacements, '--displacements'),
                               '--displacements')
    except (RobotDescriptionError, ConstantCurvatureError) as error:
        # one line: YAML parser messages span several
        raise command_error(error) from None
    problem = self_contact(state.theta, cc.section_length, robot.rod.radius)
    if problem:
        raise NoResultError(f'{"--tip" if tip is not None else "--displacements"}: {problem}')

    np.set_printoptions(precision=6, suppress=True)
    print(f'robot {robot.name}, constant curvature (section {cc.section_length} m)')
    print(f'theta {state.theta:.6g} rad, phi {state.phi:.6g} rad, kappa {state.kappa:.6g} 1/m')
    print(f'tip position [m]:     {state.tip_position}')
    print(f'tip orientation:      {state.tip_orientation}  [qx qy qz qw]')
    print(f'displacements [m]:    {state.displacements}')
    if tip is None and state.residual > 1e-9:
        print(f'note: the displacements are not constant-curvature consistent; least-squares '
              f'fit, residual {state.residual:.3g} m')
    if args.json:
        print(json.dumps({'robot': robot.name, **state.to_dict()}))
    return 0


def run_bellows(args: argparse.Namespace, path) -> int:
    """Kinematics of a bellows robot from its muscle lengths."""
    if args.muscle_lengths is None:
        given = '--tip' if args.tip is not None else '--displacements'
        raise CommandError(f'{given}: {path} is a bellows robot; give its --muscle-lengths')
    try:
        robot = load_bellows_robot(path)
        kinematics = BellowsKinematics(robot)
        pose = kinematics.forward(parse_values(args.muscle_lengths, '--muscle-lengths'),
                                  '--muscle-lengths')
    except (RobotDescriptionError, BellowsKinematicsError) as error:
        raise command_error(error) from None
    for j, (section, arc) in enumerate(zip(robot.sections, pose.sections)):
        # the ring of bellows reaches at least that far from the spline: certain contact only
        problem = self_contact(arc.theta, arc.length, section.ring)
        if problem:
            raise NoResultError(f'--muscle-lengths: section {j}: {problem}')
    np.set_printoptions(precision=6, suppress=True)
    print(f'robot {robot.name}, constant curvature from muscle lengths '
          f'({len(robot.sections)} sections)')
    for j, arc in enumerate(pose.sections):
        print(f'section {j}: l {arc.length:.6g} m, theta {arc.theta:.6g} rad, '
              f'phi {arc.phi:.6g} rad, kappa {arc.kappa:.6g} 1/m')
    print(f'tip position [m]:     {pose.tip_position}')
    print(f'tip orientation:      {rotation_to_quaternion(pose.tip_rotation)}  [qx qy qz qw]')
    if pose.residual > 1e-9:
        print(f'note: the muscle lengths are not constant-curvature consistent; least-squares '
              f'fit, residual {pose.residual:.3g} m')
    if args.json:
        print(json.dumps({'robot': robot.name, **pose.to_dict(kinematics.names)}))
    return 0
