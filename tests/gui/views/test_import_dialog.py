"""The NCCL import dialog (--intra, per-class overrides) and the scale-up warning banner."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QFileDialog

from fc_gui.controllers.file_actions import read_fabric
from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from fc_gui.views.import_dialog import NcclImportDialog
from solver import solve
from solver.io.formats import load
from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE

REAL = Path(__file__).resolve().parents[2] / "data" / "real" / "topo"
SKELETON = REAL / "azhpc_ndv4-topo.xml"  # PCI devices only: the GPU fabric needs --intra
MI250 = REAL / "rccl_topo_16p1h.xml"
PCIE_ONLY = REAL / "rccl_topo_8p_pcie.xml"


def _window(qtbot, tmp_path, results: bool = False) -> MainWindow:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(None, settings=settings, state_dir=tmp_path, install_results=False)
    if results:
        w.results_controller = install(w, warmup=False)
    qtbot.addWidget(w)  # qtbot closes it before fixtures tear down: never ask about edits
    w.file_actions.confirm_discard = lambda reason="": True
    w.resize(1000, 700)
    w.show()
    return w


@pytest.fixture
def window(qtbot, tmp_path):
    return _window(qtbot, tmp_path)


def _choose(monkeypatch, path: Path, fill) -> None:
    """The file dialog picks ``path``; the import dialog is filled by ``fill`` then OK'd
    through its real ``accept`` (refused options keep it open: exec returns Rejected)."""
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), ""))
    )
    seen: list[NcclImportDialog] = []

    def run(dialog):
        seen.append(dialog)
        fill(dialog)
        dialog.accept()
        return dialog.result()

    monkeypatch.setattr(NcclImportDialog, "exec", run)
    return seen


def test_dialog_options_match_the_command_line(qtbot):
    d = NcclImportDialog(None)
    qtbot.addWidget(d)
    assert d.options() == {"boxes": 1, "fabric": "ib"}
    d.intra.setText("nvswitch:h100")
    d.overrides["xgmi"].setValue(50)
    d.boxes.setValue(2)
    d.fabric.setCurrentText("rail")
    assert d.options() == {
        "boxes": 2,
        "fabric": "rail",
        "intra": "nvswitch:h100",
        "bandwidth": {"xgmi": 50.0},
    }
    d.intra.setText("torus:9")
    with pytest.raises(TopologyError, match="--intra"):
        d.options()
    d.accept()  # refused: stays open with the one-line reason
    assert d.result() != QDialog.DialogCode.Accepted
    assert "--intra" in d.error.text()


def test_import_skeleton_with_intra_and_override(window, monkeypatch, errors):
    _choose(monkeypatch, SKELETON, lambda d: d.intra.setText("nvswitch:240"))
    window.file_actions.import_dialog()
    topo = window.document.to_topology()
    want = load(SKELETON, check=False, intra="nvswitch:240")
    assert (
        sum(n.kind == COMPUTE for n in topo.nodes) == sum(n.kind == COMPUTE for n in want.nodes) > 0
    )
    assert len(topo.links) == len(want.links)
    assert not window.fabric_warnings.warnings  # the given NVSwitch joins the GPUs
    assert not window.fabric_warnings.banner.isVisible()

    _choose(monkeypatch, MI250, lambda d: d.overrides["xgmi"].setValue(10))
    window.undo_stack.setClean()
    window.file_actions.import_dialog()
    xgmi = [
        ln for ln in window.document.to_topology().links if ln.extra.get("link_class") == "xgmi"
    ]
    assert xgmi and all(float(ln.bandwidth) % 10 == 0 for ln in xgmi)
    assert max(float(ln.bandwidth) for ln in xgmi) <= 40  # count x 10, not x 36
    assert errors == []


def test_skeleton_without_intra_says_so_in_the_one_dialog(window, monkeypatch, errors):
    before = window.document.to_topology()
    seen = _choose(monkeypatch, SKELETON, lambda d: None)  # OK with the field left empty
    window.file_actions.import_dialog()
    (dialog,) = seen
    text = dialog.error.text()
    assert "GPU-to-GPU fabric is missing" in text and "--intra" in text and "8 GPUs" in text
    assert str(SKELETON) not in text  # the dialog already names the file
    assert errors == []  # no second dialog after it
    assert window.document.to_topology() == before  # nothing imported
    # the dialog says it as soon as it opens, and takes the fix
    d = NcclImportDialog(None, SKELETON)
    assert "--intra" in d.error.text()
    d.intra.setText("nvswitch:a100")
    d.accept()
    assert d.result() == QDialog.DialogCode.Accepted


def test_refused_options_after_the_dialog_give_one_error_dialog(window, monkeypatch, errors):
    """The dialog checks with the importer, but if the import still fails (the file changed
    between), the one error dialog names what is missing and the option that supplies it."""
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(SKELETON), ""))
    )
    monkeypatch.setattr(NcclImportDialog, "exec", lambda d: QDialog.DialogCode.Accepted)
    window.file_actions.import_dialog()
    assert len(errors) == 1
    assert "GPU-to-GPU fabric is missing" in errors[0][1] and "--intra" in errors[0][1]
    assert "\n" not in errors[0][1]


def test_full_dump_refuses_intra_in_the_dialog(qtbot):
    d = NcclImportDialog(None, MI250)
    qtbot.addWidget(d)
    assert d.error.text() == ""  # a full dump imports as it is
    d.intra.setText("mesh:48")
    d.accept()
    assert d.result() != QDialog.DialogCode.Accepted
    assert "skeleton dumps only" in d.error.text()


def test_pcie_only_dump_shows_the_warning_banner(window):
    banner = window.fabric_warnings.banner
    for path, warned in ((PCIE_ONLY, True), (MI250, False)):
        window.document.load_topology(read_fabric(path)[0])
        assert banner.isVisible() == warned
        if warned:
            assert "box b0" in banner.text() and "PCIe" in banner.text()
            # visible: inside the canvas, not hidden under another widget's area
            canvas = window.canvas
            assert canvas.rect().contains(banner.geometry())
            assert banner.width() > 100 and banner.height() > 10


def test_pcie_only_warning_is_in_the_results_summary(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, results=True)
    topo = read_fabric(PCIE_ONLY)[0]
    w.document.load_topology(topo)
    rc = w.results_controller
    rc.show_schedule(solve(topo))
    text = rc.summary.text()
    assert "Fabric:" in text and "box b0" in text
    w.document.load_topology(read_fabric(MI250)[0])  # a fabric with xGMI: no warning
    rc.show_schedule(solve(w.document.to_topology()))
    assert "Fabric:" not in rc.summary.text()
    rc.shutdown()
    w.undo_stack.setClean()
