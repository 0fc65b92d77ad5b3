"""Slide-ready figures: the fabric (with the shown result) as a true vector SVG.

Everything is drawn as SVG shapes -- nodes as circles/polygons in their role's colour, links as
lines (width by bandwidth class, heat-map colour when the heat map is shown), the cut's shaded
nodes and dashed links, group frames, a legend *with* the role symbols and the congestion colour
bar -- no embedded bitmaps. PNG figures are this SVG rendered at any width
(:func:`fc_gui.controllers.figure.save_figure`). No Qt here: the text is built from plain data.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

import numpy as np

from fc_gui.model.link_labels import CHAR_W, bandwidth_text, label_order, place_labels
from fc_gui.model.parallel_links import PARALLEL_GAP, parallel_slots, shift_segments
from fc_gui.views.style import (
    BACKGROUND,
    GROUP_EDGE,
    GROUP_FILL,
    LINK_COLOR,
    LINK_LABEL_COLOR,
    LINK_WIDTH_CLASSES,
    RoleStyle,
    role_style_cached,
    width_classes,
)

CUT_RGB = (183, 28, 28)
ANIM_RGB = (216, 27, 96)
REACHED_RGB = (255, 213, 79)
DIM_OPACITY = 0.2  # as the canvas (fc_gui.views.overlays.DIM_OPACITY)
NODE_SCALE = 1.0  # figure pixels per style pixel
MARGIN = 30.0
LEGEND_W = 190.0
#: The cut caption under the title: baseline of its first line, line pitch, font size, and the
#: width of a character, generous so the estimate never falls short of the real text.
CAPTION_Y = MARGIN + 40.0
CAPTION_LINE = 18.0
CAPTION_PX = 14
CAPTION_CHAR_W = 0.62 * CAPTION_PX
#: Clear space between the caption and the group frames' labels (their text is 12 px, 4 px
#: above the frame), and the frames' padding around their nodes (the cut's halo has radius 17).
CAPTION_GAP = 14.0
FRAME_LABEL_PX = 16.0
FRAME_PAD = 20.0
#: Text size: the figure is laid out in *design* units and scaled to its pixel width, so that
#: at 100 % text size one design unit is ``width / TEXT_WIDTH`` pixels (never less than 1): the
#: smallest text (11 units: node names, colour-bar ticks) is 19 px on a 1920 px slide, the title
#: 35 px. The text-size setting multiplies that.
TEXT_WIDTH = 1100.0
SMALLEST_TEXT = 11.0
LABEL_CHAR_W = 0.62 * SMALLEST_TEXT  # generous width of one character of a node name
TITLE_CHAR_W = 0.7 * 20  # the bold 20-unit title, wrapped at spaces
TITLE_LINE = 25.0
LINK_LABEL_PX = 12.0  # "25 GB/s" on the links (bold)


@dataclass
class FigureData:
    """What a figure shows, in scene units (y down)."""

    title: str
    nodes: list[tuple[str, str, str, float, float, str | None]]  # id, kind, role, x, y, group
    links: list[tuple[str, str, float]]  # source, target, bandwidth
    link_colors: Mapping[tuple[str, str], Sequence[int]] = field(default_factory=dict)
    cut_nodes: frozenset[str] = frozenset()
    cut_links: list[tuple[str, str]] = field(default_factory=list)
    caption: str = ""
    color_bar: list[tuple[float, Sequence[int]]] | None = None  # (position 0..1, rgb) stops
    color_bar_title: str = "link load ÷ bandwidth"
    show_labels: bool = True
    notes: list[str] = field(default_factory=list)  # dark text lines under the caption
    table: list[Sequence[str]] = field(default_factory=list)  # rows under the notes (1st: header)
    tree_paths: list[tuple[tuple[str, ...], Sequence[int]]] = field(default_factory=list)
    tree_roots: frozenset[str] = frozenset()
    current_paths: list[tuple[str, ...]] = field(default_factory=list)  # animated transfers
    reached_nodes: frozenset[str] = frozenset()  # nodes holding the animated data
    dimmed: bool = False  # links and cut faded (a tree is animated over them)
    text_scale: float = 1.0  # the text-size setting (1.0 = 100 %)
    link_labels: bool = False  # the bandwidth written on the links ("25 GB/s")


def _rgb(c: Sequence[int]) -> str:
    return f"rgb({int(c[0])},{int(c[1])},{int(c[2])})"


def _alpha(c: Sequence[int]) -> str:
    return f"{(c[3] if len(c) > 3 else 255) / 255:.3g}"


def caption_lines(caption: str, width: float) -> list[str]:
    """The caption's lines, each wrapped at spaces to fit ``width`` pixels (estimated with
    :data:`CAPTION_CHAR_W` per character: SVG does not wrap text)."""
    limit = max(20, int(width // CAPTION_CHAR_W))
    out: list[str] = []
    for line in caption.splitlines():
        out.extend(textwrap.wrap(line, limit, break_long_words=False) or [""])
    return out


def note_chars(width: float, text_scale: float = 1.0) -> int:
    """How many characters of the notes fit on one line of a figure ``width`` pixels wide."""
    dw = width / design_unit(width, text_scale)
    return max(20, int((dw - 2 * MARGIN) // (0.6 * 15)))


def note_lines(notes: Sequence[str], width: float) -> list[str]:
    """The notes (15 units, dark), a line too long for ``width`` wrapped at spaces with its
    indent kept (the text size setting can make the figure narrower than the lecture's lines)."""
    limit = max(20, int(width // (0.6 * 15)))
    out: list[str] = []
    for line in notes:
        if len(line) <= limit:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        out.extend(
            textwrap.wrap(line, limit, subsequent_indent=indent + "  ", break_long_words=False)
            or [""]
        )
    return out


def caption_bottom(lines: int) -> float:
    """The lowest pixel of a caption of ``lines`` lines (descenders included); the title only
    when there is no caption."""
    if not lines:
        return MARGIN + 20.0
    return CAPTION_Y + CAPTION_LINE * (lines - 1) + 0.3 * CAPTION_PX


def node_shape(style: RoleStyle, x: float, y: float, extra: str = "") -> str:
    """One node as an SVG shape: circle, square, diamond, triangle or hexagon."""
    r = style.size * NODE_SCALE / 2
    fill = f'fill="{_rgb(style.color)}" stroke="white" stroke-width="1"{extra}'
    sym = style.symbol
    if sym == "o":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {fill}/>'
    if sym == "s":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" {fill}/>'
    if sym == "d":
        pts = [(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    elif sym.startswith("t"):
        pts = [(x, y - r), (x + r, y + r * 0.8), (x - r, y + r * 0.8)]
    else:  # hexagon
        pts = [
            (x + r * math.cos(a), y + r * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 7)[:-1]
        ]
    p = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
    return f'<polygon points="{p}" {fill}/>'


def design_unit(width: float, text_scale: float = 1.0) -> float:
    """Pixels per design unit of a figure ``width`` pixels wide at ``text_scale``."""
    return max(1.0, width / TEXT_WIDTH) * max(text_scale, 0.5)


def node_inset(data: FigureData) -> float:
    """How far the outermost nodes stay inside the fabric's area: their frame's padding, half
    their name's width, or their symbol's radius, whichever is widest."""
    inset = FRAME_PAD if any(g for *_, g in data.nodes) else 0.0
    for nid, kind, role, *_ in data.nodes:
        inset = max(inset, role_style_cached(kind, role).size * NODE_SCALE / 2 + 2)
        if data.show_labels and len(data.nodes) <= 64:
            inset = max(inset, LABEL_CHAR_W * len(nid) / 2 + 2)
    return inset


def build_svg(data: FigureData, width: float = 1200.0) -> str:
    """The figure as SVG text, ``width`` pixels wide (height follows the fabric's aspect).

    Everything is laid out in design units (``width / design_unit`` of them across) and the
    SVG's viewBox scales them to pixels, so the text grows with the figure and the text-size
    setting and keeps its place beside the fabric."""
    unit = design_unit(width, data.text_scale)
    dw = width / unit  # the design width
    xy = {nid: (x, y) for nid, _, _, x, y, _ in data.nodes}
    if xy:
        xs = [p[0] for p in xy.values()]
        ys = [p[1] for p in xy.values()]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    else:
        x0 = x1 = y0 = y1 = 0.0
    span_x, span_y = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    inset = node_inset(data)
    # the legend beside the fabric, or under it when beside would leave the fabric too little
    side_w = dw - LEGEND_W - 3 * MARGIN - 2 * inset
    legend_below = side_w < 1.5 * LEGEND_W
    plot_w = max(dw - 2 * MARGIN - 2 * inset if legend_below else side_w, 60.0)
    scale = plot_w / span_x
    title = textwrap.wrap(data.title, max(12, int((dw - 2 * MARGIN) // TITLE_CHAR_W))) or [""]
    title_extra = TITLE_LINE * (len(title) - 1)
    caption = caption_lines(data.caption, dw - 2 * MARGIN)
    notes = note_lines(data.notes, dw - 2 * MARGIN)
    notes_y = title_extra + CAPTION_Y + CAPTION_LINE * len(caption)
    table_y = notes_y + 19 * len(notes) + (8 if data.table else 0)
    if data.table:  # the lowest text above the fabric: table, notes or caption
        text_bottom = table_y + 4 + 19 * (len(data.table) - 1) + 0.3 * 15
    elif notes:
        text_bottom = notes_y + 4 + 19 * (len(notes) - 1) + 0.3 * 15
    else:
        text_bottom = title_extra + caption_bottom(len(caption))
    top = text_bottom + CAPTION_GAP + FRAME_LABEL_PX + FRAME_PAD
    plot_h = span_y * scale
    bottom_pad = max(inset, 20 + SMALLEST_TEXT if data.show_labels else 0.0, FRAME_PAD)
    roles = len({role_style_cached(k, r).label for _, k, r, *_ in data.nodes})
    box_h = 16 + 22 * roles
    bar_h = 60 if data.color_bar else 0
    if legend_below:
        legend_at = (MARGIN, top + plot_h + bottom_pad + MARGIN)
        beside = dw - 2 * MARGIN >= 2 * LEGEND_W + MARGIN  # the colour bar beside the box
        bar_at = (
            (MARGIN + LEGEND_W + MARGIN, legend_at[1] + 20)
            if beside
            else (MARGIN, legend_at[1] + box_h + 20)
        )
        legend_h = max(box_h, bar_h + 20) if beside else box_h + 20 + bar_h
        dh = legend_at[1] + legend_h + MARGIN
    else:
        legend_at = (dw - LEGEND_W - MARGIN, top)
        bar_at = (legend_at[0], top + box_h + 20)
        dh = max(top + plot_h + bottom_pad + MARGIN, top + box_h + 20 + bar_h + MARGIN)
    height = round(dh * unit)
    dh = height / unit

    def at(nid: str) -> tuple[float, float]:
        x, y = xy[nid]
        return MARGIN + inset + (x - x0) * scale, top + (y - y0) * scale

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {dw:.3f} {dh:.3f}" font-family="DejaVu Sans, Arial, sans-serif">',
        f"<title>{escape(data.title)}</title>",
        # the background in numbers: a renderer without percentages (Qt's SVG Tiny) would
        # draw width="100%" as 100 units, an off-white square in the corner
        f'<rect x="0" y="0" width="{dw:.3f}" height="{dh:.3f}" fill="{_rgb(BACKGROUND)}"/>',
    ]
    for i, line in enumerate(title):
        out.append(
            f'<text x="{MARGIN}" y="{MARGIN + 14 + TITLE_LINE * i}" font-size="20" '
            f'font-weight="bold">{escape(line)}</text>'
        )
    for i, line in enumerate(caption):
        out.append(
            f'<text x="{MARGIN}" y="{title_extra + CAPTION_Y + CAPTION_LINE * i}" '
            f'font-size="{CAPTION_PX}" '
            f'fill="{_rgb(CUT_RGB)}">{escape(line)}</text>'
        )
    for i, line in enumerate(notes):
        out.append(
            f'<text x="{MARGIN}" y="{notes_y + 4 + 19 * i}" font-size="15" fill="#222" '
            f'xml:space="preserve">{escape(line)}</text>'
        )
    out.extend(_table(data.table, MARGIN, table_y))
    out.extend(_fabric(data, at, scale))
    out.extend(_trees(data, at))
    names = place_node_labels(data, at) if data.show_labels and len(data.nodes) <= 64 else []
    out.extend(_nodes(data, at, names))
    name_boxes = [
        (
            x - LABEL_CHAR_W * len(n) / 2,
            y - SMALLEST_TEXT * 0.8,
            x + LABEL_CHAR_W * len(n) / 2,
            y + SMALLEST_TEXT * 0.25,
        )
        for n, x, y in names
    ]
    out.extend(_link_labels(data, at, scale, (MARGIN / 2, 0.0, dw - MARGIN / 2, dh), name_boxes))
    out.extend(_legend(data, legend_at, bar_at))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _fabric(data: FigureData, at, scale: float) -> list[str]:
    """The group frames, the links (width by bandwidth class, parallel ones side by side) and
    the bottleneck cut, in drawing order."""
    xy = {nid: (x, y) for nid, _, _, x, y, _ in data.nodes}
    out: list[str] = []
    # group frames
    groups: dict[str, list[tuple[float, float]]] = {}
    for nid, _, _, _, _, g in data.nodes:
        if g:
            groups.setdefault(g, []).append(at(nid))
    out.append('<g id="groups">')
    for g, pts in groups.items():
        gx0 = min(p[0] for p in pts) - FRAME_PAD
        gy0 = min(p[1] for p in pts) - FRAME_PAD
        gx1 = max(p[0] for p in pts) + FRAME_PAD
        gy1 = max(p[1] for p in pts) + FRAME_PAD
        out.append(
            f'<rect x="{gx0:.1f}" y="{gy0:.1f}" width="{gx1 - gx0:.1f}" height="{gy1 - gy0:.1f}" '
            f'rx="6" fill="{_rgb(GROUP_FILL)}" stroke="{_rgb(GROUP_EDGE)}"/>'
            f'<text x="{gx0:.1f}" y="{gy0 - 4:.1f}" font-size="12" fill="#555">{escape(g)}</text>'
        )
    out.append("</g>")
    # links
    shown, starts, stops = _segments(data, at, scale)
    classes = width_classes(np.array([bw for *_, bw in shown], dtype=float))
    dim = f' opacity="{DIM_OPACITY}"' if data.dimmed else ""
    out.append(f'<g id="links" stroke-linecap="round"{dim}>')
    for (u, v, _), cls, (ax, ay), (bx, by) in zip(shown, classes, starts, stops, strict=True):
        color = data.link_colors.get((u, v)) or data.link_colors.get((v, u)) or LINK_COLOR
        out.append(
            f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" '
            f'stroke="{_rgb(color)}" stroke-opacity="{_alpha(color)}" '
            f'stroke-width="{LINK_WIDTH_CLASSES[int(cls)]:.1f}"/>'
        )
    out.append("</g>")
    if data.cut_nodes or data.cut_links:
        out.append(f'<g id="cut"{dim}>')
        for nid in data.cut_nodes:
            if nid in xy:
                cx, cy = at(nid)
                out.append(
                    f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="17" fill="{_rgb(CUT_RGB)}" '
                    f'fill-opacity="0.18" stroke="{_rgb(CUT_RGB)}" stroke-opacity="0.35"/>'
                )
        for u, v in data.cut_links:
            if u in xy and v in xy:
                (ax, ay), (bx, by) = at(u), at(v)
                out.append(
                    f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" '
                    f'stroke="{_rgb(CUT_RGB)}" stroke-width="3" stroke-dasharray="8 5"/>'
                )
        out.append("</g>")
    return out


def _segments(data: FigureData, at, scale: float):
    """The links between drawn nodes and their ends as drawn: parallel links side by side at
    the canvas's gap at the figure's scale (4.5 to 9 units)."""
    xy = {nid for nid, *_ in data.nodes}
    shown = [(u, v, bw) for u, v, bw in data.links if u in xy and v in xy]
    starts, stops = shift_segments(
        np.array([at(u) for u, _, _ in shown]).reshape(-1, 2),
        np.array([at(v) for _, v, _ in shown]).reshape(-1, 2),
        parallel_slots([(u, v) for u, v, _ in shown]),
        PARALLEL_GAP * min(max(scale, 0.5), 1.0),
    )
    return shown, starts, stops


def _link_labels(data: FigureData, at, scale: float, bounds, name_boxes) -> list[str]:
    """ "25 GB/s" on the links, clear of one another and of the nodes (rare bandwidths first;
    a label with no free place along its link is left out)."""
    if not data.link_labels:
        return []
    shown, starts, stops = _segments(data, at, scale)
    texts = [bandwidth_text(bw) for *_, bw in shown]
    lengths = np.hypot(*(stops - starts).T) if len(shown) else np.zeros(0)
    order = label_order([bw for *_, bw in shown], lengths)
    nodes = np.array([at(nid) for nid, *_ in data.nodes]).reshape(-1, 2)
    radius = np.array(
        [role_style_cached(k, r).size * NODE_SCALE / 2 + 2 for _, k, r, *_ in data.nodes]
    )
    placed = place_labels(
        starts,
        stops,
        texts,
        LINK_LABEL_PX,
        nodes,
        radius,
        order,
        bounds,
        np.array(name_boxes).reshape(-1, 4),
    )
    out = [
        f'<g id="link-labels" font-size="{LINK_LABEL_PX:g}" font-weight="bold" '
        f'fill="{_rgb(LINK_LABEL_COLOR)}" text-anchor="middle">'
    ]
    for row, cx, cy in placed:
        w = CHAR_W * LINK_LABEL_PX * len(texts[row]) + 4
        out.append(
            f'<rect x="{cx - w / 2:.1f}" y="{cy - 0.62 * LINK_LABEL_PX:.1f}" '
            f'width="{w:.1f}" height="{1.24 * LINK_LABEL_PX:.1f}" rx="2" fill="white" '
            f'fill-opacity="0.88"/>'
            f'<text x="{cx:.1f}" y="{cy + 0.36 * LINK_LABEL_PX:.1f}">'
            f"{escape(texts[row])}</text>"
        )
    out.append("</g>")
    return out


def _nodes(data: FigureData, at, names: list[tuple[str, float, float]]) -> list[str]:
    """The node shapes and their ``names`` (:func:`place_node_labels`)."""
    out: list[str] = []
    out.append('<g id="nodes">')
    for nid, kind, role, *_ in data.nodes:
        x, y = at(nid)
        out.append(node_shape(role_style_cached(kind, role), x, y, f' data-node="{escape(nid)}"'))
    out.append("</g>")
    if names:
        out.append('<g id="labels" font-size="11" fill="#333" text-anchor="middle">')
        for nid, x, y in names:
            out.append(f'<text x="{x:.1f}" y="{y:.1f}">{escape(nid)}</text>')
        out.append("</g>")
    return out


def place_node_labels(data: FigureData, at) -> list[tuple[str, float, float]]:
    """Node names (id, x, baseline y) that overwrite neither one another nor a node: each
    under its node, else above it, else left out (GPUs and NPUs first, then the rest)."""
    pos = {nid: at(nid) for nid, *_ in data.nodes}
    radius = {nid: role_style_cached(k, r).size * NODE_SCALE / 2 for nid, k, r, *_ in data.nodes}
    placed: list[tuple[float, float, float, float]] = []  # x0, y0, x1, y1 of drawn names
    out: list[tuple[str, float, float]] = []
    order = sorted(data.nodes, key=lambda n: n[1] != "compute")

    def clear(box: tuple[float, float, float, float], own: str) -> bool:
        bx0, by0, bx1, by1 = box
        for px0, py0, px1, py1 in placed:
            if bx0 < px1 and px0 < bx1 and by0 < py1 and py0 < by1:
                return False
        for other, (ox, oy) in pos.items():
            r = radius[other]
            if other != own and bx0 < ox + r and ox - r < bx1 and by0 < oy + r and oy - r < by1:
                return False
        return True

    for nid, *_ in order:
        x, y = pos[nid]
        half = LABEL_CHAR_W * len(nid) / 2
        r = radius[nid]
        for base in (y + r + SMALLEST_TEXT, y - r - 4):
            box = (x - half, base - SMALLEST_TEXT * 0.8, x + half, base + SMALLEST_TEXT * 0.25)
            if clear(box, nid):
                placed.append(box)
                out.append((nid, x, base))
                break
    return out


def _table(rows: Sequence[Sequence[str]], x: float, y: float) -> list[str]:
    """Rows as aligned columns (the header bold), ``y`` the top of the first row."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    xs = [x + sum(8.6 * w + 24 for w in widths[:i]) for i in range(len(widths))]
    out = ['<g id="table" font-size="15" fill="#222">']
    for j, row in enumerate(rows):
        weight = ' font-weight="bold"' if j == 0 else ""
        for cx, cell in zip(xs, row):
            out.append(f'<text x="{cx:.1f}" y="{y + 4 + 19 * j:.1f}"{weight}>{escape(cell)}</text>')
    out.append("</g>")
    return out


def _polyline(points: list[tuple[float, float]], color: Sequence[int], width: float) -> str:
    p = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (
        f'<polyline points="{p}" fill="none" stroke="{_rgb(color)}" '
        f'stroke-width="{width:.1f}" stroke-linejoin="round"/>'
    )


def _arrow(a: tuple[float, float], b: tuple[float, float], color: Sequence[int]) -> str:
    """A filled arrow head at 70 % of the hop a→b (the data's direction)."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    d = math.hypot(dx, dy) or 1.0
    ux, uy = dx / d, dy / d
    tx, ty = a[0] + 0.7 * dx, a[1] + 0.7 * dy
    pts = [
        (tx + 7 * ux, ty + 7 * uy),
        (tx - 5 * ux - 5 * uy, ty - 5 * uy + 5 * ux),
        (tx - 5 * ux + 5 * uy, ty - 5 * uy - 5 * ux),
    ]
    return (
        f'<polygon points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}" fill="{_rgb(color)}"/>'
    )


def _trees(data: FigureData, at) -> list[str]:
    """Shown trees along their physical paths, the animated transfers and who holds the data."""
    if not (data.tree_paths or data.current_paths or data.reached_nodes):
        return []
    known = {nid for nid, *_ in data.nodes}
    out = ['<g id="trees">']
    for nid in sorted(data.reached_nodes & known):
        x, y = at(nid)
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="13" fill="{_rgb(REACHED_RGB)}" '
            f'fill-opacity="0.8" stroke="{_rgb(ANIM_RGB)}" stroke-width="2"/>'
        )
    for path, color in data.tree_paths:
        if all(p in known for p in path):
            pts = [at(p) for p in path]
            out.append(_polyline(pts, color, 2.5))
            out.append(_arrow(pts[-2], pts[-1], color))
    for path in data.current_paths:
        if all(p in known for p in path):
            pts = [at(p) for p in path]
            out.append(_polyline(pts, ANIM_RGB, 5.0))
            out.append(_arrow(pts[-2], pts[-1], ANIM_RGB))
    for nid in sorted(data.tree_roots & known):
        x, y = at(nid)
        star = [
            (
                x + (11 if i % 2 == 0 else 4.5) * math.sin(i * math.pi / 5),
                y - (11 if i % 2 == 0 else 4.5) * math.cos(i * math.pi / 5),
            )
            for i in range(10)
        ]
        p = " ".join(f"{px:.1f},{py:.1f}" for px, py in star)
        out.append(f'<polygon points="{p}" fill="rgb(255,214,0)" stroke="rgb(40,40,40)"/>')
    out.append("</g>")
    return out


def _legend(data: FigureData, at: tuple[float, float], bar_at: tuple[float, float]) -> list[str]:
    """The role symbols in a box at ``at`` and the colour bar (when shown) at ``bar_at``."""
    lx, ly = at
    roles: dict[str, RoleStyle] = {}
    for _, kind, role, *_ in data.nodes:
        st = role_style_cached(kind, role)
        roles.setdefault(st.label, st)
    out = ['<g id="legend">']
    h = 16 + 22 * len(roles)
    out.append(
        f'<rect x="{lx:.1f}" y="{ly:.1f}" width="{LEGEND_W:.0f}" height="{h:.0f}" fill="white" '
        'stroke="#bbb"/>'
    )
    for i, (label, st) in enumerate(roles.items()):
        y = ly + 18 + 22 * i
        out.append(node_shape(st, lx + 18, y))
        out.append(f'<text x="{lx + 36:.1f}" y="{y + 4:.1f}" font-size="13">{escape(label)}</text>')
    if data.color_bar:
        lx, by = bar_at
        out.append(
            '<defs><linearGradient id="heat" x1="0" y1="0" x2="1" y2="0">'
            + "".join(f'<stop offset="{p:.3f}" stop-color="{_rgb(c)}"/>' for p, c in data.color_bar)
            + "</linearGradient></defs>"
        )
        out.append(
            f'<text x="{lx:.1f}" y="{by:.1f}" font-size="12">{escape(data.color_bar_title)}</text>'
            f'<rect x="{lx:.1f}" y="{by + 8:.1f}" width="{LEGEND_W:.0f}" height="14" '
            'fill="url(#heat)" stroke="#888"/>'
            f'<text x="{lx:.1f}" y="{by + 38:.1f}" font-size="11">0</text>'
            f'<text x="{lx + LEGEND_W:.1f}" y="{by + 38:.1f}" font-size="11" '
            'text-anchor="end">1</text>'
        )
    out.append("</g>")
    return out
