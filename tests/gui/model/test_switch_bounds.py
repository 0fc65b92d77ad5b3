"""The designer's three allreduce figures on fabrics whose switches reduce and multicast: the
words (fc_gui.model.switch_bounds), computed in the solve worker (never on the GUI thread), in
the summary and the canvas caption, and nothing new on a fabric without marked switches."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from fc_gui.model import switch_bounds as SB
from solver.algorithm.pipeline import solve
from solver.io import templates as T
from solver.model.topology import REDUCE


def test_one_box_names_its_switch_and_both_figures():
    sb = SB.compute(T.make("dgx_h100_rail", n=1))
    assert SB.makes_difference(sb) == ("b0.nvsw",)
    assert SB.difference_text(sb) == (
        "b0.nvsw reduces and multicasts: allreduce 450 GB/s instead of 257.14"
    )
    assert "exact" in SB.caption_line(sb)


def test_two_boxes_need_both_switches():
    sb = SB.compute(T.make("dgx_h100_rail", n=2))
    assert SB.difference_text(sb) == (
        "b0.nvsw, b1.nvsw reduce and multicast: allreduce 400 GB/s instead of 266.67"
    )
    rows = dict(SB.figure_rows(sb, "allreduce"))
    assert "266.67 GB/s" in rows["Forward-only"]
    assert "400 GB/s" in rows["With capabilities"] and "exact" in rows["With capabilities"]
    assert "400" in rows["Any schedule"]


def test_four_boxes_say_the_gap():
    sb = SB.compute(T.make("dgx_h100_rail", n=4))
    rows = dict(SB.figure_rows(sb, "allreduce"))
    assert "266.67 GB/s" in rows["With capabilities"]
    assert "33.3 % below the any-schedule bound" in rows["With capabilities"]
    assert "any schedule ≤ 400" in SB.caption_line(sb)


def test_a_switch_that_only_reduces_makes_no_difference_and_says_why():
    topo = T.make("dgx_h100_rail", n=1)
    nodes = tuple(
        replace(n, capabilities=frozenset({REDUCE})) if n.capabilities else n for n in topo.nodes
    )
    sb = SB.compute(replace(topo, nodes=nodes))
    assert SB.makes_difference(sb) == ()
    text = SB.difference_text(sb)
    assert text.startswith("b0.nvsw marked (reduces)") and "stays 257.14 GB/s" in text
    assert "no switch both reduces and multicasts" in text


def test_no_marked_switch_no_figures():
    assert SB.compute(T.make("dgx_a100", n=1)) is None


@pytest.fixture
def recorded(monkeypatch):
    """The threads SB.compute ran in."""
    threads = []
    real = SB.compute

    def compute(topo):
        threads.append(threading.current_thread())
        return real(topo)

    monkeypatch.setattr(SB, "compute", compute)
    return threads


def _solve(qtbot, window, collective, figures=True):
    """Solve and wait for the result (and, with ``figures``, for its allreduce figures)."""
    rc = window.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=60000):
        assert rc.solving.solve(collective)
    if figures:
        qtbot.waitUntil(lambda: rc.state.switch_bounds is not None, timeout=30000)
    return rc


def test_window_shows_the_figures_computed_off_the_gui_thread(qtbot, make_results_window, recorded):
    w = make_results_window(T.make("dgx_h100_rail", n=1), solve_fn=solve)
    rc = _solve(qtbot, w, "allreduce")
    assert recorded and all(t is not threading.main_thread() for t in recorded)
    text = rc.summary.text()
    assert "b0.nvsw reduces and multicasts: allreduce 450 GB/s instead of 257.14" in text
    assert "Forward-only" in text and "Any schedule" in text and "With capabilities" in text
    # the sentence sits under the optimum, above the cut rows (seen without scrolling)
    assert text.index("Optimal algbw") < text.index("instead of 257.14") < text.index("Bottleneck")
    caption = rc.overlays.cut.label_text
    assert caption.splitlines()[-1].startswith("b0.nvsw reduces and multicasts")
    # the plot draws the capability optimum beside the forward-only bound
    line = rc.plots.series["with NVLS 450 GB/s"]
    assert set(line.yData) == {450.0} and "bound 257.1 GB/s" in rc.plots.series


def test_allgather_solve_says_the_switch_does_not_raise_it(qtbot, make_results_window):
    w = make_results_window(T.make("dgx_h100_rail", n=1), solve_fn=solve)
    rc = _solve(qtbot, w, "allgather")
    assert (
        "allgather: a switch that reduces or multicasts does not raise its bound"
        in rc.summary.text()
    )
    assert not any(name.startswith("with NVLS") for name in rc.plots.series)


def test_window_without_marked_switches_is_unchanged(qtbot, make_results_window):
    w = make_results_window(T.make("dgx_a100", n=1), solve_fn=solve)
    rc = _solve(qtbot, w, "allreduce", figures=False)
    qtbot.wait(300)
    assert rc.state.switch_bounds is None
    assert "In-switch" not in rc.summary.text() and "Allreduce" not in rc.summary.text()
    assert "reduces" not in rc.overlays.cut.label_text


def test_a_construction_slower_than_forwarding_is_named_with_its_figure():
    # one SuperPOD SU: the rails' index groups share the spine, so the hierarchical schedule
    # runs them one after another and stays far below ForestColl's forward-only optimum
    sb = SB.compute(T.make("superpod", sus=1))
    assert SB.makes_difference(sb) == ()
    text = SB.difference_text(sb)
    assert "reaches only 25.81 GB/s here" in text and "share links" in text
    assert text.endswith("allreduce stays 206.45 GB/s")


def test_a_results_file_of_a_marked_fabric_gets_its_figures_in_the_background(
    qtbot, make_results_window, tmp_path, monkeypatch
):
    from solver.io.hdf5.results import write_schedule

    path = tmp_path / "h100.h5"
    write_schedule(path, solve(T.make("dgx_h100_rail", n=1), "allreduce"))
    threads = []
    real = SB.compute

    def compute(topo):
        threads.append(threading.current_thread())
        return real(topo)

    monkeypatch.setattr(SB, "compute", compute)
    w = make_results_window()
    rc = w.results_controller
    assert w.file_actions.open_path(path)
    assert rc.state.schedule is not None
    qtbot.waitUntil(lambda: rc.state.switch_bounds is not None, timeout=30000)
    assert threads and all(t is not threading.main_thread() for t in threads)
    assert "instead of 257.14" in rc.summary.text()
    assert rc.overlays.cut.label_text.splitlines()[-1].startswith("b0.nvsw reduces")
    assert "with NVLS 450 GB/s" in rc.plots.series


def test_unticking_multicast_marks_stale_and_the_next_solve_says_why(qtbot, make_results_window):
    from fc_gui.model.commands import SetNodePropsCommand

    w = make_results_window(T.make("dgx_h100_rail", n=1), solve_fn=solve)
    rc = _solve(qtbot, w, "allreduce")
    assert "with NVLS 450 GB/s" in rc.plots.series
    node = w.document.nodes["b0.nvsw"]
    w.undo_stack.push(
        SetNodePropsCommand(w.document, node.id, replace(node, capabilities=frozenset({REDUCE})))
    )
    assert rc.state.stale
    first = rc.state.switch_bounds
    rc = _solve(qtbot, w, "allreduce")
    assert rc.state.switch_bounds is not first
    text = rc.summary.text()
    assert "b0.nvsw marked (reduces), but no schedule gains from it" in text
    assert "stays 257.14 GB/s" in rc.overlays.cut.label_text
    assert not any(name.startswith("with NVLS") for name in rc.plots.series)
    # undo: the switch multicasts again; the next solve names it again
    w.undo_stack.undo()
    second = rc.state.switch_bounds
    rc = _solve(qtbot, w, "allreduce")
    assert rc.state.switch_bounds is not second
    assert "b0.nvsw reduces and multicasts: allreduce 450 GB/s" in rc.summary.text()


def test_the_summary_says_the_figures_are_coming_until_they_arrive(
    qtbot, make_results_window, monkeypatch
):
    import time

    real = SB.compute

    def slow(topo):
        time.sleep(0.5)
        return real(topo)

    monkeypatch.setattr(SB, "compute", slow)
    w = make_results_window(T.make("dgx_h100_rail", n=1), solve_fn=solve)
    rc = _solve(qtbot, w, "allreduce", figures=False)
    assert rc.state.switch_bounds is None
    assert "computing the allreduce figures" in rc.summary.text()  # the window did not wait
    with qtbot.waitSignal(rc.state.switch_bounds_changed, timeout=30000):
        pass
    assert "computing" not in rc.summary.text() and "instead of 257.14" in rc.summary.text()
