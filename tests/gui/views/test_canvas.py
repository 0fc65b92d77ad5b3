"""FabricCanvas: batched drawing from the document, overlay API, hit-testing and gestures."""

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest

from fc_gui.model.document import TopologyDocument
from fc_gui.views.canvas import FabricCanvas, Tool
from fc_gui.views.canvas_labels import LABEL_LIMIT
from solver.io.templates import dgx_a100, ring


@pytest.fixture
def canvas(qtbot):
    doc = TopologyDocument(dgx_a100(2))
    c = FabricCanvas(doc, QUndoStack())
    qtbot.addWidget(c)
    c.resize(900, 700)
    c.show()
    qtbot.waitExposed(c)
    c.fit_view()
    qtbot.wait(60)
    return c


def screen_point(canvas, node_id) -> QPoint:
    x, y = canvas.doc.position(node_id)
    scene = canvas.view_box.mapViewToScene(QPointF(x, y))
    return canvas.mapFromScene(scene)


def drag(qtbot, canvas, a: QPoint, b: QPoint, modifier=Qt.KeyboardModifier.NoModifier):
    vp = canvas.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, modifier, a)
    steps = 6
    for i in range(1, steps + 1):
        p = a + (b - a) * (i / steps)
        QTest.mouseMove(vp, p)
        qtbot.wait(5)
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, modifier, b)
    qtbot.wait(20)


def segments(canvas) -> int:
    total = 0
    for item, _ in canvas.links.groups:
        x, _ = item.getData()
        total += 0 if x is None else len(x) // 2
    return total


def test_draws_every_node_and_link_in_few_batch_items(canvas):
    doc = canvas.doc
    assert len(canvas.nodes.item.data) == len(doc.nodes)
    assert segments(canvas) == len(doc.links)
    assert len(canvas.links.groups) <= 12  # width classes x states, not one item per link
    assert canvas.node_positions()["b1.gpu3"] == doc.position("b1.gpu3")


def test_drawing_follows_document_edits(canvas):
    doc = canvas.doc
    uid = doc.links_of(["ib0"])[0]
    doc.set_disabled([], [uid], True)
    assert any(item.opts["pen"].style() == Qt.PenStyle.DashLine for item, _ in canvas.links.groups)
    doc.remove_items(["b1.gpu0"])
    assert len(canvas.nodes.item.data) == len(doc.nodes)
    assert segments(canvas) == len(doc.links)
    doc.move_nodes({"b0.gpu0": (-999.0, -999.0)})
    assert canvas.node_positions()["b0.gpu0"] == (-999.0, -999.0)


