"""The Solve menu: solve, cancel, re-solve on edit and clear (the overlays' toggles are in
View > Layers: :mod:`fc_gui.controllers.layers_menu`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence

if TYPE_CHECKING:
    from fc_gui.controllers.results import ResultsController


class SolveMenu(QObject):
    """Fills ``results.window.solve_menu``; the solve and cancel shortcuts work window-wide."""

    def __init__(self, results: ResultsController) -> None:
        super().__init__(results)
        window, panel = results.window, results.panel
        m = window.solve_menu
        self.solve_action = QAction("&Solve", self)
        self.solve_action.setShortcuts([QKeySequence("Ctrl+R"), QKeySequence("F5")])
        self.solve_action.triggered.connect(lambda: results.solving.solve())
        self.cancel_action = QAction("&Cancel solve", self)
        self.cancel_action.setShortcut(QKeySequence("Ctrl+."))
        self.cancel_action.setEnabled(False)
        self.cancel_action.triggered.connect(lambda: results.solving.cancel())
        self.auto_action = QAction("&Re-solve on edit", self, checkable=True)
        self.auto_action.toggled.connect(panel.auto_box.setChecked)
        panel.auto_box.toggled.connect(self.auto_action.setChecked)
        m.addAction(self.solve_action)
        m.addAction(self.cancel_action)
        m.addAction(self.auto_action)
        # the layer toggles live in View > Layers; these names stay for callers
        layers = results.layers
        self.show_cut_action = layers.cut_action
        self.show_heat_action = layers.heat_action
        self.show_trees_action = layers.trees_action
        m.addSeparator()
        self.clear_action = m.addAction("C&lear results", results.clear_results)
        window.addAction(self.solve_action)
        window.addAction(self.cancel_action)
