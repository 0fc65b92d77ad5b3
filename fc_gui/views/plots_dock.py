"""The plots dock: algbw versus message size for the solved schedule.

Lines: the throughput bound (M / optimal algbw: flat), an alpha-aware estimate of this schedule
(link-load bound + pipeline fill, from ``solver.simulate.estimate.model_tables``, the model
``forestcoll simulate`` prints too),
simulated ForestColl and baselines (run in the background by the results controller), and
measurements imported from an HDF5 results file (``/results`` tables with measured columns).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.units import format_size

BOUND_PEN = dict(color=(211, 47, 47), width=2, style=pg.QtCore.Qt.PenStyle.DashLine)
ESTIMATE_PEN = dict(color=(0, 114, 178), width=2)
SERIES_COLORS = (
    (0, 158, 115), (213, 94, 0), (204, 121, 167), (230, 159, 0), (86, 180, 233),
    (120, 94, 240), (100, 100, 100), (0, 90, 50),
)
SYMBOLS = ("o", "s", "t", "d", "+", "x", "star", "p")


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


class PlotsDock(QWidget):
    """algbw vs message size (see module docstring).

    Signals
    -------
    simulate_requested()
    import_requested()
    """

    simulate_requested = Signal()
    import_requested = Signal()

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
        self.legend = self.plot_item.addLegend(offset=(10, 10), labelTextSize="8pt")
        self.plot.setMinimumHeight(160)
        # Before any data: the sizes the tool sweeps (1 KiB .. 4 GiB), not pyqtgraph's 1..10 B.
        self.plot_item.setXRange(3.0, 9.65, padding=0)

        self.simulate_button = QPushButton("Simulate")
        self.simulate_button.setToolTip("Simulate ForestColl and baselines over message sizes")
        self.simulate_button.clicked.connect(self.simulate_requested)
        self.import_button = QPushButton("Import measurements…")
        self.import_button.setToolTip("Plot measured tables from an HDF5 results file")
        self.import_button.clicked.connect(self.import_requested)
        self.clear_button = QPushButton("Clear imported")
        self.clear_button.clicked.connect(self.clear_imported)
        self.status = QLabel("")
        row = QHBoxLayout()
        row.addWidget(self.simulate_button)
        row.addWidget(self.import_button)
        row.addWidget(self.clear_button)
        row.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)

        self.schedule: Schedule | None = None
        self.series: dict[str, pg.PlotDataItem] = {}
        self._model: list[str] = []
        self._simulated: list[str] = []
        self._imported: list[str] = []
        self.simulating = False
        self.greyed = False
        self._update_buttons()

    # ------------------------------------------------------------------ content
    def set_schedule(
        self, schedule: Schedule | None, tables: Mapping[str, ResultTable] | None = None
    ) -> None:
        """Plot the bound and the estimate of ``schedule`` (simulated lines are dropped).

        ``tables``: precomputed :func:`model_tables` output (computed here when None).
        """
        self.schedule = schedule
        self._remove(self._model + self._simulated)
        self._model, self._simulated = [], []
        if schedule is not None:
            if tables is None:
                tables = model_tables(schedule)
            for name, table in tables.items():
                kind = name.rsplit(".", 1)[-1]
                if kind == "bound":
                    label = f"bound ({float(schedule.optimal_algbw_exact):.4g} GB/s)"
                    pen = BOUND_PEN
                else:
                    label = "ForestColl estimate (α-β)"
                    pen = ESTIMATE_PEN
                self._add_line(label, table.size_bytes, table.predicted_algbw, pen=pen)
                self._model.append(label)
        self.set_greyed(self.greyed)  # a result shown stale (edited during its solve) is faded
        self._update_buttons()

    def add_tables(self, tables: Mapping[str, ResultTable], kind: str = "simulated") -> int:
        """Add lines from result tables: measured columns if any, else predicted. Returns count."""
        added = 0
        target = self._simulated if kind == "simulated" else self._imported
        for name, table in tables.items():
            measured = np.isfinite(table.measured_algbw)
            if measured.any():
                x, y = table.size_bytes[measured], table.measured_algbw[measured]
                label = f"measured: {table.algorithm} ({name})"
            elif kind == "simulated" or table.source == "simulator":
                x, y = table.size_bytes, table.predicted_algbw
                label = f"simulated {table.algorithm}"
                if kind != "simulated":
                    label += f" ({name})"
            else:
                continue
            ok = (x > 0) & np.isfinite(y)
            if not ok.any():
                continue
            n = len(self._simulated) + len(self._imported)
            color = SERIES_COLORS[n % len(SERIES_COLORS)]
            self._add_line(
                label, x[ok], y[ok], pen=dict(color=color, width=1.5),
                symbol=SYMBOLS[n % len(SYMBOLS)], symbolBrush=color, symbolSize=6, symbolPen=None,
            )
            target.append(label)
            if kind == "simulated" and self.greyed:
                self.series[label].setOpacity(0.3)
            added += 1
        return added

    def import_file(self, path: str | Path) -> int:
        """Plot the measured (and simulated) tables of an HDF5 results file; returns the count.

        Raises ForestCollError (e.g. not a results file) with a one-line message.
        """
        from solver.io import results_h5

        tables = results_h5.read_results(path)
        count = self.add_tables(tables, kind="imported")
        self.status.setText(f"{count} series from {Path(path).name}")
        return count

    def clear_imported(self) -> None:
        self._remove(self._imported)
        self._imported = []

    def labels(self) -> list[str]:
        return list(self.series)

    def set_status(self, text: str) -> None:
        self.status.setText(text)

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
            self.status.setText("simulating ForestColl and baselines…")

    # ------------------------------------------------------------------ internals
    def _can_simulate(self) -> bool:
        return self.schedule is not None

    def _update_buttons(self) -> None:
        self.simulate_button.setEnabled(self.simulating or self._can_simulate())

    def _add_line(self, label: str, x, y, **kwargs) -> None:
        if label in self.series:
            self._remove([label])
        item = self.plot_item.plot(np.asarray(x, dtype=float), np.asarray(y, dtype=float),
                                   name=label, **{k: (pg.mkPen(**v) if k == "pen" else v)
                                                  for k, v in kwargs.items()})
        self.series[label] = item
        self.legend.setColumnCount(2 if len(self.series) > 3 else 1)

    def _remove(self, labels) -> None:
        for label in labels:
            item = self.series.pop(label, None)
            if item is not None:
                self.plot_item.removeItem(item)
                self.legend.removeItem(item)
