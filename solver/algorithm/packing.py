"""Step 3: pack k out-trees per root into the switch-free compute graph.

Trees grow one class at a time, breadth-first from the root. A class is ``m`` identical partial
trees (vertex set V_i). Edge (x, y), x in V_i, y not, may take

    μ = min(m, c(x, y), maxflow(σ -> y) - Σ_{j != i} m_j)

copies, where the flow network has the residual compute graph, a source σ with an uncuttable edge
to x, an edge σ -> r of the untouched multiplicity of every root r, and one auxiliary node per
other partial class j (edge σ -> a_j of m_j, uncuttable edges a_j -> V_j). Complete classes are
left out. μ < m splits the class; the rest continues later as its own class. This keeps Edmonds'
condition ``ρ_res(Z) >= Σ_j m_j [Z ∩ V_j = ∅]`` for every set Z of compute nodes, so every class
can always be completed (Lovász's proof of Edmonds' branching theorem).

Afterwards :func:`shorten_trees` lowers the tallest trees by exchanging parents between trees
(every edge keeps its load, so the packing stays exact): tall trees cost latency.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from solver.algorithm.cost import check_flow_rows, check_packing
from solver.flow.jit import njit_noalloc
from solver.flow.maxflow import INF, FlowNetwork, augment
from solver.flow.repair import new_excess, reduce_arc, repair_flow
from solver.model.errors import SolverError


@dataclass
class TreeClass:
    """``mult`` identical trees from ``root`` with logical edges (parent, child) in BFS order."""

    root: int
    mult: int
    edges: list[tuple[int, int]] = field(default_factory=list)
    members: list[int] = field(default_factory=list)  # BFS order
    scan: int = 0  # position in members of the next vertex to expand
    slot: int = -1  # auxiliary node slot while partial and not being grown


class StoredFlows(NamedTuple):
    """One residual array per sink rank (row z: a flow from σ to rank z) and its value."""

    rows: np.ndarray  # (N, arcs)
    values: np.ndarray  # (N,) flow value held by each row
    scratch: np.ndarray  # (arcs,) a copy to augment on without touching a row


class Neighbours(NamedTuple):
    """Out-neighbours of each rank in CSR form with the arc of each (x, y) pair."""

    ptr: np.ndarray
    y: np.ndarray
    arc: np.ndarray


class GrowingTree(NamedTuple):
    """The class being grown: its members in BFS order, membership flags, edges and counters."""

    members: np.ndarray  # (N,)
    inflag: np.ndarray  # (N,) 1 if the rank is a member
    edges: np.ndarray  # (N - 1, 2) parent, child
    state: np.ndarray  # (11,) indexed by the ST_* constants


# indices into GrowingTree.state
ST_MEMBERS = 0  # members so far
ST_SCAN = 1  # position in members of the vertex being expanded
ST_MULT = 2  # multiplicity of the class
ST_OTHERS = 3  # multiplicity of all other open classes (flow every sink must keep)
ST_EDGES = 4  # edges so far
ST_RESCANNED = 5  # 1 once the class has been rescanned from its root
ST_TESTS = 6  # max-flow tests run
ST_SPLIT_REST = 7  # after a split: multiplicity of the rest ...
ST_SPLIT_MEMBERS = 8  # ... its member count
ST_SPLIT_EDGES = 9  # ... its edge count
ST_SPLIT_SCAN = 10  # ... its scan position
_BROKEN = -(1 << 62)  # _edge_room: a stored flow could not be restored


@njit_noalloc
def _change_all(g, stored, sigma, a, delta, ex, work):
    """Change arc ``a``'s capacity by ``delta`` and repair every stored flow (row z: sink z)."""
    g.cap[a] += delta
    for z in range(stored.rows.shape[0]):
        row = stored.rows[z]
        ex.size[0] = 0
        if reduce_arc(g, row, a, delta, ex) > 0:
            value = repair_flow(g, row, sigma, z, 0, ex, work)
            if value < 0:
                return 1
            stored.values[z] = value
    return 0


