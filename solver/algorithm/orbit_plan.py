"""Steps 2 and 3 on edge orbits only: switch plans and box-0 trees without the full logical graph.

:mod:`solver.algorithm.plan_split` splits every switch by a σ-equivariant plan and applies it to
every box; on a rail fabric the rail plans spread each GPU's capacity over every other box, so
the logical graph has about N²/8 edges (16 384 GPUs: 3.4·10⁷ edges with their path records).
Everything in it is σ-invariant, though, so one edge per *orbit* determines it. This module
keeps exactly that: the representative of an orbit is its edge moved so that its tail (or, for
a tail outside the boxes, its head) lies in box 0.

- A box switch w0 of box 0 is split by its plan once; the edges at w0 are the representatives
  of their orbits, so the plan's entries are applied to the representatives only.
- A switch w outside the boxes (a rail) has, per orbit, one in-edge from each box-0 position;
  its σ-invariant plan (rows = box-0 in-neighbours) is applied row by row, each entry (u, t)
  taking from the record of (u, w) and from the record of (w, t)'s representative, whose paths
  are moved by σ^box(t). Entries consume the records in the order of :mod:`plan_split` (by
  box offset, then plan order), so the records equal those of the full splitting (tested).
- :class:`_LazyOrbitPacker` grows box-0 trees like :mod:`solver.algorithm.orbit_packing`, but
  builds a vertex's out-edges from its position's representatives when it needs them
  (vectorised), instead of holding N·degree edges.

No invariant is checked here (one max-flow per orbit on the full logical graph is what this
avoids): the caller checks the result's exact link loads (:mod:`solver.algorithm.compressed`),
and the verifier checks the plan (:mod:`solver.algorithm.verify_plan`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.algorithm.orbit_packing import _pack
from solver.algorithm.plan_split import _PlanSplitter
from solver.algorithm.splitting import Path, _join, _take
from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric

RepClass = tuple[int, int, list[tuple[int, int]]]


def pack_orbits(
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    rep_caps: dict[tuple[int, int], int],
    k: int,
    check: Callable[[], None] | None = None,
) -> list[RepClass] | None:
    """Box-0 tree classes on the representative logical edges (:func:`split_orbits`), or
    ``None`` when both greedy variants of :mod:`solver.algorithm.orbit_packing` get stuck."""
    for strict in (True, False):
        reps = _pack(
            _LazyOrbitPacker(fabric, sym, rep_caps, strict),
            sym.representatives(fabric),
            k,
            check,
            rounds=strict,
        )
        if reps is not None:
            return reps
    return None


def split_orbits(
    fabric: IndexedFabric,
    caps: dict[tuple[int, int], int],
    k: int,
    sym: BoxSymmetry,
    check: Callable[[], None] | None = None,
) -> tuple[dict[tuple[int, int], int], dict[tuple[int, int], dict[Path, int]]] | None:
    """(capacity, path record) of every representative compute-to-compute edge, or ``None``."""
    splitter = _OrbitSplitter(fabric, caps, k, sym)
    for w0 in [int(v) for v in sym.node_at[0] if not fabric.is_compute[v]]:
        if check is not None:
            check()
        if not splitter.split_box_switch(w0):
            return None
    for w in [v for v in range(fabric.n) if not fabric.is_compute[v] and sym.box_of[v] < 0]:
        if check is not None:
            check()
        if not splitter.split_fixed_switch(w):
            return None
    comp = fabric.is_compute
    rep_caps = {e: c for e, c in splitter.rep.items() if c > 0 and comp[e[0]] and comp[e[1]]}
    return rep_caps, {e: splitter.paths[e] for e in rep_caps}


class _Caps:
    """Capacities of actual edges, read from their orbit representatives (what ``_plan`` reads)."""

    def __init__(self, owner: _OrbitSplitter):
        self.owner = owner

    def __getitem__(self, e: tuple[int, int]) -> int:
        return self.owner.rep[self.owner.key(*e)[0]]

    def get(self, e: tuple[int, int], default: int = 0) -> int:
        return self.owner.rep.get(self.owner.key(*e)[0], default)


class _SwitchAdjacency:
    """In/out neighbours (actual nodes) of some nodes: see :class:`_OrbitSplitter`."""

    def __init__(self):
        self.inn: dict[int, set[int]] = {}
        self.out: dict[int, set[int]] = {}


class _OrbitSplitter(_PlanSplitter):
    def __init__(
        self, fabric: IndexedFabric, caps: dict[tuple[int, int], int], k: int, sym: BoxSymmetry
    ):
        super().__init__(fabric, caps, k, sym)  # partner orders etc.; O(links), not O(N²)
        self.rep: dict[tuple[int, int], int] = {}
        self.paths = {}
        for e, c in caps.items():
            if c > 0:
                key, shift = self.key(*e)
                if shift == 0 and key == e:
                    self.rep[key] = c
                    self.paths[key] = {e: c}
        self.cur = _Caps(self)
        # out-neighbours of box-0 nodes and switches outside the boxes, in-neighbours of those
        # switches (what the plans read); translates of box nodes are kept at their box-0 copy
        self.graph = _SwitchAdjacency()
        for v in range(fabric.n):
            if sym.box_of[v] == 0 or (sym.box_of[v] < 0 and not fabric.is_compute[v]):
                self.graph.out[v] = set()
                if not fabric.is_compute[v]:
                    self.graph.inn[v] = set()
        for e, c in caps.items():
            if c > 0:
                self._link(*e)
        self.num_splits = 0

    def key(self, u: int, v: int) -> tuple[tuple[int, int], int]:
        """(representative of the orbit of (u, v), b) with (u, v) = σ^b(representative)."""
        box_of = self.sym.box_of
        b = int(box_of[u]) if box_of[u] >= 0 else int(box_of[v]) if box_of[v] >= 0 else 0
        if b == 0:
            return (u, v), 0
        return (self.sym.translate(u, -b), self.sym.translate(v, -b)), b

    def _link(self, u: int, v: int, add: bool = True) -> None:
        """Record (or forget) the actual edge (u, v) at its switch ends of box 0 / outside."""
        self._touch(self.graph.inn, v, u, add)
        self._touch(self.graph.out, u, v, add)

    def _touch(self, table: dict[int, set[int]], end: int, other: int, add: bool) -> None:
        sym = self.sym
        b = int(sym.box_of[end])
        if b > 0:  # kept at the box-0 copy of the switch
            end, other = sym.translate(end, -b), sym.translate(other, -b)
        if end not in table:
            return
        if add:
            table[end].add(other)
        else:
            table[end].discard(other)

    def _orbit_link(self, u: int, v: int, add: bool) -> None:
        """Every translate of (u, v) at the switches kept in the adjacency: a switch outside the
        boxes meets every translate of an edge to a box; a box switch only its box-0 copy's."""
        sym, comp = self.sym, self.fabric.is_compute
        if (sym.box_of[u] < 0 and not comp[u] and sym.box_of[v] >= 0) or (
            sym.box_of[v] < 0 and not comp[v] and sym.box_of[u] >= 0
        ):
            for b in range(sym.boxes):
                self._link(sym.translate(u, b), sym.translate(v, b), add)
        else:
            self._link(u, v, add)

    def _unlink_all(self, w: int) -> None:
        """Forget every edge at the split switch w: w's own sets list every actual neighbour,
        so each is dropped once (a neighbour outside the boxes of a box switch: all translates)."""
        sym = self.sym
        for table, other, ends in (
            (self.graph.out, list(self.graph.inn[w]), lambda x: (x, w)),
            (self.graph.inn, list(self.graph.out[w]), lambda x: (w, x)),
        ):
            for x in other:
                if sym.box_of[x] < 0 and sym.box_of[w] >= 0:
                    self._orbit_link(*ends(x), False)
                else:
                    self._touch(table, x, w, False)
        self.graph.inn[w].clear()
        self.graph.out[w].clear()

    # ------------------------------------------------------------------ the two switch kinds
    def split_box_switch(self, w0: int) -> bool:
        sym = self.sym
        for b in range(1, sym.boxes):
            w = sym.translate(w0, b)
            if w in self.graph.inn[w0] or w in self.graph.out[w0]:
                return False
        rows = sorted(self.graph.inn[w0])
        cols = sorted(self.graph.out[w0])
        plan = self._plan(w0, rows, cols, {t: (t,) for t in cols})
        return plan is not None and self._apply(w0, plan)

    def split_fixed_switch(self, w: int) -> bool:
        """Split w by its σ-invariant plan, kept for box 0 only (the orbit's representative)."""
        sym = self.sym
        plan = self.fixed_switch_plan(w)
        if plan is None:
            return False
        # the order in which the full splitting consumes every record (see plan_split)
        order = sorted(
            range(len(plan)),
            key=lambda i: ((int(sym.box_of[plan[i][0]] - sym.box_of[plan[i][1]]) % sym.boxes), i),
        )
        return self._apply(w, [plan[i] for i in order])

    # ------------------------------------------------------------------ applying a plan
    def _apply(self, w: int, plan: list[tuple[int, int, int]]) -> bool:
        rep, paths = self.rep, self.paths
        for u, t, x in plan:
            (ku, bu), (kt, bt) = self.key(u, w), self.key(w, t)
            a, b = rep.get(ku, 0), rep.get(kt, 0)
            if x > a or x > b or u == t:
                return False
            head = self._moved(_take(paths[ku], x), bu)
            tail = self._moved(_take(paths[kt], x), bt)
            rep[ku], rep[kt] = a - x, b - x
            key, shift = self.key(u, t)  # (u, t) = σ^shift(key): its record is moved back
            if key not in rep:
                rep[key] = 0
                self._orbit_link(u, t, True)
            rep[key] += x
            record = paths.setdefault(key, {})
            if len(head) == 1 and len(tail) == 1:
                joined = self._back(head[0][0] + tail[0][0][1:], shift)
                record[joined] = record.get(joined, 0) + x
            else:
                pieces: dict[Path, int] = {}
                _join(head, tail, pieces)
                for path, m in pieces.items():
                    path = self._back(path, shift)
                    record[path] = record.get(path, 0) + m
            self.num_splits += 1
        keys = {self.key(u, w)[0] for u in self.graph.inn[w]}
        keys |= {self.key(w, t)[0] for t in self.graph.out[w]}
        for key in keys:
            if rep.get(key, 0):
                return False  # the plan did not use up the switch
            rep.pop(key, None)
            paths.pop(key, None)
        self._unlink_all(w)
        return True

    def _back(self, path: Path, shift: int) -> Path:
        return path if shift == 0 else tuple(self.sym.translate(v, -shift) for v in path)

    def _moved(self, pieces: list[tuple[Path, int]], b: int) -> list[tuple[Path, int]]:
        if b == 0:
            return pieces
        sym = self.sym
        return [(tuple(sym.translate(v, b) for v in path), m) for path, m in pieces]


