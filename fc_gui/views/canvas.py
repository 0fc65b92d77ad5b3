"""The fabric canvas: the pyqtgraph view of a :class:`TopologyDocument`; it owns the scene and
composes the drawing layers and the input handlers.

Drawing (:mod:`~fc_gui.views.canvas_layers`) is batched so a 1000+ node fabric pans smoothly:
nodes, links, box frames and texts each in a layer of their own (``canvas_nodes``,
``canvas_links``, ``canvas_frames``, ``canvas_labels``), fed from one Qt-free
:class:`~fc_gui.model.document_index.DocumentIndex`. Input goes to ``canvas_tools`` (clicks and
drags), ``canvas_keyboard``, ``canvas_menu`` and ``canvas_hover``, which see the canvas through
:class:`~fc_gui.views.canvas_host.CanvasHost`; ``canvas_fit`` keeps the fabric in view.

It is the host of the result overlays: the overlay API (``node_positions``, ``add_overlay_item``,
``set_link_colors``, ``highlight_nodes``, ``context_menu_hooks``, ``tooltip_providers``, the
signals) is described at :class:`fc_gui.views.overlays.OverlayHost`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPoint, QRectF, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMenu

from fc_gui.model.document import TopologyDocument
from fc_gui.model.summary import (
    SUMMARY_NODES,
    ShownFabric,
    SummaryState,
    kept_expansions,
    reopen_expansions,
    shown_fabric,
)
from fc_gui.views import style
from fc_gui.views.canvas_fit import ViewFitter
from fc_gui.views.canvas_hover import HoverTips
from fc_gui.views.canvas_keyboard import KeyboardCursor
from fc_gui.views.canvas_layers import CanvasLayers
from fc_gui.views.canvas_menu import ContextMenus
from fc_gui.views.canvas_summary import SummaryLayer
from fc_gui.views.canvas_tools import FabricViewBox, Tool, ToolBox, delete_selection

__all__ = ["FabricCanvas", "Tool"]


class FabricCanvas(pg.GraphicsView):
    """Draws the document and turns gestures into commands (see module docstring)."""

    node_clicked = Signal(str)
    link_clicked = Signal(int)
    hovered = Signal(object, object)  # node id or None, link uid or None
    tool_changed = Signal(object)
    item_activated = Signal(str, object)  # Enter on the keyboard's item: ("node", id) / ...
    summary_changed = Signal()  # the summary view was engaged, left, expanded or collapsed

    def __init__(
        self, document: TopologyDocument, undo_stack: QUndoStack | None = None, parent=None
    ) -> None:
        super().__init__(parent, background=pg.mkColor(*style.BACKGROUND))
        self.doc = document
        self.undo_stack = undo_stack if undo_stack is not None else QUndoStack(self)
        self.view_box = FabricViewBox()
        self.setCentralItem(self.view_box)
        self.snap_to_grid = False
        self.grid_size = 25.0
        self.default_bandwidth = "100"
        self.context_menu_hooks: list[Callable] = []
        self.tooltip_providers: list[Callable] = []
        self._overlays: list = []
        self.layers = CanvasLayers(self.view_box, self)
        layers = self.layers  # the layers by name (overlays and tests read them)
        self.index, self.nodes, self.links = layers.index, layers.nodes, layers.links
        self.frames, self.labels, self.legend = layers.frames, layers.labels, layers.legend
        # the summary view of a big fabric (fc_gui.views.canvas_summary)
        self.summary = SummaryLayer(self.view_box)
        self.summary_enabled = True  # View > Summary view
        self.summary_threshold = SUMMARY_NODES  # shown above this many nodes
        #: ``f(doc)`` that finds the summary's grouping off the GUI thread and hands it to
        #: :meth:`set_summary_state`; None: found here, on the GUI thread
        self.summary_provider: Callable[[TopologyDocument], None] | None = None
        # the aggregates expanded before an edit regrouped the fabric (kept_expansions)
        self._reopen: tuple[tuple[str, str, str], ...] = ()
        self.focused_aggregate: str | None = None  # the aggregate last clicked
        self.menus = ContextMenus(self)
        self.tools = self.view_box.tools = ToolBox(self, self.menus.open_at)
        self.hover = HoverTips(self, self.tools)
        self.keyboard = KeyboardCursor(self, self.menus.open_for)
        self.fitter = ViewFitter(self)
        self._connect()
        self.rebuild()
        self.fit_view()

    def _connect(self) -> None:
        self.scene().sigMouseMoved.connect(self.hover.mouse_moved)
        self.doc.structure_changed.connect(self.rebuild)
        self.doc.positions_changed.connect(self._on_positions_changed)
        self.doc.disabled_changed.connect(self._on_disabled_changed)
        self.doc.selection_changed.connect(self._update_selection)

    # ================================================================== overlay API
    def node_positions(self) -> dict[str, tuple[float, float]]:
        """{node id: (x, y)} in data coordinates."""
        return self.index.positions()

    def directed_links(self) -> list[tuple[str, str]]:
        """(source, target) of every drawn direction, in the order ``set_link_colors`` arrays use:
        for each link in document order, (s, t) and then (t, s) unless the link is directed."""
        return self.links.directed_links()

    def overlay_parent(self) -> FabricCanvas:
        """The widget floating captions (cut badge, colour bar) are placed on: this canvas."""
        return self

    def add_overlay_item(self, item, z: float | None = None) -> None:
        """Add a pyqtgraph item drawn in data coordinates (default z: above links, below nodes)."""
        if z is not None:
            item.setZValue(z)
        elif item.zValue() == 0:
            item.setZValue(5)
        self.view_box.addItem(item, ignoreBounds=True)
        self._overlays.append(item)

    def remove_overlay_item(self, item) -> None:
        if item in self._overlays:
            self._overlays.remove(item)
            self.view_box.removeItem(item)

    def set_link_colors(self, colors) -> None:
        """Colour links per direction (dict or array, see module docstring); None = normal."""
        self.links.set_colors(colors)
        self.layers.update_geometry()

    def set_links_opacity(self, opacity: float) -> None:
        """Fade the links (1.0: normal); overlays dim them while a tree is animated."""
        self.links.set_opacity(opacity)

    def highlight_nodes(
        self, ids: Iterable[str], brush=None, key: str = "default", size: float = 34
    ) -> None:
        """Draw a halo (``brush``: anything pg.mkBrush takes) behind nodes; empty ids clear it."""
        self.nodes.highlight(ids, brush, key, size)

    # ================================================================== view options
    def set_labels_visible(self, visible: bool) -> None:
        """Show or hide the node names (View > Node labels)."""
        self.labels.names.setVisible(bool(visible))

    def set_link_labels_visible(self, visible: bool) -> None:
        """Show or hide the bandwidth written on each link (View > Link bandwidths)."""
        self.labels.links.setVisible(bool(visible))
        self.layers.update_link_labels()

    def set_frames_visible(self, visible: bool) -> None:
        """Show or hide the group (box) frames and their names (View > Box frames)."""
        self.frames.item.setVisible(bool(visible))
        self.labels.group_names.setVisible(bool(visible))

    def set_label_scale(self, scale: float) -> None:
        """Presenter scale: node and group names and the legend ``scale`` times their size."""
        self.labels.set_scale(scale)
        self.layers.settle()
        self.legend.set_scale(scale)
        self.legend.show_looks(self.doc.nodes.values())

    @property
    def text_scale(self) -> float:
        """The presenter text scale last set by :meth:`set_label_scale` (1.0 = normal)."""
        return self.legend.scale

    def set_label_formatter(self, formatter: Callable[[str], str] | None) -> None:
        """How node ids are written on the canvas (None: the ids themselves)."""
        self.labels.formatter = formatter
        self.layers.settle()

    def set_grid(self, on: bool, size: float | None = None) -> None:
        self.snap_to_grid = on
        if size:
            self.grid_size = size
        self.layers.grid.setVisible(on)

    # ================================================================== tools
    @property
    def tool(self) -> Tool:
        return self.tools.tool

    def set_tool(self, tool: Tool) -> None:
        self.tools.set_tool(tool)
        self.tool_changed.emit(tool)

    def build_context_menu(self, x: float, y: float, item=None) -> QMenu:
        """The context menu for the item under (x, y), or for ``item`` ("node", id) /
        ("link", uid): :mod:`fc_gui.views.canvas_menu`."""
        return self.menus.build(x, y, item)

    def delete_selection(self) -> None:
        delete_selection(self)

    # ================================================================== view
    def fit_view(self) -> None:
        """Zoom so the whole fabric is in view, clear of the floating captions (cut caption,
        colour bar, legend, warning banner): :mod:`fc_gui.views.canvas_fit`."""
        self.fitter.fit()

    def floating_captions(self) -> list[tuple[str, float, float]]:
        """``(corner, width, height)`` in pixels of each caption floating over the canvas."""
        return self.fitter.captions()

    def refit_if_covered(self) -> None:
        """Fit again if a caption now covers a node and the user has not moved the view."""
        self.fitter.refit_if_covered()

    def zoom(self, factor: float) -> None:
        self.view_box.scaleBy((1 / factor, 1 / factor))
        self.fitter.moved_by_user = True

    # ================================================================== geometry (CanvasHost)
    def node_at(self, x: float, y: float, tolerance_px: float = 4.0) -> str | None:
        """The node under data point (x, y), or None."""
        return self.index.node_at(
            x, y, self.layers.pixel_size(), self.nodes.radii_px(), tolerance_px
        )

    def link_at(self, x: float, y: float, tolerance_px: float = 5.0) -> int | None:
        """The link uid under data point (x, y), or None."""
        return self.index.link_at(x, y, self.layers.pixel_size(), tolerance_px)

    def snap(self, x: float, y: float) -> tuple[float, float]:
        """(x, y) on the grid when snapping is on."""
        if not self.snap_to_grid or self.grid_size <= 0:
            return x, y
        g = self.grid_size
        return round(x / g) * g, round(y / g) * g

    def view_point(self, scene_pos) -> tuple[float, float]:
        """Data coordinates of a scene position."""
        p = self.view_box.mapSceneToView(scene_pos)
        return p.x(), p.y()

    def global_point(self, scene_pos) -> QPoint:
        """Screen position of a scene position."""
        return self.mapToGlobal(self.mapFromScene(scene_pos))

    def leave_focus(self, forward: bool) -> None:
        """Give the keys to the next (or previous) widget: Ctrl+Tab leaves the canvas."""
        super().focusNextPrevChild(forward)

    # ================================================================== drawing
    def rebuild(self) -> None:
        """Rebuild every layer from the document (after structural changes)."""
        if self.summary_wanted():
            state = self.summary.state
            doc = self.doc
            if state is None or not state.matches(doc.nodes, doc.links.values()):
                if state is not None and state.expanded:  # an edit: keep what was open
                    self._reopen = kept_expansions(state)
                self.summary.state = None
                if self.summary_provider is not None:
                    self._summary_pending()
                    self.summary_provider(doc)
                    return
                state = SummaryState.of(list(doc.nodes.values()), list(doc.links.values()))
                self._reopen = reopen_expansions(state, self._reopen)
                self.summary.state = state
            self.summary.pending = False
            self._draw_summary()
        else:
            was = self.summary.active
            self.summary.state = None
            self.summary.pending = False
            self.summary.clear()
            self.layers.rebuild(self.doc)
            if was:
                self.summary_changed.emit()
        self._update_selection()

    def _on_disabled_changed(self) -> None:
        """What-if switches: new looks. In the summary view only the nodes shown as themselves
        have looks to change (the aggregates stay), so only the usual layers are rebuilt."""
        state, scene = self.summary.state, self.summary.scene
        if self.summary.pending and self.summary_wanted():
            return  # nothing drawn yet: the grouping under way draws with the new looks
        if state is None or scene is None or not self.summary_wanted():
            self.rebuild()
            return
        self.layers.rebuild(shown_fabric(self.doc, state, scene))  # type: ignore[arg-type]
        self._update_selection()

    # ------------------------------------------------------------------ summary view
    def summary_wanted(self) -> bool:
        """The fabric is shown as its summary: View > Summary view is on and the fabric has
        more than :attr:`summary_threshold` nodes."""
        return self.summary_enabled and len(self.doc.nodes) > self.summary_threshold

    def summary_active(self) -> bool:
        """The canvas shows the summary (or waits for its grouping)."""
        return self.summary.active

    def offer_summary(self, state: SummaryState | None) -> None:
        """A summary state found off the GUI thread for the fabric about to be loaded: used by
        the next :meth:`rebuild` if it matches the document then."""
        self.summary.state = state

    def set_summary_state(self, state: SummaryState) -> None:
        """The grouping :attr:`summary_provider` found: draw it if it is of the current
        fabric (else a newer request is under way)."""
        if not self.summary_wanted() or not state.matches(self.doc.nodes, self.doc.links.values()):
            return
        self._reopen = reopen_expansions(state, self._reopen)
        self.summary.state = state
        self.summary.pending = False
        self._draw_summary()
        self._update_selection()
        self.fit_view()

    def _summary_pending(self) -> None:
        self.summary.pending = True
        self.summary.clear()
        self.layers.rebuild(ShownFabric(self.doc, {}, {}))  # type: ignore[arg-type]
        self._update_selection()
        self.summary_changed.emit()

    def _draw_summary(self) -> None:
        state = self.summary.state
        assert state is not None
        scene = state.scene()
        shown = shown_fabric(self.doc, state, scene)
        self.layers.rebuild(shown)  # type: ignore[arg-type]  # reads like a document
        self.summary.draw(scene, self.index.positions())
        self.summary_changed.emit()

    def set_summary_enabled(self, on: bool) -> None:
        """View > Summary view: show big fabrics as their summary (True) or in full."""
        if bool(on) == self.summary_enabled:
            return
        self.summary_enabled = bool(on)
        self.rebuild()
        self.fit_view()

    def expand_aggregate(self, agg_id: str) -> bool:
        """Show the parts of aggregate ``agg_id``; False if it was already expanded."""
        state = self.summary.state
        if state is None or agg_id not in state.grouping.aggregates or not state.expand(agg_id):
            return False
        self.focused_aggregate = None
        overview = len(state.expanded) == len(state.grouping.ancestors(agg_id))
        self._draw_summary()
        self._update_selection()
        if overview:  # from the overview to the fabric's own geometry: show what opened
            self.fit_to_aggregate(agg_id)
        return True

    def fit_to_aggregate(self, agg_id: str) -> None:
        """Zoom to the frame of the (expanded) aggregate ``agg_id``."""
        state = self.summary.state
        if state is None:
            return
        lo, hi, pad = state.frame(agg_id)
        span = np.maximum(hi - lo, pad) + 4 * pad
        self.view_box.setRange(
            QRectF(lo[0] - 2 * pad, lo[1] - 2 * pad, float(span[0]), float(span[1])), padding=0.02
        )
        self.fitter.moved_by_user = True

    def collapse_aggregate(self, agg_id: str) -> bool:
        """Show aggregate ``agg_id`` as one again; False if it was not expanded."""
        state = self.summary.state
        if state is None or not state.collapse(agg_id):
            return False
        self.focused_aggregate = agg_id
        self._draw_summary()
        self._update_selection()
        if not state.expanded:
            self.fit_view()  # back to the overview
        return True

    def collapse_all(self) -> bool:
        """Every aggregate collapsed; False if none was expanded."""
        state = self.summary.state
        if state is None or not state.collapse_all():
            return False
        self._draw_summary()
        self._update_selection()
        self.fit_view()  # back to the overview
        return True

    def aggregate_at(self, x: float, y: float) -> str | None:
        """The aggregate drawn at data point (x, y) in the summary view, or None."""
        return self.summary.aggregate_at(x, y, self.layers.pixel_size())

    def expanded_aggregate_of(self, node_id: str | None = None) -> str | None:
        """The innermost expanded aggregate holding ``node_id`` (default: the first selected
        node), or None."""
        state = self.summary.state
        if state is None:
            return None
        if node_id is None:
            node_id = next(iter(self.doc.selected_nodes), None)
        if node_id is None or node_id not in state.grouping.row:
            return None
        agg = state.grouping.aggregate_of(node_id)
        return agg if agg is not None and agg in state.expanded else None

    def all_node_ids(self) -> list[str]:
        """Every node of the fabric (the summary view shows fewer)."""
        return list(self.doc.nodes)

    def set_cut_nodes(self, nodes: Iterable[str] | None, links: Iterable[tuple] = ()) -> None:
        """The bottleneck cut S* to shade on the aggregates (None: none), and the links
        leaving it, dashed between aggregates."""
        self.summary.set_cut(nodes, links)

    def _on_positions_changed(self, ids: list[str]) -> None:
        state = self.summary.state
        if state is not None:
            nodes, row = self.doc.nodes, state.grouping.row
            rows = np.array([row[i] for i in ids if i in row], dtype=np.int64)
            xy = np.array([[nodes[i].x or 0.0, nodes[i].y or 0.0] for i in ids if i in row])
            state.move(rows, xy.reshape(-1, 2))
            shown = [i for i in ids if i in self.index.row]
            if len(shown) < len(ids):
                self._draw_summary()
            else:
                self.layers.move(self.doc, shown)
                self.summary.draw(self.summary.scene or state.scene(), self.index.positions())
            self._update_selection()
            return
        self.layers.move(self.doc, ids)
        self._update_selection()

    def _update_selection(self) -> None:
        self.layers.show_selection(self.doc)
        self.keyboard.update()

    def close(self) -> bool:
        """pyqtgraph clears the scene on close: stop the label timer first."""
        self.layers.close()
        return super().close()

    # ================================================================== Qt events
    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: A002 (Qt's name)
        """Tab / Shift+Tab step through the items while the canvas has the keys (Ctrl+Tab
        leaves it): :mod:`fc_gui.views.canvas_keyboard`."""
        if self.hasFocus():
            self.keyboard.step(next)
            return True
        return super().focusNextPrevChild(next)

    def keyPressEvent(self, ev) -> None:
        if self.keyboard.key_press(ev):
            ev.accept()
        else:
            super().keyPressEvent(ev)

    def mousePressEvent(self, ev) -> None:
        self.keyboard.set_active(False)  # working with the mouse: no focus frame
        if self.summary.scene is not None:
            self.focused_aggregate = self.aggregate_at(
                *self.view_point(self.mapToScene(ev.position().toPoint()))
            )
        super().mousePressEvent(ev)

    def mouseDoubleClickEvent(self, ev) -> None:
        """In the summary view: double-click an aggregate to expand it, the frame of an
        expanded one (off its nodes) to collapse it."""
        if self.summary.scene is not None:
            x, y = self.view_point(self.mapToScene(ev.position().toPoint()))
            agg = self.aggregate_at(x, y)
            if agg is not None:
                self.expand_aggregate(agg)
                ev.accept()
                return
            if self.node_at(x, y) is None:
                inside = self.summary.expanded_at(x, y)
                if inside is not None:
                    self.collapse_aggregate(inside)
                    ev.accept()
                    return
        super().mouseDoubleClickEvent(ev)

    def viewportEvent(self, ev) -> bool:
        if ev.type() == QEvent.Type.ToolTip and self.hover.tooltip_event(
            ev, self.mapToScene(ev.pos())
        ):
            return True
        return super().viewportEvent(ev)

    def paintEvent(self, ev) -> None:
        super().paintEvent(ev)
        if not self.layers.closed:
            self.keyboard.paint_frame()

    def focusInEvent(self, ev) -> None:
        super().focusInEvent(ev)
        if (
            not self.layers.closed
        ):  # pyqtgraph's close drops the viewport: focus moves, items are gone
            self.keyboard.focus_in(ev.reason())

    def focusOutEvent(self, ev) -> None:
        super().focusOutEvent(ev)
        if not self.layers.closed:
            self.keyboard.focus_out()