@njit_noalloc
def _change_arcs(g, stored, sigma, arcs, delta, ex, work):
    """:func:`_change_all` for several arcs (one call from Python instead of one per arc)."""
    for a in arcs:
        if _change_all(g, stored, sigma, a, delta, ex, work):
            return 1
    return 0


@njit_noalloc(inline="always")
def _edge_room(g, stored, sigma, root_arc, x, y, want, others, work):
    """How many copies (<= ``want``) of edge (x, y) the class may take; ``_BROKEN`` on a bug.

    That is ``maxflow(σ -> y) - others`` once σ may send without limit to x. Row y holds a flow to
    y in the network without the current class: top it up to ``others``, then augment by what
    the edge needs.
    """
    row = stored.rows[y]
    value = stored.values[y]
    if value < others:
        value += augment(g, row, sigma, y, others - value, work)
        stored.values[y] = value
    if value == others:
        # every finite source edge is saturated: the extra flow through x is just an x -> y
        # flow in the residual network (usually a short path); undo it
        got = augment(g, row, x, y, want, work)
        if got > 0 and augment(g, row, y, x, got, work) != got:
            return _BROKEN
        return got
    # let x send without limit (on a copy) and augment by what the edge needs
    res = stored.scratch
    for b in range(res.shape[0]):
        res[b] = row[b]
    ra = root_arc[x]
    res[ra] += INF - g.cap[ra]
    return value + augment(g, res, sigma, y, others + want - value, work) - others


@njit_noalloc(inline="always")
def _add_edge(tree, x, y, mu):
    """Add (x, y) with ``mu`` copies; on a split (mu < mult) remember the rest's extent first."""
    state = tree.state
    nmem, ne = state[ST_MEMBERS], state[ST_EDGES]
    split = mu < state[ST_MULT]
    if split:
        state[ST_SPLIT_REST] = state[ST_MULT] - mu
        state[ST_SPLIT_MEMBERS] = nmem
        state[ST_SPLIT_EDGES] = ne
        state[ST_SPLIT_SCAN] = state[ST_SCAN]
        state[ST_MULT] = mu
    tree.edges[ne, 0] = x
    tree.edges[ne, 1] = y
    state[ST_EDGES] = ne + 1
    tree.members[nmem] = y
    state[ST_MEMBERS] = nmem + 1
    tree.inflag[y] = 1
    return split


@njit_noalloc(inline="always")
def _expand(g, stored, sigma, root_arc, nb, tree, ex, work):
    """Try every edge out of the member at the scan position; 0 done, 1 split, 3 repair bug."""
    state = tree.state
    x = tree.members[state[ST_SCAN]]
    mult, others = state[ST_MULT], state[ST_OTHERS]  # fixed until the class splits
    tests = 0
    status = 0
    for j in range(nb.ptr[x], nb.ptr[x + 1]):
        y = nb.y[j]
        a = nb.arc[j]
        if tree.inflag[y] != 0 or g.cap[a] == 0:
            continue
        want = min(g.cap[a], mult)
        mu = _edge_room(g, stored, sigma, root_arc, x, y, want, others, work)
        tests += 1
        if mu == _BROKEN:
            status = 3
            break
        mu = min(mu, want)
        if mu <= 0:
            continue
        if _change_all(g, stored, sigma, a, -mu, ex, work):
            status = 3
            break
        if _add_edge(tree, x, y, mu):
            status = 1
            break
    state[ST_TESTS] += tests
    return status


