"""How long the designer's GUI thread blocks while it opens a big fabric file (default: Alibaba
HPN with 4, 15 and 2x15 segments: 4096, 15 360 and 30 720 GPUs).

Offscreen, with the real MainWindow: each fabric is written as a v1 file outside the timing,
then opened the way *File > Open* does (``FileActions.open_file``: read, check, warnings and the
summary's grouping in a worker; the document and canvas in the GUI thread). A 5 ms timer ticks
in the GUI thread all along; its longest gap is the longest freeze a user could feel. Then the
GUI-thread steps after the open are timed (and, before the open, the longest gap of the idle
window: on a loaded machine the scheduler alone stalls the timer): the first repaint, expanding one pod and one host
of it, collapsing all, and a pan frame.

Goal (issue 23): no GUI-thread step above ~200 ms, the window never frozen.

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_open_large.py [--sizes 4,15,2x15]
    QT_QPA_PLATFORM=offscreen python benchmarks/gui_open_large.py --sizes clos8x256,clos32x256

(A size the node limit refuses gets a row saying so.)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def _fabric(spec: str):
    from solver.io.templates import clos3, hpn

    if spec.startswith("clos"):  # clos<zones>x<racks>: the 3-tier Clos (32x256: 131 072 GPUs)
        zones, _, racks = spec[4:].partition("x")
        return clos3(zones=int(zones), racks_per_zone=int(racks))
    pods, _, segments = spec.rpartition("x")
    return hpn(segments=int(segments), pods=int(pods or 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--sizes",
        default="4,15,2x15",
        help="HPN [pods x] segments, or clos<zones>x<racks> (3-tier Clos), comma-separated",
    )
    ap.add_argument("--screenshots", help="save a window grab per size into this directory")
    args = ap.parse_args()

    from PySide6.QtCore import QSettings, Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from fc_gui.main_window import MainWindow
    from solver.io import v1
    from solver.model.errors import ForestCollError

    app = QApplication.instance() or QApplication(["gui-bench"])
    tmp = Path(tempfile.mkdtemp(prefix="fc_open_large_"))
    rows = []
    for spec in args.sizes.split(","):
        try:
            topo = _fabric(spec)
        except ForestCollError as exc:
            rows.append((spec, f"refused: {str(exc).splitlines()[0]}"))
            continue
        path = tmp / f"hpn{spec}.json"
        path.write_text(v1.dumps(topo), encoding="utf-8")
        gpus, nodes, links = len(topo.compute_ids), len(topo.nodes), len(topo.links)
        del topo
        settings = QSettings(str(tmp / "bench.ini"), QSettings.Format.IniFormat)
        w = MainWindow(None, settings=settings, state_dir=tmp / "state", install_results=True)
        w.resize(1400, 860)
        w.show()
        app.processEvents()
        gaps: list[float] = []
        last = [time.perf_counter()]

        def tick(gaps=gaps, last=last) -> None:
            now = time.perf_counter()
            gaps.append(now - last[0])
            last[0] = now

        timer = QTimer()
        timer.setTimerType(Qt.TimerType.PreciseTimer)
        timer.setInterval(5)
        timer.timeout.connect(tick)
        fa = w.file_actions
        last[0] = time.perf_counter()
        timer.start()
        end = time.perf_counter() + 2.0  # the idle window first: what the machine's load costs
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.002)
        idle = max(gaps)
        gaps.clear()
        t0 = time.perf_counter()
        fa.open_file(path)
        error = None
        while "background" not in w.statusBar().currentMessage():
            app.processEvents()
            time.sleep(0.002)
            if not fa.is_opening() and len(w.document.nodes) != nodes:
                error = w.statusBar().currentMessage()
                break
        opened = time.perf_counter() - t0
        end = time.perf_counter() + 1.0  # the timers that follow an open (labels, warnings)
        while time.perf_counter() < end:
            app.processEvents()
            time.sleep(0.002)
        timer.stop()
        if error:
            rows.append((spec, f"failed: {error}"))
            w.close()
            continue
        canvas = w.canvas
        t = time.perf_counter()
        canvas.viewport().repaint()
        repaint = time.perf_counter() - t
        g = canvas.summary.state.grouping
        pod = next(a for a in canvas.summary.scene.aggregates if g.aggregates[a].level == "pod")
        t = time.perf_counter()
        canvas.expand_aggregate(pod)
        canvas.viewport().repaint()
        expand_pod = time.perf_counter() - t
        host = g.aggregates[pod].children[0]
        t = time.perf_counter()
        canvas.expand_aggregate(host)
        canvas.viewport().repaint()
        expand_host = time.perf_counter() - t
        if args.screenshots:
            out = Path(args.screenshots)
            out.mkdir(parents=True, exist_ok=True)
            w.grab().save(str(out / f"summary_hpn{spec}_expanded.png"))
        t = time.perf_counter()
        canvas.collapse_all()
        canvas.viewport().repaint()
        collapse = time.perf_counter() - t
        vb = canvas.view_box
        t = time.perf_counter()
        vb.translateBy(x=0.05 * vb.viewRect().width())
        canvas.viewport().repaint()
        app.processEvents()
        pan = time.perf_counter() - t
        if args.screenshots:
            canvas.fit_view()
            app.processEvents()
            w.grab().save(str(Path(args.screenshots) / f"summary_hpn{spec}.png"))
        steps = dict(fa.open_steps)
        rows.append(
            (
                spec,
                gpus,
                nodes,
                links,
                opened,
                fa.open_seconds,
                max(steps.values()),
                max(gaps),
                idle,
                repaint,
                expand_pod,
                expand_host,
                collapse,
                pan,
                len(g),
            )
        )
        w.close()
        w.deleteLater()
        app.processEvents()
        path.unlink()

    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} CPUs; offscreen 1400x860")
    print(
        "| fabric | GPUs | nodes | links | open s (worker: read / warnings / group) | aggregates "
        "| GUI step max ms | event-loop gap max ms (idle) | repaint ms | expand pod ms "
        "| expand host ms | collapse all ms | pan frame ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        if len(row) == 2:
            print(f"| {row[0]} | {row[1]} |" + " |" * 11)
            continue
        spec, gpus, nodes, links, opened, sec, step, gap, idle, rep, ep, eh, col, pan, k = row
        worker = " / ".join(f"{sec.get(k2, 0):.1f}" for k2 in ("read", "warnings", "group"))
        print(
            f"| {spec} | {gpus} | {nodes} | {links} | {opened:.1f} ({worker}) | {k} | "
            f"{_ms(step)} | {_ms(gap)} ({_ms(idle)}) | {_ms(rep)} | {_ms(ep)} | {_ms(eh)} | {_ms(col)} "
            f"| {_ms(pan)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
