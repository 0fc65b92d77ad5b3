"""The plots dock: algbw versus message size for the solved schedule.

Lines: the throughput bound (M / optimal algbw: flat), an alpha-aware estimate of this schedule
(link-load bound + pipeline fill, from ``solver.simulate.estimate.model_tables``, the model
``forestcoll simulate`` prints too),
simulated ForestColl, the library's pick (``nccl``) and the baselines (run in the background by
the results controller), and measurements (a raw nccl-tests/rccl-tests log, or the ``/results``
tables with measured columns of a results file). Series names are short
(:mod:`fc_gui.model.plot_series`). Beside the plot, once something is measured, the
measured-vs-predicted table (:class:`~fc_gui.views.error_table.MeasuredErrorTable`); above it,
the library selector (:mod:`fc_gui.model.library_choice`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontMetricsF, QImage
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.library_choice import AUTO, LIBRARY_CHOICES
from fc_gui.model.plot_series import Series, csv_text, in_switch_note, table_series, unique_name
from fc_gui.views.error_table import MeasuredErrorTable
from fc_gui.views.plot_hover import Line, PlotHover
from fc_gui.views.plot_svg import PlotData, PlotLine, build_plot_svg
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.units import format_size

BOUND_PEN = dict(color=(211, 47, 47), width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
ESTIMATE_PEN = dict(color=(0, 114, 178), width=2)
#: the allreduce optimum with the marked switches' capabilities (NVLS), when it is higher
CAPABILITY_PEN = dict(color=(123, 31, 162), width=2, style=pg.QtCore.Qt.PenStyle.DotLine)
SERIES_COLORS = (
    (0, 158, 115),
    (213, 94, 0),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (120, 94, 240),
    (100, 100, 100),
    (0, 90, 50),
    (170, 51, 119),
    (153, 153, 51),
    (51, 34, 136),
    (136, 34, 85),
)
SYMBOLS = ("o", "s", "t", "d", "+", "x", "star", "p")
LEGEND_TEXT_SIZE = "8pt"
LEGEND_GAP = 4  # px between the legend, the plot area and the widget's edge
LEGEND_PAD = 3  # px inside the legend's frame
NOTE_COLOR = "#b35900"


class SizeAxis(pg.AxisItem):
    """A log-x axis labelled in bytes the way the CLI writes them (1K, 1M, 1G: binary units).

    Ticks sit on powers of two, as the swept sizes do: every 2**10 (1K, 1M, ...) labelled
    first, the other even powers (4K, 16K, ...) as the finer level.
    """

    def tickValues(self, minVal, maxVal, size):
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = sorted((minVal, maxVal))
        first = max(0, math.ceil(lo / math.log10(2)))
        last = math.floor(hi / math.log10(2))
        powers = range(first, last + 1)
        major = [p * math.log10(2) for p in powers if p % 10 == 0]
        minor = [p * math.log10(2) for p in powers if p % 2 == 0 and p % 10 != 0]
        return [(10 * math.log10(2), major), (2 * math.log10(2), minor)]

    def tickStrings(self, values, scale, spacing):
        if self.logMode:
            return [format_size(round(10.0**v)) for v in values]
        return [format_size(round(v)) for v in values]


def model_tables(schedule: Schedule) -> dict[str, ResultTable]:
    """The bound and alpha-aware estimate tables of ``schedule`` (solver.simulate.estimate)."""
    from solver.simulate.estimate import model_tables as tables

    return tables(schedule, schedule.collective)


class ElidedLabel(QLabel):
    """A one-line label that never widens its row: a text too long for it is elided ("…"), the
    whole of it in the tooltip; :meth:`text` is the whole text."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:  # noqa: D102 - the whole text, not the elided one shown
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        self._full = text
        self.setToolTip(text if text else "")
        self._elide()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return QSize(10, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.minimumSizeHint()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideRight, max(self.width(), 10)
        )
        QLabel.setText(self, shown)


