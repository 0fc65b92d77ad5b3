"""Baseline algorithms as route sets, for comparison on the same simulator.

- ``ring``: NCCL/RCCL-style rings. Compute nodes are grouped into boxes (``Node.group``, or one
  box). There are C = min(largest box size, 16) channels. With B > 1 boxes, channel c enters box b
  at one node and leaves it at another (``p_c = c``, ``q_c = c + m/2``, swapped on odd boxes), so
  every NIC/GPU leaves its box in one channel and enters it in another: all NICs carry traffic.
  Inside a box the channel follows a Hamiltonian path over switch-only routes (widest routes
  first); with one box a channel is a Hamiltonian cycle. Channels are placed greedily to keep the
  busiest link's load low, then every segment is re-placed given the others (3 rounds of local
  search), so the rings are as good as this ring structure allows (e.g. NIC-limited on 2x MI250).
  Channels may use both directions of a full-duplex link (RCCL's MI250 rings do). Data is split
  evenly across channels.
- ``ring1``: a single ring (channel 0 only), a strawman: on a full-duplex ring fabric it uses
  one direction only and reaches half of the optimum.
- ``tree`` (allreduce only): NCCL's double binary tree: per channel, a chain inside each box
  (the channel's ring order) and two complementary balanced binary trees over the boxes; each of
  the two trees reduces half of the channel's data to its root and broadcasts it back, pipelined
  chunk by chunk.
- ``direct``: every node sends its shard straight to every other node (allgather), resp. every
  node sends each piece straight to its owner (reduce-scatter).
- ``blink``: one spanning tree per root, grown greedily (Prim-like) picking the edge whose route
  would have the lowest resulting load/bandwidth, so that trees spread over the fabric.

Logical edges between compute nodes are routed once per ordered pair: the widest path (max
bottleneck bandwidth) through switches only, then fewest hops, then smallest node order
(deterministic). If no switch-only route exists (GPU0 of one DGX A100 to GPU1 of another: their
NICs hang off different IB switches), the route relays through compute nodes, like NCCL's PXN.
Allreduce = reduce-scatter then allgather, with the allgather of each piece
pipelined chunk by chunk after its reduce-scatter.

Building takes seconds on large fabrics (Blink grows n trees over n^2 pairs). Every builder takes
``check(fraction)``, called every few milliseconds with the fraction of its work done; it may
raise :class:`~solver.model.errors.Cancelled` to stop the build.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import numpy as np

from solver.flow.jit import njit
from solver.model.errors import ForestCollError
from solver.model.topology import Topology
from solver.simulate.routes import BCAST, REDUCE, Flow, LinkTable, RouteSet

ALGORITHMS = ("ring", "ring1", "tree", "direct", "blink")

#: Progress/cancel hook of a build: called with the fraction done; may raise Cancelled.
Check = Callable[[float], None]


def _no_check(_fraction: float) -> None:
    return None


# ----------------------------------------------------------------------------- routing
class Routing:
    """Widest-then-shortest route for every ordered pair of compute nodes (inner nodes switches)."""

    def __init__(self, topo: Topology, check: Check | None = None) -> None:
        check = check or _no_check
        self.topo = topo
        self.compute = topo.compute_ids
        caps = topo.directed_bandwidths()
        order = {n.id: i for i, n in enumerate(topo.nodes)}
        kinds = {n.id: n.kind for n in topo.nodes}
        adj: dict[str, list[tuple[str, float]]] = {n.id: [] for n in topo.nodes}
        for (u, v), b in caps.items():
            adj[u].append((v, float(b)))  # floats: Fraction comparisons dominated the search
        for u in adj:
            adj[u].sort(key=lambda vb: order[vb[0]])
        self.path: dict[tuple[str, str], tuple[str, ...]] = {}
        self.width: dict[tuple[str, str], float] = {}
        self.relayed: set[tuple[str, str]] = set()
        self._bw: dict[tuple[str, str], float] = {}
        for i, s in enumerate(self.compute):
            check(i / len(self.compute))
            for relay in (False, True):
                best = self._search(s, adj, order, kinds, relay)
                for t in self.compute:
                    if t != s and t in best and (s, t) not in self.path:
                        self.width[(s, t)] = best[t][0]
                        self.path[(s, t)] = best[t][1]
                        if relay:
                            self.relayed.add((s, t))
                if all((s, t) in self.path for t in self.compute if t != s):
                    break

    @staticmethod
    def _search(s, adj, order, kinds, relay: bool) -> dict:
        """Best-first search from s: widest bottleneck, then fewest hops, then node order.

        Without ``relay`` only switches are inner nodes; with it compute nodes may relay too.
        """
        best: dict[str, tuple] = {}
        heap = [(-float("inf"), 0, (order[s],), s, (s,), None)]
        while heap:
            _negw, hops, key, u, path, width = heapq.heappop(heap)
            if u in best:
                continue
            best[u] = (width, path)
            if u != s and kinds[u] == "compute" and not relay:
                continue  # compute nodes end a route
            for v, b in adj[u]:
                if v in best or v in path:
                    continue
                w = b if width is None or b < width else width
                heapq.heappush(heap, (-w, hops + 1, key + (order[v],), v, path + (v,), w))
        return best

    def route(self, u: str, v: str) -> tuple[str, ...]:
        try:
            return self.path[(u, v)]
        except KeyError:
            raise ForestCollError(
                f"no route from {u} to {v} through switches only (baselines need one)"
            ) from None

    def bw(self, u: str, v: str) -> float:
        """Bottleneck bandwidth of the switch-only route u -> v (0 if it needs a relay)."""
        w = self._bw.get((u, v))
        if w is None:
            width = self.width.get((u, v))
            w = 0.0 if (u, v) in self.relayed or width is None else float(width)
            self._bw[(u, v)] = w
        return w


# ----------------------------------------------------------------------------- rings
def _boxes(topo: Topology) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for n in topo.nodes:
        if n.is_compute:
            groups.setdefault(n.group or "", []).append(n.id)
    return list(groups.values())


class _LoadTracker:
    """Load (routes per link) of the rings placed so far; link lists cached per pair.

    Plain Python lists: a candidate ring segment touches a dozen links, far too few for numpy's
    per-call overhead to pay off (the search costs thousands of candidates)."""

    def __init__(self, topo: Topology, routing: Routing) -> None:
        self.table = LinkTable.of(topo)
        self.routing = routing
        self.load = [0.0] * len(self.table.pairs)
        self.bandwidth = [float(b) for b in self.table.bandwidth]
        self.used_pairs: dict[tuple[str, str], int] = {}
        self._links: dict[tuple[str, str], tuple[int, ...]] = {}

    def links(self, u: str, v: str) -> tuple[int, ...]:
        li = self._links.get((u, v))
        if li is None:
            li = tuple(self.table.path_links(self.routing.route(u, v), "route"))
            self._links[(u, v)] = li
        return li

    @staticmethod
    def _pairs(seq: list[str], closed: bool) -> list[tuple[str, str]]:
        pairs = list(zip(seq[:-1], seq[1:]))
        if closed and len(seq) > 1:
            pairs.append((seq[-1], seq[0]))
        return pairs

    def cost(self, seq: list[str], closed: bool) -> tuple[float, float, int]:
        """(busiest link's load / bandwidth, sum of squares, reversed pairs) once ``seq`` is added."""
        pairs = self._pairs(seq, closed)
        used = self.used_pairs
        rev = sum(1 for u, v in pairs if (v, u) in used and (u, v) not in used)
        add: dict[int, int] = {}
        for u, v in pairs:
            for li in self.links(u, v):
                add[li] = add.get(li, 0) + 1
        if not add:
            return 0.0, 0.0, rev
        load, bw = self.load, self.bandwidth
        new = [(load[li] + a) / bw[li] * 1e9 for li, a in sorted(add.items())]
        return max(new), sum(x * x for x in new), rev

    def pair_cost(self, u: str, v: str) -> float:
        load, bw = self.load, self.bandwidth
        return max((load[li] + 1.0) / bw[li] for li in self.links(u, v))

    def commit(self, seq: list[str], closed: bool, sign: int = 1) -> None:
        """Add (sign=1) or remove (sign=-1) the load of a path (closed: a cycle)."""
        for u, v in self._pairs(seq, closed):
            self.used_pairs[(u, v)] = self.used_pairs.get((u, v), 0) + sign
            if self.used_pairs[(u, v)] <= 0:
                del self.used_pairs[(u, v)]
            for li in self.links(u, v):
                self.load[li] += sign


def _ham_paths(
    nodes: list[str],
    start: str,
    end: str | None,
    routing: Routing,
    min_bw: float,
    tracker: _LoadTracker,
    limit: int = 64,
    budget: int = 40000,
) -> list[list[str]]:
    """Hamiltonian paths over ``nodes`` from ``start`` (to ``end`` if given; else closing back
    to ``start``) using only routes of width >= ``min_bw``; least loaded neighbours first."""
    m = len(nodes)
    if m == 1:
        return [[start]]
    nbrs = {
        u: sorted(
            (v for v in nodes if v != u and routing.bw(u, v) >= min_bw),
            key=lambda v: (tracker.pair_cost(u, v), nodes.index(v)),
        )
        for u in nodes
    }
    found: list[list[str]] = []
    steps = 0
    path = [start]
    seen = {start}

    def dfs() -> bool:
        nonlocal steps
        steps += 1
        if steps > budget or len(found) >= limit:
            return True
        u = path[-1]
        if len(path) == m:
            if end is None:
                if routing.bw(u, start) >= min_bw:
                    found.append(list(path))
            elif u == end:
                found.append(list(path))
            return False
        for v in nbrs[u]:
            if v in seen or (end is not None and v == end and len(path) != m - 1):
                continue
            seen.add(v)
            path.append(v)
            stop = dfs()
            path.pop()
            seen.discard(v)
            if stop:
                return True
        return False

    dfs()
    return found


def _best_segment(nodes, start, end, routing, tracker, closed) -> list[str]:
    levels = sorted(
        {routing.bw(u, v) for u in nodes for v in nodes if u != v and routing.bw(u, v) > 0},
        reverse=True,
    )
    for level in levels or [0.0]:
        cands = _ham_paths(nodes, start, end, routing, level, tracker)
        if cands:
            return min(cands, key=lambda p: (*tracker.cost(p, closed), nodes.index(p[-1])))
    # no Hamiltonian path at all (budget or disconnected inside the box): index order
    rest = [v for v in nodes if v not in (start, end)]
    return [start] + rest + ([end] if end is not None and end != start else [])


class _BoxState:
    """What a segment placement inside one box depends on, in the box's own positions: the
    routes' widths and links between its nodes (the box's signature), the load on those links
    and the pairs already used. Two boxes with equal keys get the same segment (by position)."""

    def __init__(self, nodes: list[str], routing: Routing, tracker: _LoadTracker) -> None:
        self.nodes = nodes
        self.pos = {v: i for i, v in enumerate(nodes)}
        self.tracker = tracker
        self.pairs = [(u, v) for u in nodes for v in nodes if u != v]
        where: dict[int, int] = {}
        shape = []
        for u, v in self.pairs:
            li = tracker.links(u, v) if (u, v) in routing.path else ()
            shape.append((routing.bw(u, v), tuple(where.setdefault(x, len(where)) for x in li)))
        self.links = list(where)
        self.signature = (tuple(shape), tuple(tracker.bandwidth[x] for x in self.links))

    def key(self, start: str, end: str | None) -> tuple:
        load = self.tracker.load
        used = self.tracker.used_pairs
        return (
            self.signature,
            self.pos[start],
            None if end is None else self.pos[end],
            tuple(load[x] for x in self.links),
            tuple(used.get(p, 0) for p in self.pairs),
        )


def ring_orders(
    topo: Topology,
    channels: int | None = None,
    routing: Routing | None = None,
    passes: int = 3,
    check: Check | None = None,
) -> list[list[str]]:
    """The node order of every ring channel (see the module docstring).

    Channels are placed greedily one after the other, then ``passes`` rounds re-place every
    intra-box segment given all the others (a local search on the busiest link's load).
    """
    routing = routing or Routing(topo)
    boxes = _boxes(topo)
    m = max(len(b) for b in boxes)
    n_ch = channels if channels is not None else min(m, 16)
    tracker = _LoadTracker(topo, routing)
    single = len(boxes) == 1
    # segment plan: (start, end or None for a cycle) per channel and box
    plan: list[list[tuple[str, str | None]]] = []
    for c in range(n_ch):
        row = []
        for bi, nodes in enumerate(boxes):
            k = len(nodes)
            if single:
                row.append((nodes[c % k], None))
                continue
            p, q = c % k, (c + max(1, k // 2)) % k
            if bi % 2 == 1:
                p, q = q, p
            start, end = nodes[p], nodes[q]
            if k > 1 and start == end:
                end = nodes[(q + 1) % k]
            row.append((start, end if k > 1 else start))
        plan.append(row)
    segs: list[list[list[str]]] = [[[] for _ in boxes] for _ in range(n_ch)]
    check = check or _no_check
    placements = n_ch * len(boxes) * (1 + (passes if n_ch > 1 else 0))
    placed = [0]
    local = [_BoxState(nodes, routing, tracker) for nodes in boxes]
    memo: dict[tuple, list[int]] = {}

    def place(c: int, bi: int) -> None:
        check(placed[0] / placements)
        placed[0] += 1
        nodes = boxes[bi]
        start, end = plan[c][bi]
        if len(nodes) == 1:
            seg = [start]
        else:
            # identical boxes in identical states get the same segment: compute it once
            key = local[bi].key(start, end)
            hit = memo.get(key)
            if hit is None:
                seg = _best_segment(nodes, start, end, routing, tracker, end is None)
                memo[key] = [local[bi].pos[v] for v in seg]
            else:
                seg = [nodes[i] for i in hit]
        segs[c][bi] = seg
        tracker.commit(seg, end is None)

    def inter_box(c: int, sign: int) -> None:
        order = [v for seg in segs[c] for v in seg]
        for i in range(len(order)):
            u, v = order[i], order[(i + 1) % len(order)]
            if topo.node(u).group != topo.node(v).group:
                tracker.commit([u, v], False, sign)

    for c in range(n_ch):
        for bi in range(len(boxes)):
            place(c, bi)
        if not single:
            inter_box(c, 1)
    for _ in range(passes if n_ch > 1 else 0):
        changed = False
        for c in range(n_ch):
            for bi, nodes in enumerate(boxes):
                if len(nodes) < 3:
                    continue
                before = segs[c][bi]
                tracker.commit(before, plan[c][bi][1] is None, -1)
                place(c, bi)
                changed = changed or segs[c][bi] != before
        if not changed:
            break  # a pass that moved nothing leaves the loads as they were: the next would too
    return [[v for seg in segs[c] for v in seg] for c in range(n_ch)]


def _pair_allreduce(rs_flows: list[Flow], ag_flows: list[Flow]) -> list[Flow]:
    """rs + ag with ag[i] waiting chunk by chunk for rs[i]."""
    from dataclasses import replace

    out = list(rs_flows)
    for i, f in enumerate(ag_flows):
        out.append(replace(f, after_chunkwise=i))
    return out


def ring(
    topo: Topology,
    collective: str = "allgather",
    channels: int | None = None,
    routing: Routing | None = None,
    name: str = "ring",
    check: Check | None = None,
) -> RouteSet:
    """NCCL-style multi-channel rings (``channels=1``: a single ring)."""
    routing = routing or Routing(topo)
    orders = ring_orders(topo, channels, routing, check=check)
    n = len(topo.compute_ids)
    share = 1.0 / (len(orders) * n)
    ag, rs = [], []
    for order in orders:
        # hop k: order[k] -> order[k+1]; root i's broadcast chain is hops i..i+n-2, the reduce
        # chain ending at i is hops i+1..i+n-1
        hops = [(u, v, routing.route(u, v)) for u, v in zip(order, order[1:] + order[:1])]
        twice = hops + hops
        m = len(order)
        for i, r in enumerate(order):
            ag.append(Flow(BCAST, r, share, tuple(twice[i : i + m - 1]), "allgather"))
            rs.append(Flow(REDUCE, r, share, tuple(twice[i + 1 : i + m]), "reduce-scatter"))
    flows = _compose(collective, rs, ag)
    notes = (f"{len(orders)} channel(s)",)
    return RouteSet(topo, collective, name, tuple(flows), notes, {"orders": orders})


def _compose(collective: str, rs: list[Flow], ag: list[Flow]) -> list[Flow]:
    if collective == "allgather":
        return ag
    if collective == "reduce-scatter":
        return rs
    if collective == "allreduce":
        return _pair_allreduce(rs, ag)
    raise ForestCollError(
        f"unknown collective {collective!r} (allgather, reduce-scatter, allreduce)"
    )


# ----------------------------------------------------------------------------- double binary tree
def _btree(items: list, lo: int, hi: int, parent, out: list) -> None:
    if lo >= hi:
        return
    mid = (lo + hi) // 2
    if parent is not None:
        out.append((parent, items[mid]))
    _btree(items, lo, mid, items[mid], out)
    _btree(items, mid + 1, hi, items[mid], out)


def double_binary_tree(
    topo: Topology,
    collective: str = "allreduce",
    channels: int | None = None,
    routing: Routing | None = None,
    check: Check | None = None,
) -> RouteSet:
    """NCCL's double binary tree allreduce (see the module docstring)."""
    if collective != "allreduce":
        raise ForestCollError("the tree baseline exists for allreduce only (as in NCCL)")
    routing = routing or Routing(topo)
    orders = ring_orders(topo, channels, routing, check=check)
    group = {n.id: n.group or "" for n in topo.nodes}
    flows: list[Flow] = []
    share = 1.0 / (2 * len(orders))
    for order in orders:
        segs: list[list[str]] = []
        for v in order:
            if segs and group[segs[-1][-1]] == group[v]:
                segs[-1].append(v)
            else:
                segs.append([v])
        heads = [s[0] for s in segs]
        chain_edges = [(s[i], s[i + 1]) for s in segs for i in range(len(s) - 1)]
        b = len(heads)
        for t in range(2):
            items = heads if t == 0 else heads[1:] + heads[:1]
            if b > 1 and t == 1 and b % 2 == 1:
                items = heads[::-1]
            inter: list[tuple[str, str]] = []
            _btree(items, 0, b, None, inter)
            root = items[b // 2]
            pc = inter + chain_edges  # parent -> child pairs
            # order edges breadth-first from the root
            children: dict[str, list[str]] = {}
            for u, v in pc:
                children.setdefault(u, []).append(v)
            bfs, queue = [], [root]
            while queue:
                u = queue.pop(0)
                for v in children.get(u, []):
                    bfs.append((u, v))
                    queue.append(v)
            red = tuple((v, u, routing.route(v, u)) for u, v in bfs)
            bc = tuple((u, v, routing.route(u, v)) for u, v in bfs)
            ri = len(flows)
            flows.append(Flow(REDUCE, root, share, red, "reduce"))
            flows.append(Flow(BCAST, root, share, bc, "broadcast", after_chunkwise=ri))
    return RouteSet(
        topo, collective, "tree", tuple(flows), (f"{len(orders)} channel(s) x 2 trees",)
    )


# ----------------------------------------------------------------------------- direct
def direct(
    topo: Topology, collective: str = "allgather", routing: Routing | None = None
) -> RouteSet:
    """Everyone sends to everyone on its own route."""
    routing = routing or Routing(topo)
    comp = topo.compute_ids
    n = len(comp)
    ag = [
        Flow(
            BCAST,
            r,
            1.0 / n,
            tuple((r, v, routing.route(r, v)) for v in comp if v != r),
            "allgather",
        )
        for r in comp
    ]
    rs = [
        Flow(
            REDUCE,
            r,
            1.0 / n,
            tuple((v, r, routing.route(v, r)) for v in comp if v != r),
            "reduce-scatter",
        )
        for r in comp
    ]
    return RouteSet(topo, collective, "direct", tuple(_compose(collective, rs, ag)))


# ----------------------------------------------------------------------------- blink
@njit
def _blink_kernel(pidx, phops, inv_bw, load, out, r0, r1):
    """Grow the trees of roots r0..r1-1: repeatedly add the (inside x, outside y) pair whose route
    would have the lowest max (load + 1) / bandwidth, ties to fewer hops, then smaller (x, y).
    ``load`` (links + 1 sentinel) carries over from earlier roots; fills ``out[r]``; returns
    False when a node cannot be reached."""
    n = pidx.shape[0]
    n_h = pidx.shape[2]
    n_links = load.shape[0] - 1
    inside = np.zeros(n, np.bool_)
    for r in range(r0, r1):
        inside[:] = False
        inside[r] = True
        for step in range(n - 1):
            best = np.inf
            bh = 1 << 60
            bx = -1
            by = -1
            for x in range(n):
                if not inside[x]:
                    continue
                for y in range(n):
                    if inside[y] or phops[x, y] == 0:
                        continue
                    cst = 0.0
                    for h in range(n_h):
                        lk = pidx[x, y, h]
                        if lk == n_links:
                            break
                        v = (load[lk] + 1.0) * inv_bw[lk]
                        if v > cst:
                            cst = v
                    if cst < best * (1.0 - 1e-12) or (
                        cst <= best * (1.0 + 1e-12) and phops[x, y] < bh
                    ):
                        best = cst
                        bh = phops[x, y]
                        bx = x
                        by = y
            if bx < 0:
                return False
            inside[by] = True
            out[r, step, 0] = bx
            out[r, step, 1] = by
            for h in range(n_h):
                lk = pidx[bx, by, h]
                if lk == n_links:
                    break
                load[lk] += 1.0
    return True


def blink(
    topo: Topology,
    collective: str = "allgather",
    routing: Routing | None = None,
    check: Check | None = None,
) -> RouteSet:
    """One load-balanced spanning tree per root (greedy packing, Blink-style)."""
    check = check or _no_check
    routing = routing or Routing(topo)
    comp = list(topo.compute_ids)
    n = len(comp)
    table = LinkTable.of(topo)
    n_links = len(table.pairs)
    inv_bw = np.concatenate([1.0 / table.bandwidth, [0.0]])
    maxh = max(len(p) - 1 for p in routing.path.values())
    idx = np.full((n, n, maxh), n_links, dtype=np.int64)  # idx[x, y] = links of route x -> y
    for (u, v), p in routing.path.items():
        li = table.path_links(p, "route")
        idx[comp.index(u), comp.index(v), : len(li)] = li
    hops = (idx != n_links).sum(axis=2)
    phases = (collective != "reduce-scatter") + (collective != "allgather")
    # roots per kernel call: about 2e7 pair-hop visits (tens of ms) between two checks
    batch = max(1, int(2e7 // max(n * n * n * maxh, 1)))

    def trees(reverse: bool, phase: int) -> list[list[tuple[int, int]]]:
        # pairs[x, y] = links of the route the data takes when y joins the tree through x
        pidx = np.ascontiguousarray(idx.transpose(1, 0, 2) if reverse else idx)
        phops = np.ascontiguousarray(hops.T if reverse else hops)
        load = np.zeros(n_links + 1)
        out = np.zeros((n, max(n - 1, 1), 2), np.int64)
        for r0 in range(0, n, batch):
            check((phase + r0 / n) / phases)
            if not _blink_kernel(pidx, phops, inv_bw, load, out, r0, min(n, r0 + batch)):
                raise ForestCollError("blink: a compute node cannot be reached")
        return [[(int(x), int(y)) for x, y in out[r]] for r in range(n)]

    ag = (
        [
            Flow(
                BCAST,
                comp[r],
                1.0 / n,
                tuple((comp[x], comp[y], routing.route(comp[x], comp[y])) for x, y in t),
                "allgather",
            )
            for r, t in enumerate(trees(False, 0))
        ]
        if collective != "reduce-scatter"
        else []
    )
    rs = (
        [
            Flow(
                REDUCE,
                comp[r],
                1.0 / n,
                tuple((comp[y], comp[x], routing.route(comp[y], comp[x])) for x, y in t),
                "reduce-scatter",
            )
            for r, t in enumerate(trees(True, phases - 1))
        ]
        if collective != "allgather"
        else []
    )
    return RouteSet(topo, collective, "blink", tuple(_compose(collective, rs, ag)))


def build(
    name: str,
    topo: Topology,
    collective: str,
    routing: Routing | None = None,
    check: Check | None = None,
) -> RouteSet:
    """The route set of baseline ``name`` (one of :data:`ALGORITHMS`); every flow is checked to
    be a tree spanning all compute nodes. ``check``: see the module docstring."""
    rs = _build(name, topo, collective, routing or Routing(topo), check)
    everyone = set(topo.compute_ids)
    for i, f in enumerate(rs.flows):
        reached = {f.root}
        for src, dst, _path in f.edges:
            new = dst if f.kind == BCAST else src
            if new in reached:
                raise ForestCollError(f"{name} flow {i}: node {new} reached twice (internal error)")
            reached.add(new)
        if reached != everyone:
            raise ForestCollError(
                f"{name} flow {i}: does not span every compute node (internal error)"
            )
    return rs


def _build(
    name: str, topo: Topology, collective: str, routing: Routing, check: Check | None
) -> RouteSet:
    if name == "ring":
        return ring(topo, collective, routing=routing, check=check)
    if name == "ring1":
        return ring(topo, collective, channels=1, routing=routing, name="ring1", check=check)
    if name == "tree":
        return double_binary_tree(topo, collective, routing=routing, check=check)
    if name == "direct":
        return direct(topo, collective, routing)
    if name == "blink":
        return blink(topo, collective, routing, check=check)
    raise ForestCollError(f"unknown baseline {name!r} (choose from {', '.join(ALGORITHMS)})")
