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
Run batches of independent solves serially, on local processes or on a Dask cluster.

Calibration (holds under trial parameters), the parallel robot's workspace and any
other sweep hand a list of picklable tasks and a module-level function to a
:class:`Pool`: with one worker it runs in this process; with more, on local processes
(:class:`concurrent.futures.ProcessPoolExecutor`; each worker builds its own solvers,
numba kernels come from the on-disk cache); with a :class:`Scheduler`, on a Dask
cluster (``distributed.Client(address)``). Imports nothing else of the package.

Local workers are bounded: never more than the cores this process may run on, nor more than
the tasks of a batch, and a count beyond :data:`MAX_WORKERS` is refused; a count of 100000
once forked until the machine ran out of memory. No worker outlives this process, whatever
ends it (SIGKILL included): each asks the kernel for SIGKILL when its parent dies
(``PR_SET_PDEATHSIG``, Linux) and leaves Ctrl-C to the parent, which stops them.
"""

from __future__ import annotations

from concurrent.futures import as_completed, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
import os
import signal
import sys

#: Most local worker processes a pool accepts: beyond any machine's cores, so a larger count
#: is a typo or an attack (a fork bomb), not a request.
MAX_WORKERS = 1024
PR_SET_PDEATHSIG = 1   # prctl(2) option, <linux/prctl.h>
#: s: the longest a pool waits for a Dask scheduler to take the connection and answer.
CONNECT_TIMEOUT = 10.0


class ParallelError(ValueError):
    """A bad worker count or scheduler, a cluster that cannot be reached, a worker killed."""


# A worker process that dies (SIGKILL: the out-of-memory killer, or a kill of that process
# alone) is a limit of the machine, not a bug of the command: one line, no traceback.
KILLED = ('workers: a worker process was killed as it worked (out of memory, or a signal to '
          'it alone)')


@dataclass(frozen=True)
class Scheduler:
    """
    A Dask scheduler to solve on: its address and, for ``tls://``, the TLS files.

    Dask moves tasks and results as pickles, and unpickling runs code: over plain
    ``tcp://`` whoever can reach the scheduler or sit on the path can run code in this
    process and on the workers. Use ``tcp://`` on a trusted network only (or over an
    SSH tunnel); otherwise ``tls://`` with certificates, which authenticates both
    ends and encrypts the traffic.
    """

    address: str                  # tcp://host:port, tls://host:port or inproc://...
    ca_file: str | None = None    # PEM; None for tls://: Dask's configuration decides
    cert_file: str | None = None  # this client's certificate (PEM)
    key_file: str | None = None   # its private key (PEM)

    def __post_init__(self):
        scheme, _, rest = self.address.partition('://')
        host, _, port = rest.rpartition(':')
        # inproc://: a scheduler in this very process (LocalCluster(processes=False)).
        if not (scheme in ('tcp', 'tls') and host and port.isdigit()
                or scheme == 'inproc' and rest):
            raise ParallelError(f'scheduler: {self.address!r} is not tcp://HOST:PORT or '
                                'tls://HOST:PORT')
        files = (self.ca_file, self.cert_file, self.key_file)
        if scheme == 'tcp' and any(files):
            raise ParallelError('scheduler: TLS files need a tls:// address')

    def security(self):
        """``distributed.Security`` for the connection (None for tcp://)."""
        if not self.address.startswith('tls://'):
            return None
        from distributed.security import Security
        if self.ca_file is None:
            return Security()   # the distributed.comm.tls.* settings of Dask's config
        return Security(tls_ca_file=self.ca_file, tls_client_cert=self.cert_file,
                        tls_client_key=self.key_file, require_encryption=True)


def usable_cores() -> int:
    """Return the cores this process may run on (its CPU affinity; all cores elsewhere)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:   # not Linux
        return os.cpu_count() or 1


def check_workers(workers) -> None:
    """Raise ParallelError unless ``workers`` is None or a whole number in [1, MAX_WORKERS]."""
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ParallelError(f'workers: must be an integer >= 1, got {workers!r}')
    if workers > MAX_WORKERS:
        raise ParallelError(f'workers: at most {MAX_WORKERS} local processes, got {workers} '
                            f'(this machine runs {usable_cores()} at a time)')


def end_with_parent(parent: int, sig: int, libc=None) -> None:
    """
    In a child process: have the kernel send it ``sig`` when ``parent`` dies, by any cause.

    ``PR_SET_PDEATHSIG`` (Linux; elsewhere only the second check) covers what no handler can:
    the parent killed with SIGKILL. A parent that died before the request took effect ends
    the child now. ``libc``: loaded by the parent when this runs between fork and exec (a
    ``preexec_fn``: no library loading in a forked copy of a threaded process).
    """
    if sys.platform.startswith('linux'):
        import ctypes
        (libc or ctypes.CDLL(None, use_errno=True)).prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)


def ends_with_us(sig: int = signal.SIGTERM):
    """Return a ``preexec_fn`` of :class:`subprocess.Popen`: the child gets ``sig`` as we die."""
    libc = None
    if sys.platform.startswith('linux'):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()
    return lambda: end_with_parent(parent, sig, libc)


def _worker_start(parent: int) -> None:
    """
    Start a worker process: die with the parent, and leave Ctrl-C and SIGTERM to it.

    The kernel SIGKILLs the worker when the parent dies (:func:`end_with_parent`). Ctrl-C
    reaches every process of the terminal's group: the parent alone handles it (the workers
    would each print a KeyboardInterrupt traceback) and ends them. A forked worker also
    inherits the command's SIGTERM handler (``cli.CtrlC``), and a scheduler signals every
    process of the job: the worker ends at once, as SIGTERM's default, without a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    end_with_parent(parent, signal.SIGKILL)


