"""Forced forests (solver/algorithm/direct.py): stars on one switch, chain-like trees, uniform
rings.

Each shape is solved without max-flows; the optimum is checked against the exhaustive twin
(tests/naive.py, every cut enumerated) and every schedule by the independent verifier. Shapes that
are *not* forced (a switch joining three branches, a cycle, an extra link at a star) must be left
to the general pipeline, whose answer the twin also checks.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from naive import exhaustive_optimum

import solver
from solver.algorithm.direct import direct_forest
from solver.algorithm.verify import verify_schedule
from solver.flow.csr import IndexedFabric
from solver.model.topology import Link, Node, Topology


def _gpu(i):
    return Node(f"g{i}", "compute")


def _star(bws, directed_extra=None):
    nodes = [_gpu(i) for i in range(len(bws))] + [Node("w", "switch")]
    links = [Link(f"g{i}", "w", Fraction(b)) for i, b in enumerate(bws)]
    return Topology("star", tuple(nodes), tuple(links))


def _chain(bws, switch_at=()):
    """A line of nodes; positions in ``switch_at`` are switches (ends are always GPUs)."""
    n = len(bws) + 1
    nodes = [Node(f"s{i}", "switch") if i in switch_at else _gpu(i) for i in range(n)]
    links = [Link(nodes[i].id, nodes[i + 1].id, Fraction(b)) for i, b in enumerate(bws)]
    return Topology("chain", tuple(nodes), tuple(links))


def _check(topo, shape, k=1):
    forest = direct_forest(IndexedFabric.from_topology(topo))
    assert forest is not None and forest.shape == shape
    s = solver.solve(topo)
    verify_schedule(s)
    assert s.k == k
    assert s.algbw_exact == s.optimal_algbw_exact == exhaustive_optimum(topo).algbw
    return s


@pytest.mark.parametrize("seed", range(8))
def test_star_matches_exhaustive_optimum(seed):
    rng = random.Random(seed)
    bws = [
        rng.choice([25, 50, 100, Fraction(25, 2), Fraction(1, 3)]) for _ in range(rng.randint(2, 9))
    ]
    s = _check(_star(bws), "star")
    thin = min(bws)
    assert s.algbw_exact == len(bws) * thin / (len(bws) - 1)
    assert len(s.trees) == len(bws) and all(len(t.edges) == len(bws) - 1 for t in s.trees)
    assert all(len(e.path) == 3 for t in s.trees for e in t.edges)  # straight through the switch


@pytest.mark.parametrize("seed", range(8))
def test_chain_like_tree_matches_exhaustive_optimum(seed):
    rng = random.Random(100 + seed)
    length = rng.randint(2, 10)
    bws = [rng.choice([10, 40, 100, Fraction(7, 3)]) for _ in range(length)]
    inner = list(range(1, length))
    switch_at = set(rng.sample(inner, rng.randint(0, len(inner) // 2))) if inner else set()
    topo = _chain(bws, switch_at)
    if len(topo.compute_ids) < 2:
        return
    _check(topo, "tree")


def test_dead_switch_branches_are_pruned():
    # g0 - s1 - g2 with a switch branch s3 - s4 hanging off s1: the branch holds no GPU
    nodes = (_gpu(0), Node("s1", "switch"), _gpu(2), Node("s3", "switch"), Node("s4", "switch"))
    links = (
        Link("g0", "s1", Fraction(10)),
        Link("s1", "g2", Fraction(20)),
        Link("s1", "s3", Fraction(5)),
        Link("s3", "s4", Fraction(5)),
    )
    s = _check(Topology("pruned", nodes, links), "tree")
    assert s.algbw_exact == 20  # N · min(10/1, 20/1... ) = 2 · 10


def test_compute_node_with_three_branches_is_a_tree():
    # a GPU may have any degree (it can copy data); g0 in the middle of three arms
    nodes = tuple(_gpu(i) for i in range(5)) + (Node("s", "switch"),)
    links = (
        Link("g0", "g1", Fraction(10)),
        Link("g0", "g2", Fraction(30)),
        Link("g0", "s", Fraction(20)),
        Link("s", "g3", Fraction(20)),
        Link("g3", "g4", Fraction(5)),
    )
    _check(Topology("spider", nodes, links), "tree")


@pytest.mark.parametrize("n", [3, 4, 5, 8, 11])
def test_uniform_ring_matches_exhaustive_optimum(n):
    nodes = tuple(_gpu(i) for i in range(n))
    links = tuple(Link(f"g{i}", f"g{(i + 1) % n}", Fraction(25, 2)) for i in range(n))
    s = _check(Topology("ring", nodes, links), "ring", k=1 if n % 2 else 2)
    assert s.algbw_exact == 2 * n * Fraction(25, 2) / (n - 1)
    assert max(len(set(t.depth_of().values())) - 1 for t in s.trees) == n // 2


@pytest.mark.parametrize("case", ["y-switch", "cycle", "star-plus-link", "one-way-star"])
def test_shapes_that_are_not_forced_use_the_general_pipeline(case):
    if case == "y-switch":  # a switch joining three GPUs on a longer fabric: would replicate
        nodes = (_gpu(0), _gpu(1), _gpu(2), _gpu(3), Node("w", "switch"))
        links = (
            Link("g0", "w", Fraction(10)),
            Link("g1", "w", Fraction(10)),
            Link("g2", "w", Fraction(10)),
            Link("g2", "g3", Fraction(10)),
        )
    elif case == "cycle":  # a ring of unequal bandwidths
        nodes = tuple(_gpu(i) for i in range(4))
        links = tuple(Link(f"g{i}", f"g{(i + 1) % 4}", Fraction(10 + i)) for i in range(4))
    elif case == "star-plus-link":
        nodes = (_gpu(0), _gpu(1), _gpu(2), Node("w", "switch"))
        links = (
            Link("g0", "w", Fraction(10)),
            Link("g1", "w", Fraction(10)),
            Link("g2", "w", Fraction(10)),
            Link("g0", "g1", Fraction(5)),
        )
    else:  # one-way links of unequal bandwidths at the switch
        nodes = (_gpu(0), _gpu(1), _gpu(2), Node("w", "switch"))
        links = (
            Link("g0", "w", Fraction(10), directed=True),
            Link("w", "g0", Fraction(30), directed=True),
            Link("g1", "w", Fraction(20)),
            Link("g2", "w", Fraction(20)),
        )
    topo = Topology(case, nodes, links)
    assert direct_forest(IndexedFabric.from_topology(topo)) is None
    s = solver.solve(topo)
    verify_schedule(s)
    assert s.optimal_algbw_exact == exhaustive_optimum(topo).algbw


def test_even_ring_under_one_tree_per_root_uses_the_fixed_k_search():
    # the forced forest of an even ring has k = 2: with K = 1 the general fixed-k search decides
    nodes = tuple(_gpu(i) for i in range(6))
    topo = Topology(
        "ring6", nodes, tuple(Link(f"g{i}", f"g{(i + 1) % 6}", Fraction(10)) for i in range(6))
    )
    s = solver.solve(topo, max_trees_per_root=1)
    verify_schedule(s)
    assert s.k == 1 and s.algbw_exact < s.optimal_algbw_exact == exhaustive_optimum(topo).algbw
