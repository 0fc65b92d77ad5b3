"""The bandwidth-label layer: where "25 GB/s" goes on each link so that labels overwrite neither
one another nor a node. Pure (numpy only): the canvas places them in screen pixels on every
paint, the slide figure in its design units.

Each label is an axis-aligned box centred on a point of its link -- the middle first, then
35 %, 65 %, 20 % and 80 % of the way -- and is left out when every place is taken. Links whose
bandwidth is rare on the fabric (the slow link among fast ones) are placed first, then longer
links before shorter ones: the label a teacher points at is the one kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

#: Places tried along a link (fraction of the way from its source).
PLACES = (0.5, 0.35, 0.65, 0.2, 0.8)
#: Width of one character and height of a line, relative to the font's pixel size (generous:
#: DejaVu Sans digits are 0.64 em wide).
CHAR_W = 0.64
LINE_H = 1.25


def bandwidth_text(bandwidth) -> str:
    """``25 GB/s``, ``12.5 GB/s``, ``0.3333 GB/s`` (exact integers stay integers)."""
    bw = Fraction(bandwidth).limit_denominator(10**9)
    text = f"{bw.numerator}" if bw.denominator == 1 else f"{float(bw):.4g}"
    return f"{text} GB/s"


def label_order(bandwidths: Sequence, lengths: np.ndarray) -> list[int]:
    """Rows in placing order: rare bandwidths first, then longer links first."""
    counts = Counter(bandwidths)
    return sorted(range(len(bandwidths)), key=lambda i: (counts[bandwidths[i]], -lengths[i], i))


def place_labels(
    starts: np.ndarray,
    stops: np.ndarray,
    texts: Sequence[str],
    font_px: float,
    nodes: np.ndarray,
    node_radius: np.ndarray | float,
    order: Sequence[int] | None = None,
    bounds: tuple[float, float, float, float] | None = None,
    boxes: np.ndarray | None = None,
) -> list[tuple[int, float, float]]:
    """``(row, cx, cy)``: the centre of each placed label, in the coordinates of ``starts`` /
    ``stops`` (one row per link, y down or up alike); ``nodes`` (n, 2) and ``node_radius`` are
    obstacles, and so are ``boxes`` (m, 4: x0, y0, x1, y1; the node names); ``bounds``
    (x0, y0, x1, y1): a label must lie inside it."""
    starts = np.asarray(starts, dtype=float).reshape(-1, 2)
    stops = np.asarray(stops, dtype=float).reshape(-1, 2)
    nodes = np.asarray(nodes, dtype=float).reshape(-1, 2)
    radius = np.broadcast_to(np.asarray(node_radius, dtype=float), (len(nodes),))
    half_h = LINE_H * font_px / 2
    taken = np.zeros((0, 4)) if boxes is None else np.asarray(boxes, float).reshape(-1, 4)
    out: list[tuple[int, float, float]] = []
    rows = range(len(texts)) if order is None else order
    for row in rows:
        half_w = CHAR_W * font_px * len(texts[row]) / 2 + 2
        a, b = starts[row], stops[row]
        for t in PLACES:
            cx, cy = a + t * (b - a)
            x0, y0, x1, y1 = cx - half_w, cy - half_h, cx + half_w, cy + half_h
            if bounds is not None and (
                x0 < bounds[0] or y0 < bounds[1] or x1 > bounds[2] or y1 > bounds[3]
            ):
                continue
            if len(nodes):  # the nearest point of the box to each node centre
                nx = np.clip(nodes[:, 0], x0, x1) - nodes[:, 0]
                ny = np.clip(nodes[:, 1], y0, y1) - nodes[:, 1]
                if np.any(nx * nx + ny * ny < radius * radius):
                    continue
            if len(taken) and np.any(
                (taken[:, 0] < x1) & (x0 < taken[:, 2]) & (taken[:, 1] < y1) & (y0 < taken[:, 3])
            ):
                continue
            taken = np.vstack([taken, [x0, y0, x1, y1]])
            out.append((int(row), float(cx), float(cy)))
            break
    return out
