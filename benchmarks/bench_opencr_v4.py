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
Calibration and validation speed on a real robot: opencr-mujoco's FTDCR v4 recordings.

Imports the train and val files of DATA (the folder of ``tdcr_sysid_20260511-183002_*.csv``
as opencr-mujoco names them, ``fetch`` ContinuumRoboticsLab/opencr-mujoco), then times, as
``make opencr-v4`` runs them (the settings of :data:`CALIBRATE` and :data:`VALIDATE`):

* ``calibrate``: the fit on the 1620 train samples, wall and CPU time (this process and its
  workers), parameter sets solved;
* ``validate``: the prediction of the 443 held-out samples (solves only, and the whole
  command: start, files, report);

and the held-out errors (``tip_rmse_mm``, ``tip_rmse_aligned_mm``). Targets of issue 39:
calibration within 60 s on the 2-core machine, validation within 10 s. The last line printed
with --json is one JSON object; the machine and its load are in it.

    python benchmarks/bench_opencr_v4.py DATA --json
"""

import argparse
import contextlib
import io
import json
import os
from pathlib import Path
import resource
import sys
import tempfile
import time

from machine import machine_info
from options import Parser
from tendon_robot_sim import cli

ROOT = Path(__file__).resolve().parents[1]
SESSION = 'tdcr_sysid_20260511-183002'
ROBOT = str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
COLUMNS = str(ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml')


def make_variable(name: str) -> str:
    """Return a variable of the Makefile: the options ``make opencr-v4`` runs with."""
    makefile = (ROOT / 'Makefile').read_text()
    line = next(line for line in makefile.splitlines() if line.startswith(name + ' :='))
    return line.split(':=', 1)[1].strip()


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children [s]."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(argv: list[str]) -> tuple[float, float, str]:
    """Run one command in this process; return wall and CPU seconds and its output."""
    out = io.StringIO()
    wall, cpu = time.perf_counter(), cpu_seconds()
    with contextlib.redirect_stdout(out):
        code = cli.main(argv)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    if code != 0:
        sys.exit(f'{" ".join(argv)}: exit {code}')
    return wall, cpu, out.getvalue()


def recordings(text: str) -> Path:
    """Argument type of DATA: a folder that holds the session's train and val files."""
    missing = [f'{SESSION}_{part}.csv' for part in ('train', 'val')
               if not (Path(text) / f'{SESSION}_{part}.csv').is_file()]
    if missing:
        raise argparse.ArgumentTypeError(f'{text}: no {" or ".join(missing)} in it')
    return Path(text)


def main() -> None:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('data', type=recordings, help='folder of the v4 CSV files')
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for part in ('train', 'val'):
            timed(['import', str(args.data / f'{SESSION}_{part}.csv'), '--columns', COLUMNS,
                   '--robot', ROBOT, '--out', str(folder / part)])
        calibrated = folder / 'calibrated.yaml'
        options = make_variable('OPENCR_MODEL').split()
        fit_wall, fit_cpu, fit_out = timed(['calibrate', str(folder / 'train'), '--robot', ROBOT,
                                            *options, '--fit', make_variable('OPENCR_FIT'),
                                            '--out', str(calibrated)])
        val_wall, val_cpu, val_out = timed(['validate', str(folder / 'val'), '--robot',
                                            str(calibrated), *options, '--json', '--report',
                                            str(folder / 'report')])
        result = json.loads(val_out.strip().splitlines()[-1])
        model, step = (options[options.index(key) + 1] for key in ('--model', '--step'))
        solve_wall = _solve_time(calibrated, folder / 'val', model, float(step))
    summary = {
        'calibrate_s': fit_wall, 'calibrate_cpu_s': fit_cpu,
        'calibrate_output_tail': fit_out.strip().splitlines()[-3:],
        'validate_s': val_wall, 'validate_cpu_s': val_cpu, 'validate_solves_s': solve_wall,
        'samples_validated': result['samples'], 'model': model,
        'tip_rmse_mm': result['tip_rmse_mm'],
        'tip_rmse_aligned_mm': result['tip_rmse_aligned_mm'],
        'targets_s': {'calibrate': 60.0, 'validate': 10.0},
        'load_average_1min_before': load_before,
        **machine_info('numpy', 'numba', 'scipy'),
    }
    print(f'calibrate {fit_wall:.1f} s ({fit_cpu:.1f} s CPU), validate {val_wall:.1f} s '
          f'(solves {solve_wall:.2f} s), held-out {result["tip_rmse_aligned_mm"]:.2f} mm aligned, '
          f'{result["tip_rmse_mm"]:.2f} mm')
    if args.json:
        print(json.dumps(summary))


def _solve_time(robot_file: Path, bag: Path, model: str, step: float) -> float:
    """Wall seconds to predict the held-out samples (two workers), after loading."""
    from tendon_robot_sim.experiment.experiment import load_points
    from tendon_robot_sim.experiment.tip_validation import validate_samples
    from tendon_robot_sim.models.tendon_robot import load_robot

    robot, samples = load_points(bag, load_robot(robot_file), 'samples')
    start = time.perf_counter()
    validate_samples(robot, samples, model, workers=2, step=step)
    return time.perf_counter() - start


if __name__ == '__main__':
    main()
