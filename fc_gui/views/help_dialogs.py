"""The Help menu's windows: a quick start (a what-if session, drawing by hand, studies and
lecture mode, in ten steps) and the keyboard
shortcuts, read from the window's actions so the list is never out of date."""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QMenu, QTextBrowser, QVBoxLayout, QWidget

#: (title, what to do) of the quick start; keys in the text are real shortcuts of the window.
QUICK_START = (
    (
        "Open a fabric",
        (
            "File ▸ New from template… (Ctrl+N) builds a DGX, MI250, rail, torus or fat-tree fabric; "
            "File ▸ Open… (Ctrl+O) reads ForestColl JSON, node-link JSON, GraphML or an NCCL topology "
            "XML. The files in <code>sample_topologies/</code> are a good start."
        ),
    ),
    (
        "Or draw one by hand",
        (
            "Add compute nodes (C) and switches (W) with a click, links (L) by dragging from node to "
            "node at the bandwidth in the toolbar's New link GB/s field; Esc goes back to Select. "
            "Select a node or link and edit it in the Inspector (Return gives the keys back to the "
            'canvas). View ▸ Layers ▸ Link bandwidths (Ctrl+Shift+B) writes "25 GB/s" on the links.'
        ),
    ),
    (
        "Solve",
        (
            "Press Solve in the Solve panel (Ctrl+R or F5). The optimum is exact: the Results panel "
            "gives the optimal algbw as a fraction, the number of trees, and the bottleneck cut S* "
            "with the formula algbw* = N·B⁺(S*)/|S*∩Vc|."
        ),
    ),
    (
        "Read the canvas",
        (
            "S* is shaded and the links leaving it are dashed red; the caption (top left) names S* "
            'or its complement ("all but box b0"). Links are coloured by load ÷ bandwidth (colour '
            "bar, top right). Hover a link for its bandwidth, load and the trees that cross it."
        ),
    ),
    (
        "Follow the trees",
        (
            "In the Trees tab select trees to draw them along their paths; Play animates a broadcast "
            "depth by depth."
        ),
    ),
    (
        "Ask what if",
        (
            'Right-click a link or node: "What if … fails?" disables it and solves again, and the '
            "Results say how much algbw changed. Select a link and edit its bandwidth in the "
            "Inspector: the shown result turns grey (stale) until you solve again; Re-solve on edit "
            "does that for you on small fabrics. Undo (Ctrl+Z) takes any edit back."
        ),
    ),
    (
        "Compare",
        (
            "In the Plots panel, Simulate runs ForestColl, the library (pick it under Library) and "
            "the ring, tree, direct and Blink baselines over message sizes; Import measurements… "
            "adds a raw nccl-tests/rccl-tests log and lists, per measured size, the error of the "
            "prediction beside the plot."
        ),
    ),
    (
        "Study the design",
        (
            "The Studies tab runs many solves at once in the background: every single link or switch "
            "failing (the table sorts them by how much algbw each costs, and the links are coloured "
            "by it), every upgrade, or a sweep of a template's parameter."
        ),
    ),
    (
        "Teach with it",
        (
            "View ▸ Lecture mode (Ctrl+Shift+L) walks a class through a fabric step by step — the "
            "fabric, the bottleneck cut with its formula, one spanning tree level by level, the ring "
            "beside ForestColl — with →/← or a presenter clicker, a text size for the room, and "
            "Export figure… for a 1920 px slide. Esc leaves it."
        ),
    ),
    (
        "Keep it",
        (
            "File ▸ Save (Ctrl+S) writes the fabric; Export ▸ Results (HDF5) stores the schedule, "
            "the simulated tables and the measurements shown; Export ▸ MSCCL XML gives a runnable algorithm. Unsaved "
            "edits are autosaved and offered back after a crash."
        ),
    ),
)

#: Mouse gestures of the canvas (no action carries them).
MOUSE_GESTURES = (
    ("Click / Shift+click", "select a node or link / add it to the selection"),
    ("Drag a node", "move it (and the other selected nodes)"),
    ("Drag on empty space", "rubber-band selection"),
    ("Middle-drag, wheel", "pan, zoom (in every tool)"),
    ("Right-click", "what-if menu of the node or link under the mouse"),
)


def quick_start_html() -> str:
    steps = "".join(f"<li><b>{html.escape(title)}.</b> {text}</li>" for title, text in QUICK_START)
    return f"<h3>Quick start</h3><ol>{steps}</ol><p>Help ▸ Keyboard shortcuts lists every key.</p>"


def _menu_actions(menu: QMenu, where: str) -> Iterable[tuple[str, QAction]]:
    for action in menu.actions():
        sub = action.menu()
        if sub is not None:
            yield from _menu_actions(sub, f"{where} ▸ {_plain(action.text())}")
        elif not action.isSeparator():
            yield where, action


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").replace("…", "").strip()


def shortcut_rows(
    menus: dict[str, QMenu], others: dict[str, Iterable[QAction]]
) -> list[tuple[str, str, str]]:
    """(where, what, keys) of every action with a shortcut: the menus' (by title), then
    ``others`` (e.g. the tool bar, keys that only the window holds); each action once."""
    seen: set[int] = set()
    rows = []
    found = [pair for title, menu in menus.items() for pair in _menu_actions(menu, title)]
    found += [(where, a) for where, actions in others.items() for a in actions]
    for where, action in found:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = list(dict.fromkeys(k for k in keys if k))
        if not keys or id(action) in seen:
            continue
        seen.add(id(action))
        text = ", ".join(keys)
        rows.append((where, _plain(action.text()), text))
    return rows


def shortcuts_html(rows: list[tuple[str, str, str]]) -> str:
    def table(items) -> str:
        body = "".join(
            "<tr>"
            + "".join(f"<td style='padding:1px 10px 1px 0'>{html.escape(c)}</td>" for c in r)
            + "</tr>"
            for r in items
        )
        return f"<table>{body}</table>"

    keys = [(keys, what, where) for where, what, keys in rows]
    return "<h3>Keyboard shortcuts</h3>" + table(keys) + "<h3>Mouse</h3>" + table(MOUSE_GESTURES)


class HelpDialog(QDialog):
    """A non-modal window showing rich text (the quick start or the shortcuts)."""

    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(620, 520)

    def text(self) -> str:
        return self.browser.toPlainText()
