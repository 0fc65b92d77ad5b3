"""Views of a solved schedule: the summary (with the bottleneck cut and its formula) and the trees list.

Both are plain widgets fed a :class:`solver.Schedule`; selecting rows of the trees list emits
``trees_selected`` so the results controller can overlay those trees on the canvas.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.result_text import plural, summary_html
from fc_gui.model.switch_bounds import SwitchBounds, figure_rows, lead_row
from fc_gui.model.trees import TreeRow, tree_rows
from solver.model.schedule import Schedule, Tree


class SummaryView(QWidget):
    """Optimal algbw, k, trees, time and the bottleneck cut with its numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setObjectName("summaryLabel")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        inner = QWidget()
        inner_layout = QVBoxLayout(inner)
        inner_layout.setContentsMargins(6, 6, 6, 6)
        inner_layout.addWidget(self.label)
        inner_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.schedule: Schedule | None = None
        self._elapsed: float | None = None
        self._split: tuple[float, float] | None = None
        self._previous: Schedule | None = None
        self.fabric_warnings: tuple[str, ...] = ()
        self.switch_bounds: SwitchBounds | None = None
        self.switch_pending = False
        self.clear()

    def clear(self, text: str = "No result yet: press Solve.") -> None:
        self.schedule = None
        self.stale = False
        self.label.setStyleSheet("")
        self.label.setText(f"<i style='color:#777'>{html.escape(text)}</i>")

    def set_text_html(self, text: str) -> None:
        """Rich text that is not of a schedule (the optimum and cut only)."""
        self.schedule = None
        self.stale = False
        self.label.setStyleSheet("")
        self.label.setText(text)

    def set_schedule(
        self,
        schedule: Schedule,
        elapsed: float | None = None,
        previous: Schedule | None = None,
        split: tuple[float, float] | None = None,
        switch_bounds: SwitchBounds | None = None,
        switch_pending: bool = False,
    ) -> None:
        """``switch_bounds``: the allreduce figures of a fabric with marked switches (computed
        off the GUI thread), None otherwise; ``switch_pending``: they are being computed."""
        self.schedule = schedule
        self.switch_bounds = switch_bounds
        self.switch_pending = switch_pending and switch_bounds is None
        self._elapsed = elapsed
        self._split = split
        self._previous = previous
        self._render()

    def set_fabric_warnings(self, warnings) -> None:
        """What is wrong with the fabric (PCIe-only boxes), said under the numbers."""
        self.fabric_warnings = tuple(warnings)
        if self.schedule is not None:
            self._render()

    def _render(self) -> None:
        self.label.setText(
            summary_html(
                self.schedule,
                self._elapsed,
                stale=self.stale,
                previous=self._previous,
                fabric_warnings=self.fabric_warnings,
                split=self._split,
                switch_rows=()
                if self.switch_bounds is None
                else figure_rows(self.switch_bounds, self.schedule.collective),
                switch_lead=self._switch_lead(),
            )
        )

    def _switch_lead(self) -> tuple[str, str] | None:
        if self.switch_bounds is not None:
            return lead_row(self.switch_bounds)
        if self.switch_pending:
            return (
                "In-switch",
                "<i style='color:#777'>computing the allreduce figures of the marked switches…</i>",
            )
        return None

    def set_switch_bounds(self, switch_bounds: SwitchBounds | None) -> None:
        """The allreduce figures arrived (from their background task)."""
        self.switch_bounds = switch_bounds
        self.switch_pending = False
        if self.schedule is not None:
            self._render()

    def set_stale(self, stale: bool) -> None:
        """Mark the summary stale: a warning line and the whole text greyed."""
        self.stale = bool(stale and self.schedule is not None)
        self.label.setStyleSheet("QLabel#summaryLabel { color: #8a8a8a; }" if self.stale else "")
        if self.schedule is not None:
            self._render()

    def text(self) -> str:
        return self.label.text()


def _swatch(rgb: tuple[int, int, int]) -> QPixmap:
    pix = QPixmap(12, 12)
    pix.fill(QColor(*rgb))
    return pix


class TreesModel(QAbstractTableModel):
    """Table model of :class:`TreeRow` (sortable through a proxy)."""

    HEADERS = ("phase", "root", "index", "weight", "mult.", "height", "hops")
    TIPS = (
        "reduce-scatter or allgather (allreduce only)",
        "the tree's root compute node",
        "index of the tree among its root's trees",
        "share of the root's data the tree carries (multiplicity / k)",
        "multiplicity: identical copies of this tree",
        "tree height in logical (compute-to-compute) edges",
        "physical links the tree occupies",
    )

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[TreeRow] = []
        self.show_phase = False
        self.swatches: dict[int, QPixmap] = {}

    def set_rows(self, rows: list[TreeRow], show_phase: bool) -> None:
        self.beginResetModel()
        self.swatches = {}
        self.rows = rows
        self.show_phase = show_phase
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.TIPS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            w = row.tree.weight
            return (
                row.phase,
                row.root,
                row.index,
                f"{w.numerator}/{w.denominator}" if w.denominator != 1 else str(w.numerator),
                row.tree.multiplicity,
                row.height,
                row.hops,
            )[col]
        if role == Qt.ItemDataRole.UserRole:  # sort key
            return (
                row.phase,
                row.root,
                row.index,
                float(row.tree.weight),
                row.tree.multiplicity,
                row.height,
                row.hops,
            )[col]
        if role == Qt.ItemDataRole.TextAlignmentRole and col >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.DecorationRole and col == 1:
            return self.swatches.get(index.row())
        return None

    def set_swatches(self, colors: dict[int, tuple[int, int, int]]) -> None:
        """Colour swatches (row -> RGB) in the root column: the trees' colours on the canvas."""
        old = set(self.swatches)
        self.swatches = {r: _swatch(c) for r, c in colors.items()}
        for r in old | set(self.swatches):
            idx = self.index(r, 1)
            self.dataChanged.emit(idx, idx, [Qt.ItemDataRole.DecorationRole])


