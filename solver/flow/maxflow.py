"""Maximum flow on a residual network in CSR form: a numba Dinic kernel and a validating wrapper.

Layers (after networkx.algorithms.flow): :func:`augment` works on a prepared residual network
(:class:`FlowGraph` plus a residual-capacity array) and allocates nothing; :class:`FlowNetwork`
validates edges, builds the CSR arrays once and reuses its buffers across the many nearly
identical flows the solver runs. Incremental repair of a stored flow after a capacity change
lives in :mod:`solver.flow.repair`.

Residual-network convention
---------------------------
Every edge ``i`` of a :class:`FlowNetwork` becomes two *arcs*: the forward arc
``a = edge_arc[i]`` (``tail[a] -> head[a]``) and its reverse arc ``rev[a]`` (``head -> tail``);
``rev[rev[a]] == a``. Arcs are sorted by tail, so the arcs leaving node ``u`` are
``indptr[u] .. indptr[u + 1] - 1``. ``cap[a]`` is the capacity of a forward arc and 0 for a
reverse arc. A *residual array* ``res`` (one int64 per arc) describes a flow:

- ``res[a]`` is how much more can be pushed along arc ``a``;
- the flow on edge ``i`` is ``cap[a] - res[a] == res[rev[a]]`` for its forward arc ``a``;
- so ``res[a] + res[rev[a]] == cap[a] + cap[rev[a]]`` and ``0 <= res[a]`` always hold.

``res = cap.copy()`` is the zero flow. Pushing ``d`` along an arc lowers its ``res`` by ``d`` and
raises its reverse's by ``d``. Several residual arrays (one per stored flow) can share one
:class:`FlowGraph`; capacities may be edited in ``cap`` as long as each stored ``res`` is then
repaired (:func:`solver.flow.repair.reduce_arc`).

Notes
-----
Dinic's algorithm, O(V^2 E) worst case; with ``cutoff`` it stops as soon as the flow reaches that
value (the solver mostly asks "is the flow at least X?"). Capacities are int64; :data:`INF` stands
for an uncuttable edge and is far below the int64 limit so sums of a few of them cannot overflow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from solver.flow.jit import njit_noalloc
from solver.model.errors import SolverError

INF = 1 << 60
MAX_CAPACITY = 1 << 56  # finite capacities must stay below this (room for sums without overflow)


class FlowGraph(NamedTuple):
    """The fixed arrays of a residual network (all contiguous int64; see module docstring)."""

    indptr: np.ndarray  # arcs leaving u: indptr[u] .. indptr[u + 1] - 1
    head: np.ndarray  # head node of each arc
    tail: np.ndarray  # tail node of each arc
    rev: np.ndarray  # partner arc (forward <-> reverse)
    cap: np.ndarray  # capacity per arc (reverse arcs 0); may be edited between flows


class Workspace(NamedTuple):
    """Scratch buffers for the kernels; ``level`` is all -1 between calls."""

    level: np.ndarray  # per node, BFS level or visited mark; -1 = unvisited
    it: np.ndarray  # per node, next arc to try in the depth-first search
    queue: np.ndarray  # n + 1 nodes
    stack: np.ndarray  # n + 1 arcs (the current path)
    mark: np.ndarray  # per node, reachability marks


def new_workspace(n: int) -> Workspace:
    """Buffers for kernels on a network of ``n`` nodes."""
    return Workspace(
        np.full(n, -1, dtype=np.int64),
        np.empty(n, dtype=np.int64),
        np.empty(n + 1, dtype=np.int64),
        np.empty(n + 1, dtype=np.int64),
        np.empty(n, dtype=np.int64),
    )


@njit_noalloc
def augment(g, res, s, t, cutoff, work):
    """Augment the flow in ``res`` from ``s`` to ``t`` until maximal or ``cutoff``; return the gain.

    Dinic's algorithm on the residual network ``(g, res)``: breadth-first levels from ``s``
    (stopping once ``t``'s level is complete), then a blocking flow by repeated depth-first
    searches along level-increasing arcs. ``work.level`` must be all -1 on entry and is all -1
    again on return (only the nodes a phase discovers are touched, so a short reroute costs
    O(explored), not O(nodes)).
    """
    indptr, head, tail, rev = g.indptr, g.head, g.tail, g.rev
    level, it, queue, stack = work.level, work.it, work.queue, work.stack
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
        while flow < cutoff:  # the blocking flow
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
                    u = tail[stack[depth]]
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


@njit_noalloc
def mark_reachable(g, res, s, work):
    """Set ``work.mark`` to 1 on every node reachable from ``s`` along positive residual arcs.

    Returns the number of reachable nodes.
    """
    mark, queue = work.mark, work.queue
    for i in range(mark.shape[0]):
        mark[i] = 0
    mark[s] = 1
    queue[0] = s
    qh = 0
    qt = 1
    while qh < qt:
        u = queue[qh]
        qh += 1
        for a in range(g.indptr[u], g.indptr[u + 1]):
            v = g.head[a]
            if res[a] > 0 and mark[v] == 0:
                mark[v] = 1
                queue[qt] = v
                qt += 1
    return qt


@njit_noalloc
def flow_into(g, res, v):
    """Net flow into ``v`` (the flow value when ``v`` is the sink and flow is conserved)."""
    out = 0
    for a in range(g.indptr[v], g.indptr[v + 1]):
        out += g.cap[a] - res[a]  # forward arc: its flow; reverse arc: minus the incoming flow
    return -out


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

    Attributes
    ----------
    graph : FlowGraph
        The CSR arrays (``indptr``, ``head``, ``tail``, ``rev``, ``cap``) for the kernels.
    work : Workspace
        Scratch buffers sized for this network.
    edge_arc : ndarray
        Forward arc of each input edge (see the module docstring for the convention).
    res : ndarray
        Residual capacities of the last :meth:`max_flow`.

    Change capacities with :meth:`set_capacity` or by writing ``cap[edge_arc[i]]``; every
    :meth:`max_flow` starts from :attr:`cap`.
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
        head = np.ascontiguousarray(arc_head[order])
        tail = np.ascontiguousarray(arc_tail[order])
        partner = np.arange(2 * m, dtype=np.int64) ^ 1
        rev = np.ascontiguousarray(pos[partner[order]])
        indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(arc_tail, minlength=self.n), out=indptr[1:])
        self.edge_arc = np.ascontiguousarray(pos[0::2])
        cap = np.zeros(2 * m, dtype=np.int64)
        cap[self.edge_arc] = caps_arr
        self.graph = FlowGraph(indptr, head, tail, rev, cap)
        self.res = np.empty(2 * m, dtype=np.int64)
        self.work = new_workspace(self.n)

    # the CSR arrays by name (read-only views of :attr:`graph`'s arrays)
    indptr = property(lambda self: self.graph.indptr)
    head = property(lambda self: self.graph.head)
    tail = property(lambda self: self.graph.tail)
    rev = property(lambda self: self.graph.rev)
    cap = property(lambda self: self.graph.cap)

    def set_capacity(self, edge: int, cap: int) -> None:
        self.graph.cap[self.edge_arc[edge]] = cap

    def max_flow(self, s: int, t: int, cutoff: int | None = None) -> int:
        """The maximum flow value from ``s`` to ``t`` on the capacities :attr:`cap`.

        Parameters
        ----------
        s, t : int
            Source and sink node indices (``0 <= s, t < n``, ``s != t``).
        cutoff : int, optional
            Stop once the flow reaches ``cutoff``: the value returned is the maximum if that is
            below ``cutoff``, else some value ``>= cutoff``. None: run to the maximum.

        Returns
        -------
        int
            The flow value (integer capacities give an integer flow).

        Raises
        ------
        SolverError
            A source or sink out of range, or ``s == t``.

        Notes
        -----
        Dinic's algorithm on the CSR residual network (the numba kernel :func:`augment`),
        O(V^2 E) in the worst case; the capacities are copied into :attr:`res` first. The
        residual network stays in :attr:`res` for :meth:`source_side` and :meth:`edge_flow`;
        the capacities are not changed, so flows on one network can follow one another.

        Examples
        --------
        >>> from solver.flow.maxflow import FlowNetwork
        >>> net = FlowNetwork(4, [0, 0, 1, 2], [1, 2, 3, 3], [3, 2, 2, 3])
        >>> net.max_flow(0, 3), net.max_flow(0, 3, cutoff=1) >= 1
        (4, True)
        """
        if not (0 <= s < self.n and 0 <= t < self.n) or s == t:
            raise SolverError(f"flow network: bad source/sink {s}/{t}")
        np.copyto(self.res, self.graph.cap)
        limit = INF if cutoff is None else int(cutoff)
        return int(augment(self.graph, self.res, s, t, limit, self.work))

    def source_side(self, s: int) -> np.ndarray:
        """Boolean mask of nodes reachable from ``s`` in the last residual network.

        After an uncut :meth:`max_flow` this is the source side of a minimum cut (the smallest one).
        """
        mark_reachable(self.graph, self.res, s, self.work)
        return self.work.mark.astype(bool)

    def edge_flow(self) -> np.ndarray:
        """Flow on every edge (in input order) in the last residual network."""
        return self.graph.cap[self.edge_arc] - self.res[self.edge_arc]


def max_flow_value(
    n: int, edges: Sequence[tuple[int, int, int]], s: int, t: int, cutoff: int | None = None
) -> int:
    """Convenience: max-flow value on a list of ``(tail, head, capacity)`` edges."""
    tails = [e[0] for e in edges]
    heads = [e[1] for e in edges]
    caps = [e[2] for e in edges]
    return FlowNetwork(n, tails, heads, caps).max_flow(s, t, cutoff)
