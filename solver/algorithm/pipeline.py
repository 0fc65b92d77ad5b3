"""``solve()``: the ForestColl pipeline from a fabric to a :class:`~solver.model.schedule.Schedule`.

Steps (ALGORITHM.md): balance switches (:mod:`solver.algorithm.balance`), exact optimum and bottleneck cut
(:mod:`solver.algorithm.optimum`) or the fixed-k capacities (:mod:`solver.algorithm.fixed_k`), switch removal by edge
splitting (:mod:`solver.algorithm.splitting`), tree packing (:mod:`solver.algorithm.packing`), mapping back to
physical paths (:mod:`solver.algorithm.paths`). Reduce-scatter solves the reversed fabric and reverses the
trees; allreduce is reduce-scatter then allgather.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from solver.algorithm.balance import balance_switches
from solver.algorithm.cost import (
    CostLimit,
    check_fixed_k,
    check_optimum,
    check_packing,
    check_schedule_size,
)
from solver.algorithm.direct import direct_forest
from solver.algorithm.fewest_trees import fewest_trees
from solver.algorithm.fixed_k import fixed_k_capacity, gap_note
from solver.algorithm.optimum import Optimum, compute_optimum
from solver.algorithm.orbit_packing import pack_by_orbits
from solver.algorithm.orbit_routes import routed_forest
from solver.algorithm.packing import pack_trees, shorten_trees
from solver.algorithm.paths import route_classes
from solver.algorithm.plan_split import split_by_plans
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.splitting import IncompleteSplit, split_switches
from solver.algorithm.symmetry import (
    BoxSymmetry,
    box_symmetry,
)
from solver.flow.csr import IndexedFabric
from solver.model.errors import Cancelled, SolverError, TopologyError
from solver.model.schedule import COLLECTIVES, BottleneckCut, LinkLoad, Schedule, Tree, TreeEdge
from solver.model.topology import Topology, validate

ProgressFn = Callable[[str, float], None]


def _make_check(cancel: Any) -> Callable[[], None] | None:
    if cancel is None:
        return None
    is_set = cancel.is_set if hasattr(cancel, "is_set") else cancel
    if not callable(is_set):
        raise TypeError("cancel must have is_set() or be a zero-argument callable")

    def check() -> None:
        if is_set():
            raise Cancelled("solve cancelled")

    return check


def solve(
    topology: Topology,
    collective: str = "allgather",
    max_trees_per_root: int | None = None,
    progress: ProgressFn | None = None,
    cancel: Any = None,
) -> Schedule:
    """Compute a throughput-optimal ForestColl schedule.

    Parameters
    ----------
    topology : Topology
        The fabric (validated here).
    collective : {"allgather", "reduce-scatter", "allreduce"}
    max_trees_per_root : int, optional
        At most this many trees per root (K); the schedule is the best under that limit.
        ``None``: the exact optimum with its own k.
    progress : callable(phase, fraction), optional
        Called with phases "optimum", "switch_removal", "trees", "paths".
    cancel : threading.Event-like or zero-argument callable, optional
        When set/true, the solve stops with :class:`~solver.model.errors.Cancelled`.

    Returns
    -------
    Schedule
        Exact optimum, bottleneck cut, trees on physical paths, per-link load and timings.

    Notes
    -----
    - With ``max_trees_per_root=K`` the schedule uses the k <= K with the best exact fixed-k
      rate (only k in (K/2, K] can win: doubling every tree never hurts), so results never
      decrease with K; ``Schedule.k`` is that k. If the optimal k is <= K the optimum is returned.
      With switches, rounding capacities to whole trees can unbalance a switch; the search then
      trims the rounded capacities, and if the result falls short of the cut bound for <= K
      trees, ``warnings`` gives both figures (packing Steiner trees is not decided by cuts alone).
    - Unbalanced switches (in != out bandwidth) are trimmed (:mod:`solver.algorithm.balance`) and the
      schedule is optimal for the trimmed fabric; ``optimal_algbw_exact`` and ``bottleneck`` stay
      the cut bound of the fabric as drawn (a true upper bound), and ``warnings`` say so.
    - Reduce-scatter: ``bottleneck.links`` are the links *entering* the cut set S.
    - Deterministic: the same input gives the same schedule.

    Raises
    ------
    TopologyError
        The fabric is invalid (one line naming the node or link).
    SolverError
        An unknown collective, a bad ``max_trees_per_root``, or a fabric past the size limits.
    Cancelled
        ``cancel`` was set.
    """
    if collective not in COLLECTIVES:
        raise SolverError(
            f"unknown collective {collective!r} (choose one of {', '.join(COLLECTIVES)})"
        )
    if max_trees_per_root is not None:
        if isinstance(max_trees_per_root, bool) or not isinstance(max_trees_per_root, int):
            raise SolverError(f"max_trees_per_root must be an integer, got {max_trees_per_root!r}")
        if max_trees_per_root < 1:
            raise SolverError(f"max_trees_per_root must be >= 1, got {max_trees_per_root}")
    if not isinstance(topology, Topology):
        raise TopologyError("solve() needs a Topology")
    validate(topology)
    check_schedule_size(len(topology.compute_ids), 2 if collective == "allreduce" else 1)
    check = _make_check(cancel)
    if check is not None:
        check()
    with paused_gc():
        return _solve(topology, collective, max_trees_per_root, progress, check)


@contextlib.contextmanager
def paused_gc():
    """Python's cyclic garbage collector off for the block (back on after, if it was on).

    A large solve creates millions of small objects (path tuples, records, trees) and no
    reference cycles to speak of; every full collection walks all of them. Pausing it made a
    warm solve of the 2048-GPU fat tree 1.6-1.8x faster at the same peak memory. Objects are
    still freed by reference counting; cycles made meanwhile wait for the next collection.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _solve(
    topology: Topology,
    collective: str,
    max_trees_per_root: int | None,
    progress: ProgressFn | None,
    check: Callable[[], None] | None,
) -> Schedule:
    if collective == "allgather":
        return _solve_allgather(topology, max_trees_per_root, progress, check)
    symmetric = all(not link.directed for link in topology.links)
    if symmetric:
        ag = _solve_allgather(topology, max_trees_per_root, progress, check)
        rs = _reverse_schedule(ag, topology, ag)
    else:
        rev = _solve_allgather(topology.reversed(), max_trees_per_root, progress, check)
        rs = _reverse_schedule(rev, topology, rev)
        ag = None
    if collective == "reduce-scatter":
        return rs
    if ag is None:
        ag = _solve_allgather(topology, max_trees_per_root, progress, check)
    return _allreduce(topology, rs, ag, max_trees_per_root)


