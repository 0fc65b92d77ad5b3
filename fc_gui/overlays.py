"""Result overlays drawn on the fabric canvas: bottleneck cut, congestion heat map, trees, broadcast.

Every overlay draws its own pyqtgraph items, added through the canvas's public overlay API
(``canvas.add_overlay_item(item)`` and, when present, ``canvas.remove_overlay_item(item)``) at node
positions from ``canvas.node_positions()``. Drawing is batched: one :class:`PlotCurveItem`
(``connect='pairs'``) per colour class, one :class:`ScatterPlotItem` per marker kind, so a 1000-node
fabric stays fast.

A directed link u→v is drawn on its own *lane*, shifted a little to the right of the u→v line, so
both directions of a full-duplex link stay visible side by side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QFont, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QLabel, QToolTip, QWidget

from solver.model.schedule import BottleneckCut, Schedule, Tree

Positions = Mapping[str, tuple[float, float]]

#: Z values: above the canvas's links (and groups), the cut halo below the nodes.
Z_HALO = 5
Z_HEAT = 8
Z_TREES = 9
Z_ANIM = 10
Z_LABEL = 30

CUT_COLOR = (211, 47, 47)
CUT_HALO = (229, 57, 53, 45)
IDLE_COLOR = (150, 150, 150, 110)
ANIM_CURRENT = (216, 27, 96, 255)
ANIM_REACHED = (255, 213, 79, 170)

#: Colours of overlaid trees (colour-blind-friendly, readable on a light background).
TREE_PALETTE = (
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (120, 94, 240),
    (100, 100, 100),
    (0, 90, 50),
    (170, 51, 119),
)

HEAT_BINS = 20


def congestion_colormap() -> pg.ColorMap:
    """Blue (idle) → yellow → red (saturated): colour of load ÷ bandwidth in [0, 1]."""
    return pg.ColorMap(
        pos=[0.0, 0.45, 0.75, 1.0],
        color=[(49, 130, 189), (254, 224, 139), (244, 109, 67), (165, 0, 38)],
    )


# ---------------------------------------------------------------------- geometry
def lane_offset(positions: Positions, pairs: Iterable[tuple[str, str]]) -> float:
    """The sideways shift of a directed lane: a small fraction of the typical link length."""
    lengths = []
    for u, v in pairs:
        if u in positions and v in positions:
            (x0, y0), (x1, y1) = positions[u], positions[v]
            d = float(np.hypot(x1 - x0, y1 - y0))
            if d > 0:
                lengths.append(d)
    if not lengths:
        return 0.0
    return 0.045 * float(np.median(lengths))


def lane_segments(
    positions: Positions, pairs: Sequence[tuple[str, str]], offset: float
) -> np.ndarray:
    """Endpoints of directed segments, each shifted ``offset`` to its right: shape (len(pairs), 2, 2).

    Pairs with an unknown endpoint get NaN coordinates (drawn as nothing).
    """
    seg = np.full((len(pairs), 2, 2), np.nan)
    for i, (u, v) in enumerate(pairs):
        if u in positions and v in positions:
            seg[i, 0] = positions[u]
            seg[i, 1] = positions[v]
    d = seg[:, 1] - seg[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        normal = np.stack([d[:, 1], -d[:, 0]], axis=1) / length[:, None]
    normal[~np.isfinite(normal)] = 0.0
    seg = seg + (offset * normal)[:, None, :]
    return seg


def chevrons(seg: np.ndarray, size: float, at: float = 0.6) -> np.ndarray:
    """Arrow-head strokes (two per segment) pointing along each segment, at fraction ``at``."""
    if len(seg) == 0:
        return np.zeros((0, 2, 2))
    d = seg[:, 1] - seg[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = d / length[:, None]
    unit[~np.isfinite(unit)] = 0.0
    s = np.minimum(size, 0.35 * np.nan_to_num(length))[:, None]
    tip = seg[:, 0] + at * d + 0.5 * s * unit
    normal = np.stack([-unit[:, 1], unit[:, 0]], axis=1)
    back = tip - s * unit
    left = back + 0.45 * s * normal
    right = back - 0.45 * s * normal
    out = np.empty((2 * len(seg), 2, 2))
    out[0::2, 0] = left
    out[0::2, 1] = tip
    out[1::2, 0] = right
    out[1::2, 1] = tip
    return out


def _pairs_xy(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    flat = seg.reshape(-1, 2)
    return np.ascontiguousarray(flat[:, 0]), np.ascontiguousarray(flat[:, 1])


#: Above this many segments an overlay curve is drawn without antialiasing: antialiased wide
#: lines cost ~0.1-0.2 ms per segment per repaint in Qt's raster engine (two trees of 16x DGX
#: A100 = 540 segments took 90 ms per frame antialiased, 11 ms without).
AA_SEGMENT_LIMIT = 250


def _curve(color, width: float, z: float, style=Qt.PenStyle.SolidLine,
           segments: int = 0) -> pg.PlotCurveItem:
    """One batch of line segments (``segments``: how many, to choose antialiasing).

    Dashed/dotted lines are never antialiased: Qt strokes antialiased dash patterns very slowly
    (≈15 ms per repaint for a few long lines).
    """
    pen = pg.mkPen(color=color, width=width, style=style)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    antialias = style == Qt.PenStyle.SolidLine and segments <= AA_SEGMENT_LIMIT
    item = pg.PlotCurveItem(pen=pen, connect="pairs", antialias=antialias)
    item.setZValue(z)
    return item


def segment_distance_px(
    seg: np.ndarray, x: float, y: float, pixel: tuple[float, float]
) -> np.ndarray:
    """Distance in pixels from the point (x, y) to each segment (data coordinates in ``seg``)."""
    if len(seg) == 0:
        return np.zeros(0)
    sx, sy = pixel
    a = seg[:, 0] / (sx, sy)
    b = seg[:, 1] / (sx, sy)
    p = np.array([x / sx, y / sy])
    ab = b - a
    denom = (ab**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(((p - a) * ab).sum(axis=1) / denom, 0.0, 1.0)
    t = np.nan_to_num(t)
    closest = a + t[:, None] * ab
    dist = np.hypot(*(closest - p).T)
    return np.where(np.isfinite(dist), dist, np.inf)


def _y_inverted(canvas) -> bool:
    vb = getattr(canvas, "view_box", None)
    if vb is None and hasattr(canvas, "plot_item"):
        vb = canvas.plot_item.getViewBox()
    return bool(vb is not None and vb.yInverted())


class _Overlay:
    """Base: owns items on a canvas; ``clear()`` removes them, ``set_visible()`` toggles them."""

    def __init__(self, canvas) -> None:
        self.canvas = canvas
        self.items: list[pg.GraphicsObject] = []
        self.visible = True

    def _add(self, item: pg.GraphicsObject) -> pg.GraphicsObject:
        self.canvas.add_overlay_item(item)
        item.setVisible(self.visible)
        self.items.append(item)
        return item

    def clear(self) -> None:
        for item in self.items:
            remove = getattr(self.canvas, "remove_overlay_item", None)
            if remove is not None:
                remove(item)
            else:
                vb = item.getViewBox()
                if vb is not None:
                    vb.removeItem(item)
                elif item.scene() is not None:
                    item.scene().removeItem(item)
        self.items = []

    def set_visible(self, visible: bool) -> None:
        self.visible = visible
        for item in self.items:
            item.setVisible(visible)


# ---------------------------------------------------------------------- bottleneck cut
def cut_caption(cut: BottleneckCut, all_nodes: Sequence[str], num_compute: int | None) -> str:
    """Two or three lines naming S* (or its complement when that is shorter) and its numbers."""
    inside = set(cut.nodes)
    outside = [n for n in all_nodes if n not in inside]
    if 0 < len(outside) <= 3 and len(outside) < len(cut.nodes):
        which = f"S* = all nodes except {', '.join(outside)}"
    elif len(cut.nodes) <= 4:
        which = f"S* = {{{', '.join(cut.nodes)}}}"
    else:
        which = f"S* = {len(cut.nodes)} shaded nodes"
    bw = cut.egress_bandwidth
    lines = [
        f"Bottleneck cut: {which}",
        f"|S*∩Vc| = {cut.compute_nodes_inside},  B⁺(S*) = {_bw_text(bw)} GB/s "
        f"on {len(cut.links)} link{'s' * (len(cut.links) != 1)} leaving S* (dashed)",
    ]
    if num_compute:
        x = Fraction(bw) / cut.compute_nodes_inside
        lines.append(
            f"algbw* = N·B⁺(S*)/|S*∩Vc| = {num_compute}·{_bw_text(bw)}/{cut.compute_nodes_inside}"
            f" = {float(num_compute * x):.6g} GB/s"
        )
    return "\n".join(lines)


class CornerBadge(QLabel):
    """A caption floating at the top-left corner of a widget (does not pan or zoom)."""

    def __init__(self, text: str, parent: QWidget) -> None:
        super().__init__(text, parent)
        self.setStyleSheet(
            "QLabel { background: rgba(255,255,255,230); color: rgb(183,28,28);"
            " border: 1px solid rgba(211,47,47,150); border-radius: 4px; padding: 3px 6px; }"
        )
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.adjustSize()
        self.move(10, 10)
        self.raise_()

class CutOverlay(_Overlay):
    """Shades the nodes of the bottleneck cut S* and marks the links leaving it, with its numbers."""

    def __init__(self, canvas) -> None:
        super().__init__(canvas)
        self.cut: BottleneckCut | None = None
        self.label_text = ""
        self.badge: CornerBadge | None = None

    def show_cut(self, cut: BottleneckCut | None, num_compute: int | None = None) -> None:
        self.clear()
        self.cut = cut
        if cut is None:
            return
        pos = self.canvas.node_positions()
        inside = [n for n in cut.nodes if n in pos]
        pts = np.array([pos[n] for n in inside], dtype=float).reshape(-1, 2)
        halo = pg.ScatterPlotItem(
            pos=pts,
            size=34,
            symbol="o",
            pen=pg.mkPen(CUT_COLOR[:3] + (90,), width=1),
            brush=pg.mkBrush(CUT_HALO),
            pxMode=True,
            hoverable=False,
        )
        halo.setZValue(Z_HALO)
        self._add(halo)

        pairs = [(u, v) for u, v, _ in cut.links]
        offset = lane_offset(pos, self.canvas_pairs(pos))
        seg = lane_segments(pos, pairs, offset)
        curve = _curve(CUT_COLOR, 3.0, Z_TREES + 0.5, Qt.PenStyle.DashLine)
        curve.setData(*_pairs_xy(seg))
        self._add(curve)
        heads_seg = chevrons(seg, 2.0 * offset if offset else 0.1)
        heads = _curve(CUT_COLOR, 3.0, Z_TREES + 0.5, segments=len(heads_seg))
        heads.setData(*_pairs_xy(heads_seg))
        self._add(heads)

        self.label_text = cut_caption(cut, list(pos), num_compute)
        if isinstance(self.canvas, QWidget):
            self.badge = CornerBadge(self.label_text, self.canvas)
            self.badge.setVisible(self.visible)
        elif len(pts):
            label = pg.TextItem(
                self.label_text, color=CUT_COLOR, anchor=(0, 1),
                fill=pg.mkBrush(255, 255, 255, 215), border=pg.mkPen(CUT_COLOR[:3] + (140,)),
            )
            margin = 3.0 * offset if offset else 0.05
            if _y_inverted(self.canvas):
                label.setPos(float(pts[:, 0].min()), float(pts[:, 1].min()) - margin)
            else:
                label.setPos(float(pts[:, 0].min()), float(pts[:, 1].max()) + margin)
            label.setZValue(Z_LABEL)
            self._add(label)

    def clear(self) -> None:
        super().clear()
        if self.badge is not None:
            self.badge.hide()
            self.badge.setParent(None)
            self.badge.deleteLater()
            self.badge = None

    def set_visible(self, visible: bool) -> None:
        super().set_visible(visible)
        if self.badge is not None:
            self.badge.setVisible(visible)

    def canvas_pairs(self, pos: Positions) -> list[tuple[str, str]]:
        pairs = getattr(self.canvas, "directed_links", None)
        if callable(pairs):
            return list(pairs())
        return [(u, v) for u, v, _ in (self.cut.links if self.cut else ())]


# ---------------------------------------------------------------------- congestion heat map
class HeatMapOverlay(_Overlay):
    """Per-directed-link congestion (load ÷ bandwidth) with a colour bar and hover tips.

    On a canvas with ``set_link_colors`` (the FabricCanvas) the links themselves are recoloured
    (each half of a full-duplex link by the direction leaving its end); elsewhere the overlay
    draws its own lanes. Links the schedule leaves idle are drawn light grey.
    """

    def __init__(self, canvas) -> None:
        super().__init__(canvas)
        self.cmap = congestion_colormap()
        self.pairs: list[tuple[str, str]] = []
        self.index: dict[tuple[str, str], int] = {}
        self.seg = np.zeros((0, 2, 2))
        self.info: list[tuple[Fraction, Fraction, list[str]]] = []
        self.colors: dict[tuple[str, str], tuple[int, int, int, int]] = {}
        self.color_bar: ColorBarWidget | None = None
        self._hover_proxy = None
        self._recolor = callable(getattr(canvas, "set_link_colors", None))
        levels = self.cmap.map(np.arange(HEAT_BINS + 1) / HEAT_BINS, mode="byte")
        self._lut = [(int(c[0]), int(c[1]), int(c[2]), 255) for c in levels]

    @property
    def active(self) -> bool:
        return bool(self.pairs)

    def color_of(self, load: float) -> tuple[int, int, int, int]:
        """The colour of a load in [0, 1]: one of HEAT_BINS steps (idle links grey)."""
        if load <= 0:
            return IDLE_COLOR
        return self._lut[min(HEAT_BINS, max(1, int(np.ceil(load * HEAT_BINS))))]

    def show_schedule(
        self, schedule: Schedule | None, users: Mapping[tuple[str, str], list[str]] | None = None
    ) -> None:
        """Colour the links by ``schedule``'s load (``users``: precomputed trees_using_links)."""
        self.clear()
        self.pairs, self.info, self.index, self.colors = [], [], {}, {}
        self.seg = np.zeros((0, 2, 2))
        if schedule is None:
            return
        loads = list(schedule.link_load)
        if not loads and schedule.phases:
            loads = list(schedule.phases[-1].link_load)
        if users is None:
            users = trees_using_links(schedule)
        self.pairs = [(ll.source, ll.target) for ll in loads]
        self.index = {p: i for i, p in enumerate(self.pairs)}
        self.info = [
            (ll.bandwidth, ll.load, users.get((ll.source, ll.target), [])) for ll in loads
        ]
        self.colors = {p: self.color_of(float(ll.load)) for p, ll in zip(self.pairs, loads)}
        pos = self.canvas.node_positions()
        offset = lane_offset(pos, self.pairs)
        self.seg = lane_segments(pos, self.pairs, offset)
        self._draw()

    def refresh_geometry(self) -> None:
        """Re-place the lanes after nodes moved (the recoloured canvas links follow by themselves)."""
        if not self.pairs:
            return
        pos = self.canvas.node_positions()
        self.seg = lane_segments(pos, self.pairs, lane_offset(pos, self.pairs))
        if not self._recolor:
            super().clear()
            self._draw()

    def _draw(self) -> None:
        if self._recolor:
            self.canvas.set_link_colors(self.colors if self.visible else None)
        else:
            load = np.array([float(i[1]) for i in self.info], dtype=float)
            idle = load <= 0
            if idle.any():
                c = _curve(IDLE_COLOR, 1.2, Z_HEAT, Qt.PenStyle.DotLine)
                c.setData(*_pairs_xy(self.seg[idle]))
                self._add(c)
            bins = np.clip(np.ceil(load * HEAT_BINS).astype(int), 1, HEAT_BINS)
            for b in np.unique(bins[~idle]):
                mask = (bins == b) & ~idle
                level = b / HEAT_BINS
                c = _curve(self.cmap.map(level, mode="qcolor"), 2.0 + 3.0 * level, Z_HEAT + level,
                           segments=int(mask.sum()))
                c.setData(*_pairs_xy(self.seg[mask]))
                self._add(c)
            self._ensure_hover()
        self._sync_bar()

    def attach_color_bar(self, parent_widget) -> ColorBarWidget:
        """A colour bar (0..1, load ÷ bandwidth) floating at the top right of ``parent_widget``."""
        if self.color_bar is None:
            self.color_bar = ColorBarWidget(self.cmap, "link load ÷ bandwidth", parent_widget)
            self._sync_bar()
        return self.color_bar

    def _sync_bar(self) -> None:
        if self.color_bar is not None:
            self.color_bar.setVisible(self.visible and self.active)

    def set_visible(self, visible: bool) -> None:
        super().set_visible(visible)
        if self._recolor and self.active:
            self.canvas.set_link_colors(self.colors if visible else None)
        self._sync_bar()

    def clear(self) -> None:
        super().clear()
        if self._recolor and self.colors:
            self.canvas.set_link_colors(None)
        self.pairs, self.info, self.index, self.colors = [], [], {}, {}
        self._sync_bar()

    # ------------------------------------------------------------------ hover
    def link_at(self, x: float, y: float, pixel: tuple[float, float], tol: float = 7.0) -> int | None:
        """Index of the lane nearest the data point (x, y) within ``tol`` pixels, or None."""
        if not self.pairs:
            return None
        dist = segment_distance_px(self.seg, x, y, pixel)
        i = int(np.argmin(dist))
        return i if dist[i] <= tol else None

    def tooltip(self, index: int, header: bool = True) -> str:
        u, v = self.pairs[index]
        bw, load, users = self.info[index]
        lines = [f"link {u} → {v}"] if header else [f"{u} → {v}:"]
        lines += [
            f"bandwidth {_bw_text(bw)} GB/s",
            f"load {100 * float(load):.1f}% of bandwidth ({float(load * bw):.4g} GB/s at the optimum)",
        ]
        if users:
            shown = ", ".join(users[:8])
            more = f" and {len(users) - 8} more" if len(users) > 8 else ""
            lines.append(f"used by {len(users)} trees: {shown}{more}")
        else:
            lines.append("used by no tree")
        return "\n".join(lines)

    def tooltip_for_pair(self, u: str, v: str) -> str | None:
        """Tip for the physical link between u and v: both directions the schedule knows."""
        parts = [self.tooltip(self.index[p], header=False) for p in ((u, v), (v, u)) if p in self.index]
        if not parts:
            return None
        return f"link {u} — {v}\n" + "\n".join(parts)

    def tooltip_at(self, x: float, y: float, pixel: tuple[float, float]) -> str | None:
        i = self.link_at(x, y, pixel)
        return None if i is None else self.tooltip(i)

    def _ensure_hover(self) -> None:
        if self._hover_proxy is not None or not self.items:
            return
        scene = self.items[0].scene()
        if scene is None:
            return
        self._hover_proxy = pg.SignalProxy(scene.sigMouseMoved, rateLimit=30, slot=self._on_move)

    def _on_move(self, args) -> None:
        if not self.visible or not self.items:
            return
        scene_pos = args[0]
        vb = self.items[0].getViewBox()
        if vb is None or not vb.sceneBoundingRect().contains(scene_pos):
            return
        p = vb.mapSceneToView(scene_pos)
        px = vb.viewPixelSize()
        text = self.tooltip_at(p.x(), p.y(), (px[0], px[1]))
        if text:
            QToolTip.showText(QCursor.pos(), text)
        else:
            QToolTip.hideText()


