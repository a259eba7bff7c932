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

"""Test-wide settings: DDS stays on this machine, on a domain of this run's own."""

import os
from pathlib import Path
import signal
import threading

import pytest
# First, before a test module loads numpy: the package's process settings (one OpenBLAS
# thread, tendon_robot_sim/__init__.py) then hold in every test process and in what it starts.
# Three workers share two cores with the nodes and commands they start, where OpenBLAS's second
# thread spun for a core another process held: the suite took 10 % less CPU with one
# (docs/development.md), and BLAS rounds alike on machines with any number of cores.
import tendon_robot_sim  # noqa: F401

# Kilted ignores ROS_LOCALHOST_ONLY; this keeps discovery on loopback.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
# A domain per run so parallel runs on one machine never see each other's topics; with
# pytest-xdist, a domain per worker too (gw0 keeps the run's, gw1 the next one, ...).
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
if os.environ.get('PYTEST_XDIST_WORKER', 'gw0') != 'gw0':
    worker = int(os.environ['PYTEST_XDIST_WORKER'][2:])
    os.environ['ROS_DOMAIN_ID'] = str(1 + (int(os.environ['ROS_DOMAIN_ID']) - 1 + 101 * worker)
                                      % 232)

# A shell starts background jobs (`make test &`, some CI runners) with SIGINT ignored, and the
# ignore is inherited through exec: the tests that press Ctrl-C on a node or a command would
# then find it ignored. Give this process Python's own handler, so its children start with
# the default one, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
# The marks of the linter tests as `ros2 pkg create` generates them (colcon test selects by them).
LINTER_MARKS = {
    'linter': 'a code style check of the whole package (ament linters)',
    'copyright': 'ament_copyright: license headers and LICENSE',
    'flake8': 'ament_flake8: code style',
    'pep257': 'ament_pep257: docstring style',
}


class ExitInATest(BaseException):
    """``os._exit`` called by the code under test in the pytest process itself."""


class ExitGuard:
    """
    Turn ``os._exit`` in the pytest process, while a test runs, into a failure of that test.

    Nodes and commands end their process with ``os._exit`` after a forced stop
    (tendon_robot_sim.ros.runner, cli). Run in the pytest process, that ended a pytest-xdist
    worker ('node down: Not properly terminated'), and the run hung at 98 %. Forked children
    (multiprocessing) and pytest's own machinery outside the tests keep the real call.
    """

    def __init__(self):
        self.pid = os.getpid()
        self.real_exit = os._exit
        self.in_test = False
        self.calls = []

    def __call__(self, code):
        if not self.in_test or os.getpid() != self.pid:
            self.real_exit(code)
        if threading.current_thread() is not threading.main_thread():
            self.calls.append(code)   # raised in a thread, the test would not hear of it
        raise ExitInATest(f'os._exit({code}) in the pytest process: it would have ended it')


EXIT_GUARD = ExitGuard()
os._exit = EXIT_GUARD


@pytest.fixture(autouse=True)
def no_exit_from_the_test_process():
    """Fail a test whose code called ``os._exit`` in this process (also from a thread)."""
    EXIT_GUARD.in_test, EXIT_GUARD.calls = True, []
    try:
        yield
    finally:
        EXIT_GUARD.in_test = False
    assert not EXIT_GUARD.calls, (f'os._exit({EXIT_GUARD.calls[0]}) called in a thread of the '
                                  'test process')


def pytest_configure(config):
    for name, description in LINTER_MARKS.items():
        config.addinivalue_line('markers', f'{name}: {description}')


@pytest.fixture(autouse=True)
def linters_run_in_the_package_root(request, monkeypatch):
    """
    Run the linter tests from the package root, whatever directory pytest was started in.

    The generated linter tests check the current directory (as colcon test runs them), so
    ``pytest test/package/test_flake8.py`` from elsewhere would check the wrong tree.
    """
    if request.node.get_closest_marker('linter') is not None:
        monkeypatch.chdir(PACKAGE_ROOT)


@pytest.fixture(scope='module')
def robot_file(tmp_path_factory):
    """Write a small, fast robot file (test/ros_helpers.py small_robot_dict) for the node tests."""
    from ros_helpers import write_small_robot   # here: ROS-free tests never import rclpy
    return write_small_robot(tmp_path_factory.mktemp('robot'))
