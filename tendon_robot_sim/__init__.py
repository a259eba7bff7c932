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
tendon_robot_sim: simulation and control of tendon-driven continuum robots.

Layout (docs/architecture.md): ``models/`` (robot descriptions and models, one
subpackage per robot kind), ``control/`` (control math), ``experiment/`` (bags,
calibration, identification), ``protocol/`` (serial device protocols and drivers) and
``commands/`` (the ``tendon-robot-sim`` command-line tool) import without rclpy; only
``nodes/`` and ``ros/`` import rclpy.
"""

from contextlib import contextmanager
import os
from pathlib import Path
import signal
import sys
import threading
from typing import Callable

__version__ = '0.1.0'

PACKAGE_NAME = 'tendon_robot_sim'


def counted(count: int, noun: str) -> str:
    """``count`` with ``noun``, plural unless it is one: ``'1 value'``, ``'2 values'``."""
    return f'{count} {noun}' if count == 1 else f'{count} {noun}s'


def produced_by() -> str:
    """
    Return what produced a result file, ``tendon_robot_sim 0.1.0``, for the file to record.

    The package's version (``__version__``, package.xml's): one helper for every result file
    meant to be reproduced (a dataset's sidecar, a validation report, a calibrated
    description). A source checkout records the same; no git is run for its commit.
    """
    return f'{PACKAGE_NAME} {__version__}'


def numba_cache_dir(package: Path = Path(__file__).resolve().parent) -> Path | None:
    """
    Where numba must keep the compiled kernels; None: next to the sources (its default).

    numba caches a kernel in the ``__pycache__`` beside its module. A read-only install
    (a colcon install owned by another user, a container image) would compile every
    kernel on every start (20-30 s), so then the cache goes to the user's cache folder,
    ``$XDG_CACHE_HOME/tendon_robot_sim/numba`` (default ``~/.cache/...``), where
    ``tendon-robot-sim warmup`` fills it once.
    """
    if all(os.access(folder, os.W_OK) for folder, _, _ in os.walk(package)):
        return None
    base = os.environ.get('XDG_CACHE_HOME') or Path.home() / '.cache'
    return Path(base) / PACKAGE_NAME / 'numba'


# Every node, command and library use of the package imports this module first, before
# any kernel module imports numba, which reads NUMBA_CACHE_DIR once, when it is imported.
if 'NUMBA_CACHE_DIR' not in os.environ and (_cache := numba_cache_dir()) is not None:
    os.environ['NUMBA_CACHE_DIR'] = str(_cache)

# One OpenBLAS thread unless the user sets another number (read when numpy loads OpenBLAS,
# which no module of ours imports before this one). The models are compiled kernels and
# the parallel work (calibration workers, datasets, a stack's nodes) runs in processes, so a
# second BLAS thread only competes with them; and at load OpenBLAS's idle thread spun for
# about 0.1 s of CPU: a third of the start of every command and node (docs/performance.md).
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')


def share_dir() -> Path:
    """
    Folder holding config/, launch/, urdf/, rviz/.

    Installed with colcon/ament (the ament index has an entry for the package, on
    ``AMENT_PREFIX_PATH``), its ``share/tendon_robot_sim``, also with ``--symlink-install``;
    otherwise (a source checkout used through the venv) the repository root.
    """
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE_NAME))
    except (ImportError, LookupError, OSError):
        # no ament_index_python, not installed, or no AMENT_PREFIX_PATH at all (the venv)
        pass
    source_root = Path(__file__).resolve().parent.parent
    if (source_root / 'config' / 'robot.yaml').is_file():
        return source_root
    raise FileNotFoundError(
        'cannot find the tendon_robot_sim share folder (config/, launch/ ...): not installed '
        'with colcon (no ament index entry on AMENT_PREFIX_PATH) and not a source checkout')


def default_robot_file() -> Path:
    """Return the default robot description, ``config/robot.yaml``."""
    return share_dir() / 'config' / 'robot.yaml'


def progress_bar(iterable=None, shown: bool = True, **options):
    """
    Return a tqdm bar on stderr (``options`` as tqdm's) for a watcher to see, not for a log.

    Hidden when stderr is not a terminal (a cluster job's log, a pipe, a file: each update
    was one more carriage-return line there), unless ``TENDON_ROBOT_SIM_PROGRESS`` is set to any
    value but the empty one; tqdm's own ``TQDM_DISABLE`` (any value but the empty one) hides
    it also on a terminal. ``shown`` False hides it (a library caller's ``progress=False``).
    The one place where the package draws a progress bar.
    """
    from tqdm import tqdm
    if not shown or os.environ.get('TQDM_DISABLE'):
        disable = True
    elif os.environ.get('TENDON_ROBOT_SIM_PROGRESS'):
        disable = False
    else:
        disable = None      # tqdm's own test: hidden when its file is not a terminal
    return tqdm(iterable, file=sys.stderr, disable=disable, **options)


def stop_signals() -> tuple[int, ...]:
    """
    Return the signals that stop a node or the launcher: SIGINT, SIGTERM and SIGHUP.

    SIGHUP only when it is not ignored: a process started under ``nohup`` asked to outlive
    its terminal, and its children inherit the request.
    """
    hangup = () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)
    return (signal.SIGINT, signal.SIGTERM, *hangup)


def quiet_lost_interrupts(on_lost=None) -> None:
    """
    Print nothing for a Ctrl-C that lands in a callback from C and is lost there.

    numba's compiler calls back into Python through ctypes, which cannot pass an exception
    on: a KeyboardInterrupt raised there would be printed as "Exception ignored ...
    Traceback", and the compile runs on (20-30 s). The caller notes the signal itself and
    treats what follows as the stop; ``on_lost()``, if given, is called (in the thread of
    the callback) each time an interrupt is lost, e.g. to deliver it again.
    """
    hook = sys.unraisablehook
    if not getattr(hook, 'quiet_interrupts', False):
        default = hook

        def hook(unraisable):
            if not isinstance(unraisable.exc_value, KeyboardInterrupt):
                default(unraisable)
            elif hook.on_lost is not None:
                hook.on_lost()
        hook.quiet_interrupts = True
        sys.unraisablehook = hook
    hook.on_lost = on_lost


class StopWatchdog:
    """
    End the process with ``code`` when a stop signal has not ended it ``grace`` s later.

    ``code`` None: the shell's code of the signal, 128 + its number (130 Ctrl-C, 143 SIGTERM).

    Python runs a signal's handler in the main thread, between two bytecodes, and the
    KeyboardInterrupt it raises can be lost there: in a callback from C (numba's compiler
    calls back into Python through ctypes), in C code that clears it, in a library that
    swallows it (``except BaseException``: trimesh). While numba compiled a command's kernels,
    Ctrl-C was then ignored for minutes, and the command printed its result and exited 0.

    Python's own C-level handler also writes the number of every signal it handles to the
    wakeup file descriptor, at once, whatever the main thread is doing; a thread of the
    watchdog waits on it. When ``armed(signum)`` still holds ``grace`` s after such a signal
    (the main thread has not taken the stop into its hands), the watchdog ends the process
    with ``os._exit(code)``, flushing nothing: a result half printed is no result. Used by
    ``cli.main`` (Ctrl-C or SIGTERM of a computation, 130 or 143) and ``ros.runner.run_node``
    (a node's stop signals until its spin loop has seen them, 0). Start and stop it in the
    main thread.
    """

    def __init__(self, code: int | None, grace: float, armed: Callable[[int], bool]):
        self.code = code
        self.grace = grace
        self.armed = armed
        self._pipe = self._previous = self._thread = None
        self._counting = False      # a grace period runs

    def __enter__(self) -> 'StopWatchdog':
        read, write = os.pipe()
        os.set_blocking(write, False)       # the C handler must never block
        try:
            self._previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:                  # not the main thread: no watchdog
            os.close(read)
            os.close(write)
            return self
        self._pipe = read, write
        # the descriptor as an argument: a command interrupted as it starts leaves the block
        # (and clears _pipe) before the thread has run its first line
        self._thread = threading.Thread(target=self._watch, args=(read,), name='stop watchdog',
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._pipe is None:
            return
        signal.set_wakeup_fd(self._previous)
        read, write = self._pipe
        self._pipe = None
        os.set_blocking(write, True)
        os.write(write, b'\0')              # no signal: the watchdog's end
        self._thread.join()
        os.close(read)
        os.close(write)

    def _watch(self, read: int) -> None:
        while True:
            for signum in os.read(read, 64):
                if signum == 0:
                    return
                if self.armed(signum) and not self._counting:
                    self._counting = True
                    timer = threading.Timer(self.grace, self._end, (signum,))
                    timer.daemon = True
                    timer.start()

    def _end(self, signum: int) -> None:
        self._counting = False
        if self._pipe is not None and self.armed(signum):
            os._exit(128 + signum if self.code is None else self.code)


@contextmanager
def interrupts_deferred():
    """
    Hold a Ctrl-C (SIGINT) that comes while the block runs; deliver it when the block ends.

    For imports of libraries that guard their own optional imports with ``except
    BaseException`` (trimesh, 144 places): a KeyboardInterrupt raised inside one is
    swallowed, and a Ctrl-C during start-up was lost (a view or a launch ran on). Held
    here, it reaches whatever handler was in place before, once the import is done.
    """
    previous = signal.getsignal(signal.SIGINT)
    if (previous is signal.SIG_IGN or previous is None
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    held = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)


def exit_quietly_on_interrupt(code: int) -> None:
    """
    End the process with ``code`` and no traceback when Ctrl-C reaches the top level.

    Before a node or a command installs its handler (while Python imports numpy, rclpy,
    the models: a second or more), Ctrl-C raises KeyboardInterrupt wherever the import is,
    and Python printed its traceback. Every entry point imports this package first, so the
    hook is in place from the first moment Python runs our code; nothing is running yet
    that would need cleaning up. An interactive session keeps Python's own behaviour.
    """
    default = getattr(sys.excepthook, 'original', sys.excepthook)   # ours: replaced

    def hook(kind, value, traceback):
        if issubclass(kind, KeyboardInterrupt) and not (hasattr(sys, 'ps1')
                                                        or sys.flags.interactive):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        default(kind, value, traceback)
    hook.original = default
    sys.excepthook = hook


#: Exit code of a command interrupted by Ctrl-C (128 + SIGINT, the shell's own).
EXIT_INTERRUPTED = 130
exit_quietly_on_interrupt(EXIT_INTERRUPTED)
