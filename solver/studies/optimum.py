"""The exact optimum of a (modified) fabric for one collective, with its bottleneck cut.

This is step 1 of the solver alone (:func:`solver.algorithm.optimum.compute_optimum`): a study
needs the optimum of hundreds of fabrics, not their trees. ``starts`` are bottleneck sets (node
ids) of a similar fabric, e.g. the intact one: the search starts from the best of them, which is
exact whatever they are (the search stops only when no max-flow finds a better set) and usually
saves most iterations. A fabric whose compute nodes are not strongly connected is a result
(``connected=False``, optimum 0), not an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from fractions import Fraction

from solver.algorithm.optimum import compute_optimum
from solver.algorithm.symmetry import box_symmetry
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


def _phase(
    fabric: IndexedFabric,
    start: Sequence[str],
    entering: bool,
    sinks: Sequence[int] | None = None,
):
    """(algbw, Bottleneck, S) of an allgather on ``fabric``; None when disconnected.

    ``sinks``: one compute node per orbit of compute nodes under automorphisms of ``fabric``
    (one max-flow per sink instead of one per compute node); None: every compute node.
    """
    if not strongly_connected(fabric):
        return None
    inside = set(start)
    starts = [[name in inside for name in fabric.names]] if start else []
    opt = compute_optimum(fabric, start=starts, sinks=sinks)
    names = fabric.names
    links = []
    for u, v in fabric.edges:
        if opt.cut[u] and not opt.cut[v]:
            links.append(f"{names[v]}->{names[u]}" if entering else f"{names[u]}->{names[v]}")
    nodes = tuple(names[i] for i in range(fabric.n) if opt.cut[i])
    return opt.algbw, Bottleneck(nodes, opt.cut_compute, opt.cut_bandwidth, tuple(links)), nodes


def fabric_optimum(
    topo: Topology,
    collective: str = "allgather",
    starts: Sequence[Sequence[str]] = (),
    symmetry: bool = False,
) -> FabricOptimum:
    """Exact optimum of ``topo`` for ``collective`` (the ``optimal_algbw_exact`` of a solve).

    ``starts``: (allgather S, reduce-scatter S) node-id sets to start the searches from.
    ``symmetry``: use the fabric's box translation, if it has one, to run fewer max-flows (for
    the intact fabric; a study's modified fabrics have lost that symmetry).
    Reduce-scatter is the allgather of the reversed fabric; allreduce takes both phases in turn
    (``1 / (1/rs + 1/ag)``), and its bottleneck is the slower phase's cut.
    """

    def fabric(reverse: bool) -> IndexedFabric:
        return IndexedFabric.from_topology(topo.reversed() if reverse else topo)

    sinks = None
    if symmetry:
        intact = fabric(False)
        sym = box_symmetry(topo, intact, structural=False)
        sinks = None if sym is None else sym.representatives(intact)
    symmetric = all(not link.directed for link in topo.links)
    return optimum_of(fabric, symmetric, collective, starts, sinks)


def optimum_of(
    fabric: Callable[[bool], IndexedFabric],
    symmetric: bool,
    collective: str,
    starts: Sequence[Sequence[str]] = (),
    sinks: Sequence[int] | None = None,
) -> FabricOptimum:
    """:func:`fabric_optimum` of the fabric ``fabric(False)`` (``fabric(True)``: reversed).

    ``sinks``: one compute node per orbit of an automorphism group of that fabric (also one of
    the reversed fabric: reversing links commutes with automorphisms).
    """
    ag_start = tuple(starts[0]) if len(starts) > 0 else ()
    rs_start = tuple(starts[1]) if len(starts) > 1 else ag_start
    ag = rs = None
    if collective in ("allgather", "allreduce") or symmetric:
        ag = _phase(fabric(False), ag_start, entering=False, sinks=sinks)
        if ag is None:
            return FabricOptimum(Fraction(0), False, None)
    if collective in ("reduce-scatter", "allreduce"):
        if symmetric:
            assert ag is not None  # a symmetric fabric runs the allgather phase above
            algbw, cut, nodes = ag
            flipped = tuple(_flip(x) for x in cut.links)
            rs = (algbw, Bottleneck(cut.nodes, cut.compute_inside, cut.bandwidth, flipped), nodes)
        else:
            rs = _phase(fabric(True), rs_start, entering=True, sinks=sinks)
            if rs is None:
                return FabricOptimum(Fraction(0), False, None)
    if collective == "allgather":
        return FabricOptimum(ag[0], True, ag[1], (ag[2], ag[2]))
    if collective == "reduce-scatter":
        return FabricOptimum(rs[0], True, rs[1], (rs[2] if ag is None else ag[2], rs[2]))
    algbw = 1 / (1 / rs[0] + 1 / ag[0])
    binding = rs[1] if rs[0] < ag[0] else ag[1]
    return FabricOptimum(algbw, True, binding, (ag[2], rs[2]))


def derive(
    base: IndexedFabric,
    drop_nodes: Set[int] = frozenset(),
    changes: Mapping[tuple[int, int], Fraction] | None = None,
) -> IndexedFabric:
    """``base`` without ``drop_nodes`` (and their edges), with some directed edges at a new
    bandwidth (``changes``; 0 removes the edge). Unchanged edges keep their integers, so a
    study's fabric costs no Fraction arithmetic per edge (``IndexedFabric.from_topology`` did).
    """
    changes = changes or {}
    scale = base.scale
    for b in changes.values():
        scale = scale * b.denominator // math.gcd(scale, b.denominator)
    factor = scale // base.scale
    keep = [v for v in range(base.n) if v not in drop_nodes]
    index = {v: i for i, v in enumerate(keep)}
    edges, bandwidth, bw_int = [], [], []
    for i, (u, v) in enumerate(base.edges):
        if u in drop_nodes or v in drop_nodes:
            continue
        new = changes.get((u, v))
        if new is None:
            edges.append((index[u], index[v]))
            bandwidth.append(base.bandwidth[i])
            bw_int.append(base.bw_int[i] * factor)
        elif new > 0:
            edges.append((index[u], index[v]))
            bandwidth.append(new)
            bw_int.append(int(new * scale))
    return IndexedFabric(
        names=tuple(base.names[v] for v in keep),
        compute=tuple(index[v] for v in base.compute if v not in drop_nodes),
        is_compute=tuple(base.is_compute[v] for v in keep),
        edges=tuple(edges),
        bandwidth=tuple(bandwidth),
        scale=scale,
        bw_int=tuple(bw_int),
    )


def _flip(pair: str) -> str:
    u, v = pair.split("->", 1)
    return f"{v}->{u}"