def test_link_colors_by_dict_and_array(canvas):
    n = len(canvas.directed_links())
    assert n == 2 * len(canvas.doc.links)  # all full duplex in this template
    canvas.set_link_colors({("b0.gpu0", "b0.nvsw"): (255, 0, 0, 255)})
    assert canvas.links.color_groups and not canvas.links.groups[0][0].isVisible()
    colors = np.zeros((n, 4))
    colors[:, 0] = np.linspace(0, 255, n)
    colors[:, 3] = 255
    canvas.set_link_colors(colors)
    drawn = sum(len(item.getData()[0]) // 2 for item, _, _ in canvas.links.color_groups)
    assert drawn == n
    with pytest.raises(ValueError, match="link colours"):
        canvas.set_link_colors(np.zeros((3, 4)))
    canvas.set_link_colors(None)
    assert not canvas.links.color_groups and canvas.links.groups[0][0].isVisible()


def test_highlight_and_overlay_items(canvas):
    import pyqtgraph as pg

    canvas.highlight_nodes(["b0.gpu0", "b0.gpu1", "missing"], (255, 0, 0, 100), key="cut")
    assert len(canvas.nodes.halos["cut"].data) == 2
    canvas.doc.move_nodes({"b0.gpu0": (1.0, 2.0)})
    assert tuple(canvas.nodes.halos["cut"].data[0][["x", "y"]]) == (1.0, 2.0)
    canvas.highlight_nodes([], key="cut")
    assert len(canvas.nodes.halos["cut"].data) == 0
    item = pg.PlotCurveItem([0, 1], [0, 1])
    canvas.add_overlay_item(item)
    assert item.zValue() == 5 and item.getViewBox() is canvas.view_box
    canvas.remove_overlay_item(item)
    assert item.getViewBox() is None


def test_hit_testing(canvas):
    x, y = canvas.doc.position("b0.gpu2")
    assert canvas.node_at(x, y) == "b0.gpu2"
    x3, _ = canvas.doc.position("b0.gpu3")
    assert canvas.node_at((x + x3) / 2, y) is None  # half-way to the next GPU: no node
    (uid,) = [
        u for u, ln in canvas.doc.links.items() if {ln.source, ln.target} == {"b0.gpu2", "b0.nic2"}
    ]
    x2, y2 = canvas.doc.position("b0.nic2")
    assert canvas.link_at((x + x2) / 2, (y + y2) / 2) == uid


def test_click_shift_click_and_rubber_band_select(qtbot, canvas):
    vp = canvas.viewport()
    QTest.mouseClick(
        vp,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        screen_point(canvas, "b0.gpu1"),
    )
    assert canvas.doc.selected_nodes == {"b0.gpu1"}
    QTest.mouseClick(
        vp,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ShiftModifier,
        screen_point(canvas, "b0.gpu4"),
    )
    assert canvas.doc.selected_nodes == {"b0.gpu1", "b0.gpu4"}
    # rubber band around the first box's GPUs only
    a = screen_point(canvas, "b0.gpu0") + QPoint(-15, -15)
    b = screen_point(canvas, "b0.gpu7") + QPoint(15, 15)
    drag(qtbot, canvas, a, b)
    assert canvas.doc.selected_nodes == {f"b0.gpu{i}" for i in range(8)}
    assert canvas.doc.selected_links == frozenset()  # no link joins two GPUs directly
    # with the NVSwitch inside too, the band also takes the 8 links among them
    top = screen_point(canvas, "b0.nvsw")
    drag(qtbot, canvas, QPoint(a.x(), top.y() - 15), b)
    assert canvas.doc.selected_nodes == {f"b0.gpu{i}" for i in range(8)} | {"b0.nvsw"}
    assert len(canvas.doc.selected_links) == 8
    QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(3, 3))
    assert canvas.doc.selected_nodes == frozenset()


def test_dragging_nodes_is_one_undo_step(qtbot, canvas):
    stack = canvas.undo_stack
    start = canvas.doc.position("b0.gpu3")
    a = screen_point(canvas, "b0.gpu3")
    drag(qtbot, canvas, a, a + QPoint(60, 40))
    moved = canvas.doc.position("b0.gpu3")
    assert moved != start and stack.count() == 1
    canvas.set_grid(True, 25.0)
    a = screen_point(canvas, "b0.gpu3")
    drag(qtbot, canvas, a, a + QPoint(33, 17))
    assert stack.count() == 2
    x, y = canvas.doc.position("b0.gpu3")
    assert x % 25 == 0 and y % 25 == 0
    stack.undo()
    stack.undo()
    assert canvas.doc.position("b0.gpu3") == start


def test_drawn_nodes_are_numbered_from_zero(qtbot):
    """Issue 26: the first drawn node was ``gpu``, then ``gpu1``...; now gpu0, gpu1, sw0."""
    from solver.model.topology import Topology

    doc = TopologyDocument(Topology(name="empty", nodes=[], links=[]))
    c = FabricCanvas(doc, QUndoStack())
    qtbot.addWidget(c)
    c.resize(600, 400)
    c.show()
    qtbot.waitExposed(c)
    for tool, point in (
        (Tool.ADD_COMPUTE, QPoint(60, 60)),
        (Tool.ADD_COMPUTE, QPoint(200, 60)),
        (Tool.ADD_SWITCH, QPoint(130, 200)),
    ):
        c.set_tool(tool)
        QTest.mouseClick(
            c.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point
        )
    assert list(doc.nodes) == ["gpu0", "gpu1", "sw0"]


