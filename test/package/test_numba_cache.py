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

"""Where numba caches the kernels: beside the sources, or per user for a read-only install."""

import os
from pathlib import Path
import subprocess
import sys

import tendon_robot_sim
from tendon_robot_sim import numba_cache_dir

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent


def test_a_writable_package_keeps_numbas_default(tmp_path):
    (tmp_path / 'models').mkdir()
    assert numba_cache_dir(tmp_path) is None


def test_a_read_only_install_caches_in_the_users_cache_folder(tmp_path, monkeypatch):
    package = tmp_path / 'site-packages' / 'tendon_robot_sim'
    (package / 'models').mkdir(parents=True)
    readable = os.access
    # As a user without write access to the install sees it (the tests may run as root,
    # who may write anywhere).
    monkeypatch.setattr(os, 'access', lambda path, mode: (
        False if mode == os.W_OK and str(path).startswith(str(package)) else
        readable(path, mode)))
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'cache'))
    assert numba_cache_dir(package) == tmp_path / 'cache' / 'tendon_robot_sim' / 'numba'
    monkeypatch.delenv('XDG_CACHE_HOME')
    assert numba_cache_dir(package) == Path.home() / '.cache' / 'tendon_robot_sim' / 'numba'


# A process that cannot write to the package (os.access says so before the package is
# imported), then imports numba: numba's cache folder is the user's.
READ_ONLY_START = """
import os
os.access = lambda path, mode: mode != os.W_OK
import tendon_robot_sim
import numba
print(numba.config.CACHE_DIR)
"""


def test_every_entry_point_gets_the_setting_before_numba_reads_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != 'NUMBA_CACHE_DIR'}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, '-c', READ_ONLY_START], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(tmp_path / 'tendon_robot_sim' / 'numba')
    # A NUMBA_CACHE_DIR of the user's own wins.
    env['NUMBA_CACHE_DIR'] = str(tmp_path / 'mine')
    out = subprocess.run([sys.executable, '-c', READ_ONLY_START], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == str(tmp_path / 'mine')
