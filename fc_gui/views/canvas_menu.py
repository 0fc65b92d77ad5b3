"""The canvas's context (what-if) menu: disable or enable the node or link under the mouse (or
the keyboard's item), delete it, enable everything disabled, fit the view, and the entries the
controllers add through ``context_menu_hooks``."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMenu

from fc_gui.model.commands import SetDisabledCommand
from fc_gui.views.canvas_host import CanvasHost
from fc_gui.views.canvas_tools import delete_selection


class ContextMenus:
    """Builds and opens the canvas's context menus; :attr:`last` keeps the open one alive."""

    def __init__(self, canvas: CanvasHost) -> None:
        self.canvas = canvas
        self.last: QMenu | None = None

    def open_at(self, screen_pos, x: float, y: float) -> None:
        """The menu of what is under data point (x, y), at ``screen_pos`` (a right click)."""
        menu = self.build(x, y)
        menu.popup(screen_pos.toPoint() if hasattr(screen_pos, "toPoint") else screen_pos)
        self.last = menu

    def open_for(self, item: tuple[str, object]) -> QMenu:
        """The menu of a node or link, at it on screen (keyboard users)."""
        doc = self.canvas.doc
        if item[0] == "node":
            x, y = doc.position(item[1])  # type: ignore[arg-type]
        else:
            ln = doc.links[item[1]]  # type: ignore[index]
            (ax, ay), (bx, by) = doc.position(ln.source), doc.position(ln.target)
            x, y = (ax + bx) / 2, (ay + by) / 2
        menu = self.build(x, y, item)
        menu.popup(self.canvas.global_point(self.canvas.view_box.mapViewToScene(QPointF(x, y))))
        self.last = menu
        return menu

    def build(self, x: float, y: float, item: tuple[str, object] | None = None) -> QMenu:
        """The menu for the item under (x, y), or for ``item`` ("node", id) / ("link", uid)."""
        canvas = self.canvas
        if item is not None:
            node = item[1] if item[0] == "node" else None
            link = item[1] if item[0] == "link" else None
        else:
            node = canvas.node_at(x, y)
            link = None if node else canvas.link_at(x, y)
        menu = QMenu(canvas.overlay_parent())
        self._add_summary_entries(menu, x, y, node, item)  # type: ignore[arg-type]
        if node is not None:
            self._add_node_entries(menu, node)  # type: ignore[arg-type]
        elif link is not None:
            self._add_link_entries(menu, link)  # type: ignore[arg-type]
        if node is not None or link is not None:
            menu.addAction("Delete").triggered.connect(lambda: delete_selection(canvas))
            menu.addSeparator()
        doc, stack = canvas.doc, canvas.undo_stack
        if doc.disabled_nodes or doc.disabled_links:
            menu.addAction("Enable all disabled items").triggered.connect(
                lambda: stack.push(
                    SetDisabledCommand(doc, doc.disabled_nodes, doc.disabled_links, False)
                )
            )
        menu.addAction("Fit to view").triggered.connect(canvas.fit_view)
        for hook in canvas.context_menu_hooks:
            hook(menu, node, link)
        return menu

    def _add_summary_entries(
        self, menu: QMenu, x: float, y: float, node: str | None, item: object
    ) -> None:
        """The summary view's entries: expand the aggregate under the mouse, collapse the
        expanded one holding the node (or the frame) under it, collapse all."""
        canvas = self.canvas
        summary = getattr(canvas, "summary", None)
        if summary is None or summary.state is None:
            return
        aggregates = summary.state.grouping.aggregates
        agg = canvas.aggregate_at(x, y) if item is None else None  # type: ignore[attr-defined]
        if agg is not None:
            text = f"Expand {aggregates[agg].details()}"
            menu.addAction(text).triggered.connect(lambda: canvas.expand_aggregate(agg))  # type: ignore[attr-defined]
        inside = canvas.expanded_aggregate_of(node) if node is not None else None  # type: ignore[attr-defined]
        if inside is None and agg is None and node is None:
            inside = summary.expanded_at(x, y)
        if inside is not None:
            menu.addAction(f"Collapse {aggregates[inside].label}").triggered.connect(
                lambda: canvas.collapse_aggregate(inside)  # type: ignore[attr-defined]
            )
        if summary.state.expanded:
            menu.addAction("Collapse all").triggered.connect(canvas.collapse_all)  # type: ignore[attr-defined]
        if not menu.isEmpty():
            menu.addSeparator()

    def _add_node_entries(self, menu: QMenu, node: str) -> None:
        doc, stack = self.canvas.doc, self.canvas.undo_stack
        if node not in doc.selected_nodes:
            doc.set_selection([node])
        off = node in doc.disabled_nodes
        act = menu.addAction(
            f"Enable node {node}" if off else f"Disable node {node} (what if it fails)"
        )
        act.triggered.connect(lambda: stack.push(SetDisabledCommand(doc, [node], (), not off)))

    def _add_link_entries(self, menu: QMenu, link: int) -> None:
        doc, stack = self.canvas.doc, self.canvas.undo_stack
        if link not in doc.selected_links:
            doc.set_selection((), [link])
        off = link in doc.disabled_links
        label = doc.links[link].label
        act = menu.addAction(
            f"Enable link {label}" if off else f"Disable link {label} (what if it fails)"
        )
        act.triggered.connect(lambda: stack.push(SetDisabledCommand(doc, (), [link], not off)))
