"""The plots dock's measured-vs-predicted table: one row per measured size.

Two selectors name the measured line and the predicted line it is compared with; the table
lists, per measured size, the measured and predicted algbw, the error
``(predicted - measured) / measured`` and the measured figure as % of the bound. It shows what
it is given (:mod:`fc_gui.model.measured` computes the rows) and reports the user's choices.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.measured import ComparisonRow

HEADERS = ("size", "measured", "predicted", "error %", "% bound")
TOOLTIPS = (
    "message size",
    "measured algbw, GB/s",
    "the predicted line's algbw at this size, GB/s",
    "(predicted − measured) / measured: positive = the model promises more",
    "measured algbw as % of the ForestColl bound (the fabric's forward-only optimum)",
)


class MeasuredErrorTable(QWidget):
    """Measured vs predicted per size (see module docstring).

    Signals
    -------
    choice_changed()
        The user picked another measured or predicted line.
    """

    choice_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.measured_box = QComboBox()
        self.measured_box.setToolTip("the measured line")
        self.reference_box = QComboBox()
        self.reference_box.setToolTip("the predicted line it is compared with")
        self.measured_box.currentIndexChanged.connect(lambda *_: self._changed())
        self.reference_box.currentIndexChanged.connect(lambda *_: self._changed())
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #b35900; font-size: 8pt;")
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        for i, tip in enumerate(TOOLTIPS):
            self.table.horizontalHeaderItem(i).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(18)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)  # fits: no sideways scroll
        header.setMinimumSectionSize(30)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        font = self.table.font()
        font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        self.table.setFont(font)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Measured", self.measured_box)
        form.addRow("vs", self.reference_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        self._updating = False
        self.rows: list[ComparisonRow] = []

    # ------------------------------------------------------------------ content
    def set_choices(
        self,
        measured: Sequence[str],
        references: Sequence[str],
        measured_current: str,
        reference_current: str,
    ) -> None:
        """Fill the two selectors (without emitting :attr:`choice_changed`)."""
        self._updating = True
        try:
            for box, items, current in (
                (self.measured_box, measured, measured_current),
                (self.reference_box, references, reference_current),
            ):
                if [box.itemText(i) for i in range(box.count())] != list(items):
                    box.clear()
                    box.addItems(list(items))
                index = box.findText(current)
                box.setCurrentIndex(index if index >= 0 else (0 if box.count() else -1))
        finally:
            self._updating = False

    def measured_choice(self) -> str:
        return self.measured_box.currentText()

    def reference_choice(self) -> str:
        return self.reference_box.currentText()

    def set_rows(self, rows: Sequence[ComparisonRow], note: str = "") -> None:
        """Show ``rows`` (and a one-line ``note`` above them, '' for none)."""
        self.rows = list(rows)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row.cells()):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(r, c, item)
        if rows:  # the large sizes, where a library is judged, in view first
            self.table.scrollToBottom()

    def cell_texts(self) -> list[list[str]]:
        """The table as shown (tests, and what a reader copies)."""
        return [
            [self.table.item(r, c).text() for c in range(self.table.columnCount())]
            for r in range(self.table.rowCount())
        ]

    def clear(self) -> None:
        self.set_choices([], [], "", "")
        self.set_rows([])

    def _changed(self) -> None:
        if not self._updating:
            self.choice_changed.emit()
