"""The scale-up warning banner: a fabric whose GPUs of a box meet only through PCIe/CPU
(:func:`solver.model.scale_up.scale_up_warnings`, "no NVLink/xGMI links found in box b0 -- is
this dump complete?") says so on the canvas after every open/import and edit, and under the
numbers of the results summary."""

from __future__ import annotations

import operator

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QLabel

from fc_gui.controllers.background import BackgroundTask
from fc_gui.model.summary import SUMMARY_NODES
from solver.model.scale_up import scale_up_warnings

BANNER_STYLE = (
    "QLabel { background: rgb(255,243,205); color: rgb(102,77,3);"
    " border: 1px solid rgb(230,180,60); border-radius: 4px; padding: 4px 8px; }"
)
MAX_LINES = 4


class FabricWarnings(QObject):
    """Keeps :attr:`banner` (bottom right of the canvas) showing the fabric's warnings."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.warnings: list[str] = []
        self.summary = None  # the results summary, once the results side is installed
        host = window.canvas
        self.banner = QLabel("", host)
        self.banner.setStyleSheet(BANNER_STYLE)
        self.banner.setWordWrap(True)
        self.banner.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.banner.hide()
        host.installEventFilter(self)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(300)
        self.timer.timeout.connect(self.update)
        doc = window.document
        doc.replaced.connect(self.update)
        doc.structure_changed.connect(self.timer.start)
        doc.disabled_changed.connect(self.timer.start)
        #: a big fabric's warnings are found in a worker (a 4096-GPU fabric takes ~0.4 s)
        self.task = BackgroundTask(self)
        self.task.done.connect(self._found)
        self._offered: tuple[object, list[str]] | None = None  # (links, warnings) of a file read
        self.update()

    def offer(self, links: object, warnings: list[str]) -> None:
        """The warnings of the fabric about to be loaded, found off the GUI thread (``links``:
        its tuple of links, to tell it is that fabric)."""
        self._offered = (links, list(warnings))

    def connect_results(self, results) -> None:
        """Say the warnings in the results summary too, beside the solved number."""
        self.summary = results.summary
        self.summary.set_fabric_warnings(self.warnings)

    def update(self) -> None:
        doc = self.window.document
        offered = self._offered
        if offered is not None and len(offered[0]) == len(doc.links):  # type: ignore[arg-type]
            if all(map(operator.is_, offered[0], doc.links.values())):  # type: ignore[call-overload]
                if not doc.disabled_nodes and not doc.disabled_links:  # as read: the same
                    self._show(offered[1])
                    return
        self._offered = None
        topo = doc.to_topology()
        if len(topo.nodes) > SUMMARY_NODES:
            self.task.start(lambda progress, cancel: scale_up_warnings(topo))
            return
        self._show(scale_up_warnings(topo))

    def _found(self, warnings: list[str]) -> None:
        self._show(warnings)

    def _show(self, warnings: list[str]) -> None:
        self.warnings = warnings
        if self.summary is not None:
            self.summary.set_fabric_warnings(self.warnings)
        if not self.warnings:
            self.banner.hide()
            return
        lines = self.warnings[:MAX_LINES]
        if len(self.warnings) > MAX_LINES:
            lines.append(f"… and {len(self.warnings) - MAX_LINES} more boxes")
        self.banner.setText("⚠ " + "\n⚠ ".join(lines))
        self._place()
        self.banner.show()
        self.banner.raise_()
        self.window.statusBar().showMessage(f"warning: {self.warnings[0]}", 10000)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        host = self.banner.parentWidget()
        self.banner.setMaximumWidth(max(200, int(host.width() * 0.6)))
        self.banner.adjustSize()
        self.banner.move(
            host.width() - self.banner.width() - 12, host.height() - self.banner.height() - 12
        )
