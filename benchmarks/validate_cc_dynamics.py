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
The CC Lagrange dynamics against the project's Cosserat models (default tendon robot).

Statics: steady tips of the CC model (its static equilibrium, x' = x'' = 0) against the
``cosserat`` shooting statics, for each tendon alone at 1 to 8 N and for two tendons
together; without gravity (target: within 1 % of the length L) and with gravity (reported).

Dynamics: the free swing of the straight robot released under gravity, in the CC model
and in the PyElastica simulator (``TendonSimulator``); the first natural frequency from
the tip's zero crossings about its mean, and for the CC model also from the eigenvalues
of its linearisation about the sagged equilibrium. Twice: the robot as described (both
models give the vertebrae weight and inertia, and damp as ``rod.damping`` says), and
without damping.

The last line printed with --json is one JSON object; --plot writes a PNG of the two
swings and of the static tips.

    python benchmarks/validate_cc_dynamics.py --json --plot docs/cc_dynamics_validation.png
"""

import json
import sys

from machine import machine_info
import numpy as np
from options import Parser, positive, readable_file
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tqdm import tqdm


def with_gravity(robot, gravity):
    data = robot.to_dict()
    data['gravity'] = list(gravity)
    return robot_from_dict(data)


def load_cases(robot):
    names = robot.tendon_names
    cases = [{name: tension} for name in names for tension in (1.0, 4.0, 8.0)]
    cases += [{names[0]: 3.0, names[1]: 2.0}, {names[1]: 5.0, names[2]: 1.0}]
    return cases


def statics(robot, show: bool) -> dict:
    out = {}
    for label, gravity in (('no_gravity', (0.0, 0.0, 0.0)), ('gravity', robot.gravity)):
        loaded = with_gravity(robot, gravity)
        cc = CCDynamics.from_tendon_robot(loaded)
        cosserat = StaticsSolver(loaded, 'cosserat')
        rows = []
        guess = None
        for case in tqdm(load_cases(robot), desc=f'statics {label}', disable=not show,
                         file=sys.stderr):
            inputs = cc.input_vector(case)
            x = cc.equilibrium(inputs, guess)
            tip_cc = cc.frames(x)[-1][1]
            tip_rod = cosserat.solve_tensions(case).tip_position
            rows.append({'tensions': case, 'cc_tip': tip_cc.tolist(),
                         'cosserat_tip': tip_rod.tolist(),
                         'error_mm': 1e3 * float(np.linalg.norm(tip_cc - tip_rod))})
        errors = np.array([r['error_mm'] for r in rows])
        out[label] = {'cases': rows, 'max_error_mm': float(errors.max()),
                      'max_error_percent_of_length':
                          float(errors.max() / (1e3 * robot.rod.length) * 100.0),
                      'mean_error_mm': float(errors.mean())}
    return out


def swing_frequency(times, values) -> float:
    """Hz from the upward zero crossings of values - mean (linear interpolation)."""
    y = values - values.mean()
    up = np.where((y[:-1] < 0.0) & (y[1:] >= 0.0))[0]
    crossings = times[up] - y[up] * (times[up + 1] - times[up]) / (y[up + 1] - y[up])
    return float(1.0 / np.mean(np.diff(crossings)))


def dynamics(robot, duration: float, show: bool) -> tuple[dict, dict]:
    cc = CCDynamics.from_tendon_robot(robot)
    zero = np.zeros(len(robot.tendons))
    run = cc.simulate(zero, duration, dt=1e-3)
    cc_tips = run.tip_positions()
    sagged = cc.equilibrium(zero)
    sim = TendonSimulator(robot)
    interval = 2e-3
    times, tips = [0.0], [sim.state().tip_position]
    for _ in tqdm(range(int(round(duration / interval))), desc='PyElastica swing',
                  disable=not show, file=sys.stderr):
        state = sim.advance(interval)
        times.append(state.time)
        tips.append(state.tip_position)
    times, tips = np.array(times), np.array(tips)
    vertical = np.argmax(np.abs(robot.gravity))
    curves = {'cc': (run.times, cc_tips[:, vertical]), 'pyelastica': (times, tips[:, vertical])}
    return curves, {
        'duration': duration,
        'cc_first_frequency_hz_swing': swing_frequency(run.times, cc_tips[:, vertical]),
        'cc_first_frequency_hz_linear': float(cc.natural_frequencies(sagged, zero)[0]),
        'pyelastica_first_frequency_hz_swing': swing_frequency(times, tips[:, vertical]),
        'cc_mean_sag_mm': float(1e3 * (cc_tips[:, vertical].mean() - cc_tips[0, vertical])),
        'pyelastica_mean_sag_mm': float(1e3 * (tips[:, vertical].mean() - tips[0, vertical])),
        'pyelastica_elements': robot.rod.elements, 'pyelastica_dt': sim.dt,
    }


def plot(path, result: dict, curves: dict) -> None:
    """Left: the tip height of the free swing in both models; right: static tips."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    d = result['dynamics']
    for name, label in (('cc', f'CC Lagrange ({d["cc_first_frequency_hz_swing"]:.2f} Hz)'),
                        ('pyelastica', 'PyElastica Cosserat '
                                       f'({d["pyelastica_first_frequency_hz_swing"]:.2f} Hz)')):
        times, heights = curves[name]
        left.plot(times, 1e3 * heights, label=label)
    left.set_xlabel('time [s]')
    left.set_ylabel('tip height [mm]')
    left.set_title('free swing of the straight robot under gravity', fontsize=10)
    left.legend()
    left.grid(True, alpha=0.3)
    for label, marker in (('no_gravity', 'o'), ('gravity', 's')):
        cases = result['statics'][label]['cases']
        cc = 1e3 * np.array([c['cc_tip'] for c in cases])
        rod = 1e3 * np.array([c['cosserat_tip'] for c in cases])
        right.scatter(rod[:, 1], rod[:, 2], marker=marker, facecolors='none',
                      edgecolors='k', label=f'cosserat, {label.replace("_", " ")}')
        right.scatter(cc[:, 1], cc[:, 2], marker=marker, s=12,
                      label=f'CC, {label.replace("_", " ")}')
    right.set_xlabel('tip y [mm]')
    right.set_ylabel('tip z [mm]')
    right.set_title('static tips, 14 tension cases', fontsize=10)
    right.set_aspect('equal', adjustable='datalim')
    right.legend(fontsize=8)
    right.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', type=readable_file, default=None,
                        help='robot description (default robot)')
    parser.add_argument('--duration', type=positive, default=3.0,
                        help='simulated seconds of the free swing (default 3)')
    parser.add_argument('--json', action='store_true', help='print one JSON line at the end')
    parser.add_argument('--plot', default=None, metavar='PNG', help='write a plot')
    args = parser.parse_args()
    robot = load_robot(args.robot or default_robot_file())
    show = sys.stderr.isatty()
    curves, swing = dynamics(robot, args.duration, show)
    data = robot.to_dict()
    data['rod']['damping'] = {'ratio': 0.0}
    _, undamped = dynamics(robot_from_dict(data), args.duration, show)
    result = {'robot': robot.name, 'length_m': robot.rod.length,
              'statics': statics(robot, show), 'dynamics': swing,
              'dynamics_undamped': undamped,
              'machine': machine_info('numpy', 'numba', 'pyelastica')}
    if args.plot:
        plot(args.plot, result, curves)
    for label in ('no_gravity', 'gravity'):
        s = result['statics'][label]
        print(f'statics {label:10s}: CC vs cosserat tip, max {s["max_error_mm"]:.3g} mm '
              f'({s["max_error_percent_of_length"]:.3g} % of L), mean {s["mean_error_mm"]:.3g} mm')
    for label in ('dynamics', 'dynamics_undamped'):
        d = result[label]
        print(f'{label}: first frequency CC {d["cc_first_frequency_hz_swing"]:.3g} Hz (swing), '
              f'{d["cc_first_frequency_hz_linear"]:.3g} Hz (linearised); PyElastica '
              f'{d["pyelastica_first_frequency_hz_swing"]:.3g} Hz (swing)')
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
