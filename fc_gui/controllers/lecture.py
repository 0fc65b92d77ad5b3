"""View > Lecture mode: a guided walk through one fabric for a class or a design review.

Entering hides the docks and the toolbar and shows the :class:`LecturePanel` beside the canvas;
the fabric is solved in the results' cancellable worker (the window stays responsive) and the
ring comparison is simulated in a background task. Each step (:mod:`fc_gui.model.lecture`)
sets the canvas layers through View > Layers, draws the tree up to its level with the broadcast
animation (which dims the other layers), and can be exported as a figure showing just that.
Keys while the lecture runs: Right/PageDown next, Left/PageUp back, Esc exits (the window's
layout, layers and text sizes come back as they were).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog

from fc_gui.controllers.background import BackgroundTask
from fc_gui.controllers.figure import DEFAULT_WIDTH, figure_data, save_figure
from fc_gui.controllers.file_actions import with_positions
from fc_gui.model.commands import SetDisabledCommand
from fc_gui.model.lecture import (
    PRESETS,
    Comparison,
    ComparisonRow,
    LecturePlan,
    LectureStep,
    lecture_steps,
    partial_tree,
    pick_tree,
    short_label,
    step_counter,
    step_html,
)
from fc_gui.model.lesson import (
    Lesson,
    LessonError,
    OwnStep,
    apply_lesson,
    link_index,
    link_key,
    read_lesson,
    write_lesson,
)
from fc_gui.model.trees import tree_hop_pairs
from fc_gui.views.figure_svg import FigureData, note_chars
from fc_gui.views.lecture_panel import LecturePanel, LectureStartDialog
from solver.io.templates import TEMPLATES
from solver.model.errors import ForestCollError
from solver.model.schedule import Schedule
from solver.model.topology import Topology
from solver.simulate import sweep

if TYPE_CHECKING:
    from fc_gui.controllers.layers_menu import LayersMenu
    from fc_gui.controllers.messages import ResultMessages
    from fc_gui.controllers.result_overlays import ResultOverlays
    from fc_gui.controllers.solving import SolveController
    from fc_gui.model.result_state import ResultState

NEXT_KEYS = (Qt.Key.Key_Right, Qt.Key.Key_PageDown)
BACK_KEYS = (Qt.Key.Key_Left, Qt.Key.Key_PageUp)
EXIT_KEYS = (Qt.Key.Key_Escape,)
#: Layers a step can set, by their key in View > Layers.
STEP_LAYERS = ("cut", "heat", "trees", "labels", "frames")


def compare(schedule: Schedule, size: int, cancel=None) -> Comparison:
    """Simulate ForestColl's schedule and the ring at ``size`` bytes (background thread)."""
    sw = sweep(
        schedule.topology,
        schedule.collective,
        ("forestcoll", "ring"),
        [size],
        schedule=schedule,
        cancel=cancel,
    )
    rows = tuple(
        ComparisonRow(
            r.algorithm,
            r.algbw,
            size / r.route_bound_time / 1e9 if r.route_bound_time > 0 else float("nan"),
        )
        for r in sw.rows
    )
    return Comparison(size, rows)


def preset_topology(key: str) -> Topology:
    """The fabric of lecture preset ``key`` (laid out by structure when the preset says so)."""
    preset = PRESETS[key]
    topo = TEMPLATES[preset.template].function(**preset.values)
    return with_positions(topo, restructure=preset.restructure)


