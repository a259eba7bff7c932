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
``tendon-robot-sim reindex``: recover the bag of a recorder that was killed.

Named after ``ros2 bag reindex``, which rebuilds a bag's ``metadata.yaml``: this does that and
also ends an MCAP file its recorder never closed, or rolls an sqlite3 file's log in, so that
``replay``, ``calibrate``, ``validate`` and ``view --bag`` read what was recorded
(:mod:`tendon_robot_sim.experiment.bag_recovery`). A complete bag is left as it is.
"""

from __future__ import annotations

from pathlib import Path

from tendon_robot_sim.commands import command_error, DefaultsHelpFormatter
from tendon_robot_sim.experiment.bag import BagError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'reindex', help='recover the bag of a killed recorder (like ros2 bag reindex)',
        description='Make the bag folder of a recorder that was killed (SIGKILL, out of '
                    'memory, a power cut) readable again: what it wrote to disk is kept (all '
                    'but at most the last second), a record the kill cut off is dropped, and '
                    'metadata.yaml is written. A complete bag is left as it is.',
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument('bag', type=Path, metavar='BAG', help='bag folder (MCAP or sqlite3)')
    parser.set_defaults(func=run)


def run(args) -> int:
    from tendon_robot_sim.experiment.bag_recovery import recover_bag
    try:
        recovered = recover_bag(args.bag)
    except BagError as error:
        raise command_error(error) from None
    print(recovered.summary(), flush=True)
    return 0
