"""The summary view of a big fabric on the canvas (offscreen): engaged above the node threshold,
expand/collapse by double-click and menu, the cut shaded on the aggregates, and a big file
opened in the background while the event loop keeps turning."""

import time
from dataclasses import replace

import pytest
from PySide6.QtCore import QPointF, QSettings, Qt, QTimer
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest

from fc_gui.controllers.background import running_workers
from fc_gui.main_window import MainWindow
from fc_gui.model.document import TopologyDocument
from fc_gui.model.summary import SUMMARY_NODES
from fc_gui.views.canvas import FabricCanvas
from fc_gui.views.overlays import CutOverlay
from solver.io import v1
from solver.io.templates import hpn
from solver.model.schedule import BottleneckCut


@pytest.fixture
def small_hpn():
    return hpn(segments=2, hosts=4)  # 288 nodes: 2 segments of 4 hosts, 2 planes of 60 aggs


@pytest.fixture
def canvas(qtbot, small_hpn):
    c = FabricCanvas(TopologyDocument(), QUndoStack())
    c.summary_threshold = 100  # this small HPN is "big" here
    c.doc.load_topology(small_hpn)
    qtbot.addWidget(c)
    c.resize(900, 700)
    c.show()
    qtbot.waitExposed(c)
    c.fit_view()
    qtbot.wait(60)
    return c


def _screen(canvas, xy):
    return canvas.mapFromScene(canvas.view_box.mapViewToScene(QPointF(*xy)))


def _pod(canvas):
    g = canvas.summary.state.grouping
    return next(a for a in canvas.summary.scene.aggregates if g.aggregates[a].level == "pod")


def test_summary_engaged_above_the_threshold_only(qtbot, small_hpn):
    c = FabricCanvas(TopologyDocument(small_hpn), QUndoStack())
    qtbot.addWidget(c)
    assert not c.summary_active() and len(c.index.ids) == len(small_hpn.nodes)
    c.summary_threshold = 100
    c.rebuild()
    assert c.summary_active()
    assert len(c.summary.scene.aggregates) == 4  # 2 segments + 2 planes
    assert len(c.index.ids) == 0 and len(c.index.link_uids) == 0  # nothing drawn node by node
    assert c.summary.item.data.shape[0] == 4
    c.set_summary_enabled(False)  # View > Summary view off: the full fabric again
    assert not c.summary_active() and len(c.index.ids) == len(small_hpn.nodes)
    assert SUMMARY_NODES < 9000  # a 4096-GPU HPN (8888 nodes) opens as its summary


def test_double_click_expands_and_collapses(qtbot, canvas):
    pod = _pod(canvas)
    g = canvas.summary.state.grouping
    where = canvas.summary.scene.positions[canvas.summary.scene.aggregates.index(pod)]
    assert canvas.aggregate_at(*where) == pod
    QTest.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=_screen(canvas, where))
    assert canvas.summary.state.expanded == {pod}
    shown = set(canvas.summary.scene.aggregates)
    assert pod not in shown and set(g.aggregates[pod].children) <= shown
    assert set(canvas.index.ids) == set(g.aggregates[pod].nodes)  # its ToRs, as themselves
    # a host of it, double-clicked: its GPUs are drawn as nodes
    host = g.aggregates[pod].children[0]
    hx = canvas.summary.scene.positions[canvas.summary.scene.aggregates.index(host)]
    canvas.view_box.setRange(xRange=(hx[0] - 400, hx[0] + 400), yRange=(hx[1] - 400, hx[1] + 400))
    qtbot.wait(30)
    QTest.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=_screen(canvas, hx))
    assert host in canvas.summary.state.expanded
    assert set(g.members(host)) <= set(canvas.index.ids)
    # the context menu of one of its GPUs collapses the host; "Collapse all" the rest
    gpu = next(i for i in g.members(host) if "gpu" in i)
    menu = canvas.build_context_menu(*canvas.doc.position(gpu))
    texts = [a.text() for a in menu.actions()]
    collapse = next(
        a for a in menu.actions() if a.text().startswith("Collapse ") and a.text() != "Collapse all"
    )
    assert "Collapse all" in texts
    collapse.trigger()
    assert canvas.summary.state.expanded == {pod}
    assert not set(g.members(host)) & set(canvas.index.ids)
    assert canvas.collapse_all() and not canvas.summary.state.expanded
    assert len(canvas.summary.scene.aggregates) == 4


def test_menu_expands_the_aggregate_under_the_mouse(canvas):
    pod = _pod(canvas)
    where = canvas.summary.scene.positions[canvas.summary.scene.aggregates.index(pod)]
    menu = canvas.build_context_menu(*where)
    expand = next(a for a in menu.actions() if a.text().startswith("Expand "))
    assert "32 GPUs" in expand.text()
    expand.trigger()
    assert canvas.summary.state.expanded == {pod}


