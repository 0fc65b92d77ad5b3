"""Frame times of the designer canvas on big fabrics (default: 128x DGX A100, 2178 nodes).

Measures, offscreen, with the real FabricCanvas: building the batch items, a full frame when
the whole fabric is in view, pan and zoom frames (view change + repaint, i.e. what a user waits
for), a node drag step, and applying a per-link heat-map colouring. Prints a table (ms).

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_draw.py [--boxes 128] [--frames 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", type=int, default=128)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--size", default="1400x900")
    args = ap.parse_args()

    import numpy as np
    from PySide6.QtGui import QUndoStack
    from PySide6.QtWidgets import QApplication

    from fc_gui.model.document import TopologyDocument
    from fc_gui.views.canvas import FabricCanvas
    from solver.io.templates import dgx_a100

    app = QApplication.instance() or QApplication([])
    topo = dgx_a100(args.boxes)
    w, h = (int(v) for v in args.size.split("x"))

    class CountingCanvas(FabricCanvas):
        paints = 0

        def paintEvent(self, ev):
            CountingCanvas.paints += 1
            super().paintEvent(ev)

    t0 = time.perf_counter()
    doc = TopologyDocument(topo)
    canvas = CountingCanvas(doc, QUndoStack())
    canvas.resize(w, h)
    canvas.show()
    app.processEvents()
    build = time.perf_counter() - t0

    def frame() -> float:
        """Update the labels as the label timer would, then let Qt repaint the widget (one
        paint, as on screen)."""
        s = time.perf_counter()
        canvas.layers.settle()
        before = CountingCanvas.paints
        app.processEvents()
        if CountingCanvas.paints == before:
            canvas.viewport().repaint()
        if CountingCanvas.paints - before != 1:
            raise RuntimeError(
                f"expected one paint per frame, got {CountingCanvas.paints - before}"
            )
        return time.perf_counter() - s

    rows: list[tuple[str, list[float]]] = []
    canvas.fit_view()
    frame()
    rows.append(("repaint, unchanged view", [frame() for _ in range(max(5, args.frames // 4))]))

    def timed(step) -> list[float]:
        out = []
        for i in range(args.frames):
            s = time.perf_counter()
            step(i)
            out.append(time.perf_counter() - s + frame())
        return out

    vb = canvas.view_box
    rows.append(("pan, whole fabric", timed(lambda i: vb.translateBy(x=(-1) ** (i // 10) * 40))))
    x, y = doc.position("b0.gpu0")
    vb.setRange(xRange=(x - 400, x + 1200), yRange=(y - 300, y + 700), padding=0)
    frame()
    rows.append(("pan, zoomed (labels)", timed(lambda i: vb.translateBy(x=(-1) ** (i // 10) * 30))))
    canvas.fit_view()
    frame()
    rows.append(
        ("zoom step", timed(lambda i: canvas.zoom(1.15 if (i // 10) % 2 == 0 else 1 / 1.15)))
    )
    box = [f"b5.gpu{j}" for j in range(8)]
    base = {n: doc.position(n) for n in box}
    rows.append(
        (
            "drag 8 nodes (1 step)",
            timed(lambda i: doc.move_nodes({n: (p[0] + i, p[1] + i) for n, p in base.items()})),
        )
    )
    from fc_gui.model.document import make_link

    def add_link(i):
        uid = doc.new_link_uid()
        doc.insert_items([], {uid: make_link(f"b{i}.gpu0", f"b{i + 1}.gpu0", 50)})

    rows.append(("add a link (full rebuild)", timed(add_link)))
    rng = np.random.default_rng(1)
    n_dir = len(canvas.directed_links())

    def heat(i):
        load = rng.random(n_dir)
        rgba = np.stack(
            [255 * load, 80 * np.ones(n_dir), 255 * (1 - load), 255 * np.ones(n_dir)], 1
        )
        canvas.set_link_colors(rgba)

    rows.append(("heat map recolour", timed(heat)))
    canvas.set_link_colors(None)

    print(
        f"fabric: {topo.name}: {len(topo.nodes)} nodes, {len(topo.links)} links, "
        f"{2 * len(topo.links)} directions; view {w}x{h}, {args.frames} frames per row"
    )
    print(f"build document + canvas: {build * 1e3:.0f} ms")
    print(f"{'operation':<24} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'fps (median)':>13}")
    for name, times in rows:
        ms = sorted(t * 1e3 for t in times)
        med = statistics.median(ms)
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        print(f"{name:<24} {med:>10.1f} {p95:>8.1f} {ms[-1]:>8.1f} {1e3 / med:>13.0f}")
    canvas.close()


if __name__ == "__main__":
    main()
