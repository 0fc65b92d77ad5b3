"""View > Lecture mode: stepping with buttons and keys, what each step draws, the figure at a
step, and leaving the mode as the window was."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QSettings, Qt
from results_fixtures import FakeSolver, ring4

from fc_gui.controllers.lecture import install as install_lecture
from fc_gui.controllers.lecture import preset_topology
from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def lecture(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring4(), settings=settings, state_dir=tmp_path, install_results=False)
    w.results_controller = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    lc = w.lecture_controller = install_lecture(w)
    w.resize(1300, 800)
    w.show()
    qtbot.waitExposed(w)
    yield lc
    lc.exit()
    lc.task.stop(5000)
    w.results_controller.shutdown()
    w.undo_stack.setClean()
    w.close()


def _started(qtbot, lc):
    assert lc.start()
    qtbot.waitUntil(lambda: len(lc.steps) == 7, timeout=10000)
    return lc


def _key(qtbot, lc, key):
    qtbot.keyClick(lc.window.canvas, key)


def test_menu_entries_and_entering_hides_the_docks(qtbot, lecture):
    w = lecture.window
    assert lecture.action in w.view_menu.actions() and lecture.action in w.help_menu.actions()
    assert w.docks["Solve"].isVisible() and w.tools_toolbar.isVisible()
    _started(qtbot, lecture)
    assert lecture.active and lecture.dock.isVisible()
    assert not w.docks["Solve"].isVisible() and not w.docks["Inspector"].isVisible()
    assert not w.tools_toolbar.isVisible()
    assert lecture.index == 0 and lecture.panel.title.text().startswith("The fabric")
    assert lecture.panel.counter.text() == "Step 1 of 7 · (a)"
    assert not lecture.panel.back_button.isEnabled() and lecture.panel.next_button.isEnabled()


def test_keys_step_forward_and_back_and_change_what_is_drawn(qtbot, lecture):
    lc = _started(qtbot, lecture)
    ov = lc.overlays
    canvas = lc.window.canvas
    # (a) the fabric: no result layers, short names on the canvas
    assert not ov.cut.visible and not ov.heat.visible and canvas.links.colors is None
    assert not ov.trees.trees
    # Right: (b) the cut, shaded and dashed, without the corner caption (the panel has it)
    _key(qtbot, lc, Qt.Key.Key_Right)
    assert lc.index == 1 and lc.step.key == "cut"
    assert ov.cut.visible and ov.cut.items and all(i.isVisible() for i in ov.cut.items)
    assert not ov.cut.badge.isVisible()
    assert canvas.links.colors is None  # no heat map yet
    assert "4·200/3 = 266.667 GB/s" in lc.panel.plain_text()
    # PageDown (presenter clicker): (c) the tree, first only its root
    _key(qtbot, lc, Qt.Key.Key_PageDown)
    assert lc.step.key == "tree0"
    assert len(ov.trees.trees) == 1 and ov.trees.trees[0][1].edges == ()
    assert ov.animation.step == 0 and not ov.dimmer.dimmed
    _key(qtbot, lc, Qt.Key.Key_Right)
    assert lc.step.key == "tree1"
    assert len(ov.trees.trees[0][1].edges) == 1
    assert ov.animation.step == 1 and ov.animation.holders() == {"gpu0", "gpu1"}
    assert ov.dimmer.dimmed  # the cut and the links fade under the animated tree
    first_edge = ov.trees.items[0].getData()[0][:2].copy()
    _key(qtbot, lc, Qt.Key.Key_Right)
    assert len(ov.trees.trees[0][1].edges) == 2 and ov.animation.step == 2
    # the edge drawn at level 1 stays where it was (lanes sized by the whole tree)
    assert (ov.trees.items[0].getData()[0][:2] == first_edge).all()
    # Left and PageUp go back the same way
    _key(qtbot, lc, Qt.Key.Key_Left)
    assert lc.step.key == "tree1" and len(ov.trees.trees[0][1].edges) == 1
    _key(qtbot, lc, Qt.Key.Key_PageUp)
    assert lc.step.key == "tree0" and ov.animation.step == 0 and not ov.dimmer.dimmed
    _key(qtbot, lc, Qt.Key.Key_PageUp)
    assert lc.step.key == "cut" and not ov.trees.trees and not ov.animation.trees
    # Back at the first step Left does nothing
    _key(qtbot, lc, Qt.Key.Key_Left)
    _key(qtbot, lc, Qt.Key.Key_Left)
    assert lc.index == 0


def test_buttons_reach_the_ring_step_with_heat_map_and_simulated_table(qtbot, lecture, tmp_path):
    lc = _started(qtbot, lecture)
    for _ in range(10):  # more presses than steps: stops at the last
        lc.panel.next_button.click()
    assert lc.step.key == "ring" and lc.index == 6
    assert not lc.panel.next_button.isEnabled()
    ov = lc.overlays
    assert ov.heat.visible and lc.window.canvas.links.colors == ov.heat.colors
    assert not ov.trees.trees
    # the comparison is simulated in the background (the real simulator, ring4 is tiny)
    qtbot.waitUntil(lambda: lc.plan.comparison is not None, timeout=60000)
    text = lc.panel.plain_text()
    assert "forestcoll" in text and "ring" in text and "cut bound" in text
    fc = lc.plan.comparison.row("forestcoll")
    ring = lc.plan.comparison.row("ring")
    # on a ring fabric the ring baseline is optimal too: both reach (not beat) the cut bound
    assert abs(ring.limit - 800 / 3) < 1e-6 and abs(fc.limit - 800 / 3) < 1e-6
    assert 0.99 * 800 / 3 < fc.algbw <= 800 / 3 and ring.algbw <= 800 / 3
    assert "100 %" in text
    # its figure: the heat map's colours, the cut, and the table in aligned columns
    root = ET.parse(lc.export_figure(tmp_path / "ring.svg")).getroot()
    table = root.find(f".//{SVG}g[@id='table']")
    cells = [e.text for e in table]
    assert cells[:4] == ["algorithm", "simulated algbw", "its limit", "of the cut bound"]
    assert "ring" in cells and "cut bound" in cells
    xs = {e.text: e.get("x") for e in table}
    assert xs["ring"] == xs["forestcoll"] == xs["algorithm"]  # one column
    assert root.find(f".//{SVG}linearGradient") is not None
    lc.panel.back_button.click()
    assert lc.index == 5


def test_export_figure_at_a_step_writes_what_the_step_shows(qtbot, lecture, tmp_path):
    lc = _started(qtbot, lecture)
    lc.next()  # the cut
    out = lc.export_figure(tmp_path / "cut.svg")
    root = ET.parse(out).getroot()
    cut = root.find(f".//{SVG}g[@id='cut']")
    assert cut is not None and len(list(cut)) >= 3 + 2  # 3 shaded nodes, 2 dashed links
    texts = [e.text or "" for e in root.iter(f"{SVG}text")]
    assert any("The bottleneck cut S*" in t for t in texts)
    assert any("4·200/3 = 266.667 GB/s" in t for t in texts)
    assert root.find(f".//{SVG}g[@id='trees']") is None
    lc.go(3)  # tree level 1: the tree so far, the transfer, who holds the data; dimmed
    root = ET.parse(lc.export_figure(tmp_path / "tree.svg")).getroot()
    trees = root.find(f".//{SVG}g[@id='trees']")
    assert trees is not None
    assert len(trees.findall(f"{SVG}polyline")) == 2  # the tree's edge and the animated transfer
    assert len(trees.findall(f"{SVG}circle")) == 2  # gpu0 and gpu1 hold the data
    assert root.find(f".//{SVG}g[@id='links']").get("opacity") == "0.2"
    lc.go(0)  # the fabric: no cut
    root = ET.parse(lc.export_figure(tmp_path / "fabric.svg")).getroot()
    assert root.find(f".//{SVG}g[@id='cut']") is None
    assert not list(root.iter(f"{SVG}image"))


def test_escape_leaves_and_restores_the_window(qtbot, lecture):
    w = lecture.window
    layers = w.results_controller.layers
    layers.frames_action.setChecked(False)  # the user's choice before the lecture
    before = layers.states()
    legend_height = w.canvas.legend.boundingRect().height()
    lc = _started(qtbot, lecture)
    lc.go(3)
    assert layers.frames_action.isChecked()  # the lecture shows the boxes
    assert w.canvas.labels.names.font_px() > 11
    assert w.canvas.legend.boundingRect().height() > legend_height
    _key(qtbot, lc, Qt.Key.Key_Escape)
    assert not lc.active and not lc.dock.isVisible()
    assert w.docks["Solve"].isVisible() and w.tools_toolbar.isVisible()
    assert layers.states() == before
    assert w.canvas.labels.names.font_px() == 11 and w.canvas.labels.formatter is None
    assert w.canvas.legend.boundingRect().height() == legend_height  # rows shrink back
    ov = w.results_controller.overlays
    assert not ov.animation.trees and not ov.dimmer.dimmed
    assert ov.cut.badge.isVisible()  # the corner caption is back
    # keys are the window's again: Right no longer steps, Escape cancels a tool
    index = lc.index
    _key(qtbot, lc, Qt.Key.Key_Right)
    assert lc.index == index
    from fc_gui.views.canvas import Tool

    w.canvas.set_tool(Tool.PAN)
    _key(qtbot, lc, Qt.Key.Key_Escape)
    assert w.canvas.tool is Tool.SELECT


def test_presenter_scale_enlarges_panel_and_canvas_text(qtbot, lecture):
    lc = _started(qtbot, lecture)
    small = lc.panel.body.font().pointSizeF()
    lc.panel.scale_box.setCurrentIndex(lc.panel.scale_box.count() - 1)  # 250 %
    assert lc.panel.body.font().pointSizeF() > small
    canvas = lc.window.canvas
    assert canvas.labels.px == round(11 * 2.5)
    assert 11 < canvas.labels.names.font_px() <= canvas.labels.px  # as large as fits
    assert lc.overlays.heat.color_bar.scale == 1.5  # capped: it floats over the fabric
    legend = lc.window.canvas.legend
    assert legend.opts["labelTextSize"] == "20.0pt"
    assert all("font-size:20pt" in label.item.toHtml() for _, label in legend.items)


def test_preset_fabrics_are_laid_out_for_the_lecture():
    dgx = preset_topology("dgx_a100")
    assert dgx.name == "2x DGX A100" and len(dgx.compute_ids) == 16
    mi = preset_topology("mi250")
    assert len(mi.compute_ids) == 32
    # restructured: a box's GCDs are not all in one row any more
    ys = {round(n.y, 1) for n in mi.nodes if n.group == "b0"}
    assert len(ys) > 2


def test_the_start_dialog_picks_a_preset_or_the_open_fabric(qtbot, lecture, monkeypatch):
    from fc_gui.views.lecture_panel import LectureStartDialog

    w = lecture.window
    picked = {}

    def run(dialog):
        dialog.list.setCurrentRow(dialog.keys.index(picked["key"]))
        return 1

    monkeypatch.setattr(LectureStartDialog, "exec", run)
    picked["key"] = "current"
    assert lecture.open_dialog() and lecture.active
    assert w.document.name == "ring4"  # the open fabric
    qtbot.waitUntil(lambda: len(lecture.steps) == 7, timeout=10000)
    assert not lecture.open_dialog() and not lecture.active  # a second time: leaves
    w.undo_stack.setClean()  # nothing to save before the preset replaces the fabric
    picked["key"] = "mi250"
    assert lecture.open_dialog() and lecture.active
    assert len(w.document.to_topology().compute_ids) == 32 and w.document.name == "2x MI250"
    assert lecture.panel.title.text() in ("Solving…", "The fabric: box b0, box b1")
