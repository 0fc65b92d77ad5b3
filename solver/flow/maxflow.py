"""Maximum flow on small dense-ish networks: a numba Dinic kernel plus a validating wrapper.

Layers (after networkx.algorithms.flow): :func:`_dinic` works on a prepared residual network in
CSR form (``indptr``, ``head``, ``rev``, residual capacities ``res``, all contiguous int64) and
allocates nothing; :class:`FlowNetwork` validates edges, builds the CSR arrays once and reuses its
buffers across the many nearly identical flows the solver runs.

Notes
-----
Dinic's algorithm, O(V^2 E) worst case; with ``cutoff`` it stops as soon as the flow reaches that
value (the solver mostly asks "is the flow at least X?"). Capacities are int64; :data:`INF` stands
for an uncuttable edge and is far below the int64 limit so sums of a few of them cannot overflow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solver.flow.jit import njit
from solver.model.errors import SolverError

INF = 1 << 60
MAX_CAPACITY = 1 << 56  # finite capacities must stay below this (room for sums without overflow)


@njit
def _dinic(indptr, head, rev, res, s, t, cutoff, level, it, queue, stack):
    """Augment ``res`` in place from ``s`` to ``t`` until max flow or ``cutoff``; return the flow.

    ``level`` must be all -1 on entry and is all -1 again on return (only the nodes a phase
    discovers are touched, so a short reroute costs O(explored), not O(nodes)).
    """
    flow = 0
    while flow < cutoff:
        level[s] = 0
        qh = 0
        qt = 1
        queue[0] = s
        while qh < qt:
            u = queue[qh]
            qh += 1
            if level[t] >= 0 and level[u] >= level[t]:
                break  # the level graph is complete up to t's level
            lu = level[u] + 1
            for a in range(indptr[u], indptr[u + 1]):
                v = head[a]
                if res[a] > 0 and level[v] < 0:
                    level[v] = lu
                    queue[qt] = v
                    qt += 1
        if level[t] < 0:
            for i in range(qt):
                level[queue[i]] = -1
            break
        for i in range(qt):
            it[queue[i]] = indptr[queue[i]]
        # blocking flow by repeated depth-first searches along level-increasing arcs
        while flow < cutoff:
            depth = 0
            u = s
            while u != t:
                advanced = False
                while it[u] < indptr[u + 1]:
                    a = it[u]
                    v = head[a]
                    if res[a] > 0 and level[v] == level[u] + 1:
                        stack[depth] = a
                        depth += 1
                        u = v
                        advanced = True
                        break
                    it[u] += 1
                if not advanced:
                    if depth == 0:
                        break
                    level[u] = -1  # dead end for this phase
                    depth -= 1
                    u = head[rev[stack[depth]]]
                    it[u] += 1
            if u != t:
                break
            push = cutoff - flow
            for d in range(depth):
                push = min(push, res[stack[d]])
            for d in range(depth):
                a = stack[d]
                res[a] -= push
                res[rev[a]] += push
            flow += push
        for i in range(qt):
            level[queue[i]] = -1
    return flow


@njit
def _reachable(indptr, head, res, s, mark, queue):
    """Mark (1) every node reachable from ``s`` along arcs with positive residual capacity."""
    n = indptr.shape[0] - 1
    for i in range(n):
        mark[i] = 0
    mark[s] = 1
    queue[0] = s
    qh = 0
    qt = 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for a in range(indptr[u], indptr[u + 1]):
            v = head[a]
            if res[a] > 0 and mark[v] == 0:
                mark[v] = 1
                queue[qt] = v
                qt += 1
    return qt


@njit
def _cut_capacity(res, rev, a, delta):
    """Change forward arc ``a``'s capacity by ``delta``; return the flow that no longer fits."""
    res[a] += delta
    if res[a] < 0:
        over = -res[a]
        res[a] = 0
        res[rev[a]] -= over
        return over
    return 0


@njit
def _add_excess(nodes, amounts, m, x, amount):
    for i in range(m):
        if nodes[i] == x:
            amounts[i] += amount
            return m
    nodes[m] = x
    amounts[m] = amount
    return m + 1


