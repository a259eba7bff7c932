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
Share files (config, URDF, RViz, launch) come from the install tree when installed.

An ament install is faked as colcon lays it out: an ament index entry under
``share/ament_index/resource_index/packages`` and the files under
``share/tendon_robot_sim``, found through ``AMENT_PREFIX_PATH``.
"""

import json
import os
from pathlib import Path
import subprocess
import sys

import tendon_robot_sim
from waiting import COMMAND_TIMEOUT

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent
PROBE = """
import json
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.stack import STACKS
files = [str(f.resolve()) for node in STACKS['sim'].nodes for f in node.parameter_files]
print(json.dumps({'share': str(share_dir()), 'robot': str(default_robot_file()),
                  'parameter_files': files}))
"""


def share_paths(ament_prefix_path: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != 'AMENT_PREFIX_PATH'}
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    if ament_prefix_path is not None:
        env['AMENT_PREFIX_PATH'] = ament_prefix_path
    result = subprocess.run([sys.executable, '-c', PROBE], env=env, capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_installed_package_resolves_share_files_from_the_install_tree(tmp_path):
    prefix = tmp_path / 'install'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    (index / 'tendon_robot_sim').write_text('')
    share = prefix / 'share' / 'tendon_robot_sim'
    (share / 'config').mkdir(parents=True)
    for path in (ROOT / 'config').glob('*.yaml'):
        (share / 'config' / path.name).write_text(path.read_text())
    found = share_paths(str(prefix))
    assert found['share'] == str(share)
    assert found['robot'] == str(share / 'config' / 'robot.yaml')
    assert found['parameter_files'] and all(f.startswith(str(share))
                                            for f in found['parameter_files'])


def test_without_an_install_the_source_tree_is_used():
    for prefix_path in (None, '/nonexistent/prefix'):
        assert share_paths(prefix_path)['share'] == str(ROOT)
