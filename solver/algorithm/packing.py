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

import numpy as np

from solver.flow.jit import njit
from solver.model.errors import SolverError
from solver.flow.maxflow import INF, FlowNetwork, _add_excess, _cut_capacity, _dinic, _repair


@dataclass
class TreeClass:
    """``mult`` identical trees from ``root`` with logical edges (parent, child) in BFS order."""

    root: int
    mult: int
    edges: list[tuple[int, int]] = field(default_factory=list)
    members: list[int] = field(default_factory=list)  # BFS order
    scan: int = 0  # position in members of the next vertex to expand
    slot: int = -1  # auxiliary node slot while partial and not being grown


@njit
def _change_all(indptr, head, rev, tail, cap, flows, values, sigma, a, delta, nodes, amounts,
                level, it, queue, stack):
    """Change arc ``a``'s capacity by ``delta`` and repair every stored flow (row z: sink z)."""
    cap[a] += delta
    for z in range(flows.shape[0]):
        row = flows[z]
        over = _cut_capacity(row, rev, a, delta)
        if over > 0:
            m = _add_excess(nodes, amounts, 0, tail[a], over)
            m = _add_excess(nodes, amounts, m, head[a], -over)
            value = _repair(indptr, head, rev, cap, row, sigma, z, 0, nodes, amounts, m,
                            level, it, queue, stack)
            if value < 0:
                return 1
            values[z] = value
    return 0


