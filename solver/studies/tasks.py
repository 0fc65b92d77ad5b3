"""What a Dask worker runs: one batch of study rows from a small, scattered context.

The context (the fabric, the collective, the change to apply and the intact fabric's bottleneck
sets for warm starts) is scattered to the workers once; a task carries only its batch of items
(elements, or sweep points). A row is a plain dict: exact values as "p/q" strings, floats for
display; the client adds what needs the whole study (change against the base, orbit members).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from solver.flow.csr import IndexedFabric
from solver.model.errors import ForestCollError
from solver.model.topology import Topology, fraction_to_json
from solver.studies.elements import Element
from solver.studies.optimum import FabricOptimum, derive, optimum_of

FAILURES, UPGRADE, SWEEP = "failures", "upgrade", "sweep"
STUDIES = (FAILURES, UPGRADE, SWEEP)


@dataclass(frozen=True)
class SweepPoint:
    """One point of a sweep: a template with parameters, or a fabric read from a file."""

    key: str  # "n=2,nic_bw=25" or the file name
    params: Mapping[str, Any] = field(default_factory=dict)
    template: str | None = None
    topology: Topology | None = None


@dataclass(frozen=True)
class TaskContext:
    """Everything a worker needs besides its batch (scattered once)."""

    study: str
    collective: str
    topology: Topology | None = None
    factor: Fraction | None = None
    add: Fraction | None = None
    starts: tuple[tuple[str, ...], ...] = ()
    boxes: tuple[tuple[tuple[str, ...], ...], ...] = ()  # symmetry.box_classes (sinks)


def exact_text(value: Fraction) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )


def optimum_fields(opt: FabricOptimum) -> dict[str, Any]:
    """The row fields every study shares: optimum, connectivity and the bottleneck cut."""
    cut = opt.bottleneck
    return {
        "algbw": float(opt.algbw),
        "algbw_exact": exact_text(opt.algbw),
        "connected": opt.connected,
        "cut_compute": cut.compute_inside if cut else 0,
        "cut_bandwidth": float(cut.bandwidth) if cut else 0.0,
        "cut_links": list(cut.links) if cut else [],
    }


class _Base:
    """The intact fabric's integer views, built once per worker and context."""

    def __init__(self, topo: Topology, boxes=()) -> None:
        self.topo = topo
        self.index = {name: i for i, name in enumerate(topo.node_ids)}
        compute = {i for i, node in enumerate(topo.nodes) if node.is_compute}
        # per class of interchangeable boxes: each box's compute nodes (indices) and all nodes
        self.boxes = [
            [
                (
                    frozenset(self.index[v] for v in box),
                    [self.index[v] for v in box if self.index[v] in compute],
                )
                for box in cls
            ]
            for cls in boxes
        ]
        self.symmetric = all(not link.directed for link in topo.links)
        self.fabrics: dict[bool, IndexedFabric] = {}
        self.bandwidths: dict[bool, dict[tuple[int, int], Fraction]] = {}

    def fabric(self, reverse: bool) -> IndexedFabric:
        if reverse not in self.fabrics:
            topo = self.topo.reversed() if reverse else self.topo
            f = IndexedFabric.from_topology(topo)
            self.fabrics[reverse] = f
            self.bandwidths[reverse] = dict(zip(f.edges, f.bandwidth))
        return self.fabrics[reverse]

    def modified(self, ctx: TaskContext, element: Element, reverse: bool) -> IndexedFabric:
        """The fabric with ``element`` removed (failures) or upgraded (upgrade study)."""
        base = self.fabric(reverse)
        if element.node is not None:
            return derive(base, frozenset({self.index[element.node]}))
        bws = self.bandwidths[reverse]
        changes: dict[tuple[int, int], Fraction] = {}
        for i in element.links:
            link = self.topo.links[i]
            u, v = self.index[link.source], self.index[link.target]
            pairs = [(u, v)] if link.directed else [(u, v), (v, u)]
            if ctx.study == FAILURES:
                delta = -link.bandwidth
            elif ctx.factor is not None:
                delta = link.bandwidth * (ctx.factor - 1)
            else:
                delta = ctx.add
            for a, b in pairs:
                pair = (b, a) if reverse else (a, b)
                changes[pair] = changes.get(pair, bws[pair]) + delta
        return derive(base, frozenset(), changes)

    def touched(self, element: Element) -> set[int]:
        if element.node is not None:
            return {self.index[element.node]}
        out = set()
        for i in element.links:
            out.update(
                (self.index[self.topo.links[i].source], self.index[self.topo.links[i].target])
            )
        return out

    def sinks(self, element: Element) -> list[int] | None:
        """One max-flow sink per orbit of compute nodes of the changed fabric, using the box
        swaps that fix ``element`` (boxes it does not touch stay interchangeable), as indices
        of the derived fabric; None without such swaps."""
        touched = self.touched(element)
        skip: set[int] = set()
        for cls in self.boxes:
            untouched = [computes for nodes, computes in cls if not nodes & touched]
            for computes in untouched[1:]:
                skip.update(computes)
        if not skip:
            return None
        dropped = touched if element.node is not None else set()
        kept = [v for v in range(len(self.topo.nodes)) if v not in dropped]
        position = {v: i for i, v in enumerate(kept)}
        return [
            position[v] for v in self.fabric(False).compute if v not in skip and v not in dropped
        ]


