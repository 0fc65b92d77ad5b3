"""Lecture mode's pure parts: the step list, its texts and formula strings (no Qt)."""

from __future__ import annotations

from fractions import Fraction

from results_fixtures import ring4_schedule

from fc_gui.model.lecture import (
    Comparison,
    ComparisonRow,
    LecturePlan,
    cut_formula_lines,
    fabric_paragraphs,
    lecture_steps,
    link_classes,
    partial_tree,
    pick_tree,
    short_label,
    size_text,
    step_counter,
    step_html,
    transfers_text,
)
from solver.io.templates import dgx_a100


def _plan(comparison=None):
    s = ring4_schedule()
    return LecturePlan(s, pick_tree(s), comparison)


def test_steps_walk_fabric_cut_tree_levels_then_ring():
    steps = lecture_steps(_plan())
    # ring4's chains have 3 levels: the tree's intro and one step per level
    assert [st.key for st in steps] == ["fabric", "cut", "tree0", "tree1", "tree2", "tree3", "ring"]
    assert [st.part for st in steps] == ["a", "b", "c", "c", "c", "c", "d"]
    assert [st.tree_level for st in steps] == [-1, -1, 0, 1, 2, 3, -1]
    assert "cut" not in steps[0].layers and "cut" in steps[1].layers
    assert "trees" in steps[3].layers and "heat" in steps[-1].layers
    assert step_counter(1, steps) == "Step 2 of 7 · (b)"


def test_cut_step_has_the_formula_with_the_real_numbers():
    s = ring4_schedule()  # S* = {gpu0, gpu1, gpu2}, B+ = 200 GB/s, N = 4
    assert cut_formula_lines(s) == (
        "T ≥ (M/N)·|S*∩Vc| / B⁺(S*) = (M/4)·3 / 200 GB/s\n"
        "algbw = M/T ≤ N·B⁺(S*)/|S*∩Vc| = 4·200/3 = 266.667 GB/s"
    )
    cut = lecture_steps(_plan())[1]
    text = " ".join(cut.paragraphs)
    assert "S* = all but gpu3" in text and "|S*∩Vc| = 3 of the N = 4 GPUs" in text
    assert "B⁺(S*) = 200 GB/s (gpu2→gpu3 100, gpu0→gpu3 100)" in text
    assert "266.667\u00a0GB\u2060/\u2060s" in step_html(cut)  # never broken across lines
    assert "(M\u2060/\u2060N)" in step_html(cut)


def test_tree_steps_grow_the_tree_level_by_level():
    plan = _plan()
    tree = plan.tree
    assert tree.root == "gpu0"
    sizes = [len(partial_tree(tree, d).edges) for d in range(4)]
    assert sizes == [0, 1, 2, 3]  # a chain: one more edge per level
    steps = lecture_steps(plan)
    assert "only gpu0 (star) holds it now" in " ".join(steps[2].paragraphs)
    assert "carries 1/2 of its shard, in 3 levels" in " ".join(steps[2].paragraphs)
    level1 = " ".join(steps[3].paragraphs)
    assert "Level 1 of 3: 1 transfer at once" in level1
    assert "2 of 4 GPUs now hold this piece" in level1
    assert "Every GPU holds the data" in " ".join(steps[5].paragraphs)


def test_ring_step_waits_for_the_simulation_then_shows_the_table():
    waiting = lecture_steps(_plan())[-1]
    assert waiting.table == () and "Simulating" in waiting.paragraphs[0]
    cmp = Comparison(
        1 << 30, (ComparisonRow("forestcoll", 260.0, 266.7), ComparisonRow("ring", 190.0, 200.0))
    )
    ring = lecture_steps(_plan(cmp))[-1]
    assert ring.table[0][0] == "algorithm"
    assert ring.table[1] == ("forestcoll", "260.0 GB/s", "266.7 GB/s", "98 %")
    assert ring.table[2] == ("ring", "190.0 GB/s", "200.0 GB/s", "71 %")
    assert ring.table[3][0] == "cut bound"
    text = " ".join(ring.paragraphs)
    assert "M = 1 GiB" in text and "at most 200.0 GB/s" in text and "1.37× the ring" in text
    lines = ring.lines(80)
    assert any(line.startswith("ring") and "190.0 GB/s" in line for line in lines)
    assert all(
        len(line) <= 80
        for line in lines
        if not line.startswith(("algorithm", "forestcoll", "ring ", "cut bound"))
    )
    assert "reaches the cut bound 266.667 GB/s (simulated 260.0 GB/s, 98 %" in text
    small = Comparison(1 << 20, (ComparisonRow("forestcoll", 80.0, 266.7),))
    text = " ".join(
        lecture_steps(LecturePlan(_plan().schedule, _plan().tree, small, 1 << 20))[-1].paragraphs
    )
    assert "large messages reach the cut bound" in text and "80.0 GB/s (30 %)" in text
    assert "<table" in step_html(
        ring
    ) and "<td style='padding:2px 10px 2px 0'>ring</td>" in step_html(ring)


