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
Ctrl-C during the first start, while numba compiles the kernels (20-30 s), ends the process.

Each process gets an empty numba cache of its own, so it must compile; the signal is sent
while it does (the first kernel is in the cache, the others are still compiling), and the
process must be gone within 2 s. The interrupt that Python raises in the main thread can be
lost there (a callback from C, C code that clears it, a library that swallows it): then the
package's StopWatchdog ends the process on its own, one second after the signal.
"""

from contextlib import contextmanager
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest
from ros_helpers import wait_for
import tendon_robot_sim
from waiting import COMMAND_TIMEOUT

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent
# s after the signal: the promise to the user (issue 24). Held to in CPU seconds of the
# process (what a quiet machine's wall time is): a loaded machine stretches the wall time of
# an exit, and of the 1 s watchdog that forces one, by its load.
EXIT_WITHIN = 2.0


def start_cold(arguments: list[str], cache: Path, log: Path,
               preexec_fn=None) -> subprocess.Popen:
    """``python ARGUMENTS`` from this source tree with an empty numba cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (str(ROOT), env.get('PYTHONPATH')) if p)
    with open(log, 'w') as out:
        return subprocess.Popen([sys.executable, *arguments], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=preexec_fn)


def as_a_background_job() -> None:
    """Start as a script's ``command &`` does: with SIGINT ignored (no job control)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def ended(process: subprocess.Popen):
    """Yield ``process``; kill it afterwards if it still runs, whatever happened."""
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def cpu_seconds(pid: int) -> float:
    """CPU time [s] process ``pid`` has used so far (utime + stime of /proc/PID/stat)."""
    with open(f'/proc/{pid}/stat') as stat:
        fields = stat.read().rsplit(')', 1)[1].split()   # from field 3 on (the name may hold ')')
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def seconds_to_exit(process: subprocess.Popen, signum: int) -> float:
    """Send ``signum``; the CPU seconds ``process`` then spends until it has exited."""
    before = cpu_seconds(process.pid)
    process.send_signal(signum)
    wait_for(lambda: os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT),
             'the process to exit')
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime - before


def compiling(cache: Path, process: subprocess.Popen, log: Path) -> bool:
    """Return True once the first kernel is in the cache: numba compiles, more to come."""
    assert process.poll() is None, log.read_text()
    return any(cache.rglob('*.nbi'))


def compiled(cache: Path, kernel: str) -> list[str]:
    """Names of the cached compiled kernels whose name contains ``kernel``."""
    return sorted(p.name for p in cache.rglob('*.nbc') if kernel in p.name)


def assert_quiet(output: str) -> None:
    """Assert that a stopped node's output holds no traceback and no error line."""
    assert not any(mark in output for mark in ('Traceback', 'Error occurred at', '[FATAL]',
                                               '[ERROR]')), output


def test_ctrl_c_while_the_simulator_node_compiles(tmp_path):
    cache, log = tmp_path / 'numba', tmp_path / 'node.log'
    with ended(start_cold(['-m', 'tendon_robot_sim.nodes.simulator_node'], cache, log)) as node:
        # The constructor is done (it logs its mode); the first physics tick compiles the rod.
        # a cold start (an empty numba cache): at load 29 it took longer than TIMEOUT
        wait_for(lambda: 'simulating a' in log.read_text(), 'the node to start',
                 COMMAND_TIMEOUT)
        wait_for(lambda: compiling(cache, node, log), 'the first kernel compiled',
                 COMMAND_TIMEOUT)
        took = seconds_to_exit(node, signal.SIGINT)
    assert took < EXIT_WITHIN, log.read_text()
    assert node.returncode == 0, log.read_text()
    # quiet: the interrupt of the tick is no 'Exception in 'timers' callback' of rclpy's
    # EventsExecutor with the compiler's traceback
    assert_quiet(log.read_text())
    # It was compiling: the rod step, once compiled to the end, is in the cache.
    assert not compiled(cache, 'advance_rod'), compiled(cache, '')


# The case: `kill -INT` of a background job, which started with SIGINT ignored, went
# unheard while the command compiled for 134 s; then it printed its result and exited 0.
@pytest.mark.parametrize('preexec_fn', [None, as_a_background_job],
                         ids=['from a terminal', 'a background job'])
