"""File menu: new from template, open, save, import/export, recent files, autosave/recovery.

Every method that a dialog drives also exists without the dialog (``open_path``, ``save_to``,
``export_to``...) so tests and scripts can call it. Errors become a one-line dialog, never a
traceback. Saving writes atomically (``solver.io.formats.save``).

Autosave: every edit (re)starts a short timer (``autosave_delay_ms``); when it fires with unsaved
changes the fabric is written to this window's own file ``<state dir>/recovery/<pid>-<id>.json``
(undoing back to the saved state, saving, or a clean close deletes it). A window opened with
``check_recovery=True`` offers back the NEWEST recovery file left by a designer that is no longer
running (files of running designers are left alone); older ones are discarded with it.
Replacing an edited fabric (open, import, new from template, new empty) asks first. A fabric
just imported, built from a template or started empty is not "modified": there is nothing to
lose by closing it (undoing back to the fabric before it is).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path

from PySide6.QtCore import QStandardPaths, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressBar, QToolButton

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.gc_pause import gc_frozen
from fc_gui.controllers.results_file import is_results_file, read_saved_result, show_saved_result
from fc_gui.model.commands import ReplaceTopologyCommand
from fc_gui.model.layouts import needs_layout
from fc_gui.model.result_text import plural
from fc_gui.model.structure_layout import structural
from fc_gui.model.summary import SUMMARY_NODES, SummaryState
from solver.io import v1
from solver.io.files import atomic_write_text
from solver.io.formats import format_for, load, save
from solver.model.errors import Cancelled, ForestCollError, TopologyError
from solver.model.scale_up import scale_up_warnings
from solver.model.topology import Topology, validate

OPEN_FILTER = (
    "Fabric files (*.json *.graphml *.xml *.h5 *.hdf5);;ForestColl v1 (*.json);;"
    "networkx node-link (*.nodelink.json *.json);;GraphML (*.graphml);;NCCL topology XML (*.xml);;"
    "Results files, with their saved result (*.h5 *.hdf5)"
)
MAX_RECENT = 8
RECOVERY_KEY = "forestcoll_recovered_from"

#: Quiet time after the last edit before the open fabric is autosaved (ms).
AUTOSAVE_DELAY_MS = 1500


#: Fabrics without positions above this many nodes are laid out as a grid: the structural
#: layout's crossing searches grow faster than the fabric (a 70 000-node file ran minutes).
STRUCTURAL_LAYOUT_NODES = 20_000


def with_positions(topo: Topology, restructure: bool = False) -> Topology:
    """``topo`` with the structural layout (:mod:`fc_gui.model.structure_layout`) for nodes
    that have no position, or for every node when ``restructure`` (a runtime's topology dump,
    whose importer only writes a tree of its PCI hierarchy)."""
    if not restructure and not needs_layout(topo):
        return topo
    from dataclasses import replace

    if len(topo.nodes) > STRUCTURAL_LAYOUT_NODES:  # a grid at once; the summary view groups it
        side = max(1, int(len(topo.nodes) ** 0.5))
        pos = {n.id: (100.0 * (i % side), 100.0 * (i // side)) for i, n in enumerate(topo.nodes)}
    else:
        pos = structural(topo)
    nodes = tuple(
        n
        if n.x is not None and n.y is not None and not restructure
        else replace(n, x=round(pos[n.id][0], 1), y=round(pos[n.id][1], 1))
        for n in topo.nodes
    )
    return replace(topo, nodes=nodes)


def read_fabric(path: str | Path, **options) -> tuple[Topology, str | None]:
    """Read any supported fabric file for editing: (topology with positions, warning or None).

    Structural errors (syntax, ids, bandwidths...) raise TopologyError; a fabric that is valid
    but not solvable yet (one compute node, disconnected) loads with a warning.
    """
    if is_results_file(path):  # its fabric; the saved result is shown by after_open
        from solver.io.hdf5.results import read_topology

        topo = read_topology(path)
    else:
        topo = load(path, check=False, **options)
    try:
        validate(topo, check_connectivity=False)
    except TopologyError as exc:
        if "at least two compute nodes" not in str(exc):
            raise TopologyError(f"{path}: {exc}") from None
    warning = None
    try:
        validate(topo)
    except TopologyError as exc:
        warning = str(exc)
    dump = not is_results_file(path) and format_for(path) == "nccl-xml"
    return with_positions(topo, restructure=dump), warning


#: fabric files at least this large are opened in a worker thread (read, checked, laid out,
#: grouped for the summary view): 100 000 nodes take tens of seconds; the window stays live
BACKGROUND_OPEN_BYTES = 256 << 10


class OpenedFabric:
    """What :func:`read_for_open` found, handed to the GUI thread."""

    def __init__(self, path: Path, topo: Topology, warning: str | None, options: dict) -> None:
        self.path = path
        self.topo = topo
        self.warning = warning
        self.options = options
        self.summary: SummaryState | None = None
        self.fabric_warnings: list[str] | None = None
        self.seconds: dict[str, float] = {}


def read_for_open(path: Path, options: dict, progress, cancel) -> OpenedFabric:
    """Everything slow of opening ``path``, off the GUI thread: read and check it
    (:func:`read_fabric`), its scale-up warnings, and for a fabric the canvas shows as its
    summary the grouping (:class:`~fc_gui.model.summary.SummaryState`). Raises Cancelled.

    Python's cyclic collector is paused meanwhile and the objects made are frozen out of its
    reach after (:func:`gc.freeze`): a full collection walks every object holding the GIL,
    and with a 15 360-GPU fabric's ~10^6 objects that stalled the GUI thread for ~150 ms at a
    time (nodes and links form no cycles; reference counting still frees them)."""
    return gc_frozen(lambda: _read_for_open(path, options, progress, cancel))


def _read_for_open(path: Path, options: dict, progress, cancel) -> OpenedFabric:
    t0 = time.perf_counter()
    progress(f"reading {path.name}", 0.05)
    topo, warning = read_fabric(path, **options)
    out = OpenedFabric(path, topo, warning, options)
    t1 = time.perf_counter()
    out.seconds["read"] = t1 - t0
    if cancel.is_set():
        raise Cancelled("cancelled")
    progress(f"checking {path.name} ({plural(len(topo.nodes), 'node')})", 0.5)
    out.fabric_warnings = scale_up_warnings(topo)
    t2 = time.perf_counter()
    out.seconds["warnings"] = t2 - t1
    if cancel.is_set():
        raise Cancelled("cancelled")
    if len(topo.nodes) > SUMMARY_NODES:
        progress(f"grouping {plural(len(topo.nodes), 'node')} for the summary view", 0.7)
        out.summary = SummaryState.of(topo.nodes, topo.links)
        out.seconds["group"] = time.perf_counter() - t2
    progress(f"opening {path.name}", 1.0)
    return out


#: results files at least this large are read and verified in a worker thread (a 256-GPU
#: schedule is ~1 MB and reads in well under a second; 1024 GPUs ~5 MB, ~25 s)
BACKGROUND_READ_BYTES = 1 << 20


class FileActions:
    """Builds the File menu of a MainWindow and implements its actions."""

    def __init__(self, window) -> None:
        self.window = window
        self.instance = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # a large results file is read and verified in a worker (1024 GPUs: ~25 s of it)
        self.saved_reader = BackgroundTask(window)
        self.saved_reader.done.connect(self._saved_read)
        self.saved_reader.failed.connect(self._error)
        # a big fabric file is read, checked and grouped in a worker (open_file)
        self.opener = BackgroundTask(window)
        self.opener.progress.connect(self._open_progress)
        self.opener.done.connect(self._opened)
        self.opener.failed.connect(self._open_failed)
        self.opener.cancelled.connect(self._open_cancelled)
        self._open_request: tuple[Path, bool] | None = None
        self.open_bar = QProgressBar()
        self.open_bar.setRange(0, 1000)
        self.open_bar.setMaximumWidth(160)
        self.open_bar.setTextVisible(False)
        self.open_cancel = QToolButton()
        self.open_cancel.setText("Cancel")
        self.open_cancel.setToolTip("Stop opening the file (the open fabric stays)")
        self.open_cancel.clicked.connect(self.cancel_open)
        window.statusBar().addPermanentWidget(self.open_bar)
        window.statusBar().addPermanentWidget(self.open_cancel)
        self.open_bar.hide()
        self.open_cancel.hide()
        #: GUI-thread seconds of each step of the last background open (benchmarks read it)
        self.open_steps: dict[str, float] = {}
        #: worker seconds of each phase of the last background open (read, warnings, group)
        self.open_seconds: dict[str, float] = {}
        m = window.file_menu

        def act(text, slot, shortcut=None):
            a = QAction(text, window)
            if shortcut is not None:
                a.setShortcut(shortcut)
            a.triggered.connect(lambda *_: slot())
            m.addAction(a)
            return a

        self.new_action = act(
            "&New from template…", self.new_from_template, QKeySequence.StandardKey.New
        )
        self.new_empty_action = act("New (&empty)", self.new_empty, QKeySequence("Ctrl+Alt+N"))
        self.open_action = act("&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        self.recent_menu = m.addMenu("Open &recent")
        m.addSeparator()
        self.save_action = act("&Save", self.save, QKeySequence.StandardKey.Save)
        self.save_as_action = act("Save &as…", self.save_as, QKeySequence("Ctrl+Shift+S"))
        m.addSeparator()
        self.import_action = act("&Import (node-link, GraphML, NCCL XML)…", self.import_dialog)
        export = m.addMenu("&Export fabric as")
        export.addAction("networkx node-link JSON…", lambda: self.export_dialog("nodelink"))
        export.addAction("GraphML…", lambda: self.export_dialog("graphml"))
        m.addSeparator()
        self.quit_action = act("&Quit", window.close, QKeySequence.StandardKey.Quit)
        self._update_recent_menu()

        self.autosave_timer = QTimer(window)
        self.autosave_timer.setSingleShot(True)
        self.autosave_timer.setInterval(AUTOSAVE_DELAY_MS)
        self.autosave_timer.timeout.connect(self.autosave)
        window.undo_stack.indexChanged.connect(self._on_edit)

    @property
    def autosave_delay_ms(self) -> int:
        return self.autosave_timer.interval()

    @autosave_delay_ms.setter
    def autosave_delay_ms(self, msecs: int) -> None:
        self.autosave_timer.setInterval(int(msecs))

    def _on_edit(self, *_) -> None:
        """An edit, undo or redo: autosave once edits pause; back at the saved state, forget it."""
        try:
            modified = self.window.is_modified()
        except RuntimeError:  # the window is being destroyed (its stack empties last)
            return
        if modified:
            self.autosave_timer.start()
        else:
            self.autosave_timer.stop()
            self.remove_recovery()

    # ------------------------------------------------------------------ helpers
    def _error(self, message: str) -> None:
        self.window.show_error(message)

    def state_dir(self) -> Path:
        if self.window.state_dir is not None:
            return Path(self.window.state_dir)
        base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
        return Path(base or Path.home() / ".forestcoll")

    def recovery_dir(self) -> Path:
        return self.state_dir() / "recovery"

    def recovery_path(self) -> Path:
        """This window's autosave file."""
        return self.recovery_dir() / f"{self.instance}.json"

    def _status(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 8000)

    # ------------------------------------------------------------------ open
    @staticmethod
    def read_quiet(path: str | Path, **options) -> Topology:
        """:func:`read_fabric` without the warning (for start-up)."""
        return read_fabric(path, **options)[0]

    def read(self, path: str | Path, **options) -> Topology:
        """:func:`read_fabric`, showing its warning in the status bar."""
        topo, warning = read_fabric(path, **options)
        if warning:
            self._status(f"warning: {warning}")
        return topo

    def open_file(self, path: str | Path, *, replace_undoable: bool = False, **options) -> bool:
        """Open ``path`` the way the File menu does: a file of :data:`BACKGROUND_OPEN_BYTES`
        or more in the background (:attr:`opener`; progress and Cancel in the status bar, the
        window stays live, the fabric appears when it is ready), a small one at once
        (:meth:`open_path`). Returns False if it failed at once."""
        path = Path(path)
        try:
            big = path.stat().st_size >= BACKGROUND_OPEN_BYTES and not is_results_file(path)
        except OSError as exc:
            self._error(f"{path}: {exc.strerror or exc}")
            return False
        if not big:
            return self.open_path(path, replace_undoable=replace_undoable, **options)
        self._open_request = (path, replace_undoable)
        self.open_steps = {}
        self.open_bar.setValue(0)
        self.open_bar.show()
        self.open_cancel.show()
        self._status(f"opening {path}…")
        self.opener.start(lambda progress, cancel: read_for_open(path, options, progress, cancel))
        return True

    def is_opening(self) -> bool:
        """A file is being opened in the background."""
        return self.opener.is_running()

    def cancel_open(self) -> bool:
        """Stop the background open (the current fabric stays); True if one was running."""
        return self.opener.cancel()

    def _open_progress(self, text: str, fraction: float) -> None:
        self.open_bar.setValue(int(1000 * fraction))
        self.window.statusBar().showMessage(f"{text}…")

    def _open_done_ui(self) -> None:
        self.open_bar.hide()
        self.open_cancel.hide()

    def _open_failed(self, message: str) -> None:
        self._open_done_ui()
        self._open_request = None
        self._error(message)

    def _open_cancelled(self) -> None:
        self._open_done_ui()
        if self._open_request is not None:
            self._status(f"opening {self._open_request[0]} cancelled")
        self._open_request = None

    def _opened(self, opened: OpenedFabric) -> None:
        """The worker's result: load it (staged, one event-loop turn per step: the document
        and canvas, then the bookkeeping)."""
        request, self._open_request = self._open_request, None
        self.open_seconds = dict(opened.seconds)
        replace_undoable = bool(request and request[1])
        w = self.window
        t0 = time.perf_counter()
        w.canvas.offer_summary(opened.summary)
        if opened.fabric_warnings is not None and hasattr(w, "fabric_warnings"):
            w.fabric_warnings.offer(opened.topo.links, opened.fabric_warnings)
        self._load(opened.topo, opened.path, replace_undoable)
        t1 = time.perf_counter()
        self.open_steps["load document + canvas"] = t1 - t0
        self._open_done_ui()
        if opened.warning:
            self._status(f"warning: {opened.warning}")

        def finish() -> None:
            t = time.perf_counter()
            self.after_open(opened.path)
            self.open_steps["fit view, title, recent files"] = time.perf_counter() - t
            done = ", ".join(f"{k} {v:.1f} s" for k, v in opened.seconds.items())
            self._status(f"opened {opened.path} ({done} in the background)")

        QTimer.singleShot(0, finish)

    def _load(self, topo: Topology, path: Path, replace_undoable: bool) -> None:
        w = self.window
        if replace_undoable:
            w.undo_stack.push(ReplaceTopologyCommand(w.document, topo, f"Import {path.name}"))
            w.undo_stack.setClean()  # as read from the file: nothing unsaved yet
            self.remove_recovery()
        else:
            w.document.load_topology(topo)
            w.undo_stack.clear()
            w.undo_stack.setClean()

    def open_path(self, path: str | Path, *, replace_undoable: bool = False, **options) -> bool:
        """Open ``path`` (any supported format); returns False (after an error dialog) on failure.

        A v1 file becomes the window's file; other formats are imports (saving asks for a name).
        """
        path = Path(path)
        try:
            topo = self.read(path, **options)
        except ForestCollError as exc:
            self._error(str(exc))
            return False
        except OSError as exc:
            self._error(f"{path}: {exc.strerror or exc}")
            return False
        self.opener.abandon()  # a background open under way must not replace this one
        self._open_done_ui()
        self._load(topo, path, replace_undoable)
        self.after_open(path)
        return True

    def after_open(self, path: Path) -> None:
        """Bookkeeping once ``path`` is in the document: file name, recent list, view."""
        w = self.window
        self.saved_reader.abandon()
        path = Path(path)
        v1_file = not is_results_file(path) and format_for(path) == "v1" and _is_v1_file(path)
        w.file_path = path if v1_file else None
        w.canvas.fit_view()
        w._update_title()
        self.add_recent(path)
        self._status(f"opened {path}")
        if is_results_file(path) and w.results_controller is not None:
            self.show_saved_result(path)

    def show_saved_result(self, path: Path) -> None:
        """Show the result saved in the results file ``path`` (its fabric is open): read and
        verified here when the file is small, in :attr:`saved_reader` beyond
        :data:`BACKGROUND_READ_BYTES`, so that the window never freezes on a large one."""
        self.saved_reader.abandon()  # an earlier file's result must not land on this fabric
        if Path(path).stat().st_size >= BACKGROUND_READ_BYTES:
            self._status(f"opened {path}: reading and verifying the saved result…")
            self.saved_reader.start(lambda progress, cancel: (path, read_saved_result(path)))
            return
        try:
            saved = read_saved_result(path)
        except ForestCollError as exc:
            self._error(str(exc))
            return
        self._saved_read((path, saved))

    def _saved_read(self, outcome) -> None:
        path, saved = outcome
        show_saved_result(self.window.results_controller, saved)
        if saved.note:
            self._status(f"opened {path}: {saved.note}")
        elif saved.schedule is not None:
            self._status(f"opened {path}: saved {saved.name} result shown")

    def open_dialog(self) -> None:
        if not self.confirm_discard("opening another file"):
            return
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open fabric", self._last_dir(), OPEN_FILTER
        )
        if path:
            self.open_file(path)

    def import_dialog(self) -> None:
        if not self.confirm_discard("importing another fabric"):
            return
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Import fabric", self._last_dir(), OPEN_FILTER
        )
        if path:
            self.import_path(path)

    def import_path(self, path: str | Path, options: dict | None = None) -> bool:
        """Import ``path``; an NCCL/RCCL dump goes through the import dialog (its fields set to
        ``options``, as ``forestcoll gui DUMP --intra ...`` gives them). False if cancelled or
        refused."""
        options = dict(options or {})
        if format_for(path) == "nccl-xml":
            from fc_gui.views.import_dialog import NcclImportDialog

            dialog = NcclImportDialog(self.window, path, options, task=BackgroundTask())
            if not dialog.exec():
                return False
            options = dialog.options()
        return self.open_file(path, replace_undoable=True, **options)

    def new_from_template(self) -> None:
        from fc_gui.views.template_gallery import TemplateGallery

        if not self.confirm_discard("replacing it by a template"):
            return
        dialog = TemplateGallery(self.window)
        if dialog.exec() and dialog.topology is not None:
            self.new_fabric(dialog.topology)

    def new_empty(self) -> None:
        """File > New (empty): an untitled fabric without nodes, to draw from scratch."""
        if not self.confirm_discard("starting an empty fabric"):
            return
        self.new_fabric(Topology(name="untitled", nodes=(), links=()))

    def new_fabric(self, topo: Topology) -> None:
        """Replace the fabric by ``topo`` as one undoable command (the file becomes untitled;
        nothing is unsaved yet)."""
        w = self.window
        w.undo_stack.push(
            ReplaceTopologyCommand(w.document, with_positions(topo), f"New {topo.name}")
        )
        w.undo_stack.setClean()
        self.remove_recovery()
        w.file_path = None
        w.canvas.fit_view()
        w._update_title()

    # ------------------------------------------------------------------ save
    def save(self) -> bool:
        w = self.window
        if w.file_path is None:
            return self.save_as()
        return self.save_to(w.file_path)

    def save_as(self) -> bool:
        start = str(
            self.window.file_path
            or Path(self._last_dir()) / f"{_slug(self.window.document.name)}.json"
        )
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save fabric", start, "ForestColl v1 (*.json)"
        )
        if not path:
            return False
        if not path.lower().endswith(".json"):
            path += ".json"
        return self.save_to(path)

    def save_to(self, path: str | Path) -> bool:
        """Write the whole fabric (disabled items included) as v1 JSON; mark clean."""
        path = Path(path)
        w = self.window
        try:
            text = v1.dumps(w.document.to_topology(include_disabled=True))
            atomic_write_text(path, text)
        except (OSError, ForestCollError) as exc:
            self._error(f"cannot save {path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        w.file_path = path
        w.undo_stack.setClean()
        w._update_title()
        self.add_recent(path)
        self.remove_recovery()
        self._status(f"saved {path}")
        return True

    def export_to(self, path: str | Path) -> bool:
        """Write the fabric in the format the extension names (node-link, GraphML)."""
        try:
            save(self.window.document.to_topology(include_disabled=True), path)
        except (OSError, ForestCollError) as exc:
            self._error(f"cannot export {path}: {getattr(exc, 'strerror', None) or exc}")
            return False
        self._status(f"exported {path}")
        return True

    def export_dialog(self, fmt: str) -> None:
        ext = {"nodelink": ".nodelink.json", "graphml": ".graphml"}[fmt]
        name = Path(self._last_dir()) / f"{_slug(self.window.document.name)}{ext}"
        path, _ = QFileDialog.getSaveFileName(self.window, "Export fabric", str(name), f"*{ext}")
        if path:
            if not path.lower().endswith(ext):
                path += ext
            self.export_to(path)

    def confirm_discard(self, reason: str = "") -> bool:
        """True if there are no unsaved changes, or the user saved or discarded them."""
        if not self.window.is_modified():
            return True
        box = QMessageBox(self.window)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("Unsaved changes")
        box.setText(f"The fabric {self.window.document.name!r} has unsaved changes.")
        box.setInformativeText("Save them before " + (reason or "continuing") + "?")
        box.setStandardButtons(
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel
        )
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------------ recent files
    def recent_files(self) -> list[str]:
        value = self.window.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str | Path) -> None:
        p = str(Path(path).resolve())
        files = [p] + [f for f in self.recent_files() if f != p]
        self.window.settings.setValue("recent_files", files[:MAX_RECENT])
        self.window.settings.setValue("last_dir", str(Path(p).parent))
        self._update_recent_menu()

    def _update_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        files = self.recent_files()
        for f in files:
            menu.addAction(
                f, lambda f=f: self.confirm_discard("opening another file") and self.open_file(f)
            )
        menu.setEnabled(bool(files))

    def _last_dir(self) -> str:
        return str(self.window.settings.value("last_dir", str(Path.cwd())))

    # ------------------------------------------------------------------ autosave / recovery
    def autosave(self) -> bool:
        """Write this window's recovery file if there are unsaved changes; True if written."""
        w = self.window
        self.autosave_timer.stop()
        if not w.is_modified():
            return False
        topo = w.document.to_topology(include_disabled=True)
        data = v1.to_dict(topo)
        now = time.time()
        data[RECOVERY_KEY] = {
            "file": str(w.file_path) if w.file_path else None,
            "time": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)),
            "saved_at": now,
            "pid": os.getpid(),
            "host": socket.gethostname(),
        }
        try:
            self.recovery_dir().mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.recovery_path(), json.dumps(data, indent=1))
        except OSError as exc:
            self._status(f"autosave failed: {exc.strerror or exc}")
            return False
        return True

    def remove_recovery(self) -> None:
        """Delete this window's recovery file (saved, back at the saved state, or closed)."""
        _unlink(self.recovery_path())

    def recovery_candidates(self) -> list[tuple[float, Path, Topology, dict]]:
        """Recovery files left by designers that are not running: (saved at, path, fabric,
        meta), newest first. Unreadable files are deleted."""
        own = self.recovery_path()
        paths = sorted(self.recovery_dir().glob("*.json")) if self.recovery_dir().is_dir() else []
        legacy = self.state_dir() / "recovery.json"  # written by earlier versions
        if legacy.exists():
            paths.append(legacy)
        found = []
        for path in paths:
            if path == own:
                continue
            try:
                data = v1.parse_json_exact(path.read_text(encoding="utf-8"), str(path))
                meta = data.pop(RECOVERY_KEY, {}) if isinstance(data, dict) else {}
                topo = v1.from_dict(data, str(path), check=False)
                mtime = path.stat().st_mtime
            except (ForestCollError, OSError, ValueError) as exc:
                self._status(f"recovery file unreadable, ignored: {exc}")
                _unlink(path)
                continue
            meta = v1.plain(meta) if isinstance(meta, dict) else {}
            if _owner_running(meta):
                continue  # another designer's unsaved work: not ours to offer or delete
            saved_at = meta.get("saved_at")
            when = float(saved_at) if isinstance(saved_at, (int, float)) else mtime
            found.append((when, path, topo, meta))
        found.sort(key=lambda item: item[0], reverse=True)
        return found

    def offer_recovery(self, ask=None) -> bool:
        """If designers crashed with unsaved work, offer to restore the newest. ``ask(text) ->
        bool`` replaces the question dialog (tests). Returns True if the fabric was restored."""
        found = self.recovery_candidates()
        if not found:
            return False
        _, _, topo, meta = found[0]
        older = len(found) - 1
        text = (
            f"ForestColl Designer did not close properly. Restore the unsaved fabric "
            f"{topo.name!r}"
            + (f" of {Path(meta['file']).name}" if meta.get("file") else "")
            + f" autosaved {meta.get('time', 'before')}?"
            + (f"\n({plural(older, 'older autosave')} will be discarded.)" if older else "")
        )
        if ask is None:
            answer = QMessageBox.question(self.window, "Recover unsaved work", text)
            restore = answer == QMessageBox.StandardButton.Yes
        else:
            restore = ask(text)
        if restore:
            w = self.window
            w.undo_stack.push(
                ReplaceTopologyCommand(w.document, with_positions(topo), "Recover unsaved work")
            )
            original = meta.get("file")
            w.file_path = Path(original) if original else None
            w.canvas.fit_view()
            w._update_title()
            self.autosave()  # this window now holds the work: its own file before the old goes
        for _, path, _, _ in found:
            _unlink(path)
        return restore


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _owner_running(meta: dict) -> bool:
    """True if the recovery file's designer still runs (same host, live pid, not this process)."""
    pid = meta.get("pid")
    if not isinstance(pid, int) or pid == os.getpid() or meta.get("host") != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _is_v1_file(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return '"forestcoll-topology"' in head


def _slug(name: str) -> str:
    out = "".join(c if c.isalnum() or c in "-_." else "_" for c in name.strip())
    return out or "fabric"
