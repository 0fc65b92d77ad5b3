"""The plots dock: short series names, a legend beside the data, hover read-outs, plot export
(PNG, SVG, CSV) and the designer's simulation being the CLI's (issue 14 item 7, issue 15)."""

from __future__ import annotations

import csv
import io
import json
import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer
from results_fixtures import ring4_schedule

from fc_gui.views.plots_dock import PlotsDock
from solver.model.results import ResultTable

SIZES = np.array([1 << k for k in range(10, 31, 2)], np.int64)  # 1K .. 1G, 11 sizes


def sim_table(algorithm: str, scale: float, sizes=SIZES, **attrs) -> ResultTable:
    y = scale * np.log2(sizes / 512.0)
    nan = ResultTable.empty_measured(len(sizes))
    return ResultTable(
        "allgather", algorithm, "simulator", sizes, sizes / y / 1e9, y, nan, nan.copy(), attrs=attrs
    )


def measured_table(algorithm: str = "measured", sizes=SIZES[::2]) -> ResultTable:
    y = 9.0 * np.arange(1, len(sizes) + 1)
    nan = np.full(len(sizes), np.nan)
    return ResultTable(
        "allgather", algorithm, "nccl-tests", sizes, nan, nan.copy(), sizes / y / 1e9, y
    )


def twelve_series(dock: PlotsDock) -> None:
    """The bound and estimate of ring4, seven simulated lines and three measured ones."""
    dock.set_schedule(ring4_schedule())
    choice = ["Tree/LL"] * 4 + ["Ring/Simple"] * (len(SIZES) - 4)
    tables = {
        f"sim_allgather_{a}": sim_table(a, 20 - i)
        for i, a in enumerate(["forestcoll", "ring", "ring1", "tree", "direct", "blink"])
    }
    tables["sim_allgather_nccl"] = sim_table("nccl", 12.5, library="nccl", choice=choice)
    assert dock.add_tables(tables) == 7
    assert dock.add_tables({"measured_allgather_nccl_tests": measured_table()}, "imported") == 1
    assert dock.add_tables({"again": measured_table()}, "imported") == 1
    assert dock.add_tables({"m": measured_table("rccl-ring")}, "imported") == 1


@pytest.fixture
def dock(qtbot):
    d = PlotsDock()
    qtbot.addWidget(d)
    d.resize(1000, 260)
    d.show()
    qtbot.waitExposed(d)
    return d


# ---------------------------------------------------------------------- names
def test_series_names_are_short(dock):
    twelve_series(dock)
    assert dock.labels() == [
        "bound 266.7 GB/s",
        "α-β estimate",
        "ForestColl",
        "ring",
        "one ring",
        "tree",
        "direct",
        "Blink",
        "nccl (ring)",
        "measured allgather",
        "measured allgather 2",
        "measured rccl-ring",
    ]
    assert all(len(label) <= 20 for label in dock.labels())
    assert not any("(" in label and "_" in label for label in dock.labels())  # no table names
    # the library line says per point what it picked
    assert dock.lines["nccl (ring)"].notes[0] == "Tree/LL"


# ---------------------------------------------------------------------- legend
def legend_rects(dock):
    return [(lab.sceneBoundingRect(), lab.item.toPlainText()) for _, lab in dock.legend.items]


@pytest.mark.parametrize("height", [200, 260, 420])
def test_legend_of_twelve_series_fits_beside_the_data(dock, qtbot, height):
    twelve_series(dock)
    dock.resize(1000, height)
    qtbot.wait(50)
    legend = dock.legend.sceneBoundingRect()
    area = dock.plot_item.vb.sceneBoundingRect()
    view = dock.plot.mapToScene(dock.plot.viewport().rect()).boundingRect()
    assert len(dock.legend.items) == 12
    assert not legend.intersects(area)  # never over the data
    assert view.contains(legend)  # all of it visible
    labels = legend_rects(dock)
    for rect, text in labels:
        assert legend.contains(rect), text
    for i, (a, ta) in enumerate(labels):  # no entry drawn over another
        for b, tb in labels[i + 1 :]:
            assert not a.intersects(b), (ta, tb)
    assert area.width() > 0.5 * view.width()  # and the plot keeps most of the width


def test_legend_takes_fewer_columns_when_the_plot_is_taller(dock, qtbot):
    twelve_series(dock)
    dock.resize(1000, 200)
    qtbot.wait(50)
    short = dock.legend.columnCount
    dock.resize(1000, 600)
    qtbot.wait(50)
    assert dock.legend.columnCount < short
    dock.clear_imported()
    dock.set_schedule(None)
    assert dock.labels() == [] and not dock.legend.isVisible()


