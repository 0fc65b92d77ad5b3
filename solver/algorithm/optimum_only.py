"""The exact optimum and bottleneck cut of a collective without its trees (``solve
--optimum-only``, and what ``solve`` falls back to when the full schedule is over its size limit).

The optimum is :func:`solver.algorithm.optimum.compute_optimum` with one max-flow sink per orbit
of the compute nodes (:func:`solver.algorithm.orbits.compute_orbits`: verified automorphisms
found tier by tier); reduce-scatter is the allgather of the reversed fabric (its cut's links are
those entering S), allreduce their harmonic combination (time = 1/rs + 1/ag, each phase at its
optimum). Each cut's bound is re-computed from the fabric before it is returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from solver.algorithm.cost import check_optimum
from solver.algorithm.optimum import compute_optimum, cut_ratio
from solver.algorithm.orbits import Orbits, compute_orbits
from solver.flow.csr import IndexedFabric
from solver.model.errors import SolverError
from solver.model.schedule import COLLECTIVES, BottleneckCut
from solver.model.topology import Topology, validate

ProgressFn = Callable[[str, float], None]


@dataclass(frozen=True)
class PhaseOptimum:
    """The optimum of one allgather or reduce-scatter phase and the cut that bounds it."""

    collective: str
    algbw: Fraction
    k: int  # trees per root at the optimum (what a schedule would use)
    cut: BottleneckCut
    orbits: int  # max-flow sinks used (one per verified orbit)
    orbit_text: str


@dataclass(frozen=True)
class OptimumResult:
    topology: Topology
    collective: str
    algbw: Fraction
    phases: tuple[PhaseOptimum, ...]
    timings: dict[str, float] = field(default_factory=dict)


def _phase(
    topo: Topology, collective: str, timings: dict[str, float], progress: ProgressFn | None
) -> PhaseOptimum:
    t0 = time.perf_counter()
    fabric = IndexedFabric.from_topology(topo)
    orbits: Orbits = compute_orbits(
        topo, fabric, None if progress is None else (lambda f: progress("orbits", f))
    )
    timings["orbits"] = timings.get("orbits", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    check_optimum(fabric, orbits.sinks)
    opt = compute_optimum(
        fabric,
        sinks=orbits.sinks,
        progress=None if progress is None else (lambda f: progress("optimum", f)),
    )
    inside, out = cut_ratio(fabric, opt.cut)
    if Fraction(out, fabric.scale) / inside * fabric.num_compute != opt.algbw:
        raise SolverError("internal error: the bottleneck cut does not give the optimum")
    timings["optimum"] = timings.get("optimum", 0.0) + time.perf_counter() - t0
    entering = collective == "reduce-scatter"
    names = fabric.names
    links = []
    for (u, v), b in zip(fabric.edges, fabric.bandwidth):
        if opt.cut[u] and not opt.cut[v]:
            links.append((names[v], names[u], b) if entering else (names[u], names[v], b))
    cut = BottleneckCut(
        nodes=tuple(names[i] for i in range(fabric.n) if opt.cut[i]),
        compute_nodes_inside=opt.cut_compute,
        egress_bandwidth=opt.cut_bandwidth,
        links=tuple(links),
    )
    return PhaseOptimum(
        collective, opt.algbw, opt.k, cut, len(orbits.sinks), orbits.describe(fabric)
    )


def solve_optimum(
    topology: Topology, collective: str = "allgather", progress: ProgressFn | None = None
) -> OptimumResult:
    """The exact optimum algbw of ``collective`` on ``topology`` and its bottleneck cut(s)."""
    if collective not in COLLECTIVES:
        raise SolverError(
            f"unknown collective {collective!r} (choose one of {', '.join(COLLECTIVES)})"
        )
    validate(topology)
    timings: dict[str, float] = {}
    phases: list[PhaseOptimum] = []
    symmetric = all(not link.directed for link in topology.links)
    if collective in ("allgather", "allreduce"):
        phases.append(_phase(topology, "allgather", timings, progress))
    if collective in ("reduce-scatter", "allreduce"):
        if symmetric and phases:  # the reversed fabric is the same fabric
            ag = phases[0]
            phases.insert(
                0,
                PhaseOptimum(
                    "reduce-scatter", ag.algbw, ag.k, _entering(ag.cut), ag.orbits, ag.orbit_text
                ),
            )
        else:
            rs = _phase(topology.reversed(), "reduce-scatter", timings, progress)
            phases.insert(0, rs)
    if collective == "allreduce":
        algbw = 1 / sum((1 / p.algbw for p in phases), Fraction(0))
    else:
        algbw = phases[0].algbw
    return OptimumResult(topology, collective, algbw, tuple(phases), timings)


def _entering(cut: BottleneckCut) -> BottleneckCut:
    """The allgather cut of a symmetric fabric as the reduce-scatter one: the same set S, its
    links taken the other way (entering S)."""
    return BottleneckCut(
        cut.nodes,
        cut.compute_nodes_inside,
        cut.egress_bandwidth,
        tuple((v, u, b) for u, v, b in cut.links),
    )
