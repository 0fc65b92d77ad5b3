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

import numpy as np

from solver.flow.jit import njit
from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError
from solver.flow.maxflow import FlowNetwork, _add_excess, _cut_capacity, _dinic, _inflow, _repair

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


def _join(first: list[tuple[Path, int]], second: list[tuple[Path, int]],
          into: dict[Path, int]) -> None:
    """Concatenate two equal-size path lists unit by unit (u..w + w..t) into ``into``."""
    i = j = 0
    a_rem = first[0][1] if first else 0
    b_rem = second[0][1] if second else 0
    while i < len(first) and j < len(second):
        use = min(a_rem, b_rem)
        path = first[i][0] + second[j][0][1:]
        into[path] = into.get(path, 0) + use
        a_rem -= use
        b_rem -= use
        if a_rem == 0:
            i += 1
            if i < len(first):
                a_rem = first[i][1]
        if b_rem == 0:
            j += 1
            if j < len(second):
                b_rem = second[j][1]


@njit
def _initial_flows(indptr, head, rev, cap, flows, s, targets, need, level, it, queue, stack):
    """One s-v flow of value ``need`` per target (rows of ``flows`` are residual networks)."""
    for i in range(targets.shape[0]):
        res = flows[i]
        for a in range(res.shape[0]):
            res[a] = cap[a]
        got = _dinic(indptr, head, rev, res, s, targets[i], need, level, it, queue, stack)
        if got < need:
            return i
    return -1


@njit
def _trial_split(indptr, head, rev, tail, cap, flows, s, targets, need, auw, awt, aut, g, order,
                 touched, nodes, amounts, level, it, queue, stack):
    """Tentatively split g units of (u,w),(w,t) onto (u,t); repair every stored s-v flow.

    Returns (max deficit capped at g, number of targets processed, error flag). Flows that already
    fit the new capacities cost nothing; the others are repaired locally.
    """
    cap[auw] -= g
    cap[awt] -= g
    if aut >= 0:
        cap[aut] += g
    worst = 0
    processed = 0
    n_t = order.shape[0]
    for idx in range(n_t):
        i = order[idx]
        res = flows[i]
        processed = idx + 1
        if aut >= 0:
            res[aut] += g
        if res[auw] >= g and res[awt] >= g:
            res[auw] -= g
            res[awt] -= g
            touched[i] = 0
            continue
        touched[i] = 1
        m = 0
        over = _cut_capacity(res, rev, auw, -g)
        if over > 0:
            m = _add_excess(nodes, amounts, m, tail[auw], over)
            m = _add_excess(nodes, amounts, m, head[auw], -over)
        over = _cut_capacity(res, rev, awt, -g)
        if over > 0:
            m = _add_excess(nodes, amounts, m, tail[awt], over)
            m = _add_excess(nodes, amounts, m, head[awt], -over)
        value = _repair(indptr, head, rev, cap, res, s, targets[i], need, nodes, amounts, m,
                        level, it, queue, stack)
        if value < 0:
            return worst, processed, 1
        if need - value > worst:
            worst = need - value
            for j in range(idx, 0, -1):
                order[j] = order[j - 1]
            order[0] = i
            if worst >= g:
                worst = g
                break
    return worst, processed, 0


