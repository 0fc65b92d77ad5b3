"""The Studies dock in a real MainWindow: a background study on Dask, the resilience map, the
sortable table, sweep curves, cancel, errors, and save/load through the HDF5 results file."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from distributed import Client
from PySide6.QtCore import QItemSelectionModel, QSettings

from fc_gui.controllers.studies import StudiesController
from fc_gui.controllers.studies import install as install_studies
from fc_gui.main_window import MainWindow
from solver.io.hdf5.studies import read_study
from solver.io.templates import dgx_a100, fat_tree
from solver.studies import DaskEngine


@pytest.fixture(scope="module")
def dask_client():
    client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0")
    yield client
    client.close()


@pytest.fixture
def make_window(qtbot, tmp_path, dask_client):
    windows = []

    def make(topology) -> tuple[MainWindow, StudiesController]:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(topology, settings=settings, state_dir=tmp_path, install_results=False)
        ctl = install_studies(w, engine_factory=lambda workers: DaskEngine(client=dask_client))
        _record_link_colors(w.canvas)
        w.resize(1200, 800)
        w.show()
        windows.append((w, ctl))
        return w, ctl

    yield make
    for w, ctl in windows:
        ctl.shutdown()
        w.undo_stack.setClean()
        w.close()
        w.deleteLater()


def _record_link_colors(canvas) -> None:
    """Keep what the canvas was last asked to colour in ``canvas.shown_colors`` (then draw it)."""
    draw = canvas.set_link_colors
    canvas.shown_colors = None

    def record(colors):
        canvas.shown_colors = None if colors is None else dict(colors)
        draw(colors)

    canvas.set_link_colors = record


def _run(qtbot, ctl: StudiesController, **options):
    base = ctl.dock.options()
    base.update(options)
    with qtbot.waitSignal(ctl.finished, timeout=120_000) as blocker:
        assert ctl.run(base)
    return blocker.args[0]


def _table(ctl) -> list[list[str]]:
    t = ctl.dock.table
    return [[t.item(i, j).text() for j in range(t.columnCount())] for i in range(t.rowCount())]


def test_failure_study_fills_table_and_colours_links_by_drop(qtbot, make_window, errors):
    topo = fat_tree(leaves=2, spines=2, gpus_per_leaf=2, oversubscription=2)
    w, ctl = make_window(topo)
    result = _run(qtbot, ctl, study="failures", elements=["links", "switches"])
    rows = {r["element"]: r for r in result.rows}
    table = _table(ctl)
    assert len(table) == len(result.rows) == len(topo.links) + 4  # 2 leaves, 2 spines
    changes = [float(r[3]) for r in table]
    assert changes == sorted(changes)  # worst first
    assert table[0][4] == "no"  # a GPU's only link: it gets cut off
    # the canvas: each link coloured by its drop, the worst dark red, a free one green
    colors = w.canvas.shown_colors
    worst = next(r for r in result.rows if not r["connected"] and r["kind"] == "link")
    u, v = worst["element"].split("--")
    assert colors[(u, v)] == colors[(v, u)] == ctl.overlay.color_of(1.0)
    free = [r for r in result.rows if r["kind"] == "link" and r["change"] == 0]
    for r in free:
        a, b = r["element"].split("--")
        assert colors[(a, b)] == ctl.overlay.color_of(0.0)
    assert ctl.overlay.bar.isVisible()
    # hover text of a link and of a switch
    uid = next(uid for uid, ln in w.document.links.items() if (ln.source, ln.target) == (u, v))
    tip = ctl.tooltip(None, uid)
    assert f"link {worst['element']}" in tip and "disconnected" in tip
    assert "if it fails: optimum" in ctl.tooltip("spine0", None)
    # the map can be switched off and on
    ctl.dock.map_check.setChecked(False)
    assert w.canvas.shown_colors is None and not ctl.overlay.bar.isVisible()
    ctl.dock.map_check.setChecked(True)
    assert w.canvas.shown_colors is not None
    # a row selects its element on the canvas
    with qtbot.waitSignal(ctl.dock.row_selected, timeout=2000) as picked:
        # explicit command: selectRow() follows the (test-global) keyboard modifier state
        table = ctl.dock.table
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        table.selectionModel().select(table.model().index(0, 0), flags)
    key = picked.args[0]
    assert key == _table(ctl)[0][0]
    if key in w.document.nodes:
        assert w.document.selected_nodes == {key}
    else:
        (uid,) = w.document.selected_links
        link = w.document.links[uid]
        assert key.split("#")[0] in (
            f"{link.source}--{link.target}",
            f"{link.target}--{link.source}",
        )
    assert rows and not errors


def test_upgrade_by_class_and_sweep_curves(qtbot, make_window, errors):
    w, ctl = make_window(fat_tree(leaves=2, spines=2, gpus_per_leaf=2, oversubscription=2))
    result = _run(qtbot, ctl, study="upgrade", factor="3", by="class")
    assert {r["element"] for r in result.rows} == {"gpu--leaf@50", "leaf--spine@25"}
    best = _table(ctl)[0]
    # a GPU's own 50 GB/s binds (4/3 x 50 = 66.7 GB/s), not the 2:1 uplinks (100 GB/s)
    assert best[0] == "gpu--leaf@50" and float(best[3]) == pytest.approx(50.0)
    assert _table(ctl)[1][0] == "leaf--spine@25" and float(_table(ctl)[1][3]) == 0
    colors = w.canvas.shown_colors
    for ln in w.document.links.values():
        gain = 1.0 if ln.target.startswith("leaf") else 0.0
        assert colors[(ln.source, ln.target)] == ctl.overlay.color_of(gain)

    result = _run(qtbot, ctl, study="sweep", template="dgx_a100", params=["n=1,2", "nic_bw=25,50"])
    assert [r["point"] for r in result.rows] == [
        "n=1,nic_bw=25",
        "n=1,nic_bw=50",
        "n=2,nic_bw=25",
        "n=2,nic_bw=50",
    ]
    curves = ctl.dock.plot.getPlotItem().listDataItems()
    assert len(curves) == 2  # one per NIC speed
    for curve in curves:
        xs, ys = curve.getData()
        assert list(xs) == [1.0, 2.0]
    by_name = {c.name(): c.getData()[1] for c in curves}
    assert by_name["nic_bw = 50"][1] > by_name["nic_bw = 25"][1]  # faster NICs help 2 boxes
    assert by_name["nic_bw = 50"][0] == pytest.approx(2400 / 7)  # 1 box: no NICs
    assert not errors


def test_cancel_keeps_the_window_usable(qtbot, make_window, errors):
    w, ctl = make_window(dgx_a100(4))
    options = ctl.dock.options()
    options.update(study="failures", symmetry=False)
    assert ctl.run(options)
    ctl.cancel()
    qtbot.waitUntil(lambda: not ctl.is_running(), timeout=120_000)
    qtbot.wait(50)
    assert ctl.dock.run_button.isEnabled()
    assert ctl.dock.status.text() == "study cancelled" and ctl.result is None
    assert not errors


def test_bad_options_are_one_line_dialogs(qtbot, make_window, errors):
    w, ctl = make_window(dgx_a100(2))
    options = ctl.dock.options()
    options.update(study="upgrade", factor="fast", by="link")
    assert not ctl.run(options)
    assert errors and errors[0][0] == "Study" and "\n" not in errors[0][1]
    options.update(study="failures", elements=[])
    assert not ctl.run(options)
    assert "at least one" in errors[-1][1]


def test_save_and_load_through_the_results_file(qtbot, make_window, tmp_path, errors):
    topo = dgx_a100(2)
    w, ctl = make_window(topo)
    result = _run(qtbot, ctl, study="failures")
    path = tmp_path / "study.h5"
    ctl.save(path)
    stored = read_study(path, result.name)
    assert stored.complete
    assert {r["element"]: r["algbw_exact"] for r in stored.rows} == {
        r["element"]: r["algbw_exact"] for r in result.rows
    }
    w2, ctl2 = make_window(topo)
    with qtbot.waitSignal(ctl2.finished):
        ctl2.load(path, result.name)
    assert sorted(_table(ctl2)) == sorted(_table(ctl))
    assert w2.canvas.shown_colors == w.canvas.shown_colors
    worst = min(result.rows, key=lambda r: r["algbw"])
    assert Fraction(worst["algbw_exact"]) == Fraction(80, 3)
    assert math.isclose(float(_table(ctl2)[0][2]), 80 / 3, rel_tol=1e-5)
    assert not errors


@pytest.mark.slow
def test_default_engine_is_a_local_cluster_of_worker_processes(qtbot, tmp_path, errors):
    from solver.io.templates import ring

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring(5, 10), settings=settings, state_dir=tmp_path, install_results=False)
    ctl = install_studies(w)  # the default: a LocalCluster started and closed for the run
    w.show()
    try:
        result = _run(qtbot, ctl, study="failures", elements=["links"], workers=1)
        assert result.workers == 1
        assert len(result.rows) == 5
        assert all(Fraction(r["algbw_exact"]) == Fraction(25, 2) for r in result.rows)  # a path
        assert "5 rows" in ctl.dock.status.text()
    finally:
        ctl.shutdown()
        w.undo_stack.setClean()
        w.close()
        w.deleteLater()
    assert not errors


def test_impact_map_and_heat_map_share_the_links_and_the_corner(
    qtbot, tmp_path, dask_client, errors
):
    """Issue 26: the studies' colour bar was drawn over the heat map's. While the impact map
    colours the links the heat map yields them and its bar; switching the map off brings the
    heat map's colours and bar back; two visible bars stack instead of overlapping."""
    from PySide6.QtWidgets import QWidget
    from results_fixtures import FakeSolver

    from fc_gui.controllers.results import install
    from fc_gui.views.overlay_widgets import ColorBarWidget

    topo = fat_tree(leaves=2, spines=2, gpus_per_leaf=2, oversubscription=2)
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(topo, settings=settings, state_dir=tmp_path, install_results=False)
    w.results_controller = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    ctl = install_studies(w, engine_factory=lambda workers: DaskEngine(client=dask_client))
    w.resize(1366, 768)
    w.show()
    try:
        heat = w.results_controller.overlays.heat
        w.results_controller.solving.solve()
        qtbot.waitUntil(lambda: heat.active, timeout=5000)
        assert heat.color_bar.isVisible()
        _run(qtbot, ctl, study="failures", elements=["links"])
        assert ctl.overlay.bar.isVisible() and not heat.color_bar.isVisible()
        assert w.canvas.links.colors is not None
        ctl.dock.map_check.setChecked(False)
        assert heat.color_bar.isVisible() and not ctl.overlay.bar.isVisible()
        drawn = w.canvas.links.colors
        assert drawn is not None  # the heat map's colours are back on the links
        ctl.dock.map_check.setChecked(True)
        assert not heat.color_bar.isVisible()
        # two bars shown at once on one widget: the later one goes under the first
        host = QWidget()
        qtbot.addWidget(host)
        host.resize(800, 600)
        a = ColorBarWidget(heat.cmap, "a", host)
        b = ColorBarWidget(heat.cmap, "b", host)
        host.show()
        a.show()
        b.show()
        assert not a.geometry().intersects(b.geometry())
        assert b.geometry().top() > a.geometry().bottom()
        a.hide()
        assert b.geometry().top() == 12  # moves up when the first one goes
    finally:
        ctl.shutdown()
        w.results_controller.shutdown()
        w.undo_stack.setClean()
        w.close()
    assert not errors
