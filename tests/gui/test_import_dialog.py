"""The NCCL import dialog (--intra, per-class overrides) and the scale-up warning banner."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QFileDialog

from fc_gui.main_window import MainWindow
from fc_gui.views.import_dialog import NcclImportDialog
from solver.io.formats import load
from solver.model.errors import TopologyError
from solver.model.topology import COMPUTE

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "topo"
SKELETON = REAL / "azhpc_ndv4-topo.xml"  # PCI devices only: the GPU fabric needs --intra
MI250 = REAL / "rccl_topo_16p1h.xml"
PCIE_ONLY = REAL / "rccl_topo_8p_pcie.xml"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(None, settings=settings, state_dir=tmp_path, install_results=False)
    qtbot.addWidget(w)
    w.resize(1000, 700)
    w.show()
    yield w
    monkeypatch.setattr(w.file_actions, "confirm_discard", lambda *a: True)
    w.undo_stack.setClean()


def test_dialog_options_match_the_command_line(qtbot):
    d = NcclImportDialog(None, "x.xml")
    qtbot.addWidget(d)
    assert d.options() == {"boxes": 1, "fabric": "ib"}
    d.intra.setText("nvswitch:h100")
    d.overrides["xgmi"].setValue(50)
    d.boxes.setValue(2)
    d.fabric.setCurrentText("rail")
    assert d.options() == {
        "boxes": 2, "fabric": "rail", "intra": "nvswitch:h100", "bandwidth": {"xgmi": 50.0},
    }
    d.intra.setText("torus:9")
    with pytest.raises(TopologyError, match="--intra"):
        d.options()
    d.accept()  # refused: stays open with the one-line reason
    assert d.result() != QDialog.DialogCode.Accepted
    assert "--intra" in d.error.text()


def test_import_skeleton_with_intra_and_override(window, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(SKELETON), "")))

    def fill(dialog):
        dialog.intra.setText("nvswitch:240")
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(NcclImportDialog, "exec", fill)
    window.file_actions.import_dialog()
    topo = window.document.to_topology()
    want = load(SKELETON, check=False, intra="nvswitch:240")
    assert sum(n.kind == COMPUTE for n in topo.nodes) == sum(n.kind == COMPUTE for n in want.nodes) > 0
    assert len(topo.links) == len(want.links)
    assert not window.fabric_warnings.warnings  # the given NVSwitch joins the GPUs

    def override(dialog):
        dialog.overrides["xgmi"].setValue(10)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(MI250), "")))
    monkeypatch.setattr(NcclImportDialog, "exec", override)
    window.undo_stack.setClean()
    window.file_actions.import_dialog()
    xgmi = [ln for ln in window.document.to_topology().links if ln.extra.get("link_class") == "xgmi"]
    assert xgmi and all(float(ln.bandwidth) % 10 == 0 for ln in xgmi)
    assert max(float(ln.bandwidth) for ln in xgmi) <= 40  # count x 10, not x 36


def test_pcie_only_dump_shows_the_warning_banner(window):
    from fc_gui.controllers.file_actions import read_fabric

    banner = window.fabric_warnings.banner
    for path, warned in ((PCIE_ONLY, True), (MI250, False)):
        window.document.load_topology(read_fabric(path)[0])
        assert banner.isVisible() == warned
        if warned:
            assert "box b0" in banner.text() and "PCIe" in banner.text()
