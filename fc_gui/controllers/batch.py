"""``forestcoll gui TOPO --solve --screenshot out.png``: solve, render the window, exit 0 or 2."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from fc_gui.controllers.export_actions import save_window_png
from solver.model.errors import ForestCollError

if TYPE_CHECKING:
    from fc_gui.controllers.results import ResultsController

#: Delay before the window is rendered (ms): docks and overlays settle first.
SETTLE_MS = 300


class BatchRun(QObject):
    """Runs the window as a command: errors print one ``error:`` line and end it with exit 2."""

    def __init__(self, results: ResultsController) -> None:
        super().__init__(results)
        self.results = results
        self.enabled = False  # errors go to stderr instead of dialogs
        self.active = False  # the run has not ended yet
        self.screenshot: str | None = None

    def run(self, solve: bool = False, screenshot: str | None = None) -> None:
        """Solve (``solve``), render the whole window to ``screenshot``, exit (code 0 or 2)."""
        self.enabled = self.active = True
        self.screenshot = screenshot
        if solve:
            self.results.schedule_changed.connect(self._after_solve)
            self.results.solving.solve()  # an invalid fabric ends the run through fail()
        else:
            QTimer.singleShot(SETTLE_MS, self._finish)

    def fail(self, message: str) -> None:
        """Print ``message`` as one error line; end the run with exit code 2."""
        print(f"error: {message}", file=sys.stderr)
        if self.active:
            self.active = False
            QTimer.singleShot(0, lambda: QApplication.exit(2))

    def _after_solve(self, schedule) -> None:
        if self.active:
            QTimer.singleShot(SETTLE_MS, self._finish)

    def _finish(self) -> None:
        if not self.active:
            return
        self.active = False
        code = 0
        if self.screenshot:
            try:
                save_window_png(self.results.window, self.screenshot)
            except (ForestCollError, OSError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                code = 2
        else:
            s = self.results.schedule
            if s is not None:
                print(f"optimal algbw {s.optimal_algbw:.6g} GB/s, k = {s.k}")
        QApplication.exit(code)
