"""Solving the document's fabric: the worker thread, the JIT warm-up, stale marking when the
fabric changes, "re-solve on edit", and the "what if this fails" entries of the canvas menu."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.solve_jobs import (
    SolveOutcome,
    default_solve,
    prepare_display,
    solve_job,
    warmup_job,
)
from fc_gui.model.commands import SetDisabledCommand
from fc_gui.model.result_state import ResultState
from fc_gui.views.solve_panel import AUTO_RESOLVE_MAX_NODES
from solver.model.errors import ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import validate

#: Delay after start-up before the JIT warm-up solve (ms): the window paints first.
WARMUP_DELAY_MS = 400

#: Delay after the last edit before a re-solve-on-edit starts (ms).
AUTO_RESOLVE_DELAY_MS = 400


class SolveController(QObject):
    """Starts, cancels and reports solves of ``doc`` (see module docstring).

    It marks ``state`` solving, stale, and sets the result a what-if solve is compared with;
    showing a result is the job of whoever listens to ``solved``.

    Signals
    -------
    solved(outcome: SolveOutcome, elapsed: float, stale: bool)
        A solve finished; ``stale``: the fabric changed while it ran.
    auto_allowed_changed(bool)
        Re-solve on edit became allowed or not (the fabric's size).

    Parameters
    ----------
    state
        The shared result state.
    doc, panel, canvas, undo_stack
        The document, the solve panel, the canvas (its context menu gets the "what if" entries)
        and the window's undo stack (disabling an item is an edit).
    messages
        Where errors and status notes go (:class:`~fc_gui.controllers.messages.ResultMessages`).
    """

    solved = Signal(object, object, bool)
    auto_allowed_changed = Signal(bool)

    def __init__(
        self,
        state: ResultState,
        doc,
        panel,
        canvas,
        undo_stack,
        messages,
        solve_fn=None,
        warmup: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.doc = doc
        self.panel = panel
        self.undo_stack = undo_stack
        self.messages = messages
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
            lambda s: messages.status(f"Solver ready (JIT warm-up {s:.1f} s)", 4000)
        )
        self.warmup.failed.connect(lambda m: messages.status(f"Solver warm-up failed: {m}", 8000))

        self.panel.solve_requested.connect(lambda c, k: self.solve(c, k))
        self.panel.cancel_requested.connect(self.cancel)
        self.panel.auto_resolve_toggled.connect(self._auto_toggled)
        self._auto_timer = QTimer(self)
        self._auto_timer.setSingleShot(True)
        self._auto_timer.setInterval(AUTO_RESOLVE_DELAY_MS)
        self._auto_timer.timeout.connect(self._auto_resolve)
        self.doc.topology_changed.connect(self._on_topology_changed)
        self.doc.structure_changed.connect(self.update_auto_allowed)
        canvas.context_menu_hooks.append(self.extend_context_menu)
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
        state = self.state
        self._auto_timer.stop()
        if collective is not None:
            self.panel.set_collective(collective)
        if max_trees_per_root != -1:
            self.panel.set_max_trees_per_root(max_trees_per_root)
        try:
            topology = validate(self.doc.to_topology())
        except ForestCollError as exc:
            self.messages.report_error(f"cannot solve: {exc}", quiet=auto)
            return False
        self._auto_solve = auto
        if what_if:
            if previous is not None:
                state.set_previous(previous)
            elif state.fresh is not None:
                state.set_previous(state.fresh)
        else:
            state.set_previous(None)
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
            self.messages.status("Solve of the previous fabric stopped", 4000)

    def _set_running(self, running: bool) -> None:
        self.panel.set_running(running)
        self.state.set_solving(running)

    def _on_started(self) -> None:
        self._set_running(True)
        self.messages.status("Solving…")

    def _on_finished(self, outcome: SolveOutcome) -> None:
        self._set_running(False)
        self.elapsed = self.worker.elapsed
        stale = self._revision != self._solve_revision
        schedule = outcome.schedule
        self.solved.emit(outcome, self.elapsed, stale)
        self.panel.set_status(
            f"solved in {self.elapsed:.2f} s" if self.elapsed is not None else "solved"
        )
        self.messages.status(
            f"Optimal algbw {schedule.optimal_algbw:.6g} GB/s, k = {schedule.k}", 8000
        )

    def _on_failed(self, message: str) -> None:
        self._set_running(False)
        self.panel.set_status("failed")
        self.messages.report_error(message, quiet=self._auto_solve, title="Solve failed")

    def _on_cancelled(self) -> None:
        self._set_running(False)
        self.panel.set_status("cancelled")
        self.messages.status("Solve cancelled", 4000)

    # ------------------------------------------------------------------ staleness and re-solve
    def _on_topology_changed(self) -> None:
        self._revision += 1
        if self.state.schedule is not None:
            self.state.set_stale(True)  # (a replaced fabric cleared the result already)
        if self.panel.auto_resolve:
            self._auto_timer.start()

    def _auto_toggled(self, on: bool) -> None:
        if on and self.state.fresh is None and self.panel.auto_resolve:
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
        self.auto_allowed_changed.emit(n <= AUTO_RESOLVE_MAX_NODES)

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
            state = self.state
            prev = state.fresh if state.fresh is not None else state.previous
            self.undo_stack.push(SetDisabledCommand(self.doc, nodes, links, off is False))
            self.solve(what_if=True, previous=prev)

        act.triggered.connect(run)

    def shutdown(self, wait_ms: int = 3000) -> None:
        self._auto_timer.stop()
        self.worker.stop(wait_ms)
