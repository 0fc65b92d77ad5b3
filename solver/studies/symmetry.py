"""Orbits of study elements under the fabric's obvious symmetry: moving whole boxes.

This is the simple thing, not full automorphism detection. Nodes that share a ``group`` form a
box (templates put every box in group ``b<i>``). Two kinds of generators are used:

- the solver's box translation by node groups (:func:`solver.algorithm.symmetry.box_symmetry`:
  box i -> box i+1 when every box holding compute nodes is alike, nodes matched by a canonical
  order);
- box swaps: two boxes whose nodes have the same kinds and roles in file order, node j of one
  <-> node j of the other, every other node fixed (this also covers boxes of several shapes).

A generator is kept only if it maps every physical link onto a link with the same bandwidth
and direction (an automorphism), so results are never shared wrongly; one that fails the check
simply shares nothing. Symmetry *within* a box (GPU 3 <-> GPU 5) and fabrics without groups
give no sharing: every element is then its own orbit.

The orbits are the connected classes of "element -> its image under a generator"; each member
keeps the chain of generators that maps its orbit's representative onto it, so the
representative's bottleneck cut can be mapped onto the member's fabric.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solver.model.topology import Topology
from solver.studies.elements import Element

METHOD = "box translation and box swaps (nodes of the same group; each checked as an automorphism)"


@dataclass(frozen=True)
class Swap:
    """An automorphism that exchanges two boxes: node and link index maps."""

    nodes: Mapping[str, str]  # only the moved nodes
    links: tuple[int, ...]  # link index -> image link index
    boxes: tuple[tuple[str, ...], ...] = ()  # a box swap: the two boxes (node ids, matched)

    def node(self, node_id: str) -> str:
        return self.nodes.get(node_id, node_id)


@dataclass(frozen=True)
class Orbits:
    """Element key -> (representative key, swaps mapping the representative onto it)."""

    representative: Mapping[str, str]
    path: Mapping[str, tuple[int, ...]]
    swaps: tuple[Swap, ...]
    method: str

    @property
    def count(self) -> int:
        return len(set(self.representative.values()))

    def map_node(self, member: str, node_id: str) -> str:
        """The image, in ``member``'s fabric, of a node of the representative's fabric."""
        for index in self.path[member]:
            node_id = self.swaps[index].node(node_id)
        return node_id


def _link_signature(link, mapping: Mapping[str, str]) -> tuple:
    s, t = mapping.get(link.source, link.source), mapping.get(link.target, link.target)
    if not link.directed:
        s, t = sorted((s, t))
    return (s, t, link.bandwidth, link.directed)


def _link_map(topo: Topology, mapping: Mapping[str, str], buckets, whole) -> tuple[int, ...] | None:
    """Link index -> image link index under the node map, or None if it is no automorphism."""
    images = [_link_signature(link, mapping) for link in topo.links]
    if Counter(images) != whole:
        return None
    rank: Counter = Counter()
    out = []
    for sig in images:
        out.append(buckets[sig][rank[sig]])
        rank[sig] += 1
    return tuple(out)


def box_translation(topo: Topology) -> list[Swap]:
    """The solver's box translation as a generator, if the fabric has one (checked again here
    on physical links, parallel links included)."""
    from solver.algorithm.symmetry import box_symmetry
    from solver.flow.csr import IndexedFabric

    fabric = IndexedFabric.from_topology(topo)
    sym = box_symmetry(topo, fabric, structural=False)
    if sym is None:
        return []
    names = fabric.names
    mapping = {names[v]: names[int(w)] for v, w in enumerate(sym.shift) if v != int(w)}
    base = [_link_signature(link, {}) for link in topo.links]
    buckets: dict[tuple, list[int]] = {}
    for i, sig in enumerate(base):
        buckets.setdefault(sig, []).append(i)
    links = _link_map(topo, mapping, buckets, Counter(base))
    return [] if links is None else [Swap(mapping, links)]


def box_swaps(topo: Topology) -> list[Swap]:
    """Every verified swap of box 0 of a kind with another box of the same kind."""
    groups: dict[str, list] = {}
    for node in topo.nodes:
        if node.group is not None:
            groups.setdefault(node.group, []).append(node)
    by_shape: dict[tuple, list[list]] = {}
    for members in groups.values():
        shape = tuple((n.kind, n.role) for n in members)
        by_shape.setdefault(shape, []).append(members)
    base = [_link_signature(link, {}) for link in topo.links]
    buckets: dict[tuple, list[int]] = {}
    for i, sig in enumerate(base):
        buckets.setdefault(sig, []).append(i)
    whole = Counter(base)
    swaps = []
    for boxes in by_shape.values():
        first = boxes[0]
        for other in boxes[1:]:
            mapping = {}
            for a, b in zip(first, other):
                mapping[a.id], mapping[b.id] = b.id, a.id
            link_map = _link_map(topo, mapping, buckets, whole)
            if link_map is not None:
                boxes = (tuple(n.id for n in first), tuple(n.id for n in other))
                swaps.append(Swap(mapping, link_map, boxes))
    return swaps


def _image(
    element: Element,
    swap: Swap,
    by_node: Mapping[str, str],
    by_links: Mapping[tuple[int, ...], str],
) -> str | None:
    if element.node is not None:
        return by_node.get(swap.node(element.node))
    return by_links.get(tuple(sorted(swap.links[i] for i in element.links)))


def orbits(topo: Topology, elements: Sequence[Element], use_symmetry: bool = True) -> Orbits:
    """Group ``elements`` into orbits (every element alone when ``use_symmetry`` is False)."""
    swaps = box_translation(topo) + box_swaps(topo) if use_symmetry else []
    by_key = {e.key: e for e in elements}
    by_node = {e.node: e.key for e in elements if e.node is not None}
    by_links = {tuple(sorted(e.links)): e.key for e in elements if e.node is None}
    representative: dict[str, str] = {}
    path: dict[str, tuple[int, ...]] = {}
    for element in elements:
        if element.key in representative:
            continue
        representative[element.key] = element.key
        path[element.key] = ()
        queue = deque([element.key])
        while queue:
            key = queue.popleft()
            for index, swap in enumerate(swaps):
                image = _image(by_key[key], swap, by_node, by_links)
                if image is not None and image not in representative:
                    representative[image] = element.key
                    path[image] = path[key] + (index,)
                    queue.append(image)
    method = METHOD if swaps else "none (no box translation or swap is a symmetry of this fabric)"
    if not use_symmetry:
        method = "none (switched off)"
    return Orbits(representative, path, tuple(swaps), method)


def box_classes(topo: Topology) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Boxes that verified swaps make interchangeable: per class, the first box and every box
    it swaps with (node ids, position by position).

    Any two boxes of a class can be swapped too ((i j) = (0 i)(0 j)(0 i)), so the boxes a
    change does not touch stay interchangeable in the changed fabric: their compute nodes at
    one position form one orbit, and one of them is enough as a max-flow sink.
    """
    classes: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for swap in box_swaps(topo):
        first, other = swap.boxes
        classes.setdefault(first, [first]).append(other)
    return tuple(tuple(boxes) for boxes in classes.values())
