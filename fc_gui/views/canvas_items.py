"""The canvas's batch graphics items: passive scatters, group frames, many labels in one item,
and the arrow-head symbols of directed links."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainterPath, QPen, QTransform

from fc_gui.views import style


def _arrow_path(angle_deg: float) -> QPainterPath:
    """A triangle pointing along ``angle_deg`` (screen frame: y down, clockwise), unit size."""
    path = QPainterPath()
    path.moveTo(0.5, 0.0)
    path.lineTo(-0.5, 0.38)
    path.lineTo(-0.5, -0.38)
    path.closeSubpath()
    # pyqtgraph draws scatter symbols in the screen frame (y down)
    return QTransform().rotate(angle_deg).map(path)


#: Arrow heads every 10 degrees (index = round(angle / 10) % 36).
ARROWS = [_arrow_path(a) for a in range(0, 360, 10)]


class PassiveScatter(pg.ScatterPlotItem):
    """A scatter that never takes clicks (pyqtgraph would give a click on a point to the
    scatter; the canvas's tools handle them in the ViewBox)."""

    def mouseClickEvent(self, ev) -> None:
        ev.ignore()


class GroupFramesItem(pg.GraphicsObject):
    """All group frames (light filled rectangles) in one item."""

    def __init__(self) -> None:
        super().__init__()
        self._path = QPainterPath()
        self._bounds = QRectF()
        self._pen = QPen(QColor(*style.GROUP_EDGE))
        self._pen.setCosmetic(True)
        self._pen.setWidthF(1.0)
        self._brush = pg.mkBrush(*style.GROUP_FILL)  # opaque: no alpha blending per frame

    def set_rects(self, rects: list[QRectF]) -> None:
        self.prepareGeometryChange()
        path = QPainterPath()
        for r in rects:
            path.addRect(r)
        self._path = path
        self._bounds = path.boundingRect()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter, *args) -> None:
        painter.setPen(self._pen)
        painter.setBrush(self._brush)
        painter.drawPath(self._path)


class LabelsItem(pg.GraphicsObject):
    """Many short texts at data points, drawn in one paint call at a fixed pixel size
    (pyqtgraph's TextItem costs a Python callback per item on every view change).

    A text that would overlap one already drawn goes above its point instead of below, or is
    left out (give the important ones first); :attr:`drawn` lists what the last paint showed."""

    def __init__(self, color, below: bool = True, font_px: int = 11) -> None:
        super().__init__()
        self._xy = np.zeros((0, 2))
        self._texts: list[str] = []
        self._pen = QPen(QColor(*color))
        self._halo = QColor(*style.BACKGROUND, 190)
        self._below = below
        self._font = QFont()
        self._font.setPixelSize(font_px)
        self._bounds = QRectF()
        self.drawn: list[str] = []
        self.boxes: list[QRectF] = []  # where the last paint wrote, in device pixels

    def set_labels(self, xy: np.ndarray, texts: list[str]) -> None:
        self.prepareGeometryChange()
        self._xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        self._texts = list(texts)
        self._update_bounds()
        self.update()

    def texts(self) -> list[str]:
        return list(self._texts)

    def font_px(self) -> int:
        return self._font.pixelSize()

    def set_font_px(self, px: int) -> None:
        """Text height in pixels (11 normally; larger at a presenter scale)."""
        self.prepareGeometryChange()
        self._font.setPixelSize(max(6, int(px)))
        self._update_bounds()
        self.update()

    def _update_bounds(self) -> None:
        if not len(self._xy):
            self._bounds = QRectF()
            return
        lo, hi = self._xy.min(axis=0), self._xy.max(axis=0)
        px, py = self.pixelSize() if self.getViewBox() is not None else (1.0, 1.0)
        px, py = abs(px or 1.0), abs(py or 1.0)
        k = self._font.pixelSize() / 11.0
        self._bounds = QRectF(
            lo[0] - 90 * k * px,
            lo[1] - 40 * k * py,
            hi[0] - lo[0] + 180 * k * px,
            hi[1] - lo[1] + 80 * k * py,
        )

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()
        self._update_bounds()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter, *args) -> None:
        self.boxes = []
        if not self._texts:
            return
        tr = painter.transform()
        painter.resetTransform()
        painter.setPen(self._pen)
        painter.setFont(self._font)
        flags = (
            int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
            if self._below
            else int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        )
        metrics = painter.fontMetrics()
        taken: list[QRectF] = []
        self.drawn = []
        self.boxes = taken
        k = self._font.pixelSize() / 11.0  # boxes grow with the font (presenter scale)
        for (x, y), text in zip(self._xy, self._texts):
            p = tr.map(QPointF(x, y))
            if self._below:  # under the node, or above it when that place is taken
                places = [
                    QRectF(p.x() - 80 * k, p.y() + 9 + 2 * k, 160 * k, 16 * k),
                    QRectF(p.x() - 80 * k, p.y() - 25 * k, 160 * k, 16 * k),
                ]
            else:
                places = [QRectF(p.x() + 2, p.y() - 17 * k, 300 * k, 16 * k)]
            for rect in places:
                back = QRectF(metrics.boundingRect(rect.toRect(), flags, text)).adjusted(
                    -2, 0, 2, 0
                )
                if not any(back.intersects(r) for r in taken):
                    break
            else:
                continue  # would overwrite a more important label: unreadable both
            taken.append(back)
            self.drawn.append(text)
            painter.fillRect(back, self._halo)
            painter.drawText(rect, flags, text)


