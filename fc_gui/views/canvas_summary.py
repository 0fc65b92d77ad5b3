"""The summary view of a big fabric on the canvas: aggregates drawn as one symbol each, the links
between two of them once with their total bandwidth, frames round the expanded ones, and the
bottleneck cut S* as shading (full or partial) of the aggregates inside it.

The grouping and what is shown are pure data (:mod:`fc_gui.model.summary`); this layer draws a
:class:`~fc_gui.model.summary.SummaryScene`. The nodes shown as themselves (inside expanded
aggregates) and the links among them are drawn by the canvas's usual layers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

from fc_gui.model.summary import SummaryScene, SummaryState, share_text
from fc_gui.views import style
from fc_gui.views.canvas_items import GroupFramesItem, LabelsItem, PassiveScatter

#: Looks of the aggregates by level: (symbol, fill colour).
LOOKS = {
    "pod": ("s", (187, 222, 251)),
    "box": ("s", (200, 230, 201)),
    "switches": ("h", (207, 216, 220)),
}
EDGE = (84, 110, 122)
CUT_FILL = (229, 57, 53)
LINK_COLOR = (90, 100, 120, 150)
#: Captions are written when at most this many aggregates are shown (else pods and switch
#: groups only).
CAPTION_LIMIT = 80
#: Total bandwidths are written on aggregated links when at most this many are shown.
LINK_TEXT_LIMIT = 60


def symbol_px(size: int) -> float:
    """On-screen size of an aggregate of ``size`` nodes (grows with log2, 22..58 px)."""
    return float(min(58.0, 22.0 + 4.0 * math.log2(max(1, size))))


def total_text(bandwidth: float, links: int) -> str:
    """``24 TB/s (480 links)``: the total bandwidth of aggregated links."""
    if bandwidth >= 1000:
        text = f"{bandwidth / 1000:.3g} TB/s"
    else:
        text = f"{bandwidth:.4g} GB/s"
    return f"{text} ({links} links)" if links != 1 else text


class SummaryLayer:
    """Draws the summary of the canvas's fabric (see module docstring)."""

    def __init__(self, view_box: pg.ViewBox) -> None:
        self.view_box = view_box
        self.state: SummaryState | None = None
        self.scene: SummaryScene | None = None
        self.pending = False  # the summary is wanted but its grouping is being found
        self.cut_nodes: frozenset[str] | None = None
        self.shares = np.zeros(0)  # per shown aggregate: share inside S*
        self.node_xy: dict[str, tuple[float, float]] = {}  # shown nodes' positions
        self.frames = GroupFramesItem()
        self.frames.setZValue(-9)
        view_box.addItem(self.frames, ignoreBounds=True)
        self.links = pg.PlotCurveItem(connect="pairs", antialias=True)
        self.links.setZValue(1)
        view_box.addItem(self.links, ignoreBounds=True)
        self.cut = PassiveScatter(pxMode=True, hoverable=False)
        self.cut.setZValue(9)
        view_box.addItem(self.cut, ignoreBounds=True)
        self.cut_links: tuple = ()  # the directed links leaving S*
        self.cut_lines = pg.PlotCurveItem(connect="pairs", antialias=False)
        self.cut_lines.setPen(pg.mkPen(*CUT_FILL, width=3, style=Qt.PenStyle.DashLine))
        self.cut_lines.setZValue(9.5)
        view_box.addItem(self.cut_lines, ignoreBounds=True)
        self.item = PassiveScatter(pxMode=True, hoverable=False)
        self.item.setZValue(11)
        view_box.addItem(self.item)
        self.captions = LabelsItem(style.LABEL_COLOR, font_px=10)
        self.captions.setZValue(22)
        view_box.addItem(self.captions, ignoreBounds=True)
        self.frame_names = LabelsItem((96, 110, 120), below=False)
        self.frame_names.setZValue(19)
        view_box.addItem(self.frame_names, ignoreBounds=True)
        self.link_texts = LabelsItem(style.LINK_LABEL_COLOR, below=False, font_px=10)
        self.link_texts.setZValue(21)
        view_box.addItem(self.link_texts, ignoreBounds=True)
        self.sizes = np.zeros(0)

    @property
    def active(self) -> bool:
        """The canvas draws the summary (or waits for its grouping)."""
        return self.state is not None or self.pending

    # ------------------------------------------------------------------ drawing
    def clear(self) -> None:
        """Draw nothing (the full fabric is shown)."""
        self.scene = None
        self.shares = np.zeros(0)
        self.sizes = np.zeros(0)
        self.node_xy = {}
        self.item.setData([])
        self.cut.setData([])
        self.cut_lines.setData([], [])
        self.links.setData([], [])
        self.frames.set_rects([])
        for labels in (self.captions, self.frame_names, self.link_texts):
            labels.set_labels(np.zeros((0, 2)), [])

    def draw(self, scene: SummaryScene, node_xy: dict[str, tuple[float, float]]) -> None:
        """Draw ``scene``; ``node_xy``: positions of the nodes shown as themselves."""
        assert self.state is not None
        self.scene = scene
        self.node_xy = node_xy
        g = self.state.grouping
        aggs = [g.aggregates[a] for a in scene.aggregates]
        self.sizes = np.array([symbol_px(a.size) for a in aggs], dtype=float)
        brushes = {lvl: pg.mkBrush(*look[1]) for lvl, look in LOOKS.items()}
        self.item.setData(
            pos=scene.positions,
            symbol=[LOOKS[a.level][0] for a in aggs],
            brush=[brushes[a.level] for a in aggs],
            size=self.sizes,
            pen=pg.mkPen(*EDGE, width=1.5),
            data=list(scene.aggregates),
        )
        # aggregated links, from centre to centre (or to the node shown as itself)
        where = {a: scene.positions[i] for i, a in enumerate(scene.aggregates)}
        xs, ys, mids, texts, widths = [], [], [], [], []
        for ln in scene.links:
            pa = where.get(ln.a, node_xy.get(ln.a))
            pb = where.get(ln.b, node_xy.get(ln.b))
            if pa is None or pb is None:
                continue
            xs += [pa[0], pb[0]]
            ys += [pa[1], pb[1]]
            mids.append(((pa[0] + pb[0]) / 2, (pa[1] + pb[1]) / 2))
            texts.append(total_text(ln.bandwidth, ln.links))
            widths.append(ln.bandwidth)
        heaviest = max(widths, default=1.0)
        width = 1.0 if len(widths) > 400 else 2.0 + 2.0 * (len(set(widths)) == 1)
        self.links.setData(np.array(xs), np.array(ys), pen=pg.mkPen(LINK_COLOR, width=width))
        del heaviest
        if len(texts) <= LINK_TEXT_LIMIT:
            self.link_texts.set_labels(np.array(mids).reshape(-1, 2), texts)
        else:
            self.link_texts.set_labels(np.zeros((0, 2)), [])
        # expanded aggregates: a frame round their nodes, named at its corner
        rects, corners, names = [], [], []
        for aid in sorted(self.state.expanded, key=g.index.__getitem__):
            lo, hi, pad = self.state.frame(aid)
            rects.append(
                QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad, hi[1] - lo[1] + 2 * pad)
            )
            corners.append((lo[0] - pad, lo[1] - pad))
            names.append(f"{g.aggregates[aid].label} (expanded: double-click here to collapse)")
        self.frames.set_rects(rects)
        self.frame_names.set_labels(np.array(corners).reshape(-1, 2), names)
        self._captions()
        self._draw_cut()

    def _captions(self) -> None:
        scene, state = self.scene, self.state
        if scene is None or state is None:
            return
        g = state.grouping
        aggs = [g.aggregates[a] for a in scene.aggregates]
        few = len(aggs) <= CAPTION_LIMIT
        xy, texts = [], []
        for i, a in enumerate(aggs):
            if not few and a.level == "box":
                continue
            text = a.caption()
            if self.cut_nodes is not None and i < len(self.shares) and self.shares[i] > 0:
                text += f" · S* {share_text(float(self.shares[i]))}"
            xy.append(scene.positions[i])
            texts.append(text)
        self.captions.set_labels(np.array(xy).reshape(-1, 2), texts)

    # ------------------------------------------------------------------ the cut
    def set_cut(self, nodes: Iterable[str] | None, links: Iterable[tuple] = ()) -> None:
        """Shade the aggregates inside the bottleneck cut S* (``nodes``; None: no cut) and
        dash the links leaving it (``links``: (source, target, bandwidth)) between them."""
        self.cut_nodes = None if nodes is None else frozenset(nodes)
        self.cut_links = tuple(links) if nodes is not None else ()
        self._draw_cut()
        self._captions()

    def _draw_cut(self) -> None:
        scene, state = self.scene, self.state
        if scene is None or state is None or self.cut_nodes is None:
            self.shares = np.zeros(0)
            self.cut.setData([])
            self.cut_lines.setData([], [])
            return
        self.shares = state.cut_shares(scene, self.cut_nodes)
        where = {a: scene.positions[i] for i, a in enumerate(scene.aggregates)}
        xs, ys = [], []
        for a, b, _ in state.crossing(scene, self.cut_links):
            pa, pb = where.get(a, self.node_xy.get(a)), where.get(b, self.node_xy.get(b))
            if pa is not None and pb is not None:
                xs += [pa[0], pb[0]]
                ys += [pa[1], pb[1]]
        self.cut_lines.setData(np.array(xs, dtype=float), np.array(ys, dtype=float))
        inside = np.flatnonzero(self.shares > 0)
        brushes = [pg.mkBrush(*CUT_FILL, int(60 + 150 * self.shares[i])) for i in inside]
        pens = [
            pg.mkPen(*CUT_FILL, width=2.5, style=Qt.PenStyle.SolidLine)
            if self.shares[i] >= 1
            else pg.mkPen(*CUT_FILL, width=2.0, style=Qt.PenStyle.DashLine)
            for i in inside
        ]
        self.cut.setData(
            pos=scene.positions[inside],
            size=self.sizes[inside] + 14,
            symbol="o",
            brush=brushes,
            pen=pens,
        )

    # ------------------------------------------------------------------ hit-testing
    def aggregate_at(self, x: float, y: float, pixel: tuple[float, float]) -> str | None:
        """The shown aggregate whose symbol covers data point (x, y), or None."""
        scene = self.scene
        if scene is None or not len(scene.aggregates):
            return None
        px, py = abs(pixel[0]) or 1.0, abs(pixel[1]) or 1.0
        d = np.hypot((scene.positions[:, 0] - x) / px, (scene.positions[:, 1] - y) / py)
        i = int(np.argmin(d))
        return scene.aggregates[i] if d[i] <= self.sizes[i] / 2 + 3 else None

    def expanded_at(self, x: float, y: float) -> str | None:
        """The innermost expanded aggregate whose frame holds data point (x, y), or None."""
        state = self.state
        if state is None:
            return None
        g = state.grouping
        best = None
        for aid in state.expanded:
            lo, hi, pad = state.frame(aid)
            if lo[0] - pad <= x <= hi[0] + pad and lo[1] - pad <= y <= hi[1] + pad:
                if best is None or g.index[aid] > g.index[best]:
                    best = aid
        return best

    def bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(lo, hi) of the aggregates' centres, or None when none is shown."""
        if self.scene is None or not len(self.scene.aggregates):
            return None
        return self.scene.positions.min(axis=0), self.scene.positions.max(axis=0)
