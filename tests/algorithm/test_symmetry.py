"""The symmetric path: box translations, per-orbit optimum, plan splitting, orbit packing.

Small fabrics only (the large ones are in benchmarks/solve.py --large); the pipeline tests lower
``SYMMETRY_MIN_N`` so that the symmetric path runs on them.
"""

from dataclasses import replace
from fractions import Fraction

import networkx as nx
import pytest
from naive import maxflow_optimum

import solver
from solver.algorithm import pipeline, symmetry
from solver.algorithm.optimum import compute_optimum
from solver.algorithm.orbit_packing import pack_by_orbits, translated_classes
from solver.algorithm.plan_split import split_by_plans
from solver.algorithm.spare_trim import trim_shared_links
from solver.algorithm.symmetry import (
    box_symmetry,
    find_box_symmetry,
    find_structural_box_symmetry,
    is_automorphism,
    refined_colours,
)
from solver.algorithm.verify import verify_schedule
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.topology import Link

FABRICS = {
    "rail": lambda: templates.dgx_h100_rail(8),
    "rail4": lambda: templates.dgx_h100_rail(4),
    "a100": lambda: templates.dgx_a100(3),
    "mi250": lambda: templates.mi250(3),
    "fat": lambda: templates.fat_tree(8, 4, 4, oversubscription=2),
    "fat_stuck": lambda: templates.fat_tree(8, 2, 4, oversubscription=2),  # orbit packing gives up
}


def _indexed(topo):
    fabric = IndexedFabric.from_topology(topo)
    return fabric, box_symmetry(topo, fabric, structural=False)


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_box_translation_is_an_automorphism_of_order_boxes(name):
    topo = FABRICS[name]()
    fabric, sym = _indexed(topo)
    assert sym is not None
    assert sym.boxes == len({n.group for n in topo.nodes if n.is_compute})
    assert is_automorphism(fabric, sym.shift)
    # σ^boxes is the identity, no smaller power is, and compute nodes stay compute nodes
    assert (sym.power(sym.boxes) == list(range(fabric.n))).all()
    for b in range(1, sym.boxes):
        assert (sym.power(b) != list(range(fabric.n))).any()
    assert len(sym.representatives(fabric)) * sym.boxes == fabric.num_compute


def test_a_box_that_differs_breaks_the_symmetry():
    topo = templates.dgx_h100_rail(4)
    links = list(topo.links)
    i = next(j for j, lk in enumerate(links) if lk.source == "b2.gpu3" and lk.target == "b2.nvsw")
    links[i] = replace(links[i], bandwidth=Fraction(400))
    fabric, sym = _indexed(replace(topo, links=tuple(links)))
    assert sym is None


def test_no_groups_no_symmetry():
    topo = templates.dgx_h100_rail(4)
    topo = replace(topo, nodes=tuple(replace(n, group=None) for n in topo.nodes))
    assert _indexed(topo)[1] is None


def _anonymous(topo, seed=0):
    """``topo`` as a file from another tool: no groups, nodes and links in a shuffled order."""
    import random

    rng = random.Random(seed)
    nodes = [replace(n, group=None) for n in topo.nodes]
    links = list(topo.links)
    rng.shuffle(nodes)
    rng.shuffle(links)
    return replace(topo, nodes=tuple(nodes), links=tuple(links))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(FABRICS))
def test_boxes_are_found_from_the_structure_alone(name, seed):
    grouped = FABRICS[name]()
    topo = _anonymous(grouped, seed)
    fabric = IndexedFabric.from_topology(topo)
    sym = find_structural_box_symmetry(fabric)
    assert sym is not None and is_automorphism(fabric, sym.shift)
    # the same boxes as the template's groups: every found box is one named group
    named = {n.id: n.group for n in grouped.nodes}
    for b in range(sym.boxes):
        groups = {named[fabric.names[v]] for v in sym.node_at[b]}
        assert len(groups) == 1 and None not in groups
    assert sym.boxes == len({n.group for n in grouped.nodes if n.is_compute})


def test_colour_refinement_keeps_automorphic_nodes_together():
    fabric, sym = _indexed(templates.dgx_a100(3))
    colour = refined_colours(fabric)
    assert all(colour[v] == colour[int(sym.shift[v])] for v in range(fabric.n))
    assert len(set(colour)) < fabric.n


def test_a_box_that_differs_has_no_structural_symmetry_either():
    topo = templates.dgx_h100_rail(4)
    links = list(topo.links)
    i = next(j for j, lk in enumerate(links) if lk.source == "b2.gpu3" and lk.target == "b2.nvsw")
    links[i] = replace(links[i], bandwidth=Fraction(400))
    fabric = IndexedFabric.from_topology(_anonymous(replace(topo, links=tuple(links))))
    assert find_structural_box_symmetry(fabric) is None


