"""The verified box automorphism σ as arrays, and the link-by-link automorphism check.

:class:`BoxSymmetry` is what :mod:`solver.algorithm.symmetry` (a plain box translation) and
:mod:`solver.algorithm.odometer` (nested tiers) find and the symmetric solver steps use: boxes,
positions, σ and every node's period and phase. :func:`is_automorphism` is the check that
nothing is assumed: a permutation is used only once it maps every link onto a link of the same
bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.flow.csr import IndexedFabric


def _unset() -> np.ndarray:
    return np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class BoxSymmetry:
    """A verified automorphism σ of order ``boxes`` that moves ``boxes`` boxes of ``size`` nodes
    each onto each other (box b onto box b + 1).

    ``node_at[b, p]`` is the node at position p of box b; ``box_of[v]``/``pos_of[v]`` invert it
    (-1 for nodes outside the boxes); ``shift[v]`` is σ(v). A node outside the boxes has a
    ``period`` d dividing ``boxes`` (the length of its cycle under σ; 1: σ fixes it, as for
    every such node of a plain box translation; :mod:`solver.algorithm.odometer` builds σ with
    switches of any period) and a ``phase``: v = σ^phase(v)(r) for the representative r of its
    cycle (phase 0; for box nodes the phase is the box). ``cycle_nodes[cycle_start[v] + j]``
    is σ^j(r). Left out, the periods are those of a plain box translation.
    """

    boxes: int
    size: int
    node_at: np.ndarray  # (boxes, size)
    box_of: np.ndarray  # (n,)
    pos_of: np.ndarray  # (n,)
    shift: np.ndarray  # (n,) σ
    # orbit id per node under σ and further verified automorphisms (:func:`with_sibling_orbits`);
    # None: the orbits of ⟨σ⟩ alone
    orbit_of: np.ndarray | None = None
    period: np.ndarray = field(default_factory=_unset)  # (n,) cycle length of every node
    phase: np.ndarray = field(default_factory=_unset)  # (n,)
    cycle_nodes: np.ndarray = field(default_factory=_unset)  # (n,) cycles from representatives
    cycle_start: np.ndarray = field(default_factory=_unset)  # (n,) v's cycle in cycle_nodes

    def __post_init__(self) -> None:
        if self.period.shape[0] == self.box_of.shape[0]:
            return
        # a plain box translation: box nodes have period B (their cycle is a column of
        # node_at), every other node is fixed
        n, B, size = self.box_of.shape[0], self.boxes, self.size
        inside = self.box_of >= 0
        fixed = np.flatnonzero(~inside)
        period = np.where(inside, B, 1).astype(np.int64)
        phase = np.where(inside, self.box_of, 0).astype(np.int64)
        cycle_nodes = np.concatenate([self.node_at.T.ravel(), fixed]).astype(np.int64)
        cycle_start = np.empty(n, dtype=np.int64)
        cycle_start[inside] = self.pos_of[inside] * B
        cycle_start[fixed] = size * B + np.arange(len(fixed))
        object.__setattr__(self, "period", period)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "cycle_nodes", cycle_nodes)
        object.__setattr__(self, "cycle_start", cycle_start)

    @property
    def nested(self) -> bool:
        """Whether some node outside the boxes moves (a period strictly between 1 and B)."""
        p = self.period
        return bool(np.any((p > 1) & (p < self.boxes)))

    def translate(self, v: int, by: int) -> int:
        """σ^by(v)."""
        p = int(self.period[v])
        if p == 1:
            return v
        return int(self.cycle_nodes[self.cycle_start[v] + (int(self.phase[v]) + by) % p])

    def power(self, by: int) -> np.ndarray:
        """σ^by as an array over all nodes."""
        return self.cycle_nodes[self.cycle_start + (self.phase + by) % self.period]

    def representative(self, v: int) -> int:
        """The representative of v's cycle (phase 0): σ^-phase(v)(v)."""
        return int(self.cycle_nodes[self.cycle_start[v]])

    def representatives(self, fabric: IndexedFabric) -> list[int]:
        """One compute node per orbit of ⟨σ⟩: the compute nodes of box 0 and every fixed one."""
        return [v for v in fabric.compute if self.box_of[v] <= 0]

    def sinks(self, fabric: IndexedFabric) -> list[int]:
        """One compute node per orbit of the group of verified automorphisms known (σ, and the
        sibling translations of :func:`with_sibling_orbits`): enough sinks for any max-flow
        whose capacities are a function of the bandwidths and of which nodes σ fixes (the
        optimum, the fewest-trees check, the spare trim) — not for the split graph, which is
        only σ-equivariant."""
        if self.orbit_of is None:
            return self.representatives(fabric)
        seen: set[int] = set()
        out = []
        for v in fabric.compute:
            o = int(self.orbit_of[v])
            if o not in seen:
                seen.add(o)
                out.append(v)
        return out


class _EdgeIndex:
    """A fabric's links as arrays and adjacency lists with bandwidth ranks (ints in the order of
    the bandwidths), built once per fabric for the searches below."""

    def __init__(self, fabric: IndexedFabric):
        n = fabric.n
        ranks = {b: i for i, b in enumerate(sorted(set(fabric.bw_int)))}
        self.rank = np.asarray([ranks[b] for b in fabric.bw_int], dtype=np.int64)
        self.tails = np.asarray([u for u, _ in fabric.edges], dtype=np.int64)
        self.heads = np.asarray([v for _, v in fabric.edges], dtype=np.int64)
        keys = self.tails * n + self.heads
        order = np.argsort(keys, kind="stable")
        self.sorted_keys = keys[order]
        self.sorted_rank = self.rank[order]
        self.unique = len(np.unique(keys)) == len(keys)
        self.out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        self.inc: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for (u, v), r in zip(fabric.edges, self.rank.tolist(), strict=True):
            self.out[u].append((v, r))
            self.inc[v].append((u, r))
        self.is_compute = np.asarray(fabric.is_compute, dtype=bool)


# the last fabric indexed and its _EdgeIndex, as one tuple (replaced at once: thread-safe)
_LAST_INDEX: tuple = (None, None)


def _edge_index(fabric: IndexedFabric) -> _EdgeIndex:
    global _LAST_INDEX
    last = _LAST_INDEX
    if last[0] is not fabric:
        last = _LAST_INDEX = (fabric, _EdgeIndex(fabric))
    return last[1]


def is_automorphism(fabric: IndexedFabric, perm: np.ndarray) -> bool:
    """Whether ``perm`` maps compute nodes to compute nodes and every link onto a link of the
    same bandwidth (then it is a bijection on links too: their number is finite and equal)."""
    ix = _edge_index(fabric)
    perm = np.asarray(perm, dtype=np.int64)
    if not np.array_equal(ix.is_compute, ix.is_compute[perm]):
        return False
    if not ix.unique:  # repeated (u, v) pairs: the last one counts, as in a dict
        bw = dict(zip(fabric.edges, fabric.bandwidth))
        return all(bw.get((int(perm[u]), int(perm[v]))) == b for (u, v), b in bw.items())
    if not len(ix.tails):
        return True
    keys = perm[ix.tails] * fabric.n + perm[ix.heads]
    at = np.minimum(np.searchsorted(ix.sorted_keys, keys), len(keys) - 1)
    return bool(np.all(ix.sorted_keys[at] == keys) and np.all(ix.sorted_rank[at] == ix.rank))
