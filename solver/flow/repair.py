"""Incremental repair of a stored flow after capacities change (numba kernels).

The solver keeps one s-v flow per compute node across thousands of small capacity edits; a
recompute per edit would cost a max-flow each. Instead, lowering an arc's capacity below its
flow (:func:`reduce_arc`) leaves an *excess* at the arc's tail and a *deficit* at its head,
recorded in an :class:`Excess` list, and :func:`repair_flow` turns the result back into a valid
s-v flow: excess is rerouted to deficits, leftovers are walked back along the existing flow to
``s`` (or forward from ``v``), and the flow is topped up again. Residual arrays follow the
convention of :mod:`solver.flow.maxflow`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from solver.flow.jit import njit_noalloc
from solver.flow.maxflow import augment, flow_into


class Excess(NamedTuple):
    """Per-node flow imbalance: ``node[:size[0]]`` with ``amount`` > 0 excess, < 0 deficit."""

    node: np.ndarray
    amount: np.ndarray
    size: np.ndarray  # one element: the number of entries in use


def new_excess(capacity: int = 8) -> Excess:
    """An empty :class:`Excess` list with room for ``capacity`` nodes."""
    return Excess(
        np.zeros(capacity, dtype=np.int64),
        np.zeros(capacity, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
    )


@njit_noalloc(inline="always")
def add_excess(ex, x, amount):
    """Add ``amount`` (negative: deficit) to node ``x``'s entry."""
    m = ex.size[0]
    for i in range(m):
        if ex.node[i] == x:
            ex.amount[i] += amount
            return
    ex.node[m] = x
    ex.amount[m] = amount
    ex.size[0] = m + 1


@njit_noalloc(inline="always")
def reduce_arc(g, res, a, delta, ex):
    """Apply a capacity change ``delta`` of forward arc ``a`` to residual array ``res``.

    ``g.cap`` is not touched (the caller edits it once for all stored flows). If the arc now
    carries more than its capacity, the flow on it is cut back and the imbalance is added to
    ``ex`` (excess at the tail, deficit at the head). Returns the flow that was cut.
    """
    res[a] += delta
    if res[a] >= 0:
        return 0
    over = -res[a]
    res[a] = 0
    res[g.rev[a]] -= over
    add_excess(ex, g.tail[a], over)
    add_excess(ex, g.head[a], -over)
    return over


@njit_noalloc
def cancel_walk(g, res, x, target, amount, work):
    """Push up to ``amount`` from ``x`` to ``target`` only along arcs that cancel existing flow.

    Depth-first along arcs with ``res > cap`` (reverse arcs of edges carrying flow), so it walks
    back along flow paths and explores only the flow's support, not the whole network. Uses
    ``work.level`` as visited marks (all -1 on entry and on return). Returns the amount pushed.
    """
    level, it, queue, stack = work.level, work.it, work.queue, work.stack
    pushed = 0
    while pushed < amount:
        nvis = 1
        queue[0] = x
        level[x] = 0
        it[x] = g.indptr[x]
        depth = 0
        u = x
        while u != target:
            advanced = False
            while it[u] < g.indptr[u + 1]:
                a = it[u]
                w = g.head[a]
                if res[a] > g.cap[a] and level[w] < 0:
                    level[w] = 0
                    it[w] = g.indptr[w]
                    queue[nvis] = w
                    nvis += 1
                    stack[depth] = a
                    depth += 1
                    u = w
                    advanced = True
                    break
                it[u] += 1
            if not advanced:
                if depth == 0:
                    break
                depth -= 1
                u = g.tail[stack[depth]]
                it[u] += 1
        for i in range(nvis):
            level[queue[i]] = -1
        if u != target:
            break
        push = amount - pushed
        for d in range(depth):
            push = min(push, res[stack[d]] - g.cap[stack[d]])
        for d in range(depth):
            a = stack[d]
            res[a] -= push
            res[g.rev[a]] += push
        pushed += push
    return pushed


@njit_noalloc(inline="always")
def _match_excess(g, res, s, v, ex, work):
    """Reroute excess to deficits (both away from ``s`` and ``v``) where the network allows."""
    m = ex.size[0]
    for i in range(m):
        if ex.amount[i] <= 0 or ex.node[i] == s or ex.node[i] == v:
            continue
        for j in range(m):
            if ex.amount[j] >= 0 or ex.node[j] == s or ex.node[j] == v:
                continue
            want = min(ex.amount[i], -ex.amount[j])
            got = augment(g, res, ex.node[i], ex.node[j], want, work)
            ex.amount[i] -= got
            ex.amount[j] += got
            if ex.amount[i] == 0:
                break


@njit_noalloc(inline="always")
def _settle_excess(g, res, s, v, x, amount, work):
    """Send node ``x``'s leftover excess (> 0) back to ``s``/on to ``v``, or cover a deficit (< 0)
    from ``v``/``s``; return what is still unsettled (0 on success).

    Excess came from ``s`` or through ``v`` (flow may pass through the sink); a deficit likewise.
    Walking back along the existing flow is cheap; Dinic finishes whatever it leaves.
    """
    if amount > 0:
        amount -= cancel_walk(g, res, x, s, amount, work)
        amount -= augment(g, res, x, s, amount, work)
        if amount > 0:
            amount -= augment(g, res, x, v, amount, work)
    else:
        amount += cancel_walk(g, res, v, x, -amount, work)
        amount += augment(g, res, v, x, -amount, work)
        if amount < 0:
            amount += augment(g, res, s, x, -amount, work)
    return amount


@njit_noalloc
def repair_flow(g, res, s, v, need, ex, work):
    """Turn a flow with the imbalances ``ex`` back into an s-v flow and top it up to ``need``.

    ``ex`` holds each node's excess/deficit left by :func:`reduce_arc` and is empty on return.
    Returns the flow value (possibly below ``need`` if the network no longer allows it), or -1
    if the residual network was inconsistent (a bug).
    """
    _match_excess(g, res, s, v, ex, work)
    m = ex.size[0]
    ex.size[0] = 0
    for i in range(m):
        x = ex.node[i]
        if x == s or x == v or ex.amount[i] == 0:
            continue
        if _settle_excess(g, res, s, v, x, ex.amount[i], work) != 0:
            return -1
    value = flow_into(g, res, v)
    if value < need:
        value += augment(g, res, s, v, need - value, work)
    return value