_BASES: dict[int, tuple[TaskContext, _Base]] = {}


def _base(ctx: TaskContext) -> _Base:
    entry = _BASES.get(id(ctx))
    if entry is None or entry[0] is not ctx:
        if len(_BASES) > 4:
            _BASES.clear()
        entry = _BASES[id(ctx)] = (ctx, _Base(ctx.topology, ctx.boxes))
    return entry[1]


def _element_row(ctx: TaskContext, element: Element) -> dict[str, Any]:
    base = _base(ctx)
    opt = optimum_of(
        lambda reverse: base.modified(ctx, element, reverse),
        base.symmetric,
        ctx.collective,
        ctx.starts,
        sinks=base.sinks(element),
    )
    return {"element": element.key, "kind": element.kind, **optimum_fields(opt)}


def _sweep_row(ctx: TaskContext, point: SweepPoint) -> dict[str, Any]:
    from solver.algorithm.pipeline import solve
    from solver.io.templates import make

    row: dict[str, Any] = {"point": point.key, "kind": "template" if point.template else "file"}
    row.update({name: value for name, value in point.params.items()})
    row["params"] = dict(point.params)
    started = time.perf_counter()
    try:
        topo = make(point.template, **point.params) if point.template else point.topology
        schedule = solve(topo, collective=ctx.collective)
    except ForestCollError as exc:
        row.update(
            algbw=0.0,
            algbw_exact="0",
            connected=False,
            cut_compute=0,
            cut_bandwidth=0.0,
            cut_links=[],
            k=0,
            height_max=0,
            height_mean=0.0,
            compute_nodes=0,
            solve_time=time.perf_counter() - started,
            error=str(exc),
        )
        return row
    elapsed = time.perf_counter() - started
    trees = [t for _, t in schedule.all_trees()]
    weight = sum(t.multiplicity for t in trees)
    cut = schedule.bottleneck
    row.update(
        algbw=float(schedule.optimal_algbw_exact),
        algbw_exact=exact_text(schedule.optimal_algbw_exact),
        connected=True,
        cut_compute=cut.compute_nodes_inside,
        cut_bandwidth=float(cut.egress_bandwidth),
        cut_links=[f"{u}->{v}" for u, v, _ in cut.links],
        k=schedule.k,
        height_max=max((t.height for t in trees), default=0),
        height_mean=sum(t.height * t.multiplicity for t in trees) / weight if weight else 0.0,
        compute_nodes=schedule.num_compute_nodes,
        solve_time=elapsed,
        error="",
    )
    return row


def evaluate_batch(ctx: TaskContext, items: Sequence[Element | SweepPoint]) -> list[dict[str, Any]]:
    """Rows for a batch of items (the Dask task)."""
    if ctx.study == SWEEP:
        return [_sweep_row(ctx, item) for item in items]
    return [_element_row(ctx, item) for item in items]


def json_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as JSON values (exact fractions kept readable)."""
    return {k: fraction_to_json(v) if isinstance(v, Fraction) else v for k, v in params.items()}
