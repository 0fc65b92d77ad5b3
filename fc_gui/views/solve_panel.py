"""The solve panel: collective, trees-per-root limit, Solve/Cancel, progress and the stale marker.

The panel only collects options and shows state; it emits ``solve_requested`` /
``cancel_requested`` and the results controller does the work.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from solver.model.schedule import COLLECTIVES

#: "Re-solve on edit" is offered only for fabrics up to this many nodes (solves stay sub-second).
AUTO_RESOLVE_MAX_NODES = 64

PHASE_TITLES = {
    "optimum": "finding the optimum",
    "switch_removal": "removing switches",
    "trees": "packing trees",
    "paths": "mapping paths",
}


class SolvePanel(QWidget):
    """Options and controls of a solve.

    Signals
    -------
    solve_requested(collective: str, max_trees_per_root: object)
        ``max_trees_per_root`` is an int or None (no limit).
    cancel_requested()
    auto_resolve_toggled(on: bool)
    """

    solve_requested = Signal(str, object)
    cancel_requested = Signal()
    auto_resolve_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SolvePanel")
        self.collective_box = QComboBox()
        self.collective_box.addItems(list(COLLECTIVES))
        self.collective_box.setToolTip("Which collective to schedule")

        self.trees_box = QSpinBox()
        self.trees_box.setRange(0, 4096)
        self.trees_box.setSpecialValueText("∞ (optimal)")
        self.trees_box.setValue(0)
        self.trees_box.setToolTip(
            "Max trees per root: ∞ gives the exact optimum (k may be large);\n"
            "K limits each root to K trees (K=1 suits MSCCL/RCCL thread-block limits)."
        )

        self.solve_button = QPushButton("Solve")
        self.solve_button.setDefault(True)
        self.solve_button.setToolTip("Compute the optimal schedule (Ctrl+R)")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)

        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(0)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(10)
        self.phase_label = QLabel("")
        self.phase_label.setObjectName("phaseLabel")

        self.stale_label = QLabel("")
        self.stale_label.setObjectName("staleLabel")
        self.stale_label.setWordWrap(True)
        # The banner's room is kept while it is hidden (two lines of text), so its appearing never
        # squeezes the fields above it when the dock is short.
        policy = self.stale_label.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.stale_label.setSizePolicy(policy)
        self.stale_label.setMinimumHeight(2 * self.stale_label.fontMetrics().lineSpacing() + 10)
        self.stale_label.setVisible(False)
        self.stale_label.setStyleSheet(
            "QLabel#staleLabel { background: #fff3cd; color: #7a5b00; border: 1px solid #e0c36a;"
            " border-radius: 3px; padding: 2px 4px; }"
        )

        self.auto_box = QCheckBox("Re-solve on edit")
        self.auto_box.setToolTip(
            f"Solve again after every edit (fabrics up to {AUTO_RESOLVE_MAX_NODES} nodes)"
        )
        self.auto_box.toggled.connect(self.auto_resolve_toggled)

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Collective", self.collective_box)
        form.addRow("Max trees / root", self.trees_box)
        buttons = QHBoxLayout()
        buttons.addWidget(self.solve_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.phase_label)
        layout.addWidget(self.stale_label)
        layout.addWidget(self.auto_box)
        layout.addStretch(1)

        self.solve_button.clicked.connect(self._emit_solve)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self._running = False

    # ------------------------------------------------------------------ options
    @property
    def collective(self) -> str:
        return self.collective_box.currentText()

    def set_collective(self, name: str) -> None:
        index = self.collective_box.findText(name)
        if index < 0:
            raise ValueError(f"unknown collective {name!r}")
        self.collective_box.setCurrentIndex(index)

    @property
    def max_trees_per_root(self) -> int | None:
        value = self.trees_box.value()
        return None if value == 0 else value

    def set_max_trees_per_root(self, value: int | None) -> None:
        self.trees_box.setValue(0 if value is None else int(value))

    @property
    def auto_resolve(self) -> bool:
        return self.auto_box.isChecked() and self.auto_box.isEnabled()

    def set_auto_resolve_allowed(self, allowed: bool, reason: str = "") -> None:
        """Enable/disable the re-solve-on-edit option (only small fabrics allow it)."""
        self.auto_box.setEnabled(allowed)
        self.auto_box.setToolTip(
            reason or f"Solve again after every edit (fabrics up to {AUTO_RESOLVE_MAX_NODES} nodes)"
        )

    # ------------------------------------------------------------------ state
    @property
    def running(self) -> bool:
        return self._running

    def set_running(self, running: bool) -> None:
        self._running = running
        self.solve_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.collective_box.setEnabled(not running)
        self.trees_box.setEnabled(not running)
        if running:
            self.progress_bar.setValue(0)
            self.phase_label.setText("starting…")

    def set_progress(self, phase: str, fraction: float) -> None:
        """Show ``phase`` and its fraction; the bar shows the whole solve (phases in order)."""
        title = PHASE_TITLES.get(phase, phase.replace("_", " "))
        fraction = max(0.0, min(1.0, fraction))
        order = list(PHASE_TITLES)
        if phase in order:
            overall = (order.index(phase) + fraction) / len(order)
            step = f" (step {order.index(phase) + 1}/{len(order)})"
        else:
            overall, step = fraction, ""
        self.progress_bar.setValue(int(round(1000 * overall)))
        self.phase_label.setText(f"{title}{step} — {100 * fraction:.0f}%")

    def set_status(self, text: str) -> None:
        self.phase_label.setText(text)

    def reset(self) -> None:
        """Another fabric: no progress, no status, no stale marker."""
        self.progress_bar.setValue(0)
        self.phase_label.setText("")
        self.set_stale(False)

    def set_cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self.phase_label.setText("cancelling…")

    def set_stale(self, stale: bool, text: str = "") -> None:
        """Show (or hide) the marker saying the shown result no longer matches the fabric."""
        self.stale_label.setText(
            text or "⚠ Result is stale: the fabric changed since it was solved."
        )
        self.stale_label.setVisible(stale)

    @property
    def stale(self) -> bool:
        return not self.stale_label.isHidden()

    def _emit_solve(self) -> None:
        if not self._running:
            self.solve_requested.emit(self.collective, self.max_trees_per_root)

    def keyPressEvent(self, event):
        if event.key() == Qt.Key.Key_Escape and self._running:
            self.cancel_requested.emit()
            return
        super().keyPressEvent(event)
