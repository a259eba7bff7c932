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
Samples per second of ``tendon-robot-sim dataset`` on 1 and 2 workers (issue 24, 4).

The same dataset (default: the parallel robot's forward kinetostatics over its whole motor
box, Latin hypercube) is built in this process, on 2 local processes, and on a 2-worker Dask
cluster over TCP on 127.0.0.1 (``distributed.LocalCluster``). Rates are of wall time for the
whole build (sampling, solving, Parquet); the local runs include starting their processes
(numba kernels from the on-disk cache), the cluster's workers are started and warmed by one
small build first. Target: speed-up per worker added >= 0.8, i.e. 2 workers >= 1.8 x 1.
``machine.load_average_1min`` says how busy the machine was: on a loaded 2-core machine
the second worker has no core of its own. The last line printed with --json is one JSON
object.

    python benchmarks/bench_dataset.py --json
"""

import json
from pathlib import Path
import sys
import tempfile

from machine import machine_info
from options import Parser, positive_int
from tendon_robot_sim.experiment.dataset import build_dataset
from tendon_robot_sim.models.pcr.robot import default_pcr_file

CONFIG = Path(__file__).resolve().parents[1] / 'config'


def rate(robot, model, samples, chunk, folder, name, **pool) -> dict:
    summary = build_dataset(robot, model, Path(folder) / name, samples, 'lhs',
                            chunk_size=chunk, progress=False, **pool)
    return {'samples_per_second': samples / summary['wall_time_s'],
            'wall_time_s': summary['wall_time_s'], 'converged': summary['converged'],
            'failed': summary['failed']}


def main(argv=None) -> int:
    parser = Parser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--model', default='pcr', choices=('pcr', 'statics', 'cc', 'snake'))
    parser.add_argument('--samples', type=positive_int, default=400)
    parser.add_argument('--chunk-size', type=positive_int, default=20)
    parser.add_argument('--json', action='store_true', help='end with one JSON line')
    args = parser.parse_args(argv)
    robot = str({'pcr': default_pcr_file(), 'snake': CONFIG / 'rolling_joint_snake.yaml'}
                .get(args.model, CONFIG / 'robot.yaml'))
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        run = (robot, args.model, args.samples, args.chunk_size, folder)
        out['in_process'] = rate(*run, 'one', workers=1)
        out['local_2_workers'] = rate(*run, 'two', workers=2)
        import distributed
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      host='127.0.0.1', dashboard_address=None) as cluster:
            address = cluster.scheduler_address
            build_dataset(robot, args.model, Path(folder) / 'warm', 4 * args.chunk_size,
                          'lhs', random_state=1, chunk_size=args.chunk_size, progress=False,
                          scheduler=address)
            out['tcp_cluster_2_workers'] = rate(*run, 'tcp', scheduler=address)
    one = out['in_process']['samples_per_second']
    for key in ('local_2_workers', 'tcp_cluster_2_workers'):
        # speed-up per worker added: (rate_2 / rate_1 - 1) / (2 - 1)
        out[key]['speedup_per_worker_added'] = out[key]['samples_per_second'] / one - 1.0
    print(f'{args.model}, {args.samples} samples: ' + ', '.join(
        f'{k} {v["samples_per_second"]:.1f}/s' for k, v in out.items()))
    summary = {'benchmark': 'dataset', 'model': args.model, 'samples': args.samples,
               'chunk_size': args.chunk_size, **out,
               'machine': machine_info('numpy', 'numba', 'dask', 'distributed', 'pyarrow')}
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == '__main__':
    sys.exit(main())
