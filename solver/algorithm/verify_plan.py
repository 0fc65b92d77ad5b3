"""Checking a compressed plan without expanding it.

A :class:`~solver.model.plan.CompressedSchedule` claims that its representative trees and their
images under σ, σ², …, σ^(B-1) form an allgather schedule with the stored loads and algbw.
:func:`verify_compressed` proves that from the fabric, the representatives and σ alone:

1. σ is an automorphism of the fabric: a permutation of the nodes that maps compute nodes to
   compute nodes and every directed link onto a link of the same bandwidth (then it is a
   bijection on the links as well), and σ^B is the identity (the cycle lengths divide B).
2. Every representative tree is checked in full, exactly like a tree of a full schedule
   (:mod:`solver.algorithm.verify`: spanning, breadth-first, paths on links relaying only through
   switches). σ^b of a valid tree is valid: σ^b keeps node kinds and links.
3. The orbit of every representative root under ⟨σ⟩ has B distinct compute nodes, the orbits
   of different representative roots are disjoint and together hold every compute node, and
   each representative root's multiplicities sum to k. So each compute node roots exactly k
   trees (by multiplicity) of the expansion.
4. Loads from orbit sums: the expansion puts on link e, per unit of multiplicity, the
   representatives' use of every link of e's orbit O, times B/|O| (σ^b maps a given link of O to
   e for B/|O| values of b). From that, every stored link load, the schedule time and algbw are
   recomputed exactly, and the bottleneck cut is re-checked against the fabric as for a full
   schedule.

The code is independent of the solver's (:mod:`solver.algorithm.compressed`): it computes the
link permutation and its orbits again, with names instead of indices. Cost O(F·log F + R·k·N·L)
for F links and R·k representative trees of N-1 edges with paths of L links, instead of
O(N²·L) for the expansion. :func:`verify_sample` additionally expands a few trees (chosen by a
seeded generator) and checks them as trees of a full schedule.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import numpy as np

from solver.algorithm.verify import _check_algbw, _check_cut, _check_link_load, _check_tree
from solver.model.errors import SolverError
from solver.model.plan import CompressedSchedule

__all__ = ["verify_compressed", "verify_sample"]


def verify_compressed(plan: CompressedSchedule) -> None:
    """Check every claim of ``plan`` (see the module docstring); raise :class:`SolverError`."""
    s = plan.base
    where = "compressed plan"
    if s.collective != "allgather":
        raise SolverError(
            f"{where}: only allgather plans are stored compressed, got {s.collective!r}"
        )
    if s.phases:
        raise SolverError(f"{where}: a plan has no phases")
    topo = s.topology
    ids = topo.node_ids
    kinds = {n.id: n.kind for n in topo.nodes}
    compute = topo.compute_ids
    bandwidth = topo.directed_bandwidths()
    k = s.k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise SolverError(f"{where}: k must be a positive integer, got {k!r}")
    sigma = _check_automorphism(plan, ids, kinds, bandwidth, where)

    per_root: Counter = Counter()
    checked: set = set()
    for i, tree in enumerate(s.trees):
        tw = f"{where}: representative tree {i} (root {tree.root!r})"
        _check_tree(tree, tw, True, kinds, compute, bandwidth, checked)
        m = tree.multiplicity
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise SolverError(f"{tw}: multiplicity must be a positive integer, got {m!r}")
        if tree.weight != Fraction(m, k):
            raise SolverError(f"{tw}: weight {tree.weight} != multiplicity/k = {m}/{k}")
        per_root[tree.root] += m
    for root, total in per_root.items():
        if total != k:
            raise SolverError(
                f"{where}: the multiplicities of root {root!r}'s trees sum to {total}, not k = {k}"
            )
    _check_root_orbits(list(per_root), sigma, plan.order, compute, where)

    data = _orbit_data(plan, sigma, bandwidth, len(compute), where)
    time = max((d / bandwidth[e] for e, d in data.items()), default=Fraction(0))
    if time == 0:
        raise SolverError(f"{where}: the plan moves no data")
    _check_link_load(s, where, data, time, bandwidth)
    _check_algbw(s, where, 1 / time)
    _check_cut(s, where, kinds, bandwidth, len(compute))


def verify_sample(plan: CompressedSchedule, count: int = 8, seed: int = 0) -> list[int]:
    """Expand ``count`` trees (indices from a seeded generator) and check each as a full tree;
    return the indices checked."""
    topo = plan.topology
    kinds = {n.id: n.kind for n in topo.nodes}
    rng = random.Random(seed)
    picks = sorted(rng.sample(range(plan.num_trees), min(count, plan.num_trees)))
    bandwidth = topo.directed_bandwidths()
    for i in picks:
        tree = plan.tree(i)
        _check_tree(
            tree,
            f"compressed plan: expanded tree {i} (root {tree.root!r})",
            True,
            kinds,
            topo.compute_ids,
            bandwidth,
            set(),
        )
    return picks


def _check_automorphism(plan, ids, kinds, bandwidth, where) -> dict[str, str]:
    gen = plan.generator
    n = len(ids)
    if gen.ndim != 1 or gen.shape[0] != n:
        raise SolverError(f"{where}: the generator has {gen.shape} entries, the fabric {n} nodes")
    if n and (gen.min() < 0 or gen.max() >= n or np.unique(gen).size != n):
        raise SolverError(f"{where}: the generator is not a permutation of the {n} nodes")
    order = plan.order
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise SolverError(f"{where}: order must be a positive integer, got {order!r}")
    sigma = {ids[i]: ids[int(gen[i])] for i in range(n)}
    for v, w in sigma.items():
        if kinds[v] != kinds[w]:
            raise SolverError(f"{where}: the generator maps {kinds[v]} {v!r} to {kinds[w]} {w!r}")
    for (u, v), b in bandwidth.items():
        image = (sigma[u], sigma[v])
        if bandwidth.get(image) != b:
            raise SolverError(
                f"{where}: the generator is not an automorphism: link {u}->{v} ({b} GB/s) goes to "
                f"{image[0]}->{image[1]}, which is "
                + ("no link" if image not in bandwidth else f"{bandwidth[image]} GB/s")
            )
    lengths = set()
    seen: set[str] = set()
    for start in ids:
        if start in seen:
            continue
        v, length = start, 0
        while v not in seen:
            seen.add(v)
            v = sigma[v]
            length += 1
        lengths.add(length)
    for length in lengths:
        if order % length:
            raise SolverError(
                f"{where}: the generator has a cycle of length {length}, so its "
                f"order is not {order}"
            )
    cycle_order = math.lcm(*lengths) if lengths else 1
    if cycle_order != order:
        raise SolverError(f"{where}: the generator has order {cycle_order}, the plan says {order}")
    return sigma


def _check_root_orbits(roots, sigma, order, compute, where) -> None:
    owner: dict[str, str] = {}
    for r in roots:
        v = r
        for _ in range(order):
            if v in owner:
                raise SolverError(
                    f"{where}: compute node {v!r} is in the orbits of both "
                    f"{owner[v]!r} and {r!r} (or twice in one orbit)"
                )
            owner[v] = r
            v = sigma[v]
    missing = [c for c in compute if c not in owner]
    if missing:
        raise SolverError(
            f"{where}: compute node {missing[0]!r} roots no tree: it is in no "
            "representative root's orbit"
        )


def _orbit_data(plan, sigma, bandwidth, n, where) -> dict[tuple[str, str], Fraction]:
    """Bytes per byte of message crossing each link of the expansion, from orbit sums."""
    orbit_of: dict[tuple[str, str], int] = {}
    sizes: list[int] = []
    for link in bandwidth:
        if link in orbit_of:
            continue
        e, size = link, 0
        while e not in orbit_of:
            orbit_of[e] = len(sizes)
            size += 1
            e = (sigma[e[0]], sigma[e[1]])
        sizes.append(size)
    per_orbit = [0] * len(sizes)
    k = plan.k
    for t in plan.base.trees:
        for edge in t.edges:
            path = edge.path
            for i in range(len(path) - 1):
                per_orbit[orbit_of[(path[i], path[i + 1])]] += t.multiplicity
    data = {}
    for link, o in orbit_of.items():
        if per_orbit[o]:
            data[link] = Fraction(per_orbit[o] * (plan.order // sizes[o]), n * k)
    return data