# ---------------------------------------------------------------------------- allgather
SHALLOW = 3  # max tree height (logical hops) accepted from spread splitting without a second try
SECOND_OPINION_MAX = 256  # compute nodes up to which greedy splitting is tried as well
# compute nodes up to which switches are split with spreading: beyond, spreading every edge over
# all partners costs more than it saves (64x DGX H100 rail: 64 s instead of 23 s; 32x: 4 s
# instead of 8 s, heights 2 instead of 38), and a capped spread gives neither speed nor depth
SPREAD_MAX_N = 256
# compute nodes from which box symmetry is looked for (symmetric optimum, plans, orbit packing);
# below, the general path is fast and its schedules are the reference ones
SYMMETRY_MIN_N = 256


def _heights(classes) -> tuple[int, Fraction]:
    """(max height, mean height weighted by multiplicity) of packed tree classes."""
    tallest, total, count = 0, 0, 0
    for cls in classes:
        depth = {cls.root: 0}
        for parent, child in cls.edges:
            depth[child] = depth[parent] + 1
        h = max(depth.values())
        tallest = max(tallest, h)
        total += h * cls.mult
        count += cls.mult
    return tallest, Fraction(total, max(count, 1))


@dataclass
class _Forest:
    """The trees of one allgather and what they were computed on."""

    fabric: IndexedFabric  # the fabric as drawn, or its trimmed copy
    opt: Optimum
    k: int
    warnings: list[str]
    trees: list[Tree]
    loads: list[LinkLoad]
    algbw: Fraction


