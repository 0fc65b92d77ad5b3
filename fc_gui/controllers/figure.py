"""Export > Figure… and ``forestcoll gui TOPO --solve --figure OUT.svg|OUT.png [--width PX]``.

The figure is built from the document and the shown result (not grabbed from the screen):
a true vector SVG (:mod:`fc_gui.views.figure_svg`), or that SVG rendered to a PNG of any width.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from fc_gui.views.figure_svg import FigureData, build_svg
from solver.io.files import atomic_path, atomic_write_text
from solver.model.errors import ForestCollError

DEFAULT_WIDTH = 1920  # a full-HD slide
MAX_WIDTH = 20000


def figure_data(window) -> FigureData:
    """What the window shows: the fabric, and the cut and heat map when they are shown."""
    doc = window.document
    topo = doc.to_topology(include_disabled=True)
    overlays = window.results_controller.overlays
    data = FigureData(
        title=topo.name or "fabric",
        nodes=[(n.id, n.kind, n.role, n.x or 0.0, n.y or 0.0, n.group) for n in topo.nodes],
        links=[(ln.source, ln.target, float(ln.bandwidth)) for ln in topo.links],
    )
    cut = overlays.cut
    if cut.cut is not None and cut.visible:
        data.cut_nodes = frozenset(cut.cut.nodes)
        data.cut_links = [(u, v) for u, v, _ in cut.cut.links]
        data.caption = cut.label_text
    heat = overlays.heat
    if heat.active and heat.visible:
        data.link_colors = dict(heat.shown_colors())
        stops = heat.cmap.getStops(mode="byte")
        data.color_bar = [(float(p), tuple(int(v) for v in c[:3])) for p, c in zip(*stops)]
    trees = overlays.trees
    if trees.trees and trees.visible:
        data.tree_paths = [
            (tuple(e.path), trees.color_of(i))
            for i, (_, t) in enumerate(trees.trees)
            for e in t.edges
        ]
        data.tree_roots = frozenset(t.root for _, t in trees.trees)
    anim = overlays.animation
    if anim.trees and anim.overlay.visible:
        if 0 < anim.step <= anim.steps:
            data.current_paths = [tuple(p) for _, _, p in anim.levels[anim.step - 1]]
        data.reached_nodes = frozenset(anim.holders())
    data.dimmed = overlays.dimmer.dimmed
    data.show_labels = window.canvas.labels.names.isVisible()
    data.text_scale = window.canvas.text_scale
    data.link_labels = window.canvas.labels.links.isVisible()
    return data


def save_figure(
    window, path: str | Path, width: int = DEFAULT_WIDTH, data: FigureData | None = None
) -> Path:
    """Write the figure to ``path`` (.svg: vector; .png: ``width`` pixels wide); ``data``:
    what to draw (default: :func:`figure_data` of the window)."""
    path = Path(path)
    if not 100 <= width <= MAX_WIDTH:
        raise ForestCollError(f"figure width must be 100..{MAX_WIDTH} pixels, not {width}")
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise ForestCollError(f"{path}: a figure is .svg or .png")
    svg = build_svg(data if data is not None else figure_data(window), width=float(width))
    try:
        if suffix == ".svg":
            atomic_write_text(path, svg)
            return path
        renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
        if not renderer.isValid():
            raise ForestCollError(f"cannot render the figure for {path}")
        size = renderer.defaultSize()
        image = QImage(size.width(), size.height(), QImage.Format.Format_ARGB32)
        image.fill(QColor("white"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter, QRectF(0, 0, size.width(), size.height()))
        painter.end()
        with atomic_path(path) as tmp:
            if not image.save(str(tmp), "PNG"):
                raise ForestCollError(f"cannot write {path}")
    except FileNotFoundError:
        raise ForestCollError(f"cannot write {path}: no such folder") from None
    except OSError as exc:
        raise ForestCollError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