@njit_noalloc
def _grow(g, stored, sigma, root_arc, nb, tree, ex, work):
    """Grow one tree class breadth-first until it spans, or until it must split.

    Returns 0 when the class spans every rank, 1 after adding an edge with μ < mult (the class now
    has mult = μ; the rest, ``ST_SPLIT_REST`` trees with the first ``ST_SPLIT_MEMBERS`` members /
    ``ST_SPLIT_EDGES`` edges and scan position ``ST_SPLIT_SCAN``, must be installed as an
    auxiliary class before calling again), 2 if stuck, 3 if a stored flow could not be repaired
    (both bugs). ``stored`` row z holds a valid flow from σ to rank z in the network without the
    current class.
    """
    N = tree.members.shape[0]
    state = tree.state
    while state[ST_MEMBERS] < N:
        before = state[ST_MEMBERS]
        while state[ST_SCAN] < state[ST_MEMBERS] < N:
            status = _expand(g, stored, sigma, root_arc, nb, tree, ex, work)
            if status == 1:
                return 1  # the scan position stays: x may have more edges to give
            if status != 0:
                return status
            state[ST_SCAN] += 1
        if state[ST_MEMBERS] < N and state[ST_MEMBERS] == before:
            if state[ST_RESCANNED] != 0:
                return 2
            state[ST_RESCANNED] = 1
            state[ST_SCAN] = 0
    return 0


class _PackingNetwork:
    """Flow network: N compute ranks, σ = N, then auxiliary nodes; capacities edited in place."""

    def __init__(self, N: int, caps: dict[tuple[int, int], int], slots: int):
        self.N = N
        self.slots = slots
        sigma = N
        pairs = list(caps)
        tails = [u for u, _ in pairs] + [sigma] * N
        heads = [v for _, v in pairs] + list(range(N))
        for j in range(slots):
            a = N + 1 + j
            tails += [sigma] + [a] * N
            heads += [a] + list(range(N))
        ecaps = [caps[p] for p in pairs] + [0] * (N + slots * (N + 1))
        self.net = FlowNetwork(N + 1 + slots, tails, heads, ecaps)
        arc = self.net.edge_arc
        self.pair_arc = {p: int(arc[i]) for i, p in enumerate(pairs)}
        base = len(pairs)
        self.root_arc = arc[base : base + N]
        self.slot_arc = []
        self.member_arc = []
        pos = base + N
        for _ in range(slots):
            self.slot_arc.append(int(arc[pos]))
            self.member_arc.append(arc[pos + 1 : pos + 1 + N])
            pos += N + 1


