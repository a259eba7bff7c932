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
The ``tendon-robot-sim`` command-line tool.

Each subcommand lives in ``tendon_robot_sim/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable
taking the parsed arguments and returning the exit code). Errors a user can fix
are raised as :class:`~tendon_robot_sim.commands.CommandError` and printed to stderr
as one line.
"""

import argparse
import atexit
from contextlib import contextmanager
import gc
import importlib
import os
from pathlib import Path
import re
import signal
import sys
import threading
import warnings

from tendon_robot_sim import quiet_lost_interrupts, StopWatchdog
from tendon_robot_sim.commands import (CommandError, EXIT_BAD_INPUT, EXIT_INTERNAL,
                                       EXIT_INTERRUPTED, OutputPath)
from tendon_robot_sim.files.outputs import is_full_disk, UnsafeOutputError

# Python's own handling of the signals that stop a computation, which a command takes over:
# Ctrl-C, and SIGTERM (a cluster's scheduler at a time limit or ``scancel``, ``kill``).
STOP_DEFAULTS = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
# Seconds between two deliveries of a Ctrl-C that has not ended the command yet.
INTERRUPT_AGAIN = 0.2
# Seconds after a Ctrl-C that has not ended a computation by then, however it was lost, when
# the process ends without it (StopWatchdog): the user waits a second or two at most.
INTERRUPT_FORCED_AFTER = 1.0
# Allocations between two youngest-generation garbage collections of a command's process (Python:
# 700); see _collect_garbage_seldom.
GC_THRESHOLD = 20000
COMMANDS = ('simulate', 'launch', 'demo', 'emulate', 'statics', 'cc', 'cc_dynamics', 'record',
            'replay', 'reindex', 'synth_experiment', 'import_table', 'validate', 'calibrate',
            'pcr', 'snake', 'dataset', 'warmup', 'hardware', 'view')
# Commands whose word is not their module's name (``import`` is a Python keyword).
COMMAND_WORDS = {'import_table': 'import'}


EXIT_CODES = f"""exit codes: 0 done; 1 no result for a valid input (diverged, not converged,
infeasible, unreachable); {EXIT_BAD_INPUT} bad input (an argument, file or field; the message
names it); {EXIT_INTERNAL} internal error (a bug: please report it);
{EXIT_INTERRUPTED} interrupted (Ctrl-C), 143 stopped (SIGTERM). Errors are one line on stderr."""


class Parser(argparse.ArgumentParser):
    """
    argparse with one-line errors and negative numbers as values.

    argparse takes ``-0.3,-0.3`` for an option (it knows only lone negative numbers), so
    ``--motor-angles -0.3,-0.3`` failed with "expected one argument": here any word that
    starts with a minus sign and a digit is a value. No option of ours starts with a digit.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r'^-\.?\d')

    def error(self, message: str):
        """Print one line naming the argument and the problem, then exit 2."""
        self.exit(EXIT_BAD_INPUT, f'{self.prog}: error: {message} (see --help)\n')

    def parse_args(self, args=None, namespace=None):
        """
        Parse as argparse does; an argument nothing takes is the chosen command's error.

        argparse reported it from the tool's parser (``tendon-robot-sim: error:
        unrecognized arguments: extra``), the one error line that did not name the command.
        """
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            _chosen(self, parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def build_parser(commands=COMMANDS) -> argparse.ArgumentParser:
    """Return the parser of the tool with ``commands`` (their module names; default all)."""
    parser = Parser(
        prog='tendon-robot-sim',
        description='Simulate and control continuum robots: tendon-driven rods, '
                    'constant-curvature trunks, rolling-joint snakes, parallel continuum '
                    'robots.',
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest='command', required=True, metavar='COMMAND')
    for name in commands:
        importlib.import_module(f'tendon_robot_sim.commands.{name}').register(subparsers)
    return parser


def needed_commands(argv) -> tuple:
    """
    Return the command modules a parser for ``argv`` needs: the named command's, else all.

    A command module imports what its command works with (numba kernels, PyElastica, scipy,
    rosbags...): all of them took about 1.2 s of CPU before any command started. Help and
    errors without a known command name still get the whole tool.
    """
    words = sys.argv[1:] if argv is None else argv
    for name in COMMANDS:
        if words and words[0] == command_word(name):
            return (name,)
    return COMMANDS


def command_word(module: str) -> str:
    """Return the word that names the command of ``module`` on the command line."""
    return COMMAND_WORDS.get(module, module.replace('_', '-'))


class CtrlC:
    """
    Ctrl-C (or SIGTERM) of a command: KeyboardInterrupt, as Python's own handler, until it lands.

    numba's compiler calls back into Python through ctypes, which swallows an exception
    raised in a callback: a KeyboardInterrupt that lands there is lost, and the compile ran
    on for 20-30 s after Ctrl-C. A lost one is delivered again INTERRUPT_AGAIN seconds later
    (:func:`~tendon_robot_sim.quiet_lost_interrupts` sees it lost), as often as needed, and
    an error the lost interrupt leaves behind also counts as the interruption. An interrupt
    that lands is not repeated: the command's clean-up (``finally``) runs undisturbed.
    SIGTERM takes the same way, so that its clean-up runs too; only the exit code differs
    (128 + the signal's number, the shell's convention: 130, 143).
    """

    def __init__(self):
        self.signum = None      # the first stop signal that came
        self._main = threading.main_thread().ident

    @property
    def pressed(self) -> bool:
        return self.signum is not None

    @property
    def exit_code(self) -> int:
        """Return the exit code of the interruption: a KeyboardInterrupt of no signal is Ctrl-C."""
        return 128 + (self.signum or signal.SIGINT)

    def handle(self, signum, frame) -> None:
        if self.signum is None:
            self.signum = signum
        raise KeyboardInterrupt

    def stops(self, signum: int) -> bool:
        """Return True if ``signum`` is a signal that stops the command (no StopSignals)."""
        return signum in STOP_DEFAULTS and signal.getsignal(signum) == self.handle

    def lost(self) -> None:
        again = threading.Timer(INTERRUPT_AGAIN, signal.pthread_kill,
                                (self._main, self.signum or signal.SIGINT))
        again.daemon = True
        again.start()


class ClosedPipeTolerant:
    """
    Standard output (or error) that outlives its reader: ``... | head -1`` loses nothing.

    A reader that closes the pipe early made every later ``print`` raise BrokenPipeError,
    which ended the command half-way as an internal error (exit 70), before the files it
    still had to write. Once the pipe is closed, the rest of the printout goes nowhere
    (the descriptor is pointed at /dev/null, so that Python's own flush at exit is quiet
    too) and the command carries on to its end and its own exit code.
    """

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)
        except OSError as error:   # a full disk or device (> /dev/full): the output is lost
            raise self._unwritable(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()
        except OSError as error:
            raise self._unwritable(error) from None

    def _unwritable(self, error: OSError) -> CommandError:
        name = 'standard error' if self._stream is sys.__stderr__ else 'standard output'
        self._reader_gone()     # what is still buffered goes nowhere, quietly, at exit
        return CommandError(f'{name}: cannot write ({error.strerror or error})')

    def _reader_gone(self) -> None:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())
        except (OSError, ValueError, AttributeError):   # not a file descriptor: a test's
            self._stream = open(os.devnull, 'w')       # noqa: SIM115 (lives with stdout)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv=None) -> int:
    """Run the command of ``argv`` (default: this process's command line); return its exit code."""
    if argv is None:
        _collect_garbage_seldom()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ClosedPipeTolerant(sys.stdout), ClosedPipeTolerant(sys.stderr)
    try:
        with warnings.catch_warnings():
            # numpy's overflow and invalid-value notes are no errors of the user's: a result
            # they spoil is refused by its own check, in one line (errors are one line)
            warnings.simplefilter('ignore', RuntimeWarning)
            with _ctrl_c_not_ignored():
                code = _main(argv)
        try:        # what is still buffered: its loss is an error too, not Python's at exit
            sys.stdout.flush()
        except CommandError as error:
            print(f'tendon-robot-sim: error: {error}', file=sys.stderr)
            return error.exit_code
        return code
    finally:
        sys.stdout, sys.stderr = streams


