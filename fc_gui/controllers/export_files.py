"""Writing exported files: readable permissions for atomic writes, and the whole window as a PNG
(the Export menu's and the batch run's ``--screenshot``)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtWidgets import QApplication

from solver.io.files import atomic_path
from solver.model.errors import ForestCollError


def make_readable(path: str | Path) -> None:
    """Give an exported file the usual permissions (atomic writes create it private, 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    try:
        os.chmod(path, 0o666 & ~mask)
    except OSError:
        pass


def save_window_png(window, path: str | Path) -> Path:
    """Render the whole window (canvas fitted to the view) to a PNG, atomically and readable;
    raise ForestCollError on failure."""
    path = Path(path)
    window.canvas.fit_view()
    QApplication.processEvents()
    pixmap = window.grab()
    if pixmap.isNull():
        raise ForestCollError(f"cannot render the window for {path}")
    try:
        with atomic_path(path) as tmp:
            if not pixmap.save(str(tmp), "PNG"):
                raise ForestCollError(f"cannot write {path}")
    except FileNotFoundError:
        raise ForestCollError(f"cannot write {path}: no such folder") from None
    make_readable(path)
    return path
