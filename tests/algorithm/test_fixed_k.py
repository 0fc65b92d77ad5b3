"""solver.algorithm.fixed_k: the smallest U with ⌊U·b(e)⌋ admitting exactly k trees per root."""

import math
import random
from fractions import Fraction

import pytest
from naive import fixed_k_units

from solver.algorithm.fixed_k import fixed_k_capacity
from solver.algorithm.optimum import compute_optimum
from solver.flow.csr import IndexedFabric, flow_network
from solver.io import templates
from solver.model.errors import SolverError
from solver.model.topology import Link, Node, Topology


def _random_fabric(seed: int) -> Topology:
    """A compute ring with mixed bandwidths plus random chords and one switch."""
    rng = random.Random(seed)
    n = rng.randint(3, 5)
    bws = [Fraction(1), Fraction(2), Fraction(5, 2), Fraction(3), Fraction(25, 3)]
    nodes = tuple(Node(f"c{i}", "compute") for i in range(n)) + (Node("sw", "switch"),)
    links = [Link(f"c{i}", f"c{(i + 1) % n}", rng.choice(bws)) for i in range(n)]
    for _ in range(rng.randint(0, n)):
        u, v = rng.sample(range(n), 2)
        links.append(Link(f"c{u}", f"c{v}", rng.choice(bws)))
    for i in rng.sample(range(n), 2):
        links.append(Link(f"c{i}", "sw", rng.choice(bws)))  # full duplex: the switch is balanced
    return Topology(f"fixed-k {seed}", nodes, tuple(links))


def _solve(topo: Topology, k: int):
    fabric = IndexedFabric.from_topology(topo)
    rate = compute_optimum(fabric).rate
    return fabric, rate, *fixed_k_capacity(fabric, k, rate)


FABRICS = [templates.ring(4), templates.dgx_a100(1), templates.mi250(1)] + [
    _random_fabric(seed) for seed in range(6)
]


@pytest.mark.parametrize("topo", FABRICS, ids=lambda t: t.name)
@pytest.mark.parametrize("k", [1, 2, 3])
def test_smallest_U_matches_the_naive_twin(topo, k):
    fabric, rate, U, caps = _solve(topo, k)
    assert U == fixed_k_units(topo, k)
    assert U >= k / rate  # never better than the fractional bound
    assert caps == [math.floor(U * b) for b in fabric.bandwidth]


@pytest.mark.parametrize("topo", FABRICS[:4], ids=lambda t: t.name)
def test_capacities_admit_k_trees_and_nothing_smaller_does(topo):
    k = 2
    fabric, _rate, U, caps = _solve(topo, k)
    need = fabric.num_compute * k

    def min_flow(capacities) -> int:
        net = flow_network(fabric, capacities, k)
        return min(net.max_flow(fabric.n, t) for t in fabric.compute)

    assert min_flow(caps) >= need
    # just below U (closer than any two steps of ⌊U·b⌋ here) some floor drops: infeasible
    below = U - Fraction(1, 10**9)
    assert [math.floor(below * b) for b in fabric.bandwidth] != caps
    assert min_flow([math.floor(below * b) for b in fabric.bandwidth]) < need


def test_k_one_on_a_four_ring_rounds_up_by_hand():
    # x* = 200/3 (three nodes behind 2 links), but with one tree per root a cut of 3 compute
    # nodes needs 2·c >= 3 integer units: c = 2 on every edge, U = 2/100, rate 50 per node.
    fabric, rate, U, caps = _solve(templates.ring(4, bandwidth=100), 1)
    assert rate == Fraction(200, 3)
    assert U == Fraction(1, 50) and set(caps) == {2}


def test_k_below_one_is_refused():
    fabric = IndexedFabric.from_topology(templates.ring(4))
    with pytest.raises(SolverError, match="max_trees_per_root must be >= 1"):
        fixed_k_capacity(fabric, 0, Fraction(1))


def test_check_is_called_between_max_flows():
    fabric = IndexedFabric.from_topology(templates.dgx_a100(1))
    calls = []
    fixed_k_capacity(fabric, 1, compute_optimum(fabric).rate, check=lambda: calls.append(1))
    assert len(calls) >= fabric.num_compute
