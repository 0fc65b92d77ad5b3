"""The broadcast animation: plays the selected trees depth by depth on the canvas.

The steps come from :func:`fc_gui.model.trees.broadcast_levels`; this module only times and draws
them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QTimer, Signal

from fc_gui.model.lanes import chevrons, lane_offset, lane_segments
from fc_gui.model.trees import (
    Transfer,
    broadcast_levels,
    broadcast_step_text,
    holders,
    last_hops,
    path_hops,
)
from fc_gui.views.overlays import Z_ANIM, CanvasOverlay, OverlayHost, pairs_xy, segments_curve
from solver.model.schedule import Tree

ANIM_CURRENT = (216, 27, 96, 255)
ANIM_REACHED = (255, 213, 79, 170)


class BroadcastAnimation(QObject):
    """Plays the selected trees depth by depth: which nodes hold the data after each step.

    For allgather (out-trees) step d sends along the edges into depth d; for reduce-scatter
    (aggregation trees) the steps run from the deepest edges up to the root.

    Signals
    -------
    step_changed(step: int, steps: int, text: str)
    playing_changed(playing: bool)
    """

    step_changed = Signal(int, int, str)
    playing_changed = Signal(bool)

    def __init__(
        self, canvas: OverlayHost, interval_ms: int = 800, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.overlay = CanvasOverlay(canvas)
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.trees: list[tuple[str, Tree]] = []
        self.levels: list[list[Transfer]] = []
        self.step = 0

    @property
    def steps(self) -> int:
        return len(self.levels)

    @property
    def playing(self) -> bool:
        return self.timer.isActive()

    @property
    def animating(self) -> bool:
        """A tree is being animated: playing, or showing a step past the start."""
        return bool(self.trees) and (self.playing or self.step > 0)

    def go_to(self, step: int) -> None:
        """Show step ``step`` (0: only the roots hold data; clamped to 0..steps)."""
        self.pause()
        self.step = max(0, min(int(step), self.steps))
        self.render()

    def set_trees(self, trees: Sequence[tuple[str, Tree]]) -> None:
        self.pause()
        self.trees = list(trees)
        self.levels = broadcast_levels(self.trees)
        self.step = 0
        self.render()

    def play(self) -> None:
        if not self.levels:
            return
        if self.step >= self.steps:
            self.step = 0
            self.render()
        self.timer.start()
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if self.timer.isActive():
            self.timer.stop()
            self.playing_changed.emit(False)

    def advance(self) -> None:
        """One step forward (wraps to the start after the last step)."""
        if not self.levels:
            return
        self.step = self.step + 1 if self.step < self.steps else 0
        self.render()

    def reset(self) -> None:
        self.pause()
        self.step = 0
        self.render()

    def stop(self) -> None:
        """Stop and remove the drawing."""
        self.pause()
        had = bool(self.trees)
        self.trees, self.levels, self.step = [], [], 0
        self.overlay.clear()
        if had:
            self.step_changed.emit(0, 0, "")

    def _tick(self) -> None:
        if self.step >= self.steps:
            self.pause()
            return
        self.advance()
        if self.step >= self.steps:
            self.pause()

    def holders(self) -> set[str]:
        """Compute nodes holding (a part of) the data after the current step."""
        return holders(self.trees, self.levels, self.step)

    def render(self) -> None:
        """Draw the current step (again, e.g. after nodes moved)."""
        self.overlay.clear()
        if not self.trees:
            self.step_changed.emit(0, 0, "")
            return
        pos = self.overlay.canvas.node_positions()
        current = self.levels[self.step - 1] if 0 < self.step <= self.steps else []
        offset = lane_offset(pos, path_hops(p for level in self.levels for _, _, p in level))
        if current:  # the transfers of this step (earlier ones stay visible in the tree overlay)
            seg = lane_segments(pos, path_hops(p for _, _, p in current), offset)
            heads = chevrons(
                lane_segments(pos, last_hops(p for _, _, p in current), offset),
                2.2 * offset or 0.1,
            )
            seg = np.concatenate([seg, heads])
            c = segments_curve(ANIM_CURRENT, 4.5, Z_ANIM, segments=len(seg))
            c.setData(*pairs_xy(seg))
            self.overlay.add(c)
        have = [pos[n] for n in self.holders() if n in pos]
        if have:
            s = pg.ScatterPlotItem(
                pos=np.array(have, dtype=float),
                size=26,
                symbol="o",
                pen=pg.mkPen(ANIM_CURRENT[:3], width=2),
                brush=pg.mkBrush(ANIM_REACHED),
                hoverable=False,
            )
            s.setZValue(Z_ANIM - 0.5)
            self.overlay.add(s)
        text = broadcast_step_text(self.trees, self.levels, self.step)
        self.step_changed.emit(self.step, self.steps, text)
