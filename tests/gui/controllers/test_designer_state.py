"""Trustworthy designer state (issue 14): no result of another fabric is ever drawn, a stale
result is greyed, the cut caption names boxes, the results file keeps what is shown."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from PySide6.QtGui import QKeySequence
from results_fixtures import FakeSolver, ring4, ring4_schedule

from fc_gui.model.commands import SetLinkPropsCommand
from fc_gui.model.result_text import cut_caption, cut_set_text
from fc_gui.views.overlays import STALE_OPACITY
from solver.io import v1
from solver.model.schedule import BottleneckCut


def solve_and_wait(qtbot, window):
    rc = window.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=30000):
        assert rc.solving.solve()
    return rc.state.schedule


def ring4_file(tmp_path, bandwidth: int = 40, name: str = "other.json"):
    """A v1 file of a fabric with the SAME node ids as ring4 (other bandwidths)."""
    topo = ring4()
    topo = replace(
        topo,
        name="ring4-slow",
        links=tuple(replace(ln, bandwidth=Fraction(bandwidth)) for ln in topo.links),
    )
    path = tmp_path / name
    path.write_text(v1.dumps(topo), encoding="utf-8")
    return path


def assert_no_result_drawn(rc):
    assert rc.state.schedule is None and not rc.state.stale
    assert "No result" in rc.summary.text()
    assert rc.canvas.links.colors is None  # no heat-map colours matched by node id
    assert rc.overlays.cut.badge is None and rc.overlays.cut.items == []
    assert rc.trees_view.model.rowCount() == 0
    assert rc.plots.labels() == [] and rc.plots._simulated == [] and rc.plots._model == []


# ---------------------------------------------------------------------- item 1: another fabric
def test_open_of_a_fabric_with_the_same_node_ids_clears_the_result(
    qtbot, make_results_window, tmp_path
):
    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    assert rc.overlays.cut.badge is not None and rc.canvas.links.colors is not None
    assert w.file_actions.open_path(ring4_file(tmp_path))
    assert set(w.document.nodes) == set(ring4_schedule().topology.compute_ids)  # same ids
    assert_no_result_drawn(rc)


@pytest.mark.parametrize("how", ["import", "template", "recovery"])
def test_import_template_and_recovery_clear_the_result_also_on_undo(
    qtbot, make_results_window, tmp_path, how
):
    from solver.io.templates import ring

    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    if how == "import":
        assert w.file_actions.open_path(ring4_file(tmp_path), replace_undoable=True)
    elif how == "template":
        w.file_actions.new_fabric(ring(4))
    else:
        other = make_results_window()
        other.undo_stack.push(
            SetLinkPropsCommand(
                other.document, {0: replace(other.document.links[0], bandwidth=Fraction(7))}
            )
        )
        assert other.file_actions.autosave()
        assert w.file_actions.offer_recovery(ask=lambda text: True)
    assert_no_result_drawn(rc)
    w.undo_stack.undo()  # the old fabric is back, but not its result: solve again to see one
    assert_no_result_drawn(rc)


def test_a_solve_of_the_old_fabric_under_way_is_dropped(qtbot, make_results_window, tmp_path):
    fake = FakeSolver(0.5)
    w = make_results_window(solve_fn=fake)
    rc = w.results_controller
    assert rc.solving.solve()
    qtbot.wait(50)
    assert rc.panel.running
    assert w.file_actions.open_path(ring4_file(tmp_path))
    assert not rc.panel.running and rc.panel.solve_button.isEnabled()
    qtbot.wait(900)  # the fake would have finished by now: its (old fabric's) result never shows
    assert_no_result_drawn(rc)
    assert rc.solving.worker.wait(2000)


def test_a_stale_result_is_greyed_everywhere_and_a_new_solve_restores_it(
    qtbot, make_results_window
):
    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    heat = dict(rc.canvas.links.colors)
    assert any(c[0] != c[2] for c in heat.values())  # coloured
    assert all(item.opacity() == 1.0 for item in rc.overlays.cut.items)
    uid = next(iter(w.document.links))
    w.undo_stack.push(
        SetLinkPropsCommand(
            w.document, {uid: replace(w.document.links[uid], bandwidth=Fraction(50))}
        )
    )
    assert rc.state.stale
    # canvas: cut shading/dashes faded, heat map in greys, caption and colour bar greyed
    assert rc.overlays.cut.items and all(
        item.opacity() == STALE_OPACITY for item in rc.overlays.cut.items
    )
    greys = rc.canvas.links.colors
    assert greys and set(greys) == set(heat)
    assert all(c[0] == c[1] == c[2] for c in greys.values())
    badge = rc.overlays.cut.badge
    assert (
        badge.greyed and badge.text().startswith("STALE") and "183,28,28" not in badge.styleSheet()
    )
    assert rc.overlays.heat.color_bar.greyed
    # docks: summary greyed with the warning first, the plotted bound faded
    assert "#8a8a8a" in rc.summary.label.styleSheet()
    assert rc.summary.text().index("Stale") < rc.summary.text().index("Optimal algbw")
    assert rc.plots.greyed and all(
        rc.plots.series[label].opacity() == 0.3 for label in rc.plots._model
    )
    # nodes moved while stale: the redrawn overlays stay greyed
    rc.overlays.redraw()
    assert all(item.opacity() == STALE_OPACITY for item in rc.overlays.cut.items)
    assert all(c[0] == c[1] == c[2] for c in rc.canvas.links.colors.values())
    solve_and_wait(qtbot, w)
    assert not rc.state.stale and not rc.overlays.cut.badge.greyed
    assert all(item.opacity() == 1.0 for item in rc.overlays.cut.items)
    assert rc.canvas.links.colors == heat
    assert rc.summary.label.styleSheet() == "" and not rc.overlays.heat.color_bar.greyed


# ---------------------------------------------------------------------- item 9: cut caption
def test_cut_caption_names_the_complement_by_box():
    from solver.io.templates import dgx_a100

    topo = dgx_a100(4)
    groups = {n.id: n.group for n in topo.nodes}
    ids = [n.id for n in topo.nodes]
    b0 = [n for n in ids if groups[n] == "b0"]
    inside = [n for n in ids if n not in b0]
    cut = BottleneckCut(
        nodes=tuple(inside),
        compute_nodes_inside=24,
        egress_bandwidth=Fraction(200),
        links=(("b1.nic0", "ib0", Fraction(25)),),
    )
    text = cut_caption(cut, ids, 32, groups)
    assert text.startswith("Bottleneck cut: S* = all but box b0\n"), text
    assert "on 1 link leaving" in text  # not "1 links"
    # S* = one box is named as such; a box plus a node too
    assert cut_set_text(b0, ids, groups) == "box b0"
    assert cut_set_text(b0 + ["ib0"], ids, groups) == "box b0, ib0"
    # without groups a long set is a count
    assert cut_set_text(inside, ids) == f"{len(inside)} shaded nodes"
    assert cut_set_text(inside[:2], ids) == "{" + ", ".join(inside[:2]) + "}"


def test_cut_caption_on_the_canvas_uses_the_documents_boxes(qtbot, make_results_window):
    from solver.io.templates import dgx_a100

    topo = dgx_a100(4)
    w = make_results_window(topology=topo)
    rc = w.results_controller
    ids = [n.id for n in topo.nodes]
    inside = tuple(n for n in ids if not n.startswith("b0."))
    cut = BottleneckCut(
        nodes=inside,
        compute_nodes_inside=24,
        egress_bandwidth=Fraction(200),
        links=(("b1.nic0", "ib0", Fraction(25)), ("b1.nic1", "ib1", Fraction(25))),
    )
    s = replace(ring4_schedule(), topology=topo, bottleneck=cut, link_load=(), trees=())
    rc.show_schedule(s)
    assert "S* = all but box b0" in rc.overlays.cut.label_text
    assert "on 2 links" in rc.overlays.cut.label_text


# ---------------------------------------------------------------------- item 11: plurals
def test_counts_and_captions_use_singular_for_one(qtbot, make_results_window):
    from solver.model.topology import COMPUTE, SWITCH, Link, Node, Topology

    topo = Topology(
        "tiny",
        (
            Node("g0", COMPUTE, x=0, y=0),
            Node("g1", COMPUTE, x=1, y=0),
            Node("sw", SWITCH, x=0, y=1),
        ),
        (Link("g0", "g1", Fraction(10)),),
    )
    w = make_results_window(topology=topo)
    assert w.status_counts.text() == "2 compute nodes, 1 switch, 1 link"
    assert w.inspector.fabric_counts.text() == "2 compute nodes, 1 switch, 1 link"
    s = ring4_schedule()
    one = replace(s.bottleneck, links=s.bottleneck.links[:1])
    w2 = make_results_window()
    w2.results_controller.show_schedule(replace(s, bottleneck=one))
    text = w2.results_controller.summary.text()
    assert "over 1 link" in text and "1 links" not in text
    assert "on 1 link leaving" in w2.results_controller.overlays.cut.label_text


# ---------------------------------------------------------------------- item 3: unsaved work
def bandwidth_edit(window, value: int) -> None:
    uid = next(iter(window.document.links))
    window.undo_stack.push(
        SetLinkPropsCommand(
            window.document, {uid: replace(window.document.links[uid], bandwidth=Fraction(value))}
        )
    )


def test_edits_are_autosaved_once_they_pause_and_undo_to_clean_forgets(qtbot, make_results_window):
    w = make_results_window()
    fa = w.file_actions
    fa.autosave_delay_ms = 80
    path = fa.recovery_path()
    bandwidth_edit(w, 33)
    assert not path.exists()  # debounced: nothing written during the edit itself
    qtbot.waitUntil(path.exists, timeout=3000)
    assert Fraction(33) in {ln.bandwidth for ln in v1.loads(path.read_text()).links}
    bandwidth_edit(w, 34)
    qtbot.waitUntil(
        lambda: Fraction(34) in {ln.bandwidth for ln in v1.loads(path.read_text()).links},
        timeout=3000,
    )
    w.undo_stack.undo()
    w.undo_stack.undo()  # back at the opened state: no unsaved work left to recover
    assert not w.is_modified() and not path.exists()


def test_recovery_offers_the_newest_autosave(qtbot, make_results_window, tmp_path):
    old, new = make_results_window(), make_results_window()
    bandwidth_edit(old, 11)
    assert old.file_actions.autosave()
    bandwidth_edit(new, 77)
    assert new.file_actions.autosave()
    # the OLDER file written last must not win: the time inside the file decides
    import json
    import os

    data = json.loads(old.file_actions.recovery_path().read_text())
    data["forestcoll_recovered_from"]["saved_at"] -= 180
    old.file_actions.recovery_path().write_text(json.dumps(data))
    os.utime(new.file_actions.recovery_path(), (1, 1))  # mtime is not what decides
    asked = []
    w = make_results_window()
    assert w.file_actions.offer_recovery(ask=lambda text: asked.append(text) or True)
    assert {ln.bandwidth for ln in w.document.links.values()} >= {Fraction(77)}
    assert Fraction(11) not in {ln.bandwidth for ln in w.document.links.values()}
    assert "1 older autosave will be discarded" in asked[0]
    # both crash files are gone; the restored work is autosaved by its new window at once
    assert sorted(p.name for p in w.file_actions.recovery_dir().iterdir()) == [
        w.file_actions.recovery_path().name
    ]


def test_recovery_leaves_the_files_of_running_designers_alone(make_results_window):
    import json
    import os
    import socket

    other = make_results_window()
    bandwidth_edit(other, 55)
    assert other.file_actions.autosave()
    path = other.file_actions.recovery_path()
    data = json.loads(path.read_text())
    data["forestcoll_recovered_from"].update(pid=os.getppid(), host=socket.gethostname())
    path.write_text(json.dumps(data))  # as if another running designer (the parent) wrote it
    w = make_results_window()
    assert not w.file_actions.offer_recovery(ask=lambda text: True)
    assert path.exists()


def test_import_and_template_ask_before_replacing_an_edited_fabric(
    make_results_window, monkeypatch
):
    from PySide6.QtWidgets import QFileDialog

    w = make_results_window()
    asked = []
    w.file_actions.confirm_discard = lambda reason="": asked.append(reason) or False
    opened = []
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: opened.append(a) or ("", ""))
    )
    bandwidth_edit(w, 9)
    before = w.document.to_topology()
    w.file_actions.import_dialog()
    w.file_actions.new_from_template()
    assert len(asked) == 2 and "import" in asked[0] and "template" in asked[1]
    assert opened == [] and w.document.to_topology() == before


# ---------------------------------------------------------------------- item 8: results file
def test_results_file_keeps_the_simulated_baselines_shown(
    qtbot, make_results_window, tmp_path, errors
):
    from solver.io.hdf5.results import read_results, read_schedules

    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    with qtbot.waitSignal(rc.simulation.task.done, timeout=60000):
        rc.plots.simulate_button.click()
    shown = {rc.plots.lines[label].name for label in rc.plots._simulated}
    assert {"ForestColl", "ring"} <= shown and any(s.startswith("nccl (") for s in shown)
    path = rc.exports.export_h5(tmp_path / "what_is_shown.h5")
    assert path is not None and errors == []
    ((name, _),) = read_schedules(path).items()
    tables = read_results(path)
    simulated = {t.algorithm: t for t in tables.values() if t.source == "simulator"}
    assert len(simulated) == len(shown)  # every simulated line on the plot is in the file
    assert simulated["forestcoll"].schedule == name  # linked to the stored schedule
    assert len(simulated["nccl"].attrs["choice"]) == len(simulated["nccl"].size_bytes)
    plotted = rc.plots.series["ring"]
    assert list(simulated["ring"].predicted_algbw) == pytest.approx(list(plotted.yData))
    # a new result drops the simulated lines from the plot, and from the next file
    solve_and_wait(qtbot, w)
    again = rc.exports.export_h5(tmp_path / "after_resolve.h5")
    assert not any(t.source == "simulator" for t in read_results(again).values())


# ---------------------------------------------------------------------- item 4: background work
def fake_sweep(seconds: float, honour_cancel: bool, calls: list):
    """A stand-in for solver.simulate.sweep: ``seconds`` of work; polls cancel if told to."""
    import time

    from solver.model.errors import Cancelled
    from solver.simulate import sweep

    def run(topo, collective, algorithms, sizes, schedule=None, cancel=None, **kw):
        calls.append(time.monotonic())
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if honour_cancel and cancel is not None and cancel.is_set():
                raise Cancelled("cancelled")
            time.sleep(0.01)
        return sweep(topo, collective, ["ring"], [1 << 20], schedule=schedule)

    return run


def test_cancel_stops_a_simulation_at_once(qtbot, make_results_window, monkeypatch):
    import time

    from fc_gui.controllers import simulation
    from fc_gui.controllers.background import running_workers

    calls = []
    monkeypatch.setattr(simulation, "sweep", fake_sweep(30.0, True, calls))
    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    rc.plots.simulate_button.click()
    qtbot.waitUntil(lambda: bool(calls), timeout=3000)
    assert rc.plots.simulate_button.text() == "Cancel simulation"
    t0 = time.monotonic()
    rc.plots.simulate_button.click()  # Cancel
    assert rc.plots.simulate_button.text() == "Simulate"  # at once, not when the thread ends
    assert rc.plots.status.text() == "simulation cancelled"
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=1000)  # the worker stopped too
    assert time.monotonic() - t0 < 1.0
    qtbot.wait(100)
    assert rc.plots._simulated == []
    assert rc.state.simulated == {}


def test_a_cancelled_simulation_that_runs_on_never_reaches_the_plot(
    qtbot, make_results_window, monkeypatch
):
    from fc_gui.controllers import simulation

    calls = []
    monkeypatch.setattr(simulation, "sweep", fake_sweep(0.6, False, calls))  # deaf to cancel
    w = make_results_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    rc.plots.simulate_button.click()
    qtbot.waitUntil(lambda: bool(calls), timeout=3000)
    rc.simulation.cancel()
    rc.plots.simulate_button.click()  # a new simulation may start while the old one winds down
    assert rc.plots.simulate_button.text() == "Cancel simulation"
    with qtbot.waitSignal(rc.simulation.task.done, timeout=5000) as blocker:
        pass
    assert len(calls) == 2 and {r.algorithm for r in blocker.args[0].rows} == {"ring"}
    assert rc.plots._simulated == ["ring"]


def test_stop_workers_cancels_every_solve_within_a_second(qtbot):
    import time

    from fc_gui.controllers.background import BackgroundTask, running_workers, stop_workers
    from solver.model.errors import Cancelled

    def long_solve(progress, cancel):
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if cancel.is_set():
                raise Cancelled("cancelled")
            time.sleep(0.01)

    workers = [BackgroundTask() for _ in range(2)]
    for worker in workers:
        worker.start(long_solve)
    qtbot.wait(100)
    assert running_workers() == 2
    t0 = time.monotonic()
    assert stop_workers(1000)
    assert time.monotonic() - t0 < 1.0 and running_workers() == 0


QUIT_PROBE = r"""
import argparse, sys, time
import solver
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

