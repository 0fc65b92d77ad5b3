"""The canvas's drawing: every layer (grid, box frames, links, nodes, texts, legend) fed from one
:class:`~fc_gui.model.document_index.DocumentIndex`, and when each one redraws.

A structural change rebuilds every layer (:meth:`CanvasLayers.rebuild`); a move only recomputes
coordinates (:meth:`~CanvasLayers.move`, numpy only); 40 ms after the view stops changing,
:meth:`~CanvasLayers.settle` sets the level of detail (hairline links when more than
:data:`LOD_NODES` nodes are in view, smaller symbols when they crowd) and the names that fit.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QTimer

from fc_gui.model.document import TopologyDocument
from fc_gui.model.document_index import DocumentIndex
from fc_gui.views.canvas_frames import FrameLayer
from fc_gui.views.canvas_labels import LabelLayer
from fc_gui.views.canvas_links import LinkLayer
from fc_gui.views.canvas_nodes import NodeLayer, NodeLegend

LOD_NODES = 700  # with more nodes in view, links are drawn thin (wide pens are slow to stroke)
SETTLE_MS = 40  # the view has settled this long after its last change


class CanvasLayers:
    """All layers drawn in ``view_box`` (see module docstring); ``parent`` owns the timer."""

    def __init__(self, view_box: pg.ViewBox, parent: QObject) -> None:
        self.view_box = view_box
        self.index = DocumentIndex()
        self.grid = pg.GridItem()
        self.grid.setVisible(False)
        self.grid.setZValue(-20)
        view_box.addItem(self.grid, ignoreBounds=True)
        self.frames = FrameLayer(view_box, self.index)
        self.links = LinkLayer(view_box, self.index)
        self.nodes = NodeLayer(view_box, self.index)
        self.labels = LabelLayer(view_box, self.index)
        self.legend = NodeLegend()
        self.legend.setParentItem(view_box)
        self.closed = False
        self.timer = QTimer(parent)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SETTLE_MS)
        self.timer.timeout.connect(self.settle)
        view_box.sigRangeChanged.connect(lambda *_: self.timer.start())

    def rebuild(self, doc: TopologyDocument) -> None:
        """Rebuild every layer from the document (after structural changes)."""
        self.index.load(doc.nodes.values(), doc.links)
        self.nodes.rebuild(doc)
        self.legend.show_looks(doc.nodes.values())
        self.links.rebuild(doc)
        self.labels.rebuild(doc)
        self.update_geometry()

    def move(self, doc: TopologyDocument, ids: Iterable[str]) -> None:
        """The nodes ``ids`` moved in ``doc``: move them in every layer."""
        nodes = doc.nodes
        self.nodes.move(self.index.move({i: (nodes[i].x, nodes[i].y) for i in ids}))
        self.update_geometry()

    def show_selection(self, doc: TopologyDocument) -> None:
        self.nodes.show_selection(doc.selected_nodes)
        self.links.show_selection(doc.selected_links)

    def update_geometry(self) -> None:
        """Recompute every layer's coordinates from the index (cheap: numpy only)."""
        self.links.update_geometry(self.view_box.yInverted())
        self.frames.update()
        self.nodes.refresh_halos()
        self.update_link_labels()
        self.timer.start()

    def update_link_labels(self) -> None:
        self.labels.update_link_labels(self.nodes.radii_px())

    def pixel_size(self) -> tuple[float, float]:
        """Data units per screen pixel along x and y (1 before the view is laid out)."""
        px, py = self.view_box.viewPixelSize()
        return (px or 1.0, py or 1.0)

    def settle(self) -> None:
        """The view settled: level of detail (thin links, smaller symbols when crowded) and
        the names that fit."""
        if self.closed:
            return
        rect = self.view_box.viewRect()
        visible = self.index.rows_in_rect(rect.left(), rect.top(), rect.right(), rect.bottom())
        px, _ = self.pixel_size()
        spacing_px = self.index.spacing / abs(px) if px else 0.0  # node distance on screen
        if self.nodes.set_scale(float(np.clip(round(spacing_px / 30 * 4) / 4, 0.5, 1.0))):
            self.update_link_labels()
        if self.links.set_thin(len(visible) > LOD_NODES):
            self.update_geometry()
        self.labels.update(rect, visible, spacing_px, self.frames.frames)

    def close(self) -> None:
        """The view closes (pyqtgraph clears the scene): no more settling."""
        self.timer.stop()
        self.closed = True
