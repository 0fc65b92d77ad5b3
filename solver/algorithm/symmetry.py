"""Box symmetry: find a verified automorphism that moves every box to the next one.

Real fabrics are many identical boxes (DGX, MI250 chassis, fat-tree leaves) joined by shared
switches (rails, IB, spines). A *box translation* σ maps box ``i`` onto box ``i + 1`` (mod B),
node by node, and fixes every node outside the boxes. If σ preserves every directed link and its
bandwidth it is an automorphism of the fabric, and so are its powers: ⟨σ⟩ acts regularly on the
boxes. Then

- every s–t max-flow of the optimum has the same value for t and σ(t), so one sink per orbit of
  compute nodes (the compute nodes of box 0) suffices;
- trees rooted in box b can be the translates of trees rooted in box 0.

Candidates come from the node groups of the topology (templates and importers name a box per
group) or, for a file without them, from the fabric's own structure
(:func:`find_structural_box_symmetry`: colour refinement of the whole fabric, then boxes as what
stays connected once the network tiers are set aside); inside a group, nodes are matched by a
canonical order: kind, links to nodes outside the boxes, a colour refinement of the group's own
links (bandwidths included), and individualisation where ties remain. A candidate is only used
after :func:`find_box_symmetry` has checked, link by link, that it is an automorphism: nothing
here is assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction

import numpy as np

from solver.algorithm.box_group import BoxSymmetry, _edge_index, is_automorphism
from solver.algorithm.odometer import find_odometer
from solver.flow.csr import IndexedFabric
from solver.model.topology import Topology


def _mix(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing function (splitmix64's finaliser) of non-negative int64 keys."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _refine(colour: np.ndarray, src: np.ndarray, dst: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Colour refinement inside one group until no class splits.

    ``colour[i]`` is member i's colour; the group's own links are ``src[e] -> dst[e]`` (member
    indices) with bandwidth rank ``key[e]``. A member's signature is its colour and a hash of
    the multiset of (colour of the other end, bandwidth) over its links (a sum of mixed keys:
    independent of their order); colours are renamed 0.. in the order of (colour, hash), so
    isomorphic groups get the same names. A hash collision can only merge classes that should
    split: the translation built from the order is verified link by link anyway."""
    m = len(colour)
    classes = len(np.unique(colour))
    radix = np.int64(int(key.max()) + 1 if len(key) else 1)
    with np.errstate(over="ignore"):
        while True:
            h = np.zeros(m, dtype=np.uint64)
            np.add.at(h, src, _mix(colour[dst] * radix + key))
            order = np.lexsort((h, colour))
            cs, hs = colour[order], h[order]
            step = np.ones(m, dtype=np.int64)
            step[1:] = (cs[1:] != cs[:-1]) | (hs[1:] != hs[:-1])
            step[0] = 0
            new = np.empty(m, dtype=np.int64)
            new[order] = np.cumsum(step)
            count = int(new.max()) + 1 if m else 0
            if count == classes:
                return new
            colour, classes = new, count


def _canonical_order(
    fabric: IndexedFabric,
    members: list[int],
    local: dict[int, list[tuple[int, int]]],
    anchor: dict[int, tuple],
) -> list[int]:
    """Members in a canonical order: colours from kind, from their links to nodes outside every
    box (``anchor``: a box translation fixes those, so each is told apart by its index) and from
    a refinement of the group's own links (``local``: member -> [(member, bandwidth rank)]);
    while a class still holds several members, its first member in topology order is told apart
    and the refinement repeated (individualisation-refinement), so that corresponding nodes of
    isomorphic groups line up."""
    index = {v: i for i, v in enumerate(members)}
    src = np.asarray([index[v] for v in members for _ in local[v]], dtype=np.int64)
    dst = np.asarray([index[w] for v in members for w, _ in local[v]], dtype=np.int64)
    key = np.asarray([b for v in members for _, b in local[v]], dtype=np.int64)
    start = {v: (0 if fabric.is_compute[v] else 1, anchor[v]) for v in members}
    names = {c: i for i, c in enumerate(sorted(set(start.values())))}
    colour = _refine(np.asarray([names[start[v]] for v in members], dtype=np.int64), src, dst, key)
    node = np.asarray(members, dtype=np.int64)
    while True:
        sizes = np.bincount(colour)
        tied = np.flatnonzero(sizes > 1)
        if not len(tied):
            break
        in_tied = np.flatnonzero(colour == tied[0])
        chosen = in_tied[np.argmin(node[in_tied])]  # its first member in topology order
        split = 2 * colour + 1
        split[chosen] -= 1
        colour = _refine(split, src, dst, key)
    return [members[i] for i in np.argsort(colour, kind="stable")]