real = solver.solve
def solve(*args, **kwargs):
    if kwargs["topology"].name == "jit-warmup":
        return real(*args, **kwargs)
    end = time.monotonic() + 30
    while time.monotonic() < end:  # a long solve
        if sys.argv[1] == "cancellable" and kwargs["cancel"].is_set():
            raise solver.Cancelled("cancelled")
        time.sleep(0.01)
solver.solve = solve

from fc_gui.app import run
app = QApplication(["probe"])

def start():
    w = next(x for x in app.topLevelWidgets() if type(x).__name__ == "MainWindow")
    assert w.results_controller.solving.solve()
    QTimer.singleShot(300, w.close)  # quit while it runs
QTimer.singleShot(500, start)
sys.exit(run(argparse.Namespace(topo=None, solve=False, screenshot=None, figure=None, width=None,
                                  no_recovery=True, boxes=1, fabric="ib", intra=None)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["cancellable", "deaf"])
def test_quitting_during_a_solve_exits_cleanly(tmp_path, kind):
    import os
    import subprocess
    import sys
    import time

    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        HOME=str(tmp_path),
        XDG_DATA_HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path),
    )
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", QUIT_PROBE, kind],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    elapsed = time.monotonic() - t0
    assert out.returncode == 0, out.stderr[-800:]  # was 134: QThread destroyed while running
    assert "QThread" not in out.stderr and "Traceback" not in out.stderr
    assert elapsed < 20  # the 30 s solve was not waited for
    stuck = "still running at exit" in out.stderr
    assert stuck == (kind == "deaf"), out.stderr[-800:]


