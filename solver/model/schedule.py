"""The result of a solve: a plain, frozen description of a collective schedule.

Everything downstream (CLI, exporters, simulator, GUI) reads :class:`Schedule`; nothing in it
refers to solver internals. Node references are node ids of :attr:`Schedule.topology`.

Conventions
-----------
- ``allgather``: each :class:`Tree` is an out-tree from ``root`` spanning every compute node; each
  :class:`TreeEdge` goes parent -> child (``src`` -> ``dst``) along ``path``.
- ``reduce-scatter``: aggregation trees; each edge goes child -> parent (``src`` is the child, data
  flows toward ``root``), ``path`` runs from ``src`` to ``dst``.
- ``allreduce``: ``phases`` holds the reduce-scatter schedule then the allgather schedule;
  ``trees`` is empty at the top level.
- Edges of a tree are listed breadth-first from the root: an edge touching depth d comes before
  any edge touching depth d+1.
- ``weight`` is the tree's share of its root's data: multiplicity / k; a root's weights sum to 1.
- ``link_load[i].load`` = data crossing that directed link ÷ (bandwidth × schedule time): 1 on the
  links that limit the schedule, between 0 and 1 elsewhere.
- Rates are GB/s; algbw follows nccl-tests: message size M / time (for allreduce, M is the
  per-rank buffer and time is reduce-scatter time + allgather time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from solver.model.topology import Topology, fraction_to_json

COLLECTIVES = ("allgather", "reduce-scatter", "allreduce")


@dataclass(frozen=True)
class TreeEdge:
    """One logical edge of a tree, between two compute nodes, routed on a physical path."""

    src: str
    dst: str
    path: tuple[str, ...]  # src, switches..., dst


@dataclass(frozen=True)
class Tree:
    """A spanning tree over the compute nodes, carrying ``weight`` of its root's shard."""

    root: str
    multiplicity: int
    weight: Fraction
    edges: tuple[TreeEdge, ...]

    def depth_of(self) -> dict[str, int]:
        """Depth of every compute node (root = 0), counted in logical edges, whatever the order
        of the edges (a tree read from a file need not list parents first)."""
        adjacent: dict[str, list[str]] = {}
        for e in self.edges:
            adjacent.setdefault(e.src, []).append(e.dst)
            adjacent.setdefault(e.dst, []).append(e.src)
        depth = {self.root: 0}
        frontier = [self.root]
        while frontier:
            nxt = []
            for u in frontier:
                for v in adjacent.get(u, ()):
                    if v not in depth:
                        depth[v] = depth[u] + 1
                        nxt.append(v)
            frontier = nxt
        return depth

    @property
    def height(self) -> int:
        """Depth of the deepest compute node (as :meth:`depth_of`; quicker when every edge
        comes after its parent's, as the solver lists them)."""
        depth = {self.root: 0}
        get = depth.get
        for e in self.edges:
            d = get(e.src)
            if d is None or e.dst in depth:  # not parent-first (or not a tree): the general way
                return max(self.depth_of().values())
            depth[e.dst] = d + 1
        return max(depth.values())


@dataclass(frozen=True)
class BottleneckCut:
    """The vertex set S* that bounds the collective, with its numbers."""

    nodes: tuple[str, ...]
    compute_nodes_inside: int
    egress_bandwidth: Fraction  # B+(S*), GB/s
    links: tuple[tuple[str, str, Fraction], ...]  # directed links leaving S* with bandwidth


@dataclass(frozen=True)
class LinkLoad:
    source: str
    target: str
    bandwidth: Fraction
    load: Fraction


@dataclass(frozen=True)
class Schedule:
    """A collective schedule on ``topology`` (see the module docstring for conventions)."""

    topology: Topology
    collective: str
    k: int
    max_trees_per_root: int | None
    optimal_algbw_exact: Fraction
    algbw_exact: Fraction
    bottleneck: BottleneckCut
    trees: tuple[Tree, ...]
    link_load: tuple[LinkLoad, ...]
    timings: Mapping[str, float] = field(default_factory=dict, compare=False, hash=False)
    warnings: tuple[str, ...] = ()
    phases: tuple[Schedule, ...] = ()

    @property
    def optimal_algbw(self) -> float:
        return float(self.optimal_algbw_exact)

    @property
    def algbw(self) -> float:
        return float(self.algbw_exact)

    @property
    def num_compute_nodes(self) -> int:
        return len(self.topology.compute_ids)

    def all_trees(self) -> tuple[tuple[str, Tree], ...]:
        """(collective, tree) pairs, walking into allreduce phases."""
        if self.phases:
            return tuple(pair for p in self.phases for pair in p.all_trees())
        return tuple((self.collective, t) for t in self.trees)

    def tree_dict(self, collective: str, tree: Tree) -> dict[str, Any]:
        """One entry of the document's ``trees`` list (``collective`` is the tree's phase)."""
        d: dict[str, Any] = {
            "root": tree.root,
            "weight": float(tree.weight),
            "weight_exact": _frac_str(tree.weight),
            "multiplicity": tree.multiplicity,
            "height": tree.height,
            "edges": [{"src": e.src, "dst": e.dst, "path": list(e.path)} for e in tree.edges],
        }
        if self.phases:
            d["phase"] = collective
        return d

    def to_dict(self, *, with_trees: bool = True) -> dict[str, Any]:
        """The JSON document of ``forestcoll solve --json`` (and ``export --format json``); with
        ``with_trees=False`` its ``trees`` list is left empty (``num_trees`` still counts them) for
        a writer that streams them (:mod:`solver.io.schedule_json`)."""
        pairs = self.all_trees()
        trees = [self.tree_dict(coll, t) for coll, t in pairs] if with_trees else []
        cut = self.bottleneck
        return {
            "collective": self.collective,
            "num_compute_nodes": self.num_compute_nodes,
            "optimal_algbw": self.optimal_algbw,
            "optimal_algbw_exact": _frac_str(self.optimal_algbw_exact),
            "algbw": self.algbw,
            "algbw_exact": _frac_str(self.algbw_exact),
            "k": self.k,
            "max_trees_per_root": self.max_trees_per_root,
            "num_trees": len(pairs),
            "bottleneck": {
                "nodes": list(cut.nodes),
                "compute_nodes_inside": cut.compute_nodes_inside,
                "egress_bandwidth": float(cut.egress_bandwidth),
                "egress_bandwidth_exact": _frac_str(cut.egress_bandwidth),
                "links": [
                    {"source": u, "target": v, "bandwidth": fraction_to_json(b)}
                    for u, v, b in cut.links
                ],
            },
            "trees": trees,
            "link_load": [
                {"source": ll.source, "target": ll.target, "load": float(ll.load)}
                for ll in self.link_load
            ],
            "timings": dict(self.timings),
            "warnings": list(self.warnings),
        }


def _frac_str(value: Fraction) -> str:
    return (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )
