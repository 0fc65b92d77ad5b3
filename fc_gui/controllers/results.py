"""Wires the solve/results side into the main window.

:func:`install` (called by :class:`fc_gui.main_window.MainWindow`) builds a
:class:`ResultsController`: the solve panel, result views, overlays, plots dock and export menu;
the worker thread; stale marking when the fabric changes; "re-solve on edit"; the "what if this
fails" entries of the canvas context menu; and ``run_batch`` for
``forestcoll gui TOPO --solve --screenshot out.png``.

Derived results are never on the undo stack: an edit that the solver can see marks the shown
result stale (it stays visible, marked), and the next solve replaces it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog

from solver.model.errors import ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import validate

from fc_gui.controllers.export_actions import ExportActions, make_readable
from fc_gui.controllers.simulation import simulate_schedule
from fc_gui.controllers.solve_worker import BackgroundTask, JitWarmup, SolveWorker
from fc_gui.model.commands import SetDisabledCommand
from fc_gui.model.trees import tree_rows, trees_using_links
from fc_gui.views.animation import BroadcastAnimation
from fc_gui.views.overlays import CutOverlay, DisabledLinksOverlay, HeatMapOverlay, TreeOverlay
from fc_gui.views.plots_dock import PlotsDock, model_tables
from fc_gui.views.result_views import SummaryView, TreesView
from fc_gui.views.solve_panel import AUTO_RESOLVE_MAX_NODES, SolvePanel

#: Delay after start-up before the JIT warm-up solve (ms): the window paints first.
WARMUP_DELAY_MS = 400

#: Delay after the last edit before a re-solve-on-edit starts (ms).
AUTO_RESOLVE_DELAY_MS = 400


def prepare_display(schedule: Schedule) -> dict:
    """Derived display data, computed in the worker thread so showing a result stays quick."""
    return {
        "tree_rows": tree_rows(schedule),
        "link_users": trees_using_links(schedule),
        "model_tables": model_tables(schedule),
    }


def install(window, solve_fn=None, warmup: bool = True) -> ResultsController:
    """Build the results side of ``window`` (see module docstring); returns the controller."""
    return ResultsController(window, solve_fn=solve_fn, warmup=warmup)


class ResultsController(QObject):
    """The solve/results side of one main window.

    Signals
    -------
    schedule_changed(object)
        A new schedule is shown (or None when cleared).
    stale_changed(bool)
    """

    schedule_changed = Signal(object)
    stale_changed = Signal(bool)

    def __init__(self, window, solve_fn=None, warmup: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self.doc = window.document
        self.canvas = window.canvas
        self.schedule: Schedule | None = None
        self.previous: Schedule | None = None  # the result before a what-if solve
        self.stale = False
        self.batch = False
        self._revision = 0
        self._solve_revision = 0
        self._auto_solve = False
        self._elapsed: float | None = None
        self._link_users: dict | None = None
        self._show_token = 0

        # ---- workers
        self.worker = SolveWorker(solve_fn, self, prepare_fn=prepare_display)
        self.worker.started.connect(self._on_started)
        self.worker.progress.connect(self._on_progress)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.worker.cancelled.connect(self._on_cancelled)
        self.warmup = JitWarmup(solve_fn, self)
        self.warmup.done.connect(
            lambda s: self._status(f"Solver ready (JIT warm-up {s:.1f} s)", 4000)
        )
        self.warmup.failed.connect(lambda m: self._status(f"Solver warm-up failed: {m}", 8000))
        self.sim_task = BackgroundTask(self)
        self._sim_cancel = threading.Event()
        self._sim_schedule: Schedule | None = None
        self.sim_task.done.connect(self._on_simulated)
        self.sim_task.failed.connect(self._on_simulate_failed)
        self.sim_task.progress.connect(self._on_simulate_progress)

        # ---- panels
        right = Qt.DockWidgetArea.RightDockWidgetArea
        self.panel = SolvePanel()
        self.panel.solve_requested.connect(lambda c, k: self.solve(c, k))
        self.panel.cancel_requested.connect(self.cancel)
        self.panel.auto_resolve_toggled.connect(self._auto_toggled)
        self.solve_dock = window.add_dock(self.panel, right, "Solve")
        self.summary = SummaryView()
        self.summary_dock = window.add_dock(self.summary, right, "Results")
        self.trees_view = TreesView()
        self.trees_dock = window.add_dock(self.trees_view, right, "Trees")
        window.tabifyDockWidget(self.summary_dock, self.trees_dock)
        self.summary_dock.raise_()
        # the right-hand docks run down to the bottom; the plots sit under the canvas only
        window.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.plots = PlotsDock()
        self.plots_dock = window.add_dock(self.plots, Qt.DockWidgetArea.BottomDockWidgetArea, "Plots")
        self.plots.simulate_requested.connect(self.simulate)
        QTimer.singleShot(0, self._size_docks)
        self.plots.import_requested.connect(self.import_measurements)

        # ---- overlays
        self.cut_overlay = CutOverlay(self.canvas)
        self.heat_overlay = HeatMapOverlay(self.canvas)
        self.heat_overlay.attach_color_bar()
        self.tree_overlay = TreeOverlay(self.canvas)
        self.disabled_overlay = DisabledLinksOverlay(self.canvas)
        self.animation = BroadcastAnimation(self.canvas, parent=self)
        self.trees_view.trees_selected.connect(self._on_trees_selected)
        self.trees_view.play_clicked.connect(self.animation.play)
        self.trees_view.pause_clicked.connect(self.animation.pause)
        self.trees_view.step_clicked.connect(self._step)
        self.trees_view.reset_clicked.connect(self.animation.reset)
        self.animation.step_changed.connect(lambda s, n, t: self.trees_view.set_step_text(t))
        self.animation.playing_changed.connect(self.trees_view.set_playing)

        self._build_menus()
        self.exports = ExportActions(self, window.export_menu)

        # ---- document and canvas hooks
        self.doc.topology_changed.connect(self._on_topology_changed)
        self.doc.structure_changed.connect(self._update_auto_allowed)
        self.doc.positions_changed.connect(lambda *_: self._geometry_timer.start())
        self.doc.structure_changed.connect(lambda: self._geometry_timer.start())
        self.doc.disabled_changed.connect(lambda: self._geometry_timer.start())
        self._geometry_timer = QTimer(self)
        self._geometry_timer.setSingleShot(True)
        self._geometry_timer.setInterval(30)
        self._geometry_timer.timeout.connect(self._redraw_overlays)
        self._auto_timer = QTimer(self)
        self._auto_timer.setSingleShot(True)
        self._auto_timer.setInterval(AUTO_RESOLVE_DELAY_MS)
        self._auto_timer.timeout.connect(self._auto_resolve)
        self.canvas.tooltip_providers.append(self.tooltip)
        self.canvas.context_menu_hooks.append(self.extend_context_menu)
        self._update_auto_allowed()

        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        window.installEventFilter(self)
        if warmup:  # after the first paint: compiling/loading kernels holds the GIL at times
            QTimer.singleShot(WARMUP_DELAY_MS, self.warmup.start)

    def _size_docks(self) -> None:
        """Give the results more room than the inspector (once the window has its size)."""
        window = self.window
        inspector = window.docks.get("Inspector")
        if inspector is not None:
            window.resizeDocks([inspector, self.solve_dock, self.summary_dock], [190, 170, 420],
                               Qt.Orientation.Vertical)
        window.resizeDocks([self.plots_dock], [230], Qt.Orientation.Vertical)

    # ================================================================== menus
    def _build_menus(self) -> None:
        m = self.window.solve_menu
        self.solve_action = QAction("&Solve", self)
        self.solve_action.setShortcuts([QKeySequence("Ctrl+R"), QKeySequence("F5")])
        self.solve_action.triggered.connect(lambda: self.solve())
        self.cancel_action = QAction("&Cancel solve", self)
        self.cancel_action.setShortcut(QKeySequence("Ctrl+."))
        self.cancel_action.setEnabled(False)
        self.cancel_action.triggered.connect(self.cancel)
        self.auto_action = QAction("&Re-solve on edit", self, checkable=True)
        self.auto_action.toggled.connect(self.panel.auto_box.setChecked)
        self.panel.auto_box.toggled.connect(self.auto_action.setChecked)
        m.addAction(self.solve_action)
        m.addAction(self.cancel_action)
        m.addAction(self.auto_action)
        m.addSeparator()
        self.show_cut_action = self._toggle(m, "Show &bottleneck cut", self.cut_overlay)
        self.show_heat_action = self._toggle(m, "Show congestion &heat map", self.heat_overlay)
        self.show_heat_action.toggled.connect(self.disabled_overlay.set_visible)
        self.show_trees_action = self._toggle(m, "Show selected &trees", self.tree_overlay)
        m.addSeparator()
        self.clear_action = m.addAction("C&lear results", self.clear_results)
        self.window.addAction(self.solve_action)
        self.window.addAction(self.cancel_action)

    def _toggle(self, menu, title: str, overlay) -> QAction:
        act = QAction(title, self, checkable=True)
        act.setChecked(True)
        act.toggled.connect(overlay.set_visible)
        menu.addAction(act)
        return act

    # ================================================================== solving
    def solve(self, collective: str | None = None, max_trees_per_root=-1, *,
              what_if: bool = False, auto: bool = False, previous: Schedule | None = None) -> bool:
        """Start solving the document's fabric (disabled items left out); False if it is invalid.

        ``max_trees_per_root=-1`` means "as set in the panel". Invalid fabrics give an error
        dialog (a status message for automatic re-solves). A what-if solve compares its result
        with ``previous`` (default: the result shown, if it is not stale).
        """
        self._auto_timer.stop()
        if collective is not None:
            self.panel.set_collective(collective)
        if max_trees_per_root != -1:
            self.panel.set_max_trees_per_root(max_trees_per_root)
        try:
            topology = validate(self.doc.to_topology())
        except ForestCollError as exc:
            self._report_error(f"cannot solve: {exc}", quiet=auto)
            return False
        self._auto_solve = auto
        if what_if:
            if previous is not None:
                self.previous = previous
            elif self.schedule is not None and not self.stale:
                self.previous = self.schedule
        else:
            self.previous = None
        self._solve_revision = self._revision
        self.worker.start(topology, self.panel.collective, self.panel.max_trees_per_root)
        return True

    def cancel(self) -> None:
        if self.worker.is_running():
            self.panel.set_cancelling()
            self.worker.cancel()

    def _on_started(self) -> None:
        self.panel.set_running(True)
        self.solve_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        self._status("Solving…")

    def _on_progress(self, phase: str, fraction: float) -> None:
        self.panel.set_progress(phase, fraction)

    def _idle(self) -> None:
        self.panel.set_running(False)
        self.solve_action.setEnabled(True)
        self.cancel_action.setEnabled(False)

    def _on_finished(self, schedule: Schedule) -> None:
        self._idle()
        self._elapsed = self.worker.last_elapsed
        stale = self._revision != self._solve_revision
        self.show_schedule(schedule, elapsed=self._elapsed, stale=stale,
                           prepared=self.worker.last_prepared, staged=True)
        self.panel.set_status(
            f"solved in {self._elapsed:.2f} s" if self._elapsed is not None else "solved"
        )
        self._status(
            f"Optimal algbw {schedule.optimal_algbw:.6g} GB/s, k = {schedule.k}", 8000
        )

    def _on_failed(self, message: str) -> None:
        self._idle()
        self.panel.set_status("failed")
        self._report_error(message, quiet=self._auto_solve, title="Solve failed")

    def _on_cancelled(self) -> None:
        self._idle()
        self.panel.set_status("cancelled")
        self._status("Solve cancelled", 4000)

    def _report_error(self, message: str, quiet: bool = False, title: str = "Error") -> None:
        if self.batch:
            print(f"error: {message}", file=sys.stderr)
            if self._batch_active:
                self._batch_active = False
                QTimer.singleShot(0, lambda: QApplication.exit(2))
            return
        if quiet:
            self.panel.set_status(message)
            self._status(message, 8000)
            return
        self.window.show_error(message, title)

    # ================================================================== showing results
    def show_schedule(self, schedule: Schedule, elapsed: float | None = None,
                      stale: bool = False, prepared: dict | None = None,
                      staged: bool = False) -> None:
        """Show ``schedule`` in every view and overlay (``prepared``: :func:`prepare_display`).

        ``staged``: one view per event-loop turn, so the GUI thread is never blocked for the
        whole display of a big result; ``schedule_changed`` is emitted when all are done.
        """
        prepared = prepared or {}
        self.schedule = schedule
        self._link_users = prepared.get("link_users")
        self._show_token += 1
        token = self._show_token

        def first() -> None:
            self.summary.set_schedule(schedule, elapsed, previous=self.previous)
            self.set_stale(stale)
            self.animation.stop()
            self.tree_overlay.clear()

        def last() -> None:
            self.schedule_changed.emit(schedule)

        steps = [
            first,
            lambda: self.cut_overlay.show_cut(
                schedule.bottleneck, None if schedule.phases else schedule.num_compute_nodes
            ),
            self._draw_heat,
            lambda: self.trees_view.set_schedule(schedule, prepared.get("tree_rows")),
            lambda: self.plots.set_schedule(schedule, prepared.get("model_tables")),
            last,
        ]
        if not staged:
            for step in steps:
                step()
            return

        def run(i: int) -> None:
            if token != self._show_token:
                return  # a newer result (or a clear) took over
            steps[i]()
            if i + 1 < len(steps):
                QTimer.singleShot(0, lambda: run(i + 1))

        run(0)

    def clear_results(self) -> None:
        self._show_token += 1
        self.schedule = None
        self._link_users = None
        self.previous = None
        self.summary.clear()
        self.trees_view.set_schedule(None)
        self.plots.set_schedule(None)
        self.animation.stop()
        for ov in (self.cut_overlay, self.heat_overlay, self.tree_overlay, self.disabled_overlay):
            ov.clear()
        self.set_stale(False)
        self.schedule_changed.emit(None)

    def _draw_result_overlays(self) -> None:
        s = self.schedule
        if s is None:
            return
        self.cut_overlay.show_cut(s.bottleneck, None if s.phases else s.num_compute_nodes)
        self._draw_heat()

    def _draw_heat(self) -> None:
        s = self.schedule
        if s is None:
            return
        if self._link_users is None:
            self._link_users = trees_using_links(s)
        self.heat_overlay.show_schedule(s, self._link_users)
        self._mark_disabled()

    def _mark_disabled(self) -> None:
        """Mark out-of-service links while the heat map hides the canvas's own marking."""
        doc = self.doc
        pairs = [(ln.source, ln.target) for uid, ln in doc.links.items() if doc.is_link_disabled(uid)]
        if self.heat_overlay.active:
            self.disabled_overlay.show_links(pairs)
        else:
            self.disabled_overlay.clear()
        self.disabled_overlay.set_visible(self.heat_overlay.visible)

    def _redraw_overlays(self) -> None:
        """Node positions or structure changed: redraw overlays at the new places."""
        if self.schedule is None:
            return
        self._draw_result_overlays()
        if self.tree_overlay.trees:
            self.tree_overlay.show_trees(self.tree_overlay.trees)
        if self.animation.trees:
            self.animation.render()

    def _on_trees_selected(self, trees: list) -> None:
        self.tree_overlay.show_trees(trees)
        rows = self.trees_view.selected_rows()
        swatches = {r: self.tree_overlay.color_of(i) for i, r in enumerate(rows)}
        model, listed = self.trees_view.model, self.trees_view.model.rows

        def apply() -> None:  # later: a selection change can come from inside a filter change
            if model.rows is listed:
                model.set_swatches(swatches)

        QTimer.singleShot(0, apply)
        self.animation.set_trees(trees)
        self.trees_view.set_playing(False)

    def _step(self) -> None:
        self.animation.pause()
        self.animation.advance()

    # ================================================================== staleness
    def set_stale(self, stale: bool) -> None:
        stale = bool(stale and self.schedule is not None)
        changed = stale != self.stale
        self.stale = stale
        self.panel.set_stale(stale)
        self.summary.set_stale(stale)
        if changed:
            self.stale_changed.emit(stale)

    def _on_topology_changed(self) -> None:
        self._revision += 1
        if self.schedule is not None:
            if not set(self.schedule.topology.compute_ids) & set(self.doc.nodes):
                self.clear_results()  # another fabric altogether (opened, new, template)
                self.panel.set_status("")
            else:
                self.set_stale(True)
        if self.panel.auto_resolve:
            self._auto_timer.start()

    def _auto_toggled(self, on: bool) -> None:
        if on and (self.stale or self.schedule is None) and self.panel.auto_resolve:
            self._auto_timer.start()

    def _auto_resolve(self) -> None:
        if self.panel.auto_resolve:
            self.solve(auto=True, what_if=bool(self.doc.disabled_nodes or self.doc.disabled_links))

    def _update_auto_allowed(self) -> None:
        n = len(self.doc.nodes)
        if n <= AUTO_RESOLVE_MAX_NODES:
            self.panel.set_auto_resolve_allowed(True)
        else:
            self.panel.set_auto_resolve_allowed(
                False, f"Re-solve on edit is for fabrics up to {AUTO_RESOLVE_MAX_NODES} nodes "
                f"(this one has {n})"
            )
        self.auto_action.setEnabled(n <= AUTO_RESOLVE_MAX_NODES)

    # ================================================================== canvas hooks
    def tooltip(self, node: str | None, link: int | None) -> str | None:
        """Hover text for the canvas: link load and trees when the heat map is shown."""
        if link is not None and self.heat_overlay.active and self.heat_overlay.visible:
            ln = self.doc.links.get(link)
            if ln is not None:
                text = self.heat_overlay.tooltip_for_pair(ln.source, ln.target)
                if text:
                    bw = float(ln.bandwidth)
                    stale = "\n(stale result: the fabric changed)" if self.stale else ""
                    return f"{ln.label}: {bw:g} GB/s {'one-way' if ln.directed else 'full duplex'}\n{text}{stale}"
        if node is not None and self.schedule is not None and self.cut_overlay.visible:
            if node in self.schedule.bottleneck.nodes:
                n = self.doc.nodes.get(node)
                if n is not None:
                    return f"{n.id}: {n.kind} {n.role} — inside the bottleneck cut S*"
        return None

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
        title = (f"Re-enable {what} and re-solve" if off
                 else f"What if {what} fails? Disable and re-solve")
        act = menu.addAction(title)

        def run() -> None:
            prev = self.schedule if (self.schedule is not None and not self.stale) else self.previous
            self.window.undo_stack.push(SetDisabledCommand(self.doc, nodes, links, off is False))
            self.solve(what_if=True, previous=prev)

        act.triggered.connect(run)

    # ================================================================== plots
    def simulate(self) -> None:
        """Simulate the shown schedule and the baselines (background); a second call cancels."""
        if self.sim_task.is_running():
            self._sim_cancel.set()
            return
        if self.schedule is None:
            return
        schedule = self._sim_schedule = self.schedule
        self._sim_cancel = threading.Event()
        cancel = self._sim_cancel
        self.plots.set_simulating(True)
        report = self.sim_task.report
        self.sim_task.start(lambda: simulate_schedule(schedule, cancel=cancel, progress=report))

    def _on_simulate_progress(self, text: str, fraction: float) -> None:
        if self.sim_task.is_running() and not self._sim_cancel.is_set():
            self.plots.set_status(f"{text}: {100 * fraction:.0f} %")

    def _on_simulated(self, tables) -> None:
        self.plots.set_simulating(False)
        if self._sim_schedule is not self.schedule:
            self.plots.set_status("simulation dropped: the result changed meanwhile")
            return
        n = self.plots.add_tables(tables, kind="simulated")
        self.plots.set_status(f"{n} simulated series")

    def _on_simulate_failed(self, message: str) -> None:
        self.plots.set_simulating(False)
        if self._sim_cancel.is_set():
            self.plots.set_status("simulation cancelled")
            return
        self.plots.set_status("simulation failed")
        self._report_error(message, title="Simulation failed")

    def import_measurements(self, path: str | None = None) -> int:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.window, "Import measurements", "", "Results files (*.h5 *.hdf5);;All files (*)"
            )
            if not path:
                return 0
        try:
            return self.plots.import_file(path)
        except ForestCollError as exc:
            self._report_error(str(exc), title="Import failed")
        except OSError as exc:
            self._report_error(f"cannot read {path}: {exc.strerror or exc}", title="Import failed")
        return 0

    # ================================================================== batch mode
    _batch_active = False

    def run_batch(self, solve: bool = False, screenshot: str | None = None) -> None:
        """``--solve`` / ``--screenshot``: solve, render the window to PNG, exit (code 0 or 2)."""
        self.batch = True
        self._batch_active = True
        self._batch_screenshot = screenshot
        if solve:
            self.schedule_changed.connect(self._batch_after_solve)
            if not self.solve():
                return
        else:
            QTimer.singleShot(300, self._batch_finish)

    def _batch_after_solve(self, schedule) -> None:
        if self._batch_active:
            QTimer.singleShot(300, self._batch_finish)

    def _batch_finish(self) -> None:
        if not self._batch_active:
            return
        self._batch_active = False
        code = 0
        if self._batch_screenshot:
            try:
                self.save_screenshot(self._batch_screenshot)
            except (ForestCollError, OSError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                code = 2
        else:
            s = self.schedule
            if s is not None:
                print(f"optimal algbw {s.optimal_algbw:.6g} GB/s, k = {s.k}")
        QApplication.exit(code)

    def save_screenshot(self, path: str | Path) -> Path:
        """Render the whole window to a PNG (atomically); raise ForestCollError on failure."""
        from solver.io.files import atomic_path

        path = Path(path)
        self.canvas.fit_view()
        QApplication.processEvents()
        pixmap = self.window.grab()
        if pixmap.isNull():
            raise ForestCollError(f"cannot render the window for {path}")
        try:
            with atomic_path(path) as tmp:
                if not pixmap.save(str(tmp), "PNG"):
                    raise ForestCollError(f"cannot write {path}")
        except FileNotFoundError:
            raise ForestCollError(f"cannot write {path}: no such folder") from None
        make_readable(path)
        return path

    # ================================================================== lifetime
    def shutdown(self) -> None:
        self.animation.pause()
        self._sim_cancel.set()
        self.worker.shutdown(3000)
        self.sim_task.wait(3000)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.window and event.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self._after_close)
        return False

    def _after_close(self) -> None:
        if not self.window.isVisible():
            self.shutdown()

    def _status(self, text: str, msecs: int = 0) -> None:
        self.window.statusBar().showMessage(text, msecs)
