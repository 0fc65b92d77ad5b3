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
from typing import NamedTuple, cast

import numpy as np

from solver.algorithm.packing import TreeClass
from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric
from solver.flow.jit import njit_noalloc

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
    """Orbit budgets and the out-edges of every compute node, as arrays for :func:`_grow`."""

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
        n = fabric.n
        ids: dict[Orbit, int] = {}
        budget: list[int] = []
        out: dict[int, list[tuple[int, int]]] = {v: [] for v in fabric.compute}
        for (x, y), c in caps.items():
            key = self.orbit(x, y)
            i = ids.get(key)
            if i is None:
                i = ids[key] = len(budget)
                budget.append(-1)  # an orbit with no edge in box 0 is never taken
            out[x].append((y, i))
            if sym.box_of[x] == 0:
                budget[i] = c
        indptr = np.zeros(n + 1, dtype=np.int64)
        for x, row in out.items():
            indptr[x + 1] = len(row)
        np.cumsum(indptr, out=indptr)
        self.indptr = indptr
        self.head = np.empty(int(indptr[-1]), dtype=np.int64)
        self.key = np.empty(int(indptr[-1]), dtype=np.int64)
        for x, row in out.items():
            a = int(indptr[x])
            for j, (y, i) in enumerate(row):
                self.head[a + j] = y
                self.key[a + j] = i
        self.budget = np.asarray(budget, dtype=np.int64)
        self.inside = np.asarray([key[2] == 0 for key in ids], dtype=np.bool_)
        # box + 1 per node (0: outside the boxes), so that an index is never negative
        self.box1 = (np.asarray(sym.box_of, dtype=np.int64) + 1).copy()
        E = len(self.head)
        self.work = _Work(
            seen=np.zeros(n, dtype=np.bool_),
            entered=np.zeros(sym.boxes + 1, dtype=np.bool_),
            frontier=np.empty(self.N, dtype=np.int64),
            nxt=np.empty(self.N, dtype=np.int64),
            order=np.empty(self.N, dtype=np.int64),
            spent=np.empty(self.N, dtype=np.int64),
            ex=np.empty(self.N, dtype=np.int64),
            ey=np.empty(self.N, dtype=np.int64),
            cand_x=np.empty(max(E, 1), dtype=np.int64),
            cand_key=np.empty(max(E, 1), dtype=np.int64),
            cand_next=np.empty(max(E, 1), dtype=np.int64),
            first=np.full(n, -1, dtype=np.int64),
            last=np.full(n, -1, dtype=np.int64),
        )

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
        A vertex of the next level takes, among its in-edges from the current level (in the
        order the level lists them), the first best by (inside its box, budget left).
        """
        w = self.work
        count = _grow_kernel(
            root,
            mult,
            self.N,
            self.strict,
            self.indptr,
            self.head,
            self.key,
            self.budget,
            self.inside,
            self.box1,
            w.seen,
            w.entered,
            w.frontier,
            w.nxt,
            w.order,
            w.spent,
            w.ex,
            w.ey,
            w.cand_x,
            w.cand_key,
            w.cand_next,
            w.first,
            w.last,
        )
        if count < 0:
            return None
        return list(zip(w.ex[:count].tolist(), w.ey[:count].tolist()))


class _Work(NamedTuple):
    seen: np.ndarray
    entered: np.ndarray
    frontier: np.ndarray
    nxt: np.ndarray
    order: np.ndarray
    spent: np.ndarray
    ex: np.ndarray
    ey: np.ndarray
    cand_x: np.ndarray
    cand_key: np.ndarray
    cand_next: np.ndarray
    first: np.ndarray
    last: np.ndarray


@njit_noalloc
def _grow(
    root,
    mult,
    N,
    strict,
    indptr,
    head,
    key,
    budget,
    inside,
    box1,
    seen,
    entered,
    frontier,
    nxt,
    order,
    spent,
    ex,
    ey,
    cand_x,
    cand_key,
    cand_next,
    first,
    last,
):
    """One greedy tree (see :meth:`_OrbitPacker.grow`); its edges in ``ex``/``ey``. Returns
    the number of edges, or -1 (budgets restored) when the tree cannot span. The work arrays
    ``seen``, ``entered``, ``first`` and ``last`` are left as they were found."""
    seen[root] = True
    entered[box1[root]] = True
    n_seen = 1
    frontier[0] = root
    n_front = 1
    order[0] = root
    n_order = 1
    n_edges = 0
    mode = 0
    while n_seen < N:
        if n_front == 0:
            if mode == 2:
                break
            mode += 1
            for i in range(n_order):
                frontier[i] = order[i]
            n_front = n_order
        # candidates per unseen head, in frontier order (a linked list per head)
        n_cand = 0
        lo_y = len(seen)
        hi_y = -1
        for i in range(n_front):
            x = frontier[i]
            for a in range(indptr[x], indptr[x + 1]):
                y = head[a]
                kk = key[a]
                if seen[y] or budget[kk] < mult:
                    continue
                cand_x[n_cand] = x
                cand_key[n_cand] = kk
                cand_next[n_cand] = -1
                if first[y] < 0:
                    first[y] = n_cand
                    lo_y = min(lo_y, y)
                    hi_y = max(hi_y, y)
                else:
                    cand_next[last[y]] = n_cand
                last[y] = n_cand
                n_cand += 1
        n_next = 0
        for y in range(lo_y, hi_y + 1):
            c = first[y]
            if c < 0:
                continue
            first[y] = -1
            last[y] = -1
            fresh = not entered[box1[y]]
            choice = -1
            best_in = False
            best_budget = 0
            while c >= 0:
                kk = cand_key[c]
                ins = inside[kk]
                if (ins or fresh or mode == 2 or not strict) and budget[kk] >= mult:
                    if (
                        choice < 0
                        or (ins and not best_in)
                        or (ins == best_in and budget[kk] > best_budget)
                    ):
                        choice = c
                        best_in = ins
                        best_budget = budget[kk]
                c = cand_next[c]
            if choice < 0:
                continue
            kk = cand_key[choice]
            budget[kk] -= mult
            spent[n_edges] = kk
            ex[n_edges] = cand_x[choice]
            ey[n_edges] = y
            n_edges += 1
            n_seen += 1
            seen[y] = True
            entered[box1[y]] = True
            nxt[n_next] = y
            n_next += 1
        if n_next:
            mode = 0
        for i in range(n_next):
            order[n_order + i] = nxt[i]
            frontier[i] = nxt[i]
        n_order += n_next
        n_front = n_next
    for i in range(n_order):
        seen[order[i]] = False
        entered[box1[order[i]]] = False
    if n_seen < N:
        for i in range(n_edges):
            budget[spent[i]] += mult
        return -1
    return n_edges


# mypy sees numba's decorator, not the kernel it returns
_grow_kernel = cast("Callable[..., int]", _grow)
