"""The NCCL/RCCL import dialog: boxes, network, the intra-box fabric of a skeleton dump
(``--intra``) and per-class bandwidth overrides (``--nvlink-bw`` ...), as on the command line.

Given the dump's path, the dialog reads it with the options shown: what the importer refuses
(a skeleton dump without ``--intra``, ``--intra`` on a full dump, an MLOPart device...) is said on
one line inside the dialog when it opens and when OK is pressed, and OK stays refused until the
options fit the file -- the user sees this one dialog, never a second error box after it.
"""

from __future__ import annotations

from pathlib import Path

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

from solver.io.nccl_options import INTRA_PRESETS, OVERRIDE_CLASSES, parse_intra, parse_overrides
from solver.io.nccl_xml import FABRICS, MAX_BOXES
from solver.model.errors import ForestCollError

FROM_DUMP = "from the dump"
ERROR_STYLE = "color: rgb(183,28,28);"


def _preset_names() -> str:
    return ", ".join(f"{kind}:{name}" for kind, name in INTRA_PRESETS)


class NcclImportDialog(QDialog):
    """Options of :func:`solver.io.nccl_xml.loads`; :meth:`options` gives them as keywords.

    ``path``: the dump; when given, :meth:`problem` reads it with the options shown.
    """

    def __init__(self, parent=None, path: str | Path | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path) if path else None
        name = self.path.name if self.path else ""
        self.setWindowTitle(f"Import NCCL/RCCL topology {name}".strip())
        self.setMinimumWidth(560)
        form = QFormLayout(self)
        self.boxes = QSpinBox()
        self.boxes.setRange(1, MAX_BOXES)
        self.boxes.setToolTip(
            "--boxes: copies of the dump (a dump with several host_hash values is already "
            "several boxes)"
        )
        form.addRow("Boxes (--boxes):", self.boxes)
        self.fabric = QComboBox()
        self.fabric.addItems(list(FABRICS))
        self.fabric.setToolTip("--fabric: ib = one switch for every NIC; rail = one switch per NIC index")
        form.addRow("Network between boxes (--fabric):", self.fabric)
        self.intra = QLineEdit()
        self.intra.setPlaceholderText("from the dump (skeleton: nvswitch:GBPS, mesh:GBPS, none)")
        self.intra.setToolTip(
            "--intra: the GPU-to-GPU fabric of a skeleton dump (PCI devices only); "
            f"named presets: {_preset_names()}"
        )
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
        self.error.setObjectName("importProblem")
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.setWordWrap(True)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        problem = self.problem()
        self.error.setText(problem or "")
        if problem and "--intra" in problem:
            self.intra.setFocus()

    def options(self) -> dict:
        """Keyword options for ``read_fabric``/``load`` (raises TopologyError when invalid)."""
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

    def problem(self) -> str | None:
        """Why the options shown do not import the dump (one line), or None."""
        try:
            options = self.options()
            if self.path is not None:
                from solver.io.formats import load

                load(self.path, check=False, **options)
        except ForestCollError as exc:
            return str(exc).replace(f"{self.path}: ", "") if self.path else str(exc)
        except OSError as exc:
            return f"{self.path}: {exc.strerror or exc}"
        return None

    def accept(self) -> None:
        problem = self.problem()
        if problem:
            self.error.setText(problem)
            return
        super().accept()


__all__ = ["NcclImportDialog"]