class LinkLabelsItem(pg.GraphicsObject):
    """The bandwidth-label layer: "25 GB/s" on the links, placed on every paint in screen
    pixels (:func:`fc_gui.model.link_labels.place_labels`: clear of one another and of the
    nodes, the rare bandwidths first), on a light halo; at most :attr:`LIMIT` links in view,
    else none (a far-out view of a big fabric). :attr:`drawn` lists the rows the last paint
    showed."""

    LIMIT = 400

    def __init__(self, font_px: int = 13, avoid: tuple = ()) -> None:
        super().__init__()
        self._avoid = avoid  # LabelsItems painted before this one: keep clear of their texts
        self._a = np.zeros((0, 2))
        self._b = np.zeros((0, 2))
        self._texts: list[str] = []
        self._order: list[int] = []
        self._nodes = np.zeros((0, 2))
        self._radius = np.zeros(0)
        self._font = QFont()
        self._font.setPixelSize(font_px)
        self._font.setBold(True)
        self._pen = QPen(QColor(*style.LINK_LABEL_COLOR))
        self._halo = QColor(255, 255, 255, 225)
        self._bounds = QRectF()
        self.drawn: list[int] = []

    def set_links(self, starts, stops, texts, order, nodes, node_radius_px) -> None:
        """Links as drawn (data coordinates), their texts and placing order; the nodes (data
        coordinates) and their on-screen radii, which labels keep clear of."""
        self.prepareGeometryChange()
        self._a = np.asarray(starts, dtype=float).reshape(-1, 2)
        self._b = np.asarray(stops, dtype=float).reshape(-1, 2)
        self._texts, self._order = list(texts), list(order)
        self._nodes = np.asarray(nodes, dtype=float).reshape(-1, 2)
        self._radius = np.asarray(node_radius_px, dtype=float).reshape(-1)
        if len(self._a):
            pts = np.vstack([self._a, self._b])
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            self._bounds = QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]).adjusted(-1, -1, 1, 1)
        else:
            self._bounds = QRectF()
        self.update()

    def font_px(self) -> int:
        return self._font.pixelSize()

    def set_font_px(self, px: int) -> None:
        self._font.setPixelSize(max(8, int(px)))
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter, *args) -> None:
        from fc_gui.model.link_labels import place_labels

        self.drawn = []
        if not self._texts:
            return
        tr = painter.transform()
        device = painter.device()
        w, h = device.width(), device.height()

        def mapped(p: np.ndarray) -> np.ndarray:
            return np.column_stack(
                [
                    p[:, 0] * tr.m11() + p[:, 1] * tr.m21() + tr.dx(),
                    p[:, 0] * tr.m12() + p[:, 1] * tr.m22() + tr.dy(),
                ]
            )

        a, b, nodes = mapped(self._a), mapped(self._b), mapped(self._nodes)
        mid = (a + b) / 2
        inside = (mid[:, 0] >= 0) & (mid[:, 0] <= w) & (mid[:, 1] >= 0) & (mid[:, 1] <= h)
        order = [i for i in self._order if inside[i]]
        if len(order) > self.LIMIT:
            return
        px = self._font.pixelSize()
        boxes = [
            (r.left(), r.top(), r.right(), r.bottom())
            for item in self._avoid
            if item.isVisible()
            for r in item.boxes
        ]
        placed = place_labels(
            a,
            b,
            self._texts,
            px,
            nodes,
            self._radius + 2,
            order,
            bounds=(0, 0, w, h),
            boxes=np.array(boxes).reshape(-1, 4),
        )
        painter.resetTransform()
        painter.setFont(self._font)
        painter.setPen(self._pen)
        metrics = painter.fontMetrics()
        for row, cx, cy in placed:
            text = self._texts[row]
            tw = metrics.horizontalAdvance(text)
            rect = QRectF(cx - tw / 2 - 3, cy - metrics.height() / 2, tw + 6, metrics.height())
            painter.fillRect(rect, self._halo)
            painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), text)
            self.drawn.append(row)
