#!/usr/bin/env python3

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
How the tension controller's tip_gain settles the dynamic rod on the demo's tip target.

The tension controller's tip-position loop (``TipController.step`` on the ``discrete``
statics, then the node's ``rate_limit`` per period) at its ``rate``, 50 Hz, without ROS,
driving the dynamic model of the default robot (``config/robot.yaml``: 50 elements, damping
ratio 0.1, the integrator ``auto`` picks; ``--robot`` another) from rest at zero tension
towards the demo's target (``demo_target``: the statics tip with t0 and t1 at 2 N). Each
period the loop reads the model's tip, as the node reads ``tip/pose``. Per gain: when the
tip first comes within 2 mm of the target, from when it stays within 2 mm, and the largest
distance over the last 2 s. The model is deterministic: the figures do not depend on the
machine's load.

    python benchmarks/bench_tip_gain.py --json
"""

import json
import sys

from machine import machine_info
import numpy as np
from options import listed, non_negative, Parser, positive, readable_file
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands.demo import demo_target
from tendon_robot_sim.control.tip_control import TipController
from tendon_robot_sim.models.rod.model import TendonDynamics
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.tension_controller_node import PARAMS

DEFAULTS = {param.name: param.default for param in PARAMS}
BAND = 2e-3     # m: "within 2 mm of the target"


def run(robot, target: np.ndarray, gain: float, duration: float) -> np.ndarray:
    """Return the tip's distance to ``target`` [m] at the start of every control period."""
    model = TendonDynamics(robot)
    controller = TipController(robot, 'discrete', DEFAULTS['min_tension'])
    period = 1.0 / DEFAULTS['rate']
    largest = DEFAULTS['rate_limit'] * period       # N per period, as the node limits it
    tensions = np.zeros(len(robot.tendons))
    distances = []
    for _ in range(round(duration / period)):
        tip = model.state().tip.position
        distances.append(float(np.linalg.norm(tip - target)))
        wanted = controller.step(tensions, tip, target, gain, DEFAULTS['tip_max_step']).tensions
        tensions = tensions + np.clip(wanted - tensions, -largest, largest)
        model.apply('effort', tensions)
        model.advance(period)
    return np.array(distances)


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--gains', type=listed(non_negative), default=[0.02, 0.03, 0.05],
                        help='tip_gain values (default 0.02,0.03,0.05; the node: '
                             f'{DEFAULTS["tip_gain"]:g})')
    parser.add_argument('--robot', type=readable_file, default=None,
                        help='robot description (default: the package config/robot.yaml)')
    parser.add_argument('--duration', type=positive, default=8.0, help='seconds (default 8)')
    parser.add_argument('--json', action='store_true', help='print one JSON line at the end')
    args = parser.parse_args()
    if args.duration < 2.0:
        parser.error(f'--duration: must be at least 2 s (the last 2 s are judged), got '
                     f'{args.duration:g}')
    robot = load_robot(args.robot or default_robot_file())
    target = demo_target(robot, 2.0)
    result = {'target_m': target.tolist(), 'band_m': BAND, 'gains': {}}
    period = 1.0 / DEFAULTS['rate']
    for gain in args.gains:
        distances = run(robot, target, gain, args.duration)
        inside = distances <= BAND
        outside = np.nonzero(~inside)[0]
        stays = outside[-1] + 1 if outside.size else 0
        row = {'first_within_s': float(np.argmax(inside) * period) if inside.any() else None,
               'stays_within_s': float(stays * period) if stays < distances.size else None,
               'largest_last_2s_mm': 1e3 * float(distances[-round(2.0 / period):].max())}
        result['gains'][f'{gain:g}'] = row
        print(f'tip_gain {gain:g}: first within 2 mm at {row["first_within_s"]} s, within '
              f'from {row["stays_within_s"]} s on (None: not by the end), at most '
              f'{row["largest_last_2s_mm"]:.2f} mm over the last 2 s', flush=True)
    if args.json:
        result['machine'] = machine_info('numpy', 'numba')
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
