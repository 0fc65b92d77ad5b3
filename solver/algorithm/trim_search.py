"""Fixed k with switches, exactly: search the switch trims that keep every root's connectivity.

With k trees per root and integer capacities ``c(e) = ⌊U·b(e)⌋``, k trees per root exist (routed
through switches that forward without replicating) **iff** some capacities ``c' <= c`` make
every switch balanced (in = out) and keep ``λ(s, v) >= N·k`` for every compute node v (s: the
super source with capacity k to each compute node):

- *if*: a balanced switch can be split off completely keeping every λ(s, v) (Bang-Jensen, Frank
  and Jackson; the splitting of :mod:`solver.algorithm.splitting` finds it), and on the
  switch-free graph the cut condition gives the trees (Edmonds' branching theorem);
- *only if*: the trees' edges are paths; the units they put on each link form a ``c'`` that is
  balanced at every switch (a switch forwards each unit once), and each s–v cut of ``c'`` is
  crossed by every path that leaves it, so it is at least the cut of the trees' compute graph.

λ only grows with capacity, so it suffices to try the *maximal* balanced ``c'``. Their trims
``t = c - c'`` are flows with net in-trim minus out-trim ``e(w) = in(w) - out(w)`` at every switch
(compute nodes are free); a maximal one has no cycle and no compute-to-compute path through
switches (either could be given back), so it is a sum of simple *trim paths*, one per unit of
excess: into a switch w with e(w) > 0 from a compute node or from a switch with e < 0, through
switches only; or out of a switch with e(w) < 0 to a compute node. :func:`feasible_trim`
enumerates those sums (each state once) and checks the cut condition of each; so it decides
feasibility exactly, within ``limit`` states.

:func:`exact_fixed_k` then steps U from the per-k cut bound through the breakpoints of
``⌊U·b(e)⌋`` (where some capacity grows) until a trim works: the first such U is the optimum
with k trees per root. The cut bound U0 of the untrimmed floors is a lower bound, so every U
before the answer is proven infeasible.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from solver.flow.csr import IndexedFabric, flow_network
from solver.model.errors import SolverError


class SearchLimit(SolverError):
    """The trim search met its state limit before deciding."""


def excess(fabric: IndexedFabric, caps: list[int]) -> dict[int, int]:
    """e(w) = in-capacity minus out-capacity of every switch w (0 for balanced ones)."""
    e = {w: 0 for w in range(fabric.n) if not fabric.is_compute[w]}
    for (u, v), c in zip(fabric.edges, caps):
        if v in e:
            e[v] += c
        if u in e:
            e[u] -= c
    return e


def cut_condition(
    fabric: IndexedFabric, caps: list[int], k: int, check: Callable[[], None] | None = None
) -> bool:
    """Whether λ(s, v) >= N·k for every compute v on ``caps``."""
    need = fabric.num_compute * k
    net = flow_network(fabric, caps, k)
    for v in fabric.compute:
        if check is not None:
            check()
        if net.max_flow(fabric.n, v, cutoff=need) < need:
            return False
    return True


class Budget:
    """Trim states a search may still visit (shared by the steps of :func:`exact_fixed_k`)."""

    def __init__(self, states: int):
        self.states = states

    def spend(self) -> None:
        self.states -= 1
        if self.states < 0:
            raise SearchLimit("the switch trim search ran out of its state budget")


def feasible_trim(
    fabric: IndexedFabric,
    caps: list[int],
    k: int,
    check: Callable[[], None] | None = None,
    budget: Budget | int = 20_000,
) -> list[int] | None:
    """Balanced capacities ``c' <= caps`` meeting the cut condition, or ``None`` if none exist.

    Raises :class:`SearchLimit` when the ``budget`` of trim states runs out (see the module
    docstring).
    """
    if isinstance(budget, int):
        budget = Budget(budget)
    e = excess(fabric, caps)
    if not cut_condition(fabric, caps, k, check):
        return None  # trimming only lowers cuts
    ins: dict[int, list[int]] = {}
    outs: dict[int, list[int]] = {}
    for i, (u, v) in enumerate(fabric.edges):
        outs.setdefault(u, []).append(i)
        ins.setdefault(v, []).append(i)
    search = _TrimSearch(fabric, caps, k, ins, outs, check, budget)
    return search.run([0] * len(caps), e)


class _TrimSearch:
    def __init__(self, fabric, caps, k, ins, outs, check, budget: Budget):
        self.fabric, self.caps, self.k = fabric, caps, k
        self.ins, self.outs, self.check, self.budget = ins, outs, check, budget
        self.seen: set[tuple[int, ...]] = set()

    def run(self, trim: list[int], e: dict[int, int]) -> list[int] | None:
        key = tuple(trim)
        if key in self.seen:
            return None
        self.seen.add(key)
        self.budget.spend()
        open_ = [w for w, x in e.items() if x]
        if not open_:
            caps = [c - t for c, t in zip(self.caps, trim)]
            return caps if cut_condition(self.fabric, caps, self.k, self.check) else None
        w = open_[0]
        for path in self._paths(w, e[w] > 0, trim, e):
            for i in path:
                trim[i] += 1
            end = self._end(path, e[w] > 0)
            e2 = dict(e)
            e2[w] += -1 if e[w] > 0 else 1
            if end is not None and end in e2:
                e2[end] += 1 if e[w] > 0 else -1
            found = self.run(trim, e2)
            for i in path:
                trim[i] -= 1
            if found is not None:
                return found
        return None

    def _end(self, path: list[int], into: bool) -> int | None:
        """The switch at the far end of a trim path (None for a compute node)."""
        edge = self.fabric.edges[path[-1]]
        far = edge[0] if into else edge[1]
        return None if self.fabric.is_compute[far] else far

    def _paths(self, w: int, into: bool, trim: list[int], e: dict[int, int]):
        """Simple trim paths at w (edge lists from w outward): backwards over in-edges when
        ``into``, else forwards over out-edges; ending at a compute node or at a switch of the
        opposite excess."""
        fabric = self.fabric
        stack = [(w, [], {w})]
        while stack:
            x, path, visited = stack.pop()
            for i in (self.ins if into else self.outs).get(x, ()):
                if trim[i] >= self.caps[i]:
                    continue
                y = fabric.edges[i][0] if into else fabric.edges[i][1]
                if y in visited:
                    continue
                longer = path + [i]
                if fabric.is_compute[y]:
                    yield longer
                    continue
                if (e[y] < 0) if into else (e[y] > 0):
                    yield longer  # pair with the opposite excess of y
                stack.append((y, longer, visited | {y}))


def exact_fixed_k(
    fabric: IndexedFabric,
    k: int,
    U0: Fraction,
    check: Callable[[], None] | None = None,
    limit: int = 20_000,
    steps: int = 200,
) -> tuple[Fraction, list[int]]:
    """Smallest U >= U0 (U0: the cut bound for k) whose floors admit k trees per root, and the
    trimmed balanced capacities. Raises :class:`SearchLimit` if undecided within ``limit`` trim
    states (over all steps) and ``steps`` values of U."""
    U = U0
    budget = Budget(limit)
    for _ in range(steps):
        floors = [math.floor(U * b) for b in fabric.bandwidth]
        caps = feasible_trim(fabric, floors, k, check, budget)
        if caps is not None:
            return U, caps
        U = min(Fraction(c + 1) / b for c, b in zip(floors, fabric.bandwidth))
    raise SearchLimit(f"no feasible switch trim within {steps} steps of U")


__all__ = ["Budget", "SearchLimit", "cut_condition", "exact_fixed_k", "excess", "feasible_trim"]
