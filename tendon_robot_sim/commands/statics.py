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
``tendon-robot-sim statics``: solve the static equilibrium and report the tip pose.

    tendon-robot-sim statics --tensions 0,2,0,0
    tendon-robot-sim statics --model discrete --displacements t0=0.004 --json
    tendon-robot-sim statics --tensions 1,0,0,0 --tip-force 0,0,-0.05 --json
    tendon-robot-sim statics --tensions 0,3,0,0 --world config/world_post.yaml --json

With ``--json`` the last line on stdout is one JSON object with ``tip_position``
[x, y, z] (m, base frame), ``tip_orientation`` [qx, qy, qz, qw], ``tensions`` (N),
``displacements`` (m), ``converged``, ``residual``, ``solve_time_ms`` and more (see
:meth:`tendon_robot_sim.models.rod.statics.solver.StaticsResult.to_dict`); with ``--world``
also ``contacts``, a list of ``{obstacle, s, point, normal, force, penetration}`` (arc length
in m, point and force in the world frame, the force on the robot in N, penetration in m) and
``max_penetration`` (m). The solve time includes no numba compilation: the command solves once
to compile, then times a cold solve.
"""

import argparse
import json

import numpy as np

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (command_error, CommandError, NoResultError, parse_values,
                                       parse_vector)
from tendon_robot_sim.models.contact.world import load_world, WorldError
from tendon_robot_sim.models.cosserat import StaticsError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.solver import CONSTITUTIVE_LAWS, MODELS, StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'statics', help='solve the static equilibrium (shooting method) and print the tip pose',
        description='Solve the static equilibrium of the robot for given tendon tensions or '
                    'displacements (Cosserat-rod shooting method) and print the tip pose.')
    parser.add_argument('--robot', default=None, metavar='FILE',
                        help='robot description YAML (default: the package config/robot.yaml)')
    parser.add_argument('--model', choices=MODELS, default='cosserat',
                        help='cosserat (default): continuous tendons, shear and extension; '
                             'kirchhoff: no shear or extension; discrete: tendons straight '
                             'between vertebrae, the static twin of the dynamic simulator')
    inputs = parser.add_mutually_exclusive_group(required=True)
    inputs.add_argument('--tensions', metavar='T',
                        help="tendon tensions in N: one per tendon ('0,2,0,0') or by name "
                             "('t1=2.0,t3=0.5', others 0)")
    inputs.add_argument('--displacements', metavar='Q',
                        help='tendon displacements in m, pulled in past the base (positive '
                             'pulls, negative lets out): one per tendon or by name')
    parser.add_argument('--tip-force', metavar='FX,FY,FZ', default=None,
                        help='external tip force in N, world frame (default: robot tip_load)')
    parser.add_argument('--tip-moment', metavar='MX,MY,MZ', default=None,
                        help='external tip moment in N m, world frame (default: robot tip_load)')
    parser.add_argument('--constitutive', choices=CONSTITUTIVE_LAWS, default=None,
                        help='constitutive law (default: pyelastica for discrete, else linear)')
    parser.add_argument('--world', default=None, metavar='FILE',
                        help='world description YAML: obstacles the robot touches (cosserat and '
                             'kirchhoff; docs/tendon_robot.md, "Contact with the world")')
    parser.add_argument('--json', action='store_true', help='end the output with one JSON line')
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    path = args.robot or default_robot_file()
    tip_force = parse_vector(args.tip_force, '--tip-force')
    tip_moment = parse_vector(args.tip_moment, '--tip-moment')
    try:
        robot = load_robot(path)
        world = None if args.world is None else load_world(args.world)
        if world is not None and args.model == 'discrete':
            # its discs touch (models/rod/statics), but a cold solve under tendon loads in
            # contact can settle on a spurious curled shape: refused rather than returned
            raise CommandError('--world: the discrete statics in contact is not reliable under '
                               'tendon loads yet (it can return a spurious curled shape); use '
                               '--model cosserat or kirchhoff, or simulate --integrator '
                               'explicit for the discs')
        solver = StaticsSolver(robot, args.model, constitutive=args.constitutive, world=world)
        if args.tensions is not None:
            values = parse_values(args.tensions, '--tensions')
            solve = solver.solve_tensions
        else:
            values = parse_values(args.displacements, '--displacements')
            solve = solver.solve_displacements
        solve(values, tip_force, tip_moment)   # compiles the kernels on first use
        solver.reset()
        result = solve(values, tip_force, tip_moment)
    except (RobotDescriptionError, StaticsError, WorldError) as error:
        # one line: YAML parser messages span several
        raise command_error(error) from None
    beyond = result.beyond_limits(robot)
    if beyond:     # displacements only: tensions beyond the limits are refused as input
        raise NoResultError(f'--displacements{beyond}; no equilibrium within the limits')

    np.set_printoptions(precision=6, suppress=True)
    print(f'robot {robot.name}, model {args.model} ({solver.constitutive} law)')
    print(f'tip position [m]:     {result.tip_position}')
    print(f'tip orientation:      {result.tip_orientation}  [qx qy qz qw]')
    print(f'tensions [N]:         {result.tensions}')
    print(f'displacements [m]:    {result.tendon_displacements}')
    print(f'residual {result.residual:.3g} after {result.iterations} Newton iterations, '
          f'cold solve {result.solve_time * 1e3:.2f} ms')
    for contact in result.contacts or ():
        print(f'contact {contact.obstacle} at s = {contact.s:.4f} m: force [N] {contact.force}, '
              f'penetration {contact.penetration * 1e6:.1f} um')
    if args.json:
        print(json.dumps({'robot': robot.name, 'constitutive': solver.constitutive,
                          **result.to_dict()}))
    return 0
