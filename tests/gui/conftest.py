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
