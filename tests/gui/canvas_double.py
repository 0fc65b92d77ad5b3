"""A test double of the canvas's overlay API (:class:`fc_gui.views.overlays.OverlayHost`) on a
bare pyqtgraph PlotWidget: overlays draw on it, and the link colours they set are recorded."""

from __future__ import annotations

import pyqtgraph as pg

from solver.model.topology import Topology


class PlotCanvasHost:
    """Overlay host drawing on ``plot`` at the positions of ``topology``'s nodes."""

    def __init__(self, plot: pg.PlotWidget, topology: Topology) -> None:
        self.plot = plot
        self.topology = topology
        self.link_colors: dict | None = None

    def node_positions(self) -> dict[str, tuple[float, float]]:
        return {n.id: (float(n.x or 0.0), float(n.y or 0.0)) for n in self.topology.nodes}

    def directed_links(self) -> list[tuple[str, str]]:
        return list(self.topology.directed_bandwidths())

    def add_overlay_item(self, item, z: float | None = None) -> None:
        if z is not None:
            item.setZValue(z)
        self.plot.getPlotItem().addItem(item)

    def remove_overlay_item(self, item) -> None:
        self.plot.getPlotItem().removeItem(item)

    def set_link_colors(self, colors) -> None:
        self.link_colors = None if colors is None else dict(colors)

    def overlay_parent(self) -> pg.PlotWidget:
        return self.plot
