"""The summary view's menu entries and its background grouping (see
:mod:`fc_gui.views.canvas_summary`).

*View > Summary view of big fabrics* (on by default) shows a fabric above
:data:`~fc_gui.model.summary.SUMMARY_NODES` nodes as its aggregates; *Expand aggregate* (``+``)
opens the one last clicked (or under the mouse), *Collapse aggregate* (``-``) closes the
expanded one holding the selected node (or under the mouse), *Collapse all* closes them all.
A fabric that arrives without its grouping (a template, an undo of an open) is grouped in a
worker (:class:`~fc_gui.controllers.background.BackgroundTask`), the canvas empty meanwhile.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject
from PySide6.QtGui import QCursor, QKeySequence

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.gc_pause import gc_frozen
from fc_gui.model.result_text import optimum_html, plural
from fc_gui.model.summary import SummaryState
from fc_gui.views.overlays import CutOverlay


class SummaryViewActions(QObject):
    """Menu entries and background grouping of one window's summary view."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        canvas = self.canvas = window.canvas
        self.task = BackgroundTask(self)
        self.task.done.connect(self._grouped)
        self.task.failed.connect(lambda message: self._status(f"summary view: {message}"))
        canvas.summary_provider = self.request
        m = window.view_menu
        m.addSeparator()
        self.toggle_action = m.addAction("&Summary view of big fabrics")
        self.toggle_action.setCheckable(True)
        self.toggle_action.setChecked(canvas.summary_enabled)
        self.toggle_action.setToolTip(
            "Show a fabric of more than "
            f"{canvas.summary_threshold} nodes as its pods, boxes and switch groups"
        )
        self.toggle_action.toggled.connect(canvas.set_summary_enabled)
        self.expand_action = m.addAction("&Expand aggregate", self.expand)
        self.expand_action.setShortcut(QKeySequence("+"))
        self.collapse_action = m.addAction("&Collapse aggregate", self.collapse)
        self.collapse_action.setShortcut(QKeySequence("-"))
        self.collapse_all_action = m.addAction("Collapse a&ll", canvas.collapse_all)
        canvas.summary_changed.connect(self._update_enabled)
        self._update_enabled()
        # Solve > Optimum and cut only: what a fabric too big for its trees can show
        self.optimum_task = BackgroundTask(self)
        self.optimum_task.progress.connect(
            lambda text, f: self._status(f"optimum and cut: {text} {f:.0%}…")
        )
        self.optimum_task.done.connect(self._optimum_found)
        self.optimum_task.failed.connect(lambda message: self._status(f"error: {message}"))
        self.cut_overlay: CutOverlay | None = None
        self.optimum_action = window.solve_menu.addAction(
            "Optimum and &cut only (no trees)", self.solve_optimum
        )
        self.optimum_action.setToolTip(
            "The exact optimum algbw and the bottleneck cut S*, without the trees: seconds on "
            "fabrics whose full schedule is too big"
        )
        window.document.topology_changed.connect(self._drop_cut)

    def _status(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 8000)

    def _update_enabled(self) -> None:
        state = self.canvas.summary.state
        on = state is not None
        self.expand_action.setEnabled(on)
        self.collapse_action.setEnabled(on and bool(state.expanded))  # type: ignore[union-attr]
        self.collapse_all_action.setEnabled(on and bool(state.expanded))  # type: ignore[union-attr]

    # ------------------------------------------------------------------ optimum and cut
    def solve_optimum(self) -> None:
        """Find the allgather optimum and its bottleneck cut in the worker
        (:func:`solver.algorithm.optimum_only.solve_optimum`), then shade the cut."""
        topo = self.window.document.to_topology()
        self._status(f"optimum and cut of {plural(len(topo.compute_ids), 'GPU')}…")

        def run(progress, cancel):
            from solver.algorithm.optimum_only import solve_optimum

            return gc_frozen(lambda: solve_optimum(topo, "allgather", progress))

        self._clicked = time.monotonic()
        self.optimum_task.start(run)

    def _optimum_found(self, result) -> None:
        self._drop_cut()
        phase = result.phases[0]
        self.cut_overlay = CutOverlay(self.canvas)
        self.cut_overlay.show_cut(phase.cut, len(result.topology.compute_ids))
        self.canvas.refit_if_covered()
        results = self.window.results_controller  # None: a window built without the docks
        if results is not None:
            text = optimum_html(result, time.monotonic() - self._clicked)
            results.summary.set_text_html(text)
            self._summary_shown = results.summary.text()
        self._status(
            f"optimum allgather algbw {float(result.algbw):.6g} GB/s, bottleneck cut shaded "
            f"({phase.orbits} max-flow sink{'s' if phase.orbits != 1 else ''}, "
            f"{sum(result.timings.values()):.1f} s)"
        )

    def _drop_cut(self) -> None:
        if self.cut_overlay is not None:
            self.cut_overlay.clear()
            self.cut_overlay = None
        if self._summary_shown is not None:  # an optimum is shown in the Results dock
            summary = self.window.results_controller.summary
            if summary.text() == self._summary_shown:  # not replaced by a solve since
                summary.clear()  # it was of the fabric before the edit
            self._summary_shown = None

    #: the Results text of the last optimum shown (cleared with the cut)
    _summary_shown: str | None = None
    _clicked = 0.0

    # ------------------------------------------------------------------ grouping
    def request(self, doc) -> None:
        """The canvas needs the grouping of ``doc``'s fabric: found in the worker."""
        nodes, links = list(doc.nodes.values()), list(doc.links.values())
        self._status(f"grouping {plural(len(nodes), 'node')} for the summary view…")
        self.task.start(lambda progress, cancel: gc_frozen(lambda: SummaryState.of(nodes, links)))

    def _grouped(self, state: SummaryState) -> None:
        self.canvas.set_summary_state(state)
        self._status(f"summary view: {plural(len(state.grouping), 'aggregate')}")

    # ------------------------------------------------------------------ expand / collapse
    def _under_mouse(self) -> tuple[float, float] | None:
        canvas = self.canvas
        p = canvas.mapFromGlobal(QCursor.pos())
        if not canvas.viewport().rect().contains(p):
            return None
        return canvas.view_point(canvas.mapToScene(p))

    def expand(self) -> bool:
        """Expand the aggregate last clicked, else the one under the mouse."""
        canvas = self.canvas
        target = canvas.focused_aggregate
        if target is None or target not in (
            canvas.summary.scene.aggregates if canvas.summary.scene else ()
        ):
            xy = self._under_mouse()
            target = canvas.aggregate_at(*xy) if xy is not None else None
        if target is None:
            self._status("click an aggregate first (or point at it), then press +")
            return False
        return canvas.expand_aggregate(target)

    def collapse(self) -> bool:
        """Collapse the expanded aggregate holding the selected node, else the one under the
        mouse, else the last one expanded."""
        canvas = self.canvas
        state = canvas.summary.state
        if state is None or not state.expanded:
            return False
        target = canvas.expanded_aggregate_of()
        if target is None:
            xy = self._under_mouse()
            target = canvas.summary.expanded_at(*xy) if xy is not None else None
        if target is None:
            target = max(state.expanded, key=state.grouping.index.__getitem__)
        return canvas.collapse_aggregate(target)
