"""The Solve menu: solve, cancel, re-solve on edit and clear (the overlays' toggles are in
View > Layers: :mod:`fc_gui.controllers.layers_menu`)."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence

from fc_gui.model.result_state import ResultState


class SolveMenu(QObject):
    """Fills ``window.solve_menu``; the solve and cancel shortcuts work window-wide. Solve and
    Cancel follow ``state.solving``; what the actions do is wired by the results controller.

    ``panel``'s re-solve-on-edit box and the menu's entry mirror each other; ``layers``
    (:class:`~fc_gui.controllers.layers_menu.LayersMenu`) lends its layer toggles.
    """

    def __init__(self, state: ResultState, window, panel, layers, parent=None) -> None:
        super().__init__(parent)
        m = window.solve_menu
        self.solve_action = QAction("&Solve", self)
        self.solve_action.setShortcuts([QKeySequence("Ctrl+R"), QKeySequence("F5")])
        self.cancel_action = QAction("&Cancel solve", self)
        self.cancel_action.setShortcut(QKeySequence("Ctrl+."))
        self.cancel_action.setEnabled(False)
        self.auto_action = QAction("&Re-solve on edit", self, checkable=True)
        self.auto_action.toggled.connect(panel.auto_box.setChecked)
        panel.auto_box.toggled.connect(self.auto_action.setChecked)
        m.addAction(self.solve_action)
        m.addAction(self.cancel_action)
        m.addAction(self.auto_action)
        # the layer toggles live in View > Layers; these names stay for callers
        self.show_cut_action = layers.cut_action
        self.show_heat_action = layers.heat_action
        self.show_trees_action = layers.trees_action
        m.addSeparator()
        self.clear_action = m.addAction("C&lear results")
        window.addAction(self.solve_action)
        window.addAction(self.cancel_action)
        state.solving_changed.connect(self._on_solving)

    def _on_solving(self, running: bool) -> None:
        self.solve_action.setEnabled(not running)
        self.cancel_action.setEnabled(running)
