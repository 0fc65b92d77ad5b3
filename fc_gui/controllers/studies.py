"""Design studies in the designer: the Studies dock, the study run and the resilience map.

A study of the open fabric runs in a background thread on a local Dask cluster (one started for
the run and closed after it; ``engine_factory`` can supply another), cancellable from the dock,
with rows done / total and an ETA. Its rows fill the dock's table (and sweep curves) and colour
the canvas links by impact (:class:`fc_gui.views.resilience.ResilienceOverlay`), with hover
text. Results save to and load from ``/studies/<name>`` of an HDF5 results file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication, QFileDialog

from fc_gui.controllers.background import BackgroundTask
from fc_gui.views.dialog_titles import ask_item
from fc_gui.views.resilience import ResilienceOverlay
from fc_gui.views.studies_dock import StudiesDock
from solver.model.errors import ForestCollError

if TYPE_CHECKING:
    from fc_gui.controllers.layers_menu import LayersMenu
    from fc_gui.views.overlays import HeatMapOverlay

EngineFactory = Callable[[int], Any]


def _local_engine(workers: int):
    from solver.studies import DaskEngine

    return DaskEngine(workers=workers)


def install(window, engine_factory: EngineFactory | None = None) -> StudiesController:
    """Add the Studies dock to ``window``, with the View > Layers menu and heat map of its results
    controller if it has one; returns its controller."""
    results = window.results_controller
    if results is None:
        return StudiesController(window, engine_factory)
    return StudiesController(window, engine_factory, results.layers, results.overlays.heat)


class StudiesController(QObject):
    """Runs studies for one main window (see module docstring).

    Signals
    -------
    finished(object)
        The shown rows changed: a :class:`solver.studies.StudyResult`, or a stored study.
    """

    finished = Signal(object)
    _progressed = Signal(int, int)

    def __init__(
        self,
        window,
        engine_factory: EngineFactory | None = None,
        layers: LayersMenu | None = None,
        heat: HeatMapOverlay | None = None,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.heat = heat  # the result's heat map, which yields the links to the impact map
        self.doc = window.document
        self.canvas = window.canvas
        self.engine_factory = engine_factory or _local_engine
        self.dock = StudiesDock()
        self.dock_widget = window.add_dock(
            self.dock, Qt.DockWidgetArea.RightDockWidgetArea, "Studies"
        )
        self.overlay = ResilienceOverlay(self.canvas)
        self.overlay.attach_color_bar()
        self.canvas.tooltip_providers.append(self.tooltip)
        self.task = BackgroundTask(self)
        self.task.done.connect(self._on_done)
        self.task.failed.connect(self._on_failed)
        self.task.cancelled.connect(self._on_cancelled)
        self._progressed.connect(self._on_progress)
        self.result = None  # the last StudyResult run here (what Save writes)
        self.shown: tuple[str, list] | None = None  # (study, rows) on display
        self._started = 0.0
        self._first: tuple[float, int] | None = None

        self.dock.run_requested.connect(self.run)
        self.dock.cancel_requested.connect(self.cancel)
        self.dock.save_requested.connect(self.save_dialog)
        self.dock.load_requested.connect(self.load_dialog)
        self.dock.row_selected.connect(self.select_element)
        self.dock.map_toggled.connect(self._set_map_visible)
        if layers is not None:  # View > Layers mirrors the dock's checkbox
            layers.add_synced("impact", "Resilience &impact map", self.dock.map_check)
        self.doc.replaced.connect(self._on_fabric_replaced)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def shutdown(self) -> None:
        """Stop a running study (its cluster closes with it) before the application exits."""
        self.task.stop(20000)

    # ------------------------------------------------------------------ running
    def plan(self, options: dict[str, Any]):
        """The study plan of ``options`` (the dock's) on the open fabric."""
        from solver.studies import failure_plan, parse_param, sweep_plan, upgrade_plan

        study = options["study"]
        collective = options.get("collective", "allgather")
        if study == "sweep":
            params = [parse_param(p) for p in options["params"]]
            return sweep_plan(template=options["template"], params=params, collective=collective)
        topo = self.doc.to_topology()
        if study == "failures":
            if not options.get("elements"):
                raise ForestCollError("choose at least one kind of element to remove")
            return failure_plan(
                topo, options["elements"], collective, options.get("symmetry", True)
            )
        return upgrade_plan(
            topo,
            factor=options.get("factor"),
            add=options.get("add"),
            by=options.get("by", "link"),
            collective=collective,
            use_symmetry=options.get("symmetry", True),
        )

    def run(self, options: dict[str, Any]) -> bool:
        """Start a study in the background; False (with an error dialog) on bad options."""
        if self.task.is_running():
            return False
        try:
            plan = self.plan(options)
        except ForestCollError as exc:
            self.window.show_error(str(exc).splitlines()[0], "Study")
            return False
        workers = int(options.get("workers", 1))
        counted = self._progressed.emit  # (done, total): the dock shows counts and an ETA
        factory = self.engine_factory

        def work(progress, cancel):
            from solver.studies import run_study

            with factory(workers) as engine:
                return run_study(plan, engine, progress=counted, cancel=cancel)

        self._started = time.monotonic()
        self._first = None
        self.dock.set_running(True)
        self.dock.set_status(
            f"starting a local Dask cluster ({workers} worker(s)); "
            f"{len(plan.keys)} rows, {len(plan.items)} solves"
        )
        self.task.start(work)
        return True

    def cancel(self) -> None:
        self.task.cancel()
        self.dock.set_status("cancelling…")

    def is_running(self) -> bool:
        return self.task.is_running()

    def _on_progress(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._first is None:
            self._first = (now, done)
        t0, d0 = self._first
        eta = (total - done) * (now - t0) / (done - d0) if done > d0 and now > t0 else None
        self.dock.set_progress(done, total, eta)

    def _on_done(self, result) -> None:
        self.dock.set_running(False)
        self.result = result
        self.dock.save_button.setEnabled(True)
        self.show(result.plan.study, result.rows)
        self.dock.set_progress(len(result.rows), len(result.plan.keys), None)
        self.dock.set_status(
            _summary_text(result.plan.study, result.rows, result.elapsed, result.workers)
        )
        self.finished.emit(result)

    def _on_cancelled(self) -> None:
        self.dock.set_running(False)
        self.dock.progress.setRange(0, 1)
        self.dock.set_status("study cancelled")

    def _on_failed(self, message: str) -> None:
        self.dock.set_running(False)
        self.dock.progress.setRange(0, 1)
        self.dock.set_status(f"study failed: {message}")
        self.window.show_error(message, "Study")

    # ------------------------------------------------------------------ showing
    def _on_fabric_replaced(self) -> None:
        """Another fabric: the map of a study of the old one must not colour it."""
        if self.overlay.active or self.overlay.by_node:
            self.overlay.clear()
            self._sync_heat()
            self.dock.set_status(
                "the fabric was replaced: the study's map is cleared "
                "(its table stays; Load or Run to map one again)"
            )

    def show(self, study: str, rows: list[dict[str, Any]]) -> None:
        """Fill the table and colour the canvas with ``rows``."""
        self.shown = (study, rows)
        self.dock.show_rows(study, rows)
        self.overlay.show_rows(study, rows, self._class_links(study, rows))
        self._sync_heat()

    def _set_map_visible(self, visible: bool) -> None:
        self.overlay.set_visible(visible)
        self._sync_heat()

    def _sync_heat(self) -> None:
        """While the impact map colours the links the heat map yields them and its colour bar
        (one colour bar at the top right, describing the colours drawn); after, it is back."""
        if self.heat is not None:
            self.heat.set_yielded(self.overlay.visible and self.overlay.active)

    def _class_links(self, study: str, rows) -> dict[str, list[tuple[str, str]]]:
        if study != "upgrade" or not any(r.get("kind") == "class" for r in rows):
            return {}
        from solver.studies.elements import upgrade_elements

        topo = self.doc.to_topology()
        return {
            e.key: [(topo.links[i].source, topo.links[i].target) for i in e.links]
            for e in upgrade_elements(topo, "class")
        }

    def tooltip(self, node: str | None, link: int | None) -> str | None:
        if not self.overlay.active and not self.overlay.by_node:
            return None
        if link is not None:
            ln = self.doc.links.get(link)
            return None if ln is None else self.overlay.tooltip_for(None, (ln.source, ln.target))
        return self.overlay.tooltip_for(node, None)

    def select_element(self, key: str) -> None:
        """Select the node or link of a table row on the canvas."""
        if key in self.doc.nodes:
            self.doc.set_selection([key])
            return
        if "--" in key:
            u, v = key.split("#", 1)[0].split("--", 1)
            uids = [uid for uid, ln in self.doc.links.items() if {ln.source, ln.target} == {u, v}]
            self.doc.set_selection((), uids[:1])

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path) -> None:
        from solver.studies.runner import save_result

        if self.result is None:
            raise ForestCollError("run a study first")
        save_result(path, self.result)

    def load(self, path: str | Path, name: str) -> None:
        from solver.io.hdf5.studies import read_study

        stored = read_study(path, name)
        self.result = None
        self.dock.save_button.setEnabled(False)
        self.show(stored.study, stored.rows)
        total = int(stored.attrs.get("rows_total", len(stored.rows)))
        self.dock.set_progress(len(stored.rows), total, None)
        self.dock.set_status(
            f"{Path(path).name}: /studies/{name}, {len(stored.rows)} of {total} "
            f"rows{'' if stored.complete else ' (incomplete)'}"
        )
        self.finished.emit(stored)

    def save_dialog(self) -> None:
        # a study is added to a results file (next to its schedules and tables), never
        # replacing it: no "replace it?" question for an existing file
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            "Save study (added to an existing results file)",
            "results.h5",
            "HDF5 results (*.h5 *.hdf5)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if not path:
            return
        try:
            self.save(path)
        except (ForestCollError, OSError) as exc:
            self.window.show_error(str(exc).splitlines()[0], "Save study")
            return
        self.dock.set_status(f"saved to {path} (/studies/{self.result.name})")

    def load_dialog(self) -> None:
        from solver.io.hdf5.studies import list_studies

        path, _ = QFileDialog.getOpenFileName(
            self.window, "Load study", "", "HDF5 results (*.h5 *.hdf5)"
        )
        if not path:
            return
        try:
            names = list_studies(path)
            if not names:
                raise ForestCollError(f"{path}: the file holds no study")
            name = names[0]
            if len(names) > 1:
                name, ok = ask_item(self.window, "Load study", "Study", names)
                if not ok:
                    return
            self.load(path, name)
        except (ForestCollError, OSError) as exc:
            self.window.show_error(str(exc).splitlines()[0], "Load study")


def _summary_text(study: str, rows, elapsed: float, workers: int) -> str:
    from solver.studies.report import summary

    s = summary(study, rows)
    head = f"{len(rows)} rows in {elapsed:.1f} s on {workers} worker(s). "
    if study == "failures":
        return head + (
            f"Worst single failure: {s.get('min_algbw', 0):.6g} GB/s; "
            f"{s.get('free', 0)} elements free, {s.get('disconnecting', 0)} disconnect."
        )
    if study == "upgrade":
        return head + (
            f"{s.get('gaining', 0)} upgrades gain (best {s.get('max_algbw', 0):.6g} "
            f"GB/s); {s.get('blocked', 0)} blocked by the next cut."
        )
    return head + f"Best point {s.get('best', '')}: {s.get('max_algbw', 0):.6g} GB/s."
