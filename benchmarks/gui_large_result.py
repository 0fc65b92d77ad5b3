"""How long the designer's GUI thread blocks when it shows a large result (default: 128x DGX H100
rail, 1024 GPUs, 1024 trees of 1023 edges).

Offscreen, with the real MainWindow and its results controller: the schedule is solved (or read
from ``--h5``) outside the timing, ``prepare_display`` runs as in the solve worker (its time is
shown, but it is off the GUI thread), then the GUI-thread work is timed piece by piece:

- show: each step of ``show_schedule`` (summary, cut, heat map, trees table, plots), which the
  window runs one per event-loop turn: the longest is the longest freeze;
- select tree: selecting one tree in the trees table (the overlay is drawn) plus the repaint;
- congestion frame / tree frame: pan steps (view change + full repaint) with the heat map, and
  with one tree overlaid on it;
- hover: the tooltip of a loaded link (it lists the trees crossing it).

Goal (issue 11): no single GUI-thread step above ~200 ms.

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_large_result.py [--boxes 128] [--h5 FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boxes", type=int, default=128)
    ap.add_argument("--h5", help="read the allgather schedule from this results file")
    ap.add_argument("--frames", type=int, default=10)
    args = ap.parse_args()

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from fc_gui.controllers.solve_jobs import prepare_display
    from fc_gui.main_window import MainWindow
    from solver import solve
    from solver.io.templates import dgx_h100_rail

    app = QApplication.instance() or QApplication(["gui-bench"])
    topo = dgx_h100_rail(args.boxes)
    t0 = time.perf_counter()
    if args.h5:
        from solver.io.hdf5.results import read_schedules

        schedule = read_schedules(args.h5)["allgather"]
        if schedule.topology != topo:
            raise SystemExit(f"error: {args.h5} holds another fabric")
        source = f"read {args.h5}"
    else:
        schedule = solve(topo)
        source = "solved"
    got = time.perf_counter() - t0
    t0 = time.perf_counter()
    prepared = prepare_display(schedule)
    prepare = time.perf_counter() - t0

    settings = QSettings(str(Path("/tmp") / "fc_bench_large.ini"), QSettings.Format.IniFormat)
    w = MainWindow(
        topo, settings=settings, state_dir="/tmp/fc_bench_large_state", install_results=True
    )
    rc = w.results_controller
    w.resize(1400, 860)
    w.show()
    app.processEvents()

    # the staged display runs these steps one per event-loop turn: time each one
    steps = {
        "summary": lambda: rc.summary.set_schedule(schedule, None, previous=rc.state.previous),
        "bottleneck cut": rc.overlays.show_cut,
        "congestion map": rc.overlays.show_heat,
        "trees table": lambda: rc.trees_view.set_schedule(schedule, prepared.get("tree_rows")),
        "plots": lambda: rc.plots.set_schedule(schedule, prepared.get("model_tables")),
    }
    rc.state.schedule = schedule
    rc.overlays.link_users = prepared.get("link_users")
    took = {}
    for name, step in steps.items():
        t0 = time.perf_counter()
        step()
        app.processEvents()
        took[name] = time.perf_counter() - t0
    t0 = time.perf_counter()
    w.canvas.viewport().repaint()
    first_paint = time.perf_counter() - t0

    def pan_frames() -> list[float]:
        vb = w.canvas.view_box
        out = []
        sign = 1.0
        for _ in range(args.frames):
            r = vb.viewRect()
            sign = -sign
            t0 = time.perf_counter()
            vb.translateBy(x=sign * 0.02 * r.width())
            w.canvas.viewport().repaint()
            app.processEvents()
            out.append(time.perf_counter() - t0)
        return out

    heat = pan_frames()
    view = rc.trees_view
    t0 = time.perf_counter()
    view.select_rows([len(view.rows()) // 2])
    app.processEvents()
    w.canvas.viewport().repaint()
    select = time.perf_counter() - t0
    shown = len(rc.overlays.trees.trees)
    tree = pan_frames()

    loads = sorted(enumerate(schedule.link_load), key=lambda p: -p[1].load)
    link_index = {(lk.source, lk.target): i for i, lk in enumerate(topo.links)}
    worst = loads[0][1]
    idx = link_index.get((worst.source, worst.target), link_index.get((worst.target, worst.source)))
    t0 = time.perf_counter()
    tip = rc.overlays.tooltip(None, idx) or ""
    hover = time.perf_counter() - t0

    rc.shutdown()
    w.close()
    app.processEvents()

    n = len(topo.compute_ids)
    load = os.getloadavg()[0]
    print(
        f"{topo.name}: {n} GPUs, {len(schedule.trees)} trees, "
        f"{sum(len(t.edges) for t in schedule.trees)} tree edges; schedule {source} in "
        f"{got:.1f} s; load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    print(f"prepare_display (solve worker, off the GUI thread): {prepare:.2f} s")
    print("| GUI-thread step | ms |")
    print("|---|---|")
    for name, seconds in took.items():
        print(f"| show: {name} | {_ms(seconds)} |")
    print(f"| first repaint with cut + heat map | {_ms(first_paint)} |")
    print(
        f"| congestion map: pan frame median / max | {_ms(statistics.median(heat))} / "
        f"{_ms(max(heat))} |"
    )
    print(f"| select one tree ({shown} drawn) + repaint | {_ms(select)} |")
    print(
        f"| tree + heat map: pan frame median / max | {_ms(statistics.median(tree))} / "
        f"{_ms(max(tree))} |"
    )
    print(
        f"| hover tooltip on the most loaded link ({len(tip.splitlines())} lines) | {_ms(hover)} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