def test_ctrl_c_while_a_command_compiles(preexec_fn, tmp_path):
    cache, log = tmp_path / 'numba', tmp_path / 'statics.log'
    with ended(start_cold(['-m', 'tendon_robot_sim.cli', 'statics', '--tensions', '0,2,0,0'],
                          cache, log, preexec_fn)) as command:
        wait_for(lambda: compiling(cache, command, log), 'the first kernel compiled',
                 COMMAND_TIMEOUT)
        took = seconds_to_exit(command, signal.SIGINT)
    assert took < EXIT_WITHIN, log.read_text()
    assert command.returncode == 130, log.read_text()
    assert 'tip position' not in log.read_text()   # interrupted, not finished
    assert 'Traceback' not in log.read_text()
    assert not compiled(cache, 'solve'), compiled(cache, '')


# The script's entry as a background job: a `kill -INT` while the commands were still loading
# (0.3 s, before cli.main took SIGINT back) was lost, and the command ran to its end, exit 0.
INTERRUPTED_WHILE_LOADING = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)     # as a script's `command &` starts

class InterruptTheLoad:
    # the kill -INT arrives as the command-line tool loads its commands
    def find_spec(self, name, path=None, target=None):
        if name == 'tendon_robot_sim.commands':
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptTheLoad())
from tendon_robot_sim import script
sys.argv = ['tendon-robot-sim', 'statics', '--tensions', '0,2,0,0']
sys.exit(script.main())     # setup.py's entry point of the script
"""


def test_ctrl_c_of_a_background_job_while_the_commands_load():
    result = subprocess.run([sys.executable, '-c', INTERRUPTED_WHILE_LOADING], cwd=ROOT,
                            capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert result.returncode == 130, result.stdout + result.stderr
    assert 'tip position' not in result.stdout     # interrupted, not finished
    assert result.stderr == '', result.stderr      # no traceback


# A Ctrl-C that lands while C calls back into Python through ctypes (numba's compiler does,
# to cache what it emitted) is lost there, and the compile fails with an unrelated error:
# seen once in the test above as 'internal error: RuntimeError: no compiled object yet'.
LOSE_THE_INTERRUPT = """
import ctypes, os, signal, sys, time

def lose_the_interrupt(signum, hold):
    # the signal arrives while C calls back into Python, which stays there for hold s
    callback = ctypes.CFUNCTYPE(None)(lambda: (os.kill(os.getpid(), signum), time.sleep(hold)))
    callback()
    raise RuntimeError('no compiled object yet')
"""


def run_script(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-c', LOSE_THE_INTERRUPT + script], cwd=ROOT,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_a_ctrl_c_lost_in_a_callback_from_c_still_interrupts_a_command():
    result = run_script("""
from tendon_robot_sim import cli
from tendon_robot_sim.commands import statics
statics.run = lambda args: lose_the_interrupt(signal.SIGINT, 0.1)
sys.exit(cli.main(['statics', '--tensions', '0,2,0,0']))
""")
    assert result.returncode == 130, result.stderr
    assert result.stderr == '', result.stderr   # no 'Exception ignored ... Traceback'


def test_a_stop_signal_lost_in_a_callback_from_c_still_stops_a_node():
    # SIGTERM is noted; the reminders that raise it in the main thread (every 0.2 s) land
    # in the callback and are lost; then the constructor fails.
    result = run_script("""
from tendon_robot_sim.ros.runner import run_node
sys.exit(run_node(lambda: lose_the_interrupt(signal.SIGTERM, 0.5), 'compiling', []))
""")
    assert result.returncode == 0, result.stderr
    assert 'Traceback' not in result.stderr, result.stderr


# A Ctrl-C that a library swallows (trimesh's `except BaseException` guards; C code that
# clears the error) leaves nothing behind: no error, no lost-interrupt report. The command
# then compiled on for minutes, printed its result and exited 0 (issue 37).
SWALLOWING = """
import os, signal, sys, time

def compile_swallowing(seconds):
    # 'compiling' (busy, in C, as a compiler is) for `seconds` s in a library that swallows
    # every interrupt (it lands at the next call, in the try)
    end = time.monotonic() + seconds
    print('compiling', flush=True)
    while True:
        try:
            sum(range(100000))
            if time.monotonic() > end:
                break
        except BaseException:
            pass
    print('compiled to the end', flush=True)
"""
SWALLOWED = {
    'command': (130, SWALLOWING + """
from tendon_robot_sim import cli
from tendon_robot_sim.commands import statics
statics.run = lambda args: compile_swallowing(30.0)
sys.exit(cli.main(['statics', '--tensions', '0,2,0,0']))
"""),
    'node': (0, SWALLOWING + """