# ---------------------------------------------------------------------- hover
def test_hover_reads_out_the_nearest_point_of_each_series(dock, qtbot):
    twelve_series(dock)
    qtbot.wait(50)
    vb = dock.plot_item.vb
    y = 0.5 * sum(vb.viewRange()[1])
    scene_pos = vb.mapViewToScene(QPointF(math.log10(1.2e6), y))  # nearest to 1M
    dock.plot.scene().sigMouseMoved.emit(scene_pos)
    lines = dock.hover.text.splitlines()
    assert len(lines) == 12 and all(item.isVisible() for item in dock.hover.items())
    assert "ForestColl: 1M 220 GB/s" in lines  # 20 * log2(1M / 512)
    assert "nccl (ring): 1M 137.5 GB/s (Ring/Simple)" in lines
    assert "bound 266.7 GB/s: 1M 266.7 GB/s" in lines
    # the measured series has points at 1K, 16K, 256K, 4M...: its nearest to 1.2M is 4M
    assert "measured allgather: 4M 36 GB/s" in lines
    # issue 26: the box covered most of the plot; twelve lines (one of them at
    # another size) took 40 % of a 1000x260 dock's plot, now 29 %
    box = dock.hover.box.textItem.boundingRect()  # pixels (the text item is not scaled)
    area = vb.sceneBoundingRect()
    assert box.width() * box.height() <= area.width() * area.height() / 3
    # units follow the value: a tiny algbw is written in MB/s
    dock.add_tables({"slow": sim_table("ring", 0.01)}, "imported")
    dock.hover.show_at(QPointF(3.0, y))
    assert "ring 2: 1K 10 MB/s" in dock.hover.text.splitlines()
    # leaving the plot area hides it
    dock.plot.scene().sigMouseMoved.emit(QPointF(-50, -50))
    assert dock.hover.text == "" and not dock.hover.box.isVisible()


# ---------------------------------------------------------------------- export
def test_export_menu_writes_the_plot_as_png_svg_and_csv(make_results_window, tmp_path, errors):
    w = make_results_window()
    rc = w.results_controller
    twelve_series(rc.plots)
    texts = [a.text() for a in w.export_menu.actions()]
    assert {"Plot as P&NG…", "Plot as S&VG…", "Plot data as &CSV…"} <= set(texts)

    png = rc.plot_export.export_png(tmp_path / "plot.png", width=1800)
    image = QImage(str(png))
    assert not image.isNull() and image.width() == 1800

    svg = rc.plot_export.export_svg(tmp_path / "plot.svg")
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f".//{ns}image") is None  # vector only
    texts = {t.text for t in root.iter(f"{ns}text")}
    assert set(rc.plots.labels()) <= texts and {"1K", "1M", "1G"} <= texts
    assert len(root.findall(f".//{ns}polyline")) == 12
    # the file renders (Qt's SVG renderer, part of PySide6-Essentials): not blank at 1200 px wide
    renderer = QSvgRenderer(str(svg))
    assert renderer.isValid()
    size = renderer.defaultSize()
    rendered = QImage(1200, round(1200 * size.height() / size.width()), QImage.Format_ARGB32)
    rendered.fill(0)
    painter = QPainter(rendered)
    renderer.render(painter)
    painter.end()
    drawn = {
        rendered.pixel(x, y) for x in range(0, 1200, 7) for y in range(0, rendered.height(), 7)
    }
    assert len(drawn) > 3  # background, axes, text and curves in several colours

    out = rc.plot_export.export_csv(tmp_path / "plot.csv")
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    header = rows[0]
    assert header[:2] == ["size (bytes)", "size"]
    assert header[2:] == [f"{name} algbw (GB/s)" for name in rc.plots.labels()]
    body = {int(r[0]): r for r in rows[1:]}
    assert sorted(body) == sorted(set(body))  # one row per size
    fc = header.index("ForestColl algbw (GB/s)")
    assert float(body[1 << 20][fc]) == pytest.approx(220)
    measured = header.index("measured allgather algbw (GB/s)")
    assert body[1 << 12][measured] == ""  # no measurement at 4K
    assert errors == []
    # a folder that cannot be written is one line in a dialog
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    assert rc.plot_export.export_csv(blocked / "plot.csv") is None
    assert errors and errors[-1][0] == "Export failed" and "\n" not in errors[-1][1]


