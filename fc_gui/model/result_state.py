"""The designer's result state: what the solve/results side shows and does, one object with
signals that every results helper is given (:class:`ResultState`).

It holds data only (no view, no worker): the shown schedule, the result it is compared with
after a what-if solve, whether the shown result is stale, the allreduce figures of its marked
switches, whether a solve runs, and the simulated and measured tables on the plot. Helpers
write through its setters and react to its signals; none of them reaches into another.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from fc_gui.model.switch_bounds import SwitchBounds
from solver.model.results import ResultTable
from solver.model.schedule import Schedule


class ResultState(QObject):
    """The shown result and the work on it (see module docstring).

    Signals
    -------
    schedule_changed(object)
        A new schedule is shown (or None when cleared); emitted by :meth:`announce_schedule`
        once every view shows it.
    stale_changed(bool)
        The shown result became stale (the fabric changed) or fresh.
    switch_bounds_changed(object)
        The allreduce figures of the shown result's marked switches arrived
        (:class:`fc_gui.model.switch_bounds.SwitchBounds`).
    solving_changed(bool)
        A solve started (True) or ended (False).
    simulated_changed()
        The simulated lines on the plot changed (shown, or dropped with their result).
    measured_imported()
        Measured tables were imported onto the plot (``measured`` holds them).
    """

    schedule_changed = Signal(object)
    stale_changed = Signal(bool)
    switch_bounds_changed = Signal(object)
    solving_changed = Signal(bool)
    simulated_changed = Signal()
    measured_imported = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the schedule shown (None: no result)
        self.schedule: Schedule | None = None
        #: the result a what-if solve is compared with (None: no comparison)
        self.previous: Schedule | None = None
        #: the trees using each link of the shown schedule (None: not computed yet)
        self.link_users: dict | None = None
        self.stale = False
        #: the allreduce figures of the shown result's marked switches (None: none or pending)
        self.switch_bounds: SwitchBounds | None = None
        self.solving = False
        #: the simulated tables on the plot, by name (the results file export writes them)
        self.simulated: dict[str, ResultTable] = {}
        #: the measured tables imported for the open fabric, by storage name
        self.measured: dict[str, ResultTable] = {}

    # ------------------------------------------------------------------ the shown result
    @property
    def fresh(self) -> Schedule | None:
        """The shown schedule if it is not stale, else None."""
        return None if self.stale else self.schedule

    def set_schedule(self, schedule: Schedule | None, link_users: dict | None = None) -> None:
        """Hold ``schedule`` as the shown one; its figures are dropped (views follow, then
        :meth:`announce_schedule`). ``link_users``: its trees by link, if already computed."""
        self.schedule = schedule
        self.link_users = link_users
        self.switch_bounds = None
        if schedule is None:
            self.previous = None

    def set_previous(self, schedule: Schedule | None) -> None:
        """Compare the next result shown with ``schedule`` (a what-if solve); None: compare with
        nothing."""
        self.previous = schedule

    def announce_schedule(self) -> None:
        """Every view shows :attr:`schedule`: emit ``schedule_changed``."""
        self.schedule_changed.emit(self.schedule)

    def set_stale(self, stale: bool) -> bool:
        """Mark the shown result stale (never without one); True if that changed it."""
        stale = bool(stale and self.schedule is not None)
        if stale == self.stale:
            return False
        self.stale = stale
        self.stale_changed.emit(stale)
        return True

    def set_switch_bounds(self, sb: SwitchBounds | None) -> None:
        self.switch_bounds = sb
        self.switch_bounds_changed.emit(sb)

    # ------------------------------------------------------------------ work under way
    def set_solving(self, solving: bool) -> None:
        self.solving = bool(solving)
        self.solving_changed.emit(self.solving)

    def set_simulated(self, tables: dict[str, ResultTable]) -> None:
        """The simulated ``tables`` now on the plot ({} when dropped)."""
        self.simulated = tables
        self.simulated_changed.emit()

    def set_measured(self, tables: dict[str, ResultTable], imported: bool = False) -> None:
        """The measured ``tables`` kept for the open fabric; ``imported``: just read from a
        file (``measured_imported`` follows)."""
        self.measured = tables
        if imported:
            self.measured_imported.emit()
