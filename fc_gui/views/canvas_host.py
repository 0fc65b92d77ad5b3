"""What the canvas's input handlers see of the canvas: a narrow protocol, so the tools, the
keyboard, the context menu and the hover tips (:mod:`~fc_gui.views.canvas_tools`,
:mod:`~fc_gui.views.canvas_keyboard`, :mod:`~fc_gui.views.canvas_menu`,
:mod:`~fc_gui.views.canvas_hover`) never import :mod:`fc_gui.views.canvas`, which composes them.

:class:`~fc_gui.views.canvas.FabricCanvas` is the one implementation; a test may pass any
object with these members.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, SignalInstance
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QWidget

from fc_gui.model.document import TopologyDocument
from fc_gui.model.document_index import DocumentIndex


class CanvasHost(Protocol):
    """The canvas as its input handlers use it."""

    doc: TopologyDocument
    undo_stack: QUndoStack
    view_box: pg.ViewBox
    index: DocumentIndex
    default_bandwidth: str  # GB/s of a link drawn with the Add link tool
    snap_to_grid: bool
    grid_size: float
    context_menu_hooks: list[Callable]  # f(menu, node_id, link_uid) add menu entries
    tooltip_providers: list[Callable]  # f(node_id, link_uid) -> str | None, first answer wins

    @property
    def node_clicked(self) -> SignalInstance: ...

    @property
    def link_clicked(self) -> SignalInstance: ...

    @property
    def hovered(self) -> SignalInstance: ...

    @property
    def item_activated(self) -> SignalInstance: ...

    def overlay_parent(self) -> QWidget:
        """The canvas widget (parent of menus and tool tips)."""
        ...

    def viewport(self) -> QWidget:
        """The widget the view paints on."""
        ...

    def hasFocus(self) -> bool:  # noqa: N802 (Qt's name)
        ...

    def global_point(self, scene_pos: QPointF) -> QPoint:
        """Screen position of a scene position."""
        ...

    def view_point(self, scene_pos: QPointF) -> tuple[float, float]:
        """Data coordinates of a scene position."""
        ...

    def snap(self, x: float, y: float) -> tuple[float, float]: ...

    def node_at(self, x: float, y: float) -> str | None: ...

    def link_at(self, x: float, y: float) -> int | None: ...

    def fit_view(self) -> None: ...

    def leave_focus(self, forward: bool) -> None:
        """Give the keyboard focus to the next (or previous) widget of the window."""
        ...