class _TreesProxy(QSortFilterProxyModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.root_filter: str | None = None
        self.setSortRole(Qt.ItemDataRole.UserRole)

    def set_root_filter(self, root: str | None) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9
            self.beginFilterChange()
            self.root_filter = root
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.root_filter = root
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row, source_parent):
        if self.root_filter is None:
            return True
        return self.sourceModel().rows[source_row].root == self.root_filter


class TreesView(QWidget):
    """The trees list (root, index, weight, height, hops) with a root filter and play controls.

    Signals
    -------
    trees_selected(list[tuple[str, Tree]])
        (phase, tree) of the selected rows, in table order.
    play_clicked(), pause_clicked(), step_clicked(), reset_clicked()
        Broadcast animation controls.
    """

    trees_selected = Signal(list)
    play_clicked = Signal()
    pause_clicked = Signal()
    step_clicked = Signal()
    reset_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TreesModel(self)
        self.proxy = _TreesProxy(self)
        self.proxy.setSourceModel(self.model)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.horizontalHeader().setResizeContentsPrecision(40)  # not every row of 1000s
        self.table.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)

        self.root_box = QComboBox()
        self.root_box.setToolTip("Show the trees of one root only")
        self.root_box.currentIndexChanged.connect(self._root_changed)
        self.count_label = QLabel("")
        top = QHBoxLayout()
        top.addWidget(QLabel("Root"))
        top.addWidget(self.root_box, 1)
        top.addWidget(self.count_label)

        self.play_button = QPushButton("Play")
        self.play_button.setToolTip("Animate a broadcast of the selected trees, depth by depth")
        self.pause_button = QPushButton("Pause")
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Advance the broadcast by one depth")
        self.reset_button = QPushButton("Reset")
        self.step_label = QLabel("")
        for b in (self.play_button, self.pause_button, self.step_button, self.reset_button):
            b.setEnabled(False)
        self.play_button.clicked.connect(self.play_clicked)
        self.pause_button.clicked.connect(self.pause_clicked)
        self.step_button.clicked.connect(self.step_clicked)
        self.reset_button.clicked.connect(self.reset_clicked)
        controls = QHBoxLayout()
        for b in (self.play_button, self.pause_button, self.step_button, self.reset_button):
            controls.addWidget(b)
        controls.addStretch(1)
        self.step_label.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(controls)
        layout.addWidget(self.step_label)
        self._updating = False

    # ------------------------------------------------------------------ content
    def set_schedule(self, schedule: Schedule | None, rows: list[TreeRow] | None = None) -> None:
        """Show the trees of ``schedule`` (``rows``: precomputed :func:`tree_rows`, optional)."""
        self._updating = True
        try:
            if rows is None:
                rows = tree_rows(schedule) if schedule is not None else []
            self.model.set_rows(rows, show_phase=bool(schedule is not None and schedule.phases))
            self.table.setColumnHidden(0, not self.model.show_phase)
            self.root_box.blockSignals(True)
            self.root_box.clear()
            self.root_box.addItem("all roots", None)
            roots = list(dict.fromkeys(r.root for r in rows))
            for r in roots:
                self.root_box.addItem(r, r)
            self.root_box.blockSignals(False)
            self.proxy.set_root_filter(None)
            self.count_label.setText(plural(len(rows), "tree"))
        finally:
            self._updating = False
        self._selection_changed()

    def rows(self) -> list[TreeRow]:
        return list(self.model.rows)

    def set_root_filter(self, root: str | None) -> None:
        index = self.root_box.findData(root)
        self.root_box.setCurrentIndex(max(index, 0))

    def select_rows(self, rows: list[int]) -> None:
        """Select rows by their position in the (unfiltered, unsorted) model."""
        sel = self.table.selectionModel()
        sel.clearSelection()
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        selection = QItemSelection()
        for r in rows:
            idx = self.proxy.mapFromSource(self.model.index(r, 0))
            if idx.isValid():
                selection.select(idx, idx)
        sel.select(
            selection,
            QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
        )
        if not selection.isEmpty():
            self.table.scrollTo(selection.indexes()[0])

    def selected_rows(self) -> list[int]:
        """Model rows selected, in model order (the order trees are drawn and coloured)."""
        return sorted(
            self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows()
        )

    def selected_trees(self) -> list[tuple[str, Tree]]:
        return [(self.model.rows[r].phase, self.model.rows[r].tree) for r in self.selected_rows()]

    def sizeHint(self):
        from PySide6.QtCore import QSize

        return QSize(340, 300)

    def set_step_text(self, text: str) -> None:
        self.step_label.setText(text)

    def set_playing(self, playing: bool) -> None:
        has = bool(self.selected_trees())
        self.play_button.setEnabled(has and not playing)
        self.pause_button.setEnabled(playing)
        self.step_button.setEnabled(has)
        self.reset_button.setEnabled(has)

    # ------------------------------------------------------------------ slots
    def _root_changed(self) -> None:
        self.proxy.set_root_filter(self.root_box.currentData())
        total = len(self.model.rows)
        shown = self.proxy.rowCount()
        self.count_label.setText(
            plural(total, "tree") if shown == total else f"{shown} of {plural(total, 'tree')}"
        )

    def _selection_changed(self, *args) -> None:
        if self._updating:
            return
        trees = self.selected_trees()
        self.set_playing(False)
        self.trees_selected.emit(trees)
