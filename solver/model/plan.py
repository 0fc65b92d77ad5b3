"""A compressed plan: an allgather schedule kept as one root's trees per orbit plus σ.

On a fabric of B identical boxes the solver finds a box translation σ (an automorphism that
moves box b to box b+1, :mod:`solver.algorithm.symmetry`) and builds trees only for the roots of
box 0; the trees of box b are their images under σ^b. A full schedule of N roots holds about
N² tree edges (16 384 GPUs: 2.7·10⁸), a plan holds N/B roots' trees and one permutation.

:class:`CompressedSchedule` wraps a :class:`~solver.model.schedule.Schedule` whose ``trees``
are the *representative* trees (roots in box 0) and whose other fields (optimum, algbw,
bottleneck cut, the load of every link) describe the whole expanded schedule, plus
``generator``: σ as an array over node indices (``topology.nodes`` order) and ``order`` = B.
Tree ``i`` of the expansion is σ^b of representative j with ``i = b·R + j`` (R representatives);
:meth:`CompressedSchedule.tree` builds one such tree on demand and :meth:`expand` all of them.
Whether σ really is an automorphism and the loads add up is checked by
:func:`solver.algorithm.verify_plan.verify_compressed`, not assumed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.model.schedule import Schedule, Tree, TreeEdge

#: compute nodes from which ``forestcoll solve`` keeps a compressed plan by itself (when the
#: fabric has a box translation): the full forest there holds N(N-1) > 1.6·10⁷ tree edges,
#: gigabytes as Python objects and hundreds of MB in a results file.
COMPRESS_MIN_N = 4096


@dataclass(frozen=True)
class CompressedSchedule:
    """Representative trees (``base.trees``) plus the generator σ of order ``order``."""

    base: Schedule
    generator: np.ndarray = field(compare=False)  # (n,) int64: σ(v) by node index
    order: int

    def __post_init__(self) -> None:
        gen = np.asarray(self.generator, dtype=np.int64)
        gen.setflags(write=False)
        object.__setattr__(self, "generator", gen)
        object.__setattr__(
            self, "_node_index", {v: i for i, v in enumerate(self.base.topology.node_ids)}
        )

    # ------------------------------------------------------------------ what a Schedule has
    @property
    def topology(self):
        return self.base.topology

    @property
    def collective(self) -> str:
        return self.base.collective

    @property
    def k(self) -> int:
        return self.base.k

    @property
    def algbw_exact(self):
        return self.base.algbw_exact

    @property
    def optimal_algbw_exact(self):
        return self.base.optimal_algbw_exact

    @property
    def representatives(self) -> tuple[Tree, ...]:
        return self.base.trees

    @property
    def num_trees(self) -> int:
        """Trees of the expanded schedule."""
        return len(self.base.trees) * self.order

    # ------------------------------------------------------------------ expansion
    def power(self, b: int) -> np.ndarray:
        """σ^b over node indices (b taken mod ``order``), by repeated squaring."""
        out = np.arange(self.generator.shape[0], dtype=np.int64)
        base, b = self.generator, b % self.order
        while b:
            if b & 1:
                out = base[out]
            base = base[base]
            b >>= 1
        return out

    def translate(self, tree: Tree, perm: np.ndarray) -> Tree:
        """``tree`` moved by the node permutation ``perm`` (over node indices)."""
        ids = self.topology.node_ids
        index = self._node_index
        memo: dict[str, str] = {}

        def move(v: str) -> str:
            w = memo.get(v)
            if w is None:
                w = memo[v] = ids[int(perm[index[v]])]
            return w

        edges = tuple(
            TreeEdge(move(e.src), move(e.dst), tuple(move(v) for v in e.path)) for e in tree.edges
        )
        return Tree(move(tree.root), tree.multiplicity, tree.weight, edges)

    def tree(self, i: int) -> Tree:
        """Tree ``i`` of the expansion (σ^b of representative j, i = b·R + j), built now."""
        reps = self.base.trees
        if not 0 <= i < self.num_trees:
            raise IndexError(f"tree {i} is outside 0..{self.num_trees - 1}")
        b, j = divmod(i, len(reps))
        return reps[j] if b == 0 else self.translate(reps[j], self.power(b))

    def trees_of_root(self, root: str) -> list[Tree]:
        """The trees rooted at compute node ``root``, built now (empty if no orbit holds it)."""
        index = self._node_index
        target = index[root]
        perm = np.arange(self.generator.shape[0], dtype=np.int64)
        rep_roots = {index[t.root] for t in self.base.trees}
        for _b in range(self.order):
            # σ^b(r) = target for a representative root r: r = σ^-b(target)
            hits = [r for r in rep_roots if perm[r] == target]
            if hits:
                return [
                    self.translate(t, perm) for t in self.base.trees if index[t.root] == hits[0]
                ]
            perm = self.generator[perm]
        return []

    def expand(self) -> Schedule:
        """The full schedule (every tree built; N² edges: for fabrics that fit in memory)."""
        reps = self.base.trees
        trees: list[Tree] = []
        perm = np.arange(self.generator.shape[0], dtype=np.int64)
        for b in range(self.order):
            trees += [t if b == 0 else self.translate(t, perm) for t in reps]
            perm = self.generator[perm]
        order = {c: i for i, c in enumerate(self.topology.compute_ids)}
        trees.sort(key=lambda t: order[t.root])  # stable: a root's trees keep their order
        return Schedule(
            topology=self.base.topology,
            collective=self.base.collective,
            k=self.base.k,
            max_trees_per_root=self.base.max_trees_per_root,
            optimal_algbw_exact=self.base.optimal_algbw_exact,
            algbw_exact=self.base.algbw_exact,
            bottleneck=self.base.bottleneck,
            trees=tuple(trees),
            link_load=self.base.link_load,
            timings=dict(self.base.timings),
            warnings=self.base.warnings,
        )
