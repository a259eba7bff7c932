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
The scripts in benchmarks/ back the figures of docs/performance.md: they must still run.

A full run takes minutes (and numba compiles of the benchmarks' own loops), so these tests
import every script, which catches a module moved or renamed under them, the way the package
changes most often, and give each a bad option, which it must refuse before any work.
"""

import json
from pathlib import Path
import subprocess
import sys

import pytest

# the package's source tree (a conftest import would find whichever conftest came first)
BENCHMARKS = Path(__file__).resolve().parents[2] / 'benchmarks'

# Imports each script as the benchmark runs it (``python benchmarks/NAME.py`` puts benchmarks/
# first on the path) and prints one line per script that does not import.
IMPORT_ALL = """
import importlib, sys, traceback
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except Exception:
        print(name + ': ' + traceback.format_exc().strip().splitlines()[-1])
"""


def test_every_benchmark_script_imports():
    names = sorted(path.stem for path in BENCHMARKS.glob('*.py'))
    assert 'bench_dynamics' in names
    run = subprocess.run([sys.executable, '-c', IMPORT_ALL, str(BENCHMARKS), *names],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == '', run.stdout


# A bad value of an option of each script: a count of 0, a time of 0, a name it does not know.
# Each used to end in a traceback (or, for --switches 0, exit 0 with no result), most of them
# after minutes of work (bench_opencr_v4: a folder without the recordings, exit 1 in two lines);
# --bogus for the scripts whose options all take any value.
BAD_OPTIONS = {
    'bench_bag_close_memory': ['--size', '0'],
    'bench_bag_flush': ['--seconds', '0'],
    'bench_cc_dynamics': ['--repeats', '0'],
    'bench_command_start': ['--repeat', '0'],
    'bench_contact': ['--repeats', '0'],
    'bench_contact_press': ['--models', 'bogus'],
    'bench_dataset': ['--samples', '0'],
    'bench_dynamics': ['--elements', '10,abc'],
    'bench_dynamixel_bus': ['--duration', '0'],
    'bench_error_control': ['--cases', 'bogus'],
    'bench_first_start': ['--repeat', '0'],
    'bench_friction_dynamics': ['--blocks', '0'],
    'bench_implicit': ['--blocks', '0'],
    'bench_mode_switch': ['--switches', '0'],
    'bench_node_parts': ['--cases', 'steel,bogus'],
    'bench_opencr_v4': ['/nonexistent/v4_data'],
    'bench_pcr': ['--cold', '0'],
    'bench_pcr_peer': ['--repeat', '0'],
    'bench_recording_memory': ['--minutes', '0'],
    'bench_setpoint_forms': ['--repeat', '0'],
    'bench_sim_node': ['--window', '0'],
    'bench_snake': ['--repeats', '0'],
    'bench_statics': ['--cold', '0'],
    'bench_stick_slip': ['--models', 'bogus'],
    'bench_streaming': ['--cases', 'bogus'],
    'bench_time_to_robot': ['--bogus'],
    'bench_tip_gain': ['--duration', '1'],
    'bench_view': ['--seconds', '0'],
    'validate_cc_dynamics': ['--duration', '0'],
}
# More bad values, case 'NAME:what': a window too short to hold its start mark (KeyError 'start'
# once the simulator had run), a repository that is not one (a traceback from git clone).
MORE_BAD_OPTIONS = {
    'bench_sim_node:short window': ['--window', '0.001'],
    'bench_time_to_robot:no repository': ['--repo', '/nonexistent'],
}
# A robot file that is not there, to the scripts that take one: a traceback from the loader.
ROBOT_SCRIPTS = ('bench_dynamics', 'bench_pcr', 'bench_snake', 'bench_statics', 'bench_tip_gain',
                 'bench_view', 'validate_cc_dynamics')
MISSING_ROBOT = ['--robot', '/nonexistent/robot.yaml']
# Modules the scripts share, with no command line.
HELPERS = {'machine', 'options', 'simulator_process'}

# Calls each script's main() (case 'NAME' or 'NAME:what') with its bad option in one process (one
# import of each, not one process each) and prints, per case, its exit code and what it wrote
# to stderr. A script that starts working instead is stopped after 20 s and reported as such.
REFUSE_ALL = """
import contextlib, importlib, io, json, signal, sys
sys.path.insert(0, sys.argv[1])
cases = json.loads(sys.argv[2])
def ran(*_):
    raise TimeoutError('still running after 20 s: the option was taken')
signal.signal(signal.SIGALRM, ran)
results = {}
for name, argv in cases.items():
    module = importlib.import_module(name.split(':')[0])
    sys.argv = [name.split(':')[0] + '.py', *argv]
    stderr = io.StringIO()
    signal.alarm(20)
    try:
        with contextlib.redirect_stderr(stderr):
            module.main()
        code = 0
    except SystemExit as stop:
        code = stop.code
    except BaseException as error:
        code = repr(error)
    signal.alarm(0)
    results[name] = [code, stderr.getvalue()]
print(json.dumps(results))
"""


@pytest.fixture(scope='module')
def refusals():
    cases = dict(BAD_OPTIONS, **MORE_BAD_OPTIONS,
                 **{f'{name}:robot': MISSING_ROBOT for name in ROBOT_SCRIPTS})
    run = subprocess.run([sys.executable, '-c', REFUSE_ALL, str(BENCHMARKS), json.dumps(cases)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_every_script_has_a_bad_option_here():
    scripts = {path.stem for path in BENCHMARKS.glob('*.py')} - HELPERS
    assert scripts == set(BAD_OPTIONS)


@pytest.mark.parametrize('script', sorted(BAD_OPTIONS) + sorted(MORE_BAD_OPTIONS))
def test_a_bad_option_is_one_line_and_exit_2(refusals, script):
    code, stderr = refusals[script]
    argv = {**BAD_OPTIONS, **MORE_BAD_OPTIONS}[script]
    option = next((word for word in argv if word.startswith('--')), argv[0])
    assert code == 2, (code, stderr)
    assert len(stderr.splitlines()) == 1, stderr
    assert option in stderr, stderr


@pytest.mark.parametrize('script', ROBOT_SCRIPTS)
def test_a_missing_robot_file_is_one_line_and_exit_2(refusals, script):
    code, stderr = refusals[f'{script}:robot']
    assert code == 2, (code, stderr)
    assert len(stderr.splitlines()) == 1, stderr
    assert '--robot' in stderr and MISSING_ROBOT[1] in stderr, stderr
