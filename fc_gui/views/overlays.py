"""Result overlays drawn on the fabric canvas: bottleneck cut, congestion heat map, trees and
out-of-service links.

Every overlay draws pyqtgraph items on an :class:`OverlayHost` (the :class:`FabricCanvas`) at
node positions from ``host.node_positions()``. Drawing is batched: one :class:`PlotCurveItem`
(``connect='pairs'``) per colour class, one :class:`ScatterPlotItem` per marker kind, so a
1000-node fabric stays fast. Directed links are drawn on lanes (:mod:`fc_gui.model.lanes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Protocol

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from fc_gui.model.lanes import chevrons, lane_offset, lane_segments
from fc_gui.model.result_text import bw_text, cut_caption, plural
from fc_gui.model.trees import last_hops, tree_hop_pairs, trees_using_links
from fc_gui.views.overlay_widgets import ColorBarWidget, CornerBadge
from solver.model.schedule import BottleneckCut, Schedule, Tree

#: Z values: above the canvas's links (and groups), the cut halo below the nodes.
Z_HALO = 5
Z_HEAT = 8
Z_TREES = 9
Z_ANIM = 10
Z_LABEL = 30

CUT_COLOR = (211, 47, 47)
CUT_HALO = (229, 57, 53, 45)
IDLE_COLOR = (150, 150, 150, 110)

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

#: Opacity of a stale result's overlay items (the fabric changed since the solve).
STALE_OPACITY = 0.3

#: Opacity of the other layers while a tree is animated (so the animation stands out).
DIM_OPACITY = 0.2

#: Above this many segments an overlay curve is drawn without antialiasing: antialiased wide
#: lines cost ~0.1-0.2 ms per segment per repaint in Qt's raster engine (two trees of 16x DGX
#: A100 = 540 segments took 90 ms per frame antialiased, 11 ms without).
AA_SEGMENT_LIMIT = 250


class OverlayHost(Protocol):
    """What an overlay needs from the canvas it draws on (the :class:`FabricCanvas` API).

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

    def node_positions(self) -> dict[str, tuple[float, float]]:
        """{node id: (x, y)} in data coordinates."""

    def directed_links(self) -> list[tuple[str, str]]:
        """(source, target) of every drawn link direction."""

    def add_overlay_item(self, item, z: float | None = None) -> None:
        """Draw a pyqtgraph item in data coordinates."""

    def remove_overlay_item(self, item) -> None:
        """Remove an item added with :meth:`add_overlay_item`."""

    def set_link_colors(self, colors: Mapping[tuple[str, str], tuple] | None) -> None:
        """Colour the links per direction (None: the normal look)."""

    def overlay_parent(self) -> QWidget:
        """The widget floating captions (cut badge, colour bar) sit on."""


def congestion_colormap() -> pg.ColorMap:
    """Blue (idle) → yellow → red (saturated): colour of load ÷ bandwidth in [0, 1]."""
    return pg.ColorMap(
        pos=[0.0, 0.45, 0.75, 1.0],
        color=[(49, 130, 189), (254, 224, 139), (244, 109, 67), (165, 0, 38)],
    )


def greyed_color(color: Sequence[int]) -> tuple[int, int, int, int]:
    """A faded grey of the same lightness (how a stale result's colours are drawn)."""
    r, g, b = color[:3]
    alpha = color[3] if len(color) > 3 else 255
    grey = round(0.299 * r + 0.587 * g + 0.114 * b)
    grey = 150 + (grey * 90) // 255  # light: 150..240, readable but clearly not a result
    return (grey, grey, grey, min(alpha, 160))


