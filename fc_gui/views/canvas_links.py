"""The canvas's links: one curve per (width class, state), the per-direction recolouring of the
heat map, the arrow heads of directed links, and the selected links.

Links are the rows of the canvas's :class:`~fc_gui.model.document_index.DocumentIndex`
(document order, with the rows of their end nodes); :meth:`LinkLayer.update_geometry` recomputes
every curve from the index's positions (numpy only). Parallel links (several between the same two
nodes) are drawn side by side (:mod:`fc_gui.model.parallel_links`); the index's
``segment_ends`` gives the drawn lines.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from fc_gui.model.document import TopologyDocument
from fc_gui.model.document_index import DocumentIndex
from fc_gui.views import style
from fc_gui.views.canvas_items import ARROWS, PassiveScatter

_STATE_COLORS = {
    "normal": style.LINK_COLOR,
    "directed": style.DIRECTED_LINK_COLOR,
    "disabled": style.DISABLED_LINK_COLOR,
}


def link_pen(color, width_class: int, dashed: bool, thin: bool):
    """The pen of a link curve (``thin``: zoomed far out, hairlines)."""
    width = style.LINK_WIDTH_CLASSES[width_class]
    if thin:  # zoomed far out: hairlines, lighter so the mesh does not turn into a blot
        width = 1.0 if width_class < len(style.LINK_WIDTH_CLASSES) - 2 else 2.0
        color = (*color[:3], min(color[3] if len(color) > 3 else 255, 120))
    if dashed:  # a disabled (what-if) link must stand out even when thin
        width = max(width, 2.0)
    pen = pg.mkPen(*color, width=width)
    if dashed:
        pen.setStyle(Qt.PenStyle.DashLine)
    return pen


def _rgba(color) -> tuple:
    c = tuple(color)
    return c + (255,) if len(c) == 3 else c


def _pairs_xy(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y arrays (``connect='pairs'``) of the segments a[i] -> b[i]."""
    xy = np.empty((2 * len(a), 2))
    xy[0::2] = a
    xy[1::2] = b
    return xy[:, 0], xy[:, 1]


