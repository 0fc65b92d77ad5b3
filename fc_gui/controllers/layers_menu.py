"""View > layers: checkable actions that show or hide the canvas's layers (bottleneck cut,
heat map, selected trees, node labels, box frames, link bandwidths) and switch the dimming of the other layers
while a tree is animated. A dock checkbox for a layer (the studies' resilience map) is kept in
sync with its action (:meth:`LayersMenu.add_synced`)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton


class LayersMenu(QObject):
    """A "Layers" section of ``view_menu`` toggling ``overlays``
    (:class:`~fc_gui.controllers.result_overlays.ResultOverlays`) and ``canvas``'s layers
    (see module docstring)."""

    def __init__(self, view_menu, overlays, canvas, parent=None) -> None:
        super().__init__(parent)
        m = view_menu
        m.addSeparator()
        self.section = m.addSection("Layers")
        self.menu = m
        self.actions: dict[str, QAction] = {}
        self.cut_action = self._add("cut", "Bottleneck &cut", overlays.cut.set_visible)
        self.heat_action = self._add("heat", "Congestion &heat map", overlays.heat.set_visible)
        self.heat_action.toggled.connect(overlays.disabled.set_visible)
        self.trees_action = self._add("trees", "Selected &trees", self._show_trees)
        self.labels_action = self._add("labels", "Node &labels", canvas.set_labels_visible)
        self.frames_action = self._add("frames", "Box &frames", canvas.set_frames_visible)
        self.bandwidths_action = self._add(
            "bandwidths",
            "Link &bandwidths (GB/s on links)",
            canvas.set_link_labels_visible,
            checked=False,
        )
        self.bandwidths_action.setShortcut("Ctrl+Shift+B")
        self.dim_action = self._add(
            "dim", "&Dim other layers during tree animation", overlays.dimmer.set_enabled
        )
        self.overlays = overlays

    def _show_trees(self, visible: bool) -> None:
        self.overlays.trees.set_visible(visible)
        self.overlays.animation.overlay.set_visible(visible)

    def _add(self, key: str, title: str, slot, checked: bool = True) -> QAction:
        act = QAction(title, self, checkable=True)
        act.setChecked(checked)
        act.toggled.connect(slot)
        self.menu.addAction(act)
        self.actions[key] = act
        return act

    def add_synced(self, key: str, title: str, box: QAbstractButton) -> QAction:
        """An action mirroring the dock checkbox ``box`` (either one toggles both)."""
        act = self._add(key, title, box.setChecked, box.isChecked())
        box.toggled.connect(act.setChecked)
        return act

    def states(self) -> dict[str, bool]:
        """{key: checked} of every layer action."""
        return {k: a.isChecked() for k, a in self.actions.items()}
