"""New-from-template dialog: the gallery of ``solver.io.templates.TEMPLATES`` with a parameter form,
a live node/link count and a preview canvas."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.document import TopologyDocument
from fc_gui.model.result_text import fabric_counts
from fc_gui.views.canvas import FabricCanvas
from solver.io.templates import TEMPLATES
from solver.model.errors import ForestCollError
from solver.model.topology import Topology

PREVIEW_LIMIT = 3000  # nodes; bigger fabrics only show their counts


class TemplateGallery(QDialog):
    """Pick a template and its parameters; ``topology`` holds the result after ``accept``."""

    def __init__(self, parent=None, initial: str = "dgx_a100") -> None:
        super().__init__(parent)
        self.setWindowTitle("New fabric from template")
        self.resize(980, 600)
        self.topology: Topology | None = None
        self.list = QListWidget()
        self.keys = list(TEMPLATES)
        for key in self.keys:
            self.list.addItem(TEMPLATES[key].title)
        self.list.setMaximumWidth(230)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.form_holder = QWidget()
        self.form = QFormLayout(self.form_holder)
        self.count = QLabel()
        self.count.setStyleSheet("font-weight: bold;")
        self.preview_doc = TopologyDocument()
        self.preview = FabricCanvas(self.preview_doc)
        self.preview.setMinimumSize(420, 320)
        self.preview.setInteractive(False)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        side = QVBoxLayout()
        side.addWidget(self.description)
        side.addWidget(self.form_holder)
        side.addWidget(self.count)
        side.addStretch(1)
        middle = QHBoxLayout()
        middle.addWidget(self.list)
        middle.addLayout(side, 1)
        middle.addWidget(self.preview, 2)
        lay = QVBoxLayout(self)
        lay.addLayout(middle)
        lay.addWidget(self.buttons)

        self.fields: dict[str, QSpinBox | QDoubleSpinBox] = {}
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.update_preview)
        self.list.currentRowChanged.connect(self._select)
        self.list.setCurrentRow(self.keys.index(initial) if initial in self.keys else 0)

    @property
    def current_key(self) -> str:
        return self.keys[max(0, self.list.currentRow())]

    def _select(self, row: int) -> None:
        spec = TEMPLATES[self.keys[row]]
        self.description.setText(spec.description)
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        for p in spec.params:
            if p.type is int:
                w = QSpinBox()
                w.setRange(int(p.min), int(p.max) if p.max is not None else 1_000_000)
                w.setValue(int(p.default))
            else:
                w = QDoubleSpinBox()
                w.setDecimals(3)
                w.setRange(float(p.min), float(p.max) if p.max is not None else 1e9)
                w.setValue(float(p.default))
            w.valueChanged.connect(lambda *_: self._timer.start())
            self.form.addRow(p.label, w)
            self.fields[p.name] = w
        self.update_preview()

    def values(self) -> dict:
        return {name: w.value() for name, w in self.fields.items()}

    def build(self) -> Topology:
        spec = TEMPLATES[self.current_key]
        values = self.values()
        for p in spec.params:  # 300.0 -> 300 so bandwidths stay integers
            if p.type is float and float(values[p.name]).is_integer():
                values[p.name] = int(values[p.name])
        return spec.function(**values)

    def update_preview(self) -> None:
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        try:
            topo = self.build()
        except ForestCollError as exc:
            self.topology = None
            self.count.setText(f"cannot build: {exc}")
            ok.setEnabled(False)
            return
        self.topology = topo
        ok.setEnabled(True)
        n_compute = len(topo.compute_ids)
        self.count.setText(fabric_counts(n_compute, len(topo.nodes) - n_compute, len(topo.links)))
        if len(topo.nodes) <= PREVIEW_LIMIT:
            self.preview_doc.load_topology(topo)
            self.preview.fit_view()
        else:
            self.preview_doc.load_topology(Topology("too big to preview", (), ()))

    def accept(self) -> None:
        if self.topology is None:
            return
        super().accept()


__all__ = ["TemplateGallery"]