@njit
def _cancel_walk(indptr, head, rev, cap, res, x, target, amount, level, it, queue, stack):
    """Push up to ``amount`` from ``x`` to ``target`` only along arcs that cancel existing flow.

    Depth-first along arcs with ``res > cap`` (reverse arcs of edges carrying flow), so it walks
    back along flow paths and explores only the flow's support, not the whole network. Uses
    ``level`` as visited marks (all -1 on entry and on return). Returns the amount pushed.
    """
    pushed = 0
    while pushed < amount:
        nvis = 1
        queue[0] = x
        level[x] = 0
        it[x] = indptr[x]
        depth = 0
        u = x
        while u != target:
            advanced = False
            while it[u] < indptr[u + 1]:
                a = it[u]
                w = head[a]
                if res[a] > cap[a] and level[w] < 0:
                    level[w] = 0
                    it[w] = indptr[w]
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
                u = head[rev[stack[depth]]]
                it[u] += 1
        for i in range(nvis):
            level[queue[i]] = -1
        if u != target:
            break
        push = amount - pushed
        for d in range(depth):
            push = min(push, res[stack[d]] - cap[stack[d]])
        for d in range(depth):
            a = stack[d]
            res[a] -= push
            res[rev[a]] += push
        pushed += push
    return pushed


@njit
def _inflow(indptr, cap, res, v):
    """Net flow into ``v`` (the flow value when ``v`` is the sink and flow is conserved)."""
    out = 0
    for a in range(indptr[v], indptr[v + 1]):
        out += cap[a] - res[a]  # forward arc: its flow; reverse arc: minus the incoming flow
    return -out


@njit
def _repair(indptr, head, rev, cap, res, s, v, need, nodes, amounts, m,
            level, it, queue, stack):
    """Turn a flow with local excesses/deficits back into an s-v flow and top it up to ``need``.

    ``nodes[:m]``/``amounts[:m]`` hold each node's excess (> 0) or deficit (< 0) left by cutting
    capacities. Excess is first rerouted to deficits, leftovers go back to ``s`` / are taken from
    ``v`` (or, for flow that ran through the sink, go to ``v`` / come from ``s``), then the flow
    is augmented again. Returns the flow value, or -1 if the residual network was inconsistent.
    """
    for i in range(m):
        if amounts[i] <= 0 or nodes[i] == s or nodes[i] == v:
            continue
        for j in range(m):
            if amounts[j] >= 0 or nodes[j] == s or nodes[j] == v:
                continue
            want = min(amounts[i], -amounts[j])
            got = _dinic(indptr, head, rev, res, nodes[i], nodes[j], want, level, it, queue, stack)
            amounts[i] -= got
            amounts[j] += got
            if amounts[i] == 0:
                break
    for i in range(m):
        x = nodes[i]
        if x == s or x == v or amounts[i] == 0:
            continue
        # excess came from s or through v (flow may pass through the sink); deficit likewise.
        # Walking back along the existing flow is cheap; Dinic finishes whatever it leaves.
        if amounts[i] > 0:
            amounts[i] -= _cancel_walk(indptr, head, rev, cap, res, x, s, amounts[i], level, it,
                                       queue, stack)
            amounts[i] -= _dinic(indptr, head, rev, res, x, s, amounts[i], level, it, queue, stack)
            if amounts[i] > 0:
                amounts[i] -= _dinic(indptr, head, rev, res, x, v, amounts[i], level, it, queue,
                                     stack)
        else:
            amounts[i] += _cancel_walk(indptr, head, rev, cap, res, v, x, -amounts[i], level, it,
                                       queue, stack)
            amounts[i] += _dinic(indptr, head, rev, res, v, x, -amounts[i], level, it, queue, stack)
            if amounts[i] < 0:
                amounts[i] += _dinic(indptr, head, rev, res, s, x, -amounts[i], level, it, queue,
                                     stack)
        if amounts[i] != 0:
            return -1
    value = _inflow(indptr, cap, res, v)
    if value < need:
        value += _dinic(indptr, head, rev, res, s, v, need - value, level, it, queue, stack)
    return value


