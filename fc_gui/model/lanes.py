"""Where overlays draw: directed *lanes* beside the links, arrow-head strokes, and hit-testing.

A directed link u→v is drawn on its own lane, shifted a little to the right of the u→v line, so
both directions of a full-duplex link stay visible side by side. Everything here is numpy on node
positions (``{node_id: (x, y)}`` in data coordinates): no Qt, testable without a canvas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

Positions = Mapping[str, tuple[float, float]]


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