def _bw_text(bw: Fraction) -> str:
    return f"{bw.numerator}" if bw.denominator == 1 else f"{float(bw):.4g}"


class ColorBarWidget(QWidget):
    """A small vertical colour bar with ticks, floating in a corner of its parent widget."""

    def __init__(self, cmap: pg.ColorMap, title: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.cmap = cmap
        self.title = title
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        font = QFont(self.font())
        font.setPointSizeF(8)
        self.setFont(font)
        fm = self.fontMetrics()
        width = max(fm.horizontalAdvance(title) + 14, 34 + fm.horizontalAdvance("100% (bottleneck)"))
        self.resize(width + 6, 150)
        parent.installEventFilter(self)
        self._place()
        self.raise_()

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            self.move(parent.width() - self.width() - 12, 12)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(QPen(QColor(160, 160, 160)))
        p.setBrush(QColor(255, 255, 255, 225))
        p.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 4, 4)
        p.setFont(self.font())
        p.setPen(QColor(40, 40, 40))
        p.drawText(QRectF(6, 4, self.width() - 12, 16), Qt.AlignmentFlag.AlignLeft, self.title)
        top, bottom, x0, w = 26.0, float(self.height() - 12), 10.0, 16.0
        grad = QLinearGradient(0, bottom, 0, top)
        for t in np.linspace(0, 1, 11):
            grad.setColorAt(float(t), self.cmap.map(float(t), mode="qcolor"))
        p.fillRect(QRectF(x0, top, w, bottom - top), grad)
        p.setPen(QColor(90, 90, 90))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(x0, top, w, bottom - top))
        for t in (0.0, 0.25, 0.5, 0.75, 1.0):
            y = bottom - t * (bottom - top)
            p.drawLine(QPointF(x0 + w, y), QPointF(x0 + w + 4, y))
            label = f"{int(100 * t)}%" + (" (bottleneck)" if t == 1.0 else "")
            p.drawText(QPointF(x0 + w + 7, y + 4), label)
        p.end()


