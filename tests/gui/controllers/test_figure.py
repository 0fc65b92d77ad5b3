"""Export > Figure… and ``--figure``: a true vector SVG and a PNG of any width."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication
from results_fixtures import FakeSolver, ring4
from test_screenshot import SAMPLE, run_gui

from fc_gui.controllers.figure import save_figure
from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from solver.model.errors import ForestCollError

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def solved(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring4(), settings=settings, state_dir=tmp_path, install_results=False)
    w.results_controller = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    w.resize(1000, 700)
    w.show()
    w.results_controller.solving.solve()
    overlays = w.results_controller.overlays
    qtbot.waitUntil(lambda: overlays.heat.active and overlays.cut.cut is not None, timeout=5000)
    yield w
    w.results_controller.shutdown()
    w.undo_stack.setClean()
    w.close()


def test_svg_figure_is_vector_with_legend_symbols_and_color_bar(solved, tmp_path):
    out = save_figure(solved, tmp_path / "fig.svg", 1200)
    root = ET.parse(out).getroot()
    assert root.get("width") == "1200"
    assert not list(root.iter(f"{SVG}image")), "no embedded bitmaps"
    nodes = root.find(f".//{SVG}g[@id='nodes']")
    assert len(list(nodes)) == len(solved.document.nodes)  # one vector shape per node
    legend = root.find(f".//{SVG}g[@id='legend']")
    shapes = [e for e in legend if e.tag in (f"{SVG}circle", f"{SVG}polygon")]
    texts = [e.text for e in legend.iter(f"{SVG}text")]
    assert shapes and "link load ÷ bandwidth" in texts  # legend symbols and the colour bar
    assert root.find(f".//{SVG}linearGradient") is not None
    heat = {e.get("stroke") for e in root.find(f".//{SVG}g[@id='links']")}
    assert len(heat) > 1 or heat != {"rgb(90,100,120)"}  # links carry the heat map's colours
    cut = root.find(f".//{SVG}g[@id='cut']")
    assert cut is not None and len(list(cut)) > 0
    assert any("Bottleneck" in (e.text or "") for e in root.iter(f"{SVG}text"))


def test_png_figure_any_width_and_bad_input(solved, tmp_path):
    for width in (640, 3000):
        out = save_figure(solved, tmp_path / f"fig{width}.png", width)
        img = QImage(str(out))
        assert img.width() == width
        colors = {img.pixel(x, y) for x in range(0, width, 11) for y in range(0, img.height(), 11)}
        assert len(colors) > 20
    with pytest.raises(ForestCollError, match="width"):
        save_figure(solved, tmp_path / "x.png", 5)
    with pytest.raises(ForestCollError, match=r"\.svg or \.png"):
        save_figure(solved, tmp_path / "x.pdf", 800)
    (tmp_path / "plain").write_text("a file, not a folder")
    with pytest.raises(ForestCollError, match="cannot write"):
        save_figure(solved, tmp_path / "plain" / "x.png", 800)


def test_figure_in_export_menu(solved, tmp_path):
    exports = solved.results_controller.exports
    assert exports.figure_action.text().startswith("&Figure")
    out = exports.export_figure(tmp_path / "menu.svg")
    assert out is not None and out.read_text().count("<circle") >= 4
    QApplication.processEvents()


def test_cli_figure_flag(tmp_path):
    out = tmp_path / "cli.png"
    proc = run_gui(str(SAMPLE), "--solve", "--figure", str(out), "--width", "900")
    assert proc.returncode == 0, proc.stderr
    assert QImage(str(out)).width() == 900
    bad = run_gui(str(SAMPLE), "--figure", str(tmp_path / "x.gif"))
    assert bad.returncode == 2
    assert [ln for ln in bad.stderr.splitlines() if ln.startswith("error:")]
    assert "Traceback" not in bad.stderr


@pytest.mark.parametrize("width", [420, 1200, 3000])
def test_figure_caption_keeps_clear_of_the_box_frames(qtbot, width):
    """The cut caption (wrapped to the figure's width) ends at least 10 px above the first
    frame's label, and no caption line runs past the figure's right edge (measured with the
    font's real metrics)."""
    from PySide6.QtGui import QFont, QFontMetricsF

    from fc_gui.views.figure_svg import FigureData, build_svg

    nodes = [
        (f"b{b}.gpu{i}", "compute", "gpu", 40.0 * i, 100.0 * b, f"b{b}")
        for b in range(2)
        for i in range(4)
    ]
    caption = (
        "Bottleneck cut: S* = all but b0.gpu0\n"
        "|S*∩Vc| = 15,  B⁺(S*) = 325 GB/s on 2 links leaving S* (dashed), including a long tail\n"
        "algbw* = N·B⁺(S*)/|S*∩Vc| = 16·325/15 = 346.667 GB/s"
    )
    data = FigureData("2x box", nodes, [], cut_nodes=frozenset({"b0.gpu1"}), caption=caption)
    root = ET.fromstring(build_svg(data, width=width))
    texts = list(root.iter(f"{SVG}text"))
    caption_rows = [t for t in texts if t.get("fill") == "rgb(183,28,28)"]
    assert " ".join(t.text for t in caption_rows).split() == caption.split()  # all of it
    font = QFont("DejaVu Sans")
    font.setPixelSize(14)
    metrics = QFontMetricsF(font)
    caption_bottom = max(float(t.get("y")) + metrics.descent() for t in caption_rows)
    for t in caption_rows:
        right = float(t.get("x")) + metrics.horizontalAdvance(t.text)
        assert right <= width, (t.text, right, width)
    frames = [r for r in root.iter(f"{SVG}rect") if r.get("rx") == "6"]
    labels = [t for t in texts if t.get("font-size") == "12" and t.text in ("b0", "b1")]
    assert len(frames) == 2 and len(labels) == 2
    label_top = min(float(t.get("y")) - 12 for t in labels)
    assert caption_bottom + 10 <= label_top <= min(float(r.get("y")) for r in frames)
    # the cut's halo (r = 17) stays inside its frame
    halo = next(c for c in root.iter(f"{SVG}circle") if c.get("r") == "17")
    b0 = frames[0]
    assert float(b0.get("y")) <= float(halo.get("cy")) - 17


def _font_px(root) -> list[tuple[str, float]]:
    """(text, rendered pixel size) of every text element: its own or its group's font-size,
    times the pixels per viewBox unit."""
    scale = float(root.get("width")) / float(root.get("viewBox").split()[2])
    out = []

    def walk(el, size):
        size = float(el.get("font-size", size))
        if el.tag == f"{SVG}text":
            out.append((el.text or "", size * scale))
        for child in el:
            walk(child, size)

    walk(root, 16.0)
    return out


def test_slide_figure_at_1920_has_no_corner_square_and_readable_text(solved, tmp_path):
    """Issue 26: the SVG's background once read width="100%", which Qt's renderer drew as a
    100 x 100 off-white square in the PNG's corner; and the text was 11-15 px on any figure."""
    from fc_gui.views.style import BACKGROUND

    png = save_figure(solved, tmp_path / "slide.png", 1920)
    img = QImage(str(png))
    assert img.width() == 1920
    bg = QColor(*BACKGROUND).rgb()
    # the whole top row and left column (outside the 100 px corner too) are the background
    assert {img.pixel(x, 2) for x in range(0, img.width(), 7)} == {bg}
    assert {img.pixel(2, y) for y in range(0, img.height(), 7)} == {bg}
    assert img.pixel(img.width() - 3, img.height() - 3) == bg
    # the title's letters in the PNG are slide-sized: its dark rows run >= 20 px tall
    dark = [
        y
        for y in range(0, 140)
        if any(QColor(img.pixel(x, y)).lightness() < 60 for x in range(0, 700, 2))
    ]
    assert dark and dark[-1] - dark[0] >= 20, dark[:3]
    root = ET.parse(save_figure(solved, tmp_path / "slide.svg", 1920)).getroot()
    sizes = _font_px(root)
    assert min(px for _, px in sizes) >= 1920 / 101  # smallest text 19 px on the slide
    assert any(t.startswith("gpu") or "." in t for t, _ in sizes)  # node names are there


def test_figure_text_follows_the_text_size_and_nodes_keep_a_margin(solved, tmp_path):
    from fc_gui.controllers.figure import figure_data
    from fc_gui.views.figure_svg import build_svg

    data = figure_data(solved)
    small = min(px for _, px in _font_px(ET.fromstring(build_svg(data, 1920))))
    data.text_scale = 2.0
    root = ET.fromstring(build_svg(data, 1920))
    big = min(px for _, px in _font_px(root))
    assert big == pytest.approx(2 * small)
    vw, vh = (float(v) for v in root.get("viewBox").split()[2:])
    for shape in root.find(f".//{SVG}g[@id='nodes']"):
        xs = [float(v) for v in (shape.get("cx"), shape.get("x")) if v is not None]
        pts = shape.get("points")
        if pts:
            xs = [float(p.split(",")[0]) for p in pts.split()]
            ys = [float(p.split(",")[1]) for p in pts.split()]
        else:
            ys = [float(v) for v in (shape.get("cy"), shape.get("y")) if v is not None]
        assert min(xs) >= 30 and max(xs) <= vw - 30 and min(ys) >= 30 and max(ys) <= vh - 30
    for label in root.find(f".//{SVG}g[@id='labels']"):
        half = 0.62 * 11 * len(label.text) / 2
        assert half + 20 <= float(label.get("x")) <= vw - half - 20


def test_figure_writes_link_bandwidths_when_the_layer_is_on(solved, tmp_path):
    from fc_gui.controllers.figure import figure_data
    from fc_gui.views.figure_svg import build_svg

    assert figure_data(solved).link_labels is False
    solved.results_controller.layers.bandwidths_action.setChecked(True)
    data = figure_data(solved)
    assert data.link_labels
    root = ET.fromstring(build_svg(data, 1920))
    group = root.find(f".//{SVG}g[@id='link-labels']")
    texts = [t.text for t in group.iter(f"{SVG}text")]
    assert texts and all(t.endswith(" GB/s") for t in texts)
    sizes = [px for t, px in _font_px(root) if t in texts]
    assert min(sizes) >= 1920 / 101