# ---------------------------------------------------------------------- item 11: the Solve dock
def test_the_stale_banner_never_squeezes_the_solve_fields(qtbot, make_results_window, tmp_path):
    w = make_results_window()
    rc = w.results_controller
    p = rc.panel
    w.resize(w.minimumSizeHint())  # the shortest the window gets
    qtbot.wait(50)
    fields = (p.collective_box, p.trees_box, p.solve_button, p.progress_bar, p.auto_box)
    before = [f.geometry() for f in fields]
    assert all(
        f.height() >= f.minimumSizeHint().height() for f in fields if f is not p.progress_bar
    )
    solve_and_wait(qtbot, w)
    bandwidth_edit(w, 20)
    assert rc.state.stale and p.stale_label.isVisible()
    qtbot.wait(50)
    assert [f.geometry() for f in fields] == before  # nothing moved or shrank
    label = p.stale_label
    assert label.height() >= label.heightForWidth(label.width())  # its text is not clipped
    # opening another fabric leaves no progress or status of the old solve
    assert w.file_actions.open_path(ring4_file(tmp_path))
    assert p.progress_bar.value() == 0 and p.phase_label.text() == "" and not p.stale


# ---------------------------------------------------------------------- item 11: the Help menu
def test_help_menu_has_a_quick_start_and_the_real_shortcuts(qtbot, make_results_window):
    from fc_gui.controllers.lecture import install as install_lecture

    w = make_results_window()
    w.lecture_controller = install_lecture(w)
    titles = [a.text() for a in w.help_menu.actions() if not a.isSeparator()]
    assert {"&Quick start", "&Keyboard shortcuts", "&About"} <= set(titles)
    quick = w.show_quick_start()
    assert quick.isVisible() and not quick.isModal()
    text = quick.text()
    for step in (
        "Open a fabric",
        "Solve",
        "Ask what if",
        "stale",
        "Ctrl+R",
        "draw one by hand",
        "Add compute nodes (C)",
        "Studies",
        "Lecture mode (Ctrl+Shift+L)",
        "Link bandwidths (Ctrl+Shift+B)",
    ):
        assert step.lower() in text.lower(), step
    dialog = w.show_shortcuts()
    keys = {what: key for _, what, key in dialog.rows}
    # read from the actions: the solve shortcut, undo, the tools, the window's Escape
    assert keys["Solve"] == "Ctrl+R, F5" and keys["Undo"] == "Ctrl+Z"
    assert keys["Add link"] == "L" and keys["Cancel tool"] == "Esc"
    assert keys["Cancel solve"] == "Ctrl+." and keys["Quick start"] == "F1"
    assert all(len(set(k.split(", "))) == len(k.split(", ")) for k in keys.values())  # no twins
    shown = dialog.text().splitlines()
    assert shown[shown.index("Solve") - 1] == "Ctrl+R, F5"  # the key beside its action
    assert "Right-click" in dialog.text()
    # a shortcut changed at run time shows up: nothing is hard-coded
    w.results_controller.menu.solve_action.setShortcut(QKeySequence("Ctrl+J"))
    assert ("Solve", "Solve", "Ctrl+J") in w.show_shortcuts().rows
    # the keys the quick start names are the window's
    assert keys["Add compute node"] == "C" and keys["Add switch"] == "W"
    assert any(k == "Ctrl+Shift+L" for k in keys.values())
    assert any(k == "Ctrl+Shift+B" for k in keys.values())


