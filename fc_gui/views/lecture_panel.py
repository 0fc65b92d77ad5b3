"""The lecture panel: the step's title and text in large type, Back/Next, Export figure, Exit,
the presenter's text size and the ring comparison's message size; and the dialog that picks
the fabric a lecture walks through."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from fc_gui.model.lecture import COMPARE_SIZES, DEFAULT_COMPARE_SIZE, PRESETS, size_text
from fc_gui.model.lesson import TEXT_SCALES
from fc_gui.views.dialog_titles import keep_title_whole

#: Presenter scales offered (text size relative to the normal 100 %).
SCALES = TEXT_SCALES
DEFAULT_SCALE = 1.5
#: Body text size at 100 % (points); the title is 1.4 times larger.
BASE_POINTS = 12.0


class LecturePanel(QWidget):
    """Shows one step at a time (see module docstring).

    Signals
    -------
    next_requested, back_requested, export_requested, exit_requested
    scale_changed(float)
    size_changed(int)  (bytes)
    """

    next_requested = Signal()
    back_requested = Signal()
    export_requested = Signal()
    exit_requested = Signal()
    note_requested = Signal()  # the teacher's note on this step
    add_step_requested = Signal()  # an own step after this one
    remove_step_requested = Signal()  # this own step
    save_lesson_requested = Signal()
    scale_changed = Signal(float)
    size_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lecture-panel")
        self.counter = QLabel()
        self.counter.setStyleSheet("color: #666;")
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setStyleSheet("color: #1a237e;")
        self.body = QTextBrowser()
        self.body.setOpenLinks(False)
        self.body.setFrameShape(QTextBrowser.Shape.NoFrame)
        self.body.setStyleSheet("QTextBrowser { background: #fcfcfc; }")
        self.back_button = QPushButton("◀ Back")
        self.next_button = QPushButton("Next ▶")
        self.next_button.setDefault(True)
        self.export_button = QPushButton("Export figure…")
        self.exit_button = QPushButton("Exit (Esc)")
        self.note_button = QPushButton("Note…")
        self.note_button.setToolTip(
            "Your note on this step (shown under its text, saved in the lesson)"
        )
        self.add_step_button = QPushButton("Add step…")
        self.add_step_button.setToolTip("A step of your own after this one")
        self.remove_step_button = QPushButton("Remove this step")
        self.remove_step_button.setToolTip("Take out this step of your own")
        self.remove_step_button.setVisible(False)
        self.save_lesson_button = QPushButton("Save lesson…")
        self.save_lesson_button.setToolTip("The fabric, your notes and steps, the text size")
        for b, sig in (
            (self.back_button, self.back_requested),
            (self.next_button, self.next_requested),
            (self.export_button, self.export_requested),
            (self.exit_button, self.exit_requested),
            (self.note_button, self.note_requested),
            (self.add_step_button, self.add_step_requested),
            (self.remove_step_button, self.remove_step_requested),
            (self.save_lesson_button, self.save_lesson_requested),
        ):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the arrow keys stay the lecture's
            b.clicked.connect(sig)
        self.scale_box = QComboBox()
        for s in SCALES:
            self.scale_box.addItem(f"{round(100 * s)} %", s)
        self.scale_box.setCurrentIndex(SCALES.index(DEFAULT_SCALE))
        self.scale_box.currentIndexChanged.connect(
            lambda i: self.scale_changed.emit(float(self.scale_box.itemData(i)))
        )
        self.size_box = QComboBox()
        for size in COMPARE_SIZES:
            self.size_box.addItem(size_text(size), size)
        self.size_box.setCurrentIndex(COMPARE_SIZES.index(DEFAULT_COMPARE_SIZE))
        self.size_box.currentIndexChanged.connect(
            lambda i: self.size_changed.emit(int(self.size_box.itemData(i)))
        )
        for box in (self.scale_box, self.size_box):
            box.setFocusPolicy(Qt.FocusPolicy.NoFocus)

        nav = QHBoxLayout()
        nav.addWidget(self.back_button)
        nav.addWidget(self.next_button)
        nav.addStretch(1)
        nav.addWidget(self.export_button)
        nav.addWidget(self.exit_button)
        settings = QHBoxLayout()
        self.scale_label = QLabel("Text size")
        self.size_label = QLabel("Ring comparison at")
        settings.addWidget(self.scale_label)
        settings.addWidget(self.scale_box)
        settings.addSpacing(16)
        settings.addWidget(self.size_label)
        settings.addWidget(self.size_box)
        settings.addStretch(1)
        lesson = QHBoxLayout()
        lesson.addWidget(self.note_button)
        lesson.addWidget(self.add_step_button)
        lesson.addWidget(self.remove_step_button)
        lesson.addStretch(1)
        lesson.addWidget(self.save_lesson_button)
        self.keys_hint = QLabel("Keys: → / PageDown next, ← / PageUp back, Esc exits")
        self.keys_hint.setStyleSheet("color: #777;")
        lay = QVBoxLayout(self)
        lay.addWidget(self.counter)
        lay.addWidget(self.title)
        lay.addWidget(self.body, 1)
        lay.addLayout(nav)
        lay.addLayout(settings)
        lay.addLayout(lesson)
        lay.addWidget(self.keys_hint)
        self.scale = 1.0
        self.set_scale(DEFAULT_SCALE)

    @property
    def compare_size(self) -> int:
        return int(self.size_box.currentData())

    def set_compare_size(self, size: int) -> None:
        """Pick ``size`` in the size box (emits size_changed when it changes)."""
        i = self.size_box.findData(int(size))
        if i >= 0:
            self.size_box.setCurrentIndex(i)

    def set_scale(self, scale: float) -> None:
        """Presenter scale: every text of the panel ``scale`` times its normal size."""
        self.scale = float(scale)
        pt = BASE_POINTS * self.scale
        body = QFont(self.body.font())
        body.setPointSizeF(pt)
        self.body.setFont(body)
        self.body.document().setDefaultFont(body)
        title = QFont(self.title.font())
        title.setPointSizeF(pt * 1.4)
        title.setBold(True)
        self.title.setFont(title)
        small = QFont(self.font())
        small.setPointSizeF(max(9.0, pt * 0.75))
        for w in (
            self.counter,
            self.back_button,
            self.next_button,
            self.export_button,
            self.exit_button,
            self.scale_box,
            self.size_box,
            self.scale_label,
            self.size_label,
            self.keys_hint,
            self.note_button,
            self.add_step_button,
            self.remove_step_button,
            self.save_lesson_button,
        ):
            w.setFont(small)
        i = self.scale_box.findData(self.scale)
        if i >= 0 and i != self.scale_box.currentIndex():
            self.scale_box.blockSignals(True)
            self.scale_box.setCurrentIndex(i)
            self.scale_box.blockSignals(False)

    def show_step(self, counter: str, title: str, html: str) -> None:
        self.counter.setText(counter)
        self.title.setText(title)
        self.body.setHtml(html)

    def plain_text(self) -> str:
        """The step's text as read (without the no-break joiners of the layout)."""
        return self.body.toPlainText().replace("\u2060", "").replace("\u00a0", " ")

    def show_message(self, title: str, text: str) -> None:
        """No step yet (solving) or none possible (the solve failed)."""
        self.show_step("", title, f"<p>{text}</p>")
        self.set_navigation(False, False)

    def set_navigation(self, back: bool, forward: bool) -> None:
        self.back_button.setEnabled(back)
        self.next_button.setEnabled(forward)
        for b in (
            self.export_button,
            self.note_button,
            self.add_step_button,
            self.save_lesson_button,
        ):
            b.setEnabled(back or forward)


