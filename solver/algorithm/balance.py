"""Unbalanced switches: trim what a switch cannot forward, and say so.

A switch neither stores nor replicates data, so in any real schedule the data entering a switch
equals the data leaving it. If a switch's in-bandwidth differs from its out-bandwidth (one-way
uplinks, asymmetric links), the cut bound may count bandwidth no schedule can use, and edge
splitting needs balanced switches. We scale the larger side of every unbalanced switch down to the
smaller one (exact fractions), repeat until all switches are balanced (trimming one switch can
unbalance a neighbouring one), and return human-readable warnings. The solve is then optimal for
the trimmed fabric.
"""

from __future__ import annotations

from fractions import Fraction

from solver.flow.csr import IndexedFabric
from solver.flow.maxflow import MAX_CAPACITY, FlowNetwork
from solver.model.errors import SolverError


def _fmt(x: Fraction) -> str:
    return f"{float(x):g}"


def balance_switches(fabric: IndexedFabric) -> tuple[IndexedFabric, list[str]]:
    """A fabric whose switches are balanced, and one warning per switch that was trimmed.

    First proportional scaling (a few rounds); if that does not settle (directed links between
    switches can keep passing the imbalance around), the switch-incident bandwidths become a
    maximum flow from the compute nodes through the switches back to compute nodes, which
    conserves flow at every switch exactly.
    """
    bw = dict(zip(fabric.edges, fabric.bandwidth))
    switches = [v for v in range(fabric.n) if not fabric.is_compute[v]]
    ins: dict[int, list[tuple[int, int]]] = {w: [] for w in switches}
    outs: dict[int, list[tuple[int, int]]] = {w: [] for w in switches}
    for u, v in bw:
        if v in ins:
            ins[v].append((u, v))
        if u in outs:
            outs[u].append((u, v))
    trimmed: dict[int, tuple[Fraction, Fraction]] = {}
    for _round in range(_ROUNDS):
        changed = False
        for w in switches:
            tin = sum((bw[e] for e in ins[w]), Fraction(0))
            tout = sum((bw[e] for e in outs[w]), Fraction(0))
            if tin == tout:
                continue
            trimmed.setdefault(w, (tin, tout))
            changed = True
            side, factor = (outs[w], tin / tout) if tout > tin else (ins[w], tout / tin)
            for e in side:
                bw[e] *= factor
        if not changed:
            break
    else:
        bw = _flow_balance(fabric, ins, outs)
    if not trimmed:
        return fabric, []
    warnings = []
    orig = dict(zip(fabric.edges, fabric.bandwidth))
    for w in switches:
        if all(bw[e] == orig[e] for e in ins[w] + outs[w]):
            continue
        tin = sum((orig[e] for e in ins[w]), Fraction(0))
        tout = sum((orig[e] for e in outs[w]), Fraction(0))
        kept = sum((bw[e] for e in ins[w]), Fraction(0))
        what = "is unbalanced" if tin != tout else "is next to an unbalanced switch"
        warnings.append(
            f"switch {fabric.names[w]!r} {what} (in {_fmt(tin)} GB/s, out {_fmt(tout)} GB/s): "
            f"trimmed to {_fmt(kept)} GB/s each way because a switch cannot store or replicate "
            "data; the schedule is optimal for this trimmed fabric"
        )
    new_bw = {e: b for e, b in bw.items() if b > 0}
    fixed = IndexedFabric.from_edges(fabric.names, fabric.is_compute, fabric.compute, new_bw)
    _check_reach(fixed, trimmed)
    return fixed, warnings


_ROUNDS = 30


def _flow_balance(fabric: IndexedFabric, ins, outs) -> dict[tuple[int, int], Fraction]:
    """Switch-incident bandwidths replaced by a max flow compute -> switches -> compute."""
    n = fabric.n
    src, dst = n, n + 1
    tails, heads, caps, index = [], [], [], []
    for i, ((u, v), b) in enumerate(zip(fabric.edges, fabric.bw_int)):
        if fabric.is_compute[u] and fabric.is_compute[v]:
            continue
        # compute endpoints are split: as a sender (fed by src) and as a receiver (to dst)
        tails.append(src if fabric.is_compute[u] else u)
        heads.append(dst if fabric.is_compute[v] else v)
        caps.append(b)
        index.append(i)
    if max(caps, default=0) >= MAX_CAPACITY:
        raise SolverError("unbalanced switches: bandwidths too fine-grained to trim exactly")
    net = FlowNetwork(n + 2, tails, heads, caps)
    net.max_flow(src, dst)
    flow = net.edge_flow()
    bw = dict(zip(fabric.edges, fabric.bandwidth))
    for j, i in enumerate(index):
        bw[fabric.edges[i]] = Fraction(int(flow[j]), fabric.scale)
    return bw


def _check_reach(fabric: IndexedFabric, trimmed: dict[int, tuple[Fraction, Fraction]]) -> None:
    out: list[list[int]] = [[] for _ in range(fabric.n)]
    inn: list[list[int]] = [[] for _ in range(fabric.n)]
    for u, v in fabric.edges:
        out[u].append(v)
        inn[v].append(u)

    def reach(start: int, adj: list[list[int]]) -> set[int]:
        seen = {start}
        stack = [start]
        while stack:
            for x in adj[stack.pop()]:
                if x not in seen:
                    seen.add(x)
                    stack.append(x)
        return seen

    first = fabric.compute[0]
    fwd, bwd = reach(first, out), reach(first, inn)
    for c in fabric.compute[1:]:
        if c not in fwd or c not in bwd:
            names = ", ".join(repr(fabric.names[w]) for w in trimmed)
            raise SolverError(
                f"unbalanced switch {names}: after trimming what it cannot forward (in != out "
                f"bandwidth), compute node {fabric.names[c]!r} is cut off from "
                f"{fabric.names[first]!r}"
            )


def balance_capacities(fabric: IndexedFabric, caps: list[int]) -> list[int]:
    """Integer capacities (per fabric edge) with every switch balanced, by trimming the larger side.

    Rounding (fixed k uses ``⌊U·b(e)⌋``) can unbalance a switch whose in- and out-links have
    different bandwidths. The larger side loses one unit at a time from its largest edge (lowest
    index on ties) until in = out; repeated until no switch changes (total capacity only drops).
    """
    caps = list(caps)
    ins: dict[int, list[int]] = {}
    outs: dict[int, list[int]] = {}
    for i, (u, v) in enumerate(fabric.edges):
        outs.setdefault(u, []).append(i)
        ins.setdefault(v, []).append(i)
    switches = [v for v in range(fabric.n) if not fabric.is_compute[v]]
    changed = True
    while changed:
        changed = False
        for w in switches:
            e_in, e_out = ins.get(w, []), outs.get(w, [])
            diff = sum(caps[i] for i in e_in) - sum(caps[i] for i in e_out)
            if diff == 0:
                continue
            changed = True
            side = e_in if diff > 0 else e_out
            for _ in range(abs(diff)):
                j = max(side, key=lambda i: (caps[i], -i))
                caps[j] -= 1
    return caps
