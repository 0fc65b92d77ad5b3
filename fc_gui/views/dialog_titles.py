"""Dialog titles shown whole: a window manager elides a title wider than its dialog in the
middle ("Export...CL XML" under openbox), so a dialog is made at least as wide as its title in
the title-bar font plus the room of the frame's buttons; and the small number prompts built on
that."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QFontMetrics
from PySide6.QtWidgets import QInputDialog, QWidget

#: Room for the window menu icon and the minimise/maximise/close buttons of a title bar.
TITLE_BAR_BUTTONS_PX = 150


def title_width(title: str) -> int:
    """Pixels a title bar needs to show ``title`` whole (the system's title font, bold)."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.TitleFont)
    font.setBold(True)
    return QFontMetrics(font).horizontalAdvance(title) + TITLE_BAR_BUTTONS_PX


def keep_title_whole(dialog: QWidget, cap: int = 1000) -> QWidget:
    """Make ``dialog`` at least as wide as its title needs (up to ``cap`` pixels: a title
    naming a long file may still be elided); returns it."""
    need = min(title_width(dialog.windowTitle()), cap)
    dialog.setMinimumWidth(max(dialog.minimumWidth(), need))
    return dialog


def ask_int(
    parent: QWidget | None, title: str, label: str, value: int, lo: int, hi: int
) -> tuple[int, bool]:
    """QInputDialog.getInt with its title shown whole."""
    box = QInputDialog(parent)
    box.setWindowTitle(title)
    box.setLabelText(label)
    box.setInputMode(QInputDialog.InputMode.IntInput)
    box.setIntRange(lo, hi)
    box.setIntValue(value)
    keep_title_whole(box)
    ok = bool(box.exec())
    return box.intValue(), ok


def ask_item(parent: QWidget | None, title: str, label: str, items: list[str]) -> tuple[str, bool]:
    """QInputDialog.getItem (not editable, first item preselected) with its title whole."""
    box = QInputDialog(parent)
    box.setWindowTitle(title)
    box.setLabelText(label)
    box.setComboBoxItems(items)
    box.setComboBoxEditable(False)
    keep_title_whole(box)
    ok = bool(box.exec())
    return box.textValue(), ok
