"""Orbits of compute nodes under automorphisms found tier by tier: the sinks of the exact optimum
on fabrics whose boxes are not one translation (HPN segments, Clos zones, 3-tier SuperPODs).

:mod:`solver.algorithm.symmetry` finds one translation that moves every box to the next and
fixes every other node; on a 3-tier fabric there is none (moving the last host of a segment to
the first of the next moves its ToRs). Here many smaller automorphisms are found instead, each
moving only *sibling boxes*: the network tiers farthest from the compute nodes are set aside
(switches grouped by their distance from the compute nodes, role, degree and bandwidth), the
connected parts left that hold compute nodes are boxes, and boxes of the same size attached to
the same set-aside nodes by the same links (the hosts of one rack, the racks of one zone, the
zones of a cluster) are siblings. The cyclic shift of a sibling class (box i to box i + 1, node
by node in a canonical order: colour refinement inside the box from the links to the set-aside
nodes, ties broken by file order, else by individualisation in small boxes) is kept only if it
is an automorphism, checked link by link on every link it moves.

The orbits of the group these shifts generate are the connected parts of ``v ~ σ(v)`` over all
kept shifts σ (union-find), and max-flow values to compute nodes of one orbit are equal, so one
sink per orbit gives the same exact optimum (:func:`solver.algorithm.optimum.compute_optimum`).
Nothing is assumed: a shift that is not an automorphism is dropped, and then the orbits are
only smaller (more sinks, same result).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from solver.flow.csr import IndexedFabric
from solver.model.topology import Topology

#: boxes are first ordered by one colour refinement with the remaining ties broken by file order,
#: which lines up siblings written alike (templates, most exporters); when that shift is not an
#: automorphism, boxes up to this many nodes are ordered again with individualisation (ties
#: broken by telling one node apart and refining again), larger ones lose that shift
INDIVIDUALISE_MAX = 64


#: a box's own links per node: (neighbour, integer-scaled bandwidth)
LocalLinks = Mapping[int, Sequence[tuple[int, int]]]


def _refine(members: list[int], colour: dict[int, int], local: LocalLinks) -> dict[int, int]:
    """Colour refinement inside one box until no class splits; colours renamed 0.. in the
    order of their signatures, so isomorphic boxes get the same names."""
    while True:
        sig = {v: (colour[v], tuple(sorted((colour[w], b) for w, b in local[v]))) for v in members}
        names = {s: i for i, s in enumerate(sorted(set(sig.values())))}
        new = {v: names[sig[v]] for v in members}
        if len(names) == len(set(colour.values())):
            return new
        colour = new


def _canonical_order(
    fabric: IndexedFabric, members: list[int], local: LocalLinks, anchor: dict[int, tuple]
) -> list[int]:
    """Members in a canonical order: colours from kind, from their links to the set-aside nodes
    (``anchor``: a sibling shift fixes those) and from a refinement of the box's own links;
    while a class still holds several members, its first member in file order is told apart
    and the refinement repeated (individualisation-refinement)."""
    start = {v: (0 if fabric.is_compute[v] else 1, anchor[v]) for v in members}
    names = {c: i for i, c in enumerate(sorted(set(start.values())))}
    colour = _refine(members, {v: names[c] for v, c in start.items()}, local)
    while len(set(colour.values())) < len(members):
        sizes: dict[int, int] = {}
        for c in colour.values():
            sizes[c] = sizes.get(c, 0) + 1
        tied = min(c for c, k in sizes.items() if k > 1)
        chosen = min(v for v in members if colour[v] == tied)
        colour = _refine(members, {v: 2 * colour[v] + (v != chosen) for v in members}, local)
    return sorted(members, key=lambda v: colour[v])


@dataclass(frozen=True)
class Orbits:
    """Compute-node orbits of a group of verified automorphisms of a fabric."""

    sinks: tuple[int, ...]  # one compute node per orbit (the first in rank order)
    generators: int  # verified sibling shifts
    levels: tuple[str, ...]  # per partition tried: what was set aside, shifts kept / tried

    def describe(self, fabric: IndexedFabric) -> str:
        return (
            f"{len(self.sinks)} orbit{'s' if len(self.sinks) != 1 else ''} of "
            f"{fabric.num_compute} compute nodes ({self.generators} verified sibling "
            f"shift{'s' if self.generators != 1 else ''})"
        )


def _distances(fabric: IndexedFabric, near: list[list[int]]) -> list[int]:
    """Hops from the nearest compute node, links taken both ways (-1: unreachable)."""
    dist = [-1] * fabric.n
    queue = deque(fabric.compute)
    for c in fabric.compute:
        dist[c] = 0
    while queue:
        u = queue.popleft()
        for w in near[u]:
            if dist[w] < 0:
                dist[w] = dist[u] + 1
                queue.append(w)
    return dist


def _components(n: int, edges, removed: list[bool]) -> list[int]:
    parent = list(range(n))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v in edges:
        if not removed[u] and not removed[v]:
            ru, rv = find(u), find(v)
            if ru != rv:
                parent[ru] = rv
    return [-1 if removed[v] else find(v) for v in range(n)]


class _Finder:
    def __init__(self, topology: Topology, fabric: IndexedFabric) -> None:
        self.fabric = fabric
        n = fabric.n
        self.out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.inc: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        near: list[list[int]] = [[] for _ in range(n)]
        for (u, v), b in zip(fabric.edges, fabric.bw_int):
            self.out[u].append((v, b))
            self.inc[v].append((u, b))
            near[u].append(v)
            near[v].append(u)
        self.bw = dict(zip(fabric.edges, fabric.bw_int))
        self.dist = _distances(fabric, near)
        roles = [node.role for node in topology.nodes]
        classes: dict[tuple, list[int]] = {}
        for v in range(n):
            if fabric.is_compute[v]:
                continue
            key = (
                self.dist[v],
                roles[v],
                len(self.out[v]),
                len(self.inc[v]),
                sum(b for _, b in self.out[v]),
                sum(b for _, b in self.inc[v]),
            )
            classes.setdefault(key, []).append(v)
        self.classes = classes

    def partitions(self) -> list[tuple[str, list[bool]]]:
        """Sets of switches to set aside: whole tiers from the farthest in, and within a tier of
        several classes each class alone (on top of the farther tiers)."""
        n = self.fabric.n
        tiers = sorted({key[0] for key in self.classes if key[0] > 0}, reverse=True)
        out = []
        farther = [False] * n
        for d in tiers:
            here = [key for key in self.classes if key[0] == d]
            if len(here) > 1:
                for key in here:
                    removed = list(farther)
                    for v in self.classes[key]:
                        removed[v] = True
                    out.append((f"tier {d} class {key[1] or len(self.classes[key])}", removed))
            tier = list(farther)
            for key in here:
                for v in self.classes[key]:
                    tier[v] = True
            out.append((f"tiers >= {d}", tier))
            farther = tier
        return out

    def shifts(self, removed: list[bool]) -> tuple[list[list[tuple[int, int]]], int]:
        """(verified shifts as (node, image) pairs, classes tried) of the sibling boxes left
        once ``removed`` is set aside."""
        groups, tried, _ = self.sibling_orders(removed)
        pairs = [
            [
                (v, w)
                for b, order in enumerate(orders)
                for v, w in zip(order, orders[(b + 1) % len(orders)])
            ]
            for orders in groups
        ]
        return pairs, tried

    def sibling_orders(self, removed: list[bool]) -> tuple[list[list[list[int]]], int, list[int]]:
        """(verified sibling classes, classes tried, part per node) once ``removed`` is set
        aside: a class is its boxes' members in canonical order, and the shift moving box b
        onto box b + 1 (node at position p onto node at position p, the last box onto the
        first) is an automorphism, checked link by link. ``part[v]`` is v's connected part
        (-1 for a removed node)."""
        fabric = self.fabric
        part = _components(fabric.n, fabric.edges, removed)
        boxes: dict[int, list[int]] = {}
        for v in range(fabric.n):
            if part[v] >= 0:
                boxes.setdefault(part[v], []).append(v)
        siblings: dict[tuple, list[list[int]]] = {}
        for members in boxes.values():
            if not any(fabric.is_compute[v] for v in members):
                continue
            attach = []
            for v in members:
                attach += [(0, w, b) for w, b in self.out[v] if removed[w]]
                attach += [(1, w, b) for w, b in self.inc[v] if removed[w]]
            key = (len(members), sum(fabric.is_compute[v] for v in members), tuple(sorted(attach)))
            siblings.setdefault(key, []).append(members)
        found = []
        tried = 0
        for group in siblings.values():
            if len(group) < 2:
                continue
            tried += 1
            for individualise in (False, True):  # the quick order first; the careful one if not
                if individualise and len(group[0]) > INDIVIDUALISE_MAX:
                    break
                orders = [self._order(m, removed, individualise) for m in group]
                pairs = [
                    (v, w)
                    for b, order in enumerate(orders)
                    for v, w in zip(order, orders[(b + 1) % len(orders)])
                ]
                if self._is_automorphism(dict(pairs)):
                    found.append(orders)
                    break
        return found, tried, part

    def _order(self, members: list[int], removed: list[bool], individualise: bool) -> list[int]:
        inside = set(members)
        local = {v: [(w, b) for w, b in self.out[v] if w in inside] for v in members}
        anchor = {
            v: tuple(
                sorted(
                    [(0, w, b) for w, b in self.out[v] if removed[w]]
                    + [(1, w, b) for w, b in self.inc[v] if removed[w]]
                )
            )
            for v in members
        }
        if individualise:
            return _canonical_order(self.fabric, members, local, anchor)
        start = {v: (0 if self.fabric.is_compute[v] else 1, anchor[v]) for v in members}
        names = {c: i for i, c in enumerate(sorted(set(start.values())))}
        colour = _refine(members, {v: names[c] for v, c in start.items()}, local)
        return sorted(members, key=lambda v: (colour[v], v))

    def _is_automorphism(self, perm: dict[int, int]) -> bool:
        """Whether moving the nodes of ``perm`` (fixing the rest) keeps every link: each link
        touching a moved node must map onto a link of the same bandwidth (links between fixed
        nodes are unchanged, and the moved set maps onto itself, so this is a bijection)."""
        fabric = self.fabric
        if any(fabric.is_compute[v] != fabric.is_compute[w] for v, w in perm.items()):
            return False
        if sorted(perm) != sorted(perm.values()):
            return False
        bw = self.bw
        for v in perm:
            sv = perm[v]
            for w, b in self.out[v]:
                if bw.get((sv, perm.get(w, w))) != b:
                    return False
            for w, b in self.inc[v]:
                if bw.get((perm.get(w, w), sv)) != b:
                    return False
        return True


def compute_orbits(
    topology: Topology, fabric: IndexedFabric, progress: Callable[[float], None] | None = None
) -> Orbits:
    """The compute-node orbits of the sibling shifts of ``fabric`` (see the module docstring).

    ``fabric`` is ``topology`` indexed; ``progress(fraction)`` is told after each partition."""
    finder = _Finder(topology, fabric)
    parent = list(range(fabric.n))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    levels = []
    generators = 0
    partitions = finder.partitions()
    for i, (label, removed) in enumerate(partitions):
        shifts, tried = finder.shifts(removed)
        generators += len(shifts)
        levels.append(f"{label}: {len(shifts)}/{tried} shifts")
        for pairs in shifts:
            for v, w in pairs:
                rv, rw = find(v), find(w)
                if rv != rw:
                    parent[max(rv, rw)] = min(rv, rw)
        if progress is not None:
            progress((i + 1) / len(partitions))
    seen: set[int] = set()
    sinks = []
    for c in fabric.compute:
        r = find(c)
        if r not in seen:
            seen.add(r)
            sinks.append(c)
    return Orbits(tuple(sinks), generators, tuple(levels))
