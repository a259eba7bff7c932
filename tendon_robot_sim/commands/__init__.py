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

"""Subcommands of ``tendon-robot-sim`` (see :mod:`tendon_robot_sim.cli`) and what they share."""

import argparse
import errno
import json
import logging
import math
import os
from pathlib import Path
import signal
import stat
import sys
import tempfile

from tendon_robot_sim import EXIT_INTERRUPTED  # noqa: F401 (an exit code of commands)
from tendon_robot_sim.experiment.input_profile import (InputProfile, ProfileError, read_profile,
                                                       tendon_input_limits)
from tendon_robot_sim.files.outputs import bag_clash, check_links, UnsafeOutputError
from tendon_robot_sim.models.description import check_range, RobotDescriptionError

# Exit codes of every command (docs/cli.md): scripts can tell a bad input from a result that
# does not exist.
EXIT_OK = 0
EXIT_NO_RESULT = 1     # the input was valid, the result does not exist: diverged, not
#                        converged, infeasible, unreachable
EXIT_BAD_INPUT = 2     # a bad argument, file or field (argparse's own code for usage errors)
EXIT_INTERNAL = 70     # a bug: an error the command did not foresee (EX_SOFTWARE)
# EXIT_INTERRUPTED = 130 (imported above): Ctrl-C stopped a computation (see StopSignals;
#                      SIGTERM: 143, cli.CtrlC)


class _SeverityFirst(logging.Formatter):
    """A record as its severity and text: ``warning: ...``, the way commands print warnings."""

    def format(self, record):  # noqa: A003 (the method logging calls)
        return f'{record.levelname.lower()}: {record.getMessage()}'


def terminal_logger(name: str) -> logging.Logger:
    """Return a logger for a command's terminal: a record is one line on stderr."""
    logger = logging.getLogger(f'tendon_robot_sim.{name}')
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_SeverityFirst())
        logger.addHandler(handler)
        logger.propagate = False
    return logger


class StopSignals:
    """
    Ctrl-C, SIGTERM and SIGHUP as a request to stop, for a command that runs until stopped.

    Inside ``with StopSignals() as stop:`` the signals only set ``stop`` (true once one
    came); the command ends its loop, closes what it made (a bag, the ports) and exits 0
    (``record`` 1 when it recorded no message: an empty bag is no result).
    The convention of every command (docs/cli.md): a command that runs until stopped
    (``launch``, ``record``, ``replay``, ``emulate``, with or without ``--duration`` or
    ``--loop``) ends normally when stopped, exit 0, as ``ros2 launch``, ``ros2 bag record``
    and the nodes do: what it made is complete. A computation, or ``demo``, stopped before
    its end has no result: exit 130 (``cli.main``; SIGTERM 143). SIGHUP only where it is not
    ignored (``nohup``).
    """

    def __init__(self):
        self.received: list[int] = []
        self._previous = {}

    def __enter__(self) -> 'StopSignals':
        from tendon_robot_sim import stop_signals
        self._previous = {signum: signal.signal(signum, self._note)
                          for signum in stop_signals()}
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _note(self, signum, frame) -> None:
        self.received.append(signum)

    def __bool__(self) -> bool:
        return bool(self.received)


#: Range of a simulated sensor's noise [m], standard deviation: beyond 1 m it measures
#: nothing (and overflowed the LK-G's fields).
NOISE = (0.0, 1.0)
#: Most time steps a run may take when it keeps every step in memory (a few GB at most).
MAX_STEPS = 10_000_000
#: Most time steps of any run: about 100 days at the fastest step of any model.
MAX_RUN_STEPS = 1e12


class CommandError(Exception):
    """A user error: printed to stderr as one line naming the argument, exit code 2."""

    exit_code = EXIT_BAD_INPUT


class NoResultError(CommandError):
    """A valid input without a result (diverged, infeasible, unreachable): exit code 1."""

    exit_code = EXIT_NO_RESULT


def command_error(error: Exception) -> CommandError:
    """
    Return the one-line CommandError of an error a command caught.

    A valid input without a result (not converged, diverged, unreachable, infeasible) gives
    a :class:`NoResultError` (exit 1); anything else a bad input (exit 2).
    """
    from tendon_robot_sim.models.cosserat import ConvergenceError
    from tendon_robot_sim.models.rod.constant_curvature import UnreachableError
    from tendon_robot_sim.models.sim_model import EquilibriumNotFound, SimulationDiverged
    from tendon_robot_sim.models.snake.dynamics import SnakeDivergedError
    from tendon_robot_sim.models.trunk.dynamics import CCNoSolutionError

    no_result = (ConvergenceError, UnreachableError, SimulationDiverged, SnakeDivergedError,
                 CCNoSolutionError, EquilibriumNotFound)
    kind = NoResultError if isinstance(error, no_result) else CommandError
    return kind(' '.join(str(error).split()))


def naming_options(error: Exception, arguments: tuple[str, ...]) -> str:
    """
    Return ``error``'s one-line message, a leading ``name:`` of ``arguments`` as ``--name:``.

    A library function names its own arguments in its errors (``samples: ...``); the user
    gave them as the command's options of the same names.
    """
    message = ' '.join(str(error).split())
    return f'--{message}' if message.split(':', 1)[0] in arguments else message


def check_ros_environment() -> None:
    """
    Refuse a ROS environment variable ROS cannot use (CommandError naming it, exit 2).

    The first thing every command that starts ROS does (``launch``, ``record``, ``replay``,
    ``demo``, a live ``view``): rcl would take a bad value only once a node starts, as an
    internal error, Fast DDS text or exit 102 (:mod:`tendon_robot_sim.ros.environment`).
    """
    from tendon_robot_sim.ros.environment import check_ros_environment, RosEnvironmentError
    try:
        check_ros_environment()
    except RosEnvironmentError as error:
        raise CommandError(str(error)) from None


