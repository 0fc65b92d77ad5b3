"""Export › Plot as PNG / SVG, Plot data as CSV: the plots dock's lines, written atomically.

PNG: the plot as drawn (axes, lines, legend, note) at any width; SVG: a true vector drawing
(:mod:`fc_gui.views.plot_svg`); CSV: one row per message size, one column per line, units in
the header (:func:`fc_gui.model.plot_series.csv_text`). Problems are one-line error dialogs;
each function takes an explicit path so tests and scripts skip the file dialogs.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog

from fc_gui.controllers.export_files import make_readable
from fc_gui.views.dialog_titles import ask_int
from solver.io.files import atomic_path, atomic_write_text
from solver.model.errors import ForestCollError

DEFAULT_WIDTH = 1600
MAX_WIDTH = 20000


class PlotExport(QObject):
    """The entries in ``menu`` (the window's Export menu) writing ``plots`` (the plots dock)."""

    def __init__(self, window, plots, menu, parent=None) -> None:
        super().__init__(parent)
        self.window = window
        self.plots = plots
        self.png_action = QAction("Plot as P&NG…", self)
        self.png_action.triggered.connect(lambda: self.export_png())
        self.svg_action = QAction("Plot as S&VG…", self)
        self.svg_action.triggered.connect(lambda: self.export_svg())
        self.csv_action = QAction("Plot data as &CSV…", self)
        self.csv_action.triggered.connect(lambda: self.export_csv())
        menu.addSeparator()
        for act in (self.png_action, self.svg_action, self.csv_action):
            menu.addAction(act)
        menu.aboutToShow.connect(self.update_enabled)
        self.update_enabled()

    def update_enabled(self) -> None:
        has = bool(self.plots.lines)
        for act in (self.png_action, self.svg_action, self.csv_action):
            act.setEnabled(has)
            act.setToolTip("" if has else "Solve or import measurements first")

    # ------------------------------------------------------------------ helpers
    def _path(self, path, title: str, filters: str, suffix: str) -> Path | None:
        if path is not None:
            return Path(path)
        if not self._has_lines():
            return None
        stem = (self.window.document.name or "fabric") + "_plot"
        chosen, _ = QFileDialog.getSaveFileName(self.window, title, f"{stem}{suffix}", filters)
        return Path(chosen) if chosen else None

    def _has_lines(self) -> bool:
        if self.plots.lines:
            return True
        self._fail("nothing on the plot: solve, simulate or import measurements first")
        return False

    def _fail(self, message: str) -> None:
        self.window.show_error(message, "Export failed")

    def _write(self, path: Path, what: str, write) -> Path | None:
        try:
            write(path)
        except ForestCollError as exc:
            self._fail(str(exc))
            return None
        except OSError as exc:
            self._fail(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}")
            return None
        make_readable(path)
        self.window.statusBar().showMessage(f"Exported {what} to {path}", 6000)
        return path

    # ------------------------------------------------------------------ exports
    def export_png(self, path: str | Path | None = None, width: int | None = None) -> Path | None:
        """The plot as a PNG ``width`` pixels wide (asked for when no path is given)."""
        path = self._path(path, "Export plot", "PNG image (*.png)", ".png")
        if path is None or not self._has_lines():
            return None
        if width is None:
            width, ok = ask_int(
                self.window, "Plot width", "Width (pixels):", DEFAULT_WIDTH, 100, MAX_WIDTH
            )
            if not ok:
                return None
        if not 100 <= width <= MAX_WIDTH:
            self._fail(f"plot width must be 100..{MAX_WIDTH} pixels, not {width}")
            return None
        image = self.plots.image(width)

        def write(target: Path) -> None:
            with atomic_path(target) as tmp:
                if image.isNull() or not image.save(str(tmp), "PNG"):
                    raise ForestCollError(f"cannot write {target}: Qt could not encode the PNG")

        return self._write(path, "plot PNG", write)

    def export_svg(self, path: str | Path | None = None) -> Path | None:
        """The plot as a vector SVG."""
        path = self._path(path, "Export plot", "SVG image (*.svg)", ".svg")
        if path is None or not self._has_lines():
            return None
        text = self.plots.svg_text()
        return self._write(path, "plot SVG", lambda target: atomic_write_text(target, text))

    def export_csv(self, path: str | Path | None = None) -> Path | None:
        """The plotted lines as CSV: one row per size, one column per line (GB/s)."""
        path = self._path(path, "Export plot data", "CSV table (*.csv)", ".csv")
        if path is None or not self._has_lines():
            return None
        text = self.plots.csv_text()
        return self._write(path, "plot data", lambda target: atomic_write_text(target, text))
