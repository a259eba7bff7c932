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

"""``tendon-robot-sim warmup`` refuses a cache it could not write to, before compiling."""

import os
from pathlib import Path
import subprocess
import sys

import tendon_robot_sim
from waiting import COMMAND_TIMEOUT

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent


def test_a_cache_folder_below_a_file_is_refused_in_one_line(tmp_path):
    blocker = tmp_path / 'a_file'
    blocker.write_text('')
    env = dict(os.environ, NUMBA_CACHE_DIR=str(blocker / 'numba'), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'warmup'], env=env,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f'tendon-robot-sim warmup: error: NUMBA_CACHE_DIR {blocker / "numba"}: {blocker} is '
        'not a folder; the compiled kernels could not be kept']