def test_add_tools_create_nodes_and_links(qtbot, canvas):
    doc, stack = canvas.doc, canvas.undo_stack
    n0, m0 = len(doc.nodes), len(doc.links)
    canvas.set_tool(Tool.ADD_COMPUTE)
    QTest.mouseClick(
        canvas.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(40, 40)
    )
    canvas.set_tool(Tool.ADD_SWITCH)
    QTest.mouseClick(
        canvas.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        QPoint(40, 120),
    )
    assert len(doc.nodes) == n0 + 2
    new_gpu, new_sw = list(doc.nodes)[-2:]
    assert doc.nodes[new_gpu].kind == "compute" and doc.nodes[new_sw].kind == "switch"
    canvas.set_tool(Tool.ADD_LINK)
    canvas.default_bandwidth = "12.5"
    drag(qtbot, canvas, screen_point(canvas, new_gpu), screen_point(canvas, new_sw))
    assert len(doc.links) == m0 + 1
    ln = list(doc.links.values())[-1]
    assert {ln.source, ln.target} == {new_gpu, new_sw} and float(ln.bandwidth) == 12.5
    assert stack.count() == 3
    canvas.set_tool(Tool.SELECT)
    doc.set_selection([new_gpu])
    canvas.delete_selection()
    assert len(doc.links) == m0 and new_gpu not in doc.nodes
    stack.undo()
    assert len(doc.links) == m0 + 1


def test_context_menu_disables_and_enables(canvas):
    x, y = canvas.doc.position("ib1")
    menu = canvas.build_context_menu(x, y)
    texts = [a.text() for a in menu.actions()]
    assert any(t.startswith("Disable node ib1") for t in texts)
    next(a for a in menu.actions() if a.text().startswith("Disable node")).trigger()
    assert canvas.doc.disabled_nodes == {"ib1"}
    assert "ib1" not in canvas.doc.to_topology().node_ids
    hook_calls = []
    canvas.context_menu_hooks.append(lambda m, node, link: hook_calls.append((node, link)))
    menu = canvas.build_context_menu(x, y)
    assert any(a.text().startswith("Enable node ib1") for a in menu.actions())
    assert hook_calls == [("ib1", None)]
    canvas.undo_stack.undo()
    assert canvas.doc.disabled_nodes == frozenset()


def test_labels_only_when_few_nodes_in_view(qtbot):
    doc = TopologyDocument(ring(400))
    c = FabricCanvas(doc, QUndoStack())
    qtbot.addWidget(c)
    c.resize(800, 600)
    c.show()
    c.fit_view()
    c.layers.settle()
    assert c.labels.names.texts() == []
    x, y = doc.position("gpu0")
    c.view_box.setRange(xRange=(x - 150, x + 150), yRange=(y - 150, y + 150), padding=0)
    c.layers.settle()
    shown = c.labels.names.texts()
    assert 0 < len(shown) <= LABEL_LIMIT
    assert "gpu0" in shown


def test_arrow_heads_for_one_way_links(qtbot):
    doc = TopologyDocument(ring(6, directed=True))
    c = FabricCanvas(doc, QUndoStack())
    qtbot.addWidget(c)
    assert len(c.links.arrows.data) == len(doc.links) == 6
    assert len(c.directed_links()) == 6


def test_legend_lists_the_roles_present(qtbot):
    doc = TopologyDocument(dgx_a100(2))
    c = FabricCanvas(doc, QUndoStack())
    qtbot.addWidget(c)
    labels = {label.text for _, label in c.legend.items}
    assert labels == {"GPU", "NVSwitch", "NIC", "IB switch"}
    doc.remove_items(["ib0", "ib1"])
    assert {label.text for _, label in c.legend.items} == {"GPU", "NVSwitch", "NIC"}