def test_fabric_text_counts_boxes_switches_and_link_classes():
    topo = dgx_a100(2)
    classes = link_classes(topo)
    assert ("gpu", "nvswitch", Fraction(300), 16) in classes
    assert ("gpu", "nic", Fraction(25), 16) in classes
    first, links, _ = fabric_paragraphs(topo)
    assert first.startswith("16 GPUs in 2 boxes (8 each), 20 switches (16 nic, 2 nvswitch, 2 ib)")
    assert "gpu–nvswitch: 16 × 300 GB/s" in links
    # a drawn fabric's switches have no role: "1 switch", not "1 switch (1 switch)"
    from solver.model.topology import Link, Node, Topology

    drawn = Topology(
        name="drawn",
        nodes=[Node(id="gpu0", kind="compute", role="gpu"), Node(id="sw0", kind="switch", role="")],
        links=[Link(source="gpu0", target="sw0", bandwidth=Fraction(25))],
    )
    first, _, _ = fabric_paragraphs(drawn)
    assert first.startswith("1 GPU, 1 switch, 1 link"), first


def test_transfers_are_grouped_by_sender_and_route():
    level = [
        ("b0.gpu0", "b0.gpu1", ("b0.gpu0", "b0.nvsw", "b0.gpu1")),
        ("b0.gpu0", "b0.gpu2", ("b0.gpu0", "b0.nvsw", "b0.gpu2")),
        ("b0.gpu1", "b1.gpu1", ("b0.gpu1", "b0.nic1", "ib1", "b1.nic1", "b1.gpu1")),
        ("b0.gcd0", "b0.gcd1", ("b0.gcd0", "b0.gcd1")),
    ]
    assert transfers_text(level) == (
        "b0.gpu0 → b0.gpu1, b0.gpu2 via b0.nvsw; b0.gpu1 → b1.gpu1 via b0.nic1, ib1, b1.nic1; "
        "b0.gcd0 → b0.gcd1"
    )
    assert transfers_text(level, limit=1) == "b0.gpu0 → b0.gpu1, b0.gpu2 via b0.nvsw; and 2 more"


def test_small_helpers():
    assert size_text(1 << 30) == "1 GiB" and size_text(16 << 20) == "16 MiB"
    assert size_text(1536) == "1.5 KiB" and size_text(100) == "100 B"
    assert short_label("b0.gpu3", "b0") == "gpu3"
    assert short_label("ib0", "network") == "ib0"
    assert short_label("gpu1", None) == "gpu1"


def test_the_animated_tree_has_at_most_eight_levels_when_one_exists():
    from dataclasses import replace

    s = ring4_schedule()
    assert pick_tree(s).height == 3  # ring4's chains: all 3 levels, the first one
    assert pick_tree(s) is s.trees[0]
    # a long chain (9 levels) loses to a 3-level tree; alone, it is taken
    from itertools import pairwise

    from solver.model.schedule import TreeEdge

    chain = s.trees[0]
    ids = ["gpu0"] + [f"x{i}" for i in range(1, 10)]
    long_chain = replace(chain, edges=tuple(TreeEdge(a, b, (a, b)) for a, b in pairwise(ids)))
    assert long_chain.height == 9
    assert pick_tree(replace(s, trees=(long_chain, chain))) is chain
    assert pick_tree(replace(s, trees=(long_chain,))) is long_chain
