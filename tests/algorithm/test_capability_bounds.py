"""The three figures of solver.algorithm.capability_bounds against the slow twins of tests/naive.py
(every vertex subset; transfers counted one by one) and the figures derived by hand in
docs/bounds.md."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from solver.algorithm.capability_bounds import (
    capability_bounds,
    hierarchical_allreduce,
    min_separating_cut,
)
from solver.io import templates as T
from solver.model.topology import COMPUTE, NVLS_CAPABILITIES, SWITCH, Link, Node, Topology
from tests.naive import exhaustive_allreduce_any, exhaustive_optimum, hierarchical_time_twin


def star(bws, caps=NVLS_CAPABILITIES) -> Topology:
    nodes = [Node(f"g{i}", COMPUTE) for i in range(len(bws))] + [
        Node("sw", SWITCH, capabilities=caps)
    ]
    links = [Link(f"g{i}", "sw", Fraction(b)) for i, b in enumerate(bws)]
    return Topology("star", tuple(nodes), tuple(links))


def boxes(n_boxes: int, ppn: int, nvlink: int, nic: int, rails: bool = True) -> Topology:
    """n_boxes NVLS domains of ppn GPUs; GPU j's NIC on rail j (or all on one switch)."""
    nodes, links = [], []
    for b in range(n_boxes):
        nodes.append(Node(f"b{b}.sw", SWITCH, capabilities=NVLS_CAPABILITIES))
        for j in range(ppn):
            g = f"b{b}.g{j}"
            nodes.append(Node(g, COMPUTE))
            links.append(Link(g, f"b{b}.sw", Fraction(nvlink)))
            links.append(Link(g, f"rail{j}" if rails else "ib", Fraction(nic)))
    nodes += [Node(f"rail{j}", SWITCH) for j in range(ppn)] if rails else [Node("ib", SWITCH)]
    return Topology("boxes", tuple(nodes), tuple(links))


# ----------------------------------------------------------------------------- hand figures
def test_one_dgx_h100_figures():
    b = capability_bounds(T.make("dgx_h100_rail", n=1), "allreduce")
    assert b.forward_only == Fraction(1800, 7)  # 8 * 450 / 7 / 2
    assert b.any_schedule == 450
    assert b.capability == 450 and b.exact
    assert b.switches == ("b0.nvsw",)


def test_two_dgx_h100_rail_figures():
    b = capability_bounds(T.make("dgx_h100_rail", n=2), "allreduce")
    assert b.forward_only == Fraction(800, 3)
    assert b.any_schedule == 400  # a box's 8 NICs x 50 GB/s
    assert b.capability == 400 and b.exact
    assert b.hierarchical.concurrent  # the rails share no link


def test_nvl72_figures():
    b = capability_bounds(T.make("nvl72"), "allreduce")
    assert b.forward_only == Fraction(72 * 900, 71) / 2
    assert b.any_schedule == 900 and b.capability == 900 and b.exact


def test_four_boxes_gap_is_stated():
    b = capability_bounds(T.make("dgx_h100_rail", n=4), "allreduce")
    assert b.any_schedule == 400
    assert b.capability == Fraction(800, 3)  # rails forward: 2*(4-1)/4 of M/8 per 50 GB/s NIC
    assert not b.exact and b.gap == Fraction(1, 3)


def test_unmarked_switch_gets_forward_only():
    b = capability_bounds(T.make("dgx_a100", n=1), "allreduce")
    assert b.switches == ()
    assert b.capability == b.forward_only == Fraction(2400, 7) / 2
    assert b.any_schedule == 300 and not b.exact


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter"])
def test_multicast_and_reduce_do_not_change_allgather_or_reduce_scatter(collective):
    for topo in (T.make("dgx_h100_rail", n=1), T.make("dgx_h100_rail", n=2), star([10, 20, 30])):
        b = capability_bounds(topo, collective)
        assert b.forward_only == b.any_schedule == b.capability and b.exact


def test_reduce_only_switch_has_no_construction():
    b = capability_bounds(star([50] * 4, caps=frozenset({"reduce"})), "allreduce")
    assert b.capability == b.forward_only
    assert "no switch both reduces and multicasts" in b.construction
    assert b.any_schedule == 50


def test_heterogeneous_star_is_limited_by_its_slowest_gpu():
    b = capability_bounds(star([10, 20, 30]), "allreduce")
    assert b.any_schedule == 10 == b.capability and b.exact


def test_domains_of_different_sizes_fall_back():
    t = boxes(2, 2, 100, 10)
    nodes = t.nodes + (Node("b1.g2", COMPUTE),)
    links = t.links + (Link("b1.g2", "b1.sw", Fraction(100)), Link("b1.g2", "rail0", Fraction(10)))
    h = hierarchical_allreduce(Topology("odd", nodes, links))
    assert not h.applies and "different sizes" in h.reason


