"""Fabrics whose optimal schedule is forced: solved directly, without max-flows.

Three shapes have an obvious optimal forest (one or two trees per root), so the general pipeline
(N max-flows per optimum step, an (N x arcs) flow matrix for switch splitting and for tree
packing) is skipped; on them it cost memory or time growing much faster than the file:

- **A star on one switch**: the fabric is one switch and compute nodes each joined only to it by
  full-duplex links (in-bandwidth = out-bandwidth per compute node). Every root sends straight to
  every other compute node through the switch (trees of height 1). Each link then carries N-1
  units of one tree's data, which is the least any schedule can put on the link into the
  compute node t of smallest bandwidth (the other N-1 shards must all enter t), so the forest
  reaches the cut bound ``x* = min_t b(t) / (N-1)`` of the set S = every node but t.
- **A tree with relaying switches of degree 2** (a chain of GPUs, GPUs joined by a chain of
  switches): after dropping the branches that hold no compute node, the fabric is a tree of
  full-duplex links in which every switch has exactly two neighbours. Each root's only spanning
  tree is the fabric itself, oriented away from the root; every directed link a->b then carries
  exactly one unit per root on a's side, which every schedule must also carry (those shards must
  reach the compute nodes beyond b). So the forest is optimal and its most loaded link gives the
  bottleneck cut: S = a's side, ``x* = min b(a->b) / |S ∩ Vc|``.

- **A uniform ring**: a cycle of N >= 3 compute nodes, one bandwidth b on every directed link.
  x* = 2b/(N-1); each root's tree runs both ways round the ring with arms of (N-1)//2 and the
  rest hops (N even: a mirrored second tree, k = 2), so every directed link carries (N-1)/2
  shards: the bound. (Heights about N/2: optimal throughput, long latency, as any optimal
  schedule on a ring.)

:func:`direct_forest` returns ``None`` for any other fabric. The result is exact (fractions) and
checked by the pipeline's link loads and, as every schedule, by the verifier.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from solver.algorithm.cost import check_routes
from solver.algorithm.optimum import Optimum
from solver.flow.csr import IndexedFabric
from solver.model.schedule import Tree, TreeEdge


@dataclass
class DirectForest:
    """The forced forest of a star or a chain-like tree and the cut bound it reaches."""

    shape: str  # "star", "tree" or "ring"
    optimum: Optimum  # ``caps`` empty (no integer packing is needed)
    trees: list[Tree]
    k: int = 1  # trees per root


def _neighbours(fabric: IndexedFabric) -> tuple[list[set[int]], dict[tuple[int, int], Fraction]]:
    bw = dict(zip(fabric.edges, fabric.bandwidth))
    adj: list[set[int]] = [set() for _ in range(fabric.n)]
    for u, v in fabric.edges:
        adj[u].add(v)
        adj[v].add(u)
    return adj, bw


def _full_duplex(adj: list[set[int]], bw: dict[tuple[int, int], Fraction]) -> bool:
    return all((u, v) in bw and (v, u) in bw for u in range(len(adj)) for v in adj[u])


def direct_forest(
    fabric: IndexedFabric,
    check: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> DirectForest | None:
    """The forced optimal forest of ``fabric`` if it is a star on one switch or a tree whose
    switches relay between two neighbours; else ``None`` (see the module docstring)."""
    if fabric.num_compute < 2:
        return None
    adj, bw = _neighbours(fabric)
    switches = [v for v in range(fabric.n) if not fabric.is_compute[v]]
    if not switches:
        ring = _ring(fabric, adj, bw, check, progress)
        if ring is not None:
            return ring
    if len(switches) == 1 and fabric.n == fabric.num_compute + 1:
        star = _star(fabric, switches[0], adj, bw, check, progress)
        if star is not None:
            return star
    return _tree(fabric, adj, bw, check, progress)


def _optimum(fabric: IndexedFabric, mask: list[bool], cut_bw: Fraction, k: int = 1) -> Optimum:
    inside = sum(1 for v in fabric.compute if mask[v])
    rate = cut_bw / inside
    return Optimum(rate, rate * fabric.num_compute, tuple(mask), inside, cut_bw, k, k / rate, (), 0)


def _ring(fabric: IndexedFabric, adj, bw, check, progress) -> DirectForest | None:
    """A cycle of N >= 3 compute nodes with one bandwidth b on every directed link.

    x* = 2b/(N-1) (S = all nodes but one, left by two links). Each root's tree runs both ways
    round the ring, one arm of a = (N-1)//2 hops and one of N-1-a; with N even a second tree
    mirrors the first (k = 2, each carrying half), so every directed link carries (N-1)/2
    shards, which is the bound."""
    N = fabric.num_compute
    if N < 3 or any(len(a) != 2 for a in adj) or len(set(bw.values())) != 1:
        return None
    if len(bw) != 2 * N or not _full_duplex(adj, bw):
        return None
    order = [fabric.compute[0]]  # walk the cycle
    prev = -1
    while True:
        x = order[-1]
        nxt = min(y for y in adj[x] if y != prev) if prev >= 0 else min(adj[x])
        if nxt == order[0]:
            break
        prev = x
        order.append(nxt)
    if len(order) != N:
        return None  # not one cycle (validate() refuses disconnected fabrics anyway)
    names = fabric.names
    b = next(iter(bw.values()))
    memo: dict[tuple[int, int], TreeEdge] = {}

    def edge(i: int, j: int) -> TreeEdge:
        u, v = order[i % N], order[j % N]
        te = memo.get((u, v))
        if te is None:
            te = memo[(u, v)] = TreeEdge(names[u], names[v], (names[u], names[v]))
        return te

    def tree(i: int, cw: int, ccw: int) -> tuple[TreeEdge, ...]:
        out = []
        for d in range(1, max(cw, ccw) + 1):
            if d <= cw:
                out.append(edge(i + d - 1, i + d))
            if d <= ccw:
                out.append(edge(i - d + 1, i - d))
        return tuple(out)

    a = (N - 1) // 2
    k = 1 if (N - 1) % 2 == 0 else 2
    trees = []
    for i in range(N):
        if i % 64 == 0:
            _tick(check, progress, i / N)
        root = names[order[i]]
        trees.append(Tree(root, 1, Fraction(1, k), tree(i, a, N - 1 - a)))
        if k == 2:
            trees.append(Tree(root, 1, Fraction(1, 2), tree(i, N - 1 - a, a)))
    mask = [True] * fabric.n
    mask[order[0]] = False
    return DirectForest("ring", _optimum(fabric, mask, 2 * b, k), trees, k)


def _star(fabric: IndexedFabric, w: int, adj, bw, check, progress) -> DirectForest | None:
    compute = fabric.compute
    if adj[w] != set(compute) or any(adj[v] != {w} for v in compute):
        return None
    if any(bw.get((v, w)) != bw.get((w, v)) for v in compute):
        return None  # one-way or unequal links: the general pipeline decides
    N = len(compute)
    check_routes(f"the schedule of a star of {N} compute nodes", N * (N - 1))
    names = fabric.names
    thin = min(compute, key=lambda v: bw[(w, v)])  # first compute node of least bandwidth
    mask = [True] * fabric.n
    mask[thin] = False
    trees = []
    for count, r in enumerate(compute):
        if count % 64 == 0:
            _tick(check, progress, count / N)
        trees.append(
            Tree(
                names[r],
                1,
                Fraction(1),
                tuple(
                    TreeEdge(names[r], names[t], (names[r], names[w], names[t]))
                    for t in compute
                    if t != r
                ),
            )
        )
    return DirectForest("star", _optimum(fabric, mask, bw[(w, thin)]), trees)


def _live_tree(fabric: IndexedFabric, adj: list[set[int]]) -> list[set[int]] | None:
    """The fabric without branches holding no compute node, if it is a tree whose switches all
    have two neighbours; else None."""
    live = [set(a) for a in adj]
    degree = [len(a) for a in live]
    leaves = deque(v for v in range(fabric.n) if not fabric.is_compute[v] and degree[v] <= 1)
    gone = [False] * fabric.n
    while leaves:
        v = leaves.popleft()
        if gone[v]:
            continue
        gone[v] = True
        for u in live[v]:
            live[u].discard(v)
            degree[u] -= 1
            if not fabric.is_compute[u] and degree[u] <= 1:
                leaves.append(u)
        live[v] = set()
    kept = [v for v in range(fabric.n) if not gone[v]]
    if sum(len(live[v]) for v in kept) != 2 * (len(kept) - 1):
        return None  # a cycle somewhere (or a forest: validate() refuses those)
    if any(not fabric.is_compute[v] and len(live[v]) != 2 for v in kept):
        return None  # a switch joining three branches would have to replicate data
    return live


def _tick(check, progress, fraction: float) -> None:
    if check is not None:
        check()
    if progress is not None:
        progress(fraction)


def _tree(fabric: IndexedFabric, adj, bw, check, progress) -> DirectForest | None:
    live = _live_tree(fabric, adj)
    if live is None or not _full_duplex(live, bw):
        return None
    n, is_compute, names = fabric.n, fabric.is_compute, fabric.names
    # the side of each directed link: compute nodes on a's side of a->b, from one rooted pass
    root0 = fabric.compute[0]
    parent = [-1] * n
    order = [root0]
    seen = [False] * n
    seen[root0] = True
    for x in order:
        for y in live[x]:
            if not seen[y]:
                seen[y] = True
                parent[y] = x
                order.append(y)
    below = [1 if is_compute[v] else 0 for v in range(n)]
    for x in reversed(order[1:]):
        below[parent[x]] += below[x]
    N = fabric.num_compute
    best: tuple[Fraction, int, int] | None = None  # (ratio b/|S|, a, b) of the bottleneck link
    for x in order[1:]:
        p = parent[x]
        for a, b, side in ((x, p, below[x]), (p, x, N - below[x])):
            ratio = bw[(a, b)] / side
            if best is None or ratio < best[0]:
                best = (ratio, a, b)
    _, a, b = best
    mask = _side(adj, a, b, n)  # with the dead branches on a's side: they are not cut
    logical = _logical_edges(fabric, live)
    trees = []
    for count, r in enumerate(fabric.compute):
        if count % 64 == 0:
            _tick(check, progress, count / N)
        trees.append(Tree(names[r], 1, Fraction(1), tuple(_oriented(logical, r))))
    return DirectForest("tree", _optimum(fabric, mask, bw[(a, b)]), trees)


def _side(adj: list[set[int]], a: int, b: int, n: int) -> list[bool]:
    """Mask of the nodes on a's side of the link a-b (the whole fabric is a tree here)."""
    mask = [False] * n
    mask[a] = True
    todo = [a]
    while todo:
        x = todo.pop()
        for y in adj[x]:
            if not mask[y] and not (x == a and y == b):
                mask[y] = True
                todo.append(y)
    return mask


