"""Dimming the other layers while a tree is animated: heat map, cut shading and its caption,
out-of-service marks and the fabric's links fade so the animated transfers stand out; they are
restored when the animation is reset, cleared or replaced."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal

from fc_gui.views.animation import BroadcastAnimation
from fc_gui.views.overlays import DIM_OPACITY


class LayerDimmer(QObject):
    """Follows ``animation`` (the trees' broadcast): while it is animating, ``layers`` (overlays
    with ``set_dimmed``) and ``canvas``'s links are dimmed, restored after; other
    animations (the collective timeline) add a ``sources`` entry, a callable saying whether
    they are showing, and call :meth:`update` when that changes.

    Signals
    -------
    dimmed_changed(bool)
    """

    dimmed_changed = Signal(bool)

    def __init__(
        self, animation: BroadcastAnimation, layers: Sequence, canvas, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.animation = animation
        self.layers = tuple(layers)
        self.canvas = canvas
        self.enabled = True
        self.dimmed = False
        self.sources: list = []
        anim = animation
        anim.step_changed.connect(lambda *_: self.update())
        anim.playing_changed.connect(lambda *_: self.update())

    def set_enabled(self, on: bool) -> None:
        """View > Dim other layers during tree animation."""
        self.enabled = bool(on)
        self.update()

    def update(self) -> None:
        self._apply(
            self.enabled
            and (self.animation.animating or any(showing() for showing in self.sources))
        )

    def _apply(self, dim: bool) -> None:
        if dim == self.dimmed:
            return
        self.dimmed = dim
        for layer in self.layers:
            layer.set_dimmed(dim)
        self.canvas.set_links_opacity(DIM_OPACITY if dim else 1.0)
        self.dimmed_changed.emit(dim)
