"""Step 2: edge splitting keeps λ(s, v) >= N·k, removes every switch, and records real paths."""

import itertools
import random
from fractions import Fraction

import networkx as nx
import pytest

from solver.algorithm.balance import balance_switches
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.splitting import IncompleteSplit, split_switches
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.topology import Link, Node, Topology


def switched_fabric(seed: int) -> Topology:
    """Compute nodes hanging off a few switches (full duplex, so switches are balanced)."""
    rng = random.Random(seed)
    nc, ns = rng.randint(3, 6), rng.randint(1, 3)
    nodes = [Node(f"c{i}", "compute") for i in range(nc)] + [
        Node(f"s{i}", "switch") for i in range(ns)
    ]
    bws = [Fraction(1), Fraction(2), Fraction(3), Fraction(5, 2)]
    links = [Link(f"c{i}", f"s{rng.randrange(ns)}", rng.choice(bws)) for i in range(nc)]
    links += [Link(f"s{i}", f"s{i + 1}", rng.choice(bws)) for i in range(ns - 1)]
    for _ in range(rng.randint(0, nc + ns)):
        u = f"c{rng.randrange(nc)}"
        v = rng.choice([f"c{rng.randrange(nc)}", f"s{rng.randrange(ns)}"])
        if u != v:
            links.append(Link(u, v, rng.choice(bws)))
    return Topology(f"switched{seed}", tuple(nodes), tuple(links))


def check_split(topo: Topology, spread: bool = False):
    fabric, _ = balance_switches(IndexedFabric.from_topology(topo))
    opt = compute_optimum(fabric)
    caps = dict(zip(fabric.edges, opt.caps))
    result = split_switches(fabric, caps, opt.k, spread=spread)
    comp = set(fabric.compute)
    N = fabric.num_compute
    # switch-free and the invariant holds (checked with networkx)
    g = nx.DiGraph()
    g.add_nodes_from(fabric.compute)
    for (u, v), c in result.caps.items():
        assert u in comp and v in comp and u != v and c > 0
        g.add_edge(u, v, capacity=c)
    for v in fabric.compute:
        g.add_edge("s", v, capacity=opt.k)
    for v in fabric.compute:
        assert nx.maximum_flow_value(g, "s", v) >= N * opt.k
    # paths: physical, through switches only, units add up, no edge over capacity
    used = {}
    for (u, v), pieces in result.paths.items():
        assert sum(pieces.values()) == result.caps[(u, v)]
        for path, units in pieces.items():
            assert path[0] == u and path[-1] == v and units > 0
            assert all(not fabric.is_compute[x] for x in path[1:-1])
            for a, b in itertools.pairwise(path):
                used[(a, b)] = used.get((a, b), 0) + units
    for e, units in used.items():
        assert units <= caps[e]
    return opt, result


@pytest.mark.parametrize("seed", range(25))
def test_random_switched_fabrics(seed):
    check_split(switched_fabric(seed))


@pytest.mark.parametrize("seed", range(10))
def test_spread_mode_is_valid_too(seed):
    check_split(switched_fabric(seed), spread=True)


def test_spread_mode_gives_a_denser_graph():
    _, greedy = check_split(templates.dgx_a100(2))
    _, spread = check_split(templates.dgx_a100(2), spread=True)
    assert len(spread.caps) > len(greedy.caps)


@pytest.mark.parametrize(
    "make",
    [lambda: templates.dgx_a100(2), lambda: templates.mi250(2), lambda: templates.dgx_h100_rail(2)],
)
def test_templates(make):
    _opt, result = check_split(make())
    assert result.num_splits > 0


def test_switch_to_switch_chain_is_routed_through_both():
    nodes = (Node("a", "compute"), Node("b", "compute"), Node("x", "switch"), Node("y", "switch"))
    links = (Link("a", "x", Fraction(4)), Link("x", "y", Fraction(4)), Link("y", "b", Fraction(4)))
    _opt, result = check_split(Topology("chain", nodes, links))
    (pieces,) = [p for (u, v), p in result.paths.items() if (u, v) == (0, 1)]
    assert list(pieces) == [(0, 2, 3, 1)]


def test_switch_that_would_have_to_replicate_cannot_be_split():
    """g0 -> w -> {g1, g2} one way: the cut bound counts w's output twice; splitting refuses."""
    nodes = tuple(Node(f"g{i}", "compute") for i in range(3)) + (Node("w", "switch"),)
    links = (
        Link("g0", "w", Fraction(10), directed=True),
        Link("w", "g1", Fraction(10), directed=True),
        Link("w", "g2", Fraction(10), directed=True),
        Link("g1", "g0", Fraction(10), directed=True),
        Link("g2", "g0", Fraction(10), directed=True),
    )
    fabric = IndexedFabric.from_topology(Topology("bcast", nodes, links))
    opt = compute_optimum(fabric)
    with pytest.raises(IncompleteSplit, match="'w'"):
        split_switches(fabric, dict(zip(fabric.edges, opt.caps)), opt.k)


def test_unbalanced_switch_with_spare_input_splits_and_drops_the_excess():
    nodes = tuple(Node(f"g{i}", "compute") for i in range(3)) + (Node("w", "switch"),)
    links = tuple(Link(f"g{i}", f"g{(i + 1) % 3}", Fraction(4)) for i in range(3)) + (
        Link("g0", "w", Fraction(2), directed=True),
        Link("g1", "w", Fraction(2), directed=True),
        Link("w", "g2", Fraction(2), directed=True),
    )
    fabric = IndexedFabric.from_topology(Topology("spare", nodes, links))
    opt = compute_optimum(fabric)
    result = split_switches(fabric, dict(zip(fabric.edges, opt.caps)), opt.k)
    used_into_w = sum(
        units
        for pieces in result.paths.values()
        for path, units in pieces.items()
        if len(path) == 3
    )
    assert used_into_w <= opt.caps[fabric.edges.index((3, 2))]  # only w's one way out is used
    g = nx.DiGraph()
    for (u, v), c in result.caps.items():
        g.add_edge(u, v, capacity=c)
    for v in fabric.compute:
        g.add_edge("s", v, capacity=opt.k)
    assert all(nx.maximum_flow_value(g, "s", v) >= 3 * opt.k for v in fabric.compute)


def test_spreading_prefers_partners_the_fabric_does_not_reach_otherwise():
    from solver.algorithm.splitting import _Adjacency, _far_first

    # c0 -> switch 9 -> c1..c6; c0 also reaches c1 and c2 directly (c1 -> c2 too)
    caps = {(0, 9): 6, (0, 1): 1, (0, 2): 1, (1, 2): 1}
    caps.update({(9, t): 1 for t in range(1, 7)})
    graph = _Adjacency(dict(caps))
    is_compute = [True] * 7 + [False] * 3
    partners = [1, 2, 3, 4, 5, 6]
    # 2 units: the unreachable tier {3, 4, 5, 6}, evenly spaced
    assert _far_first(graph, is_compute, 0, 9, partners, True, 2) == [3, 5]
    # 5 units: the whole unreachable tier and one of the two partners at distance 1
    assert _far_first(graph, is_compute, 0, 9, partners, True, 5) == [1, 3, 4, 5, 6]
    assert _far_first(graph, is_compute, 0, 9, partners, True, 99) == partners
