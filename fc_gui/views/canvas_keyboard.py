"""Selecting on the canvas with the keyboard: Tab reaches the canvas (a blue frame inside its edge says it
has the keys), Tab / Shift+Tab step through the nodes (top row first, left to right) and then the
links, Ctrl+arrow jumps to the nearest node in that direction, Enter opens the item in the
Inspector, the Menu key or Shift+F10 opens its what-if menu, Ctrl+Tab leaves the canvas; arrow
keys nudge the selected nodes. The item under the keyboard is the selection (so the Inspector
shows it) and is ringed in blue while the canvas has the focus."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from fc_gui.model.commands import MoveNodesCommand
from fc_gui.views.canvas_host import CanvasHost
from fc_gui.views.canvas_items import PassiveScatter

FOCUS_RGB = (25, 118, 210)
FOCUS_FRAME_PX = 3  # the frame drawn inside the canvas's edge while it has the keys
#: Ctrl+arrow: (dx, dy) on screen (y down).
JUMP_KEYS = {
    Qt.Key.Key_Left: (-1.0, 0.0),
    Qt.Key.Key_Right: (1.0, 0.0),
    Qt.Key.Key_Up: (0.0, -1.0),
    Qt.Key.Key_Down: (0.0, 1.0),
}
#: Arrow keys: nudge the selection by (dx, dy) steps (data y down, like the screen).
NUDGE_KEYS = {
    Qt.Key.Key_Left: (-1, 0),
    Qt.Key.Key_Right: (1, 0),
    Qt.Key.Key_Up: (0, -1),
    Qt.Key.Key_Down: (0, 1),
}


def tab_order(
    node_xy: dict[str, tuple[float, float]],
    link_ends: dict[int, tuple[str, str]],
    row_height: float,
) -> list[tuple[str, object]]:
    """``("node", id)`` for every node in reading order (rows ``row_height`` apart, y down,
    then x), then ``("link", uid)`` by their middles in the same order."""

    def key(p: tuple[float, float]) -> tuple[float, float]:
        return (round(p[1] / row_height) if row_height > 0 else p[1], p[0])

    nodes = sorted(node_xy, key=lambda n: key(node_xy[n]))
    mids = {
        u: ((node_xy[a][0] + node_xy[b][0]) / 2, (node_xy[a][1] + node_xy[b][1]) / 2)
        for u, (a, b) in link_ends.items()
        if a in node_xy and b in node_xy
    }
    links = sorted(mids, key=lambda u: key(mids[u]))
    return [("node", n) for n in nodes] + [("link", u) for u in links]


def nearest_in_direction(
    origin: tuple[float, float],
    points: dict[str, tuple[float, float]],
    direction: tuple[float, float],
    exclude: str | None = None,
) -> str | None:
    """The point nearest to ``origin`` within 60 degrees of ``direction`` (distance along it
    plus twice the distance across); None when there is none that way."""
    ox, oy = origin
    dx, dy = direction
    best, best_score = None, math.inf
    for name, (x, y) in points.items():
        if name == exclude:
            continue
        vx, vy = x - ox, y - oy
        along = vx * dx + vy * dy
        across = abs(vx * dy - vy * dx)
        if along <= 1e-9 or across > along * math.tan(math.radians(60)):
            continue
        score = along + 2 * across
        if score < best_score:
            best, best_score = name, score
    return best


class KeyboardCursor:
    """The canvas's keyboard selection (see module docstring)."""

    def __init__(self, canvas: CanvasHost, open_menu: Callable) -> None:
        self.canvas = canvas
        self.open_menu = open_menu  # f(("node", id) | ("link", uid)): its what-if menu
        self.current: tuple[str, object] | None = None
        #: the keys came by keyboard (Tab, a navigation key, back from the Inspector): only
        #: then the frame and ring are drawn (a click on the canvas needs no focus frame)
        self.active = False
        vb = canvas.view_box
        self.ring = PassiveScatter(
            pxMode=True, brush=None, symbol="o", size=38, pen=pg.mkPen(*FOCUS_RGB, width=3)
        )
        self.ring.setZValue(30)
        vb.addItem(self.ring, ignoreBounds=True)
        # under the selection's orange (7 px): a blue edge on each side of it
        self.bar = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(*FOCUS_RGB, width=15))
        self.bar.setZValue(-1.5)
        vb.addItem(self.bar, ignoreBounds=True)
        self.update()

    def paint_frame(self) -> None:
        """The blue frame inside the viewport's edge while the canvas has the keys (called
        after the view has painted)."""
        if not self.shown():
            return
        viewport = self.canvas.viewport()
        painter = QPainter(viewport)
        pen = QPen(QColor(*FOCUS_RGB))
        pen.setWidth(FOCUS_FRAME_PX)
        painter.setPen(pen)
        half = FOCUS_FRAME_PX // 2
        painter.drawRect(viewport.rect().adjusted(half, half, -half - 1, -half - 1))
        painter.end()

    # ------------------------------------------------------------------ keys
    def key_press(self, ev) -> bool:
        """Ctrl+Tab / Ctrl+Shift+Tab leave the canvas, Ctrl+arrow jumps to the nearest node
        that way, Enter opens the keyboard's item in the Inspector, the Menu key or Shift+F10
        its what-if menu, arrow keys nudge the selected nodes (:meth:`nudge_keys`). False: the
        key is not the canvas's."""
        key, mods = ev.key(), ev.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab) and ctrl:
            self.canvas.leave_focus(not (key == Qt.Key.Key_Backtab or shift))
            return True
        if key in JUMP_KEYS and ctrl:
            self.jump(JUMP_KEYS[key])
            return True
        here = self._current_from_selection()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and here is not None:
            self.canvas.item_activated.emit(here[0], here[1])
            return True
        if here is not None and (key == Qt.Key.Key_Menu or (key == Qt.Key.Key_F10 and shift)):
            self.open_menu(here)
            return True
        return self.nudge_keys(key, shift)

    def nudge_keys(self, key, shift: bool) -> bool:
        """Arrow keys nudge the selected nodes (grid step, or 5 units; Shift: 5x); a run of
        nudges is one undo step. False: not an arrow key, or nothing selected."""
        step = NUDGE_KEYS.get(key)
        canvas = self.canvas
        if step is None or not canvas.doc.selected_nodes:
            return False
        unit = canvas.grid_size if canvas.snap_to_grid else 5.0
        if shift:
            unit *= 5
        self.nudge(step[0] * unit, step[1] * unit)
        return True

    def nudge(self, dx: float, dy: float) -> None:
        """Move the selected nodes by (dx, dy); consecutive nudges merge into one command."""
        canvas, doc = self.canvas, self.canvas.doc
        old = {i: doc.position(i) for i in doc.selected_nodes}
        new = {i: canvas.snap(x + dx, y + dy) for i, (x, y) in old.items()}
        canvas.undo_stack.push(MoveNodesCommand(doc, old, new, drag_id=-1))

    # ------------------------------------------------------------------ moving
    def order(self) -> list[tuple[str, object]]:
        doc = self.canvas.doc
        xy = {n: doc.position(n) for n in doc.nodes}
        # the screen's y grows downwards: with y inverted, reading order is data y ascending
        return tab_order(
            xy,
            {u: (ln.source, ln.target) for u, ln in doc.links.items()},
            self.canvas.index.spacing * 0.5,
        )

    def step(self, forward: bool) -> None:
        """The next (or previous) item in reading order, wrapping around."""
        order = self.order()
        if not order:
            return
        self.set_active(True)
        here = self._current_from_selection()
        if here in order:
            i = (order.index(here) + (1 if forward else -1)) % len(order)
        else:
            i = 0 if forward else len(order) - 1
        self.go(order[i])

    def jump(self, direction: tuple[float, float]) -> None:
        """To the nearest node on screen in ``direction`` (from the current node or the middle
        of the current link; from the view's centre when nothing is current)."""
        canvas = self.canvas
        self.set_active(True)
        here = self._current_from_selection()
        doc = canvas.doc
        if here is not None and here[0] == "node":
            origin = doc.position(here[1])
        elif here is not None:
            ln = doc.links[here[1]]
            (ax, ay), (bx, by) = doc.position(ln.source), doc.position(ln.target)
            origin = ((ax + bx) / 2, (ay + by) / 2)
        else:
            c = canvas.view_box.viewRect().center()
            origin = (c.x(), c.y())
        sign = 1.0 if canvas.view_box.yInverted() else -1.0  # screen down = data y up or down
        found = nearest_in_direction(
            origin,
            {n: doc.position(n) for n in doc.nodes},
            (direction[0], sign * direction[1]),
            exclude=here[1] if here is not None and here[0] == "node" else None,
        )
        if found is not None:
            self.go(("node", found))

    def go(self, item: tuple[str, object]) -> None:
        """Make ``item`` the selection and keep it in view."""
        doc = self.canvas.doc
        kind, key = item
        if kind == "node":
            doc.set_selection([key])
            x, y = doc.position(key)
        else:
            doc.set_selection((), [key])
            ln = doc.links[key]
            (ax, ay), (bx, by) = doc.position(ln.source), doc.position(ln.target)
            x, y = (ax + bx) / 2, (ay + by) / 2
        self.current = item
        rect = self.canvas.view_box.viewRect()
        if not rect.contains(QPointF(x, y)):
            self.canvas.view_box.translateBy(x=x - rect.center().x(), y=y - rect.center().y())
        self.update()

    def _current_from_selection(self) -> tuple[str, object] | None:
        """The keyboard's item: the last one gone to while it is still the selection, else a
        sole selected node or link."""
        doc = self.canvas.doc
        nodes, links = doc.selected_nodes, doc.selected_links
        if self.current is not None:
            kind, key = self.current
            if (kind == "node" and nodes == {key} and not links) or (
                kind == "link" and links == {key} and not nodes
            ):
                return self.current
        if len(nodes) == 1 and not links:
            return ("node", next(iter(nodes)))
        if len(links) == 1 and not nodes:
            return ("link", next(iter(links)))
        return None

    # ------------------------------------------------------------------ drawing
    def shown(self) -> bool:
        """The focus frame and ring are drawn: the canvas has the keys, from the keyboard."""
        return self.active and self.canvas.hasFocus()

    def focus_in(self, reason: Qt.FocusReason) -> None:
        """Keyboard focus arrived for ``reason``: Tab or Backtab show the frame, a click hides
        it, anything else (a window coming back, a closed dialog or popup) keeps what was; the
        Inspector giving the keys back after Return sets it with :meth:`set_active`."""
        if reason in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
            self.active = True
        elif reason == Qt.FocusReason.MouseFocusReason:
            self.active = False
        self.update()
        self.canvas.viewport().update()  # the focus frame

    def focus_out(self) -> None:
        """The canvas lost the keys: no ring, no frame."""
        self.update()
        self.canvas.viewport().update()

    def set_active(self, active: bool) -> None:
        if active != self.active:
            self.active = active
            self.update()
            self.canvas.viewport().update()

    def update(self) -> None:
        """Ring the keyboard's item while the canvas has the focus."""
        canvas = self.canvas
        here = self._current_from_selection() if self.shown() else None
        doc = canvas.doc
        if here is not None and here[0] == "node" and here[1] in doc.nodes:
            self.ring.setData(pos=np.array([doc.position(here[1])], dtype=float))
        else:
            self.ring.setData([])
        if here is not None and here[0] == "link" and here[1] in doc.links:
            ln = doc.links[here[1]]
            (ax, ay), (bx, by) = doc.position(ln.source), doc.position(ln.target)
            self.bar.setData([ax, bx], [ay, by])
        else:
            self.bar.setData([], [])

    def drawn(self) -> tuple[str, object] | None:
        """What the focus ring marks now (for tests): ("node", id), ("link", uid) or None."""
        if len(self.ring.data):
            return ("node", self._current_from_selection()[1])
        x, _ = self.bar.getData()
        if x is not None and len(x):
            return ("link", self._current_from_selection()[1])
        return None
