"""The canvas's texts: node names (only when few nodes are in view and they stand far enough
apart), box names above their frames (only when few boxes are in view), and the bandwidth
written on each link (*View > Link bandwidths*).

Each kind is one batch item (:mod:`fc_gui.views.canvas_items`) fed from the canvas's
:class:`~fc_gui.model.document_index.DocumentIndex`; the canvas calls :meth:`LabelLayer.update`
when the view has settled (a short timer after a pan or zoom).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

from fc_gui.model.document import TopologyDocument
from fc_gui.model.document_index import DocumentIndex
from fc_gui.model.link_labels import bandwidth_text, label_order
from fc_gui.views import style
from fc_gui.views.canvas_items import LabelsItem, LinkLabelsItem

LABEL_LIMIT = 150  # draw node labels only when at most this many nodes are in view
LABEL_SPACING_PX = 42  # ... and when nodes are at least this far apart on screen
GROUP_LABEL_LIMIT = 40  # draw box names only when at most this many boxes are in view


class LabelLayer:
    """All texts drawn on the canvas (see module docstring)."""

    def __init__(self, view_box: pg.ViewBox, index: DocumentIndex) -> None:
        self.index = index
        self.px = 11  # node names' pixel size asked for (presenter scale)
        self.formatter: Callable[[str], str] | None = None  # how node ids are written
        self.link_texts: list[str] = []  # "25 GB/s" per link row
        self._link_order: list[int] = []
        self._rank = np.zeros(0, dtype=int)
        self.names = LabelsItem(style.LABEL_COLOR)
        self.names.setZValue(20)
        view_box.addItem(self.names, ignoreBounds=True)
        self.group_names = LabelsItem((96, 110, 120), below=False)
        self.group_names.setZValue(19)
        view_box.addItem(self.group_names, ignoreBounds=True)
        # painted after the node and box names, clear of them
        self.links = LinkLabelsItem(avoid=(self.names, self.group_names))
        self.links.setZValue(21)
        self.links.setVisible(False)
        view_box.addItem(self.links, ignoreBounds=True)

    def rebuild(self, doc: TopologyDocument) -> None:
        """New nodes and links: their ranks and the links' texts."""
        # where labels collide, the more important node keeps its label (lower rank first)
        self._rank = np.array(
            [style.label_rank(n.kind, n.role) for n in doc.nodes.values()], dtype=int
        )
        bws = [doc.links[u].bandwidth for u in self.index.link_uids]
        self.link_texts = [bandwidth_text(bw) for bw in bws]
        self._link_order = label_order(bws, self.index.link_lengths())

    def set_scale(self, scale: float) -> None:
        """Presenter scale: names ``scale`` times their size (node names only as large as fits
        between neighbours: :meth:`update`)."""
        self.px = round(11 * scale)
        self.links.set_font_px(round(13 * scale))
        self.names.set_font_px(self.px)
        self.group_names.set_font_px(self.px)

    def update(self, view: QRectF, visible: np.ndarray, spacing_px: float, frames) -> None:
        """Names for the view ``view``: the node ``visible`` rows (nodes ``spacing_px`` apart
        on screen) and the boxes among ``frames`` (``[(name, QRectF)]``) it meets."""
        crowded = len(visible) > LABEL_LIMIT or spacing_px < LABEL_SPACING_PX
        # the more important names first: LabelsItem skips those that would overlap
        show: list[int] = [] if crowded else sorted(visible, key=lambda i: self._rank[i])
        names = [self.index.ids[i] for i in show]
        if self.formatter:
            names = [self.formatter(n) for n in names]
        if self.px > 11 and names:  # larger names, but never wider than their spacing
            longest = max(len(n) for n in names)
            fits = int(0.9 * spacing_px / (0.62 * longest))
            self.names.set_font_px(max(11, min(self.px, fits)))
        self.names.set_labels(self.index.pos[show], names)
        groups = [(g, r) for g, r in frames if view.intersects(r)]
        groups = groups if len(groups) <= GROUP_LABEL_LIMIT else []
        corners = np.array([(r.left(), r.top()) for _, r in groups], dtype=float)
        self.group_names.set_labels(corners.reshape(-1, 2), [g for g, _ in groups])

    def update_link_labels(self, radii: np.ndarray) -> None:
        """Place the bandwidths again on the links as drawn, clear of nodes of radii ``radii``
        (pixels); nothing while they are hidden."""
        if not self.links.isVisible():
            return
        a, b = self.index.segment_ends()
        self.links.set_links(a, b, self.link_texts, self._link_order, self.index.pos, radii)