def _collect_garbage_seldom() -> None:
    """
    Tune the garbage collector for a command that is the process: fewer passes, none at exit.

    numba, numpy and scipy make some 10^5 objects as they load, and each full collection
    walks all of them: about 0.1 s of CPU in a run of Till's example, and 0.1 s more in the
    collections at exit, of a process of about 1 s. Objects that outlive the command are
    frozen at exit (nothing of ours waits on a collection: files are closed, output flushed).
    """
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    atexit.register(gc.freeze)


@contextmanager
def _ctrl_c_not_ignored():
    """
    Take Ctrl-C (SIGINT) also when the process started with it ignored; as it was, after.

    A shell starts the background jobs of a script (``command &``) with SIGINT ignored, and
    ``kill -INT`` then did nothing: a cold ``statics`` compiled on for minutes, printed its
    result and exited 0. The nodes and the commands that run until stopped take it in any
    case (``ros.runner.run_node``, ``commands.StopSignals``), as rclpy and ``ros2 bag`` do;
    so does a computation now, from before its modules load.
    """
    ignored = (signal.getsignal(signal.SIGINT) is signal.SIG_IGN
               and threading.current_thread() is threading.main_thread())
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main(argv) -> int:
    parser = build_parser(needed_commands(argv))
    try:
        args = parser.parse_args(argv)
        _check_outputs(parser, args)
    except SystemExit as done:     # --help, or a usage error already printed as one line
        return int(done.code or 0)
    except CommandError as error:  # --help or --version printed to a full device
        print(f'tendon-robot-sim: error: {error}', file=sys.stderr)
        return error.exit_code
    ctrl_c = CtrlC()
    # Only in place of Python's own handling: not where a caller handles a signal, and signals
    # can only be handled in the main thread.
    # the sub-action too (`pcr sweep`), as argparse names it in its own errors
    prog = _chosen(parser, args).prog
    taken = {}
    if threading.current_thread() is threading.main_thread():
        taken = {signum: previous for signum, default in STOP_DEFAULTS.items()
                 if (previous := signal.getsignal(signum)) is default}
    if not taken:
        return _run(args, prog, ctrl_c)
    for signum in taken:
        signal.signal(signum, ctrl_c.handle)
    quiet_lost_interrupts(on_lost=ctrl_c.lost)
    try:
        with StopWatchdog(None, INTERRUPT_FORCED_AFTER, ctrl_c.stops):
            return _run(args, prog, ctrl_c)
    finally:
        quiet_lost_interrupts(on_lost=None)
        for signum, previous in taken.items():
            signal.signal(signum, previous)