class LectureController(QObject):
    """Lecture mode of one main window (see module docstring).

    Signals
    -------
    active_changed(bool)
    step_shown(int)  the index of the step on screen
    """

    active_changed = Signal(bool)
    step_shown = Signal(int)

    def __init__(
        self,
        window,
        state: ResultState,
        solving: SolveController,
        overlays: ResultOverlays,
        layers: LayersMenu,
        messages: ResultMessages,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.state = state  # the shown result and its switch figures
        self.solving = solving  # starts the lecture's solve
        self.overlays = overlays  # the cut, heat map and tree layers a step shows
        self.layers = layers  # View > Layers, saved and restored around the lecture
        self.messages = messages  # status line and error dialogs
        self.active = False
        self.steps: list[LectureStep] = []
        self.index = 0
        self.plan: LecturePlan | None = None
        self.panel = LecturePanel()
        self.dock = window.add_dock(self.panel, Qt.DockWidgetArea.RightDockWidgetArea, "Lecture")
        self.dock.hide()
        self.panel.next_requested.connect(self.next)
        self.panel.back_requested.connect(self.back)
        self.panel.exit_requested.connect(self.exit)
        self.panel.note_requested.connect(lambda: self.edit_note())
        self.panel.add_step_requested.connect(lambda: self.add_step())
        self.panel.remove_step_requested.connect(self.remove_step)
        self.panel.save_lesson_requested.connect(lambda: self.save_lesson())
        self.notes: dict[str, str] = {}  # the teacher's note per step key (the lesson's)
        self.own_steps: tuple[OwnStep, ...] = ()
        self.lesson_title = ""
        self.panel.export_requested.connect(lambda: self.export_figure())
        self.panel.scale_changed.connect(self.set_scale)
        self.panel.size_changed.connect(self.set_compare_size)
        self.task = BackgroundTask(self)
        self.task.done.connect(self._on_compared)
        self.task.failed.connect(self._on_compare_failed)
        self._saved: dict = {}
        self.state.schedule_changed.connect(self._on_schedule)
        self.state.switch_bounds_changed.connect(self._on_switch_bounds)
        self.solving.worker.failed.connect(self._on_solve_failed)

        self.action = QAction("&Lecture mode…", self)
        self.action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.action.setToolTip("A guided walk through a fabric: cut, trees, ring; for teaching")
        self.action.triggered.connect(self.open_dialog)
        window.view_menu.insertAction(window.view_menu.actions()[0], self.action)
        window.view_menu.insertSeparator(window.view_menu.actions()[1])
        window.help_menu.insertAction(window.help_menu.actions()[0], self.action)
        window.addAction(self.action)
        self.open_lesson_action = QAction("Open &lesson…", self)
        self.open_lesson_action.setToolTip("A saved lesson: its fabric, notes and own steps")
        self.open_lesson_action.triggered.connect(lambda: self.open_lesson())
        window.view_menu.insertAction(window.view_menu.actions()[1], self.open_lesson_action)

    # ------------------------------------------------------------------ starting
    def open_dialog(self) -> bool:
        """View > Lecture mode…: pick the fabric, then start."""
        if self.active:
            self.exit()
            return False
        dialog = LectureStartDialog(self.window)
        if not dialog.exec():
            return False
        choice = dialog.choice
        if choice == "current":
            return self.start()
        if choice == "template":
            from fc_gui.views.template_gallery import TemplateGallery

            gallery = TemplateGallery(self.window)
            if not gallery.exec() or gallery.topology is None:
                return False
            return self.start(gallery.topology)
        return self.start(preset_topology(choice))

    def start(self, topology: Topology | None = None, lesson: Lesson | None = None) -> bool:
        """Enter lecture mode on ``topology`` (None: the open fabric) and solve it; with a
        ``lesson``, on its fabric with its notes, own steps and presenter settings."""
        w = self.window
        if lesson is not None:
            topology = lesson.topology
        self.notes = dict(lesson.notes) if lesson is not None else {}
        self.own_steps = lesson.own_steps if lesson is not None else ()
        self.lesson_title = lesson.title if lesson is not None else ""
        if lesson is not None:
            self.panel.set_scale(lesson.text_scale)
            self.panel.size_box.blockSignals(True)
            self.panel.set_compare_size(lesson.compare_size)
            self.panel.size_box.blockSignals(False)
        if topology is not None:
            if not w.file_actions.confirm_discard("starting a lecture on another fabric"):
                return False
            w.file_actions.new_fabric(topology)
        if lesson is not None and (lesson.disabled_nodes or lesson.disabled_links):
            # the lesson's what-if, as one undoable edit (Undo shows the intact fabric)
            uids = list(w.document.links)
            links = [uids[link_index(lesson.topology, k)] for k in lesson.disabled_links]
            w.undo_stack.push(SetDisabledCommand(w.document, lesson.disabled_nodes, links, True))
        self._enter()
        self.plan, self.steps, self.index = None, [], 0
        self.panel.show_message(
            "Solving…",
            "Finding the optimal schedule of this fabric. "
            "The window stays responsive; Esc leaves the lecture.",
        )
        if not self.solving.solve(collective="allgather", max_trees_per_root=None):
            self.panel.show_message(
                "Cannot solve this fabric",
                "See the error message; fix the fabric or pick another one.",
            )
        return True

    def _enter(self) -> None:
        if self.active:
            return
        w = self.window
        self._saved = {
            "state": w.saveState(),
            "layers": self.layers.states(),
        }
        for dock in w.docks.values():
            if dock is not self.dock:
                dock.hide()
        w.tools_toolbar.hide()
        self.dock.show()
        self.active = True
        QApplication.instance().installEventFilter(self)
        ov = self.overlays
        ov.cut.set_caption_shown(False)  # the panel shows the cut's numbers, in large type
        doc = w.document

        def label(nid: str) -> str:
            node = doc.nodes.get(nid)
            return short_label(nid, node.group if node is not None else None)

        w.canvas.set_label_formatter(label)
        self.set_scale(self.panel.scale)
        QTimer.singleShot(0, w.canvas.fit_view)  # the canvas is narrower beside the panel
        self.active_changed.emit(True)

    # ------------------------------------------------------------------ solving and simulating
    def _on_schedule(self, schedule: Schedule | None) -> None:
        if not self.active:
            return
        if schedule is None or schedule.phases or schedule.bottleneck is None:
            self.plan, self.steps = None, []
            self.panel.show_message(
                "No result",
                "The fabric changed: the lecture's result was "
                "dropped. Exit and start the lecture again.",
            )
            return
        groups = {n.id: n.group for n in self.window.document.nodes.values()}
        self.plan = LecturePlan(
            schedule,
            pick_tree(schedule),
            None,
            self.panel.compare_size,
            groups,
            self.state.switch_bounds,
        )
        self.steps = self._lesson_steps()
        self.go(0)
        self._simulate()

    def _on_switch_bounds(self, sb) -> None:
        """The allreduce figures of the lecture's fabric arrived: step (e) shows them."""
        plan = self.plan
        if not self.active or plan is None or plan.schedule is not self.state.schedule:
            return
        self.plan = replace(plan, switch_bounds=sb)
        self._rebuild()

    def _on_solve_failed(self, message: str) -> None:
        if self.active:
            self.panel.show_message("The solve failed", message)

    def _simulate(self) -> None:
        plan = self.plan
        if plan is None:
            return
        schedule, size = plan.schedule, plan.compare_size
        self.task.start(lambda progress, cancel: compare(schedule, size, cancel))

    def set_compare_size(self, size: int) -> None:
        """Simulate the comparison at ``size`` bytes (the panel's size box)."""
        if self.plan is None:
            return
        self.plan = LecturePlan(
            self.plan.schedule,
            self.plan.tree,
            None,
            int(size),
            self.plan.groups,
            self.plan.switch_bounds,
        )
        self._rebuild()
        self._simulate()

    def _on_compared(self, comparison: Comparison) -> None:
        plan = self.plan
        if plan is None or comparison.size != plan.compare_size:
            return
        self.plan = LecturePlan(
            plan.schedule, plan.tree, comparison, plan.compare_size, plan.groups, plan.switch_bounds
        )
        self._rebuild()

    def _on_compare_failed(self, message: str) -> None:
        if self.active:
            self.messages.status(f"Lecture: ring comparison failed: {message}", 8000)

    def _lesson_steps(self) -> list[LectureStep]:
        return apply_lesson(lecture_steps(self.plan), self.notes, self.own_steps)

    def _rebuild(self) -> None:
        self.steps = self._lesson_steps()
        if self.active and self.steps:
            self.go(min(self.index, len(self.steps) - 1))

    # ------------------------------------------------------------------ stepping
    @property
    def step(self) -> LectureStep | None:
        return self.steps[self.index] if self.steps else None

    def next(self) -> None:
        if self.steps and self.index + 1 < len(self.steps):
            self.go(self.index + 1)

    def back(self) -> None:
        if self.steps and self.index > 0:
            self.go(self.index - 1)

    def go(self, index: int) -> None:
        """Show step ``index``: its layers, its tree level, its text."""
        if not self.steps:
            return
        self.index = max(0, min(index, len(self.steps) - 1))
        step = self.steps[self.index]
        layers = self.layers
        for key in STEP_LAYERS:
            layers.actions[key].setChecked(key in step.layers)
        self._show_tree(step)
        busy = ""
        if step.key == "ring" and self.plan is not None and self.plan.comparison is None:
            busy = "The simulation runs in the background; the table appears when it is done."
        self.panel.show_step(
            step_counter(self.index, self.steps), step.title, step_html(step, busy)
        )
        self.panel.set_navigation(self.index > 0, self.index + 1 < len(self.steps))
        self.panel.remove_step_button.setVisible(step.key.startswith("own"))
        self.step_shown.emit(self.index)

    def _show_tree(self, step: LectureStep) -> None:
        ov = self.overlays
        if step.tree_level < 0 or self.plan is None:
            ov.animation.stop()
            ov.trees.show_trees([])
            return
        tree = self.plan.tree
        whole = [("allgather", tree)]
        if ov.animation.trees != whole:
            ov.animation.set_trees(whole)
        ov.trees.show_trees(
            [("allgather", partial_tree(tree, step.tree_level))], lane_pairs=tree_hop_pairs(tree)
        )
        ov.animation.go_to(step.tree_level)

    # ------------------------------------------------------------------ lessons
    def lesson(self) -> Lesson:
        """The lecture as a lesson: the open fabric, the notes, own steps and settings."""
        doc = self.window.document
        topo = doc.to_topology(include_disabled=True)  # positions included, in link order
        uids = list(doc.links)
        off = [link_key(topo, uids.index(u)) for u in uids if u in doc.disabled_links]
        return Lesson(
            self.lesson_title or topo.name,
            topo,
            dict(self.notes),
            self.own_steps,
            self.panel.scale,
            self.panel.compare_size,
            tuple(n for n in doc.nodes if n in doc.disabled_nodes),
            tuple(off),
        )

    def save_lesson(self, path: str | Path | None = None) -> Path | None:
        if path is None:
            folder = self.window.file_path.parent if self.window.file_path else Path.cwd()
            path, _ = QFileDialog.getSaveFileName(
                self.window,
                "Save the lesson",
                str(folder / "lesson.lesson.json"),
                "Lesson (*.lesson.json);;JSON (*.json)",
            )
            if not path:
                return None
        try:
            write_lesson(path, self.lesson())
        except (ForestCollError, OSError) as exc:
            self.messages.report_error(str(exc))
            return None
        self.messages.status(f"Lesson written to {path}", 6000)
        return Path(path)

    def open_lesson(self, path: str | Path | None = None) -> bool:
        """View > Open lesson…: read it (a bad file is one dialog, nothing changes) and start
        the lecture on it."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self.window, "Open a lesson", "", "Lesson (*.lesson.json *.json)"
            )
            if not path:
                return False
        try:
            lesson = read_lesson(path)
        except LessonError as exc:
            self.messages.report_error(str(exc))
            return False
        if self.active:
            self.exit()
        return self.start(lesson=lesson)

    def edit_note(self, text: str | None = None) -> None:
        """The teacher's note on the current step (asked for when ``text`` is None)."""
        step = self.step
        if step is None:
            return
        if text is None:
            from PySide6.QtWidgets import QInputDialog

            text, ok = QInputDialog.getMultiLineText(
                self.window,
                "Note on this step",
                f"Your note on “{step.title}”:",
                self.notes.get(step.key, ""),
            )
            if not ok:
                return
        key = step.key
        self.notes[key] = text.strip()
        self._rebuild()

    def add_step(self, title: str | None = None, text: str | None = None) -> None:
        """An own step after the current one (asked for when ``title`` is None)."""
        step = self.step
        if step is None:
            return
        if title is None:
            from PySide6.QtWidgets import QInputDialog

            title, ok = QInputDialog.getText(self.window, "Add a step", "Title of your step:")
            if not ok or not title.strip():
                return
            text, ok = QInputDialog.getMultiLineText(
                self.window, "Add a step", "Its text (a blank line starts a paragraph):"
            )
            if not ok:
                return
        after = step.key
        if after.startswith("own"):  # after an own step: after the lecture step it follows
            after = self.own_steps[int(after[3:])].after
        self.own_steps = (*self.own_steps, OwnStep(after, title.strip(), (text or "").strip()))
        self.steps = self._lesson_steps()
        mine = f"own{len(self.own_steps) - 1}"
        self.go(next(i for i, s in enumerate(self.steps) if s.key == mine))

    def remove_step(self) -> None:
        """Take out the current step if it is one of the teacher's own (the one before shows)."""
        step = self.step
        if step is None or not step.key.startswith("own"):
            return
        i = int(step.key[3:])
        self.own_steps = self.own_steps[:i] + self.own_steps[i + 1 :]
        index = self.index
        self.steps = self._lesson_steps()
        self.go(max(0, index - 1))

    # ------------------------------------------------------------------ presenter
    def _color_bar_scale(self, scale: float) -> None:
        """Scale the heat map's colour bar (it has one from the start: ResultOverlays attaches it)."""
        bar = self.overlays.heat.color_bar
        if bar is not None:
            bar.set_scale(scale)

    def set_scale(self, scale: float) -> None:
        """Text size of the panel and the canvas's names (100 % = normal)."""
        self.panel.set_scale(scale)
        if self.active:
            w = self.window
            w.canvas.set_label_scale(scale)
            # the colour bar sits over the canvas: larger, but not over the fabric
            self._color_bar_scale(min(scale, 1.5))
            width = min(0.6, 0.3 + 0.1 * scale) * w.width()
            w.resizeDocks([self.dock], [int(width)], Qt.Orientation.Horizontal)
            QTimer.singleShot(0, w.canvas.fit_view)

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        if not self.active or QApplication.activeModalWidget() is not None:
            return False
        key = event.key()
        if key not in NEXT_KEYS + BACK_KEYS + EXIT_KEYS or event.modifiers() not in (
            Qt.KeyboardModifier.NoModifier,
            Qt.KeyboardModifier.KeypadModifier,
        ):
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key comes as a key press (not the window's Esc shortcut)
            return True
        if key in NEXT_KEYS:
            self.next()
        elif key in BACK_KEYS:
            self.back()
        else:
            self.exit()
        return True

    # ------------------------------------------------------------------ figure
    def figure(self, width: int = DEFAULT_WIDTH) -> FigureData:
        """What the step shows, for Export figure: the canvas layers plus the step's text (at
        the panel's text size, its paragraphs wrapped to the figure's ``width``)."""
        data = figure_data(self.window)
        data.text_scale = self.panel.scale
        step = self.step
        if step is not None:
            data.title = f"{data.title} — {step.title}"
            data.caption = step.formula  # in red under the title (the cut's numbers)
            chars = note_chars(width, data.text_scale)
            data.notes = step.lines(chars, formula=False, table=False)
            data.table = [list(row) for row in step.table]
        return data

    def export_figure(self, path: str | Path | None = None, width: int = DEFAULT_WIDTH):
        """Write the step's figure (.svg or .png); asks for a file name when ``path`` is None."""
        if self.step is None:
            return None
        if path is None:
            name = f"lecture_{self.index + 1:02d}_{self.step.key}.svg"
            folder = self.window.file_path.parent if self.window.file_path else Path.cwd()
            start = str(folder / name)
            path, _ = QFileDialog.getSaveFileName(
                self.window,
                "Export the step as a figure",
                start,
                "SVG figure (*.svg);;PNG figure (*.png)",
            )
            if not path:
                return None
        try:
            out = save_figure(self.window, path, width, data=self.figure(width))
        except ForestCollError as exc:
            self.messages.report_error(str(exc))
            return None
        self.messages.status(f"Figure written to {out}", 6000)
        return out

    # ------------------------------------------------------------------ leaving
    def exit(self) -> None:
        """Leave lecture mode: docks, toolbar, layers and text sizes as they were."""
        if not self.active:
            return
        w = self.window
        self.active = False
        QApplication.instance().removeEventFilter(self)
        self.task.abandon()
        ov = self.overlays
        ov.animation.stop()
        ov.trees.show_trees([])
        for key, on in self._saved.get("layers", {}).items():
            self.layers.actions[key].setChecked(on)
        w.canvas.set_label_scale(1.0)
        w.canvas.set_label_formatter(None)
        ov.cut.set_caption_shown(True)
        self._color_bar_scale(1.0)
        self.dock.hide()
        w.tools_toolbar.show()
        state = self._saved.get("state")
        if state is not None:
            w.restoreState(state)
        self.dock.hide()
        QTimer.singleShot(0, w.canvas.fit_view)
        self.active_changed.emit(False)


def install(window) -> LectureController:
    """Add lecture mode to ``window``, given the parts of its results controller it uses."""
    r = window.results_controller
    return LectureController(window, r.state, r.solving, r.overlays, r.layers, r.messages)