def tree_label(root: str, index: int, phase: str | None = None) -> str:
    prefix = {"reduce-scatter": "RS:", "allgather": "AG:"}.get(phase or "", "")
    return f"{prefix}{root}#{index}"


def trees_using_links(schedule: Schedule) -> dict[tuple[str, str], list[str]]:
    """Directed physical link (u, v) -> labels ``root#index`` of the trees whose paths cross it."""
    users: dict[tuple[str, str], list[str]] = {}
    counters: dict[tuple[str, str], int] = {}
    multi = bool(schedule.phases)
    for phase, tree in schedule.all_trees():
        key = (phase, tree.root)
        idx = counters.get(key, 0)
        counters[key] = idx + 1
        label = tree_label(tree.root, idx, phase if multi else None)
        seen: set[tuple[str, str]] = set()
        for e in tree.edges:
            for a, b in zip(e.path[:-1], e.path[1:]):
                if (a, b) not in seen:
                    seen.add((a, b))
                    users.setdefault((a, b), []).append(label)
    return users


# ---------------------------------------------------------------------- trees
def tree_hop_pairs(tree: Tree) -> list[tuple[str, str]]:
    """Physical hops (u, v) of every edge of ``tree``, in the edges' order (data-flow direction)."""
    return [(a, b) for e in tree.edges for a, b in zip(e.path[:-1], e.path[1:])]


