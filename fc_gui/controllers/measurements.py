"""The plots dock's "Import measurements…": tables of an HDF5 results file on the plot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from solver.model.errors import ForestCollError

if TYPE_CHECKING:
    from fc_gui.controllers.results import ResultsController


class MeasurementImport(QObject):
    """Plots measured (and simulated) tables from a results file; errors become one-line dialogs."""

    def __init__(self, results: ResultsController) -> None:
        super().__init__(results)
        self.results = results
        results.plots.import_requested.connect(self.import_file)

    def import_file(self, path: str | None = None) -> int:
        """Plot the tables of ``path`` (asked for when None); returns how many series were added."""
        results = self.results
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                results.window, "Import measurements", "",
                "Results files (*.h5 *.hdf5);;All files (*)",
            )
            if not path:
                return 0
        try:
            return results.plots.import_file(path)
        except ForestCollError as exc:
            results.report_error(str(exc), title="Import failed")
        except OSError as exc:
            results.report_error(f"cannot read {path}: {exc.strerror or exc}", title="Import failed")
        return 0
