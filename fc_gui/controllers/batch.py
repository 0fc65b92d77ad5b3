"""``forestcoll gui TOPO --solve --screenshot out.png``: solve, render the window, exit 0 or 2."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from fc_gui.controllers.export_files import save_window_png
from fc_gui.model.result_state import ResultState
from solver.model.errors import ForestCollError

#: Delay before the window is rendered (ms): docks and overlays settle first.
SETTLE_MS = 300


class BatchRun(QObject):
    """Runs ``window`` as a command: errors print one ``error:`` line and end it with exit 2.
    ``solve()`` starts a solve (False if the fabric is invalid: it has said why through
    :meth:`fail`); its result arrives as ``state.schedule_changed``."""

    def __init__(self, state: ResultState, window, solve, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.window = window
        self._solve = solve
        self.enabled = False  # errors go to stderr instead of dialogs
        self.active = False  # the run has not ended yet
        self.screenshot: str | None = None
        self.figure: str | None = None
        self.width: int | None = None

    def run(
        self,
        solve: bool = False,
        screenshot: str | None = None,
        figure: str | None = None,
        width: int | None = None,
    ) -> None:
        """Solve (``solve``), render the whole window to ``screenshot`` and/or the figure to
        ``figure`` (``width`` pixels), exit (code 0 or 2)."""
        self.enabled = self.active = True
        self.screenshot = screenshot
        self.figure = figure
        self.width = width
        if solve:
            self.state.schedule_changed.connect(self._after_solve)
            self._solve()  # an invalid fabric ends the run through fail()
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
        if self.figure:
            from fc_gui.controllers.figure import DEFAULT_WIDTH, save_figure

            try:
                save_figure(self.window, self.figure, self.width or DEFAULT_WIDTH)
            except ForestCollError as exc:
                print(f"error: {exc}", file=sys.stderr)
                QApplication.exit(2)
                return
        if self.screenshot:
            try:
                save_window_png(self.window, self.screenshot)
            except (ForestCollError, OSError) as exc:
                print(f"error: {exc}", file=sys.stderr)
                code = 2
        elif not self.figure:
            s = self.state.schedule
            if s is not None:
                print(f"optimal algbw {s.optimal_algbw:.6g} GB/s, k = {s.k}")
        QApplication.exit(code)
