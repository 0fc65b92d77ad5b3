"""The chunk kernels' event heap: when it fills, the run pauses, gets a bigger heap and resumes
exactly where it stopped (same times, events and link use as a run that never paused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver.io import templates as T
from solver.simulate import chunk_kernel as K
from solver.simulate import engine, route_sets

ROOT = Path(__file__).resolve().parents[2]


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
    for column, values in zip(
        heap, ([1.0, 2.0, 3.0, 9.0], [0, 1, 2, 9], [5, 6, 7, 9], [0.5, 0.6, 0.7, 9.0]), strict=True
    ):
        column[:] = values
    bigger = K.grown_heap(heap, 10, 3)
    assert len(bigger.time) == 10
    assert list(bigger.time[:3]) == [1.0, 2.0, 3.0]
    assert list(bigger.seq[:3]) == [0, 1, 2]
    assert list(bigger.item[:3]) == [5, 6, 7]
    assert list(bigger.tail[:3]) == [0.5, 0.6, 0.7]


def test_the_kernels_give_the_same_run_without_jit():
    """Under NUMBA_DISABLE_JIT=1 (plain Python, as coverage runs them) an allreduce with flow
    dependencies and a heap that has to grow gives the compiled kernels' exact result."""
    code = (
        "from solver.io import templates as T\n"
        "from solver.simulate import engine, route_sets\n"
        "engine.HEAP_SLOTS_PER_LINK, engine.HEAP_SLOTS_EXTRA = 1, 0\n"
        "built, _ = route_sets(T.ring(4), 'allreduce', ['ring'])\n"
        "run = engine.simulate_prepared(engine.prepare(built['ring']), 1 << 20, 1 << 16)\n"
        "print(repr(run.time), run.events, list(run.flow_time))\n"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    built, _ = route_sets(T.ring(4), "allreduce", ["ring"])
    run = engine.simulate_prepared(engine.prepare(built["ring"]), 1 << 20, 1 << 16)
    assert out.stdout.split(" ", 2)[:2] == [repr(run.time), str(run.events)]
    assert out.stdout.strip() == f"{run.time!r} {run.events} {list(run.flow_time)}"