def test_cut_shades_aggregates_fully_and_partly(canvas):
    g = canvas.summary.state.grouping
    pods = [a for a in canvas.summary.scene.aggregates if g.aggregates[a].level == "pod"]
    inside = g.members(pods[0]) + [i for i in g.members(pods[1]) if i.endswith("gpu0")]
    members = set(inside)
    leaving = tuple(
        (ln.source, ln.target, ln.bandwidth)
        for ln in canvas.doc.links.values()
        if ln.source in members and ln.target not in members
    )
    cut = BottleneckCut(tuple(inside), 36, 100, leaving)
    overlay = CutOverlay(canvas)
    overlay.show_cut(cut, num_compute=64)
    shares = dict(zip(canvas.summary.scene.aggregates, canvas.summary.shares))
    assert shares[pods[0]] == 1.0 and shares[pods[1]] == pytest.approx(4 / 32)
    assert canvas.summary.cut.data.shape[0] == 2  # two aggregates shaded, the planes not
    texts = canvas.summary.captions.texts()
    assert any("S* 100%" in t for t in texts) and any("S* 12.5%" in t for t in texts)
    # the links leaving S* are dashed between the aggregates they join
    xs, _ = canvas.summary.cut_lines.getData()
    assert xs is not None and len(xs) >= 2 and len(xs) % 2 == 0
    # the caption counts the whole fabric, not only what the summary shows
    assert "Bottleneck cut" in overlay.label_text
    # expanding keeps the shading, on the hosts now shown
    canvas.expand_aggregate(pods[1])
    shares = dict(zip(canvas.summary.scene.aggregates, canvas.summary.shares))
    host = g.aggregates[pods[1]].children[0]
    assert shares[host] == pytest.approx(1 / 8)
    overlay.clear()
    assert canvas.summary.cut.data.shape[0] == 0
    xs, _ = canvas.summary.cut_lines.getData()
    assert xs is None or len(xs) == 0


@pytest.fixture
def big_file(tmp_path):
    path = tmp_path / "hpn2.json"
    path.write_text(v1.dumps(hpn(segments=2)), encoding="utf-8")  # 4504 nodes, ~1 MB
    return path


def _window(qtbot, tmp_path, results=False):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(None, settings=settings, state_dir=tmp_path / "state", install_results=results)
    qtbot.addWidget(w)
    w.file_actions.confirm_discard = lambda reason="": True
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_big_file_opens_in_the_background_and_the_loop_keeps_turning(qtbot, tmp_path, big_file):
    w = _window(qtbot, tmp_path)
    before = w.document.name
    ticks = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    assert w.file_actions.open_file(big_file)
    assert w.file_actions.is_opening()
    assert w.document.name == before  # returned at once: nothing replaced yet
    assert w.file_actions.open_bar.isVisibleTo(w) and w.file_actions.open_cancel.isVisibleTo(w)
    qtbot.waitUntil(lambda: len(w.document.nodes) == 4504, timeout=60000)
    qtbot.waitUntil(lambda: "background" in w.statusBar().currentMessage(), timeout=5000)
    timer.stop()
    assert len(ticks) >= 2  # the event loop turned while the file was read and grouped
    assert w.canvas.summary_active() and w.canvas.summary.scene is not None
    assert len(w.canvas.summary.scene.aggregates) == 4
    assert not w.file_actions.open_bar.isVisibleTo(w)
    assert w.file_path == big_file
    steps = w.file_actions.open_steps
    assert set(steps) == {"load document + canvas", "fit view, title, recent files"}


def test_background_open_can_be_cancelled(qtbot, tmp_path, big_file):
    w = _window(qtbot, tmp_path)
    before = list(w.document.nodes)
    assert w.file_actions.open_file(big_file)
    assert w.file_actions.cancel_open()
    qtbot.waitUntil(lambda: "cancelled" in w.statusBar().currentMessage(), timeout=60000)
    assert list(w.document.nodes) == before and not w.file_actions.open_bar.isVisibleTo(w)
    qtbot.wait(50)
    assert list(w.document.nodes) == before