def find_box_symmetry(
    fabric: IndexedFabric, groups: Sequence[str | None], max_box_compute: int | None = None
) -> BoxSymmetry | None:
    """The box translation of ``fabric`` if the groups holding compute nodes form one.

    ``groups[v]`` is node v's group (``None``: outside every box). Every compute node must be in
    a group, all such groups must have the same size, and the translation (groups in order of
    first appearance, nodes matched by canonical order) must preserve every directed link with
    its bandwidth. Returns ``None`` otherwise (or with fewer than two boxes, or with more than
    ``max_box_compute`` compute nodes per box: then not even the canonical order is computed,
    which costs about a refinement of the box per node of it).
    """
    by_group: dict[str, list[int]] = {}
    for v in range(fabric.n):
        g = groups[v]
        if g is not None and g != "":
            by_group.setdefault(g, []).append(v)
    boxes = [m for m in by_group.values() if any(fabric.is_compute[v] for v in m)]
    if len(boxes) < 2 or any(not groups[v] for v in fabric.compute):
        return None
    size = len(boxes[0])
    if any(len(m) != size for m in boxes):
        return None
    if max_box_compute is not None and fabric.num_compute > max_box_compute * len(boxes):
        return None
    return _translation(fabric, boxes)


def _translation(fabric: IndexedFabric, boxes: list[list[int]]) -> BoxSymmetry | None:
    """The translation moving box b onto box b + 1 (members matched by canonical order), every
    node outside the boxes fixed, if it is an automorphism; else ``None``."""
    size = len(boxes[0])
    box_index = {}
    for b, members in enumerate(boxes):
        for v in members:
            box_index[v] = b
    ix = _edge_index(fabric)
    local: dict[int, list[tuple[int, int]]] = {v: [] for v in box_index}
    outside: dict[int, list[tuple[int, int, int]]] = {v: [] for v in box_index}
    for u, b in box_index.items():
        for v, r in ix.out[u]:
            if box_index.get(v) == b:
                local[u].append((v, r))
            elif v not in box_index:
                outside[u].append((0, v, r))
        for w, r in ix.inc[u]:
            if w not in box_index:
                outside[u].append((1, w, r))
    anchor = {v: tuple(sorted(links)) for v, links in outside.items()}
    node_at = np.array([_canonical_order(fabric, m, local, anchor) for m in boxes], dtype=np.int64)
    box_of = np.full(fabric.n, -1, dtype=np.int64)
    pos_of = np.full(fabric.n, -1, dtype=np.int64)
    for b in range(len(boxes)):
        box_of[node_at[b]] = b
        pos_of[node_at[b]] = np.arange(size)
    sym = BoxSymmetry(len(boxes), size, node_at, box_of, pos_of, np.empty(0, dtype=np.int64))
    shift = sym.power(1)
    sym = BoxSymmetry(len(boxes), size, node_at, box_of, pos_of, shift)
    return sym if is_automorphism(fabric, shift) else None


#: classes of switches set aside, least bandwidth first, before the structural search gives up
STRUCTURAL_ATTEMPTS = 6


def refined_colours(fabric: IndexedFabric) -> list[int]:
    """Colour refinement (1-dimensional Weisfeiler-Leman) of the whole fabric: nodes start
    coloured by kind and are split by the multisets of (neighbour colour, bandwidth) of their
    outgoing and incoming links until no class splits. Nodes an automorphism can exchange always
    share a colour; O(rounds · E log E), rounds <= the number of classes."""
    ix = _edge_index(fabric)  # bandwidth ranks: in the order of the bandwidths, cheap to hash
    out, inc = ix.out, ix.inc
    colour = [0 if c else 1 for c in fabric.is_compute]
    classes = len(set(colour))
    while True:
        sig = [
            (
                colour[v],
                tuple(sorted((colour[w], b) for w, b in out[v])),
                tuple(sorted((colour[w], b) for w, b in inc[v])),
            )
            for v in range(fabric.n)
        ]
        names = {s: i for i, s in enumerate(sorted(set(sig)))}
        colour = [names[s] for s in sig]
        if len(names) == classes:
            return colour
        classes = len(names)


