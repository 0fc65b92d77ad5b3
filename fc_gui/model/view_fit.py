"""Fitting the fabric into the canvas around the floating captions (pure geometry, no Qt).

The canvas keeps three things floating over its corners: the cut caption (top left), the
colour bar (top right) and the legend (bottom left). A plain "fit everything" zoom puts nodes
and labels under them. :func:`fit_clear_of` finds the zoom and offset that show the whole fabric
at the largest scale while each caption is kept clear either by a band across the view (above
or below the fabric) or by a band down the side: whichever of the two costs less scale, tried for
every combination of the captions.

Coordinates: the view is ``width`` × ``height`` pixels, y grows downwards (the canvas inverts y),
a caption is ``(corner, w, h)`` with corner one of ``"tl" "tr" "bl" "br"``, and its size includes
its margin from the view's edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product


@dataclass(frozen=True)
class Fit:
    """The data rectangle to show: x0, y0 (top-left in data units), and its size."""

    x0: float
    y0: float
    width: float
    height: float
    scale: float  # pixels per data unit


def fit_clear_of(
    lo: tuple[float, float],
    hi: tuple[float, float],
    view_px: tuple[float, float],
    captions: list[tuple[str, float, float]],
    margin_px: float = 8.0,
) -> Fit:
    """The view rectangle (data units) that shows the box ``lo``..``hi`` clear of ``captions``.

    ``lo``/``hi`` bound the fabric in data units (nodes plus the room their symbols and labels
    need). The fabric is centred in the free area left after the chosen bands.
    """
    width_px, height_px = (max(float(v), 1.0) for v in view_px)
    span_x = max(hi[0] - lo[0], 1e-9)
    span_y = max(hi[1] - lo[1], 1e-9)
    best = None
    for choice in product((False, True), repeat=len(captions)):  # True: a band across the view
        bands = {"top": 0.0, "bottom": 0.0, "left": 0.0, "right": 0.0}
        for across, (corner, w, h) in zip(choice, captions):
            if across:
                side = "top" if corner[0] == "t" else "bottom"
                bands[side] = max(bands[side], h)
            else:
                side = "left" if corner[1] == "l" else "right"
                bands[side] = max(bands[side], w)
        free_w = width_px - bands["left"] - bands["right"] - 2 * margin_px
        free_h = height_px - bands["top"] - bands["bottom"] - 2 * margin_px
        if free_w <= 0 or free_h <= 0:
            continue
        scale = min(free_w / span_x, free_h / span_y)
        if best is None or scale > best[0]:
            best = (scale, bands)
    if best is None:  # the captions fill the view: fit as if they were not there
        scale = min(width_px / span_x, height_px / span_y)
        bands = {"top": 0.0, "bottom": 0.0, "left": 0.0, "right": 0.0}
    else:
        scale, bands = best
    # centre the fabric in the free area
    free_cx = (bands["left"] + width_px - bands["right"]) / 2
    free_cy = (bands["top"] + height_px - bands["bottom"]) / 2
    cx = (lo[0] + hi[0]) / 2
    cy = (lo[1] + hi[1]) / 2
    x0 = cx - free_cx / scale
    y0 = cy - free_cy / scale
    return Fit(x0, y0, width_px / scale, height_px / scale, scale)


def covered(
    points_px: list[tuple[float, float]],
    view_px: tuple[float, float],
    captions: list[tuple[str, float, float]],
) -> bool:
    """Whether any point (pixels, y down) lies under a caption."""
    width_px, height_px = view_px
    for corner, w, h in captions:
        x_lo = 0.0 if corner[1] == "l" else width_px - w
        y_lo = 0.0 if corner[0] == "t" else height_px - h
        for x, y in points_px:
            if x_lo <= x <= x_lo + w and y_lo <= y <= y_lo + h:
                return True
    return False
