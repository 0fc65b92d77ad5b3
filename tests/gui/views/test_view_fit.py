"""Fitting the fabric clear of the floating captions: the pure geometry and the real canvas."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, QRectF, QSettings
from results_fixtures import FakeSolver, ring4

from fc_gui.controllers.results import install
from fc_gui.main_window import MainWindow
from fc_gui.model.view_fit import covered, fit_clear_of


def _px(fit, x, y):
    return ((x - fit.x0) * fit.scale, (y - fit.y0) * fit.scale)


def test_without_captions_the_fabric_fills_the_limiting_side():
    fit = fit_clear_of((0, 0), (10, 5), (800, 400), [], margin_px=0)
    assert fit.scale == pytest.approx(80)  # 800/10 < 400/5
    assert _px(fit, 0, 2.5) == pytest.approx((0, 200))


@pytest.mark.parametrize("corner", ["tl", "tr", "bl", "br"])
def test_no_corner_of_the_fabric_lies_under_a_caption(corner):
    captions = [(corner, 200, 120)]
    for lo, hi in [((0, 0), (10, 10)), ((0, 0), (40, 5)), ((0, 0), (5, 40))]:
        fit = fit_clear_of(lo, hi, (800, 500), captions)
        pts = [_px(fit, x, y) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])]
        pts += [_px(fit, (lo[0] + hi[0]) / 2, lo[1]), _px(fit, hi[0], (lo[1] + hi[1]) / 2)]
        assert not covered(pts, (800, 500), captions), (corner, lo, hi)
        assert all(-1e-6 <= x <= 800 + 1e-6 and -1e-6 <= y <= 500 + 1e-6 for x, y in pts)


def test_the_cheaper_band_is_chosen():
    # a wide fabric in a tall view: a side band would shrink it, a band across costs nothing
    fit = fit_clear_of((0, 0), (100, 10), (1000, 800), [("tr", 150, 160)], margin_px=0)
    assert fit.scale == pytest.approx(10)
    # a tall fabric in a wide view: the side band is free
    fit = fit_clear_of((0, 0), (10, 100), (1000, 800), [("tr", 150, 160)], margin_px=0)
    assert fit.scale == pytest.approx(8)


def test_covered_sees_a_point_under_a_caption():
    assert covered([(5, 5)], (100, 100), [("tl", 20, 20)])
    assert covered([(95, 95)], (100, 100), [("br", 20, 20)])
    assert not covered([(50, 50)], (100, 100), [("tl", 20, 20), ("br", 20, 20)])


def test_after_a_solve_no_node_sits_under_the_caption_or_colour_bar(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring4(), settings=settings, state_dir=tmp_path, install_results=False)
    w.results_controller = rc = install(w, solve_fn=FakeSolver(0.01), warmup=False)
    w.resize(900, 600)
    w.show()
    qtbot.addWidget(w)
    qtbot.waitExposed(w)
    c = w.canvas
    # a tight fit from before any caption existed: the square's corners at the canvas's corners
    lo, hi = c.index.pos.min(axis=0), c.index.pos.max(axis=0)
    c.view_box.setRange(QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]), padding=0.02)
    with qtbot.waitSignal(rc.state.schedule_changed, timeout=5000):
        rc.panel.solve_button.click()
    qtbot.wait(50)
    captions = c.floating_captions()
    corners = {corner for corner, _, _ in captions}
    assert {"tl", "tr"} <= corners  # the cut caption and the colour bar
    vb = c.view_box
    pts = []
    for x, y in c.index.pos:
        p = c.mapFromScene(vb.mapViewToScene(QPointF(float(x), float(y))))
        pts.append((p.x(), p.y()))
    assert not covered(pts, (c.width(), c.height()), captions)
    # a view the user zoomed is left alone
    c.zoom(2.0)
    c.view_box.setRange(QRectF(lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]), padding=0.02)
    before = vb.viewRange()
    c.refit_if_covered()
    assert vb.viewRange() == before