def pairs_xy(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y arrays of segments (n, 2, 2) for a ``connect='pairs'`` curve."""
    flat = seg.reshape(-1, 2)
    return np.ascontiguousarray(flat[:, 0]), np.ascontiguousarray(flat[:, 1])


def segments_curve(
    color, width: float, z: float, style=Qt.PenStyle.SolidLine, segments: int = 0
) -> pg.PlotCurveItem:
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


class CanvasOverlay:
    """Base: owns items on a host; ``clear()`` removes them, ``set_visible()`` toggles them."""

    def __init__(self, canvas: OverlayHost) -> None:
        self.canvas = canvas
        self.items: list[pg.GraphicsObject] = []
        self.visible = True
        self.greyed = False
        self.dimmed = False

    def opacity(self) -> float:
        """The items' opacity: faded when stale, fainter still while dimmed."""
        return (STALE_OPACITY if self.greyed else 1.0) * (DIM_OPACITY if self.dimmed else 1.0)

    def add(self, item: pg.GraphicsObject) -> pg.GraphicsObject:
        self.canvas.add_overlay_item(item)
        item.setVisible(self.visible)
        item.setOpacity(self.opacity())
        self.items.append(item)
        return item

    def set_greyed(self, greyed: bool) -> None:
        """Grey the overlay out (a stale result) or restore it."""
        self.greyed = bool(greyed)
        for item in self.items:
            item.setOpacity(self.opacity())

    def set_dimmed(self, dimmed: bool) -> None:
        """Fade the overlay into the background (while a tree is animated) or restore it."""
        self.dimmed = bool(dimmed)
        for item in self.items:
            item.setOpacity(self.opacity())

    def clear(self) -> None:
        for item in self.items:
            self.canvas.remove_overlay_item(item)
        self.items = []

    def set_visible(self, visible: bool) -> None:
        self.visible = visible
        for item in self.items:
            item.setVisible(visible)


# ---------------------------------------------------------------------- bottleneck cut
class CutOverlay(CanvasOverlay):
    """Shades the nodes of the bottleneck cut S* and marks the links leaving it, with its numbers."""

    def __init__(self, canvas: OverlayHost) -> None:
        super().__init__(canvas)
        self.cut: BottleneckCut | None = None
        self.label_text = ""
        self.badge: CornerBadge | None = None
        self.caption_shown = True  # the corner caption (lecture mode shows it in its panel)

    def show_cut(
        self,
        cut: BottleneckCut | None,
        num_compute: int | None = None,
        groups: Mapping[str, str | None] | None = None,
        kinds: Mapping[str, tuple[str, str]] | None = None,
        extra: str = "",
    ) -> None:
        """Shade S*, dash the links leaving it, caption it (``groups``: node -> box, to name S*
        or its complement by boxes; ``kinds``: node -> (kind, role), to name a big one by its
        GPUs; ``extra``: a last caption line, e.g. which switch raises the allreduce figure)."""
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
        self.add(halo)

        pairs = [(u, v) for u, v, _ in cut.links]
        offset = lane_offset(pos, self.canvas.directed_links())
        seg = lane_segments(pos, pairs, offset)
        curve = segments_curve(CUT_COLOR, 3.0, Z_TREES + 0.5, Qt.PenStyle.DashLine)
        curve.setData(*pairs_xy(seg))
        self.add(curve)
        heads_seg = chevrons(seg, 2.0 * offset if offset else 0.1)
        heads = segments_curve(CUT_COLOR, 3.0, Z_TREES + 0.5, segments=len(heads_seg))
        heads.setData(*pairs_xy(heads_seg))
        self.add(heads)

        everything = getattr(self.canvas, "all_node_ids", None)  # the summary shows fewer
        self.label_text = cut_caption(
            cut, everything() if everything else list(pos), num_compute, groups, kinds
        )
        shade = getattr(self.canvas, "set_cut_nodes", None)
        if shade is not None:  # the summary view shades the aggregates inside S*
            shade(cut.nodes, cut.links)
        if extra:
            self.label_text += "\n" + extra
        self.badge = CornerBadge(self.label_text, self.canvas.overlay_parent())
        self.badge.set_greyed(self.greyed)
        self.badge.set_dimmed(self.dimmed)
        self.badge.setVisible(self.visible and self.caption_shown)

    def set_greyed(self, greyed: bool) -> None:
        super().set_greyed(greyed)
        if self.badge is not None:
            self.badge.set_greyed(self.greyed)

    def set_dimmed(self, dimmed: bool) -> None:
        super().set_dimmed(dimmed)
        if self.badge is not None:
            self.badge.set_dimmed(self.dimmed)

    def clear(self) -> None:
        super().clear()
        shade = getattr(self.canvas, "set_cut_nodes", None)
        if shade is not None and self.cut is not None:
            shade(None)
        if self.badge is not None:
            self.badge.hide()
            self.badge.setParent(None)
            self.badge.deleteLater()
            self.badge = None

    def set_visible(self, visible: bool) -> None:
        super().set_visible(visible)
        if self.badge is not None:
            self.badge.setVisible(visible and self.caption_shown)
        shade = getattr(self.canvas, "set_cut_nodes", None)
        if shade is not None and self.cut is not None:
            if visible:
                shade(self.cut.nodes, self.cut.links)
            else:
                shade(None)

    def set_caption_shown(self, shown: bool) -> None:
        """Show the corner caption with the cut (default) or only the shading."""
        self.caption_shown = bool(shown)
        if self.badge is not None:
            self.badge.setVisible(self.visible and self.caption_shown)


# ---------------------------------------------------------------------- congestion heat map
class HeatMapOverlay(CanvasOverlay):
    """Per-directed-link congestion (load ÷ bandwidth) with a colour bar and hover tips.

    The host's links themselves are recoloured (each half of a full-duplex link by the direction
    leaving its end); links the schedule leaves idle are drawn light grey.
    """

    def __init__(self, canvas: OverlayHost) -> None:
        super().__init__(canvas)
        self.cmap = congestion_colormap()
        self.pairs: list[tuple[str, str]] = []
        self.index: dict[tuple[str, str], int] = {}
        self.info: list[tuple[Fraction, Fraction, list[str]]] = []
        self.colors: dict[tuple[str, str], tuple[int, int, int, int]] = {}
        self.color_bar: ColorBarWidget | None = None
        self.yielded = False  # another map (the studies' impact map) colours the links
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
        if schedule is None:
            return
        loads = list(schedule.link_load)
        if not loads and schedule.phases:
            loads = list(schedule.phases[-1].link_load)
        if users is None:
            users = trees_using_links(schedule)
        self.pairs = [(ll.source, ll.target) for ll in loads]
        self.index = {p: i for i, p in enumerate(self.pairs)}
        self.info = [(ll.bandwidth, ll.load, users.get((ll.source, ll.target), [])) for ll in loads]
        self.colors = {p: self.color_of(float(ll.load)) for p, ll in zip(self.pairs, loads)}
        if not self.yielded:
            self.canvas.set_link_colors(self.shown_colors() if self.visible else None)
        self._sync_bar()

    def shown_colors(self) -> dict[tuple[str, str], tuple[int, int, int, int]]:
        """The link colours drawn: the heat map's, or their faded greys for a stale result."""
        if not self.greyed:
            return self.colors
        return {p: greyed_color(c) for p, c in self.colors.items()}

    def set_greyed(self, greyed: bool) -> None:
        super().set_greyed(greyed)
        if self.active and self.visible and not self.yielded:
            self.canvas.set_link_colors(self.shown_colors())
        if self.color_bar is not None:
            self.color_bar.set_greyed(self.greyed)

    def set_dimmed(self, dimmed: bool) -> None:
        super().set_dimmed(dimmed)
        if self.color_bar is not None:
            self.color_bar.set_dimmed(self.dimmed)

    def attach_color_bar(self) -> ColorBarWidget:
        """A colour bar (0..1, load ÷ bandwidth) floating at the top right of the host."""
        if self.color_bar is None:
            self.color_bar = ColorBarWidget(
                self.cmap, "link load ÷ bandwidth", self.canvas.overlay_parent()
            )
            self._sync_bar()
        return self.color_bar

    def _sync_bar(self) -> None:
        if self.color_bar is not None:
            self.color_bar.setVisible(self.visible and self.active and not self.yielded)

    def set_visible(self, visible: bool) -> None:
        super().set_visible(visible)
        if self.active and not self.yielded:
            self.canvas.set_link_colors(self.shown_colors() if visible else None)
        self._sync_bar()

    def set_yielded(self, yielded: bool) -> None:
        """Leave the links (and the top-right corner) to another map while ``yielded``; its
        colours and colour bar come back when it ends."""
        if bool(yielded) == self.yielded:
            return
        self.yielded = bool(yielded)
        if not self.yielded and self.active:
            self.canvas.set_link_colors(self.shown_colors() if self.visible else None)
        self._sync_bar()

    def clear(self) -> None:
        super().clear()
        if self.colors and not self.yielded:
            self.canvas.set_link_colors(None)
        self.pairs, self.info, self.index, self.colors = [], [], {}, {}
        self._sync_bar()

    # ------------------------------------------------------------------ hover
    def tooltip(self, index: int, header: bool = True) -> str:
        u, v = self.pairs[index]
        bw, load, users = self.info[index]
        lines = [f"link {u} → {v}"] if header else [f"{u} → {v}:"]
        lines += [
            f"bandwidth {bw_text(bw)} GB/s",
            f"load {100 * float(load):.1f}% of bandwidth ({float(load * bw):.4g} GB/s at the optimum)",
        ]
        if users:
            shown = ", ".join(users[:8])
            more = f" and {len(users) - 8} more" if len(users) > 8 else ""
            lines.append(f"used by {plural(len(users), 'tree')}: {shown}{more}")
        else:
            lines.append("used by no tree")
        return "\n".join(lines)

    def tooltip_for_pair(self, u: str, v: str) -> str | None:
        """Tip for the physical link between u and v: both directions the schedule knows."""
        parts = [
            self.tooltip(self.index[p], header=False) for p in ((u, v), (v, u)) if p in self.index
        ]
        if not parts:
            return None
        return f"link {u} — {v}\n" + "\n".join(parts)


# ---------------------------------------------------------------------- trees
class TreeOverlay(CanvasOverlay):
    """The selected trees drawn along their physical paths with arrowheads (data direction)."""

    def __init__(self, canvas: OverlayHost) -> None:
        super().__init__(canvas)
        self.trees: list[tuple[str, Tree]] = []

    @staticmethod
    def color_of(i: int) -> tuple[int, int, int]:
        """The colour of the ``i``-th shown tree (matches the swatch in the trees list)."""
        return TREE_PALETTE[i % len(TREE_PALETTE)]

    def show_trees(
        self, trees: Sequence[tuple[str, Tree]], lane_pairs: Sequence[tuple[str, str]] | None = None
    ) -> None:
        """Draw ``trees`` (tree ``i`` in :meth:`color_of` ``(i)``); ``lane_pairs``: the hops
        that size the lanes and arrowheads (default: the trees' own; a tree drawn level by level
        passes its whole tree's, so they keep their size from level to level)."""
        self.clear()
        self.trees = list(trees)
        if not self.trees:
            return
        pos = self.canvas.node_positions()
        all_pairs = [p for _, t in self.trees for p in tree_hop_pairs(t)]
        offset = lane_offset(pos, all_pairs if lane_pairs is None else lane_pairs)
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
            c = segments_curve(TREE_PALETTE[ci] + (230,), width, Z_TREES, segments=len(seg))
            c.setData(*pairs_xy(seg))
            self.add(c)
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
            self.add(star)


# ---------------------------------------------------------------------- out-of-service links
class DisabledLinksOverlay(CanvasOverlay):
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
        c = segments_curve(self.COLOR, 2.0, Z_TREES + 0.2, Qt.PenStyle.DashLine)
        c.setData(*pairs_xy(seg))
        self.add(c)
        marks = pg.ScatterPlotItem(
            pos=seg.mean(axis=1),
            size=13,
            symbol="x",
            pen=None,
            brush=pg.mkBrush(*self.COLOR),
            hoverable=False,
        )
        marks.setZValue(Z_TREES + 0.3)
        self.add(marks)