def _palette_classes(rgba: np.ndarray, wcs: np.ndarray):
    """The directions grouped by colour on a bounded palette (16 levels per channel) and width
    class: ``(rgba, width class, direction indices)`` per group, in colour-code order."""
    q = np.clip(np.round(rgba / 17.0), 0, 15).astype(np.int64)
    code = ((q[:, 0] * 16 + q[:, 1]) * 16 + q[:, 2]) * 16 + q[:, 3]
    code = code * len(style.LINK_WIDTH_CLASSES) + wcs
    uniq, inverse = np.unique(code, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    splits = np.cumsum(np.bincount(inverse, minlength=len(uniq)))[:-1]
    return [(q[js[0]] * 17, int(wcs[js[0]]), js) for js in np.split(order, splits)]


class LinkLayer:
    """All links drawn in a few batch items (see module docstring)."""

    def __init__(self, view_box: pg.ViewBox, index: DocumentIndex) -> None:
        self.view_box = view_box
        self.index = index
        self.groups: list[tuple[pg.PlotCurveItem, np.ndarray]] = []
        self.color_groups: list[tuple[pg.PlotCurveItem, np.ndarray, np.ndarray]] = []
        self.colors = None  # what set_colors got: None, {(s, t): rgba} or an (n, 3|4) array
        self.thin = False
        self.opacity = 1.0  # < 1 while the links are dimmed (a tree is animated over them)
        self._halves = None
        self._keys: list[tuple[str, str, bool]] = []  # (source, target, directed) per row
        self._width_classes = np.zeros(0, dtype=np.int64)
        self._directed_rows = np.zeros(0, dtype=np.int64)
        self.arrows = PassiveScatter(pxMode=True, pen=None)
        self.arrows.setZValue(2)
        view_box.addItem(self.arrows)
        self.selected = pg.PlotCurveItem(
            connect="pairs", pen=pg.mkPen(*style.SELECTION_COLOR, width=7)
        )
        self.selected.setZValue(-1)
        view_box.addItem(self.selected)

    def rebuild(self, doc: TopologyDocument) -> None:
        """New links (the index's rows, loaded from ``doc``)."""
        uids = self.index.link_uids
        links = [doc.links[u] for u in uids]
        self._keys = [(ln.source, ln.target, ln.directed) for ln in links]
        self._halves = None
        bw_cache: dict = {}
        bws = np.array(
            [bw_cache.setdefault(ln.bandwidth, float(ln.bandwidth)) for ln in links], dtype=float
        )
        self._width_classes = style.width_classes(bws)
        self._directed_rows = np.array(
            [i for i, ln in enumerate(links) if ln.directed], dtype=np.int64
        )
        for item, _ in self.groups:
            self.view_box.removeItem(item)
        self.groups = []
        classes: dict[tuple[int, str], list[int]] = {}
        for i, (uid, ln) in enumerate(zip(uids, links)):
            state = (
                "disabled" if doc.is_link_disabled(uid) else "directed" if ln.directed else "normal"
            )
            classes.setdefault((int(self._width_classes[i]), state), []).append(i)
        for (wc, state), rows in sorted(classes.items()):
            color = _STATE_COLORS[state]
            dashed = state == "disabled"
            item = pg.PlotCurveItem(connect="pairs", pen=link_pen(color, wc, dashed, self.thin))
            item._fc_style = (color, wc, dashed)
            item.setZValue(0)
            item.setOpacity(self.opacity)
            self.view_box.addItem(item)
            self.groups.append((item, np.array(rows, dtype=np.int64)))
        if isinstance(self.colors, np.ndarray):
            self.colors = None  # array no longer aligned with the links
        self._build_color_groups()

    # ------------------------------------------------------------------ per-direction colours
    def halves(self):
        """Per drawn direction: (link row, from end 0/1, whole segment?, (s, t), width class)."""
        if self._halves is None:
            rows, ends, whole, keys = [], [], [], []
            for i, (s, t, directed) in enumerate(self._keys):
                rows.append(i)
                ends.append(0)
                whole.append(directed)
                keys.append((s, t))
                if not directed:
                    rows.append(i)
                    ends.append(1)
                    whole.append(False)
                    keys.append((t, s))
            rows_a = np.array(rows, dtype=np.int64)
            self._halves = (
                rows_a,
                np.array(ends, dtype=np.int64),
                np.array(whole, dtype=bool),
                keys,
                self._width_classes[rows_a] if len(rows_a) else rows_a,
            )
        return self._halves

    def directed_links(self) -> list[tuple[str, str]]:
        return list(self.halves()[3])

    def set_colors(self, colors) -> None:
        """Colour per direction: {(s, t): rgba}, an (n, 3|4) array along :meth:`directed_links`,
        or None for the normal look. Call :meth:`update_geometry` afterwards."""
        if colors is not None and not isinstance(colors, Mapping):
            colors = np.asarray(colors, dtype=float)
            if colors.ndim != 2 or colors.shape[1] not in (3, 4):
                raise ValueError("link colours must be an (n, 3) or (n, 4) array")
            n = len(self.halves()[3])
            if len(colors) != n:
                raise ValueError(f"{len(colors)} link colours for {n} directed links")
        self.colors = colors
        self._build_color_groups()

    def _build_color_groups(self) -> None:
        colors = self.colors
        for item, _ in self.groups:
            item.setVisible(colors is None)
        for item, _, _ in self.color_groups:
            item.setVisible(False)
        used = 0
        if colors is not None and self._keys:
            rows, ends, whole, keys, wcs = self.halves()
            if isinstance(colors, Mapping):
                default = tuple(style.LINK_COLOR)
                rgba = np.array([_rgba(colors.get(k, default)) for k in keys], dtype=float)
            else:
                rgba = (
                    colors
                    if colors.shape[1] == 4
                    else np.hstack([colors, np.full((len(colors), 1), 255.0)])
                )
            for c, wc, js in _palette_classes(rgba, wcs):
                width = 1.5 if self.thin else style.LINK_WIDTH_CLASSES[wc] + 1.5
                pen = pg.mkPen(*(int(v) for v in c), width=width)
                if used < len(self.color_groups):
                    item = self.color_groups[used][0]
                    item.setPen(pen)
                    item.setVisible(True)
                else:
                    item = pg.PlotCurveItem(connect="pairs", pen=pen)
                    item.setZValue(1)
                    item.setOpacity(self.opacity)
                    self.view_box.addItem(item)
                    self.color_groups.append((item, None, None))
                self.color_groups[used] = (item, rows[js], np.stack([ends[js], whole[js]], 1))
                used += 1
        for item, _, _ in self.color_groups[used:]:
            self.view_box.removeItem(item)
        del self.color_groups[used:]

    def items(self) -> list[pg.GraphicsObject]:
        """Every graphics item that draws links (plain, heat-coloured, arrow heads)."""
        return [i for i, _ in self.groups] + [i for i, _, _ in self.color_groups] + [self.arrows]

    def set_opacity(self, opacity: float) -> None:
        """Fade every link (``opacity`` < 1: dimmed under an animated tree) or restore them."""
        self.opacity = float(opacity)
        for item in self.items():
            item.setOpacity(self.opacity)

    # ------------------------------------------------------------------ level of detail, geometry
    def set_thin(self, thin: bool) -> bool:
        """Hairline pens (zoomed far out) or widths by bandwidth; True when the look changed
        (then call :meth:`update_geometry`)."""
        if thin == self.thin:
            return False
        self.thin = thin
        for item, _ in self.groups:
            color, wc, dashed = item._fc_style
            item.setPen(link_pen(color, wc, dashed, thin))
        if self.colors is not None:
            self._build_color_groups()
            return True
        return False

    def segments_xy(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x and y arrays (``connect='pairs'``) of the links ``rows`` as drawn."""
        a, b = self.index.segment_ends()
        return _pairs_xy(a[rows], b[rows])

    def show_selection(self, uids) -> None:
        """The selected links (``uids``) drawn wide in the selection colour under the links."""
        row = self.index.link_row
        rows = np.array([row[u] for u in uids if u in row], dtype=np.int64)
        if len(rows):
            self.selected.setData(*self.segments_xy(rows))
        else:
            self.selected.setData([], [])

    def update_geometry(self, y_inverted: bool) -> None:
        """Recompute every curve's coordinates from the index's node positions."""
        ends_a, ends_b = self.index.segment_ends()
        for item, rows in self.groups:
            item.setData(*_pairs_xy(ends_a[rows], ends_b[rows]))
        for item, rows, info in self.color_groups:
            a = ends_a[rows]
            b = ends_b[rows]
            mid = (a + b) / 2
            start = np.where(info[:, 0:1] == 0, a, b)
            stop = np.where(info[:, 1:2].astype(bool), b, mid)
            item.setData(*_pairs_xy(start, stop))
        # arrow heads at 62 % of every directed link
        if len(self._directed_rows):
            a = ends_a[self._directed_rows]
            b = ends_b[self._directed_rows]
            at = a + (b - a) * 0.62
            sign = 1.0 if y_inverted else -1.0
            ang = np.degrees(np.arctan2(sign * (b[:, 1] - a[:, 1]), b[:, 0] - a[:, 0])) % 360
            symbols = [ARROWS[round(x / 10) % 36] for x in ang]
            self.arrows.setData(
                pos=at, symbol=symbols, size=13, brush=pg.mkBrush(*style.DIRECTED_LINK_COLOR[:3])
            )
        else:
            self.arrows.setData([])
