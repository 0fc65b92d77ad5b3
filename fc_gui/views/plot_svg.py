"""The algbw plot as a true vector SVG (Export › Plot as SVG…): axes, grid, lines with their
symbols, the legend beside the plot area and the note above it. No Qt here: the text is built
from plain data (:class:`PlotData`), as :mod:`fc_gui.views.figure_svg` does for the fabric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

import numpy as np

FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
FONT_PX = 11.0
CHAR_W = 0.6 * FONT_PX  # a generous average glyph width, to size the legend
ROW_H = 16.0
SAMPLE_W = 26.0
PAD = 8.0
LEFT, BOTTOM, TOP = 58.0, 42.0, 12.0


@dataclass(frozen=True)
class PlotLine:
    """One line: x in bytes, y in GB/s; ``symbol`` as pyqtgraph names it (None: no symbols)."""

    name: str
    x: Sequence[float]
    y: Sequence[float]
    color: tuple[int, int, int]
    width: float = 1.5
    dashed: bool = False
    symbol: str | None = None
    opacity: float = 1.0


@dataclass
class PlotData:
    """What the plot shows: view ranges (x as log10 bytes), tick labels, lines, note."""

    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_ticks: Sequence[tuple[float, str]]  # (log10 bytes, label)
    y_ticks: Sequence[tuple[float, str]]
    lines: Sequence[PlotLine] = field(default_factory=list)
    note: str = ""
    x_label: str = "message size"
    y_label: str = "algbw (GB/s)"


def legend_columns(n: int, height: float) -> int:
    """Columns a legend of ``n`` rows needs to fit in ``height`` pixels."""
    rows = max(1, int((height - 2 * PAD) // ROW_H))
    return max(1, math.ceil(n / rows)) if n else 0


def _rgb(c, opacity: float = 1.0) -> str:
    return f'rgb({c[0]},{c[1]},{c[2]})" stroke-opacity="{opacity:g}'


def _symbol(kind: str, x: float, y: float, color, opacity: float, r: float = 3.5) -> str:
    fill = f'fill="rgb({color[0]},{color[1]},{color[2]})" fill-opacity="{opacity:g}"'
    stroke = f'stroke="rgb({color[0]},{color[1]},{color[2]})" stroke-opacity="{opacity:g}"'
    if kind == "o":
        return f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{r}" {fill}/>'
    if kind == "s":
        return f'<rect x="{x - r:.2f}" y="{y - r:.2f}" width="{2 * r}" height="{2 * r}" {fill}/>'
    if kind in ("+", "x"):
        a = r if kind == "+" else r * 0.8
        pts = ((0, -a, 0, a), (-a, 0, a, 0)) if kind == "+" else ((-a, -a, a, a), (-a, a, a, -a))
        return "".join(
            f'<line x1="{x + p[0]:.2f}" y1="{y + p[1]:.2f}" x2="{x + p[2]:.2f}" '
            f'y2="{y + p[3]:.2f}" {stroke} stroke-width="1.5"/>'
            for p in pts
        )
    corners = {
        "t": [(0, 1), (-0.9, -0.6), (0.9, -0.6)],
        "d": [(0, -1.2), (1, 0), (0, 1.2), (-1, 0)],
        "p": [(math.sin(a), -math.cos(a)) for a in np.linspace(0, 2 * math.pi, 6)[:-1]],
        "star": [
            ((1 if i % 2 == 0 else 0.45) * math.sin(a), -(1 if i % 2 == 0 else 0.45) * math.cos(a))
            for i, a in enumerate(np.linspace(0, 2 * math.pi, 11)[:-1])
        ],
    }.get(kind, [(0, -1), (1, 0), (0, 1), (-1, 0)])
    pts = " ".join(f"{x + r * cx:.2f},{y + r * cy:.2f}" for cx, cy in corners)
    return f'<polygon points="{pts}" {fill}/>'


def _line_attrs(line: PlotLine) -> str:
    dash = ' stroke-dasharray="6,4"' if line.dashed else ""
    return (
        f'fill="none" stroke="{_rgb(line.color, line.opacity)}" stroke-width="{line.width:g}" '
        f'stroke-linejoin="round"{dash}'
    )


def build_plot_svg(data: PlotData, width: float = 900.0, height: float = 320.0) -> str:
    """The SVG text of ``data`` at ``width`` x ``height`` pixels (see module docstring)."""
    n = len(data.lines)
    top = TOP + (ROW_H + 4 if data.note else 0)
    cols = legend_columns(n, height - top)
    rows = math.ceil(n / cols) if cols else 0
    col_w = SAMPLE_W + 8 + CHAR_W * max((len(ln.name) for ln in data.lines), default=0)
    legend_w = cols * col_w + 2 * PAD if n else 0.0
    x0, y0 = LEFT, top
    pw = max(50.0, width - LEFT - legend_w - 2 * PAD)
    ph = max(50.0, height - top - BOTTOM)
    (vx0, vx1), (vy0, vy1) = data.x_range, data.y_range

    def px(lx: float) -> float:
        return x0 + (lx - vx0) / (vx1 - vx0) * pw

    def py(v: float) -> float:
        return y0 + ph - (v - vy0) / (vy1 - vy0) * ph

    out = [
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
            f'viewBox="0 0 {width:g} {height:g}" font-family="{FONT}" font-size="{FONT_PX:g}">'
        ),
        "<title>algbw vs message size (ForestColl Designer)</title>",
        f'<rect width="{width:g}" height="{height:g}" fill="rgb(252,252,250)"/>',
        (
            f'<defs><clipPath id="area"><rect x="{x0}" y="{y0}" width="{pw:.2f}" '
            f'height="{ph:.2f}"/></clipPath></defs>'
        ),
    ]
    grid = 'stroke="rgb(0,0,0)" stroke-opacity="0.12" stroke-width="1"'
    for lx, label in data.x_ticks:
        if vx0 <= lx <= vx1:
            X = px(lx)
            out.append(f'<line x1="{X:.2f}" y1="{y0}" x2="{X:.2f}" y2="{y0 + ph:.2f}" {grid}/>')
            out.append(
                f'<text x="{X:.2f}" y="{y0 + ph + 14:.2f}" text-anchor="middle" '
                f'fill="rgb(90,90,90)">{escape(label)}</text>'
            )
    for v, label in data.y_ticks:
        if vy0 <= v <= vy1:
            Y = py(v)
            out.append(f'<line x1="{x0}" y1="{Y:.2f}" x2="{x0 + pw:.2f}" y2="{Y:.2f}" {grid}/>')
            out.append(
                f'<text x="{x0 - 5}" y="{Y + 4:.2f}" text-anchor="end" '
                f'fill="rgb(90,90,90)">{escape(label)}</text>'
            )
    out.append(
        f'<rect x="{x0}" y="{y0}" width="{pw:.2f}" height="{ph:.2f}" fill="none" '
        'stroke="rgb(120,120,120)"/>'
    )
    out.append(
        f'<text x="{x0 + pw / 2:.2f}" y="{height - 8:.2f}" text-anchor="middle" '
        f'fill="rgb(60,60,60)">{escape(data.x_label)}</text>'
    )
    out.append(
        f'<text transform="translate(14,{y0 + ph / 2:.2f}) rotate(-90)" text-anchor="middle" '
        f'fill="rgb(60,60,60)">{escape(data.y_label)}</text>'
    )
    if data.note:
        out.append(
            f'<text x="{x0 + pw / 2:.2f}" y="{TOP + FONT_PX:.2f}" text-anchor="middle" '
            f'fill="rgb(179,89,0)">{escape(data.note)}</text>'
        )
    out.append('<g clip-path="url(#area)">')
    for line in data.lines:
        pts = [  # inside the x range (Qt's SVG renderer ignores clip paths)
            (px(math.log10(a)), py(b))
            for a, b in zip(line.x, line.y)
            if a > 0 and math.isfinite(b) and vx0 - 1e-9 <= math.log10(a) <= vx1 + 1e-9
        ]
        if len(pts) > 1:
            coords = " ".join(f"{a:.2f},{b:.2f}" for a, b in pts)
            out.append(f'<polyline points="{coords}" {_line_attrs(line)}/>')
        if line.symbol:
            out.extend(_symbol(line.symbol, a, b, line.color, line.opacity) for a, b in pts)
    out.append("</g>")
    if n:
        lx0 = width - legend_w - PAD
        out.append(
            f'<rect x="{lx0:.2f}" y="{y0}" width="{legend_w:.2f}" '
            f'height="{rows * ROW_H + 2 * PAD:.2f}" fill="white" stroke="rgb(200,200,200)"/>'
        )
        for i, line in enumerate(data.lines):
            c, r = divmod(i, rows)
            sx = lx0 + PAD + c * col_w
            sy = y0 + PAD + r * ROW_H + ROW_H / 2
            out.append(
                f'<line x1="{sx:.2f}" y1="{sy:.2f}" x2="{sx + SAMPLE_W:.2f}" y2="{sy:.2f}" '
                f"{_line_attrs(line)}/>"
            )
            if line.symbol:
                out.append(_symbol(line.symbol, sx + SAMPLE_W / 2, sy, line.color, line.opacity))
            out.append(
                f'<text x="{sx + SAMPLE_W + 6:.2f}" y="{sy + 4:.2f}" '
                f'fill="rgb(40,40,40)">{escape(line.name)}</text>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"
