"""Fewest trees per root at the optimum, and the spines that NVL72 racks do not need.

The fabric: 2 GB200 NVL72-like racks of 6 trays (48 GPUs) whose leaf-spine links get an
awkward 1000/3 GB/s (the 16-rack template has 800/9): the optimum then needs k = 57 for
integer capacities, although each GPU's own ingress (NVLink + NIC, 950 GB/s) is the bottleneck
and 19 trees per root reach it. Checked against networkx max-flows (tests/naive.py's twin).
"""

from dataclasses import replace
from fractions import Fraction

import networkx as nx
import pytest
from naive import maxflow_optimum

import solver
from solver.algorithm import pipeline
from solver.algorithm.fewest_trees import divisors, fewest_trees, floor_capacities
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.plan_split import split_by_plans
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.symmetry import box_symmetry
from solver.algorithm.verify import verify_schedule
from solver.flow.csr import IndexedFabric
from solver.io import templates

SPINE_BW = Fraction(1000, 3)


def _racks():
    topo = templates.nvl72_racks(2, trays=6)
    links = tuple(
        replace(lk, bandwidth=SPINE_BW) if lk.target.startswith("spine") else lk
        for lk in topo.links
    )
    return replace(topo, links=links)


def _indexed(topo):
    fabric = IndexedFabric.from_topology(topo)
    return fabric, box_symmetry(topo, fabric, structural=False)


def _invariant_everywhere(fabric, caps, k):
    """λ(s, v) >= N·k at every compute node v, by networkx."""
    g = nx.DiGraph()
    for (u, v), c in zip(fabric.edges, caps):
        if c:
            g.add_edge(u, v, capacity=c)
    for v in fabric.compute:
        g.add_edge("s", v, capacity=k)
    N = fabric.num_compute
    return all(nx.maximum_flow_value(g, "s", v) >= N * k for v in fabric.compute)


def test_divisors():
    assert divisors(1) == [1]
    assert divisors(171) == [1, 3, 9, 19, 57, 171]
    assert divisors(36) == [1, 2, 3, 4, 6, 9, 12, 18, 36]
    assert all(divisors(n) == [d for d in range(1, n + 1) if n % d == 0] for n in range(1, 200))


def test_smallest_admissible_divisor_keeps_the_optimum():
    topo = _racks()
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    x, _cut = maxflow_optimum(topo)
    assert opt.rate == x == Fraction(950, 47)
    assert opt.k == 57
    k, caps = fewest_trees(fabric, opt, sym.representatives(fabric))
    assert k == 19
    U = opt.U * Fraction(k, opt.k)
    assert Fraction(k) / U == x  # the same rate
    assert caps == floor_capacities(fabric.bandwidth, U)
    assert all(c <= U * b for c, b in zip(caps, fabric.bandwidth))
    assert _invariant_everywhere(fabric, caps, k)
    # the smaller divisors are not admissible: some GPU cannot receive (N-1)·k' units
    for smaller in (1, 3):
        U_s = opt.U * Fraction(smaller, opt.k)
        assert not _invariant_everywhere(fabric, floor_capacities(fabric.bandwidth, U_s), smaller)


def test_k_itself_when_nothing_smaller_is_admissible():
    topo = templates.mi250(2)  # k = 83, a prime
    fabric = IndexedFabric.from_topology(topo)
    opt = compute_optimum(fabric)
    assert fewest_trees(fabric, opt, list(fabric.compute)) == (83, list(opt.caps))


def test_spines_between_shared_leaves_are_trimmed_to_nothing():
    """The rail leaves join both racks; the invariant holds without the spines (networkx), and
    without them every leaf has rack neighbours only, so plans split every switch."""
    topo = _racks()
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    k, caps = fewest_trees(fabric, opt, sym.representatives(fabric))
    trimmed = trim_shared_links(fabric, caps, k, sym)
    spine = [
        i
        for i, (u, v) in enumerate(fabric.edges)
        if fabric.names[u].startswith("spine") or fabric.names[v].startswith("spine")
    ]
    assert spine and all(caps[i] > 0 for i in spine)
    assert all(trimmed[i] == 0 for i in spine)
    assert _invariant_everywhere(fabric, trimmed, k)
    nic_leaf = [
        i
        for i, (u, v) in enumerate(fabric.edges)
        if ".nic" in fabric.names[u] and fabric.names[v].startswith("rail")
    ]
    assert all(trimmed[i] == caps[i] for i in nic_leaf)  # the NICs are the bottleneck's
    assert split_by_plans(fabric, dict(zip(fabric.edges, trimmed)), k, sym) is not None


@pytest.fixture
def symmetric_everywhere(monkeypatch):
    monkeypatch.setattr(pipeline, "SYMMETRY_MIN_N", 0)


def test_pipeline_packs_the_fewest_trees_exactly(symmetric_everywhere):
    topo = _racks()
    s = solver.solve(topo)
    verify_schedule(s)
    x, _cut = maxflow_optimum(topo)
    assert s.algbw_exact == s.optimal_algbw_exact == 48 * x
    assert s.k == 19
    per_root: dict[str, int] = {}
    for t in s.trees:
        per_root[t.root] = per_root.get(t.root, 0) + t.multiplicity
    assert set(per_root.values()) == {19} and len(per_root) == 48
