"""Simulating the shown schedule and the baselines for the plots dock (in a background task).

The designer simulates what ``forestcoll simulate`` does for the same fabric and sizes: ForestColl,
``nccl`` (the library's own pick, :mod:`solver.simulate.library`) and the baselines, every
simulated algorithm on links derated to the efficiency that library reaches (the library of the
fabric: :func:`~solver.simulate.library.library_for`). The numbers are the CLI's (a test compares
them); the plot's title carries the CLI's note when NVLS in-switch reduction beats the bound.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from fc_gui.controllers.solve_worker import BackgroundTask
from fc_gui.model.plot_series import ordered
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.simulate import LIBRARY, Sweep, parse_sizes, result_tables, sweep
from solver.simulate.library import library_for

if TYPE_CHECKING:
    from fc_gui.controllers.results import ResultsController

#: Message sizes simulated for the plot (factor 4 keeps a sweep to seconds) and algorithms
#: (the CLI's defaults but ``ring1``, one ring, which only ever trails ``ring``).
SIM_SIZES = "1K:1G:4"
SIM_ALGORITHMS = ("forestcoll", LIBRARY, "ring", "tree", "direct", "blink")


def simulate_schedule(schedule: Schedule, cancel=None, progress=None) -> Sweep:
    """``forestcoll simulate``'s sweep of ``schedule``, the library and the baselines over
    :data:`SIM_SIZES`, at the library's link efficiency (``progress(text, fraction)`` about
    every 0.1 s; ``cancel`` stops within ~10 ms)."""
    topo = schedule.topology
    return sweep(
        topo, schedule.collective, SIM_ALGORITHMS, parse_sizes(SIM_SIZES),
        schedule=schedule, cancel=cancel, progress=progress, library=library_for(topo),
    )


class SimulationController(QObject):
    """The plots dock's Simulate button: simulates the shown schedule in the background; a second
    press cancels. Tables of a result replaced meanwhile are dropped; ``tables`` holds the
    simulated tables shown (the results file export writes them)."""

    def __init__(self, results: ResultsController) -> None:
        super().__init__(results)
        self.results = results
        self.plots = results.plots
        self.task = BackgroundTask(self)
        self._cancel = threading.Event()
        self._schedule: Schedule | None = None
        self.tables: dict[str, ResultTable] = {}
        results.schedule_changed.connect(self._forget)
        self.task.done.connect(self._on_simulated)
        self.task.failed.connect(self._on_failed)
        self.task.progress.connect(self._on_progress)
        self.plots.simulate_requested.connect(self.simulate)

    def simulate(self) -> None:
        """Simulate the shown schedule and the baselines (background); a second call cancels."""
        if self.task.is_running():
            self.cancel()
            return
        schedule = self._schedule = self.results.schedule
        if schedule is None:
            return
        self._cancel = threading.Event()
        cancel = self._cancel
        self.plots.set_simulating(True)
        report = self.task.report
        self.task.start(
            lambda: simulate_schedule(schedule, cancel=cancel, progress=report), cancel=cancel
        )

    def _on_progress(self, text: str, fraction: float) -> None:
        if self.task.is_running() and not self._cancel.is_set():
            self.plots.set_status(f"{text}: {100 * fraction:.0f} %")

    def _on_simulated(self, sw: Sweep) -> None:
        self.plots.set_simulating(False)
        if self._schedule is not self.results.schedule:
            self.plots.set_status("simulation dropped: the result changed meanwhile")
            return
        self.tables = ordered(result_tables(sw))  # ForestColl first, then the library
        n = self.plots.add_tables(self.tables, kind="simulated")
        lib = sw.library
        where = f", links at {lib.name}'s efficiency ({lib.generation})" if lib else ""
        self.plots.set_status(f"{n} simulated series{where}")

    def show_saved(self, schedule: Schedule, tables: dict[str, ResultTable]) -> int:
        """Show simulated ``tables`` saved with ``schedule`` (the shown result, opened from a
        results file) as if simulated here; returns how many lines were added."""
        self._schedule = schedule
        self.tables = ordered(tables)
        n = self.plots.add_tables(self.tables, kind="simulated")
        if n:
            self.plots.set_status(f"{n} simulated series from the results file")
        return n

    def _forget(self, schedule) -> None:
        if schedule is not self._schedule:
            self.tables = {}

    def _on_failed(self, message: str) -> None:
        self.plots.set_simulating(False)
        if self._cancel.is_set():
            self.plots.set_status("simulation cancelled")
            return
        self.plots.set_status("simulation failed")
        self.results.report_error(message, title="Simulation failed")

    def cancel(self) -> None:
        """Stop the simulation: the plot forgets it at once, the worker stops in the background
        (at its next check of the cancel flag)."""
        if self.task.abandon():
            self.plots.set_simulating(False)
            self.plots.set_status("simulation cancelled")
