"""fc_gui.model runs without widgets: its pure modules load no Qt at all, the document and its
commands only QtCore/QtGui (signals, QUndoCommand); and what it derives from a schedule is
checked here directly, without a canvas."""

import subprocess
import sys

from results_fixtures import ring4_schedule

from fc_gui.model.trees import broadcast_levels, broadcast_step_text, holders, path_hops

PROBE = """
import sys
import fc_gui.model.lanes, fc_gui.model.trees, fc_gui.model.result_text, fc_gui.model.layouts
import fc_gui.model.plot_series, fc_gui.views.plot_svg, fc_gui.model.timeline, fc_gui.model.link_labels
import fc_gui.model.document_index, fc_gui.model.parallel_links, fc_gui.model.view_fit
pure = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'pyqtgraph'))
import fc_gui.model.document, fc_gui.model.commands
qt = sorted(m for m in sys.modules if m.startswith('PySide6.') or m.startswith('pyqtgraph'))
print(pure)
print(qt)
"""


def test_model_modules_load_no_widgets():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    pure, qt = out.stdout.splitlines()
    assert pure == "[]", f"pure model modules loaded Qt: {pure}"
    assert "PySide6.QtCore" in qt and "PySide6.QtGui" in qt  # the probe sees Qt when it is there
    assert "PySide6.QtWidgets" not in qt and "pyqtgraph" not in qt, qt


def test_broadcast_levels_of_two_allgather_trees():
    s = ring4_schedule()
    clockwise, anticlockwise = s.trees[0], s.trees[1]  # both rooted at gpu0
    trees = [("allgather", clockwise), ("allgather", anticlockwise)]
    levels = broadcast_levels(trees)
    assert [sorted((a, b) for a, b, _ in level) for level in levels] == [
        [("gpu0", "gpu1"), ("gpu0", "gpu3")],
        [("gpu1", "gpu2"), ("gpu3", "gpu2")],
        [("gpu2", "gpu1"), ("gpu2", "gpu3")],
    ]
    assert holders(trees, levels, 0) == {"gpu0"}
    assert holders(trees, levels, 1) == {"gpu0", "gpu1", "gpu3"}
    assert holders(trees, levels, 2) == {"gpu0", "gpu1", "gpu2", "gpu3"}
    assert broadcast_step_text(trees, levels, 1) == "step 1/3: 2 transfers, 3/4 nodes hold data"
    assert path_hops(p for _, _, p in levels[1]) == [("gpu1", "gpu2"), ("gpu3", "gpu2")]


def test_reduce_scatter_steps_start_at_the_leaves():
    from dataclasses import replace

    tree = ring4_schedule().trees[0]  # gpu0 -> gpu1 -> gpu2 -> gpu3
    reversed_edges = tuple(
        replace(e, src=e.dst, dst=e.src, path=tuple(reversed(e.path))) for e in tree.edges
    )
    trees = [("reduce-scatter", replace(tree, edges=reversed_edges))]
    levels = broadcast_levels(trees)
    assert [[(a, b) for a, b, _ in level] for level in levels] == [
        [("gpu3", "gpu2")],
        [("gpu2", "gpu1")],
        [("gpu1", "gpu0")],
    ]
    assert holders(trees, levels, 0) == set()  # partial sums: nobody holds a result yet
    text = broadcast_step_text(trees, levels, 2)
    assert text == "step 2/3: 1 transfers, 2/4 nodes have sent their partial sums"


def test_solve_time_adds_up_or_says_what_the_rest_is():
    """Issue 26: "20.2 s" was shown beside phases summing to 3.45 s; now the rest is named."""
    import re

    import pytest

    from fc_gui.model.result_text import solve_time_text

    timings = {"switch_removal": 0.11, "optimum": 0.03, "trees": 0.76, "paths": 0.04}
    text = solve_time_text(timings, 1.14, (1.0, 0.1))
    total, rest = text.split(" s = ", 1)
    assert float(total) == 1.14
    head, _, _ = rest.partition(" (")
    assert head == "phases 0.94"
    added = [float(x) for x in re.findall(r"\+ [a-z -]+ ([0-9.]+)", rest)]
    assert added == [0.06, 0.1, 0.04]  # set-up and checks, display data, hand-over
    assert 0.94 + sum(added) == pytest.approx(1.14, abs=0.011)
    # without the split the rest is still said; nothing to add: just the phases
    assert "+ 0.20 outside them" in solve_time_text(timings, 1.14)
    assert (
        solve_time_text(timings, 0.94) == "0.94 s (switch removal 0.11, optimum 0.03, "
        "trees 0.76, paths 0.04)"
    )
