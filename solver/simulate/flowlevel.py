"""The flow-level simulator: max-min fair rates, piecewise constant, for runs too big for chunks.

Model
-----
Every flow (a tree carrying ``share x M`` bytes, :mod:`solver.simulate.routes`) is one fluid
transfer that loads each directed link ``l`` with ``m_fl`` copies of its stream (``m_fl`` = the
tree edges routed over ``l``). Rates are *weighted* max-min fair with weight = the flow's bytes
(progressive filling: all unfrozen flows grow at ``rate_f = w_f * lambda`` until a link saturates;
flows crossing it freeze), the fluid twin of the chunk simulator's rule "the chunk whose flow has
progressed least goes first". Rates are recomputed whenever a flow finishes or starts, so they
are piecewise constant. A flow that waits for another chunk by chunk (the allgather half of a
pipelined allreduce) is merged with it into one stream loading both trees' links; one that waits
for whole flows starts when they finish. Each phase then pays its pipeline fill once: latencies
plus one chunk over the slowest hop along its deepest tree path, as in
:func:`solver.simulate.routes.alpha_estimate_time`.

Cost: one progressive filling (a sparse product per round, rounds <= saturated links) per event,
and events <= flows; no per-chunk work, so 1024 GPUs at any size take seconds. Against the chunk
simulator it loses store-and-forward and queueing effects inside the pipeline (see
``tests/simulate/test_flowlevel.py`` for the agreement on mid-size fabrics).
"""

from __future__ import annotations

import time as _time

import numpy as np

from solver.model.errors import Cancelled
from solver.simulate.engine import DEFAULT_MIN_CHUNKS, SimRun
from solver.simulate.estimate import PreparedModel

_EPS = 1e-12


class _Incidence:
    """A sparse links x flows matrix as (row, column, value) triples with no repeated (row,
    column), and the two products the filling needs: ``inc @ x`` and ``inc.T @ y`` (numpy's
    ``bincount``; one pass over the non-zeros each)."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> None:
        key = np.asarray(rows, np.int64) * shape[1] + np.asarray(cols, np.int64)
        key, counts = np.unique(key, return_counts=True)
        self.rows, self.cols = np.divmod(key, shape[1]) if shape[1] else (key, key)
        self.values = counts.astype(np.float64)
        self.shape = shape

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, self.values * x[self.cols], minlength=self.shape[0])

    def transposed_times(self, y: np.ndarray) -> np.ndarray:
        return np.bincount(self.cols, self.values * y[self.rows], minlength=self.shape[1])


def _streams(prep):
    """(incidence links x flows with multiplicities, share per flow, flows each waits for whole,
    the flow each follows chunk by chunk or -1), from the prepared arrays."""
    n = len(prep.flows)
    rows = prep.path_links
    cols = np.repeat(prep.e_flow, prep.hops_per_edge)
    inc = _Incidence(rows, cols, (len(prep.table.pairs), n))
    share = np.array([f.share for f in prep.flows], np.float64)
    waits: list[set[int]] = [set(f.after) for f in prep.flows]
    upstream = np.array([f.after_chunkwise for f in prep.flows], np.int64)
    return inc, share, waits, upstream


def _rates(inc, cap, w, active, stage, upstream, caught) -> np.ndarray:
    """Weighted progressive filling, stage by stage: flows that others wait for (lower dependency
    depth) are served first, as the chunk simulator ranks their chunks first. A flow that follows
    another chunk by chunk and has caught up with it goes no faster than it."""
    rate = np.zeros(len(w))
    left = cap.copy()
    for st in np.unique(stage[active]):
        members = active & (stage == st)
        limit = np.full(len(w), np.inf)
        tied = members & caught
        limit[tied] = rate[upstream[tied]]
        left = _fill_stage(inc, left, w, members, rate, limit)
    return rate


def _fill_stage(inc, left, w, active, rate, limit) -> np.ndarray:
    """Progressive filling of ``active`` flows on capacity ``left`` (rate_f += w_f * lambda, at
    most ``limit_f``); returns the capacity left over."""
    cap = left
    free = active & (w > 0) & (limit > 0)
    left = left.copy()
    while free.any():
        demand = inc @ np.where(free, w, 0.0)
        used = demand > _EPS
        if not used.any():
            break
        step = np.min(left[used] / demand[used])
        head = (limit[free] - rate[free]) / w[free]
        step = min(step, float(np.min(head))) if head.size else step
        rate[free] += w[free] * step
        left = left - demand * step
        saturated = used & (left <= _EPS * np.maximum(cap, 1.0))
        hit = inc.transposed_times(saturated.astype(np.float64)) > 0
        free &= ~hit & (rate < limit * (1 - 1e-12))
    return left


def simulate_flows(
    model: PreparedModel,
    size: int,
    chunk: float,
    min_chunks: int = DEFAULT_MIN_CHUNKS,
    cancel=None,
) -> SimRun:
    """Flow-level time of a prepared route set for ``size`` bytes (see the module docstring);
    ``model`` = ``PreparedModel(prepare(route_set))``."""
    t0 = _time.perf_counter()
    prep = model.prep
    table = prep.table
    inc, share, waits, upstream = _streams(prep)
    stage = np.zeros(len(share), np.int64)
    for _ in range(len(share)):
        new = np.array(
            [
                1 + max([stage[j] for j in ws] + ([stage[u]] if u >= 0 else []), default=-1)
                for ws, u in zip(waits, upstream)
            ],
            np.int64,
        )
        if np.array_equal(new, stage):
            break
        stage = new
    follows = upstream >= 0
    cap = table.bandwidth.astype(np.float64)
    total_bytes = share * float(size)
    left = total_bytes.copy()
    done = left <= 0
    finish_at = np.zeros(len(share))
    busy = np.zeros(len(cap))
    t = 0.0
    events = 0
    while not done.all():
        if cancel is not None and cancel():
            raise Cancelled("simulation cancelled")
        active = ~done & np.array([all(done[j] for j in ws) for ws in waits])
        up = np.where(follows, upstream, 0)
        # progress (bytes) of a follower may not pass its upstream's
        ahead = np.where(follows, (total_bytes[up] - left[up]) - (total_bytes - left), np.inf)
        caught = follows & ~done[up] & (ahead <= _EPS * max(1.0, float(size)))
        rate = _rates(inc, cap, total_bytes * active, active, stage, up, caught)
        moving = active & (rate > 0)
        if not moving.any():
            raise RuntimeError("flow-level simulation stalled (a flow has no capacity)")
        dt = float(np.min(left[moving] / rate[moving]))
        gain = np.where(follows & moving & ~caught, rate - rate[up], 0.0)
        closing = gain > 0
        if closing.any():  # a follower catches up with its upstream
            dt = min(dt, float(np.min(ahead[closing] / gain[closing])))
        busy += (inc @ (rate * moving)) * dt / cap
        left = np.where(moving, left - rate * dt, left)
        t += dt
        events += 1
        ended = moving & (left <= _EPS * max(1.0, float(size)))
        left[ended] = 0.0
        done |= ended
        finish_at[ended] = t
    fill = model.fill_time(size, chunk, min_chunks)
    total = t + fill
    flow_time = finish_at + fill
    return SimRun(
        int(size),
        total,
        float(chunk),
        busy * t / total if total > 0 else busy,
        events,
        _time.perf_counter() - t0,
        flow_time,
    )


__all__ = ["simulate_flows"]
