"""The results side inside a real MainWindow: solve, views, overlays, stale marking, what-if,
errors, exports and plots (hand-made schedules through a fake solver, plus the real solver)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from canvas_double import PlotCanvasHost
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from results_fixtures import FakeSolver, failing_solver, ring4, ring4_schedule

from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from fc_gui.model.commands import MoveNodesCommand, SetLinkPropsCommand
from fc_gui.model.lanes import chevrons, lane_segments, segment_distance_px
from fc_gui.model.result_text import cut_caption, summary_html
from fc_gui.model.trees import tree_hops, tree_rows, trees_using_links
from fc_gui.views.overlays import HeatMapOverlay


@pytest.fixture
def make_window(qtbot, tmp_path):
    windows = []

    def make(topology=None, solve_fn=None):
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(
            topology or ring4(), settings=settings, state_dir=tmp_path, install_results=False
        )
        w.results_controller = install(w, solve_fn=solve_fn or FakeSolver(0.05), warmup=False)
        w.resize(1200, 800)
        w.show()
        windows.append(w)
        return w

    yield make
    for w in windows:  # closed here, after marking clean: no "unsaved changes" question
        w.results_controller.shutdown()
        w.undo_stack.setClean()
        w.close()
        w.deleteLater()


def solve_and_wait(qtbot, window, **kwargs):
    rc = window.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=30000):
        assert rc.solving.solve(**kwargs)
    return rc.state.schedule


# ---------------------------------------------------------------------- solve -> views
def test_solve_fills_summary_trees_and_overlays(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    assert "No result" in rc.summary.text()
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=5000):
        rc.panel.solve_button.click()
    assert rc.panel.running is False and rc.panel.solve_button.isEnabled()
    s = rc.state.schedule
    assert s is not None and s.optimal_algbw_exact == Fraction(800, 3)
    text = rc.summary.text()
    assert "266.667 (= 800/3) GB/s" in text
    assert "|S*∩Vc| = 3" in text and "B⁺(S*) = 200" in text
    assert "4 · 200 / 3 = 266.667" in text  # the bound's formula with the cut's numbers
    assert "k = 2 per root, 8 distinct" in text
    # trees list
    assert rc.trees_view.model.rowCount() == 8
    assert rc.trees_view.count_label.text() == "8 trees"
    # overlays: cut badge, heat map colours on every directed link
    assert rc.overlays.cut.badge is not None and rc.overlays.cut.badge.isVisible()
    assert "S* = all but gpu3" in rc.overlays.cut.label_text
    assert len(rc.overlays.heat.colors) == 8
    assert rc.canvas.links.colors == rc.overlays.heat.colors
    assert rc.overlays.heat.color_bar is not None and rc.overlays.heat.color_bar.isVisible()
    # the exports are enabled once there is a result
    assert rc.exports.h5_action.isEnabled()


def test_overlay_toggles_hide_and_restore(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    rc.menu.show_heat_action.setChecked(False)
    assert rc.canvas.links.colors is None
    assert not rc.overlays.heat.color_bar.isVisible()
    rc.menu.show_heat_action.setChecked(True)
    assert rc.canvas.links.colors == rc.overlays.heat.colors
    rc.menu.show_cut_action.setChecked(False)
    assert not rc.overlays.cut.badge.isVisible()
    assert all(not item.isVisible() for item in rc.overlays.cut.items)
    rc.menu.clear_action.trigger()
    assert rc.state.schedule is None and rc.canvas.links.colors is None
    assert not rc.exports.h5_action.isEnabled()


def test_heat_tooltip_names_link_load_and_trees(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    uid = next(
        u for u, ln in w.document.links.items() if ln.source == "gpu0" and ln.target == "gpu1"
    )
    tip = rc.overlays.tooltip(None, uid)
    assert "gpu0 → gpu1:" in tip and "gpu1 → gpu0:" in tip
    assert "bandwidth 100 GB/s" in tip
    assert "load 100.0% of bandwidth" in tip
    # gpu0->gpu1 is used by the clockwise chains of roots gpu0, gpu3, gpu2 (index 0 each)
    assert "used by 3 trees: gpu0#0, gpu2#0, gpu3#0" in tip
    rc.menu.show_heat_action.setChecked(False)
    assert rc.overlays.tooltip(None, uid) is None
    assert "bottleneck" in rc.overlays.tooltip("gpu0", None)
    assert rc.overlays.tooltip("gpu3", None) is None


def test_selecting_trees_overlays_them_and_animation_plays_depth_by_depth(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    rows = tree_rows(rc.state.schedule)
    first = next(i for i, r in enumerate(rows) if r.root == "gpu1" and r.index == 0)
    with qtbot.waitSignal(rc.trees_view.trees_selected) as blocker:
        rc.trees_view.select_rows([first])
    ((phase, tree),) = blocker.args[0]
    assert tree.root == "gpu1" and phase == "allgather"
    assert rc.overlays.trees.trees == [(phase, tree)]
    assert len(rc.overlays.trees.items) == 2  # one curve (edges + arrowheads) + root star
    # the row gets a swatch of the tree's colour on the canvas
    qtbot.wait(10)
    swatch = rc.trees_view.model.data(
        rc.trees_view.model.index(first, 1), Qt.ItemDataRole.DecorationRole
    )
    assert swatch.toImage().pixelColor(5, 5).getRgb()[:3] == rc.overlays.trees.color_of(0)
    assert rc.trees_view.play_button.isEnabled()
    anim = rc.overlays.animation
    assert anim.steps == 3  # a chain of 4 nodes has height 3
    assert anim.holders() == {"gpu1"}
    seen = []
    anim.step_changed.connect(lambda s, n, t: seen.append(t))
    rc.trees_view.step_button.click()
    assert anim.holders() == {"gpu1", "gpu2"}
    assert seen[-1].startswith("step 1/3: 1 transfers, 2/4 nodes hold data")
    with qtbot.waitSignal(anim.playing_changed, timeout=1000):
        rc.trees_view.play_button.click()
    assert rc.trees_view.pause_button.isEnabled()
    anim.timer.setInterval(10)
    qtbot.waitUntil(lambda: not anim.playing, timeout=3000)
    assert anim.step == 3
    assert anim.holders() == {"gpu0", "gpu1", "gpu2", "gpu3"}
    rc.trees_view.reset_button.click()
    assert anim.step == 0
    # filter by root and select all of its trees
    rc.trees_view.set_root_filter("gpu2")
    assert rc.trees_view.proxy.rowCount() == 2
    assert rc.trees_view.count_label.text() == "2 of 8 trees"
    rc.trees_view.table.selectAll()
    assert {t.root for _, t in rc.trees_view.selected_trees()} == {"gpu2"}
    assert len(rc.overlays.trees.trees) == 2


def test_reduce_scatter_animation_runs_from_leaves_to_root(qtbot):
    s = ring4_schedule()
    tree = s.trees[0]  # gpu0 -> gpu1 -> gpu2 -> gpu3 chain
    reversed_edges = tuple(
        replace(e, src=e.dst, dst=e.src, path=tuple(reversed(e.path))) for e in tree.edges
    )
    agg = replace(tree, edges=reversed_edges)
    import pyqtgraph as pg

    from fc_gui.views.animation import BroadcastAnimation

    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    host = PlotCanvasHost(plot, s.topology)
    anim = BroadcastAnimation(host)
    anim.set_trees([("reduce-scatter", agg)])
    anim.advance()
    # the deepest node sends first
    assert [(a, b) for a, b, _ in anim.levels[0]] == [("gpu3", "gpu2")]
    assert anim.holders() == {"gpu2"}


# ---------------------------------------------------------------------- stale / auto / what-if
def test_edits_mark_the_result_stale_but_moves_do_not(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    assert not rc.state.stale and not rc.panel.stale
    w.undo_stack.push(MoveNodesCommand(w.document, {"gpu0": (0.0, 0.0)}, {"gpu0": (0.2, -0.3)}))
    assert not rc.state.stale
    uid = next(iter(w.document.links))
    link = w.document.links[uid]
    w.undo_stack.push(SetLinkPropsCommand(w.document, {uid: replace(link, bandwidth=Fraction(50))}))
    assert rc.state.stale and rc.panel.stale and rc.panel.stale_label.isVisibleTo(rc.panel)
    assert "Stale" in rc.summary.text()
    assert "stale result" in rc.overlays.tooltip(None, uid)
    solve_and_wait(qtbot, w)
    assert not rc.state.stale and not rc.panel.stale


def test_edit_during_a_solve_leaves_the_new_result_stale(qtbot, make_window):
    w = make_window(solve_fn=FakeSolver(0.4))
    rc = w.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=5000):
        rc.solving.solve()
        qtbot.wait(50)
        uid = next(iter(w.document.links))
        link = w.document.links[uid]
        w.undo_stack.push(
            SetLinkPropsCommand(w.document, {uid: replace(link, latency=Fraction(2))})
        )
    assert rc.state.stale


def test_resolve_on_edit(qtbot, make_window):
    fake = FakeSolver(0.02)
    w = make_window(solve_fn=fake)
    rc = w.results_controller
    assert rc.panel.auto_box.isEnabled()  # 4 nodes is small
    solve_and_wait(qtbot, w)
    rc.panel.auto_box.setChecked(True)
    assert rc.menu.auto_action.isChecked()
    uid = next(iter(w.document.links))
    link = w.document.links[uid]
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=5000):
        w.undo_stack.push(
            SetLinkPropsCommand(w.document, {uid: replace(link, bandwidth=Fraction(60))})
        )
        assert rc.state.stale
    assert not rc.state.stale
    assert len(fake.calls) == 2
    assert fake.calls[-1]["topology"].links[0].bandwidth == Fraction(60)


def test_resolve_on_edit_not_offered_for_big_fabrics(qtbot, make_window):
    from solver.io.templates import dgx_a100

    w = make_window(topology=dgx_a100(4))  # 70 nodes
    rc = w.results_controller
    assert not rc.panel.auto_box.isEnabled()
    assert not rc.menu.auto_action.isEnabled()


def test_what_if_link_fails_from_the_context_menu(qtbot, make_window, errors):
    w = make_window()
    rc = w.results_controller
    before = solve_and_wait(qtbot, w)
    uid = next(
        u for u, ln in w.document.links.items() if ln.source == "gpu0" and ln.target == "gpu1"
    )
    menu = w.canvas.build_context_menu(0.5, 0.0)  # middle of the gpu0-gpu1 link
    actions = [a for a in menu.actions() if a.text().startswith("What if link")]
    assert len(actions) == 1, [a.text() for a in menu.actions()]
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=5000):
        actions[0].trigger()
    assert uid in w.document.disabled_links
    solved_topo = rc.solving.last_request["topology"]
    assert len(solved_topo.links) == 3  # the failed link is left out of the solve
    assert rc.state.previous is before
    assert "What if" in rc.summary.text() and "before 266.667 GB/s" in rc.summary.text()
    assert errors == []
    w.undo_stack.undo()
    assert uid not in w.document.disabled_links and rc.state.stale


def test_failed_solve_shows_a_one_line_error_dialog(qtbot, make_window, errors):
    w = make_window(solve_fn=failing_solver("switch 'sw0' is unbalanced: in 50 GB/s, out 25 GB/s"))
    rc = w.results_controller
    with qtbot.waitSignal(rc.solving.worker.failed, timeout=5000):
        rc.solving.solve()
    assert errors == [("Solve failed", "switch 'sw0' is unbalanced: in 50 GB/s, out 25 GB/s")]
    assert rc.panel.solve_button.isEnabled() and rc.panel.phase_label.text() == "failed"
    assert rc.state.schedule is None


def test_invalid_fabric_is_refused_before_solving(qtbot, make_window, errors):
    from fc_gui.model.commands import DeleteCommand

    fake = FakeSolver(0.01)
    w = make_window(solve_fn=fake)
    rc = w.results_controller
    w.undo_stack.push(DeleteCommand(w.document, ["gpu1", "gpu2", "gpu3"]))
    assert rc.solving.solve() is False
    assert len(errors) == 1
    assert errors[0][1].startswith("cannot solve: a fabric needs at least two compute nodes")
    assert fake.calls == []


def test_cancel_from_the_panel(qtbot, make_window):
    w = make_window(solve_fn=FakeSolver(10.0))
    rc = w.results_controller
    rc.solving.solve()
    assert rc.panel.cancel_button.isEnabled() and rc.menu.cancel_action.isEnabled()
    with qtbot.waitSignal(rc.solving.worker.cancelled, timeout=3000):
        rc.panel.cancel_button.click()
    assert rc.panel.phase_label.text() == "cancelled"
    assert rc.panel.solve_button.isEnabled() and rc.state.schedule is None


# ---------------------------------------------------------------------- exports and plots
def test_exports_h5_png_svg(qtbot, make_window, tmp_path, errors):
    from solver.io.hdf5.results import read_schedules

    w = make_window()
    rc = w.results_controller
    s = solve_and_wait(qtbot, w)
    h5 = rc.exports.export_h5(tmp_path / "out.h5")
    assert h5 is not None
    ((name, back),) = read_schedules(h5).items()
    assert name == "allgather" and back == s
    png = rc.exports.export_png(tmp_path / "canvas.png")
    img = QImage(str(png))
    assert img.width() == w.canvas.width() * w.canvas.devicePixelRatio()
    assert _distinct_colors(img) > 20
    svg = rc.exports.export_svg(tmp_path / "canvas.svg")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    (tmp_path / "plain").write_text("a file, not a folder")
    assert rc.exports.export_h5(tmp_path / "plain" / "x.h5") is None
    assert errors and "Export failed" == errors[-1][0]


def test_msccl_export(qtbot, make_window, tmp_path, errors):
    from solver.msccl.interpreter import check_file
    from solver.msccl.runtimes import RUNTIMES

    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    out = rc.exports.export_msccl(tmp_path / "algo.xml", runtime="msccl-executor")
    assert errors == [] and out is not None
    report = check_file(out, RUNTIMES["msccl-executor"])  # raises MscclError if the XML is wrong
    assert report.ngpus == 4 and report.collective == "allgather"
    # a runtime limit the schedule cannot meet is a one-line error, not a file
    assert rc.exports.export_msccl(tmp_path / "bad.xml", runtime="no-such-runtime") is None
    assert errors and "\n" not in errors[-1][1]
    assert not (tmp_path / "bad.xml").exists()


def test_plots_bound_and_imported_measurements(qtbot, make_window, tmp_path, errors):
    from solver.io.hdf5.results import write_results, write_schedule
    from solver.model.results import ResultTable

    w = make_window()
    rc = w.results_controller
    s = solve_and_wait(qtbot, w)
    labels = rc.plots.labels()
    assert "bound 266.7 GB/s" in labels and "α-β estimate" in labels
    bound = rc.plots.series["bound 266.7 GB/s"]
    assert np.allclose(bound.yData, 800 / 3)
    est = rc.plots.series["α-β estimate"]
    assert np.all(est.yData <= 800 / 3 + 1e-9) and est.yData[-1] > 0.95 * 800 / 3

    path = tmp_path / "measured.h5"
    write_schedule(path, s)
    sizes = np.array([1 << 20, 1 << 24, 1 << 28], dtype=np.int64)
    nan = np.full(3, np.nan)
    table = ResultTable(
        "allgather",
        "nccl",
        "nccl-tests",
        sizes,
        nan,
        nan.copy(),
        np.array([1e-4, 1e-3, 1e-2]),
        np.array([50.0, 150.0, 240.0]),
    )
    write_results(path, "nccl_run1", table)
    with qtbot.waitSignal(rc.measurements.imported, timeout=30000) as got:
        assert rc.measurements.import_file(str(path))  # read in the background
    assert got.args == [1]
    assert "measured nccl" in rc.plots.labels()
    assert list(rc.state.measured) == ["nccl_run1"]  # its name in the file, kept
    rc.plots.clear_imported()
    assert "measured nccl" not in rc.plots.labels() and not rc.state.measured

    bad = tmp_path / "bad.h5"
    bad.write_text("not hdf5")
    with qtbot.waitSignal(rc.measurements.task.failed, timeout=30000):
        assert rc.measurements.import_file(str(bad))
    assert errors and errors[-1][0] == "Import failed" and "\n" not in errors[-1][1]


def test_real_solver_end_to_end(qtbot, make_window):
    import solver
    from solver.io.templates import dgx_a100

    w = make_window(topology=dgx_a100(1), solve_fn=solver.solve)
    rc = w.results_controller
    s = solve_and_wait(qtbot, w)
    assert s.optimal_algbw_exact == Fraction(2400, 7)
    assert "342.857 (= 2400/7) GB/s" in rc.summary.text()
    assert rc.trees_view.model.rowCount() == len(s.trees)
    assert set(rc.overlays.heat.colors) == {(ll.source, ll.target) for ll in s.link_load}


# ---------------------------------------------------------------------- pure helpers
def test_summary_for_fixed_k_and_warnings():
    s = ring4_schedule()
    limited = replace(
        s,
        max_trees_per_root=1,
        k=1,
        algbw_exact=Fraction(200),
        warnings=("trimmed 5 GB/s of unusable uplink at switch 'ib0'",),
    )
    html = summary_html(limited, elapsed=1.5)
    assert "algbw, K = 1" in html and "200 GB/s (75.0%)" in html
    assert "trimmed 5 GB/s" in html and "1.50 s" in html


def test_tree_rows_and_link_users():
    s = ring4_schedule()
    rows = tree_rows(s)
    assert [(r.root, r.index) for r in rows[:3]] == [("gpu0", 0), ("gpu0", 1), ("gpu1", 0)]
    assert all(r.height == 3 and r.hops == 3 for r in rows)
    assert tree_hops(s.trees[0]) == 3
    users = trees_using_links(s)
    assert sorted(users[("gpu0", "gpu1")]) == ["gpu0#0", "gpu2#0", "gpu3#0"]
    assert sum(len(v) for v in users.values()) == 8 * 3


def test_cut_caption_names_the_small_side():
    s = ring4_schedule()
    text = cut_caption(s.bottleneck, ["gpu0", "gpu1", "gpu2", "gpu3"], 4)
    assert "all but gpu3" in text
    assert "4·200/3 = 266.667 GB/s" in text


def test_lane_geometry_and_hit_testing():
    pos = {"a": (0.0, 0.0), "b": (10.0, 0.0)}
    seg = lane_segments(pos, [("a", "b"), ("b", "a"), ("a", "zz")], 0.5)
    # a->b is shifted to its right (negative y), b->a to the other side
    assert np.allclose(seg[0], [[0, -0.5], [10, -0.5]])
    assert np.allclose(seg[1], [[10, 0.5], [0, 0.5]])
    assert np.isnan(seg[2]).all()
    d = segment_distance_px(seg[:2], 5.0, -0.5, (0.1, 0.1))
    assert d[0] == pytest.approx(0.0) and d[1] == pytest.approx(10.0)
    heads = chevrons(seg[:1], 1.0)
    assert heads.shape == (2, 2, 2)
    assert np.allclose(heads[0, 1], heads[1, 1])  # both strokes meet at the tip
    assert heads[0, 1, 0] > heads[0, 0, 0]  # pointing along +x


def test_heat_overlay_on_a_plain_plot_recolours_links_and_gives_tips(qtbot):
    import pyqtgraph as pg

    s = ring4_schedule()
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    host = PlotCanvasHost(plot, s.topology)
    heat = HeatMapOverlay(host)
    heat.attach_color_bar()
    heat.show_schedule(s)
    assert heat.active and heat.color_bar.parentWidget() is plot
    assert set(host.link_colors) == set(heat.index) and len(host.link_colors) == 8
    assert host.link_colors[("gpu2", "gpu3")] == heat.color_of(1.0)
    tip = heat.tooltip_for_pair("gpu0", "gpu1")
    assert tip.startswith("link gpu0 — gpu1") and "gpu0 → gpu1:" in tip and "gpu1 → gpu0:" in tip
    assert heat.tooltip_for_pair("gpu0", "gpu2") is None
    heat.set_visible(False)
    assert host.link_colors is None
    heat.set_visible(True)
    assert len(host.link_colors) == 8
    heat.clear()
    assert not heat.active and host.link_colors is None


def _distinct_colors(img: QImage) -> int:
    step = max(1, img.width() // 60)
    colors = {
        img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)
    }
    return len(colors)


def test_simulate_plots_forestcoll_and_baselines(qtbot, make_window):
    from solver.simulate.library import library_for, link_efficiency

    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    assert rc.plots.simulate_button.isEnabled()
    reports = []
    rc.simulation.task.progress.connect(lambda text, f: reports.append((text, f)))
    with qtbot.waitSignal(rc.simulation.task.done, timeout=60000):
        rc.plots.simulate_button.click()
        assert rc.plots.simulate_button.text() == "Cancel simulation"
    # progress crossed from the worker thread into the GUI thread (one per simulated size at least)
    assert reports and all(
        t.startswith(("build ", "simulate", "library model")) for t, _ in reports
    )
    assert reports[0][0] == "build routes 0 %"  # the baselines' routes are built first
    assert reports[-1][1] == pytest.approx(1.0)
    labels = rc.plots.labels()
    assert "ForestColl" in labels and "ring" in labels
    fc = rc.plots.series["ForestColl"]
    assert fc.xData[-1] >= 1e9
    # large messages approach the bound on links at the library's efficiency (as the CLI runs)
    efficiency = min(
        link_efficiency(rc.state.schedule.topology, library_for(rc.state.schedule.topology))
    )
    assert 0.5 < efficiency < 1
    assert 0.9 * efficiency * 800 / 3 <= fc.yData[-1] <= efficiency * 800 / 3 * (1 + 1e-9)
    assert any(label.startswith("nccl (") for label in labels)  # the library's pick
    assert rc.plots.simulate_button.text() == "Simulate"


def test_staged_display_ends_in_the_same_state_and_yields_to_the_loop(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    s = ring4_schedule()
    rc.show_schedule(s, staged=True)
    # only the first stage ran: the summary is there, the trees list not yet
    assert "800/3" in rc.summary.text()
    assert rc.trees_view.model.rowCount() == 0
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=2000):
        pass
    assert rc.trees_view.model.rowCount() == 8
    assert len(rc.overlays.heat.colors) == 8
    # a clear while a staged display is under way stops it
    rc.show_schedule(s, staged=True)
    rc.clear_results()
    qtbot.wait(50)
    assert rc.trees_view.model.rowCount() == 0 and rc.overlays.heat.colors == {}


def test_opening_another_fabric_clears_the_result(qtbot, make_window):
    from solver.io.templates import mi250

    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    w.document.load_topology(mi250(1))
    assert rc.state.schedule is None and not rc.state.stale
    assert "No result" in rc.summary.text()
    assert rc.canvas.links.colors is None and rc.overlays.cut.badge is None


def test_hovering_a_link_on_the_canvas_shows_its_load(qtbot, make_window, monkeypatch):
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QToolTip

    shown = []
    monkeypatch.setattr(
        QToolTip, "showText", staticmethod(lambda pos, text, *a: shown.append(text))
    )
    w = make_window()
    solve_and_wait(qtbot, w)
    w.canvas.fit_view()
    qtbot.wait(20)
    scene_pos = w.canvas.view_box.mapViewToScene(QPointF(0.5, 1.0))  # middle of gpu3-gpu2
    w.canvas.hover.mouse_moved(scene_pos)
    assert shown, "no tooltip"
    assert "gpu2 → gpu3:" in shown[-1] and "load 100.0% of bandwidth" in shown[-1]
