"""The plots dock's "Import measurements…": raw logs and results files, compared with predictions.

*Import measurements…* takes a raw nccl-tests/rccl-tests log (text or ``-J`` JSON, read by
:func:`solver.simulate.nccl_tests.load_log`, as ``forestcoll measure import`` reads it; a log run
on another number of ranks than the open fabric's compute nodes is refused) or the measured
tables of an HDF5 results file (one of another size of fabric is refused). The file is read in a
background task; errors are one-line dialogs.

The measured tables are kept in the result state (``ResultState.measured``: Export › Results
writes them, a new fabric drops them) and compared with the plot's predicted lines: the error
table beside the plot and the hover read-out's note on each measured point
(:mod:`fc_gui.model.measured`). When measured sizes are missing from the shown simulation, the
simulation is run again over them (by :mod:`fc_gui.controllers.simulation`, told by
``ResultState.measured_imported``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.results_file import is_results_file
from fc_gui.model.measured import (
    check_ranks,
    compare,
    default_reference,
    hover_note,
    log_table,
    measured_tables,
    table_name,
)
from fc_gui.model.result_state import ResultState
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable

IMPORT_FILTER = (
    "Measurements (*.log *.txt *.out *.json *.h5 *.hdf5);;"
    "nccl-tests / rccl-tests logs (*.log *.txt *.out *.json);;"
    "Results files (*.h5 *.hdf5);;All files (*)"
)


def read_measurements(path: str | Path, compute_nodes: int) -> tuple[dict[str, ResultTable], str]:
    """The measured tables of ``path`` (a results file: by their names there; a raw log: named
    as ``measure import`` names it) for a fabric of ``compute_nodes`` compute nodes, and a
    warning ('' if none). Raises ForestCollError."""
    path = Path(path)
    if is_results_file(path):
        from solver.io.hdf5 import results as h5

        n = len(h5.read_topology(path).compute_ids)
        if n != compute_nodes:
            raise ForestCollError(
                f"{path.name} holds a fabric of {n} compute nodes, the open one has "
                f"{compute_nodes}; open that file instead (File › Open)"
            )
        tables = measured_tables(h5.read_results(path))
        if not tables:
            raise ForestCollError(
                f"{path.name} holds no measured table (forestcoll measure import writes them)"
            )
        return tables, ""
    from solver.simulate.nccl_tests import load_log_runs

    tables: dict[str, ResultTable] = {}
    warnings = []
    for meas in load_log_runs(path):  # a "run all collectives" log: one table per collective
        warning = check_ranks(meas, compute_nodes, path)
        if warning and warning not in warnings:
            warnings.append(warning)
        table = log_table(meas)
        tables[table_name(table, tables)] = table
    return tables, "; ".join(warnings)


class MeasurementsController(QObject):
    """Imported measurements of the open fabric and their comparison with the predictions.

    Signals
    -------
    imported(int)
        A file was imported: how many lines it added.
    """

    imported = Signal(int)

    def __init__(self, state: ResultState, doc, plots, messages, window, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.doc = doc
        self.plots = plots
        self.messages = messages
        self.window = window  # the file dialog's parent
        self.labels: dict[str, str] = {}  # storage name -> name on the plot
        self.task = BackgroundTask(self)
        self._reading: str = ""
        self.task.done.connect(self._on_read)
        self.task.failed.connect(self._on_failed)
        self.plots.import_requested.connect(self.import_file)
        self.plots.imported_cleared.connect(self._forget)
        self.plots.error_table.choice_changed.connect(self.refresh)
        state.schedule_changed.connect(lambda *_: self.refresh())
        state.simulated_changed.connect(self.refresh)

    # ------------------------------------------------------------------ importing
    def import_file(self, path: str | None = None) -> bool:
        """Read ``path`` (asked for when None) in the background; True if reading started."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.window, "Import measurements", "", IMPORT_FILTER
            )
            if not path:
                return False
        n = len(self.doc.to_topology().compute_ids)
        self._reading = str(path)
        self.plots.set_status(f"reading {Path(path).name}…")
        self.task.start(lambda progress, cancel: read_measurements(path, n))
        return True

    def _on_read(self, outcome) -> None:
        tables, warning = outcome
        name = Path(self._reading).name
        count = self.add(tables)
        text = f"{count} measured series from {name}"
        if warning:
            text += f" (warning: {warning})"
            self.messages.status(f"warning: {warning}", 10000)
        self.plots.set_status(text)
        self.imported.emit(count)
        self.state.set_measured(self.state.measured, imported=True)

    def _on_failed(self, message: str) -> None:
        self.plots.set_status("")
        name = Path(self._reading).name
        text = message.splitlines()[0] if message else "cannot read it"
        if not is_results_file(self._reading) and "HDF5" not in text:
            text += " (the log of forestcoll measure import: nccl-tests/rccl-tests text or -J JSON)"
        if name not in text:
            text = f"{name}: {text}"
        self.messages.report_error(text, title="Import failed")

    def add(self, tables: dict[str, ResultTable]) -> int:
        """Plot and keep measured ``tables`` (name: table; a name already kept gets the next
        free ``measure import`` name); returns the count."""
        count = 0
        for name, table in tables.items():
            label = self.plots.add_table(table, kind="imported")
            if label is None:
                continue
            measured = self.state.measured
            key = name if name not in measured else table_name(table, measured)
            measured[key] = table
            self.labels[key] = label
            count += 1
        self.refresh()
        return count

    def _forget(self) -> None:
        self.task.abandon()
        self.state.set_measured({})
        self.labels = {}

    # ------------------------------------------------------------------ comparing
    def references(self) -> list[str]:
        """The plot's predicted lines (simulated, model, imported simulated), in plot order."""
        return [name for name, line in self.plots.lines.items() if line.kind != "measured"]

    def refresh(self) -> None:
        """Recompute the error table and the measured points' hover notes."""
        plots = self.plots
        shown = {k: v for k, v in self.labels.items() if v in plots.lines}
        if not shown:
            plots.set_line_notes({})
            plots.show_error_table(False)
            return
        table_view = plots.error_table
        candidates = self.references()
        by_label = {label: key for key, label in shown.items()}
        current = table_view.measured_choice()
        if current not in by_label:
            current = next(iter(by_label))
        chosen = table_view.reference_choice()
        reference = chosen if chosen in candidates else default_reference(current, candidates)
        table_view.set_choices(list(by_label), candidates, current, reference)
        plots.show_error_table(True)
        schedule = self.state.schedule
        notes = {}
        for label, key in by_label.items():
            table = self.state.measured[key]
            ref = reference or default_reference(label, candidates)  # one choice for all
            rows, _ = self._rows(table, label, ref, schedule)
            same = schedule is not None and schedule.collective == table.collective
            notes[label] = tuple(hover_note(ref, r) for r in rows) if same else ()
            if label == current:
                rows, note = self._rows(table, label, reference, schedule)
                table_view.set_rows(rows, note)
        plots.set_line_notes(notes)

    def _rows(self, table: ResultTable, label: str, reference: str, schedule):
        """The comparison rows of the plotted measured line ``label`` with ``reference``."""
        line = self.plots.lines[label]
        same = schedule is not None and schedule.collective == table.collective
        bound = float(schedule.optimal_algbw_exact) if same else None
        ref = self.plots.lines.get(reference) if same else None
        rows = compare(
            line.size_bytes,
            line.algbw,
            None if ref is None else ref.size_bytes,
            None if ref is None else ref.algbw,
            bound,
        )
        if schedule is None:
            note = "Solve and Simulate to compare with the predictions."
        elif not same:
            note = (
                f"measured {table.collective}, the result shown is {schedule.collective}: "
                f"solve {table.collective} to compare"
            )
        elif not self.state.simulated:
            note = "Simulate to compare with the library and ForestColl."
        elif ref is not None and any(not np.isfinite(r.predicted) for r in rows):
            note = f"{reference} has no point at some measured sizes"
        else:
            note = ""
        return rows, note