from tendon_robot_sim.ros.runner import run_node
sys.exit(run_node(lambda: compile_swallowing(30.0), 'compiling', []))
""")}


@pytest.mark.parametrize('what', SWALLOWED)
def test_a_ctrl_c_a_library_swallows_still_stops_at_once(what, tmp_path):
    code, script = SWALLOWED[what]
    log = tmp_path / 'out.log'
    with open(log, 'w') as out, ended(subprocess.Popen(
            [sys.executable, '-c', script], cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=out, stderr=subprocess.STDOUT)) as process:
        wait_for(lambda: 'compiling' in log.read_text(), 'the compile')
        took = seconds_to_exit(process, signal.SIGINT)
    assert took < EXIT_WITHIN and process.returncode == code, (took, log.read_text())
    assert log.read_text() == 'compiling\n'      # no result, no traceback


# A first tick that compiles for 30 s (busy in Python, as numba's compiler is), in a node on
# the simulator's executor: rclpy's EventsExecutor logged the stop's interrupt of the tick as
# "[FATAL] Exception in 'timers' callback" with its traceback.
SLOW_FIRST_TICK = """
import sys, time
import rclpy.node
from tendon_robot_sim.ros.runner import events_executor, run_node, timer_callback

def compile_for(seconds):
    print('compiling', flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sum(range(100000))
    print('compiled to the end', flush=True)

class SlowFirstTick(rclpy.node.Node):
    def __init__(self):
        super().__init__('slow_first_tick')
        self.create_timer(0.01, timer_callback(lambda: compile_for(30.0)))

sys.exit(run_node(SlowFirstTick, 'slow_first_tick', [], events_executor, exit_on_stop=True))
"""


def test_ctrl_c_while_a_timer_callback_compiles_is_quiet(tmp_path):
    log = tmp_path / 'out.log'
    with open(log, 'w') as out, ended(subprocess.Popen(
            [sys.executable, '-c', SLOW_FIRST_TICK], cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            stdout=out, stderr=subprocess.STDOUT)) as node:
        wait_for(lambda: 'compiling' in log.read_text(), 'the first tick')
        took = seconds_to_exit(node, signal.SIGINT)
    assert took < EXIT_WITHIN and node.returncode == 0, (took, log.read_text())
    assert log.read_text() == 'compiling\n'     # interrupted, and quiet


# destroy_node waiting with the GIL released (a thread's lock), or holding it in C: a mutex
# locked twice through ctypes.PyDLL, which keeps the GIL across the call as a C extension's
# call does (rclpy's destroy_node once spun there for 15 minutes after a SIGTERM)
HANGS = {'waiting': 'threading.Event().wait()',
         'in C, holding the GIL': 'mutex = ctypes.create_string_buffer(64); '
                                  'LIBC.pthread_mutex_lock(mutex); LIBC.pthread_mutex_lock(mutex)'}


@pytest.mark.parametrize('hang', HANGS.values(), ids=HANGS.keys())
def test_a_node_whose_clean_up_hangs_after_its_stop_signal_still_ends(hang):
    """
    A stopped node never stays alive: past the clean-up's limit it ends, its stacks in its log.

    A configured, inactive bridge was once found running 120 s after its SIGHUP, its log
    saying nothing. Here destroy_node hangs; the limit is 2 s instead of 30.
    """
    process = subprocess.Popen(
        [sys.executable, '-c', f"""
import ctypes, sys, threading
import rclpy.node
from tendon_robot_sim.ros import runner
runner.CLEANUP_LIMIT = 2.0
LIBC = ctypes.PyDLL(None)

class Stuck(rclpy.node.Node):
    def __init__(self):
        super().__init__('stuck')
        print('up', flush=True)

    def destroy_node(self):
        {hang}     # never returns

sys.exit(runner.run_node(Stuck, 'stuck', [], exit_on_stop=True))
"""], cwd=ROOT, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == 'up\n'
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=COMMAND_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 1, stderr
    if hang == HANGS['waiting']:
        assert ('[FATAL] [stuck]: the clean-up after the stop signal did not end within 2 s; '
                'exiting') in stderr
    else:       # the Python timer cannot run: faulthandler's thread, which needs no GIL
        assert 'Timeout (0:00:03)!' in stderr
    assert 'in destroy_node' in stderr      # the stack says where it hung