class _LazyOrbitPacker:
    """Orbit-budget tree growth (:class:`solver.algorithm.orbit_packing._OrbitPacker`) on the
    representative edges: a vertex's out-edges are its position's, moved to its box."""

    def __init__(
        self,
        fabric: IndexedFabric,
        sym: BoxSymmetry,
        rep_caps: dict[tuple[int, int], int],
        strict: bool = True,
    ):
        self.sym, self.strict, self.N = sym, strict, fabric.num_compute
        self.n = fabric.n
        keys = list(rep_caps)
        self.budget = np.asarray([rep_caps[e] for e in keys], dtype=np.int64)
        self.inside = np.asarray([sym.box_of[y] == 0 for _, y in keys], dtype=bool)
        by_pos: dict[int, list[int]] = {}
        for i, (x, _) in enumerate(keys):
            by_pos.setdefault(int(sym.pos_of[x]), []).append(i)
        self.out: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        for p, ids in by_pos.items():
            heads = [keys[i][1] for i in ids]
            self.out[p] = (
                np.asarray([sym.box_of[y] for y in heads], dtype=np.int64),
                np.asarray([sym.pos_of[y] for y in heads], dtype=np.int64),
                np.asarray(ids, dtype=np.int64),
            )

    def _candidates(self, frontier: list[int], seen: np.ndarray, mult: int):
        sym = self.sym
        xs, ys, ks = [], [], []
        for x in frontier:
            out = self.out.get(int(sym.pos_of[x]))
            if out is None:
                continue
            dbox, pos, ids = out
            heads = sym.node_at[(dbox + sym.box_of[x]) % sym.boxes, pos]
            ok = ~seen[heads] & (self.budget[ids] >= mult)
            if ok.any():
                ys.append(heads[ok])
                ks.append(ids[ok])
                xs.append(np.full(int(ok.sum()), x, dtype=np.int64))
        if not ys:
            return None
        y, key, x = np.concatenate(ys), np.concatenate(ks), np.concatenate(xs)
        order = np.argsort(y, kind="stable")  # by head; per head in frontier order
        return x[order], y[order], key[order]

    def grow(self, root: int, mult: int) -> list[tuple[int, int]] | None:
        """A spanning tree of ``mult`` copies, or ``None`` (budgets then restored)."""
        sym, budget = self.sym, self.budget
        box_of = sym.box_of
        spent: list[int] = []
        seen = np.zeros(self.n, dtype=bool)
        seen[root] = True
        count = 1
        entered = np.zeros(sym.boxes, dtype=bool)
        entered[box_of[root]] = True
        frontier, order = [root], [root]
        edges: list[tuple[int, int]] = []
        mode = 0
        while count < self.N:
            if not frontier:
                if mode == 2:
                    break
                mode += 1
                frontier = list(order)
            found = self._candidates(frontier, seen, mult)
            nxt: list[int] = []
            if found is not None:
                cx, cy, ck = found
                starts = np.flatnonzero(np.r_[True, cy[1:] != cy[:-1]])
                ends = np.r_[starts[1:], len(cy)]
                for s, e in zip(starts.tolist(), ends.tolist()):
                    y = int(cy[s])
                    keys = ck[s:e]
                    have = budget[keys]
                    anyone = mode == 2 or not self.strict or not entered[box_of[y]]
                    inside = self.inside[keys]
                    ok = (have >= mult) & (inside | anyone)
                    if not ok.any():
                        continue
                    score = np.where(ok, have + inside * (int(have.max()) + 1), -1)
                    j = int(np.argmax(score))
                    key = int(keys[j])
                    budget[key] -= mult
                    spent.append(key)
                    edges.append((int(cx[s + j]), y))
                    seen[y] = True
                    count += 1
                    entered[box_of[y]] = True
                    nxt.append(y)
            if nxt:
                mode = 0
            order += nxt
            frontier = nxt
        if count < self.N:
            for key in spent:
                budget[key] += mult
            return None
        return edges
