"""A fabric's life in the designer (issue 20 item 6): File > New (empty); template metadata
dropped once the fabric is edited away from the template; a fresh import is not "modified";
the import dialog re-checks as you type; ``forestcoll gui`` takes the import options and opens
the import dialog for a dump they do not import; results files are added to, never replaced."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog

from fc_gui.controllers.background import BackgroundTask
from fc_gui.main_window import MainWindow
from fc_gui.model.commands import (
    AddLinkCommand,
    AddNodeCommand,
    DeleteCommand,
    MoveNodesCommand,
    SetDisabledCommand,
    SetLinkPropsCommand,
)
from fc_gui.model.document import make_link, make_node
from fc_gui.model.library_choice import auto_library
from fc_gui.views.import_dialog import NcclImportDialog
from solver.io import v1
from solver.io.templates import mi250, ring
from solver.model.topology import COMPUTE

REAL = Path(__file__).resolve().parents[2] / "data" / "real" / "topo"
SKELETON = REAL / "azhpc_ndv4-topo.xml"  # 8 A100, PCI devices only: needs --intra
MI250_DUMP = REAL / "rccl_topo_16p1h.xml"


@pytest.fixture
def make_window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)

    def make(topo=None):
        w = MainWindow(topo, settings=settings, state_dir=tmp_path / "state", install_results=False)
        qtbot.addWidget(w)
        w.file_actions.confirm_discard = lambda reason="": True
        return w

    return make


def compute_count(w) -> int:
    return sum(n.kind == COMPUTE for n in w.document.nodes.values())


# ---------------------------------------------------------------------- new, templates
def test_new_empty_fabric_is_empty_untitled_unmodified_and_undoable(make_window):
    w = make_window(ring(4))
    w.file_path = Path("ring.json")
    w.file_actions.new_empty_action.trigger()
    assert w.document.counts() == (0, 0, 0) and w.document.name == "untitled"
    assert w.file_path is None and not w.is_modified()
    assert w.document.to_topology().extra == {}
    assert not w.canvas.legend.isVisible()  # no empty legend frame left on the canvas
    w.undo_stack.undo()
    assert compute_count(w) == 4 and w.is_modified()
    assert w.canvas.legend.isVisible()


def test_template_metadata_goes_once_the_fabric_is_no_longer_the_template(make_window):
    w = make_window(mi250(1))
    doc, stack = w.document, w.undo_stack
    assert doc.to_topology().extra["template"] == "mi250"
    assert auto_library(doc.to_topology())[0].name == "rccl"
    # moves and what-if switches keep it: still that machine
    first = next(iter(doc.nodes))
    stack.push(MoveNodesCommand(doc, {first: doc.position(first)}, {first: (5.0, 7.0)}))
    uid = next(iter(doc.links))
    stack.push(SetDisabledCommand(doc, link_uids=[uid], disabled=True))
    assert doc.to_topology().extra["template"] == "mi250"
    # Select all + Delete, then draw a fabric: not an MI250, not simulated as one
    doc.select_all()
    stack.push(DeleteCommand(doc, doc.selected_nodes, doc.selected_links))
    stack.push(AddNodeCommand(doc, make_node("a", COMPUTE, "gpu", 0, 0)))
    stack.push(AddNodeCommand(doc, make_node("b", COMPUTE, "gpu", 1, 0)))
    stack.push(AddLinkCommand(doc, make_link("a", "b", Fraction(50))))
    topo = doc.to_topology()
    assert "template" not in topo.extra and "template_params" not in topo.extra
    lib, why = auto_library(topo)
    assert (lib.name, lib.generation) == ("nccl", "ampere") and "no GPU model in the file" in why
    assert "template" not in v1.loads(v1.dumps(doc.to_topology(include_disabled=True))).extra
    # undoing back to the template brings its metadata back
    for _ in range(4):
        stack.undo()
    assert doc.to_topology().extra["template"] == "mi250"
    assert auto_library(doc.to_topology())[0].name == "rccl"
    # one bandwidth changed is another fabric too
    ln = doc.links[uid]
    stack.push(SetLinkPropsCommand(doc, {uid: replace(ln, bandwidth=ln.bandwidth * 2)}))
    assert "template" not in doc.to_topology().extra
    # and edited back to the template's figure (a new, equal link), it is the template again
    stack.push(SetLinkPropsCommand(doc, {uid: replace(doc.links[uid], bandwidth=ln.bandwidth)}))
    assert doc.links[uid] is not ln and doc.to_topology().extra["template"] == "mi250"


# ---------------------------------------------------------------------- imports
def _accepting(monkeypatch, fill=lambda d: None):
    seen: list[NcclImportDialog] = []

    def run(dialog):
        seen.append(dialog)
        fill(dialog)
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(NcclImportDialog, "exec", run)
    return seen


def test_a_fresh_import_is_not_modified(make_window, monkeypatch, tmp_path):
    w = make_window(ring(4))
    seen = _accepting(monkeypatch)
    assert w.file_actions.import_path(
        SKELETON, {"intra": "nvswitch:a100", "boxes": 2, "bandwidth": {"net": "25"}}
    )
    assert seen[0].intra.text() == "nvswitch:a100" and seen[0].boxes.value() == 2
    assert seen[0].overrides["net"].value() == 25
    assert compute_count(w) == 16 and not w.is_modified() and not w.isWindowModified()
    assert not w.file_actions.recovery_path().exists()
    w.undo_stack.undo()  # the fabric before it: not what was read, so unsaved
    assert compute_count(w) == 4 and w.is_modified()
    graphml = tmp_path / "ring.graphml"
    from solver.io.formats import save

    save(ring(6), graphml)
    assert w.file_actions.open_path(graphml, replace_undoable=True)
    assert compute_count(w) == 6 and not w.is_modified()


def test_the_import_dialog_rechecks_as_you_type(qtbot):
    d = NcclImportDialog(None, SKELETON, task=BackgroundTask())
    qtbot.addWidget(d)
    assert "--intra" in d.error.text()
    d.intra.setText("nvswitch:a100")
    qtbot.waitUntil(lambda: d.error.text() == "", timeout=5000)
    d.intra.setText("torus:9")
    qtbot.waitUntil(lambda: "--intra" in d.error.text(), timeout=5000)
    assert "--intra" in d.ok_button.toolTip()
    d.intra.setText("")
    qtbot.waitUntil(
        lambda: "--intra" in d.error.text() and "torus" not in d.error.text(), timeout=5000
    )


def test_the_check_of_many_boxes_runs_in_the_background(qtbot):
    d = NcclImportDialog(None, MI250_DUMP, task=BackgroundTask())
    qtbot.addWidget(d)
    assert d.error.text() == ""
    d.intra.setText("mesh:50")  # refused on a full dump
    d.boxes.setValue(4096)  # 229 377 nodes: seconds to read
    t0 = time.perf_counter()
    d.recheck_in_background()
    assert time.perf_counter() - t0 < 0.5
    qtbot.waitUntil(lambda: "--intra" in d.error.text(), timeout=60000)
    d.done(0)


# ---------------------------------------------------------------------- the gui command
def _run_gui(args, tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "solver.cli", "gui", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_gui_command_takes_the_import_options(tmp_path):
    png = tmp_path / "ndv4.png"
    out = _run_gui(
        [
            str(SKELETON),
            "--intra",
            "nvswitch:a100",
            "--boxes",
            "2",
            "--net-bw",
            "25",
            "--screenshot",
            str(png),
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert png.exists() and png.stat().st_size > 1000
    out = _run_gui([str(SKELETON), "--screenshot", str(tmp_path / "x.png")], tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and "--intra" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    ring_file = tmp_path / "ring.json"
    ring_file.write_text(v1.dumps(ring(4)), encoding="utf-8")
    out = _run_gui([str(ring_file), "--intra", "none"], tmp_path)
    assert out.returncode == 2
    assert (
        out.stderr.strip()
        == f"error: --intra applies to NCCL/RCCL .xml dumps only, not {ring_file}"
    )
    out = _run_gui(["--help"], tmp_path)
    assert "--intra" in out.stdout and "--nvlink-bw" in out.stdout and "--boxes" in out.stdout


def test_gui_command_opens_the_import_dialog_for_a_skeleton(qtbot, tmp_path, monkeypatch):
    """``forestcoll gui skeleton.xml --boxes 2 --fabric rail --net-bw 25``: the window, then the import
    dialog with those options and the reason (no --intra); filled in, the dump is imported."""
    from PySide6.QtWidgets import QApplication

    from fc_gui import app as app_module
    from fc_gui import main_window
    from solver.cli import build_parser

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    monkeypatch.setattr(main_window, "QSettings", lambda *a: settings)
    seen = _accepting(
        monkeypatch, lambda d: (seen_text.append(d.error.text()), d.intra.setText("nvswitch:a100"))
    )
    seen_text: list[str] = []

    def fake_exec(*_):
        qtbot.waitUntil(lambda: bool(seen), timeout=10000)
        return 0

    monkeypatch.setattr(QApplication, "exec", fake_exec)
    args = build_parser().parse_args(
        [
            "gui",
            str(SKELETON),
            "--boxes",
            "2",
            "--fabric",
            "rail",
            "--net-bw",
            "25",
            "--no-recovery",
        ]
    )
    assert app_module.run(args) == 0
    (dialog,) = seen
    window = dialog.parent()
    try:
        assert "--intra" in seen_text[0]
        assert dialog.boxes.value() == 2 and dialog.fabric.currentText() == "rail"
        assert dialog.overrides["net"].value() == 25
        assert compute_count(window) == 16 and not window.is_modified()
        assert window.document.to_topology().extra["fabric"] == "rail"
    finally:
        window.results_controller.shutdown()
        window.undo_stack.setClean()
        window.close()
        window.deleteLater()


# ---------------------------------------------------------------------- adding to results files
def test_results_files_and_studies_are_added_to_without_a_replace_prompt(
    monkeypatch, qtbot, make_results_window
):
    asked = []

    def save_name(parent, title, start, filters, *args, options=None, **kw):
        asked.append((title, options))
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_name))
    w = make_results_window()
    rc = w.results_controller
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=30000):
        assert rc.solving.solve()
    assert rc.exports.export_h5() is None  # cancelled in the file dialog
    from fc_gui.controllers.studies import StudiesController

    studies = StudiesController.__new__(StudiesController)
    studies.window = w
    StudiesController.save_dialog(studies)
    assert len(asked) == 2
    for title, options in asked:
        assert "added to an existing results file" in title
        assert options & QFileDialog.Option.DontConfirmOverwrite
