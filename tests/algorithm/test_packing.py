"""Step 3: tree packing gives k spanning out-trees per root within the edge capacities."""

import random
from collections import Counter

import networkx as nx
import pytest
from test_optimum import random_fabric
from test_splitting import switched_fabric

from solver.algorithm.optimum import compute_optimum
from solver.algorithm.packing import pack_trees, shorten_trees
from solver.algorithm.splitting import split_switches
from solver.flow.csr import IndexedFabric


def check_packing(N, caps, k, classes=None):
    if classes is None:
        classes, _flows = pack_trees(N, caps, k)
    per_root = Counter()
    used = Counter()
    for cls in classes:
        assert cls.mult > 0
        per_root[cls.root] += cls.mult
        seen = {cls.root}
        for x, y in cls.edges:
            assert x in seen and y not in seen
            seen.add(y)
            used[(x, y)] += cls.mult
        assert seen == set(range(N))
    assert per_root == {r: k for r in range(N)}
    for e, u in used.items():
        assert u <= caps[e]
    return classes


def _compute_graph(topo):
    fabric = IndexedFabric.from_topology(topo)
    opt = compute_optimum(fabric)
    split = split_switches(fabric, dict(zip(fabric.edges, opt.caps)), opt.k)
    rank = {v: i for i, v in enumerate(fabric.compute)}
    return fabric.num_compute, {(rank[u], rank[v]): c for (u, v), c in split.caps.items()}, opt


@pytest.mark.parametrize("seed", range(20))
def test_random_compute_fabrics(seed):
    N, caps, opt = _compute_graph(random_fabric(seed, n_compute=3 + seed % 4, n_switch=0))
    check_packing(N, caps, opt.k)


@pytest.mark.parametrize("seed", range(15))
def test_random_switched_fabrics(seed):
    N, caps, opt = _compute_graph(switched_fabric(seed))
    check_packing(N, caps, opt.k)


def _feasible(N, caps, k):
    g = nx.DiGraph()
    for (x, y), c in caps.items():
        g.add_edge(x, y, capacity=c)
    for v in range(N):
        g.add_edge("s", v, capacity=k)
    return all(nx.maximum_flow_value(g, "s", v) >= N * k for v in range(N))


@pytest.mark.parametrize("seed", range(6))
def test_dense_graphs_at_their_largest_k(seed):
    """Dense random graphs at the largest feasible k: many class splits and auxiliary slots."""
    rng = random.Random(seed)
    N = 7
    caps = {}
    for i in range(N):
        for j in range(N):
            if i != j and rng.random() < 0.6:
                caps[(i, j)] = rng.randint(1, 9)
    for i in range(N):
        caps[(i, (i + 1) % N)] = caps.get((i, (i + 1) % N), 0) + 9
    k = 1
    assert _feasible(N, caps, 1)
    while _feasible(N, caps, k + 1):
        k += 1
    classes = check_packing(N, caps, k)
    assert len(classes) >= N


def _tallest(classes):
    def height(cls):
        depth = {cls.root: 0}
        for x, y in cls.edges:
            depth[y] = depth[x] + 1
        return max(depth.values())

    return max(height(c) for c in classes)


@pytest.mark.parametrize("seed", range(20))
def test_shortened_trees_stay_a_valid_packing(seed):
    topo = (
        random_fabric(seed, n_compute=4 + seed % 5, n_switch=0)
        if seed % 2
        else switched_fabric(seed)
    )
    N, caps, opt = _compute_graph(topo)
    classes = check_packing(N, caps, opt.k)
    before = _tallest(classes)
    shorter = shorten_trees([c for c in classes], caps)
    check_packing(N, caps, opt.k, shorter)  # spanning, BFS order, k per root, within caps
    assert _tallest(shorter) <= before


def test_shortening_a_ring_and_a_torus():
    # greedy packing on a bidirectional ring of 8 leaves trees of height 7; the optimum is 4
    from pathlib import Path

    from solver.io.formats import load

    samples = Path(__file__).resolve().parents[2] / "sample_topologies"
    for name, tallest in (("ring_8", 4), ("torus_4x4x2", 6)):
        topo = load(samples / f"{name}.json")
        N, caps, opt = _compute_graph(topo)
        classes = check_packing(N, caps, opt.k)
        shorter = shorten_trees(classes, caps)
        check_packing(N, caps, opt.k, shorter)
        assert _tallest(shorter) <= tallest < _tallest(classes)