class _AllgatherSolve:
    """One allgather solve: the options, the fabric's cut bound, and the timings of its phases."""

    def __init__(
        self,
        topology: Topology,
        K: int | None,
        progress: ProgressFn | None,
        check: Callable[[], None] | None,
    ) -> None:
        self.topology = topology
        self.K = K
        self.progress = progress
        self.check = check
        self.timings: dict[str, float] = {}
        self.fixed_k_cut_bound: list[Fraction] = []  # algbw bound with <= K trees (plain floors)

    def report(self, phase: str) -> Callable[[float], None] | None:
        if self.progress is None:
            return None
        return lambda fraction: self.progress(phase, fraction)

    def tell(self, phase: str, fraction: float) -> None:
        if self.progress is not None:
            self.progress(phase, fraction)

    def bound_fabric(self) -> None:
        """The cut bound of the fabric as drawn; with symmetry one max-flow per orbit of sinks."""
        self.tell("optimum", 0.0)
        t0 = time.perf_counter()
        self.full = IndexedFabric.from_topology(self.topology)
        self.timings["switch_removal"] = 0.0
        # a star on one switch or a chain-like tree: the optimal forest is forced
        self.direct = direct_forest(self.full, self.check, self.report("trees"))
        if self.direct is not None and self.K is not None and self.direct.k > self.K:
            self.direct = None  # (a uniform ring of even N has k = 2) the fixed-k search decides
        if self.direct is not None:
            self.sym = None
            self.bound = self.direct.optimum
        else:
            self.sym = _box_symmetry(self.topology, self.full)
            sinks = None if self.sym is None else self.sym.sinks(self.full)
            check_optimum(self.full, sinks)
            if self.full.num_compute == self.full.n and self.sym is None:
                # no switches: the packing graph is the fabric, so refuse before the optimum
                check_packing(self.full.n, self.full.edges, 1)
            self.bound = compute_optimum(
                self.full, self.check, sinks=sinks, progress=self.report("optimum")
            )
        self.timings["optimum"] = time.perf_counter() - t0
        self.tell("optimum", 1.0)

    def forest(self) -> _Forest:
        if self.direct is not None:
            t0 = time.perf_counter()
            self.tell("paths", 0.0)
            trees = _sorted_trees(self.direct.trees, self.topology)
            k = self.direct.k
            loads, algbw = _link_loads(self.topology, [(_link_usage(trees), k)])
            self.timings["trees"] = 0.0
            self.timings["paths"] = time.perf_counter() - t0
            return _Forest(
                self.full, self.bound, k, _imbalance_notes(self.full), trees, loads, algbw
            )
        notes = _imbalance_notes(self.full)
        fast = None
        if self.sym is not None and (self.K is None or self.bound.k <= self.K):
            fast = _symmetric_forest(
                self.topology, self.full, self.sym, self.bound, self.check, self.timings
            )
        if fast is None:
            return self.forest_by_splitting(notes)
        trees, loads, algbw, k = fast
        return _Forest(self.full, self.bound, k, notes, trees, loads, algbw)

    def attempt(self, fabric: IndexedFabric, balance_floors: bool):
        """Optimum (or best fixed-k capacities) of ``fabric`` and its switches split off."""
        t0 = time.perf_counter()
        opt = self.bound if fabric is self.full else compute_optimum(fabric, self.check)
        k, caps = opt.k, list(opt.caps)
        if self.K is not None and opt.k > self.K:
            k, caps, rate = _best_fixed_k(fabric, opt, self.K, self.check, balance_floors)
            if fabric is self.full and not balance_floors:
                self.fixed_k_cut_bound.append(fabric.num_compute * rate)
        self.timings["optimum"] += time.perf_counter() - t0
        self.tell("optimum", 1.0)
        t0 = time.perf_counter()
        try:
            try:
                split = split_switches(
                    fabric,
                    dict(zip(fabric.edges, caps)),
                    k,
                    self.check,
                    self.report("switch_removal"),
                    spread=fabric.num_compute <= SPREAD_MAX_N,
                )
            except IncompleteSplit:
                split = None
            if split is None:
                split = split_switches(
                    fabric,
                    dict(zip(fabric.edges, caps)),
                    k,
                    self.check,
                    self.report("switch_removal"),
                )
        finally:
            self.timings["switch_removal"] += time.perf_counter() - t0
        return fabric, opt, k, caps, split

    def split_some_fabric(self, notes: list[str]):
        """The fabric as drawn split off, else (fixed k) with trimmed rounded capacities, else the
        fabric with its switches trimmed to balance. Returns (attempt's result, warnings)."""
        try:
            # first the fabric as drawn: an unbalanced switch may still split off completely
            return self.attempt(self.full, False), notes
        except IncompleteSplit as first:
            failure = first
        if self.K is not None:
            try:
                # fixed k: rounding may have unbalanced a switch; trim the rounded capacities
                return self.attempt(self.full, True), notes
            except IncompleteSplit as second:
                failure = second
        trimmed, warnings = balance_switches(self.full)
        if trimmed is self.full:
            raise failure
        fabric, opt, k, caps, split = self.attempt(trimmed, True)
        # the cut bound of the fabric as drawn stays the honest upper bound
        warnings.append(
            f"trimmed fabric optimum {float(opt.algbw):.6g} GB/s; the cut bound of the fabric "
            f"as drawn is {float(self.bound.algbw):.6g} GB/s (it assumes switches could "
            "replicate data)"
        )
        return (fabric, opt, k, caps, split), warnings

    def pack(self, fabric: IndexedFabric, split, k: int):
        """Tree classes packed on the split (switch-free) fabric, then shortened."""
        t0 = time.perf_counter()
        rank = {v: i for i, v in enumerate(fabric.compute)}
        rank_caps = {(rank[u], rank[v]): c for (u, v), c in split.caps.items()}
        classes, _flows = pack_trees(
            fabric.num_compute, rank_caps, k, self.check, self.report("trees")
        )
        if self.check is not None:
            self.check()
        classes = shorten_trees(classes, rank_caps, check=self.check)
        self.timings["trees"] = self.timings.get("trees", 0.0) + time.perf_counter() - t0
        return classes

    def shallower(self, fabric: IndexedFabric, caps, k: int, split, classes):
        """When spread splitting did not give shallow trees (e.g. a switch of thin links next to a
        sparse point-to-point fabric), greedy splitting too; the (split, classes) of the shallower
        forest."""
        shape = _heights(classes)
        if not (
            shape[0] > SHALLOW
            and fabric.num_compute <= SECOND_OPINION_MAX
            and fabric.num_compute < fabric.n
        ):
            return split, classes
        t0 = time.perf_counter()
        try:
            other = split_switches(fabric, dict(zip(fabric.edges, caps)), k, self.check)
        except IncompleteSplit:
            other = None
        self.timings["switch_removal"] += time.perf_counter() - t0
        if other is not None:
            other_classes = self.pack(fabric, other, k)
            if _heights(other_classes) < shape:
                return other, other_classes
        return split, classes

    def forest_by_splitting(self, notes: list[str]) -> _Forest:
        """The general path: split the switches off, pack trees, route them on the links."""
        (fabric, opt, k, caps, split), warnings = self.split_some_fabric(notes)
        classes = self.pack(fabric, split, k)
        split, classes = self.shallower(fabric, caps, k, split, classes)
        t0 = time.perf_counter()
        self.tell("paths", 0.0)
        trees = _sorted_trees(_routed_trees(fabric, classes, split, k), self.topology)
        loads, algbw = _link_loads(self.topology, [(_link_usage(trees), k)])
        self.timings["paths"] = time.perf_counter() - t0
        return _Forest(fabric, opt, k, warnings, trees, loads, algbw)

    def schedule(self, forest: _Forest) -> Schedule:
        """The schedule of ``forest``, with the fixed-k shortfall warning; checks optimality."""
        K, algbw, opt, warnings = self.K, forest.algbw, forest.opt, forest.warnings
        if self.fixed_k_cut_bound and algbw < self.fixed_k_cut_bound[0]:
            cut = self.fixed_k_cut_bound[0]
            warnings = [
                *warnings,
                (
                    f"with at most {K} trees per root the cut bound is {float(cut):.6g} GB/s, but "
                    f"rounding bandwidths to whole trees left a switch unbalanced; this schedule "
                    f"reaches {float(algbw):.6g} GB/s ({100 * float(algbw / cut):.1f}% of that bound)"
                    + gap_note(self.full, K, self.bound.rate, algbw, self.check)
                ),
            ]
        if K is None and (
            algbw != opt.algbw if forest.fabric is self.full else not opt.algbw <= algbw
        ):
            raise SolverError(
                f"internal error: schedule reaches {float(algbw):g} GB/s, "
                f"optimum {float(opt.algbw):g}"
            )
        return Schedule(
            topology=self.topology,
            collective="allgather",
            k=forest.k,
            max_trees_per_root=K,
            optimal_algbw_exact=self.bound.algbw,
            algbw_exact=algbw,
            bottleneck=_bottleneck(self.full, self.bound),
            trees=tuple(forest.trees),
            link_load=tuple(forest.loads),
            timings=self.timings,
            warnings=tuple(warnings),
        )


