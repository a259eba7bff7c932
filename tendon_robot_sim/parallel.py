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
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
import os


class ParallelError(ValueError):
    """A bad worker count or scheduler, or a cluster that cannot be reached."""


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


class Pool:
    """
    Run batches of independent tasks serially, on local processes or on a Dask cluster.

    Parameters
    ----------
    workers : int or None
        Local processes; None = all cores (``os.cpu_count()``); 1 = in this process.
    scheduler : Scheduler, str or None
        Dask scheduler (an address ``tcp://host:8786`` stands for ``Scheduler(address)``);
        overrides ``workers``. See :class:`Scheduler` on what plain tcp:// exposes.

    """

    def __init__(self, workers: int | None = None, scheduler: Scheduler | str | None = None):
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ParallelError(f'workers: must be an integer >= 1, got {workers!r}')
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self._client = None
        self._pool = None
        if scheduler is not None:
            if isinstance(scheduler, str):
                scheduler = Scheduler(scheduler)
            import distributed
            try:
                self._client = distributed.Client(scheduler.address, timeout=10,
                                                  security=scheduler.security())
            except (OSError, TimeoutError, ValueError, TypeError, AssertionError) as error:
                raise ParallelError(f'scheduler: cannot connect to {scheduler.address!r}: '
                                    f'{type(error).__name__}: {error}') from None
            self.workers = max(1, sum(self._client.nthreads().values()))
        elif self.workers > 1:
            self._pool = ProcessPoolExecutor(self.workers)

    def imap(self, tasks: list, function):
        """
        Yield ``function(task)`` of each task in task order as they finish (for progress bars).

        ``function`` is a picklable module-level function.
        """
        if self._client is not None:
            for future in self._client.map(function, tasks, pure=False):
                yield future.result()
        elif self._pool is not None:
            yield from self._pool.map(function, tasks)
        else:
            for task in tasks:
                yield function(task)

    def map(self, tasks: list, function) -> list:  # noqa: A003 (as Pool.map)
        return list(self.imap(tasks, function))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
        if self._client is not None:
            self._client.close()

    def __enter__(self) -> 'Pool':
        return self

    def __exit__(self, *exc) -> None:
        self.close()