def last_hops(paths: Iterable[Sequence[str]]) -> list[tuple[str, str]]:
    """The final physical hop of each path: where an arrowhead shows the data's direction."""
    return [(p[-2], p[-1]) for p in paths if len(p) >= 2]


class TreeOverlay(_Overlay):
    """The selected trees drawn along their physical paths with arrowheads (data direction)."""

    def __init__(self, canvas) -> None:
        super().__init__(canvas)
        self.trees: list[tuple[str, Tree]] = []

    @staticmethod
    def color_of(i: int) -> tuple[int, int, int]:
        """The colour of the ``i``-th shown tree (matches the swatch in the trees list)."""
        return TREE_PALETTE[i % len(TREE_PALETTE)]

    def show_trees(self, trees: Sequence[tuple[str, Tree]]) -> None:
        """Draw ``trees`` (tree ``i`` in :meth:`color_of` ``(i)``)."""
        self.clear()
        self.trees = list(trees)
        if not self.trees:
            return
        pos = self.canvas.node_positions()
        all_pairs = [p for _, t in self.trees for p in tree_hop_pairs(t)]
        offset = lane_offset(pos, all_pairs)
        arrow = 2.0 * offset if offset else 0.1
        by_color: dict[int, list[np.ndarray]] = {}
        roots = []
        for i, (_, tree) in enumerate(self.trees):
            lane = offset * (1 + 0.6 * (i % 3))
            seg = lane_segments(pos, tree_hop_pairs(tree), lane)
            heads = chevrons(lane_segments(pos, last_hops(e.path for e in tree.edges), lane), arrow)
            by_color.setdefault(i % len(TREE_PALETTE), []).extend([seg, heads])
            if tree.root in pos:
                roots.append(pos[tree.root])
        width = 2.5 if len(self.trees) <= 4 else 1.8
        for ci, segs in by_color.items():
            seg = np.concatenate(segs)
            c = _curve(TREE_PALETTE[ci] + (230,), width, Z_TREES, segments=len(seg))
            c.setData(*_pairs_xy(seg))
            self._add(c)
        if roots:
            star = pg.ScatterPlotItem(
                pos=np.array(roots, dtype=float),
                size=20,
                symbol="star",
                pen=pg.mkPen(40, 40, 40),
                brush=pg.mkBrush(255, 214, 0),
                hoverable=False,
            )
            star.setZValue(Z_LABEL - 1)
            self._add(star)


