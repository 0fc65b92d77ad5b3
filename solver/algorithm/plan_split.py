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
from solver.algorithm.symmetry import BoxSymmetry
from solver.flow.csr import IndexedFabric
from solver.flow.maxflow import INF, FlowNetwork, augment


def split_by_plans(fabric: IndexedFabric, caps: dict[tuple[int, int], int], k: int,
                   sym: BoxSymmetry,
                   check: Callable[[], None] | None = None) -> SplitResult | None:
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


def invariant_holds(fabric: IndexedFabric, caps: dict[tuple[int, int], int], k: int,
                    sinks: list[int], check: Callable[[], None] | None = None) -> bool:
    """Whether ``λ(s, v) >= N·k`` for every v in ``sinks`` on the compute graph ``caps``."""
    n, N = fabric.n, fabric.num_compute
    pairs = list(caps)
    net = FlowNetwork(n + 1, [u for u, _ in pairs] + [n] * N,
                      [v for _, v in pairs] + list(fabric.compute),
                      [caps[p] for p in pairs] + [k] * N)
    for v in sinks:
        if check is not None:
            check()
        if net.max_flow(n, v, cutoff=N * k) < N * k:
            return False
    return True


class _PlanSplitter:
    def __init__(self, fabric: IndexedFabric, caps: dict[tuple[int, int], int], k: int,
                 sym: BoxSymmetry):
        self.fabric, self.k, self.sym = fabric, k, sym
        self.cur = {e: c for e, c in caps.items() if c > 0}
        self.paths: dict[tuple[int, int], dict[Path, int]] = {e: {e: c} for e, c in self.cur.items()}
        self.graph = _Adjacency(self.cur)
        for v in range(fabric.n):
            self.graph.inn.setdefault(v, set())
            self.graph.out.setdefault(v, set())
        self.num_splits = 0

    # ------------------------------------------------------------------ ordering of partners
    def _offset(self, u: int, t: int) -> tuple[int, int]:
        """(position offset, box offset) of t seen from u; 0 for nodes outside the boxes."""
        sym = self.sym
        bu, bt = sym.box_of[u], sym.box_of[t]
        if bu < 0 or bt < 0:
            return (0, 0)
        return (int(sym.pos_of[t] - sym.pos_of[u]) % sym.size, int(bt - bu) % sym.boxes)

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

    def split_fixed_switch(self, w: int) -> bool:
        """Split w (outside the boxes) by a σ-invariant plan: rows are its box-0 in-neighbours."""
        sym = self.sym
        ins, outs = sorted(self.graph.inn[w]), sorted(self.graph.out[w])
        if any(sym.box_of[v] < 0 for v in ins + outs):
            return False  # a neighbour outside the boxes: no invariant plan of this form
        rows = [u for u in ins if sym.box_of[u] == 0]
        classes: dict[int, list[int]] = {}
        for t in outs:
            classes.setdefault(int(sym.pos_of[t]), []).append(t)
        plan = self._plan(w, rows, outs, {t: (int(sym.pos_of[t]),) for t in outs},
                          {(p,): self.cur[(w, ts[0])] for p, ts in classes.items()})
        if plan is None:
            return False
        moved = [(sym.translate(u, b), sym.translate(t, b), x)
                 for b in range(sym.boxes) for u, t, x in plan]
        # records are consumed from the front: order the moves by the box offset between u and
        # t (then by plan order) so that every record of (u, w) and (w, t) is consumed in a
        # translation-invariant order, and the records stay σ-equivariant
        offset = [(int(sym.box_of[u] - sym.box_of[t]) % sym.boxes, i)
                  for i, (u, t, _) in enumerate(moved)]
        order = sorted(range(len(moved)), key=lambda i: (offset[i][0], i % len(plan)))
        return self._apply(w, [moved[i] for i in order])

    # ------------------------------------------------------------------ plans
    def _plan(self, w, rows, cols, col_class, class_demand=None):
        """Units x(u, t) > 0 with row sums c(u, w) and class sums the class demand, or None.

        One small max-flow: source -> row u (c(u,w)) -> column t (the cap of the pair) ->
        class of t -> sink (the class demand, by default c(w, t)). Tried with proportional caps
        and no switch-to-switch pairs, then with them, then with any cap.
        """
        cur, is_compute = self.cur, self.fabric.is_compute
        if class_demand is None:
            class_demand = {col_class[t]: cur[(w, t)] for t in cols}
        supply = sum(cur[(u, w)] for u in rows)
        if supply != sum(class_demand.values()):
            return None  # unbalanced (per orbit): the general splitting trims or reports it
        ins, outs = self.graph.inn[w], self.graph.out[w]
        total_in = sum(cur[(u, w)] for u in ins)
        total_out = sum(cur[(w, t)] for t in outs)
        switch_in = sum(cur[(u, w)] for u in ins if not is_compute[u])
        switch_out = sum(cur[(w, t)] for t in outs if not is_compute[t])
        for attempt in range(3):
            no_s2s = attempt == 0
            pairs = []
            for u in rows:
                cu = cur[(u, w)]
                # capacity of u's allowed partners; the share of t is proportional to c(w, t)
                rest_u = max(1, total_out - cur.get((w, u), 0)
                             - (switch_out if no_s2s and not is_compute[u] else 0))
                for t in sorted(cols, key=lambda t: self._offset(u, t)):
                    if t == u or (no_s2s and not is_compute[u] and not is_compute[t]):
                        continue
                    ct = cur[(w, t)]
                    if attempt == 2:
                        pairs.append((u, t, min(cu, ct), min(cu, ct)))
                        continue
                    # the proportional share seen from both ends, rounded, never below k units
                    rest_t = max(1, total_in - cur.get((t, w), 0)
                                 - (switch_in if no_s2s and not is_compute[t] else 0))
                    big = max(-(-cu * ct // rest_u), -(-cu * ct // rest_t))
                    small = min(cu * ct // rest_u, cu * ct // rest_t)
                    cap = min(cu, ct, max(self.k, big))
                    pairs.append((u, t, min(cap, max(self.k, small)), cap))
            plan = self._solve_plan(w, rows, cols, col_class, class_demand, pairs, supply)
            if plan is not None:
                return plan
        return None

    def _solve_plan(self, w, rows, cols, col_class, class_demand, pairs, supply):
        row_id = {u: 1 + i for i, u in enumerate(rows)}
        col_id = {t: 1 + len(rows) + i for i, t in enumerate(cols)}
        class_list = list(class_demand)
        class_id = {c: 1 + len(rows) + len(cols) + i for i, c in enumerate(class_list)}
        sink = 1 + len(rows) + len(cols) + len(class_list)
        tails = [0] * len(rows) + [row_id[u] for u, *_ in pairs]
        tails += [col_id[t] for t in cols] + [class_id[c] for c in class_list]
        heads = [row_id[u] for u in rows] + [col_id[t] for _, t, *_ in pairs]
        heads += [class_id[col_class[t]] for t in cols] + [sink] * len(class_list)
        caps = [self.cur[(u, w)] for u in rows] + [c for *_, c in pairs]
        caps += [INF] * len(cols) + [class_demand[c] for c in class_list]
        # first every pair up to the floor of its share, then up to its cap: the plan stays
        # close to even instead of filling the first partners to the brim
        net = FlowNetwork(sink + 1, tails, heads, caps)
        pair_arcs = net.edge_arc[len(rows): len(rows) + len(pairs)]
        net.cap[pair_arcs] = [low for _, _, low, _ in pairs]
        got = net.max_flow(0, sink)
        full = np.asarray([c for _, _, _, c in pairs], dtype=np.int64)
        net.res[pair_arcs] += full - net.cap[pair_arcs]
        net.cap[pair_arcs] = full
        got += augment(net.graph, net.res, 0, sink, INF, net.work)
        if got != supply:
            return None
        flow = net.edge_flow()[len(rows): len(rows) + len(pairs)]
        return [(u, t, int(f)) for (u, t, *_), f in zip(pairs, flow) if f > 0]

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