class _TreePacker:
    """The state of one :func:`pack_trees` run: the packing network with its stored flows, the
    classes still partial (each holding an auxiliary slot) and the classes done."""

    def __init__(self, N: int, caps: dict[tuple[int, int], int], k: int) -> None:
        self.N, self.k = N, k
        check_flow_rows("tree packing", N, 2 * (len(caps) + N + 4 * (N + 1)))
        check_packing(N, [e for e, c in caps.items() if c > 0], k)
        self.pn = _PackingNetwork(N, {e: c for e, c in caps.items() if c > 0}, 4)
        self.net = self.pn.net
        self.untouched = [k] * N  # multiplicity of each root not yet started
        for r in range(N):
            self.net.cap[self.pn.root_arc[r]] = k
        self.free_slots = list(range(self.pn.slots - 1, -1, -1))
        self.pending: list[TreeClass] = []  # partial classes waiting (each holds an aux slot)
        self.done: list[TreeClass] = []
        self.total_open = N * k  # multiplicity of classes not yet complete
        self.tests = 0  # max-flow tests run by the kernel
        self.sigma = N
        self.ex = new_excess()
        self.stored = self._zero_flows()
        self.nb = self._neighbours()
        self.tree = GrowingTree(
            np.zeros(N, dtype=np.int64),
            np.zeros(N, dtype=np.int64),
            np.zeros((max(N - 1, 1), 2), dtype=np.int64),
            np.zeros(11, dtype=np.int64),
        )

    def _zero_flows(self) -> StoredFlows:
        net = self.net
        rows = np.ascontiguousarray(np.broadcast_to(net.cap, (self.N, net.cap.shape[0])))
        return StoredFlows(rows, np.zeros(self.N, dtype=np.int64), net.res)

    def _neighbours(self) -> Neighbours:
        pairs = sorted(self.pn.pair_arc)
        nb_ptr = np.zeros(self.N + 1, dtype=np.int64)
        for x, _ in pairs:
            nb_ptr[x + 1] += 1
        np.cumsum(nb_ptr, out=nb_ptr)
        nb_y = np.asarray([y for _, y in pairs], dtype=np.int64)
        nb_arc = np.asarray([self.pn.pair_arc[p] for p in pairs], dtype=np.int64)
        return Neighbours(nb_ptr, nb_y, nb_arc)

    def change(self, a: int, delta: int) -> None:
        """Change arc a's capacity by delta, repairing every stored flow."""
        if delta and _change_all(
            self.net.graph, self.stored, self.sigma, int(a), int(delta), self.ex, self.net.work
        ):
            raise SolverError("internal error: stored flow repair failed in tree packing")

    def change_arcs(self, arcs: np.ndarray, delta: int) -> None:
        if _change_arcs(
            self.net.graph, self.stored, self.sigma, arcs, int(delta), self.ex, self.net.work
        ):
            raise SolverError("internal error: stored flow repair failed in tree packing")

    def grab_slot(self, cls: TreeClass) -> None:
        """Give ``cls`` a free auxiliary slot; with none left, rebuild the network with twice the
        slots and re-install everything."""
        if not self.free_slots:
            old_slots = self.pn.slots
            cur = {p: int(self.net.cap[a]) for p, a in self.pn.pair_arc.items()}
            self.pn = _PackingNetwork(self.N, cur, old_slots * 2)
            self.net = self.pn.net
            self.nb = self._neighbours()
            for r in range(self.N):
                self.net.cap[self.pn.root_arc[r]] = self.untouched[r]
            for c in self.pending:
                self.net.cap[self.pn.slot_arc[c.slot]] = c.mult
                self.net.cap[self.pn.member_arc[c.slot][c.members]] = INF
            self.stored = self._zero_flows()
            self.free_slots = list(range(self.pn.slots - 1, old_slots - 1, -1))
        cls.slot = self.free_slots.pop()

    def install(self, cls: TreeClass) -> None:
        self.change_arcs(np.ascontiguousarray(self.pn.member_arc[cls.slot][cls.members]), INF)
        self.change(self.pn.slot_arc[cls.slot], cls.mult)

    def release(self, cls: TreeClass) -> None:
        self.change(self.pn.slot_arc[cls.slot], -cls.mult)
        self.change_arcs(np.ascontiguousarray(self.pn.member_arc[cls.slot][cls.members]), -INF)
        self.free_slots.append(cls.slot)
        cls.slot = -1

    def load(self, cls: TreeClass) -> None:
        """Copy a class into the kernel's arrays."""
        members, inflag, edges, state = self.tree
        nm = len(cls.members)
        members[:nm] = cls.members
        inflag[:] = 0
        inflag[cls.members] = 1
        ne = len(cls.edges)
        if ne:
            edges[:ne] = cls.edges
        state[:] = 0
        state[ST_MEMBERS], state[ST_SCAN], state[ST_MULT], state[ST_EDGES] = (
            nm,
            cls.scan,
            cls.mult,
            ne,
        )

    def grow(self, root: int, check: Callable[[], None] | None) -> None:
        """Grow the loaded class until complete; each split-off rest becomes a pending class."""
        members, _, edges, state = self.tree
        while True:
            state[ST_OTHERS] = self.total_open - int(state[ST_MULT])
            status = _grow(
                self.net.graph,
                self.stored,
                self.sigma,
                self.pn.root_arc,
                self.nb,
                self.tree,
                self.ex,
                self.net.work,
            )
            self.tests += int(state[ST_TESTS])
            state[ST_TESTS] = 0
            if status == 0:
                return
            if status >= 2:
                what = "cannot be completed" if status == 2 else "lost its flow repair"
                raise SolverError(f"internal error: tree from rank {root} {what}")
            sm, se = int(state[ST_SPLIT_MEMBERS]), int(state[ST_SPLIT_EDGES])
            rest = TreeClass(
                root,
                int(state[ST_SPLIT_REST]),
                [(int(a), int(b)) for a, b in edges[:se]],
                [int(v) for v in members[:sm]],
                int(state[ST_SPLIT_SCAN]),
            )
            self.grab_slot(rest)
            self.install(rest)
            self.pending.append(rest)
            if check is not None:
                check()

    def store(self, cls: TreeClass) -> None:
        """Copy the grown class back from the kernel's arrays; it is done."""
        members, _, edges, state = self.tree
        n_e = int(state[ST_EDGES])
        cls.mult = int(state[ST_MULT])
        cls.edges = [(int(a), int(b)) for a, b in edges[:n_e]]
        cls.members = [int(v) for v in members[: self.N]]
        cls.scan = int(state[ST_SCAN])
        self.total_open -= cls.mult
        self.done.append(cls)