def test_a_studys_resilience_map_is_not_drawn_on_another_fabric(make_results_window, tmp_path):
    from fc_gui.controllers.studies import install as install_studies

    w = make_results_window()
    studies = install_studies(w)
    rows = [
        {"element": "gpu0--gpu1", "kind": "link", "change_pct": -25.0},
        {"element": "gpu2", "kind": "node", "change_pct": -50.0},
    ]
    studies.overlay.show_rows("failures", rows)
    assert studies.overlay.active and studies.overlay.by_node
    assert w.canvas.links.colors  # the map colours the links
    assert w.file_actions.open_path(ring4_file(tmp_path))  # same node ids, another fabric
    assert not studies.overlay.active and not studies.overlay.by_node
    assert w.canvas.links.colors is None
    assert "replaced" in studies.dock.status.text()


def test_a_result_that_arrives_stale_is_greyed_from_the_start(qtbot, make_results_window):
    w = make_results_window()
    rc = w.results_controller
    rc.show_schedule(ring4_schedule(), stale=True)  # the fabric was edited during its solve
    assert rc.state.stale and rc.overlays.cut.badge.greyed
    assert rc.plots._model and all(
        rc.plots.series[label].opacity() == 0.3 for label in rc.plots._model
    )
    assert all(c[0] == c[1] == c[2] for c in rc.canvas.links.colors.values())


