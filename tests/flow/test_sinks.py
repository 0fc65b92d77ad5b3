"""Max-flows to many sinks in threads: the same values and cuts as one flow at a time."""

from __future__ import annotations

import numpy as np
import pytest

from solver.flow.maxflow import FlowNetwork
from solver.flow.sinks import flows_to_sinks, worker_count
from solver.model.errors import Cancelled, SolverError


def _random_network(seed: int, n: int = 40, m: int = 200) -> FlowNetwork:
    """Random edges plus an edge from node 0 to every node (so flow values differ by sink)."""
    rng = np.random.default_rng(seed)
    tails = rng.integers(0, n, m)
    heads = (tails + rng.integers(1, n, m)) % n  # no self-loops
    caps = rng.integers(0, 20, m)
    tails = np.concatenate([tails, np.zeros(n - 1, dtype=np.int64)])
    heads = np.concatenate([heads, np.arange(1, n)])
    caps = np.concatenate([caps, rng.integers(0, 10, n - 1)])
    return FlowNetwork(n, tails, heads, caps)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_threaded_flows_equal_one_at_a_time(seed, workers):
    net = _random_network(seed)
    sinks = list(range(1, net.n))
    # a cutoff in the middle of the values: some flows stop at it, some fall short
    cutoff = int(np.median([net.max_flow(0, t) for t in sinks]))
    expected = []
    for t in sinks:
        value = net.max_flow(0, t, cutoff=cutoff)
        expected.append((value, net.source_side(0).copy() if value < cutoff else None))
    got = flows_to_sinks(net, 0, sinks, cutoff, short_side=True, workers=workers)
    assert [v for v, _ in got] == [v for v, _ in expected]
    assert any(side is None for _, side in got) and any(side is not None for _, side in got)
    for (_, side), (_, want) in zip(got, expected):
        assert (side is None) == (want is None)
        if want is not None:
            assert (side == want).all()


def test_cancel_inside_a_thread_reaches_the_caller():
    net = _random_network(0)

    def check():
        raise Cancelled("solve cancelled")

    with pytest.raises(Cancelled):
        flows_to_sinks(net, 0, list(range(1, net.n)), check=check, workers=2)


def test_bad_sink_is_refused():
    with pytest.raises(SolverError, match="bad source/sink"):
        flows_to_sinks(_random_network(0), 0, [0], workers=2)


def test_thread_count_from_the_environment(monkeypatch):
    monkeypatch.setenv("FORESTCOLL_THREADS", "3")
    assert worker_count() == 3
    monkeypatch.delenv("FORESTCOLL_THREADS")
    assert worker_count() >= 1
    for bad in ("zero", "0"):
        monkeypatch.setenv("FORESTCOLL_THREADS", bad)
        with pytest.raises(SolverError, match="FORESTCOLL_THREADS"):
            worker_count()