def test_hover_describes_nodes_and_links_and_takes_providers(canvas):
    from PySide6.QtWidgets import QToolTip

    seen = []
    canvas.hovered.connect(lambda n, link: seen.append((n, link)))
    x, y = canvas.doc.position("b0.gpu3")
    canvas.hover.mouse_moved(canvas.view_box.mapViewToScene(QPointF(x, y)))
    assert seen[-1] == ("b0.gpu3", None)
    assert QToolTip.text().startswith("b0.gpu3: compute gpu")
    canvas.tooltip_providers.append(lambda node, link: f"load of {node}" if node else None)
    canvas.hover.mouse_moved(canvas.view_box.mapViewToScene(QPointF(x, y)))
    assert QToolTip.text() == "load of b0.gpu3"
    _, y2 = canvas.doc.position("b0.nic3")
    canvas.hover.mouse_moved(canvas.view_box.mapViewToScene(QPointF(x, (y + y2) / 2)))
    assert seen[-1][0] is None and seen[-1][1] is not None
    assert "25 GB/s full duplex" in QToolTip.text()


def test_vectorised_width_classes_match_the_scalar_rule():
    from fc_gui.views import style

    bws = np.array([0.5, 1, 12.5, 16, 25, 50, 100, 300, 450, 450])
    expected = [style.width_class(b, bws.min(), bws.max()) for b in bws]
    assert list(style.width_classes(bws)) == expected
    assert expected[0] == 0 and expected[-1] == len(style.LINK_WIDTH_CLASSES) - 1
    assert list(style.width_classes(np.array([7.0, 7.0]))) == [3, 3]  # all equal: middle


def test_arrow_keys_nudge_the_selection_as_one_step(qtbot, canvas):
    stack = canvas.undo_stack
    start = canvas.doc.position("b0.gpu0")
    canvas.doc.set_selection(["b0.gpu0", "b0.gpu1"])
    canvas.setFocus()
    for _ in range(3):
        QTest.keyClick(canvas, Qt.Key.Key_Right)
    QTest.keyClick(canvas, Qt.Key.Key_Up, Qt.KeyboardModifier.ShiftModifier)
    assert canvas.doc.position("b0.gpu0") == (start[0] + 15, start[1] - 25)
    assert stack.count() == 1
    stack.undo()
    assert canvas.doc.position("b0.gpu0") == start


def test_canvas_and_test_double_offer_the_whole_overlay_host_protocol():
    import inspect

    from canvas_double import PlotCanvasHost

    from fc_gui.views.overlays import OverlayHost

    wanted = {n for n, v in vars(OverlayHost).items() if inspect.isfunction(v)}
    assert {"node_positions", "set_link_colors", "overlay_parent"} <= wanted
    for host in (FabricCanvas, PlotCanvasHost):
        missing = {n for n in wanted if not callable(getattr(host, n, None))}
        assert not missing, f"{host.__name__} lacks {missing}"


def test_canvas_offers_the_whole_canvas_host_protocol(canvas):
    """The tools, keyboard, menu and hover tips see the canvas through CanvasHost only."""
    import inspect

    from fc_gui.views.canvas_host import CanvasHost

    members = set(CanvasHost.__annotations__) | {
        n for n, v in vars(CanvasHost).items() if inspect.isfunction(v) or isinstance(v, property)
    }
    assert {"doc", "index", "view_box", "node_at", "leave_focus", "node_clicked"} <= members
    missing = {n for n in members if not hasattr(canvas, n)}
    assert not missing, f"FabricCanvas lacks {missing}"


def test_tooltip_stays_when_qt_sends_its_tooltip_event(canvas, qtbot):
    """Issue 26: the tip shown on mouse move vanished 0.7 s later, when Qt's ToolTip event
    reached the scene (no item tool tip there: it hid the tip). The canvas answers it."""
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    x, y = canvas.doc.position("b0.gpu3")
    _, y2 = canvas.doc.position("b0.nic3")
    scene = canvas.view_box.mapViewToScene(QPointF(x, (y + y2) / 2))
    canvas.hover.mouse_moved(scene)
    assert "25 GB/s full duplex" in QToolTip.text()
    vp_pos = canvas.mapFromScene(scene)
    event = QHelpEvent(QEvent.Type.ToolTip, vp_pos, canvas.viewport().mapToGlobal(vp_pos))
    QApplication.sendEvent(canvas.viewport(), event)
    qtbot.wait(600)  # Qt hides a tip 300 ms after it is told to
    assert QToolTip.isVisible() and "25 GB/s full duplex" in QToolTip.text()


