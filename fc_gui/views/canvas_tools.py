"""The canvas's mouse tools: one small handler per tool turns left clicks and drags into commands.

The canvas's :class:`FabricViewBox` hands every left click and left drag to the
:class:`ToolBox`, which gives it to the handler of the current :class:`Tool`; a right click
opens the context menu (:mod:`fc_gui.views.canvas_menu`); middle-drag (and any left drag with
the Pan tool) pans and the wheel zooms (pyqtgraph's ViewBox). A drag is delivered as
pyqtgraph's ``MouseDragEvent`` with its start, moves and finish; ``dragging`` is True while a
handler is in a gesture (the canvas shows no hover tips then). The handlers see the canvas
through :class:`~fc_gui.views.canvas_host.CanvasHost`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QGraphicsRectItem

from fc_gui.model.commands import AddLinkCommand, AddNodeCommand, DeleteCommand, MoveNodesCommand
from fc_gui.model.document import make_link, make_node
from fc_gui.views.canvas_host import CanvasHost
from solver.model.topology import COMPUTE, SWITCH

#: Look of the rubber band and of the link being drawn.
GESTURE_COLOR = (30, 120, 220)


class Tool(enum.Enum):
    SELECT = "select"
    PAN = "pan"
    ADD_COMPUTE = "add compute node"
    ADD_SWITCH = "add switch"
    ADD_LINK = "add link"


class ToolHandler:
    """Base: a click selects what is under the mouse (Shift toggles it); drags do nothing."""

    #: A left drag pans the view (the canvas leaves it to pyqtgraph's ViewBox).
    pans = False

    def __init__(self, canvas: CanvasHost) -> None:
        self.canvas = canvas
        self.dragging = False

    def click(self, x: float, y: float, shift: bool) -> None:
        canvas = self.canvas
        node = canvas.node_at(x, y)
        link = None if node else canvas.link_at(x, y)
        self.select(node, link, shift)

    def select(self, node: str | None, link: int | None, shift: bool) -> None:
        """Selection logic of a click (shift toggles the item in the selection)."""
        canvas, doc = self.canvas, self.canvas.doc
        nodes, links = set(doc.selected_nodes), set(doc.selected_links)
        if node is not None:
            canvas.node_clicked.emit(node)
            if shift:
                nodes ^= {node}
            else:
                nodes, links = {node}, set()
        elif link is not None:
            canvas.link_clicked.emit(link)
            if shift:
                links ^= {link}
            else:
                nodes, links = set(), {link}
        elif not shift:
            nodes, links = set(), set()
        doc.set_selection(nodes, links)

    def drag(self, ev, x: float, y: float) -> None:
        """One step of a left drag at data point (x, y)."""

    def deactivate(self) -> None:
        """The canvas switches to another tool."""


class SelectTool(ToolHandler):
    """Click to select; drag a node to move the selection (one undo step); drag on empty space
    for a rubber band (Shift adds to the selection)."""

    def __init__(self, canvas: CanvasHost) -> None:
        super().__init__(canvas)
        self._serial = 0  # drag id: the moves of one drag merge into one command
        self._move: dict | None = None  # {"id", "anchor", "old"} while moving nodes
        self._band: dict | None = None  # {"anchor", "shift"} while drawing a rubber band
        self.rubber = QGraphicsRectItem()
        self.rubber.setPen(pg.mkPen(*GESTURE_COLOR, width=1, style=Qt.PenStyle.DashLine))
        self.rubber.setBrush(pg.mkBrush(*GESTURE_COLOR, 30))
        self.rubber.setZValue(100)
        self.rubber.setVisible(False)
        canvas.view_box.addItem(self.rubber, ignoreBounds=True)

    def drag(self, ev, x: float, y: float) -> None:
        if ev.isStart():
            self._start(ev)
        if self._move is not None:
            self._drag_nodes(x, y)
        elif self._band is not None:
            self._drag_band(x, y, ev.isFinish())
        if ev.isFinish():
            self._move = self._band = None
        self.dragging = self._move is not None or self._band is not None

    def _start(self, ev) -> None:
        canvas, doc = self.canvas, self.canvas.doc
        x0, y0 = canvas.view_point(ev.buttonDownScenePos())
        node = canvas.node_at(x0, y0)
        shift = bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if node is None:
            self._band = {"anchor": (x0, y0), "shift": shift}
            return
        if node not in doc.selected_nodes:
            if shift:
                doc.set_selection(doc.selected_nodes | {node}, doc.selected_links)
            else:
                doc.set_selection([node])
        self._serial += 1
        self._move = {
            "id": self._serial,
            "anchor": (x0, y0),
            "old": {i: doc.position(i) for i in doc.selected_nodes},
        }

    def _drag_nodes(self, x: float, y: float) -> None:
        canvas, doc, d = self.canvas, self.canvas.doc, self._move
        dx, dy = x - d["anchor"][0], y - d["anchor"][1]
        new = {i: canvas.snap(px + dx, py + dy) for i, (px, py) in d["old"].items()}
        cur = {i: doc.position(i) for i in new}
        if new != cur:
            canvas.undo_stack.push(MoveNodesCommand(doc, cur, new, drag_id=d["id"]))

    def _drag_band(self, x: float, y: float, finish: bool) -> None:
        canvas, doc, d = self.canvas, self.canvas.doc, self._band
        rect = QRectF(QPointF(*d["anchor"]), QPointF(x, y)).normalized()
        self.rubber.setRect(rect)
        self.rubber.setVisible(not finish)
        if finish:
            ids = set(
                canvas.index.nodes_in_rect(rect.left(), rect.top(), rect.right(), rect.bottom())
            )
            links = set(canvas.index.links_among(ids))
            if d["shift"]:
                ids |= doc.selected_nodes
                links = set(doc.selected_links)
            doc.set_selection(ids, links)


class PanTool(ToolHandler):
    """Drag to pan (clicks still select)."""

    pans = True


class AddNodeTool(ToolHandler):
    """Click to add a compute node or a switch (snapped to the grid when it is on)."""

    def __init__(self, canvas: CanvasHost, kind: str) -> None:
        super().__init__(canvas)
        self.kind = kind

    def click(self, x: float, y: float, shift: bool) -> None:
        self.add_node_at(x, y)

    def add_node_at(self, x: float, y: float) -> str:
        """Push an AddNodeCommand for a new node at (x, y); returns its id."""
        canvas, doc = self.canvas, self.canvas.doc
        x, y = canvas.snap(x, y)
        role = "gpu" if self.kind == COMPUTE else "switch"
        node_id = doc.unique_id("gpu" if self.kind == COMPUTE else "sw")
        canvas.undo_stack.push(AddNodeCommand(doc, make_node(node_id, self.kind, role, x, y)))
        return node_id


class AddLinkTool(ToolHandler):
    """Drag from one node to another to add a link of the canvas's default bandwidth."""

    def __init__(self, canvas: CanvasHost) -> None:
        super().__init__(canvas)
        self._source: str | None = None
        self.line = pg.PlotCurveItem(
            pen=pg.mkPen(*GESTURE_COLOR, width=2, style=Qt.PenStyle.DashLine)
        )
        self.line.setZValue(100)
        self.line.setVisible(False)
        canvas.view_box.addItem(self.line, ignoreBounds=True)

    def click(self, x: float, y: float, shift: bool) -> None:
        node = self.canvas.node_at(x, y)
        if node is not None:
            self.canvas.node_clicked.emit(node)

    def drag(self, ev, x: float, y: float) -> None:
        canvas = self.canvas
        if ev.isStart():
            self._source = canvas.node_at(*canvas.view_point(ev.buttonDownScenePos()))
        if self._source is None:
            return
        sx, sy = canvas.doc.position(self._source)
        self.line.setData([sx, x], [sy, y])
        self.line.setVisible(not ev.isFinish())
        self.dragging = not ev.isFinish()
        if ev.isFinish():
            target = canvas.node_at(x, y)
            if target is not None and target != self._source:
                self.add_link(self._source, target)
            self._source = None

    def add_link(self, source: str, target: str, bandwidth=None, directed: bool = False) -> int:
        """Push an AddLinkCommand; returns the new link's uid."""
        canvas = self.canvas
        cmd = AddLinkCommand(
            canvas.doc,
            make_link(source, target, bandwidth or canvas.default_bandwidth, directed=directed),
        )
        canvas.undo_stack.push(cmd)
        return cmd.uid

    def deactivate(self) -> None:
        self.line.setVisible(False)


