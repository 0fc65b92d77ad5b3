"""The Studies dock: options of a failure / upgrade / sweep study, progress, a sortable table of
rows and the sweep curves (optimum vs box count, one curve per value of a second parameter).

The dock only collects options and shows state; it emits ``run_requested(dict)``,
``cancel_requested``, ``save_requested``, ``load_requested`` and ``row_selected(key)``, and
:class:`fc_gui.controllers.studies.StudiesController` does the work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from solver.model.schedule import COLLECTIVES

STUDIES = (("failures", "Failures (N-1)"), ("upgrade", "Upgrade advisor"), ("sweep", "Sweep"))
SWEEP_TEMPLATES = ("dgx_a100", "dgx_h100_rail", "mi250", "fat_tree")
CURVE_COLORS = (
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (120, 94, 240),
    (100, 100, 100),
)

#: Table columns per study: (header, row key, kind) with kind "text", "num", "pct" or "bool".
TABLE_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "failures": (
        ("Element", "element", "text"),
        ("Kind", "kind", "text"),
        ("Optimum GB/s", "algbw", "num"),
        ("Change %", "change_pct", "pct"),
        ("Connected", "connected", "bool"),
        ("Same as", "orbit", "text"),
    ),
    "upgrade": (
        ("Element", "element", "text"),
        ("Kind", "kind", "text"),
        ("Optimum GB/s", "algbw", "num"),
        ("Gain %", "change_pct", "pct"),
        ("On bottleneck", "on_bottleneck", "bool"),
        ("Blocked", "blocked", "bool"),
        ("Headroom GB/s", "headroom", "num"),
    ),
    "sweep": (
        ("Point", "point", "text"),
        ("Optimum GB/s", "algbw", "num"),
        ("Change %", "change_pct", "pct"),
        ("k", "k", "num"),
        ("Max height", "height_max", "num"),
        ("Solve s", "solve_time", "num"),
    ),
}


class _NumberItem(QTableWidgetItem):
    """A cell that sorts by its number (NaN last), shown with ``text``."""

    def __init__(self, value: float, text: str) -> None:
        super().__init__(text)
        self.value = value
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other) -> bool:
        a = self.value
        b = other.value if isinstance(other, _NumberItem) else math.inf
        return (math.isnan(b) and not math.isnan(a)) or (not math.isnan(a) and a < b)


def _cell(kind: str, value: Any) -> QTableWidgetItem:
    if kind == "text":
        return QTableWidgetItem(str(value))
    if kind == "bool":
        return _NumberItem(float(bool(value)), "yes" if value else "no")
    number = math.nan if value is None else float(value)
    if math.isnan(number):
        return _NumberItem(number, "")
    text = f"{number:+.2f}" if kind == "pct" else f"{number:.6g}"
    return _NumberItem(number, text)


class StudiesDock(QWidget):
    """Options, progress, table and sweep plot of a design study (see module docstring)."""

    run_requested = Signal(dict)
    cancel_requested = Signal()
    save_requested = Signal()
    load_requested = Signal()
    row_selected = Signal(str)
    map_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Studies")
        self.study = "failures"
        self.rows: list[dict[str, Any]] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 6, 6, 6)

        top = QHBoxLayout()
        top.addWidget(QLabel("Study"))
        self.kind_combo = QComboBox()
        for key, title in STUDIES:
            self.kind_combo.addItem(title, key)
        top.addWidget(self.kind_combo, 1)
        self.collective_combo = QComboBox()
        self.collective_combo.addItems(COLLECTIVES)
        self.collective_combo.setToolTip("Collective whose optimum the study compares")
        top.addWidget(self.collective_combo)
        outer.addLayout(top)

        self.pages = QStackedWidget()
        self.pages.addWidget(self._failures_page())
        self.pages.addWidget(self._upgrade_page())
        self.pages.addWidget(self._sweep_page())
        self.pages.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        outer.addWidget(self.pages)
        self.kind_combo.currentIndexChanged.connect(self._set_page)

        engine = QHBoxLayout()
        engine.addWidget(QLabel("Dask workers"))
        self.workers_spin = QSpinBox()
        self.workers_spin.setRange(1, 64)
        self.workers_spin.setToolTip("Worker processes of the local Dask cluster")
        engine.addWidget(self.workers_spin)
        self.symmetry_check = QCheckBox("Share swapped boxes")
        self.symmetry_check.setToolTip(
            "Elements that a swap of two whole boxes maps onto each other share one solve"
        )
        self.symmetry_check.setChecked(True)
        engine.addWidget(self.symmetry_check)
        self.map_check = QCheckBox("Colour links by impact")
        self.map_check.setChecked(True)
        engine.addWidget(self.map_check)
        engine.addStretch(1)
        outer.addLayout(engine)

        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run study")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.save_button = QPushButton("Save to HDF5…")
        self.save_button.setEnabled(False)
        self.load_button = QPushButton("Load…")
        for b in (self.run_button, self.cancel_button, self.save_button, self.load_button):
            buttons.addWidget(b)
        outer.addLayout(buttons)
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.options()))
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.save_button.clicked.connect(self.save_requested)
        self.load_button.clicked.connect(self.load_requested)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setFormat("rows %v / %m")
        outer.addWidget(self.progress)
        self.status = QLabel("Run a study of the open fabric on a local Dask cluster.")
        self.status.setWordWrap(True)
        outer.addWidget(self.status)
        self.map_check.toggled.connect(self.map_toggled)

        self._set_page(0)
        self.tabs = QTabWidget()
        self.table = QTableWidget(0, 0)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.tabs.addTab(self.table, "Rows")
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("left", "optimum algbw", units="GB/s")
        self.plot.setLabel("bottom", "boxes")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.legend = self.plot.addLegend(offset=(-10, -10))
        self.tabs.addTab(self.plot, "Sweep curves")
        outer.addWidget(self.tabs, 1)

    # ------------------------------------------------------------------ option pages
    def _set_page(self, index: int) -> None:
        """Show the options of one study; the stack is as tall as that page only."""
        for i in range(self.pages.count()):
            self.pages.widget(i).setVisible(i == index)
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            self.pages.widget(i).setSizePolicy(QSizePolicy.Policy.Preferred, policy)
        self.pages.setCurrentIndex(index)
        self.pages.adjustSize()

    def _failures_page(self) -> QWidget:
        page = QWidget()
        row = QHBoxLayout(page)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Remove"))
        self.element_checks = {}
        for key, title in (
            ("links", "links"),
            ("switches", "switches"),
            ("nics", "NICs"),
            ("compute", "GPUs"),
        ):
            box = QCheckBox(title)
            box.setChecked(key != "compute")
            self.element_checks[key] = box
            row.addWidget(box)
        row.addStretch(1)
        return page

    def _upgrade_page(self) -> QWidget:
        page = QWidget()
        row = QHBoxLayout(page)
        row.setContentsMargins(0, 0, 0, 0)
        self.upgrade_how = QComboBox()
        self.upgrade_how.addItem("× factor", "factor")
        self.upgrade_how.addItem("+ GB/s", "add")
        row.addWidget(self.upgrade_how)
        self.upgrade_value = QLineEdit("2")
        self.upgrade_value.setMaximumWidth(60)
        row.addWidget(self.upgrade_value)
        row.addWidget(QLabel("each"))
        self.upgrade_by = QComboBox()
        self.upgrade_by.addItem("link", "link")
        self.upgrade_by.addItem("class of links", "class")
        row.addWidget(self.upgrade_by)
        row.addStretch(1)
        return page

    def _sweep_page(self) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        self.template_combo = QComboBox()
        self.template_combo.addItems(SWEEP_TEMPLATES)
        form.addRow("Template", self.template_combo)
        self.boxes_edit = QLineEdit("2,4,8")
        form.addRow("Boxes (n)", self.boxes_edit)
        curve = QHBoxLayout()
        self.curve_param = QComboBox()
        self.curve_values = QLineEdit("25,50,100")
        curve.addWidget(self.curve_param)
        curve.addWidget(self.curve_values)
        form.addRow("One curve per", curve)
        self.template_combo.currentTextChanged.connect(self._fill_curve_params)
        self._fill_curve_params(self.template_combo.currentText())
        return page

    def _fill_curve_params(self, template: str) -> None:
        from solver.io.templates import TEMPLATES

        self.curve_param.clear()
        for p in TEMPLATES[template].params:
            if p.name != "n":
                self.curve_param.addItem(p.label, p.name)
        nic = self.curve_param.findData("nic_bw")
        if nic < 0:
            nic = self.curve_param.findData("ib_bw")
        if nic >= 0:
            self.curve_param.setCurrentIndex(nic)

    # ------------------------------------------------------------------ reading options
    def options(self) -> dict[str, Any]:
        """The options of the study to run (checked by the controller)."""
        study = self.kind_combo.currentData()
        out: dict[str, Any] = {
            "study": study,
            "collective": self.collective_combo.currentText(),
            "workers": self.workers_spin.value(),
            "symmetry": self.symmetry_check.isChecked(),
        }
        if study == "failures":
            out["elements"] = [k for k, box in self.element_checks.items() if box.isChecked()]
        elif study == "upgrade":
            out[self.upgrade_how.currentData()] = self.upgrade_value.text().strip()
            out["by"] = self.upgrade_by.currentData()
        else:
            out["template"] = self.template_combo.currentText()
            out["params"] = [
                f"n={self.boxes_edit.text().strip()}",
                f"{self.curve_param.currentData()}={self.curve_values.text().strip()}",
            ]
        return out

    # ------------------------------------------------------------------ state
    def set_running(self, running: bool) -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.load_button.setEnabled(not running)
        if running:
            self.save_button.setEnabled(False)
            self.progress.setRange(0, 0)  # busy until the first rows arrive

    def set_progress(self, done: int, total: int, eta_s: float | None) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        eta = "" if eta_s is None else f", about {eta_s:.0f} s left"
        self.status.setText(f"{done} of {total} rows{eta}")

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    # ------------------------------------------------------------------ results
    def show_rows(self, study: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Fill the table (sortable; failures worst first, upgrades best first)."""
        self.study = study
        self.rows = [dict(r) for r in rows]
        cols = TABLE_COLUMNS[study]
        self.table.setSortingEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(cols))
        self.table.setRowCount(len(rows))
        self.table.setHorizontalHeaderLabels([c[0] for c in cols])
        for i, row in enumerate(rows):
            for j, (_, key, kind) in enumerate(cols):
                value = row.get(key, "")
                if key == "orbit" and value == row.get("element"):
                    value = ""  # its own representative
                self.table.setItem(i, j, _cell(kind, value))
        self.table.setSortingEnabled(True)
        column = next(j for j, c in enumerate(cols) if c[1] == "change_pct")
        order = Qt.SortOrder.DescendingOrder if study == "upgrade" else Qt.SortOrder.AscendingOrder
        self.table.sortItems(column, order)
        self.table.resizeColumnsToContents()
        if study == "sweep":
            self.show_sweep(rows)
            self.tabs.setCurrentWidget(self.plot)
        else:
            self.tabs.setCurrentWidget(self.table)

    def show_sweep(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Optimum vs the first parameter, one curve per value of the second."""
        self.plot.clear()
        self.legend.clear()
        if not rows:
            return
        names = list(rows[0].get("params", {}))
        if not names:
            return
        x_name = names[0]
        curve_name = names[1] if len(names) > 1 else None
        groups: dict[Any, list[tuple[float, float]]] = {}
        for r in rows:
            params = r["params"]
            if r.get("connected", True):
                groups.setdefault(params.get(curve_name), []).append(
                    (float(params[x_name]), r["algbw"])
                )
        self.plot.setLabel("bottom", "boxes" if x_name == "n" else x_name)
        for i, (value, pts) in enumerate(sorted(groups.items(), key=lambda kv: float(kv[0] or 0))):
            pts.sort()
            color = CURVE_COLORS[i % len(CURVE_COLORS)]
            label = f"{curve_name} = {value:g}" if curve_name else "optimum"
            self.plot.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                name=label,
                pen=pg.mkPen(color, width=2),
                symbol="o",
                symbolBrush=color,
                symbolPen=None,
                symbolSize=7,
            )

    def _on_selection(self) -> None:
        items = self.table.selectedItems()
        if items:
            key_item = self.table.item(items[0].row(), 0)
            if key_item is not None:
                self.row_selected.emit(key_item.text())