def test_bandwidth_labels_layer_writes_gb_s_on_links_clear_of_each_other(canvas, qtbot):
    from fc_gui.model.link_labels import CHAR_W, LINE_H, place_labels

    item = canvas.labels.links
    assert not item.isVisible()
    canvas.set_link_labels_visible(True)
    canvas.viewport().repaint()
    qtbot.wait(30)
    drawn = [canvas.labels.link_texts[r] for r in item.drawn]
    assert "25 GB/s" in drawn and "300 GB/s" in drawn  # NIC links and NVLink
    assert all(t.endswith(" GB/s") for t in drawn)
    # rare bandwidths go first: the NIC-to-IB links (25) of 2x DGX A100 are as many as the
    # NVLinks, so every class gets labels; and the placed boxes never overlap
    a, b = canvas.index.segment_ends()
    px = 40.0
    placed = place_labels(a * 10, b * 10, canvas.labels.link_texts, px, canvas.index.pos * 10, 1.0)
    boxes = [
        (
            cx - CHAR_W * px * len(canvas.labels.link_texts[r]) / 2,
            cy - LINE_H * px / 2,
            cx + CHAR_W * px * len(canvas.labels.link_texts[r]) / 2,
            cy + LINE_H * px / 2,
        )
        for r, cx, cy in placed
    ]
    for i, p in enumerate(boxes):
        for q in boxes[i + 1 :]:
            assert not (p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3])
    canvas.set_label_scale(2.0)
    assert item.font_px() == 26
    canvas.set_link_labels_visible(False)
    assert not item.isVisible()


def test_bandwidth_text_and_rare_links_first():
    from fractions import Fraction

    from fc_gui.model.link_labels import bandwidth_text, label_order, place_labels

    assert bandwidth_text(Fraction(25)) == "25 GB/s"
    assert bandwidth_text(Fraction(25, 2)) == "12.5 GB/s"
    assert bandwidth_text(Fraction(1, 3)) == "0.3333 GB/s"
    assert label_order([300, 300, 25, 300], np.array([1.0, 2.0, 1.0, 3.0])) == [2, 3, 1, 0]
    # two links crossing at their middles: the second label moves along its link
    starts = np.array([[0.0, 0.0], [0.0, 100.0]])
    stops = np.array([[200.0, 100.0], [200.0, 0.0]])
    placed = place_labels(starts, stops, ["25 GB/s", "300 GB/s"], 12, np.zeros((0, 2)), 0)
    assert [r for r, *_ in placed] == [0, 1]
    assert placed[0][1:] == (100.0, 50.0) and placed[1][1:] != (100.0, 50.0)
    # a label over a node is not drawn there
    placed = place_labels(starts[:1], stops[:1], ["25 GB/s"], 12, np.array([[100.0, 50.0]]), 8)
    assert placed and placed[0][1:] != (100.0, 50.0)


