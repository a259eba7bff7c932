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
import math

# Exit codes of every command (docs/cli.md): scripts can tell a bad input from a result that
# does not exist.
EXIT_OK = 0
EXIT_NO_RESULT = 1     # the input was valid, the result does not exist: diverged, not
#                        converged, infeasible, unreachable
EXIT_BAD_INPUT = 2     # a bad argument, file or field (argparse's own code for usage errors)
EXIT_INTERNAL = 70     # a bug: an error the command did not foresee (EX_SOFTWARE)
EXIT_INTERRUPTED = 130


#: Most time steps a run may take when it keeps every step in memory (a few GB at most).
MAX_STEPS = 10_000_000


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
    from tendon_robot_sim.models.sim_model import SimulationDiverged
    from tendon_robot_sim.models.snake.dynamics import SnakeDivergedError
    from tendon_robot_sim.models.trunk.dynamics import CCNoSolutionError

    no_result = (ConvergenceError, UnreachableError, SimulationDiverged, SnakeDivergedError,
                 CCNoSolutionError)
    kind = NoResultError if isinstance(error, no_result) else CommandError
    return kind(' '.join(str(error).split()))


def _number(text: str, check, requirement: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
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


class DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Help that shows an option's default, unless the help says it or there is none."""

    def _get_help_string(self, action):
        if '(default' in (action.help or '') or action.default in (None, False):
            return action.help
        return super()._get_help_string(action)


def check_steps(duration: float, dt: float) -> None:
    """Refuse a ``--duration`` that takes more than :data:`MAX_STEPS` steps of ``--dt``."""
    steps = duration / dt
    if steps > MAX_STEPS:
        raise CommandError(f'--duration: {duration:g} s in steps of --dt {dt:g} s is '
                           f'{steps:.3g} steps, more than the {MAX_STEPS:.0e} a run keeps in '
                           'memory; shorten --duration or lengthen --dt')


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
            raise CommandError(f'{option}: tendon {key!r} is given twice')
        values[key] = value
    return values if all(named) else list(values.values())


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

    CommandError for a bad address or an incomplete set of TLS files.
    """
    from tendon_robot_sim.parallel import ParallelError, Scheduler

    tls = (args.tls_ca_file, args.tls_cert, args.tls_key)
    if args.scheduler is None:
        if any(tls):
            raise CommandError('--tls-ca-file, --tls-cert and --tls-key need '
                               '--scheduler tls://...')
        return None
    if any(tls) and not all(tls):
        raise CommandError('--tls-ca-file, --tls-cert and --tls-key go together')
    try:
        return Scheduler(args.scheduler, *tls)
    except ParallelError as error:
        raise CommandError(f'--{error}') from None
