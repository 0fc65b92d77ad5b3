"""The Export menu: results HDF5, MSCCL XML (with a runtime choice), and PNG/SVG of the canvas.

Every export writes atomically (``solver.io.files``) and reports problems as a one-line error
dialog. Functions take an explicit path so tests and scripts skip the file dialogs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QSpinBox,
)

from fc_gui.controllers.export_files import make_readable, save_window_png
from fc_gui.model.result_state import ResultState
from fc_gui.model.result_text import plural
from fc_gui.views.dialog_titles import keep_title_whole
from solver.io.files import atomic_path
from solver.model.errors import ForestCollError
from solver.msccl import PROTOCOLS, RUNTIMES, ExportOptions, export_xml, runtime_named


class MscclOptionsDialog(QDialog):
    """Runtime, protocol and instances for an MSCCL XML export."""

    def __init__(self, parent=None, collective: str = "allgather") -> None:
        super().__init__(parent)
        self.setWindowTitle("Export MSCCL XML")
        keep_title_whole(self)
        self.runtime_box = QComboBox()
        self.runtime_box.addItems(list(RUNTIMES))
        self.runtime_box.setToolTip(
            "msccl-executor: NCCL with msccl-executor-nccl; rccl: ROCm RCCL's MSCCL;"
            " msccl-legacy: microsoft/msccl"
        )
        self.proto_box = QComboBox()
        self.proto_box.addItems(list(PROTOCOLS))
        self.instances_box = QSpinBox()
        self.instances_box.setRange(1, 32)
        self.instances_box.setValue(1)
        form = QFormLayout(self)
        form.addRow(QLabel(f"Collective: {collective}"))
        form.addRow("Runtime", self.runtime_box)
        form.addRow("Protocol", self.proto_box)
        form.addRow("Instances", self.instances_box)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def values(self) -> tuple[str, str, int]:
        return (
            self.runtime_box.currentText(),
            self.proto_box.currentText(),
            self.instances_box.value(),
        )


class ExportActions(QObject):
    """Export menu entries (added to ``menu``) writing ``state``'s result and ``window``'s
    ``canvas``; the canvas export's caption is the cut badge of ``overlays``
    (:class:`~fc_gui.controllers.result_overlays.ResultOverlays`)."""

    def __init__(self, state: ResultState, window, canvas, overlays, menu, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.window = window
        self.canvas = canvas
        self.overlays = overlays
        self.h5_action = QAction("Results (&HDF5)…", self)
        self.h5_action.triggered.connect(lambda: self.export_h5())
        self.msccl_action = QAction("&MSCCL XML…", self)
        self.msccl_action.triggered.connect(lambda: self.export_msccl())
        self.png_action = QAction("Canvas as &PNG…", self)
        self.png_action.triggered.connect(lambda: self.export_png())
        self.svg_action = QAction("Canvas as &SVG…", self)
        self.svg_action.triggered.connect(lambda: self.export_svg())
        self.window_png_action = QAction("&Window as PNG…", self)
        self.window_png_action.triggered.connect(lambda: self.export_window_png())
        self.figure_action = QAction("&Figure (vector SVG or PNG of any width)…", self)
        self.figure_action.triggered.connect(lambda: self.export_figure())
        if not menu.isEmpty():
            menu.addSeparator()
        for act in (self.h5_action, self.msccl_action):
            menu.addAction(act)
        menu.addSeparator()
        menu.addAction(self.figure_action)
        for act in (self.png_action, self.svg_action, self.window_png_action):
            menu.addAction(act)
        state.schedule_changed.connect(lambda *_: self.update_enabled())
        self.update_enabled()

    def update_enabled(self) -> None:
        has = self.state.schedule is not None
        self.h5_action.setEnabled(has)
        self.msccl_action.setEnabled(has)
        tip = "" if has else "Solve first"
        self.h5_action.setToolTip(tip)
        self.msccl_action.setToolTip(tip)

    # ------------------------------------------------------------------ helpers
    def _ask_path(self, title: str, filters: str, suffix: str) -> Path | None:
        stem = self.window.document.name or "fabric"
        # results files are added to, never replaced: no "replace it?" question for them
        options = (
            QFileDialog.Option.DontConfirmOverwrite if suffix == ".h5" else QFileDialog.Option(0)
        )
        path, _ = QFileDialog.getSaveFileName(
            self.window, title, f"{stem}{suffix}", filters, options=options
        )
        return Path(path) if path else None

    def _fail(self, message: str) -> None:
        self.window.show_error(message, "Export failed")

    def _done(self, path: Path, what: str) -> None:
        make_readable(path)
        self.window.statusBar().showMessage(f"Exported {what} to {path}", 6000)

    def _schedule(self):
        s = self.state.schedule
        if s is None:
            self._fail("nothing to export: solve the fabric first")
        return s

    # ------------------------------------------------------------------ exports
    def export_h5(self, path: str | Path | None = None) -> Path | None:
        """Add the shown schedule, its predicted tables, the simulated tables on the plot
        (ForestColl and the baselines, as ``forestcoll simulate -o`` writes them) and the
        imported measurements (as ``forestcoll measure import`` writes them, the bound as their
        prediction) to an HDF5 results file; an existing file of the same fabric is added to."""
        schedule = self._schedule()
        if schedule is None:
            return None
        path = (
            Path(path)
            if path
            else self._ask_path(
                "Export results (added to an existing results file of this fabric)",
                "HDF5 results (*.h5 *.hdf5)",
                ".h5",
            )
        )
        if path is None:
            return None
        try:
            from fc_gui.model.measured import with_bound
            from solver.io.hdf5.results import write_results, write_schedule
            from solver.simulate.estimate import model_tables

            name = write_schedule(path, schedule, tables=model_tables)
            simulated = self.state.simulated
            for tname, table in simulated.items():
                link = name if table.algorithm == "forestcoll" else table.schedule
                write_results(path, tname, replace(table, schedule=link))
            measured = self.state.measured
            for tname, table in measured.items():
                write_results(path, tname, with_bound(table, schedule, name))
        except ForestCollError as exc:
            self._fail(str(exc))
            return None
        except OSError as exc:
            self._fail(f"cannot write {path}: {exc.strerror or exc}")
            return None
        sims = f", {plural(len(simulated), 'simulated table')}" if simulated else ""
        meas = f", {plural(len(measured), 'measured table')}" if measured else ""
        self._done(path, f"schedule '{name}'{sims}{meas}")
        return path

    def export_msccl(
        self,
        path: str | Path | None = None,
        runtime: str | None = None,
        proto: str = "Simple",
        instances: int = 1,
    ) -> Path | None:
        """Write the shown schedule as MSCCL XML for ``runtime`` (asked for when None)."""
        schedule = self._schedule()
        if schedule is None:
            return None
        if runtime is None:
            dialog = MscclOptionsDialog(self.window, schedule.collective)
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            runtime, proto, instances = dialog.values()
        if path is None:
            path = self._ask_path("Export MSCCL XML", "MSCCL algorithm (*.xml)", ".xml")
            if path is None:
                return None
        path = Path(path)
        try:
            options = ExportOptions(runtime_named(runtime), proto, instances)
            text = export_xml(schedule, options)
            with atomic_path(path) as tmp:
                tmp.write_text(text, encoding="utf-8")
        except ForestCollError as exc:
            self._fail(str(exc))
            return None
        except OSError as exc:
            self._fail(f"cannot write {path}: {exc.strerror or exc}")
            return None
        self._done(path, f"MSCCL XML for {runtime}")
        return path

    def export_png(self, path: str | Path | None = None) -> Path | None:
        """The canvas as shown (overlays, colour bar and cut caption included) as PNG."""
        path = Path(path) if path else self._ask_path("Export canvas", "PNG image (*.png)", ".png")
        if path is None:
            return None
        pixmap = self.canvas.grab()
        try:
            with atomic_path(path) as tmp:
                if pixmap.isNull() or not pixmap.save(str(tmp), "PNG"):
                    raise OSError(f"Qt could not encode {path.name}")
        except OSError as exc:
            self._fail(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}")
            return None
        self._done(path, "canvas PNG")
        return path

    def export_window_png(self, path: str | Path | None = None) -> Path | None:
        path = Path(path) if path else self._ask_path("Export window", "PNG image (*.png)", ".png")
        if path is None:
            return None
        try:
            save_window_png(self.window, path)
        except (ForestCollError, OSError) as exc:
            self._fail(str(exc))
            return None
        self._done(path, "window PNG")
        return path

    def export_figure(self, path: str | Path | None = None, width: int | None = None):
        """The fabric and the shown result as a slide figure (.svg vector, .png ``width`` px)."""
        from fc_gui.controllers.figure import DEFAULT_WIDTH, MAX_WIDTH, save_figure

        if path is None:
            path, chosen = QFileDialog.getSaveFileName(
                self.window, "Export figure", "", "SVG figure (*.svg);;PNG figure (*.png)"
            )
            if not path:
                return None
            path = Path(path)
            if path.suffix.lower() not in (".svg", ".png"):
                path = path.with_suffix(".png" if "PNG" in chosen else ".svg")
            if path.suffix.lower() == ".png" and width is None:
                from fc_gui.views.dialog_titles import ask_int

                width, ok = ask_int(
                    self.window,
                    "Figure width",
                    "Width (pixels; 1920 for a full-HD slide):",
                    DEFAULT_WIDTH,
                    100,
                    MAX_WIDTH,
                )
                if not ok:
                    return None
        try:
            out = save_figure(self.window, path, width or DEFAULT_WIDTH)
        except ForestCollError as exc:
            self._fail(str(exc))
            return None
        make_readable(out)
        self._done(out, "figure")
        return out

    def export_svg(self, path: str | Path | None = None) -> Path | None:
        """The visible canvas as SVG (vector: links, nodes, overlays, labels, cut caption)."""
        path = Path(path) if path else self._ask_path("Export canvas", "SVG image (*.svg)", ".svg")
        if path is None:
            return None
        from PySide6.QtCore import QRectF, QSize
        from PySide6.QtGui import QColor, QPainter
        from PySide6.QtSvg import QSvgGenerator

        canvas = self.canvas
        view_rect = canvas.viewport().rect()
        source = canvas.mapToScene(view_rect).boundingRect()
        try:
            with atomic_path(path) as tmp:
                gen = QSvgGenerator()
                gen.setFileName(str(tmp))
                gen.setSize(QSize(view_rect.width(), view_rect.height()))
                gen.setViewBox(QRectF(0, 0, view_rect.width(), view_rect.height()))
                gen.setTitle(f"{self.window.document.name} — ForestColl Designer")
                painter = QPainter(gen)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                target = QRectF(0, 0, view_rect.width(), view_rect.height())
                painter.fillRect(target, canvas.backgroundBrush())
                canvas.scene().render(painter, target, source)
                caption = self.overlays.cut.badge
                if caption is not None and caption.isVisible():
                    painter.setPen(QColor(183, 28, 28))
                    painter.drawText(QRectF(12, 10, target.width() - 24, 80), caption.text())
                painter.end()
                if tmp.stat().st_size == 0:
                    raise OSError("the SVG renderer wrote nothing")
        except OSError as exc:
            self._fail(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}")
            return None
        self._done(path, "canvas SVG")
        return path