def test_keyboard_users_select_nodes_and_links_and_open_them(qtbot, tmp_path):
    """Issue 26: Tab reaches the canvas (a blue frame), Tab / Shift+Tab step through the nodes
    in reading order and then the links, Ctrl+arrow jumps, the item is ringed, Enter opens it
    in the Inspector and the Menu key its what-if menu."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from fc_gui.main_window import MainWindow
    from fc_gui.views.canvas_keyboard import FOCUS_RGB

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = MainWindow(ring(4), settings=settings, state_dir=tmp_path, install_results=False)
    w.show()
    w.activateWindow()
    qtbot.waitActive(w)
    try:
        c, doc = w.canvas, w.document
        # Tab from the widget before the canvas lands on it
        w.inspector.fabric_name.setFocus()
        qtbot.waitUntil(w.inspector.fabric_name.hasFocus)
        for _ in range(60):
            widget = QApplication.focusWidget()
            assert widget is not None
            if widget is c:
                break
            QTest.keyClick(widget, Qt.Key.Key_Tab)
        assert c.hasFocus()
        img = c.grab().toImage()  # the blue frame inside the canvas's edge
        edge = {img.pixelColor(x, 1).getRgb()[:3] for x in range(5, img.width() - 5, 9)}
        assert edge == {FOCUS_RGB}, edge
        order = c.keyboard.order()
        assert [k for k, _ in order] == ["node"] * 4 + ["link"] * len(doc.links)
        ys = [doc.position(n)[1] for _, n in order[:4]]
        assert ys == sorted(ys)  # reading order: the top row first
        QTest.keyClick(c, Qt.Key.Key_Tab)
        assert doc.selected_nodes == {order[0][1]} and c.keyboard.drawn() == order[0]
        QTest.keyClick(c, Qt.Key.Key_Tab)
        assert doc.selected_nodes == {order[1][1]}
        QTest.keyClick(c, Qt.Key.Key_Backtab)
        assert doc.selected_nodes == {order[0][1]}
        for _ in range(4):
            QTest.keyClick(c, Qt.Key.Key_Tab)
        (link,) = doc.selected_links
        assert ("link", link) == order[4] and c.keyboard.drawn() == order[4]
        assert c.hasFocus()  # Tab stays in the canvas
        # Enter: the Inspector's bandwidth field gets the keys
        QTest.keyClick(c, Qt.Key.Key_Return)
        qtbot.waitUntil(w.inspector.link_bw.hasFocus, timeout=2000)
        assert c.keyboard.drawn() is None  # the ring shows only while the canvas has the keys
        img = c.grab().toImage()
        assert img.pixelColor(img.width() // 2, 1).getRgb()[:3] != FOCUS_RGB
        # Return there gives the keys back; the Menu key opens the link's what-if menu
        QTest.keyClick(w.inspector.link_bw, Qt.Key.Key_Return)
        qtbot.waitUntil(c.hasFocus, timeout=2000)
        assert c.keyboard.shown()  # back from the keyboard: frame and ring again
        QTest.keyClick(c, Qt.Key.Key_Menu)
        texts = [a.text() for a in c.menus.last.actions()]
        assert any(t.startswith(f"Disable link {doc.links[link].label}") for t in texts)
        c.menus.last.close()
        # Ctrl+Right from the leftmost node goes to a node to its right
        left = min(doc.nodes, key=lambda n: doc.position(n)[0])
        doc.set_selection([left])
        QTest.keyClick(c, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
        (now,) = doc.selected_nodes
        assert doc.position(now)[0] > doc.position(left)[0]
        # a click means the mouse: no focus frame or ring (the next Tab brings them back)
        assert c.keyboard.shown()
        QTest.mouseClick(
            c.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(5, 5)
        )
        assert c.hasFocus() and not c.keyboard.shown() and c.keyboard.drawn() is None
        QTest.keyClick(c, Qt.Key.Key_Tab)
        assert c.keyboard.shown()
        # Ctrl+Tab leaves the canvas
        QTest.keyClick(c, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
        assert not c.hasFocus()
    finally:
        w.undo_stack.setClean()
        w.close()


def test_direction_and_order_helpers():
    from fc_gui.views.canvas_keyboard import nearest_in_direction, tab_order

    pts = {"a": (0.0, 0.0), "b": (10.0, 1.0), "c": (5.0, 20.0), "d": (-10.0, 0.0)}
    assert nearest_in_direction((0.0, 0.0), pts, (1.0, 0.0), exclude="a") == "b"
    assert nearest_in_direction((0.0, 0.0), pts, (0.0, 1.0), exclude="a") == "c"
    assert nearest_in_direction((0.0, 0.0), pts, (0.0, -1.0), exclude="a") is None
    order = tab_order(pts, {7: ("a", "b")}, row_height=5.0)
    assert order == [("node", "d"), ("node", "a"), ("node", "b"), ("node", "c"), ("link", 7)]
