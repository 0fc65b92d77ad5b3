"""Simulating the shown schedule and the baselines for the plots dock (in a background task).

The designer simulates what ``forestcoll simulate`` does for the same fabric and sizes: ForestColl,
``nccl`` (the library's own pick, :mod:`solver.simulate.library`) and the baselines, every
simulated algorithm on links derated to the efficiency that library reaches (the library of the
fabric, :func:`fc_gui.model.library_choice.auto_library`, or the one chosen in the Plots dock's
library selector). The numbers are the CLI's (a test compares them); the plot's title carries
the CLI's note when NVLS in-switch reduction beats the bound. The sizes are :data:`SIM_SIZES` and
every measured size of the shown collective (the measurements imported on the plot), so each
measured point has its prediction.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject

from fc_gui.controllers.background import BackgroundTask
from fc_gui.model.library_choice import chosen_library, library_text
from fc_gui.model.measured import simulation_sizes
from fc_gui.model.plot_series import ordered
from fc_gui.model.result_state import ResultState
from solver.model.errors import ForestCollError
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.model.topology import Topology
from solver.simulate import LIBRARY, NVLS, Sweep, parse_sizes, result_tables, sweep
from solver.simulate.library import Library, library_for

#: Message sizes simulated for the plot (factor 4 keeps a sweep to seconds) and algorithms
#: (the CLI's defaults but ``ring1``, one ring, which only ever trails ``ring``;
#: ``forestcoll-nvls`` is drawn only on fabrics whose switches reduce and multicast).
SIM_SIZES = "1K:1G:4"
SIM_ALGORITHMS = ("forestcoll", NVLS, LIBRARY, "ring", "tree", "direct", "blink")


def simulate_schedule(
    schedule: Schedule,
    cancel=None,
    progress=None,
    library: Library | None = None,
    sizes: list[int] | None = None,
) -> Sweep:
    """``forestcoll simulate``'s sweep of ``schedule``, the library and the baselines over
    ``sizes`` (default :data:`SIM_SIZES`), at ``library``'s link efficiency (default the
    fabric's, as the CLI without ``--library``); ``progress(text, fraction)`` about every 0.1 s;
    ``cancel`` stops within ~10 ms."""
    topo = schedule.topology
    return sweep(
        topo,
        schedule.collective,
        SIM_ALGORITHMS,
        sizes or parse_sizes(SIM_SIZES),
        schedule=schedule,
        cancel=cancel,
        progress=progress,
        library=library if library is not None else library_for(topo),
    )


_EMPTY = Topology("empty", (), ())


class SimulationController(QObject):
    """The plots dock's Simulate button: simulates the shown schedule in the background; a second
    press cancels. Tables of a result replaced meanwhile are dropped; ``state.simulated`` holds
    the simulated tables shown (the results file export writes them). Measurements imported at
    sizes the shown simulation misses are simulated again (``state.measured_imported``).
    """

    def __init__(self, state: ResultState, plots, messages, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.plots = plots
        self.messages = messages
        self.task = BackgroundTask(self)
        self._schedule: Schedule | None = None
        state.schedule_changed.connect(self._forget)
        state.measured_imported.connect(self._cover_measured_sizes)
        self.task.done.connect(self._on_simulated)
        self.task.failed.connect(self._on_failed)
        self.task.cancelled.connect(self._on_cancelled)
        self.task.progress.connect(self._on_progress)
        self.plots.simulate_requested.connect(self.simulate)
        self.plots.library_changed.connect(self._on_library_changed)
        self.library_why = ""

    def library(self, schedule: Schedule) -> tuple[Library, str]:
        """The library to simulate ``schedule`` with (the selector's choice) and why; a bad
        choice raises ForestCollError."""
        return chosen_library(schedule.topology, self.plots.library_text())

    def sizes(self, schedule: Schedule) -> list[int]:
        """:data:`SIM_SIZES` and the measured sizes of ``schedule``'s collective."""
        tables = self.state.measured.values()
        return simulation_sizes(parse_sizes(SIM_SIZES), tables, schedule.collective)

    def simulate(self) -> None:
        """Simulate the shown schedule and the baselines (background); a second call cancels."""
        if self.task.is_running():
            self.cancel()
            return
        schedule = self._schedule = self.state.schedule
        if schedule is None:
            return
        try:
            library, why = self.library(schedule)
        except ForestCollError as exc:
            self.plots.mark_library(False, str(exc))
            self.messages.report_error(str(exc), title="Library")
            return
        self.plots.mark_library(True)
        self.library_why = why
        sizes = self.sizes(schedule)
        self.plots.set_simulating(True)
        self.task.start(
            lambda progress, cancel: simulate_schedule(
                schedule, cancel=cancel, progress=progress, library=library, sizes=sizes
            )
        )

    def _on_library_changed(self, text: str) -> None:
        """A library chosen in the selector: checked at once; a simulation shown (or running)
        is run again with it."""
        schedule = self.state.schedule
        try:
            chosen_library(schedule.topology if schedule is not None else _EMPTY, text)
        except ForestCollError as exc:
            self.plots.mark_library(False, str(exc))
            self.plots.set_status(f"library refused: {exc}")
            return
        self.plots.mark_library(True, "")
        if schedule is None or not (self.state.simulated or self.task.is_running()):
            return
        if self.task.is_running():
            self.task.abandon()
            self.plots.set_simulating(False)
        self.simulate()

    def _on_progress(self, text: str, fraction: float) -> None:
        if self.task.is_running():
            self.plots.set_status(f"{text}: {100 * fraction:.0f} %")

    def _on_simulated(self, sw: Sweep) -> None:
        self.plots.set_simulating(False)
        if self._schedule is not self.state.schedule:
            self.plots.set_status("simulation dropped: the result changed meanwhile")
            return
        tables = ordered(result_tables(sw))  # ForestColl first, then the library
        self._drop_shown_lines()
        n = self.plots.add_tables(tables, kind="simulated")
        lib = sw.library
        sizes = len({r.size for r in sw.rows})
        where = f"; library {library_text(lib, self.library_why)}" if lib else ""
        self.plots.set_status(f"{n} simulated series at {sizes} sizes{where}")
        self.state.set_simulated(tables)

    def _drop_shown_lines(self) -> None:
        """A simulation shown again (other sizes or library) replaces the lines before it."""
        self.plots.clear_simulated()

    def show_saved(self, schedule: Schedule, tables: dict[str, ResultTable]) -> int:
        """Show simulated ``tables`` saved with ``schedule`` (the shown result, opened from a
        results file) as if simulated here; returns how many lines were added."""
        self._schedule = schedule
        tables = ordered(tables)
        n = self.plots.add_tables(tables, kind="simulated")
        if n:
            self.plots.set_status(f"{n} simulated series from the results file")
        self.state.set_simulated(tables)
        return n

    def _forget(self, schedule) -> None:
        if schedule is not self._schedule and self.state.simulated:
            self.state.set_simulated({})

    def _on_cancelled(self) -> None:
        self.plots.set_simulating(False)
        self.plots.set_status("simulation cancelled")

    def _on_failed(self, message: str) -> None:
        self.plots.set_simulating(False)
        self.plots.set_status("simulation failed")
        self.messages.report_error(message, title="Simulation failed")

    def cancel(self) -> None:
        """Stop the simulation: the plot forgets it at once, the worker stops in the background
        (at its next check of the cancel flag)."""
        if self.task.abandon():
            self.plots.set_simulating(False)
            self.plots.set_status("simulation cancelled")

    def _cover_measured_sizes(self) -> None:
        """Simulate again when the shown simulation misses measured sizes of its collective."""
        schedule = self.state.schedule
        if schedule is None or not self.state.simulated or self.task.is_running():
            return
        simulated = {int(s) for t in self.state.simulated.values() for s in t.size_bytes}
        missing = {
            int(s)
            for t in self.state.measured.values()
            if t.collective == schedule.collective
            for s, a in zip(t.size_bytes, t.measured_algbw)
            if np.isfinite(a) and s > 0
        } - simulated
        if missing:
            self.simulate()
