"""The shown result on the canvas: bottleneck cut, congestion heat map, selected trees, the
broadcast animation and out-of-service links; redrawn when nodes move, with hover tips.
While a tree is animated the other layers are dimmed (:mod:`fc_gui.controllers.layer_dimming`)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from fc_gui.controllers.layer_dimming import LayerDimmer
from fc_gui.model.result_state import ResultState
from fc_gui.model.switch_bounds import caption_line
from fc_gui.model.trees import trees_using_links
from fc_gui.views.animation import BroadcastAnimation
from fc_gui.views.overlays import CutOverlay, DisabledLinksOverlay, HeatMapOverlay, TreeOverlay
from solver.model.schedule import Schedule


class ResultOverlays(QObject):
    """The overlays of ``canvas`` showing ``state``'s result of ``doc``; ``trees_view`` (the
    Trees dock) selects the trees drawn and drives the animation (see module docstring)."""

    def __init__(self, state: ResultState, doc, canvas, trees_view, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.doc = doc
        self.canvas = canvas
        self.trees_view = trees_view
        self.cut = CutOverlay(canvas)
        self.heat = HeatMapOverlay(canvas)
        self.heat.attach_color_bar()
        self.trees = TreeOverlay(canvas)
        self.disabled = DisabledLinksOverlay(canvas)
        self.animation = BroadcastAnimation(canvas, parent=self)
        # the other layers fade while a tree is animated
        self.dimmer = LayerDimmer(
            self.animation, (self.cut, self.heat, self.disabled), canvas, self
        )

        view = trees_view
        view.trees_selected.connect(self._on_trees_selected)
        view.play_clicked.connect(self.animation.play)
        view.pause_clicked.connect(self.animation.pause)
        view.step_clicked.connect(self._step)
        view.reset_clicked.connect(self.animation.reset)
        self.animation.step_changed.connect(lambda s, n, t: view.set_step_text(t))
        self.animation.playing_changed.connect(view.set_playing)

        self._geometry_timer = QTimer(self)
        self._geometry_timer.setSingleShot(True)
        self._geometry_timer.setInterval(30)
        self._geometry_timer.timeout.connect(self.redraw)
        self.doc.positions_changed.connect(lambda *_: self._geometry_timer.start())
        self.doc.structure_changed.connect(lambda: self._geometry_timer.start())
        self.doc.disabled_changed.connect(lambda: self._geometry_timer.start())
        if hasattr(canvas, "summary_changed"):  # expanded or collapsed: other nodes are shown
            canvas.summary_changed.connect(lambda: self._geometry_timer.start())
        canvas.tooltip_providers.append(self.tooltip)

    # ------------------------------------------------------------------ showing
    @property
    def schedule(self) -> Schedule | None:
        """The schedule shown (the result state's)."""
        return self.state.schedule

    def drop_trees(self) -> None:
        """A new result: drop the trees and the animation of the old one."""
        self.animation.stop()
        self.trees.clear()

    def show_cut(self) -> None:
        s = self.schedule
        if s is not None:
            groups = {n.id: n.group for n in self.doc.nodes.values()}
            kinds = {n.id: (n.kind, n.role) for n in self.doc.nodes.values()}
            self.cut.show_cut(
                s.bottleneck,
                None if s.phases else s.num_compute_nodes,
                groups,
                kinds,
                extra=self._switch_line(),
            )

    def _switch_line(self) -> str:
        """The caption's line on the marked switches' figures ('' while there are none)."""
        sb = self.state.switch_bounds
        return "" if sb is None else caption_line(sb)

    def show_heat(self) -> None:
        s = self.schedule
        if s is None:
            return
        state = self.state
        if state.link_users is None:
            state.link_users = trees_using_links(s)
        self.heat.show_schedule(s, state.link_users)
        self._mark_disabled()

    def set_greyed(self, greyed: bool) -> None:
        """Grey the result's overlays out (stale) or restore them."""
        for ov in (self.cut, self.heat, self.trees):
            ov.set_greyed(greyed)

    def clear(self) -> None:
        self.animation.stop()
        for ov in (self.cut, self.heat, self.trees, self.disabled):
            ov.clear()

    def _mark_disabled(self) -> None:
        """Mark out-of-service links while the heat map hides the canvas's own marking."""
        doc = self.doc
        pairs = [
            (ln.source, ln.target) for uid, ln in doc.links.items() if doc.is_link_disabled(uid)
        ]
        if self.heat.active:
            self.disabled.show_links(pairs)
        else:
            self.disabled.clear()
        self.disabled.set_visible(self.heat.visible)

    def redraw(self) -> None:
        """Node positions or structure changed: redraw the overlays at the new places."""
        if self.schedule is None:
            return
        self.show_cut()
        self.show_heat()
        if self.trees.trees:
            self.trees.show_trees(self.trees.trees)
        if self.animation.trees:
            self.animation.render()

    def _on_trees_selected(self, trees: list) -> None:
        view = self.trees_view
        self.trees.show_trees(trees)
        rows = view.selected_rows()
        swatches = {r: self.trees.color_of(i) for i, r in enumerate(rows)}
        model, listed = view.model, view.model.rows

        def apply() -> None:  # later: a selection change can come from inside a filter change
            if model.rows is listed:
                model.set_swatches(swatches)

        QTimer.singleShot(0, apply)
        self.animation.set_trees(trees)
        view.set_playing(False)

    def _step(self) -> None:
        self.animation.pause()
        self.animation.advance()

    # ------------------------------------------------------------------ canvas hook
    def tooltip(self, node: str | None, link: int | None) -> str | None:
        """Hover text for the canvas: link load and trees when the heat map is shown."""
        stale = self.state.stale
        if link is not None and self.heat.active and self.heat.visible:
            ln = self.doc.links.get(link)
            if ln is not None:
                text = self.heat.tooltip_for_pair(ln.source, ln.target)
                if text:
                    bw = float(ln.bandwidth)
                    way = "one-way" if ln.directed else "full duplex"
                    note = "\n(stale result: the fabric changed)" if stale else ""
                    return f"{ln.label}: {bw:g} GB/s {way}\n{text}{note}"
        if node is not None and self.schedule is not None and self.cut.visible:
            if node in self.schedule.bottleneck.nodes:
                n = self.doc.nodes.get(node)
                if n is not None:
                    return f"{n.id}: {n.kind} {n.role} — inside the bottleneck cut S*"
        return None