def pack_trees(
    N: int,
    caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> tuple[list[TreeClass], int]:
    """Pack ``k`` spanning out-trees per root (ranks 0..N-1); return (classes, flows run).

    ``caps`` maps (x, y) rank pairs to integer capacities with ``λ(s, v) >= N·k`` (s -> every rank
    with capacity k). Raises :class:`SolverError` if a tree cannot be completed (a bug).
    """
    packer = _TreePacker(N, caps, k)
    for root in range(N):
        cls: TreeClass | None = TreeClass(root, k, [], [root], 0)
        packer.untouched[root] = 0
        packer.change(packer.pn.root_arc[root], -k)
        while cls is not None:
            if check is not None:
                check()
            packer.load(cls)
            packer.grow(cls.root, check)
            packer.store(cls)
            if progress is not None:
                progress(1 - packer.total_open / (N * k))
            cls = packer.pending.pop() if packer.pending else None
            if cls is not None:
                packer.release(cls)
    return packer.done, packer.tests


class _Shape:
    """A tree as parent/children maps with depths and a depth histogram (for cheap moves)."""

    __slots__ = ("root", "mult", "parent", "children", "depth", "hist")

    def __init__(self, root: int, mult: int, parent: dict[int, int]):
        self.root, self.mult, self.parent = root, mult, parent
        self.children: dict[int, list[int]] = {}
        for y, x in parent.items():
            self.children.setdefault(x, []).append(y)
        self.depth = {root: 0}
        queue = [root]
        for x in queue:
            for y in self.children.get(x, ()):
                self.depth[y] = self.depth[x] + 1
                queue.append(y)
        self.hist = [0] * (max(self.depth.values()) + 1)
        for d in self.depth.values():
            self.hist[d] += 1

    def copy(self, mult: int) -> _Shape:
        other = _Shape.__new__(_Shape)
        other.root, other.mult, other.parent = self.root, mult, dict(self.parent)
        other.children = {x: list(ys) for x, ys in self.children.items()}
        other.depth, other.hist = dict(self.depth), list(self.hist)
        return other

    def height(self) -> int:
        return len(self.hist) - 1

    def below(self, y: int, v: int) -> bool:
        """Whether v lies in y's subtree."""
        dy = self.depth[y]
        while self.depth[v] > dy:
            v = self.parent[v]
        return v == y

    def subtree(self, y: int) -> list[int]:
        out = [y]
        for v in out:
            out.extend(self.children.get(v, ()))
        return out

    def moved_hist(self, sub: list[int], delta: int) -> list[int]:
        hist = list(self.hist)
        top = len(hist) - 1
        for v in sub:
            top = max(top, self.depth[v] + delta)
        hist += [0] * (top + 1 - len(hist))
        for v in sub:
            d = self.depth[v]
            hist[d] -= 1
            hist[d + delta] += 1
        while len(hist) > 1 and hist[-1] == 0:
            hist.pop()
        return hist

    def move(self, y: int, p: int, sub: list[int], delta: int, hist: list[int]) -> None:
        x = self.parent[y]
        self.children[x].remove(y)
        self.children.setdefault(p, []).append(y)
        self.parent[y] = p
        for v in sub:
            self.depth[v] += delta
        self.hist = hist


def _key(*hists: list[int]) -> tuple[int, int, int]:
    """(tallest height, vertices at that depth, sum of depths) of a few trees."""
    h = max(len(hist) - 1 for hist in hists)
    at = sum(hist[h] for hist in hists if len(hist) > h)
    return h, at, sum(d * c for hist in hists for d, c in enumerate(hist))


class _Regraft(NamedTuple):
    """Tree ``tree`` moves y's subtree ``sub`` from parent x to parent p (depths change by
    ``delta``; ``hist`` is the tree's depth histogram after the move)."""

    tree: int
    y: int
    x: int
    p: int
    sub: list[int]
    delta: int
    hist: list[int]


class _ParentExchange:
    """The state of one :func:`shorten_trees` run: the trees, the free capacity of every edge,
    the trees using each edge, and the moves tried so far."""

    def __init__(
        self,
        classes: list[TreeClass],
        caps: dict[tuple[int, int], int],
        budget: int,
        check: Callable[[], None] | None,
    ) -> None:
        self.budget, self.check, self.tried = budget, check, 0
        self.trees = [_Shape(c.root, c.mult, {y: x for x, y in c.edges}) for c in classes]
        self.free = dict(caps)
        self.users: dict[tuple[int, int], set[int]] = {}
        for i, t in enumerate(self.trees):
            for y, x in t.parent.items():
                self.free[(x, y)] -= t.mult
                self.users.setdefault((x, y), set()).add(i)
        self.into: dict[int, list[int]] = {}
        for z, y in sorted(caps):
            self.into.setdefault(y, []).append(z)

    def run(self) -> list[TreeClass]:
        while self.tried < self.budget:
            tallest = max(t.height() for t in self.trees)
            if tallest < 2 or not self._lower_one(tallest):
                break
        out = []
        for t in self.trees:
            edges = _bfs_edges(t.root, t.parent)
            out.append(
                TreeClass(t.root, t.mult, edges, [t.root] + [v for _, v in edges], len(edges) + 1)
            )
        return out

    def _lower_one(self, tallest: int) -> bool:
        """Make one move that lowers a tallest tree; False if none is found."""
        for a in [i for i, t in enumerate(self.trees) if t.height() == tallest]:
            ta = self.trees[a]
            # the ancestors (depth >= 2) of A's deepest vertices, shallowest first
            cand = set()
            for v, d in ta.depth.items():
                if d == tallest:
                    while ta.depth[v] >= 2 and v not in cand:
                        cand.add(v)
                        v = ta.parent[v]
            for y in sorted(cand, key=lambda v: (ta.depth[v], v)):
                if self._lower_at(a, y):
                    return True
        return False

    def _lower_at(self, a: int, y: int) -> bool:
        """Try to hang y's subtree in tree a under each z at least two levels above y."""
        ta = self.trees[a]
        d_y = ta.depth[y]
        x = ta.parent[y]
        sub_a = ta.subtree(y)
        for z in self.into.get(y, ()):
            if ta.depth.get(z, d_y) > d_y - 2 or self.tried >= self.budget:
                continue
            self.tried += 1
            if self.check is not None and self.tried % 500 == 0:
                self.check()
            delta_a = ta.depth[z] + 1 - d_y
            move_a = _Regraft(a, y, x, z, sub_a, delta_a, ta.moved_hist(sub_a, delta_a))
            if self.free.get((z, y), 0) > 0:
                if _key(move_a.hist) < _key(ta.hist):
                    self._take_free(move_a)
                    return True
                continue
            move_b = self._best_partner(move_a)
            if move_b is not None:
                self._exchange(move_a, move_b)
                return True
        return False

    def _best_partner(self, move_a: _Regraft) -> _Regraft | None:
        """The tree b using (z, y) whose taking (x, y) instead lowers a and b the most."""
        ta, y, x, z = self.trees[move_a.tree], move_a.y, move_a.x, move_a.p
        best = None
        for b in sorted(self.users.get((z, y), ())):
            tb = self.trees[b]
            if tb.below(y, x):
                continue
            self.tried += 1
            sub_b = tb.subtree(y)
            delta_b = tb.depth[x] + 1 - tb.depth[y]
            hist_b = tb.moved_hist(sub_b, delta_b)
            new = _key(move_a.hist, hist_b)
            if new < _key(ta.hist, tb.hist) and (best is None or new < best[0]):
                best = (new, _Regraft(b, y, z, x, sub_b, delta_b, hist_b))
        return None if best is None else best[1]

    def _split_off(self, i: int, part: int) -> int:
        """A tree of multiplicity ``part`` split off tree i (i itself if that is all of it)."""
        t = self.trees[i]
        if part == t.mult:
            return i
        t.mult -= part
        self.trees.append(t.copy(part))
        j = len(self.trees) - 1
        for y, x in t.parent.items():
            self.users[(x, y)].add(j)
        return j

    def _take_free(self, m: _Regraft) -> None:
        """Tree a takes the unused capacity of (z, y)."""
        part = min(self.free[(m.p, m.y)], self.trees[m.tree].mult)
        a2 = self._split_off(m.tree, part)
        self.trees[a2].move(m.y, m.p, m.sub, m.delta, m.hist)
        self.users[(m.x, m.y)].discard(a2)
        self.users.setdefault((m.p, m.y), set()).add(a2)
        self.free[(m.x, m.y)] += part
        self.free[(m.p, m.y)] -= part

    def _exchange(self, ma: _Regraft, mb: _Regraft) -> None:
        """Trees a and b swap y's parents: a takes (z, y), b takes (x, y)."""
        part = min(self.trees[ma.tree].mult, self.trees[mb.tree].mult)
        a2 = self._split_off(ma.tree, part)
        b2 = self._split_off(mb.tree, part)
        self.trees[a2].move(ma.y, ma.p, ma.sub, ma.delta, ma.hist)
        self.trees[b2].move(mb.y, mb.p, mb.sub, mb.delta, mb.hist)
        self.users[(ma.x, ma.y)].discard(a2)
        self.users[(ma.x, ma.y)].add(b2)
        self.users[(ma.p, ma.y)].discard(b2)
        self.users[(ma.p, ma.y)].add(a2)


def shorten_trees(
    classes: list[TreeClass],
    caps: dict[tuple[int, int], int],
    budget: int | None = None,
    check: Callable[[], None] | None = None,
) -> list[TreeClass]:
    """Make the tallest trees shorter by exchanging parents between trees (edge loads unchanged).

    For a vertex y of a tallest tree A (parent x) and a vertex z at least two levels above y in
    A, another tree B that uses (z, y) and does not have x below y can give (z, y) to A and take
    (x, y): A's y-subtree moves up, every edge carries what it carried before, so the schedule
    keeps its rate. Unused capacity of (z, y) is taken directly when there is some. A move is
    kept if it lowers (taller height of A and B, vertices at that depth, sum of depths); classes
    of different multiplicity exchange the smaller one (the larger class splits). Stops when no
    tallest tree improves or after ``budget`` tried moves (default 400k / N: deterministic, no
    clock). Edges stay in breadth-first order. ``check`` (cancellation) runs every 500 moves.
    """
    if not classes:
        return classes
    n_ranks = len(classes[0].edges) + 1
    if budget is None:
        budget = 400_000 // max(n_ranks, 1)
    return _ParentExchange(classes, caps, budget, check).run()


def _bfs_edges(root: int, parent: dict[int, int]) -> list[tuple[int, int]]:
    children: dict[int, list[int]] = {}
    for y, x in parent.items():
        children.setdefault(x, []).append(y)
    edges = []
    queue = [root]
    for x in queue:
        for y in sorted(children.get(x, ())):
            edges.append((x, y))
            queue.append(y)
    return edges
