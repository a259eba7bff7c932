# Copyright 2017 Open Source Robotics Foundation, Inc.
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

import importlib.util
import subprocess
import sys

from ament_flake8.main import main_with_errors
import pytest


# flake8 forks its workers. A fork of the test process, which the tests before this one left
# with DDS and emulator threads, can crash (the child inherits locks other threads held), so
# the check runs in a process of its own.
CHECK = f"""
import sys
from {main_with_errors.__module__} import main_with_errors
rc, errors = main_with_errors(argv=[])
print('Found %d code style errors / warnings:' % len(errors))
print('\\n'.join(errors))
sys.exit(rc)
"""


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8() -> None:
    done = subprocess.run([sys.executable, '-c', CHECK], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[done.stdout.rfind('Found '):] + done.stderr


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8_has_the_plugins_of_ament_flake8() -> None:
    """
    Find the flake8 plugins that make ament_flake8's checks (docstrings, import order, quotes).

    flake8 runs without a missing plugin and reports none of its codes, so test_flake8 would
    pass with a weaker check; the ros-ament-flake8 wheel declares none of them as dependencies.
    """
    plugins = ['flake8_builtins', 'flake8_comprehensions', 'flake8_docstrings',
               'flake8_import_order', 'flake8_quotes']
    missing = [name for name in plugins if importlib.util.find_spec(name) is None]
    assert missing == [], f'flake8 plugins missing: {missing} (see requirements/python.txt)'