@njit
def _grow(indptr, head, rev, tail, cap, res, flows, values, sigma, root_arc, nb_ptr, nb_y,
          nb_arc, members, inflag, edges, state, nodes, amounts, level, it, queue, stack):
    """Grow one tree class breadth-first until it spans, or until it must split.

    ``state`` = [n_members, scan, mult, others, n_edges, rescanned, tests, split_rest,
    split_members, split_edges, split_scan]. Returns 0 when the class spans every rank, 1 after
    adding an edge with μ < mult (the class now has mult = μ; the rest, ``split_rest`` trees with
    the first ``split_members`` members / ``split_edges`` edges and scan position ``split_scan``,
    must be installed as an auxiliary class before calling again), 2 if stuck, 3 if a stored flow
    could not be repaired (both bugs). ``flows`` row z is a residual network holding a valid flow
    from σ to rank z in the network without the current class; each test tops it up, copies it,
    opens σ -> x and augments only the few units the edge needs.
    """
    N = members.shape[0]
    nmem = state[0]
    scan = state[1]
    mult = state[2]
    others = state[3]
    ne = state[4]
    while nmem < N:
        progressed = False
        while scan < nmem < N:
            x = members[scan]
            for j in range(nb_ptr[x], nb_ptr[x + 1]):
                y = nb_y[j]
                if inflag[y] != 0:
                    continue
                a = nb_arc[j]
                cxy = cap[a]
                if cxy == 0:
                    continue
                want = min(cxy, mult)
                # stored flow to y in the network without the current class: top it up
                row = flows[y]
                value = values[y]
                if value < others:
                    value += _dinic(indptr, head, rev, row, sigma, y, others - value, level, it,
                                    queue, stack)
                    values[y] = value
                if value == others:
                    # every finite source edge is saturated: the extra flow through x is just
                    # an x -> y flow in the residual network (usually a short path); undo it
                    got = _dinic(indptr, head, rev, row, x, y, want, level, it, queue, stack)
                    if got > 0 and _dinic(indptr, head, rev, row, y, x, got, level, it, queue,
                                          stack) != got:
                        state[0] = nmem
                        state[1] = scan
                        state[4] = ne
                        return 3
                    f = others + got
                else:
                    # let x send without limit (on a copy) and augment by what the edge needs
                    for b in range(res.shape[0]):
                        res[b] = row[b]
                    ra = root_arc[x]
                    res[ra] += INF - cap[ra]
                    f = value + _dinic(indptr, head, rev, res, sigma, y, others + want - value,
                                       level, it, queue, stack)
                state[6] += 1
                mu = f - others
                mu = min(mu, want)
                if mu <= 0:
                    continue
                if _change_all(indptr, head, rev, tail, cap, flows, values, sigma, a, -mu, nodes,
                               amounts, level, it, queue, stack):
                    state[0] = nmem
                    state[1] = scan
                    state[4] = ne
                    return 3
                split = mu < mult
                if split:
                    state[7] = mult - mu
                    state[8] = nmem
                    state[9] = ne
                    state[10] = scan
                edges[ne, 0] = x
                edges[ne, 1] = y
                ne += 1
                members[nmem] = y
                nmem += 1
                inflag[y] = 1
                progressed = True
                if split:
                    state[0] = nmem
                    state[1] = scan
                    state[2] = mu
                    state[4] = ne
                    return 1
            scan += 1
        if nmem < N and not progressed and scan >= nmem:
            if state[5] != 0:
                state[0] = nmem
                state[1] = scan
                state[4] = ne
                return 2
            state[5] = 1
            scan = 0
    state[0] = nmem
    state[1] = scan
    state[4] = ne
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
        self.root_arc = arc[base: base + N]
        self.slot_arc = []
        self.member_arc = []
        pos = base + N
        for _ in range(slots):
            self.slot_arc.append(int(arc[pos]))
            self.member_arc.append(arc[pos + 1: pos + 1 + N])
            pos += N + 1


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
    res_caps = {e: c for e, c in caps.items() if c > 0}
    slots = 4
    pn = _PackingNetwork(N, res_caps, slots)
    untouched = [k] * N
    for r in range(N):
        pn.net.cap[pn.root_arc[r]] = k
    free_slots = list(range(slots - 1, -1, -1))
    pending: list[TreeClass] = []  # partial classes waiting (each holds an aux slot)
    done: list[TreeClass] = []
    total_open = N * k  # multiplicity of classes not yet complete
    tests = 0
    sigma = N
    net = pn.net
    nodes = np.zeros(8, dtype=np.int64)
    amounts = np.zeros(8, dtype=np.int64)

    def zero_flows() -> np.ndarray:
        return np.ascontiguousarray(np.broadcast_to(net.cap, (N, net.cap.shape[0])))

    flows = zero_flows()
    values = np.zeros(N, dtype=np.int64)  # flow value held by each row

    def change(a: int, delta: int) -> None:
        if delta and _change_all(net.indptr, net.head, net.rev, net.tail, net.cap, flows,
                                 values, sigma, int(a), int(delta), nodes, amounts,
                                 net._level, net._it, net._queue, net._stack):
            raise SolverError("internal error: stored flow repair failed in tree packing")

    def neighbours():
        pairs = sorted(pn.pair_arc)
        nb_ptr = np.zeros(N + 1, dtype=np.int64)
        for x, _ in pairs:
            nb_ptr[x + 1] += 1
        np.cumsum(nb_ptr, out=nb_ptr)
        nb_y = np.asarray([y for _, y in pairs], dtype=np.int64)
        nb_arc = np.asarray([pn.pair_arc[p] for p in pairs], dtype=np.int64)
        return nb_ptr, nb_y, nb_arc

    def grab_slot(cls: TreeClass) -> None:
        nonlocal pn, net, free_slots, nb, flows
        if not free_slots:
            # grow the network: rebuild with twice the slots and re-install everything
            old_slots = pn.slots
            cur = {p: int(net.cap[a]) for p, a in pn.pair_arc.items()}
            pn = _PackingNetwork(N, cur, old_slots * 2)
            net = pn.net
            nb = neighbours()
            for r in range(N):
                net.cap[pn.root_arc[r]] = untouched[r]
            for c in pending:
                net.cap[pn.slot_arc[c.slot]] = c.mult
                net.cap[pn.member_arc[c.slot][c.members]] = INF
            flows = zero_flows()
            values[:] = 0
            free_slots = list(range(pn.slots - 1, old_slots - 1, -1))
        cls.slot = free_slots.pop()

    def install(cls: TreeClass) -> None:
        for a in pn.member_arc[cls.slot][cls.members]:
            change(a, INF)
        change(pn.slot_arc[cls.slot], cls.mult)

    def release(cls: TreeClass) -> None:
        change(pn.slot_arc[cls.slot], -cls.mult)
        for a in pn.member_arc[cls.slot][cls.members]:
            change(a, -INF)
        free_slots.append(cls.slot)
        cls.slot = -1

    nb = neighbours()
    members = np.zeros(N, dtype=np.int64)
    inflag = np.zeros(N, dtype=np.int64)
    edges = np.zeros((max(N - 1, 1), 2), dtype=np.int64)
    state = np.zeros(11, dtype=np.int64)
    for root in range(N):
        cls: TreeClass | None = TreeClass(root, k, [], [root], 0)
        untouched[root] = 0
        change(pn.root_arc[root], -k)
        while cls is not None:
            if check is not None:
                check()
            # load the class into the kernel's arrays
            nm = len(cls.members)
            members[:nm] = cls.members
            inflag[:] = 0
            inflag[cls.members] = 1
            ne = len(cls.edges)
            if ne:
                edges[:ne] = cls.edges
            state[:] = 0
            state[0], state[1], state[2], state[4] = nm, cls.scan, cls.mult, ne
            while True:
                state[3] = total_open - int(state[2])
                status = _grow(net.indptr, net.head, net.rev, net.tail, net.cap, net.res, flows,
                               values, sigma, pn.root_arc, nb[0], nb[1], nb[2], members, inflag, edges,
                               state, nodes, amounts, net._level, net._it, net._queue,
                               net._stack)
                tests += int(state[6])
                state[6] = 0
                if status == 0:
                    break
                if status >= 2:
                    what = "cannot be completed" if status == 2 else "lost its flow repair"
                    raise SolverError(f"internal error: tree from rank {root} {what}")
                sm, se = int(state[8]), int(state[9])
                rest = TreeClass(cls.root, int(state[7]),
                                 [(int(a), int(b)) for a, b in edges[:se]],
                                 [int(v) for v in members[:sm]], int(state[10]))
                grab_slot(rest)
                install(rest)
                pending.append(rest)
                if check is not None:
                    check()
            n_e = int(state[4])
            cls.mult = int(state[2])
            cls.edges = [(int(a), int(b)) for a, b in edges[:n_e]]
            cls.members = [int(v) for v in members[:N]]
            cls.scan = int(state[1])
            total_open -= cls.mult
            done.append(cls)
            if progress is not None:
                progress(1 - total_open / (N * k))
            cls = pending.pop() if pending else None
            if cls is not None:
                release(cls)
    return done, tests





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