def make_tools(canvas: CanvasHost) -> dict[Tool, ToolHandler]:
    """One handler per :class:`Tool` for ``canvas``."""
    return {
        Tool.SELECT: SelectTool(canvas),
        Tool.PAN: PanTool(canvas),
        Tool.ADD_COMPUTE: AddNodeTool(canvas, COMPUTE),
        Tool.ADD_SWITCH: AddNodeTool(canvas, SWITCH),
        Tool.ADD_LINK: AddLinkTool(canvas),
    }


def delete_selection(canvas: CanvasHost) -> None:
    """Push a DeleteCommand for the selected nodes and links (nothing when none is)."""
    nodes, links = canvas.doc.selected_nodes, canvas.doc.selected_links
    if nodes or links:
        canvas.undo_stack.push(DeleteCommand(canvas.doc, nodes, links))


class ToolBox:
    """The tools of one canvas and the current one; turns the ViewBox's clicks and drags into
    calls of its handler (a right click into ``context_menu(screen_pos, x, y)``)."""

    def __init__(self, canvas: CanvasHost, context_menu: Callable) -> None:
        self.canvas = canvas
        self.context_menu = context_menu
        self.tool = Tool.SELECT
        self.tools = make_tools(canvas)

    @property
    def handler(self) -> ToolHandler:
        """The handler of the current tool (left clicks and drags go to it)."""
        return self.tools[self.tool]

    def set_tool(self, tool: Tool) -> None:
        self.handler.deactivate()
        self.tool = tool

    def click(self, ev) -> bool:
        """A click in the view (pyqtgraph's ``MouseClickEvent``); False: not handled here."""
        x, y = self.canvas.view_point(ev.scenePos())
        if ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self.context_menu(ev.screenPos(), x, y)
            return True
        if ev.button() != Qt.MouseButton.LeftButton:
            return False
        ev.accept()
        self.handler.click(x, y, bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        return True

    def drag(self, ev) -> None:
        """One step of a left drag (pyqtgraph's ``MouseDragEvent``)."""
        ev.accept()
        self.handler.drag(ev, *self.canvas.view_point(ev.scenePos()))


class FabricViewBox(pg.ViewBox):
    """A ViewBox that hands mouse gestures to the canvas's tools instead of always panning."""

    tools: ToolBox  # set by the canvas once its tools exist (they draw in this ViewBox)

    def __init__(self) -> None:
        super().__init__(lockAspect=True, enableMenu=False, invertY=True)

    def mouseClickEvent(self, ev) -> None:
        if not self.tools.click(ev):
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev, axis=None) -> None:
        if ev.button() == Qt.MouseButton.MiddleButton or (
            self.tools.handler.pans and ev.button() == Qt.MouseButton.LeftButton
        ):
            super().mouseDragEvent(ev, axis)
            return
        if ev.button() == Qt.MouseButton.LeftButton:
            self.tools.drag(ev)
            return
        ev.ignore()
