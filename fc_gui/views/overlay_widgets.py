"""Captions floating over the canvas widget (they do not pan or zoom): the cut's corner badge and
the congestion colour bar."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QGraphicsOpacityEffect, QLabel, QWidget

BADGE_STYLE = (
    "QLabel { background: rgba(255,255,255,230); color: rgb(183,28,28);"
    " border: 1px solid rgba(211,47,47,150); border-radius: 4px; padding: 3px 6px; }"
)
BADGE_STALE_STYLE = (
    "QLabel { background: rgba(245,245,245,200); color: rgb(130,130,130);"
    " border: 1px dashed rgba(150,150,150,180); border-radius: 4px; padding: 3px 6px; }"
)
STALE_PREFIX = "STALE (the fabric changed since this solve)\n"

#: Opacity of a floating caption while the layers it describes are dimmed.
DIMMED_CAPTION_OPACITY = 0.25


def _set_dimmed(widget: QWidget, dimmed: bool) -> None:
    """Fade ``widget`` (and its children) to DIMMED_CAPTION_OPACITY, or restore it."""
    if dimmed:
        effect = QGraphicsOpacityEffect(widget)
        effect.setOpacity(DIMMED_CAPTION_OPACITY)
        widget.setGraphicsEffect(effect)
    else:
        widget.setGraphicsEffect(None)


class CornerBadge(QLabel):
    """A caption floating at the top-left corner of a widget (does not pan or zoom); greyed
    with a "STALE" line when the result it describes is stale."""

    def __init__(self, text: str, parent: QWidget) -> None:
        super().__init__(text, parent)
        self.caption = text
        self.greyed = False
        self.dimmed = False
        self.setStyleSheet(BADGE_STYLE)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.adjustSize()
        self.move(10, 10)
        self.raise_()

    def set_greyed(self, greyed: bool) -> None:
        self.greyed = bool(greyed)
        self.setStyleSheet(BADGE_STALE_STYLE if self.greyed else BADGE_STYLE)
        self.setText(STALE_PREFIX + self.caption if self.greyed else self.caption)
        self.adjustSize()

    def set_dimmed(self, dimmed: bool) -> None:
        """Fade the caption (its layer is dimmed while a tree is animated) or restore it."""
        self.dimmed = bool(dimmed)
        _set_dimmed(self, self.dimmed)


class ColorBarWidget(QWidget):
    """A small vertical colour bar with ticks, floating in a corner of its parent widget.

    ``label(t)`` gives the text of the tick at ``t`` in {0, 0.25, 0.5, 0.75, 1} (default: the
    link load in percent, "100% (bottleneck)" at the top).
    """

    def __init__(
        self,
        cmap: pg.ColorMap,
        title: str,
        parent: QWidget,
        label: Callable[[float], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.cmap = cmap
        self.title = title
        self.label = label or _load_label
        self.greyed = False
        self.dimmed = False
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.scale = 1.0
        self.set_scale(1.0)
        parent.installEventFilter(self)
        self._place()
        self.raise_()

    def set_scale(self, scale: float) -> None:
        """Presenter scale: text and bar ``scale`` times their normal size."""
        self.scale = float(scale)
        font = QFont(self.font())
        font.setPointSizeF(8 * self.scale)
        self.setFont(font)
        fm = self.fontMetrics()
        width = max(
            fm.horizontalAdvance(self.title) + 14,
            34 * self.scale + fm.horizontalAdvance("100% (bottleneck)"),
        )
        self.resize(int(width + 6), int(150 * self.scale))
        self._place()
        self.update()

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False

    def _place(self) -> None:
        """At the top right of the parent, under the visible colour bars made before it (the
        studies' impact bar and the heat map's never overlap)."""
        parent = self.parentWidget()
        if parent is None:
            return
        y = 12
        for other in parent.findChildren(
            ColorBarWidget, options=Qt.FindChildOption.FindDirectChildrenOnly
        ):
            if other is self:
                break
            if other.isVisible():
                y = max(y, other.geometry().bottom() + 1 + 8)
        self.move(parent.width() - self.width() - 12, y)

    def _place_all(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            for bar in parent.findChildren(
                ColorBarWidget, options=Qt.FindChildOption.FindDirectChildrenOnly
            ):
                bar._place()

    def setVisible(self, visible: bool) -> None:
        changed = visible != self.isVisible()
        super().setVisible(visible)
        if changed:
            self._place_all()

    def set_greyed(self, greyed: bool) -> None:
        """Fade the bar (it describes a stale result)."""
        self.greyed = bool(greyed)
        self.update()

    def set_dimmed(self, dimmed: bool) -> None:
        """Fade the bar while its layer is dimmed (a tree is animated), or restore it."""
        self.dimmed = bool(dimmed)
        _set_dimmed(self, self.dimmed)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.greyed:
            p.setOpacity(0.35)
        p.setPen(QPen(QColor(160, 160, 160)))
        p.setBrush(QColor(255, 255, 255, 225))
        p.drawRoundedRect(self.rect().adjusted(0, 0, -1, -1), 4, 4)
        p.setFont(self.font())
        p.setPen(QColor(40, 40, 40))
        k = self.scale
        p.drawText(QRectF(6, 4, self.width() - 12, 16 * k), Qt.AlignmentFlag.AlignLeft, self.title)
        top, bottom, x0, w = 26.0 * k, float(self.height() - 12 * k), 10.0, 16.0 * k
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
            p.drawText(QPointF(x0 + w + 7, y + 4 * k), self.label(t))
        p.end()


def _load_label(t: float) -> str:
    return f"{int(100 * t)}%" + (" (bottleneck)" if t == 1.0 else "")
