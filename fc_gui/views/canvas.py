"""The fabric canvas: draws a :class:`TopologyDocument` with batched pyqtgraph items; left clicks
and drags go to the current tool's handler (:mod:`fc_gui.views.canvas_tools`), which pushes undo
commands; the canvas itself handles the context menu, hover tips, arrow-key nudges and zoom.

Drawing is batched so a 1000+ node fabric pans smoothly: one ``ScatterPlotItem`` for all nodes,
one ``PlotCurveItem(connect='pairs')`` per link width class and state, one scatter for arrow
heads, one item for all group frames. Labels appear only when few nodes are in view.

Overlay API (:class:`fc_gui.views.overlays.OverlayHost`)
-------------------------------------------------------
- ``node_positions()`` -> ``{node_id: (x, y)}``; ``directed_links()``; ``overlay_parent()``
  (this widget: floating captions sit on it).
- ``add_overlay_item(item)`` / ``remove_overlay_item(item)``: any pyqtgraph item in data
  coordinates, drawn above links and below nodes unless it has its own z value. (A plain
  ScatterPlotItem takes clicks on its points away from the tools: use ``PassiveScatter``.)
- ``set_link_colors(colors)``: per directed link colours (heat map). ``colors`` is a dict
  ``{(source, target): (r, g, b, a)}`` (0-255; missing pairs keep the default look) or an
  ``(n, 4)`` array aligned with ``directed_links()``; ``None`` restores the normal drawing. A
  full-duplex link is drawn as two halves, each coloured by the direction leaving its end.
- ``highlight_nodes(ids, brush, key='default')``: a halo behind the given nodes (empty = clear).
- ``context_menu_hooks``: callables ``f(menu, node_id, link_uid)`` adding entries to the canvas
  context menu; ``tooltip_providers``: callables ``f(node_id, link_uid) -> str | None`` whose
  first non-None answer is the hover tip.
- signals ``node_clicked(str)``, ``link_clicked(int)``, ``hovered(object, object)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import ClassVar

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QMenu, QToolTip, QWidget

from fc_gui.model.commands import DeleteCommand, MoveNodesCommand, SetDisabledCommand
from fc_gui.model.document import TopologyDocument
from fc_gui.model.lanes import segment_distance_px
from fc_gui.model.link_labels import bandwidth_text, label_order
from fc_gui.model.view_fit import covered, fit_clear_of
from fc_gui.views import style
from fc_gui.views.canvas_items import GroupFramesItem, LabelsItem, LinkLabelsItem, PassiveScatter
from fc_gui.views.canvas_keyboard import JUMP_KEYS, KeyboardCursor
from fc_gui.views.canvas_links import LinkLayer
from fc_gui.views.canvas_tools import Tool, ToolHandler, make_tools

LABEL_LIMIT = 150  # draw node labels only when at most this many nodes are in view
LABEL_SPACING_PX = 42  # ... and when nodes are at least this far apart on screen
LOD_NODES = 700  # with more nodes in view, links are drawn thin (wide pens are slow to stroke)


class FabricViewBox(pg.ViewBox):
    """A ViewBox that hands mouse gestures to its canvas (tools) instead of always panning."""

    def __init__(self, canvas: FabricCanvas) -> None:
        super().__init__(lockAspect=True, enableMenu=False, invertY=True)
        self.canvas = canvas

    def mouseClickEvent(self, ev) -> None:
        if not self.canvas._on_click(ev):
            super().mouseClickEvent(ev)

    def mouseDragEvent(self, ev, axis=None) -> None:
        if ev.button() == Qt.MouseButton.MiddleButton or (
            self.canvas.handler.pans and ev.button() == Qt.MouseButton.LeftButton
        ):
            super().mouseDragEvent(ev, axis)
            return
        if ev.button() == Qt.MouseButton.LeftButton:
            self.canvas._on_drag(ev)
            return
        ev.ignore()


class FabricCanvas(pg.GraphicsView):
    """Draws the document and turns gestures into commands (see module docstring)."""

    node_clicked = Signal(str)
    link_clicked = Signal(int)
    hovered = Signal(object, object)  # node id or None, link uid or None
    tool_changed = Signal(object)
    item_activated = Signal(
        str, object
    )  # Enter on the keyboard's item: ("node", id) / ("link", uid)

    def __init__(
        self, document: TopologyDocument, undo_stack: QUndoStack | None = None, parent=None
    ) -> None:
        super().__init__(parent, background=pg.mkColor(*style.BACKGROUND))
        self.doc = document
        self.undo_stack = undo_stack if undo_stack is not None else QUndoStack(self)
        self.view_box = FabricViewBox(self)
        self.setCentralItem(self.view_box)
        self.tool = Tool.SELECT
        self.snap_to_grid = False
        self.grid_size = 25.0
        self.default_bandwidth = "100"
        self.context_menu_hooks: list[Callable] = []
        self.tooltip_providers: list[Callable] = []
        self.label_formatter: Callable[[str], str] | None = None
        self.label_px = 11  # node names' pixel size asked for (presenter scale)
        self._legend_scale = 1.0

        # model arrays (rebuilt on structure change)
        self._ids: list[str] = []
        self._index: dict[str, int] = {}
        self._pos = np.zeros((0, 2))
        self._link_uids: list[int] = []
        self._link_row: dict[int, int] = {}
        self._ends = np.zeros((0, 2), dtype=np.int64)
        self._highlights: dict[str, pg.ScatterPlotItem] = {}
        self._highlight_args: dict[str, tuple] = {}
        self._symbols: list = []
        self._brushes: list = []
        self._sizes = np.zeros(0)
        self._overlays: list = []
        self._groups: list[tuple[str, np.ndarray]] = []
        self._group_rects: list[QRectF] = []
        self._closed = False
        self._view_moved_by_user = False  # zoomed or panned since the last fit
        self._unit = 1.0
        self._nn = 1.0
        self._node_scale = 1.0

        vb = self.view_box
        self.grid_item = pg.GridItem()
        self.grid_item.setVisible(False)
        self.grid_item.setZValue(-20)
        vb.addItem(self.grid_item, ignoreBounds=True)
        self.groups_item = GroupFramesItem()
        self.groups_item.setZValue(-10)
        vb.addItem(self.groups_item)
        self.links = LinkLayer(vb)
        self.selected_links_item = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen(*style.SELECTION_COLOR, width=7)
        )
        self.selected_links_item.setZValue(-1)
        vb.addItem(self.selected_links_item)
        self.selected_nodes_item = PassiveScatter(
            pxMode=True, pen=None, brush=pg.mkBrush(*style.SELECTION_COLOR, 210), size=30
        )
        self.selected_nodes_item.setZValue(8)
        vb.addItem(self.selected_nodes_item)
        self.nodes_item = PassiveScatter(pxMode=True, hoverable=False)
        self.nodes_item.setZValue(10)
        vb.addItem(self.nodes_item)
        self.labels_item = LabelsItem(style.LABEL_COLOR)
        self.labels_item.setZValue(20)
        vb.addItem(self.labels_item, ignoreBounds=True)
        self.group_labels_item = LabelsItem((96, 110, 120), below=False)
        self.group_labels_item.setZValue(19)
        vb.addItem(self.group_labels_item, ignoreBounds=True)
        # painted after the node and box names, clear of them
        self.link_labels_item = LinkLabelsItem(avoid=(self.labels_item, self.group_labels_item))
        self.link_labels_item.setZValue(21)
        self.link_labels_item.setVisible(False)
        vb.addItem(self.link_labels_item, ignoreBounds=True)
        self._link_texts: list[str] = []
        self._link_order: list[int] = []
        self.legend = pg.LegendItem(
            offset=(8, -8),
            brush=pg.mkBrush(255, 255, 255, 215),
            pen=pg.mkPen(200, 200, 200),
            labelTextSize="8pt",
            labelTextColor=(50, 50, 50),
            verSpacing=-4,
        )
        self.legend.setParentItem(vb)
        self._legend_key: tuple = ()
        self._label_timer = QTimer(self)
        self._label_timer.setSingleShot(True)
        self._label_timer.setInterval(40)
        self._label_timer.timeout.connect(self._update_labels)
        vb.sigRangeChanged.connect(lambda *_: self._label_timer.start())
        vb.sigRangeChangedManually.connect(self._on_view_moved_by_user)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.tools = make_tools(self)

        document.structure_changed.connect(self.rebuild)
        document.positions_changed.connect(self._on_positions_changed)
        document.disabled_changed.connect(self.rebuild)
        document.selection_changed.connect(self._update_selection)
        self.keyboard = KeyboardCursor(self)
        self.rebuild()
        self.fit_view()

    # ================================================================== public API
    def node_positions(self) -> dict[str, tuple[float, float]]:
        """{node id: (x, y)} in data coordinates."""
        return {i: (float(p[0]), float(p[1])) for i, p in zip(self._ids, self._pos)}

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
        self._update_geometry()

    def set_links_opacity(self, opacity: float) -> None:
        """Fade the links (1.0: normal); overlays dim them while a tree is animated."""
        self.links.set_opacity(opacity)

    def set_labels_visible(self, visible: bool) -> None:
        """Show or hide the node names (View > Node labels)."""
        self.labels_item.setVisible(bool(visible))

    def set_link_labels_visible(self, visible: bool) -> None:
        """Show or hide the bandwidth written on each link (View > Link bandwidths)."""
        self.link_labels_item.setVisible(bool(visible))
        if visible:
            self._update_link_labels()

    def _update_link_labels(self) -> None:
        item = self.link_labels_item
        if not item.isVisible():
            return
        if len(self._ends):
            a, b = self.links.segment_ends(self._pos)
        else:
            a = b = np.zeros((0, 2))
        item.set_links(
            a, b, self._link_texts, self._link_order, self._pos, self._sizes * self._node_scale / 2
        )

    def set_frames_visible(self, visible: bool) -> None:
        """Show or hide the group (box) frames and their names (View > Box frames)."""
        self.groups_item.setVisible(bool(visible))
        self.group_labels_item.setVisible(bool(visible))

    def set_label_scale(self, scale: float) -> None:
        """Presenter scale: node and group names and the legend ``scale`` times their size
        (node names only as large as fits between neighbours: :meth:`_update_labels`)."""
        self.label_px = round(11 * scale)
        self.link_labels_item.set_font_px(round(13 * scale))
        self.labels_item.set_font_px(self.label_px)
        self.group_labels_item.set_font_px(self.label_px)
        self._update_labels()
        self.legend.setLabelTextSize(f"{8 * scale:.1f}pt")
        self._legend_scale = scale
        self._legend_key = ()  # rebuilt: pyqtgraph's legend does not shrink its rows again
        self._update_legend(list(self.doc.nodes.values()))

    @property
    def text_scale(self) -> float:
        """The presenter text scale last set by :meth:`set_label_scale` (1.0 = normal)."""
        return self._legend_scale

    def set_label_formatter(self, formatter: Callable[[str], str] | None) -> None:
        """How node ids are written on the canvas (None: the ids themselves)."""
        self.label_formatter = formatter
        self._update_labels()

    def highlight_nodes(
        self, ids: Iterable[str], brush=None, key: str = "default", size: float = 34
    ) -> None:
        """Draw a halo (``brush``: anything pg.mkBrush takes) behind nodes; empty ids clear it."""
        ids = [i for i in ids if i in self._index]
        self._highlight_args[key] = (ids, brush, size)
        item = self._highlights.get(key)
        if not ids:
            if item is not None:
                item.setData([])
            return
        if item is None:
            item = PassiveScatter(pxMode=True, pen=None)
            item.setZValue(7)
            self.view_box.addItem(item, ignoreBounds=True)
            self._highlights[key] = item
        rows = [self._index[i] for i in ids]
        item.setData(
            pos=self._pos[rows],
            size=size,
            brush=pg.mkBrush(brush or (255, 235, 59, 160)),
            data=ids,
        )

    @property
    def handler(self) -> ToolHandler:
        """The handler of the current tool (left clicks and drags go to it)."""
        return self.tools[self.tool]

    def set_tool(self, tool: Tool) -> None:
        self.handler.deactivate()
        self.tool = tool
        self.tool_changed.emit(tool)

    def fit_view(self) -> None:
        """Zoom so the whole fabric is in view, clear of the floating captions (cut caption,
        colour bar, legend, warning banner): see :mod:`fc_gui.model.view_fit`."""
        if len(self._pos) == 0:
            self.view_box.setRange(QRectF(-1, -1, 2, 2))
            return
        lo = self._pos.min(axis=0) - self._unit
        hi = self._pos.max(axis=0) + self._unit
        if self._groups and self.groups_item.isVisible():
            lo[1] -= 0.5 * self._unit  # the box names above the frames stay clear of a caption
        span = np.maximum(hi - lo, self._unit * 2)
        hi = lo + span
        view_px = (self.view_box.width(), self.view_box.height())
        if min(view_px) < 50:  # not laid out yet: the plain fit
            self.view_box.setRange(QRectF(lo[0], lo[1], span[0], span[1]), padding=0.05)
        else:
            fit = fit_clear_of(tuple(lo), tuple(hi), view_px, self.floating_captions())
            self.view_box.setRange(QRectF(fit.x0, fit.y0, fit.width, fit.height), padding=0)
        self._view_moved_by_user = False

    def floating_captions(self) -> list[tuple[str, float, float]]:
        """The captions floating over the canvas, as ``(corner, width, height)`` in pixels with
        their margin from the edges: visible child widgets and the legend."""
        width, height = self.width(), self.height()
        found = []
        for child in self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if child is self.viewport() or not child.isVisible():
                continue
            g = child.geometry()
            top = g.center().y() < height / 2
            left = g.center().x() < width / 2
            w = g.right() + 1 if left else width - g.left()
            h = g.bottom() + 1 if top else height - g.top()
            found.append((("t" if top else "b") + ("l" if left else "r"), w, h))
        if self.legend.isVisible() and self._legend_key:
            r = self.legend.sceneBoundingRect()  # scene units are the canvas's pixels
            found.append(("bl", r.right() + 1, height - r.top()))
        return found

    def refit_if_covered(self) -> None:
        """Fit again if the user has not zoomed or panned since the last fit and a node, or
        the top corners of a box frame (where its name is), now lies under a caption (one
        appeared with a result)."""
        if self._view_moved_by_user or len(self._pos) == 0:
            return
        vb = self.view_box
        xy = [(float(x), float(y)) for x, y in self._pos]
        if self.groups_item.isVisible():
            xy += [(r.left(), r.top()) for r in self._group_rects]
            xy += [(r.right(), r.top()) for r in self._group_rects]
        points = []
        for x, y in xy:
            p = self.mapFromScene(vb.mapViewToScene(QPointF(x, y)))
            points.append((p.x(), p.y()))
        if covered(points, (self.width(), self.height()), self.floating_captions()):
            self.fit_view()

    def _on_view_moved_by_user(self, *_) -> None:
        self._view_moved_by_user = True

    def zoom(self, factor: float) -> None:
        self.view_box.scaleBy((1 / factor, 1 / factor))
        self._view_moved_by_user = True

    def set_grid(self, on: bool, size: float | None = None) -> None:
        self.snap_to_grid = on
        if size:
            self.grid_size = size
        self.grid_item.setVisible(on)

    def node_at(self, x: float, y: float, tolerance_px: float = 4.0) -> str | None:
        """The node under data point (x, y), or None."""
        if len(self._pos) == 0:
            return None
        px, py = self._pixel_size()
        d = np.hypot((self._pos[:, 0] - x) / px, (self._pos[:, 1] - y) / py)
        i = int(np.argmin(d))
        radius = self._sizes[i] * self._node_scale / 2 + tolerance_px
        return self._ids[i] if d[i] <= radius else None

    def link_at(self, x: float, y: float, tolerance_px: float = 5.0) -> int | None:
        """The link uid under data point (x, y), or None."""
        if len(self._ends) == 0:
            return None
        seg = np.stack(self.links.segment_ends(self._pos), axis=1)
        d = segment_distance_px(seg, x, y, self._pixel_size())
        i = int(np.argmin(d))
        return self._link_uids[i] if d[i] <= tolerance_px else None

    def links_among(self, node_ids) -> list[int]:
        """Uids of links with both ends in ``node_ids``."""
        ids = set(node_ids)
        return [u for u, ln in self.doc.links.items() if ln.source in ids and ln.target in ids]

    def nodes_in_rect(self, rect: QRectF) -> list[str]:
        if len(self._pos) == 0:
            return []
        r = rect.normalized()
        m = (
            (self._pos[:, 0] >= r.left())
            & (self._pos[:, 0] <= r.right())
            & (self._pos[:, 1] >= r.top())
            & (self._pos[:, 1] <= r.bottom())
        )
        return [self._ids[i] for i in np.nonzero(m)[0]]

    # ================================================================== drawing
    def rebuild(self) -> None:
        """Rebuild every batch item from the document (after structural changes)."""
        doc = self.doc
        nodes = list(doc.nodes.values())
        self._ids = [n.id for n in nodes]
        self._index = {n: i for i, n in enumerate(self._ids)}
        # where labels collide, the more important node keeps its label (lower rank first)
        self._label_rank = np.array([style.label_rank(n.kind, n.role) for n in nodes], dtype=int)
        self._pos = np.array([[n.x or 0.0, n.y or 0.0] for n in nodes], dtype=float).reshape(-1, 2)
        self._link_uids = list(doc.links)
        self._link_row = {u: i for i, u in enumerate(self._link_uids)}
        links = [doc.links[u] for u in self._link_uids]
        self._ends = np.array(
            [[self._index[ln.source], self._index[ln.target]] for ln in links], dtype=np.int64
        ).reshape(-1, 2)
        if len(self._ends):
            lengths = np.hypot(*(self._pos[self._ends[:, 1]] - self._pos[self._ends[:, 0]]).T)
            lengths = lengths[lengths > 0]
            self._unit = float(np.median(lengths)) * 0.3 if len(lengths) else 1.0
        else:
            self._unit = 1.0

        self._nn = _typical_spacing(self._pos, self._unit)

        # ---- nodes: one scatter
        disabled = doc.disabled_nodes
        symbols, brushes, sizes = [], [], []
        brush_cache: dict = {}
        for n in nodes:
            st = style.role_style_cached(n.kind, n.role)
            color = style.DISABLED_NODE_COLOR if n.id in disabled else st.color
            if color not in brush_cache:
                brush_cache[color] = pg.mkBrush(*color)
            symbols.append(st.symbol)
            brushes.append(brush_cache[color])
            sizes.append(st.size)
        self._sizes = np.array(sizes, dtype=float)
        self._symbols, self._brushes = symbols, brushes
        self._update_legend(nodes)
        self._draw_nodes()

        self.links.rebuild(doc, self._link_uids, self._ends)
        bws = [links[i].bandwidth for i in range(len(links))]
        self._link_texts = [bandwidth_text(bw) for bw in bws]
        lengths = (
            np.hypot(*(self._pos[self._ends[:, 1]] - self._pos[self._ends[:, 0]]).T)
            if len(self._ends)
            else np.zeros(0)
        )
        self._link_order = label_order(bws, lengths)
        self._build_groups()
        self._update_geometry()
        self._update_selection()

    _NODE_PEN = None

    def _update_legend(self, nodes) -> None:
        """One legend row per node look present (role label, shape and colour)."""
        seen: dict[str, style.RoleStyle] = {}
        for n in nodes:
            st = style.role_style_cached(n.kind, n.role)
            seen.setdefault(st.label, st)
        key = tuple(sorted(seen))
        if key == self._legend_key:
            return
        self._legend_key = key
        self.legend.clear()
        for label, st in seen.items():
            sample = pg.ScatterPlotItem(
                symbol=st.symbol,
                brush=pg.mkBrush(*st.color),
                pen=pg.mkPen(255, 255, 255),
                size=min(min(st.size, 14) * self._legend_scale, 18),  # sample box: 20 px
            )
            self.legend.addItem(sample, label)
        self.legend.setVisible(bool(seen))  # an empty fabric: no empty legend frame

    def _set_detail(self, thin: bool, scale: float = 1.0) -> None:
        """Level of detail: thin link pens when zoomed far out (instead of widths by
        bandwidth), and smaller node symbols when nodes crowd on screen."""
        if scale != self._node_scale:
            self._node_scale = scale
            self.nodes_item.setSize(self._sizes * scale)
            self._update_link_labels()
        if self.links.set_thin(thin):
            self._update_geometry()

    def _draw_nodes(self) -> None:
        if FabricCanvas._NODE_PEN is None:
            FabricCanvas._NODE_PEN = pg.mkPen(255, 255, 255, width=1.2)
        self.nodes_item.setData(
            pos=self._pos,
            symbol=self._symbols,
            brush=self._brushes,
            size=self._sizes * self._node_scale,
            pen=FabricCanvas._NODE_PEN,
            data=self._ids,
        )

    def _build_groups(self) -> None:
        groups: dict[str, list[int]] = {}
        for i, n in enumerate(self.doc.nodes.values()):
            if n.group:
                groups.setdefault(n.group, []).append(i)
        self._groups = [(g, np.array(rows, dtype=np.int64)) for g, rows in groups.items()]

    def _update_geometry(self) -> None:
        """Recompute every batch item's coordinates from ``self._pos`` (cheap: numpy only)."""
        self.links.update_geometry(self._pos, self.view_box.yInverted())
        # group frames
        rects = []
        pad = self._unit * 0.8
        for _, rows in self._groups:
            p = self._pos[rows]
            lo, hi = p.min(axis=0), p.max(axis=0)
            rects.append(
                QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad, hi[1] - lo[1] + 2 * pad)
            )
        self.groups_item.set_rects(rects)
        self._group_rects = rects
        for key, (ids, brush, size) in list(self._highlight_args.items()):
            self.highlight_nodes(ids, brush, key, size)
        self._update_link_labels()
        self._label_timer.start()

    def _on_positions_changed(self, ids: list[str]) -> None:
        rows = []
        for node_id in ids:
            n = self.doc.nodes[node_id]
            i = self._index[node_id]
            self._pos[i] = (n.x or 0.0, n.y or 0.0)
            rows.append(i)
        item = self.nodes_item  # move the points in place: no per-spot rebuild
        item.data["x"][rows] = self._pos[rows, 0]
        item.data["y"][rows] = self._pos[rows, 1]
        item.prepareGeometryChange()
        item.informViewBoundsChanged()
        item.bounds = [None, None]
        item.invalidate()
        self._update_geometry()
        self._update_selection()

    def _update_selection(self) -> None:
        sel = [self._index[i] for i in self.doc.selected_nodes if i in self._index]
        self.selected_nodes_item.setData(pos=self._pos[sel] if sel else np.zeros((0, 2)))
        rows = np.array(
            [self._link_row[u] for u in self.doc.selected_links if u in self._link_row],
            dtype=np.int64,
        )
        if len(rows):
            self.selected_links_item.setData(*self.links.segments_xy(self._pos, rows))
        else:
            self.selected_links_item.setData([], [])
        self.keyboard.update()

    def _pixel_size(self) -> tuple[float, float]:
        px, py = self.view_box.viewPixelSize()
        return (px or 1.0, py or 1.0)

    def close(self) -> bool:
        """pyqtgraph clears the scene on close: stop the label timer first."""
        self._label_timer.stop()
        self._closed = True
        return super().close()

    def _update_labels(self) -> None:
        if self._closed:
            return
        rect = self.view_box.viewRect()
        inside = (
            (self._pos[:, 0] >= rect.left())
            & (self._pos[:, 0] <= rect.right())
            & (self._pos[:, 1] >= rect.top())
            & (self._pos[:, 1] <= rect.bottom())
        )
        visible = np.nonzero(inside)[0]
        px, _ = self._pixel_size()
        spacing_px = self._nn / abs(px) if px else 0.0  # typical node distance on screen
        self._set_detail(
            thin=len(visible) > LOD_NODES,
            scale=float(np.clip(round(spacing_px / 30 * 4) / 4, 0.5, 1.0)),
        )
        show = visible if len(visible) <= LABEL_LIMIT and spacing_px >= LABEL_SPACING_PX else []
        show = sorted(show, key=lambda i: self._label_rank[i])  # LabelsItem skips overlaps
        fmt = self.label_formatter
        names = [self._ids[i] for i in show]
        if fmt:
            names = [fmt(n) for n in names]
        if self.label_px > 11 and names:  # larger names, but never wider than their spacing
            longest = max(len(n) for n in names)
            fits = int(0.9 * spacing_px / (0.62 * longest))
            self.labels_item.set_font_px(max(11, min(self.label_px, fits)))
        self.labels_item.set_labels(self._pos[show], names)
        # group names: when few groups are in view
        groups = [
            (g, r) for (g, _), r in zip(self._groups, self._group_rects) if rect.intersects(r)
        ]
        groups = groups if len(groups) <= 40 else []
        self.group_labels_item.set_labels(
            [(r.left(), r.top()) for _, r in groups], [g for g, _ in groups]
        )

    # ================================================================== gestures
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

    def _on_click(self, ev) -> bool:
        x, y = self.view_point(ev.scenePos())
        if ev.button() == Qt.MouseButton.RightButton:
            ev.accept()
            self._context_menu(ev.screenPos(), x, y)
            return True
        if ev.button() != Qt.MouseButton.LeftButton:
            return False
        ev.accept()
        self.handler.click(x, y, bool(ev.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        return True

    def _on_drag(self, ev) -> None:
        ev.accept()
        self.handler.drag(ev, *self.view_point(ev.scenePos()))

    _NUDGE_KEYS: ClassVar[dict] = {
        Qt.Key.Key_Left: (-1, 0),
        Qt.Key.Key_Right: (1, 0),
        Qt.Key.Key_Up: (0, -1),
        Qt.Key.Key_Down: (0, 1),
    }

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: A002 (Qt's name)
        """Tab / Shift+Tab step through the items while the canvas has the keys (Ctrl+Tab and
        Ctrl+Shift+Tab leave it, :meth:`keyPressEvent`): :mod:`fc_gui.views.canvas_keyboard`."""
        if self.hasFocus():
            self.keyboard.step(next)
            return True
        return super().focusNextPrevChild(next)

    def mousePressEvent(self, ev) -> None:
        self.keyboard.set_active(False)  # working with the mouse: no focus frame
        super().mousePressEvent(ev)

    def paintEvent(self, ev) -> None:
        super().paintEvent(ev)
        if not self._closed:
            self.keyboard.paint_frame()

    def focusInEvent(self, ev) -> None:
        super().focusInEvent(ev)
        if not self._closed:  # pyqtgraph's close drops the viewport: focus moves, items are gone
            self.keyboard.focus_in(ev.reason())
            self.viewport().update()  # the focus frame

    def focusOutEvent(self, ev) -> None:
        super().focusOutEvent(ev)
        if not self._closed:
            self.keyboard.update()
            self.viewport().update()

    def keyPressEvent(self, ev) -> None:
        """Arrow keys nudge the selected nodes (grid step, or 5 units; Shift: 5x); a run of
        nudges is one undo step. Ctrl+arrow jumps to the nearest node that way, Enter opens the
        keyboard's item in the Inspector, the Menu key or Shift+F10 its what-if menu."""
        key, mods = ev.key(), ev.modifiers()
        if (
            key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
            and mods & Qt.KeyboardModifier.ControlModifier
        ):
            back = key == Qt.Key.Key_Backtab or bool(mods & Qt.KeyboardModifier.ShiftModifier)
            super().focusNextPrevChild(not back)  # leave the canvas
            ev.accept()
            return
        if key in JUMP_KEYS and mods & Qt.KeyboardModifier.ControlModifier:
            self.keyboard.jump(JUMP_KEYS[key])
            ev.accept()
            return
        here = self.keyboard._current_from_selection()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and here is not None:
            self.item_activated.emit(here[0], here[1])
            ev.accept()
            return
        if here is not None and (
            key == Qt.Key.Key_Menu
            or (key == Qt.Key.Key_F10 and mods & Qt.KeyboardModifier.ShiftModifier)
        ):
            self.open_item_menu(here)
            ev.accept()
            return
        step = self._NUDGE_KEYS.get(key)
        if step is None or not self.doc.selected_nodes:
            super().keyPressEvent(ev)
            return
        unit = self.grid_size if self.snap_to_grid else 5.0
        if ev.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            unit *= 5
        self.nudge(step[0] * unit, step[1] * unit)
        ev.accept()

    def open_item_menu(self, item: tuple[str, object]) -> QMenu:
        """The context (what-if) menu of a node or link, at it on screen (keyboard users)."""
        doc = self.doc
        if item[0] == "node":
            x, y = doc.position(item[1])
        else:
            ln = doc.links[item[1]]
            (ax, ay), (bx, by) = doc.position(ln.source), doc.position(ln.target)
            x, y = (ax + bx) / 2, (ay + by) / 2
        menu = self.build_context_menu(x, y, item)
        at = self.mapToGlobal(self.mapFromScene(self.view_box.mapViewToScene(QPointF(x, y))))
        menu.popup(at)
        self._menu = menu
        return menu

    def nudge(self, dx: float, dy: float) -> None:
        """Move the selected nodes by (dx, dy); consecutive nudges merge into one command."""
        ids = list(self.doc.selected_nodes)
        old = {i: self.doc.position(i) for i in ids}
        new = {i: self.snap(x + dx, y + dy) for i, (x, y) in old.items()}
        self.undo_stack.push(MoveNodesCommand(self.doc, old, new, drag_id=-1))

    def delete_selection(self) -> None:
        nodes, links = self.doc.selected_nodes, self.doc.selected_links
        if nodes or links:
            self.undo_stack.push(DeleteCommand(self.doc, nodes, links))

    def _context_menu(self, screen_pos, x: float, y: float) -> None:
        menu = self.build_context_menu(x, y)
        menu.popup(screen_pos.toPoint() if hasattr(screen_pos, "toPoint") else screen_pos)
        self._menu = menu

    def build_context_menu(
        self, x: float, y: float, item: tuple[str, object] | None = None
    ) -> QMenu:
        """The context menu for the item under (x, y), or for ``item`` ("node", id) /
        ("link", uid) (separate for tests)."""
        if item is not None:
            node = item[1] if item[0] == "node" else None
            link = item[1] if item[0] == "link" else None
        else:
            node = self.node_at(x, y)
            link = None if node else self.link_at(x, y)
        menu = QMenu(self)
        doc = self.doc
        if node is not None:
            if node not in doc.selected_nodes:
                doc.set_selection([node])
            off = node in doc.disabled_nodes
            act = menu.addAction(
                f"Enable node {node}" if off else f"Disable node {node} (what if it fails)"
            )
            act.triggered.connect(
                lambda: self.undo_stack.push(SetDisabledCommand(doc, [node], (), not off))
            )
        elif link is not None:
            if link not in doc.selected_links:
                doc.set_selection((), [link])
            off = link in doc.disabled_links
            label = doc.links[link].label
            act = menu.addAction(
                f"Enable link {label}" if off else f"Disable link {label} (what if it fails)"
            )
            act.triggered.connect(
                lambda: self.undo_stack.push(SetDisabledCommand(doc, (), [link], not off))
            )
        if node is not None or link is not None:
            menu.addAction("Delete").triggered.connect(self.delete_selection)
            menu.addSeparator()
        if doc.disabled_nodes or doc.disabled_links:
            menu.addAction("Enable all disabled items").triggered.connect(
                lambda: self.undo_stack.push(
                    SetDisabledCommand(doc, doc.disabled_nodes, doc.disabled_links, False)
                )
            )
        menu.addAction("Fit to view").triggered.connect(self.fit_view)
        for hook in self.context_menu_hooks:
            hook(menu, node, link)
        return menu

    def _on_mouse_moved(self, scene_pos) -> None:
        if self.handler.dragging or not self.view_box.sceneBoundingRect().contains(scene_pos):
            return
        node, link, text = self.tip_at(scene_pos)
        self.hovered.emit(node, link)
        if text:
            QToolTip.showText(self.mapToGlobal(self.mapFromScene(scene_pos)), text, self)
        else:
            QToolTip.hideText()

    def tip_at(self, scene_pos) -> tuple[str | None, int | None, str | None]:
        """The node or link under ``scene_pos`` and its hover text (providers first)."""
        x, y = self.view_point(scene_pos)
        node = self.node_at(x, y)
        link = None if node else self.link_at(x, y)
        text = None
        for provider in self.tooltip_providers:
            text = provider(node, link)
            if text:
                break
        if text is None:
            text = self.describe(node, link)
        return node, link, text

    def viewportEvent(self, ev) -> bool:
        """Qt's tool-tip event (sent ~0.7 s after the mouse stops) would reach the scene, which
        finds no item tool tip and *hides* the tip shown on mouse move: answer it with the same
        text so the tip stays while the mouse is still."""
        if ev.type() == QEvent.Type.ToolTip and not self.handler.dragging:
            _, _, text = self.tip_at(self.mapToScene(ev.pos()))
            if text:
                QToolTip.showText(ev.globalPos(), text, self)
            else:
                QToolTip.hideText()
            ev.accept()
            return True
        return super().viewportEvent(ev)

    def describe(self, node: str | None, link: int | None) -> str | None:
        """Default hover text for a node or link."""
        if node is not None:
            n = self.doc.nodes[node]
            off = " (disabled)" if node in self.doc.disabled_nodes else ""
            grp = f", group {n.group}" if n.group else ""
            return f"{n.id}: {n.kind} {n.role}{grp}{off}"
        if link is not None:
            ln = self.doc.links[link]
            lat = f", {float(ln.latency):g} µs" if ln.latency is not None else ""
            way = "one-way" if ln.directed else "full duplex"
            off = " (disabled)" if self.doc.is_link_disabled(link) else ""
            return f"{ln.label}: {float(ln.bandwidth):g} GB/s {way}{lat}{off}"
        return None


def _typical_spacing(pos: np.ndarray, fallback: float) -> float:
    """Median distance from a node to its nearest neighbour (on a sample of ~120 nodes)."""
    if len(pos) < 2:
        return fallback
    sample = pos[:: max(1, len(pos) // 120)]
    d = np.hypot(sample[:, None, 0] - pos[None, :, 0], sample[:, None, 1] - pos[None, :, 1])
    d[d == 0] = np.inf
    nearest = d.min(axis=1)
    nearest = nearest[np.isfinite(nearest)]
    return float(np.median(nearest)) if len(nearest) else fallback