def _number(text: str, check, requirement: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        noun = 'a whole number' if kind is int else 'a number'    # '2.5' is a number
        raise argparse.ArgumentTypeError(f'{text!r} is not {noun}') from None
    if not math.isfinite(value) or not check(value):
        raise argparse.ArgumentTypeError(f'must be {requirement}, got {text}')
    return value


def finite(text: str) -> float:
    """Argument type: a finite number."""
    return _number(text, lambda v: True, 'finite')


def positive(text: str) -> float:
    """Argument type: a finite number > 0."""
    return _number(text, lambda v: v > 0, 'a finite number > 0')


def non_negative(text: str) -> float:
    """Argument type: a finite number >= 0."""
    return _number(text, lambda v: v >= 0, 'a finite number >= 0')


def probability(text: str) -> float:
    """Argument type: a number in [0, 1]."""
    return _number(text, lambda v: 0 <= v <= 1, 'within [0, 1]')


def positive_int(text: str) -> int:
    """Argument type: a whole number >= 1."""
    return _number(text, lambda v: v >= 1, 'a whole number >= 1', int)


def non_negative_int(text: str) -> int:
    """Argument type: a whole number >= 0."""
    return _number(text, lambda v: v >= 0, 'a whole number >= 0', int)


def within(low: float, high: float, unit: str = '', kind=float):
    """
    Argument type: a number (``kind`` int: a whole number) in [``low``, ``high``].

    For every count or rate that sizes the work (points, turns, a playback rate): with no
    upper bound a typo takes the memory or the time of the machine. The bounds are kept on
    the type (``.bounds``) for the tests that walk the parser.
    """
    what = 'a whole number' if kind is int else 'a number'
    shown = f'[{low:g}, {high:g}]' + (f' {unit}' if unit else '')

    def number(text: str):
        return _number(text, lambda v: low <= v <= high, f'{what} within {shown}', kind)
    number.bounds = (low, high)
    return number


#: Shortest and longest time step of any run [s]: below a nanosecond no model steps, above an
#: hour none is stable; 1e-300 s overflowed a step count into an internal error.
TIME_STEP = (1e-9, 3600.0)


def time_step(text: str) -> float:
    """Argument type of every ``--dt``: a time step in [1 ns, 1 h]."""
    return _number(text, lambda v: TIME_STEP[0] <= v <= TIME_STEP[1],
                   f'a time step within [{TIME_STEP[0]:g}, {TIME_STEP[1]:g}] s')


def worker_count(text: str) -> int:
    """
    Argument type of every ``--workers``: local processes, 1 .. MAX_WORKERS.

    The pool runs at most as many as there are cores and tasks
    (:class:`~tendon_robot_sim.parallel.Pool`); a count beyond any machine is refused here,
    before anything starts.
    """
    from tendon_robot_sim.parallel import MAX_WORKERS
    return _number(text, lambda v: 1 <= v <= MAX_WORKERS,
                   f'a whole number in [1, {MAX_WORKERS}] (at most the cores run)', int)


def input_file(text: str) -> Path:
    """
    Argument type of every robot file a command reads (``--robot``, ``--urdf``): readable.

    Opened and closed when parsed, so that a missing or unreadable file (or a folder) is
    refused naming the option (``argument --robot: /nonexist.yaml: cannot read: No such
    file or directory``), as every other bad argument; the loaders named the path alone.
    What the file holds is the loader's to check.
    """
    try:
        with open(text, 'rb'):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(f'{text}: cannot read: '
                                         f'{error.strerror or error}') from None
    return Path(text)


class OutputPath:
    """
    Argument type of every path a command writes: checked when parsed, before any work.

    ``kind`` is what the command makes there: ``'folder'`` (created if missing, may exist),
    ``'new folder'`` (must not exist, nor lie inside a bag folder: a bag), ``'file'`` (written
    or overwritten, in an existing folder) or ``'prefix'`` (``PATH`` + each of ``suffixes``,
    e.g. ``PATH.parquet``: files, so none may be a folder); folders are created with their
    parents. A file with ``suffixes`` gets the first when it has none (``--plot myplot`` writes
    ``myplot.png``) and must have one of them otherwise. The check creates and removes a probe
    in the folder that would hold the output, so a folder nobody may write (``/proc``,
    ``/sys``, a read-only mount, even for root), a file where a folder is needed and a folder
    where a file is needed are all refused with exit 2 naming the option. What exists there
    must be a regular file or a folder: a device, a pipe or a socket (``/dev/full``,
    ``/dev/null``, ``/dev/stdout``) is refused too, for every kind, before a suffix is added: a
    write to it may fail only once the work is done (``/dev/full``), block (a pipe) or land
    beside it (``/dev/full.png``), and no probe can tell without writing. A link on the way
    that someone else planted (the output folder, a folder above it:
    :func:`~tendon_robot_sim.files.outputs.check_links`) is refused; a link at an output file
    is replaced by the file when it is written, never followed. ``cli.main`` applies the type
    also to values argparse leaves unconverted (an optional value's ``const``), and refuses a
    file it writes that another argument of the command names to read (:meth:`check_not_read`).
    """

    KINDS = ('folder', 'new folder', 'file', 'prefix')

    def __init__(self, kind: str, suffixes: tuple[str, ...] = (),
                 files: tuple[str, ...] = (), rewrites: tuple[str, ...] = ()):
        if kind not in self.KINDS:
            raise ValueError(f'kind: one of {self.KINDS}, got {kind!r}')
        self.kind = kind
        self.suffixes = suffixes
        # a path with one of these suffixes is a file (written or overwritten, in an existing
        # folder), whatever the kind: synth-experiment's OUT_BAG ending in .csv
        self.files = files
        # the arguments (dests) whose file the output may replace: a file rewritten in place,
        # as calibrate --robot calibrated.yaml --out calibrated.yaml
        self.rewrites = rewrites

    def __repr__(self) -> str:          # argparse names the type in some messages
        return f'{self.kind} to write'

    def __call__(self, text: str) -> Path:
        try:
            return self.check(text)
        except CommandError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    def check(self, text) -> Path:
        """Return the path to write; CommandError (exit 2) says why it cannot be written."""
        text = str(text)
        if not text.strip():
            raise CommandError('an empty path')
        path = Path(text)
        if path.suffix.lower() in self.files:
            return OutputPath('file', (path.suffix.lower(),)).check(text)
        try:    # the folder that holds the output, or the output folder itself
            check_links(path if self.kind in ('folder', 'new folder') else path.parent)
        except UnsafeOutputError as error:
            raise CommandError(str(error)) from None
        _check_not_special(path)
        if self.kind in ('file', 'prefix') and (text.endswith(os.sep) or path.is_dir()):
            example = path / ('dataset' if self.kind == 'prefix' else
                              'out' + (self.suffixes[0] if self.suffixes else ''))
            # a folder that does not exist yet is named one by its trailing separator
            what = 'is a folder' if path.is_dir() else f'names a folder (it ends in {os.sep})'
            raise CommandError(f'{text} {what}; give a file name in it, e.g. {example}')
        for suffix in self.suffixes if self.kind == 'prefix' else ():
            # found only when the file is written, after the work (a Parquet dataset of Dask)
            written = path.with_name(path.name + suffix)
            _check_not_special(written)
            if written.is_dir():
                raise CommandError(f'{written} is a folder; the output writes a file there')
        if self.kind == 'file' and self.suffixes:
            if not path.suffix:
                path = path.with_name(path.name + self.suffixes[0])
                _check_not_special(path)
            elif path.suffix.lower() not in self.suffixes:
                raise CommandError(f'{text}: must end in {" or ".join(self.suffixes)}')
        if self.kind == 'new folder' and (path.exists() or path.is_symlink()):
            raise CommandError(f'{text} exists already; give a new folder to create')
        if self.kind == 'new folder' and (clash := bag_clash(path)):     # a bag in a bag
            raise CommandError(clash)
        if self.kind == 'folder' and path.exists() and not path.is_dir():
            raise CommandError(f'{text} is a file, not a folder')
        if self.kind == 'file' and path.exists():
            _probe_file(path)
        if self.kind == 'file' and not path.parent.is_dir():
            what = 'is a file, not a folder' if path.parent.exists() else 'does not exist'
            raise CommandError(f'{path.parent} {what}; the file goes into an existing folder')
        # the folder that will hold the output, or its nearest existing ancestor
        holder = path if self.kind == 'folder' and path.is_dir() else path.parent
        while not holder.exists() and holder != holder.parent:
            if holder.is_symlink():
                raise CommandError(f'{holder} is a broken link')
            holder = holder.parent
        if not holder.is_dir():
            raise CommandError(f'{holder} is a file, not a folder')
        _probe_folder(holder)
        return path

    def written(self, path: Path) -> list[Path]:
        """Return the files the checked output ``path`` writes (a folder's: not known)."""
        if self.kind == 'file' or path.suffix.lower() in self.files:
            return [path]
        if self.kind == 'prefix':
            return [path.with_name(path.name + suffix) for suffix in self.suffixes]
        return []

    def check_not_read(self, path: Path, inputs) -> None:
        """
        Refuse to write over a file the command reads (CommandError), before any work.

        ``inputs``: (argument name, path text) of the command's other arguments; one that names
        a folder (a bag) reads the files in it. ``calibrate holds.csv --out holds.csv`` fitted
        the holds, then replaced them with the robot file, exit 0.
        """
        for written in self.written(path):
            if not written.is_file():
                continue
            for name, text in inputs:
                read = Path(text)
                if read.is_dir() and written.resolve().is_relative_to(read.resolve()):
                    raise CommandError(f'{written} is in {text}, what {name} reads; the '
                                       'output would replace one of its files: give another '
                                       'file')
                if read.is_file() and os.path.samefile(written, read):
                    raise CommandError(f'{written} is what {name} reads; the output would '
                                       'replace it: give another file')


def _check_not_special(path: Path) -> None:
    """Raise CommandError if ``path`` exists and is neither a regular file nor a folder."""
    try:
        mode = path.stat().st_mode
    except OSError:        # missing, a broken link, or no access: the checks below say which
        return
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        what = ('a device' if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
                'a pipe' if stat.S_ISFIFO(mode) else 'a socket' if stat.S_ISSOCK(mode)
                else 'not a regular file')
        raise CommandError(f'{path} is {what}, not a regular file; give a file or folder '
                           'to write')


def _probe_folder(folder: Path) -> None:
    """Create and remove a folder in ``folder``; CommandError if that fails."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix='.tendon_robot_sim_probe_', dir=folder))
    except OSError as error:
        reason = 'not a place to write files' if error.errno == errno.ENOENT else error.strerror
        raise CommandError(f'cannot write in {folder.absolute()}: {reason}') from None


def _probe_file(path: Path) -> None:
    """Open an existing file for writing without changing it; CommandError if that fails."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        raise CommandError(f'cannot write {path}: {error.strerror}') from None


def check_output(path, option: str, kind: str, suffixes: tuple[str, ...] = (),
                 inputs: tuple[tuple[str, object], ...] = ()) -> Path:
    """
    :class:`OutputPath` for a path a command computes: CommandError names ``option``.

    ``inputs``: (option, path or None) the command reads, which the output must not be
    (:meth:`OutputPath.check_not_read`), as ``cli.main`` checks the outputs it parses.
    """
    output = OutputPath(kind, suffixes)
    try:
        checked = output.check(path)
        output.check_not_read(checked, [(name, str(text)) for name, text in inputs
                                        if text is not None])
        return checked
    except CommandError as error:
        raise CommandError(f'{option}: {error}') from None


#: What matplotlib writes, PNG first: the plots of every command.
PLOT_SUFFIXES = ('.png', '.pdf', '.svg')


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows an option's default, unless the help says it or there is none."""

    def _get_help_string(self, action):
        if '(default' in (action.help or '') or action.default in (None, False):
            return action.help
        return super()._get_help_string(action)


def run_duration(duration: float | None, end: float | None, option: str,
                 default: float) -> tuple[float, str]:
    """
    Return how long a run lasts and the words naming what set it, for :func:`check_steps`.

    ``duration``: ``--duration`` (None: not given); ``end``: the last time of the input file
    of ``option`` (None: no file), the run's length without ``--duration``; else ``default``.
    A file's last time too long or too short for ``--dt`` is named as that, not as a
    ``--duration`` nobody gave. A file that ends at t = 0 without ``--duration`` is refused
    (CommandError).
    """
    if duration is not None or end is None:
        return (default if duration is None else duration), '--duration'
    if end <= 0.0:
        raise CommandError(f'{option}: the file ends at t = 0 s; give --duration')
    return end, f"{option}'s last time"


def run_steps(duration: float, dt: float) -> int:
    """
    Return the steps of ``dt`` [s] a run of ``duration`` [s] takes: the ones that cover it.

    The rule of every command that steps a model over a ``--duration`` or an input file's
    last time (``simulate``, ``cc-dynamics``, ``snake forward``): a duration between two steps
    runs to the later one, so a file's last row is reached (0.25 s at ``--dt 0.1`` ends at
    0.3 s). A ratio one part in 1e12 above a whole number is that number (round-off of, e.g.,
    0.3 / 0.1). Rounded to the nearest count, a run ended up to half a step early.
    """
    return math.ceil(duration / dt * (1.0 - 1e-12))


def check_steps(duration: float, dt: float, kept: bool = True,
                option: str = '--duration') -> None:
    """
    Refuse a ``--duration`` that takes not one step of ``--dt``, or too many to keep.

    A step longer than the run ran no step at all, and reported the start as the result
    ('2 s under tensions' with time 0). ``kept``: the run keeps every step in memory, so
    at most :data:`MAX_STEPS`. ``option``: the argument that gave ``duration``.
    """
    if dt > duration:
        raise CommandError(f'--dt: {dt:g} s is longer than {option} {duration:g} s: not one '
                           'step would run')
    steps = duration / dt
    if not kept:
        if steps > MAX_RUN_STEPS:
            raise CommandError(f'{option}: {duration:g} s in steps of {dt:g} s is '
                               f'{steps:.3g} steps, more than any run takes ({MAX_RUN_STEPS:.0e}, '
                               f'about 100 days); shorten {option} or lengthen --dt')
        return
    if steps > MAX_STEPS:
        raise CommandError(f'{option}: {duration:g} s in steps of --dt {dt:g} s is '
                           f'{steps:.3g} steps, more than the {MAX_STEPS:.0e} a run keeps in '
                           f'memory; shorten {option} or lengthen --dt')


def parse_values(text: str, option: str):
    """
    Per-tendon values of a command-line option, by position or by name.

    ``'0,2,0,0'`` -> [0.0, 2.0, 0.0, 0.0]; ``'t1=2,t3=1'`` -> {'t1': 2.0, 't3': 1.0}.
    Raises :class:`CommandError` naming ``option`` and the bad item.
    """
    items = [item.strip() for item in text.split(',')]
    named = ['=' in item for item in items]
    if any(named) and not all(named):
        raise CommandError(f'{option}: use either values or name=value pairs, got {text!r}')
    values = {}
    for index, item in enumerate(items):
        name, _, number = item.rpartition('=')
        try:
            value = float(number)
        except ValueError:
            raise CommandError(f'{option}: item {index} ({item!r}) is not a number') from None
        if not math.isfinite(value):
            raise CommandError(f'{option}: item {index} ({item!r}) must be finite')
        key = name.strip() if all(named) else index
        if key in values:
            # named by the option alone: a bellows, a cable, a joint or a tendon
            raise CommandError(f'{option}: {key!r} is given twice')
        values[key] = value
    return values if all(named) else list(values.values())


def read_inputs(path: str, option: str, robot, field: str) -> InputProfile:
    """
    Read an input file of tensions or displacements, each within its range.

    ``simulate``'s inputs over time, ``statics``' sequences of states.

    Tensions within [0, max_tension] N, displacements within a rod length [m] either way.

    Raises :class:`CommandError` naming the option, the file, the line and the column.
    """
    limits = tendon_input_limits(robot, field)
    unit = 'N' if field == 'tension' else 'm'
    try:
        return read_profile(path, robot.tendon_names, limits, quantity=field, unit=unit)
    except ProfileError as error:
        raise CommandError(f'{option}: {error}') from None


# The description key whose physical range an option's vector keeps (models.description).
VECTOR_KEYS = {'force': 'force', 'moment': 'moment', 'position': 'position', 'tip': 'position'}


def json_line(value) -> str:
    """
    ``value`` as one line of JSON, NaN and infinity (a figure without a value) written as null.

    JSON has neither: ``json.dumps`` would write a bare ``NaN``, which jq and JSON.parse refuse.
    """
    return json.dumps(_no_nan(value), allow_nan=False)


def _no_nan(value):
    if isinstance(value, dict):
        return {key: _no_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(item) for item in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def parse_vector(text: str | None, option: str):
    """
    ``'0,0,-0.1'`` -> [0.0, 0.0, -0.1]; None stays None.

    A force, moment or position keeps the physical range of the description key of that
    name (a tip force of 1e300 N is bad input, not a solve that does not converge).
    """
    if text is None:
        return None
    values = parse_values(text, option)
    if not isinstance(values, list) or len(values) != 3:
        raise CommandError(f'{option}: must be 3 numbers x,y,z, got {text!r}')
    key = VECTOR_KEYS.get(option.rpartition('-')[2])
    for i, value in enumerate(values):
        try:
            check_range(value, f'{option}[{i}]', key)
        except RobotDescriptionError as error:
            raise CommandError(str(error)) from None
    return values


def add_scheduler_options(parser) -> None:
    """``--scheduler`` and the TLS files of a Dask cluster (read by :func:`scheduler_of`)."""
    parser.add_argument('--scheduler', default=None, metavar='ADDRESS',
                        help='Dask scheduler address: solve on that cluster instead. '
                             'tcp://host:8786 is unencrypted and unauthenticated, and Dask '
                             'unpickles what it receives: anyone who can reach the scheduler '
                             'can run code here; use it on a trusted network only, else '
                             'tls://host:8786 with --tls-ca-file, --tls-cert, --tls-key')
    parser.add_argument('--tls-ca-file', default=None, metavar='PEM',
                        help='tls:// scheduler: certificate authority that signed the '
                             "cluster's certificates (default: Dask's configuration)")
    parser.add_argument('--tls-cert', default=None, metavar='PEM',
                        help="tls:// scheduler: this client's certificate")
    parser.add_argument('--tls-key', default=None, metavar='PEM',
                        help="tls:// scheduler: this client's private key")


def scheduler_of(args):
    """
    Return the :class:`~tendon_robot_sim.parallel.Scheduler` of the options, or None.

    CommandError for a bad address, an incomplete set of TLS files, or ``--workers`` beside
    ``--scheduler`` (the cluster's workers run the tasks: nothing would read the count).
    """
    from tendon_robot_sim.parallel import ParallelError, Scheduler

    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if args.scheduler is None:
        if any(tls):
            raise CommandError('--tls-ca-file, --tls-cert and --tls-key need '
                               '--scheduler tls://...')
        return None
    if getattr(args, 'workers', None) is not None:
        raise CommandError("--workers: applies without --scheduler only (the cluster's "
                           'workers run the tasks)')
    if any(tls) and not all(tls):
        raise CommandError('--tls-ca-file, --tls-cert and --tls-key go together')
    try:
        return Scheduler(args.scheduler, *tls)
    except ParallelError as error:
        raise CommandError(f'--{error}') from None
