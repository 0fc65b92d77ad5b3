"""The main window fits a 1366x768 laptop screen: docks scroll instead of squashing their fields."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QScrollArea

from fc_gui.main_window import MainWindow


def test_window_fits_a_768_pixel_screen_without_squashing_the_solve_panel(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(None, settings=settings, state_dir=tmp_path / "state")
    qtbot.addWidget(w)
    w.show()
    assert w.minimumSizeHint().height() <= 700  # was 845
    w.resize(1366, 700)  # 768 minus a desktop panel and the title bar
    qtbot.wait(50)
    assert w.height() == 700
    panel = w.results_controller.panel
    for field in (panel.collective_box,):
        assert field.height() >= field.sizeHint().height()  # full height, never squashed
    for dock in w.docks.values():
        scroll = dock.widget()
        assert isinstance(scroll, QScrollArea)
        if dock.isVisible() and not w.tabifiedDockWidgets(dock):
            content = scroll.widget()
            # content below its own minimum scrolls instead of shrinking
            assert (
                content.height() >= content.minimumSizeHint().height()
                or scroll.verticalScrollBar().maximum() > 0
            ), dock.windowTitle()
