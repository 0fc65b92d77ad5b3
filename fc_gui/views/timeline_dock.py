"""The Timeline panel: the whole collective round by round (model:
:mod:`fc_gui.model.timeline`) -- chunks per tree, Back / Play / Step, a round slider, the event
list (the current round's rows highlighted) and what the clicked transfer moves."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.timeline import Timeline
from solver.model.units import format_size

CURRENT_ROW = QColor(252, 228, 236)
COLUMNS = ("round", "shard of", "tree", "chunk", "hop", "bytes")


class TimelineDock(QWidget):
    """Controls and event list; signals what the user asks for (the controller acts)."""

    round_requested = Signal(int)
    play_toggled = Signal()
    chunks_changed = Signal(int)
    event_selected = Signal(int)  # index into the timeline's events
    root_changed = Signal(str)  # "" = every shard

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Timeline")
        self.timeline: Timeline | None = None
        self.round = 0
        self.shown: list[int] = []  # the event index of each table row
        top = QHBoxLayout()
        self.chunks_box = QSpinBox()
        self.chunks_box.setRange(1, 64)
        self.chunks_box.setValue(4)
        self.chunks_box.setToolTip("Chunks each tree's share is split into (pipelined)")
        self.back_button = QPushButton("◀ Back")
        self.play_button = QPushButton("Play")
        self.step_button = QPushButton("Step ▶")
        self.root_box = QComboBox()
        self.root_box.setToolTip("List and draw the transfers of one GPU's shard, or all")
        self.root_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        top.addWidget(QLabel("Chunks"))
        top.addWidget(self.chunks_box)
        for b in (self.back_button, self.play_button, self.step_button):
            top.addWidget(b)
        top.addStretch(1)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.round_label = QLabel("No result yet: press Solve.")
        self.round_label.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        second = QHBoxLayout()  # which shard, and the rounds
        second.addWidget(QLabel("Shard of"))
        second.addWidget(self.root_box)
        second.addWidget(self.slider, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(second)
        lay.addWidget(self.round_label)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.detail)
        self.back_button.clicked.connect(lambda: self.round_requested.emit(self.round - 1))
        self.step_button.clicked.connect(lambda: self.round_requested.emit(self.round + 1))
        self.play_button.clicked.connect(self.play_toggled.emit)
        self.slider.valueChanged.connect(
            lambda v: self.round_requested.emit(v) if v != self.round else None
        )
        self.chunks_box.valueChanged.connect(self.chunks_changed.emit)
        self.root_box.currentIndexChanged.connect(
            lambda _: self.root_changed.emit(self.root_box.currentData() or "")
        )
        self.table.itemSelectionChanged.connect(self._on_selection)
        self.set_timeline(None)

    def set_timeline(
        self, timeline: Timeline | None, message: str = "", shown: list[int] | None = None
    ) -> None:
        """List ``timeline``'s events (``shown``: the indices to list, default all)."""
        self.timeline = timeline
        self.table.setRowCount(0)
        self.detail.setText("")
        enabled = timeline is not None and bool(timeline.events)
        for w in (self.back_button, self.play_button, self.step_button, self.slider):
            w.setEnabled(enabled)
        if timeline is None:
            self.shown = []
            self.round_label.setText(message or "No result yet: press Solve.")
            self.slider.setRange(0, 0)
            return
        roots = sorted({e.root for e in timeline.events})
        keep = self.root_box.currentData() or ""
        self.root_box.blockSignals(True)
        self.root_box.clear()
        self.root_box.addItem("every GPU", "")
        for r in roots:
            self.root_box.addItem(r, r)
        self.root_box.setCurrentIndex(max(0, self.root_box.findData(keep)))
        self.root_box.blockSignals(False)
        self.shown = list(range(len(timeline.events))) if shown is None else list(shown)
        self.slider.setRange(0, timeline.rounds)
        self.table.setRowCount(len(self.shown))
        for row, i in enumerate(self.shown):
            e = timeline.events[i]
            tree = timeline.trees[e.tree][1]
            cells = (
                str(e.round),
                e.root,
                f"{e.tree} (×{tree.multiplicity})",
                f"{e.chunk + 1}/{timeline.chunks}",
                e.hop_text(),
                format_size(round(e.bytes)),
            )
            for col, text in enumerate(cells):
                self.table.setItem(row, col, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def rows_of(self, round_: int) -> list[int]:
        """The table rows of round ``round_``."""
        if self.timeline is None:
            return []
        events = self.timeline.events
        return [row for row, i in enumerate(self.shown) if events[i].round == round_]

    def show_round(self, round_: int, text: str) -> None:
        """Highlight the rows of round ``round_`` and scroll to the first."""
        old = self.round
        self.round = round_
        self.slider.blockSignals(True)
        self.slider.setValue(round_)
        self.slider.blockSignals(False)
        self.round_label.setText(text)
        if self.timeline is None:
            return
        for r in self.rows_of(old) if old != round_ else []:
            for c in range(self.table.columnCount()):
                self.table.item(r, c).setBackground(QBrush())
        rows = self.rows_of(round_)
        for r in rows:
            for c in range(self.table.columnCount()):
                self.table.item(r, c).setBackground(CURRENT_ROW)
        if rows:
            self.table.scrollToItem(
                self.table.item(rows[0], 0), QAbstractItemView.ScrollHint.PositionAtTop
            )

    def set_playing(self, playing: bool) -> None:
        self.play_button.setText("Pause" if playing else "Play")

    def _on_selection(self) -> None:
        rows = {i.row() for i in self.table.selectedItems()}
        if len(rows) == 1 and self.timeline is not None:
            index = self.shown[rows.pop()]
            self.detail.setText(self.timeline.describe(index))
            self.event_selected.emit(index)
