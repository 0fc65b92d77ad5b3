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
group); inside a group, nodes are matched by a canonical order: kind, then a colour refinement
of the group's own links (bandwidths included), then topology order. A candidate is only used
after :func:`find_box_symmetry` has checked, link by link, that it is an automorphism: nothing
here is assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from solver.flow.csr import IndexedFabric


@dataclass(frozen=True)
class BoxSymmetry:
    """A verified box translation σ of a fabric with ``boxes`` boxes of ``size`` nodes each.

    ``node_at[b, p]`` is the node at position p of box b; ``box_of[v]``/``pos_of[v]`` invert it
    (-1 for nodes outside the boxes, which σ fixes); ``shift[v]`` is σ(v).
    """

    boxes: int
    size: int
    node_at: np.ndarray  # (boxes, size)
    box_of: np.ndarray  # (n,)
    pos_of: np.ndarray  # (n,)
    shift: np.ndarray  # (n,) σ

    def translate(self, v: int, by: int) -> int:
        """σ^by(v)."""
        b = int(self.box_of[v])
        if b < 0:
            return v
        return int(self.node_at[(b + by) % self.boxes, self.pos_of[v]])

    def power(self, by: int) -> np.ndarray:
        """σ^by as an array over all nodes."""
        out = np.arange(self.box_of.shape[0], dtype=np.int64)
        inside = self.box_of >= 0
        out[inside] = self.node_at[(self.box_of[inside] + by) % self.boxes, self.pos_of[inside]]
        return out

    def representatives(self, fabric: IndexedFabric) -> list[int]:
        """One compute node per orbit of ⟨σ⟩: the compute nodes of box 0 and every fixed one."""
        return [v for v in fabric.compute if self.box_of[v] <= 0]


def _canonical_order(fabric: IndexedFabric, members: list[int],
                     local: dict[int, list[tuple[int, Fraction]]]) -> list[int]:
    """Members sorted by kind and a colour refinement of the group's own links."""
    colour = {v: (0 if fabric.is_compute[v] else 1,) for v in members}
    for _ in range(len(members)):
        sig = {v: (colour[v], tuple(sorted((colour[w], b) for w, b in local[v])))
               for v in members}
        names = {s: i for i, s in enumerate(sorted(set(sig.values())))}
        new = {v: (names[sig[v]],) for v in members}
        if len(set(new.values())) == len(set(colour.values())):
            colour = new
            break
        colour = new
    return sorted(members, key=lambda v: (colour[v], v))


def find_box_symmetry(fabric: IndexedFabric, groups: Sequence[str | None]) -> BoxSymmetry | None:
    """The box translation of ``fabric`` if the groups holding compute nodes form one.

    ``groups[v]`` is node v's group (``None``: outside every box). Every compute node must be in
    a group, all such groups must have the same size, and the translation (groups in order of
    first appearance, nodes matched by canonical order) must preserve every directed link with
    its bandwidth. Returns ``None`` otherwise (or with fewer than two boxes).
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
    box_index = {}
    for b, members in enumerate(boxes):
        for v in members:
            box_index[v] = b
    local: dict[int, list[tuple[int, Fraction]]] = {v: [] for v in box_index}
    for (u, v), bw in zip(fabric.edges, fabric.bandwidth):
        if u in box_index and box_index.get(v) == box_index[u]:
            local[u].append((v, bw))
    node_at = np.array([_canonical_order(fabric, m, local) for m in boxes], dtype=np.int64)
    box_of = np.full(fabric.n, -1, dtype=np.int64)
    pos_of = np.full(fabric.n, -1, dtype=np.int64)
    for b in range(len(boxes)):
        box_of[node_at[b]] = b
        pos_of[node_at[b]] = np.arange(size)
    sym = BoxSymmetry(len(boxes), size, node_at, box_of, pos_of, np.empty(0, dtype=np.int64))
    shift = sym.power(1)
    sym = BoxSymmetry(len(boxes), size, node_at, box_of, pos_of, shift)
    return sym if is_automorphism(fabric, shift) else None


def is_automorphism(fabric: IndexedFabric, perm: np.ndarray) -> bool:
    """Whether ``perm`` maps compute nodes to compute nodes and every link onto a link of the
    same bandwidth (then it is a bijection on links too: their number is finite and equal)."""
    if any(fabric.is_compute[v] != fabric.is_compute[int(perm[v])] for v in range(fabric.n)):
        return False
    bw = dict(zip(fabric.edges, fabric.bandwidth))
    return all(bw.get((int(perm[u]), int(perm[v]))) == b for (u, v), b in bw.items())