def _logical_edges(
    fabric: IndexedFabric, live: list[set[int]]
) -> dict[int, list[tuple[int, TreeEdge]]]:
    """For each compute node u, (x, edge u->x) for the compute nodes x next to it in the tree
    (runs of relaying switches become the paths of the logical edges)."""
    names, is_compute = fabric.names, fabric.is_compute
    logical: dict[int, list[tuple[int, TreeEdge]]] = {}
    for u in fabric.compute:
        out = logical[u] = []
        for first in sorted(live[u]):
            path = [u, first]
            prev, x = u, first
            while not is_compute[x]:  # a relaying switch: exactly one way on
                (nxt,) = live[x] - {prev}
                prev, x = x, nxt
                path.append(x)
            out.append((x, TreeEdge(names[u], names[x], tuple(names[v] for v in path))))
    return logical


def _oriented(logical: dict[int, list[tuple[int, TreeEdge]]], root: int) -> list[TreeEdge]:
    """The tree oriented away from ``root`` as logical edges, breadth-first."""
    edges = []
    todo = deque([root])
    came = {root: -1}
    while todo:
        u = todo.popleft()
        parent = came[u]
        for x, te in logical[u]:
            if x != parent:
                came[x] = u
                edges.append(te)
                todo.append(x)
    return edges
