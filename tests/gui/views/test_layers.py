"""View > Layers toggles and the dimming of the other layers while a tree is animated."""

from __future__ import annotations

from test_results import make_window, solve_and_wait  # noqa: F401  (fixture)

from fc_gui.model.trees import tree_rows
from fc_gui.views.overlays import DIM_OPACITY


def _select_tree(qtbot, rc, root="gpu1"):
    rows = tree_rows(rc.state.schedule)
    first = next(i for i, r in enumerate(rows) if r.root == root and r.index == 0)
    with qtbot.waitSignal(rc.trees_view.trees_selected):
        rc.trees_view.select_rows([first])


def _view_titles(window) -> list[str]:
    return [a.text() for a in window.view_menu.actions()]


def test_layer_toggles_are_checkable_actions_of_the_view_menu(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    solve_and_wait(qtbot, w)
    layers = rc.layers
    titles = _view_titles(w)
    for act in (
        layers.cut_action,
        layers.heat_action,
        layers.trees_action,
        layers.labels_action,
        layers.frames_action,
        layers.dim_action,
    ):
        assert act.isCheckable() and act.isChecked()
        assert act.text() in titles
    solve_titles = [a.text() for a in w.solve_menu.actions()]
    assert not any("heat map" in t or "bottleneck cut" in t.lower() for t in solve_titles)
    # the cut action hides the shading and the caption; checking it again restores them
    layers.cut_action.trigger()
    assert not rc.overlays.cut.visible and not rc.overlays.cut.badge.isVisible()
    assert all(not item.isVisible() for item in rc.overlays.cut.items)
    layers.cut_action.trigger()
    assert rc.overlays.cut.badge.isVisible() and all(i.isVisible() for i in rc.overlays.cut.items)
    # heat map: the canvas links lose and regain their load colours
    layers.heat_action.trigger()
    assert rc.canvas.links.colors is None
    layers.heat_action.trigger()
    assert rc.canvas.links.colors == rc.overlays.heat.colors
    # labels and frames are the canvas's own items
    layers.labels_action.trigger()
    assert not rc.canvas.labels.names.isVisible()
    layers.labels_action.trigger()
    assert rc.canvas.labels.names.isVisible()
    layers.frames_action.setChecked(False)
    assert not rc.canvas.frames.item.isVisible() and not rc.canvas.labels.group_names.isVisible()
    # selected trees and the animation's drawing
    _select_tree(qtbot, rc)
    assert rc.overlays.trees.items and all(i.isVisible() for i in rc.overlays.trees.items)
    layers.trees_action.setChecked(False)
    assert all(not i.isVisible() for i in rc.overlays.trees.items)
    rc.trees_view.step_button.click()  # items drawn while hidden stay hidden
    assert rc.overlays.animation.overlay.items
    assert all(not i.isVisible() for i in rc.overlays.animation.overlay.items)
    # the old Solve-menu names still reach the same actions
    assert rc.menu.show_heat_action is layers.heat_action


def test_studies_map_checkbox_and_view_action_stay_in_sync(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from fc_gui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, state_dir=tmp_path)
    qtbot.addWidget(w)
    try:
        act = w.results_controller.layers.actions["impact"]
        box = w.studies_controller.dock.map_check
        assert act.text() in _view_titles(w)
        assert act.isChecked() == box.isChecked()
        box.setChecked(not box.isChecked())
        assert act.isChecked() == box.isChecked()
        act.trigger()
        assert act.isChecked() == box.isChecked()
        assert w.studies_controller.overlay.visible == box.isChecked()
    finally:
        w.results_controller.shutdown()
        w.undo_stack.setClean()


def test_animating_a_tree_dims_the_other_layers_and_reset_restores_them(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    ov = rc.overlays
    solve_and_wait(qtbot, w)
    links = rc.canvas.links
    assert all(i.opacity() == 1.0 for i in links.items())
    _select_tree(qtbot, rc)
    assert not ov.dimmer.dimmed  # a tree selected, not yet animated: nothing dims
    rc.trees_view.step_button.click()
    assert ov.dimmer.dimmed
    assert all(abs(i.opacity() - DIM_OPACITY) < 1e-6 for i in ov.cut.items)
    assert all(abs(i.opacity() - DIM_OPACITY) < 1e-6 for i in links.items())
    assert ov.cut.badge.graphicsEffect() is not None
    assert ov.heat.color_bar.graphicsEffect() is not None
    # the tree and the animation stay at full strength
    assert all(i.opacity() == 1.0 for i in ov.trees.items)
    assert all(i.opacity() == 1.0 for i in ov.animation.overlay.items)
    rc.trees_view.reset_button.click()
    assert not ov.dimmer.dimmed
    assert all(i.opacity() == 1.0 for i in ov.cut.items + links.items())
    assert ov.cut.badge.graphicsEffect() is None and ov.heat.color_bar.graphicsEffect() is None
    # playing dims too; clearing the result restores
    ov.animation.timer.setInterval(10)
    rc.trees_view.play_button.click()
    assert ov.dimmer.dimmed
    qtbot.waitUntil(lambda: not ov.animation.playing, timeout=3000)
    assert ov.dimmer.dimmed  # the last step stays on screen, still dimmed
    rc.clear_results()
    assert not ov.dimmer.dimmed
    assert all(i.opacity() == 1.0 for i in links.items())


def test_dimming_can_be_switched_off_in_the_view_menu(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    ov = rc.overlays
    solve_and_wait(qtbot, w)
    _select_tree(qtbot, rc)
    rc.trees_view.step_button.click()
    assert ov.dimmer.dimmed
    rc.layers.dim_action.setChecked(False)  # restores at once
    assert not ov.dimmer.dimmed
    assert all(i.opacity() == 1.0 for i in ov.cut.items + rc.canvas.links.items())
    rc.trees_view.step_button.click()
    assert not ov.dimmer.dimmed
    rc.layers.dim_action.setChecked(True)
    assert ov.dimmer.dimmed


def test_stale_and_dimmed_combine(qtbot, make_window):
    w = make_window()
    rc = w.results_controller
    ov = rc.overlays
    solve_and_wait(qtbot, w)
    _select_tree(qtbot, rc)
    rc.trees_view.step_button.click()
    rc.set_stale(True)
    from fc_gui.views.overlays import STALE_OPACITY

    assert all(abs(i.opacity() - STALE_OPACITY * DIM_OPACITY) < 1e-6 for i in ov.cut.items)
    rc.trees_view.reset_button.click()
    assert all(abs(i.opacity() - STALE_OPACITY) < 1e-6 for i in ov.cut.items)
