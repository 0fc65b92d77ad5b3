"""Keeping the whole fabric in the canvas's view, clear of the captions floating over its corners
(cut caption, colour bar, legend, warning banner): the Qt side of :mod:`fc_gui.model.view_fit`.

A fit is redone when a caption appears over a node only while the user has not zoomed or panned
since the last fit (:attr:`ViewFitter.moved_by_user`).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtWidgets import QWidget

from fc_gui.model.view_fit import covered, fit_clear_of


class ViewFitter:
    """Fits the view of ``canvas`` (a FabricCanvas: its index, frames and legend)."""

    def __init__(self, canvas) -> None:
        self.canvas = canvas
        self.moved_by_user = False  # zoomed or panned since the last fit
        canvas.view_box.sigRangeChangedManually.connect(self._moved)

    def _moved(self, *_) -> None:
        self.moved_by_user = True

    def fit(self) -> None:
        """Zoom so the whole fabric is in view, clear of the floating captions."""
        canvas = self.canvas
        index, vb = canvas.index, canvas.view_box
        summary = getattr(canvas, "summary", None)
        shown = summary.bounds() if summary is not None else None
        if len(index.pos) == 0 and shown is None:
            vb.setRange(QRectF(-1, -1, 2, 2))
            return
        if shown is None:
            lo, hi = index.bounds()
            unit = index.unit
        else:  # the summary view: its aggregates and the nodes shown as themselves
            lo, hi = shown
            if len(index.pos):
                b_lo, b_hi = index.bounds()
                lo, hi = np.minimum(lo, b_lo), np.maximum(hi, b_hi)
            # room for the captions written under the aggregates
            span_max = float(np.max(hi - lo))
            unit = max(span_max * 0.1, index.unit if len(index.link_uids) else 0)
            width = vb.width()
            if width > 400:  # half a caption (~90 px) beside the outermost aggregates
                unit = max(unit, 90.0 * span_max / (width - 180.0))
            unit = unit or 1.0
        lo, hi = lo - unit, hi + unit
        if index.groups and canvas.frames.item.isVisible():
            lo[1] -= 0.5 * unit  # the box names above the frames stay clear of a caption
        span = np.maximum(hi - lo, unit * 2)
        hi = lo + span
        view_px = (vb.width(), vb.height())
        if min(view_px) < 50:  # not laid out yet: the plain fit
            vb.setRange(QRectF(lo[0], lo[1], span[0], span[1]), padding=0.05)
        else:
            fit = fit_clear_of(tuple(lo), tuple(hi), view_px, self.captions())
            vb.setRange(QRectF(fit.x0, fit.y0, fit.width, fit.height), padding=0)
        self.moved_by_user = False

    def captions(self) -> list[tuple[str, float, float]]:
        """The captions floating over the canvas, as ``(corner, width, height)`` in pixels with
        their margin from the edges: visible child widgets and the legend."""
        canvas = self.canvas
        width, height = canvas.width(), canvas.height()
        found = []
        only_children = Qt.FindChildOption.FindDirectChildrenOnly
        for child in canvas.findChildren(QWidget, options=only_children):
            if child is canvas.viewport() or not child.isVisible():
                continue
            g = child.geometry()
            top, left = g.center().y() < height / 2, g.center().x() < width / 2
            w = g.right() + 1 if left else width - g.left()
            h = g.bottom() + 1 if top else height - g.top()
            found.append((("t" if top else "b") + ("l" if left else "r"), w, h))
        legend = canvas.legend
        if legend.isVisible() and legend.key:
            r = legend.sceneBoundingRect()  # scene units are the canvas's pixels
            found.append(("bl", r.right() + 1, height - r.top()))
        return found

    def refit_if_covered(self) -> None:
        """Fit again if the user has not zoomed or panned since the last fit and a node, or
        the top corners of a box frame (where its name is), now lies under a caption."""
        canvas = self.canvas
        if self.moved_by_user or len(canvas.index.pos) == 0:
            return
        xy = [(float(x), float(y)) for x, y in canvas.index.pos]
        if canvas.frames.item.isVisible():
            xy += [(r.left(), r.top()) for r in canvas.frames.rects()]
            xy += [(r.right(), r.top()) for r in canvas.frames.rects()]
        points = []
        for x, y in xy:
            p = canvas.mapFromScene(canvas.view_box.mapViewToScene(QPointF(x, y)))
            points.append((p.x(), p.y()))
        if covered(points, (canvas.width(), canvas.height()), self.captions()):
            self.fit()
