"""The whole-collective timeline in the designer: builds :func:`fc_gui.model.timeline.
collective_timeline` for the shown result, plays it round by round on the canvas (the round's
transfers in pink, the nodes holding data ringed, a clicked transfer in blue) and keeps the
Timeline panel in step. Another result, or none, rebuilds or clears it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer

from fc_gui.model.lanes import chevrons, lane_offset, lane_segments
from fc_gui.model.timeline import Timeline, collective_timeline
from fc_gui.model.trees import last_hops, path_hops
from fc_gui.views.animation import ANIM_CURRENT, ANIM_REACHED
from fc_gui.views.overlays import Z_ANIM, CanvasOverlay, pairs_xy, segments_curve
from fc_gui.views.timeline_dock import TimelineDock

if TYPE_CHECKING:
    from fc_gui.controllers.result_overlays import ResultOverlays
    from fc_gui.model.result_state import ResultState

PICKED = (25, 118, 210, 255)


class TimelineController(QObject):
    """See module docstring."""

    def __init__(
        self, window, state: ResultState, overlays: ResultOverlays, interval_ms: int = 700
    ) -> None:
        super().__init__(window)
        self.window = window
        self.state = state  # the shown result: rebuilt when it changes
        self.dimmer = overlays.dimmer  # fades the other layers while a round is shown
        self.dock = TimelineDock()
        self.dock_widget = window.add_dock(
            self.dock, Qt.DockWidgetArea.RightDockWidgetArea, "Timeline"
        )
        self.overlay = CanvasOverlay(window.canvas)
        self.timeline: Timeline | None = None
        self.round = 0
        self.picked: int | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.dock.round_requested.connect(self.go_to)
        self.dock.play_toggled.connect(self.toggle_play)
        self.dock.chunks_changed.connect(lambda _: self.rebuild())
        self.dock.event_selected.connect(self.pick)
        self.dock.root_changed.connect(self.set_root)
        self.root = ""  # only this GPU's shard ("" = all)
        state.schedule_changed.connect(lambda _: self.rebuild())
        # the other layers fade while a round past the start is shown, as for one tree
        self.dimmer.sources.append(lambda: self.timeline is not None and self.round > 0)

    # ------------------------------------------------------------------ building
    def rebuild(self) -> None:
        """The timeline of the shown result at the panel's chunk count (none: cleared)."""
        self.pause()
        schedule = self.state.schedule
        self.timeline, self.picked, self.round = None, None, 0
        if schedule is None:
            self.dock.set_timeline(None)
            self.render()
            return
        try:
            self.timeline = collective_timeline(schedule, self.dock.chunks_box.value())
        except ValueError as exc:
            self.dock.set_timeline(None, str(exc))
            self.render()
            return
        self._list()
        self.go_to(0)

    def set_root(self, root: str) -> None:
        """List and draw only the transfers of ``root``'s shard ("" = every shard)."""
        self.root = root
        self.picked = None
        if self.timeline is not None:
            self._list()
            self.render()

    def _list(self) -> None:
        tl = self.timeline
        shown = [i for i, e in enumerate(tl.events) if not self.root or e.root == self.root]
        self.dock.set_timeline(tl, shown=shown)

    # ------------------------------------------------------------------ playing
    def go_to(self, round_: int) -> None:
        if self.timeline is None:
            return
        self.round = max(0, min(int(round_), self.timeline.rounds))
        self.render()

    def step(self, forward: bool = True) -> None:
        self.go_to(self.round + (1 if forward else -1))

    def toggle_play(self) -> None:
        if self.timer.isActive():
            self.pause()
        elif self.timeline is not None and self.timeline.rounds:
            if self.round >= self.timeline.rounds:
                self.go_to(0)
            self.timer.start()
            self.dock.set_playing(True)

    def pause(self) -> None:
        self.timer.stop()
        self.dock.set_playing(False)

    def _tick(self) -> None:
        if self.timeline is None or self.round >= self.timeline.rounds:
            self.pause()
            return
        self.step(True)
        if self.round >= self.timeline.rounds:
            self.pause()

    def pick(self, index: int) -> None:
        """Draw event ``index`` in blue (clicked in the list)."""
        self.picked = index
        self.render()

    # ------------------------------------------------------------------ drawing
    def current(self) -> list[int]:
        """The events of the shown round (of the chosen shard only, when one is chosen)."""
        if self.timeline is None:
            return []
        return [
            i
            for i in self.timeline.at(self.round)
            if not self.root or self.timeline.events[i].root == self.root
        ]

    def render(self) -> None:
        self.overlay.clear()
        self.dimmer.update()
        tl = self.timeline
        if tl is None:
            return
        rows = self.current()
        whose = f" of {self.root}'s shard" if self.root else ""
        text = (
            f"Round {self.round} of {tl.rounds}: {len(rows)} transfers{whose} "
            f"({tl.chunks} chunks per tree, logical rounds)"
            if self.round
            else f"Round 0 of {tl.rounds}: every GPU holds only its own shard; Step or Play"
        )
        self.dock.show_round(self.round, text)
        if self.round == 0 and self.picked is None:
            return
        pos = self.overlay.canvas.node_positions()
        paths = [tl.events[i].path for i in rows]
        offset = lane_offset(pos, path_hops(e.path for e in tl.events))
        if paths:
            seg = lane_segments(pos, path_hops(paths), offset)
            heads = chevrons(lane_segments(pos, last_hops(paths), offset), 2.2 * offset or 0.1)
            seg = np.concatenate([seg, heads])
            curve = segments_curve(ANIM_CURRENT, 4.5, Z_ANIM, segments=len(seg))
            curve.setData(*pairs_xy(seg))
            self.overlay.add(curve)
        if self.picked is not None and 0 <= self.picked < len(tl.events):
            path = [tl.events[self.picked].path]
            seg = lane_segments(pos, path_hops(path), offset)
            heads = chevrons(lane_segments(pos, last_hops(path), offset), 2.6 * offset or 0.1)
            seg = np.concatenate([seg, heads])
            curve = segments_curve(PICKED, 7.0, Z_ANIM + 0.2, segments=len(seg))
            curve.setData(*pairs_xy(seg))
            self.overlay.add(curve)
        have = [pos[n] for n in tl.holders(self.round, self.root) if n in pos]
        if have and self.round:
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


def install(window) -> TimelineController:
    """Add the Timeline panel to ``window``: it follows the result state of the window's results
    controller and dims its overlays."""
    results = window.results_controller
    return TimelineController(window, results.state, results.overlays)
