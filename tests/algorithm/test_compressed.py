"""Compressed plans: representatives + generator, checked against their full expansion."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from solver.algorithm.compressed import link_orbits, solve_compressed
from solver.algorithm.verify import verify_schedule
from solver.algorithm.verify_plan import verify_compressed, verify_sample
from solver.flow.csr import IndexedFabric
from solver.io import templates
from solver.model.errors import SolverError
from solver.model.plan import CompressedSchedule
from solver.model.schedule import TreeEdge


@pytest.fixture(scope="module")
def rail4():
    topo = templates.dgx_h100_rail(4)
    return topo, solve_compressed(topo)


def test_expansion_is_a_verified_optimal_schedule(rail4):
    topo, plan = rail4
    assert plan.order == 4 and plan.num_trees == 4 * len(plan.representatives)
    assert {t.root for t in plan.representatives} == {f"b0.gpu{i}" for i in range(8)}
    full = plan.expand()
    # the full verifier recomputes every link load from the 32 expanded trees: the orbit sums
    # that produced the stored loads must agree with it exactly
    verify_schedule(full)
    assert len(full.trees) == plan.num_trees
    assert {t.root for t in full.trees} == set(topo.compute_ids)
    n = len(topo.compute_ids)
    cut = plan.base.bottleneck
    assert plan.algbw_exact == Fraction(n) * cut.egress_bandwidth / cut.compute_nodes_inside


def test_compressed_verifier_accepts_and_samples(rail4):
    _, plan = rail4
    verify_compressed(plan)
    picks = verify_sample(plan, count=5, seed=3)
    assert len(picks) == 5 and all(0 <= i < plan.num_trees for i in picks)


def test_lazy_trees_match_the_expansion(rail4):
    topo, plan = rail4
    full = plan.expand()
    lazy = [plan.tree(i) for i in range(plan.num_trees)]
    assert sorted(lazy, key=repr) == sorted(full.trees, key=repr)
    root = topo.compute_ids[-1]
    assert plan.trees_of_root(root) == [t for t in full.trees if t.root == root]
    with pytest.raises(IndexError):
        plan.tree(plan.num_trees)


def _swap(plan, a, b):
    ids = list(plan.topology.node_ids)
    gen = plan.generator.copy()
    i, j = ids.index(a), ids.index(b)
    gen[i], gen[j] = gen[j], gen[i]
    return CompressedSchedule(plan.base, gen, plan.order)


def test_a_generator_that_is_no_automorphism_is_refused(rail4):
    _, plan = rail4
    with pytest.raises(SolverError, match="not an automorphism"):
        verify_compressed(_swap(plan, "rail0", "rail1"))


def test_a_wrong_order_is_refused(rail4):
    _, plan = rail4
    with pytest.raises(SolverError, match="order"):
        verify_compressed(CompressedSchedule(plan.base, plan.generator, 8))
    squared = plan.generator[plan.generator]  # order 2: the roots' orbits miss two boxes
    with pytest.raises(SolverError, match="order"):
        verify_compressed(CompressedSchedule(plan.base, squared, plan.order))
    with pytest.raises(SolverError, match="roots no tree"):
        verify_compressed(CompressedSchedule(plan.base, squared, 2))


def test_a_missing_representative_is_refused(rail4):
    _, plan = rail4
    first = plan.base.trees[0].root
    base = dataclasses.replace(
        plan.base, trees=plan.base.trees[:1] + tuple(t for t in plan.base.trees if t.root != first)
    )
    with pytest.raises(SolverError, match="sum to"):
        verify_compressed(CompressedSchedule(base, plan.generator, plan.order))
    base = dataclasses.replace(
        plan.base, trees=tuple(t for t in plan.base.trees if t.root != first)
    )
    with pytest.raises(SolverError, match="roots no tree"):
        verify_compressed(CompressedSchedule(base, plan.generator, plan.order))


def test_a_forged_load_or_path_is_refused(rail4):
    _, plan = rail4
    loads = list(plan.base.link_load)
    loads[0] = dataclasses.replace(loads[0], load=loads[0].load / 2 + Fraction(1, 7))
    base = dataclasses.replace(plan.base, link_load=tuple(loads))
    with pytest.raises(SolverError, match="recomputed"):
        verify_compressed(CompressedSchedule(base, plan.generator, plan.order))
    tree = plan.base.trees[0]
    e = tree.edges[0]
    bad = TreeEdge(e.src, e.dst, (e.src, "rail3", e.dst))
    trees = (dataclasses.replace(tree, edges=(bad, *tree.edges[1:])), *plan.base.trees[1:])
    base = dataclasses.replace(plan.base, trees=trees)
    with pytest.raises(SolverError, match="not a directed link"):
        verify_compressed(CompressedSchedule(base, plan.generator, plan.order))


def test_link_orbits_have_the_box_count():
    topo = templates.dgx_h100_rail(3)
    fabric = IndexedFabric.from_topology(topo)
    plan = solve_compressed(topo)
    orbit, sizes = link_orbits(fabric, plan.generator)
    assert set(sizes.tolist()) == {3}  # every link moves with its box; rails are per position
    assert orbit.shape == (len(fabric.edges),) and np.bincount(orbit).tolist() == sizes.tolist()


def test_boxes_without_group_names_are_found_from_the_structure():
    topo = templates.dgx_h100_rail(2)
    plain = dataclasses.replace(
        topo, nodes=tuple(dataclasses.replace(n, group=None) for n in topo.nodes)
    )
    plan = solve_compressed(plain)
    verify_compressed(plan)
    assert plan.optimal_algbw_exact == solve_compressed(topo).optimal_algbw_exact


def test_fabrics_without_boxes_are_refused_in_one_line():
    topo = templates.dgx_h100_rail(2)
    links = list(topo.links)
    i = next(j for j, lk in enumerate(links) if lk.source == "b1.gpu3" and lk.target == "b1.nvsw")
    links[i] = dataclasses.replace(links[i], bandwidth=Fraction(400))  # box 1 differs
    plain = dataclasses.replace(
        topo,
        links=tuple(links),
        nodes=tuple(dataclasses.replace(n, group=None) for n in topo.nodes),
    )
    with pytest.raises(SolverError, match="no box symmetry") as info:
        solve_compressed(plain)
    assert "\n" not in str(info.value)


def test_powers_of_the_generator(rail4):
    _, plan = rail4
    step = plan.generator
    manual = np.arange(step.shape[0])
    for b in range(2 * plan.order + 1):
        assert np.array_equal(plan.power(b), manual), b
        manual = step[manual]


def test_a_fat_tree_plan_after_the_spare_trim():
    """Spines hold far more than the optimum needs: without the shared-link trim the orbit
    plans are too dense for orbit packing; with it the plan is exact and verifies expanded."""
    topo = templates.fat_tree(8, 2, 4, oversubscription=2)
    plan = solve_compressed(topo)
    verify_compressed(plan)
    full = plan.expand()
    verify_schedule(full)
    assert plan.order == 8 and max(t.height for t in plan.representatives) <= 3


def test_boxes_too_large_for_a_plan_are_refused_before_they_are_ordered(monkeypatch):
    """A 32 768-GPU Clos's only translation moves zones of 4096 GPUs: their canonical order
    alone took minutes and the plan gigabytes. Boxes over the plan's edge budget are not tried."""
    from solver.algorithm import cost, symmetry

    topo = templates.dgx_h100_rail(4)  # 32 GPUs, boxes of 8: 8 * 31 representative edges
    monkeypatch.setattr(cost, "MAX_PLAN_TREE_EDGES", 7 * 31)  # at most 7 GPUs per box

    ordered = symmetry._canonical_order

    def no_large_ordering(fabric, members, *args):
        assert sum(fabric.is_compute[v] for v in members) <= 7, "a box over the limit"
        return ordered(fabric, members, *args)

    monkeypatch.setattr(symmetry, "_canonical_order", no_large_ordering)
    with pytest.raises(SolverError, match="at most 7 compute nodes per box") as info:
        solve_compressed(topo)
    assert "\n" not in str(info.value) and "solve without --compressed" in str(info.value)
    monkeypatch.setattr(cost, "MAX_TREE_EDGES", 100)  # the full schedule is over its limit too
    with pytest.raises(SolverError, match="--optimum-only gives the exact optimum"):
        solve_compressed(topo)
    monkeypatch.setattr(cost, "MAX_PLAN_TREE_EDGES", 8 * 31)  # the boxes fit again
    monkeypatch.undo()
    verify_compressed(solve_compressed(topo))