def _run(args, prog: str, ctrl_c: CtrlC) -> int:
    """
    Run the command ``args`` chose; return its exit code, whatever it raises.

    ``prog`` starts each error line: ``tendon-robot-sim <command> [<action>]``.
    """
    try:
        return int(args.func(args) or 0)
    except CommandError as error:
        print(f'{prog}: error: {_one_line(error)}', file=sys.stderr)
        return error.exit_code
    except UnsafeOutputError as error:    # a link planted after the check, before the write
        print(f'{prog}: error: {_one_line(error)}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _interrupted(ctrl_c.exit_code)
    except MemoryError as error:   # a size no check foresaw: the arguments ask too much
        print(f'{prog}: error: out of memory ({_one_line(error)}); '
              'ask for fewer samples or steps', file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as error:   # noqa: B902 (the last line of defence: never a traceback)
        if ctrl_c.pressed:    # a KeyboardInterrupt lost in a callback, surfacing as this
            _interrupted(ctrl_c.exit_code)
        if is_full_disk(error):     # an output that cannot be written, as /dev/full
            print(f'{prog}: error: {error.filename or "an output"}: '
                  f'cannot write: {error.strerror}', file=sys.stderr)
            return EXIT_BAD_INPUT
        if os.environ.get('TENDON_ROBOT_SIM_TRACEBACK'):
            raise
        print(f'tendon-robot-sim: internal error: {type(error).__name__}: {_one_line(error)} '
              '(a bug: please report it; TENDON_ROBOT_SIM_TRACEBACK=1 shows the traceback)',
              file=sys.stderr)
        return EXIT_INTERNAL


def _chosen(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """Return the parser of the command (and sub-command) that ``args`` chose."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return _chosen(action.choices[getattr(args, action.dest)], args)
    return parser


def _check_outputs(parser: argparse.ArgumentParser, args) -> None:
    """
    Check every output path of the command before it starts, also those argparse left as given.

    argparse applies an option's type to what the user typed and to a text default, not to
    the ``const`` of an option whose value is optional (``--plot`` alone).
    """
    command = _chosen(parser, args)
    for action in command._actions:
        value = getattr(args, action.dest, None)
        if isinstance(action.type, OutputPath) and isinstance(value, str):
            try:
                setattr(args, action.dest, action.type(value))
            except argparse.ArgumentTypeError as error:
                command.error(str(argparse.ArgumentError(action, str(error))))
    # what the other arguments name to read: a file, or a folder (a bag) of files
    inputs = [(action.option_strings[-1] if action.option_strings else action.metavar
               or action.dest, action.dest, str(text))
              for action in command._actions if not isinstance(action.type, OutputPath)
              for text in _values(getattr(args, action.dest, None))]
    for action in command._actions:
        value = getattr(args, action.dest, None)
        # an optional value given bare keeps its const (cc-dynamics --plot: True, a default
        # file the command names itself)
        if isinstance(action.type, OutputPath) and isinstance(value, (str, Path)):
            try:
                action.type.check_not_read(Path(value), [
                    (name, text) for name, dest, text in inputs
                    if dest not in action.type.rewrites])
            except CommandError as error:
                command.error(str(argparse.ArgumentError(action, str(error))))


def _values(value) -> list:
    """Return the texts and paths of one parsed argument's value (a list's items)."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return [v for v in values if isinstance(v, (str, Path)) and str(v)]


def _interrupted(code: int) -> None:
    """Leave at once with the interrupted exit ``code`` (130 Ctrl-C, 143 SIGTERM)."""
    # Ctrl-C or SIGTERM, once the command's clean-up ran; possibly in the middle of a numba
    # compile, whose teardown at interpreter exit took 1.5-2 s under load: nothing is left to
    # clean up.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _one_line(error: Exception) -> str:
    return ' '.join(str(error).split())


if __name__ == '__main__':
    sys.exit(main())
