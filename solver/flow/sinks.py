"""Max-flows from one source to many sinks on one network, spread over threads.

The optimum (one flow per orbit of sinks per Dinkelbach step), the trimming of spare capacity
and the splitting invariant all ask the same network for ``maxflow(s, t)`` at many sinks t.
The flows are independent and the Dinic kernel releases the GIL (``nogil=True``), so
:func:`flows_to_sinks` runs contiguous slices of the sinks in threads, each on its own residual
array and workspace over the shared CSR arrays. Results come back in sink order, so callers
that pick "the first best sink" stay deterministic whatever the thread count.

The thread count is :func:`worker_count`: ``FORESTCOLL_THREADS`` if set, else the CPUs this
process may run on. Few sinks or ``workers == 1`` run in the calling thread with no pool.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import numpy as np

from solver.flow.maxflow import INF, FlowNetwork, augment, mark_reachable, new_workspace
from solver.model.errors import SolverError

MIN_SINKS_PER_THREAD = 2  # below this many sinks per thread, threads cost more than they save


def worker_count() -> int:
    """Threads for independent max-flows: ``FORESTCOLL_THREADS`` or the usable CPUs."""
    text = os.environ.get("FORESTCOLL_THREADS", "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            raise SolverError(f"FORESTCOLL_THREADS must be a whole number, got {text!r}") from None
        if value < 1:
            raise SolverError(f"FORESTCOLL_THREADS must be >= 1, got {value}")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def flows_to_sinks(
    net: FlowNetwork,
    s: int,
    sinks: Sequence[int],
    cutoff: int | None = None,
    short_side: bool = False,
    check: Callable[[], None] | None = None,
    workers: int | None = None,
) -> list[tuple[int, np.ndarray | None]]:
    """``(maxflow(s, t), side)`` for every t in ``sinks``, in that order.

    ``cutoff`` stops each flow once it reaches that value. With ``short_side``, ``side`` is the
    source side of a minimum cut (boolean mask over the nodes) for every flow below ``cutoff``,
    else ``None``. ``check`` is called before each flow (cancellation). The network's
    capacities must not change during the call; :attr:`FlowNetwork.res` is left undefined.
    """
    workers = worker_count() if workers is None else workers
    sinks = [int(t) for t in sinks]
    for t in sinks:
        if not (0 <= s < net.n and 0 <= t < net.n) or s == t:
            raise SolverError(f"flow network: bad source/sink {s}/{t}")
    limit = INF if cutoff is None else int(cutoff)
    threads = min(workers, len(sinks) // MIN_SINKS_PER_THREAD)

    def run(part: list[int], res: np.ndarray, work) -> list[tuple[int, np.ndarray | None]]:
        out = []
        for t in part:
            if check is not None:
                check()
            np.copyto(res, net.graph.cap)
            flow = int(augment(net.graph, res, s, t, limit, work))
            side = None
            if short_side and flow < limit:
                mark_reachable(net.graph, res, s, work)
                side = work.mark.astype(bool)
            out.append((flow, side))
        return out

    if threads <= 1:
        return run(sinks, net.res, net.work)
    bounds = np.linspace(0, len(sinks), threads + 1).astype(int)
    parts = [sinks[a:b] for a, b in pairwise(bounds.tolist())]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="maxflow") as pool:
        futures = [
            pool.submit(run, part, np.empty_like(net.res), new_workspace(net.n)) for part in parts
        ]
        return [item for f in futures for item in f.result()]