def _handshake(scheduler: Scheduler, timeout: float) -> None:
    """
    Raise ParallelError unless ``scheduler`` answers Dask's handshake within ``timeout`` s.

    Dask's own connect timeout ends once the TCP connection stands: its handshake then waited
    for ever on a port that took the connection and said nothing (a scheduler stalled, a
    firewall), and read a web server's answer (the dashboard's port, 8787) as the length of
    a message, 3 EiB ("out of memory"). Run in a thread of its own: it needs an event loop
    of its own, and the caller may run one.
    """
    import asyncio
    import threading
    from distributed.comm import connect
    security = scheduler.security()
    arguments = security.get_connection_args('client') if security is not None else {}
    failure = []

    async def shake() -> None:
        comm = await asyncio.wait_for(connect(scheduler.address, timeout=timeout,
                                              **arguments), timeout)
        await comm.close()

    def probe() -> None:
        try:
            asyncio.run(shake())
        except (TimeoutError, asyncio.TimeoutError):    # one class since Python 3.11
            failure.append(f'no answer within {timeout:g} s (is it a Dask scheduler? the '
                           "dashboard's port, 8787, is not)")
        except Exception as error:  # noqa: B902 (whatever the bytes that came back were)
            failure.append(f'{type(error).__name__}: {" ".join(str(error).split())}'
                           + ('' if isinstance(error, OSError) else
                              ' (it does not answer as a Dask scheduler)'))

    thread = threading.Thread(target=probe, name='dask-handshake', daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise ParallelError(f'scheduler: cannot connect to {scheduler.address!r}: {failure[0]}')


class Pool:
    """
    Run batches of independent tasks serially, on local processes or on a Dask cluster.

    Parameters
    ----------
    workers : int or None
        Local processes; None = all cores (:func:`usable_cores`); 1 = in this process. At
        most the cores and the tasks of a batch run; more than :data:`MAX_WORKERS` is
        refused.
    scheduler : Scheduler, str or None
        Dask scheduler (an address ``tcp://host:8786`` stands for ``Scheduler(address)``);
        overrides ``workers``. See :class:`Scheduler` on what plain tcp:// exposes.

    """

    def __init__(self, workers: int | None = None, scheduler: Scheduler | str | None = None):
        check_workers(workers)
        self.workers = min(workers or usable_cores(), usable_cores())
        self.scheduler = scheduler
        self._client = None
        self._pool = None
        if scheduler is not None:
            if isinstance(scheduler, str):
                scheduler = Scheduler(scheduler)
            import distributed
            if not scheduler.address.startswith('inproc://'):   # in this process: answers
                _handshake(scheduler, CONNECT_TIMEOUT)
            try:
                self._client = distributed.Client(scheduler.address, timeout=CONNECT_TIMEOUT,
                                                  security=scheduler.security())
            except (OSError, TimeoutError, ValueError, TypeError, AssertionError) as error:
                raise ParallelError(f'scheduler: cannot connect to {scheduler.address!r}: '
                                    f'{type(error).__name__}: {error}') from None
            self.workers = max(1, sum(self._client.nthreads().values()))

    def imap(self, tasks: list, function, ordered: bool = True):
        """
        Yield ``function(task)`` of each task as they finish (for progress bars).

        ``function`` is a picklable module-level function. ``ordered``: in task order, a
        result that finished early held back until those before it have; False: each as soon
        as it finishes, for a caller that saves each result at once (a dataset's parts: one
        slow task must not hold the results after it where a kill loses them).
        """
        try:
            yield from self._imap(list(tasks), function, ordered)
        except BrokenProcessPool:
            raise ParallelError(KILLED) from None

    def _imap(self, tasks: list, function, ordered: bool):
        if self._client is not None:
            import distributed
            futures = self._client.map(function, tasks, pure=False)
            if not ordered:
                futures = distributed.as_completed(futures)
            try:
                for future in futures:
                    yield future.result()
            except distributed.KilledWorker:
                raise ParallelError(KILLED) from None
            return
        if self._pool is None and min(self.workers, len(tasks)) > 1:
            # started on the first batch, as many processes as it has tasks at most
            self._pool = ProcessPoolExecutor(min(self.workers, len(tasks)),
                                             initializer=_worker_start,
                                             initargs=(os.getpid(),))
        if self._pool is not None and ordered:
            yield from self._pool.map(function, tasks)
        elif self._pool is not None:
            for future in as_completed([self._pool.submit(function, t) for t in tasks]):
                yield future.result()
        else:
            for task in tasks:
                yield function(task)

    def map(self, tasks: list, function) -> list:  # noqa: A003 (as Pool.map)
        return list(self.imap(tasks, function))

    def close(self, wait: bool = True) -> None:
        """Stop the workers; ``wait=False``: at once, dropping the tasks not finished."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=not wait)
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> 'Pool':
        return self

    def __exit__(self, kind, value, traceback) -> None:
        # after an error or Ctrl-C, the running tasks' results are of no use: do not wait
        self.close(wait=kind is None)
