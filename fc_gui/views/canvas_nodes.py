"""The canvas's nodes: one scatter for all node symbols (look by role), the selection's orange
discs, the overlays' halos behind nodes, and the legend of the node looks present.

Positions come from the canvas's :class:`~fc_gui.model.document_index.DocumentIndex`; a move
shifts the points of the scatter in place (no per-spot rebuild), a structural change rebuilds it.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import numpy as np
import pyqtgraph as pg

from fc_gui.model.document import TopologyDocument
from fc_gui.model.document_index import DocumentIndex
from fc_gui.views import style
from fc_gui.views.canvas_items import PassiveScatter


@cache
def _node_pen():
    """The white outline of every node symbol (made on first use: pens need the QApplication)."""
    return pg.mkPen(255, 255, 255, width=1.2)


class NodeLayer:
    """All node items of the canvas (see module docstring)."""

    def __init__(self, view_box: pg.ViewBox, index: DocumentIndex) -> None:
        self.view_box = view_box
        self.index = index
        self.scale = 1.0  # symbol size factor (< 1 when nodes crowd on screen)
        self.sizes = np.zeros(0)
        self._symbols: list = []
        self._brushes: list = []
        self.halos: dict[str, PassiveScatter] = {}
        self._halo_args: dict[str, tuple] = {}
        self.selected = PassiveScatter(
            pxMode=True, pen=None, brush=pg.mkBrush(*style.SELECTION_COLOR, 210), size=30
        )
        self.selected.setZValue(8)
        view_box.addItem(self.selected)
        self.item = PassiveScatter(pxMode=True, hoverable=False)
        self.item.setZValue(10)
        view_box.addItem(self.item)

    def rebuild(self, doc: TopologyDocument) -> None:
        """New looks for every node (after a structural change or a node's disabling)."""
        disabled = doc.disabled_nodes
        symbols, brushes, sizes = [], [], []
        brush_cache: dict = {}
        for n in doc.nodes.values():
            st = style.role_style_cached(n.kind, n.role)
            color = style.DISABLED_NODE_COLOR if n.id in disabled else st.color
            if color not in brush_cache:
                brush_cache[color] = pg.mkBrush(*color)
            symbols.append(st.symbol)
            brushes.append(brush_cache[color])
            sizes.append(st.size)
        self.sizes = np.array(sizes, dtype=float)
        self._symbols, self._brushes = symbols, brushes
        self.item.setData(
            pos=self.index.pos,
            symbol=self._symbols,
            brush=self._brushes,
            size=self.sizes * self.scale,
            pen=_node_pen(),
            data=self.index.ids,
        )

    def move(self, rows: np.ndarray) -> None:
        """The nodes ``rows`` moved in the index: move their points in place."""
        item, pos = self.item, self.index.pos
        item.data["x"][rows] = pos[rows, 0]
        item.data["y"][rows] = pos[rows, 1]
        item.prepareGeometryChange()
        item.informViewBoundsChanged()
        item.bounds = [None, None]
        item.invalidate()

    def radii_px(self) -> np.ndarray:
        """The drawn radius of every node symbol, in pixels."""
        return self.sizes * self.scale / 2

    def set_scale(self, scale: float) -> bool:
        """Symbols ``scale`` times their size; True when that changed."""
        if scale == self.scale:
            return False
        self.scale = scale
        self.item.setSize(self.sizes * scale)
        return True

    def show_selection(self, node_ids: Iterable[str]) -> None:
        """Orange discs behind the selected nodes."""
        rows = [self.index.row[i] for i in node_ids if i in self.index.row]
        self.selected.setData(pos=self.index.pos[rows] if rows else np.zeros((0, 2)))

    def highlight(
        self, ids: Iterable[str], brush=None, key: str = "default", size: float = 34
    ) -> None:
        """A halo (``brush``: anything pg.mkBrush takes) behind nodes; empty ``ids`` clear it."""
        ids = [i for i in ids if i in self.index.row]
        self._halo_args[key] = (ids, brush, size)
        item = self.halos.get(key)
        if not ids:
            if item is not None:
                item.setData([])
            return
        if item is None:
            item = PassiveScatter(pxMode=True, pen=None)
            item.setZValue(7)
            self.view_box.addItem(item, ignoreBounds=True)
            self.halos[key] = item
        rows = [self.index.row[i] for i in ids]
        item.setData(
            pos=self.index.pos[rows],
            size=size,
            brush=pg.mkBrush(brush or (255, 235, 59, 160)),
            data=ids,
        )

    def refresh_halos(self) -> None:
        """Draw every halo again at the nodes' current positions."""
        for key, (ids, brush, size) in list(self._halo_args.items()):
            self.highlight(ids, brush, key, size)


class NodeLegend(pg.LegendItem):
    """One legend row per node look present (role label, shape and colour), bottom left."""

    def __init__(self) -> None:
        super().__init__(
            offset=(8, -8),
            brush=pg.mkBrush(255, 255, 255, 215),
            pen=pg.mkPen(200, 200, 200),
            labelTextSize="8pt",
            labelTextColor=(50, 50, 50),
            verSpacing=-4,
        )
        self.key: tuple = ()  # the looks listed (empty: no rows)
        self.scale = 1.0

    def set_scale(self, scale: float) -> None:
        """Presenter scale: text and samples ``scale`` times their size (rows rebuilt)."""
        self.setLabelTextSize(f"{8 * scale:.1f}pt")
        self.scale = scale
        self.key = ()  # rebuilt: pyqtgraph's legend does not shrink its rows again

    def show_looks(self, nodes: Iterable) -> None:
        """List the looks of ``nodes`` (solver Nodes); nothing to do when they are the same."""
        seen: dict[str, style.RoleStyle] = {}
        for n in nodes:
            st = style.role_style_cached(n.kind, n.role)
            seen.setdefault(st.label, st)
        key = tuple(sorted(seen))
        if key == self.key:
            return
        self.key = key
        self.clear()
        for label, st in seen.items():
            sample = pg.ScatterPlotItem(
                symbol=st.symbol,
                brush=pg.mkBrush(*st.color),
                pen=pg.mkPen(255, 255, 255),
                size=min(min(st.size, 14) * self.scale, 18),  # sample box: 20 px
            )
            self.addItem(sample, label)
        self.setVisible(bool(seen))  # an empty fabric: no empty legend frame
