"""The canvas's box frames: one light rectangle around the nodes of each group, all in one item
(:class:`~fc_gui.views.canvas_items.GroupFramesItem`), recomputed from the index's positions."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF

from fc_gui.model.document_index import DocumentIndex
from fc_gui.views.canvas_items import GroupFramesItem

FRAME_PAD = 0.8  # frame margin around its nodes, in units of DocumentIndex.unit


class FrameLayer:
    """The group frames (see module docstring); :attr:`frames` lists ``(group, QRectF)``."""

    def __init__(self, view_box: pg.ViewBox, index: DocumentIndex) -> None:
        self.index = index
        self.frames: list[tuple[str, QRectF]] = []
        self.item = GroupFramesItem()
        self.item.setZValue(-10)
        view_box.addItem(self.item)

    def update(self) -> None:
        """Frames around the nodes' current positions."""
        boxes = self.index.group_boxes(self.index.unit * FRAME_PAD)
        self.frames = [(name, QRectF(*box)) for name, box in boxes]
        self.item.set_rects([r for _, r in self.frames])

    def rects(self) -> list[QRectF]:
        return [r for _, r in self.frames]