def test_view_menu_actions_and_a_template_grouped_in_the_background(qtbot, tmp_path):
    w = _window(qtbot, tmp_path)
    actions = w.summary_view
    assert not actions.expand_action.isEnabled()
    w.file_actions.new_fabric(hpn(segments=2))  # 4504 nodes, no grouping at hand
    assert w.canvas.summary_active()
    qtbot.waitUntil(lambda: w.canvas.summary.scene is not None, timeout=60000)
    assert actions.expand_action.isEnabled() and not actions.collapse_all_action.isEnabled()
    pod = _pod(w.canvas)
    w.canvas.focused_aggregate = pod  # as a click on it does
    actions.expand_action.trigger()
    assert w.canvas.summary.state.expanded == {pod}
    assert actions.collapse_action.isEnabled()
    actions.collapse_action.trigger()
    assert not w.canvas.summary.state.expanded
    actions.toggle_action.setChecked(False)
    assert not w.canvas.summary_active() and len(w.canvas.index.ids) == 4504
    actions.toggle_action.setChecked(True)
    assert w.canvas.summary_active()
    qtbot.waitUntil(lambda: w.canvas.summary.scene is not None, timeout=60000)
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=30000)


def test_after_a_real_solve_the_cut_is_shaded_on_the_aggregates(qtbot, make_results_window):
    from solver import solve

    topo = hpn(segments=2, hosts=2)  # 32 GPUs, 220 nodes
    w = make_results_window(topo, solve_fn=solve)
    canvas = w.canvas
    canvas.summary_threshold = 100  # shown as its summary here
    canvas.rebuild()  # grouped in the window's worker
    qtbot.waitUntil(lambda: canvas.summary.scene is not None, timeout=30000)
    rc = w.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=120000):
        assert rc.solving.solve()
    cut = rc.state.schedule.bottleneck
    qtbot.waitUntil(lambda: canvas.summary.cut_nodes is not None, timeout=10000)
    assert canvas.summary.cut_nodes == frozenset(cut.nodes)
    g = canvas.summary.state.grouping
    inside = set(cut.nodes)
    for agg, share in zip(canvas.summary.scene.aggregates, canvas.summary.shares):
        a = g.aggregates[agg]
        members = g.members(agg)
        gpus = [m for m in members if m in set(topo.compute_ids)] or members
        assert share == pytest.approx(sum(m in inside for m in gpus) / len(gpus)), a.label
    assert (canvas.summary.shares > 0).any()
    assert "Bottleneck cut" in rc.overlays.cut.label_text
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=30000)


def test_optimum_and_cut_only_shades_the_summary(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, results=True)
    w.canvas.summary_threshold = 100
    w.file_actions.new_fabric(hpn(segments=2, hosts=4))
    qtbot.waitUntil(lambda: w.canvas.summary.scene is not None, timeout=60000)
    w.summary_view.optimum_action.trigger()
    qtbot.waitUntil(lambda: w.summary_view.cut_overlay is not None, timeout=120000)
    cut = w.summary_view.cut_overlay.cut
    assert cut is not None and cut.compute_nodes_inside > 0
    assert w.canvas.summary.cut_nodes == frozenset(cut.nodes)
    assert (w.canvas.summary.shares > 0).any()
    assert "algbw" in w.statusBar().currentMessage()
    assert "Bottleneck cut" in w.summary_view.cut_overlay.label_text
    # the Results dock says the optimum and the cut (not "no result yet")
    from solver.algorithm.optimum_only import solve_optimum

    expected = solve_optimum(w.document.to_topology())
    text = w.results_controller.summary.text()
    assert "No result yet" not in text and "optimum and cut only" in text
    assert f"|S*∩Vc| = {cut.compute_nodes_inside}" in text
    assert f"{float(expected.algbw):g}"[:5] in text.replace(",", "")
    # an edit the solver sees drops the cut, and the Results text with it
    n = next(iter(w.document.nodes))
    w.document.set_disabled([n], [], True)
    assert w.summary_view.cut_overlay is None and w.canvas.summary.cut_nodes is None
    assert "No result yet" in w.results_controller.summary.text()
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=30000)


def test_an_edit_that_regroups_keeps_the_open_aggregates_open(qtbot, canvas):
    pod = _pod(canvas)
    canvas.expand_aggregate(pod)
    assert canvas.summary.state.expanded == {pod}
    # a bandwidth edit on a link inside the other pod: a new grouping, the same aggregates
    g = canvas.summary.state.grouping
    other = next(
        a for a in canvas.summary.scene.aggregates if g.aggregates[a].level == "pod" and a != pod
    )
    inside = set(g.members(other))
    uid, link = next(
        (u, ln) for u, ln in canvas.doc.links.items() if ln.source in inside and ln.target in inside
    )
    old_state = canvas.summary.state
    canvas.doc.replace_links({uid: replace(link, bandwidth=link.bandwidth * 2)})
    canvas.rebuild()  # the grouping is found again (synchronously here: no provider)
    assert canvas.summary.state is not old_state
    assert canvas.summary.state.expanded == {pod}
    assert pod not in canvas.summary.scene.aggregates and other in canvas.summary.scene.aggregates
