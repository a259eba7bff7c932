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


class CommandError(Exception):
    """A user error: printed to stderr as one line, exit code 2."""


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
