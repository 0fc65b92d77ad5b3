"""The NCCL/RCCL import dialog: boxes, network, the intra-box fabric of a skeleton dump
(``--intra``) and per-class bandwidth overrides (``--nvlink-bw`` ...), as on the command line."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
)

from solver.io.nccl_options import OVERRIDE_CLASSES, parse_intra, parse_overrides
from solver.io.nccl_xml import FABRICS, MAX_BOXES
from solver.model.errors import TopologyError

FROM_DUMP = "from the dump"


class NcclImportDialog(QDialog):
    """Options of :func:`solver.io.nccl_xml.loads`; :meth:`options` gives them as keywords."""

    def __init__(self, parent=None, name: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Import NCCL/RCCL topology {name}".strip())
        form = QFormLayout(self)
        self.boxes = QSpinBox()
        self.boxes.setRange(1, MAX_BOXES)
        self.boxes.setToolTip("copies of the dump (a multi-host dump is already several boxes)")
        form.addRow("Boxes:", self.boxes)
        self.fabric = QComboBox()
        self.fabric.addItems(list(FABRICS))
        self.fabric.setToolTip("ib: one switch for every NIC; rail: one switch per NIC index")
        form.addRow("Network between boxes:", self.fabric)
        self.intra = QLineEdit()
        self.intra.setPlaceholderText("from the dump  (skeleton: nvswitch:450, nvswitch:h100, mesh:48)")
        self.intra.setToolTip("--intra: the GPU-to-GPU fabric of a skeleton dump")
        form.addRow("Intra-box fabric (--intra):", self.intra)
        self.overrides: dict[str, QDoubleSpinBox] = {}
        for cls, meaning in OVERRIDE_CLASSES.items():
            spin = QDoubleSpinBox()
            spin.setRange(0.0, 1_000_000.0)
            spin.setDecimals(3)
            spin.setSuffix(" GB/s")
            spin.setSpecialValueText(FROM_DUMP)  # 0 = the runtime's own figure
            spin.setToolTip(f"--{cls}-bw: {meaning}")
            self.overrides[cls] = spin
            form.addRow(f"{cls} (--{cls}-bw):", spin)
        self.error = QLabel("")
        self.error.setStyleSheet("color: rgb(183,28,28);")
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def options(self) -> dict:
        """Keyword options for ``read_fabric``/``load`` (raise TopologyError when invalid)."""
        intra = self.intra.text().strip() or None
        parse_intra(intra)
        bandwidth = {cls: s.value() for cls, s in self.overrides.items() if s.value() > 0}
        parse_overrides(bandwidth)
        out: dict = {"boxes": self.boxes.value(), "fabric": self.fabric.currentText()}
        if intra:
            out["intra"] = intra
        if bandwidth:
            out["bandwidth"] = bandwidth
        return out

    def accept(self) -> None:
        try:
            self.options()
        except TopologyError as exc:
            self.error.setText(str(exc))
            return
        super().accept()
