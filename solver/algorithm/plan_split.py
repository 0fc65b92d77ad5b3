"""Step 2 for symmetric fabrics: remove every switch with one transport plan per switch orbit.

The general splitting (:mod:`solver.algorithm.splitting`) checks the invariant
``λ(s, v) >= N·k`` after every single split, which costs max-flow repairs per split and per
compute node. On a fabric with a box translation σ (:mod:`solver.algorithm.symmetry`) this
module splits each switch in one go instead: a *plan* ``x(u, t)`` says how many units of
``(u, w)`` continue on ``(w, t)``; row sums are the in-capacities, column sums the
out-capacities, so the switch disappears completely. Plans spread every edge over many partners
(units proportional to the partner's capacity, never less than k, partners in other boxes at the
same position first): the logical graph is dense, so trees can be shallow.

Plans are σ-equivariant: the switches of a box are split with the plan of their box-0 copy,
translated; a switch outside the boxes (a rail, a spine, an IB switch) gets a plan that is
invariant under σ (its rows are the box-0 neighbours; a column class is an orbit of
neighbours). So the logical graph is σ-invariant, which orbit packing needs.

Nothing here guarantees the invariant: it is checked once at the end with one max-flow per
orbit of compute nodes, and :func:`split_by_plans` returns ``None`` when it fails (or when a
switch cannot be split this way), so that the caller can fall back to the general splitting.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solver.algorithm.splitting import Path, SplitResult, _Adjacency, _join, _take
from solver.algorithm.symmetry import BoxSymmetry, PartsBelow
from solver.flow.csr import IndexedFabric
from solver.flow.maxflow import INF, FlowNetwork, augment
from solver.flow.sinks import flows_to_sinks


def split_by_plans(
    fabric: IndexedFabric,
    caps: dict[tuple[int, int], int],
    k: int,
    sym: BoxSymmetry,
    check: Callable[[], None] | None = None,
) -> SplitResult | None:
    """Split off every switch by σ-equivariant plans; ``None`` if that does not work out."""
    splitter = _PlanSplitter(fabric, caps, k, sym)
    box_switches = [v for v in sym.node_at[0] if not fabric.is_compute[v]]
    fixed = [v for v in range(fabric.n) if not fabric.is_compute[v] and sym.box_of[v] < 0]
    for w0 in box_switches:
        if check is not None:
            check()
        if not splitter.split_box_switch(int(w0)):
            return None
    for w in fixed:
        if check is not None:
            check()
        if not splitter.split_fixed_switch(w):
            return None
    result = splitter.result()
    if not invariant_holds(fabric, result.caps, k, sym.representatives(fabric), check):
        return None
    return result


def invariant_holds(
    fabric: IndexedFabric,
    caps: dict[tuple[int, int], int],
    k: int,
    sinks: list[int],
    check: Callable[[], None] | None = None,
) -> bool:
    """Whether ``λ(s, v) >= N·k`` for every v in ``sinks`` on the compute graph ``caps``."""
    n, N = fabric.n, fabric.num_compute
    pairs = list(caps)
    net = FlowNetwork(
        n + 1,
        [u for u, _ in pairs] + [n] * N,
        [v for _, v in pairs] + list(fabric.compute),
        [caps[p] for p in pairs] + [k] * N,
    )
    return all(flow >= N * k for flow, _ in flows_to_sinks(net, n, sinks, N * k, check=check))


class _PlanSplitter:
    def __init__(
        self, fabric: IndexedFabric, caps: dict[tuple[int, int], int], k: int, sym: BoxSymmetry
    ):
        self.fabric, self.k, self.sym = fabric, k, sym
        self.cur = {e: c for e, c in caps.items() if c > 0}
        self.paths: dict[tuple[int, int], dict[Path, int]] = {
            e: {e: c} for e, c in self.cur.items()
        }
        self.graph = _Adjacency(self.cur)
        for v in range(fabric.n):
            self.graph.inn.setdefault(v, set())
            self.graph.out.setdefault(v, set())
        self.num_splits = 0
        outside = np.flatnonzero(sym.box_of < 0)
        self.circle = sym.size * max(1, len(outside))
        self.phase = sym.pos_of * max(1, len(outside))
        self.phase[outside] = np.arange(len(outside)) * sym.size
        self.fabric_compute = np.asarray(fabric.is_compute, dtype=bool)
        self.parts = PartsBelow(fabric)

    def part_sums(self, w, ins, outs, part) -> tuple[dict[int, int], dict[int, int]]:
        """(capacity into w, capacity out of w) per part below w (``part``: w's partition)."""
        part_in: dict[int, int] = {}
        part_out: dict[int, int] = {}
        for table, nodes, link in (
            (part_in, ins, lambda u: (u, w)),
            (part_out, outs, lambda t: (w, t)),
        ):
            for x in nodes:
                if part[x] >= 0:
                    table[int(part[x])] = table.get(int(part[x]), 0) + self.cur[link(x)]
        return part_in, part_out

    def same_part(self, w: int, u: int, cols: np.ndarray) -> np.ndarray:
        """Which columns lie in row u's part below switch w (see :class:`PartsBelow`)."""
        part = self.parts(int(self.parts.hops[w]))
        if part[u] < 0:
            return np.zeros(len(cols), dtype=bool)
        return part[cols] == part[u]

    # ------------------------------------------------------------------ ordering of partners
    # A partner order is an index array into the plan's columns: earlier partners get units
    # first. Positions sit on a circle: position p of a box at phase p·J, the j-th of the J
    # nodes outside the boxes at phase j·size (of size·J). Between box nodes the order is by
    # position offset, then box offset; with a node outside the boxes by the rotation
    # phase(t) - phase(u): the rows of a leaf then start their spine units at different
    # spines, and the rows of spine j start at position j·size/J, so thin shares (less than
    # one unit per partner) are spread over the partners instead of all filling the first ones.
    def _rotation(self, u: int, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rotation, box offset) of every column seen from u."""
        sym = self.sym
        rot = (self.phase[cols] - self.phase[u]) % self.circle
        bu, bt = int(sym.box_of[u]), sym.box_of[cols]
        boxoff = np.where((bt >= 0) & (bu >= 0), (bt - bu) % sym.boxes, 0)
        return rot, boxoff

    def _box_order(self, u: int, cols: np.ndarray) -> np.ndarray:
        """Partner order in the plan of a switch in a box: by rotation, then box offset."""
        rot, boxoff = self._rotation(u, cols)
        return np.lexsort((boxoff, rot))

    def _cross_units(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """(u's compute out-neighbours in other boxes, units u sends into each box)."""
        box_of = self.sym.box_of
        out = np.fromiter(self.graph.out[u], dtype=np.int64, count=len(self.graph.out[u]))
        out = out[self.fabric_compute[out] & (box_of[out] != box_of[u])]
        units = np.asarray([self.cur[(u, x)] for x in out.tolist()], dtype=np.int64)
        into = np.bincount(box_of[out], weights=units, minlength=self.sym.boxes).astype(np.int64)
        return out, into

    def _fixed_order(self, u: int, cols: np.ndarray) -> np.ndarray:
        """Partner order in the plan of a switch outside the boxes.

        First partners in a box that u sends fewer than k units into yet (several spines then
        connect u to different boxes, and each tree rooted at u can enter every box directly),
        then other partners in other boxes that u has no edge to, then the rest of the other
        boxes, then u's own box last (a unit that leaves the box and comes back spends
        cross-box capacity, which may be all the bottleneck has); ties by rotation and box
        offset.
        """
        box_of = self.sym.box_of
        bu = int(box_of[u])
        out, into = self._cross_units(u)
        bt = box_of[cols]
        full = into[np.maximum(bt, 0)] >= self.k  # u already sends k units into that box
        cat = np.where(full, np.where(np.isin(cols, out), 2, 1), 0)
        cat[bt == bu] = 3
        rot, boxoff = self._rotation(u, cols)
        return np.lexsort((boxoff, rot, cat))

    # ------------------------------------------------------------------ the two switch kinds
    def split_box_switch(self, w0: int) -> bool:
        """Split w0 (in box 0) by a plan and every translate of w0 by the translated plan."""
        sym = self.sym
        members = [sym.translate(w0, b) for b in range(sym.boxes)]
        for w in members[1:]:
            if w in self.graph.inn[w0] or w in self.graph.out[w0]:
                return False  # translates are adjacent: splitting one changes the next
        rows = sorted(self.graph.inn[w0])
        cols = sorted(self.graph.out[w0])
        plan = self._plan(w0, rows, cols, {t: (t,) for t in cols})
        if plan is None:
            return False
        for b in range(sym.boxes):
            moved = [(sym.translate(u, b), sym.translate(t, b), x) for u, t, x in plan]
            if not self._apply(members[b], moved):
                return False
        return True

    def fixed_switch_plan(self, w: int) -> list[tuple[int, int, int]] | None:
        """The σ-invariant plan of switch w (outside the boxes) for its box-0 in-neighbours (the
        rows), or None when w has a neighbour outside the boxes or no plan exists."""
        sym = self.sym
        ins, outs = sorted(self.graph.inn[w]), sorted(self.graph.out[w])
        if any(sym.box_of[v] < 0 for v in ins + outs):
            return None  # a neighbour outside the boxes: no invariant plan of this form
        rows = [u for u in ins if sym.box_of[u] == 0]
        classes: dict[int, list[int]] = {}
        for t in outs:
            classes.setdefault(int(sym.pos_of[t]), []).append(t)
        return self._plan(
            w,
            rows,
            outs,
            {t: (int(sym.pos_of[t]),) for t in outs},
            {(p,): self.cur[(w, ts[0])] for p, ts in classes.items()},
            order=self._fixed_order,
            spread_boxes=True,
        )

    def split_fixed_switch(self, w: int) -> bool:
        """Split w (outside the boxes) by its σ-invariant plan, translated to every box."""
        sym = self.sym
        if not self.graph.inn[w] and not self.graph.out[w]:
            return True  # nothing left at w (its links were trimmed to nothing)
        plan = self.fixed_switch_plan(w)
        if plan is None:
            return False
        moved = [
            (sym.translate(u, b), sym.translate(t, b), x)
            for b in range(sym.boxes)
            for u, t, x in plan
        ]
        # records are consumed from the front: order the moves by the box offset between u and
        # t (then by plan order) so that every record of (u, w) and (w, t) is consumed in a
        # translation-invariant order, and the records stay σ-equivariant
        offset = [
            (int(sym.box_of[u] - sym.box_of[t]) % sym.boxes, i) for i, (u, t, _) in enumerate(moved)
        ]
        order = sorted(range(len(moved)), key=lambda i: (offset[i][0], i % len(plan)))
        return self._apply(w, [moved[i] for i in order])

    # ------------------------------------------------------------------ plans
    def _plan(self, w, rows, cols, col_class, class_demand=None, order=None, spread_boxes=False):
        """Units x(u, t) > 0 with row sums c(u, w) and class sums the class demand, or None.

        One small max-flow: source -> row u (c(u,w)) -> column t (the cap of the pair) ->
        class of t -> sink (the class demand, by default c(w, t)). Tried with proportional caps
        and no switch-to-switch pairs, then with them, then with any cap. ``spread_boxes``:
        in the first two tries, a row sends at most its even share over the other boxes
        (but >= k units) into any one other box, so that a tree rooted at u can enter many
        boxes directly.
        """
        cur, comp = self.cur, self.fabric_compute
        order = order or self._box_order
        if class_demand is None:
            class_demand = {col_class[t]: cur[(w, t)] for t in cols}
        supply = sum(cur[(u, w)] for u in rows)
        if supply != sum(class_demand.values()):
            return None  # unbalanced (per orbit): the general splitting trims or reports it
        ins, outs = self.graph.inn[w], self.graph.out[w]
        total_in = sum(cur[(u, w)] for u in ins)
        total_out = sum(cur[(w, t)] for t in outs)
        switch_in = sum(cur[(u, w)] for u in ins if not comp[u])
        switch_out = sum(cur[(w, t)] for t in outs if not comp[t])
        col = np.asarray(cols, dtype=np.int64)
        big_numbers = max(cur[(u, w)] for u in rows) * max(cur[(w, t)] for t in cols) >= 1 << 62
        dtype = object if big_numbers else np.int64  # Python ints where int64 could overflow
        ct_all = np.asarray([cur[(w, t)] for t in cols], dtype=dtype)
        back_all = np.asarray([cur.get((t, w), 0) for t in cols], dtype=dtype)
        orders = {u: order(u, col) for u in rows}
        # capacity into / out of w per part below w: a row's partners in its own part are left
        # out in the first two tries, and so are they from its proportional shares
        part = self.parts(int(self.parts.hops[w]))
        part_in, part_out = self.part_sums(w, ins, outs, part)
        for attempt in range(3):
            no_s2s = attempt == 0
            pieces = []
            for i, u in enumerate(rows):
                cu = cur[(u, w)]
                idx = orders[u]
                keep = col[idx] != u
                if no_s2s and not comp[u]:
                    keep &= comp[col[idx]]
                if spread_boxes and attempt < 2:
                    keep &= self.sym.box_of[col[idx]] != self.sym.box_of[u]
                if attempt < 2:  # not out of u's part and back into it through w
                    keep &= ~self.same_part(w, u, col[idx])
                idx = idx[keep]
                ct = ct_all[idx]
                if attempt == 2:
                    low = cap = np.minimum(ct, cu)
                else:
                    # the proportional share seen from both ends, rounded, never below k units;
                    # u's allowed partners hold rest_u, t's allowed partners rest_t
                    own = part_out.get(int(part[u]), 0) if part[u] >= 0 else cur.get((w, u), 0)
                    rest_u = max(
                        1,
                        total_out - own - (switch_out if no_s2s and not comp[u] else 0),
                    )
                    col_part = part[col[idx]]
                    into_own = np.asarray(
                        [part_in.get(int(x), 0) for x in col_part.tolist()], dtype=dtype
                    )
                    rest_t = total_in - np.where(col_part >= 0, into_own, back_all[idx])
                    if no_s2s:
                        rest_t = rest_t - np.where(comp[col[idx]], 0, switch_in)
                    rest_t = np.maximum(rest_t, 1)
                    prod = ct * cu
                    big = np.maximum(-(-prod // rest_u), -(-prod // rest_t))
                    small = np.minimum(prod // rest_u, prod // rest_t)
                    cap = np.minimum(np.minimum(ct, cu), np.maximum(big, self.k))
                    low = np.minimum(cap, np.maximum(small, self.k))
                box_cap = None
                if spread_boxes and attempt == 0:  # what each box still needs from u
                    box_cap = np.maximum(self.k - self._cross_units(u)[1], 0)
                elif spread_boxes and attempt == 1:
                    box_cap = np.full(
                        self.sym.boxes, max(self.k, -(-cu // max(1, self.sym.boxes - 1)))
                    )
                pieces.append((np.full(len(idx), i, dtype=np.int64), idx, low, cap, box_cap))
            plan = self._solve_plan(w, rows, cols, col_class, class_demand, pieces, supply)
            if plan is not None:
                return plan
        return None

    def _solve_plan(self, w, rows, cols, col_class, class_demand, pieces, supply, row_caps=None):
        """The flow of the plan network or None if short of supply.

        Nodes: source 0, rows, columns, classes, sink, then one node per (row, other box) for
        rows whose piece has a box cap (the pairs into that box pass through it).
        """
        nr, nc = len(rows), len(cols)
        pair_row = np.concatenate([p[0] for p in pieces])
        pair_col = np.concatenate([p[1] for p in pieces])
        low = np.concatenate([p[2] for p in pieces]).astype(np.int64)
        full = np.concatenate([p[3] for p in pieces]).astype(np.int64)
        class_list = list(class_demand)
        class_index = {c: i for i, c in enumerate(class_list)}
        col_cls = np.asarray([class_index[col_class[t]] for t in cols], dtype=np.int64)
        sink = 1 + nr + nc + len(class_list)
        # pair tails: the row, or its (row, box) node
        pair_tail = 1 + pair_row
        group_tails, group_heads, group_caps = [], [], []
        col_box = self.sym.box_of[np.asarray(cols, dtype=np.int64)]
        start = 0
        next_node = sink + 1
        for i, (_, _, _, _, box_cap) in enumerate(pieces):
            count = len(pieces[i][0])
            if box_cap is not None and count:
                boxes = col_box[pair_col[start : start + count]]
                own = int(self.sym.box_of[rows[i]])
                # group nodes in the order of the row's partners (the search tries arcs in order)
                uniq, first, inverse = np.unique(boxes, return_index=True, return_inverse=True)
                rank = np.empty(len(uniq), dtype=np.int64)
                rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
                uniq = uniq[np.argsort(first, kind="stable")]
                node = next_node + rank[inverse]
                other = boxes != own
                pair_tail[start : start + count][other] = node[other]
                group_tails += [1 + i] * len(uniq)
                group_heads += range(next_node, next_node + len(uniq))
                group_caps += [INF if b == own else int(box_cap[b]) for b in uniq.tolist()]
                next_node += len(uniq)
            start += count
        tails = np.concatenate(
            [
                np.zeros(nr, dtype=np.int64),
                pair_tail,
                1 + nr + np.arange(nc),
                1 + nr + nc + np.arange(len(class_list)),
                np.asarray(group_tails, dtype=np.int64),
            ]
        )
        heads = np.concatenate(
            [
                1 + np.arange(nr),
                1 + nr + pair_col,
                1 + nr + nc + col_cls,
                np.full(len(class_list), sink),
                np.asarray(group_heads, dtype=np.int64),
            ]
        )
        caps = np.concatenate(
            [
                np.asarray(
                    [self.cur[(u, w)] for u in rows] if row_caps is None else row_caps,
                    dtype=np.int64,
                ),
                full,
                np.full(nc, INF, dtype=np.int64),
                np.asarray([class_demand[c] for c in class_list], dtype=np.int64),
                np.asarray(group_caps, dtype=np.int64),
            ]
        )
        # first every pair up to the floor of its share, then up to its cap: the plan stays
        # close to even instead of filling the first partners to the brim
        net = FlowNetwork(next_node, tails, heads, caps)
        pair_arcs = net.edge_arc[nr : nr + len(full)]
        net.cap[pair_arcs] = low
        got = net.max_flow(0, sink)
        net.res[pair_arcs] += full - net.cap[pair_arcs]
        net.cap[pair_arcs] = full
        got += augment(net.graph, net.res, 0, sink, INF, net.work)
        if got != supply:
            return None
        flow = net.edge_flow()[nr : nr + len(full)]
        used = np.flatnonzero(flow > 0)
        return [(rows[pair_row[j]], cols[pair_col[j]], int(flow[j])) for j in used.tolist()]

    # ------------------------------------------------------------------ applying a plan
    def _apply(self, w: int, plan: list[tuple[int, int, int]]) -> bool:
        """Move the planned units onto direct edges (joining the path records); the switch must
        end with no capacity left."""
        cur, paths = self.cur, self.paths
        inn, out = self.graph.inn, self.graph.out
        for u, t, x in plan:
            a, b = cur.get((u, w), 0), cur.get((w, t), 0)
            if x > a or x > b or u == t:
                return False
            head = _take(paths[(u, w)], x)
            tail = _take(paths[(w, t)], x)
            cur[(u, w)] = a - x
            cur[(w, t)] = b - x
            if (u, t) in cur:
                cur[(u, t)] += x
            else:
                cur[(u, t)] = x
                out[u].add(t)
                inn[t].add(u)
            record = paths.setdefault((u, t), {})
            if len(head) == 1 and len(tail) == 1:
                joined = head[0][0] + tail[0][0][1:]
                record[joined] = record.get(joined, 0) + x
            else:
                _join(head, tail, record)
            self.num_splits += 1
        for u in list(inn[w]):
            if cur[(u, w)]:
                return False  # the plan did not use up the switch
            del cur[(u, w)]
            out[u].discard(w)
            paths.pop((u, w), None)
        for t in list(out[w]):
            if cur[(w, t)]:
                return False
            del cur[(w, t)]
            inn[t].discard(w)
            paths.pop((w, t), None)
        inn[w].clear()
        out[w].clear()
        return True

    def result(self) -> SplitResult:
        comp = self.fabric.is_compute
        out_caps = {e: c for e, c in self.cur.items() if c > 0 and comp[e[0]] and comp[e[1]]}
        return SplitResult(out_caps, {e: self.paths[e] for e in out_caps}, self.num_splits, 0)
