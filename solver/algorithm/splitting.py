"""Step 2: remove the switches by edge splitting, remembering the physical paths.

Integer capacities ``c(e)`` (``U·b(e)``) plus a super source ``s`` with capacity ``k`` to every
compute node satisfy ``λ(s, v) >= N·k`` for every compute v. At a switch w an in-edge (u, w) and
an out-edge (w, t) are replaced by γ units of a direct edge (u, t) (dropped when u = t), with γ
as large as keeps the invariant. The cuts whose value drops are exactly s-v cuts, so after a
*tentative* split of the full ``g = min(c(u,w), c(w,t))`` the deficits ``N·k - λ'(s, v)`` give
``γ = g - max deficit`` exactly (each affected cut loses exactly g). A balanced switch (in = out)
can always be split off completely (Bang-Jensen, Frank, Jackson).

Speed: one s-v flow of value N·k per compute node v is stored (a residual network per row) and
carried from split to split. A tentative split only touches the rows whose flow no longer fits;
those are repaired locally (reroute, cancel, re-augment) instead of recomputed. Switches that are
pairwise non-adjacent share one flow network (one batch).

Tree depth: greedy splitting turns a switch into a ring-like set of logical edges (tall trees).
With ``spread`` every edge is first split in equal shares over the partners the rest of the
fabric reaches worst (other boxes), so each compute node gets in-edges from many sources.

Each remaining edge keeps an ordered ``{physical path: units}`` record so step 4 can route the
logical compute-to-compute edges back through the switches.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from solver.algorithm.cost import check_flow_rows
from solver.flow.csr import IndexedFabric
from solver.flow.jit import njit_noalloc
from solver.flow.maxflow import FlowNetwork, augment, flow_into
from solver.flow.repair import new_excess, reduce_arc, repair_flow
from solver.model.errors import SolverError

Path = tuple[int, ...]


class IncompleteSplit(SolverError):
    """A switch could not be split off completely (it cannot forward what its links promise)."""


@dataclass
class SplitResult:
    """Compute-to-compute capacities after splitting and the physical paths behind each edge."""

    caps: dict[tuple[int, int], int]
    paths: dict[tuple[int, int], dict[Path, int]]
    num_splits: int
    num_trials: int


def _take(pieces: dict[Path, int], amount: int) -> list[tuple[Path, int]]:
    """Remove ``amount`` units from the front of an ordered path record."""
    if amount <= 0:
        return []
    path = next(iter(pieces))
    have = pieces[path]
    if have > amount:  # the common case: the front path has enough
        pieces[path] = have - amount
        return [(path, amount)]
    out = []
    while amount > 0:
        path = next(iter(pieces))
        have = pieces[path]
        use = min(have, amount)
        out.append((path, use))
        if use == have:
            del pieces[path]
        else:
            pieces[path] = have - use
        amount -= use
    return out


def _join(
    head: list[tuple[Path, int]], tail: list[tuple[Path, int]], into: dict[Path, int]
) -> None:
    """Concatenate two equal-size path lists unit by unit (u..w + w..t) into ``into``."""
    i = j = 0
    a_rem = head[0][1] if head else 0
    b_rem = tail[0][1] if tail else 0
    while i < len(head) and j < len(tail):
        use = min(a_rem, b_rem)
        path = head[i][0] + tail[j][0][1:]
        into[path] = into.get(path, 0) + use
        a_rem -= use
        b_rem -= use
        if a_rem == 0:
            i += 1
            if i < len(head):
                a_rem = head[i][1]
        if b_rem == 0:
            j += 1
            if j < len(tail):
                b_rem = tail[j][1]


class SinkFlows(NamedTuple):
    """One stored s-v flow per compute node v (a residual array per row) and trial bookkeeping."""

    rows: np.ndarray  # (N, arcs) residual arrays
    sinks: np.ndarray  # (N,) the node v of each row
    order: np.ndarray  # (N,) rows in checking order: the row that failed last comes first
    touched: np.ndarray  # (N,) 1 if the last trial had to repair the row


class SplitMove(NamedTuple):
    """Moving ``units`` from arcs (u,w) and (w,t) onto arc (u,t) (``ut`` = -1 when u = t)."""

    uw: int
    wt: int
    ut: int
    units: int


@njit_noalloc
def _initial_flows(g, flows, s, need, work):
    """One s-v flow of value ``need`` per row; return the first row that falls short, or -1."""
    for i in range(flows.sinks.shape[0]):
        res = flows.rows[i]
        for a in range(res.shape[0]):
            res[a] = g.cap[a]
        if augment(g, res, s, flows.sinks[i], need, work) < need:
            return i
    return -1


@njit_noalloc(inline="always")
def _apply_move(g, move, units):
    """Move ``units`` (negative: back) in the capacities."""
    g.cap[move.uw] -= units
    g.cap[move.wt] -= units
    if move.ut >= 0:
        g.cap[move.ut] += units


@njit_noalloc
def _trial_split(g, flows, s, need, move, ex, work):
    """Tentatively split ``move.units`` onto (u,t) and repair every stored s-v flow.

    Returns (max deficit capped at the units, number of rows processed, error flag). Rows whose
    flow still fits the new capacities cost nothing; the others are repaired locally.
    """
    _apply_move(g, move, move.units)
    worst = 0
    processed = 0
    order = flows.order
    for idx in range(order.shape[0]):
        i = order[idx]
        res = flows.rows[i]
        processed = idx + 1
        if move.ut >= 0:
            res[move.ut] += move.units
        if res[move.uw] >= move.units and res[move.wt] >= move.units:
            res[move.uw] -= move.units
            res[move.wt] -= move.units
            flows.touched[i] = 0
            continue
        flows.touched[i] = 1
        ex.size[0] = 0
        reduce_arc(g, res, move.uw, -move.units, ex)
        reduce_arc(g, res, move.wt, -move.units, ex)
        value = repair_flow(g, res, s, flows.sinks[i], need, ex, work)
        if value < 0:
            return worst, processed, 1
        if need - value > worst:
            worst = need - value
            for j in range(idx, 0, -1):  # check this row first next time
                order[j] = order[j - 1]
            order[0] = i
            if worst >= move.units:
                worst = move.units
                break
    return worst, processed, 0


@njit_noalloc
def _settle_split(g, flows, s, need, move, gamma, processed, ex, work):
    """Undo all but ``gamma`` units of a tentative split; restore every stored flow to ``need``.

    Returns 1 if a flow could not be restored (a bug: gamma is admissible), else 0.
    """
    back = move.units - gamma
    if back == 0:
        return 0  # the whole split was admissible: every processed row already holds need
    _apply_move(g, move, -back)
    for idx in range(processed):
        i = flows.order[idx]
        res = flows.rows[i]
        res[move.uw] += back
        res[move.wt] += back
        sink = flows.sinks[i]
        if move.ut >= 0:
            ex.size[0] = 0
            if reduce_arc(g, res, move.ut, -back, ex) > 0:
                if repair_flow(g, res, s, sink, need, ex, work) < need:
                    return 1
                continue
        if flows.touched[i] == 1:
            # a repaired row may have lost value in the trial: top it up again
            value = flow_into(g, res, sink)
            if value < need:
                value += augment(g, res, s, sink, need - value, work)
            if value < need:
                return 1
    return 0


@njit_noalloc
def _split_once(g, flows, s, need, move, ex, work):
    """Trial and settlement of one split in one call: (units split, error flag)."""
    deficit, processed, err = _trial_split(g, flows, s, need, move, ex, work)
    gamma = move.units - min(deficit, move.units)
    if err == 0:
        err = _settle_split(g, flows, s, need, move, gamma, processed, ex, work)
    return gamma, err


def split_switches(
    fabric: IndexedFabric,
    caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
    spread: bool = False,
) -> SplitResult:
    """Split off every switch of ``fabric`` (see module docstring); ``caps`` by node pair.

    One s-v flow of value N·k per compute node v is kept across all splits (rows of a residual
    matrix); a tentative split only repairs the flows it breaks, so most checks cost no max-flow.
    With ``spread`` each edge of the smaller side is first split in equal shares over the
    partners farthest from it in the rest of the fabric (denser compute graph whose thin edges
    reach other boxes: shallower trees), then greedily.
    """
    splitter = _Splitter(fabric, caps, k, check, spread)
    switches = [v for v in range(fabric.n) if not fabric.is_compute[v]]
    remaining = list(switches)
    done = 0
    while remaining:
        batch, remaining = splitter.next_batch(remaining)
        splitter.build_network(batch)
        for w in batch:
            splitter.split_off(w)
            done += 1
            if progress is not None:
                progress(done / len(switches))
    return splitter.result()


class _Splitter:
    """The state of one switch removal: capacities, path records and the stored flows."""

    def __init__(
        self,
        fabric: IndexedFabric,
        caps: dict[tuple[int, int], int],
        k: int,
        check: Callable[[], None] | None,
        spread: bool,
    ):
        self.fabric = fabric
        self.k = k
        self.check = check
        self.spread = spread
        self.N = fabric.num_compute
        self.need = self.N * k
        self.s = fabric.n  # the super source
        self.cur: dict[tuple[int, int], int] = {e: c for e, c in caps.items() if c > 0}
        self.paths: dict[tuple[int, int], dict[Path, int]] = {
            e: {e: c} for e, c in self.cur.items()
        }
        self.graph = _Adjacency(self.cur)
        for v in range(fabric.n):
            self.graph.inn.setdefault(v, set())
            self.graph.out.setdefault(v, set())
        self.sinks = np.asarray(fabric.compute, dtype=np.int64)
        self.order = np.arange(self.N, dtype=np.int64)
        self.touched = np.zeros(self.N, dtype=np.int64)
        self.ex = new_excess()
        self.num_splits = 0
        self.num_trials = 0
        self.rows: np.ndarray | None = None  # residual arrays, one per sink, on self.net
        self.net: FlowNetwork | None = None
        self.pairs: list[tuple[int, int]] = []  # the network's edges before the source edges
        self.index: dict[tuple[int, int], int] = {}

    def next_batch(self, remaining: list[int]) -> tuple[list[int], list[int]]:
        """Pairwise non-adjacent switches (they share one flow network) and the rest."""
        batch, later, blocked = [], [], set()
        for w in remaining:
            if w in blocked:
                later.append(w)
                continue
            batch.append(w)
            blocked.update(self.graph.inn[w])
            blocked.update(self.graph.out[w])
        return batch, later

    def build_network(self, batch: list[int]) -> None:
        """A flow network with every pair a split at the batch's switches can create."""
        if self.check is not None:
            self.check()
        cur, N = self.cur, self.N
        most = len(cur) + sum(len(self.graph.inn[w]) * len(self.graph.out[w]) for w in batch)
        check_flow_rows("switch removal", N, 2 * (most + N))
        extra = []
        for w in batch:
            ins, outs = sorted(self.graph.inn[w]), sorted(self.graph.out[w])
            extra += [(u, t) for u in ins for t in outs if u != t and (u, t) not in cur]
        all_pairs = list(cur) + list(dict.fromkeys(extra))
        index = {p: i for i, p in enumerate(all_pairs)}
        tails = [u for u, _ in all_pairs] + [self.s] * N
        heads = [v for _, v in all_pairs] + list(self.fabric.compute)
        ecaps = [cur.get(p, 0) for p in all_pairs] + [self.k] * N
        net = FlowNetwork(self.s + 1, tails, heads, ecaps)
        rows = _carry_flows(self.net, self.pairs, self.rows, net, all_pairs, N, index)
        if rows is None:
            rows = np.empty((N, net.cap.shape[0]), dtype=np.int64)
            bad = _initial_flows(net.graph, self._flows(rows), self.s, self.need, net.work)
            if bad >= 0:
                raise SolverError(
                    f"internal error: compute node {self.fabric.names[self.sinks[bad]]!r} cannot "
                    "receive its share before switch removal"
                )
        self.net, self.pairs, self.index, self.rows = net, all_pairs, index, rows

    def _flows(self, rows: np.ndarray) -> SinkFlows:
        return SinkFlows(rows, self.sinks, self.order, self.touched)

    def split_off(self, w: int) -> None:
        """Split off every edge of the smaller side of switch ``w``; drop the rest."""
        cur = self.cur
        ins, outs = sorted(self.graph.inn[w]), sorted(self.graph.out[w])
        tot_in = sum(cur[(u, w)] for u in ins)
        tot_out = sum(cur[(w, t)] for t in outs)
        # split off every edge of the smaller side (both sides when balanced); whatever is
        # left on the larger side afterwards carries no flow and is dropped
        by_in = tot_in <= tot_out
        primary, other = (ins, outs) if by_in else (outs, ins)
        for p in primary:
            edge = (p, w) if by_in else (w, p)
            self._split_edge(w, p, other, by_in)
            if cur.get(edge, 0):
                side = "incoming" if by_in else "outgoing"
                raise IncompleteSplit(
                    f"switch {self.fabric.names[w]!r} cannot forward all of its {side} capacity "
                    f"(in {tot_in}, out {tot_out} units; switches cannot replicate data)"
                )
        # the larger side's remainder: no flow can use it any more
        for q in other:
            self.graph.set((w, q) if by_in else (q, w), 0)
        if self.graph.out[w] or self.graph.inn[w]:
            raise SolverError(
                f"internal error: switch {self.fabric.names[w]!r} keeps capacity after splitting"
            )
        for u in ins:
            self.paths.pop((u, w), None)
        for t in outs:
            self.paths.pop((w, t), None)

    def _passes(self, w: int, p: int, other: list[int], by_in: bool) -> tuple[list, list[int]]:
        """The (partner, unit limit or None) tries for edge p-w, and the greedy rotation."""
        edge = (p, w) if by_in else (w, p)
        # partners q != p first (rotated to start after p), the self-pair last
        rot = [q for q in other if q > p] + [q for q in other if q < p]
        share = self.cur[edge]
        spread_to = rot
        if self.spread and rot:
            # first pass: equal shares (of at least k/4 units, so tree classes do not shatter)
            # to the partners farthest from p without w
            spread_to = _far_first(
                self.graph, self.fabric.is_compute, p, w, rot, by_in, share // max(1, self.k // 4)
            )
            share = -(-share // len(spread_to))
        if p in other:
            rot.append(p)
        if share < self.cur[edge]:
            return [(q, share) for q in spread_to] + [(q, None) for q in rot], rot
        return [(q, None) for q in rot], rot

    def _split_edge(self, w: int, p: int, other: list[int], by_in: bool) -> None:
        """Split edge p-w (p's side of switch w) over the partners in ``other`` until it is gone.

        A pair refused earlier can become admissible after other splits: keep cycling through
        the partners until the edge is gone or a whole round changes nothing.
        """
        edge = (p, w) if by_in else (w, p)
        passes, rot = self._passes(w, p, other, by_in)
        progress_mark = -1
        i = 0
        while i < len(passes):
            q, limit = passes[i]
            i += 1
            if i == len(passes) and self.cur.get(edge, 0) and progress_mark != self.num_splits:
                progress_mark = self.num_splits
                passes += [(x, None) for x in rot]
            if self.cur.get(edge, 0) == 0:
                break
            u, t = (p, q) if by_in else (q, p)
            self._try_split(u, w, t, limit)

    def _try_split(self, u: int, w: int, t: int, limit: int | None) -> None:
        """Split as many units (up to ``limit``) of (u,w),(w,t) onto (u,t) as keep the invariant."""
        a = self.cur.get((u, w), 0)
        b = self.cur.get((w, t), 0)
        if a == 0 or b == 0:
            return
        if self.check is not None:
            self.check()
        units = min(a, b) if limit is None else min(a, b, limit)
        arc, index = self.net.edge_arc, self.index
        move = SplitMove(
            int(arc[index[(u, w)]]),
            int(arc[index[(w, t)]]),
            int(arc[index[(u, t)]]) if u != t else -1,
            units,
        )
        flows = self._flows(self.rows)
        graph, work = self.net.graph, self.net.work
        gamma, err = _split_once(graph, flows, self.s, self.need, move, self.ex, work)
        gamma = int(gamma)
        self.num_trials += 1
        if err:
            raise SolverError("internal error: flow repair failed in switch removal")
        if gamma == 0:
            return
        self.num_splits += 1
        head = _take(self.paths[(u, w)], gamma)
        tail = _take(self.paths[(w, t)], gamma)
        self.graph.set((u, w), a - gamma)
        self.graph.set((w, t), b - gamma)
        if u != t:
            self.graph.set((u, t), self.cur.get((u, t), 0) + gamma)
            _join(head, tail, self.paths.setdefault((u, t), {}))

    def result(self) -> SplitResult:
        comp = set(self.fabric.compute)
        out_caps = {e: c for e, c in self.cur.items() if c > 0 and e[0] in comp and e[1] in comp}
        out_paths = {e: self.paths[e] for e in out_caps}
        return SplitResult(out_caps, out_paths, self.num_splits, self.num_trials)


def _far_first(graph, is_compute, p, w, partners, forward, units):
    """At most ``units`` partners, the farthest from ``p`` (in logical hops avoiding ``w``) first.

    Distances count compute nodes entered (switch hops are free), along edges ``p -> q`` when
    ``forward`` else ``q -> p``; unreachable partners come first. In the nearest tier needed the
    partners are picked evenly spaced in rotation order, so a thin edge reaches many regions.
    """
    adj = graph.out if forward else graph.inn
    dist = {p: 0}
    todo = deque([p])
    wanted = set(partners)
    done: set[int] = set()
    while todo and wanted:
        x = todo.popleft()
        if x in done:
            continue
        done.add(x)
        wanted.discard(x)  # popped in order of distance: x's distance is final
        dx = dist[x]
        for y in adj[x]:
            if y == w:
                continue
            dy = dx + (1 if is_compute[y] else 0)
            if dy < dist.get(y, dy + 1):
                dist[y] = dy
                if dy == dx:
                    todo.appendleft(y)
                else:
                    todo.append(y)
    inf = len(dist) + 1
    pos = {q: i for i, q in enumerate(partners)}
    ranked = sorted(partners, key=lambda q: (-dist.get(q, inf), pos[q]))
    m = min(len(ranked), max(1, units))
    # every partner of the tiers farther than the m-th one, the rest evenly spaced (in rotation
    # order) within the m-th one's tier
    last = dist.get(ranked[m - 1], inf)
    full = [q for q in ranked[:m] if dist.get(q, inf) != last]
    tier = [q for q in ranked if dist.get(q, inf) == last]  # already in rotation order
    more = m - len(full)
    chosen = full + [tier[(i * len(tier)) // more] for i in range(more)]
    return sorted(chosen, key=pos.__getitem__)


def _carry_flows(prev_net, prev_pairs, flows, net, all_pairs, N, index):
    """Map the stored flows of the previous network onto ``net`` (same pairs, new arc order)."""
    if prev_net is None or flows is None:
        return None
    m_old = len(prev_pairs)
    old_edges = np.arange(m_old + N, dtype=np.int64)
    new_edges = np.empty(m_old + N, dtype=np.int64)
    keep = np.ones(m_old + N, dtype=bool)
    base = len(all_pairs)
    for i, p in enumerate(prev_pairs):
        j = index.get(p, -1)
        new_edges[i] = j
        keep[i] = j >= 0
    new_edges[m_old:] = base + np.arange(N)
    old_fwd = prev_net.edge_arc[old_edges[keep]]
    edge_flow = flows[:, prev_net.rev[old_fwd]]  # flow = residual of the reverse arc
    dropped = ~keep
    if dropped.any() and flows[:, prev_net.rev[prev_net.edge_arc[old_edges[dropped]]]].any():
        raise SolverError("internal error: flow left on a removed edge")
    new_fwd = net.edge_arc[new_edges[keep]]
    out = np.empty((N, net.cap.shape[0]), dtype=np.int64)
    out[:] = net.cap
    out[:, new_fwd] = net.cap[new_fwd] - edge_flow
    out[:, net.rev[new_fwd]] = edge_flow
    if (out < 0).any():
        raise SolverError("internal error: carried flow exceeds a capacity")
    return out


class _Adjacency:
    """Positive capacities by pair with in/out neighbour sets kept in sync."""

    def __init__(self, cur: dict[tuple[int, int], int]):
        self.cur = cur
        self.inn: dict[int, set[int]] = {}
        self.out: dict[int, set[int]] = {}
        for u, v in cur:
            self.out.setdefault(u, set()).add(v)
            self.inn.setdefault(v, set()).add(u)
            self.inn.setdefault(u, set())
            self.out.setdefault(v, set())

    def set(self, e: tuple[int, int], value: int) -> None:
        u, v = e
        if value:
            self.cur[e] = value
            self.out.setdefault(u, set()).add(v)
            self.inn.setdefault(v, set()).add(u)
            self.inn.setdefault(u, set())
            self.out.setdefault(v, set())
        else:
            self.cur.pop(e, None)
            self.out[u].discard(v)
            self.inn[v].discard(u)
