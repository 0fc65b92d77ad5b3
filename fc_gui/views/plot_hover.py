"""Hover read-outs on the algbw plot: the nearest point of every line, with its size and algbw.

While the mouse is over the plot area, a thin vertical line follows it, the nearest point of each
visible line (nearest in log size, as the axis is) is ringed, and a box lists, per line, the
point's size and algbw in units (``solver.model.units``) and, for the library line, its
algorithm/protocol at that size. The box hangs from the top of the plot area, on the side of the cursor with more room.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF

from solver.model.units import format_rate, format_size


@dataclass(frozen=True)
class Reading:
    """The nearest point of one line: ``size`` bytes at ``algbw`` GB/s."""

    name: str
    size: int
    algbw: float
    note: str
    color: tuple[int, int, int]

    def text(self) -> str:
        extra = f" ({self.note})" if self.note else ""
        return f"{self.name}: {format_size(self.size)} {format_rate(self.algbw)}{extra}"


@dataclass(frozen=True)
class Line:
    """What the hover needs of one plotted line."""

    name: str
    size_bytes: np.ndarray
    algbw: np.ndarray
    notes: Sequence[str]
    color: tuple[int, int, int]


def nearest(lines: Sequence[Line], size: float) -> list[Reading]:
    """For each line, its point nearest to ``size`` bytes on the log axis."""
    out = []
    target = math.log2(max(size, 1e-300))
    for line in lines:
        x = np.asarray(line.size_bytes, np.float64)
        if not len(x):
            continue
        i = int(np.argmin(np.abs(np.log2(np.maximum(x, 1e-300)) - target)))
        note = line.notes[i] if len(line.notes) == len(x) else ""
        out.append(Reading(line.name, int(x[i]), float(line.algbw[i]), note, line.color))
    return out


def readout_html(readings: Sequence[Reading]) -> str:
    """The hover box: compact (7 pt), the size written once above the rows when every line's
    nearest point has the same size (the usual case: the lines share their sizes)."""
    sizes = {r.size for r in readings}
    shared = len(sizes) == 1
    head = (
        f'<tr><td colspan="4"><b>{format_size(next(iter(sizes)))}</b></td></tr>' if shared else ""
    )
    rows = "".join(
        f'<tr><td style="color:rgb{r.color}">&#9632;</td><td>{html.escape(r.name)}</td>'
        + ("" if shared else f'<td align="right">&nbsp;{format_size(r.size)}</td>')
        + f'<td align="right">&nbsp;<b>{html.escape(format_rate(r.algbw))}</b></td>'
        f"<td>{'&nbsp;' + html.escape(r.note) if r.note else ''}</td></tr>"
        for r in readings
    )
    return f'<table cellspacing="0" cellpadding="0" style="font-size:7pt">{head}{rows}</table>'


class PlotHover:
    """The hover read-out of one :class:`pyqtgraph.PlotItem` (see module docstring).

    ``lines()`` returns the :class:`Line` objects to read (the visible series). ``text`` is the
    plain-text read-out shown last ('' when hidden), one line per series.
    """

    def __init__(self, plot_item: pg.PlotItem, lines: Callable[[], Sequence[Line]]) -> None:
        self.plot_item = plot_item
        self.lines = lines
        self.text = ""
        self.readings: list[Reading] = []
        self.cursor = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen((90, 90, 90), width=1))
        self.markers = pg.ScatterPlotItem(
            size=11, pen=pg.mkPen((30, 30, 30), width=1.5), brush=pg.mkBrush(None)
        )
        self.box = pg.TextItem(
            anchor=(0, 0),
            color=(30, 30, 30),
            fill=pg.mkBrush(255, 255, 255, 200),
            border=pg.mkPen((150, 150, 150)),
        )
        for item in (self.cursor, self.markers, self.box):
            item.setZValue(1000)
            item.hide()
            plot_item.addItem(item, ignoreBounds=True)
        plot_item.scene().sigMouseMoved.connect(self.on_mouse_moved)

    def items(self) -> tuple:
        return (self.cursor, self.markers, self.box)

    def on_mouse_moved(self, scene_pos: QPointF) -> None:
        vb = self.plot_item.vb
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.hide()
            return
        self.show_at(vb.mapSceneToView(scene_pos))

    def show_at(self, view_pos: QPointF) -> list[Reading]:
        """Read out every line at the view point ``view_pos`` (x = log10 bytes)."""
        size = 10.0 ** view_pos.x()
        self.readings = nearest(self.lines(), size)
        if not self.readings:
            self.hide()
            return []
        self.text = "\n".join(r.text() for r in self.readings)
        self.cursor.setPos(view_pos.x())
        self.markers.setData(
            [math.log10(r.size) for r in self.readings], [r.algbw for r in self.readings]
        )
        self.box.setHtml(readout_html(self.readings))
        (x0, x1), (_, y1) = self.plot_item.vb.viewRange()
        right = view_pos.x() < (x0 + x1) / 2  # the box on the side with more room, at the top
        self.box.setAnchor((0 if right else 1, 0))
        dx = 0.01 * (x1 - x0) * (1 if right else -1)
        self.box.setPos(view_pos.x() + dx, y1)
        for item in self.items():
            item.show()
        return self.readings

    def hide(self) -> None:
        self.text = ""
        self.readings = []
        for item in self.items():
            item.hide()