# ----------------------------------------------------------------------------- twins
def random_fabric(rng: random.Random) -> Topology:
    n_c = rng.randint(2, 5)
    n_s = rng.randint(1, 3)
    nodes = [Node(f"c{i}", COMPUTE) for i in range(n_c)]
    nodes += [
        Node(
            f"s{i}",
            SWITCH,
            capabilities=rng.choice([frozenset(), NVLS_CAPABILITIES, frozenset({"reduce"})]),
        )
        for i in range(n_s)
    ]
    ids = [n.id for n in nodes]
    links = [
        Link(f"c{i}", f"s{rng.randrange(n_s)}", Fraction(rng.randint(1, 8))) for i in range(n_c)
    ]
    for _ in range(rng.randint(0, 5)):
        u, v = rng.sample(ids, 2)
        links.append(Link(u, v, Fraction(rng.randint(1, 8), rng.randint(1, 3))))
    # connect everything through s0 so every fabric is valid
    links += [Link(f"s{i}", "s0", Fraction(rng.randint(1, 8))) for i in range(1, n_s)]
    return Topology("random", tuple(nodes), tuple(links))


def test_any_schedule_bound_matches_every_subset_on_random_fabrics():
    rng = random.Random(24)
    for _ in range(40):
        topo = random_fabric(rng)
        assert min_separating_cut(topo)[0] == exhaustive_allreduce_any(topo), topo
        b = capability_bounds(topo, "allreduce")
        assert b.forward_only <= b.capability <= b.any_schedule
        ag = capability_bounds(topo, "allgather")
        assert ag.any_schedule == exhaustive_optimum(topo).algbw


def test_the_cut_reported_reaches_the_bound():
    topo = T.make("dgx_h100_rail", n=2)
    value, side = min_separating_cut(topo)
    caps = topo.directed_bandwidths()
    inside = set(side)
    out = sum((b for (u, v), b in caps.items() if u in inside and v not in inside), Fraction(0))
    assert out == value == 400


@pytest.mark.parametrize(
    "shape", [(1, 4, 30, 0), (2, 2, 100, 10), (2, 3, 50, 20), (3, 2, 40, 30), (2, 2, 7, 9)]
)
def test_hierarchical_matches_transfer_by_transfer_twin(shape):
    n_boxes, ppn, nvlink, nic = shape
    topo = star([nvlink] * ppn) if n_boxes == 1 else boxes(n_boxes, ppn, nvlink, nic)
    h = hierarchical_allreduce(topo)
    assert h.applies
    assert max(h.intra, h.inter) == hierarchical_time_twin(topo)


def test_shared_network_runs_index_groups_in_sequence():
    # every GPU's NIC on its box's leaf switch, one uplink per leaf to a spine: both index
    # groups cross the same uplinks, so they cannot run side by side
    nodes, links = [Node("spine", SWITCH)], []
    for b in range(2):
        nodes += [
            Node(f"b{b}.sw", SWITCH, capabilities=NVLS_CAPABILITIES),
            Node(f"b{b}.leaf", SWITCH),
        ]
        links.append(Link(f"b{b}.leaf", "spine", Fraction(15)))
        for j in range(2):
            nodes.append(Node(f"b{b}.g{j}", COMPUTE))
            links += [
                Link(f"b{b}.g{j}", f"b{b}.sw", Fraction(100)),
                Link(f"b{b}.g{j}", f"b{b}.leaf", Fraction(10)),
            ]
    topo = Topology("leaf-spine", tuple(nodes), tuple(links))
    h = hierarchical_allreduce(topo)
    assert h.applies and not h.concurrent
    assert max(h.intra, h.inter) == hierarchical_time_twin(topo)
    b = capability_bounds(topo, "allreduce")
    assert b.any_schedule == 15 and b.capability <= 15


# ----------------------------------------------------------------------------- built out
def test_hierarchical_schedule_on_2x_dgx_h100_is_built_and_verified():
    from solver.algorithm.hierarchical import build_hierarchical, verify_hierarchical

    topo = T.make("dgx_h100_rail", n=2)
    h = build_hierarchical(topo)
    verify_hierarchical(h)
    assert h.time_per_byte() == Fraction(1, 400)  # = the any-schedule bound, exactly
    loads = h.loads()
    assert loads[("b0.gpu0", "b0.nvsw")] == 1 and loads[("b0.nvsw", "b0.gpu0")] == 1
    # rail j carries only index j's portion: 1/8 each way per NIC link
    assert loads[("b0.nic3", "rail3")] == Fraction(1, 8)


def test_verifier_catches_a_broken_schedule():
    from dataclasses import replace

    from solver.algorithm.hierarchical import build_hierarchical, verify_hierarchical
    from solver.model.errors import SolverError

    topo = T.make("dgx_h100_rail", n=2)
    h = build_hierarchical(topo)
    dropped = replace(h, transfers=h.transfers[1:])  # one portion never goes up
    with pytest.raises(SolverError, match="not M each way"):
        verify_hierarchical(dropped)
    swapped = replace(h, groups=(h.groups[1],) + h.groups[1:])
    with pytest.raises(SolverError, match="partition"):
        verify_hierarchical(swapped)


@pytest.mark.parametrize("shape", [(1, 4, 30, 0), (2, 3, 50, 20), (3, 2, 40, 30)])
def test_hierarchical_loads_never_need_more_than_the_figure(shape):
    from solver.algorithm.hierarchical import build_hierarchical, verify_hierarchical

    n_boxes, ppn, nvlink, nic = shape
    topo = star([nvlink] * ppn) if n_boxes == 1 else boxes(n_boxes, ppn, nvlink, nic)
    h = build_hierarchical(topo)
    verify_hierarchical(h)
    assert h.time_per_byte() <= max(h.plan.intra, h.plan.inter)