class LectureStartDialog(QDialog):
    """Which fabric to lecture on: a preset (2× DGX A100 first), another template from the
    gallery, or the fabric that is open. ``choice`` after ``accept``: a key of
    :data:`fc_gui.model.lecture.PRESETS`, ``"template"`` or ``"current"``."""

    OTHER = ("template", "Another template from the gallery…")
    CURRENT = ("current", "The fabric that is open now")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Lecture mode")
        keep_title_whole(self)
        self.keys = [*PRESETS, self.OTHER[0], self.CURRENT[0]]
        self.list = QListWidget()
        for key in PRESETS:
            self.list.addItem(PRESETS[key].title)
        self.list.addItem(self.OTHER[1])
        self.list.addItem(self.CURRENT[1])
        self.list.setCurrentRow(0)
        self.list.itemDoubleClicked.connect(lambda *_: self.accept())
        info = QLabel(
            "A guided walk through one fabric: (a) the fabric, (b) the bottleneck cut and its "
            "bound, (c) one spanning tree level by level, (d) the ring beside ForestColl.\n"
            "Next/Back with the arrow keys or PageDown/PageUp (presenter clickers); Esc exits."
        )
        info.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Start lecture")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(info)
        lay.addWidget(self.list)
        lay.addWidget(buttons)
        self.resize(520, 320)

    @property
    def choice(self) -> str:
        return self.keys[max(0, self.list.currentRow())]
