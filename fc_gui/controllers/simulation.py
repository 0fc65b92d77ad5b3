"""Simulating the shown schedule and the baselines for the plots dock (in a background task)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject

from fc_gui.controllers.solve_worker import BackgroundTask
from solver.model.results import ResultTable
from solver.model.schedule import Schedule
from solver.simulate import parse_sizes, result_tables, sweep

#: Message sizes simulated for the plot (factor 4 keeps a sweep to seconds) and algorithms.
SIM_SIZES = "1K:1G:4"
SIM_ALGORITHMS = ("forestcoll", "ring", "tree", "direct", "blink")


def simulate_schedule(schedule: Schedule, cancel=None, progress=None) -> dict[str, ResultTable]:
    """Simulated tables of ``schedule`` and the baselines over :data:`SIM_SIZES`
    (``progress(text, fraction)`` about every 0.1 s; ``cancel`` stops within ~10 ms)."""
    sw = sweep(
        schedule.topology, schedule.collective, SIM_ALGORITHMS, parse_sizes(SIM_SIZES),
        schedule=schedule, cancel=cancel, progress=progress,
    )
    return result_tables(sw)
