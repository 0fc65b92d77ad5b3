"""Dimming the other layers while a tree is animated: heat map, cut shading and its caption,
out-of-service marks and the fabric's links fade so the animated transfers stand out; they are
restored when the animation is reset, cleared or replaced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from fc_gui.views.overlays import DIM_OPACITY

if TYPE_CHECKING:
    from fc_gui.controllers.result_overlays import ResultOverlays


class LayerDimmer(QObject):
    """Follows ``overlays.animation``: dims while it is animating, restores after; other
    animations (the collective timeline) add a ``sources`` entry, a callable saying whether
    they are showing, and call :meth:`update` when that changes.

    Signals
    -------
    dimmed_changed(bool)
    """

    dimmed_changed = Signal(bool)

    def __init__(self, overlays: ResultOverlays) -> None:
        super().__init__(overlays)
        self.overlays = overlays
        self.enabled = True
        self.dimmed = False
        self.sources: list = []
        anim = overlays.animation
        anim.step_changed.connect(lambda *_: self.update())
        anim.playing_changed.connect(lambda *_: self.update())

    def set_enabled(self, on: bool) -> None:
        """View > Dim other layers during tree animation."""
        self.enabled = bool(on)
        self.update()

    def update(self) -> None:
        self._apply(
            self.enabled
            and (self.overlays.animation.animating or any(showing() for showing in self.sources))
        )

    def _apply(self, dim: bool) -> None:
        if dim == self.dimmed:
            return
        self.dimmed = dim
        ov = self.overlays
        for layer in (ov.cut, ov.heat, ov.disabled):
            layer.set_dimmed(dim)
        ov.canvas.set_links_opacity(DIM_OPACITY if dim else 1.0)
        self.dimmed_changed.emit(dim)
