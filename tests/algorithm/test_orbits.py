"""Orbits of verified sibling shifts: one max-flow sink per orbit gives the exact optimum that
every compute node as a sink gives, on 3-tier fabrics without a box translation too; a shift
that is not an automorphism is dropped."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from solver.algorithm.optimum import compute_optimum
from solver.algorithm.optimum_only import solve_optimum
from solver.algorithm.orbits import _Finder, compute_orbits
from solver.flow.csr import IndexedFabric
from solver.io import templates as T
from solver.model.topology import Link, Topology

CASES = [
    ("clos3", {"zones": 2, "racks_per_zone": 3, "ctsws": 2}),
    ("hpn", {"segments": 2, "hosts": 4, "aggs": 2}),
    ("hpn", {"segments": 1, "hosts": 2, "pods": 2, "aggs": 2}),
    ("superpod", {"sus": 2, "nodes_per_su": 2}),
    ("dgx_a100", {"n": 2}),
    ("ring", {"n": 6}),
]


def full_optimum(topo: Topology) -> Fraction:
    return compute_optimum(IndexedFabric.from_topology(topo)).algbw


@pytest.mark.parametrize("name, values", CASES)
def test_orbit_sinks_give_the_exact_optimum(name, values):
    topo = T.make(name, **values)
    fabric = IndexedFabric.from_topology(topo)
    orbits = compute_orbits(topo, fabric)
    assert len(orbits.sinks) <= fabric.num_compute
    assert compute_optimum(fabric, sinks=orbits.sinks).algbw == full_optimum(topo)


def test_a_clos_is_one_orbit_and_hpn_one_per_rail():
    clos = T.make("clos3", zones=2, racks_per_zone=3, ctsws=2)
    fabric = IndexedFabric.from_topology(clos)
    assert len(compute_orbits(clos, fabric).sinks) == 1
    hpn = T.make("hpn", segments=2, hosts=4, aggs=2)
    fabric = IndexedFabric.from_topology(hpn)
    # GPU j of a host is on rail j (its own ToRs): 8 orbits, every host and segment alike
    assert len(compute_orbits(hpn, fabric).sinks) == 8


def test_a_shuffled_file_keeps_the_exact_optimum():
    topo = T.make("clos3", zones=2, racks_per_zone=3, ctsws=2)
    rng = random.Random(1)
    nodes, links = list(topo.nodes), list(topo.links)
    rng.shuffle(nodes)
    rng.shuffle(links)
    shuffled = Topology(topo.name, tuple(nodes), tuple(links))
    fabric = IndexedFabric.from_topology(shuffled)
    orbits = compute_orbits(shuffled, fabric)
    assert compute_optimum(fabric, sinks=orbits.sinks).algbw == full_optimum(topo)


def test_a_shift_that_breaks_a_link_is_dropped():
    """One slower NIC link in one rack: that rack is no longer a sibling of the others, and
    the orbits split so that the optimum stays exact (the slow GPU is the bottleneck)."""
    topo = T.make("clos3", zones=1, racks_per_zone=3, ctsws=2)
    links = list(topo.links)
    i = next(
        i
        for i, link in enumerate(links)
        if link.source.endswith("nic0") or link.target.endswith("nic0")
    )
    links[i] = Link(links[i].source, links[i].target, links[i].bandwidth / 2)
    broken = Topology(topo.name, topo.nodes, tuple(links))
    fabric = IndexedFabric.from_topology(broken)
    orbits = compute_orbits(broken, fabric)
    assert len(orbits.sinks) > 1
    exact = full_optimum(broken)
    assert exact < full_optimum(topo)
    assert compute_optimum(fabric, sinks=orbits.sinks).algbw == exact


def test_the_local_automorphism_check():
    topo = T.make("ring", n=4)
    fabric = IndexedFabric.from_topology(topo)
    finder = _Finder(topo, fabric)
    rotate = {v: (v + 1) % 4 for v in range(4)}
    assert finder._is_automorphism(rotate)
    swap = {0: 1, 1: 0}  # 0-1-2-3-0: swapping two neighbours is a reflection only with 2, 3
    assert not finder._is_automorphism(swap)
    assert not finder._is_automorphism({0: 1, 1: 2})  # not a permutation of its nodes


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "allreduce"])
def test_solve_optimum_matches_the_full_solver(collective):
    import solver

    topo = T.make("hpn", segments=2, hosts=1, aggs=1)
    result = solve_optimum(topo, collective)
    schedule = solver.solve(topo, collective=collective)
    assert result.algbw == schedule.optimal_algbw_exact
    phases = schedule.phases or (schedule,)
    assert [p.collective for p in result.phases] == [p.collective for p in phases]
    for mine, theirs in zip(result.phases, phases):
        assert mine.algbw == theirs.optimal_algbw_exact
        n = len(topo.compute_ids)
        assert n * mine.cut.egress_bandwidth / mine.cut.compute_nodes_inside == mine.algbw


def test_solve_optimum_on_directed_links_reverses_for_reduce_scatter():
    nodes = T.ring(3).nodes
    links = (
        Link("gpu0", "gpu1", Fraction(2), directed=True),
        Link("gpu1", "gpu2", Fraction(2), directed=True),
        Link("gpu2", "gpu0", Fraction(2), directed=True),
        Link("gpu1", "gpu0", Fraction(1), directed=True),
    )
    topo = Topology("r", nodes, links)
    rs = solve_optimum(topo, "reduce-scatter").phases[0]
    import solver

    assert rs.algbw == solver.solve(topo, collective="reduce-scatter").optimal_algbw_exact
