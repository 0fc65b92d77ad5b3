"""Messages of the solve/results side: one-line errors (a dialog, a status line, or the
``error:`` line of a batch run) and status-bar notes (:class:`ResultMessages`)."""

from __future__ import annotations


class ResultMessages:
    """Says things to the user of ``window``: errors as dialogs or, when ``quiet``, in the solve
    panel's status and the status bar; in a batch run (``batch.enabled``) every error ends the
    run through ``batch.fail``."""

    def __init__(self, window, panel, batch) -> None:
        self.window = window
        self.panel = panel
        self.batch = batch

    def report_error(self, message: str, quiet: bool = False, title: str = "Error") -> None:
        """A one-line error: a dialog, a status message (``quiet``), or exit 2 in a batch run."""
        if self.batch.enabled:
            self.batch.fail(message)
        elif quiet:
            self.panel.set_status(message)
            self.status(message, 8000)
        else:
            self.window.show_error(message, title)

    def status(self, text: str, msecs: int = 0) -> None:
        """A note in the window's status bar (``msecs``: how long; 0 until replaced)."""
        self.window.statusBar().showMessage(text, msecs)
