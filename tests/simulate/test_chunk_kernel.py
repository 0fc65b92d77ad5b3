"""The chunk kernels' event heap: when it fills, the run pauses, gets a bigger heap and resumes
exactly where it stopped (same times, events and link use as a run that never paused)."""

from __future__ import annotations

import numpy as np
import pytest

from solver.io import templates as T
from solver.simulate import chunk_kernel as K
from solver.simulate import engine, route_sets


@pytest.mark.parametrize("collective, algorithm", [("allreduce", "ring"), ("allgather", "direct")])
def test_a_run_that_outgrows_its_heap_resumes_identically(monkeypatch, collective, algorithm):
    built, _ = route_sets(T.ring(6), collective, [algorithm])
    prep = engine.prepare(built[algorithm])
    whole = engine.simulate_prepared(prep, 1 << 24, 1 << 18)

    grown = []
    real_grown_heap = K.grown_heap

    def counting_grown_heap(heap, capacity, n):
        grown.append((len(heap.time), capacity, n))
        return real_grown_heap(heap, capacity, n)

    monkeypatch.setattr(engine, "HEAP_SLOTS_PER_LINK", 1)
    monkeypatch.setattr(engine, "HEAP_SLOTS_EXTRA", 0)
    monkeypatch.setattr(K, "grown_heap", counting_grown_heap)
    paused = engine.simulate_prepared(prep, 1 << 24, 1 << 18)

    assert grown, "the small heap never filled: the resume path was not exercised"
    assert all(capacity > old for old, capacity, _ in grown)
    assert paused.time == whole.time
    assert paused.events == whole.events
    assert np.array_equal(paused.busy_fraction, whole.busy_fraction)
    assert np.array_equal(paused.flow_time, whole.flow_time)


def test_grown_heap_keeps_the_pending_events_only():
    heap = K.new_heap(4)
    for column, values in zip(heap, ([1.0, 2.0, 3.0, 9.0], [0, 1, 2, 9], [5, 6, 7, 9],
                                     [0.5, 0.6, 0.7, 9.0]), strict=True):
        column[:] = values
    bigger = K.grown_heap(heap, 10, 3)
    assert len(bigger.time) == 10
    assert list(bigger.time[:3]) == [1.0, 2.0, 3.0]
    assert list(bigger.seq[:3]) == [0, 1, 2]
    assert list(bigger.item[:3]) == [5, 6, 7]
    assert list(bigger.tail[:3]) == [0.5, 0.6, 0.7]
