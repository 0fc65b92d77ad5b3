"""The designer's main window: canvas in the middle, inspector and result panels in docks.

What the controllers use
------------------------
- ``window.document`` (TopologyDocument), ``window.undo_stack``, ``window.canvas`` (FabricCanvas).
- ``window.menus``: dict "file", "edit", "view", "solve", "export", "help" -> QMenu
  (also ``window.solve_menu``, ``window.export_menu``...).
- ``window.add_dock(widget, area, title)`` -> QDockWidget (its toggle goes into View > Panels).
- ``window.results_controller``: the :class:`fc_gui.controllers.results.ResultsController`
  (None when built with ``install_results=False``, as tests that install their own do), and
  ``window.studies_controller`` (:class:`fc_gui.controllers.studies.StudiesController`) and
  ``window.lecture_controller`` (:class:`fc_gui.controllers.lecture.LectureController`).
- ``window.file_path`` is the open file (None for a new fabric); ``window.show_error(msg)`` shows
  a one-line error dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QWidget,
)

from fc_gui.controllers.clipboard import ClipboardActions
from fc_gui.model.document import TopologyDocument
from fc_gui.model.result_text import fabric_counts
from fc_gui.views.canvas import FabricCanvas, Tool
from solver.model.topology import Topology

APP_NAME = "ForestColl Designer"
#: The least height of a dock's content: below its natural height it scrolls (see add_dock).
DOCK_MIN_HEIGHT = 90


def default_topology() -> Topology:
    """The fabric a new window starts with (2x DGX A100)."""
    from solver.io.templates import default_topology as make

    return make()


class MainWindow(QMainWindow):
    """Menus, toolbar, central canvas and docks around one :class:`TopologyDocument`."""

    def __init__(
        self,
        topology: Topology | None = None,
        *,
        settings: QSettings | None = None,
        state_dir: str | Path | None = None,
        install_results: bool = True,
        check_recovery: bool = False,
    ) -> None:
        super().__init__()
        self.settings = settings if settings is not None else QSettings("ForestColl", "Designer")
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.document = TopologyDocument(topology if topology is not None else default_topology())
        self.undo_stack = QUndoStack(self)
        self.canvas = FabricCanvas(self.document, self.undo_stack, self)
        self.setCentralWidget(self.canvas)
        self.file_path: Path | None = None
        self.docks: dict[str, QDockWidget] = {}
        self.results_controller = None
        self.studies_controller = None
        self.lecture_controller = None
        self.timeline_controller = None
        self.resize(1400, 860)

        self.menus = {}
        bar = self.menuBar()
        for key, title in (
            ("file", "&File"),
            ("edit", "&Edit"),
            ("view", "&View"),
            ("solve", "&Solve"),
            ("export", "E&xport"),
            ("help", "&Help"),
        ):
            self.menus[key] = bar.addMenu(title)
        self.file_menu = self.menus["file"]
        self.edit_menu = self.menus["edit"]
        self.view_menu = self.menus["view"]
        self.solve_menu = self.menus["solve"]
        self.export_menu = self.menus["export"]
        self.help_menu = self.menus["help"]

        self._build_edit_menu()
        self._build_tools()
        self._build_view_menu()
        self._build_panels()
        self._build_file_menu()
        self._build_help_menu()

        self.status_counts = QLabel()
        self.statusBar().addPermanentWidget(self.status_counts)
        self.document.changed.connect(self._update_counts)
        self.document.name_changed.connect(lambda *_: self._update_title())
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self._update_counts()
        self._update_title()

        if install_results:
            self._install_results()
            self._install_studies()
        if check_recovery:
            self.file_actions.offer_recovery()

    # ------------------------------------------------------------------ extension API
    def add_dock(
        self, widget: QWidget, area=Qt.DockWidgetArea.RightDockWidgetArea, title: str = ""
    ) -> QDockWidget:
        """Put ``widget`` in a dock at ``area``; its show/hide toggle goes into View > Panels.

        The widget sits in a frameless scroll area: a dock shorter than its content scrolls
        instead of squashing its fields, so the window fits a 768-pixel-high laptop screen.
        """
        dock = QDockWidget(title or widget.windowTitle(), self)
        dock.setObjectName(f"dock-{title or id(widget)}")
        scroll = QScrollArea()
        scroll.setObjectName(f"scroll-{title or id(widget)}")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumHeight(DOCK_MIN_HEIGHT)
        scroll.setWidget(widget)
        dock.setWidget(scroll)
        self.addDockWidget(area, dock)
        self.panels_menu.addAction(dock.toggleViewAction())
        self.docks[dock.windowTitle()] = dock
        return dock

    def show_error(self, message: str, title: str = "Error") -> None:
        """A modal dialog with a one-line error message."""
        QMessageBox.critical(self, title, message)

    def _install_results(self) -> None:
        from fc_gui.controllers.results import install

        self.results_controller = install(self)
        from fc_gui.controllers.lecture import install as install_lecture

        self.lecture_controller = install_lecture(self)
        from fc_gui.controllers.timeline import install as install_timeline

        self.timeline_controller = install_timeline(self)

    def _install_studies(self) -> None:
        from fc_gui.controllers.studies import install

        self.studies_controller = install(self)
        summary = self.docks.get("Results")
        if summary is not None:
            self.tabifyDockWidget(summary, self.studies_controller.dock_widget)
            self.tabifyDockWidget(summary, self.timeline_controller.dock_widget)
            summary.raise_()

    # ------------------------------------------------------------------ menus
    def _build_file_menu(self) -> None:
        from fc_gui.controllers.file_actions import FileActions

        self.file_actions = FileActions(self)
        from fc_gui.controllers.fabric_warnings import FabricWarnings

        self.fabric_warnings = FabricWarnings(self)
        from fc_gui.controllers.summary_view import SummaryViewActions

        self.summary_view = SummaryViewActions(self)

    def _build_edit_menu(self) -> None:
        m = self.edit_menu
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence.StandardKey.Redo, QKeySequence("Ctrl+Y")])
        m.addAction(self.undo_action)
        m.addAction(self.redo_action)
        m.addSeparator()
        self.clipboard = ClipboardActions(self)
        m.addAction(self.clipboard.cut_action)
        m.addAction(self.clipboard.copy_action)
        m.addAction(self.clipboard.paste_action)
        self.delete_action = QAction("&Delete", self)
        self.delete_action.setShortcuts(
            [QKeySequence.StandardKey.Delete, QKeySequence("Backspace")]
        )
        self.delete_action.triggered.connect(self.canvas.delete_selection)
        m.addAction(self.delete_action)
        m.addSeparator()
        sel_all = m.addAction("Select &all", self.document.select_all)
        sel_all.setShortcut(QKeySequence.StandardKey.SelectAll)
        m.addAction("Select &none", lambda: self.document.set_selection())
        for act in (self.undo_action, self.redo_action, self.delete_action):
            self.addAction(act)

    def _build_tools(self) -> None:
        tb = self.addToolBar("Tools")
        tb.setObjectName("tools")
        self.tools_toolbar = tb
        self.tool_actions: dict[Tool, QAction] = {}
        group = QActionGroup(self)
        keys = {
            Tool.SELECT: "S",
            Tool.PAN: "H",
            Tool.ADD_COMPUTE: "C",
            Tool.ADD_SWITCH: "W",
            Tool.ADD_LINK: "L",
        }
        for tool in Tool:
            act = QAction(tool.value.capitalize(), self, checkable=True)
            act.setShortcut(QKeySequence(keys[tool]))
            act.setToolTip(f"{tool.value.capitalize()} ({keys[tool]})")
            act.triggered.connect(lambda _=False, t=tool: self.canvas.set_tool(t))
            group.addAction(act)
            tb.addAction(act)
            self.tool_actions[tool] = act
        self.tool_actions[Tool.SELECT].setChecked(True)
        self.canvas.tool_changed.connect(self._on_tool_changed)
        escape = QAction("Cancel tool", self)
        escape.setShortcut(QKeySequence("Escape"))
        escape.triggered.connect(self._escape)
        self.addAction(escape)
        tb.addSeparator()
        tb.addWidget(QLabel(" New link GB/s "))
        self.bandwidth_edit = QLineEdit(self.canvas.default_bandwidth)
        self.bandwidth_edit.setMaximumWidth(70)
        self.bandwidth_edit.setToolTip(
            "Bandwidth of links drawn with the Add link tool (GB/s per direction, > 0)"
        )
        self.bandwidth_edit.editingFinished.connect(self._set_default_bandwidth)
        tb.addWidget(self.bandwidth_edit)
        tb.addSeparator()
        tb.addAction(self.delete_action)
        for text, slot, signal in (
            ("Undo", self.undo_stack.undo, self.undo_stack.canUndoChanged),
            ("Redo", self.undo_stack.redo, self.undo_stack.canRedoChanged),
        ):
            act = tb.addAction(text, slot)  # fixed text; the Edit menu names the command
            act.setEnabled(False)
            signal.connect(act.setEnabled)

    TOOL_HINTS: ClassVar[dict] = {
        Tool.SELECT: "Click to select, Shift+click to add, drag a node to move, drag on empty "
        "space for a rubber band; right-click for what-if",
        Tool.PAN: "Drag to pan, wheel to zoom (middle-drag pans in every tool)",
        Tool.ADD_COMPUTE: "Click to add a compute node (GPU)",
        Tool.ADD_SWITCH: "Click to add a switch",
        Tool.ADD_LINK: "Drag from one node to another to add a link",
    }

    def _on_tool_changed(self, tool: Tool) -> None:
        self.tool_actions[tool].setChecked(True)
        self.statusBar().showMessage(self.TOOL_HINTS[tool], 10000)

    def _escape(self) -> None:
        if self.canvas.tool is not Tool.SELECT:
            self.canvas.set_tool(Tool.SELECT)
        else:
            self.document.set_selection()

    def _set_default_bandwidth(self) -> None:
        from solver.model.errors import ForestCollError
        from solver.model.topology import to_fraction

        text = self.bandwidth_edit.text().strip()
        try:
            ok = to_fraction(text, "bandwidth") > 0
        except ForestCollError:
            ok = False
        if ok:
            self.canvas.default_bandwidth = text
            self.bandwidth_edit.setStyleSheet("")
        else:
            self.bandwidth_edit.setStyleSheet("QLineEdit { border: 2px solid #d32f2f; }")
            self.statusBar().showMessage(
                f"new link bandwidth must be a number > 0 GB/s, got {text!r}; "
                f"keeping {self.canvas.default_bandwidth}",
                10000,
            )

    def _build_view_menu(self) -> None:
        m = self.view_menu
        fit = m.addAction("&Fit to view", self.canvas.fit_view)
        fit.setShortcut(QKeySequence("F"))
        zin = m.addAction("Zoom &in", lambda: self.canvas.zoom(1.25))
        zin.setShortcut(QKeySequence.StandardKey.ZoomIn)
        zout = m.addAction("Zoom &out", lambda: self.canvas.zoom(0.8))
        zout.setShortcut(QKeySequence.StandardKey.ZoomOut)
        self.snap_action = m.addAction("Snap to &grid")
        self.snap_action.setCheckable(True)
        self.snap_action.toggled.connect(lambda on: self.canvas.set_grid(on))
        m.addSeparator()
        layout_menu = m.addMenu("Auto-&layout")
        from fc_gui.model.layouts import LAYOUTS

        for key, (title, _) in LAYOUTS.items():
            layout_menu.addAction(title, lambda k=key: self.apply_layout(k))
        m.addSeparator()
        self.panels_menu = m.addMenu("&Panels")
        self.tools_toolbar.toggleViewAction().setText("Tools toolbar")
        self.panels_menu.addAction(self.tools_toolbar.toggleViewAction())

    def _build_panels(self) -> None:
        from fc_gui.views.inspector import Inspector

        self.inspector = Inspector(self.document, self.undo_stack)
        self.inspector.edit_done.connect(self._keys_back_to_canvas)
        self.canvas.item_activated.connect(self._open_in_inspector)
        self.add_dock(self.inspector, Qt.DockWidgetArea.RightDockWidgetArea, "Inspector")

    def _keys_back_to_canvas(self) -> None:
        """Return in an Inspector field (value accepted): the canvas takes the keys again,
        with its focus frame (the user is on the keyboard)."""
        self.canvas.setFocus(Qt.FocusReason.OtherFocusReason)
        self.canvas.keyboard.set_active(True)

    def _open_in_inspector(self, kind: str, key) -> None:
        """Enter on the canvas's keyboard item: show the Inspector and put the cursor in the
        item's first field (the node's id, the link's bandwidth)."""
        dock = self.docks["Inspector"]
        dock.show()
        dock.raise_()
        field = self.inspector.node_id if kind == "node" else self.inspector.link_bw
        field.setFocus(Qt.FocusReason.OtherFocusReason)
        field.selectAll()

    def apply_layout(self, key: str) -> None:
        """Run auto-layout ``key`` (see fc_gui.model.layouts.LAYOUTS) as one undoable command."""
        from PySide6.QtWidgets import QApplication

        from fc_gui.model.commands import ApplyLayoutCommand
        from fc_gui.model.layouts import LAYOUTS, compute_layout

        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            positions = compute_layout(self.document.to_topology(include_disabled=True), key)
        finally:
            QApplication.restoreOverrideCursor()
        self.undo_stack.push(ApplyLayoutCommand(self.document, positions, LAYOUTS[key][0]))
        self.canvas.fit_view()

    # ------------------------------------------------------------------ status
    def _update_counts(self) -> None:
        c, s, links = self.document.counts()
        off = len(self.document.disabled_nodes) + len(self.document.disabled_links)
        extra = f", {off} disabled" if off else ""
        self.status_counts.setText(f"{fabric_counts(c, s, links)}{extra}")

    def _on_clean_changed(self, *_) -> None:
        try:
            self._update_title()
        except RuntimeError:  # the window is being destroyed (its stack empties last)
            pass

    def _update_title(self) -> None:
        where = f" — {self.file_path.name}" if self.file_path else ""
        self.setWindowTitle(f"{self.document.name}{where}[*] — {APP_NAME}")
        self.setWindowModified(not self.undo_stack.isClean())

    def is_modified(self) -> bool:
        return not self.undo_stack.isClean()

    def _build_help_menu(self) -> None:
        m = self.help_menu
        self.quick_start_action = m.addAction("&Quick start", self.show_quick_start)
        self.quick_start_action.setShortcut(QKeySequence.StandardKey.HelpContents)
        self.shortcuts_action = m.addAction("&Keyboard shortcuts", self.show_shortcuts)
        self.shortcuts_action.setShortcut(QKeySequence("Ctrl+/"))
        m.addSeparator()
        m.addAction("&About", self._about)
        self.help_dialogs: dict[str, QWidget] = {}

    def _show_help(self, key: str, title: str, text: str):
        from fc_gui.views.help_dialogs import HelpDialog

        old = self.help_dialogs.get(key)
        if old is not None:
            old.close()
            old.deleteLater()
        dialog = self.help_dialogs[key] = HelpDialog(title, text, self)
        dialog.show()  # not modal: follow the steps in the window
        return dialog

    def show_quick_start(self):
        """Help > Quick start: a what-if session in seven steps."""
        from fc_gui.views.help_dialogs import quick_start_html

        return self._show_help("quick start", f"{APP_NAME}: quick start", quick_start_html())

    def show_shortcuts(self):
        """Help > Keyboard shortcuts: every action with a key (read from the actions)."""
        from fc_gui.views.help_dialogs import shortcut_rows, shortcuts_html

        titles = {
            "file": "File",
            "edit": "Edit",
            "view": "View",
            "solve": "Solve",
            "export": "Export",
            "help": "Help",
        }
        menus = {titles[k]: menu for k, menu in self.menus.items()}
        others = {"Tools": self.tools_toolbar.actions(), "Window": self.actions()}
        rows = shortcut_rows(menus, others)
        dialog = self._show_help(
            "shortcuts", f"{APP_NAME}: keyboard shortcuts", shortcuts_html(rows)
        )
        dialog.rows = rows
        return dialog

    def _about(self) -> None:
        from solver import __version__

        QMessageBox.about(
            self,
            APP_NAME,
            f"{APP_NAME} {__version__}\nThroughput-optimal collective schedules (ForestColl).",
        )

    def closeEvent(self, event) -> None:
        if self.file_actions.confirm_discard("closing"):
            self.file_actions.remove_recovery()
            event.accept()
        else:
            event.ignore()
