"""The numba Dinic kernel against networkx: flow values, minimum cuts, cutoffs, validation."""

import random

import networkx as nx
import numpy as np
import pytest

from solver.flow.maxflow import INF, FlowNetwork, max_flow_value
from solver.model.errors import SolverError


def _random_graph(rng: random.Random, n: int, m: int, cmax: int):
    edges = []
    for _ in range(m):
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            edges.append((u, v, rng.randint(0, cmax)))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v, c in edges:
        if g.has_edge(u, v):
            g[u][v]["capacity"] += c
        else:
            g.add_edge(u, v, capacity=c)
    return edges, g


def _network(n, edges):
    return FlowNetwork(n, [e[0] for e in edges], [e[1] for e in edges], [e[2] for e in edges])


@pytest.mark.parametrize("seed", range(40))
def test_value_and_min_cut_match_networkx(seed):
    rng = random.Random(seed)
    n = rng.randint(2, 14)
    edges, g = _random_graph(rng, n, rng.randint(0, 5 * n), rng.choice([1, 5, 1000]))
    net = _network(n, edges)
    s, t = 0, n - 1
    value = net.max_flow(s, t)
    assert value == nx.maximum_flow_value(g, s, t)
    side = net.source_side(s)
    assert side[s] and not side[t]
    cut = sum(c for u, v, c in edges if side[u] and not side[v])
    assert cut == value
    flow = net.edge_flow()
    assert np.all(flow >= 0) and np.all(flow <= [e[2] for e in edges])
    bal = np.zeros(n, dtype=np.int64)
    for (u, v, _), f in zip(edges, flow):
        bal[u] -= f
        bal[v] += f
    assert bal[t] == value and bal[s] == -value
    assert np.all(np.delete(bal, [s, t]) == 0)


@pytest.mark.parametrize("seed", range(20))
def test_cutoff_stops_at_the_needed_value(seed):
    rng = random.Random(100 + seed)
    n = rng.randint(3, 12)
    edges, g = _random_graph(rng, n, 4 * n, 50)
    full = nx.maximum_flow_value(g, 0, n - 1)
    net = _network(n, edges)
    for cutoff in (0, 1, full // 2, full, full + 7):
        assert net.max_flow(0, n - 1, cutoff=cutoff) == min(full, cutoff)


def test_network_is_reusable_and_capacities_editable():
    net = FlowNetwork(3, [0, 1, 0], [1, 2, 2], [5, 3, 1])
    assert net.max_flow(0, 2) == 4
    assert net.max_flow(0, 2) == 4
    net.set_capacity(1, 10)
    assert net.max_flow(0, 2) == 6
    net.set_capacity(0, INF)
    assert net.max_flow(0, 2) == 11


def test_parallel_edges_add_up():
    assert max_flow_value(2, [(0, 1, 3), (0, 1, 4)], 0, 1) == 7


@pytest.mark.parametrize(
    "args",
    [
        (2, [0], [0], [1]),  # self-loop
        (2, [0], [2], [1]),  # endpoint out of range
        (2, [0], [1], [-1]),  # negative capacity
        (2, [0], [1], [1 << 58]),  # overflow risk
    ],
)
def test_bad_networks_are_rejected(args):
    with pytest.raises(SolverError):
        FlowNetwork(*args)


def test_bad_source_sink_rejected():
    net = FlowNetwork(2, [0], [1], [1])
    with pytest.raises(SolverError):
        net.max_flow(0, 0)


@pytest.mark.parametrize("seed", range(10))
def test_many_flows_on_one_network_reuse_buffers_correctly(seed):
    """Dinic keeps its level buffer clean between calls; every (s, t) pair must still be exact."""
    rng = random.Random(500 + seed)
    n = rng.randint(3, 10)
    edges, g = _random_graph(rng, n, 4 * n, 9)
    net = _network(n, edges)
    for _ in range(15):
        s, t = rng.sample(range(n), 2)
        cutoff = rng.choice([None, rng.randint(0, 20)])
        want = nx.maximum_flow_value(g, s, t)
        got = net.max_flow(s, t, cutoff=cutoff)
        assert got == (want if cutoff is None else min(want, cutoff))
        assert (net.work.level == -1).all()


def _check_flow(net, edges, n, s, t):
    flow = net.cap[net.edge_arc] - net.res[net.edge_arc]
    assert np.all(flow >= 0) and np.all(flow <= net.cap[net.edge_arc])
    bal = np.zeros(n, dtype=np.int64)
    for (u, v, _), f in zip(edges, flow):
        bal[u] -= f
        bal[v] += f
    assert np.all(np.delete(bal, [s, t]) == 0)
    return int(bal[t])


@pytest.mark.parametrize("seed", range(30))
def test_repair_after_a_capacity_cut_matches_networkx(seed):
    """Cut one edge under a max flow, repair locally: valid flow of value min(need, new max)."""
    from solver.flow.repair import new_excess, reduce_arc, repair_flow

    rng = random.Random(900 + seed)
    n = rng.randint(3, 10)
    edges, _ = _random_graph(rng, n, 5 * n, 9)
    if not edges:
        return
    net = _network(n, edges)
    s, t = 0, n - 1
    need = net.max_flow(s, t)
    i = rng.randrange(len(edges))
    cut = rng.randint(1, 9)
    a = int(net.edge_arc[i])
    net.cap[a] = max(0, net.cap[a] - cut)
    delta = int(net.cap[a]) - edges[i][2]
    ex = new_excess()
    reduce_arc(net.graph, net.res, a, delta, ex)
    value = repair_flow(net.graph, net.res, s, t, need, ex, net.work)
    assert ex.size[0] == 0
    new_edges = [(u, v, int(net.cap[net.edge_arc[j]])) for j, (u, v, _) in enumerate(edges)]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v, c in new_edges:
        if g.has_edge(u, v):
            g[u][v]["capacity"] += c
        else:
            g.add_edge(u, v, capacity=c)
    assert value == min(need, nx.maximum_flow_value(g, s, t))
    assert _check_flow(net, new_edges, n, s, t) == value
    assert (net.work.level == -1).all()