def test_plot_export_needs_lines(make_results_window, tmp_path, errors):
    w = make_results_window()
    rc = w.results_controller
    assert not rc.plot_export.csv_action.isEnabled()
    assert rc.plot_export.export_csv(tmp_path / "empty.csv") is None
    assert errors and "nothing on the plot" in errors[-1][1]


# ---------------------------------------------------------------------- designer == CLI
def test_designer_simulation_shows_the_cli_numbers_and_its_nvls_note(
    qtbot, make_results_window, capsys
):
    """On one DGX H100 (NVSwitch with NVLS), allreduce: every simulated point of the designer is
    the point ``forestcoll simulate`` prints for the same sizes, including the library's pick,
    and the note that NVLS beats the ForestColl bound is on the plot."""
    import solver
    from fc_gui.controllers.simulation import SIM_ALGORITHMS, SIM_SIZES
    from solver.cli import main
    from solver.io.templates import dgx_h100_rail

    w = make_results_window(dgx_h100_rail(1), solve_fn=solver.solve)
    rc = w.results_controller
    rc.panel.set_collective("allreduce")
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=60000):
        assert rc.solving.solve()
    with qtbot.waitSignal(rc.simulation.task.done, timeout=120000):
        rc.plots.simulate_button.click()

    path = w.file_actions.state_dir() / "h100.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    from solver.io import v1

    path.write_text(v1.dumps(rc.state.schedule.topology), encoding="utf-8")
    capsys.readouterr()
    assert (
        main(
            [
                "simulate",
                str(path),
                "-c",
                "allreduce",
                "-s",
                SIM_SIZES,
                "-a",
                ",".join(SIM_ALGORITHMS),
                "--json",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    cli = {(r["algorithm"], r["size"]): r for r in doc["rows"]}
    tables = {t.algorithm: t for t in rc.state.simulated.values()}
    assert (
        set(tables)
        == {r["algorithm"] for r in doc["rows"]}
        >= {"nccl", "forestcoll", "forestcoll-nvls"}
    )
    # the hierarchical NVLS line: drawn, at or below the capability optimum (450 GB/s)
    assert list(rc.plots.series["ForestColl + NVLS"].yData) == pytest.approx(
        list(tables["forestcoll-nvls"].predicted_algbw)
    )
    assert max(tables["forestcoll-nvls"].predicted_algbw) <= 450
    for name, table in tables.items():
        for size, algbw in zip(table.size_bytes, table.predicted_algbw):
            assert algbw == pytest.approx(cli[(name, int(size))]["algbw"], rel=1e-9), (name, size)
    picks = [cli[("nccl", int(s))]["choice"] for s in tables["nccl"].size_bytes]
    assert list(tables["nccl"].attrs["choice"]) == picks
    # the plotted lines are these numbers, under their short names
    nccl_label = next(label for label in rc.plots._simulated if label.startswith("nccl ("))
    assert list(rc.plots.series[nccl_label].yData) == pytest.approx(
        list(tables["nccl"].predicted_algbw)
    )
    assert nccl_label == "nccl (NVLS)"
    # the note the CLI prints is on the plot (and in its exports)
    assert doc["in_switch_reduction"] and rc.plots.note == doc["in_switch_reduction"]
    assert rc.plots.plot_item.titleLabel.isVisible()
    assert doc["in_switch_reduction"] in rc.plots.svg_text()


def test_a_long_note_is_elided_and_never_pushes_the_legend_out(dock, qtbot):
    twelve_series(dock)
    note = (
        "NVLSTree/Simple reduces inside the NVSwitch: 309.1 GB/s at 1G beats the ForestColl "
        "bound 266.7 GB/s, which assumes switches only forward"
    ) * 2
    dock.set_note(note)
    for width in (700, 1000):
        dock.resize(width, 260)
        qtbot.wait(50)
        view = dock.plot.mapToScene(dock.plot.viewport().rect()).boundingRect()
        assert view.contains(dock.legend.sceneBoundingRect()), width
        title = dock.plot_item.titleLabel
        text = title.item.sceneBoundingRect()
        assert title.isVisible() and view.contains(text)
        assert not text.intersects(dock.legend.sceneBoundingRect())
        shown = title.item.toPlainText()
        assert shown.endswith("…") and note.startswith(shown[:-1])
    assert dock.plot_item.titleLabel.toolTip() == note
    assert note in dock.svg_text()  # the exported SVG has all of it
    dock.set_note("")
    assert not dock.plot_item.titleLabel.isVisible()