def _solve_allgather(
    topology: Topology, K: int | None, progress: ProgressFn | None, check: Callable[[], None] | None
) -> Schedule:
    run = _AllgatherSolve(topology, K, progress, check)
    run.bound_fabric()
    forest = run.forest()
    run.tell("paths", 1.0)
    return run.schedule(forest)


def _box_symmetry(topology: Topology, fabric: IndexedFabric) -> BoxSymmetry | None:
    """The fabric's box translation when it is large enough for the symmetric path to pay."""
    if fabric.num_compute < SYMMETRY_MIN_N:
        return None
    return box_symmetry(topology, fabric)


def _symmetric_forest(
    topology: Topology,
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    opt: Optimum,
    check: Callable[[], None] | None,
    timings: dict[str, float],
):
    """(trees, link loads, algbw, k) from σ-equivariant plans and box-0 trees, or None.

    First with the fewest trees per root that keep the optimum
    (:mod:`solver.algorithm.fewest_trees`), then, if that forest falls short, with the
    optimum's own k.
    """
    t0 = time.perf_counter()
    k, caps = fewest_trees(fabric, opt, sym.sinks(fabric), check)
    timings["optimum"] += time.perf_counter() - t0
    found = _symmetric_attempt(topology, fabric, sym, opt, k, caps, check, timings)
    if found is None and k != opt.k:
        found = _symmetric_attempt(
            topology, fabric, sym, opt, opt.k, list(opt.caps), check, timings
        )
    return found


