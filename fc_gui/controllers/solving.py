"""Solving the document's fabric: the worker thread, the JIT warm-up, stale marking when the
fabric changes, "re-solve on edit", and the "what if this fails" entries of the canvas menu."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.solve_jobs import SolveOutcome, default_solve, solve_job, warmup_job
from fc_gui.model.commands import SetDisabledCommand
from fc_gui.model.trees import tree_rows, trees_using_links
from fc_gui.views.plots_dock import model_tables
from fc_gui.views.solve_panel import AUTO_RESOLVE_MAX_NODES
from solver.model.errors import ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import validate

if TYPE_CHECKING:
    from fc_gui.controllers.results import ResultsController

#: Delay after start-up before the JIT warm-up solve (ms): the window paints first.
WARMUP_DELAY_MS = 400

#: Delay after the last edit before a re-solve-on-edit starts (ms).
AUTO_RESOLVE_DELAY_MS = 400


def prepare_display(schedule: Schedule) -> dict:
    """Derived display data, computed in the worker thread so showing a result stays quick
    (the allreduce figures of marked switches come after, from their own background task:
    :meth:`~fc_gui.controllers.results.ResultsController.compute_switch_bounds`)."""
    return {
        "tree_rows": tree_rows(schedule),
        "link_users": trees_using_links(schedule),
        "model_tables": model_tables(schedule),
    }


class SolveController(QObject):
    """Starts, cancels and reports solves of ``results``'s document (see module docstring)."""

    def __init__(self, results: ResultsController, solve_fn=None, warmup: bool = True) -> None:
        super().__init__(results)
        self.results = results
        self.doc = results.doc
        self.panel = results.panel
        self._revision = 0
        self._solve_revision = 0
        self._auto_solve = False
        self.elapsed: float | None = None
        self._solve_fn = solve_fn or default_solve
        #: the keyword arguments of the last solve started (topology, collective, tree limit)
        self.last_request: dict | None = None

        self.worker = BackgroundTask(self)
        self.worker.started.connect(self._on_started)
        self.worker.progress.connect(self.panel.set_progress)
        self.worker.done.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        self.warmup = BackgroundTask(self, daemon=True)  # compiling cannot be interrupted
        self.warmup.done.connect(
            lambda s: results.status(f"Solver ready (JIT warm-up {s:.1f} s)", 4000)
        )
        self.warmup.failed.connect(lambda m: results.status(f"Solver warm-up failed: {m}", 8000))

        self.panel.solve_requested.connect(lambda c, k: self.solve(c, k))
        self.panel.cancel_requested.connect(self.cancel)
        self.panel.auto_resolve_toggled.connect(self._auto_toggled)
        self._auto_timer = QTimer(self)
        self._auto_timer.setSingleShot(True)
        self._auto_timer.setInterval(AUTO_RESOLVE_DELAY_MS)
        self._auto_timer.timeout.connect(self._auto_resolve)
        self.doc.topology_changed.connect(self._on_topology_changed)
        self.doc.structure_changed.connect(self.update_auto_allowed)
        results.canvas.context_menu_hooks.append(self.extend_context_menu)
        if warmup:  # after the first paint: compiling/loading kernels holds the GIL at times
            QTimer.singleShot(WARMUP_DELAY_MS, self.start_warmup)

    def start_warmup(self) -> None:
        """Compile the solver's kernels in the background (a tiny solve)."""
        self.warmup.start(warmup_job(self._solve_fn))

    # ------------------------------------------------------------------ solving
    def solve(
        self,
        collective: str | None = None,
        max_trees_per_root=-1,
        *,
        what_if: bool = False,
        auto: bool = False,
        previous: Schedule | None = None,
    ) -> bool:
        """Start solving the document's fabric (disabled items left out); False if it is invalid.

        ``max_trees_per_root=-1`` means "as set in the panel". Invalid fabrics give an error
        dialog (a status message for automatic re-solves). A what-if solve compares its result
        with ``previous`` (default: the result shown, if it is not stale).
        """
        results = self.results
        self._auto_timer.stop()
        if collective is not None:
            self.panel.set_collective(collective)
        if max_trees_per_root != -1:
            self.panel.set_max_trees_per_root(max_trees_per_root)
        try:
            topology = validate(self.doc.to_topology())
        except ForestCollError as exc:
            results.report_error(f"cannot solve: {exc}", quiet=auto)
            return False
        self._auto_solve = auto
        if what_if:
            if previous is not None:
                results.previous = previous
            elif results.schedule is not None and not results.stale:
                results.previous = results.schedule
        else:
            results.previous = None
        self._solve_revision = self._revision
        self.last_request = {
            "topology": topology,
            "collective": self.panel.collective,
            "max_trees_per_root": self.panel.max_trees_per_root,
        }
        self.worker.start(solve_job(self._solve_fn, dict(self.last_request), prepare_display))
        return True

    def cancel(self) -> None:
        if self.worker.is_running():
            self.panel.set_cancelling()
            self.worker.cancel()

    def abandon(self) -> None:
        """Stop a solve under way without waiting and drop its result (the fabric was replaced)."""
        self._auto_timer.stop()
        if self.worker.abandon():
            self._set_running(False)
            self.results.status("Solve of the previous fabric stopped", 4000)

    def _set_running(self, running: bool) -> None:
        self.panel.set_running(running)
        self.results.menu.solve_action.setEnabled(not running)
        self.results.menu.cancel_action.setEnabled(running)

    def _on_started(self) -> None:
        self._set_running(True)
        self.results.status("Solving…")

    def _on_finished(self, outcome: SolveOutcome) -> None:
        self._set_running(False)
        self.elapsed = self.worker.elapsed
        stale = self._revision != self._solve_revision
        schedule = outcome.schedule
        self.results.show_schedule(
            schedule,
            elapsed=self.elapsed,
            stale=stale,
            prepared=outcome.prepared,
            staged=True,
            split=(outcome.solve_s, outcome.prepare_s),
        )
        self.panel.set_status(
            f"solved in {self.elapsed:.2f} s" if self.elapsed is not None else "solved"
        )
        self.results.status(
            f"Optimal algbw {schedule.optimal_algbw:.6g} GB/s, k = {schedule.k}", 8000
        )

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.panel.set_status("failed")
        self.results.report_error(message, quiet=self._auto_solve, title="Solve failed")

    def _on_cancelled(self) -> None:
        self._set_running(False)
        self.panel.set_status("cancelled")
        self.results.status("Solve cancelled", 4000)

    # ------------------------------------------------------------------ staleness and re-solve
    def _on_topology_changed(self) -> None:
        results = self.results
        self._revision += 1
        if results.schedule is not None:
            results.set_stale(True)  # (a replaced fabric cleared the result already)
        if self.panel.auto_resolve:
            self._auto_timer.start()

    def _auto_toggled(self, on: bool) -> None:
        results = self.results
        if on and (results.stale or results.schedule is None) and self.panel.auto_resolve:
            self._auto_timer.start()

    def _auto_resolve(self) -> None:
        if self.panel.auto_resolve:
            self.solve(auto=True, what_if=bool(self.doc.disabled_nodes or self.doc.disabled_links))

    def update_auto_allowed(self) -> None:
        """Re-solve on edit only for fabrics up to AUTO_RESOLVE_MAX_NODES nodes."""
        n = len(self.doc.nodes)
        if n <= AUTO_RESOLVE_MAX_NODES:
            self.panel.set_auto_resolve_allowed(True)
        else:
            self.panel.set_auto_resolve_allowed(
                False,
                f"Re-solve on edit is for fabrics up to {AUTO_RESOLVE_MAX_NODES} nodes "
                f"(this one has {n})",
            )
        self.results.menu.auto_action.setEnabled(n <= AUTO_RESOLVE_MAX_NODES)

    # ------------------------------------------------------------------ what if
    def extend_context_menu(self, menu, node: str | None, link: int | None) -> None:
        """Add "what if it fails" entries: disable the item and show the new optimum."""
        if node is None and link is None:
            return
        if node is not None:
            off = node in self.doc.disabled_nodes
            nodes, links, what = [node], [], f"node {node}"
        else:
            off = link in self.doc.disabled_links
            nodes, links, what = [], [link], f"link {self.doc.links[link].label}"
        menu.addSeparator()
        title = (
            f"Re-enable {what} and re-solve"
            if off
            else f"What if {what} fails? Disable and re-solve"
        )
        act = menu.addAction(title)

        def run() -> None:
            results = self.results
            shown = results.schedule is not None and not results.stale
            prev = results.schedule if shown else results.previous
            results.window.undo_stack.push(SetDisabledCommand(self.doc, nodes, links, off is False))
            self.solve(what_if=True, previous=prev)

        act.triggered.connect(run)

    def shutdown(self, wait_ms: int = 3000) -> None:
        self._auto_timer.stop()
        self.worker.stop(wait_ms)
