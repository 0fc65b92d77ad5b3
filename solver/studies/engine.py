"""Running study batches on Dask: a local cluster by default, or an existing scheduler.

:class:`DaskEngine` owns the client (and the :class:`~distributed.LocalCluster` it started).
:meth:`DaskEngine.run` scatters the context once to every worker, submits one task per batch and
hands each finished batch back as soon as it is done. A worker that dies costs only its tasks:
the scheduler gives them to another worker. ``cancel`` is polled a few times a second.

An existing scheduler is first asked for Dask's handshake (the scheduler speaks first) with a
deadline of :data:`CONNECT_S` seconds: a peer that accepts the connection and never answers
(distributed's own ``connect`` reads the handshake without a deadline) is one error line, not
a hang.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from solver.model.errors import Cancelled, ForestCollError

POLL_S = 0.25
CONNECT_S = 10.0  # seconds for an existing scheduler to accept and complete the handshake


class EngineError(ForestCollError):
    """The Dask cluster cannot be started or reached."""


def _is_set(cancel: Any) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def _handshake(address: str, seconds: float) -> None:
    """Connect to the scheduler at ``address`` and read its handshake within ``seconds``."""
    import asyncio

    from distributed.comm import connect

    async def probe() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        await comm.close()

    try:
        asyncio.run(probe())
    except TimeoutError:
        raise EngineError(
            f"cannot reach the Dask scheduler at {address}: no handshake within {seconds:g} s "
            "(is it a Dask scheduler?)"
        ) from None
    except Exception as exc:  # noqa: BLE001 - refused, unresolvable, garbage instead of Dask
        raise EngineError(
            f"cannot reach the Dask scheduler at {address}: {_first_line(exc)}"
        ) from None


class DaskEngine:
    """A Dask client for studies; use as a context manager.

    Parameters
    ----------
    workers : int, optional
        Worker processes of the local cluster (default: the machine's cores).
    scheduler : str, optional
        Address of an existing scheduler (``tcp://HOST:PORT``); then no cluster is started.
    client : distributed.Client, optional
        An existing client to use as is (not closed on exit).
    """

    def __init__(
        self, workers: int | None = None, scheduler: str | None = None, client: Any = None
    ) -> None:
        if workers is not None and workers < 1:
            raise EngineError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self.scheduler = scheduler
        self.client = client
        self._own_client = client is None
        self._cluster = None

    def __enter__(self) -> DaskEngine:
        if self.client is not None:
            return self
        from distributed import Client, LocalCluster

        if self.scheduler:
            _handshake(self.scheduler, CONNECT_S)
            try:
                self.client = Client(self.scheduler, timeout=f"{CONNECT_S:g}s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise EngineError(
                    f"cannot reach the Dask scheduler at {self.scheduler}: {_first_line(exc)}"
                ) from None
            return self
        n = self.workers or os.cpu_count() or 1
        self._cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        self.client = Client(self._cluster)
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        if self._own_client and self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def _gather(self, futures: list) -> list:
        return _gather_or_fail(self.client, futures)

    @property
    def nthreads(self) -> int:
        """Worker threads the cluster has now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def run(
        self, fn: Callable, context: Any, batches: Sequence[Sequence[Any]], cancel: Any = None
    ) -> Iterator[list]:
        """Yield the result of ``fn(context, batch)`` for every batch, in order of completion.

        Raises :class:`Cancelled` when ``cancel`` is set (pending tasks are cancelled).
        """
        from distributed import wait

        if not batches:
            return
        client = self.client
        shared = client.scatter(context, broadcast=True, hash=False)  # a key of its own
        pending = {client.submit(fn, shared, list(batch), pure=False) for batch in batches}
        try:
            while pending:
                if _is_set(cancel):
                    raise Cancelled("study cancelled")
                try:
                    done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    continue
                for result in self._gather(list(done)):
                    yield result
                    if _is_set(cancel):
                        raise Cancelled("study cancelled")
        finally:
            if pending:
                client.cancel(list(pending))


def _gather_or_fail(client, futures: list) -> list:
    """Results of finished futures; a failure that is not the study's own becomes one line."""
    try:
        return client.gather(futures)
    except ForestCollError:
        raise
    except Exception as exc:  # KilledWorker, lost scheduler, a bug in a task...
        raise EngineError(
            f"the Dask cluster failed: {type(exc).__name__}: {_first_line(exc)}"
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