class FlowNetwork:
    """A fixed directed graph (nodes 0..n-1, edges with capacities) for repeated max-flows.

    Parameters
    ----------
    n : int
        Number of nodes.
    tails, heads : sequence of int
        Edge endpoints; parallel edges are allowed, self-loops are not.
    caps : sequence of int
        Edge capacities (>= 0, below :data:`MAX_CAPACITY` or exactly :data:`INF`).

    Each edge i gets a forward arc ``edge_arc[i]`` and a reverse arc; :attr:`cap` holds the
    capacities per arc (reverse arcs 0). Change capacities with :meth:`set_capacity` or by writing
    ``cap[edge_arc[i]]``; every :meth:`max_flow` starts from :attr:`cap` (or from ``res`` given).
    """

    def __init__(self, n: int, tails: Sequence[int], heads: Sequence[int], caps: Sequence[int]):
        tails = np.asarray(tails, dtype=np.int64).reshape(-1)
        heads = np.asarray(heads, dtype=np.int64).reshape(-1)
        if isinstance(caps, np.ndarray):
            caps_arr = caps.astype(np.int64, copy=False).reshape(-1)
        else:
            caps_list = list(caps)
            for c in caps_list:
                if c < 0 or (c >= MAX_CAPACITY and c != INF):
                    raise SolverError(f"edge capacity {c} out of range (integer overflow risk)")
            caps_arr = np.asarray(caps_list, dtype=np.int64).reshape(-1)
        m = tails.shape[0]
        if heads.shape[0] != m or caps_arr.shape[0] != m:
            raise SolverError("flow network: tails, heads and caps must have the same length")
        if m and (tails.min() < 0 or heads.min() < 0 or tails.max() >= n or heads.max() >= n):
            raise SolverError("flow network: edge endpoint out of range")
        if m and np.any(tails == heads):
            raise SolverError("flow network: self-loop")
        if m and caps_arr.min() < 0:
            raise SolverError("flow network: negative capacity")
        self.n = int(n)
        self.m = m
        # arcs 2i (forward) and 2i+1 (reverse), then sorted by tail
        arc_tail = np.empty(2 * m, dtype=np.int64)
        arc_head = np.empty(2 * m, dtype=np.int64)
        arc_tail[0::2] = tails
        arc_tail[1::2] = heads
        arc_head[0::2] = heads
        arc_head[1::2] = tails
        order = np.argsort(arc_tail, kind="stable")
        pos = np.empty(2 * m, dtype=np.int64)
        pos[order] = np.arange(2 * m, dtype=np.int64)
        self.head = np.ascontiguousarray(arc_head[order])
        self.tail = np.ascontiguousarray(arc_tail[order])
        partner = np.arange(2 * m, dtype=np.int64) ^ 1
        self.rev = np.ascontiguousarray(pos[partner[order]])
        self.indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(arc_tail, minlength=self.n), out=self.indptr[1:])
        self.edge_arc = np.ascontiguousarray(pos[0::2])
        self.cap = np.zeros(2 * m, dtype=np.int64)
        self.cap[self.edge_arc] = caps_arr
        self.res = np.empty(2 * m, dtype=np.int64)
        self._level = np.full(self.n, -1, dtype=np.int64)  # _dinic keeps it all -1
        self._it = np.empty(self.n, dtype=np.int64)
        self._queue = np.empty(self.n + 1, dtype=np.int64)
        self._stack = np.empty(self.n + 1, dtype=np.int64)
        self._mark = np.empty(self.n, dtype=np.int64)

    def set_capacity(self, edge: int, cap: int) -> None:
        self.cap[self.edge_arc[edge]] = cap

    def max_flow(self, s: int, t: int, cutoff: int | None = None) -> int:
        """Flow value from ``s`` to ``t`` on :attr:`cap` (stopping at ``cutoff`` if given).

        The residual network stays in :attr:`res` for :meth:`source_side`.
        """
        if not (0 <= s < self.n and 0 <= t < self.n) or s == t:
            raise SolverError(f"flow network: bad source/sink {s}/{t}")
        np.copyto(self.res, self.cap)
        limit = INF if cutoff is None else int(cutoff)
        return int(
            _dinic(self.indptr, self.head, self.rev, self.res, s, t, limit,
                   self._level, self._it, self._queue, self._stack)
        )

    def source_side(self, s: int) -> np.ndarray:
        """Boolean mask of nodes reachable from ``s`` in the last residual network.

        After an uncut :meth:`max_flow` this is the source side of a minimum cut (the smallest one).
        """
        _reachable(self.indptr, self.head, self.res, s, self._mark, self._queue)
        return self._mark.astype(bool)

    def edge_flow(self) -> np.ndarray:
        """Flow on every edge (in input order) in the last residual network."""
        return self.cap[self.edge_arc] - self.res[self.edge_arc]


def max_flow_value(n: int, edges: Sequence[tuple[int, int, int]], s: int, t: int,
                   cutoff: int | None = None) -> int:
    """Convenience: max-flow value on a list of ``(tail, head, capacity)`` edges."""
    tails = [e[0] for e in edges]
    heads = [e[1] for e in edges]
    caps = [e[2] for e in edges]
    return FlowNetwork(n, tails, heads, caps).max_flow(s, t, cutoff)