@njit
def _settle_split(indptr, head, rev, tail, cap, flows, s, targets, need, auw, awt, aut, g, gamma,
                  order, processed, touched, nodes, amounts, level, it, queue, stack):
    """Undo ``g - gamma`` of a tentative split and restore every stored flow to value ``need``."""
    back = g - gamma
    if back == 0:
        return 0  # the whole split was admissible: every processed row already holds need
    cap[auw] += back
    cap[awt] += back
    if aut >= 0:
        cap[aut] -= back
    for idx in range(processed):
        i = order[idx]
        res = flows[i]
        res[auw] += back
        res[awt] += back
        if aut >= 0:
            over = _cut_capacity(res, rev, aut, -back)
            if over > 0:
                m = _add_excess(nodes, amounts, 0, tail[aut], over)
                m = _add_excess(nodes, amounts, m, head[aut], -over)
                value = _repair(indptr, head, rev, cap, res, s, targets[i], need, nodes, amounts,
                                m, level, it, queue, stack)
                if value < need:
                    return 1
                continue
        if touched[i] == 1:
            # a repaired row may have lost value in the trial: top it up again (gamma is
            # admissible, so every target can reach need again)
            value = _inflow(indptr, cap, res, targets[i])
            if value < need:
                value += _dinic(indptr, head, rev, res, s, targets[i], need - value, level, it,
                                queue, stack)
            if value < need:
                return 1
    return 0


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
    n = fabric.n
    N = fabric.num_compute
    need = N * k
    s = n
    cur: dict[tuple[int, int], int] = {e: c for e, c in caps.items() if c > 0}
    paths: dict[tuple[int, int], dict[Path, int]] = {e: {e: c} for e, c in cur.items()}
    switches = [v for v in range(n) if not fabric.is_compute[v]]
    targets = np.asarray(fabric.compute, dtype=np.int64)
    order = np.arange(N, dtype=np.int64)
    touched = np.zeros(N, dtype=np.int64)
    nodes = np.zeros(8, dtype=np.int64)
    amounts = np.zeros(8, dtype=np.int64)
    num_splits = 0
    num_trials = 0
    flows = None  # residual networks, one row per target, for the current network
    prev_pairs: list[tuple[int, int]] = []
    prev_net: FlowNetwork | None = None
    graph = _Adjacency(cur)
    for v in range(n):
        graph.inn.setdefault(v, set())
        graph.out.setdefault(v, set())
    remaining = list(switches)
    done = 0
    while remaining:
        # a batch of pairwise non-adjacent switches shares one flow network
        batch, later, blocked = [], [], set()
        for w in remaining:
            if w in blocked:
                later.append(w)
                continue
            batch.append(w)
            blocked.update(graph.inn[w])
            blocked.update(graph.out[w])
        remaining = later
        if check is not None:
            check()
        pairs = list(cur)
        extra = []
        for w in batch:
            ins, outs = sorted(graph.inn[w]), sorted(graph.out[w])
            extra += [(u, t) for u in ins for t in outs if u != t and (u, t) not in cur]
        extra = list(dict.fromkeys(extra))
        all_pairs = pairs + extra
        index = {p: i for i, p in enumerate(all_pairs)}
        tails = [u for u, _ in all_pairs] + [s] * N
        heads = [v for _, v in all_pairs] + list(fabric.compute)
        ecaps = [cur.get(p, 0) for p in all_pairs] + [k] * N
        net = FlowNetwork(n + 1, tails, heads, ecaps)
        arc = net.edge_arc
        capv = net.cap
        flows = _carry_flows(prev_net, prev_pairs, flows, net, all_pairs, N, index)
        if flows is None:
            flows = np.empty((N, capv.shape[0]), dtype=np.int64)
            bad = _initial_flows(net.indptr, net.head, net.rev, capv, flows, s, targets, need,
                                 net._level, net._it, net._queue, net._stack)
            if bad >= 0:
                raise SolverError(
                    f"internal error: compute node {fabric.names[targets[bad]]!r} cannot receive "
                    "its share before switch removal"
                )
        prev_net, prev_pairs = net, all_pairs
        bufs = (net._level, net._it, net._queue, net._stack)
        for w in batch:
            ins, outs = sorted(graph.inn[w]), sorted(graph.out[w])
            tot_in = sum(cur[(u, w)] for u in ins)
            tot_out = sum(cur[(w, t)] for t in outs)
            # split off every edge of the smaller side (both sides when balanced); whatever is
            # left on the larger side afterwards carries no flow and is dropped
            by_in = tot_in <= tot_out
            primary, other = (ins, outs) if by_in else (outs, ins)
            for p in primary:
                edge = (p, w) if by_in else (w, p)
                # partners q != p first (rotated to start after p), the self-pair last
                rot = [q for q in other if q > p] + [q for q in other if q < p]
                share = cur[edge]
                first = rot
                if spread and rot:
                    # first pass: equal shares (of at least k/4 units, so tree classes do not
                    # shatter) to the partners farthest from p without w
                    first = _far_first(graph, fabric.is_compute, p, w, rot, by_in,
                                       share // max(1, k // 4))
                    share = -(-share // len(first))
                if p in other:
                    rot.append(p)
                passes = [(q, share) for q in (first if share < cur[edge] else rot)]
                if share < cur[edge]:
                    passes += [(q, None) for q in rot]
                # a pair refused earlier can become admissible after other splits: keep cycling
                # through the partners until the edge is gone or a whole round changes nothing
                progress_mark = -1
                i = 0
                while i < len(passes):
                    q, limit = passes[i]
                    i += 1
                    if i == len(passes) and cur.get(edge, 0) and progress_mark != num_splits:
                        progress_mark = num_splits
                        passes += [(x, None) for x in rot]
                    u, t = (p, q) if by_in else (q, p)
                    a = cur.get((u, w), 0)
                    b = cur.get((w, t), 0)
                    if cur.get(edge, 0) == 0:
                        break
                    if a == 0 or b == 0:
                        continue
                    if check is not None:
                        check()
                    g = min(a, b) if limit is None else min(a, b, limit)
                    auw = int(arc[index[(u, w)]])
                    awt = int(arc[index[(w, t)]])
                    aut = int(arc[index[(u, t)]]) if u != t else -1
                    args = (net.indptr, net.head, net.rev, net.tail, capv, flows, s, targets,
                            need, auw, awt, aut, g)
                    deficit, processed, err = _trial_split(*args, order, touched, nodes,
                                                           amounts, *bufs)
                    num_trials += 1
                    gamma = g - min(int(deficit), g)
                    if err == 0:
                        err = _settle_split(*args, gamma, order, processed, touched,
                                            nodes, amounts, *bufs)
                    if err:
                        raise SolverError("internal error: flow repair failed in switch removal")
                    if gamma == 0:
                        continue
                    num_splits += 1
                    first = _take(paths[(u, w)], gamma)
                    second = _take(paths[(w, t)], gamma)
                    graph.set((u, w), a - gamma)
                    graph.set((w, t), b - gamma)
                    if u != t:
                        graph.set((u, t), cur.get((u, t), 0) + gamma)
                        _join(first, second, paths.setdefault((u, t), {}))
                if cur.get(edge, 0):
                    side = "incoming" if by_in else "outgoing"
                    raise IncompleteSplit(
                        f"switch {fabric.names[w]!r} cannot forward all of its {side} capacity "
                        f"(in {tot_in}, out {tot_out} units; switches cannot replicate data)"
                    )
            # the larger side's remainder: no flow can use it any more
            for q in other:
                graph.set((q, w) if by_in is False else (w, q), 0)
            if graph.out[w] or graph.inn[w]:
                raise SolverError(
                    f"internal error: switch {fabric.names[w]!r} keeps capacity after splitting"
                )
            for u in ins:
                paths.pop((u, w), None)
            for t in outs:
                paths.pop((w, t), None)
            done += 1
            if progress is not None:
                progress(done / len(switches))
    comp = set(fabric.compute)
    out_caps = {e: c for e, c in cur.items() if c > 0 and e[0] in comp and e[1] in comp}
    out_paths = {e: paths[e] for e in out_caps}
    return SplitResult(out_caps, out_paths, num_splits, num_trials)


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
        for (u, v) in cur:
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
