"""Wires the solve/results side into the main window.

:func:`install` (called by :class:`fc_gui.main_window.MainWindow`) builds a
:class:`ResultsController`: it puts the solve panel, the summary, the trees list and the plots
dock into docks, makes the one :class:`~fc_gui.model.result_state.ResultState` (the shown
result, staleness, the solve under way, the simulated and measured tables), and gives it to one
helper per concern, with the few collaborators each needs. Helpers never import this module nor
each other (an import-linter contract keeps it so); they write through the state and react to
its signals, and this controller wires the rest:

- ``solving`` (:class:`~fc_gui.controllers.solving.SolveController`): worker thread, JIT warm-up,
  stale marking, re-solve on edit, "what if this fails";
- ``overlays`` (:class:`~fc_gui.controllers.result_overlays.ResultOverlays`): the result drawn
  on the canvas, the broadcast animation, hover tips;
- ``menu`` (:class:`~fc_gui.controllers.solve_menu.SolveMenu`), ``exports``
  (:class:`~fc_gui.controllers.export_actions.ExportActions`), ``plot_export``
  (:class:`~fc_gui.controllers.plot_export.PlotExport`: the plot as PNG/SVG/CSV);
- ``simulation`` and ``measurements``: the plots dock's buttons;
- ``batch`` (:class:`~fc_gui.controllers.batch.BatchRun`): ``forestcoll gui TOPO --solve
  --screenshot out.png``; ``messages`` (:class:`~fc_gui.controllers.messages.ResultMessages`):
  error dialogs and status notes.

Derived results are never on the undo stack: an edit that the solver can see marks the shown
result stale (it stays visible, greyed and marked), and the next solve replaces it. A fabric that
is replaced as a whole (open, import, new from template, recovery) drops the result, the solve
and the simulation under way: nothing of the old fabric is ever drawn on the new one.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.batch import BatchRun
from fc_gui.controllers.export_actions import ExportActions
from fc_gui.controllers.layers_menu import LayersMenu
from fc_gui.controllers.measurements import MeasurementsController
from fc_gui.controllers.messages import ResultMessages
from fc_gui.controllers.plot_export import PlotExport
from fc_gui.controllers.result_overlays import ResultOverlays
from fc_gui.controllers.simulation import SimulationController
from fc_gui.controllers.solve_jobs import SolveOutcome
from fc_gui.controllers.solve_menu import SolveMenu
from fc_gui.controllers.solving import SolveController
from fc_gui.model import switch_bounds as figures
from fc_gui.model.result_state import ResultState
from fc_gui.model.switch_bounds import SwitchBounds, makes_difference
from fc_gui.views.plots_dock import PlotsDock
from fc_gui.views.result_views import SummaryView, TreesView
from fc_gui.views.solve_panel import SolvePanel
from solver.model.schedule import Schedule

#: How long closing the window waits for a cancelled solve/simulation to end (ms); the exit
#: waits a little more for all worker threads (fc_gui.app.leave).
CLOSE_WAIT_MS = 500


def install(window, solve_fn=None, warmup: bool = True) -> ResultsController:
    """Build the results side of ``window`` (see module docstring); returns the controller."""
    controller = ResultsController(window, solve_fn=solve_fn, warmup=warmup)
    window.fabric_warnings.connect_results(controller)
    return controller


class ResultsController(QObject):
    """The solve/results side of one main window; ``state`` is what it shows (see module
    docstring)."""

    def __init__(self, window, solve_fn=None, warmup: bool = True) -> None:
        super().__init__(window)
        self.window = window
        self.doc = window.document
        self.canvas = window.canvas
        self.state = state = ResultState(self)
        self._show_token = 0
        self._build_docks()
        canvas, panel, menu_bar = self.canvas, self.panel, window.export_menu
        self.overlays = ResultOverlays(state, self.doc, canvas, self.trees_view, self)
        self.layers = LayersMenu(window.view_menu, self.overlays, canvas, self)
        self.menu = SolveMenu(state, window, panel, self.layers, self)
        self.batch = BatchRun(state, window, self._solve_for_batch, self)
        self.messages = ResultMessages(window, panel, self.batch)
        self.solving = SolveController(
            state, self.doc, panel, canvas, window.undo_stack, self.messages, solve_fn, warmup, self
        )
        self.simulation = SimulationController(state, self.plots, self.messages, self)
        self.measurements = MeasurementsController(
            state, self.doc, self.plots, self.messages, window, self
        )
        self.exports = ExportActions(state, window, canvas, self.overlays, menu_bar, self)
        self.plot_export = PlotExport(window, self.plots, menu_bar, self)
        self._wire()
        self.solving.update_auto_allowed()
        self.doc.replaced.connect(self.on_fabric_replaced)

        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self._on_quit)
        window.installEventFilter(self)

    def _wire(self) -> None:
        """What no helper does for another: the menu's actions, showing a solve's result,
        greying the views of a stale one."""
        menu, solving = self.menu, self.solving
        menu.solve_action.triggered.connect(lambda: solving.solve())
        menu.cancel_action.triggered.connect(lambda: solving.cancel())
        menu.clear_action.triggered.connect(self.clear_results)
        solving.auto_allowed_changed.connect(menu.auto_action.setEnabled)
        solving.solved.connect(self._show_solved)
        self.state.stale_changed.connect(self._grey_views)

    def _solve_for_batch(self) -> bool:
        return self.solving.solve()

    def _show_solved(self, outcome: SolveOutcome, elapsed: float | None, stale: bool) -> None:
        self.show_schedule(
            outcome.schedule,
            elapsed=elapsed,
            stale=stale,
            prepared=outcome.prepared,
            staged=True,
            split=(outcome.solve_s, outcome.prepare_s),
        )

    def _build_docks(self) -> None:
        window = self.window
        right = Qt.DockWidgetArea.RightDockWidgetArea
        self.panel = SolvePanel()
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
        self.plots_dock = window.add_dock(
            self.plots, Qt.DockWidgetArea.BottomDockWidgetArea, "Plots"
        )
        QTimer.singleShot(0, self._size_docks)

    def _size_docks(self) -> None:
        """Give the results more room than the inspector (once the window has its size)."""
        window = self.window
        inspector = window.docks.get("Inspector")
        if inspector is not None:
            window.resizeDocks(
                [inspector, self.solve_dock, self.summary_dock],
                [190, 170, 420],
                Qt.Orientation.Vertical,
            )
        window.resizeDocks([self.plots_dock], [230], Qt.Orientation.Vertical)

    # ================================================================== showing results
    def show_schedule(
        self,
        schedule: Schedule,
        elapsed: float | None = None,
        stale: bool = False,
        prepared: dict | None = None,
        staged: bool = False,
        split: tuple[float, float] | None = None,
    ) -> None:
        """Show ``schedule`` in every view and overlay (``prepared``: :func:`prepare_display`
        of :mod:`fc_gui.controllers.solve_jobs`).

        ``staged``: one view per event-loop turn, so the GUI thread is never blocked for the
        whole display of a big result; ``state.schedule_changed`` is emitted when all are done.
        ``split``: (solve call, display preparation) seconds inside ``elapsed``.
        """
        prepared = prepared or {}
        state = self.state
        state.set_schedule(schedule, prepared.get("link_users"))
        self._show_token += 1
        token = self._show_token

        pending = any(n.capabilities for n in schedule.topology.nodes)

        def first() -> None:
            self.summary.set_schedule(
                schedule,
                elapsed,
                previous=state.previous,
                split=split,
                switch_bounds=None,
                switch_pending=pending,
            )
            self.set_stale(stale)
            self.overlays.drop_trees()
            self.compute_switch_bounds(schedule)  # in the background; shown when done

        steps = [
            first,
            self.overlays.show_cut,
            self.overlays.show_heat,
            self.canvas.refit_if_covered,  # the caption and colour bar just appeared
            lambda: self.trees_view.set_schedule(schedule, prepared.get("tree_rows")),
            lambda: self.plots.set_schedule(
                schedule, prepared.get("model_tables"), capability=self._capability_line(schedule)
            ),
            state.announce_schedule,
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

    def compute_switch_bounds(self, schedule: Schedule) -> None:
        """The allreduce figures of ``schedule``'s fabric when some switch reduces or
        multicasts: computed in a background task (their max-flows take up to seconds on
        1000 GPUs) and shown when ``schedule`` is still the one shown."""
        if not any(n.capabilities for n in schedule.topology.nodes):
            return
        token = self._show_token
        task = BackgroundTask(self)

        def done(sb) -> None:
            task.deleteLater()
            if token == self._show_token and self.state.schedule is schedule:
                self.set_switch_bounds(sb)

        task.done.connect(done)

        def failed(message: str) -> None:
            task.deleteLater()
            if token == self._show_token and self.state.schedule is schedule:
                self.set_switch_bounds(
                    figures.SwitchBounds(figures.compute_marked(schedule.topology), error=message)
                )

        task.failed.connect(failed)
        task.start(lambda progress, cancel: figures.compute(schedule.topology))
        self._bounds_tasks = [t for t in getattr(self, "_bounds_tasks", []) if t.is_running()]
        self._bounds_tasks.append(task)

    def set_switch_bounds(self, sb: SwitchBounds | None) -> None:
        """Show ``sb`` (the shown result's allreduce figures) in the summary, caption and plot."""
        state = self.state
        state.switch_bounds = sb  # (the plot's capability line and the cut's caption read it)
        schedule = state.schedule
        if schedule is None:
            return
        self.summary.set_switch_bounds(sb)
        self.overlays.show_cut()
        self.overlays.set_greyed(state.stale)
        self.plots.show_capability(self._capability_line(schedule))
        state.set_switch_bounds(sb)

    def _capability_line(self, schedule: Schedule) -> float | None:
        """The allreduce optimum with the marked capabilities (GB/s) when a switch raises it
        above the forward-only bound of an allreduce result, for the plot; else None."""
        sb = self.state.switch_bounds
        if schedule.collective != "allreduce" or sb is None or not makes_difference(sb):
            return None
        return float(sb.bounds.capability)

    def clear_results(self) -> None:
        self._show_token += 1
        self.state.set_schedule(None)
        self.summary.clear()
        self.trees_view.set_schedule(None)
        self.plots.set_schedule(None)
        self.overlays.clear()
        self.set_stale(False)
        self.state.announce_schedule()

    def on_fabric_replaced(self) -> None:
        """Another fabric: drop the result, the measurements imported for the old fabric, every
        trace of it on the plot (hover box, note, status line, library choice), and stop (and
        ignore) work on the old one."""
        self.solving.abandon()
        self.simulation.cancel()
        self.clear_results()
        self.plots.reset()
        self.panel.reset()

    def set_stale(self, stale: bool) -> None:
        """Mark the shown result stale: every view and overlay of it is greyed (or restored)."""
        if not self.state.set_stale(stale):
            self._grey_views(self.state.stale)  # unchanged: the views are set again all the same

    def _grey_views(self, stale: bool) -> None:
        self.panel.set_stale(stale)
        self.summary.set_stale(stale)
        self.overlays.set_greyed(stale)
        self.plots.set_greyed(stale)

    # ================================================================== lifetime
    def shutdown(self, wait_ms: int = 3000) -> None:
        """Stop the animation, cancel the solve and the simulation, wait up to ``wait_ms`` for
        their threads (the application's exit waits for stragglers: fc_gui.app.leave)."""
        self.overlays.animation.pause()
        self.solving.shutdown(wait_ms)
        self.simulation.task.stop(wait_ms)
        self.simulation.cancel()

    def _on_quit(self) -> None:
        self.shutdown(CLOSE_WAIT_MS)

    def eventFilter(self, obj, event) -> bool:
        if obj is self.window and event.type() == QEvent.Type.Close:
            QTimer.singleShot(0, self._after_close)
        return False

    def _after_close(self) -> None:
        if not self.window.isVisible():
            self.shutdown(CLOSE_WAIT_MS)
