"""The canvas's hover tips: the node or link under the mouse is announced (``hovered``) and
described in a tool tip, by the controllers' ``tooltip_providers`` first (load, trees, what-if
drop), else by :func:`describe`."""

from __future__ import annotations

from PySide6.QtWidgets import QToolTip

from fc_gui.model.document import TopologyDocument
from fc_gui.views.canvas_host import CanvasHost
from fc_gui.views.canvas_tools import ToolBox


def describe(doc: TopologyDocument, node: str | None, link: int | None) -> str | None:
    """Default hover text for a node or link (None for neither)."""
    if node is not None:
        n = doc.nodes[node]
        off = " (disabled)" if node in doc.disabled_nodes else ""
        grp = f", group {n.group}" if n.group else ""
        return f"{n.id}: {n.kind} {n.role}{grp}{off}"
    if link is not None:
        ln = doc.links[link]
        lat = f", {float(ln.latency):g} µs" if ln.latency is not None else ""
        way = "one-way" if ln.directed else "full duplex"
        off = " (disabled)" if doc.is_link_disabled(link) else ""
        return f"{ln.label}: {float(ln.bandwidth):g} GB/s {way}{lat}{off}"
    return None


class HoverTips:
    """Hover announcements and tool tips of one canvas (none while a tool is in a gesture)."""

    def __init__(self, canvas: CanvasHost, tools: ToolBox) -> None:
        self.canvas = canvas
        self.tools = tools

    def mouse_moved(self, scene_pos) -> None:
        """The mouse is at ``scene_pos``: announce what is under it and show its tip."""
        canvas = self.canvas
        if self.tools.handler.dragging or not canvas.view_box.sceneBoundingRect().contains(
            scene_pos
        ):
            return
        node, link, text = self.tip_at(scene_pos)
        canvas.hovered.emit(node, link)
        if text:
            QToolTip.showText(canvas.global_point(scene_pos), text, canvas.overlay_parent())
        else:
            QToolTip.hideText()

    def tip_at(self, scene_pos) -> tuple[str | None, int | None, str | None]:
        """The node or link under ``scene_pos`` and its hover text (providers first)."""
        canvas = self.canvas
        x, y = canvas.view_point(scene_pos)
        node = canvas.node_at(x, y)
        link = None if node else canvas.link_at(x, y)
        text = None
        if node is None and link is None:
            agg = getattr(canvas, "aggregate_at", lambda x, y: None)(x, y)
            if agg is not None:
                state = canvas.summary.state  # type: ignore[attr-defined]
                a = state.grouping.aggregates[agg]
                return None, None, f"{a.details()}\n(double-click or + to expand)"
        for provider in canvas.tooltip_providers:
            text = provider(node, link)
            if text:
                break
        if text is None:
            text = describe(canvas.doc, node, link)
        return node, link, text

    def tooltip_event(self, ev, scene_pos) -> bool:
        """Qt's tool-tip event (sent ~0.7 s after the mouse stops) would reach the scene, which
        finds no item tool tip and *hides* the tip shown on mouse move: answer it with the same
        text so the tip stays while the mouse is still (``ev``: a tool-tip event at
        ``scene_pos``). False: left to Qt (a tool is in a gesture)."""
        if self.tools.handler.dragging:
            return False
        _, _, text = self.tip_at(scene_pos)
        if text:
            QToolTip.showText(ev.globalPos(), text, self.canvas.overlay_parent())
        else:
            QToolTip.hideText()
        ev.accept()
        return True