def shorten_trees(classes: list[TreeClass], caps: dict[tuple[int, int], int],
                  budget: int | None = None,
                  check: Callable[[], None] | None = None) -> list[TreeClass]:
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
    trees = [_Shape(c.root, c.mult, {y: x for x, y in c.edges}) for c in classes]
    free = dict(caps)
    users: dict[tuple[int, int], set[int]] = {}
    for i, t in enumerate(trees):
        for y, x in t.parent.items():
            free[(x, y)] -= t.mult
            users.setdefault((x, y), set()).add(i)
    into: dict[int, list[int]] = {}
    for (z, y) in sorted(caps):
        into.setdefault(y, []).append(z)

    def split_off(i: int, part: int) -> int:
        t = trees[i]
        if part == t.mult:
            return i
        t.mult -= part
        trees.append(t.copy(part))
        j = len(trees) - 1
        for y, x in t.parent.items():
            users[(x, y)].add(j)
        return j

    tried = 0
    while tried < budget:
        tallest = max(t.height() for t in trees)
        if tallest < 2:
            break
        moved = False
        for a in [i for i, t in enumerate(trees) if t.height() == tallest]:
            ta = trees[a]
            # the ancestors (depth >= 2) of A's deepest vertices, shallowest first
            cand = set()
            for v, d in ta.depth.items():
                if d == tallest:
                    while ta.depth[v] >= 2 and v not in cand:
                        cand.add(v)
                        v = ta.parent[v]
            for y in sorted(cand, key=lambda v: (ta.depth[v], v)):
                d_y = ta.depth[y]
                x = ta.parent[y]
                sub_a = ta.subtree(y)
                for z in into.get(y, ()):
                    if ta.depth.get(z, d_y) > d_y - 2 or tried >= budget:
                        continue
                    tried += 1
                    if check is not None and tried % 500 == 0:
                        check()
                    delta_a = ta.depth[z] + 1 - d_y
                    hist_a = ta.moved_hist(sub_a, delta_a)
                    if free.get((z, y), 0) > 0:
                        if _key(hist_a) < _key(ta.hist):
                            part = min(free[(z, y)], ta.mult)
                            a2 = split_off(a, part)
                            trees[a2].move(y, z, sub_a, delta_a, hist_a)
                            users[(x, y)].discard(a2)
                            users.setdefault((z, y), set()).add(a2)
                            free[(x, y)] += part
                            free[(z, y)] -= part
                            moved = True
                            break
                        continue
                    best = None
                    for b in sorted(users.get((z, y), ())):
                        tb = trees[b]
                        if tb.below(y, x):
                            continue
                        tried += 1
                        sub_b = tb.subtree(y)
                        delta_b = tb.depth[x] + 1 - tb.depth[y]
                        hist_b = tb.moved_hist(sub_b, delta_b)
                        new = _key(hist_a, hist_b)
                        if new < _key(ta.hist, tb.hist) and (best is None or new < best[0]):
                            best = (new, b, sub_b, delta_b, hist_b)
                    if best is None:
                        continue
                    _, b, sub_b, delta_b, hist_b = best
                    part = min(ta.mult, trees[b].mult)
                    a2 = split_off(a, part)
                    b2 = split_off(b, part)
                    trees[a2].move(y, z, sub_a, delta_a, hist_a)
                    trees[b2].move(y, x, sub_b, delta_b, hist_b)
                    users[(x, y)].discard(a2)
                    users[(x, y)].add(b2)
                    users[(z, y)].discard(b2)
                    users[(z, y)].add(a2)
                    moved = True
                    break
                if moved:
                    break
            if moved:
                break
        if not moved:
            break
    out = []
    for t in trees:
        edges = _bfs_edges(t.root, t.parent)
        out.append(TreeClass(t.root, t.mult, edges, [t.root] + [v for _, v in edges],
                             len(edges) + 1))
    return out


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
