import pytest


@pytest.fixture(autouse=True, scope="session")
def _clear_clipboard_before_qt_teardown():
    """Qt's offscreen clipboard still owning our QMimeData at interpreter exit segfaults the
    process (exit code 139) after all tests passed; the app clears it on aboutToQuit, and so
    does the test session here."""
    yield
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        app.clipboard().clear()


@pytest.fixture
def errors(monkeypatch):
    """Records error dialogs (title, text) instead of showing them."""
    from PySide6.QtWidgets import QMessageBox

    seen: list[tuple[str, str]] = []

    def critical(parent, title, text, *args, **kwargs):
        seen.append((title, text))
        return QMessageBox.StandardButton.Ok

    monkeypatch.setattr(QMessageBox, "critical", staticmethod(critical))
    return seen


@pytest.fixture
def make_results_window(qtbot, tmp_path):
    """Makes main windows with the results side on a fake solver (default: the 4-GPU ring),
    that never ask about unsaved changes; closes them after the test."""
    from PySide6.QtCore import QSettings
    from results_fixtures import FakeSolver, ring4

    from fc_gui.controllers.results import install
    from fc_gui.main_window import MainWindow

    windows = []

    def make(topology=None, solve_fn=None):
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(
            topology or ring4(),
            settings=settings,
            state_dir=tmp_path / "state",
            install_results=False,
        )
        w.results_controller = install(w, solve_fn=solve_fn or FakeSolver(0.05), warmup=False)
        w.file_actions.confirm_discard = lambda reason="": True
        w.resize(1200, 800)
        w.show()
        windows.append(w)
        return w

    yield make
    for w in windows:
        w.results_controller.shutdown()
        w.undo_stack.setClean()
        w.close()
        w.deleteLater()
