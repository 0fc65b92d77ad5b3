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

import math
from collections.abc import Callable
from typing import cast

import numpy as np

from solver.algorithm.orbit_packing import _pack
from solver.algorithm.plan_split import _PlanSplitter
from solver.algorithm.splitting import Path, _join, _take
from solver.algorithm.symmetry import BoxSymmetry, PartsBelow
from solver.flow.csr import IndexedFabric
from solver.flow.jit import njit

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
            _LazyOrbitPacker(fabric, sym, rep_caps, k, strict),
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
    periods = sorted({int(x) for x in sym.period})
    if any(b % a for a, b in zip(periods, periods[1:])):
        return None  # periods that do not divide each other: no canonical edge representatives
    splitter = _OrbitSplitter(fabric, caps, k, sym)
    for w0 in [int(v) for v in sym.node_at[0] if not fabric.is_compute[v]]:
        if check is not None:
            check()
        if not splitter.split_box_switch(w0):
            return None
    # the switches outside the boxes, one per cycle of σ, from the compute side outwards: a
    # zone's spines (period = the zones) before the cluster's core (fixed)
    outside = [
        v
        for v in range(fabric.n)
        if not fabric.is_compute[v] and sym.box_of[v] < 0 and sym.phase[v] == 0
    ]
    outside.sort(key=lambda v: -int(sym.period[v]))
    for w in outside:
        if check is not None:
            check()
        if not splitter.split_outside_switch(w):
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
        # switches (what the plans read); translates are kept at their phase-0 copy (a box
        # node's at box 0, a zone spine's at zone 0)
        self.graph = _SwitchAdjacency()
        for v in range(fabric.n):
            if sym.phase[v] == 0 and (sym.box_of[v] >= 0 or not fabric.is_compute[v]):
                self.graph.out[v] = set()
                if not fabric.is_compute[v]:
                    self.graph.inn[v] = set()
        for e, c in caps.items():
            if c > 0:
                self._link(*e)
        self.num_splits = 0

    def key(self, u: int, v: int) -> tuple[tuple[int, int], int]:
        """(representative of the orbit of (u, v), b) with (u, v) = σ^b(representative): the
        edge moved so that its end of the longer cycle (a box node's, else a nested switch's)
        is at phase 0 (periods divide each other: :func:`split_orbits` checks it)."""
        sym = self.sym
        x = u if sym.period[u] >= sym.period[v] else v
        b = int(sym.phase[x])
        if b == 0:
            return (u, v), 0
        return (sym.translate(u, -b), sym.translate(v, -b)), b

    def _link(self, u: int, v: int, add: bool = True) -> None:
        """Record (or forget) the actual edge (u, v) at its ends' phase-0 copies."""
        self._touch(self.graph.inn, v, u, add)
        self._touch(self.graph.out, u, v, add)

    def _touch(self, table: dict[int, set[int]], end: int, other: int, add: bool) -> None:
        sym = self.sym
        b = int(sym.phase[end])
        if b:  # kept at the phase-0 copy of the node
            end, other = sym.translate(end, -b), sym.translate(other, -b)
        if end not in table:
            return
        if add:
            table[end].add(other)
        else:
            table[end].discard(other)

    def _orbit_link(self, u: int, v: int, add: bool) -> None:
        """Every translate of (u, v) at its ends' phase-0 copies: the copy of an end of period
        d meets lcm/d translates of the edge (lcm of the two periods): a fixed switch every
        translate of an edge to a box, a box node one."""
        sym = self.sym
        span = max(int(sym.period[u]), int(sym.period[v]))
        for end, other, table in ((v, u, self.graph.inn), (u, v, self.graph.out)):
            b = int(sym.phase[end])
            e0, o0 = sym.translate(end, -b), sym.translate(other, -b)
            if e0 not in table:
                continue
            d = int(sym.period[end])
            if span == d:
                others = [o0]
            else:
                steps = np.arange(0, span, d, dtype=np.int64)
                others = sym.cycle_nodes[
                    sym.cycle_start[o0] + (sym.phase[o0] + steps) % sym.period[o0]
                ].tolist()
            s = table[e0]
            if add:
                s.update(others)
            else:
                s.difference_update(others)

    def _unlink_all(self, w: int) -> None:
        """Forget every edge at the split switch w: each orbit of its edges once."""
        keys = {self.key(x, w)[0] for x in self.graph.inn[w]}
        keys |= {self.key(w, x)[0] for x in self.graph.out[w]}
        for a, b in keys:
            self._orbit_link(a, b, False)
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

    def split_fixed_switch(self, w: int, plan: list[tuple[int, int, int]] | None = None) -> bool:
        """Split w by its σ-invariant plan (``plan``, computed when not given), kept for box 0
        only (the orbit's representative)."""
        sym = self.sym
        if plan is None:
            plan = self.fixed_switch_plan(w)
        if plan is None:
            return False
        # the order in which the full splitting consumes every record (see plan_split)
        order = sorted(
            range(len(plan)),
            key=lambda i: ((int(sym.box_of[plan[i][0]] - sym.box_of[plan[i][1]]) % sym.boxes), i),
        )
        return self._apply(w, [plan[i] for i in order])

    def split_outside_switch(self, w: int) -> bool:
        """Split w (outside the boxes, phase 0) and its translates: a fixed switch with box
        neighbours only by its σ-invariant plan, any other by :meth:`nested_switch_plan`."""
        if not self.graph.inn[w] and not self.graph.out[w]:
            return True  # nothing left at w (its links were trimmed to nothing)
        sym = self.sym
        if sym.period[w] == 1:
            fixed = self.fixed_switch_plan(w)
            if fixed is not None:
                return self.split_fixed_switch(w, fixed)
        plan = self.nested_switch_plan(w)
        return plan is not None and self._apply(w, list(plan))

    def nested_switch_plan(self, w: int) -> list[tuple[int, int, int, int, int]] | None:
        """The plan of a switch w whose neighbours have other periods than the boxes (a zone's
        spine between racks and the core), invariant under w's stabiliser H = ⟨σ^p⟩ (p the
        period of w, q = B/p its order), as entries (u, t, x, a, c); ``None`` if none exists.

        A plan is a function on the H-orbits of pairs (u, t) (u an in-, t an out-neighbour).
        Rows are the H-orbits of in-neighbours, columns those of out-neighbours; a row u whose
        stabiliser H_u in H is not trivial (a core switch seen from a zone spine) must send the
        same to every column of an H_u-orbit, so its pairs are the H_u-orbits of columns. In
        units of 1/|H_u| of a row's capacity and 1/|H_t| of a column's, one unit on the pair
        orbit P is one unit out of its row and one into its column (|P|/q of a unit on each of
        P's pairs), so the plan is a max-flow again: row supply c(u, w)/|H_u|, column demand
        c(w, t)/|H_t| (both must be whole), x = f·B/lcm(p, p_u, p_t) units per pair, taking
        a = f·|H_u| from each link (u, w) and c = f·|H_t| from each link (w, t). Pairs whose
        edge (u, t) is shorter-lived than w (two core switches through a zone spine) are left
        out: such an edge would take units from several translates of w at once.
        """
        sym, cur, comp = self.sym, self.cur, self.fabric_compute
        B, p = sym.boxes, int(sym.period[w])
        per = [int(x) for x in sym.period]

        def lcm(*xs: int) -> int:
            out = 1
            for x in xs:
                out = out * x // math.gcd(out, x)
            return out

        def orbit_rep(v: int, g: int) -> int:
            """The node of v's orbit under ⟨σ^g⟩ with the smallest phase."""
            d = math.gcd(g, per[v])
            ph = int(sym.phase[v])
            return sym.translate(v, -(ph - ph % d))

        def stab(v: int) -> int:
            return B // lcm(p, per[v])

        ins, outs = sorted(self.graph.inn[w]), sorted(self.graph.out[w])
        rows = sorted({orbit_rep(u, p) for u in ins})
        class_of = {t: orbit_rep(t, p) for t in outs}
        row_caps = []
        for u in rows:
            c, h = cur[(u, w)], stab(u)
            if c % h:
                return None
            row_caps.append(c // h)
        class_demand = {}
        for t in set(class_of.values()):
            c, h = cur[(w, t)], stab(t)
            if c % h:
                return None
            class_demand[t] = c // h
        supply = sum(row_caps)
        if supply != sum(class_demand.values()):
            return None
        total = sum(cur[(u, w)] for u in ins)  # real units through w (every in-link)
        part = self.parts(int(self.parts.hops[w]))
        part_in, part_out = self.part_sums(w, ins, outs, part)
        arcs: list[tuple[int, list[int]]] = []  # per row: its pair orbits' columns
        cols: list[int] = []
        col_index: dict[int, int] = {}
        for u in rows:
            span = lcm(p, per[u])
            heads = sorted({orbit_rep(t, span) for t in outs})
            keep = [t for t in heads if t != u and lcm(per[u], per[t]) == lcm(span, per[t])]
            for t in keep:
                if t not in col_index:
                    col_index[t] = len(cols)
                    cols.append(t)
            arcs.append((u, [col_index[t] for t in keep]))
        col = np.asarray(cols, dtype=np.int64)
        col_class = {t: class_of.get(t, orbit_rep(t, p)) for t in cols}
        for attempt in range(3):
            pieces = []
            for i, (u, idx_list) in enumerate(arcs):
                idx = np.asarray(idx_list, dtype=np.int64)
                if len(idx):
                    idx = idx[self._box_order(u, col[idx])]
                if attempt == 0 and not comp[u]:
                    idx = idx[comp[col[idx]]]
                if attempt < 2:
                    idx = idx[~self.same_part(w, u, col[idx])]
                per_pair = np.asarray(
                    [B // lcm(p, per[u], per[t]) for t in col[idx].tolist()], dtype=np.int64
                )
                demand = np.asarray(
                    [class_demand[col_class[t]] for t in col[idx].tolist()], dtype=np.int64
                )
                cap = np.minimum(demand, row_caps[i])
                if attempt < 2:
                    # the proportional share c(u, w)·c(w, t)/total per pair, in flow units
                    # among the partners outside u's part (rest_u) and t's (rest_t)
                    ct = np.asarray([cur[(w, t)] for t in col[idx].tolist()], dtype=object)
                    prod = ct * cur[(u, w)]
                    own = part_out.get(int(part[u]), 0) if part[u] >= 0 else 0
                    rest_u = max(1, total - own)
                    rest_t = np.asarray(
                        [
                            max(1, total - (part_in.get(int(part[t]), 0) if part[t] >= 0 else 0))
                            for t in col[idx].tolist()
                        ],
                        dtype=object,
                    )
                    small = np.minimum(prod // rest_u, prod // rest_t) // per_pair
                    ceil = np.maximum(-(-prod // rest_u), -(-prod // rest_t))
                    small = np.asarray(small, dtype=np.int64)
                    big = np.asarray(-(-ceil // per_pair), dtype=np.int64)
                    cap = np.minimum(cap, np.maximum(big, self.k))
                    low = np.minimum(cap, np.maximum(small, self.k))
                else:
                    low = cap
                pieces.append((np.full(len(idx), i, dtype=np.int64), idx, low, cap, None))
            flows = self._solve_plan(
                w, rows, cols, col_class, class_demand, pieces, supply, row_caps
            )
            if flows is not None:
                return [
                    (u, t, f * (B // lcm(p, per[u], per[t])), f * stab(u), f * stab(t))
                    for u, t, f in flows
                ]
        return None

    # ------------------------------------------------------------------ applying a plan
    def _apply(self, w: int, plan: list) -> bool:  # type: ignore[override]
        """Apply plan entries (u, t, x) or (u, t, x, a, c): x units on the edge (u, t) taken
        from a units of (u, w)'s record and c of (w, t)'s (a, c: multiples of x; more than x
        where several translates of (u, t) share the edge (u, w) or (w, t), see
        :meth:`nested_switch_plan`)."""
        rep, paths = self.rep, self.paths
        for entry in plan:
            u, t, x = entry[:3]
            take_in, take_out = entry[3:] if len(entry) == 5 else (x, x)
            (ku, bu), (kt, bt) = self.key(u, w), self.key(w, t)
            a, b = rep.get(ku, 0), rep.get(kt, 0)
            if take_in > a or take_out > b or u == t:
                return False
            head = _share(self._moved(_take(paths[ku], take_in), bu), take_in // x)
            tail = _share(self._moved(_take(paths[kt], take_out), bt), take_out // x)
            if head is None or tail is None:
                return False  # a record whose paths do not split evenly over the translates
            rep[ku], rep[kt] = a - take_in, b - take_out
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


def _entry_levels(fabric: IndexedFabric, sym: BoxSymmetry) -> list[np.ndarray]:
    """Part id per node at every level a tree should enter only once: the boxes, and the parts
    below each switch tier (:class:`~solver.algorithm.symmetry.PartsBelow`: hosts, racks,
    zones) that group the compute nodes neither one by one nor all together."""
    comp = np.asarray(fabric.compute, dtype=np.int64)
    parts = PartsBelow(fabric)
    box = np.where(sym.box_of >= 0, sym.box_of, -1)
    box = np.where(box >= 0, box, int(box.max()) + 1 + np.arange(fabric.n))
    found = [np.asarray(box, dtype=np.int64)]
    for h in sorted({int(x) for x in parts.hops[~np.asarray(fabric.is_compute, dtype=bool)]}):
        part = parts(h)
        if part[comp].min() < 0:
            continue
        groups = len(np.unique(part[comp]))
        if 1 < groups < len(comp):
            found.append(np.where(part >= 0, part, int(part.max()) + 1 + np.arange(fabric.n)))
    # the boxes first, then finest first; duplicates of a partition of the compute nodes dropped
    found[1:] = sorted(found[1:], key=lambda a: -len(np.unique(a[comp])))
    out: list[np.ndarray] = []
    for a in found:
        if not any(_same_partition(a[comp], b[comp]) for b in out):
            out.append(a)
    return out


def _tight_levels(
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    rep_caps: dict[tuple[int, int], int],
    k: int,
    levels: list[np.ndarray],
) -> list[bool]:
    """Per level, whether its parts have no ingress to spare, so that each tree must enter
    each part exactly once: σ permutes a level's parts, so one part's ingress is the capacity
    crossing between parts (B times the representatives') over the number of parts."""
    comp = np.asarray(fabric.compute, dtype=np.int64)
    N = len(comp)
    out = []
    for part in levels:
        ids, sizes = np.unique(part[comp], return_counts=True)
        crossing = sum(c for (x, y), c in rep_caps.items() if part[x] != part[y])
        even = len(set(sizes.tolist())) == 1
        out.append(even and crossing * sym.boxes <= (N - int(sizes[0])) * k * len(ids))
    return out


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = np.unique(np.stack([a, b]), axis=1)
    return len(pairs[0]) == len(np.unique(a)) == len(np.unique(b))


def _share(pieces: list[tuple[Path, int]], parts: int) -> list[tuple[Path, int]] | None:
    """One of ``parts`` equal shares of the paths (each multiplicity divided), or ``None``."""
    if parts == 1:
        return pieces
    if any(m % parts for _, m in pieces):
        return None
    return [(path, m // parts) for path, m in pieces]


class _LazyOrbitPacker:
    """Orbit-budget tree growth (:class:`solver.algorithm.orbit_packing._OrbitPacker`) on the
    representative edges: a vertex's out-edges are its position's, moved to its box."""

    def __init__(
        self,
        fabric: IndexedFabric,
        sym: BoxSymmetry,
        rep_caps: dict[tuple[int, int], int],
        k: int,
        strict: bool = True,
    ):
        self.sym, self.strict, self.N = sym, strict, fabric.num_compute
        self.n = fabric.n
        keys = list(rep_caps)
        self.levels = _entry_levels(fabric, sym)
        # boxes always (one entry per box, as for a plain translation), the parts around them
        # (SUs, zones) only where their ingress is tight: an SU with uplinks to spare may
        # need trees that enter it twice
        self.tight = _tight_levels(fabric, sym, rep_caps, k, self.levels)
        self.tight[0] = True
        self.budget = np.asarray([rep_caps[e] for e in keys], dtype=np.int64)
        by_pos: dict[int, list[int]] = {}
        for i, (x, _) in enumerate(keys):
            by_pos.setdefault(int(sym.pos_of[x]), []).append(i)
        # the representatives' out-edges by the tail's position (CSR): head box offset and
        # position, edge id
        ids = [i for p in range(sym.size) for i in by_pos.get(p, [])]
        self.pos_start = np.zeros(sym.size + 1, dtype=np.int64)
        self.pos_start[1:] = np.cumsum([len(by_pos.get(p, [])) for p in range(sym.size)])
        heads = [keys[i][1] for i in ids]
        self.pos_dbox = np.asarray([sym.box_of[y] for y in heads], dtype=np.int64)
        self.pos_pos = np.asarray([sym.pos_of[y] for y in heads], dtype=np.int64)
        self.pos_id = np.asarray(ids, dtype=np.int64)
        self.level_of = np.ascontiguousarray(np.stack(self.levels), dtype=np.int64)
        self.tight_mask = np.asarray(self.tight, dtype=np.bool_)
        self.node_at = np.ascontiguousarray(sym.node_at, dtype=np.int64)
        self.box_of = np.ascontiguousarray(sym.box_of, dtype=np.int64)
        self.pos_of = np.ascontiguousarray(sym.pos_of, dtype=np.int64)

    def grow(self, root: int, mult: int) -> list[tuple[int, int]] | None:
        """A spanning tree of ``mult`` copies, or ``None`` (budgets then restored)."""
        edges = np.empty((max(self.N - 1, 1), 2), dtype=np.int64)
        got = _lazy_grow_kernel(
            root,
            mult,
            self.N,
            self.strict,
            self.pos_start,
            self.pos_dbox,
            self.pos_pos,
            self.pos_id,
            self.node_at,
            self.box_of,
            self.pos_of,
            self.budget,
            self.level_of,
            self.tight_mask,
            edges,
        )
        if got < 0:
            return None
        return list(zip(edges[:got, 0].tolist(), edges[:got, 1].tolist()))


@njit
def _lazy_grow(
    root,
    mult,
    N,
    strict,
    pos_start,
    pos_dbox,
    pos_pos,
    pos_id,
    node_at,
    box_of,
    pos_of,
    budget,
    level_of,
    tight,
    edges,
):
    """Grow one tree of ``mult`` copies from ``root`` level by level; the number of edges
    written to ``edges``, or -1 (budgets restored) when it cannot span.

    A vertex x's out-edges are its position's representatives moved to x's box. Per level the
    candidates (x, y, edge) with y unseen and budget left are grouped by head y (ascending; per
    head in frontier order); y takes, among those with budget >= mult that enter no tight part
    (a box, a pod) already entered (unless ``strict`` is off or the search is in its last mode),
    the one inside the most parts, then with the most budget. A level that reaches nothing
    widens the frontier to every vertex reached (mode 1), then drops the entry rule (mode 2).
    """
    B = node_at.shape[0]
    L = level_of.shape[0]
    n = box_of.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    entered = np.zeros((L, level_of.max() + 1), dtype=np.bool_)
    order = np.empty(N, dtype=np.int64)
    spent = np.empty(N, dtype=np.int64)
    slot = np.zeros(n, dtype=np.int64)
    heads = np.empty(n, dtype=np.int64)
    seen[root] = True
    for lv in range(L):
        entered[lv, level_of[lv, root]] = True
    order[0] = root
    n_order = 1
    lo, hi = 0, 1  # the frontier is order[lo:hi]
    count = 1
    mode = 0
    while count < N:
        if lo == hi:
            if mode == 2:
                break
            mode += 1
            lo, hi = 0, n_order
        # pass 1: candidates per head, and the distinct heads
        total = 0
        m = 0
        for i in range(lo, hi):
            x = order[i]
            p = pos_of[x]
            bx = box_of[x]
            for a in range(pos_start[p], pos_start[p + 1]):
                y = node_at[(pos_dbox[a] + bx) % B, pos_pos[a]]
                if not seen[y] and budget[pos_id[a]] >= mult:
                    if slot[y] == 0:
                        heads[m] = y
                        m += 1
                    slot[y] += 1
                    total += 1
        before = n_order
        if total:
            hs = np.sort(heads[:m])
            starts = np.empty(m + 1, dtype=np.int64)
            run = 0
            for j in range(m):
                starts[j] = run
                c = slot[hs[j]]
                slot[hs[j]] = run
                run += c
            starts[m] = run
            cx = np.empty(total, dtype=np.int64)
            ck = np.empty(total, dtype=np.int64)
            # pass 2: fill, in frontier order per head
            for i in range(lo, hi):
                x = order[i]
                p = pos_of[x]
                bx = box_of[x]
                for a in range(pos_start[p], pos_start[p + 1]):
                    y = node_at[(pos_dbox[a] + bx) % B, pos_pos[a]]
                    if not seen[y] and budget[pos_id[a]] >= mult:
                        at = slot[y]
                        cx[at] = x
                        ck[at] = pos_id[a]
                        slot[y] = at + 1
            for j in range(m):
                slot[hs[j]] = 0
            rule = strict and mode < 2
            for j in range(m):
                y = hs[j]
                top = 0
                for c in range(starts[j], starts[j + 1]):
                    if budget[ck[c]] > top:
                        top = budget[ck[c]]
                best = -1
                best_score = -1
                for c in range(starts[j], starts[j + 1]):
                    have = budget[ck[c]]
                    if have < mult:
                        continue
                    x = cx[c]
                    depth = 0
                    free = True
                    for lv in range(L):
                        if level_of[lv, x] == level_of[lv, y]:
                            depth += 1
                        elif tight[lv] and entered[lv, level_of[lv, y]]:
                            free = False
                    if rule and not free:
                        continue
                    score = have + depth * (top + 1)
                    if score > best_score:
                        best_score = score
                        best = c
                if best < 0:
                    continue
                key = ck[best]
                budget[key] -= mult
                spent[count - 1] = key
                edges[count - 1, 0] = cx[best]
                edges[count - 1, 1] = y
                seen[y] = True
                count += 1
                for lv in range(L):
                    entered[lv, level_of[lv, y]] = True
                order[n_order] = y
                n_order += 1
        if n_order > before:
            mode = 0
        lo, hi = before, n_order
    if count < N:
        for i in range(count - 1):
            budget[spent[i]] += mult
        return -1
    return count - 1


# mypy sees numba's decorator, not the kernel it returns
_lazy_grow_kernel = cast("Callable[..., int]", _lazy_grow)