def _components(fabric: IndexedFabric, removed: set[int]) -> list[int]:
    """Connected component id per node of the fabric without ``removed`` (-1 for those)."""
    parent = list(range(fabric.n))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for u, v in fabric.edges:
        if u not in removed and v not in removed:
            ru, rv = find(u), find(v)
            if ru != rv:
                parent[ru] = rv
    return [-1 if v in removed else find(v) for v in range(fabric.n)]


def find_structural_box_symmetry(
    fabric: IndexedFabric, max_box_compute: int | None = None
) -> BoxSymmetry | None:
    """A box translation found from the fabric alone, for files without group names.

    Switch colour classes (:func:`refined_colours`) are set aside, the class carrying the least
    bandwidth in all first (a network tier: rails, IB switches, spines; every box has its own
    NVSwitch, NICs and GPUs, joined by faster links); after each, the connected
    parts that hold compute nodes are candidate boxes, given to :func:`find_box_symmetry`, which
    checks the translation link by link. At most :data:`STRUCTURAL_ATTEMPTS` candidates are
    tried; ``None`` when none is an automorphism. ``max_box_compute``: as
    :func:`find_box_symmetry`.
    """
    colour = refined_colours(fabric)
    members: dict[int, list[int]] = {}
    for v, c in enumerate(colour):
        members.setdefault(c, []).append(v)
    carried = [Fraction(0)] * fabric.n
    for (u, v), bw in zip(fabric.edges, fabric.bandwidth):
        carried[u] += bw
        carried[v] += bw
    # the class carrying least bandwidth first: a network tier (rails, IB, spines) before the
    # switches inside the boxes (NVSwitches, NICs)
    switch_classes = sorted(
        (m for m in members.values() if not fabric.is_compute[m[0]]),
        key=lambda m: (carried[m[0]] * len(m), len(m), m[0]),
    )
    removed: set[int] = set()
    for cls in switch_classes[:STRUCTURAL_ATTEMPTS]:
        removed.update(cls)
        part = _components(fabric, removed)
        holding = {part[v] for v in fabric.compute}
        if len(holding) < 2:
            continue
        groups = [f"box{part[v]}" if part[v] in holding else None for v in range(fabric.n)]
        sym = find_box_symmetry(fabric, groups, max_box_compute)
        if sym is not None:
            return sym
    return None


#: representatives of ⟨σ⟩ from which sibling translations are looked for (fewer: not worth it)
SIBLING_MIN_SINKS = 128


def with_sibling_orbits(fabric: IndexedFabric, sym: BoxSymmetry) -> BoxSymmetry:
    """``sym`` with the orbits of a larger verified group, for fewer max-flow sinks.

    A SuperPOD-like fabric has σ only at its top (4 pods of a 3-tier network: 1024 sinks of
    4096 GPUs), but nested boxes inside: the scalable units of a pod hang on the same spines,
    the DGX nodes of a unit on the same leaves. The network tiers are set aside as in
    :func:`find_structural_box_symmetry`; at each step, the parts holding compute nodes that
    attach to the same set-aside nodes and have the same size are *siblings*, and the
    translation among siblings (every other node fixed) is kept when it is an automorphism,
    checked link by link, and moves only nodes inside σ's boxes (so the nodes σ fixes stay
    fixed). The orbits of the group generated by σ and these translations are the connected
    parts of the graph joining every node to its images.
    """
    if len(sym.representatives(fabric)) < SIBLING_MIN_SINKS:
        return sym
    parent = list(range(fabric.n))

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def join(perm: np.ndarray) -> None:
        for v in np.flatnonzero(perm != np.arange(fabric.n)).tolist():
            a, b = find(v), find(int(perm[v]))
            if a != b:
                parent[a] = b

    join(sym.shift)
    in_box = sym.box_of >= 0
    for removed in _tiers(fabric):
        part = _components(fabric, removed)
        holding = sorted({part[v] for v in fabric.compute})
        members: dict[int, list[int]] = {}
        for v in range(fabric.n):
            if part[v] >= 0:
                members.setdefault(part[v], []).append(v)
        attached: dict[int, set[int]] = {c: set() for c in holding}
        for u, v in fabric.edges:
            if part[u] in attached and v in removed:
                attached[part[u]].add(v)
        siblings: dict[tuple, list[list[int]]] = {}
        for c in holding:
            key = (tuple(sorted(attached[c])), len(members[c]))
            siblings.setdefault(key, []).append(members[c])
        for boxes in siblings.values():
            if len(boxes) < 2 or not all(in_box[v] for m in boxes for v in m):
                continue
            moved = _translation(fabric, boxes)
            if moved is not None:
                join(moved.shift)
    orbit_of = np.asarray([find(v) for v in range(fabric.n)], dtype=np.int64)
    return replace(sym, orbit_of=orbit_of)