def _height_only_min(label: pg.LabelItem) -> None:
    """pyqtgraph's LabelItem.updateMin without the width: the label may be narrower than its
    text (the text is elided to fit, :meth:`PlotsDock.set_note`)."""
    height = label.itemRect().height()
    label.setMinimumWidth(0)
    label.setMinimumHeight(height)
    label._sizeHint = {
        Qt.SizeHint.MinimumSize: (0, height),
        Qt.SizeHint.PreferredSize: (0, height),
        Qt.SizeHint.MaximumSize: (-1, -1),
        Qt.SizeHint.MinimumDescent: (0, 0),
    }
    label.updateGeometry()


class PlotsDock(QWidget):
    """algbw vs message size (see module docstring).

    The legend sits to the right of the plot area, never over the data: it takes as many
    columns as the plot's height needs (:meth:`fit_legend`). Hovering shows the nearest point of
    every line (:mod:`fc_gui.views.plot_hover`). :meth:`image`, :meth:`svg_text` and
    :meth:`csv_text` give what the Export menu writes.

    Signals
    -------
    simulate_requested()
    import_requested()
    imported_cleared()
        *Clear imported* (or a new fabric) removed the imported lines.
    library_changed(str)
        The library selector's text (``auto`` or a ``--library`` spec) was chosen or typed.
    """

    simulate_requested = Signal()
    import_requested = Signal()
    imported_cleared = Signal()
    library_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(
            background=(252, 252, 250), axisItems={"bottom": SizeAxis("bottom")}
        )
        self.plot_item = self.plot.getPlotItem()
        self.plot_item.setLogMode(x=True, y=False)
        self.plot_item.showGrid(x=True, y=True, alpha=0.25)
        self.plot_item.setLabel("bottom", "message size")
        self.plot_item.setLabel("left", "algbw", units="GB/s")
        self.plot_item.getAxis("left").enableAutoSIPrefix(False)
        self.plot_item.getAxis("bottom").enableAutoSIPrefix(False)
        self.legend = pg.LegendItem(
            labelTextSize=LEGEND_TEXT_SIZE,
            verSpacing=0,
            labelTextColor=(40, 40, 40),
            brush=pg.mkBrush(255, 255, 255, 230),
            pen=pg.mkPen((200, 200, 200)),
        )
        self.legend.setParentItem(self.plot_item)
        self.legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-LEGEND_GAP, LEGEND_GAP))
        self.plot_item.geometryChanged.connect(self.fit_legend)
        # the note above the plot never widens it (pyqtgraph's label asks for its text's width)
        title = self.plot_item.titleLabel
        title.updateMin = lambda: _height_only_min(title)
        self.plot.setMinimumHeight(160)
        # Before any data: the sizes the tool sweeps (1 KiB .. 4 GiB), not pyqtgraph's 1..10 B.
        self.plot_item.setXRange(3.0, 9.65, padding=0)
        self.hover = PlotHover(self.plot_item, self.hover_lines)
        self.plot.installEventFilter(self)  # the read-out goes when the mouse leaves the plot

        self.simulate_button = QPushButton("Simulate")
        self.simulate_button.setToolTip(
            "Simulate ForestColl, the library's own choice (nccl/rccl) and the baselines over "
            "message sizes, at the link efficiency the library reaches (as forestcoll simulate)"
        )
        self.simulate_button.clicked.connect(self.simulate_requested)
        self.import_button = QPushButton("Import measurements…")
        self.import_button.setToolTip(
            "Plot measurements: a raw nccl-tests/rccl-tests log (text or -J JSON) of the open "
            "fabric, or the measured tables of an HDF5 results file (forestcoll measure import)"
        )
        self.import_button.clicked.connect(self.import_requested)
        self.clear_button = QPushButton("Clear imported")
        self.clear_button.clicked.connect(self.clear_imported)
        self.library_box = QComboBox()
        self.library_box.setEditable(True)
        self.library_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.library_box.setMinimumContentsLength(18)
        self.library_box.setToolTip(
            "Library of the nccl line and of the links' efficiency: auto (the fabric's own "
            "pick) or a forestcoll simulate --library value, e.g. nccl:hopper:nvls, rccl:cdna3, "
            "nccl:hopper:algo=ring+tree:proto=simple"
        )
        self.library_box.addItems([AUTO, *LIBRARY_CHOICES])
        self.library_box.activated.connect(lambda *_: self._library_chosen())
        self.library_box.lineEdit().editingFinished.connect(self._library_chosen)
        self._library_text = AUTO
        self.status = ElidedLabel("")
        row = QHBoxLayout()
        row.addWidget(self.simulate_button)
        row.addWidget(QLabel("Library:"))
        row.addWidget(self.library_box)
        row.addWidget(self.import_button)
        row.addWidget(self.clear_button)
        row.addWidget(self.status, 1)
        self.error_table = MeasuredErrorTable()
        self.error_table.hide()
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.plot)
        self.splitter.addWidget(self.error_table)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.splitter, 1)
        self.line_notes: dict[str, tuple[str, ...]] = {}  # per-point hover notes (measured)

        self.schedule: Schedule | None = None
        self.series: dict[str, pg.PlotDataItem] = {}
        self.lines: dict[str, Series] = {}
        self.colors: dict[str, tuple[int, int, int]] = {}
        self.styles: dict[str, tuple] = {}  # name: (colour, width, dashed, symbol)
        self.note = ""
        self._shown_note: str | None = None
        self._model: list[str] = []
        self._simulated: list[str] = []
        self._imported: list[str] = []
        self.simulating = False
        self.greyed = False
        self._update_buttons()

    # ------------------------------------------------------------------ content
    def set_schedule(
        self,
        schedule: Schedule | None,
        tables: Mapping[str, ResultTable] | None = None,
        capability: float | None = None,
    ) -> None:
        """Plot the bound and the estimate of ``schedule`` (simulated lines are dropped).

        ``tables``: precomputed :func:`model_tables` output (computed here when None);
        ``capability``: the allreduce optimum with the marked switches' in-switch reduction and
        multicast (GB/s), drawn dotted beside the forward-only bound when it is higher.
        """
        self.schedule = schedule
        self._remove(self._model + self._simulated)
        self._model, self._simulated = [], []
        self._bound_sizes = None
        self.set_note("")
        if schedule is not None:
            if tables is None:
                tables = model_tables(schedule)
            for name, table in tables.items():
                kind = name.rsplit(".", 1)[-1]
                if kind == "bound":
                    label = f"bound {float(schedule.optimal_algbw_exact):.4g} GB/s"
                    pen = BOUND_PEN
                else:
                    label = "α-β estimate"
                    pen = ESTIMATE_PEN
                line = Series(label, table.size_bytes, table.predicted_algbw, "model")
                self._add_line(line, pen["color"], pen=pen)
                self._model.append(label)
                if kind == "bound":
                    self._bound_sizes = table.size_bytes
            self.show_capability(capability)
        self.set_greyed(self.greyed)  # a result shown stale (edited during its solve) is faded
        self._update_buttons()

    def show_capability(self, capability: float | None) -> None:
        """Draw (or drop, with None) the dotted allreduce optimum with the marked switches'
        capabilities, over the sizes of the forward-only bound line."""
        old = [label for label in self._model if label.startswith("with NVLS ")]
        self._remove(old)
        self._model = [label for label in self._model if label not in old]
        sizes = getattr(self, "_bound_sizes", None)
        if not capability or self.schedule is None or sizes is None:
            return
        label = f"with NVLS {capability:.4g} GB/s"
        flat = np.full(len(sizes), float(capability))
        self._add_line(
            Series(label, sizes, flat, "model"), CAPABILITY_PEN["color"], pen=CAPABILITY_PEN
        )
        self._model.append(label)
        self.set_greyed(self.greyed)

    def add_tables(self, tables: Mapping[str, ResultTable], kind: str = "simulated") -> int:
        """Add lines from result tables: measured columns if any, else predicted. Returns count.

        ``kind`` "simulated": the shown result's simulation (only the simulator's tables, faded
        with the result, dropped by the next result); "imported": tables of a results file (kept
        until Clear imported). The library table's in-switch note goes to the plot's title.
        """
        added = sum(self.add_table(table, kind) is not None for table in tables.values())
        note = in_switch_note(tables)
        if note:
            self.set_note(note)
        return added

    def add_table(self, table: ResultTable, kind: str = "simulated") -> str | None:
        """Add the line of one table (see :meth:`add_tables`); returns its name on the plot,
        None when the table has nothing to plot."""
        line = table_series(table, simulated_only=kind == "simulated")
        if line is None:
            return None
        target = self._simulated if kind == "simulated" else self._imported
        line = replace(line, name=unique_name(line.name, self.series))
        n = len(self._simulated) + len(self._imported)
        used = set(self.colors.values())  # a line shown again must not take another's colour
        color = next(
            (c for c in SERIES_COLORS if c not in used), SERIES_COLORS[n % len(SERIES_COLORS)]
        )
        self._add_line(
            line,
            color,
            pen=dict(color=color, width=1.5),
            symbol=SYMBOLS[n % len(SYMBOLS)],
            symbolBrush=color,
            symbolSize=6,
            symbolPen=None,
        )
        target.append(line.name)
        if kind == "simulated" and self.greyed:
            self.series[line.name].setOpacity(0.3)
        return line.name

    def clear_simulated(self) -> None:
        """Remove the simulated lines and their note (a new simulation replaces them)."""
        self._remove(self._simulated)
        self._simulated = []
        self.set_note("")

    def simulated_labels(self) -> list[str]:
        return list(self._simulated)

    def model_labels(self) -> list[str]:
        return list(self._model)

    def clear_imported(self) -> None:
        """Remove the imported lines (and the error table that compares them)."""
        self._remove(self._imported)
        self._imported = []
        self.set_line_notes({})
        self.show_error_table(False)
        self.imported_cleared.emit()

    def reset(self) -> None:
        """Another fabric: nothing of the old one stays -- lines, hover box, note, status line,
        error table, library choice."""
        self.hover.hide()
        self.set_schedule(None)
        self.clear_imported()
        self.set_note("")
        self.status.setText("")
        self.set_library_text(AUTO)
        self.plot_item.setXRange(3.0, 9.65, padding=0)  # the swept sizes, as before any data
        self.plot_item.setYRange(0.0, 1.0, padding=0)  # not the old fabric's GB/s
        self.plot_item.enableAutoRange(axis="y")

    # ------------------------------------------------------------------ measured vs predicted
    def set_line_notes(self, notes: dict[str, tuple[str, ...]]) -> None:
        """Per-point hover notes of lines (name: one note per point), replacing the ones before."""
        self.line_notes = {k: tuple(v) for k, v in notes.items()}

    def show_error_table(self, visible: bool) -> None:
        """Show the error table beside the plot, or hide (and empty) it; its owner fills it."""
        if not visible:
            self.error_table.clear()
            self.error_table.hide()
            return
        if not self.error_table.isVisible():
            self.error_table.show()
            total = max(self.splitter.width(), 600)
            side = min(330, total // 3)
            self.splitter.setSizes([total - side, side])

    # ------------------------------------------------------------------ library
    def library_text(self) -> str:
        """The selector's choice: ``auto`` or a ``--library`` spec."""
        return self._library_text

    def set_library_text(self, text: str) -> None:
        """Show ``text`` in the selector (no signal)."""
        self._library_text = text.strip() or AUTO
        self.library_box.blockSignals(True)
        index = self.library_box.findText(self._library_text)
        if index >= 0:
            self.library_box.setCurrentIndex(index)
        else:
            self.library_box.setEditText(self._library_text)
        self.library_box.blockSignals(False)

    def mark_library(self, ok: bool, tip: str = "") -> None:
        """Show a refused library spec (red frame, the reason in the tooltip)."""
        self.library_box.setStyleSheet("" if ok else "QComboBox { border: 2px solid #d32f2f; }")
        if tip:
            self.library_box.lineEdit().setToolTip(tip)

    def _library_chosen(self) -> None:
        text = self.library_box.currentText().strip() or AUTO
        if text != self._library_text:
            self._library_text = text
            self.library_changed.emit(text)

    def labels(self) -> list[str]:
        return list(self.series)

    def set_status(self, text: str) -> None:
        self.status.setText(text)

    def set_note(self, text: str) -> None:
        """A one-line note above the plot (the library's in-switch reduction beating the bound),
        elided to the plot's width (the whole of it in its tooltip and in the exported SVG);
        '' removes it."""
        self.note = text
        self._shown_note = None
        self.plot_item.titleLabel.setToolTip(text)
        self._show_note()

    def _show_note(self) -> None:
        if not self.note:
            if self._shown_note != "":
                self.plot_item.setTitle(None)
                self._shown_note = ""
            return
        font = QFont(self.font())
        font.setPointSizeF(8)
        # the plot area's width (the title is centred over it), as laid out after fit_legend
        legend = self.legend.width() + 2 * LEGEND_GAP if self.legend.items else 0.0
        axis = self.plot_item.getAxis("left").width()
        room = max(80.0, self.plot_item.width() - legend - axis - 12)
        shown = QFontMetricsF(font).elidedText(self.note, Qt.TextElideMode.ElideRight, room)
        if shown != self._shown_note:
            self._shown_note = shown
            self.plot_item.setTitle(html.escape(shown), size=LEGEND_TEXT_SIZE, color=NOTE_COLOR)

    def set_greyed(self, greyed: bool) -> None:
        """Fade the lines of the shown result (it is stale); imported measurements stay."""
        self.greyed = bool(greyed)
        for label in self._model + self._simulated:
            item = self.series.get(label)
            if item is not None:
                item.setOpacity(0.3 if self.greyed else 1.0)

    def set_simulating(self, running: bool) -> None:
        """While running, the Simulate button becomes Cancel (it emits the same signal)."""
        self.simulating = running
        self.simulate_button.setText("Cancel simulation" if running else "Simulate")
        self.simulate_button.setEnabled(running or self._can_simulate())
        if running:
            self.status.setText("simulating ForestColl, the library and the baselines…")

    # ------------------------------------------------------------------ legend, hover, export
    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        if obj is self.plot and event.type() == QEvent.Type.Leave:
            self.hover.hide()
        return False

    def fit_legend(self) -> None:
        """Lay the legend out in as many columns as the plot's height needs and keep the plot
        area clear of it (the plot's right margin is the legend's width)."""
        legend = self.legend
        n = len(legend.items)
        if not n:
            legend.hide()
            self.plot_item.layout.setContentsMargins(1, 1, 1, 1)
            return
        legend.show()
        row_h = max(
            max(label.minimumHeight(), sample.boundingRect().height())
            for sample, label in legend.items
        )
        avail = max(row_h, self.plot_item.height() - 2 * LEGEND_GAP - 2 * LEGEND_PAD)
        rows = max(1, int(avail // row_h))
        cols = max(1, math.ceil(n / rows))
        legend.setColumnCount(cols)
        rows = math.ceil(n / cols)
        # the size from the entries' own sizes (pyqtgraph's updateSize reads the laid-out sizes,
        # which grow with the legend itself)
        width = 2 * LEGEND_PAD
        for c in range(cols):
            entries = legend.items[c::cols]  # pyqtgraph fills row by row
            width += max(s.boundingRect().width() + lab.minimumWidth() + 6 for s, lab in entries)
        legend.size = (width, rows * row_h + 2 * LEGEND_PAD)  # pyqtgraph: fixed size
        legend.setGeometry(0, 0, *legend.size)
        legend.layout.setContentsMargins(LEGEND_PAD, LEGEND_PAD, LEGEND_PAD, LEGEND_PAD)
        self.plot_item.layout.setContentsMargins(1, 1, width + 2 * LEGEND_GAP, 1)
        self._show_note()

    def hover_lines(self) -> list[Line]:
        """The visible lines, for the hover read-out."""
        return [
            Line(
                name,
                line.size_bytes,
                line.algbw,
                self.line_notes.get(name, line.notes),
                self.colors[name],
            )
            for name, line in self.lines.items()
            if self.series[name].isVisible()
        ]

    def csv_text(self) -> str:
        """The plotted lines as CSV (:func:`fc_gui.model.plot_series.csv_text`)."""
        return csv_text(list(self.lines.values()))

    def image(self, width: int | None = None) -> QImage:
        """The plot (axes, lines, legend, note) as an image ``width`` pixels wide: the vector
        drawing of :meth:`svg_text` rendered at that width (text and lines stay sharp)."""
        from PySide6.QtCore import QByteArray, QRectF
        from PySide6.QtGui import QColor, QPainter
        from PySide6.QtSvg import QSvgRenderer

        self.hover.hide()
        w, h = max(self.plot.width(), 500), max(self.plot.height(), 240)
        width = int(width or w)
        height = max(1, round(h * width / w))
        renderer = QSvgRenderer(QByteArray(self.svg_text(w, h).encode("utf-8")))
        image = QImage(width, height, QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, width, height))
        painter.end()
        return image

    def svg_text(self, width: float | None = None, height: float | None = None) -> str:
        """The plot as a true vector SVG (:mod:`fc_gui.views.plot_svg`), of the view's ranges;
        the size of the plot on screen unless given."""
        return build_plot_svg(
            self.plot_data(),
            width or max(self.plot.width(), 500),
            height or max(self.plot.height(), 240),
        )

    def plot_data(self) -> PlotData:
        """What :meth:`svg_text` draws: view ranges, ticks, lines and their styles, the note."""
        (x0, x1), (y0, y1) = self.plot_item.vb.viewRange()
        bottom, left = self.plot_item.getAxis("bottom"), self.plot_item.getAxis("left")
        x_ticks = [
            (v, label)
            for _, vals in bottom.tickValues(x0, x1, 600)
            for v, label in zip(vals, bottom.tickStrings(vals, 1, 1))
        ]
        # y: the major ticks, and finer ones while they stay >= 24 px apart
        px_per_unit = max(self.plot.height(), 240) / max(y1 - y0, 1e-12)
        y_ticks = []
        for i, (spacing, vals) in enumerate(left.tickValues(y0, y1, 200)):
            if i == 0 or spacing * px_per_unit >= 24:
                y_ticks += zip(vals, left.tickStrings(vals, 1, spacing))
        lines = []
        for name, line in self.lines.items():
            color, width, dashed, symbol = self.styles[name]
            item = self.series[name]
            if item.isVisible():
                lines.append(
                    PlotLine(
                        name,
                        line.size_bytes,
                        line.algbw,
                        color,
                        width,
                        dashed,
                        symbol,
                        item.opacity(),
                    )
                )
        return PlotData((x0, x1), (y0, y1), x_ticks, y_ticks, lines, self.note)

    # ------------------------------------------------------------------ internals
    def _can_simulate(self) -> bool:
        return self.schedule is not None

    def _update_buttons(self) -> None:
        self.simulate_button.setEnabled(self.simulating or self._can_simulate())

    def _add_line(self, line: Series, color, **kwargs) -> None:
        if line.name in self.series:
            self._remove([line.name])
        item = self.plot_item.plot(
            np.asarray(line.size_bytes, dtype=float),
            np.asarray(line.algbw, dtype=float),
            name=line.name,
            **{k: (pg.mkPen(**v) if k == "pen" else v) for k, v in kwargs.items()},
        )
        self.legend.addItem(item, html.escape(line.name))
        label = self.legend.items[-1][1]
        label.item.document().setDocumentMargin(1)  # compact rows
        label.updateMin()
        self.series[line.name] = item
        self.lines[line.name] = line
        self.colors[line.name] = tuple(color)
        pen = kwargs.get("pen", {})
        self.styles[line.name] = (
            tuple(color),
            float(pen.get("width", 1.0)),
            pen.get("style") == pg.QtCore.Qt.PenStyle.DashLine,
            kwargs.get("symbol"),
        )
        self.fit_legend()

    def _remove(self, labels) -> None:
        for label in labels:
            item = self.series.pop(label, None)
            self.lines.pop(label, None)
            self.colors.pop(label, None)
            self.styles.pop(label, None)
            if item is not None:
                self.plot_item.removeItem(item)
                self.legend.removeItem(item)
        self.fit_legend()