def test_anonymous_file_solves_on_the_symmetric_path(symmetric_everywhere, monkeypatch):
    found = []

    def recording(fabric, *limits):
        found.append(find_structural_box_symmetry(fabric, *limits))
        return found[-1]

    monkeypatch.setattr(symmetry, "find_structural_box_symmetry", recording)
    grouped = templates.dgx_h100_rail(4)
    schedule = solver.solve(_anonymous(grouped))
    verify_schedule(schedule)
    assert len(found) == 1 and found[0] is not None and found[0].boxes == 4
    assert schedule.optimal_algbw_exact == solver.solve(grouped).optimal_algbw_exact


@pytest.mark.parametrize("name", sorted(FABRICS))
def test_one_sink_per_orbit_gives_the_same_optimum(name):
    topo = FABRICS[name]()
    fabric, sym = _indexed(topo)
    fast = compute_optimum(fabric, sinks=sym.representatives(fabric))
    full = compute_optimum(fabric)
    x, _ = maxflow_optimum(topo)
    assert fast.algbw == full.algbw == x * fabric.num_compute
    assert (fast.k, fast.U, fast.caps) == (full.k, full.U, full.caps)


@pytest.mark.parametrize("name", ["rail", "rail4", "a100", "fat"])
def test_plans_remove_every_switch_keep_the_invariant_and_are_equivariant(name):
    topo = FABRICS[name]()
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    split = split_by_plans(fabric, dict(zip(fabric.edges, opt.caps)), opt.k, sym)
    assert split is not None
    N = fabric.num_compute
    g = nx.DiGraph()
    for (u, v), c in split.caps.items():
        assert fabric.is_compute[u] and fabric.is_compute[v] and u != v and c > 0
        g.add_edge(u, v, capacity=c)
        # σ-invariant capacities
        assert split.caps[(sym.translate(u, 1), sym.translate(v, 1))] == c
        # the recorded paths add up and follow physical links (relaying through switches)
        assert sum(split.paths[(u, v)].values()) == c
        for path in split.paths[(u, v)]:
            assert path[0] == u and path[-1] == v
            assert all((a, b) in set(fabric.edges) for a, b in zip(path, path[1:]))
            assert not any(fabric.is_compute[x] for x in path[1:-1])
    for v in fabric.compute:
        g.add_edge("s", v, capacity=opt.k)
    for v in fabric.compute:  # every sink, not only the orbit representatives
        assert nx.maximum_flow_value(g, "s", v) >= N * opt.k
    # no physical link carries more than its capacity
    used = {}
    for record in split.paths.values():
        for path, units in record.items():
            for a, b in zip(path, path[1:]):
                used[(a, b)] = used.get((a, b), 0) + units
    caps = dict(zip(fabric.edges, opt.caps))
    assert all(units <= caps[e] for e, units in used.items())


@pytest.mark.parametrize("name", ["rail", "fat"])
def test_translated_box0_trees_fit_every_edge(name):
    topo = FABRICS[name]()
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    split = split_by_plans(fabric, dict(zip(fabric.edges, opt.caps)), opt.k, sym)
    reps = pack_by_orbits(fabric, sym, split.caps, opt.k)
    assert reps is not None
    classes = translated_classes(fabric, sym, reps)
    N = fabric.num_compute
    per_root = {}
    load = {}
    for cls in classes:
        per_root[cls.root] = per_root.get(cls.root, 0) + cls.mult
        assert {cls.root} | {y for _, y in cls.edges} == set(range(N))
        assert len(cls.edges) == N - 1
        for x, y in cls.edges:
            load[(x, y)] = load.get((x, y), 0) + cls.mult
    assert per_root == {r: opt.k for r in range(N)}
    rank_caps = {
        (fabric.compute.index(u), fabric.compute.index(v)): c for (u, v), c in split.caps.items()
    }
    assert all(m <= rank_caps[e] for e, m in load.items())


@pytest.fixture
def symmetric_everywhere(monkeypatch):
    monkeypatch.setattr(pipeline, "SYMMETRY_MIN_N", 0)


@pytest.mark.parametrize(
    "name, tallest",
    [("rail", 2), ("fat", None), ("fat_stuck", None), ("rail4", None), ("mi250", None)],
)
def test_symmetric_pipeline_is_exact_and_verified(symmetric_everywhere, name, tallest):
    """fat_stuck, rail4 (k = 10) and mi250 make orbit packing give up: the general packing
    takes over on the switch-free graph of the plans."""
    s = solver.solve(FABRICS[name]())
    verify_schedule(s)
    assert s.algbw_exact == s.optimal_algbw_exact
    if tallest is not None:
        assert max(t.height for t in s.trees) <= tallest


def test_symmetric_pipeline_matches_the_general_one(symmetric_everywhere, monkeypatch):
    topo = FABRICS["fat"]()
    fast = solver.solve(topo, collective="allreduce")
    monkeypatch.setattr(pipeline, "SYMMETRY_MIN_N", 10**9)
    slow = solver.solve(topo, collective="allreduce")
    verify_schedule(fast)
    assert fast.algbw_exact == slow.algbw_exact == slow.optimal_algbw_exact
    assert fast.bottleneck.compute_nodes_inside == slow.bottleneck.compute_nodes_inside