# ---------------------------------------------------------------------- broadcast animation
class BroadcastAnimation(QObject):
    """Plays the selected trees depth by depth: which nodes hold the data after each step.

    For allgather (out-trees) step d sends along the edges into depth d; for reduce-scatter
    (aggregation trees) the steps run from the deepest edges up to the root.

    Signals
    -------
    step_changed(step: int, steps: int, text: str)
    playing_changed(playing: bool)
    """

    step_changed = Signal(int, int, str)
    playing_changed = Signal(bool)

    def __init__(self, canvas, interval_ms: int = 800, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.overlay = _Overlay(canvas)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.trees: list[tuple[str, Tree]] = []
        self.levels: list[list[tuple[str, str, tuple[str, ...]]]] = []  # per step: (from, to, path)
        self.step = 0

    @property
    def steps(self) -> int:
        return len(self.levels)

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    def set_trees(self, trees: Sequence[tuple[str, Tree]]) -> None:
        self.pause()
        self.trees = list(trees)
        self.levels = []
        for phase, tree in self.trees:
            depth = tree.depth_of()
            height = max(depth.values()) if depth else 0
            aggregate = phase == "reduce-scatter"
            for e in tree.edges:
                child = e.dst if depth.get(e.dst, 0) > depth.get(e.src, 0) else e.src
                d = depth[child]
                step = (height - d + 1) if aggregate else d
                while len(self.levels) < step:
                    self.levels.append([])
                self.levels[step - 1].append((e.src, e.dst, e.path))
        self.step = 0
        self._render()

    def play(self) -> None:
        if not self.levels:
            return
        if self.step >= self.steps:
            self.step = 0
            self._render()
        self.timer.start()
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self.playing_changed.emit(False)

    def advance(self) -> None:
        """One step forward (wraps to the start after the last step)."""
        if not self.levels:
            return
        self.step = self.step + 1 if self.step < self.steps else 0
        self._render()

    def reset(self) -> None:
        self.pause()
        self.step = 0
        self._render()

    def stop(self) -> None:
        """Stop and remove the drawing."""
        self.pause()
        self.trees, self.levels, self.step = [], [], 0
        self.overlay.clear()

    def _tick(self) -> None:
        if self.step >= self.steps:
            self.pause()
            return
        self.advance()
        if self.step >= self.steps:
            self.pause()

    def holders(self) -> set[str]:
        """Compute nodes holding (a part of) the data after the current step."""
        have: set[str] = set()
        aggregate = any(p == "reduce-scatter" for p, _ in self.trees)
        if not aggregate:
            have |= {t.root for _, t in self.trees}
        for level in self.levels[: self.step]:
            for src, dst, _ in level:
                have.add(dst)
        return have

    def _render(self) -> None:
        self.overlay.clear()
        if not self.trees:
            self.step_changed.emit(0, 0, "")
            return
        canvas = self.overlay.canvas
        pos = canvas.node_positions()
        current = self.levels[self.step - 1] if 0 < self.step <= self.steps else []

        def hops(edges):
            return [(a, b) for _, _, path in edges for a, b in zip(path[:-1], path[1:])]

        all_pairs = hops([p for level in self.levels for p in level])
        offset = lane_offset(pos, all_pairs)
        if current:  # the transfers of this step (earlier ones stay visible in the tree overlay)
            seg = lane_segments(pos, hops(current), offset)
            heads = chevrons(
                lane_segments(pos, last_hops(p for _, _, p in current), offset),
                2.2 * offset or 0.1,
            )
            seg = np.concatenate([seg, heads])
            c = _curve(ANIM_CURRENT, 4.5, Z_ANIM, segments=len(seg))
            c.setData(*_pairs_xy(seg))
            self.overlay._add(c)
        have = [pos[n] for n in self.holders() if n in pos]
        if have:
            s = pg.ScatterPlotItem(
                pos=np.array(have, dtype=float), size=26, symbol="o",
                pen=pg.mkPen(ANIM_CURRENT[:3], width=2), brush=pg.mkBrush(ANIM_REACHED),
                hoverable=False,
            )
            s.setZValue(Z_ANIM - 0.5)
            self.overlay._add(s)
        n_compute = len({n for _, t in self.trees for n in t.depth_of()})
        if any(p == "reduce-scatter" for p, _ in self.trees):
            sent = {src for level in self.levels[: self.step] for src, _, _ in level}
            what = f"{len(sent)}/{n_compute} nodes have sent their partial sums"
        else:
            what = f"{len(self.holders())}/{n_compute} nodes hold data"
        text = f"step {self.step}/{self.steps}: {len(current)} transfers, {what}"
        self.step_changed.emit(self.step, self.steps, text)


# ---------------------------------------------------------------------- out-of-service links
class DisabledLinksOverlay(_Overlay):
    """Links taken out of service for a what-if, marked with a dashed line and a cross.

    Needed while the heat map recolours the canvas links (which hides the canvas's own
    disabled style).
    """

    COLOR = (55, 55, 55, 230)

    def show_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        self.clear()
        pos = self.canvas.node_positions()
        seg = lane_segments(pos, list(pairs), 0.0)
        seg = seg[~np.isnan(seg).any(axis=(1, 2))]
        if not len(seg):
            return
        c = _curve(self.COLOR, 2.0, Z_TREES + 0.2, Qt.PenStyle.DashLine)
        c.setData(*_pairs_xy(seg))
        self._add(c)
        marks = pg.ScatterPlotItem(
            pos=seg.mean(axis=1), size=13, symbol="x", pen=None, brush=pg.mkBrush(*self.COLOR),
            hoverable=False,
        )
        marks.setZValue(Z_TREES + 0.3)
        self._add(marks)


# ---------------------------------------------------------------------- a stand-alone host
class PlotCanvasHost:
    """The overlay API on a bare pyqtgraph PlotItem (used when no FabricCanvas is at hand)."""

    def __init__(self, plot_item: pg.PlotItem, positions: Positions) -> None:
        self.plot_item = plot_item
        self._positions = dict(positions)

    def node_positions(self) -> dict[str, tuple[float, float]]:
        return dict(self._positions)

    def add_overlay_item(self, item) -> None:
        self.plot_item.addItem(item)

    def remove_overlay_item(self, item) -> None:
        self.plot_item.removeItem(item)