def _tiers(fabric: IndexedFabric) -> list[set[int]]:
    """The growing sets of switch classes set aside by :func:`find_structural_box_symmetry`."""
    colour = refined_colours(fabric)
    members: dict[int, list[int]] = {}
    for v, c in enumerate(colour):
        members.setdefault(c, []).append(v)
    carried = [Fraction(0)] * fabric.n
    for (u, v), bw in zip(fabric.edges, fabric.bandwidth):
        carried[u] += bw
        carried[v] += bw
    switch_classes = sorted(
        (m for m in members.values() if not fabric.is_compute[m[0]]),
        key=lambda m: (carried[m[0]] * len(m), len(m), m[0]),
    )
    # also the tiers farthest from the compute nodes first (cores, spines, leaves, NICs): nested
    # boxes (a pod's scalable units) appear only if the leaves stay while the spines go
    hops = _hops_from_compute(fabric)
    by_distance = sorted(
        (m for m in members.values() if not fabric.is_compute[m[0]]),
        key=lambda m: (-hops[m[0]], m[0]),
    )
    out: list[set[int]] = []
    for order in (switch_classes, by_distance):
        removed: set[int] = set()
        for cls in order[:STRUCTURAL_ATTEMPTS]:
            removed = removed | set(cls)
            if removed not in out:
                out.append(removed)
    return out


def _hops_from_compute(fabric: IndexedFabric) -> list[int]:
    """Links from the nearest compute node, per node (either direction; n if unreachable)."""
    ix = _edge_index(fabric)
    hops = [0 if c else fabric.n for c in fabric.is_compute]
    frontier = list(fabric.compute)
    while frontier:
        nxt = []
        for u in frontier:
            for w, _ in ix.out[u] + ix.inc[u]:
                if hops[w] > hops[u] + 1:
                    hops[w] = hops[u] + 1
                    nxt.append(w)
        frontier = nxt
    return hops


class PartsBelow:
    """``parts(h)``: per node, its part among the nodes fewer than h links from the nearest
    compute node (a host with its NVSwitch and NICs for a rack switch at h = 2, a rack for the
    tier above), -1 for the nodes h or more links away; ``hops[v]`` is that distance. A unit
    sent through a switch at h from one part back into the same part spends the part's uplinks
    for what its own links carry (:mod:`solver.algorithm.plan_split` avoids such pairs)."""

    def __init__(self, fabric: IndexedFabric):
        self.fabric = fabric
        self.hops = np.asarray(_hops_from_compute(fabric), dtype=np.int64)
        self._cache: dict[int, np.ndarray] = {}

    def __call__(self, h: int) -> np.ndarray:
        if h not in self._cache:
            far = {int(v) for v in np.flatnonzero(self.hops >= h)}
            self._cache[h] = np.asarray(_components(self.fabric, far), dtype=np.int64)
        return self._cache[h]


def box_symmetry(
    topology: Topology,
    fabric: IndexedFabric | None = None,
    *,
    structural: bool = True,
    nested: bool = False,
    max_box_compute: int | None = None,
) -> BoxSymmetry | None:
    """The box translation of ``topology``: by its node groups (:func:`find_box_symmetry`), else
    with ``nested``, the odometer of its nested sibling shifts
    (:func:`solver.algorithm.odometer.find_odometer`: switches of nested tiers move too, with
    smaller periods), else, with ``structural``, found from the fabric alone
    (:func:`find_structural_box_symmetry`).

    ``fabric`` is ``topology`` indexed (:meth:`IndexedFabric.from_topology`, built when not
    given); the translation's node indices are its. ``None`` when there is none, or none with
    at most ``max_box_compute`` compute nodes per box (larger boxes are not even tried).
    """
    if fabric is None:
        fabric = IndexedFabric.from_topology(topology)
    groups = [node.group for node in topology.nodes]
    sym = find_box_symmetry(fabric, groups, max_box_compute)
    if sym is None and nested:
        sym = find_odometer(topology, fabric, groups)
        if sym is not None and max_box_compute is not None:
            if sum(fabric.is_compute[int(v)] for v in sym.node_at[0]) > max_box_compute:
                sym = None
    if sym is None and structural:
        sym = find_structural_box_symmetry(fabric, max_box_compute)
    return None if sym is None else with_sibling_orbits(fabric, sym)
