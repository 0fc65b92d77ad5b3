"""Step 3 for symmetric fabrics: trees for the roots of box 0, translated to every other box.

With a box translation σ (:mod:`solver.algorithm.symmetry`) and a σ-invariant compute graph
(:mod:`solver.algorithm.plan_split`), a tree rooted in box 0 and its translates σ^b(tree) load
the logical edges of one *edge orbit* {σ^b(x, y)} once each: edge (x, y) carries the
multiplicity of every box-0 tree that uses an edge of its orbit. So the box-0 trees may use, per
orbit, at most the capacity of one of its edges (they are all equal), and then the translated
forest fits every edge. That is a budget per orbit instead of a max-flow per tested edge.

Trees grow level by level (shortest height first); a vertex of the next level takes, among its
in-edges from the current level, one inside its own box if there is one (a tree needs to enter
each box only once: cross-box capacity is what the bottleneck cut is made of), else the one whose
orbit has the most budget left, so thin orbits are left to the trees that need them. A root's k trees form classes of one
multiplicity; a class that cannot span halves its multiplicity. This is a greedy construction,
not a theorem: :func:`pack_by_orbits` returns ``None`` when it gets stuck (the caller then packs
with the general algorithm), and the pipeline checks the translated forest's link loads exactly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.algorithm.packing import TreeClass
from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric

Orbit = tuple[int, int, int]  # (position of x, position of y, box offset of y from x)


def pack_by_orbits(
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
) -> list[tuple[int, int, list[tuple[int, int]]]] | None:
    """k out-trees for every box-0 root as (root, multiplicity, node edges), or ``None``.

    Their translates by σ^b are the trees of box b (:func:`translated_classes`).
    """
    # two greedy variants: one box entry per tree and rounds over the roots (meshes like MI250),
    # then any entries and each root's trees in one go (fat trees)
    for strict in (True, False):
        reps = _pack(
            _OrbitPacker(fabric, sym, caps, strict),
            sym.representatives(fabric),
            k,
            check,
            rounds=strict,
        )
        if reps is not None:
            return reps
    return None


def _pack(
    packer: _OrbitPacker, roots: list[int], k: int, check: Callable[[], None] | None, rounds: bool
) -> list[tuple[int, int, list[tuple[int, int]]]] | None:
    reps: list[tuple[int, int, list[tuple[int, int]]]] = []
    left = dict.fromkeys(roots, k)
    # rounds over the roots, half of what is left each time, so that early roots do not take
    # the best edges for all their trees
    while any(left.values()):
        for root in roots:
            if not left[root]:
                continue
            if check is not None:
                check()
            mult = max(1, left[root] // 2) if rounds else left[root]
            edges = packer.grow(root, mult)
            while edges is None and mult > 1:
                mult //= 2
                edges = packer.grow(root, mult)
            if edges is None:
                return None
            reps.append((root, mult, edges))
            left[root] -= mult
    reps.sort(key=lambda rep: roots.index(rep[0]))  # stable: a root's trees stay in order
    return reps


def translated_classes(
    fabric: IndexedFabric, sym: BoxSymmetry, reps: list[tuple[int, int, list[tuple[int, int]]]]
) -> list[TreeClass]:
    """The box-0 trees and all their translates as rank classes, ordered by root."""
    rank_of = np.full(fabric.n, -1, dtype=np.int64)
    rank_of[list(fabric.compute)] = np.arange(fabric.num_compute)
    classes = []
    for b in range(sym.boxes):
        node_rank = rank_of[sym.power(b)]  # rank of σ^b(v), by v
        for root, mult, edges in reps:
            arr = node_rank[np.asarray(edges, dtype=np.int64)]
            pairs = list(zip(arr[:, 0].tolist(), arr[:, 1].tolist()))
            r = int(node_rank[root])
            classes.append(TreeClass(r, mult, pairs, [r] + arr[:, 1].tolist(), len(pairs) + 1))
    classes.sort(key=lambda c: c.root)  # stable: a root's classes keep their order
    return classes


class _OrbitPacker:
    def __init__(
        self,
        fabric: IndexedFabric,
        sym: BoxSymmetry,
        caps: dict[tuple[int, int], int],
        strict: bool = True,
    ):
        self.sym = sym
        self.strict = strict
        self.N = fabric.num_compute
        self.budget: dict[Orbit, int] = {}
        self.out: dict[int, list[tuple[int, Orbit]]] = {v: [] for v in fabric.compute}
        for (x, y), c in caps.items():
            key = self.orbit(x, y)
            self.out[x].append((y, key))
            if sym.box_of[x] == 0:
                self.budget[key] = c

    def orbit(self, x: int, y: int) -> Orbit:
        sym = self.sym
        return (
            int(sym.pos_of[x]),
            int(sym.pos_of[y]),
            int(sym.box_of[y] - sym.box_of[x]) % sym.boxes,
        )

    def grow(self, root: int, mult: int) -> list[tuple[int, int]] | None:
        """A spanning tree of ``mult`` copies (edges in BFS order); budgets are spent only on
        success.

        A tree enters each other box once: a cross-box edge is taken only into a box the tree
        has not reached yet (the other vertices of the box wait for an in-box edge), unless
        nothing else is left (``mode`` 2), or always when not ``strict``. ``mode`` 0 grows from
        the last level, 1 from every vertex so far (when the last level's edges ran out).
        """
        budget, box_of = self.budget, self.sym.box_of
        spent: list[Orbit] = []
        seen = {root}
        entered = {int(box_of[root])}
        frontier = [root]
        edges: list[tuple[int, int]] = []
        order = [root]  # seen vertices in the order they joined
        mode = 0
        while len(seen) < self.N:
            if not frontier:
                if mode == 2:
                    break
                mode += 1
                frontier = list(order)
            best: dict[int, list[tuple[int, Orbit]]] = {}
            for x in frontier:
                for y, key in self.out[x]:
                    if y not in seen and budget[key] >= mult:
                        best.setdefault(y, []).append((x, key))
            nxt = []
            for y in sorted(best):
                fresh = int(box_of[y]) not in entered
                choice, rank = None, None
                for x, key in best[y]:
                    inside = key[2] == 0
                    if not (inside or fresh or mode == 2 or not self.strict) or budget[key] < mult:
                        continue
                    here = (inside, budget[key])
                    if choice is None or here > rank:
                        choice, rank = (x, key), here
                if choice is None:
                    continue
                budget[choice[1]] -= mult
                spent.append(choice[1])
                edges.append((choice[0], y))
                seen.add(y)
                entered.add(int(box_of[y]))
                nxt.append(y)
            if nxt:
                mode = 0
            order += nxt
            frontier = nxt
        if len(seen) < self.N:
            for key in spent:
                budget[key] += mult
            return None
        return edges
