"""solver.flow.csr: the integer view of a Topology and the "source -> every compute node" network."""

from fractions import Fraction

import networkx as nx
import pytest

from solver.flow.csr import IndexedFabric, flow_network
from solver.model.topology import Link, Node, Topology


def _fabric() -> Topology:
    """c0 <-> c1 twice (parallel links add), c1 -> sw one-way, sw <-> c2, c2 <-> c0 (a fraction)."""
    nodes = (
        Node("c0", "compute"),
        Node("sw", "switch"),
        Node("c1", "compute"),
        Node("c2", "compute"),
    )
    links = (
        Link("c0", "c1", Fraction(3)),
        Link("c1", "c0", Fraction(2)),  # parallel, full duplex: adds both ways
        Link("c1", "sw", Fraction(1, 2), directed=True),
        Link("sw", "c2", Fraction(5)),
        Link("c2", "c0", Fraction(4, 3)),
    )
    return Topology("csr", nodes, links)


def test_indexed_fabric_numbers_nodes_in_topology_order():
    fab = IndexedFabric.from_topology(_fabric())
    assert fab.names == ("c0", "sw", "c1", "c2")
    assert fab.compute == (0, 2, 3)  # node indices in rank order; the switch is skipped
    assert fab.is_compute == (True, False, True, True)
    assert (fab.n, fab.num_compute) == (4, 3)


def test_indexed_fabric_merges_parallel_links_and_scales_to_integers():
    fab = IndexedFabric.from_topology(_fabric())
    bw = dict(zip(fab.edges, fab.bandwidth))
    assert bw == {
        (0, 2): Fraction(5),
        (2, 0): Fraction(5),
        (2, 1): Fraction(1, 2),
        (1, 3): Fraction(5),
        (3, 1): Fraction(5),
        (3, 0): Fraction(4, 3),
        (0, 3): Fraction(4, 3),
    }
    assert (1, 2) not in bw  # the uplink is one-way
    assert fab.scale == 6  # lcm of the denominators 2 and 3
    assert fab.bw_int == tuple(int(b * 6) for b in fab.bandwidth)
    assert all(isinstance(c, int) for c in fab.bw_int)


def test_from_edges_drops_zero_bandwidth_edges():
    fab = IndexedFabric.from_edges(
        ["a", "b"], [True, True], [0, 1], {(0, 1): Fraction(2), (1, 0): Fraction(0)}
    )
    assert fab.edges == ((0, 1),) and fab.bw_int == (2,) and fab.scale == 1


def test_out_bandwidth_of_a_node_set():
    fab = IndexedFabric.from_topology(_fabric())
    # {c1, sw}: leaving are c1->c0 (5), sw->c2 (5); c1->sw stays inside
    assert fab.out_bandwidth([False, True, True, False]) == Fraction(10)
    assert fab.out_bandwidth([True, False, False, False]) == Fraction(5) + Fraction(4, 3)
    assert fab.out_bandwidth([True] * 4) == 0


def test_flow_network_layout_and_max_flow_match_networkx():
    fab = IndexedFabric.from_topology(_fabric())
    k = 7
    net = flow_network(fab, fab.bw_int, k, extra=[(1, 0)])
    s = fab.n
    ref = nx.DiGraph()
    for (u, v), c in zip(fab.edges, fab.bw_int):
        ref.add_edge(u, v, capacity=c)
    for v in fab.compute:
        ref.add_edge(s, v, capacity=k)
    # the extra (1, 0) edge has capacity 0: it changes nothing
    for t in fab.compute:
        assert net.max_flow(s, t) == nx.maximum_flow_value(ref, s, t)
    # edge order: fabric edges, then s -> compute by rank, then the extras
    flows = net.edge_flow()
    assert len(flows) == len(fab.edges) + fab.num_compute + 1
    assert flows[-1] == 0
    assert all(0 <= f <= k for f in flows[len(fab.edges) : len(fab.edges) + fab.num_compute])


@pytest.mark.parametrize("cutoff", [1, 5])
def test_flow_network_cutoff_stops_once_reached(cutoff):
    fab = IndexedFabric.from_topology(_fabric())
    net = flow_network(fab, fab.bw_int, 100)
    full = net.max_flow(fab.n, fab.compute[0])
    assert full > 5
    assert cutoff <= net.max_flow(fab.n, fab.compute[0], cutoff=cutoff) <= full
