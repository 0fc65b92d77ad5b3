"""The exact optimum of a (modified) fabric for one collective, with its bottleneck cut.

This is step 1 of the solver alone (:func:`solver.algorithm.optimum.compute_optimum`): a study
needs the optimum of hundreds of fabrics, not their trees. ``starts`` are bottleneck sets (node
ids) of a similar fabric, e.g. the intact one: the search starts from the best of them, which is
exact whatever they are (the search stops only when no max-flow finds a better set) and usually
saves most iterations. A fabric whose compute nodes are not strongly connected is a result
(``connected=False``, optimum 0), not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from solver.algorithm.optimum import compute_optimum
from solver.flow.csr import IndexedFabric
from solver.model.topology import Topology


@dataclass(frozen=True)
class Bottleneck:
    """A bottleneck cut: the set S (node ids), its compute nodes and the links that bind.

    ``links`` are directed node pairs "u->v": leaving S for allgather, entering S for
    reduce-scatter (as in :class:`solver.model.schedule.BottleneckCut`).
    """

    nodes: tuple[str, ...]
    compute_inside: int
    bandwidth: Fraction  # GB/s crossing the cut
    links: tuple[str, ...]


@dataclass(frozen=True)
class FabricOptimum:
    """The exact optimum (GB/s, nccl-tests algbw) of a fabric for a collective."""

    algbw: Fraction
    connected: bool
    bottleneck: Bottleneck | None  # the binding phase's cut (None when disconnected)
    starts: tuple[tuple[str, ...], ...] = ()  # (allgather S, reduce-scatter S) for warm starts


def strongly_connected(fabric: IndexedFabric) -> bool:
    """True when there are >= 2 compute nodes and each reaches every other one."""
    if fabric.num_compute < 2:
        return False
    out: list[list[int]] = [[] for _ in range(fabric.n)]
    inn: list[list[int]] = [[] for _ in range(fabric.n)]
    for u, v in fabric.edges:
        out[u].append(v)
        inn[v].append(u)
    first = fabric.compute[0]
    for adj in (out, inn):
        seen = {first}
        stack = [first]
        while stack:
            for w in adj[stack.pop()]:
                if w not in seen:
                    seen.add(w)
                    stack.append(w)
        if any(c not in seen for c in fabric.compute):
            return False
    return True


def _phase(topo: Topology, start: Sequence[str], entering: bool):
    """(algbw, Bottleneck, S) of an allgather on ``topo``; None when disconnected."""
    fabric = IndexedFabric.from_topology(topo)
    if not strongly_connected(fabric):
        return None
    inside = set(start)
    starts = [[name in inside for name in fabric.names]] if start else []
    opt = compute_optimum(fabric, start=starts)
    names = fabric.names
    links = []
    for (u, v) in fabric.edges:
        if opt.cut[u] and not opt.cut[v]:
            links.append(f"{names[v]}->{names[u]}" if entering else f"{names[u]}->{names[v]}")
    nodes = tuple(names[i] for i in range(fabric.n) if opt.cut[i])
    return opt.algbw, Bottleneck(nodes, opt.cut_compute, opt.cut_bandwidth, tuple(links)), nodes


def fabric_optimum(topo: Topology, collective: str = "allgather",
                   starts: Sequence[Sequence[str]] = ()) -> FabricOptimum:
    """Exact optimum of ``topo`` for ``collective`` (the ``optimal_algbw_exact`` of a solve).

    ``starts``: (allgather S, reduce-scatter S) node-id sets to start the searches from.
    Reduce-scatter is the allgather of the reversed fabric; allreduce takes both phases in turn
    (``1 / (1/rs + 1/ag)``), and its bottleneck is the slower phase's cut.
    """
    ag_start = tuple(starts[0]) if len(starts) > 0 else ()
    rs_start = tuple(starts[1]) if len(starts) > 1 else ag_start
    symmetric = all(not link.directed for link in topo.links)
    ag = rs = None
    if collective in ("allgather", "allreduce") or symmetric:
        ag = _phase(topo, ag_start, entering=False)
        if ag is None:
            return FabricOptimum(Fraction(0), False, None)
    if collective in ("reduce-scatter", "allreduce"):
        if symmetric:
            rs = (ag[0], Bottleneck(ag[1].nodes, ag[1].compute_inside, ag[1].bandwidth,
                                    tuple(_flip(x) for x in ag[1].links)), ag[2])
        else:
            rs = _phase(topo.reversed(), rs_start, entering=True)
            if rs is None:
                return FabricOptimum(Fraction(0), False, None)
    if collective == "allgather":
        return FabricOptimum(ag[0], True, ag[1], (ag[2], ag[2]))
    if collective == "reduce-scatter":
        return FabricOptimum(rs[0], True, rs[1], (rs[2] if ag is None else ag[2], rs[2]))
    algbw = 1 / (1 / rs[0] + 1 / ag[0])
    binding = rs[1] if rs[0] < ag[0] else ag[1]
    return FabricOptimum(algbw, True, binding, (ag[2], rs[2]))


def _flip(pair: str) -> str:
    u, v = pair.split("->", 1)
    return f"{v}->{u}"