def _symmetric_attempt(
    topology: Topology,
    fabric: IndexedFabric,
    sym: BoxSymmetry,
    opt: Optimum,
    k: int,
    caps: list[int],
    check: Callable[[], None] | None,
    timings: dict[str, float],
):
    """(trees, link loads, algbw, k) for k trees per root on capacities ``caps``, or None.

    The links at shared switches are first trimmed to what the optimum needs
    (:mod:`solver.algorithm.spare_trim`). Splitting by plans needs no max-flow per split, and
    packing by orbit budgets none per edge; the invariant is checked by one max-flow per orbit, the forest by its exact link
    loads: anything short of the optimum returns None (the general path runs instead). If the
    plans work but orbit packing gets stuck, the general packing runs on the same switch-free
    graph.
    """
    t0 = time.perf_counter()
    caps = trim_shared_links(fabric, caps, k, sym, check)
    split = split_by_plans(fabric, dict(zip(fabric.edges, caps)), k, sym, check)
    timings["switch_removal"] += time.perf_counter() - t0
    if split is None:
        return None
    t0 = time.perf_counter()
    reps = pack_by_orbits(fabric, sym, split.caps, k, check)
    if reps is None:
        rank = {v: i for i, v in enumerate(fabric.compute)}
        rank_caps = {(rank[u], rank[v]): c for (u, v), c in split.caps.items()}
        classes, _flows = pack_trees(fabric.num_compute, rank_caps, k, check)
        classes = shorten_trees(classes, rank_caps, check=check)
    timings["trees"] = timings.get("trees", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    if reps is None:
        trees = _routed_trees(fabric, classes, split, k)
        usage = _link_usage(trees)
    else:
        trees, usage = routed_forest(fabric, sym, reps, split.paths, k)
    trees = _sorted_trees(trees, topology)
    loads, algbw = _link_loads(topology, [(usage, k)])
    timings["paths"] = time.perf_counter() - t0
    return (trees, loads, algbw, k) if algbw == opt.algbw else None


def _best_fixed_k(
    fabric: IndexedFabric,
    opt: Optimum,
    K: int,
    check: Callable[[], None] | None,
    balance_floors: bool = False,
) -> tuple[int, list[int], Fraction]:
    """Best k <= K: doubling a tree set never hurts, so only k in (K/2, K] can win.

    When trying every k would exceed the cost limit (:func:`solver.algorithm.cost.check_fixed_k`)
    k = K alone is tried: if it reaches the fractional bound x* no k can do better; otherwise the
    search is refused with the limit named.
    """
    try:
        check_fixed_k(fabric, K)
    except CostLimit:
        U, caps = fixed_k_capacity(fabric, K, opt.rate, check, balance=balance_floors)
        if Fraction(K) / U == opt.rate:
            return K, caps, opt.rate
        raise
    best = None
    for k in range(K // 2 + 1, K + 1):
        U, caps = fixed_k_capacity(fabric, k, opt.rate, check, balance=balance_floors)
        rate = Fraction(k) / U
        if best is None or rate > best[0]:
            best = (rate, k, caps)
    return best[1], best[2], best[0]


def _imbalance_notes(fabric: IndexedFabric) -> list[str]:
    """One note per switch whose in- and out-bandwidth differ (used when no trim was needed)."""
    notes = []
    tin: dict[int, Fraction] = {}
    tout: dict[int, Fraction] = {}
    for (u, v), b in zip(fabric.edges, fabric.bandwidth):
        tout[u] = tout.get(u, Fraction(0)) + b
        tin[v] = tin.get(v, Fraction(0)) + b
    for w in range(fabric.n):
        if fabric.is_compute[w]:
            continue
        a, b = tin.get(w, Fraction(0)), tout.get(w, Fraction(0))
        if a != b:
            side = "incoming" if a > b else "outgoing"
            notes.append(
                f"switch {fabric.names[w]!r} is unbalanced (in {float(a):g} GB/s, out "
                f"{float(b):g} GB/s): its extra {side} bandwidth stays unused (a switch cannot "
                "store or replicate data); no trimming was needed, the optimum is the cut bound"
            )
    return notes


def _sorted_trees(trees: list[Tree], topology: Topology) -> list[Tree]:
    order = {c: i for i, c in enumerate(topology.compute_ids)}
    return sorted(trees, key=lambda t: order[t.root])  # stable: keeps packing order per root


def _routed_trees(fabric: IndexedFabric, classes, split, k: int) -> list[Tree]:
    """Tree classes routed onto physical paths (step 4) as schedule trees."""
    routed = route_classes(classes, split.paths, list(fabric.compute))
    names = fabric.names
    trees = []
    edge_memo: dict[tuple[int, ...], TreeEdge] = {}  # identical routed edges share one object
    for root, mult, edges in routed:
        tedges = []
        for u, v, path in edges:
            te = edge_memo.get(path)
            if te is None:
                te = edge_memo[path] = TreeEdge(names[u], names[v], tuple(names[x] for x in path))
            tedges.append(te)
        trees.append(Tree(names[root], mult, Fraction(mult, k), tuple(tedges)))
    return trees


def _link_usage(trees) -> dict[tuple[str, str], int]:
    """Trees (by multiplicity) crossing each directed link."""
    per_path: dict[tuple[str, ...], int] = {}
    for t in trees:
        m = t.multiplicity
        for e in t.edges:
            per_path[e.path] = per_path.get(e.path, 0) + m
    usage: dict[tuple[str, str], int] = {}
    for path, m in per_path.items():
        for a, b in itertools.pairwise(path):
            usage[(a, b)] = usage.get((a, b), 0) + m
    return usage


def _link_loads(
    topology: Topology,
    parts: list[tuple[dict[tuple[str, ...], int], int]],
    times: list[Fraction] | None = None,
) -> tuple[list[LinkLoad], Fraction]:
    """Per-link loads and the algbw of one schedule (or of a sequence of phases).

    ``parts`` are (trees crossing each directed link, by multiplicity; k) of the phases; ``times`` the phase times
    per unit message (1/algbw) for a multi-phase schedule. For one phase: data on link e (per
    unit message) is ``usage(e)/(N·k)``, the time is the max of data/bandwidth and
    algbw = 1/time.
    """
    N = len(topology.compute_ids)
    bws = topology.directed_bandwidths()
    data: dict[tuple[str, str], Fraction] = {e: Fraction(0) for e in bws}
    for usage, k in parts:
        for e, u in usage.items():
            if e not in data:
                raise SolverError(f"internal error: path uses missing link {e[0]}->{e[1]}")
            data[e] += Fraction(u, N * k)
    if times is None:
        total = max(d / bws[e] for e, d in data.items())
    else:
        total = sum(times, Fraction(0))
    loads = [LinkLoad(u, v, bws[(u, v)], data[(u, v)] / (bws[(u, v)] * total)) for (u, v) in bws]
    return loads, 1 / total


def _bottleneck(fabric: IndexedFabric, opt: Optimum, entering: bool = False) -> BottleneckCut:
    names = fabric.names
    mask = opt.cut
    links = []
    for (u, v), b in zip(fabric.edges, fabric.bandwidth):
        if mask[u] and not mask[v]:
            links.append((names[v], names[u], b) if entering else (names[u], names[v], b))
    return BottleneckCut(
        nodes=tuple(names[i] for i in range(fabric.n) if mask[i]),
        compute_nodes_inside=opt.cut_compute,
        egress_bandwidth=opt.cut_bandwidth,
        links=tuple(links),
    )


# ------------------------------------------------------------------ other collectives
def _reverse_schedule(sched: Schedule, topology: Topology, source: Schedule) -> Schedule:
    """Reduce-scatter from an allgather schedule of the reversed fabric (aggregation trees).

    Every edge becomes child -> parent with its path reversed. The bottleneck set S is the one of
    the reversed fabric: its ``links`` are the links *entering* S (data that must reach S).
    """
    trees = []
    for t in sched.trees:
        edges = tuple(TreeEdge(e.dst, e.src, tuple(reversed(e.path))) for e in t.edges)
        trees.append(Tree(t.root, t.multiplicity, t.weight, edges))
    loads, algbw = _link_loads(topology, [(_link_usage(trees), sched.k)])
    cut = sched.bottleneck
    links = tuple((v, u, b) for u, v, b in cut.links)
    return Schedule(
        topology=topology,
        collective="reduce-scatter",
        k=sched.k,
        max_trees_per_root=sched.max_trees_per_root,
        optimal_algbw_exact=sched.optimal_algbw_exact,
        algbw_exact=algbw,
        bottleneck=BottleneckCut(cut.nodes, cut.compute_nodes_inside, cut.egress_bandwidth, links),
        trees=tuple(trees),
        link_load=tuple(loads),
        timings=dict(source.timings),
        warnings=source.warnings,
    )


def _allreduce(topology: Topology, rs: Schedule, ag: Schedule, K: int | None) -> Schedule:
    times = [1 / rs.algbw_exact, 1 / ag.algbw_exact]
    loads, algbw = _link_loads(
        topology,
        [(_link_usage(rs.trees), rs.k), (_link_usage(ag.trees), ag.k)],
        times,
    )
    optimal = 1 / (1 / rs.optimal_algbw_exact + 1 / ag.optimal_algbw_exact)
    timings = {
        key: rs.timings.get(key, 0.0) + ag.timings.get(key, 0.0)
        for key in ("optimum", "switch_removal", "trees", "paths")
    }
    if rs.trees is ag.trees or rs.timings == ag.timings:
        timings = dict(ag.timings)
    warnings = tuple(dict.fromkeys(rs.warnings + ag.warnings))
    bottleneck = rs.bottleneck if rs.algbw_exact < ag.algbw_exact else ag.bottleneck
    return Schedule(
        topology=topology,
        collective="allreduce",
        k=ag.k,
        max_trees_per_root=K,
        optimal_algbw_exact=optimal,
        algbw_exact=algbw,
        bottleneck=bottleneck,
        trees=(),
        link_load=tuple(loads),
        timings=timings,
        warnings=warnings,
        phases=(rs, ag),
    )
