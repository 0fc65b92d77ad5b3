"""Independent, exact checking of a :class:`~solver.model.schedule.Schedule`.

:func:`verify_schedule` re-derives everything a schedule claims from its trees and the fabric alone
(it shares no code with the solver) and raises :class:`~solver.model.errors.SolverError` with a message
naming the tree, edge or link at fault. :func:`recompute_algbw` returns the algorithmic bandwidth
implied by the trees.

Model (see ``solver/schedule.py``): with message size M and N compute nodes, a tree of weight w
moves w·M/N bytes across every directed link of every path of its edges; the schedule time is
``max_e data(e) / b(e)`` and ``algbw = M / time``. For allreduce, the time is the reduce-scatter
time plus the allgather time. All arithmetic is exact (:class:`fractions.Fraction`); link uses are
counted with integers per distinct tree weight, so schedules with thousands of trees check in well
under a second.

Notes
-----
Cost is O(T·N·L) integer increments for T trees of N-1 edges with paths of L links, plus
O(W·E) Fraction operations for W distinct tree weights and E directed links.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
from collections import Counter
from fractions import Fraction
from itertools import pairwise

import numpy as np

from solver.algorithm.verify_arrays import scan
from solver.model.errors import SolverError
from solver.model.schedule import COLLECTIVES, Schedule
from solver.model.topology import COMPUTE, SWITCH

__all__ = ["link_data", "recompute_algbw", "verify_schedule"]

PARALLEL_MIN_EDGES = 1_000_000  # tree edges from which verify_schedule(workers > 1) forks


# --------------------------------------------------------------------------- public API
def verify_schedule(schedule: Schedule, workers: int = 1) -> None:
    """Check every claim of ``schedule``; raise :class:`SolverError` on the first violation.

    Checked: each tree spans the compute nodes from its root (allgather: out-tree, edges
    parent->child; reduce-scatter: in-tree, edges child->parent) with edges listed breadth-first;
    every path starts and ends at its edge's endpoints, follows existing directed links and relays
    only through switches; multiplicities are positive integers, ``weight == multiplicity / k`` and
    each root's multiplicities sum to ``k``; ``link_load`` equals the loads recomputed from the
    trees (no link above its bandwidth); ``algbw_exact`` equals the value recomputed from the trees
    and does not exceed ``optimal_algbw_exact``; the bottleneck cut is a real cut whose bound equals
    the optimum (with its fabric bandwidths; a schedule that carries warnings may list trimmed,
    smaller bandwidths for unbalanced switches). Allreduce schedules are checked phase by phase, then as a whole.

    Parameters
    ----------
    schedule : Schedule
        The schedule to check; it is not modified.
    workers : int
        Processes for the per-tree checks of schedules with at least
        :data:`PARALLEL_MIN_EDGES` tree edges (forked; Linux). The trees are split into
        contiguous ranges; the result is the same as with one.

    Raises
    ------
    SolverError
        With a one-line message naming the violated rule and where.
    """
    if schedule.collective not in COLLECTIVES:
        raise SolverError(f"unknown collective {schedule.collective!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise SolverError(f"workers must be a positive integer, got {workers!r}")
    # the checks make no reference cycles; a full collection would walk every tree edge of
    # the schedule again and again (2048-GPU fat tree: 1.3-1.6x slower with it on)
    was_on = gc.isenabled()
    gc.disable()
    try:
        if schedule.collective == "allreduce":
            _verify_allreduce(schedule, workers)
        else:
            _verify_single(schedule, where=schedule.collective, workers=workers)
    finally:
        if was_on:
            gc.enable()


def recompute_algbw(schedule: Schedule) -> Fraction:
    """The exact algbw (GB/s) implied by the trees of ``schedule`` (M / time, see module doc).

    For allreduce, ``M / (time of reduce-scatter phase + time of allgather phase)``.
    The trees' structure is not checked here (use :func:`verify_schedule`).
    """
    if schedule.collective == "allreduce":
        if len(schedule.phases) != 2:
            raise SolverError(
                f"allreduce schedule must have 2 phases (reduce-scatter, allgather), "
                f"has {len(schedule.phases)}"
            )
        time = sum((_time_per_byte(p, link_data(p)) for p in schedule.phases), Fraction(0))
        return 1 / time
    return 1 / _time_per_byte(schedule, link_data(schedule))


def link_data(schedule: Schedule) -> dict[tuple[str, str], Fraction]:
    """Bytes crossing each used directed link, per byte of message (M = 1), walking into phases."""
    trees = [tree for _coll, tree in schedule.all_trees()]
    return _data_from_uses(schedule, _link_uses(trees))


def _link_uses(trees) -> dict[Fraction, Counter]:
    """Per tree weight, how many tree edges cross each directed link."""
    # count the uses of each edge object first (trees share edge objects; counting by identity
    # avoids hashing a path per tree edge), then walk each distinct path once
    edges_by_weight: dict[Fraction, Counter] = {}
    objects: dict[int, object] = {}
    for tree in trees:
        counts = edges_by_weight.setdefault(Fraction(tree.weight), Counter())
        for edge in tree.edges:
            counts[id(edge)] += 1
            objects[id(edge)] = edge
    uses_by_weight: dict[Fraction, Counter] = {}
    for weight, counts in edges_by_weight.items():
        uses = uses_by_weight[weight] = Counter()
        for ident, count in counts.items():
            path = objects[ident].path
            for i in range(len(path) - 1):
                uses[path[i], path[i + 1]] += count
    return uses_by_weight


def _data_from_uses(
    schedule: Schedule, uses_by_weight: dict[Fraction, Counter]
) -> dict[tuple[str, str], Fraction]:
    n = len(schedule.topology.compute_ids)
    data: dict[tuple[str, str], Fraction] = {}
    for weight, uses in uses_by_weight.items():
        share = weight / n
        for link, count in uses.items():
            data[link] = data.get(link, Fraction(0)) + share * count
    return data


# --------------------------------------------------------------------------- internals
def _time_per_byte(schedule: Schedule, data: dict[tuple[str, str], Fraction]) -> Fraction:
    """max_e data(e)/b(e) for M = 1; raises if a used link does not exist or nothing is sent."""
    bandwidth = schedule.topology.directed_bandwidths()
    worst = Fraction(0)
    for link, amount in data.items():
        b = bandwidth.get(link)
        if b is None:
            raise SolverError(
                f"{schedule.collective}: data crosses {link[0]}->{link[1]}, "
                "which is not a directed link of the fabric"
            )
        worst = max(worst, amount / b)
    if worst == 0:
        raise SolverError(f"{schedule.collective}: the schedule moves no data (no tree edges)")
    return worst


def _verify_single(s: Schedule, where: str, workers: int = 1) -> None:
    if s.collective not in ("allgather", "reduce-scatter"):
        raise SolverError(
            f"{where}: expected an allgather or reduce-scatter schedule, got {s.collective!r}"
        )
    if s.phases:
        raise SolverError(f"{where}: only allreduce schedules have phases")
    topo = s.topology
    kinds = {n.id: n.kind for n in topo.nodes}
    compute = topo.compute_ids
    n = len(compute)
    bandwidth = topo.directed_bandwidths()
    k = s.k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise SolverError(f"{where}: k must be a positive integer, got {k!r}")
    if s.max_trees_per_root is not None and k > s.max_trees_per_root:
        raise SolverError(f"{where}: k = {k} exceeds max_trees_per_root = {s.max_trees_per_root}")

    per_root, uses = _scan_in_workers(s, where, workers)
    for root in compute:
        if per_root.get(root, 0) != k:
            raise SolverError(
                f"{where}: the multiplicities of root {root!r}'s trees sum to "
                f"{per_root.get(root, 0)}, not k = {k}"
            )

    data = _data_from_uses(s, uses)
    time = _time_per_byte(s, data)
    _check_link_load(s, where, data, time, bandwidth)
    algbw = 1 / time
    _check_algbw(s, where, algbw)
    _check_cut(s, where, kinds, bandwidth, n)


def _scan_trees(s: Schedule, where: str, lo: int, hi: int) -> tuple[Counter, dict]:
    """Check trees ``lo..hi-1`` of ``s``: (multiplicity per root, link uses per weight).

    The trees are checked on integer arrays (:mod:`solver.algorithm.verify_arrays`); when one
    fails, it is checked again edge by edge (:func:`_scan_slow`) for the message."""
    kinds = {n.id: n.kind for n in s.topology.nodes}
    bandwidth = s.topology.directed_bandwidths()
    first_bad = hi - lo  # the first tree whose multiplicity or weight is wrong
    per_root: Counter = Counter()
    for i in range(lo, hi):
        tree = s.trees[i]
        m = tree.multiplicity
        if (
            isinstance(m, bool)
            or not isinstance(m, int)
            or m < 1
            or tree.weight != Fraction(m, s.k)
        ):
            first_bad = i - lo
            break
        per_root[tree.root] += m
    node_index = {v: i for i, v in enumerate(kinds)}
    is_compute = np.asarray([kind == COMPUTE for kind in kinds.values()], dtype=np.bool_)

    def path_ok(edge) -> bool:
        try:
            _check_path(edge, "", kinds, bandwidth)
        except SolverError:
            return False
        return True

    failed, uses = scan(
        s.trees[lo:hi], node_index, is_compute, path_ok, s.collective == "allgather"
    )
    start = first_bad if failed < 0 else min(first_bad, failed)
    if start < hi - lo or uses is None:
        _scan_slow(s, where, lo + start, hi)  # raises, naming the problem
        raise SolverError(f"{where}: internal error: tree {lo + start} fails only the array check")
    return per_root, uses


def _scan_slow(s: Schedule, where: str, lo: int, hi: int) -> tuple[Counter, dict]:
    """:func:`_scan_trees` edge by edge in Python (names the first problem it finds)."""
    kinds = {n.id: n.kind for n in s.topology.nodes}
    compute = s.topology.compute_ids
    bandwidth = s.topology.directed_bandwidths()
    gather = s.collective == "allgather"
    per_root: Counter = Counter()
    checked_paths: set = set()  # ids of edge objects already found valid: trees share them
    for i in range(lo, hi):
        tree = s.trees[i]
        tw = f"{where}: tree {i} (root {tree.root!r})"
        _check_tree(tree, tw, gather, kinds, compute, bandwidth, checked_paths)
        m = tree.multiplicity
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise SolverError(f"{tw}: multiplicity must be a positive integer, got {m!r}")
        if tree.weight != Fraction(m, s.k):
            raise SolverError(f"{tw}: weight {tree.weight} != multiplicity/k = {m}/{s.k}")
        per_root[tree.root] += m
    return per_root, _link_uses(s.trees[lo:hi])


_FORKED: tuple[Schedule, str] | None = None  # what forked workers scan (inherited, not pickled)


def _scan_forked(lo: int, hi: int) -> tuple[Counter, dict]:
    s, where = _FORKED
    return _scan_trees(s, where, lo, hi)


def _scan_in_workers(s: Schedule, where: str, workers: int) -> tuple[Counter, dict]:
    """:func:`_scan_trees` over all trees, in ``workers`` forked processes when that pays.

    Each process checks a contiguous range of trees and returns its counts (small: per root
    and per link); an error found in any range is raised (its message names the tree). A
    forked child copies every memory page whose objects it touches (reference counts), so on
    a machine without idle cores the copies can cost more than the second process gains. Processes are forked (they
    inherit the schedule instead of receiving a copy), so this runs only where ``fork``
    exists and the schedule is large; else one process does it all.
    """
    edges = sum(len(t.edges) for t in s.trees)
    if workers <= 1 or edges < PARALLEL_MIN_EDGES or "fork" not in mp.get_all_start_methods():
        return _scan_trees(s, where, 0, len(s.trees))
    global _FORKED
    bounds = [len(s.trees) * i // workers for i in range(workers + 1)]
    _FORKED = (s, where)
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            parts = pool.starmap(_scan_forked, pairwise(bounds))
    finally:
        _FORKED = None
    per_root: Counter = Counter()
    uses: dict[Fraction, Counter] = {}
    for roots, part_uses in parts:
        per_root.update(roots)
        for weight, counts in part_uses.items():
            uses.setdefault(weight, Counter()).update(counts)
    return per_root, uses


def _check_tree(tree, tw, gather, kinds, compute, bandwidth, checked_paths) -> None:
    if kinds.get(tree.root) != COMPUTE:
        raise SolverError(f"{tw}: root is not a compute node")
    if len(tree.edges) != len(compute) - 1:
        raise SolverError(
            f"{tw}: has {len(tree.edges)} edges, a spanning tree of "
            f"{len(compute)} compute nodes needs {len(compute) - 1}"
        )
    depth = {tree.root: 0}
    last_depth = 1
    for j, edge in enumerate(tree.edges):
        parent, child = (edge.src, edge.dst) if gather else (edge.dst, edge.src)
        if (
            kinds.get(child) == COMPUTE
            and parent in depth
            and child not in depth
            and depth[parent] + 1 >= last_depth
        ):
            depth[child] = last_depth = depth[parent] + 1
            if id(edge) not in checked_paths:  # the schedule keeps every edge object alive
                _check_path(edge, f"{tw}: edge {j} {edge.src}->{edge.dst}", kinds, bandwidth)
                checked_paths.add(id(edge))
            continue
        # Slow path: name the problem.
        ew = f"{tw}: edge {j} {edge.src}->{edge.dst}"
        if kinds.get(child) != COMPUTE:
            raise SolverError(f"{ew}: {child!r} is not a compute node")
        if parent not in depth:
            raise SolverError(
                f"{ew}: {'parent' if gather else 'parent (dst)'} {parent!r} is not yet in the "
                "tree (edges must be listed breadth-first from the root"
                + ("" if gather else ", reduce-scatter edges go child->parent")
                + ")"
            )
        if child in depth:
            raise SolverError(f"{ew}: {child!r} is reached twice (not a tree)")
        d = depth[parent] + 1
        raise SolverError(
            f"{ew}: depth {d} listed after depth {last_depth} (edges must be breadth-first)"
        )
    missing = [c for c in compute if c not in depth]
    if missing:
        raise SolverError(f"{tw}: does not reach compute node {missing[0]!r}")


def _check_path(edge, ew, kinds, bandwidth) -> None:
    path = tuple(edge.path)
    if len(path) < 2:
        raise SolverError(f"{ew}: path {list(path)} is too short")
    if path[0] != edge.src or path[-1] != edge.dst:
        raise SolverError(
            f"{ew}: path {'->'.join(path)} does not run from {edge.src!r} to {edge.dst!r}"
        )
    for hop in path[1:-1]:
        kind = kinds.get(hop)
        if kind != SWITCH:
            what = "unknown node" if kind is None else "compute node"
            raise SolverError(f"{ew}: path relays through {what} {hop!r} (only switches may relay)")
    for a, b in pairwise(path):
        if (a, b) not in bandwidth:
            raise SolverError(
                f"{ew}: path uses {a}->{b}, which is not a directed link of the fabric"
            )


def _check_link_load(s, where, data, time, bandwidth) -> None:
    seen = set()
    for entry in s.link_load:
        link = (entry.source, entry.target)
        lw = f"{where}: link_load {entry.source}->{entry.target}"
        if link in seen:
            raise SolverError(f"{lw}: listed twice")
        seen.add(link)
        b = bandwidth.get(link)
        if b is None:
            raise SolverError(f"{lw}: not a directed link of the fabric")
        if entry.bandwidth != b:
            raise SolverError(f"{lw}: bandwidth {entry.bandwidth} != fabric's {b}")
        expected = data.get(link, Fraction(0)) / (b * time)
        if entry.load > 1:
            raise SolverError(f"{lw}: load {entry.load} exceeds the link's bandwidth")
        if entry.load != expected:
            raise SolverError(f"{lw}: load {entry.load} != {expected} recomputed from the trees")
    for link, amount in data.items():
        if amount and link not in seen:
            raise SolverError(f"{where}: link_load misses used link {link[0]}->{link[1]}")


def _check_algbw(s, where, algbw) -> None:
    if s.algbw_exact != algbw:
        raise SolverError(
            f"{where}: algbw_exact {s.algbw_exact} ({float(s.algbw_exact):.6g} GB/s) "
            f"!= {algbw} ({float(algbw):.6g} GB/s) recomputed from the trees"
        )
    if s.algbw_exact > s.optimal_algbw_exact:
        raise SolverError(
            f"{where}: algbw {float(s.algbw_exact):.6g} GB/s exceeds the optimum "
            f"{float(s.optimal_algbw_exact):.6g} GB/s"
        )


def _check_cut(s, where, kinds, bandwidth, n) -> None:
    """The cut must be real and its bound must equal the optimum.

    Allgather: data of S's compute nodes must leave S (links leaving S). Reduce-scatter: data for
    S's compute nodes must enter S (links entering S).
    """
    cut = s.bottleneck
    inside = set(cut.nodes)
    cw = f"{where}: bottleneck cut"
    for v in inside:
        if v not in kinds:
            raise SolverError(f"{cw}: unknown node {v!r}")
    count = sum(1 for v in inside if kinds[v] == COMPUTE)
    if not 0 < count < n:
        raise SolverError(f"{cw}: holds {count} of {n} compute nodes (needs between 1 and {n - 1})")
    if cut.compute_nodes_inside != count:
        raise SolverError(
            f"{cw}: says {cut.compute_nodes_inside} compute nodes inside, it holds {count}"
        )
    out = s.collective == "allgather"
    expected = {
        (u, v): b
        for (u, v), b in bandwidth.items()
        if ((u in inside) != (v in inside)) and ((u in inside) == out)
    }
    # A schedule with warnings may have trimmed unusable bandwidth (unbalanced switches): its cut
    # may list smaller bandwidths and omit links trimmed to zero. Otherwise the cut is exact.
    trimmed = bool(s.warnings)
    listed = {}
    for u, v, b in cut.links:
        if (u, v) not in expected:
            direction = "leaving" if out else "entering"
            raise SolverError(f"{cw}: {u}->{v} is not a link {direction} the cut")
        if b != expected[(u, v)] and not (trimmed and 0 <= b < expected[(u, v)]):
            raise SolverError(f"{cw}: {u}->{v} bandwidth {b} != fabric's {expected[(u, v)]}")
        listed[(u, v)] = b
    missing = sorted(set(expected) - set(listed))
    if len(listed) != len(cut.links) or (missing and not trimmed):
        raise SolverError(
            f"{cw}: link list is incomplete or repeated"
            + (f" (misses {missing[0][0]}->{missing[0][1]})" if missing else "")
        )
    total = sum(listed.values(), Fraction(0))
    if cut.egress_bandwidth != total:
        raise SolverError(
            f"{cw}: egress bandwidth {cut.egress_bandwidth} != {total} summed over its links"
        )
    bound = n * total / count
    if bound != s.optimal_algbw_exact:
        raise SolverError(
            f"{cw}: bound N·B/|S∩Vc| = {n}·{total}/{count} = {float(bound):.6g} "
            f"GB/s != optimum {float(s.optimal_algbw_exact):.6g} GB/s"
        )


def _verify_allreduce(s: Schedule, workers: int = 1) -> None:
    if s.trees:
        raise SolverError("allreduce: top-level trees must be empty (trees live in phases)")
    if len(s.phases) != 2 or [p.collective for p in s.phases] != ["reduce-scatter", "allgather"]:
        raise SolverError(
            "allreduce: phases must be (reduce-scatter, allgather), got "
            f"{[p.collective for p in s.phases]}"
        )
    for p in s.phases:
        if p.topology != s.topology:
            raise SolverError(f"allreduce: {p.collective} phase is on a different fabric")
        _verify_single(p, where=f"allreduce/{p.collective}", workers=workers)
    rs, ag = s.phases
    data_rs, data_ag = link_data(rs), link_data(ag)
    time = _time_per_byte(rs, data_rs) + _time_per_byte(ag, data_ag)
    optimal = 1 / (1 / rs.optimal_algbw_exact + 1 / ag.optimal_algbw_exact)
    if s.optimal_algbw_exact != optimal:
        raise SolverError(
            f"allreduce: optimal_algbw_exact {s.optimal_algbw_exact} != "
            f"1/(1/{rs.optimal_algbw_exact} + 1/{ag.optimal_algbw_exact})"
        )
    if s.link_load:
        combined = dict(data_rs)
        for link, amount in data_ag.items():
            combined[link] = combined.get(link, Fraction(0)) + amount
        _check_link_load(s, "allreduce", combined, time, s.topology.directed_bandwidths())
    _check_algbw(s, "allreduce", 1 / time)
