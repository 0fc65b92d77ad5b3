"""Cut, copy and paste of the selected nodes and the links among them."""

from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from fc_gui.model.commands import PasteCommand, renamed_copies
from solver.io import v1
from solver.model.errors import ForestCollError
from solver.model.topology import Topology


class ClipboardActions:
    """Cut/copy/paste of the selected nodes and the links among them (the system clipboard
    gets the v1 JSON text too, so a selection can be pasted into another window)."""

    MIME = "application/x-forestcoll-topology"

    def __init__(self, window) -> None:
        self.window = window
        self.copy_action = QAction("&Copy", window)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.triggered.connect(self.copy)
        self.cut_action = QAction("Cu&t", window)
        self.cut_action.setShortcut(QKeySequence.StandardKey.Cut)
        self.cut_action.triggered.connect(self.cut)
        self.paste_action = QAction("&Paste", window)
        self.paste_action.setShortcut(QKeySequence.StandardKey.Paste)
        self.paste_action.triggered.connect(self.paste)
        self._pastes = 0

    def copy(self) -> int:
        """Copy the selected nodes (and the links among them); returns the node count."""
        doc = self.window.document
        ids = [i for i in doc.nodes if i in doc.selected_nodes]
        if not ids:
            return 0
        idset = set(ids)
        links = [ln for ln in doc.links.values() if ln.source in idset and ln.target in idset]
        topo = Topology(
            name="clipboard", nodes=tuple(doc.nodes[i] for i in ids), links=tuple(links)
        )
        text = v1.dumps(topo)
        mime = QMimeData()
        mime.setData(self.MIME, text.encode("utf-8"))
        mime.setText(text)
        QApplication.clipboard().setMimeData(mime)
        self._pastes = 0
        return len(ids)

    def cut(self) -> None:
        if self.copy():
            self.window.canvas.delete_selection()

    def paste(self) -> int:
        """Paste clipboard nodes with fresh ids, offset; one undoable command. Returns count."""
        mime = QApplication.clipboard().mimeData()
        if mime is None:
            return 0
        if mime.hasFormat(self.MIME):
            text = bytes(mime.data(self.MIME)).decode("utf-8")
        elif mime.hasText() and "forestcoll-topology" in mime.text():
            text = mime.text()
        else:
            return 0
        try:
            topo = v1.loads(text, "clipboard", check=False)
        except ForestCollError as exc:
            self.window.show_error(str(exc))
            return 0
        self._pastes += 1
        step = 40.0 * self._pastes
        nodes, links = renamed_copies(self.window.document, topo.nodes, topo.links, (step, step))
        self.window.undo_stack.push(PasteCommand(self.window.document, nodes, links))
        return len(nodes)