def test_unbalanced_switch_falls_back_to_trimming(symmetric_everywhere):
    topo = templates.dgx_h100_rail(4)
    links = tuple(
        Link(lk.target, lk.source, lk.bandwidth / 2, directed=True) if lk.target == "rail0" else lk
        for lk in topo.links
    ) + tuple(
        Link(lk.source, lk.target, lk.bandwidth, directed=True)
        for lk in topo.links
        if lk.target == "rail0"
    )
    s = solver.solve(replace(topo, links=links))
    verify_schedule(s)


def _invariant_everywhere(fabric, caps, k):
    """λ(s, v) >= N·k at every compute node v, by networkx (the naive twin)."""
    g = nx.DiGraph()
    for (u, v), c in zip(fabric.edges, caps):
        if c:
            g.add_edge(u, v, capacity=c)
    for v in fabric.compute:
        g.add_edge("s", v, capacity=k)
    N = fabric.num_compute
    return all(nx.maximum_flow_value(g, "s", v) >= N * k for v in fabric.compute)


def test_spare_spine_capacity_is_trimmed_to_the_smallest_common_cap():
    # 8 leaves of 4 GPUs, 4 spines, 2:1: each GPU's own link is the bottleneck (k = 2 trees per
    # root, 62 units per GPU link), so a leaf's uplinks (4 x 31 units each way) hold far more
    # than the 28 x 2 units that must cross them
    topo = templates.fat_tree(8, 4, 4, oversubscription=2)
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    spine = [
        i
        for i, (u, v) in enumerate(fabric.edges)
        if fabric.names[u].startswith("spine") or fabric.names[v].startswith("spine")
    ]
    assert {opt.caps[i] for i in spine} == {31}
    assert opt.k == 2 and {caps[i] for i in spine} == {14}  # 56 units over 4 spines
    assert all(caps[i] == opt.caps[i] for i in range(len(caps)) if i not in spine)
    assert _invariant_everywhere(fabric, caps, opt.k)
    one_less = [13 if i in spine else c for i, c in enumerate(caps)]
    assert not _invariant_everywhere(fabric, one_less, opt.k)


def test_nothing_to_trim_where_the_shared_links_are_the_bottleneck():
    # 4x DGX H100 rail: the NICs are the bottleneck (box egress), the rails keep all they have
    fabric, sym = _indexed(FABRICS["rail4"]())
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    assert trim_shared_links(fabric, list(opt.caps), opt.k, sym) == list(opt.caps)


def test_trimmed_fat_tree_splits_into_direct_entries_to_every_leaf():
    """After trimming, every GPU's units through the spines are spread evenly over the other
    leaves (k per leaf): each of its k trees can enter every other leaf straight from the root,
    and the orbit packing gives height-2 trees."""
    topo = templates.fat_tree(8, 4, 4, oversubscription=2)
    fabric, sym = _indexed(topo)
    opt = compute_optimum(fabric, sinks=sym.representatives(fabric))
    caps = trim_shared_links(fabric, list(opt.caps), opt.k, sym)
    split = split_by_plans(fabric, dict(zip(fabric.edges, caps)), opt.k, sym)
    assert split is not None
    for u in fabric.compute:
        units = dict.fromkeys(set(range(8)) - {int(sym.box_of[u])}, 0)
        for (x, t), c in split.caps.items():
            if x == u and sym.box_of[t] != sym.box_of[u]:
                units[int(sym.box_of[t])] += c
        assert set(units.values()) == {opt.k}
    reps = pack_by_orbits(fabric, sym, split.caps, opt.k)
    assert reps is not None
    for root, _mult, edges in reps:
        depth = {root: 0}
        for x, y in edges:
            depth[y] = depth[x] + 1
        assert max(depth.values()) == 2


def test_fat_tree_pipeline_gives_height_two(symmetric_everywhere):
    s = solver.solve(templates.fat_tree(8, 4, 4, oversubscription=2))
    verify_schedule(s)
    assert s.algbw_exact == s.optimal_algbw_exact
    assert {t.height for t in s.trees} == {2}


def test_box_symmetry_by_groups_else_by_structure():
    grouped = templates.dgx_h100_rail(4)
    fabric = IndexedFabric.from_topology(grouped)
    by_groups = box_symmetry(grouped)
    assert by_groups is not None and by_groups.boxes == 4
    same = find_box_symmetry(fabric, [node.group for node in grouped.nodes])
    assert (by_groups.shift == same.shift).all()
    anonymous = _anonymous(grouped)
    anonymous_fabric = IndexedFabric.from_topology(anonymous)
    assert find_box_symmetry(anonymous_fabric, [node.group for node in anonymous.nodes]) is None
    structural = box_symmetry(anonymous, anonymous_fabric)
    assert structural is not None and structural.boxes == 4
    assert is_automorphism(anonymous_fabric, structural.shift)
    assert box_symmetry(anonymous, structural=False) is None
