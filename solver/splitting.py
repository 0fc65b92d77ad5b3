"""Step 2: remove the switches by edge splitting, remembering the physical paths.

Integer capacities ``c(e)`` (``U·b(e)``) plus a super source ``s`` with capacity ``k`` to every
compute node satisfy ``λ(s, v) >= N·k`` for every compute v. At a switch w an in-edge (u, w) and
an out-edge (w, t) are replaced by γ units of a direct edge (u, t) (dropped when u = t), with γ
as large as keeps the invariant. The cuts whose value drops are exactly s-v cuts, so after a
*tentative* split of the full ``g = min(c(u,w), c(w,t))`` one cutoff max-flow per compute v gives
the deficit ``N·k - λ'(s, v)`` and ``γ = g - max deficit`` exactly (each affected cut loses g).
A balanced switch (in = out) can always be split off completely (Bang-Jensen, Frank, Jackson).

Each remaining edge keeps an ordered ``{physical path: units}`` record so step 4 can route the
logical compute-to-compute edges back through the switches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._jit import njit
from .csr import IndexedFabric
from .errors import SolverError
from .maxflow import FlowNetwork, _dinic

Path = tuple[int, ...]


@dataclass
class SplitResult:
    """Compute-to-compute capacities after splitting and the physical paths behind each edge."""

    caps: dict[tuple[int, int], int]
    paths: dict[tuple[int, int], dict[Path, int]]
    num_splits: int
    num_flows: int


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
def _max_deficit(indptr, head, rev, cap, res, s, targets, need, limit, order,
                 level, it, queue, stack):
    """Max over targets of ``need - flow(s, t)`` (0 if all reach ``need``), stopping at ``limit``.

    ``order`` (a permutation of targets' positions) is reordered so the worst target comes first
    next time. Returns (max deficit, number of flows run).
    """
    worst = 0
    flows = 0
    for idx in range(order.shape[0]):
        pos = order[idx]
        for a in range(res.shape[0]):
            res[a] = cap[a]
        f = _dinic(indptr, head, rev, res, s, targets[pos], need, level, it, queue, stack)
        flows += 1
        if need - f > worst:
            worst = need - f
            # move the failing target to the front
            for j in range(idx, 0, -1):
                order[j] = order[j - 1]
            order[0] = pos
            if worst >= limit:
                break
    return worst, flows


def split_switches(
    fabric: IndexedFabric,
    caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
    progress: Callable[[float], None] | None = None,
) -> SplitResult:
    """Split off every switch of ``fabric`` (see module docstring); ``caps`` by node pair."""
    n = fabric.n
    N = fabric.num_compute
    need = N * k
    s = n
    cur: dict[tuple[int, int], int] = {e: c for e, c in caps.items() if c > 0}
    paths: dict[tuple[int, int], dict[Path, int]] = {e: {e: c} for e, c in cur.items()}
    switches = [v for v in range(n) if not fabric.is_compute[v]]
    targets = np.asarray(fabric.compute, dtype=np.int64)
    order = np.arange(N, dtype=np.int64)
    num_splits = 0
    num_flows = 0
    for si, w in enumerate(switches):
        ins = [u for (u, x) in cur if x == w]
        outs = [t for (x, t) in cur if x == w]
        ins.sort()
        outs.sort()
        if not ins and not outs:
            continue
        tot_in = sum(cur[(u, w)] for u in ins)
        tot_out = sum(cur[(w, t)] for t in outs)
        if tot_in != tot_out:
            raise SolverError(
                f"switch {fabric.names[w]!r} is unbalanced after trimming "
                f"(in {tot_in}, out {tot_out} capacity units)"
            )
        # flow network of the current graph plus zero edges for every new pair (u, t)
        pairs = list(cur)
        extra = [(u, t) for u in ins for t in outs if u != t and (u, t) not in cur]
        all_pairs = pairs + extra
        index = {p: i for i, p in enumerate(all_pairs)}
        tails = [u for u, _ in all_pairs] + [s] * N
        heads = [v for _, v in all_pairs] + list(fabric.compute)
        ecaps = [cur.get(p, 0) for p in all_pairs] + [k] * N
        net = FlowNetwork(n + 1, tails, heads, ecaps)
        arc = net.edge_arc
        capv = net.cap
        for u in ins:
            # try partners t != u first (rotated to start after u), the self-pair last
            rot = [t for t in outs if t > u] + [t for t in outs if t < u]
            if u in outs:
                rot.append(u)
            for t in rot:
                a = cur.get((u, w), 0)
                if a == 0:
                    break
                b = cur.get((w, t), 0)
                if b == 0:
                    continue
                if check is not None:
                    check()
                g = min(a, b)
                auw = arc[index[(u, w)]]
                awt = arc[index[(w, t)]]
                capv[auw] -= g
                capv[awt] -= g
                aut = arc[index[(u, t)]] if u != t else -1
                if aut >= 0:
                    capv[aut] += g
                deficit, flows = _max_deficit(
                    net.indptr, net.head, net.rev, capv, net.res, s, targets, need, g, order,
                    net._level, net._it, net._queue, net._stack,
                )
                deficit = int(deficit)
                num_flows += int(flows)
                gamma = g - min(deficit, g)
                # settle the capacities at gamma
                capv[auw] += g - gamma
                capv[awt] += g - gamma
                if aut >= 0:
                    capv[aut] -= g - gamma
                if gamma == 0:
                    continue
                num_splits += 1
                first = _take(paths[(u, w)], gamma)
                second = _take(paths[(w, t)], gamma)
                _set(cur, (u, w), a - gamma)
                _set(cur, (w, t), b - gamma)
                if u != t:
                    _set(cur, (u, t), cur.get((u, t), 0) + gamma)
                    _join(first, second, paths.setdefault((u, t), {}))
            if cur.get((u, w), 0):
                raise SolverError(
                    f"internal error: could not split off edge {fabric.names[u]!r} -> "
                    f"{fabric.names[w]!r} at switch {fabric.names[w]!r}"
                )
        for t in outs:
            if cur.get((w, t), 0):
                raise SolverError(
                    f"internal error: switch {fabric.names[w]!r} keeps out-capacity after splitting"
                )
        for e in [e for e in paths if w in e]:
            del paths[e]
        if progress is not None:
            progress((si + 1) / len(switches))
    comp = set(fabric.compute)
    out_caps = {e: c for e, c in cur.items() if c > 0 and e[0] in comp and e[1] in comp}
    out_paths = {e: paths[e] for e in out_caps}
    return SplitResult(out_caps, out_paths, num_splits, num_flows)


def _set(cur: dict[tuple[int, int], int], e: tuple[int, int], value: int) -> None:
    if value:
        cur[e] = value
    else:
        cur.pop(e, None)