def test_dialogs_are_wide_enough_for_their_titles(qtbot):
    """Issue 26: openbox elided "Export MSCCL XML" to "Export...CL XML" on a narrow dialog."""
    from PySide6.QtGui import QFontDatabase, QFontMetrics

    from fc_gui.controllers.export_actions import MscclOptionsDialog
    from fc_gui.views.dialog_titles import TITLE_BAR_BUTTONS_PX, keep_title_whole, title_width
    from fc_gui.views.lecture_panel import LectureStartDialog

    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.TitleFont)
    font.setBold(True)
    for dialog in (MscclOptionsDialog(), LectureStartDialog()):
        qtbot.addWidget(dialog)
        text = QFontMetrics(font).horizontalAdvance(dialog.windowTitle())
        assert dialog.minimumWidth() >= text + TITLE_BAR_BUTTONS_PX
        dialog.show()
        assert dialog.width() >= title_width(dialog.windowTitle())
    from PySide6.QtWidgets import QDialog

    long = QDialog()
    qtbot.addWidget(long)
    long.setWindowTitle("x" * 500)
    assert keep_title_whole(long, cap=900).minimumWidth() == 900


def test_a_big_cut_is_named_by_its_gpus_not_counted():
    """Issue 26: on the 16-GCD MI250 host (RCCL's rccl_topo_16p1h.xml) the caption read
    "S* = 50 shaded nodes". Named by its GPUs, with the devices beside them counted."""
    from pathlib import Path

    import solver
    from solver.io.formats import load

    topo = load(Path(__file__).parents[2] / "data/real/topo/rccl_topo_16p1h.xml")
    cut = solver.solve(topo).bottleneck
    ids = [n.id for n in topo.nodes]
    groups = {n.id: n.group for n in topo.nodes}
    kinds = {n.id: (n.kind, n.role) for n in topo.nodes}
    # without kinds: a count (50 nodes before Broadcom switches were flattened as NCCL does)
    assert cut_set_text(cut.nodes, ids, groups) == f"{len(cut.nodes)} shaded nodes"
    assert len(cut.nodes) > 40
    text = cut_set_text(cut.nodes, ids, groups, kinds)
    outside = [n.id for n in topo.nodes if n.id not in set(cut.nodes)]
    gpus_out = [n for n in outside if kinds[n][0] == "compute"]
    assert text.startswith("all but " + ", ".join(gpus_out) + " (and "), text
    assert text.endswith(" beside them)") and "PCIe switch" in text
    # the inside named the same way when it is the shorter side
    small = [*gpus_out, *(n for n in outside if kinds[n][0] != "compute")]
    assert cut_set_text(small, ids, groups, kinds) == (
        "{" + ", ".join(gpus_out) + "} (with " + text.split("(and ")[1].replace(" beside them", "")
    )


def test_the_cut_caption_follows_the_states_switch_figures(qtbot, make_results_window):
    """The caption's line on marked switches comes from the result state's switch bounds: shown
    when they arrive, gone with the next result."""
    from fc_gui.model import switch_bounds as figures
    from solver.io.templates import dgx_h100_rail

    topo = dgx_h100_rail(1)
    w = make_results_window(topology=topo)
    rc = w.results_controller
    s = replace(ring4_schedule(), topology=topo, link_load=(), trees=())
    rc.show_schedule(s)
    sb = figures.SwitchBounds(figures.compute_marked(topo), error="not run in this test")
    rc.set_switch_bounds(sb)
    line = figures.caption_line(sb)
    assert rc.state.switch_bounds is sb and line in rc.overlays.cut.label_text
    rc.show_schedule(replace(s, k=3))
    assert rc.state.switch_bounds is None and line not in rc.overlays.cut.label_text
